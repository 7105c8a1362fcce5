"""The run's record file, ``metrics.jsonl``: its writer and its line-by-line reader.

The format is JSON Lines -- one JSON object per line -- and a contract, documented in
``docs/jsonl-contract.md``. Two rules matter most:

* Non-finite numbers are written as JSON's ``NaN`` / ``Infinity`` tokens and never dropped: a log that
  silently skips NaN losses hides exactly the runs you most need to see.
* Every record is flushed as soon as it is written, and event records (``run_start``, ``nan``, ``oom``,
  ``run_end``) are also ``fsync``-ed, so they survive the machine going down, not just the process.
  ``run_end`` is the last line, so its ``fsync`` at close puts the whole log on disk.

Events other than ``run_start`` and ``run_end`` come from the trainer (``oom``) and from measuring
callbacks (``nan``, see :mod:`chapters.metrics.first_nonfinite`) through ``Trainer.emit_event``.

:func:`read_metrics_log` is the tolerant line reader: it keeps every usable line and says which it skipped.
To *analyse* a run, read it with :class:`chapters.records.runlog.RunLog`, which builds on this reader and
is what the doctor, the plots, the scenarios and the graders use. The logging lesson presents this writer
as Level 3 (:mod:`chapters.logging_levels.level3_jsonl`).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from chapters.core.callbacks import Callback
from chapters.errors import MetricsLogError, NotTextError

LOG_NAME = "metrics.jsonl"


class JsonlLogger(Callback):
    """Writes every metric record and the run's events to ``run_dir/metrics.jsonl``."""

    def __init__(self, run_dir: str | Path):
        self.path = Path(run_dir) / LOG_NAME
        self.file = None

    def on_run_start(self, trainer):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Append, so a resumed run continues the same log (readers tolerate repeated steps). Unbuffered:
        # each record goes to the OS in the write() call itself, so there is nothing left to flush.
        self.file = open(self.path, "ab", buffering=0)
        self.write(run_start_event(trainer))
        os.fsync(self.file.fileno())

    def on_log(self, trainer, record):
        self.write(record)

    def on_eval_end(self, trainer, record):
        self.write(record)

    def on_event(self, trainer, event):
        self.write(event)
        os.fsync(self.file.fileno())

    def on_run_end(self, trainer, status):
        try:
            self.event("run_end", step=trainer.step, status=status,
                       **({"error": trainer.error} if trainer.error else {}))
        except OSError:
            if not trainer.error:  # no other error is on its way to the user: this one is the news
                raise
            # Otherwise (a full disk that already failed the run) the log keeps every complete record;
            # only run_end is missing, and the error the run died of is what the user sees.
        finally:
            self.file.close()  # run_end was fsync-ed just now, so everything before it is on disk too

    def write(self, record: dict) -> None:
        """Append one line -- all of it or none: if the disk fills up half-way through, the torn part is cut
        off again, so the log still ends with a complete record (and the error names the file)."""
        line = (json.dumps(record) + "\n").encode("utf-8")
        end = self.file.seek(0, os.SEEK_END)  # the size now (after a cut-off write, tell() would be stale)
        try:
            written = 0
            while written < len(line):  # a raw write may take only part of the bytes
                written += self.file.write(line[written:])
        except OSError as err:
            self.file.truncate(end)
            err.filename = err.filename or str(self.path)
            raise

    def event(self, name: str, **fields) -> None:
        self.write({"event": name, "timestamp": time.time(), **fields})
        os.fsync(self.file.fileno())  # to the disk now: events must survive a machine failure too


