"""Probes for ``06_overfitting``'s sanity checks: the learner's init-loss reading and overfit-one-batch loop on
prepared models."""

from __future__ import annotations

from contextlib import contextmanager

import torch

from autograder.probes import probe

# What the verdicts may say (the notebook imports these).
INIT_VERDICTS = ("ok", "too_high", "too_low")
OVERFIT_VERDICTS = ("memorised", "not_learning", "too_little_capacity")


@contextmanager
def one_thread():
    """Run on one CPU thread, as the judge does: the same loop on the same inputs then gives the same bits.

    A matrix product split over N threads adds its partial sums in another order; over a hundred optimizer
    steps the last digits drift, and a loss near the stopping line may cross it one step earlier or later."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@probe("06_overfitting.init_loss")
def init_loss(cases: list[dict], init_loss_report) -> list[dict]:
    answers = [dict(init_loss_report(case["model"], case["batch"])) for case in cases]
    return [{"expected": float(answer["expected"]), "measured": float(answer["measured"]),
             "verdict": str(answer["verdict"])} for answer in answers]


@probe("06_overfitting.overfit_one_batch")
def overfit_one_batch(cases: list[dict], overfit_one_batch) -> list[dict]:
    with one_thread():
        answers = [dict(overfit_one_batch(case["model"], case["batch"])) for case in cases]
    return [{"first_loss": float(answer["first_loss"]), "last_loss": float(answer["last_loss"]),
             "verdict": str(answer["verdict"])} for answer in answers]
