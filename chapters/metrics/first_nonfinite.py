"""The first non-finite loss: *when* a run went NaN, to the step, without slowing every step down.

Once the loss is NaN it stays NaN (NaN spreads through every operation), so the useful fact is the
first step where it happened -- the batch, learning rate and gradient norm of *that* step are the
evidence. Checking ``math.isnan(loss.item())`` every step would find it, at the price of a GPU sync per
step. Instead we keep the check on the device: each step folds "is this loss finite?" into a tensor that
remembers the first bad step (a ``torch.where`` and a ``torch.minimum``, no sync), and we read that tensor
on logging steps. This runs on *every* step, so it is kept to four small operations.

When it turns up, a ``nan`` event goes to every writer: ``{"event": "nan", "step": 13, "tensor":
"loss"}``. ``tensor`` names what went non-finite first: ``"loss"``, or ``"grad_norm"`` when the loss was
still finite but its gradients overflowed (the loss follows one step later). Under fp16 loss scaling only
the loss is watched: there overflowing gradients are routine, and the scaler skips those steps.

The event is written on the logging step that discovers it, so in the log it may come after records of
later steps; its ``step`` field is the exact step.
"""

from __future__ import annotations

import torch

from chapters.core.callbacks import Callback

NOT_YET = torch.iinfo(torch.int64).max  # "no bad step yet": larger than any step, so minimum() keeps a real one
WATCHED = ("loss", "grad_norm")  # checked together; on a tie the loss is named, as it causes the NaN gradients


class FirstNonFinite(Callback):
    """Emits one ``nan`` event for the first step whose loss (or total grad norm) is NaN or Inf."""

    def on_run_start(self, trainer):
        # first_step[i]: the first step at which WATCHED[i] was not finite, or NOT_YET. Lives on the device.
        self.first_step = torch.full((len(WATCHED),), NOT_YET, device=trainer.device)
        self.reported = False
        # With fp16 loss scaling an Inf gradient now and then is routine (the scaler skips that step), so
        # there only the loss is watched.
        self.watch_grads = not trainer.scaler.is_enabled()
        self.unwatched = torch.zeros((), device=trainer.device)  # stands in for the grad norm when not watched

    @torch.no_grad()
    def on_step_end(self, trainer):
        if self.reported:
            return
        grad_norm = trainer.grad_norm.float() if self.watch_grads else self.unwatched
        values = torch.stack([trainer.last_loss.float(), grad_norm])
        bad_at = torch.where(torch.isfinite(values), NOT_YET, trainer.step)  # this step where not finite
        self.first_step = torch.minimum(self.first_step, bad_at)  # the earliest bad step wins; no sync

    def on_log(self, trainer, record):
        if self.reported:
            return
        bad = {name: step for name, step in zip(WATCHED, self.first_step.tolist()) if step != NOT_YET}
        if bad:
            tensor = min(bad, key=lambda name: (bad[name], WATCHED.index(name)))  # earliest, loss first on ties
            self.reported = True
            trainer.emit_event("nan", step=bad[tensor], tensor=tensor)
