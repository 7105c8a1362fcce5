"""Checks for ``07_oom``: a memory estimate, which runs fit under a cap, and the OOM run's fix.

The reference is the course estimator (:func:`chapters.memory.estimator.estimate_memory`), which
``bench/memory_estimate.py`` validates against measured peaks (within 5 % on the CPU). A learner's estimate
passes within ``TOLERANCE`` of it. Runs are fp32 with AdamW on the CPU, dropout 0, the fused attention kernel,
and large enough that activations (not gradients) make the peak -- the case the lesson is about.
"""

from __future__ import annotations

import dataclasses
import math
import random

from autograder.checks import CheckFailed, register, register_with_hidden
from chapters.core import corpus
from chapters.core.model import PRESETS, GPTConfig
from chapters.memory.estimator import estimate_memory
from chapters.scenarios import oom

TOLERANCE = 0.10  # a learner's estimate may differ from the course estimator by this fraction
AMBIGUITY = 0.15  # runs (and caps) this close to the cap are not used: a 10 % estimate could go either way
SEQ_LEN = 64  # the oom scenario's sequence length (the tiny preset's)
MiB = 2**20
PUBLIC_CAP_BYTES = 450 * MiB  # the public fix problem's tensor-memory cap


def tiny_config() -> GPTConfig:
    """The model of the oom scenario: the tiny preset on the course alphabet."""
    return dataclasses.replace(PRESETS["tiny"], vocab_size=len(corpus.ALPHABET))


def reference_bytes(config: GPTConfig, batch_size: int, seq_len: int, grad_checkpointing: bool) -> int:
    return estimate_memory(config, batch_size, seq_len, grad_checkpointing=grad_checkpointing).total_bytes


# ------------------------------------------------------------------------------------------- the runs
def random_run(rng: random.Random) -> dict:
    """A GPT config and a batch where activations dominate the peak (the estimator's usual case)."""
    while True:
        n_head = rng.choice([1, 2, 4])
        config = GPTConfig(vocab_size=rng.choice([33, 65, 128, 256, 512]), block_size=rng.choice([32, 64, 128]),
                           n_layer=rng.randint(1, 6), n_head=n_head, n_embd=n_head * rng.choice([8, 16, 32]))
        run = {"config": config, "batch_size": rng.choice([4, 8, 16, 32, 64, 128]),
               "seq_len": rng.randint(8, config.block_size), "grad_checkpointing": rng.random() < 0.5}
        estimate = estimate_memory(config, run["batch_size"], run["seq_len"],
                                   grad_checkpointing=run["grad_checkpointing"])
        if estimate.components["gradients"] == 0:
            return run


def public_runs() -> list[dict]:
    tiny = tiny_config()
    return [{"config": tiny, "batch_size": 32, "seq_len": 64, "grad_checkpointing": False},
            {"config": tiny, "batch_size": 32, "seq_len": 64, "grad_checkpointing": True},
            {"config": tiny, "batch_size": 2048, "seq_len": 64, "grad_checkpointing": False},
            {"config": dataclasses.replace(tiny, n_layer=4, n_embd=128), "batch_size": 16, "seq_len": 48,
             "grad_checkpointing": False}]


def runs_for(seed: int) -> list[dict]:
    if seed == 0:
        return public_runs()
    rng = random.Random(seed)
    return [random_run(rng) for _ in range(6)]


def describe(run: dict) -> str:
    c = run["config"]
    return (f"(n_layer={c.n_layer}, n_embd={c.n_embd}, n_head={c.n_head}, vocab={c.vocab_size}, "
            f"batch={run['batch_size']}, seq_len={run['seq_len']}, checkpointing={run['grad_checkpointing']})")


def expected(run: dict) -> int:
    return reference_bytes(run["config"], run["batch_size"], run["seq_len"], run["grad_checkpointing"])


class PeakEstimate:
    @staticmethod
    def prepare(seed, folder):
        return runs_for(seed)

    @staticmethod
    def judge(seed, observation):
        runs = runs_for(seed)
        if len(observation) != len(runs):
            raise CheckFailed(f"expected {len(runs)} estimates, got {len(observation)}")
        for run, got in zip(runs, observation):
            want = expected(run)
            if not (math.isfinite(got) and abs(got - want) <= TOLERANCE * want):
                raise CheckFailed(
                    f"for {describe(run)} you estimated {got / MiB:.2f} MiB, the course estimator "
                    f"{want / MiB:.2f} MiB (measured within 5 %); yours must be within {TOLERANCE:.0%}. "
                    "Count parameters once, AdamW's m and v once, activations per layer and per token, logits")


# ----------------------------------------------------------------------------------- fits under a cap
def cap_and_runs(seed: int) -> tuple[int, list[dict]]:
    """A cap, and eight runs -- four that fit, four that do not -- none within ``AMBIGUITY`` of it."""
    rng = random.Random(seed + 1)
    cap = PUBLIC_CAP_BYTES if seed == 0 else int(2 ** rng.uniform(math.log2(8 * MiB), math.log2(256 * MiB)))
    fitting, too_big = [], []
    if seed != 0:  # hidden: one run that fits only because it checkpoints (ignoring the flag misjudges it)
        while not fitting:
            run = random_run(rng)
            run["batch_size"], run["grad_checkpointing"] = rng.choice([64, 256, 1024, 2048]), True
            without = reference_bytes(run["config"], run["batch_size"], run["seq_len"], False)
            if expected(run) < (1 - AMBIGUITY) * cap and without > (1 + AMBIGUITY) * cap:
                fitting.append(run)
    while len(fitting) < 4 or len(too_big) < 4:
        run = random_run(rng)
        run["batch_size"] = rng.choice([16, 64, 256, 1024, 2048])  # wide range: both sides of the cap
        estimate = expected(run)
        side = fitting if estimate <= cap else too_big
        if abs(estimate - cap) > AMBIGUITY * cap and len(side) < 4:
            side.append(run)
    runs = fitting + too_big
    rng.shuffle(runs)
    return cap, runs


