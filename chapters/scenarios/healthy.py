"""healthy -- the reference run: what "nothing is wrong" looks like.

Symptom: none. Train loss falls fast, then slowly ("fast, slow, slower": the easy patterns are learned
first); val loss follows it down and ends a few percent above the corpus's loss floor; gradient norms
settle; throughput and memory are flat.

How to see it: compare every other scenario's plots with this one. Knowing the healthy shape by heart is
most of diagnosis.

Confirm: ``clinic diagnose`` reports no findings for this run.
"""

from __future__ import annotations


from chapters.scenarios.base import Options, RunPlan, tiny_plan

ID = "healthy"
LABEL = None  # the doctor should find nothing
EXPECT_SYMPTOM = False  # there is no broken variant: both runs are the reference run


def broken(options: Options) -> RunPlan:
    return fixed(options)


def fixed(options: Options) -> RunPlan:
    return tiny_plan(options, steps=400)
