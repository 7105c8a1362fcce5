"""Time to diagnosis of a TensorBoard folder holding 1,000,000 scalar events.

The folder is written once with torch's ``SummaryWriter`` -- 250,000 steps of the four tags a Hugging Face
Trainer logs (``train/loss``, ``train/grad_norm``, ``train/learning_rate``, ``train/epoch``), a seeded
noisy decaying loss -- and cached under ``runs/bench-byor-tb/`` (writing takes minutes: SummaryWriter
serialises each scalar in Python). Each repeat runs ``clinic diagnose DIR`` in a fresh process, as a user
would, and we print the wall time and the CPU time (user + system of the child; on a shared machine the
wall time also counts waiting for a core) with their medians, plus the machine's load average.

    OMP_NUM_THREADS=1 PYTHONPATH=. python bench/byor_tensorboard.py [--repeats 5] [--events 1000000]

Goal (issue 20): <= 10 s on 2 cores.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

TAGS = ("train/loss", "train/grad_norm", "train/learning_rate", "train/epoch")


def write_events(folder: Path, events: int) -> None:
    from torch.utils.tensorboard import SummaryWriter

    rng = random.Random(0)
    steps = events // len(TAGS)
    writer = SummaryWriter(str(folder), max_queue=10_000)
    for step in range(1, steps + 1):
        loss = 2.0 + 3.0 * math.exp(-step / (steps / 10)) + rng.gauss(0, 0.05)
        for tag, value in zip(TAGS, (loss, 1.0 + rng.gauss(0, 0.1), 3e-4, step / 5_000)):
            writer.add_scalar(tag, value, global_step=step)
    writer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--events", type=int, default=1_000_000)
    args = parser.parse_args()
    folder = Path("runs") / "bench-byor-tb" / f"events-{args.events}"
    if not folder.is_dir():
        started = time.perf_counter()
        write_events(folder, args.events)
        print(f"wrote {args.events} scalar events to {folder} in {time.perf_counter() - started:.0f} s")
    walls, cpus = [], []
    for repeat in range(args.repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "chapters.cli", "diagnose", str(folder)],
                                capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if result.returncode != 0:
            sys.exit(f"clinic diagnose failed: {result.stderr.strip()}")
        print(f"repeat {repeat + 1}: wall {walls[-1]:.2f} s, cpu {cpus[-1]:.2f} s, load average "
              f"{os.getloadavg()[0]:.2f}; {result.stdout.splitlines()[0]}", flush=True)
    print(f"{args.events} scalar events, {args.repeats} repeats: median wall {statistics.median(walls):.2f} s, "
          f"median cpu {statistics.median(cpus):.2f} s (goal <= 10 s); load average now "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
