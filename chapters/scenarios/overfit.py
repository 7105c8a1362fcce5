"""overfit -- a tiny training set, no dropout, no weight decay, many epochs: the model memorises.

Symptom: val loss turns up while train loss keeps falling; the gap grows past 2x.

How to see it: train and val loss on one plot. The moment val stops following train down is where
generalisation ends; everything after it is memorisation.

Root cause: far more capacity than data (here 64 lines for ~0.1 M parameters), and nothing that
discourages memorising.

Fix: regularise and stop at the right time -- dropout 0.1-0.2, weight decay 0.1, and early stopping that
*restores the best weights* (stopping alone leaves you with the overfit ones).

Confirm: the fixed run ends with val within 2x of train, at (or near) its best val loss.
"""

from __future__ import annotations

import dataclasses

from chapters.core.early_stopping import EarlyStopping
from chapters.scenarios.base import Options, RunPlan, tiny_plan

ID = "overfit"
LABEL = "overfitting"
EXPECT_SYMPTOM = True
LINES_PER_DIALECT = 16
STEPS = 300


def broken(options: Options) -> RunPlan:
    plan = tiny_plan(options, steps=STEPS, batch_size=16, eval_every=20, weight_decay=0.0)
    return dataclasses.replace(plan, train_lines_per_dialect=LINES_PER_DIALECT)


def fixed(options: Options) -> RunPlan:
    plan = tiny_plan(options, steps=STEPS, batch_size=16, eval_every=20, weight_decay=0.1)
    return dataclasses.replace(plan, train_lines_per_dialect=LINES_PER_DIALECT, model_overrides={"dropout": 0.2},
                               extra_callbacks=lambda run_dir: [EarlyStopping(patience=2, min_delta=0.005)])
