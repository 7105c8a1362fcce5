"""Probes for ``03_nan``: the learner's data check on prepared batches, their diagnosis of prepared logs."""

from __future__ import annotations

from autograder.probes import probe

# What a diagnosis may answer (the notebook imports it). Causes are the nan scenario's; one fix per cause.
FIXES = {"lr_spike": "lower_lr_add_warmup", "all_ignored_labels": "drop_unusable_batches",
         "bad_token_ids": "validate_token_ids", "fp16_no_scaler": "bf16_or_grad_scaler"}


@probe("03_nan.data_check")
def data_check(case: dict, is_usable) -> dict:
    return {"flagged": [index for index, batch in enumerate(case["batches"])
                        if not is_usable(batch, case["vocab_size"])]}


@probe("03_nan.diagnosis")
def diagnosis(logs: list[str], diagnose_nan_log) -> list[dict]:
    answers = []
    for log in logs:
        answer = dict(diagnose_nan_log(log))
        answers.append({key: answer.get(key) for key in ("label", "cause", "step", "fix")})
    return answers


@probe("03_nan.fix")
def fix(_: None, changes) -> dict:
    if not isinstance(changes, dict):
        raise NotImplementedError  # the blank release leaves FIX = None
    return {str(key): value for key, value in changes.items()}
