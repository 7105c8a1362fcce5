"""straggler -- one slow rank makes the whole data-parallel job slow.

Symptom: half-way through the run ``tokens_per_sec`` drops to a fraction of what it was, while the loss
curve carries on as if nothing happened. At the same step the two step-time keys split apart:
``step_time_max`` climbs far above ``step_time_min``, and ``step_time_slowest_rank`` names the same
rank record after record.

How to see it: plot tokens/sec and ``step_time_min``/``step_time_max`` against the step. In a healthy
multi-process run the two step times lie close together; a wide, lasting gap is a straggler.

Root cause: synchronous data parallelism moves at the pace of its slowest rank. Every rank must hand in
its gradients to the all-reduce before any rank can take the optimizer step, so the fast ranks wait --
their own step times stay short, but their wall clock runs at the straggler's speed. Real stragglers: a
node whose data loader reads from a slow disk or runs out of workers, a throttled or shared GPU, another
job on the same machine, one rank doing extra work (rank 0 writing big logs or checkpoints in the loop).
Here rank 1's data loader starts to stall at step ``SLOW_FROM``: before each batch it waits twice as long
as a whole step used to take.

Fix: find the slow rank -- ``step_time_slowest_rank`` names it -- and remove the cause there (here: no
stall); then look at that node's data loading, clocks and neighbours. Moving it out of the job is the
usual stop-gap on a cluster.

Confirm: tokens/sec stays flat and ``step_time_max`` stays close to ``step_time_min`` in the fixed run;
``clinic diagnose`` reports ``throughput_drop`` for the broken run only.

Runs with two processes through torch's own launcher (what ``torchrun`` runs), gloo on the CPU.
"""

from __future__ import annotations

import dataclasses
import time

import torch

from chapters.core import distributed
from chapters.records.runlog import RunLog
from chapters.scenarios.base import Options, RunPlan, doctor_shows, tiny_plan

ID = "straggler"
LABEL = "throughput_drop"
EXPECT_SYMPTOM = True
PROCESSES = 2
STEPS = 40
SLOW_FROM = 20  # the straggler appears half-way: the doctor compares speed with the run's own start
SLOW_RANK = 1
STALL = 2.0  # the stall per batch, in steps: speed falls to about a third, far below the doctor's half


def skip_reason(options: Options) -> str | None:
    """Two ranks need two GPUs on CUDA (NCCL refuses two ranks on one device); the CPU always works."""
    if options.on_cuda and torch.cuda.device_count() < PROCESSES:
        return f"straggler needs {PROCESSES} GPUs on CUDA (this machine has {torch.cuda.device_count()}); use --device cpu"
    return None


class StallingLoader:
    """The bug, as a batch transform: from step ``SLOW_FROM`` on, rank ``SLOW_RANK`` waits ``STALL`` times
    the length of its average step so far before each batch. Measured, not a fixed delay, so the
    slowdown is the same on a fast machine and on a busy one."""

    def __init__(self):
        self.started: float | None = None
        self.stall_s: float | None = None

    def __call__(self, batch: dict, step: int) -> dict:
        if distributed.from_environment().rank != SLOW_RANK:
            return batch
        if self.started is None:
            self.started = time.perf_counter()
        if step >= SLOW_FROM:
            if self.stall_s is None:
                self.stall_s = STALL * (time.perf_counter() - self.started) / SLOW_FROM
            time.sleep(self.stall_s)
        return batch


def broken(options: Options) -> RunPlan:
    return dataclasses.replace(fixed(options), batch_transform=StallingLoader())


def fixed(options: Options) -> RunPlan:
    plan = tiny_plan(options, steps=STEPS, log_every=2, eval_every=STEPS)
    return dataclasses.replace(plan, processes=PROCESSES)


def symptom(run: RunLog) -> bool:
    """The doctor names ``throughput_drop`` first, *and* the ranks split apart: in the second half of the run
    the slowest rank takes over twice as long as the fastest to reach the gradient all-reduce.

    A documented gap in the doctor (docs/doctor.md, "Known gaps"): its rule reads ``tokens_per_sec`` only,
    so it cannot tell a straggler from a neighbour that took the CPU half-way through a run -- both make a
    lasting step down. The per-rank step times can: a neighbour slows every rank, a straggler one."""
    train = run.train.iloc[1:]  # the first record pays for warm-up
    late = train[train["step"] > SLOW_FROM + 3]
    ranks_split = (late["step_time_max"] / late["step_time_min"]).median() > 2
    return bool(ranks_split) and doctor_shows(run, LABEL)
