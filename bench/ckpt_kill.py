"""SIGKILL a checkpointing training run at random moments, many times; print what each kill left behind.

    python bench/ckpt_kill.py [--trials 100] [--seed 0]

Each trial forks a fresh ``clinic train --resume`` (tests/fork_server.py), waits for its next checkpoint,
kills it a random 0-50 ms later, then classifies the directory: ``clean`` (only indexed files), ``debris``
(a half-written ``.tmp-`` file: killed mid-write), ``orphan`` (a finished file the index does not name:
killed between the write and the index update, or before a delete), and whether ``clinic ckpt verify``
found a good checkpoint. The next trial's resume cleans up.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from chapters.checkpoints.verify import newest_good  # noqa: E402
from tests.test_ckpt_kill import kill_during_saves  # noqa: E402


def leftovers(directory: Path) -> str:
    index = json.loads((directory / "index.json").read_text())
    named = {entry["file"] for entry in index["checkpoints"]}
    if any(directory.glob(".tmp-*")):
        return "debris"
    if any(p.name not in named for p in directory.glob("step-*.pt")):
        return "orphan"
    return "clean"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    outcomes = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        text = tmp / "text.txt"
        text.write_text("the quick brown fox jumps over the lazy dog. " * 200)
        directory = tmp / "ckpt"
        train_args = ["train", "--text", str(text), "--steps", "100000", "--batch-size", "8", "--eval-every", "3",
                      "--save-every", "1", "--top-k", "2", "--ckpt-dir", str(directory), "--out", str(tmp / "run"),
                      "--quiet", "--resume"]
        server = subprocess.Popen([sys.executable, "-m", "tests.fork_server"], cwd=REPO, text=True,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  env={**os.environ, "PYTHONPATH": str(REPO)})
        previous = 0
        for _ in range(args.trials):
            killed = kill_during_saves(server, train_args, directory, previous, rng)
            found = newest_good(directory)
            lost = found is None or found.step < previous
            outcomes[(killed, leftovers(directory), "verified" if not lost else "LOST")] += 1
            previous = found.step if found else previous
        server.stdin.close()
        server.wait()
    print(f"{args.trials} SIGKILL trials (seed {args.seed}), final verified step {previous}")
    for (killed, left, verdict), count in sorted(outcomes.items()):
        print(f"  {count:4d}  {killed:9s}  left {left:6s}  -> {verdict}")
    print(f"verified after every kill: {sum(n for k, n in outcomes.items() if k[2] == 'verified')}/{args.trials}")


if __name__ == "__main__":
    main()
