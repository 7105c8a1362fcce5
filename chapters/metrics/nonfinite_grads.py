"""Non-finite gradients: how many parameters got a NaN or Inf gradient this step.

A single NaN in one gradient is enough: the optimizer writes it into the weight, and from the next
forward pass on every activation that touches that weight is NaN too. Counting *which* parameters went
bad (and how many) separates "one layer overflowed" from "everything is NaN because the loss was".

With fp16 and a ``GradScaler``, an Inf gradient now and then is normal: the scaler skips that step and
lowers its scale. A count that stays above zero for many records is not.

What is counted is parameters whose gradient *norm* is not finite: that is every gradient holding a NaN or
Inf, and also one whose entries are so large (around 1e19 in float32) that their squares overflow -- a step
as ruined. Those norms cost nothing extra: the trainer took every parameter's gradient norm (before
clipping) to clip, and keeps them in ``trainer.parameter_grad_norms``. We count on logging steps only.
"""

from __future__ import annotations

import math

from chapters.core.callbacks import Callback


class NonFiniteGrads(Callback):
    """Adds ``nonfinite_grads``: the number of parameters whose gradient holds a NaN or an Inf."""

    def on_measure(self, trainer, record):
        # A gradient with a NaN or Inf entry has a NaN or Inf norm. (A parameter without a gradient has
        # norm 0 there: finite, not counted.) One read of the few dozen norms, then plain Python: cheaper
        # than the several small tensor operations a count on the device would take.
        record["nonfinite_grads"] = sum(not math.isfinite(norm) for norm in trainer.parameter_grad_norms.tolist())
