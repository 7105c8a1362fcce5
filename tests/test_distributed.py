"""Multi-process training through the real ``torchrun`` (gloo, 2 CPU processes): one writer, global metrics
equal to a single process with the same global batch, resume, and failing fast when a rank dies or hangs.

Tolerance: a 2-rank run and a 1-process run with the same global batch see the same examples, but sum
them in a different order (per shard, then across ranks), so float32 losses may differ in the last bits;
after 20 steps they agree to ``LOSS_TOLERANCE``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest
import torch

from chapters.core.data import make_loader, markov_corpus
from chapters.records.jsonl import read_metrics_log
from tests.conftest import REPO, clinic

LOSS_TOLERANCE = 1e-5
STEPS = ["--preset", "tiny", "--steps", "20", "--log-every", "5", "--eval-every", "10", "--quiet"]
CHILD_ENV = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}


def torchrun(*args, processes=2, timeout=240, module="chapters.cli"):
    """``torchrun --standalone --nproc_per_node=N -m MODULE ARGS`` against this checkout."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}",
               "-m", module, *args]
    with tempfile.TemporaryDirectory() as scratch:  # torchrun leaves a torchelastic_* folder in TMPDIR
        return subprocess.run(command, capture_output=True, text=True, env={**CHILD_ENV, "TMPDIR": scratch},
                              timeout=timeout)


def losses(run_dir):
    """{(step, key): value} for every train_loss and val_loss record."""
    return {(r["step"], key): r[key] for r in read_metrics_log(run_dir).metrics
            for key in ("train_loss", "val_loss") if key in r}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same 20 steps twice: 2 ranks x batch 16 under torchrun, and 1 process x batch 32."""
    root = tmp_path_factory.mktemp("distributed")
    two = torchrun("train", *STEPS, "--batch-size", "16", "--log-level", "0,2,3", "--out", str(root / "two"),
                   "--ckpt-dir", str(root / "ckpt"), "--save-every", "10")
    one = clinic("train", *STEPS, "--batch-size", "32", "--out", str(root / "one"))
    assert two.returncode == 0, two.stderr[-3000:]
    assert one.returncode == 0, one.stderr
    return root, two


def test_two_ranks_write_one_log_with_global_metrics(runs):
    root, result = runs
    assert [p.relative_to(root) for p in root.rglob("metrics.jsonl")] == [
        p.relative_to(root) for p in (root / "one" / "metrics.jsonl", root / "two" / "metrics.jsonl")]
    log = read_metrics_log(root / "two")
    assert [e["event"] for e in log.events] == ["run_start", "run_end"]
    train = [r for r in log.metrics if "train_loss" in r]
    assert [r["step"] for r in train] == [5, 10, 15, 20]  # each step once: one writer
    for record in train:
        assert 0 < record["step_time_min"] <= record["step_time_max"]
        assert record["step_time_slowest_rank"] in (0, 1) and record["tokens_per_sec"] > 0
    assert log.events[0]["steps_per_epoch"] == len(markov_corpus(64).train) // 2 // 16
    # Every level has one writer: Level 0 printed each record once, TensorBoard wrote one event file.
    assert result.stdout.count("step 5 | train_loss") == 1 and result.stdout.count("train loss") == 1
    assert len(list((root / "two").rglob("events.out.tfevents.*"))) == 1
    summary = json.loads((root / "two" / "summary.json").read_text())
    assert summary["status"] == "completed" and f"train loss {summary['train_loss']:.4f}" in result.stdout


def test_two_ranks_match_one_process_with_the_same_global_batch(runs):
    root, _ = runs
    two, one = losses(root / "two"), losses(root / "one")
    assert two.keys() == one.keys() and len(two) == 6  # 4 train records, 2 evaluations
    for key in one:
        assert two[key] == pytest.approx(one[key], abs=LOSS_TOLERANCE), key


def test_resume_under_torchrun_continues_the_same_run(runs):
    """Rank 0 wrote the checkpoints; both ranks load one. Spoil the step-20 checkpoint so resume falls
    back to step 10; steps 11-20 must then repeat the uninterrupted run."""
    root, _ = runs
    assert sorted(p.name for p in (root / "ckpt").glob("step-*.pt")) == ["step-00000010.pt", "step-00000020.pt"]
    (root / "ckpt" / "step-00000020.pt").write_bytes(b"torn")
    resumed = torchrun("train", *STEPS, "--batch-size", "16", "--out", str(root / "resumed"),
                       "--ckpt-dir", str(root / "ckpt"), "--save-every", "10", "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert resumed.stdout.count("resumed from") == 1  # rank 0 reports, rank 1 is silent
    again, original = losses(root / "resumed"), losses(root / "two")
    assert sorted(again) == [(15, "train_loss"), (20, "train_loss"), (20, "val_loss")]
    for key in again:
        assert again[key] == pytest.approx(original[key], abs=LOSS_TOLERANCE), key


def test_log_all_ranks_prints_every_record_once_per_rank(tmp_path):
    result = torchrun("train", "--preset", "tiny", "--steps", "2", "--log-every", "2", "--quiet",
                      "--log-all-ranks", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("step 2 | train_loss") == 2  # the Level-0 mess, on purpose
    assert [r["step"] for r in read_metrics_log(tmp_path).metrics if "train_loss" in r] == [2]  # files: one writer


def test_shards_of_two_ranks_make_the_single_process_batch():
    dataset = markov_corpus(64).train
    single = next(iter(make_loader(dataset, 8, shuffle=True, seed=3, epoch=2)))["input_ids"]
    shards = [next(iter(make_loader(dataset, 4, shuffle=True, seed=3, epoch=2, rank=r, world_size=2)))["input_ids"]
              for r in (0, 1)]
    as_rows = lambda batch: sorted(map(tuple, batch.tolist()))  # noqa: E731 -- order inside a batch is irrelevant
    assert as_rows(torch.cat(shards)) == as_rows(single)
    assert as_rows(shards[0]) != as_rows(shards[1])


# ------------------------------------------------------------------------------- a rank dies or hangs
def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_ranks(out, *extra):
    """Two ranks started the way torchrun starts them (its environment variables), but without torchrun's
    agent, which would kill the survivors itself: here the survivors must notice on their own."""
    port, ranks = free_port(), []
    for rank in (0, 1):
        env = {**CHILD_ENV, "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": "2",
               "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
        ranks.append(subprocess.Popen(
            [sys.executable, "-m", "chapters.cli", "train", "--preset", "tiny", "--steps", "100000", "--log-every", "1",
             "--quiet", "--out", str(out), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
    return ranks


def wait_for_training(out, ranks, deadline_s=120):
    """Poll rank 0's log until it holds a metric record: both ranks are in the training loop."""
    deadline = time.monotonic() + deadline_s
    log = out / "metrics.jsonl"
    while time.monotonic() < deadline:
        if log.exists() and '"train_loss"' in log.read_text():
            return
        assert all(rank.poll() is None for rank in ranks), "a rank exited before training started"
        time.sleep(0.2)
    pytest.fail("the ranks did not start training in time")


