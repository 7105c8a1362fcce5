"""Measure the peak memory of one training step, to check the estimator against.

* **CUDA**: ``torch.cuda.max_memory_allocated`` -- bytes held by live tensors at the worst moment, as the
  caching allocator accounts them (rounded to its 512-byte blocks), after resetting the peak counter.
* **CPU**: there is no counter, so we use PyTorch's ``MemTracker`` (``torch.distributed._tools.mem_tracker``,
  a private module of torch >= 2.5: if a torch release moves it, this import is the one line to change).
  It watches every tensor an operation creates (a ``TorchDispatchMode``) and the moment each one's storage is
  freed, and reports the peak of the live total -- the same quantity, without an allocator in between.

Both measure a *steady-state* step: one step runs first, so AdamW's moments exist, as in every later step.
"""

from __future__ import annotations

import contextlib

import torch

from chapters.core.model import GPT

AUTOCAST = {"bf16": torch.bfloat16, "fp16": torch.float16}


def _training_step(model, optimizer, input_ids, dtype):
    autocast = (torch.autocast(input_ids.device.type, dtype=AUTOCAST[dtype]) if dtype in AUTOCAST
                else contextlib.nullcontext())
    with autocast:
        loss = model(input_ids, labels=input_ids)["loss"]
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def measure_peak(model: GPT, batch_size: int, seq_len: int, dtype: str = "fp32", device: str = "cpu") -> int:
    """Peak bytes of one steady-state training step (forward, backward, AdamW step)."""
    model = model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.startswith("cuda"))
    input_ids = torch.randint(0, model.config.vocab_size, (batch_size, seq_len),
                              generator=torch.Generator().manual_seed(0)).to(device)
    _training_step(model, optimizer, input_ids, dtype)  # creates the optimizer state
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        _training_step(model, optimizer, input_ids, dtype)
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated()
    from torch.distributed._tools.mem_tracker import MemTracker

    tracker = MemTracker()
    tracker.track_external(model, optimizer, input_ids)
    with tracker:
        _training_step(model, optimizer, input_ids, dtype)
    return tracker.get_tracker_snapshot("peak")[torch.device(device)]["Total"]
