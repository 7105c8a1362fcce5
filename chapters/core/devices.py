"""Where a run executes, in which precision, and how to make it repeatable."""

from __future__ import annotations

import os
import random

import numpy as np
import torch

from chapters.errors import DeviceError


def resolve_device(name: str = "auto") -> torch.device:
    """``auto`` picks the GPU when there is one; ``cpu``, ``cuda`` and ``cuda:N`` are taken as asked.

    Asking for a GPU that is not there is an error, not a silent fallback: a run you meant to put on the
    GPU that quietly trains on the CPU wastes hours before anyone notices.
    """
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise DeviceError(f"unknown device {name!r} (accepted: auto, cpu, cuda, cuda:N)") from None
    if device.type not in ("cpu", "cuda"):
        raise DeviceError(f"unsupported device {name!r} (accepted: auto, cpu, cuda, cuda:N)")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise DeviceError(f"device {name!r} requested but CUDA is not available here (accepted: auto, cpu)")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise DeviceError(f"device {name!r} requested but only {torch.cuda.device_count()} GPU(s) exist")
    return device


CPU_THREADS_VARIABLE = "CLINIC_CPU_THREADS"


def course_cpu_threads() -> int | None:
    """How many threads torch uses on the CPU for the course's runs; ``None`` leaves torch's own choice.

    One, unless you say otherwise. The course's models are tiny: a matrix product of the tiny preset takes
    microseconds, too little work to share out, so every extra thread adds a hand-off per operation and
    gains nothing. Worse, a class shares one server: when another process holds a core, a thread of ours
    waits for it and the whole operation waits with it. ``bench/cpu_threads.py`` measured 60 steps of the
    tiny preset on 2 cores: on a quiet machine torch's default (two threads) is 20 % faster (1.7 s vs 2.1 s),
    beside one busy process it is twice as slow (4.3 s vs 2.0 s), on a loaded server four to twelve times
    (README, "CPU threads"). One thread is never much worse. Set ``CLINIC_CPU_THREADS=N`` for N threads (a larger
    model on a machine of your own), or ``=default`` for torch's choice; an ``OMP_NUM_THREADS`` you set is
    respected too.
    """
    asked = os.environ.get(CPU_THREADS_VARIABLE, "").strip()
    if asked == "default" or (not asked and "OMP_NUM_THREADS" in os.environ):
        return None
    if not asked:
        return 1
    if not asked.isdigit() or int(asked) < 1:
        raise DeviceError(f"{CPU_THREADS_VARIABLE}={asked!r}: expected a whole number of threads >= 1, or 'default'")
    return int(asked)


def use_course_cpu_threads() -> None:
    """Apply :func:`course_cpu_threads` to this process (the Trainer does, for a run on the CPU)."""
    threads = course_cpu_threads()
    if threads is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def resolve_precision(precision: str, device: torch.device) -> str:
    """``auto`` means fp32 on the CPU (exact and repeatable), bf16 on GPUs that have it, else fp16.

    bf16 keeps fp32's exponent range, so it needs no loss scaling; fp16 does (see the NaN lesson).
    """
    if precision != "auto":
        return precision
    if device.type != "cuda":
        return "fp32"
    return "bf16" if torch.cuda.is_bf16_supported() else "fp16"


def seed_everything(seed: int) -> None:
    """Seed every random number generator a run touches.

    With the same seed on the same CPU (and thread count), two runs produce bit-identical losses: that is
    what lets the course say "this scenario shows its symptom at step 37" and mean it.
    """
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds every CUDA device


def is_out_of_memory(error: BaseException) -> bool:
    """True for an allocation failure: CUDA's ``torch.OutOfMemoryError``, or the CPU allocator's error
    (a plain ``RuntimeError`` saying "can't allocate memory"), or Python's own ``MemoryError``."""
    return isinstance(error, (torch.OutOfMemoryError, MemoryError)) or "can't allocate memory" in str(error)
