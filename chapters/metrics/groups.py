"""Parameter groups: which part of the model a number comes from.

One total gradient norm says *that* something is wrong; norms per group say *where*. A GPT has five kinds
of parameters, and each fails in its own way: embeddings (rare tokens get rare, large updates), attention,
MLP, LayerNorm gains and biases (``norm``), and the output ``head``.

**Tied weights.** The tiny and small presets tie the output head to the token embedding: one matrix does
both jobs. ``named_parameters()`` yields a shared tensor once, under the first name it was registered with
(``token_embedding.weight``), so the tied matrix is reported in the ``embedding`` group, and a tied model
has **no** ``head`` group (no ``grad_norm/head`` key). Counting the matrix once keeps the groups a
partition: the group norms combine to the total, ``sqrt(sum of squares) == grad_norm``.

Other models name their parameters differently, so the grouping is a choice you pass in: a function from
parameter name to group name, or a ``{parameter name: group}`` dict. Any name is fine as a group; it
becomes part of the metric key (``grad_norm/<group>``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch

Grouping = Callable[[str], str] | Mapping[str, str]

OTHER = "other"  # the group of parameters a grouping does not name


def gpt_group(name: str) -> str:
    """The course GPT's grouping (see :mod:`chapters.core.model` for the names)."""
    if "embedding" in name:  # token_embedding, position_embedding
        return "embedding"
    if ".attention." in name:
        return "attention"
    if ".mlp." in name:
        return "mlp"
    if "norm" in name:  # norm1, norm2, norm_final
        return "norm"
    if name.startswith("head."):
        return "head"
    return OTHER


def group_parameters(model: torch.nn.Module, grouping: Grouping = gpt_group) -> dict[str, list[torch.nn.Parameter]]:
    """``{group: [parameters]}`` for every parameter of ``model``, frozen ones included, each listed once."""
    name_to_group = grouping if callable(grouping) else (lambda name: grouping.get(name, OTHER))
    groups: dict[str, list[torch.nn.Parameter]] = {}
    for name, parameter in model.named_parameters():
        groups.setdefault(name_to_group(name), []).append(parameter)
    return groups


def combined_norm(tensors: list[torch.Tensor]) -> torch.Tensor:
    """The L2 norm of several tensors taken as one long vector, as a 0-d tensor on their device (no sync).

    ``torch._foreach_norm`` is the batched kernel ``clip_grad_norm_`` itself uses: one call for all tensors
    instead of one small kernel launch each.
    """
    return torch.linalg.vector_norm(torch.stack(torch._foreach_norm(tensors)))
