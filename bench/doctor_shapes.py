"""The doctor on constructed curves: each failure class of issue 15 and a dozen healthy habits, drawn with
random parameters.

    OMP_NUM_THREADS=1 python bench/doctor_shapes.py [--seeds 30] [--out runs/doctor-shapes] [--misses]
                                                    [--habit H]

``bench/doctor_families.py`` trains real models, so its curves are what training produces -- including runs
whose injected fault did not take. This benchmark writes the *shapes* directly: a loss that jumps before the
second record and settles far above ln V; a validation loss 10-15 % below the declared floor; swings of
+-30-60 % around a level near ln V; a class-sorted saw-tooth, several teeth per epoch; a network that dies
to ln K with tiny gradients; and healthy runs as other people log them -- warm-up bumps, batch noise of
+-30 % with a validation loss on random batches, fine-tuning from a low start, a long flat start, a
regression's squared error from 50 down, step decay, label smoothing, one record per epoch, throughput
dips at every evaluation, a validation loss at step 0. Every parameter (vocabulary 10-5000, run length,
logging and evaluation interval, what ``run_start`` declares, noise) is drawn per seed, so a rule tuned to
one shape's numbers fails on the next seed. Written to find false alarms: it found three (2026-12-01).

Labels are what the shape *is*, not what was meant: an oscillation drawn at 0.7x ln V, swinging with no
trend, is as close to a noisy healthy run that converged there as a log can be, and is kept, not dropped.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.log_habits import HABITS, relog  # noqa: E402
from chapters.doctor import diagnose  # noqa: E402


def decay(rng, steps, start, end, tau, noise):
    """An exponential fall from ``start`` to ``end`` with multiplicative per-record noise."""
    return (end + (start - end) * np.exp(-np.arange(1, steps + 1) / tau)) * np.exp(rng.normal(0, noise, steps))


def records(rng, steps, every, train, val=None, eval_every=None, grad=None, lr=1e-3, epoch_steps=100):
    """Contract records: a train record every ``every`` steps, a val record every ``eval_every``."""
    out = []
    for i in range(0, steps, every):
        step = i + 1
        record = {"step": step, "epoch": (step - 1) // epoch_steps, "train_loss": float(train[i]),
                  "lr": float(lr if np.isscalar(lr) else lr[i]),
                  "tokens_per_sec": float(5000 * (1 + rng.normal(0, 0.03))), "gpu_memory_gb": 2.0,
                  "timestamp": 1.7e9 + step * 0.1}
        if grad is not None:
            record["grad_norm"] = float(grad[i])
        out.append(record)
        if val is not None and i > 0 and i % eval_every == 0:
            out.append({"step": step, "val_loss": float(val[i]), "timestamp": 1.7e9 + step * 0.1 + 0.05})
    return out


def shapes(seed: int) -> list[tuple[str, str | None, dict | None, list[dict]]]:
    """(shape, label or None for healthy, run_start fields or None, records) for one seed."""
    rng = np.random.default_rng(seed)
    vocab = int(rng.choice([10, 27, 65, 100, 256, 1000, 5000]))
    ln_v = math.log(vocab)
    steps = int(rng.choice([300, 600, 1000, 2000]))
    every = int(rng.choice([1, 2, 5, 10, 20]))
    eval_every = every * int(rng.choice([5, 10, 20]))
    key = "vocab_size" if rng.random() < 0.5 else "num_classes"
    floor = ln_v * rng.uniform(0.2, 0.6)
    tau = steps * rng.uniform(0.05, 0.3)
    noise = rng.uniform(0.01, 0.08)
    train = decay(rng, steps, ln_v, floor, tau, noise)
    val = decay(rng, steps, ln_v, floor * 1.05, tau, 0.005)
    grad = np.exp(rng.normal(0, 0.2, steps)) * rng.uniform(0.2, 5)
    out = []

    def add(name, label, start, rows):
        out.append((name, label, start, rows))

    add("healthy", None, {key: vocab, "loss_floor": floor}, records(rng, steps, every, train, val, eval_every, grad))
    bumped = train.copy()
    width = max(3, steps // 30)
    bumped[:width] *= 1 + 0.15 * np.sin(np.linspace(0, np.pi, width))
    add("healthy_warmup_bump", None, {key: vocab}, records(rng, steps, every, bumped, val, eval_every, grad))
    add("healthy_noisy", None, None, records(rng, steps, every, decay(rng, steps, ln_v, floor, tau, 0.3),
                                             decay(rng, steps, ln_v, floor * 1.05, tau, 0.1), eval_every))
    add("healthy_finetune", None, {key: vocab, "loss_floor": floor},
        records(rng, steps, every, decay(rng, steps, ln_v * 0.6, floor, tau, noise), val, eval_every, grad))
    flat = int(steps * rng.uniform(0.1, 0.3))
    late = np.concatenate([ln_v * np.exp(rng.normal(0, noise, flat)), decay(rng, steps - flat, ln_v, floor, tau, noise)])
    late_val = np.concatenate([np.full(flat, ln_v), decay(rng, steps - flat, ln_v, floor * 1.05, tau, 0.005)])
    add("healthy_late_start", None, {key: vocab}, records(rng, steps, every, late, late_val, eval_every, grad))
    mse = decay(rng, steps, 50, 0.1, tau, noise)
    add("healthy_regression", None, None, records(rng, steps, every, mse, mse * 1.1, eval_every))
    step_lr = np.where(np.arange(steps) < steps // 2, 1e-2, np.where(np.arange(steps) < 3 * steps // 4, 1e-3, 1e-4))
    stepped = train.copy()
    stepped[steps // 2:] *= 0.85
    stepped[3 * steps // 4:] *= 0.93
    add("healthy_step_decay", None, {key: vocab}, records(rng, steps, every, stepped, stepped * 1.05, eval_every, grad,
                                                          lr=step_lr))
    warm = max(2, steps // 20)
    cosine = np.concatenate([np.linspace(1e-5, 1e-3, warm),
                             5e-4 * (1 + np.cos(np.pi * np.arange(steps - warm) / (steps - warm)))])
    add("healthy_warmup_lr", None, {key: vocab, "loss_floor": floor},
        records(rng, steps, every, train, val, eval_every, grad, lr=cosine))
    smoothed = decay(rng, steps, ln_v, 0.6 * ln_v, tau, noise)
    add("healthy_label_smoothing", None, {key: vocab}, records(rng, steps, every, smoothed, smoothed * 0.93,
                                                               eval_every, grad))
    epochs = int(rng.integers(12, 26))
    per_epoch = decay(rng, epochs, ln_v, floor, epochs * 0.25, noise)
    add("healthy_per_epoch", None, {key: vocab} if rng.random() < 0.5 else None,
        [{"step": (i + 1) * 500, "epoch": i, "train_loss": float(per_epoch[i]), "val_loss": float(per_epoch[i] * 1.08),
          "lr": 1e-3, "timestamp": 1.7e9 + i * 60} for i in range(epochs)])
    paused = records(rng, steps, every, train, val, eval_every, grad)
    for record in paused:
        if "train_loss" in record:
            if record["step"] % (eval_every * 2) < every:
                record["tokens_per_sec"] *= 0.3  # an evaluation and a checkpoint in this window
            record["gpu_memory_gb"] = 2.0 + 0.3 * min(1, record["step"] / (steps * 0.1)) + float(rng.normal(0, 0.05))
    add("healthy_pauses", None, {key: vocab}, paused)
    tuned = decay(rng, steps, ln_v * 0.5, ln_v * 0.42, tau, noise)
    add("healthy_val_at_step_0", None, {key: vocab},
        [{"step": 0, "val_loss": float(ln_v * 0.5)}] + records(rng, steps, every, tuned, tuned * 1.04, eval_every, grad))

    jumped = train.copy()
    jumped[every:] = ln_v * rng.uniform(4, 8) * np.exp(rng.normal(0, 0.1, steps - every))
    jumped[every:2 * every] = ln_v * rng.uniform(20, 40)
    add("divergence_jump", "divergence", {key: vocab}, records(rng, steps, every, jumped, jumped * 1.02, eval_every,
                                                               grad * 3))
    onset = int(steps * rng.uniform(0.3, 0.6))
    climbed = train.copy()
    target = ln_v * rng.uniform(2, 4)
    climbed[onset:] = train[onset] + (target - train[onset]) * (1 - np.exp(-np.arange(steps - onset) / (steps * 0.03)))
    climbed[onset:] *= np.exp(rng.normal(0, noise, steps - onset))
    add("divergence_mid_run", "divergence", None if rng.random() < 0.5 else {key: vocab},
        records(rng, steps, every, climbed, climbed * 1.05, eval_every, grad))
    below = rng.uniform(0.10, 0.15)
    leaked = decay(rng, steps, ln_v, floor * (1 - below), steps * rng.uniform(0.05, 0.15), 0.004)
    add("leakage", "leakage", {key: vocab, "loss_floor": floor}, records(rng, steps, every, train, leaked, eval_every, grad))
    level = ln_v * rng.uniform(0.7, 1.1)
    swinging = level * np.exp(rng.normal(0, rng.uniform(0.3, 0.6), steps))
    swinging[:every * 3] = ln_v
    add("oscillation", "oscillation", {key: vocab} if rng.random() < 0.5 else None,
        records(rng, steps, every, swinging, level * np.exp(rng.normal(0, 0.3, steps)), eval_every,
                grad * np.exp(rng.normal(0, 0.5, steps)), lr=0.5))
    classes = int(rng.choice([3, 5, 10]))
    epoch_steps = int(rng.choice([60, 100, 200]))
    block = epoch_steps // classes
    within = np.arange(steps) % block
    sorted_loss = (ln_v * 0.8 * np.exp(-within / (block * 0.15)) + 0.02 * ln_v) * np.exp(rng.normal(0, noise, steps))
    add("no_shuffle_class_sorted", "no_shuffle", {"steps_per_epoch": epoch_steps} if rng.random() < 0.5 else None,
        records(rng, steps, 1 if block < 20 else int(rng.choice([1, 2])), sorted_loss, epoch_steps=epoch_steps))
    died_at = int(steps * rng.uniform(0.3, 0.6))
    dead = train.copy()
    dead[died_at:] = ln_v * np.exp(rng.normal(0, 0.003, steps - died_at))
    dead_grad = grad.copy()
    dead_grad[died_at:] *= rng.uniform(0.001, 0.05)
    add("dead_network", "loss_plateau", {key: vocab} if rng.random() < 0.5 else None,
        records(rng, steps, every, dead, dead, eval_every, dead_grad))
    return out


def with_start(start: dict | None, rows: list[dict]) -> list[dict]:
    """``rows`` after their ``run_start`` event (none when ``start`` is None): a habit rewrites both."""
    return ([{"event": "run_start", "step": 0, "timestamp": 1.7e9, **start}] if start is not None else []) + rows


def write(directory: Path, rows: list[dict]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--out", type=Path, default=Path("runs/doctor-shapes"))
    parser.add_argument("--misses", action="store_true", help="list every wrong top-1 and false alarm")
    parser.add_argument("--habit", choices=HABITS, default="separate",
                        help="how the losses are logged (bench/log_habits.py); the answer must not depend on it")
    args = parser.parse_args()
    right, misses = defaultdict(Counter), []
    for seed in range(args.seeds):
        for name, label, start, rows in shapes(seed):
            directory = args.out / f"{name}-s{seed}"
            write(directory, relog(with_start(start, rows), args.habit))
            found = [f.anomaly for f in diagnose(directory).findings]
            ok = (found[:1] or [None]) == [label]
            right[name][ok] += 1
            if not ok:
                misses.append(f"XX {directory.name:32s} want {label or 'healthy':14s} got {', '.join(found) or 'healthy'}")
    print("| shape | right |\n|---|---|")
    for name, count in right.items():
        print(f"| {name} | {count[True]}/{count[True] + count[False]} |")
    healthy = [n for n in right if n.startswith("healthy")]
    faulty = [n for n in right if n not in healthy]
    print(f"\nfaulty shapes: top-1 {sum(right[n][True] for n in faulty)}/{sum(sum(right[n].values()) for n in faulty)}; "
          f"false alarms {sum(right[n][False] for n in healthy)}/{sum(sum(right[n].values()) for n in healthy)}")
    if args.misses:
        print("\n" + "\n".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
