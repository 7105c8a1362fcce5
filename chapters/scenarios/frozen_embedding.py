"""frozen_embedding -- the embeddings have ``requires_grad=False``: part of the model never learns.

Symptom: the embedding group's update ratio is exactly 0 from the first step, while the other groups
move; the loss starts high and falls slowly, stopping well above the loss floor.

How to see it: per-group gradient norms and update ratios (``grad_norm/embedding``,
``update_ratio/embedding``). A frozen group reads 0 at once -- you do not have to wait for the loss to
look suspicious. The run_start event shows ``trainable_params`` < ``total_params`` too.

Root cause: a freeze of the embedding layers (token and position) left over from fine-tuning code, a
copied ``requires_grad_(False)``, or parameters missing from the optimizer's groups. With tied weights (our
GPT's default) freezing the token embedding also freezes the output head: the model must fit its hidden
states to random output vectors.

Fix: unfreeze -- and make "which parameters are frozen?" a check you run before training
(:func:`frozen_parameters`).

Confirm: every group's update ratio is non-zero and the loss reaches the healthy run's level.
"""

from __future__ import annotations

import dataclasses

import torch

from chapters.scenarios.base import Options, RunPlan, tiny_plan

ID = "frozen_embedding"
LABEL = "frozen_parameters"
EXPECT_SYMPTOM = True
STEPS = 150


def frozen_parameters(model: torch.nn.Module) -> list[str]:
    """Names of parameters that will not train. Print this before every fine-tuning run."""
    return [name for name, parameter in model.named_parameters() if not parameter.requires_grad]


def freeze_embeddings(model: torch.nn.Module) -> torch.nn.Module:
    """The bug: the fine-tuning habit of freezing the embedding layers, applied to a model trained from scratch."""
    for layer in (model.token_embedding, model.position_embedding):
        layer.weight.requires_grad_(False)
    return model


def require_all_trainable(model: torch.nn.Module) -> torch.nn.Module:
    """The fix's check: refuse to train a model with frozen parameters we did not ask for."""
    frozen = frozen_parameters(model)
    if frozen:
        raise ValueError(f"frozen parameters: {', '.join(frozen)}")
    return model


def broken(options: Options) -> RunPlan:
    return dataclasses.replace(fixed(options), prepare_model=freeze_embeddings)


def fixed(options: Options) -> RunPlan:
    return dataclasses.replace(tiny_plan(options, steps=STEPS), prepare_model=require_all_trainable)
