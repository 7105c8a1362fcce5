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


def declared(run) -> bool:
    """Does ``run_start`` give the untrained loss exactly (a vocabulary or class count of 2 or more,
    :attr:`RunLog.class_count <chapters.records.runlog.RunLog.class_count>`)?"""
    return run.class_count is not None


def log_noise(run, loss: pd.Series) -> float:
    """The noise of (smoothed log loss - log reference), in log units."""
    window = window_for(len(loss))
    sigma = noise_scale(np.log(loss))
    return sigma / math.sqrt(window) if declared(run) else sigma * math.sqrt(1 + 1 / window)


def rise_limit(run, loss: pd.Series, reference: float) -> float:
    """The level a smoothed loss must pass to count as risen above ``reference``: ``RISE`` x the reference,
    or more on a noisy run -- ``NOISE_UNITS`` x the noise of the comparison (:func:`log_noise`)."""
    return reference * max(RISE, signals.factor(signals.NOISE_UNITS * log_noise(run, loss)))
