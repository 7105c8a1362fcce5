"""On CUDA: the monitoring stack adds no GPU synchronisation to steps that are not logged."""

import pytest
import torch

from chapters.core.callbacks import Callback
from chapters.core.run import build_trainer, preset_config
from chapters.monitoring import monitoring_callbacks


class NoSyncBetweenLogs(Callback):
    """Turns CUDA's sync-debug mode to "error" after step 1 and back after step 9 (logging every 10).

    Last in the callback list, so steps 2-9 -- the training step and every other callback's
    ``on_step_end`` -- run with any synchronising call raising. Step 1 is left out: it allocates the
    optimizer's state, which may synchronise once.
    """

    def on_step_end(self, trainer):
        if trainer.step == 1:
            torch.cuda.synchronize()
            torch.cuda.set_sync_debug_mode("error")
        elif trainer.step == 9:
            torch.cuda.set_sync_debug_mode("default")
            self.checked = True

    def on_run_end(self, trainer, status):
        torch.cuda.set_sync_debug_mode("default")


@pytest.mark.gpu
def test_a_non_logging_step_never_synchronises(tmp_path):
    config = preset_config("tiny", steps=20, log_every=10, eval_every=10, device="cuda")
    guard = NoSyncBetweenLogs()
    trainer = build_trainer("tiny", config, [*monitoring_callbacks(tmp_path, levels=(2, 3)), guard])
    assert trainer.fit() == "completed"  # logging steps 10 and 20 may synchronise; they must still work
    assert guard.checked
