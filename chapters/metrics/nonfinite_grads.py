"""Non-finite gradients: how many parameters got a NaN or Inf gradient this step.

A single NaN in one gradient is enough: the optimizer writes it into the weight, and from the next
forward pass on every activation that touches that weight is NaN too. Counting *which* parameters went
bad (and how many) separates "one layer overflowed" from "everything is NaN because the loss was".

With fp16 and a ``GradScaler``, an Inf gradient now and then is normal: the scaler skips that step and
lowers its scale. A count that stays above zero for many records is not.

Checked on logging steps only, before clipping; the count stays a tensor until ``on_log``.
"""

from __future__ import annotations

import torch

from chapters.core.callbacks import Callback
from chapters.metrics import is_logging_step


class NonFiniteGrads(Callback):
    """Adds ``nonfinite_grads``: the number of parameters whose gradient holds a NaN or an Inf."""

    def __init__(self):
        self.count = None

    def on_before_optimizer_step(self, trainer):
        if not is_logging_step(trainer):
            return
        grads = [p.grad for p in trainer.model.parameters() if p.grad is not None]
        if grads:  # one "all finite?" flag per parameter, counted on the device: no sync until on_log
            all_finite = torch.stack([torch.isfinite(g).all() for g in grads])
            self.count = (~all_finite).sum()

    def on_log(self, trainer, record):
        if self.count is not None:
            record["nonfinite_grads"] = int(self.count.item())
        self.count = None
