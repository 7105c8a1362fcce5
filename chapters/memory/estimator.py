"""Estimate the peak memory of one training step from the architecture, component by component.

The peak of a steady-state step (AdamW's moments already exist) comes at the start of the backward pass:
everything autograd saved during the forward pass is still alive, and nothing has been freed yet.

* **parameters** and **optimizer state** (AdamW keeps ``m`` and ``v``: 2 x 4 bytes per parameter -- once;
  counting "momentum and variance" a second time is the course text's bug);
* **gradients**: the previous step's were freed by ``zero_grad(set_to_none=True)``, and the new ones appear
  while backward frees the activations, so at the peak they barely overlap. We count whichever is larger:
  the activations (gradients 0 at the peak, the usual case) or the gradients (tiny batches);
* under AMP (bf16/fp16 autocast) the weights *stay* fp32 -- they are the master copy -- and autocast makes a
  16-bit copy of every matrix for the forward pass, which the backward pass keeps;
* **activations**: per layer, the tensors each operation saves for its backward (listed in ``LAYER_SAVES``),
  in the dtype they are produced in. Attention through ``scaled_dot_product_attention``'s fused kernels saves
  only its output and a log-sum-exp per row; without them (``attention="math"``) it saves the ``T x T``
  attention matrix, twice (the softmax and the dropout mask/product);
* **activation checkpointing** keeps only each block's input, then recomputes one block at a time during
  backward: L block inputs + one block's activations;
* **logits and loss**: the logits, their fp32 copy for the loss and the loss's log-softmax, all ``[B, T, V]``
  -- for a large vocabulary often the largest single term.

No allocator slack is added: on the CPU there is no caching allocator, and on CUDA
``max_memory_allocated`` (what we validate against) counts what tensors hold, not what the cache reserves.
One thing that is no tensor of the model is counted on CUDA all the same: **cuBLAS's workspaces**. PyTorch
hands cuBLAS a scratch buffer from the caching allocator for every thread that runs matrix products, and a
training step has two -- yours runs the forward pass, autograd's own thread the backward -- so 2 x 32 MiB on
an H100/H200 (:func:`cuda_blas_workspaces`). Measured on one H200 (torch 2.11, small preset, batch 16 x 256):
without them the estimate was 8 % (fp32) and 15 % (bf16) below ``max_memory_allocated``; with them 0.2 % and
4 % (the rest, under bf16, is backward's fp32 copies of the 16-bit weights' gradients).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from chapters.core.model import GPTConfig

DTYPES = {"fp32": 4, "bf16": 2, "fp16": 2}
FP32 = 4

# Elements per token that one transformer block saves for backward, and whether each is produced in the
# compute dtype ("low" under autocast) or stays fp32 (LayerNorm and the residual stream run in fp32).
# Names follow chapters/core/model.py; C = n_embd.
LAYER_SAVES = [
    ("qkv input (norm1 output)", 1, "low"),
    ("q, k, v", 3, "low"),
    ("attention output", 1, "low"),
    ("attention output, heads merged", 1, "low"),
    ("residual after attention", 1, "fp32"),
    ("mlp input (norm2 output)", 1, "low"),
    ("mlp hidden, before GELU", 4, "low"),
    ("mlp hidden, after GELU", 4, "low"),
    ("block output", 1, "fp32"),
]


@dataclass
class MemoryEstimate:
    components: dict[str, int]

    @property
    def total_bytes(self) -> int:
        return sum(self.components.values())

    def to_json(self) -> dict:
        return {"total_bytes": self.total_bytes, "components": dict(self.components)}


def parameter_counts(config: GPTConfig) -> tuple[int, int]:
    """(all parameters, those in matrices that autocast copies to 16 bits), matching ``GPT``'s modules."""
    c, v, layers = config.n_embd, config.vocab_size, config.n_layer
    per_layer_matrices = c * 3 * c + c * c + c * 4 * c + 4 * c * c
    per_layer = per_layer_matrices + 3 * c + c + 4 * c + c + 2 * 2 * c  # + biases + two LayerNorms
    embeddings = v * c + config.block_size * c
    head = 0 if config.tie_weights else v * c
    total = embeddings + layers * per_layer + 2 * c + head
    return total, layers * per_layer_matrices + v * c  # the head (tied or not) is a matmul weight too