def run_start_event(trainer) -> dict:
    """The ``run_start`` event: what a reader needs to interpret the records that follow (the config,
    the model's size, the loss floor, the epoch length). Built here only, so every holder of it agrees."""
    # torch is imported here, not at the top: the reader below serves `clinic diagnose`, which reads logs and
    # would otherwise wait a second for torch on every start.
    import torch

    from chapters.core.model import count_parameters

    total, trainable = count_parameters(trainer.model)
    return {"event": "run_start", "timestamp": time.time(), "step": trainer.step, "config": asdict(trainer.config),
            "vocab_size": trainer.corpus.tokenizer.vocab_size, "total_params": total,
            "trainable_params": trainable, "steps_per_epoch": trainer.steps_per_epoch,
            "loss_floor": trainer.corpus.loss_floor, "device": str(trainer.device),
            "torch_version": torch.__version__}


@dataclass
class MetricsLog:
    """What :func:`read_metrics_log` found: metric records, event records, and lines it had to skip."""

    path: Path
    metrics: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # "line 7: not valid JSON", one per skipped line
    truncated_tail: bool = False  # the last line was cut off mid-write (a killed run): skipped silently


def find_log(path: str | Path) -> Path:
    """``path`` itself if it is a file, else ``path/metrics.jsonl``."""
    path = Path(path)
    if path.is_dir():
        path = path / LOG_NAME
        if not path.is_file():
            raise MetricsLogError(f"{path.parent} holds no {LOG_NAME}")
    elif not path.is_file():
        raise MetricsLogError(f"{path} not found")
    return path


def read_metrics_log(path: str | Path) -> MetricsLog:
    """Read a JSONL metrics log, keeping every usable line.

    Tolerated: a truncated last line (flagged in ``truncated_tail``). Reported and skipped, with line
    numbers: lines that are not JSON, JSON that is not an object. Refused (``MetricsLogError``): a missing
    file, a directory without a log, a binary file, a log with no records at all.
    """
    path = find_log(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise MetricsLogError(f"cannot read {path}: {err.strerror}") from None
    if b"\0" in raw:
        raise NotTextError(f"{path} is a binary file, not a JSON Lines log")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise NotTextError(f"{path} is not UTF-8 text (byte {err.start})") from None
    log = MetricsLog(path)
    lines = text.split("\n")
    last_content = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            if index == last_content and not text.endswith("\n"):
                log.truncated_tail = True  # the writer was killed mid-line
            else:
                log.problems.append(f"line {index + 1}: not valid JSON")
            continue
        if not isinstance(value, dict):
            log.problems.append(f"line {index + 1}: a JSON {type(value).__name__}, not an object")
            continue
        wrong = type_problem(value)
        if wrong:
            log.problems.append(f"line {index + 1}: {wrong}")
            continue
        (log.events if "event" in value else log.metrics).append(value)
    if not log.metrics and not log.events:
        detail = f" ({len(log.problems)} malformed lines; first, {log.problems[0]})" if log.problems else ""
        raise MetricsLogError(f"{path} contains no records{detail}")
    return log


def type_problem(record: dict) -> str | None:
    """What in ``record`` breaks the contract's types, or None. Readers index and compare these fields, so
    a ``"step": "30"`` or ``"train_loss": [1]`` must stop here rather than deep inside a plot or a rule.

    Metric records need an integer ``step``; every other value is a number (``null`` is tolerated: some
    writers put it where a value was NaN). Events need a string ``event``; their ``step``, when present,
    is an integer, and ``run_start``'s ``loss_floor`` is a number or ``null``.
    """
    def is_int(value):
        return isinstance(value, int) and not isinstance(value, bool)

    def kind(value):
        return "null" if value is None else type(value).__name__

    if "event" in record:
        if not isinstance(record["event"], str):
            return f"event is a {kind(record['event'])}, not a string"
        if "step" in record and not is_int(record["step"]):
            return f"step is a {kind(record['step'])}, not an integer"
        floor = record.get("loss_floor")
        if floor is not None and not is_number(floor):
            return f"loss_floor is a {kind(floor)}, not a number"
        return None
    if "step" not in record:
        return "a metric record without a step"
    if not is_int(record["step"]):
        return f"step is a {kind(record['step'])}, not an integer"
    for key, value in record.items():
        if value is not None and not is_number(value):
            return f"{key} is a {kind(value)}, not a number"
    return None


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
