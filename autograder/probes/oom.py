"""Probes for ``07_oom``: the learner's estimates, predictions and fix on prepared runs and caps."""

from __future__ import annotations

from autograder.probes import probe


@probe("07_oom.estimate")
def estimate(runs: list[dict], estimate_peak_bytes) -> list[float]:
    return [float(estimate_peak_bytes(run["config"], run["batch_size"], run["seq_len"], run["grad_checkpointing"]))
            for run in runs]


@probe("07_oom.fits")
def fits(case: dict, predict_fits) -> list[bool]:
    return [bool(answer) for answer in predict_fits(case["runs"], case["cap"])]


@probe("07_oom.fix")
def fix(case: dict, choose_fix) -> dict:
    answer = choose_fix(case["effective_batch"], case["cap"])
    return {"batch_size": int(answer["batch_size"]), "grad_accum_steps": int(answer["grad_accum_steps"]),
            "grad_checkpointing": bool(answer["grad_checkpointing"])}
