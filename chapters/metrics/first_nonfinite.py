"""The first non-finite loss: *when* a run went NaN, to the step, without slowing every step down.

Once the loss is NaN it stays NaN (NaN spreads through every operation), so the useful fact is the
first step where it happened -- the batch, learning rate and gradient norm of *that* step are the
evidence. Checking ``math.isnan(loss.item())`` every step would find it, at the price of a GPU sync per
step. Instead each step copies its loss and gradient norm into one row of a small buffer on the device
(one operation, no sync), and on logging steps we look through the window's rows at once and find the
first non-finite value. The same pattern as the trainer's loss: cheap bookkeeping on the device every
step, one read per logging window.

When it turns up, a ``nan`` event goes to every writer: ``{"event": "nan", "step": 13, "tensor":
"loss"}``. ``tensor`` names what went non-finite first: ``"loss"``, or ``"grad_norm"`` when the loss was
still finite but its gradients overflowed (the loss follows one step later). Under fp16 loss scaling only
the loss is watched: there overflowing gradients are routine, and the scaler skips those steps.

The event is written on the logging step that discovers it, so in the log it may come after records of
later steps; its ``step`` field is the exact step.
"""

from __future__ import annotations

import math

import torch

from chapters.core.callbacks import Callback

WATCHED = ("loss", "grad_norm")  # a buffer row's columns; on a tie the loss is named, as it causes the NaN gradients


class FirstNonFinite(Callback):
    """Emits one ``nan`` event for the first step whose loss (or total grad norm) is NaN or Inf."""

    def on_run_start(self, trainer):
        # One row per step of the logging window: (loss, grad norm). Trainer.fit logs at least every
        # log_every steps, so that many rows always suffice. Lives on the device.
        self.window = torch.zeros(trainer.config.log_every, len(WATCHED), device=trainer.device)
        self.rows = 0  # rows filled since the last record
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
        torch.stack([trainer.last_loss.float(), grad_norm], out=self.window[self.rows])  # no sync
        self.rows += 1

    def on_measure(self, trainer, record):
        if self.reported:
            return
        # One read of the window's few numbers (one sync), then a plain Python scan: for a handful of
        # values that is cheaper than the several small tensor operations a search on the device takes.
        # Rows are steps in order, and within a step the loss (column 0) comes before the grad norm.
        rows = self.window[:self.rows].tolist()
        first_row_step = trainer.step - self.rows + 1
        self.rows = 0
        for row, values in enumerate(rows):
            for column, value in enumerate(values):
                if not math.isfinite(value):
                    self.reported = True
                    trainer.emit_event("nan", step=first_row_step + row, tensor=WATCHED[column])
                    return
