"""Reading the logs people already have: TensorBoard, the Hugging Face Trainer, CSV files.

Every reader here turns a foreign log into the records of our own JSONL contract (docs/jsonl-contract.md):
a ``run_start`` event with whatever configuration the log knows, then metric records and eval records. The
doctor and the plots then read them exactly as they read ``metrics.jsonl``: nothing downstream knows which
tool wrote the run.

Tools spell the same number differently (``loss``, ``train/loss``, ``train_loss``; ``eval/loss``,
``eval_loss``, ``val_loss``; ``learning_rate``, ``lr-AdamW``), so :func:`contract_name` maps the common
spellings onto the contract's names. A name it does not know passes through untouched: the plots and the
notebook still see it, and no number is ever invented or dropped. Non-finite values stay as they were
written -- a NaN loss must reach the doctor as a NaN.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

# contract name -> the spellings other tools use for it (compared in lower case)
SPELLINGS = {
    "train_loss": ["train_loss", "loss", "train/loss", "training_loss", "loss/train", "train_loss_step"],
    "val_loss": ["val_loss", "eval_loss", "eval/loss", "val/loss", "validation_loss", "valid_loss",
                 "loss/val", "loss/valid", "loss/validation", "loss/eval", "valid/loss", "validation/loss",
                 "val_loss_epoch"],
    "lr": ["lr", "learning_rate", "train/learning_rate", "train/lr", "lr/train"],
    "grad_norm": ["grad_norm", "train/grad_norm", "gradient_norm", "grad_2.0_norm_total"],
    "epoch": ["epoch", "train/epoch"],
    "step": ["step", "global_step", "train/global_step"],
}
CONTRACT_NAME = {spelling: name for name, spellings in SPELLINGS.items() for spelling in spellings}
LIGHTNING_LR = re.compile(r"lr-[a-z0-9_]+", re.IGNORECASE)  # LearningRateMonitor: lr-AdamW, lr-SGD (group 0)
EVAL_PREFIXES = ("eval/", "eval_", "val/", "val_", "validation/", "valid/")  # whole-eval numbers, not steps'


@functools.cache  # a log has a few dozen distinct keys and up to millions of values: decide once per key
def contract_name(key: str) -> str | None:
    """The contract's name for a foreign key, or None when we know no mapping (the key passes through)."""
    lowered = key.strip().lower()
    if lowered in CONTRACT_NAME:
        return CONTRACT_NAME[lowered]
    return "lr" if LIGHTNING_LR.fullmatch(lowered) else None


@functools.cache
def is_eval_key(key: str) -> bool:
    """Keys measured by an evaluation (they go in the eval record of their step, beside ``val_loss``)."""
    return contract_name(key) == "val_loss" or key.lower().startswith(EVAL_PREFIXES)


class Renamer:
    """Renames one log's keys, each contract name given to one key, and says what it did for the report.

    When several keys claim the same contract name (``loss`` and ``train/loss``, or ``loss`` beside a
    ``train_loss`` already spelled the contract's way), the key spelled exactly as the contract spells it
    keeps it, else the first one met; the others pass through under their own names: one curve per
    contract key, never two curves mixed into one.
    """

    def __init__(self, keys):
        keys = list(dict.fromkeys(keys))
        taken = {key for key in keys if contract_name(key) == key}
        self.mapped: dict[str, str] = {}  # foreign key -> contract key, for the keys that change
        for key in keys:
            name = contract_name(key)
            if name is not None and name not in taken:
                self.mapped[key] = name
                taken.add(name)

    def __call__(self, key: str) -> str:
        return self.mapped.get(key, key)

    def describe(self) -> str:
        renamed = [f"{old} -> {new}" for old, new in self.mapped.items()]
        return "mapped " + ", ".join(renamed) if renamed else "no key needed renaming"


@dataclass
class ForeignRun:
    """What a reader found: contract records (``run_start`` first), and a line saying what was read.

    A reader of very large logs (TensorBoard: a million scalars) may hand its metric records over as
    ``columns`` instead -- the doctor's loader's form, ``{key: (values, present)}`` with one row per record --
    because a dict per record costs seconds there; :attr:`metrics` turns them into records when asked.
    """

    format: str
    source: Path
    records: list[dict]
    description: str  # "3 tags, 1200 scalars; mapped train/loss -> train_loss, ..."
    notes: list[str] = field(default_factory=list)
    columns: dict | None = None

    @property
    def events(self) -> list[dict]:
        return [record for record in self.records if "event" in record]

    @property
    def metrics(self) -> list[dict]:
        if self.columns is not None:
            return records_from_columns(self.columns)
        return [record for record in self.records if "event" not in record]


def records_from_columns(columns: dict) -> list[dict]:
    """``{key: (values, present)}`` -> one dict per row, holding the keys present in that row."""
    steps = columns["step"][0]
    keys = [(key, values.tolist(), present.tolist()) for key, (values, present) in columns.items() if key != "step"]
    return [{"step": int(step), **{key: values[row] for key, values, present in keys if present[row]}}
            for row, step in enumerate(steps.tolist())]


def run_start(source_format: str, **known) -> dict:
    """The ``run_start`` event a foreign log never wrote, with the facts it does hold (``None`` dropped)."""
    return {"event": "run_start", "step": 0, "source_format": source_format,
            **{key: value for key, value in known.items() if value is not None}}


def split_by_kind(step: int, values: dict[str, float]) -> list[dict]:
    """One step's values as contract records: a training record, and an eval record for the eval keys.

    The doctor tells an eval record by its ``val_loss`` without a ``train_loss``, as our trainer writes
    them, so a step that logged both becomes two records.
    """
    train = {key: value for key, value in values.items() if not is_eval_key(key)}
    evals = {key: value for key, value in values.items() if is_eval_key(key)}
    records = []
    if set(train) - {"epoch"}:
        records.append({"step": step, **train})
    if evals:
        epoch = {"epoch": train["epoch"]} if "epoch" in train else {}
        records.append({"step": step, **epoch, **evals})
    return records
