"""no_shuffle -- training data served in file order, one domain after another.

Symptom: a staircase / saw-tooth loss that repeats every epoch, and a worse validation loss than the same
run with shuffling.

How to see it: plot train loss with the epoch boundaries; the same pattern comes back each epoch. Each
domain has its own difficulty (our four dialects have different entropies), so the loss level jumps
whenever the loader crosses into the next domain, and the model forgets the earlier domains while it
fits the current one.

Root cause: ``shuffle=False`` (or a sampler that walks an index in order) over a corpus assembled source
by source -- which is how corpora are usually assembled.

Fix: ``shuffle=True`` with a seeded generator, so the order is random but repeatable.

Confirm: the fixed loss has no epoch-periodic pattern and its val loss is lower.
"""

from __future__ import annotations

import dataclasses


from chapters.scenarios.base import Options, RunPlan, tiny_plan

ID = "no_shuffle"
LABEL = "no_shuffle"
EXPECT_SYMPTOM = True
LINES_PER_DIALECT = 200  # 800 lines: 25 steps per epoch at batch 32
STEPS = 150  # six epochs


def broken(options: Options) -> RunPlan:
    return dataclasses.replace(fixed(options), config=dataclasses.replace(fixed(options).config, shuffle=False))


def fixed(options: Options) -> RunPlan:
    plan = tiny_plan(options, steps=STEPS, log_every=1, eval_every=25)
    return dataclasses.replace(plan, train_lines_per_dialect=LINES_PER_DIALECT)
