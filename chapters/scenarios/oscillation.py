"""oscillation -- a learning rate too high for a tiny batch: the loss swings instead of falling.

Symptom: the loss curve looks like an electrocardiogram -- large swings from step to step, and no
steady descent.

How to see it: log every step and look for spikes -- steps whose loss jumps far above the few steps
before it -- and for a wide spread of the loss around its median once the initial fall is over. A healthy
curve is noisy too, but its noise is small next to its level.

Root cause: the gradient of a batch of 2 sequences is a very noisy estimate of the true gradient, and a
large learning rate takes a full step in each noisy direction.

Fix: a larger effective batch (gradient accumulation if memory is short), a lower LR, a longer warmup.

Confirm: the fixed run's swings are a small fraction of its loss and the loss falls steadily.
"""

from __future__ import annotations


from chapters.scenarios.base import Options, RunPlan, tiny_plan

ID = "oscillation"
LABEL = "oscillation"
EXPECT_SYMPTOM = True
STEPS = 150


def broken(options: Options) -> RunPlan:
    # A constant LR of 0.2 (20x the tiny preset's peak, and no decay to calm it down), batches of 2 sequences.
    # At 0.1 the swings were marginal: 9-17 % per step depending on the seed and on the CPU's kernels (an AMD
    # EPYC's seed 0 swung 9 %, under the doctor's 10 %); at 0.2 they are 16-22 % on seeds 0-4.
    return tiny_plan(options, steps=STEPS, batch_size=2, lr=2e-1, min_lr_ratio=1.0, warmup_steps=0, log_every=1)


def fixed(options: Options) -> RunPlan:
    return tiny_plan(options, steps=STEPS, batch_size=16, grad_accum_steps=2, lr=1e-2, warmup_steps=50,
                     log_every=1)
