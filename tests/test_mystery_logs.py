"""The capstone's mystery logs: the fault starts at the drawn step, and nothing in the log names it."""

from __future__ import annotations

import json

from chapters.labelled_runs import Case, recipe
from chapters.mystery_runs import MYSTERY_FAULTS, draw_cases, write_mystery_logs
from chapters.records.jsonl import read_metrics_log


def test_onset_at_moves_the_fault_and_defaults_to_the_benchmark_step():
    assert recipe(Case("mlp", "divergence", 0))["onset"] == 400 // 3
    assert recipe(Case("mlp", "divergence", 0, onset_at=77))["onset"] == 77
    assert recipe(Case("mlp", "oom", 0))["onset"] == 2 * (400 // 3)
    assert recipe(Case("mlp", "oom", 0, onset_at=91))["onset"] == 91


def test_draws_differ_by_seed_and_name_different_faults():
    first, second = draw_cases(1), draw_cases(2)
    assert first != second
    for cases in (first, second):
        assert len({case.fault for case in cases}) == len(cases)
        assert all(case.fault in MYSTERY_FAULTS for case in cases)


def test_logs_keep_their_evidence_but_not_the_recipe(tmp_path):
    cases = draw_cases(0)  # oom, loss_plateau, nan_loss
    assert "oom" in {case.fault for case in cases}
    for case, path in zip(cases, write_mystery_logs(0, tmp_path)):
        text = path.read_text()
        log = read_metrics_log(path)
        start = next(e for e in log.events if e["event"] == "run_start")
        assert "config" not in start and case.fault not in json.dumps(start)
        assert {"total_params", "trainable_params"} <= set(start)
        assert any("train_loss" in record for record in log.metrics)
        if case.fault == "oom":
            assert next(e for e in log.events if e["event"] == "oom")["step"] == case.onset_at
        json.loads(text.splitlines()[0])  # still one JSON object per line
