"""A step counted inside its epoch, read as the steps since the run began.

The contract's ``step`` counts optimizer steps since the run began. Many hand-written loops log the batch
index instead -- ``for i, batch in enumerate(loader): log({"epoch": epoch, "step": i, ...})`` -- so the step
starts again at every epoch. Read literally, such a log goes backwards at every epoch boundary, which is
what a resumed run's log does, and the resumed-run rule (the later record of a repeated step wins) keeps
the last epoch alone: a ten-epoch run becomes its final tenth, and the doctor judges what is left.

The two are told apart by what happens where the epoch increases. A run counting its steps from the start
moves *forward* there; one counting them within the epoch goes back, or -- with epochs a step long --
logs the same step again. So a log is read this way when (:func:`restarts_every_epoch`)

* at no place where the epoch increases does the step move forward,
* and at one at least it goes back, or one step is trained in two epochs.

A resume happens where the epoch does not increase (it goes back with the step, or stays while the step
goes back to a checkpoint's), so these tests do not look at it, and a resumed run keeps its reading.

A record without an epoch belongs to the epoch of the record before it (an evaluation written after a
training record). Each epoch is then moved past the ones before it (:func:`steps_since_start`): by
``steps_per_epoch`` steps an epoch when ``run_start`` declares it and every counted step fits in one;
otherwise by each epoch's own length as its records show it, from its first to its last record plus one
logging interval -- and at least its last step, which for a loop counting from 1 is the epoch's length.
A resumed segment logs its epochs again at the same steps, and the resumed-run rule then keeps its records.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def restarts_every_epoch(steps: np.ndarray, epochs: np.ndarray, training: np.ndarray) -> bool:
    """Does ``steps`` start again at every epoch boundary of ``epochs`` (both in file order, the epochs
    filled forward; ``training``: the training records)?"""
    if len(steps) < 2 or not np.isfinite(epochs).all():
        return False
    crossing = np.diff(steps)[np.diff(epochs) > 0]  # the step's move where the epoch increases
    if len(crossing) == 0 or (crossing > 0).any():
        return False  # one epoch, or steps that run on across epochs: counted from the start
    if (crossing < 0).any():
        return True
    # Epochs a step long: the same step, trained in two epochs (a resumed run replays a step in its own epoch).
    trained = pd.DataFrame({"step": steps[training], "epoch": epochs[training]}).drop_duplicates()
    return bool(trained["step"].duplicated().any())


def steps_since_start(frame: pd.DataFrame, training: np.ndarray, steps_per_epoch: float | None,
                      notes: list[str]) -> pd.DataFrame:
    """``frame`` (the reader's table, a row per record in file order; ``training``: its rows holding a
    training loss) with its steps counted from the start of the run, when they were counted from the start
    of each epoch; unchanged otherwise."""
    if "epoch" not in frame:
        return frame
    epochs = frame["epoch"].ffill().to_numpy(dtype=float)
    steps = frame["step"].to_numpy(dtype=np.int64)
    if not restarts_every_epoch(steps, epochs, training):
        return frame
    if steps_per_epoch and steps.max() <= steps_per_epoch:
        offsets = (epochs - epochs.min()) * steps_per_epoch
        how = f"{steps_per_epoch:g} steps each, as run_start declares"
    else:
        lengths = epoch_lengths(steps, epochs)
        before = lengths.cumsum().shift(fill_value=0)  # the steps of the epochs before
        offsets = pd.Series(epochs).map(dict(zip(lengths.index, before))).to_numpy(dtype=float)
        how = f"each as long as its records show, median {float(np.median(lengths)):g} steps"
    notes.append(f"the step starts again at every epoch (a step counted within its epoch): read as steps "
                 f"since the run began, the epochs one after another ({how})")
    return frame.assign(step=steps + offsets.astype(np.int64))


def epoch_lengths(steps: np.ndarray, epochs: np.ndarray) -> pd.Series:
    """Each epoch's length in steps, indexed by epoch: from its first to its last record plus one logging
    interval (the median step between records of one epoch), and at least its last step (a loop counting
    from 1 logs the epoch's length there) and 1."""
    moves = np.diff(steps)[np.diff(epochs) == 0]
    interval = float(np.median(moves[moves > 0])) if (moves > 0).any() else 0.0
    spans = pd.Series(steps).groupby(epochs).agg(["min", "max"])
    return np.maximum(np.maximum(spans["max"] - spans["min"] + interval, spans["max"]), 1).round()
