"""``leakage``: the validation loss is far below the data's loss floor.

Statistic: the smallest rolling median (3 evaluations) of ``val_loss``, against ``loss_floor`` from
``run_start``. Threshold: more than ``BELOW`` (15 %) under the floor. Why: the floor is the expected loss
of the perfect predictor, which no honest model beats on unseen data; only a model that reads what it should
predict -- a missing causal mask, labels copied into the inputs -- gets there. Train loss alone is not
used: memorising a small training set also goes below the floor (that is overfitting, not leakage).
Needs a floor: without one the rule stays silent rather than guess.
"""

from __future__ import annotations

from chapters.doctor.findings import Finding, confidence
from chapters.doctor.signals import curve, smooth

BELOW = 0.15
LESSON = "docs/doctor.md#leakage"


def check(run) -> list[Finding]:
    floor = run.info("loss_floor")
    val = curve(run.evals, "val_loss")
    if floor is None or floor <= 0 or len(val) < 2:
        return []
    smoothed = smooth(val, 3)
    limit = floor * (1 - BELOW)
    below = smoothed[smoothed < limit]
    if below.empty:
        return []
    best = float(smoothed.min())
    return [Finding("leakage", confidence(0.9, limit / max(best, 1e-9)), int(below.index[0]),
                    f"val loss reached {best:.4g}, {1 - best / floor:.0%} below the loss floor {floor:.4g} "
                    f"(first under x{1 - BELOW:.2f} at step {int(below.index[0])})",
                    fix="make sure the model cannot see its targets: causal attention mask, labels shifted "
                        "against inputs, no label-derived feature in the inputs, no train/val overlap",
                    experiment="gradient-dependency check: the loss at position t must not change when tokens "
                               "after t are changed",
                    lesson=LESSON)]
