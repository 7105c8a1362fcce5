"""Every scenario on the CPU: the broken run shows its symptom, the fixed run does not, and a re-run with
the same seed logs bit-identical metrics."""

import json
import math

import numpy as np
import pytest

from chapters.doctor import diagnose, diagnose_run
from chapters.scenarios import SCENARIOS, nan
from chapters.records.runlog import RunLog
from chapters.scenarios.base import Options, doctor_shows, shows_symptom
from chapters.scenarios.runner import run_variant
from chapters.records.jsonl import read_metrics_log
from tests.conftest import clinic
from tests.test_doctor_rules import learning_curve, records

# Keys that measure the machine, not the training: they legitimately differ between identical runs.
MACHINE_KEYS = ("timestamp", "tokens_per_sec", "cpu_memory_gb", "gpu_memory_gb", "gpu_util", "step_time")

# Where the doctor does not (yet) name a scenario's label. Checked both ways, so a fix to the doctor shows
# up as a failing test that asks for this table to be updated.
DOCTOR_GAPS = {
    # No label fits: the loss never goes non-finite, the run dies with an index error (run_end's error).
    ("nan", "bad_token_ids"): "on the CPU the run crashes with a data error: no metric shows it",
}

CASES = [(sid, None) for sid in SCENARIOS if sid != "nan"] + [
    ("nan", cause) for cause in nan.CAUSES if nan.skip_reason(Options(cause=cause)) is None]


# Keys that measure the machine's speed. The doctor's cross-check reads the logs without them, except for a
# scenario whose symptom *is* the speed: a healthy run slows down when another process takes the CPU, and
# that must not decide a test (the throughput rule itself is tested on constructed timing in
# tests/test_doctor_rules.py).
SPEED_KEYS = ("tokens_per_sec", "step_time")


def without_speed(run_dir, out_dir):
    """A copy of the run's log with the speed measurements removed."""
    out_dir.mkdir()
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    (out_dir / "metrics.jsonl").write_text("".join(
        json.dumps({k: v for k, v in r.items() if not k.startswith(SPEED_KEYS)}) + "\n" for r in records))
    return out_dir


