"""Does the Trainer cost anything? Step time of ``Trainer.fit`` vs a bare hand-written loop.

Both train the same model (same seed, same initial weights) on the same batches with the same optimizer,
clipping and schedule; the Trainer adds its callbacks, metric records every ``log_every`` steps and its
bookkeeping. Repeats are interleaved (bare, trainer, bare, trainer...) so drift in the machine's speed
hits both sides equally; we report medians and the ratio of medians.

    python bench/trainer_overhead.py [--steps 100] [--repeats 7]

Goal (issue 2): Trainer throughput >= 0.97x the bare loop's.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from monitoring_overhead import time_hand_loop  # the same bare loop the monitoring bench times (bench/ is on sys.path)

from chapters.core.callbacks import Callback, History
from chapters.core.run import build_trainer, preset_config


class StepClock(Callback):
    """Times from the first step's start to the last step's end (the final evaluation is not a step)."""

    def on_run_start(self, trainer):
        self.start = time.perf_counter()

    def on_step_end(self, trainer):
        self.end = time.perf_counter()


def time_trainer(config) -> float:
    clock = StepClock()
    build_trainer("tiny", config, [History(), clock]).fit()
    return (clock.end - clock.start) / config.steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    # No evaluation inside the timed steps (the bare loop does not evaluate); StepClock stops before the
    # final evaluation the Trainer always runs.
    config = preset_config("tiny", steps=args.steps, device="cpu", eval_every=10**9)
    time_trainer(config), time_hand_loop(config.steps, naive_logging=False)  # warm-up: first-call allocations, lazy imports
    bare, trainer = [], []
    for _ in range(args.repeats):
        bare.append(time_hand_loop(config.steps, naive_logging=False))
        trainer.append(time_trainer(config))
    bare_ms, trainer_ms = statistics.median(bare) * 1e3, statistics.median(trainer) * 1e3
    print(f"tiny preset, batch {config.batch_size}, {args.steps} steps x {args.repeats} interleaved repeats, "
          f"{torch.get_num_threads()} threads")
    print(f"bare loop   median step {bare_ms:7.2f} ms")
    print(f"Trainer     median step {trainer_ms:7.2f} ms")
    print(f"Trainer throughput / bare loop throughput = {bare_ms / trainer_ms:.3f} (goal >= 0.97)")


if __name__ == "__main__":
    main()
