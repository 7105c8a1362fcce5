"""Probes for ``04_frozen_embedding``: the learner's report on prepared models, diagnosis of a prepared run,
and the weights their fixed recipe trains (saved to a file the grader evaluates)."""

from __future__ import annotations

import torch

from autograder.probes import probe


@probe("04_frozen_embedding.freeze_check")
def freeze_check(models: list, freeze_check) -> list[dict]:
    reports = [freeze_check(model) for model in models]
    return [{"frozen": [str(name) for name in report["frozen"]], "frozen_share": float(report["frozen_share"])}
            for report in reports]


@probe("04_frozen_embedding.diagnose_frozen")
def diagnose_frozen(run_dir: str, diagnose_frozen) -> dict:
    answer = diagnose_frozen(run_dir)
    step = answer.get("evidence_step")
    return {"label": str(answer["label"]), "groups": sorted(str(g) for g in answer["groups"]),
            "evidence_step": None if step is None else int(step)}


@probe("04_frozen_embedding.fixed_model")
def fixed_model(_: None, fixed_model) -> dict:
    if fixed_model is None:  # the notebook cell that trains it stopped: train_fixed is not written yet
        raise NotImplementedError
    torch.save(fixed_model.state_dict(), "fixed_model.pt")
    return {"weights": "fixed_model.pt"}


@probe("04_frozen_embedding.fixed_model_hidden")
def train_fixed(run_seed: int, train_fixed) -> dict:
    torch.save(train_fixed(run_seed).state_dict(), "fixed_model.pt")
    return {"weights": "fixed_model.pt"}
