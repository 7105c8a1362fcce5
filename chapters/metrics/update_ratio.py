"""Update ratio: how much one optimizer step changed the weights, relative to their size.

``update_ratio/<group> = ||w_after - w_before|| / ||w_before||`` over the group's parameters, for the
step that was just taken. The gradient norm says how hard the loss pulls; the update ratio says how far
the optimizer actually moved -- which, with Adam, depends mostly on the learning rate. A common rule of
thumb is around 1e-3 per step: much larger and the weights are being rewritten every step (the learning
rate is too high), much smaller and the group is barely learning. A frozen group, or one whose gradients
never arrive (a detached branch), shows exactly 0 from the first logged step.

Measuring it needs a copy of the weights before the step. We take that copy only on logging steps, so
the cost is one model-sized copy every ``log_every`` steps, and nothing on the others. The copy goes into
one buffer allocated at the start of the run (a model's worth of memory, held throughout) and reused:
allocating a fresh model-sized copy on every logging step is slower than filling an existing one. After
the step, the buffer is overwritten in place with ``w_before - w_after`` (whose norm is ``||Δw||``), so
no second model-sized tensor is created either. All of it uses batched ``torch._foreach_*`` calls: one
call for all parameters instead of one small kernel launch per parameter.
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
        self.copied = False  # does the buffer hold this step's weights from before the update?
        self.ratios = None

    def on_run_start(self, trainer):
        self.groups = ParameterGroups(trainer.model, self.grouping)
        self.buffer = [torch.empty_like(p, memory_format=torch.preserve_format) for p in self.groups.parameters]

    @torch.no_grad()
    def on_before_optimizer_step(self, trainer):
        if is_logging_step(trainer):
            torch._foreach_copy_(self.buffer, self.groups.parameters)  # buffer = w_before
            self.copied = True

    @torch.no_grad()
    def on_step_end(self, trainer):
        if not self.copied:  # not a logging step: nothing was copied, nothing to do
            return
        size = self.groups.norms(self.buffer)  # ||w_before|| per group
        torch._foreach_sub_(self.buffer, self.groups.parameters)  # buffer = w_before - w_after, in place
        self.ratios = self.groups.norms(self.buffer) / size
        self.copied = False

    def on_log(self, trainer, record):
        if self.ratios is None:
            return
        for name, ratio in zip(self.groups.names, self.ratios.tolist()):  # one sync for all groups
            record[f"update_ratio/{name}"] = ratio
        self.ratios = None
