"""Seconds for a short tiny-preset run with 1, 2 and torch's default CPU threads, idle and beside busy processes.

    PYTHONPATH=. python bench/cpu_threads.py [--steps 60] [--repeats 3] [--busy 0,1]

Each measurement is a fresh process (torch's thread pool is fixed once it starts) running ``--steps`` steps
of the tiny preset with the given thread count; ``--busy N`` first starts N processes that spin on a core
(``while True: pass``), the normal state of a shared JupyterHub server. Prints the median seconds per
configuration and its ratio to one thread. The result decides ``chapters.core.devices.course_cpu_threads``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from busy import busy_neighbours  # bench/busy.py: this script's folder is on sys.path

REPO = Path(__file__).resolve().parents[1]
RUN = """
import sys, time, torch
threads = int(sys.argv[1])
if threads:
    torch.set_num_threads(threads)
from chapters.core.run import build_trainer, preset_config
trainer = build_trainer("tiny", preset_config("tiny", steps=int(sys.argv[2]), device="cpu", eval_every=10**6,
                                             log_every=10**6))
start = time.perf_counter()
trainer.fit()
print(time.perf_counter() - start, torch.get_num_threads())
"""


def one_run(threads: int, steps: int) -> tuple[float, int]:
    env = {key: value for key, value in os.environ.items() if key not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env.update(PYTHONPATH=str(REPO), CLINIC_CPU_THREADS=str(threads) if threads else "default")
    out = subprocess.run([sys.executable, "-c", RUN, str(threads), str(steps)], capture_output=True, text=True,
                         env=env, check=True).stdout.split()
    return float(out[0]), int(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--busy", default="0,1", help="comma-separated numbers of busy processes to try")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; {args.steps} steps of the tiny preset; median of {args.repeats}")
    print(f"{'busy':>5}  {'threads':<13}{'seconds':>8}{'vs 1':>7}")
    for busy in (int(n) for n in args.busy.split(",")):
        with busy_neighbours(busy):
            medians = {threads: [] for threads in (1, 2, 0)}  # 0: torch's default
            for _ in range(args.repeats):  # interleaved: drift in the machine's load hits all three alike
                for threads in medians:
                    medians[threads].append(one_run(threads, args.steps))
            base = statistics.median(s for s, _ in medians[1])
            for threads, runs in medians.items():
                seconds = statistics.median(s for s, _ in runs)
                label = f"{runs[0][1]}" + (" (default)" if threads == 0 else "")
                print(f"{busy:>5}  {label:<13}{seconds:>8.2f}{seconds / base:>7.2f}", flush=True)


if __name__ == "__main__":
    main()
