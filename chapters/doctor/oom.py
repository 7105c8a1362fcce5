"""``oom``: the run ran out of memory.

Statistic: an ``oom`` event, a ``run_end`` event with status ``oom``, or one with status ``failed`` whose
``error`` is an allocator's out-of-memory message (:func:`names_out_of_memory`). Threshold: one. The metrics
alone cannot show it (the process dies between two records), which is why the JSONL contract has the event.
Why read ``error`` too: a training loop that catches every exception the same way writes ``failed`` and the
exception's text -- and that text names the allocator that gave up, as
:func:`chapters.core.devices.is_out_of_memory` recognises the live exception.
"""

from __future__ import annotations

import re

from chapters.doctor.findings import Finding

LESSON = "docs/doctor.md#oom"
# What the allocators say when they give up: CUDA's and ROCm's caching allocator ("CUDA out of memory",
# torch.OutOfMemoryError), Apple's ("MPS backend out of memory"), the CPU allocator ("DefaultCPUAllocator:
# can't allocate memory"), Python's MemoryError, cuBLAS/cuDNN handles (..._STATUS_ALLOC_FAILED), XLA
# (RESOURCE_EXHAUSTED: Out of memory).
OUT_OF_MEMORY = re.compile(r"out of memory|outofmemory|can't allocate memory|\bmemoryerror\b|alloc_failed|"
                           r"resource_exhausted", re.IGNORECASE)


def check(run) -> list[Finding]:
    events = [event for event in run.events if ran_out(event)]
    if not events:
        return []
    first = events[0]
    step = first.get("step") if isinstance(first.get("step"), int) else None
    message = str(first.get("message") or first.get("error") or "run ended with status 'oom'")[:160]
    return [Finding(
        "oom", 0.97, step, f"out of memory at step {step}: {message}",
        fix="smaller micro-batch with gradient accumulation (same effective batch), activation checkpointing, "
            "bf16; free tensors kept across steps",
        experiment="re-run with half the micro-batch and twice the accumulation steps: same loss curve, no OOM",
        lesson=LESSON)]


def ran_out(event: dict) -> bool:
    """An ``oom`` event, or a ``run_end`` with status ``oom`` -- or ``failed`` with an out-of-memory error."""
    if event.get("event") == "oom":
        return True
    if event.get("event") != "run_end":
        return False
    status = event.get("status")
    return status == "oom" or (status == "failed" and names_out_of_memory(event.get("error")))


def names_out_of_memory(error) -> bool:
    """Is ``error`` (a ``run_end``'s text) an allocator's out-of-memory message (:data:`OUT_OF_MEMORY`)?"""
    return isinstance(error, str) and OUT_OF_MEMORY.search(error) is not None
