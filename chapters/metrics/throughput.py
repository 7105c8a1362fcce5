"""Throughput that is true on a GPU: time whole windows of steps, after one synchronisation.

The course text's Level-3 loop times every step like this::

    t_start = time.time()
    loss = train_step(model, batch)
    elapsed = time.time() - t_start
    tokens_per_sec = batch_size * seq_len / elapsed

On a CPU that is roughly right. On a GPU it is wrong, because CUDA runs **asynchronously**: calling the
model only *queues* kernels and returns at once. ``elapsed`` then measures how fast Python enqueues work,
not how fast the GPU does it, and the throughput comes out far too high -- until the queue fills up and
some innocent line (often the ``loss.item()`` in the record) blocks for the backlog, so individual steps
look randomly slow or fast. The same ``.item()`` on every step also forces a sync each step, which
empties the queue and costs real speed: the measurement slows down what it measures.

The trainer does it right: it counts tokens on the host, waits for the GPU **once per logging window**
(``torch.cuda.synchronize()`` before the clock is read), and divides the window's tokens by the window's
time -- an average over finished work, with a single sync every ``log_every`` steps. It also leaves the
time spent in evaluation out of the window (evaluation is not training).

This callback adds ``step_time_ms``, the same window measurement expressed per optimizer step: tokens/sec
compares machines, milliseconds per step compares configurations on one machine. It reads the clock only
where the GPU has just been waited for (in ``on_measure``, after the trainer's sync, and after evaluation,
whose ``.item()`` waits) and counts steps with a plain integer in between.
"""

from __future__ import annotations

import time

from chapters.core.callbacks import Callback


class Throughput(Callback):
    """Adds ``step_time_ms``: mean wall-clock milliseconds per optimizer step over the logging window."""

    def on_run_start(self, trainer):
        self._restart()

    def on_step_end(self, trainer):
        self.steps += 1

    def on_measure(self, trainer, record):
        if self.steps:
            record["step_time_ms"] = 1e3 * (time.perf_counter() - self.start) / self.steps
        self._restart()

    def on_eval_end(self, trainer, record):
        self._restart()  # evaluation just ran: its time is not a training step's

    def _restart(self):
        self.start = time.perf_counter()
        self.steps = 0
