"""Gradient norm, in total and per parameter group.

The total L2 norm of the gradient is the single best early warning in training: a spike comes before a
loss spike, a slow climb comes before divergence, and a norm near zero means nothing is learning. The
trainer already records the total as ``grad_norm`` -- the value ``clip_grad_norm_`` returns, i.e. the norm
*before* clipping, which is the one that tells you how often clipping fires.

This callback adds ``grad_norm/<group>`` for each parameter group (see :mod:`chapters.metrics.groups`),
so a spike can be traced to the embeddings, the attention, the MLP, the norms or the head. It computes
them only on logging steps, before clipping, and leaves them on the device until ``on_log``.
"""

from __future__ import annotations

from chapters.core.callbacks import Callback
from chapters.metrics import is_logging_step
from chapters.metrics.groups import Grouping, combined_norm, gpt_group, group_parameters


class GradNormPerGroup(Callback):
    """Adds ``grad_norm/<group>``: the L2 norm of the group's gradients before clipping."""

    def __init__(self, grouping: Grouping = gpt_group):
        self.grouping = grouping
        self.norms = {}

    def on_run_start(self, trainer):
        self.groups = group_parameters(trainer.model, self.grouping)

    def on_before_optimizer_step(self, trainer):
        if not is_logging_step(trainer):
            return
        self.norms = {}
        for group, parameters in self.groups.items():
            grads = [p.grad for p in parameters if p.grad is not None]
            if grads:  # a fully frozen group has no gradient to measure
                self.norms[group] = combined_norm(grads)

    def on_log(self, trainer, record):
        for group, norm in self.norms.items():
            record[f"grad_norm/{group}"] = norm.item()
        self.norms = {}
