"""On CUDA: the monitoring stack adds no GPU synchronisation to steps that are not logged."""

import pytest
import torch

from chapters.core.run import build_trainer, preset_config
from chapters.monitoring import monitoring_callbacks


@pytest.mark.gpu
def test_a_non_logging_step_never_synchronises(tmp_path):
    config = preset_config("tiny", steps=20, log_every=10, device="cuda")
    trainer = build_trainer("tiny", config, monitoring_callbacks(tmp_path, levels=(2, 3)))
    trainer._emit("on_run_start")
    trainer.train_step()  # the first step allocates optimizer state and may synchronise: not a steady-state step
    trainer._emit("on_step_end")
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")  # any synchronising call now raises
    try:
        for _ in range(3):  # steps 2-4: none is a logging step
            trainer.train_step()
            trainer._emit("on_step_end")
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert trainer.step == 4
    trainer._emit("on_log", trainer.log_record())  # a logging step may sync; it must still work
    trainer._emit("on_run_end", "stopped")
