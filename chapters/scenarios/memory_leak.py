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

import torch

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
