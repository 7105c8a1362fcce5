"""What the logged learning rate says about a change in the loss: did the LR jump where the loss did?

Several failures look alike in the loss alone. A loss that leaps up and then settles (at the untrained
level, or back down) can be a learning rate raised far too high (``divergence``), gradients that exploded
on their own (``grad_explosion``), a network knocked dead by one bad update (``loss_plateau``) or steps that
overshoot the valley and bounce (``oscillation``). The ``lr`` column -- one of the course text's minimal
keys, so nearly every log has it -- separates the first from the rest: when the loss changed at the very
records where the learning rate *rose* several-fold, the learning rate is the cause, whatever came after.

Statistic: the largest record-to-record ratio lr[i] / lr[i-1] among the records from ``around`` records
before the onset to one after it (an onset found on a smoothed curve lags the event by up to half the
smoothing window, so callers pass their window). Threshold: ``LR_JUMP`` (3). Why: schedules move the LR
smoothly and mostly *down* (cosine, step decay, linear decay change it by a few percent per record);
warmup raises it, but a few percent per step. A factor of 3 from one record to the next is a restart or a
mistake -- and a loss that
jumps at that same record was thrown out by it. The test only *attributes* a change the loss rules found;
it never raises a finding alone (a warm restart on a healthy run raises the LR too, and nothing follows).

The other way, a learning rate gone to almost nothing (:func:`lr_stopped`) explains a loss that stopped
moving: ``loss_plateau`` reports it when the loss did stop.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

LR_JUMP = 3.0
# A learning rate under this share of its peak moves no weight measurably. Three tenfold step decays (1e-3 of
# the peak, the deepest common recipes anneal to) stay above it; a factor of 1e-4 slipped in, or a schedule
# that reached 0 early, fall below it.
STOPPED = 5e-4
STOPPED_SHARE = 0.25  # ... over at least this share of the logged steps, to the end of the log


def positive_lr(run) -> pd.Series:
    """The logged ``lr`` by step, its records above 0 (a rate of 0 -- a warm-up's first step, a frozen run --
    has no ratio to rise by)."""
    lr = run.curve("lr")
    return lr[lr > 0]


def lr_jump(run, step, around: int, until=None) -> float:
    """The largest record-to-record rise of ``lr`` from ``around`` records before ``step`` to one record
    after ``until`` (default ``step``); 1.0 when none or when the log has no ``lr``."""
    lr = positive_lr(run)
    if len(lr) < 2 or step is None:
        return 1.0
    steps = lr.index.to_numpy()
    low = max(1, int(np.searchsorted(steps, step)) - around)
    high = min(len(lr), int(np.searchsorted(steps, step if until is None else until)) + 2)
    if low >= high:
        return 1.0
    values = lr.to_numpy()
    return float(np.max(values[low:high] / values[low - 1:high - 1]))


def lr_raised(run, step, around: int, until=None) -> bool:
    """Did the learning rate rise ``LR_JUMP``-fold or more in that stretch (see :func:`lr_jump`)?"""
    return lr_jump(run, step, around, until) >= LR_JUMP


def climb_start(smoothed: pd.Series, step) -> int:
    """Where the climb that crossed a threshold at ``step`` began: walking back while the smoothed loss was
    still rising. A threshold is crossed late -- on a run that had learned, the loss climbs through its whole
    learned range before it passes its untrained level -- and the LR jump is at the start of the climb."""
    values, position = smoothed.to_numpy(), int(np.searchsorted(smoothed.index.to_numpy(), step))
    position = min(position, len(values) - 1)
    while position > 0 and values[position - 1] < values[position]:
        position -= 1
    return int(smoothed.index[position])


def lr_ever_raised(run) -> bool:
    """Did the learning rate rise ``LR_JUMP``-fold from one record to the next anywhere in the run?"""
    return lr_jump(run, run.curve("lr").index.max() if len(run.curve("lr")) else None, len(run.curve("lr"))) \
        >= LR_JUMP


def lr_ramped(run, step) -> bool:
    """Is the learning rate at ``step`` (the last record at or before it) ``LR_JUMP`` x or more its median
    over the run's first fifth -- raised several-fold in all, however gradually? (False without ``lr``.)

    :func:`lr_raised` sees a jump from one record to the next; a ramp that multiplies the LR by 1.03 per
    record has none, and reaches a hundredfold all the same (a tagger whose SGD rate rose from 0.05 to 10
    over its last 200 steps: its loss went back to ln K at 35x its rate, then blew up)."""
    return lr_ramp(run, step) >= LR_JUMP


def lr_ramp(run, step) -> float:
    """The learning rate at ``step`` (the last record at or before it) over its median across the run's first
    fifth; 0 with fewer than five ``lr`` records or none by ``step`` (:func:`lr_ramped` asks it to be
    ``LR_JUMP`` or more, and ``divergence`` quotes it)."""
    lr = positive_lr(run)
    upto = lr[lr.index <= step]
    if len(lr) < 5 or upto.empty:
        return 0.0
    return float(upto.iloc[-1]) / float(lr.iloc[:max(1, len(lr) // 5)].median())


def lr_stopped(run) -> tuple[int, float, float] | None:
    """(step, level, peak): from ``step`` to the end of the log the learning rate stayed under ``STOPPED`` of
    its peak, over ``STOPPED_SHARE`` or more of the logged steps (and 3 records or more); ``level`` is its
    last value. None otherwise, and without ``lr``.

    Why: an optimizer step is the learning rate times a direction, so a rate of 0 leaves every weight where
    it is, whatever the gradients say. It happens for real: a linear or cosine schedule told a total number
    of steps shorter than the run (``num_training_steps``, ``T_max``) reaches 0 early and stays there; a
    unit mix-up multiplies the rate by 1e-4. The loss then sits where the rate left it. A healthy schedule
    that anneals to 0 does so at its last record or two (1-7 % of the outside runs' records), and the
    deepest common step schedule ends at 1e-3 of its peak."""
    lr = run.curve("lr")
    if len(lr) < 8 or not float(lr.max()) > 0:
        return None
    peak = float(lr.max())
    low = (lr < STOPPED * peak).to_numpy()
    stretch = int(np.argmin(low[::-1]))  # low records at the end of the log (the peak itself is not low)
    if stretch < 3:
        return None
    step = lr.index[len(lr) - stretch]
    if lr.index[-1] - step < STOPPED_SHARE * (lr.index[-1] - lr.index[0]):
        return None
    return int(step), float(lr.iloc[-1]), peak


def lr_restored(run, step) -> bool:
    """Was a jump of the learning rate near ``step`` a one-off spike: is the median ``lr`` after ``step``
    less than ``LR_JUMP`` x its median before? (False without an ``lr`` column.)

    Why it matters: a learning rate raised and left high keeps throwing the weights about -- the loss that
    follows is the LR's doing (``divergence``). One spiked for a step or two and put back leaves a run
    trained at its old LR again; a loss that then sits flat at the untrained level is a network that the
    one huge update killed (``loss_plateau``), and lowering the LR would not revive it."""
    lr = positive_lr(run)
    before, after = lr[lr.index < step], lr[lr.index > step]
    if len(before) < 3 or len(after) < 3:
        return False
    return float(after.median()) < LR_JUMP * float(before.median())
