"""Update ratio: how much one optimizer step changed the weights, relative to their size.

``update_ratio/<group> = ||w_after - w_before|| / ||w_before||`` over the group's parameters, for the
step that was just taken. The gradient norm says how hard the loss pulls; the update ratio says how far
the optimizer actually moved -- which, with Adam, depends mostly on the learning rate. A common rule of
thumb is around 1e-3 per step: much larger and the weights are being rewritten every step (the learning
rate is too high), much smaller and the group is barely learning. A frozen group, or one whose gradients
never arrive (a detached branch), shows exactly 0 from the first logged step.

Measuring it needs a copy of the weights before the step. We take that copy only on logging steps, so
the cost is one model-sized copy every ``log_every`` steps, and nothing on the others.
"""

from __future__ import annotations

import torch

from chapters.core.callbacks import Callback
from chapters.metrics import is_logging_step
from chapters.metrics.groups import Grouping, combined_norm, gpt_group, group_parameters


class UpdateRatio(Callback):
    """Adds ``update_ratio/<group>`` for the step each metric record closes."""

    def __init__(self, grouping: Grouping = gpt_group):
        self.grouping = grouping
        self.before = None
        self.ratios = {}

    def on_run_start(self, trainer):
        self.groups = group_parameters(trainer.model, self.grouping)

    @torch.no_grad()
    def on_before_optimizer_step(self, trainer):
        if is_logging_step(trainer):
            self.before = {group: [p.detach().clone() for p in params] for group, params in self.groups.items()}

    @torch.no_grad()
    def on_step_end(self, trainer):
        if self.before is None:  # not a logging step: nothing was copied, nothing to do
            return
        self.ratios = {}
        for group, params in self.groups.items():
            old = self.before[group]
            change = combined_norm(torch._foreach_sub(params, old))  # one batched subtraction for the group
            self.ratios[group] = change / combined_norm(old)
        self.before = None

    def on_log(self, trainer, record):
        for group, ratio in self.ratios.items():
            record[f"update_ratio/{group}"] = ratio.item()
        self.ratios = {}
