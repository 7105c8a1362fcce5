"""Hugging Face ``Trainer`` output: ``trainer_state.json`` and its ``log_history``.

The Trainer saves ``trainer_state.json`` in every ``checkpoint-N/`` folder (and in the output folder when
``save_state()`` is called). Its ``log_history`` is a list of dicts, one per logging call:

* training entries: ``loss``, ``learning_rate``, ``grad_norm``, ``epoch``, ``step``;
* evaluation entries: ``eval_loss`` and other ``eval_*`` numbers (runtime, samples per second...);
* one summary entry at the end, ``train_loss`` (the mean over the *whole* run), ``train_runtime``... It is
  left out: its ``train_loss`` is not the loss of its step, and read as one it would fake a final drop.

Beware a Trainer default: ``logging_nan_inf_filter=True`` replaces a NaN or Inf loss by the window's mean
of the finite ones, so a NaN run's ``loss`` may look fine. ``grad_norm`` is not filtered, and the doctor's
non-finite rule reads it too; set ``logging_nan_inf_filter=False`` to log the loss as it was.

The model's ``config.json`` beside the state (output folder or checkpoint) gives ``vocab_size``: the doctor
uses ``ln(vocab_size)`` as the loss of an untrained model.
"""

from __future__ import annotations

import json
from pathlib import Path

from chapters.errors import MetricsLogError
from chapters.records.formats import ForeignRun, Renamer, run_start, split_by_kind

STATE_FILE = "trainer_state.json"
SUMMARY_KEY = "train_runtime"  # marks the end-of-training summary entry
STATE_FACTS = ("max_steps", "num_train_epochs", "logging_steps", "eval_steps", "train_batch_size")


def find_state(path: Path) -> Path | None:
    """``trainer_state.json`` at ``path``, in it, or in its newest ``checkpoint-N/`` folder."""
    path = Path(path)
    if path.is_file():
        return path
    if (path / STATE_FILE).is_file():
        return path / STATE_FILE
    checkpoints = [folder for folder in path.glob("checkpoint-*") if (folder / STATE_FILE).is_file()]
    numbered = [folder for folder in checkpoints if folder.name.split("-", 1)[1].isdigit()]
    if not numbered:
        return None
    return max(numbered, key=lambda folder: int(folder.name.split("-", 1)[1])) / STATE_FILE


def read(path: Path, run: str | None = None) -> ForeignRun:
    """A Trainer's log history as contract records (``run`` is not used: one state file is one run)."""
    state_path = find_state(path)
    if state_path is None:
        raise MetricsLogError(f"{path} holds no {STATE_FILE} (nor a checkpoint-N/ folder with one)")
    try:
        state = json.loads(state_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise MetricsLogError(f"{state_path}: not a readable JSON file ({err})") from None
    history = state.get("log_history") if isinstance(state, dict) else None
    if not isinstance(history, list):
        raise MetricsLogError(f"{state_path}: no 'log_history' list (is it a Trainer's state?)")
    entries = [entry for entry in history if isinstance(entry, dict) and SUMMARY_KEY not in entry]
    rename = Renamer(key for entry in entries for key in entry)
    records = [run_start("hf", config={k: state[k] for k in STATE_FACTS if k in state},
                         vocab_size=_vocab_size(state_path.parent))]
    skipped = 0
    for entry in entries:
        numbers = {rename(k): v for k, v in entry.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        if not isinstance(entry.get("step"), int):
            skipped += 1
            continue
        records += split_by_kind(entry["step"], {k: v for k, v in numbers.items() if k != "step"})
    notes = [f"{skipped} log_history entries without an integer 'step' were skipped"] if skipped else []
    return ForeignRun("hf", state_path, records, f"{len(history)} log_history entries; {rename.describe()}", notes)


def _vocab_size(folder: Path) -> int | None:
    for candidate in (folder / "config.json", folder.parent / "config.json"):
        try:
            value = json.loads(candidate.read_text(encoding="utf-8")).get("vocab_size")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, int) and value > 1:
            return value
    return None
