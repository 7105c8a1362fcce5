"""Level 3 -- JSON Lines: one JSON object per line, the format machines read.

Trade-offs: a plain-text file any tool can open (``pd.read_json(path, lines=True)``, ``jq``, ``grep``),
appendable, and robust to crashes -- a killed run loses at most the line being written. It is not a
dashboard; Level 2 (TensorBoard) is for looking, Level 3 is for analysing (the doctor reads it).

The record format is a contract, documented in ``docs/jsonl-contract.md``. Two rules matter most:

* Non-finite numbers are written as JSON's ``NaN`` / ``Infinity`` tokens and never dropped: a log that
  silently skips NaN losses hides exactly the runs you most need to see.
* Every record is flushed as soon as it is written, and event records (``run_start``, ``nan``, ``oom``,
  ``run_end``) are also ``fsync``-ed, so they survive the machine going down, not just the process.
  ``run_end`` is the last line, so its ``fsync`` at close puts the whole log on disk.

Events other than ``run_start`` and ``run_end`` come from the trainer (``oom``) and from measuring
callbacks (``nan``, see :mod:`chapters.metrics.first_nonfinite`) through ``Trainer.emit_event``.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from chapters.core.callbacks import Callback
from chapters.core.model import count_parameters

LOG_NAME = "metrics.jsonl"


class JsonlLogger(Callback):
    """Writes every metric record and the run's events to ``run_dir/metrics.jsonl``."""

    def __init__(self, run_dir: str | Path):
        self.path = Path(run_dir) / LOG_NAME
        self.file = None

    def on_run_start(self, trainer):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Append, so a resumed run continues the same log (readers tolerate repeated steps).
        self.file = open(self.path, "a", encoding="utf-8")
        total, trainable = count_parameters(trainer.model)
        self.event("run_start", step=trainer.step, config=asdict(trainer.config),
                   vocab_size=trainer.corpus.tokenizer.vocab_size, total_params=total,
                   trainable_params=trainable, steps_per_epoch=trainer.steps_per_epoch,
                   loss_floor=trainer.corpus.loss_floor, device=str(trainer.device),
                   torch_version=torch.__version__)

    def on_log(self, trainer, record):
        self.write(record)

    def on_eval_end(self, trainer, record):
        self.write(record)

    def on_event(self, trainer, event):
        self.write(event)
        os.fsync(self.file.fileno())

    def on_run_end(self, trainer, status):
        self.event("run_end", step=trainer.step, status=status,
                   **({"error": trainer.error} if trainer.error else {}))
        self.file.close()  # run_end was fsync-ed just now, so everything before it is on disk too

    def write(self, record: dict) -> None:
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()  # to the OS now: a crash of this process cannot lose the line

    def event(self, name: str, **fields) -> None:
        self.write({"event": name, "timestamp": time.time(), **fields})
        os.fsync(self.file.fileno())  # to the disk now: events must survive a machine failure too


class MetricsLogError(ValueError):
    """The log cannot be used at all (missing, empty, binary). The message says which and why."""


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
    raw = path.read_bytes()
    if b"\0" in raw:
        raise MetricsLogError(f"{path} is a binary file, not a JSON Lines log")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise MetricsLogError(f"{path} is not UTF-8 text (byte {err.start})") from None
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
        (log.events if "event" in value else log.metrics).append(value)
    if not log.metrics and not log.events:
        detail = f" ({len(log.problems)} malformed lines)" if log.problems else ""
        raise MetricsLogError(f"{path} contains no records{detail}")
    return log
