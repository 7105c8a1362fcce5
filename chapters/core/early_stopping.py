"""Early stopping as a callback: stop when validation loss stops improving, and keep the best weights.

"Stop when val loss has not improved by at least ``min_delta`` for ``patience`` evaluations" -- and then
*restore the weights of the best evaluation*. Without the restore, early stopping hands you the model
``patience`` evaluations past its best: already overfitting, which is what you were trying to avoid.
"""

from __future__ import annotations

from chapters.core.callbacks import Callback


class EarlyStopping(Callback):
    def __init__(self, patience: int = 3, min_delta: float = 0.0, restore_best: bool = True):
        if patience < 1:
            raise ValueError(f"patience must be at least 1, got {patience}")
        self.patience = patience
        self.min_delta = min_delta
        self.restore_best = restore_best
        self.best_loss = float("inf")
        self.best_step: int | None = None
        self.best_state: dict | None = None
        self.evals_without_improvement = 0

    def on_eval_end(self, trainer, record):
        loss = record["val_loss"]
        if loss < self.best_loss - self.min_delta:
            self.best_loss, self.best_step = loss, record["step"]
            self.evals_without_improvement = 0
            if self.restore_best:
                # A copy on the CPU: the live weights keep changing, and GPU memory is the scarce kind.
                self.best_state = {k: v.detach().to("cpu", copy=True) for k, v in trainer.model.state_dict().items()}
        else:
            self.evals_without_improvement += 1
            if self.evals_without_improvement >= self.patience:
                trainer.should_stop = True

    def state_dict(self):
        """The best value, its step and weights, and the patience used up: without them a resumed run
        starts counting again and stops later than the run it continues."""
        return {"best_loss": self.best_loss, "best_step": self.best_step, "best_state": self.best_state,
                "evals_without_improvement": self.evals_without_improvement}

    def load_state_dict(self, state):
        self.best_loss, self.best_step = state["best_loss"], state["best_step"]
        self.best_state = state["best_state"]
        self.evals_without_improvement = state["evals_without_improvement"]

    def on_run_end(self, trainer, status):
        if self.restore_best and self.best_state is not None:
            trainer.model.load_state_dict(self.best_state)
