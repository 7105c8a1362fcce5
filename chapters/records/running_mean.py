"""A training loss logged as the running mean of its epoch, turned back into the mean of each logging window.

Many training loops log ``running_loss / (i + 1)``: the mean loss since the epoch began (Keras' progress
bar, most tutorials' progress-bar postfix). The contract's ``train_loss`` is the mean over the steps since
the *previous record*. The difference misleads every reader of the curve: a running mean restarts at each
epoch, so a falling loss draws a staircase -- a drop at every epoch boundary, a slow slide in between --
the same shape every epoch, which is what ``no_shuffle`` looks for (a third of the healthy constructed
runs were called ``no_shuffle`` when logged this way); and its record-to-record noise shrinks along each
epoch, so the run's noise scale means nothing.

The running mean is undone exactly when it is recognised. With ``c`` the steps since the epoch began and
``m`` the logged value, ``c_k m_k`` is the epoch's loss sum so far, so the mean over the window between two
records is ``(c_k m_k - c_(k-1) m_(k-1)) / (c_k - c_(k-1))``.

Recognised by three tests, all needed (:func:`is_running_mean`):

1. **Every implied window sum is positive** (a loss is). A log of window means that falls by more than a
   record's share of the epoch (``1 / k``) from one record to the next implies a negative sum: most noisy
   logs, and any saw-tooth of class-sorted data, fail this at once.
2. **The steps are at the epoch boundaries, not inside the epochs.** A running mean jumps where it restarts
   and moves little after, while the window means it hides move as much at a boundary as anywhere; a log
   of window means (smooth or not) moves at a boundary like anywhere else, while "undoing" it would put
   the jumps there. So: the boundary jump of the logged values, in units of their typical move inside an
   epoch, is at least ``BOUNDARY_JUMP`` (3), *and* more than ``BOUNDARY_JUMP`` times the same ratio of
   the undone values.
3. **The undone values move as much late in an epoch as early.** Undoing multiplies a record's change by
   about ``c`` (its place in the epoch), so undoing a log that was *not* a running mean makes the moves
   grow as the undoing amplifies them (:func:`amplification`) -- a slope of 1 of log |move| on the log of
   that factor -- where the true window means of a running mean show no such growth (slope 0). The
   slope, pooled over the epochs (each epoch's level removed), must be under ``MAX_GROWTH`` (0.5,
   half-way) *and* below 1 by three standard errors: the log must rule the other reading out, so a log
   with a few records an epoch (a slope fitted to little) is left as written. Why this one too: a run
   over data grouped by domain, or with its learning rate cut at every epoch, with little noise, also
   jumps at every epoch boundary and can pass 1 and 2 (an exercise-05 log did).

Measured (2026-12-01): on 3,000 constructed logs that jump at every epoch boundary without being running
means (domain blocks; a learning rate cut each epoch; noise 0.2-4 %, 6-40 steps an epoch), 8 were taken
for running means; on the 1,048 cached logs of ``bench/doctor_families.py`` and 2,400 of exercise 05, none.
Two thirds of the constructed shapes logged as running means are recognised; the rest have too few
epochs or records an epoch to tell.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

MIN_RECORDS = 4  # records in an epoch, for it to count
MIN_EPOCHS = 4  # of MIN_RECORDS or more: three boundaries, so one big event (a death) is not their median
BOUNDARY_JUMP = 3.0
MAX_GROWTH = 0.5  # slope of log |undone move| on log amplification: 0 if rightly undone, 1 if wrongly


def steps_into_epoch(steps: np.ndarray, epochs: np.ndarray) -> np.ndarray:
    """How many steps each record's epoch has run: steps since the last record of the previous epoch. The
    log's first epoch has no record before it; its first record is taken to close its first logging
    window (one typical logging interval long), however the steps and epochs are numbered."""
    starts = np.flatnonzero(np.r_[True, epochs[1:] != epochs[:-1]])
    gaps = np.diff(steps)
    before = np.empty(len(starts))
    before[0] = steps[0] - (float(np.median(gaps[gaps > 0])) if (gaps > 0).any() else 1.0)
    before[1:] = steps[starts[1:] - 1]
    return steps - np.repeat(before, np.diff(np.r_[starts, len(steps)]))


def window_means(logged: np.ndarray, counts: np.ndarray, first: np.ndarray) -> np.ndarray:
    """The mean over each logging window, from running means ``logged`` over ``counts`` steps (``first``:
    the records that open an epoch, whose window is the whole of it so far)."""
    previous_sum = np.r_[0.0, (logged * counts)[:-1]]
    previous_count = np.r_[0.0, counts[:-1]]
    previous_sum[first], previous_count[first] = 0.0, 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return (logged * counts - previous_sum) / (counts - previous_count)


def boundary_ratio(values: np.ndarray, first: np.ndarray) -> float:
    """Median move across epoch boundaries / median move inside epochs (inf when nothing moves inside)."""
    moves = np.abs(np.diff(values))
    across = moves[first[1:]]
    inside = moves[~first[1:]]
    across, inside = across[np.isfinite(across)], inside[np.isfinite(inside)]
    if len(across) < MIN_EPOCHS - 1 or len(inside) == 0:
        return 0.0
    typical = float(np.median(inside))
    return float(np.median(across)) / typical if typical > 0 else float("inf")


def amplification(counts: np.ndarray, first: np.ndarray) -> np.ndarray:
    """How much undoing multiplies the noise of each move, if the log was *not* a running mean.

    Undone, ``w_k = (1 + a_k) m_k - a_k m_(k-1)`` with ``a_k = c_(k-1) / (c_k - c_(k-1))`` (0 where an epoch
    opens), so a move ``w_k - w_(k-1)`` weighs three logged values by ``1 + a_k``, ``-(1 + a_k + a_(k-1))``
    and ``a_(k-1)``; for independent logged values its size grows as the root of the sum of their squares.
    Index ``k - 1`` holds the move into record ``k``."""
    previous = np.r_[0.0, counts[:-1]]
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(first, 0.0, previous / (counts - previous))
    a_now, a_before = a[1:], a[:-1]
    return np.sqrt((1 + a_now) ** 2 + (1 + a_now + a_before) ** 2 + a_before ** 2)


def growth(values: np.ndarray, counts: np.ndarray, first: np.ndarray) -> tuple[float, float]:
    """(slope, its standard error) of log |move| on log :func:`amplification`, over the moves inside
    epochs, each epoch centred (least squares; (inf, inf) when there is too little to fit): 1 for a log of
    window means wrongly undone, 0 for a running mean rightly undone."""
    moves = np.abs(np.diff(values))
    inside = ~first[1:] & (moves > 0) & np.isfinite(moves)
    epoch_of = np.cumsum(first)[1:][inside]
    x, y = np.log(amplification(counts, first)[inside]), np.log(moves[inside])
    epochs = len(np.unique(epoch_of))
    if len(x) < epochs + 3:
        return float("inf"), float("inf")
    x = x - pd.Series(x).groupby(epoch_of).transform("mean").to_numpy()
    y = y - pd.Series(y).groupby(epoch_of).transform("mean").to_numpy()
    spread = float((x * x).sum())
    if spread <= 0:
        return float("inf"), float("inf")
    slope = float((x * y).sum() / spread)
    residual = y - slope * x
    return slope, float(np.sqrt((residual * residual).sum() / (len(x) - epochs - 1) / spread))


def is_running_mean(logged: np.ndarray, undone: np.ndarray, counts: np.ndarray, first: np.ndarray) -> bool:
    """Are ``logged`` running means of their epochs, ``undone`` what :func:`window_means` makes of them?
    (The three tests of the module docstring.)"""
    sizes = np.diff(np.r_[np.flatnonzero(first), len(logged)])
    counting_up = np.all(counts > 0) and np.all(np.diff(counts)[~first[1:]] > 0)
    if (sizes >= MIN_RECORDS).sum() < MIN_EPOCHS or not counting_up:
        return False
    if not (np.isfinite(logged) & (logged > 0)).all() or not (undone > 0).all():
        return False
    logged_ratio = boundary_ratio(logged, first)
    if logged_ratio < BOUNDARY_JUMP or logged_ratio <= BOUNDARY_JUMP * boundary_ratio(undone, first):
        return False
    slope, error = growth(undone, counts, first)  # the costliest test last
    return slope < MAX_GROWTH and slope + 3 * error < 1


def undo_running_mean(train: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """``train`` with ``train_loss`` turned into window means when it was logged as running epoch means."""
    if "train_loss" not in train or "epoch" not in train or len(train) < MIN_RECORDS * MIN_EPOCHS:
        return train
    logged = train["train_loss"].to_numpy(dtype=float)
    epochs = train["epoch"].to_numpy(dtype=float)
    if not np.isfinite(epochs).all():
        return train
    epochs = np.floor(epochs)
    steps = train["step"].to_numpy(dtype=float)
    counts = steps_into_epoch(steps, epochs)
    first = np.r_[True, epochs[1:] != epochs[:-1]]
    undone = window_means(logged, counts, first)
    if not is_running_mean(logged, undone, counts, first):
        return train
    notes.append("train_loss looks like a running mean over each epoch (it jumps at every epoch boundary "
                 "and barely moves inside): read as the mean over each logging window instead")
    return train.assign(train_loss=undone)
