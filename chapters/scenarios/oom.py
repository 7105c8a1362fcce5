"""oom -- a batch too large for the memory there is: a real out-of-memory error from torch.

Symptom: the run dies in its first steps with torch's own out-of-memory error ("CUDA out of memory" on a
GPU, "DefaultCPUAllocator: can't allocate memory" on the CPU); the log ends with an ``oom`` event.

How to see it: the error names the allocation that failed; ``gpu_memory_gb`` (peak allocated) in the
records before it shows how close the run was. ``clinic estimate-memory`` predicts it before you start.

Root cause: activation memory grows linearly with the batch (and, without an efficient attention
kernel, quadratically with sequence length). The weights and optimizer state are the same at any batch
size; the activations are what a big batch adds.

Fix, in order: a smaller micro-batch with gradient accumulation to keep the same effective batch (the
same optimisation, less memory at once), then activation checkpointing (recompute activations during
backward instead of storing them), then lower precision.

Confirm: the fixed run completes under the *same* memory cap, with the same effective batch.

The cap is real but safe: on CUDA the process's share of the card is limited
(``torch.cuda.set_per_process_memory_fraction``); on the CPU the run executes in a child process whose
address space is limited (``RLIMIT_AS``), so torch's allocator fails and the host never runs short.
"""

from __future__ import annotations

import dataclasses

from chapters.scenarios.base import Options, RunPlan, tiny_plan

ID = "oom"
LABEL = "oom"
EXPECT_SYMPTOM = True
STEPS = 3
EFFECTIVE_BATCH = 2048
MICRO_BATCH = 64
# Headroom above what the process holds before training. CUDA: the broken step needs about 0.8 GB (bf16:
# `clinic estimate-memory --preset tiny --batch-size 2048 --dtype bf16 --device cuda`), the fixed one under
# 0.1 GB with cuBLAS's workspaces; at 2 GB (the first choice, made without a GPU) the broken run fit on an H200.
CAP_GB = {"cpu": 0.6, "cuda": 0.3}


def cap_gb(options: Options) -> float:
    return CAP_GB["cuda" if options.on_cuda else "cpu"]


def broken(options: Options) -> RunPlan:
    plan = tiny_plan(options, steps=STEPS, batch_size=EFFECTIVE_BATCH, eval_every=STEPS, log_every=1)
    return dataclasses.replace(plan, memory_cap_gb=cap_gb(options))


def fixed(options: Options) -> RunPlan:
    plan = tiny_plan(options, steps=STEPS, batch_size=MICRO_BATCH, grad_accum_steps=EFFECTIVE_BATCH // MICRO_BATCH,
                     eval_every=STEPS, log_every=1)
    return dataclasses.replace(plan, memory_cap_gb=cap_gb(options), model_overrides={"grad_checkpointing": True})
