"""Levels 0, 1 and 3 as a user meets them: printed lines, a log file from rank 0 only, a JSONL that survives
being killed, events for NaN and OOM, and a reader that says which line is broken."""

import json
import math
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from chapters.core.callbacks import Callback
from chapters.logging_levels.level1_logging import LOG_NAME as TEXT_LOG
from chapters.records.jsonl import MetricsLogError, read_metrics_log
from chapters.monitoring import monitoring_callbacks, parse_levels
from tests.conftest import REPO, clinic, run_tiny


def test_level0_prints_each_record_on_one_line(tmp_path, capsys):
    run_tiny(steps=4, log_every=2, eval_every=100, callbacks=monitoring_callbacks(tmp_path, levels=(0,)))
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" | ")[0] for line in lines] == ["step 2", "step 4", "step 4"]
    assert "train_loss" in lines[0] and "val_loss" in lines[2]
    assert not (tmp_path / "metrics.jsonl").exists()  # level 0 keeps nothing


def test_level1_writes_timestamped_lines_to_its_file(tmp_path):
    run_tiny(steps=4, log_every=2, eval_every=100, callbacks=monitoring_callbacks(tmp_path, levels=(1,), console=False))
    lines = (tmp_path / TEXT_LOG).read_text().splitlines()
    assert "run started" in lines[0] and "run ended: completed after 4 steps" in lines[-1]
    step_lines = [line for line in lines if "| step " in line]
    assert len(step_lines) == 3
    time_stamp, level, message = step_lines[0].split(" | ", 2)
    assert time.strptime(time_stamp.split(",")[0], "%Y-%m-%d %H:%M:%S") and level == "INFO"
    assert message.startswith("step 2 | train_loss")


def test_level1_stays_silent_on_ranks_other_than_zero(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    run_tiny(steps=2, log_every=1, callbacks=monitoring_callbacks(tmp_path, levels=(1,), console=False))
    assert not (tmp_path / TEXT_LOG).exists()


def test_oom_is_recorded_as_an_event_before_the_error_propagates(tmp_path):
    class RunOutOfMemory(Callback):
        def on_before_optimizer_step(self, trainer):
            if trainer.step == 2:
                raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    with pytest.raises(torch.OutOfMemoryError):
        run_tiny(steps=5, log_every=1, callbacks=[*monitoring_callbacks(tmp_path), RunOutOfMemory()])
    events = read_metrics_log(tmp_path).events
    assert [e["event"] for e in events] == ["run_start", "oom", "run_end"]
    assert events[1]["step"] == 2 and "Tried to allocate 2.00 GiB" in events[1]["message"]
    assert events[2]["status"] == "oom"


def test_log_level_parsing():
    assert parse_levels("3") == (3,) and parse_levels("3,2") == (2, 3)
    for bad in ("4", "", "2,x", "-1"):
        with pytest.raises(ValueError, match="accepted: 0, 1, 2, 3"):
            parse_levels(bad)


def test_clinic_train_log_levels_choose_the_files(tmp_path):
    default = clinic("train", "--steps", "2", "--log-every", "1", "--out", str(tmp_path / "a"), "--quiet")
    assert default.returncode == 0, default.stderr
    assert (tmp_path / "a" / "metrics.jsonl").is_file() and not (tmp_path / "a" / "tensorboard").exists()
    both = clinic("train", "--steps", "2", "--out", str(tmp_path / "b"), "--quiet", "--log-level", "2,3")
    assert both.returncode == 0, both.stderr
    assert (tmp_path / "b" / "metrics.jsonl").is_file() and any((tmp_path / "b" / "tensorboard").iterdir())


def test_clinic_train_rejects_an_unknown_log_level_in_one_line(tmp_path):
    result = clinic("train", "--steps", "2", "--out", str(tmp_path), "--log-level", "4")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "--log-level" in result.stderr and "accepted: 0, 1, 2, 3" in result.stderr
    assert not (tmp_path / "metrics.jsonl").exists()


def test_sigkill_mid_run_leaves_a_parseable_jsonl(tmp_path):
    log = tmp_path / "metrics.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "chapters.cli", "train", "--steps", "100000", "--log-every", "1", "--quiet",
         "--out", str(tmp_path)],
        env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not (log.exists() and log.read_text().count('"train_loss"') >= 3):  # poll: is it logging yet?
            assert process.poll() is None, "the training process ended before it was killed"
            assert time.monotonic() < deadline, "no metric records within 120 s"
            time.sleep(0.1)
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait(timeout=30)
    text = log.read_text()
    complete = text.split("\n")[:-1]  # everything before the last newline is a complete line
    records = [json.loads(line) for line in complete]
    assert records[0]["event"] == "run_start" and sum("train_loss" in r for r in records) >= 3
    parsed = read_metrics_log(log)
    assert parsed.problems == [] and len(parsed.metrics) >= 3


def write_log(tmp_path, text: str):
    path = tmp_path / "metrics.jsonl"
    path.write_text(text)
    return path


GOOD = '{"step": 1, "train_loss": 2.5}\n'


def test_reader_tolerates_a_truncated_last_line(tmp_path):
    log = read_metrics_log(write_log(tmp_path, GOOD + '{"step": 2, "train_lo'))
    assert log.truncated_tail and log.problems == [] and log.metrics == [{"step": 1, "train_loss": 2.5}]


def test_reader_reports_malformed_lines_by_number(tmp_path):
    log = read_metrics_log(write_log(tmp_path, GOOD + "not json\n[1, 2]\n" + '{"step": 2, "train_loss": NaN}\n'))
    assert log.problems == ["line 2: not valid JSON", "line 3: a JSON list, not an object"]
    assert not log.truncated_tail
    assert [r["step"] for r in log.metrics] == [1, 2] and math.isnan(log.metrics[1]["train_loss"])


@pytest.mark.parametrize("content, message", [(b"", "contains no records"), (b"\x00\x01binary", "binary file"),
                                              (b"garbage\n", "contains no records (1 malformed lines; first, line 1: not valid JSON)")])
def test_reader_refuses_unusable_logs_with_one_clear_message(tmp_path, content, message):
    path = tmp_path / "metrics.jsonl"
    path.write_bytes(content)
    with pytest.raises(MetricsLogError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_metrics_log(path)


def test_level1_console_lines_carry_timestamps(tmp_path, capsys):
    run_tiny(steps=2, log_every=1, eval_every=100, callbacks=monitoring_callbacks(tmp_path, levels=(1,)))
    console = [line for line in capsys.readouterr().err.splitlines() if "| INFO | step " in line]
    assert len(console) == 3 and console[0].split(" | ")[2] == "step 1"


def test_wandb_is_skipped_with_a_note_when_not_installed(tmp_path, monkeypatch, capsys):
    import chapters.monitoring as monitoring

    monkeypatch.setattr(monitoring, "wandb_available", lambda: False)
    writers = monitoring.writer_callbacks(tmp_path, levels=(2,), wandb=True)
    assert [type(w).__name__ for w in writers] == ["TensorBoardLogger", "LayerHistograms"]  # no WandbLogger
    assert "wandb is not installed" in capsys.readouterr().err
