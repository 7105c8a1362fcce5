"""memory_leak -- outputs kept with their autograd graphs across steps: memory grows every step.

Symptom: process memory (``cpu_memory_gb``, or ``gpu_memory_gb`` on CUDA) climbs step after step, in a
straight line, until the run dies of out-of-memory hours later.

How to see it: plot memory against step. A healthy run's memory rises during the first steps (the
allocator and optimizer state warming up) and then stays flat; a leak is a constant slope.

Root cause: code around the model keeps every step's outputs -- here the logits and loss are appended to
a list "for an accuracy metric at the end of the epoch". Tensors that still carry ``grad_fn`` keep their
autograd graph alive, and the logits themselves are B x T x V floats per step.

Fix: keep plain numbers, and only what you need: ``loss.item()`` / ``.detach()`` on logging steps only.

Confirm: memory is flat after warm-up in the fixed run.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from chapters.records.runlog import RunLog
from chapters.scenarios.base import Options, RunPlan, tiny_plan

ID = "memory_leak"
LABEL = "memory_growth"
EXPECT_SYMPTOM = True
STEPS = 150


class KeepsEveryOutput(torch.nn.Module):
    """The bug: a wrapper that stores each forward's outputs -- graph and all -- for later."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model
        self.kept_outputs = []

    def forward(self, input_ids, labels=None):
        out = self.model(input_ids, labels=labels)
        if self.training:
            self.kept_outputs.append(out)
        return out


def broken(options: Options) -> RunPlan:
    return dataclasses.replace(fixed(options), prepare_model=KeepsEveryOutput)


def fixed(options: Options) -> RunPlan:
    # Isolated: a fresh process. In a process that already ran other scenarios, the allocator hands the
    # leak memory those runs freed, and the resident size (what we measure on a CPU) does not grow.
    return dataclasses.replace(tiny_plan(options, steps=STEPS), isolated=True)


def memory_series(run: RunLog) -> tuple[np.ndarray, np.ndarray]:
    """(steps, GB) of the records that measured memory (on a CPU, RSS is read at most every 0.1 s)."""
    key = "gpu_memory_gb" if "gpu_memory_gb" in run.train else "cpu_memory_gb"
    measured = run.train[run.train[key].notna()]
    return measured["step"].to_numpy(), measured[key].to_numpy()


def growth_per_100_steps_gb(run: RunLog) -> float:
    """Slope of a straight line fitted to memory over the second half of the run, per 100 steps."""
    steps, memory = memory_series(run)
    half = len(memory) // 2
    slope = np.polyfit(steps[half:], memory[half:], 1)[0]
    return float(slope * 100)


def symptom(run: RunLog) -> bool:
    """Memory still climbs by more than 20 MB per 100 steps in the second half of the run."""
    return growth_per_100_steps_gb(run) > 0.02
