"""The lesson's fault runs (chapters/labelled_runs.py): on the course Trainer, deterministic, fault at its onset."""

from __future__ import annotations

import json

from chapters.labelled_runs import MINIMAL_KEYS, NEEDS, Case, generate, recipe
from chapters.records.runlog import RunLog

MEASURED_BY_THE_CLOCK = {"timestamp", "tokens_per_sec", "cpu_memory_gb"}  # the machine's, not the seed's


def lines_without_clock(path):
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in MEASURED_BY_THE_CLOCK} for r in records]


def test_same_seed_same_log_but_for_the_clock(tmp_path):
    case = Case("gru", "nan_loss", 1)
    first, second = (lines_without_clock(generate(case, tmp_path / name)) for name in ("a", "b"))
    assert first == second
    assert lines_without_clock(generate(Case("gru", "nan_loss", 2), tmp_path / "c")) != first


def test_the_learning_rate_override_starts_at_the_onset_and_stays(tmp_path):
    case = Case("mlp", "divergence", 0, onset_at=52)
    run = RunLog.load(generate(case, tmp_path))
    lr = run.train.set_index("step")["lr"]
    base = recipe(case)["lr"]
    assert (lr[lr.index < 52] == base).all() and (lr[lr.index >= 55] == 40 * base).all()
    assert run.run_start["config"]["lr"] == base  # the config says what was asked, the records what was used


def test_a_minimal_log_keeps_the_level3_keys_and_what_the_fault_needs(tmp_path):
    case = Case("mlp", "grad_explosion", 1, minimal=True)
    records = [json.loads(line) for line in generate(case, tmp_path).read_text().splitlines()]
    assert not any("event" in r for r in records)  # no run_start, no run_end: the fault needs none
    keys = set().union(*records)
    assert keys <= MINIMAL_KEYS | NEEDS["grad_explosion"] and "grad_norm" in keys and "train_loss" in keys
