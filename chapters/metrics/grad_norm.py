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

import torch

from chapters.core.callbacks import Callback
from chapters.metrics import is_logging_step
from chapters.metrics.groups import Grouping, ParameterGroups, gpt_group


class GradNormPerGroup(Callback):
    """Adds ``grad_norm/<group>``: the L2 norm of the group's gradients before clipping."""

    def __init__(self, grouping: Grouping = gpt_group):
        self.grouping = grouping
        self.norms = None

    def on_run_start(self, trainer):
        self.groups = ParameterGroups(trainer.model, self.grouping)
        self.no_grad = torch.zeros((), device=trainer.device)  # stands in for a frozen parameter's gradient

    def on_before_optimizer_step(self, trainer):
        if not is_logging_step(trainer):
            return
        parameters = self.groups.parameters
        self.norms = self.groups.norms([self.no_grad if p.grad is None else p.grad for p in parameters])
        # A group none of whose parameters has a gradient (fully frozen) has nothing to report.
        self.measured = {group for p, group in zip(parameters, self.groups.group_of) if p.grad is not None}

    def on_log(self, trainer, record):
        if self.norms is None:
            return
        for name, norm in zip(self.groups.names, self.norms.tolist()):  # one sync for all groups
            if name in self.measured:
                record[f"grad_norm/{name}"] = norm
        self.norms = None
