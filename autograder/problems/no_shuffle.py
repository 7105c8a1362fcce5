"""Checks for ``05_no_shuffle``: detect the epoch-periodic loss, shuffle the loader, compare val losses.

Every log a check hands to the learner's code is written here, from the seed, in the JSONL contract's format
(``run_start`` with ``steps_per_epoch``, metric records, evaluation records), so the judge knows the truth by
construction. Hidden variants: other epoch lengths, trends, noise levels and domain patterns; other dataset
sizes, batch sizes and seeds for the loader; other pairs of runs (other lengths, evaluation intervals, winners).
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from autograder.checks import CheckFailed, register_with_hidden
from chapters.doctor.no_shuffle import epoch_shape

ASSIGNMENT = "05_no_shuffle"
LOGS_PER_CHECK = 6


def write_log(run_dir: Path, steps_per_epoch: int, records: list[dict]) -> None:
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    lines = [{"event": "run_start", "timestamp": 0.0, "step": 0, "steps_per_epoch": steps_per_epoch}]
    lines += records
    lines.append({"event": "run_end", "timestamp": 0.0, "step": records[-1]["step"], "status": "completed"})
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


# ---------------------------------------------------------------------------- 1. the periodic pattern
def loss_curve(seed: int) -> tuple[bool, int, np.ndarray]:
    """(periodic?, steps per epoch, train loss per step) of a synthetic run.

    Every curve falls from ~3.3 towards a floor with noise; a periodic one also carries one domain pattern
    per epoch -- the loss level of each domain, in file order -- which is what unshuffled grouped data draws.
    Non-periodic curves may carry a few spikes instead, so "it has bumps" is not enough. A curve whose
    noise happens to look like the other kind is redrawn, so every log has one clear answer: the course's
    periodicity statistic (the doctor's, :func:`chapters.doctor.no_shuffle.epoch_shape`) judges it right, and
    so does the notebook's recipe, by a margin -- an answer that follows what the notebook teaches is never
    marked wrong by chance.
    """
    rng = np.random.default_rng(seed)
    periodic = bool(seed % 2 == 0)
    # One periodic log in two (sub-seeds 0 mod 4) still falls steeply across the epochs after the first: its
    # epochs differ more in level than in shape, so only a comparison made *after* removing the trend sees that
    # the shape repeats. Such a log is kept only if skipping the detrending misjudges it.
    steep = periodic and seed % 4 == 0
    while True:
        period, losses = _draw_curve(rng, periodic, steep)
        correlation, explained = recipe_statistics(np.log(losses), period)
        taught = (correlation > 0.85 and explained > 0.5) if periodic else (correlation < 0.5 or explained < 0.15)
        clear = taught and epoch_shape(losses, period).repeats is periodic
        if clear and not (steep and _looks_periodic_without_detrending(np.log(losses), period)):
            return periodic, period, losses


def _looks_periodic_without_detrending(log_loss: np.ndarray, period: int) -> bool:
    """The notebook's test applied to the raw log-loss: the near miss a steep log must defeat."""
    correlation, explained = recipe_statistics(log_loss, period, detrend=False)
    return bool(correlation > 0.7 and explained > 0.25)


def recipe_statistics(log_loss: np.ndarray, period: int, detrend: bool = True) -> tuple[float, float]:
    """The notebook's recipe -- what a learner is asked to compute, not the course's detector: (correlation of
    the mean epoch shape of even and odd epochs, share of the variance that the mean shape explains), the
    first epoch left out, after removing a rolling mean one epoch wide (``detrend=False``: its near miss)."""
    series = pd.Series(log_loss)
    if detrend:
        series = series - series.rolling(period, center=True, min_periods=period).mean()
    residual = series.to_numpy()
    epochs = len(residual) // period
    shapes = residual[: epochs * period].reshape(epochs, period)[1:]
    even, odd = np.nanmean(shapes[0::2], axis=0), np.nanmean(shapes[1::2], axis=0)
    return float(np.corrcoef(even, odd)[0, 1]), float(np.nanmean(shapes, axis=0).var() / np.nanvar(shapes))


def _draw_curve(rng: np.random.Generator, periodic: bool, steep: bool = False) -> tuple[int, np.ndarray]:
    period = int(rng.integers(16, 41))
    steps = period * int(rng.integers(7, 11))
    t = np.arange(1, steps + 1)
    floor = rng.uniform(0.9, 1.3)
    decay = rng.uniform(steps / 2, 2 * steps) if steep else rng.uniform(steps / 10, steps / 3)
    loss = floor + (3.3 - floor) * np.exp(-t / decay)
    log_loss = np.log(loss) + rng.normal(0, rng.uniform(0.02, 0.04), steps)
    if periodic:
        domains = int(rng.integers(2, 6))
        levels = rng.uniform(-1, 1, domains)
        levels -= levels.mean()
        levels *= rng.uniform(0.15, 0.35) / np.abs(levels).max()  # the largest domain offset, in log-loss
        log_loss += levels[((t - 1) % period) * domains // period]
    else:
        for spike in rng.choice(steps, size=int(rng.integers(0, 3)), replace=False):
            log_loss[spike] += rng.uniform(0.1, 0.3)
    return period, np.exp(log_loss)


def periodic_logs(seed: int) -> list[int]:
    """The sub-seeds of one check: half periodic, half not, in an order drawn from the seed."""
    rng = random.Random(seed)
    base = rng.randrange(2**20) * 2
    seeds = [base + 2 * i for i in range(LOGS_PER_CHECK // 2)] + [base + 2 * i + 1 for i in range(LOGS_PER_CHECK // 2)]
    rng.shuffle(seeds)
    return seeds


def write_loss_log(sub_seed: int, run_dir: Path) -> None:
    _, period, losses = loss_curve(sub_seed)
    records = [{"step": step, "epoch": (step - 1) // period, "train_loss": float(loss)}
               for step, loss in enumerate(losses, start=1)]
    write_log(run_dir, period, records)


class EpochPeriodic:
    @staticmethod
    def prepare(seed, folder):
        names = [f"run-{index}" for index in range(LOGS_PER_CHECK)]
        for name, sub_seed in zip(names, periodic_logs(seed)):
            write_loss_log(sub_seed, folder / name)
        return names

    @staticmethod
    def judge(seed, observation):
        wrong = []
        for index, (sub_seed, answer) in enumerate(zip(periodic_logs(seed), observation["answers"], strict=True)):
            periodic, period, _ = loss_curve(sub_seed)
            if answer is not periodic:
                wrong.append(f"log {index} ({period} steps per epoch, {'periodic' if periodic else 'not periodic'}): "
                             f"answered {answer}")
        if wrong:
            raise CheckFailed(f"{len(wrong)} of {LOGS_PER_CHECK} logs misjudged: " + "; ".join(wrong) +
                              " (remove the trend first, then compare the within-epoch shapes of different epochs)")


HINT_PERIODIC = ("the log knows how long an epoch is; while the loss still falls, epochs differ more in level than in "
                 "shape, so think about what to remove before you compare epochs, and compare epochs that are "
                 "independent of each other")
register_with_hidden(f"{ASSIGNMENT}.is_epoch_periodic", hint=HINT_PERIODIC)(EpochPeriodic)


# ---------------------------------------------------------------------------------- 2. the loader fix
def loader_case(seed: int) -> tuple[int, int, list[int]]:
    """(rows, batch size, two loader seeds). Seed 0 is the notebook's: 320 lines in batches of 16."""
    if seed == 0:
        return 320, 16, [0, 1]
    rng = random.Random(seed)
    rows, batch_size = rng.randint(40, 200), rng.randint(3, 16)
    rows += 1 if rows % batch_size == 0 else 0  # an incomplete last batch, every time: it must be dropped
    return rows, batch_size, rng.sample(range(10_000), 2)


class ShuffledLoader:
    @staticmethod
    def prepare(seed, folder):
        rows, batch_size, loader_seeds = loader_case(seed)
        return {"rows": rows, "batch_size": batch_size, "loader_seeds": loader_seeds}

    @staticmethod
    def judge(seed, observation):
        rows, batch_size, loader_seeds = loader_case(seed)
        keys = [f"{s}/{e}" for s in loader_seeds for e in (0, 1, 2)]
        for key in keys:
            batches = observation[key]
            if any(len(batch) != batch_size for batch in batches) or len(batches) != rows // batch_size:
                raise CheckFailed(f"{rows} rows in batches of {batch_size}: expected {rows // batch_size} full "
                                  f"batches (drop the incomplete last one), got sizes {[len(b) for b in batches]}")
            ids = [row for batch in batches for row in batch]
            if len(set(ids)) != len(ids) or not all(0 <= row < rows for row in ids):
                raise CheckFailed(f"seed/epoch {key}: some rows repeat within one epoch (or are not rows)")
            in_file_order = sum(b == a + 1 for a, b in zip(ids, ids[1:]))  # about 1 for a random order
            if in_file_order > len(ids) // 4:
                raise CheckFailed(f"seed/epoch {key}: {in_file_order} rows follow their neighbour in the file: "
                                  "the order is not shuffled")
        if observation["again"] != observation[keys[1]]:
            raise CheckFailed("the same (seed, epoch) gave two different orders: seed a torch.Generator from both")
        orders = [observation[key] for key in keys]
        if any(a == b for i, a in enumerate(orders) for b in orders[i + 1:]):
            raise CheckFailed("two epochs (or two seeds) gave the same order: every epoch needs a new order, "
                              "drawn from (seed, epoch)")


HINT_LOADER = ("read make_loader and LineDataset in chapters/core/data.py; then ask what must change from one "
               "epoch to the next and what must not change between two runs")
register_with_hidden(f"{ASSIGNMENT}.shuffled_loader", hint=HINT_LOADER)(ShuffledLoader)


# ------------------------------------------------------------------------------ 3. comparing val losses
def run_pair(seed: int) -> dict:
    """Two runs' evaluations: another length and another eval interval each, so only some steps are shared."""
    rng = random.Random(seed)
    pair = {}
    for name in ("broken", "fixed"):
        every = rng.choice([10, 20, 25, 40, 50])
        steps = every * rng.randint(4, 12)
        level = rng.uniform(1.1, 2.8)
        pair[name] = [(step, level + 2.0 / (1 + step / 40) + rng.uniform(-0.05, 0.05))
                      for step in range(every, steps + 1, every)]
    if not set(s for s, _ in pair["broken"]) & set(s for s, _ in pair["fixed"]):
        pair["fixed"].append((pair["broken"][0][0], rng.uniform(1.1, 2.8)))  # at least one shared step
        pair["fixed"].sort()
    return pair


def run_pairs(seed: int) -> list[dict]:
    """Public: one pair. Hidden: two pairs with opposite winners, so "the fixed run is better" is not an answer."""
    if seed == 0:
        return [run_pair(0)]
    first, second = run_pair(seed), run_pair(seed + 1)
    if comparison(first)["better"] == comparison(second)["better"]:
        second = {"broken": second["fixed"], "fixed": second["broken"]}
    return [first, second]


def comparison(pair: dict) -> dict:
    broken, fixed = dict(pair["broken"]), dict(pair["fixed"])
    step = max(set(broken) & set(fixed))
    return {"step": step, "broken": broken[step], "fixed": fixed[step],
            "better": "fixed" if fixed[step] < broken[step] else "broken"}


class CompareVal:
    @staticmethod
    def prepare(seed, folder):
        pairs = []  # each pair's two logs: folder/pair-<i>/broken, folder/pair-<i>/fixed
        for index, pair in enumerate(run_pairs(seed)):
            for name, evaluations in pair.items():
                records = []
                for step, val in evaluations:  # a train record before each evaluation, as the trainer writes them
                    records.append({"step": step, "epoch": 0, "train_loss": val * 0.9})
                    records.append({"step": step, "epoch": 0, "val_loss": val})
                write_log(folder / f"pair-{index}" / name, 10, records)
            pairs.append({"broken": f"pair-{index}/broken", "fixed": f"pair-{index}/fixed"})
        return pairs

    @staticmethod
    def judge(seed, observations):
        pairs = run_pairs(seed)
        if len(observations) != len(pairs):
            raise CheckFailed(f"expected {len(pairs)} answers, got {len(observations)}")
        for pair, observation in zip(pairs, observations):
            expected = comparison(pair)
            if observation["step"] != expected["step"]:
                raise CheckFailed(f"compare at the last step both runs evaluated: {expected['step']}, "
                                  f"not {observation['step']}")
            for key in ("broken", "fixed"):
                if not np.isclose(observation[key], expected[key], rtol=1e-9):
                    raise CheckFailed(f"{key} val loss at step {expected['step']} is {expected[key]:.4f}, "
                                      f"got {observation[key]:.4f}")
            if observation["better"] != expected["better"]:
                raise CheckFailed(f"better should be {expected['better']!r} (the lower val loss at that step; "
                                  "a fix is not better because it is called fixed)")


HINT_COMPARE = "two runs of different lengths: at which step is a comparison fair?"
register_with_hidden(f"{ASSIGNMENT}.compare_val", hint=HINT_COMPARE)(CompareVal)
