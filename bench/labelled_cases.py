"""The doctor benchmark's cases (``bench/doctor_eval.py``, ``bench/byor_labels.py``), each with its label.

Three kinds of runs, one fault each (or none, for the healthy ones):

* the lesson's MLP and GRU runs (:mod:`chapters.labelled_runs`, :class:`~chapters.labelled_runs.Case`), the
  same runs exercise 09 draws its mystery logs from;
* the course GPT through :func:`~chapters.core.run.build_trainer`, with the fault in its config
  (:class:`GptCase`);
* every course scenario that runs on the CPU (``chapters.scenarios``): its broken run labelled with the
  scenario's label, its fixed run healthy (:class:`ScenarioCase`).

They live here rather than in the library because only the benchmark needs them: the lesson module and the
exercise do not depend on the scenarios.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chapters import labelled_runs
from chapters.core.run import build_trainer, preset_config
from chapters.labelled_runs import FAMILY_FAULTS, FAULTS, Case, markov_subset
from chapters.metrics.grad_norm import GradNormPerGroup
from chapters.records.jsonl import JsonlLogger
from chapters.scenarios import SCENARIOS
from chapters.scenarios import nan as scenario_nan
from chapters.scenarios.base import Options
from chapters.scenarios.runner import run_variant

GPT_FAULTS = ["healthy", "loss_plateau", "nan_loss", "no_shuffle", "frozen_parameters", "overfitting"]
# nan causes whose fault never reaches the metrics: on the CPU bad token ids crash the first bad step with
# an index error (in run_end's error), before any metric moves -- documented in docs/doctor.md.
NOT_IN_METRICS = {"bad_token_ids"}


@dataclass(frozen=True)
class GptCase:
    fault: str
    seed: int
    family = "gpt"

    @property
    def label(self) -> str | None:
        return FAULTS[self.fault]

    @property
    def name(self) -> str:
        return f"gpt-{self.fault}-s{self.seed}"


@dataclass(frozen=True)
class ScenarioCase:
    fault: str  # the scenario's id, with ":<cause>" for the nan scenario's causes
    seed: int
    variant: str = "broken"  # the scenario's broken run or its fixed run
    family = "scenario"

    @property
    def label(self) -> str | None:
        scenario = SCENARIOS[self.fault.split(":")[0]]
        return scenario.LABEL if self.variant == "broken" and scenario.EXPECT_SYMPTOM else None

    @property
    def name(self) -> str:
        return f"scenario-{self.fault.replace(':', '-')}-{self.variant}-s{self.seed}"


def all_cases(seeds=(0, 1, 2), gpt_seeds=(0,)) -> list:
    """MLP and GRU cases per seed (odd seeds write a minimal log), then the GPT cases."""
    cases = [Case(family, fault, seed, minimal=seed % 2 == 1)
             for family in ("mlp", "gru") for fault in FAMILY_FAULTS[family] for seed in seeds]
    return cases + [GptCase(fault, seed) for fault in GPT_FAULTS for seed in gpt_seeds]


def scenario_cases(seeds=(0,)) -> list[ScenarioCase]:
    """Every course scenario that can run on the CPU: its broken run (unless it is the healthy reference,
    which has a single run) and its fixed run, per seed. The nan scenario contributes one case per cause."""
    cases = []
    for seed in seeds:
        for sid, scenario in SCENARIOS.items():
            causes = [c for c in scenario_nan.CAUSES if c not in NOT_IN_METRICS] if sid == "nan" else [None]
            for cause in causes:
                if sid == "nan" and scenario_nan.skip_reason(Options(seed=seed, device="cpu", cause=cause)):
                    continue
                fault = f"{sid}:{cause}" if cause else sid
                variants = ("broken", "fixed") if scenario.EXPECT_SYMPTOM else ("fixed",)
                cases += [ScenarioCase(fault, seed, variant) for variant in variants]
    return cases


def generate(case, directory: Path) -> Path:
    """Run the case and write ``directory/metrics.jsonl``; returns the log's path."""
    if isinstance(case, Case):
        return labelled_runs.generate(case, directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "metrics.jsonl"
    path.unlink(missing_ok=True)
    if isinstance(case, ScenarioCase):
        sid, _, cause = case.fault.partition(":")
        run_variant(sid, case.variant, Options(seed=case.seed, device="cpu", cause=cause or None), directory)
    else:
        gpt_case(case, directory)
    return path


def onset(case) -> int:
    """The step the fault starts acting (0: from the first step), to measure detection delay."""
    if isinstance(case, Case):
        return labelled_runs.onset(case)
    if isinstance(case, ScenarioCase):  # faults act from the first step, but for poisoned batches
        return scenario_nan.POISON_EVERY if case.fault == "nan:all_ignored_labels" else 0
    return 0


def gpt_case(case: GptCase, directory: Path) -> None:
    """A course-GPT run through the project's Trainer, with the case's fault in its config."""
    corpus = markov_subset(case.seed, 24 if case.fault == "overfitting" else 640, case.fault != "no_shuffle")
    changes = dict(steps=150, batch_size=16, log_every=5, eval_every=25, eval_batches=4, warmup_steps=10,
                   device="cpu", seed=case.seed)
    changes.update({
        "loss_plateau": dict(lr=1e-5),
        "nan_loss": dict(lr=30.0, grad_clip=0.0),
        "no_shuffle": dict(shuffle=False, steps=200, log_every=4),
        "overfitting": dict(batch_size=8, steps=300, eval_every=20, weight_decay=0.0),
    }.get(case.fault, {}))

    def freeze_embedding(model):
        model.token_embedding.weight.requires_grad_(False)  # the fine-tuning freeze that was never undone
        return model

    build_trainer("tiny", preset_config("tiny", **changes), [GradNormPerGroup(), JsonlLogger(directory)],
                  corpus=corpus, prepare_model=freeze_embedding if case.fault == "frozen_parameters" else None,
                  block_size=32).fit()
