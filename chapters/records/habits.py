"""How other loggers write their losses, read as the contract means it.

Other tools name the loss ``loss``, ``eval_loss``, ``learning_rate``...: :func:`with_contract_names` reads
them under the contract's names (the same table the readers of other tools' files use,
:data:`chapters.records.formats.SPELLINGS`). Read literally, a log whose loss is called ``loss`` has no
loss at all, and a NaN in it was "healthy".

The contract's writer puts an evaluation in a record of its own (``val_loss``, no ``train_loss``). Loggers
written elsewhere do it in two other ways, and a reader that takes them literally is blind or wrong:

* one record holding both losses (an epoch per record, or the latest evaluation carried forward on every
  record): read literally, the run has no evaluations at all;
* every key on every record, ``null`` where it was not measured (a table exported to JSON lines): read
  literally, every record holds a NaN loss.

:func:`without_placeholders` and :func:`split_combined` turn both into the contract's records;
:func:`chapters.records.runlog.build_run` applies all three to every log, whichever way it came in.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from chapters.records.formats import Renamer


def with_contract_names(columns: dict, notes: list[str]) -> dict:
    """``columns`` with other tools' spellings of the contract's keys renamed (``loss`` -> ``train_loss``),
    and a note saying so; a key already spelled the contract's way keeps its name, and so does every other
    key (:class:`chapters.records.formats.Renamer`). ``step`` is not renamed: a record without one is
    refused by the line reader, by name."""
    renamer = Renamer(key for key in columns if key != "step")
    if not renamer.mapped:
        return columns
    notes.append(f"read under the contract's names: {renamer.describe().removeprefix('mapped ')}")
    return {renamer(key): value for key, value in columns.items()}


def without_placeholders(columns: dict) -> dict:
    """Columns where a loss written NaN or ``null`` *beside the other loss, finite* counts as not logged.

    A writer with a fixed schema -- every record holds every key, as a table exported to JSON has --
    puts ``val_loss: null`` (pandas) or ``NaN`` on the steps that ran no evaluation, and ``train_loss: null``
    on an evaluation's row. That is a placeholder, not a loss the run produced: a model whose training loss
    is finite has finite weights, and a NaN there would have made both losses NaN. Read as written, every
    such log was ``nan_loss`` with confidence 0.97 (until 2026-12-01). A record with *both* losses
    non-finite keeps them: that is what a dead run writes. So does every NaN training loss of a log that
    carries its latest evaluation forward (some value of ``val_loss`` repeated on consecutive records,
    :func:`split_combined`): there the old, finite value stands beside the new NaN -- and of a log whose
    records hold both losses, finite, elsewhere: such a writer puts the losses it has on one record, not
    placeholders, and a training loss can be NaN while the weights stay finite (a batch whose labels are
    all ignored: the mean over no labels is 0/0, its gradient zero).

    ``columns``: ``{key: (values as floats, where the key was written)}``, as the readers build them."""
    if "train_loss" not in columns or "val_loss" not in columns:
        return columns
    (train, train_present), (val, val_present) = columns["train_loss"], columns["val_loss"]
    finite_train, finite_val = np.isfinite(train), np.isfinite(val)
    logged = val[val_present]
    carries_forward = bool(np.any(logged[1:] == logged[:-1]))
    both_finite = bool(np.any(train_present & val_present & finite_train & finite_val))
    columns = dict(columns)
    columns["val_loss"] = (val, val_present & ~(train_present & finite_train & ~finite_val))
    if not (carries_forward or both_finite):
        columns["train_loss"] = (train, train_present & ~(val_present & finite_val & ~finite_train))
    return columns


def split_combined(frame: pd.DataFrame, both: np.ndarray, is_eval: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
    """A record holding ``train_loss`` *and* ``val_loss`` becomes two rows: a training row, and an eval row
    (its ``step``, ``val_loss``, ``epoch`` and ``timestamp``) just after it -- the split the readers of other
    tools' logs make (:func:`chapters.records.formats.split_by_kind`). Without it an epoch-per-record log
    (``{"epoch": 3, "train_loss": .., "val_loss": ..}``) has no evaluations, and every rule about the
    validation loss is blind on it.

    A logger that writes the *latest* validation loss on every record repeats one evaluation many times;
    a value equal to the one before it on such records is that evaluation carried forward, kept once (at
    the first step it appears). Two real evaluations of a model that is still training never agree to the
    last bit, and fifty copies of one would make its noise look like zero to every rule that measures it.

    ``frame``: the reader's table, a row per record, with a ``!key`` column per flagged key (True where a
    non-finite value was written); ``both``: its rows holding both losses; ``is_eval``: its evaluation rows.
    Returns the new table and its ``is_eval``."""
    keep = [key for key in ("step", "val_loss", "!val_loss", "epoch", "timestamp") if key in frame]
    evals = frame.loc[both, keep]
    values = evals["val_loss"].to_numpy()
    previous = np.roll(values, 1)
    carried = (values == previous) | (np.isnan(values) & np.isnan(previous))
    carried[:1] = False  # the first evaluation is nobody's copy
    evals = evals[~carried]
    frame = frame.copy()
    frame.loc[both, "val_loss"] = np.nan  # the training row no longer holds the evaluation
    frame.loc[both, "!val_loss"] = False
    order = np.concatenate([np.arange(len(frame), dtype=float), np.flatnonzero(both)[~carried] + 0.5])
    merged = pd.concat([frame, evals], ignore_index=True)
    flags = [column for column in merged.columns if column.startswith("!")]
    merged[flags] = merged[flags].astype("boolean").fillna(False).astype(bool)  # the eval rows lack most flags
    kinds = np.concatenate([is_eval, np.ones(len(evals), bool)])
    position = np.argsort(order, kind="stable")
    return merged.iloc[position].reset_index(drop=True), kinds[position]
