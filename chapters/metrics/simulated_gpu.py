"""A simulated GPU: asynchronous execution and allocator counters, for learning to measure without a GPU.

Two things about a CUDA device make naive measurements wrong, and both can be shown on a CPU with a fake:

* **Asynchronous execution.** Calling the model on a GPU only *queues* its kernels; Python returns at
  once and the device works through the queue in the background. A clock read right after the call has
  measured how long Python took to queue the work (``host_seconds``), not how long the device took to do
  it (``device_seconds``). Only ``torch.cuda.synchronize()`` -- or anything that needs a result on the
  host, such as ``loss.item()`` -- waits for the queue to drain.
* **Peak counters.** The caching allocator remembers the largest amount ever held
  (``max_memory_allocated``) until you reset it, and keeps freed blocks reserved instead of returning
  them to the driver (``memory_reserved``).

:class:`SimulatedGPU` models exactly these, with a fake clock instead of the wall clock, so the results
are deterministic: ``gpu.clock`` stands in for ``time.perf_counter`` and ``gpu.synchronize`` for
``torch.cuda.synchronize``; ``gpu`` itself offers ``torch.cuda``'s memory functions. Code written against
those three seams runs unchanged on a real GPU with ``time.perf_counter``, ``torch.cuda.synchronize`` and
``torch.cuda``. The simulation leaves out what does not change the lesson: the queue never fills up (a
real one holds about a thousand kernels), and memory is counted in whole allocations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

BLOCK_BYTES = 2 * 2**20  # the caching allocator reserves large allocations in 2 MiB blocks


@dataclass(frozen=True)
class StepProfile:
    """What one training step costs: Python's time to queue it, the device's time to run it, its tokens."""

    host_seconds: float
    device_seconds: float
    tokens: int


class SimulatedGPU:
    """A fake device with a fake clock: queued work completes in the background, visible only after a sync."""

    def __init__(self):
        self.now = 0.0  # the host's clock
        self.device_free_at = 0.0  # when the device will have finished everything queued so far
        self.synchronize_calls = 0
        self.allocated = self.peak_allocated = 0
        self.reserved = self.peak_reserved = 0

    # -------------------------------------------------------------------------------- time and the queue
    def clock(self) -> float:
        """The host's clock, in seconds (the stand-in for ``time.perf_counter``)."""
        return self.now

    def queue_step(self, profile: StepProfile) -> None:
        """Python queues one step: the host spends ``host_seconds``; the device runs it once it is free."""
        self.now += profile.host_seconds
        self.device_free_at = max(self.device_free_at, self.now) + profile.device_seconds

    def synchronize(self) -> None:
        """Wait until the device has finished all queued work (the stand-in for ``torch.cuda.synchronize``)."""
        self.synchronize_calls += 1
        self.now = max(self.now, self.device_free_at)

    # ------------------------------------------------------------------ memory, with torch.cuda's names
    def allocate(self, nbytes: int) -> None:
        self.allocated += nbytes
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        if self.allocated > self.reserved:  # the cache is too small: reserve more blocks from the driver
            self.reserved = math.ceil(self.allocated / BLOCK_BYTES) * BLOCK_BYTES
            self.peak_reserved = max(self.peak_reserved, self.reserved)

    def free(self, nbytes: int) -> None:
        self.allocated -= nbytes  # the blocks stay reserved: the cache keeps them for the next step

    def memory_allocated(self, device=None) -> int:
        return self.allocated

    def max_memory_allocated(self, device=None) -> int:
        return self.peak_allocated

    def memory_reserved(self, device=None) -> int:
        return self.reserved

    def max_memory_reserved(self, device=None) -> int:
        return self.peak_reserved

    def reset_peak_memory_stats(self, device=None) -> None:
        """From now on the peaks count from the current amounts (as ``torch.cuda.reset_peak_memory_stats``)."""
        self.peak_allocated = self.allocated
        self.peak_reserved = self.reserved


def course_text_loop(gpu: SimulatedGPU, profile: StepProfile, steps: int) -> list[float]:
    """The course text's per-step throughput, as it would log it on this device: one reading per step.

    Its loop, transcribed onto the simulation::

        t_start = time.time()
        loss = train_step(model, batch)          # queues the step and returns at once
        elapsed = time.time() - t_start          # so this is the time to *queue* the step
        tokens_per_sec = batch_size * seq_len / elapsed
        record = {"loss": loss.item(), ...}       # .item() waits for the device: a sync every step
    """
    readings = []
    for _ in range(steps):
        start = gpu.clock()
        gpu.queue_step(profile)
        readings.append(profile.tokens / (gpu.clock() - start))
        gpu.synchronize()  # the loss.item() in the record
    return readings
