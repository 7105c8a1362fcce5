"""The training doctor: bad input never crashes it, the fast reader agrees with the tolerant one, and
benchmark runs with injected faults get the right label (healthy ones get none)."""

from __future__ import annotations

import json
import math
import select
import subprocess
import sys
import time

import pytest

from chapters.cli import main
from chapters.doctor import LABELS, diagnose
from chapters.labelled_runs import Case, generate
from chapters.doctor.live import DoctorCallback
from chapters.doctor.rules import MACHINE
from chapters.records import runlog
from chapters.records.runlog import RunLog
from tests.conftest import REPO, clinic, run_tiny


def record(step, loss, **extra):
    return {"step": step, "epoch": 0, "timestamp": 1.7e9 + step, "train_loss": loss, "lr": 1e-3,
            "tokens_per_sec": 1000.0, **extra}


def healthy_lines(count=60, start=0):
    """A minimal course-text log: loss falling like 2.0 -> 1.0 with a little deterministic wobble."""
    lines = [json.dumps(record(s, 1.0 + math.exp(-s / 15) + 0.01 * ((s * 7) % 5), gpu_memory_gb=0.5))
             for s in range(start + 1, start + count + 1)]
    lines += [json.dumps({"step": s, "epoch": 0, "timestamp": 1.7e9 + s, "val_loss": 1.05 + math.exp(-s / 15)})
              for s in range(10, start + count + 1, 10)]
    return lines


def write(tmp_path, lines, name="metrics.jsonl", end="\n"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + end)
    return path


