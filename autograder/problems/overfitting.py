"""Checks for ``06_overfitting``: early stopping against the course's reference, and a regularisation that works.

Hidden variants: other val-loss sequences (plateaus, exact ties, improvements of exactly ``min_delta``), other
patience, min_delta and restore settings; other synthetic runs (overfitting, healthy, diverging) to diagnose;
the chosen regularisation trained by the judge from another seed.
"""

from __future__ import annotations

import json
import random

from autograder.checks import CheckFailed, register_with_hidden
from autograder.probes.overfitting import drive
from chapters.core.early_stopping import EarlyStopping
from chapters.generalisation import Regularisation, measure_gap, train_regularised

ASSIGNMENT = "06_overfitting"
SEQUENCES_PER_CHECK = 8
MAX_GAP = 1.10  # val loss / train loss, both in eval mode
MAX_VAL_LOSS = 1.20  # the floor of this corpus is ~1.05; the broken run ends near 1.4


# -------------------------------------------------------------------------------- 1. early stopping
def stopping_cases(seed: int) -> list[dict]:
    """Val-loss sequences on a grid of 1/64 (so ``best - min_delta`` is exact: ties are ties) with settings."""
    rng = random.Random(seed)
    cases = []
    for index in range(SEQUENCES_PER_CHECK):
        length = rng.randint(6, 20)
        turn = rng.randint(1, length - 1)
        level = rng.randint(100, 200)
        losses = []
        for position in range(length):
            level += -rng.randint(0, 6) if position < turn else rng.randint(-2, 4)
            losses.append(level / 64)
        min_delta = rng.choice([0, 1, 2]) / 64
        if rng.random() < 0.3:  # an improvement of exactly min_delta: not enough, by definition
            losses.insert(rng.randint(1, length - 1), None)
        for position, value in enumerate(losses):
            if value is None:
                losses[position] = min(v for v in losses[:position] if v is not None) - min_delta
        cases.append({"losses": losses, "patience": rng.randint(1, 4), "min_delta": min_delta,
                      "restore_best": index != 0 or seed == 0})
    return [*cases, exact_min_delta_case(rng)]


def exact_min_delta_case(rng: random.Random) -> dict:
    """A sequence where an improvement of exactly ``min_delta`` comes right after the best value and every later
    value is worse: counting it as an improvement stops one evaluation later and keeps other weights, so an
    answer that ignores ``min_delta`` fails on every draw, not on a lucky one."""
    min_delta = rng.choice([1, 2]) / 64
    patience = rng.randint(1, 4)
    level = rng.randint(100, 200)
    losses = []
    for _ in range(rng.randint(2, 6)):
        level -= rng.randint(3, 6)
        losses.append(level / 64)
    best = losses[-1]
    losses.append(best - min_delta)
    losses += [best + rng.randint(0, 4) / 64 for _ in range(patience + 2)]
    return {"losses": losses, "patience": patience, "min_delta": min_delta, "restore_best": True}


class EarlyStoppingCheck:
    @staticmethod
    def prepare(seed, folder):
        return stopping_cases(seed)

    @staticmethod
    def judge(seed, observation):
        for case, got in zip(stopping_cases(seed), observation["results"], strict=True):
            expected = drive(EarlyStopping(case["patience"], case["min_delta"], case["restore_best"]), case["losses"])
            if got != expected:
                settings = (f"patience={case['patience']}, min_delta={case['min_delta']}, "
                            f"restore_best={case['restore_best']}")
                raise CheckFailed(f"val losses {case['losses']} with {settings}: expected stop at evaluation "
                                  f"{expected['stopped_at']} and final weights from evaluation "
                                  f"{expected['weights_from']}, got {got['stopped_at']} and {got['weights_from']}")


HINT_STOPPING = ("what counts as an improvement, what you count between improvements, and what you keep of the "
                 "best model (does a state_dict stay the same while training goes on?)")
register_with_hidden(f"{ASSIGNMENT}.early_stopping", hint=HINT_STOPPING)(EarlyStoppingCheck)


# ------------------------------------------------------------------------------------ 2. the diagnosis
KINDS = ("overfitting", "healthy", "divergence")


