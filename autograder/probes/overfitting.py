"""Probes for ``06_overfitting``: drive the learner's early stopping, ask their diagnosis of prepared logs."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from autograder.probes import probe


def drive(stopper, losses: list[float]) -> dict:
    """Feed ``losses`` to an early-stopping callback the way the Trainer does, with weights that say which
    evaluation they come from (all equal to its index, changed in place as an optimizer would)."""
    model = torch.nn.Linear(1, 1, bias=False)
    trainer = SimpleNamespace(model=model, should_stop=False)
    stopped_at = None
    for index, loss in enumerate(losses):
        with torch.no_grad():
            model.weight.fill_(index)
        stopper.on_eval_end(trainer, {"step": 10 * (index + 1), "val_loss": loss})
        if trainer.should_stop:
            stopped_at = index
            break
    stopper.on_run_end(trainer, "stopped" if stopped_at is not None else "completed")
    return {"stopped_at": stopped_at, "weights_from": int(model.weight.item())}


@probe("06_overfitting.early_stopping")
def early_stopping(cases: list[dict], early_stopping_class) -> dict:
    results = []
    for case in cases:
        stopper = early_stopping_class(patience=case["patience"], min_delta=case["min_delta"],
                                       restore_best=case["restore_best"])
        results.append(drive(stopper, case["losses"]))
    return {"results": results}


@probe("06_overfitting.diagnose_overfitting")
def diagnose_overfitting(run_dirs: list[str], diagnose_overfitting) -> list[dict]:
    answers = []
    for run_dir in run_dirs:
        answer = diagnose_overfitting(run_dir)
        step = answer["evidence_step"]
        answers.append({"label": str(answer["label"]), "evidence_step": None if step is None else int(step)})
    return answers


@probe("06_overfitting.regularisation")
def regularisation(_: None, regularisation) -> dict:
    if regularisation is None:  # the answer cell stopped before defining it
        raise NotImplementedError
    return {"choice": dict(regularisation)}
