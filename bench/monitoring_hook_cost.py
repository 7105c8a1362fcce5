"""Where does the monitoring's time go? Each callback's hooks, timed inside a real run (tiny preset, CPU).

``monitoring_overhead.py`` gives the total cost per step; this script splits it by callback and hook. It
trains with the level-3 stack at logging interval 1 (every step is a logging step) and times every call
of every hook of every callback, then prints the median per (callback, hook) and their sum -- the cost of
one logging step. The Trainer's own work (the record it builds, the clipping it does anyway) is not in it.

The hooks are timed inside training on purpose: called in a tight loop on a fixed model they run several
times faster, because the backward pass and the optimizer step evict them from the CPU's caches in a
real run. The first hook after the optimizer step pays most of that, so read the sum, not one line.

    python bench/monitoring_hook_cost.py [--steps 200] [--repeats 3] [--clock wall|cpu]

``--clock cpu`` (thread CPU time) is less disturbed by other processes on a busy machine than wall time.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import defaultdict

import torch

from chapters.core.data import markov_corpus
from chapters.core.devices import seed_everything
from chapters.core.run import DEFAULT_SEQ_LEN, build_model, preset_config
from chapters.core.trainer import Trainer
from chapters.monitoring import monitoring_callbacks

PER_STEP_HOOKS = ("on_before_optimizer_step", "on_step_end", "on_log")


class HookTimingTrainer(Trainer):
    """A Trainer that times each callback's hook calls into ``self.seconds[(callback, hook)]``."""

    clock = staticmethod(time.perf_counter)

    def _emit(self, hook, *args):
        for callback in self.callbacks:
            start = self.clock()
            getattr(callback, hook)(self, *args)
            self.seconds[(type(callback).__name__, hook)].append(self.clock() - start)


def time_hooks(steps: int, clock) -> dict[tuple[str, str], float]:
    """Median seconds per call of each (callback, per-step hook) over one run at logging interval 1."""
    config = preset_config("tiny", steps=steps, device="cpu", eval_every=10**9, log_every=1)
    corpus = markov_corpus(DEFAULT_SEQ_LEN["tiny"])
    seed_everything(config.seed)
    model = build_model("tiny", corpus.tokenizer.vocab_size)
    with tempfile.TemporaryDirectory() as run_dir:
        trainer = HookTimingTrainer(model, corpus, config, monitoring_callbacks(run_dir, (3,)))
        trainer.clock = clock
        trainer.seconds = defaultdict(list)
        trainer.fit()
    return {key: statistics.median(values) for key, values in trainer.seconds.items() if key[1] in PER_STEP_HOOKS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3, help="runs; each figure is the median over them")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = parser.parse_args()
    torch.set_num_threads(1)
    clock = time.perf_counter if args.clock == "wall" else time.thread_time
    time_hooks(20, clock)  # warm-up: first-call allocations, lazy imports
    runs = [time_hooks(args.steps, clock) for _ in range(args.repeats)]
    medians = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    print(f"tiny preset, CPU, level 3 at logging interval 1, {args.steps} steps x {args.repeats} runs, "
          f"{args.clock} clock, 1 thread; median microseconds per call")
    by_callback = defaultdict(float)
    for (callback, hook), seconds in sorted(medians.items()):
        by_callback[callback] += seconds
        if seconds >= 5e-6:  # the hooks a callback leaves empty cost ~1 us each; list those that work
            print(f"  {callback:18s} {hook:26s} {seconds * 1e6:7.1f}")
    print("per callback (all per-step hooks):")
    for callback, seconds in sorted(by_callback.items(), key=lambda item: -item[1]):
        print(f"  {callback:18s} {seconds * 1e6:7.1f}")
    print(f"cost of one logging step (sum of medians): {sum(medians.values()) * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
