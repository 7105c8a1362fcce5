"""causal_mask -- attention without its causal mask: the model reads the answer.

Symptom: train *and* val loss fall far below the corpus's loss floor. That is impossible for an honest
model: the floor is the loss of the perfect predictor. A loss below it means information leaks from the
future.

How to see it: plot the loss with the floor line (``clinic plot`` draws it). On real text, where nobody
knows the floor, the tell is a loss that is "too good to be true" and a model that generates garbage.

Root cause: attention at position t may look at positions after t, including t+1 -- the very token it is
asked to predict. Here ``GPTConfig(causal=False)``; in real code, a forgotten ``is_causal=True`` or a mask
built with the wrong triangle.

Fix: the causal mask. Check: the gradient-dependency test -- the loss at position t must have zero gradient
with respect to inputs after t (``clinic sanity`` runs it).

Confirm: the fixed run stays above the floor.
"""

from __future__ import annotations

import dataclasses

from chapters.scenarios.base import Options, RunPlan, tiny_plan

ID = "causal_mask"
LABEL = "leakage"
EXPECT_SYMPTOM = True
STEPS = 600  # the model finds the leak at step 300-450 (seed-dependent); the doctor wants 3 evaluations below the floor


def broken(options: Options) -> RunPlan:
    return dataclasses.replace(fixed(options), model_overrides={"causal": False})


def fixed(options: Options) -> RunPlan:
    return tiny_plan(options, steps=STEPS)
