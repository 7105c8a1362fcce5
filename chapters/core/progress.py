"""A progress bar for the training loop, as a callback."""

from __future__ import annotations

from tqdm.auto import tqdm

from chapters.core.callbacks import Callback


class ProgressBar(Callback):
    """One bar per run; its postfix shows the latest record's loss, so the numbers never break the bar."""

    def __init__(self, disable: bool = False):
        self.disable = disable
        self.bar = None

    def on_run_start(self, trainer):
        self.bar = tqdm(total=trainer.config.steps, initial=trainer.step, desc="train", unit="step",
                        dynamic_ncols=True, disable=self.disable)

    def on_step_end(self, trainer):
        self.bar.update(1)

    def on_log(self, trainer, record):
        self.bar.set_postfix(loss=f"{record['train_loss']:.4f}", lr=f"{record['lr']:.2e}", refresh=False)

    def on_eval_end(self, trainer, record):
        self.bar.set_postfix(val_loss=f"{record['val_loss']:.4f}", refresh=False)

    def on_run_end(self, trainer, status):
        self.bar.close()
