"""Non-finite gradients: how many parameters got a NaN or Inf gradient this step.

A single NaN in one gradient is enough: the optimizer writes it into the weight, and from the next
forward pass on every activation that touches that weight is NaN too. Counting *which* parameters went
bad (and how many) separates "one layer overflowed" from "everything is NaN because the loss was".

With fp16 and a ``GradScaler``, an Inf gradient now and then is normal: the scaler skips that step and
lowers its scale. A count that stays above zero for many records is not.

Checked on logging steps only, before clipping; the count stays a tensor until ``on_log``. What is counted
is parameters whose gradient *norm* is not finite: that is every gradient holding a NaN or Inf, and also
one whose entries are so large (around 1e19 in float32) that their squares overflow -- a step as ruined.
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
        if grads:
            # A gradient with a NaN or Inf entry has a NaN or Inf norm, and one batched call (the kernel
            # clip_grad_norm_ uses) gives every parameter's norm. Counted on the device: no sync until on_log.
            norms = torch.stack(torch._foreach_norm(grads))
            self.count = (~torch.isfinite(norms)).sum()

    def on_log(self, trainer, record):
        if self.count is not None:
            record["nonfinite_grads"] = int(self.count.item())
        self.count = None
