"""lr_too_small -- a learning rate 1000x too small: the loss barely moves.

Symptom: an almost flat loss curve. Nothing crashes and nothing is NaN, which is why this one wastes
days: the run looks "stable".

How to see it: the loss after hundreds of steps is still near ln(vocab size), the value of a model that
knows nothing. The update ratio (|update| / |weights|) sits around 1e-6 instead of the usual ~1e-3.

Root cause: each step moves the weights by ~lr (Adam normalises the gradient), so lr = 1e-5 needs 1000x
the steps that lr = 1e-2 needs.

Fix: a sane learning rate. To find one, run an LR range test: increase the LR exponentially over a few
hundred steps and pick a value somewhat below where the loss falls fastest.

Confirm: the fixed run's loss falls within the first few dozen steps.
"""

from __future__ import annotations

from chapters.scenarios.base import Options, RunPlan, tiny_plan

ID = "lr_too_small"
LABEL = "loss_plateau"
EXPECT_SYMPTOM = True
STEPS = 150


def broken(options: Options) -> RunPlan:
    return tiny_plan(options, steps=STEPS, lr=1e-5)


def fixed(options: Options) -> RunPlan:
    return tiny_plan(options, steps=STEPS)
