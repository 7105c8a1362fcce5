"""The tuning loop: what differs between two runs is read from their logs, and the experiment log only grows."""

import json
import math

import pytest

from chapters.errors import MetricsLogError
from chapters.experiments import ABSENT, ExperimentLog, compare, config_changes
from chapters.monitoring import monitoring_callbacks
from tests.conftest import clinic, run_tiny

BASE = {"steps": 20, "log_every": 5, "eval_every": 10, "eval_batches": 1}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A baseline and three experiments: one change, the seed only, two changes."""
    made = {}
    for name, changes in (("base", {}), ("lr", {"lr": 3e-2}), ("seed", {"seed": 1}),
                          ("two", {"lr": 3e-2, "batch_size": 8})):
        made[name] = tmp_path_factory.mktemp(name)
        run_tiny(**{**BASE, **changes}, callbacks=monitoring_callbacks(made[name], levels=(3,)))
    return made


def test_one_change_is_named_and_its_effect_is_attributed(runs):
    comparison = compare(runs["base"], runs["lr"])
    assert list(comparison.changes) == ["lr"]
    assert comparison.changes["lr"][1] == 3e-2 and comparison.changes["lr"][0] != 3e-2
    assert "one change (lr)" in comparison.verdict
    text = comparison.describe()
    assert text.index("changed lr") < text.index("best_val_loss")  # what differs comes before the numbers
    assert comparison.run_outcome["best_val_loss"] != comparison.baseline_outcome["best_val_loss"]
    assert comparison.run_outcome["steps"] == 20 and comparison.run_outcome["status"] == "completed"


def test_seed_only_is_noise_and_two_changes_cannot_be_attributed(runs):
    assert "noise" in compare(runs["base"], runs["seed"]).verdict
    two = compare(runs["base"], runs["two"])
    assert sorted(two.changes) == ["batch_size", "lr"]
    assert "cannot be put on any one" in two.verdict


def test_a_run_against_itself_has_no_change(runs):
    comparison = compare(runs["base"], runs["base"])
    assert comparison.changes == {} and "same configuration" in comparison.verdict
    assert comparison.run_outcome == comparison.baseline_outcome


def test_config_changes_sees_missing_settings():
    assert config_changes({"lr": 1e-3, "dropout": 0.1}, {"lr": 1e-3, "warmup": 5}) == {
        "dropout": (0.1, ABSENT), "warmup": (ABSENT, 5)}


def test_the_experiment_log_appends_and_never_rewrites(runs, tmp_path):
    log = ExperimentLog(tmp_path / "notes" / "experiments.jsonl")
    assert log.entries() == []
    log.record(runs["lr"], runs["base"], note="is the default lr too timid?")
    first_line = log.path.read_text()
    log.record(runs["two"], runs["base"])
    assert log.path.read_text().startswith(first_line)  # the earlier experiment is still there, unchanged
    entries = log.entries()
    assert [e["note"] for e in entries] == ["is the default lr too timid?", ""]
    assert entries[0]["changed"] == {"lr": [pytest.approx(entries[0]["changed"]["lr"][0]), 3e-2]}
    assert sorted(entries[1]["changed"]) == ["batch_size", "lr"]
    assert math.isfinite(entries[0]["outcome"]["best_val_loss"])
    json.loads(log.path.read_text().splitlines()[1])  # each line is one JSON object


def test_a_log_without_run_start_config_is_refused(tmp_path):
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "train_loss": 2.0}\n')
    with pytest.raises(MetricsLogError, match="no run_start"):
        compare(tmp_path, tmp_path)


def test_clinic_compare_names_the_change_and_appends_to_the_experiment_log(runs, tmp_path):
    shown = clinic("compare", runs["base"], runs["lr"])
    assert shown.returncode == 0, shown.stderr
    assert "changed lr" in shown.stdout and "one change (lr)" in shown.stdout
    log = tmp_path / "experiments.jsonl"
    for note in ("try a higher lr", "and again"):
        result = clinic("compare", runs["base"], runs["two"], "--json", "--log", log, "--note", note)
        assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert sorted(printed["changed"]) == ["batch_size", "lr"] and "cannot be put" in printed["verdict"]
    assert [entry["note"] for entry in ExperimentLog(log).entries()] == ["try a higher lr", "and again"]


def test_clinic_compare_refuses_a_log_without_a_config_in_one_line(runs, tmp_path):
    foreign = tmp_path / "metrics.jsonl"
    foreign.write_text('{"step": 1, "train_loss": 2.0}\n')
    result = clinic("compare", runs["base"], foreign)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "no run_start with a config" in result.stderr
