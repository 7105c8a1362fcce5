"""``leakage``: the validation loss is far below the data's loss floor.

Statistic: the rolling median (3 evaluations) of ``val_loss``, against ``loss_floor`` from ``run_start``;
the evaluations' own noise is the robust scale of eval-to-eval differences over the second half of the
evaluations (:func:`signals.noise_scale`; the first half still carries the descent). Threshold: below the
floor by more than ``LEAK_UNITS`` (3) x that noise and by at least ``MIN_BELOW`` (8 %) of the floor, for
``STEADY`` evaluations in a row (all of them when fewer were made). A healthy run cannot be below the
floor at all, so three noise scales three times in a row are enough. Why: the floor is the expected loss
of the perfect predictor, which no honest model beats on unseen data; only a model that reads what it
should predict -- a missing causal mask, labels copied into the inputs -- gets there. Below the floor by
more than the measurement's noise, again and again, is the evidence; the 8 % covers what the noise cannot
show: a fixed validation set's own sampling offset (its loss differs from the expectation by a constant,
about sd(loss) / sqrt(examples): for a regression's squared error sqrt(2 / N) of the floor, 6 % with 512
examples -- a healthy linear regression in the benchmark measured 5 % below its floor). The log does not
say N, so a leak smaller than that cannot be told from a small validation set.
A second statistic is for a *noisy* validation loss (a few random batches per evaluation): each evaluation
then jumps by 5-8 %, and three in a row, three jumps below the floor, is luck -- a leak 10-14 % below
goes unseen. But the median of the second half's n evaluations is known to within ``MEDIAN_ERROR`` x
noise / sqrt(n) (the standard error of a median): below the floor by ``MIN_BELOW`` plus ``LEAK_UNITS``
standard errors is the same evidence, measured on the level instead of on single evaluations (constructed
runs 14 % below with 8 % jumps, 80 evaluations: 4 of 10 found by the first statistic, 10 of 10 by this
one; none at the floor; no cached benchmark log changed, 2026-12-02).
Train loss alone is not used: memorising a small training set also goes below the floor (that is
overfitting, not leakage). Nor is it asked to agree: on 2026-12-02 the rule required the train loss below
the floor too (a lucky validation set beats the floor alone: an MLP with 20 % label noise and 512
validation examples read 9 % below it, train 3 % above, and was called leakage), and 50 of 60 constructed
leaks 10-15 % below the floor (``bench/doctor_shapes.py``: train loss converging on the floor, 0.97-1.17 x
at the end) went unseen -- the issue's own leaks are described by the val loss alone. So a validation set
small enough to miss the floor by 8 % by chance remains a false alarm this rule cannot avoid.
Needs a floor: without one the rule stays silent rather than guess.

Benchmark (``bench/doctor_families.py``, six model families, leave-one-family-out, 2026-12-01): leakage
13/18 top-1 (the misses: leaks the model never learned to use, val above the floor); all labels 218/243,
1/90 false alarms (docs/doctor.md).
"""

from __future__ import annotations

import math

from chapters.doctor.findings import Finding, confidence
from chapters.doctor.signals import curve, first_sustained, noise_scale, smooth

MIN_BELOW = 0.08
STEADY = 3
LEAK_UNITS = 3.0  # three evaluations in a row, each 3 noise scales below: ~1e-8 by chance
MIN_LATE = 4  # evaluations in the second half before their median says anything
MEDIAN_ERROR = 1.2533  # the standard error of a median of n normal draws is sqrt(pi / 2) sigma / sqrt(n)
LESSON = "docs/doctor.md#leakage"


def check(run) -> list[Finding]:
    floor = run.info("loss_floor")
    val = curve(run.evals, "val_loss")
    if floor is None or floor <= 0 or len(val) < 2:
        return []
    smoothed = smooth(val, 3)
    late = val.iloc[len(val) // 2:]  # the second half: near the final level, not the descent
    noise = noise_scale(late)
    margin = max(MIN_BELOW * floor, LEAK_UNITS * noise)
    limit = floor - margin
    step = first_sustained(smoothed < limit, min(STEADY, len(val)))
    if step is not None:
        best = float(smoothed.min())
        return [_finding(step, confidence(0.85, (floor - best) / margin),
                         f"val loss reached {best:.4g}, {1 - best / floor:.0%} below the loss floor {floor:.4g}, "
                         f"and stayed below {limit:.4g} (the floor minus {margin / floor:.0%}: more than the "
                         f"evaluations' own noise {noise:.2g}) from step {int(step)}")]
    if len(late) < MIN_LATE:
        return []
    level = float(late.median())
    error = MEDIAN_ERROR * noise / math.sqrt(len(late))
    limit = floor * (1 - MIN_BELOW) - LEAK_UNITS * error
    if level >= limit:
        return []
    return [_finding(int(late.index[0]), confidence(0.85, (floor - level) / (floor - limit)),
                     f"over the last {len(late)} evaluations the val loss's median {level:.4g} is "
                     f"{1 - level / floor:.0%} below the loss floor {floor:.4g}: below {limit:.4g} (the floor "
                     f"minus {MIN_BELOW:.0%} and {LEAK_UNITS:g} standard errors of that median, {error:.2g}; "
                     f"each evaluation alone jumps by {noise:.2g})")]


def _finding(step, score, evidence) -> Finding:
    return Finding("leakage", score, int(step), evidence,
                   fix="make sure the model cannot see its targets: causal attention mask, labels shifted "
                       "against inputs, no label-derived feature in the inputs, no train/val overlap",
                   experiment="gradient-dependency check: the loss at position t must not change when tokens "
                              "after t are changed",
                   lesson=LESSON)