class PredictFits:
    @staticmethod
    def prepare(seed, folder):
        cap, runs = cap_and_runs(seed)
        return {"runs": runs, "cap": cap}

    @staticmethod
    def judge(seed, observation):
        cap, runs = cap_and_runs(seed)
        if len(observation) != len(runs):
            raise CheckFailed(f"expected one answer per run ({len(runs)}), got {len(observation)}")
        wrong = [f"{describe(run)}: you said {'fits' if got else 'does not fit'}, it needs "
                 f"{expected(run) / MiB:.1f} MiB" for run, got in zip(runs, observation)
                 if got != (expected(run) <= cap)]
        if wrong:
            raise CheckFailed(f"cap {cap / MiB:.1f} MiB, {len(wrong)} wrong prediction(s): " + "; ".join(wrong[:2]))


# ------------------------------------------------------------------------------------- the OOM fix
def fix_problem(seed: int) -> tuple[int, int]:
    """(effective batch, cap in bytes) with one clear best fix: the cap is far from every candidate's need."""
    if seed == 0:
        return oom.EFFECTIVE_BATCH, PUBLIC_CAP_BYTES
    rng = random.Random(seed + 2)
    config = tiny_config()
    while True:
        effective = rng.choice([256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096])
        cap = int(2 ** rng.uniform(math.log2(16 * MiB), math.log2(800 * MiB)))
        needs = [reference_bytes(config, effective // accum, SEQ_LEN, ckpt)
                 for accum in divisors(effective) for ckpt in (False, True)]
        full_batch_fits = needs[0] <= cap
        if (not full_batch_fits and min(needs) <= cap and all(abs(n - cap) > AMBIGUITY * cap for n in needs)
                and uneven_split_fits(config, effective, cap)):
            return effective, cap


def uneven_split_fits(config: GPTConfig, effective: int, cap: int) -> bool:
    """Whether some count of micro-batches that does NOT divide the effective batch would fit before the best
    count that does -- so an answer that rounds the micro-batch up (and silently trains on a different
    effective batch) picks it and is caught, on every hidden draw rather than by luck."""
    fewest = best_fix(effective, cap)["grad_accum_steps"]
    for accum in range(2, fewest):
        rounded_up = -(-effective // accum)
        if effective % accum and any(reference_bytes(config, rounded_up, SEQ_LEN, ckpt) <= cap
                                     for ckpt in (False, True)):
            return True
    return False


def divisors(number: int) -> list[int]:
    return [d for d in range(1, number + 1) if number % d == 0]


def best_fix(effective: int, cap: int) -> dict:
    """Fewest micro-batches per optimizer step; checkpointing only when that count needs it (it costs a
    second forward pass of each block)."""
    config = tiny_config()
    for accum in divisors(effective):
        for ckpt in (False, True):
            if reference_bytes(config, effective // accum, SEQ_LEN, ckpt) <= cap:
                return {"batch_size": effective // accum, "grad_accum_steps": accum, "grad_checkpointing": ckpt}
    raise AssertionError("fix_problem draws only caps where one example fits")


class FixOOM:
    @staticmethod
    def prepare(seed, folder):
        effective, cap = fix_problem(seed)
        return {"effective_batch": effective, "cap": cap}

    @staticmethod
    def judge(seed, observation):
        effective, cap = fix_problem(seed)
        micro, accum, ckpt = (observation["batch_size"], observation["grad_accum_steps"],
                              observation["grad_checkpointing"])
        where = f"effective batch {effective}, cap {cap / MiB:.0f} MiB"
        if micro < 1 or accum < 1 or micro * accum != effective:
            raise CheckFailed(f"{where}: batch_size {micro} x grad_accum_steps {accum} = {micro * accum}, not "
                              f"the effective batch {effective} -- that changes the optimisation, not only memory")
        need = reference_bytes(tiny_config(), micro, SEQ_LEN, ckpt)
        if need > cap:
            raise CheckFailed(f"{where}: micro-batch {micro} (checkpointing {ckpt}) needs {need / MiB:.0f} MiB: "
                              "it does not fit")
        best = best_fix(effective, cap)
        if accum > best["grad_accum_steps"]:
            raise CheckFailed(f"{where}: {accum} micro-batches per step fit, but {best['grad_accum_steps']} would "
                              "too (with checkpointing if needed): fewer, larger micro-batches run faster")
        if ckpt and not best["grad_checkpointing"]:
            raise CheckFailed(f"{where}: micro-batch {micro} fits without activation checkpointing; it only "
                              "costs recomputation there")


register("07_oom.estimate", hint="list what lives in memory during a training step (weights, gradients, optimizer state, "
         "activations, logits) and read chapters/memory/estimator.py's docstring")(PeakEstimate)
register("07_oom.estimate_hidden", hint="the same estimate on other models", hidden=True)(PeakEstimate)
FITS_HINT = "you already have an estimate; what does each run need, and what does the cap allow?"
register_with_hidden("07_oom.fits", hint=FITS_HINT)(PredictFits)
FIX_HINT = ("the effective batch must not change; of the settings that fit, which one wastes the least "
            "time? (section 4 compares the costs)")
register_with_hidden("07_oom.fix", hint=FIX_HINT)(FixOOM)
