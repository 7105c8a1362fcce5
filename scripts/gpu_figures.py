"""Figures only a CUDA machine can give; printed, never asserted (scripts/gpu_check.sh runs this).

1. NVML utilisation as the course logs it (``gpu_util``) on a short run of each preset;
2. step time three ways: CUDA events (device time), ``time.perf_counter`` with a synchronize (true wall time),
   and the course text's per-step clock without one (what it would have logged);
3. host synchronisations on steps that do not log: CUDA's sync-debug mode in "warn" counts every synchronising
   call made during steps 2-9 of a run logging every 10 steps (the goal is 0).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chapters.core.callbacks import Callback, History  # noqa: E402
from chapters.core.run import build_trainer, preset_config  # noqa: E402
from chapters.monitoring import monitoring_callbacks  # noqa: E402


def utilisation() -> None:
    for preset in ("tiny", "small"):
        history = History()
        config = preset_config(preset, steps=60, log_every=5, eval_every=1000, device="cuda")
        with tempfile.TemporaryDirectory() as run_dir:
            build_trainer(preset, config, [*monitoring_callbacks(run_dir, levels=(3,), console=False),
                                           history]).fit()
        util = history.series("gpu_util")
        if util:
            print(f"gpu_util {preset}: median {statistics.median(util):.0f} %, min {min(util):.0f}, "
                  f"max {max(util):.0f} over {len(util)} records")
        else:
            print(f"gpu_util {preset}: absent (NVML did not answer: no nvidia-ml-py, no driver, or a MIG slice)")


def step_times(preset: str = "small", steps: int = 20) -> None:
    trainer = build_trainer(preset, preset_config(preset, steps=steps, device="cuda"))
    model, optimizer = trainer.model, trainer.optimizer
    batch = next(iter(trainer.epoch_loader()))
    ids, labels = batch["input_ids"].to("cuda"), batch["labels"].to("cuda")

    def step():
        loss = model(ids, labels=labels)["loss"]
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    for _ in range(3):
        step()  # warm-up: allocator, kernels, AdamW state
    torch.cuda.synchronize()
    event_ms, synced_ms, naive_ms = [], [], []
    for _ in range(steps):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start = time.perf_counter()
        begin.record()
        step()
        end.record()
        naive_ms.append((time.perf_counter() - start) * 1e3)  # the course text's clock: no sync
        torch.cuda.synchronize()
        synced_ms.append((time.perf_counter() - start) * 1e3)
        event_ms.append(begin.elapsed_time(end))
    print(f"step time {preset} (median of {steps}): CUDA events {statistics.median(event_ms):.2f} ms, "
          f"perf_counter + synchronize {statistics.median(synced_ms):.2f} ms, course text's clock without a sync "
          f"{statistics.median(naive_ms):.2f} ms (ratio {statistics.median(synced_ms) / statistics.median(naive_ms):.1f}x)")


class CountSyncs(Callback):
    """Counts synchronising CUDA calls during steps 2-9 (logging every 10); the mode is "warn", so each one is a
    warning: counted, with where it came from, and the run goes on."""

    def __init__(self):
        self.found: list[str] = []
        self._catcher = None

    def on_step_end(self, trainer):
        if trainer.step == 1:
            torch.cuda.synchronize()
            self._catcher = warnings.catch_warnings(record=True)
            self._caught = self._catcher.__enter__()
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
        elif trainer.step == 9:
            self._stop()

    def on_run_end(self, trainer, status):
        self._stop()

    def _stop(self):
        if self._catcher is not None:
            torch.cuda.set_sync_debug_mode("default")
            self.found = [f"{w.filename}:{w.lineno}: {str(w.message).splitlines()[0][:80]}" for w in self._caught
                          if "synchroniz" in str(w.message)]
            self._catcher.__exit__(None, None, None)
            self._catcher = None


def host_syncs() -> None:
    for levels in ((3,), (2, 3)):
        counter = CountSyncs()
        config = preset_config("tiny", steps=20, log_every=10, eval_every=10, device="cuda")
        with tempfile.TemporaryDirectory() as run_dir:
            status = build_trainer("tiny", config, [*monitoring_callbacks(run_dir, levels=levels, console=False),
                                                    counter]).fit()
        print(f"host syncs on non-logging steps 2-9, log levels {levels}: {len(counter.found)} (run {status})")
        for line in sorted(set(counter.found))[:10]:
            print(f"    {line}")


if __name__ == "__main__":
    if not torch.cuda.is_available():
        sys.exit("no CUDA device: these figures need one")
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    for figure in (utilisation, step_times, host_syncs):
        try:
            figure()
        except Exception as err:  # one failing figure must not hide the others: print it and go on
            print(f"{figure.__name__}: FAILED -- {type(err).__name__}: {err}")
