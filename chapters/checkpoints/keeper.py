"""Which checkpoints to keep: the K best by a named metric, plus always the latest.

The rules, and the bug each one prevents (PyTorch Lightning and Hugging Face have shipped every one):

* ``mode`` is explicit and checked. With the wrong mode the keeper keeps the K *worst*; we warn when the mode
  looks wrong for the metric's name (``val_accuracy`` with ``min``).
* File names come from the step (``step-00000120.pt``), never from a counter of files: a counter reuses a name
  after a deletion and overwrites a checkpoint it still ranks as kept.
* The ranking is written to ``index.json`` in the same directory, so a resumed run knows which K it kept; a
  keeper that forgets restarts with an empty list and ends with more than K files.
* The latest checkpoint is kept even when it ranks badly: it is the one you resume from.
* Ties go to the older checkpoint: a newcomer must be strictly better to displace a kept one.
* A metric that is NaN ranks nowhere (but its checkpoint can still be the latest).
* The ``keep_last`` newest checkpoints are kept too, ranked or not: a single latest file that later
  turns out damaged (bit rot, a truncated copy) would otherwise leave nothing to resume from.
* ``index.json`` is input like any other file: a ``file`` that is not a plain ``step-N.pt`` name in the
  directory (``../notes.txt``, ``index.json``) is skipped with a warning, so pruning can never delete a file
  outside the checkpoints.

This class only decides; :mod:`~chapters.checkpoints.checkpointer` writes and deletes the files.
"""

from __future__ import annotations

import json
import math
import re
import warnings
import dataclasses
from dataclasses import asdict, dataclass
from pathlib import Path

from chapters.checkpoints.atomic import atomic_write_bytes
from chapters.errors import CheckpointIndexError

INDEX_NAME = "index.json"
INDEX_FORMAT = 1
MODES = ("min", "max")
# Name fragments that say "bigger is better" / "smaller is better", for the wrong-mode warning.
HIGHER_IS_BETTER = ("acc", "f1", "auc", "bleu", "precision", "recall", "score")
LOWER_IS_BETTER = ("loss", "perplexity", "ppl", "error", "err")


CHECKPOINT_FILE = re.compile(r"step-\d{8,}\.pt")  # what checkpoint_name writes: a plain name, no folders


@dataclass
class Entry:
    step: int
    file: str
    sha256: str
    bytes: int
    metric: float | None = None  # None until the metric for this step arrives (or never, if none is logged)


def checkpoint_name(step: int) -> str:
    return f"step-{step:08d}.pt"


