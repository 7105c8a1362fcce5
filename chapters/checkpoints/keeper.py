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

This class only decides; :mod:`~chapters.checkpoints.checkpointer` writes and deletes the files.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

from chapters.checkpoints.atomic import atomic_write_bytes

INDEX_NAME = "index.json"
INDEX_FORMAT = 1
MODES = ("min", "max")
# Name fragments that say "bigger is better" / "smaller is better", for the wrong-mode warning.
HIGHER_IS_BETTER = ("acc", "f1", "auc", "bleu", "precision", "recall", "score")
LOWER_IS_BETTER = ("loss", "perplexity", "ppl", "error", "err")


class CheckpointIndexError(ValueError):
    """``index.json`` is missing fields or contradicts the keeper's settings."""


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
    def __init__(self, top_k: int, metric: str = "val_loss", mode: str = "min"):
        if not isinstance(top_k, int) or top_k < 0:
            raise ValueError(f"top_k must be an integer >= 0, got {top_k!r}")
        check_mode(metric, mode)
        self.top_k, self.metric, self.mode = top_k, metric, mode
        self.entries: dict[int, Entry] = {}
        self.latest: int | None = None

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
        if stored is None:
            return
        if (stored["metric"], stored["mode"]) != (self.metric, self.mode):
            raise CheckpointIndexError(
                f"{Path(directory) / INDEX_NAME} ranks by {stored['metric']} ({stored['mode']}), not "
                f"{self.metric} ({self.mode}); use another directory or the same metric")
        self.entries = {e["step"]: Entry(**e) for e in stored["checkpoints"]}
        self.latest = stored["latest"]


def read_index(directory: Path) -> dict | None:
    """The parsed index, ``None`` when there is none; a damaged one raises ``CheckpointIndexError`` naming the file."""
    path = Path(directory) / INDEX_NAME
    if not path.exists():
        return None
    try:
        stored = json.loads(path.read_text())
        if stored.get("format") != INDEX_FORMAT:
            raise ValueError(f"unknown format {stored.get('format')!r}")
        missing = {"metric", "mode", "top_k", "latest", "checkpoints"} - set(stored)
        if missing:
            raise ValueError(f"missing {sorted(missing)}")
        for entry in stored["checkpoints"]:
            Entry(**entry)  # raises TypeError on a missing or unknown field
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise CheckpointIndexError(f"{path} is not a valid checkpoint index ({err})") from None
    return stored
