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
from chapters.metrics.groups import Grouping, ParameterGroups, gpt_group


class UpdateRatio(Callback):
    """Adds ``update_ratio/<group>`` for the step each metric record closes."""

    def __init__(self, grouping: Grouping = gpt_group):
        self.grouping = grouping
        self.before = None
        self.ratios = None

    def on_run_start(self, trainer):
        self.groups = ParameterGroups(trainer.model, self.grouping)

    @torch.no_grad()
    def on_before_optimizer_step(self, trainer):
        if is_logging_step(trainer):
            self.before = [p.detach().clone() for p in self.groups.parameters]

    @torch.no_grad()
    def on_step_end(self, trainer):
        if self.before is None:  # not a logging step: nothing was copied, nothing to do
            return
        change = self.groups.norms(torch._foreach_sub(self.groups.parameters, self.before))  # batched w - w_old
        self.ratios = change / self.groups.norms(self.before)
        self.before = None

    def on_log(self, trainer, record):
        if self.ratios is None:
            return
        for name, ratio in zip(self.groups.names, self.ratios.tolist()):  # one sync for all groups
            record[f"update_ratio/{name}"] = ratio
        self.ratios = None