def check_mode(metric: str, mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
    name = metric.lower()
    if mode == "min" and any(part in name for part in HIGHER_IS_BETTER):
        warnings.warn(f"top-K keeps the smallest {metric!r} (mode='min'), but its name says higher is better; "
                      f"did you mean mode='max'?", stacklevel=3)
    if mode == "max" and any(part in name for part in LOWER_IS_BETTER):
        warnings.warn(f"top-K keeps the largest {metric!r} (mode='max'), but its name says lower is better; "
                      f"did you mean mode='min'?", stacklevel=3)


class TopKKeeper:
    def __init__(self, top_k: int, metric: str = "val_loss", mode: str = "min", keep_last: int = 1):
        if not isinstance(top_k, int) or top_k < 0:
            raise ValueError(f"top_k must be an integer >= 0, got {top_k!r}")
        if not isinstance(keep_last, int) or keep_last < 1:
            raise ValueError(f"keep_last must be an integer >= 1, got {keep_last!r}")
        check_mode(metric, mode)
        self.top_k, self.metric, self.mode, self.keep_last = top_k, metric, mode, keep_last
        self.entries: dict[int, Entry] = {}
        self.latest: int | None = None
        # True once a complete, valid index.json was loaded: only then is a file it does not name an orphan.
        self.trusted_index = False

    # ------------------------------------------------------------------------------------------ decide
    def add(self, step: int, sha256: str, size: int) -> None:
        """A new checkpoint file exists for ``step``; it becomes the latest (re-saving a step replaces it)."""
        self.entries[step] = Entry(step, checkpoint_name(step), sha256, size)
        self.latest = step

    def rank(self, step: int, value: float) -> None:
        if step in self.entries:
            self.entries[step].metric = float(value)

    def best(self) -> list[Entry]:
        """Ranked entries, best first; ties broken towards the older step."""
        ranked = [e for e in self.entries.values() if e.metric is not None and not math.isnan(e.metric)]
        sign = 1 if self.mode == "min" else -1
        return sorted(ranked, key=lambda e: (sign * e.metric, e.step))

    def kept_steps(self) -> set[int]:
        kept = {e.step for e in self.best()[: self.top_k]}
        if self.latest is not None:
            kept.add(self.latest)
            kept.update(sorted(s for s in self.entries if s <= self.latest)[-self.keep_last:])
        return kept

    def prune(self) -> list[str]:
        """Forget entries no longer kept; returns their file names, for the caller to delete *after* it has
        written the index (so the index never names a file that is gone)."""
        kept = self.kept_steps()
        dropped = [step for step in self.entries if step not in kept]
        return [self.entries.pop(step).file for step in sorted(dropped)]

    def forget_after(self, step: int) -> list[str]:
        """Resuming from ``step`` abandons everything saved later (another timeline); returns those files."""
        later = [s for s in self.entries if s > step]
        if self.latest is not None and self.latest > step:
            self.latest = step if step in self.entries else None
        return [self.entries.pop(s).file for s in sorted(later)]

    # ----------------------------------------------------------------------------------------- persist
    def to_json(self) -> dict:
        return {"format": INDEX_FORMAT, "metric": self.metric, "mode": self.mode, "top_k": self.top_k,
                "latest": self.latest, "checkpoints": [asdict(self.entries[s]) for s in sorted(self.entries)]}

    def save(self, directory: Path) -> None:
        atomic_write_bytes(Path(directory) / INDEX_NAME, (json.dumps(self.to_json(), indent=1) + "\n").encode())

    def load(self, directory: Path) -> None:
        """Adopt the ranking in ``directory/index.json`` (if any). A different K is fine (we prune to the new
        K); a different metric or mode is not: the stored values would be ranked the wrong way."""
        stored = read_index(Path(directory))
        self.trusted_index = stored is not None and not stored["ignored"]
        if stored is None:
            return
        if (stored["metric"], stored["mode"]) != (self.metric, self.mode):
            raise CheckpointIndexError(
                f"{Path(directory) / INDEX_NAME} ranks by {stored['metric']} ({stored['mode']}), not "
                f"{self.metric} ({self.mode}); use another directory or the same metric")
        self.entries = {e["step"]: Entry(**e) for e in stored["checkpoints"]}
        self.latest = stored["latest"]


def read_index(directory: Path) -> dict | None:
    """The parsed index, ``None`` when there is none; a damaged one raises ``CheckpointIndexError`` naming
    the file and the field. Entries whose ``file`` is not a plain checkpoint name are dropped with a warning."""
    path = Path(directory) / INDEX_NAME
    if not path.exists():
        return None
    try:
        stored = json.loads(path.read_bytes())
        check_index_types(stored)
    except OSError as err:
        raise CheckpointIndexError(f"{path} cannot be read ({err.strerror})") from None
    except ValueError as err:  # json's errors (and a bad encoding) are ValueErrors too
        raise CheckpointIndexError(f"{path} is not a valid checkpoint index ({err})") from None
    kept = []
    for entry in stored["checkpoints"]:
        if CHECKPOINT_FILE.fullmatch(entry["file"]):
            kept.append(entry)
        else:
            warnings.warn(f"{path}: ignoring the entry for step {entry['step']}: file {entry['file']!r} is not "
                          f"a checkpoint name inside {directory} (step-NNNNNNNN.pt)", stacklevel=2)
    stored["ignored"] = len(stored["checkpoints"]) - len(kept)  # the keeper then leaves unnamed files alone
    stored["checkpoints"] = kept
    return stored


def check_index_types(stored) -> None:
    """Raise ``ValueError`` naming the first field of a parsed index that has the wrong type or value."""
    def integer(value, minimum=0):
        return isinstance(value, int) and not isinstance(value, bool) and value >= minimum

    if not isinstance(stored, dict):
        raise ValueError(f"a JSON {type(stored).__name__}, not an object")
    if stored.get("format") != INDEX_FORMAT:
        raise ValueError(f"unknown format {stored.get('format')!r}")
    missing = {"metric", "mode", "top_k", "latest", "checkpoints"} - set(stored)
    if missing:
        raise ValueError(f"missing {sorted(missing)}")
    if not isinstance(stored["metric"], str):
        raise ValueError(f"metric {stored['metric']!r} is not a name")
    if stored["mode"] not in MODES:
        raise ValueError(f"mode {stored['mode']!r} is not one of {', '.join(MODES)}")
    if not integer(stored["top_k"]):
        raise ValueError(f"top_k {stored['top_k']!r} is not an integer >= 0")
    if stored["latest"] is not None and not integer(stored["latest"]):
        raise ValueError(f"latest {stored['latest']!r} is not a step")
    if not isinstance(stored["checkpoints"], list):
        raise ValueError("checkpoints is not a list")
    fields = {f.name for f in dataclasses.fields(Entry)}
    for number, entry in enumerate(stored["checkpoints"]):
        where = f"checkpoints[{number}]"
        if not isinstance(entry, dict) or set(entry) - fields or {"step", "file", "sha256", "bytes"} - set(entry):
            raise ValueError(f"{where} needs exactly the fields {', '.join(sorted(fields))}")
        if not integer(entry["step"]):
            raise ValueError(f"{where}: step {entry['step']!r} is not an integer >= 0")
        if not isinstance(entry["file"], str):
            raise ValueError(f"{where}: file {entry['file']!r} is not a file name")
        if not (isinstance(entry["sha256"], str) and re.fullmatch(r"[0-9a-f]{64}", entry["sha256"])):
            raise ValueError(f"{where}: sha256 {entry['sha256']!r} is not 64 hex digits")
        if not integer(entry["bytes"]):
            raise ValueError(f"{where}: bytes {entry['bytes']!r} is not a size")
        metric = entry.get("metric")
        if metric is not None and not (isinstance(metric, (int, float)) and not isinstance(metric, bool)):
            raise ValueError(f"{where}: metric {metric!r} is not a number")
