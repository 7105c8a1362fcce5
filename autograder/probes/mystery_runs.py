"""Probes for ``09_mystery_runs``: diagnoses of prepared logs, the leak test on prepared models, and the
weights the learner's fixed script trains (saved to a file the grader evaluates)."""

from __future__ import annotations

import torch

from autograder.probes import probe


@probe("09_mystery_runs.diagnose")
def diagnose(logs: list[str], diagnose_log) -> list[dict]:
    answers = []
    for path in logs:
        answer = diagnose_log(path)
        answers.append({"anomaly": str(answer["anomaly"]), "step": int(answer["step"]), "fix": str(answer["fix"])})
    return answers


def logits_function(model, mixes_next_token: bool):
    """The model as a function of token ids only."""
    @torch.no_grad()
    def logits_of(input_ids):
        if mixes_next_token:  # each position also reads the token after it: a leak through the input
            input_ids = (input_ids + input_ids.roll(-1, dims=1)) % model.config.vocab_size
        return model(input_ids)["logits"]
    return logits_of


@probe("09_mystery_runs.future_leak")
def future_leak(models: list[dict], leaks_future) -> list[bool]:
    return [bool(leaks_future(logits_function(case["model"], case["mixes_next_token"]),
                              case["model"].config.vocab_size, 16)) for case in models]


@probe("09_mystery_runs.fixed_training")
def fixed_training(train_seed: int, train_fixed) -> dict:
    train_fixed(train_seed, "fixed-weights.pt")
    return {"file": "fixed-weights.pt"}
