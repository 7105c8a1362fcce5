"""oscillation -- a learning rate too high for a tiny batch: the loss swings instead of falling.

Symptom: the loss curve looks like an electrocardiogram -- large swings from step to step, and no
steady descent.

How to see it: log every step and compare the step-to-step change of the loss with its level. A healthy
curve is noisy too, but its noise is small next to its trend; here the swings are as big as the progress.

Root cause: the gradient of a batch of 2 sequences is a very noisy estimate of the true gradient, and a
large learning rate takes a full step in each noisy direction.

Fix: a larger effective batch (gradient accumulation if memory is short), a lower LR, a longer warmup.

Confirm: the fixed run's swings are a small fraction of its loss and the loss falls steadily.
"""

from __future__ import annotations

import numpy as np

from chapters.scenarios.base import Options, RunPlan, RunResult, tiny_plan

ID = "oscillation"
LABEL = "oscillation"
EXPECT_SYMPTOM = True
STEPS = 150


def broken(options: Options) -> RunPlan:
    return tiny_plan(options, steps=STEPS, batch_size=2, lr=5e-2, warmup_steps=0, log_every=1)


def fixed(options: Options) -> RunPlan:
    return tiny_plan(options, steps=STEPS, batch_size=16, grad_accum_steps=2, lr=1e-2, warmup_steps=50,
                     log_every=1)


def relative_swing(losses: np.ndarray) -> float:
    """Median absolute step-to-step change over the second half, relative to the median loss there."""
    second_half = losses[len(losses) // 2:]
    return float(np.median(np.abs(np.diff(second_half))) / np.median(second_half))


def symptom(result: RunResult) -> bool:
    """Step-to-step swings above 10 % of the loss level."""
    return relative_swing(result.train["train_loss"].to_numpy()) > 0.10