@pytest.mark.parametrize("how", ["killed", "frozen"])
def test_survivor_exits_with_a_clear_error_when_a_rank_dies_or_hangs(tmp_path, how):
    """killed: the peer's connection closes at once. frozen (SIGSTOP): the connection stays open and only
    the process-group timeout (--dist-timeout 5) ends the wait."""
    ranks = start_ranks(tmp_path, "--dist-timeout", "5")
    try:
        wait_for_training(tmp_path, ranks)
        os.kill(ranks[1].pid, signal.SIGKILL if how == "killed" else signal.SIGSTOP)
        _, stderr = ranks[0].communicate(timeout=60)  # no hang: well within a minute
        assert ranks[0].returncode == 1
        assert "clinic train: rank 0: lost contact with another rank" in stderr and "Traceback" not in stderr
        run_end = read_metrics_log(tmp_path).events[-1]  # rank 0's log says how its run ended
        assert (run_end["event"], run_end["status"]) == ("run_end", "failed")
    finally:
        for rank in ranks:
            if rank.poll() is None:
                rank.kill()  # SIGKILL also ends a stopped process
            rank.communicate()



def test_fsdp_on_cpu_stores_half_the_parameters_per_rank_and_trains_the_same():
    sharded = torchrun(module="chapters.memory.fsdp_cpu")
    single = subprocess.run([sys.executable, "-m", "chapters.memory.fsdp_cpu"], capture_output=True, text=True,
                            env=CHILD_ENV, timeout=240)
    assert sharded.returncode == 0 and single.returncode == 0, sharded.stderr[-3000:] + single.stderr
    [two], [one] = [[json.loads(line) for line in r.stdout.splitlines()] for r in (sharded, single)]  # rank 0 only
    assert one["stored_parameters"] == one["parameters"]
    assert one["parameters"] / 2 <= two["stored_parameters"] < 0.51 * one["parameters"]  # half, plus padding
    assert two["loss"] == pytest.approx(one["loss"], abs=LOSS_TOLERANCE)
