"""label_shift -- labels that do not belong to their inputs: the model can only learn token frequencies.

Symptom: the loss falls from ln(vocab size) to a plateau well above the loss floor and stays there --
at the *unigram entropy*, the loss of a model that predicts every token from its overall frequency.

How to see it: the plateau's height. A loss stuck at a suspiciously round, "knows-nothing" level
(ln V, or the entropy of token frequencies) is a data bug, not an optimisation problem: no learning rate
fixes it. Print a few (input, label) pairs side by side.

Root cause: here the pipeline pairs each input row with the labels of its neighbour in the batch (an
off-by-one in the collate step). The siblings of this bug: labels not shifted at all (loss collapses to
0), or shifted twice (the model and the data both shift).

Fix: align labels with inputs; the data check ``labels_aligned`` catches it before training:
``labels[:, :-1]`` must equal ``input_ids[:, 1:]`` for next-token data.

Confirm: the fixed run falls past the plateau towards the floor.
"""

from __future__ import annotations

import dataclasses

import torch

from chapters.scenarios.base import Options, RunPlan, tiny_plan

ID = "label_shift"
LABEL = "loss_plateau"
EXPECT_SYMPTOM = True
STEPS = 150


def labels_aligned(batch: dict) -> bool:
    """For next-token data, each label row is its input row moved one position left."""
    return torch.equal(batch["labels"][:, :-1], batch["input_ids"][:, 1:])


def misalign_labels(batch: dict, step: int) -> dict:
    """The bug: labels rolled by one row, so each input gets another sequence's labels."""
    return {**batch, "labels": batch["labels"].roll(1, dims=0)}


def check_alignment(batch: dict, step: int) -> dict:
    """The fix's guard: refuse misaligned batches loudly (it never fires on the correct pipeline)."""
    if not labels_aligned(batch):
        raise ValueError(f"step {step}: labels are not the inputs shifted by one position")
    return batch


def broken(options: Options) -> RunPlan:
    return dataclasses.replace(tiny_plan(options, steps=STEPS), batch_transform=misalign_labels)


def fixed(options: Options) -> RunPlan:
    return dataclasses.replace(tiny_plan(options, steps=STEPS), batch_transform=check_alignment)
