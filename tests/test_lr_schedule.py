"""The LR checker: the course's own schedule passes at any logging interval; each kind of deviation is found."""

from __future__ import annotations

import math

import pytest
import torch

from chapters.core.trainer import TrainConfig, warmup_cosine_schedule
from chapters.metrics.lr_schedule import check_lr_schedule


def course_schedule(steps=300, warmup=30, lr=3e-3, change=None):
    """The LR of every step of the course's warmup + cosine; ``change=(step, factor)`` scales the optimizer's
    LR from outside at that step, as a callback or a hand-written plateau rule would."""
    config = TrainConfig(steps=steps, warmup_steps=warmup, lr=lr)
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=lr)
    scheduler = warmup_cosine_schedule(optimizer, config)
    lrs = []
    for step in range(1, steps + 1):
        if change is not None and step == change[0]:
            for group in optimizer.param_groups:
                group["lr"] *= change[1]
        lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return list(range(1, steps + 1)), lrs


@pytest.mark.parametrize("every", [1, 7, 25])
def test_the_course_schedule_is_linear_then_smooth_at_any_logging_interval(every):
    steps, lrs = course_schedule()
    assert check_lr_schedule(steps[::every], lrs[::every]) == []


@pytest.mark.parametrize("every", [1, 5])
def test_an_external_lr_cut_is_found_where_it_happened(every):
    steps, lrs = course_schedule(change=(150, 0.3))
    issues = check_lr_schedule(steps[::every], lrs[::every])
    assert [issue.kind for issue in issues] == ["lr_jump"]
    assert 150 - every <= issues[0].step < 150


def test_a_raise_after_the_peak_is_found():
    steps, lrs = course_schedule(change=(200, 2.0))
    issues = check_lr_schedule(steps, lrs)
    assert [issue.kind for issue in issues] == ["lr_rose"] and issues[0].step == 199


def test_an_exponential_warmup_is_not_linear():
    steps = list(range(1, 101))
    lrs = [3e-3 * (0.9 ** (30 - s)) if s <= 30 else 3e-3 * 0.5 * (1 + math.cos(math.pi * (s - 30) / 70))
           for s in steps]
    issues = check_lr_schedule(steps, lrs)
    assert [issue.kind for issue in issues] == ["warmup_not_linear"]


def test_a_constant_lr_and_short_or_broken_logs_raise_nothing():
    assert check_lr_schedule(range(10), [1e-3] * 10) == []
    assert check_lr_schedule([1, 2], [1e-3, 2e-3]) == []
    assert check_lr_schedule([1, 2, 3, 4], [math.nan, 1e-3, 1e-3, 1e-3]) == []