def training_values(run_dir):
    """Every logged value that training determines (machine measurements removed), NaN made comparable."""
    records = read_metrics_log(run_dir).metrics
    return [{k: ("nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()
             if not k.startswith(MACHINE_KEYS)} for r in records]


@pytest.mark.parametrize("scenario_id,cause", CASES, ids=[f"{s}-{c}" if c else s for s, c in CASES])
def test_broken_shows_symptom_fixed_clears_it_and_reruns_are_identical(scenario_id, cause, tmp_path):
    scenario = SCENARIOS[scenario_id]
    options = Options(seed=0, device="cpu", cause=cause)
    broken = run_variant(scenario_id, "broken", options, tmp_path / "broken")
    assert shows_symptom(scenario, broken) is scenario.EXPECT_SYMPTOM, \
        f"broken run: status {broken.status} {broken.error}"
    fixed = run_variant(scenario_id, "fixed", options, tmp_path / "fixed")
    assert fixed.status in ("completed", "stopped"), fixed.error
    assert shows_symptom(scenario, fixed) is False
    run_variant(scenario_id, "broken", options, tmp_path / "again")
    assert training_values(tmp_path / "again") == training_values(tmp_path / "broken")

    # The doctor, reading only the logs, names the scenario's label first (and nothing for the fixes).
    assert diagnose(without_speed(tmp_path / "fixed", tmp_path / "fixed-read")).findings == []
    speed_is_the_symptom = scenario.LABEL == "throughput_drop"
    broken_log = tmp_path / "broken" if speed_is_the_symptom else without_speed(tmp_path / "broken", tmp_path / "read")
    top = [f.anomaly for f in diagnose(broken_log).findings[:1]]
    expected = [scenario.LABEL] if scenario.LABEL else []
    if (scenario_id, cause) in DOCTOR_GAPS:
        assert top != expected, "the doctor now names this one: remove it from DOCTOR_GAPS"
    else:
        assert top == expected


def test_a_machine_finding_is_only_the_symptom_of_a_machine_scenario():
    # Constructed timing: a healthy loss whose speed falls to a third half-way (a stalled loader, or a
    # neighbour that took the CPU and stayed). The doctor reports it; only the straggler scenario counts it.
    rng = np.random.default_rng(3)
    count = 300
    speed = 50_000 * np.where(np.arange(count) >= 150, 0.3, 1.0) * np.exp(rng.normal(0, 0.05, count))
    run = RunLog.from_records(records(learning_curve(count, rng), speed))
    assert [f.anomaly for f in diagnose_run(run).findings] == ["throughput_drop"]
    assert doctor_shows(run, "throughput_drop")
    assert not doctor_shows(run, None) and not doctor_shows(run, "loss_plateau")


def test_fp16_without_scaler_is_skipped_on_cpu_with_a_reason():
    assert "CUDA" in nan.skip_reason(Options(device="cpu", cause="fp16_no_scaler"))


def test_nan_forensics_replay_names_the_first_nonfinite_tensor(tmp_path):
    run_variant("nan", "broken", Options(cause="all_ignored_labels"), tmp_path / "run")
    result = clinic("replay", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    assert "loss" in result.stdout and "every label in the batch is -100" in result.stdout
    assert f"step {nan.POISON_EVERY}" in result.stdout


def test_replay_of_an_lr_spike_points_at_the_gradient_norm(tmp_path):
    run_variant("nan", "broken", Options(cause="lr_spike"), tmp_path / "run")
    result = clinic("replay", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    assert "gradient" in result.stdout and "inf" in result.stdout


def test_replay_without_forensics_is_a_usage_error(tmp_path):
    result = clinic("replay", str(tmp_path))
    assert result.returncode == 2 and "nan_forensics.pt not found" in result.stderr


def test_reproduce_cli_writes_the_artifacts_and_json(tmp_path):
    result = clinic("reproduce", "lr_too_small", "--device", "cpu", "--out", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document == {"scenarios": [{**document["scenarios"][0], "id": "lr_too_small", "cause": None,
                                       "device": "cpu", "broken_symptom": True, "fixed_symptom": False}]}
    for variant in ("broken", "fixed"):  # progress on stderr, one line as each run starts and ends
        assert f"lr_too_small: {variant} run...\n" in result.stderr
        assert f"lr_too_small: {variant} run done in " in result.stderr
    for variant in ("broken", "fixed"):
        run = tmp_path / "lr_too_small" / variant
        assert (run / "metrics.jsonl").is_file() and (run / "plot.png").stat().st_size > 0
        assert list(run.glob("**/events.out.tfevents.*"))
    assert (tmp_path / "lr_too_small" / "compare.png").stat().st_size > 0


def test_a_run_that_dies_before_its_log_opens_is_named_not_a_traceback(tmp_path, monkeypatch):
    # The oom scenario's runs live in a child process; one that fails before the trainer opens its log (a
    # memory cap it could not set, say) leaves an empty run folder. That is one clear error naming the run.
    from chapters.errors import ScenarioError
    from chapters.scenarios import runner

    monkeypatch.setattr(runner, "run_isolated", lambda *args: None)  # the child died at once
    with pytest.raises(ScenarioError, match="oom broken run wrote no log"):
        run_variant("oom", "broken", Options(), tmp_path / "broken")


@pytest.mark.parametrize("args,message", [
    (["nope"], "invalid choice"),
    (["oom", "--cause", "lr_spike"], "nan scenario only"),
    (["nan", "--cause", "gremlins"], "unknown cause"),
    (["nan", "--device", "tpu"], "unknown device"),
])
def test_reproduce_bad_input(args, message):
    result = clinic("reproduce", *args)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
