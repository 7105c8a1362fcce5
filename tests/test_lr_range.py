"""The LR range test: a seeded sweep is reproducible, and the threshold is where the loss turns up."""

from __future__ import annotations

import math

from chapters.lr_range import SweepPoint, geometric, instability_threshold, lr_sweep

LN_V = math.log(33)


def point(lr, loss):
    return SweepPoint(lr, loss, LN_V)


def test_threshold_is_the_first_lr_past_the_best_that_ends_much_worse():
    points = [point(1e-3, 2.0), point(1e-2, 1.2), point(3e-2, 1.4), point(1e-1, 1.6), point(1.0, math.inf)]
    assert instability_threshold(points) == 1e-1  # 1.4 is 17 % worse (noise), 1.6 is 33 % worse
    assert instability_threshold(points[:3]) is None  # nothing unstable swept yet
    assert instability_threshold([point(1e-3, 2.0), point(1e-2, 5.0)]) == 1e-2  # above ln V: diverged
    assert instability_threshold([point(1.0, math.nan)]) is None  # no stable run: no reference to compare


def test_geometric_spacing():
    lrs = geometric(1e-4, 1e-1, 4)
    assert math.isclose(lrs[0], 1e-4) and math.isclose(lrs[-1], 1e-1)
    assert all(math.isclose(b / a, 10.0) for a, b in zip(lrs, lrs[1:]))


def test_a_seeded_sweep_is_reproducible_and_finds_the_blow_up():
    lrs = [1e-3, 1e-2, 3.0]
    first = lr_sweep(lrs, steps=25, batch_size=8)
    assert [p.final_loss for p in first] == [p.final_loss for p in lr_sweep(lrs, steps=25, batch_size=8)]
    assert first[1].final_loss < first[0].final_loss  # the useful region: a larger LR learns faster
    assert first[2].diverged and instability_threshold(first) == 3.0
