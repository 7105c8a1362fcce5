"""Level 2: TensorBoard's own reader, and a real TensorBoard server, see exactly what metrics.jsonl holds."""

import json
import math
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from chapters.core.callbacks import Callback
from chapters.logging_levels.level2_tensorboard import TB_DIR
from chapters.records.jsonl import read_metrics_log
from chapters.monitoring import monitoring_callbacks
from tests.conftest import run_tiny


class PoisonWeights(Callback):
    """After step ``at``, fills the token embedding with NaN: the next step's loss is NaN."""

    def __init__(self, at: int):
        self.at = at

    def on_step_end(self, trainer):
        if trainer.step == self.at:
            trainer.model.token_embedding.weight.data.fill_(math.nan)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("tb_run")
    run_tiny(steps=6, log_every=1, eval_every=3, callbacks=[*monitoring_callbacks(run_dir, levels=(2, 3))])
    return run_dir


@pytest.fixture(scope="module")
def nan_run_dir(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("nan_run")
    run_tiny(steps=6, log_every=1, eval_every=100,
             callbacks=[*monitoring_callbacks(run_dir, levels=(2, 3)), PoisonWeights(at=3)])
    return run_dir


def jsonl_series(run_dir) -> dict[str, list[tuple[int, float]]]:
    """{tag: [(step, value)]} from metrics.jsonl, in file order."""
    series = {}
    for record in read_metrics_log(run_dir).metrics:
        for key, value in record.items():
            if key not in ("step", "timestamp"):
                series.setdefault(key, []).append((record["step"], value))
    return series


def same_numbers(a: float, b: float) -> bool:
    """Equal up to float32 rounding (TensorBoard stores float32), NaN equal to NaN."""
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-6, abs=1e-30)


def test_event_files_hold_the_jsonl_tags_and_values(run_dir):
    accumulator = EventAccumulator(str(run_dir / TB_DIR))
    accumulator.Reload()
    expected = jsonl_series(run_dir)
    assert set(accumulator.Tags()["scalars"]) == set(expected)
    assert {"train_loss", "val_loss", "grad_norm/attention", "update_ratio/mlp"} <= set(expected)
    for tag, points in expected.items():
        got = [(event.step, event.value) for event in accumulator.Scalars(tag)]
        assert [s for s, _ in got] == [s for s, _ in points], tag
        assert all(same_numbers(g, e) for (_, g), (_, e) in zip(got, points)), tag


def test_nan_loss_is_nan_in_jsonl_and_tensorboard_and_raises_one_nan_event(nan_run_dir):
    log = read_metrics_log(nan_run_dir)
    losses = {r["step"]: r["train_loss"] for r in log.metrics if "train_loss" in r}
    assert all(math.isfinite(losses[s]) for s in (1, 2, 3))
    assert all(math.isnan(losses[s]) for s in (4, 5, 6))  # written as NaN, never dropped
    assert '"train_loss": NaN' in log.path.read_text()
    nan_events = [e for e in log.events if e["event"] == "nan"]
    assert [(e["step"], e["tensor"]) for e in nan_events] == [(4, "loss")]
    assert all(r["nonfinite_grads"] > 0 for r in log.metrics if r.get("step", 0) >= 4 and "train_loss" in r)

    accumulator = EventAccumulator(str(nan_run_dir / TB_DIR))
    accumulator.Reload()
    tb_losses = {event.step: event.value for event in accumulator.Scalars("train_loss")}
    assert all(math.isnan(tb_losses[s]) for s in (4, 5, 6)) and math.isfinite(tb_losses[3])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def test_a_real_tensorboard_server_serves_the_scalars(run_dir):
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tensorboard.main", "--logdir", str(run_dir), "--host", "127.0.0.1",
         "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}/data/plugin/scalars"
    try:
        deadline = time.monotonic() + 90
        tags = {}
        while "train_loss" not in tags.get(TB_DIR, {}):  # poll until it has started and loaded the run
            assert server.poll() is None, f"tensorboard exited: {server.stderr.read().decode()[-500:]}"
            assert time.monotonic() < deadline, "tensorboard did not serve the run within 90 s"
            try:
                tags = get_json(f"{base}/tags")
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.2)  # not listening yet: poll again
        served = get_json(f"{base}/scalars?run={TB_DIR}&tag=train_loss")  # [[wall_time, step, value], ...]
        expected = jsonl_series(run_dir)["train_loss"]
        assert [step for _, step, _ in served] == [step for step, _ in expected]
        assert all(same_numbers(v, e) for (_, _, v), (_, e) in zip(served, expected))
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
