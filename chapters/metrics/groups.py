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


def module_group(name: str) -> str:
    """Any model's grouping: the top-level module a parameter belongs to (``encoder.layer.0.weight`` ->
    ``encoder``). A sensible default for a model this course did not write."""
    return name.split(".", 1)[0]


class ParameterGroups:
    """The model's parameters, in ``model.parameters()`` order, each with the name of its group.

    That order is the order of the trainer's ``parameter_grad_norms``, so per-parameter numbers line up
    with ``group_of``; ``names`` lists each group once, in the order the model first uses it.
    """

    def __init__(self, model: torch.nn.Module, grouping: Grouping = gpt_group):
        to_group = grouping if callable(grouping) else (lambda name: grouping.get(name, OTHER))
        named = list(model.named_parameters())  # frozen ones included; a tied tensor appears once
        self.parameters = [parameter for _, parameter in named]
        self.group_of = [to_group(name) for name, _ in named]  # each parameter's group
        self.names = list(dict.fromkeys(self.group_of))  # the group names, in model order
