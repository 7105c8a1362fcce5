"""How far a smoothed loss must move from the untrained reference before the move is evidence.

The reference (:func:`signals.reference_level`) is exact when ``run_start`` declares ``vocab_size`` or
``num_classes`` (ln V, ln K); otherwise it is the first record, which carries one record's batch noise. A
rule comparing the *smoothed* curve (rolling median of ``w`` records) with the reference must allow for the
noise of both: sigma / sqrt(w) for the curve, plus sigma for a first-record reference -- so
``sqrt(1 + 1/w)`` sigma rather than ``1/sqrt(w)`` sigma (sigma: the run's per-record noise of the log loss,
:func:`signals.noise_scale`). On a run of batches of two, a first record can be half the loss of the ones
that follow; measured against it, an honest run looks as if it had risen.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from chapters.doctor import signals
from chapters.doctor.signals import noise_scale, window_for

RISE = 1.5  # the least factor above the reference that counts as risen, however smooth the run
LOW_SHARE = 0.05  # rose_past_first: the run's low records -- its lowest 5 % -- all above the first one
RANKED_RECORDS = 20  # ... over at least this many records: the first one below all 19 others by chance is 1 in 20
AT_FLOOR = 1.1  # a validation loss within 10 % of the declared floor: the run learned what the data allows


def declared(run) -> bool:
    """Does ``run_start`` give the untrained loss exactly (a vocabulary or class count of 2 or more,
    :attr:`RunLog.class_count <chapters.records.runlog.RunLog.class_count>`, in the loss's own units:
    :func:`signals.untrained_loss`)?"""
    return signals.untrained_loss(run) is not None


def blown_up_at(run) -> int | None:
    """The step where the run's positive training loss blew up (:func:`signals.blew_up`: ten times the
    untrained reference, never back below it), or None."""
    loss = run.curve("train_loss")
    loss = loss[loss > 0]
    if len(loss) < 2:
        return None
    return signals.blew_up(loss, signals.reference_level(run, loss), declared(run))


def log_noise(run, loss: pd.Series) -> float:
    """The noise of (smoothed log loss - log reference), in log units."""
    window = window_for(len(loss))
    sigma = noise_scale(np.log(loss))
    return sigma / math.sqrt(window) if declared(run) else sigma * math.sqrt(1 + 1 / window)


def rise_limit(run, loss: pd.Series, reference: float) -> float:
    """The level a smoothed loss must pass to count as risen above ``reference``: ``RISE`` x the reference,
    or more on a noisy run -- ``NOISE_UNITS`` x the noise of the comparison (:func:`log_noise`)."""
    return reference * max(RISE, signals.factor(signals.NOISE_UNITS * log_noise(run, loss)))


def rose_past_first(run, loss: pd.Series) -> bool:
    """Without a declared class count: is the first record below the ``LOW_SHARE`` quantile of all the
    records after it by ``RISE`` or more (over at least ``RANKED_RECORDS`` records)?

    A rank test, for the runs whose noise defeats :func:`rise_limit`. A learning rate far too high throws
    the loss up before the second record, and it then thrashes up there: an RBF regression at SGD 4.2 went
    0.69 -> 25 and swung 3-60 ever after, so its own noise (about 100 % per record) put the rise limit at
    thousands of times the first record -- "not risen" -- while 95 % of its 400 records were above 1.9 x the
    first. If the first record were one batch of that run like any other, it would sit below nineteen in
    twenty of them only one time in twenty, and a factor of 1.5 below them far more rarely; a healthy run's
    first record is its *highest* (untrained) level. On ~1,400 cached healthy logs the first record was
    that far below the rest once: an MC-dropout regression at batch 4 whose first batch drew 0.03 and the
    rest 0.07-0.8 -- its validation loss falling steadily all run. So a validation loss with a downward
    trend (Mann-Kendall z at most -``signals.TREND_Z``, the 5 % level, over at least ``signals.TREND_EVALS``
    evaluations)
    says the run is learning, and this test says no. So does a validation loss that sits at the declared
    ``loss_floor`` (the median of its second half within ``AT_FLOOR`` of it): the model does as well as the
    data allows, and what put the first record below the rest is the data's order -- sorted by target, the
    first batch is the easiest block (an outside gamma regression: 0.38 first, 1.3-3.6 after, its
    validation loss 1.07 x the floor throughout; ``divergence`` until 2026-12-05, where ``no_shuffle`` is the
    fault)."""
    if declared(run) or len(loss) < RANKED_RECORDS:
        return False
    if float(loss.iloc[1:].quantile(LOW_SHARE)) < RISE * float(loss.iloc[0]):
        return False
    val = signals.val_losses(run)
    floor = run.info("loss_floor")
    if floor is not None and floor > 0 and len(val) >= signals.TREND_EVALS and \
            float(val.iloc[len(val) // 2:].median()) <= AT_FLOOR * floor:
        return False
    return len(val) < signals.TREND_EVALS or signals.trend_z(np.log(val)) > -signals.TREND_Z
