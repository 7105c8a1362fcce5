"""Checks for ``04_frozen_embedding``: list frozen parameters, name the frozen group from a log, fix the run.

Hidden variants: other models (tied or untied head, one to three blocks) with other frozen sets; real short
runs with other groups frozen (or none) and another logging interval; the fixed run trained from another seed.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import torch

from autograder.checks import CheckFailed, artifact, register, register_with_hidden
from chapters.core.data import markov_corpus
from chapters.core.devices import seed_everything
from chapters.core.model import GPT, PRESETS
from chapters.core.run import build_model, build_trainer, preset_config
from chapters.generalisation import mean_loss
from chapters.metrics.grad_norm import GradNormPerGroup
from chapters.metrics.groups import gpt_group
from chapters.metrics.update_ratio import UpdateRatio
from chapters.records.jsonl import JsonlLogger
from chapters.scenarios.frozen_embedding import freeze_embeddings

ASSIGNMENT = "04_frozen_embedding"
GROUPS = ("embedding", "attention", "mlp", "norm")
MAX_FIXED_VAL_LOSS = 2.0  # 60 steps: the fixed run reaches 1.2-1.5, the frozen one stays near 2.6


# ---------------------------------------------------------------------------------- 1. the frozen report
def model_with_frozen(seed: int) -> torch.nn.Module:
    """Seed 0: the scenario's bug (embeddings frozen, tied head). Others: a random GPT, a random frozen set."""
    if seed == 0:
        return freeze_embeddings(build_model("tiny", 33))
    rng = random.Random(seed)
    torch.manual_seed(seed)
    config = dict(vars(PRESETS["tiny"]), vocab_size=rng.randint(20, 40), n_layer=rng.randint(1, 3),
                  tie_weights=rng.random() < 0.5)
    model = GPT(type(PRESETS["tiny"])(**config))
    for _, parameter in model.named_parameters():
        if rng.random() < 0.3:
            parameter.requires_grad_(False)
    return model


def model_seeds(seed: int) -> list[int]:
    """The models one check inspects: the scenario's alone (public), four random ones (hidden)."""
    return [0] if seed == 0 else [seed * 4 + i + 1 for i in range(4)]


def reference_report(model: torch.nn.Module) -> dict:
    named = list(model.named_parameters())  # a tied tensor appears once
    total = sum(p.numel() for _, p in named)
    frozen = [(name, p) for name, p in named if not p.requires_grad]
    return {"frozen": [name for name, _ in frozen], "frozen_share": sum(p.numel() for _, p in frozen) / total}


class FrozenReport:
    @staticmethod
    def prepare(seed, folder):
        return [model_with_frozen(model_seed) for model_seed in model_seeds(seed)]

    @staticmethod
    def judge(seed, observation):
        for model_seed, report in zip(model_seeds(seed), observation, strict=True):
            FrozenReport.judge_one(model_seed, report)

    @staticmethod
    def judge_one(seed, observation):
        expected = reference_report(model_with_frozen(seed))
        if observation["frozen"] != expected["frozen"]:
            raise CheckFailed(f"frozen should be {expected['frozen']} (requires_grad False, in named_parameters() "
                              f"order), got {observation['frozen']}")
        if not math.isclose(observation["frozen_share"], expected["frozen_share"], rel_tol=1e-9, abs_tol=1e-12):
            raise CheckFailed(f"frozen_share should be {expected['frozen_share']:.6f}, got "
                              f"{observation['frozen_share']:.6f} (count numel, each tensor once: a tied "
                              "weight is one tensor)")


HINT_REPORT = ("which attribute says a parameter trains, and how many values does each tensor hold? mind the "
               "tied weight (section 2)")
register_with_hidden(f"{ASSIGNMENT}.freeze_check", hint=HINT_REPORT)(FrozenReport)


# ---------------------------------------------------------------------- 2. the frozen group, from a log
def frozen_run_plan(seed: int) -> tuple[list[str], int]:
    """(groups frozen, log_every). Seed 0 is the scenario: the embeddings, a record every step."""
    if seed == 0:
        return ["embedding"], 1
    rng = random.Random(seed)
    groups = [] if rng.random() < 0.2 else sorted(rng.sample(GROUPS, rng.randint(1, 2)))
    return groups, rng.choice([1, 2, 3])


