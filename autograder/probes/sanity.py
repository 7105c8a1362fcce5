"""Probes for ``06_overfitting``'s sanity checks: the learner's init-loss reading and overfit-one-batch loop on
prepared models."""

from __future__ import annotations

from autograder.probes import probe

# What the verdicts may say (the notebook imports these).
INIT_VERDICTS = ("ok", "too_high", "too_low")
OVERFIT_VERDICTS = ("memorised", "not_learning", "too_little_capacity")


@probe("06_overfitting.init_loss")
def init_loss(cases: list[dict], init_loss_report) -> list[dict]:
    answers = [dict(init_loss_report(case["model"], case["batch"])) for case in cases]
    return [{"expected": float(answer["expected"]), "measured": float(answer["measured"]),
             "verdict": str(answer["verdict"])} for answer in answers]


@probe("06_overfitting.overfit_one_batch")
def overfit_one_batch(cases: list[dict], overfit_one_batch) -> list[dict]:
    answers = [dict(overfit_one_batch(case["model"], case["batch"])) for case in cases]
    return [{"first_loss": float(answer["first_loss"]), "last_loss": float(answer["last_loss"]),
             "verdict": str(answer["verdict"])} for answer in answers]
