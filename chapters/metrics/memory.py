"""Memory: how close the run is to the edge, and whether it creeps upwards.

On a GPU the number that matters is the **peak** the caching allocator handed out -- the moment a step
needs more than the card has, it dies with an out-of-memory error, however low the average was. We
record per logging window:

* ``gpu_memory_gb``: ``torch.cuda.max_memory_allocated()``, the peak held by live tensors;
* ``gpu_memory_reserved_gb``: ``torch.cuda.max_memory_reserved()``, the peak the allocator kept from the
  driver (what ``nvidia-smi`` shows, roughly). A large gap between the two is fragmentation or cache.

and then reset the peak counters, so each record shows that window's peak: a value that keeps rising
from window to window is a leak (typically a tensor kept with its graph, such as an un-detached loss).

On a CPU there is no allocator peak to ask; we record ``cpu_memory_gb``, the process's resident set size
(RSS) from ``psutil`` -- the memory the operating system has actually given the process, at log time.
GB here are 10**9 bytes, as the course text and ``nvidia-smi`` use.
"""

from __future__ import annotations

import psutil
import torch

from chapters.core.callbacks import Callback

GB = 1e9


class Memory(Callback):
    """Adds ``gpu_memory_gb`` and ``gpu_memory_reserved_gb`` on CUDA, ``cpu_memory_gb`` elsewhere."""

    def on_run_start(self, trainer):
        self.process = psutil.Process()

    def on_log(self, trainer, record):
        device = trainer.device
        if device.type == "cuda":
            record["gpu_memory_gb"] = torch.cuda.max_memory_allocated(device) / GB
            record["gpu_memory_reserved_gb"] = torch.cuda.max_memory_reserved(device) / GB
            torch.cuda.reset_peak_memory_stats(device)  # the next record shows the next window's peak
        else:
            record["cpu_memory_gb"] = self.process.memory_info().rss / GB
