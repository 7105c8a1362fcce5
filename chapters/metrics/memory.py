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
Asking costs more than it looks: ``psutil`` opens and parses ``/proc/self/statm``, about 0.1 ms inside a
training loop, whose steps have just pushed the kernel's and Python's code out of the CPU caches. RSS
moves slowly (a leak grows it step by step, over seconds), so it is read at most every ``RSS_INTERVAL``
seconds; a record in between has no ``cpu_memory_gb`` -- we write only numbers we measured for that
record, never an old one again. Logging every 10 steps or less often, nearly every record has one.
GB here are 10**9 bytes, as the course text and ``nvidia-smi`` use.
"""

from __future__ import annotations

import math
import time

import psutil
import torch

from chapters.core.callbacks import Callback

GB = 1e9
RSS_INTERVAL = 0.1  # seconds between two RSS readings, at least


class Memory(Callback):
    """Adds ``gpu_memory_gb`` and ``gpu_memory_reserved_gb`` on CUDA, ``cpu_memory_gb`` elsewhere."""

    def on_run_start(self, trainer):
        self.process = psutil.Process()
        self.last_read = -math.inf  # perf_counter time of the last RSS reading: the first record reads

    def on_measure(self, trainer, record):
        device = trainer.device
        if device.type == "cuda":
            record["gpu_memory_gb"] = torch.cuda.max_memory_allocated(device) / GB
            record["gpu_memory_reserved_gb"] = torch.cuda.max_memory_reserved(device) / GB
            torch.cuda.reset_peak_memory_stats(device)  # the next record shows the next window's peak
        elif time.perf_counter() - self.last_read >= RSS_INTERVAL:
            record["cpu_memory_gb"] = self.process.memory_info().rss / GB
            self.last_read = time.perf_counter()
