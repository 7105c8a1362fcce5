"""GPU utilisation: is the GPU busy, or waiting for us?

``gpu_util`` is NVML's utilisation figure (what ``nvidia-smi`` shows): the percentage of the last sample
period (1/6 s to 1 s, depending on the card) during which at least one kernel was running. Low values on a
training run usually mean the GPU is starved -- by data loading, by Python overhead, or by a per-step
``.item()`` that makes the CPU wait before queueing the next step.

It is a coarse number: 100 % says "some kernel was running", not "all the GPU's cores were used". And it
is only there when it can be measured: on a CPU run, or without the ``nvidia-ml-py`` package or an NVIDIA
driver, the key is simply **absent** from the record. A fake 0 would read as "GPU idle" -- a wrong
diagnosis -- so a number we cannot measure is a number we do not write.

``torch.cuda.utilization`` asks NVML for us, and maps torch's device index to NVML's (they differ when
``CUDA_VISIBLE_DEVICES`` reorders the GPUs).
"""

from __future__ import annotations

import torch

from chapters.core.callbacks import Callback


def read_gpu_util(device: torch.device) -> float | None:
    """NVML's utilisation of ``device`` in percent, or None when it cannot be measured here."""
    if device.type != "cuda":
        return None
    try:
        return float(torch.cuda.utilization(device))
    except Exception:  # no nvidia-ml-py, no driver, an NVML error: all mean "cannot measure", not "0 %"
        return None


class GpuUtilization(Callback):
    """Adds ``gpu_util`` (percent) on NVIDIA GPUs where NVML answers; adds nothing otherwise."""

    def on_run_start(self, trainer):
        # Ask once: if NVML cannot answer now, it will not answer later, and each failed try costs time.
        self.measurable = read_gpu_util(trainer.device) is not None

    def on_measure(self, trainer, record):
        if self.measurable and (util := read_gpu_util(trainer.device)) is not None:
            record["gpu_util"] = util
