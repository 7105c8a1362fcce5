"""Losses that go below zero: a log density has no zero, so the doctor measures it from a baseline.

A cross-entropy over K classes is a sum of probabilities' logarithms: 0 is a perfect model, ln K one that
knows nothing, and every rule reads a loss as a *factor* above or below those levels ("x1.5 the untrained
loss", "10 % above its best"). The negative log-likelihood of a *continuous* target -- a Gaussian, Laplace
or beta regression, a flow, a VAE with a Gaussian decoder -- is a log *density*: it goes below zero as soon
as the model is sharper than one unit of the target, and where its zero lies depends on the units of the
data (measure y in millimetres instead of metres and every loss moves by ln 1000). Factors of such a loss
mean nothing: an outside beta regression fell from 0.2 to -0.73 and was thrown to +16.4 by an LR raised
300-fold, and the divergence rule, finding its reference below zero, said nothing -- the run was "healthy".

So when the log's training loss goes below zero, or its declared ``loss_floor`` is below zero, the rules
read every loss (train, val, the floor) moved up by one constant (:func:`offset`): the lowest level the log
shows -- its declared floor, or the lowest percentile of its records when that is lower -- is placed as far
above zero as the untrained start is above it. That is the discretised form of the same loss (a density
read at a resolution fine enough to make every value positive is a cross-entropy): differences in nats
are unchanged, the floor stands where a classifier's does, half way between perfect and untrained, and a
factor means again what it means for a classifier. The diagnosis says so in a note, and the evidence quotes
the moved values.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

LOWEST = 0.01  # the records' lowest percentile: one wild batch below the rest does not set the baseline
SHIFT_KEY = "_loss_shift"  # where a moved run keeps its shift (run_start; the underscore: no contract key)


def offset(run) -> float:
    """The constant added to every loss of ``run``; 0 when its losses need none (no finite training loss
    below zero and no declared floor below zero)."""
    train = run.train["train_loss"].to_numpy(dtype=float)
    train = train[np.isfinite(train)]
    val = run.evals["val_loss"].to_numpy(dtype=float)
    val = val[np.isfinite(val)]
    floor = run.loss_floor
    floor = floor if floor is not None and math.isfinite(floor) else None
    if len(train) == 0 or (float(train.min()) >= 0 and (floor is None or floor >= 0)):
        return 0.0
    lows = [float(np.quantile(train, LOWEST))] + ([float(np.quantile(val, LOWEST))] if len(val) else [])
    lowest = min(lows + ([floor] if floor is not None else []))
    start = float(np.median(train[: max(1, len(train) // 20)]))
    span = start - lowest if start > lowest else abs(lowest) or 1.0
    # Every finite record positive: the baseline's margin is at least the gap to the lowest record of all.
    return max(span - lowest, float(-min(train.min(), val.min() if len(val) else 0.0)) + span * LOWEST)


def moved(run):
    """``run`` itself when its losses need no offset; else a copy whose losses and floor are moved up by
    :func:`offset`, with a note saying by how much."""
    shift = offset(run)
    if shift == 0.0:
        return run
    start = dict(run.run_start, **{SHIFT_KEY: shift})
    if run.loss_floor is not None:
        start["loss_floor"] = run.loss_floor + shift
    note = (f"the training loss goes below zero (a log density: a continuous target's likelihood); the losses "
            f"and the floor are read moved up by {shift:.4g}, so that a factor means what it means for a "
            "cross-entropy (docs/doctor.md#losses-below-zero); the evidence quotes the moved values")
    return replace(run, train=run.train.assign(train_loss=run.train["train_loss"] + shift),
                   evals=run.evals.assign(val_loss=run.evals["val_loss"] + shift), run_start=start,
                   notes=list(run.notes) + [note], _curves={})


def shift_of(run) -> float:
    """How far :func:`moved` moved ``run``'s losses up: 0 for a run whose losses never went below zero."""
    return float(run.run_start.get(SHIFT_KEY, 0.0))
