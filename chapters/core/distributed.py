"""Several processes, one training run: what ``torchrun`` provides and what data parallelism needs.

``torchrun --nproc_per_node=N script`` starts N copies of the same program. It tells each copy who it is
through environment variables -- ``RANK`` (0..N-1 over the whole job), ``LOCAL_RANK`` (which GPU of this
machine) and ``WORLD_SIZE`` (N times the number of machines) -- plus ``MASTER_ADDR``/``MASTER_PORT``, where
the processes meet. Everything else is up to the program. In data-parallel training (DDP) that is:

1. **Join a process group** (``setup``): gloo on CPUs, NCCL on GPUs, with a *timeout*, so that a rank that
   died or hung makes the others fail with an error instead of waiting at the next collective forever.
2. **Start from the same weights**: ``DistributedDataParallel`` copies rank 0's parameters to every rank when
   it wraps the model (``wrap_model``).
3. **Read different data**: each rank takes its own shard of every batch (``DistributedSampler``, see
   :func:`chapters.core.data.make_loader`), so N ranks see N times the examples per step.
4. **Average the gradients**: DDP all-reduces them during ``backward``, so every rank applies the same
   update and the weights stay identical. With gradient accumulation only the last micro-batch needs that;
   the others run under ``no_sync`` (``gradient_sync``), saving N-1 all-reduces per step.
5. **Report global numbers from one writer**: each rank only knows its own loss and its own speed. The
   helpers below combine them (mean loss, total tokens/sec, fastest and slowest rank), and only rank 0
   writes anything (the trainer runs callbacks on rank 0 only; see ``Callback.all_ranks``).

With one process (no ``torchrun``, or ``--nproc_per_node=1``) every helper here returns its input unchanged
and no process group is created, so single-process runs are exactly what they were.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
import sys
import time
from dataclasses import dataclass
from typing import NoReturn

import torch
import torch.distributed as dist

# Long enough for rank 0 to evaluate or save a checkpoint while the others wait at the next collective;
# short enough that a job with a dead or frozen rank fails within minutes instead of idling for hours
# (torch's own default is 10-30 minutes).
DEFAULT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Ranks:
    """Who this process is in the job. ``Ranks()`` is the single-process case."""

    rank: int = 0
    local_rank: int = 0
    world_size: int = 1

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        """Rank 0: the one process that writes logs, event files and checkpoints."""
        return self.rank == 0


def from_environment() -> Ranks:
    """The ranks ``torchrun`` (or any launcher following its convention) put in the environment."""
    try:
        ranks = Ranks(int(os.environ.get("RANK", 0)), int(os.environ.get("LOCAL_RANK", 0)),
                      int(os.environ.get("WORLD_SIZE", 1)))
    except ValueError:
        raise ValueError("RANK, LOCAL_RANK and WORLD_SIZE must be integers (they are set by torchrun)") from None
    if ranks.distributed and not 0 <= ranks.rank < ranks.world_size:
        raise ValueError(f"RANK={ranks.rank} is outside 0..WORLD_SIZE-1 (WORLD_SIZE={ranks.world_size})")
    return ranks


def setup(device: torch.device, timeout_s: float = DEFAULT_TIMEOUT_S) -> Ranks:
    """Join the job's process group when the environment says there is one (idempotent).

    The backend follows the device: NCCL moves CUDA tensors between GPUs directly, gloo moves CPU
    tensors over TCP. The timeout bounds every collective: gloo fails the call after it; for NCCL a
    watchdog thread tears the process down (``TORCH_NCCL_ASYNC_ERROR_HANDLING``, on by default).
    """
    ranks = from_environment()
    if ranks.distributed and not dist.is_initialized():
        backend = "nccl" if device.type == "cuda" else "gloo"
        if device.type == "cuda":
            torch.cuda.set_device(ranks.local_rank)
        dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout_s))
    return ranks


def teardown(wait_for_others: bool = False) -> None:
    """Leave the process group. Without this a process that failed in a collective can abort on exit
    (gloo's threads still hold the broken connection) instead of exiting with its own error code.

    ``wait_for_others``: for a rank that finished normally, first wait at a barrier until every rank has
    finished too. A rank that leaves while another is still talking to it can make that one abort on exit
    ("terminate called without an active exception": 4 of 16 two-rank FSDP runs on this machine without the
    barrier, 1 of 36 with it -- rarer, not gone: the rest happen during the interpreter's own shutdown, see
    :func:`exit_rank`). Not after a failure: a rank that died never reaches it.
    """
    if not dist.is_initialized():
        return
    if wait_for_others:
        try:
            dist.barrier()
        except RuntimeError:
            pass  # a rank died after its last collective: nobody left to wait for; still leave cleanly
    dist.destroy_process_group()


def exit_rank(code: int) -> NoReturn:
    """End this rank's process now with ``code``, skipping the interpreter's own shutdown.

    After :func:`teardown` the gloo process group can still be referred to -- by a DDP model, by FSDP's
    device mesh -- so its C++ threads are destroyed only during Python's finalisation, and now and then the
    C++ runtime aborts there ("terminate called without an active exception", SIGABRT): a run that finished
    and wrote every file is reported by torchrun as a crashed rank. Measured on a busy 2-core machine: 1 of
    30 two-rank ``clinic train`` runs and 2 of about 17 two-rank FSDP runs; 0 of 60 FSDP runs leaving this way.
    ``os._exit`` runs no ``atexit`` handler, so call this only when every file is closed; the standard
    streams and Python's logging handlers are flushed here.
    """
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def rank_device(device: torch.device, ranks: Ranks) -> torch.device:
    """Under torchrun each rank owns the GPU numbered by its *local* rank (its index on this machine)."""
    if ranks.distributed and device.type == "cuda":
        return torch.device("cuda", ranks.local_rank)
    return device


def wrap_model(model: torch.nn.Module, device: torch.device, ranks: Ranks) -> torch.nn.Module:
    """The model the training loop calls: DDP's wrapper when distributed, else the model itself.

    Keep using the bare model for everything else (checkpoints, metrics): the wrapper shares its
    parameters, but its ``state_dict`` keys carry a ``module.`` prefix that a single-process run would
    not understand.
    """
    if not ranks.distributed:
        return model
    device_ids = [device.index] if device.type == "cuda" else None
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=device_ids)


def gradient_sync(model: torch.nn.Module, sync: bool):
    """Context for one micro-batch's forward *and* backward: ``no_sync`` unless ``sync``.

    Inside ``no_sync`` DDP only accumulates the gradients locally; the all-reduce in the last
    micro-batch's backward then averages the accumulated sums, which is the same result for less traffic.
    """
    if sync or not isinstance(model, torch.nn.parallel.DistributedDataParallel):
        return contextlib.nullcontext()
    return model.no_sync()


def average(value: torch.Tensor, ranks: Ranks) -> torch.Tensor:
    """Mean over all ranks (e.g. the loss: each rank only saw its shard of the batch)."""
    if not ranks.distributed:
        return value
    total = value.detach().clone()
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return total / ranks.world_size


def total(value: float, ranks: Ranks, device: torch.device) -> float:
    """Sum over all ranks (e.g. tokens/sec: the job's speed is every rank's speed added up)."""
    return _reduce(value, dist.ReduceOp.SUM, ranks, device)


def per_rank(value: float, ranks: Ranks, device: torch.device) -> list[float]:
    """Every rank's ``value``, in rank order (an all-gather): who is slowest, not only how slow."""
    if not ranks.distributed:
        return [value]
    mine = torch.tensor([value], dtype=torch.float64, device=device)
    everyone = [torch.empty_like(mine) for _ in range(ranks.world_size)]
    dist.all_gather(everyone, mine)
    return [tensor.item() for tensor in everyone]


def any_rank(flag: bool, ranks: Ranks, device: torch.device) -> bool:
    """True when ``flag`` is true on some rank. Every rank must leave the loop at the same step: a rank
    that stops alone leaves the others waiting at the next all-reduce until the timeout."""
    return bool(_reduce(float(flag), dist.ReduceOp.MAX, ranks, device))


def barrier(ranks: Ranks) -> None:
    """Wait until every rank got here (e.g. all have read a checkpoint before rank 0 tidies its folder)."""
    if ranks.distributed:
        dist.barrier()


def describe_failure(error: BaseException, timeout_s: float) -> str:
    """One line for a run that failed under torchrun. Most such failures are a *collective* that broke
    because another rank crashed (its connection closed) or froze (the timeout expired): then the
    useful error is in that rank's own output, and this message says so."""
    first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    lost_peer = isinstance(error, dist.DistError) or any(
        sign in str(error) for sign in ("Connection closed by peer", "Timed out", "Connection reset", "NCCL"))
    if not lost_peer:
        return f"training failed: {type(error).__name__}: {first_line}"
    return (f"lost contact with another rank ({first_line[:200]}); a rank crashed or stopped responding "
            f"for {timeout_s:g} s (--dist-timeout): its own output says why")


def _reduce(value: float, op, ranks: Ranks, device: torch.device) -> float:
    if not ranks.distributed:
        return value
    # NCCL only moves GPU tensors, so the number travels on this rank's device.
    tensor = torch.tensor([value], dtype=torch.float64, device=device)
    dist.all_reduce(tensor, op=op)
    return tensor.item()


class WorkClock:
    """Seconds a rank spends on its *own* work in each step -- the time that differs between ranks.

    In synchronous data parallelism every rank's wall-clock step is the same length: the fast ranks
    simply wait for the slowest one inside the gradient all-reduce. So a straggler cannot be seen by
    timing whole steps. What differs is how long each rank takes to *reach* that all-reduce: the time
    from the end of its previous step (callbacks, logging, loading its batch, the forward pass...) to the
    synchronising backward. ``start()`` marks the end of a step, ``stop()`` the sync point.

    On a GPU the Python clock would measure how fast work is *queued* (see
    :mod:`chapters.metrics.throughput`), so there the marks are CUDA events, read once per logging
    window after the trainer's synchronisation.
    """

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"
        self.intervals: list[tuple] = []
        self.start()

    def start(self) -> None:
        self._start = self._mark()

    def stop(self) -> None:
        self.intervals.append((self._start, self._mark()))

    def seconds_per_step(self) -> float:
        """Mean over the steps since the last call (call it after ``torch.cuda.synchronize()`` on GPUs)."""
        if self.cuda:
            seconds = [begin.elapsed_time(end) / 1e3 for begin, end in self.intervals]
        else:
            seconds = [end - begin for begin, end in self.intervals]
        self.intervals = []
        return sum(seconds) / max(len(seconds), 1)

    def _mark(self):
        if not self.cuda:
            return time.perf_counter()
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        return event
