"""Sanity checks: minutes of checking before hours of training.

Each check returns a :class:`CheckResult` (a name, passed or not, the numbers behind the verdict) and its
one-line ``verdict``. They are ordered from cheapest to dearest:

* **data**: token ids inside the vocabulary (an id >= V is an index error on the GPU, or garbage), no
  sequence of nothing but id 0 (the bytes of a file read past its end, or an empty document padded out: a
  real text never repeats one token for a whole window), no NaN or infinite value in any floating-point
  tensor of the batch (masks, loss weights, features: one inf there makes the loss inf, then NaN), no batch
  whose labels are all ignored (a 0/0 = NaN loss), and labels that are the inputs shifted by one (labels equal
  to the inputs teach the model to copy -- the loss drops to ~0 and nothing is learned);
* **init loss**: with small random weights every token is about equally likely, so the first loss should be
  ln(V). Much higher means over-confident initial logits; much lower means the labels leak into the inputs;
* **causal leakage**: the loss at position t must not depend on inputs after t. We ask autograd: the gradient
  of position t's loss with respect to every later input embedding must be exactly zero;
* **overfit one batch**: a correct model and loop can memorise a handful of examples; if the loss does not
  fall below 10 % of its start, the problem is in the code or the model, not in the data or the scale. A loss
  that barely moves is a bug (no gradient reaches the weights); one that falls, then stalls, is a model too
  small for the batch -- the same check on a wider model tells the two apart. Dropout is off while memorising:
  it is the one time regularisation is unwelcome.

06_overfitting grades the init loss and overfit-one-batch as exercises (its sections 1 and 2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from chapters.core.model import GPT, IGNORE_INDEX


@dataclass
class CheckResult:
    name: str
    passed: bool
    detail: str
    numbers: dict = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        return f"{'PASS' if self.passed else 'FAIL'}  {self.name}: {self.detail}"


def check_data(batches, vocab_size: int) -> CheckResult:
    """Every batch: ids in [0, V), no all-zero sequence, finite floats, some label not ignored, labels ==
    inputs shifted left by one."""
    for index, batch in enumerate(batches):
        ids, labels = batch["input_ids"], batch["labels"]
        if ids.min() < 0 or ids.max() >= vocab_size:
            return CheckResult("data", False, f"batch {index}: token ids span [{int(ids.min())}, {int(ids.max())}], "
                               f"outside the vocabulary [0, {vocab_size})", {"batch": index})
        zero_rows = (ids == 0).all(dim=1).nonzero().flatten().tolist()
        if zero_rows:
            return CheckResult("data", False, f"batch {index}: sequence(s) {zero_rows} are all token 0 -- a file "
                               "read past its end, or an empty document padded out", {"batch": index})
        for key, value in batch.items():
            if torch.is_tensor(value) and value.is_floating_point() and not torch.isfinite(value).all():
                return CheckResult("data", False, f"batch {index}: {key!r} holds "
                                   f"{int((~torch.isfinite(value)).sum())} NaN or infinite values",
                                   {"batch": index})
        if (labels == IGNORE_INDEX).all():
            return CheckResult("data", False, f"batch {index}: every label is ignored ({IGNORE_INDEX}): the loss "
                               "is 0/0 = NaN", {"batch": index})
        # For next-token prediction, label t is input t+1: compare where both are known.
        known = labels[:, :-1] != IGNORE_INDEX
        if not torch.equal(labels[:, :-1][known], ids[:, 1:][known]):
            return CheckResult("data", False, f"batch {index}: labels are not the inputs shifted by one "
                               "(the model would learn to copy, not to predict)", {"batch": index})
    return CheckResult("data", True, f"{index + 1} batches: ids in range, no all-zero sequence, floats finite, "
                       "labels present and aligned",
                       {"batches": index + 1})


@torch.no_grad()
def check_init_loss(model: GPT, batch: dict, tolerance: float = 0.1) -> CheckResult:
    """The untrained loss should be ln(V) within ``tolerance`` (relative)."""
    model.eval()
    loss = model(batch["input_ids"], labels=batch["labels"])["loss"].item()
    expected = math.log(model.config.vocab_size)
    passed = abs(loss - expected) <= tolerance * expected
    return CheckResult("init loss", passed, f"{loss:.3f} vs ln(V) = ln({model.config.vocab_size}) = {expected:.3f} "
                       f"({(loss - expected) / expected:+.1%}, tolerance {tolerance:.0%})",
                       {"loss": loss, "expected": expected})


def check_causal(model: GPT, seq_len: int | None = None) -> CheckResult:
    """d(loss at position t) / d(input embedding at s) must be zero for every s > t."""
    model.eval()
    seq_len = seq_len or min(16, model.config.block_size)
    input_ids = torch.randint(0, model.config.vocab_size, (1, seq_len), generator=torch.Generator().manual_seed(0))
    captured = {}

    def keep_embedding(module, inputs, output):
        output.retain_grad()  # a non-leaf tensor: ask autograd to keep its gradient
        captured["embedding"] = output

    handle = model.token_embedding.register_forward_hook(keep_embedding)
    try:
        logits = model(input_ids)["logits"]
    finally:
        handle.remove()
    position = seq_len // 2
    logits[0, position].logsumexp(-1).backward()  # any function of position t's output will do
    gradient = captured["embedding"].grad[0].abs().sum(-1)  # one number per input position
    model.zero_grad(set_to_none=True)
    leaks = [s for s in range(position + 1, seq_len) if gradient[s] != 0]
    if leaks:
        return CheckResult("causal", False, f"the output at position {position} depends on later inputs "
                           f"{leaks[:5]}{'...' if len(leaks) > 5 else ''}: the model can see the future",
                           {"position": position, "leaks": leaks})
    return CheckResult("causal", True, f"the output at position {position} has zero gradient from every later input",
                       {"position": position, "leaks": []})


def check_overfit_one_batch(model: GPT, batch: dict, max_steps: int = 300, lr: float = 1e-2,
                            target_ratio: float = 0.1) -> CheckResult:
    """Train on one batch only, dropout off; pass when the loss falls below ``target_ratio`` x its start."""
    model.eval()  # eval mode only switches dropout off here: gradients flow as in training
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad] or [torch.zeros(1)], lr=lr)
    start = loss = None
    for step in range(1, max_steps + 1):
        loss = model(batch["input_ids"], labels=batch["labels"])["loss"]
        start = start if start is not None else loss.item()
        if loss.item() < target_ratio * start:
            return CheckResult("overfit one batch", True, f"loss {start:.3f} -> {loss.item():.3f} "
                               f"(< {target_ratio:.0%} of start) in {step - 1} steps",
                               {"start": start, "final": loss.item(), "steps": step - 1})
        optimizer.zero_grad(set_to_none=True)
        if loss.requires_grad:
            loss.backward()
        optimizer.step()
    return CheckResult("overfit one batch", False, f"loss {start:.3f} -> {loss.item():.3f} after {max_steps} steps, "
                       f"never below {target_ratio:.0%} of start: the model or the loop cannot learn",
                       {"start": start, "final": loss.item(), "steps": max_steps})
