"""Probes for ``09_mystery_runs``: diagnoses of prepared logs, the leak test on prepared models, and the
weights the learner's fixed script trains (saved to a file the grader evaluates)."""

from __future__ import annotations

import torch

from autograder.probes import ask, probe


@probe("09_mystery_runs.diagnose")
def diagnose(logs: list[str], diagnose_log) -> list[dict]:
    answers = []
    for path in logs:
        answer = diagnose_log(path)
        answers.append({"anomaly": str(answer["anomaly"]), "step": int(answer["step"]), "fix": str(answer["fix"])})
    return answers


def logits_function(index: int):
    """Model ``index`` as a function of token ids only. The model itself stays in the grader (its config
    would say whether it can see the future): each call asks the grader for the logits."""
    def logits_of(input_ids):
        return torch.tensor(ask({"model": index, "ids": torch.as_tensor(input_ids).tolist()}))
    return logits_of


@probe("09_mystery_runs.future_leak")
def future_leak(models: list[dict], leaks_future) -> list[bool]:
    return [bool(leaks_future(logits_function(index), model["vocab_size"], 16)) for index, model in enumerate(models)]


@probe("09_mystery_runs.fixed_training")
def fixed_training(train_seed: int, train_fixed) -> dict:
    train_fixed(train_seed, "fixed-weights.pt")
    return {"file": "fixed-weights.pt"}
