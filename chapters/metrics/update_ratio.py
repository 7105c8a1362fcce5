"""Update ratio: how much one optimizer step changed the weights, relative to their size.

``update_ratio/<group> = ||w_after - w_before|| / ||w_after||`` over the group's parameters, for the
step that was just taken. The gradient norm says how hard the loss pulls; the update ratio says how far
the optimizer actually moved -- which, with Adam, depends mostly on the learning rate. A common rule of
thumb is around 1e-3 per step: much larger and the weights are being rewritten every step (the learning
rate is too high), much smaller and the group is barely learning. A frozen group, or one whose gradients
never arrive (a detached branch), shows exactly 0 from the first logged step.

Measuring it needs a copy of the weights before the step. We take that copy only on logging steps, so
the cost is nothing on the other steps. On a logging step, ``torch.cat`` copies every parameter, end to
end and sorted by group, into one flat buffer; after the step a second ``torch.cat`` fills a second flat
buffer with the new weights; one in-place subtraction turns the first into ``w_before - w_after``; and
one batched norm over each group's slice of both buffers gives ``||Δw||`` and ``||w||`` per group. Why
flat buffers: a GPT has dozens of parameter tensors, and on a CPU every per-tensor operation (copy,
subtract, norm) costs a few microseconds of overhead whatever its size, so copying parameter by
parameter was the slowest part of the whole monitoring stack; ``torch.cat`` is one operation. The
buffers are allocated once at the start of the run (two model-sized float32 copies, held throughout).

The weights' size in the denominator is taken *after* the step, ``||w_after||``: it differs from
``||w_before||`` by at most ``||Δw||`` -- a relative error the size of the ratio itself, around 1e-3 --
and it is already in the second buffer.
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
        self.copied = False  # do the buffers hold this step's weights from before the update?
        self.ratios = None

    def on_run_start(self, trainer):
        groups = ParameterGroups(trainer.model, self.grouping)
        self.names = groups.names
        # Every parameter as a flat view (it shares the parameter's memory, so it always shows the current
        # weights: the optimizer updates parameters in place), the groups one after another.
        by_group = sorted(zip(groups.parameters, groups.group_of), key=lambda pair: self.names.index(pair[1]))
        self.views = [parameter.view(-1) for parameter, _ in by_group]
        sizes = [sum(p.numel() for p, group in by_group if group == name) for name in self.names]
        self.before = torch.empty(sum(sizes), device=self.views[0].device)
        self.after = torch.empty_like(self.before)
        self.slices = [*self.before.split(sizes), *self.after.split(sizes)]  # each group's part of both

    @torch.no_grad()
    def on_before_optimizer_step(self, trainer):
        if is_logging_step(trainer):
            torch.cat(self.views, out=self.before)  # w_before
            self.copied = True

    @torch.no_grad()
    def on_step_end(self, trainer):
        if not self.copied:  # not a logging step: nothing was copied, nothing to do
            return
        torch.cat(self.views, out=self.after)  # w_after
        self.before.sub_(self.after)  # before = w_before - w_after, in place
        change, size = torch.stack(torch._foreach_norm(self.slices)).view(2, -1)  # per group
        self.ratios = change / size
        self.copied = False

    def on_measure(self, trainer, record):
        if self.ratios is None:
            return
        for name, ratio in zip(self.names, self.ratios.tolist()):  # one sync for all groups
            record[f"update_ratio/{name}"] = ratio
        self.ratios = None