def estimate_memory(config: GPTConfig, batch_size: int, seq_len: int, dtype: str = "fp32",
                    grad_checkpointing: bool = False, attention: str = "flash",
                    fused_adamw: bool = False, blas_workspaces: int = 0) -> MemoryEstimate:
    """The peak of one steady-state step. ``fused_adamw``: the single-kernel CUDA AdamW (the Trainer's
    choice on GPUs), which needs no scratch; the CPU's per-parameter loop holds two temporaries the size
    of the parameter it is updating. ``blas_workspaces``: bytes cuBLAS holds on a GPU
    (:func:`cuda_blas_workspaces`; 0 on the CPU)."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if attention not in ("flash", "math"):
        raise ValueError(f"attention must be 'flash' or 'math', got {attention!r}")
    low = DTYPES[dtype]
    tokens, c, v, heads = batch_size * seq_len, config.n_embd, config.vocab_size, config.n_head
    params, matmul_params = parameter_counts(config)

    per_token_layer = sum(n * c * (low if kind == "low" else FP32) for _, n, kind in LAYER_SAVES)
    per_token_layer += 2 * 2 * FP32  # LayerNorm mean and 1/std, two norms
    per_token_layer += heads * FP32  # attention's log-sum-exp per row
    attention_matrix = 0
    if attention == "math":
        attention_matrix = 2 * batch_size * heads * seq_len * seq_len * low
    if config.dropout > 0:  # a one-byte mask per dropped element: embeddings, attention proj, mlp output
        per_token_layer += 2 * c
    one_layer = tokens * per_token_layer + attention_matrix

    if grad_checkpointing:
        activations = config.n_layer * tokens * c * FP32 + one_layer
    else:
        activations = config.n_layer * one_layer
    activations += tokens * c * FP32 * 2  # embedding sum (first block's input) and final norm output

    logits = tokens * v * (low + FP32 + FP32)  # logits, their fp32 copy (or its gradient), the log-softmax
    gradients_at_peak = params * FP32 if params * FP32 > activations + logits else 0
    components = {
        "parameters": params * FP32,
        "gradients": gradients_at_peak,
        "optimizer states (AdamW m, v)": 2 * params * FP32,
        "activations": activations if not gradients_at_peak else 0,
        "logits and loss": logits if not gradients_at_peak else 0,
    }
    if gradients_at_peak and not fused_adamw:
        largest = max(config.vocab_size, config.block_size, 4 * config.n_embd) * config.n_embd
        components["optimizer step scratch"] = 2 * largest * FP32
    if low != FP32:
        components["16-bit weight copies (autocast)"] = matmul_params * low
    if blas_workspaces:
        components["cuBLAS workspaces (CUDA)"] = blas_workspaces
    return MemoryEstimate(components)


def cuda_blas_workspaces(device: torch.device | str = "cuda") -> int:
    """Bytes of cuBLAS workspace a training step holds on ``device``: one workspace per thread that
    multiplies matrices there -- the forward pass's and autograd's backward thread: two. 0 off CUDA.

    The size is PyTorch's default (ATen's ``CublasHandlePool.cpp``): 32 MiB from Hopper (compute capability
    9) on -- 32 MiB measured on an H200 -- and 4 MiB x 2 + 16 KiB x 8 before it. ``CUBLAS_WORKSPACE_CONFIG``
    (set for deterministic cuBLAS) changes it and is not read here: the estimate is then off by that much."""
    if torch.device(device).type != "cuda":
        return 0
    major, _ = torch.cuda.get_device_capability(device)
    per_thread = 32 * 2**20 if major >= 9 else 2 * 4 * 2**20 + 8 * 16 * 2**10
    return 2 * per_thread


def largest_batch_within(budget_bytes: int, config: GPTConfig, seq_len: int, **options) -> int:
    """The largest batch size whose estimate fits in ``budget_bytes`` (0 if not even one example fits).
    The estimate grows with the batch size, so a doubling search then a bisection finds it."""
    def fits(batch: int) -> bool:
        return estimate_memory(config, batch, seq_len, **options).total_bytes <= budget_bytes

    if not fits(1):
        return 0
    low, high = 1, 2
    while fits(high):
        low, high = high, high * 2
    while high - low > 1:  # invariant: fits(low), not fits(high)
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low