def write_frozen_run(seed: int, run_dir: Path) -> None:
    """A real six-step run of the tiny GPT with the planned groups frozen, logged with per-group metrics."""
    groups, log_every = frozen_run_plan(seed)

    def freeze_planned_groups(model):
        for name, parameter in model.named_parameters():
            if gpt_group(name) in groups:
                parameter.requires_grad_(False)
        return model

    config = preset_config("tiny", steps=6, batch_size=8, seed=seed, device="cpu", eval_every=6,
                           log_every=log_every, warmup_steps=2)
    build_trainer("tiny", config, [GradNormPerGroup(), UpdateRatio(), JsonlLogger(run_dir)],
                  corpus=markov_corpus(64), prepare_model=freeze_planned_groups).fit()


def expected_diagnosis(seed: int) -> dict:
    groups, log_every = frozen_run_plan(seed)
    if not groups:
        return {"label": "healthy", "groups": [], "evidence_step": None}
    return {"label": "frozen_parameters", "groups": groups, "evidence_step": log_every}


class FrozenGroups:
    @staticmethod
    def prepare(seed, folder):
        write_frozen_run(seed, folder / "run")
        return "run"

    @staticmethod
    def judge(seed, observation):
        expected = expected_diagnosis(seed)
        for key in ("label", "groups", "evidence_step"):
            if observation[key] != expected[key]:
                raise CheckFailed(f"on a run with {expected['groups'] or 'no'} group(s) frozen: {key} should be "
                                  f"{expected[key]!r}, got {observation[key]!r}")


HINT_GROUPS = ("look at the per-group keys of the broken run's records (section 1): what does a group that never "
               "moves look like, and from when? a healthy run needs an answer too")
register_with_hidden(f"{ASSIGNMENT}.diagnose_frozen", hint=HINT_GROUPS)(FrozenGroups)


# ------------------------------------------------------------------------------------ 3. the fixed run
def judge_fixed_weights(name: str, seed: int) -> None:
    """Every parameter moved away from the seed's initial weights, and the val loss is a trained model's."""
    corpus = markov_corpus(64)
    seed_everything(seed)
    initial = build_model("tiny", corpus.tokenizer.vocab_size)
    model = build_model("tiny", corpus.tokenizer.vocab_size)
    model.load_state_dict(torch.load(artifact(name), weights_only=True))
    for (key, before), after in zip(initial.named_parameters(), model.parameters()):
        if torch.equal(before, after):
            raise CheckFailed(f"{key} is still at its initial value: it never trained (unfreeze before the "
                              "Trainer builds its optimizer)")
    loss = mean_loss(model, corpus.val)
    if not loss < MAX_FIXED_VAL_LOSS:
        raise CheckFailed(f"val loss {loss:.3f} is not below {MAX_FIXED_VAL_LOSS} (the frozen run ends near 2.6)")


class FixedModel:
    """Public: the model the notebook trained with seed 0."""

    @staticmethod
    def prepare(seed, folder):
        return None  # the notebook trained it already

    @staticmethod
    def judge(seed, observation):
        judge_fixed_weights(observation["weights"], 0)


class TrainFixed:
    """Hidden: the learner's recipe, trained from a seed drawn at grading time."""

    @staticmethod
    def prepare(seed, folder):
        return seed % 1000 + 1  # the seed of the learner's training run

    @staticmethod
    def judge(seed, observation):
        judge_fixed_weights(observation["weights"], seed % 1000 + 1)


HINT_FIXED = ("start from train_broken and ask what each line does; section 4 warns about when the optimizer "
              "decides what it updates")
register(f"{ASSIGNMENT}.fixed_model", hint=HINT_FIXED)(FixedModel)
register(f"{ASSIGNMENT}.fixed_model_hidden", hint=HINT_FIXED, hidden=True)(TrainFixed)
