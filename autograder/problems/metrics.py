"""Checks for ``02_metrics``: gradient norms that agree with ``clip_grad_norm_``."""

from __future__ import annotations

import math

import torch

from autograder.checks import CheckFailed, register


def random_model_with_grads(seed: int) -> torch.nn.Module:
    """A small model with seeded gradients; some parameters frozen (no ``.grad``), scales that vary."""
    generator = torch.Generator().manual_seed(seed)
    width = 4 + seed % 7
    model = torch.nn.Sequential(torch.nn.Embedding(11, width), torch.nn.Linear(width, width),
                                torch.nn.LayerNorm(width), torch.nn.Linear(width, 3))
    for index, parameter in enumerate(model.parameters()):
        if seed and index == seed % 5:
            parameter.requires_grad_(False)  # hidden variants: one frozen parameter
            continue
        scale = 10.0 ** (int(torch.randint(-3, 3, (), generator=generator)))
        parameter.grad = torch.randn(parameter.shape, generator=generator) * scale
    return model


def reference_total_norm(seed: int) -> float:
    model = random_model_with_grads(seed)
    grads = [p for p in model.parameters() if p.grad is not None]
    return float(torch.nn.utils.clip_grad_norm_(grads, max_norm=math.inf))


class TotalGradNorm:
    @staticmethod
    def collect(seed, total_grad_norm):
        return {"norm": float(total_grad_norm(random_model_with_grads(seed)))}

    @staticmethod
    def judge(seed, observation):
        expected = reference_total_norm(seed)
        got = observation["norm"]
        if not math.isclose(got, expected, rel_tol=1e-5):
            raise CheckFailed(f"total_grad_norm gave {got:.6g}, clip_grad_norm_ gives {expected:.6g} "
                              "(L2 norm over all gradients together; skip parameters whose .grad is None)")


HINT = "the square root of the sum of squares of every gradient entry; parameters without .grad are skipped"
register("02_metrics.total_grad_norm", hint=HINT)(TotalGradNorm)
register("02_metrics.total_grad_norm_hidden", hint=HINT, hidden=True)(TotalGradNorm)
