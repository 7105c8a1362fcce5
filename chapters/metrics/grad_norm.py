"""Gradient norm, in total and per parameter group.

The total L2 norm of the gradient is the single best early warning in training: a spike comes before a
loss spike, a slow climb comes before divergence, and a norm near zero means nothing is learning. The
trainer already records the total as ``grad_norm`` -- the value ``clip_grad_norm_`` returns, i.e. the norm
*before* clipping, which is the one that tells you how often clipping fires.

This callback adds ``grad_norm/<group>`` for each parameter group (see :mod:`chapters.metrics.groups`),
so a spike can be traced to the embeddings, the attention, the MLP, the norms or the head. It does not
compute a single norm itself: to clip, the trainer has already taken every parameter's gradient norm
(before clipping, in ``Trainer.clip_gradients``), and a group's norm is ``sqrt(sum of squares)`` of its
members' norms. Passing over every gradient a second time would cost more than the rest of the metric.
Those few dozen numbers are read once and combined in plain Python: for so few values, that is cheaper
than the handful of small tensor operations it would take on the device.

**Absolute numbers, and why the doctor does not use them.** The course text gives rules of thumb: a total norm
of 0.1-5 is normal, above 10 a NaN is coming, below 1e-6 learning has stalled. They are a useful first glance
at a language model trained with a *mean* cross-entropy and clipping at 1.0 -- and only there, because the
norm's scale is set by things that have nothing to do with health:

* the **number of parameters**: with similar per-entry gradients the norm grows like the square root of the
  count, so a big model reads higher than a small one in the same state;
* the **loss's scale**: a *summed* loss (``reduction="sum"``) multiplies every gradient by the number of tokens,
  and fp16's ``GradScaler`` multiplies them by its scale (65 536 at the start) until ``unscale_`` -- read the
  norm after it, as ``clip_grad_norm_`` does in the course trainer;
* the **batch size**: the noise part of the gradient shrinks like 1 / sqrt(batch), so small batches read higher.

So the two ends keep their meaning on any model -- exactly zero (a frozen or detached part: nothing arrives)
and non-finite (already broken) -- and everything in between is judged against the run itself: the doctor's
``grad_explosion`` asks for 10x the run's *own* early norm, ``vanishing_gradients`` compares groups with each
other. One absolute number is worth watching: the norm against your clipping threshold. If it is above the
threshold on most steps, clipping is no longer a safety net but a hidden change of learning rate.
"""

from __future__ import annotations

import math
from collections import defaultdict

from chapters.core.callbacks import Callback
from chapters.metrics import is_logging_step
from chapters.metrics.groups import Grouping, ParameterGroups, gpt_group


class GradNormPerGroup(Callback):
    """Adds ``grad_norm/<group>``: the L2 norm of the group's gradients before clipping."""

    def __init__(self, grouping: Grouping = gpt_group):
        self.grouping = grouping
        self.measured = None

    def on_run_start(self, trainer):
        self.groups = ParameterGroups(trainer.model, self.grouping)

    def on_before_optimizer_step(self, trainer):
        if is_logging_step(trainer):
            # A group none of whose parameters has a gradient (fully frozen) has nothing to report. Which
            # ones have gradients is only visible now: the optimizer step clears them.
            groups = self.groups
            self.measured = {group for p, group in zip(groups.parameters, groups.group_of) if p.grad is not None}

    def on_measure(self, trainer, record):
        if self.measured is None:
            return
        squares = defaultdict(float)
        # this step's per-parameter norms, before clipping; one sync for all of them
        for norm, group in zip(trainer.parameter_grad_norms.tolist(), self.groups.group_of):
            squares[group] += norm * norm
        for name in self.groups.names:
            if name in self.measured:
                record[f"grad_norm/{name}"] = math.sqrt(squares[name])
        self.measured = None
