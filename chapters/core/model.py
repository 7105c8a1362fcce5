"""A small GPT: read it top to bottom like a paper.

``GPTConfig`` holds plain numbers; ``CausalSelfAttention``, ``MLP`` and ``Block`` build up to ``GPT``.
The call convention is the one used throughout the course::

    out = model(input_ids, labels=labels)   # out["logits"]: [B, T, V], out["loss"]: scalar or None

Positions whose label is ``-100`` (``IGNORE_INDEX``) do not count towards the loss. If *every* label in a
batch is ignored, the mean over zero positions is 0/0 = NaN -- one of the NaN lesson's causes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

IGNORE_INDEX = -100


@dataclass
class GPTConfig:
    vocab_size: int = 33
    block_size: int = 64  # longest sequence the position table covers
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 64
    dropout: float = 0.0
    tie_weights: bool = True  # share the token embedding with the output head (fewer parameters)
    causal: bool = True  # False removes the mask: the model can read the future (the causal_mask lesson)
    # Activation checkpointing: keep only each block's input and recompute the block during backward --
    # about one extra forward pass of time for most of the activation memory (the oom lesson's fix).
    grad_checkpointing: bool = False


PRESETS = {
    # CPU-sized: ~0.1 M parameters, a useful run in seconds on 2 cores.
    "tiny": GPTConfig(block_size=64, n_layer=2, n_head=4, n_embd=64),
    # GPU-sized, the scale of nanoGPT's Shakespeare-char model: ~10.7 M parameters.
    "small": GPTConfig(block_size=256, n_layer=6, n_head=6, n_embd=384, dropout=0.2),
}


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        if config.n_embd % config.n_head:
            raise ValueError(f"n_embd ({config.n_embd}) must be divisible by n_head ({config.n_head})")
        self.n_head = config.n_head
        self.causal = config.causal
        self.dropout = config.dropout
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.proj = nn.Linear(config.n_embd, config.n_embd)
        self.resid_dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, channels = x.shape
        q, k, v = self.qkv(x).split(channels, dim=2)
        # [B, T, C] -> [B, heads, T, C/heads]: each head attends independently.
        q, k, v = (t.view(batch, seq, self.n_head, channels // self.n_head).transpose(1, 2) for t in (q, k, v))
        # The library kernel picks flash / memory-efficient attention when it can; is_causal applies the
        # mask without materialising a [T, T] matrix.
        y = F.scaled_dot_product_attention(
            q, k, v, is_causal=self.causal, dropout_p=self.dropout if self.training else 0.0
        )
        y = y.transpose(1, 2).contiguous().view(batch, seq, channels)
        return self.resid_dropout(self.proj(y))


class MLP(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.up = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.act = nn.GELU()  # a module, not F.gelu, so a forward hook can see its output (Level-2 histograms)
        self.down = nn.Linear(4 * config.n_embd, config.n_embd)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.down(self.act(self.up(x))))


class Block(nn.Module):
    """Pre-norm residual block: normalise *before* each sub-layer, so the residual path stays an identity
    and gradients reach early layers undamped."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.norm1 = nn.LayerNorm(config.n_embd)
        self.attention = CausalSelfAttention(config)
        self.norm2 = nn.LayerNorm(config.n_embd)
        self.mlp = MLP(config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class GPT(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.n_embd)
        self.position_embedding = nn.Embedding(config.block_size, config.n_embd)
        self.dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.norm_final = nn.LayerNorm(config.n_embd)
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        if config.tie_weights:
            self.head.weight = self.token_embedding.weight
        self.apply(self._init_weights)
        # GPT-2's trick: scale the layers that write into the residual stream by 1/sqrt(2 * n_layer), so
        # the stream's variance does not grow with depth.
        for name, parameter in self.named_parameters():
            if name.endswith(("proj.weight", "down.weight")):
                nn.init.normal_(parameter, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        # Small weights make the initial logits nearly equal, so the loss starts at ln(vocab_size).
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor | None = None) -> dict:
        seq = input_ids.shape[1]
        if seq > self.config.block_size:
            raise ValueError(f"sequence length {seq} exceeds block_size {self.config.block_size}")
        positions = torch.arange(seq, device=input_ids.device)
        x = self.dropout(self.token_embedding(input_ids) + self.position_embedding(positions))
        for block in self.blocks:
            if self.config.grad_checkpointing and self.training:
                x = checkpoint(block, x, use_reentrant=False)  # the non-reentrant form is torch's recommendation
            else:
                x = block(x)
        logits = self.head(self.norm_final(x))
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(), ignore_index=IGNORE_INDEX)
        return {"logits": logits, "loss": loss}


def count_parameters(model: nn.Module) -> tuple[int, int]:
    """(total, trainable). Shared tensors (tied weights) are counted once, as ``parameters()`` yields them."""
    parameters = list(model.parameters())
    return sum(p.numel() for p in parameters), sum(p.numel() for p in parameters if p.requires_grad)