def run_cli(capsys, *args):
    code = main(["diagnose", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("content, message", [
    (b"", "contains no records"),
    (b"   \n\n \t\n", "contains no records"),
    (b"\x00\x01\x02binary\xff", "binary"),
    (b'{"epoch": 0, "train_loss": 1.0}\n', "without a step"),
])
def test_unusable_logs_exit_2_with_one_line(tmp_path, capsys, content, message):
    path = tmp_path / "metrics.jsonl"
    path.write_bytes(content)
    code, out, err = run_cli(capsys, path)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_a_log_whose_every_metric_line_is_malformed_is_refused_not_called_healthy(tmp_path, capsys):
    # An epoch-per-line log without steps, beside a run_start: until 2026-12-02, "healthy -- no rule fired".
    lines = [json.dumps({"event": "run_start", "step": 0, "num_classes": 10})]
    lines += [json.dumps({"epoch": e, "train_loss": 2.0, "val_loss": 2.0 + e}) for e in range(20)]
    code, out, err = run_cli(capsys, write(tmp_path, lines))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "no usable metric record (20 malformed lines; first, line 2: a metric record without a step)" in err


def test_a_log_with_malformed_metrics_and_an_oom_event_is_still_judged(tmp_path, capsys):
    lines = [json.dumps({"event": "run_start", "step": 0}), json.dumps({"train_loss": 2.0}),
             json.dumps({"event": "oom", "step": 3, "message": "CUDA out of memory"})]
    code, out, _ = run_cli(capsys, write(tmp_path, lines), "--json")
    assert code == 0 and json.loads(out)["findings"][0]["anomaly"] == "oom"


def test_directory_without_log_exits_2(tmp_path, capsys):
    code, _, err = run_cli(capsys, tmp_path)
    assert code == 2 and "holds no metrics.jsonl" in err


def test_malformed_lines_are_reported_with_line_numbers_and_skipped(tmp_path, capsys):
    lines = healthy_lines()
    lines[3] = "this is not json"
    lines[7] = "[1, 2, 3]"
    code, out, err = run_cli(capsys, write(tmp_path, lines), "--json")
    assert code == 0 and json.loads(out) == {"verdict": "healthy", "findings": []}
    assert "line 4: not valid JSON" in err and "line 8: a JSON list, not an object" in err


def test_records_without_step_are_skipped_and_counted(tmp_path, capsys):
    lines = healthy_lines() + [json.dumps({"train_loss": 9.0})]
    code, out, err = run_cli(capsys, write(tmp_path, lines), "--json")
    assert code == 0 and json.loads(out)["verdict"] == "healthy"
    assert f"line {len(lines)}: a metric record without a step" in err


def test_numbers_written_as_strings_are_named_by_line_not_guessed(tmp_path):
    """The contract's types hold on both read paths: pandas' fast parser would read ``"0.5"`` as 0.5, the
    line reader refuses it -- so the fast path hands such a log to the line reader, and the answer is one."""
    lines = healthy_lines()
    lines.append(json.dumps({"step": "61", "train_loss": 0.5}))
    lines.append(json.dumps({"step": 62, "train_loss": "NaN"}))
    run = RunLog.load(write(tmp_path, lines))
    assert run.train["step"].iloc[-1] == 60
    count = len(lines)
    assert run.skipped_lines == [f"line {count - 1}: step is a str, not an integer",
                                 f"line {count}: train_loss is a str, not a number"]


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_tokens_are_a_nan_finding_not_a_crash(tmp_path, token):
    lines = healthy_lines() + [json.dumps(record(61, 0.123)).replace("0.123", token)]
    finding = diagnose(write(tmp_path, lines)).findings[0]
    assert (finding.anomaly, finding.step) == ("nan_loss", 61)


def test_resumed_run_keeps_the_later_record_of_each_step(tmp_path):
    # steps 1-60, then a resume from step 40 that rewrites 41-60 with other values and goes on to 80
    first = healthy_lines(60)
    resumed = [json.dumps(record(s, 0.5, gpu_memory_gb=0.5)) for s in range(41, 81)]
    run = RunLog.load(write(tmp_path, first + resumed))
    assert run.train["step"].is_monotonic_increasing and run.train["step"].is_unique
    assert run.train.set_index("step").loc[50, "train_loss"] == 0.5
    assert any("backwards" in note for note in run.notes)


def test_duplicated_steps_and_truncated_last_line(tmp_path, capsys):
    lines = healthy_lines()
    lines.insert(10, lines[9])
    path = write(tmp_path, lines + ['{"step": 61, "train_lo'], end="")
    code, out, err = run_cli(capsys, path)
    assert code == 0 and out.startswith("verdict: healthy")
    assert "cut off" in out and "repeat a step" in out


def test_fast_reader_agrees_with_the_tolerant_reader(tmp_path, monkeypatch):
    lines = healthy_lines() + [json.dumps(record(61, float("nan"), **{"grad_norm/input layer": 0.5}))]
    lines.insert(0, json.dumps({"event": "run_start", "config": {"a": [1, 2]}, "loss_floor": 0.9}))
    path = write(tmp_path, lines)
    fast = RunLog.load(path)
    monkeypatch.setattr(runlog, "fast_columns", lambda raw: None)
    slow = RunLog.load(path)
    for name in ("train", "evals", "nonfinite", "all_rows"):
        left, right = getattr(fast, name), getattr(slow, name)
        assert left.sort_index(axis=1).equals(right.sort_index(axis=1)), name
    assert fast.run_start == slow.run_start


# --------------------------------------------------------------------------------------- the output
def test_json_document_shape(tmp_path, capsys):
    lines = healthy_lines() + [json.dumps(record(61, float("nan")))]
    code, out, _ = run_cli(capsys, write(tmp_path, lines), "--json")
    document = json.loads(out)
    assert code == 0 and set(document) == {"verdict", "findings"} and document["verdict"] == "anomalous"
    for finding in document["findings"]:
        assert set(finding) == {"anomaly", "confidence", "step", "evidence", "fix"}
        assert finding["anomaly"] in LABELS and 0 <= finding["confidence"] <= 1


def test_minimal_course_log_of_a_healthy_run_has_no_findings(tmp_path):
    assert diagnose(write(tmp_path, healthy_lines(200))).findings == []


# ------------------------------------------------------------------------- oscillation vs divergence
def jump_then(settle_at, count=150):
    """Loss 3.5 that jumps to 7 for steps 4-10, then goes to ``settle_at`` (x its start) with a wobble."""
    def loss(step):
        if 4 <= step <= 10:
            return 7.0
        level = 3.5 * (settle_at + (1 - settle_at) * math.exp(-max(step - 10, 0) / 20))
        return level * (1 + 0.05 * ((step * 7) % 5 - 2) / 2)
    return [json.dumps(record(s, loss(s))) for s in range(1, count + 1)]


@pytest.mark.parametrize("settle_at, label, other", [(0.7, "oscillation", "divergence"),
                                                      (1.6, "divergence", "oscillation")])
def test_a_jump_that_falls_back_is_a_swing_and_one_that_stays_up_is_divergence(tmp_path, settle_at, label, other):
    findings = {f.anomaly: f for f in diagnose(write(tmp_path, jump_then(settle_at))).findings}
    assert label in findings and other not in findings  # the two rules split the cases, never both
    assert abs(findings[label].step - 4) <= 3  # the jump's start, within half the smoothing window (7 points)


def test_regular_swings_around_a_falling_trend_are_oscillation(tmp_path):
    # Period-2 bouncing (+-30 %) around a trend from 3 to 1.5: what GD does near LR = 2 / curvature.
    lines = [json.dumps(record(s, (1.5 + 1.5 * math.exp(-s / 40)) * (1.3 if s % 2 else 0.75)))
             for s in range(1, 201)]
    findings = diagnose(write(tmp_path, lines)).findings
    assert findings and findings[0].anomaly == "oscillation"
    assert "regular" in findings[0].evidence


# -------------------------------------------------------------------------------------- benchmark slice
@pytest.mark.parametrize("case", [
    Case("mlp", "healthy", 2), Case("mlp", "healthy_noisy", 3, minimal=True), Case("mlp", "nan_loss", 2),
    Case("mlp", "frozen_parameters", 2), Case("mlp", "leakage", 3, minimal=True), Case("mlp", "oom", 2),
    Case("mlp", "vanishing_gradients", 2), Case("mlp", "loss_plateau", 3, minimal=True),
    Case("gru", "no_shuffle", 2),
], ids=lambda case: case.name)
def test_benchmark_slice_gets_the_injected_label(tmp_path, case):
    # None of these cases is about the machine, and their logs carry the real clock of this machine: a
    # neighbour that takes the cores halfway through the run halves tokens_per_sec, which is a true
    # throughput_drop of *this* run (ranked after everything about the training, rules.MACHINE). The test
    # asks about the training, so it cannot depend on how busy the machine is today.
    findings = [f for f in diagnose(generate(case, tmp_path)).findings if f.anomaly not in MACHINE]
    if case.label is None:
        assert findings == []
    else:
        assert findings and findings[0].anomaly == case.label


# --------------------------------------------------------------------------------------------- live
def test_callback_stops_a_run_whose_loss_goes_nan():
    doctor = DoctorCallback(stop_on={"nan_loss"})
    trainer, history = run_tiny(60, [doctor], lr=30.0, grad_clip=0.0, warmup_steps=2, log_every=2,
                                batch_size=8, eval_every=1000)
    assert "nan_loss" in doctor.findings and trainer.should_stop
    assert trainer.step < 60 and not math.isfinite(history.series("train_loss")[-1])


def test_train_rejects_an_unknown_stop_on_label():
    result = clinic("train", "--stop-on", "nan_loss,boredom", "--steps", "1")
    assert result.returncode == 2 and "unknown label boredom" in result.stderr
    assert result.stderr.count("\n") == 1


def test_follow_prints_a_finding_when_the_growing_log_shows_it(tmp_path):
    path = tmp_path / "metrics.jsonl"
    env = {"PYTHONPATH": str(REPO)}
    import os

    process = subprocess.Popen([sys.executable, "-m", "chapters.cli", "diagnose", "--follow", str(tmp_path),
                                "--json", "--idle-timeout", "60"], stdout=subprocess.PIPE, text=True,
                               env={**os.environ, **env})
    try:
        with open(path, "w") as log:
            log.write("\n".join(healthy_lines(30)) + "\n")
            log.flush()
            log.write(json.dumps(record(31, float("nan"))) + "\n")
            log.flush()
            deadline = time.monotonic() + 60  # bounded polling: generous for a loaded CI machine
            line = ""
            while time.monotonic() < deadline and "nan_loss" not in line:
                if select.select([process.stdout], [], [], 0.5)[0]:
                    line = process.stdout.readline()
            assert json.loads(line)["anomaly"] == "nan_loss"
            log.write(json.dumps({"event": "run_end", "step": 31, "status": "failed"}) + "\n")
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()


def test_unreadable_values_are_not_mistaken_for_nan(tmp_path):
    lines = healthy_lines() + [json.dumps({"step": 61, "train_loss": "abc"}), json.dumps({"step": 62, "train_loss": [1]})]
    assert diagnose(write(tmp_path, lines)).findings == []


def test_a_log_of_events_only_is_analysed(tmp_path, capsys):
    lines = [json.dumps({"event": "run_start", "step": 0}),
             json.dumps({"event": "oom", "step": 5, "message": "CUDA out of memory"})]
    code, out, _ = run_cli(capsys, write(tmp_path, lines), "--json")
    assert code == 0 and json.loads(out)["findings"][0]["anomaly"] == "oom"


def test_train_stop_on_nan_ends_the_run_early(tmp_path):
    result = clinic("train", "--steps", "40", "--lr", "100000", "--stop-on", "nan_loss", "--quiet",
                    "--batch-size", "8", "--log-every", "2", "--out", str(tmp_path))
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert result.returncode == 0 and "nan_loss" in result.stderr
    assert summary["status"] == "stopped" and summary["steps"] < 40
