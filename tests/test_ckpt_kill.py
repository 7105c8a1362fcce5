"""Fault test: SIGKILL a training process at random moments while it checkpoints every step.

After every kill, ``clinic ckpt verify`` must find a good checkpoint no older than the last one it found, and
a last run must resume and finish. The kill moments come from a seeded generator, so a failure repeats.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import signal
import subprocess
import sys
import time

import pytest

from chapters.cli import main
from tests.conftest import REPO, clinic

TRIALS = int(os.environ.get("KILL_TRIALS", 20))
STEPS = 400


def latest_step(directory) -> int:
    try:
        return json.loads((directory / "index.json").read_text())["latest"] or 0
    except (OSError, ValueError):  # no index yet
        return 0


def verified_step(directory, capsys) -> int:
    assert main(["ckpt", "verify", str(directory)]) == 0
    return int(capsys.readouterr().out.rsplit("(step ", 1)[1].rstrip(")\n"))


def kill_during_saves(server, train_args, directory, after_step, rng) -> str:
    """Start one training process, wait for its first new checkpoint, kill it a random moment later."""
    server.stdin.write("start " + shlex.join(train_args) + "\n")
    server.stdin.flush()
    pid = int(server.stdout.readline())
    deadline = time.monotonic() + 60
    while latest_step(directory) <= after_step and time.monotonic() < deadline:
        time.sleep(0.002)
    time.sleep(rng.uniform(0, 0.05))
    os.kill(pid, signal.SIGKILL)
    server.stdin.write("wait\n")
    server.stdin.flush()
    return server.stdout.readline().strip()


@pytest.mark.timeout(180)
def test_sigkill_at_random_moments_always_leaves_a_good_checkpoint(tmp_path, capsys):
    rng = random.Random(6)
    text = tmp_path / "text.txt"
    text.write_text("the quick brown fox jumps over the lazy dog. " * 200)  # a small corpus: fast start-up
    directory = tmp_path / "ckpt"
    train_args = ["train", "--text", str(text), "--steps", str(STEPS), "--batch-size", "8", "--eval-every", "3",
                  "--save-every", "1", "--top-k", "2", "--ckpt-dir", str(directory),
                  "--out", str(tmp_path / "run"), "--quiet", "--resume"]
    server = subprocess.Popen([sys.executable, "-m", "tests.fork_server"], cwd=REPO, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    previous = 0
    try:
        for _ in range(TRIALS):
            outcome = kill_during_saves(server, train_args, directory, previous, rng)
            assert outcome == "killed 9", f"the run was not killed mid-training ({outcome}): raise STEPS"
            step = verified_step(directory, capsys)
            assert step >= previous  # a checkpoint that was complete is never lost
            previous = step
    finally:
        server.stdin.close()
        server.wait()
    # Resume works: the next run starts from the verified checkpoint and trains on (3 steps, to stay quick).
    finished = clinic(*train_args, "--steps", str(previous + 3))
    assert finished.returncode == 0, finished.stderr
    assert f"resumed from {directory}" in finished.stdout and f"(step {previous})" in finished.stdout
    assert verified_step(directory, capsys) == previous + 3
