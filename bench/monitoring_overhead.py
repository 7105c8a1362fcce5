"""What does monitoring cost? Step time with the monitoring stack vs without, on the tiny preset (CPU).

Conditions, all the same model, seed, data and optimizer:

* ``unmonitored``: the Trainer with no callbacks (it still builds a record every ``log_every`` steps);
* ``level 3 @10`` / ``level 3 @1``: ``monitoring_callbacks(levels=(3,))`` -- every metric, written to
  metrics.jsonl -- logging every 10 steps / every step (each compared with the unmonitored Trainer at the
  same interval);
* ``level 2 @10``: the same metrics written to TensorBoard;
* ``naive loop``: the course text's Level-3 loop -- ``loss.item()``, ``time.time()`` and a JSON line on
  every step -- compared with the same hand-written loop without logging.

Repeats are interleaved so drift in the machine's speed hits every condition alike; we print medians and
ratios of medians (monitored / unmonitored step time; 1.00 = free), and the difference of medians in
milliseconds -- the monitoring's cost per step, which unlike the ratio does not depend on how fast the
training step itself is. On a shared machine the step time drifts by several percent between runs (and
by more between sessions), so we also print the ratio within each repeat -- monitored and unmonitored
ran seconds apart -- as its median and quartiles: the quartiles show how much of the ratio is noise.
``bench/monitoring_hook_cost.py`` splits that cost by callback.

    python bench/monitoring_overhead.py [--steps 100] [--repeats 5] [--threads 1]

Goals (issue 3): level 3 <= 1.02 at interval 10 and <= 1.05 at interval 1.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

import torch

from chapters.core.callbacks import Callback
from chapters.core.data import make_loader
from chapters.core.run import build_trainer, preset_config
from chapters.core.trainer import parameter_groups, warmup_cosine_schedule
from chapters.monitoring import monitoring_callbacks


class StepClock(Callback):
    """From the end of everyone's on_run_start to the last step's last hook (the final evaluation excluded)."""

    def on_run_start(self, trainer):
        self.start = time.perf_counter()

    def on_step_end(self, trainer):
        self.end = time.perf_counter()

    def on_log(self, trainer, record):
        self.end = time.perf_counter()


def time_trainer(steps: int, log_every: int, levels: tuple | None) -> float:
    config = preset_config("tiny", steps=steps, device="cpu", eval_every=10**9, log_every=log_every)
    clock = StepClock()
    with tempfile.TemporaryDirectory() as run_dir:
        callbacks = monitoring_callbacks(run_dir, levels) if levels is not None else []
        build_trainer("tiny", config, [*callbacks, clock]).fit()  # the clock last: it sees every hook's cost
    return (clock.end - clock.start) / steps


def time_hand_loop(steps: int, naive_logging: bool) -> float:
    """A bare loop; with ``naive_logging``, the course text's per-step Level-3 logging added."""
    config = preset_config("tiny", steps=steps, device="cpu")
    trainer = build_trainer("tiny", config)  # only for the identical model and data
    model, corpus = trainer.model, trainer.corpus
    optimizer = torch.optim.AdamW(parameter_groups(model, config.weight_decay), lr=config.lr, betas=(0.9, 0.95))
    scheduler = warmup_cosine_schedule(optimizer, config)
    batches = iter(make_loader(corpus.train, config.batch_size, shuffle=True, seed=config.seed))
    with tempfile.TemporaryDirectory() as run_dir, open(f"{run_dir}/metrics.jsonl", "w") as log_file:
        start = time.perf_counter()
        for step in range(steps):
            batch = next(batches)
            t_start = time.time()
            model.train()
            loss = model(batch["input_ids"], labels=batch["labels"])["loss"]
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            if naive_logging:
                elapsed = time.time() - t_start
                record = {"step": step, "train_loss": loss.item(), "lr": scheduler.get_last_lr()[0],
                          "tokens_per_sec": batch["input_ids"].numel() / elapsed, "timestamp": time.time()}
                log_file.write(json.dumps(record) + "\n")
                log_file.flush()
        loss.item()
        return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (1: least noise on a busy machine)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    conditions = {
        "unmonitored @10": lambda: time_trainer(args.steps, 10, None),
        "level 3 @10": lambda: time_trainer(args.steps, 10, (3,)),
        "level 2 @10": lambda: time_trainer(args.steps, 10, (2,)),
        "unmonitored @1": lambda: time_trainer(args.steps, 1, None),
        "level 3 @1": lambda: time_trainer(args.steps, 1, (3,)),
        "bare loop": lambda: time_hand_loop(args.steps, naive_logging=False),
        "naive loop": lambda: time_hand_loop(args.steps, naive_logging=True),
    }
    for measure in conditions.values():
        measure()  # warm-up: first-call allocations, lazy imports
    times = {name: [] for name in conditions}
    for _ in range(args.repeats):
        for name, measure in conditions.items():
            times[name].append(measure())
    median_ms = {name: statistics.median(values) * 1e3 for name, values in times.items()}
    print(f"tiny preset, CPU, {args.steps} steps x {args.repeats} interleaved repeats, {args.threads} threads")
    for name, ms in median_ms.items():
        print(f"{name:16s} median step {ms:7.2f} ms")
    print("ratios of medians (monitored / unmonitored step time), costs (monitored - unmonitored, ms per step), "
          "and the ratio within each repeat: median [quartiles]:")
    for monitored, baseline, goal in [("level 3 @10", "unmonitored @10", "goal <= 1.02"),
                                      ("level 3 @1", "unmonitored @1", "goal <= 1.05"),
                                      ("level 2 @10", "unmonitored @10", ""),
                                      ("naive loop", "bare loop", "the course text's loop, for contrast")]:
        ratio = median_ms[monitored] / median_ms[baseline]
        cost = median_ms[monitored] - median_ms[baseline]
        paired = [m / b for m, b in zip(times[monitored], times[baseline])]  # one ratio per repeat
        low, middle, high = statistics.quantiles(paired, n=4)
        print(f"  {monitored:12s} / {baseline:16s} = {ratio:.3f}  ({cost:+.2f} ms)  "
              f"per repeat {middle:.3f} [{low:.3f}, {high:.3f}]  {goal}")


if __name__ == "__main__":
    main()
