"""What does ``Monitor`` cost a loop written by hand? Step time with it vs the same loop without it.

The loop: the course's tiny GPT, AdamW, batches of the tiny preset's size drawn once beforehand (so data
loading is not in the comparison), one CPU thread. Conditions, same seed and batches:

* ``bare``: forward, backward, ``optimizer.step()``, ``zero_grad()`` -- nothing else;
* ``monitor @10`` / ``monitor @1``: the same plus ``monitor.step(loss, batch)`` with
  ``Monitor(..., log_every=10 or 1)`` writing ``metrics.jsonl`` with every course metric.

Repeats are interleaved (bare, @10, @1, in a rotating order) so drift in the machine's speed hits every
condition alike. Printed: the median step time of each condition, the ratio of medians (1.00 = free), the
ratio within each repeat (median and quartiles: how much of the ratio is noise), and the load average; in
wall-clock and in CPU time (on a shared machine the wall clock also counts waiting for a core). Last, the
time spent inside the Monitor itself per step, timed directly, over the bare step time: on a busy machine,
where two step times of the same loop differ by 10 % from noise alone, this is the steadier estimate.

    OMP_NUM_THREADS=1 PYTHONPATH=. python bench/monitor_overhead.py [--steps 150] [--repeats 9]

Goals (issue 20): <= 1.05 at interval 1, <= 1.02 at interval 10.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import torch

from chapters.core.data import make_loader, markov_corpus
from chapters.core.run import build_model, preset_config
from chapters.metrics.groups import gpt_group
from chapters.monitor import Monitor


class InsideClock:
    """Wall time spent inside the Monitor: its optimizer pre-hook (between a hook registered just before the
    Monitor's and one registered just after: hooks run in registration order) and ``monitor.step``."""

    def __init__(self):
        self.seconds = 0.0

    def start(self, *hook_args):
        self.started = time.perf_counter()

    def stop(self, *hook_args):
        self.seconds += time.perf_counter() - self.started


def step_time(batches, vocab_size: int, log_every: int | None) -> tuple[float, float, float]:
    """Mean (wall, CPU, inside the Monitor) seconds per step; ``log_every`` None: without a Monitor."""
    torch.manual_seed(0)
    model = build_model("tiny", vocab_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    inside = InsideClock()
    with tempfile.TemporaryDirectory() as out:
        monitor = None
        if log_every:
            optimizer.register_step_pre_hook(inside.start)
            monitor = Monitor(model, optimizer, out, log_every=log_every, grouping=gpt_group)
            optimizer.register_step_pre_hook(inside.stop)
        started, cpu_started = time.perf_counter(), time.process_time()
        for batch in batches:
            loss = model(batch["input_ids"], labels=batch["labels"])["loss"]
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if monitor is not None:
                inside.start()
                monitor.step(loss, batch)
                inside.stop()
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        if monitor is not None:
            monitor.close()
    return elapsed / len(batches), cpu / len(batches), inside.seconds / len(batches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    torch.set_num_threads(1)
    corpus = markov_corpus()
    batch_size = preset_config("tiny").batch_size
    loader = make_loader(corpus.train, batch_size, shuffle=True, seed=0)
    batches = []
    while len(batches) < args.steps:
        batches += list(loader)
    batches = batches[:args.steps]
    conditions = {"bare": None, "monitor @10": 10, "monitor @1": 1}
    step_time(batches[:20], corpus.tokenizer.vocab_size, 1)  # warm up allocator, caches, lazy imports
    times = {(name, clock): [] for name in conditions for clock in ("wall", "cpu", "inside")}
    names = list(conditions)
    for repeat in range(args.repeats):
        for name in names[repeat % 3:] + names[:repeat % 3]:
            wall, cpu, inside = step_time(batches, corpus.tokenizer.vocab_size, conditions[name])
            times[name, "wall"].append(wall)
            times[name, "cpu"].append(cpu)
            times[name, "inside"].append(inside)
    print(f"{args.steps} steps x {args.repeats} repeats, tiny GPT, batch {batch_size}, 1 thread; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    # CPU time: on a shared machine the wall clock also counts waiting for a core, which is not the Monitor's
    for clock in ("wall", "cpu"):
        bare = statistics.median(times["bare", clock])
        print(f"[{clock}] bare: median {bare * 1e3:.2f} ms/step")
        for name in ("monitor @10", "monitor @1"):
            median = statistics.median(times[name, clock])
            within = sorted(m / b for m, b in zip(times[name, clock], times["bare", clock]))
            q1, q2, q3 = statistics.quantiles(within, n=4)
            goal = 1.02 if name.endswith("@10") else 1.05
            print(f"[{clock}] {name}: median {median * 1e3:.2f} ms/step, ratio of medians {median / bare:.3f} "
                  f"({(median - bare) * 1e3:+.2f} ms); per repeat {q2:.3f} [{q1:.3f}, {q3:.3f}] (goal <= {goal})")
    # The Monitor's own time, measured directly: robust where the difference of two noisy step times is not.
    bare = statistics.median(times["bare", "wall"])
    for name in ("monitor @10", "monitor @1"):
        inside = statistics.median(times[name, "inside"])
        print(f"[inside] {name}: {inside * 1e3:.3f} ms/step inside the Monitor = {inside / bare:.3%} of the bare "
              f"step: estimated ratio {1 + inside / bare:.3f}")


if __name__ == "__main__":
    main()