def curves(seed: int) -> tuple[str, list[int], list[float], list[float]]:
    """(kind, steps, train losses, val losses) of a synthetic run, one record of each per evaluation.

    overfitting: val falls to a minimum then rises 20-100 % while train keeps falling; healthy: both keep
    falling; divergence: val rises as much, but train rises with it -- not memorising, training going wrong.
    """
    rng = random.Random(seed)
    kind = KINDS[seed % 3]
    evaluations, every = rng.randint(8, 20), rng.choice([10, 20, 25, 50])
    steps = [every * (i + 1) for i in range(evaluations)]
    best, lowest = rng.randint(2, evaluations - 4), rng.uniform(1.1, 1.6)
    last = evaluations - 1
    if kind == "healthy":
        val = [lowest + (3.0 - lowest) * 0.7 ** i for i in range(evaluations)]
        val[-1] = min(val) * (1 + rng.uniform(0.01, 0.06))  # evaluation noise: a last uptick well under 10 %
        return kind, steps, [v * 0.97 for v in val], val
    rise = rng.uniform(0.2, 1.0) * lowest / (last - best) ** 2
    fall = (3.0 - lowest) / best ** 2
    val = [lowest + (fall if i < best else rise) * (i - best) ** 2 for i in range(evaluations)]
    if kind == "divergence":
        return kind, steps, [v * 0.95 for v in val], val
    train = [0.5 * lowest + (3.0 - 0.5 * lowest) * 0.75 ** i for i in range(evaluations)]
    return kind, steps, train, val


def curve_seeds(seed: int) -> list[int]:
    """Public: one run. Hidden: one run of each kind, in an order drawn from the seed."""
    if seed == 0:
        return [0]
    seeds = [3 * seed + offset for offset in range(len(KINDS))]  # curves() takes the kind from seed % 3
    random.Random(seed).shuffle(seeds)
    return seeds


def expected_overfitting_diagnosis(seed: int) -> dict:
    kind, steps, _, val = curves(seed)
    return {"label": kind, "evidence_step": steps[val.index(min(val))] if kind == "overfitting" else None}


class OverfittingDiagnosis:
    @staticmethod
    def prepare(seed, folder):
        run_dirs = []
        for index, curve_seed in enumerate(curve_seeds(seed)):
            _, steps, train, val = curves(curve_seed)
            run_dir = folder / f"run-{index}"
            run_dir.mkdir()
            lines = [{"event": "run_start", "timestamp": 0.0, "step": 0}]
            for step, train_loss, val_loss in zip(steps, train, val):
                lines += [{"step": step, "epoch": 0, "train_loss": train_loss},
                          {"step": step, "epoch": 0, "val_loss": val_loss}]
            lines.append({"event": "run_end", "timestamp": 0.0, "step": steps[-1], "status": "completed"})
            (run_dir / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
            run_dirs.append(run_dir.name)
        return run_dirs

    @staticmethod
    def judge(seed, observations):
        seeds = curve_seeds(seed)
        if len(observations) != len(seeds):
            raise CheckFailed(f"expected {len(seeds)} answers, got {len(observations)}")
        for curve_seed, observation in zip(seeds, observations):
            OverfittingDiagnosis.judge_one(curve_seed, observation)

    @staticmethod
    def judge_one(seed, observation):
        expected = expected_overfitting_diagnosis(seed)
        if observation != expected:
            raise CheckFailed(f"expected {expected}, got {observation} (overfitting: val ended 10 % or more above "
                              "its minimum while train fell; divergence: train rose too; else healthy)")


HINT_DIAGNOSIS = ("the notebook's definitions of the three verdicts: look at where val is lowest and what both "
                  "curves do after it")
register_with_hidden(f"{ASSIGNMENT}.diagnose_overfitting", hint=HINT_DIAGNOSIS)(OverfittingDiagnosis)


# ------------------------------------------------------------------------------- 3. the regularisation
def judge_seed(seed: int) -> int:
    return 0 if seed == 0 else seed % 1000 + 1


class RegularisationCheck:
    @staticmethod
    def prepare(seed, folder):
        return None  # the learner's answer is a choice: the judge trains it

    @staticmethod
    def judge(seed, observation):
        try:
            choice = Regularisation.from_dict(observation["choice"])
        except ValueError as err:
            raise CheckFailed(f"regularisation: {err}") from None
        run_seed = judge_seed(seed)
        model, corpus = train_regularised(choice, run_seed)  # trusted code, in the grader's process
        measured = measure_gap(model, corpus)
        verdict = (f"trained from seed {run_seed}: train {measured['train_loss']:.3f}, val "
                   f"{measured['val_loss']:.3f}, gap x{measured['gap']:.3f}")
        if not measured["gap"] <= MAX_GAP:
            raise CheckFailed(f"{verdict}: the gap must be at most x{MAX_GAP}")
        if not measured["val_loss"] <= MAX_VAL_LOSS:
            raise CheckFailed(f"{verdict}: the val loss must be at most {MAX_VAL_LOSS} (a model that stopped "
                              "learning has no gap either)")


HINT_REGULARISATION = ("each knob in Regularisation.BOUNDS attacks the gap differently; measure a few choices "
                       "with the notebook's helpers before you commit to one")
register_with_hidden(f"{ASSIGNMENT}.regularisation", hint=HINT_REGULARISATION)(RegularisationCheck)
