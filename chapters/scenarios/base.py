"""What a scenario is, and how one of its runs is carried out.

A scenario is one module (see ``healthy.py`` for the simplest) with:

* ``ID`` and ``LABEL`` -- its id in ``clinic reproduce`` and the doctor's label for its symptom;
* a module docstring -- the lesson: symptom, how to see it, root cause, fix, how to confirm;
* ``broken(options)`` and ``fixed(options)`` -- each returns a :class:`RunPlan`;
* ``symptom(run)`` -- only where the doctor has a documented gap for the scenario (see
  :func:`shows_symptom`): its own predicate over the run's log, returning a plain ``bool``.

A run shows the scenario's failure when the doctor, reading the run's ``metrics.jsonl``, names the
scenario's ``LABEL`` first (:func:`doctor_shows`). The broken run must show it and the fixed one must not.
Runs are judged from what they wrote to the log (read back with ``RunLog.load``, the reader the doctor
and the plots use too), never from Python objects in memory: the lesson is that the log alone is enough to
tell what went wrong -- and the detector is the one a learner runs on their own logs, ``clinic diagnose``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Callable

import torch

from chapters.core.callbacks import Callback
from chapters.core.data import Corpus, LineDataset, markov_corpus
from chapters.core.devices import resolve_device
from chapters.core.run import DEFAULT_SEQ_LEN, build_trainer, preset_config
from chapters.core.trainer import BatchTransform, TrainConfig
from chapters.doctor import diagnose_run
from chapters.doctor.rules import MACHINE
from chapters.records.runlog import RunLog


@dataclass(frozen=True)
class Options:
    """What the user chose on the command line."""

    seed: int = 0
    device: str = "cpu"
    cause: str | None = None  # only the nan scenario has causes

    @property
    def on_cuda(self) -> bool:
        return resolve_device(self.device).type == "cuda"


@dataclass
class RunPlan:
    """Everything that defines one run: a config plus the (deliberate) bugs or fixes around it."""

    config: TrainConfig
    preset: str = "tiny"
    model_overrides: dict = field(default_factory=dict)  # GPTConfig fields, e.g. {"dropout": 0.1}
    prepare_model: Callable[[torch.nn.Module], torch.nn.Module] | None = None  # freeze, wrap...
    batch_transform: BatchTransform | None = None  # corrupt (broken) or validate (fixed) batches
    train_lines_per_dialect: int | None = None  # keep only the first N lines of each domain
    extra_callbacks: Callable[[Path], list[Callback]] | None = None  # (run_dir) -> fresh callbacks per run
    memory_cap_gb: float | None = None  # run under this memory limit (the oom scenario)
    isolated: bool = False  # run in a child process: a crash there (OOM, CUDA assert) cannot hurt ours
    processes: int = 1  # ranks of a data-parallel run, started like torchrun starts them (the straggler)

    def __post_init__(self):
        self.isolated = self.isolated or self.memory_cap_gb is not None


def tiny_plan(options: Options, **config_changes) -> RunPlan:
    """The tiny preset's recommended config, on the chosen device and seed, with ``config_changes``."""
    config = preset_config("tiny", seed=options.seed, device=options.device, eval_every=50, log_every=5)
    return RunPlan(dataclasses.replace(config, **config_changes))


def subset_lines(dataset: LineDataset, lines_per_dialect: int, dialects: int = 4) -> LineDataset:
    """The first ``lines_per_dialect`` lines of each domain (the files are grouped by domain)."""
    per_dialect = len(dataset) // dialects
    rows = [d * per_dialect + i for d in range(dialects) for i in range(lines_per_dialect)]
    return LineDataset(dataset.tokens[rows])


def load_corpus(plan: RunPlan) -> Corpus:
    corpus = markov_corpus(DEFAULT_SEQ_LEN[plan.preset])
    if plan.train_lines_per_dialect is not None:
        corpus.train = subset_lines(corpus.train, plan.train_lines_per_dialect)
    return corpus


def execute(plan: RunPlan, run_dir: Path, callbacks: list[Callback]) -> None:
    """Build and train. Failures are recorded by the loggers (run_end status), then re-raised."""
    extra = plan.extra_callbacks(run_dir) if plan.extra_callbacks else []
    trainer = build_trainer(plan.preset, plan.config, [*extra, *callbacks], corpus=load_corpus(plan),
                            prepare_model=plan.prepare_model, batch_transform=plan.batch_transform,
                            **plan.model_overrides)
    trainer.fit()


def doctor_shows(run: RunLog, label: str | None) -> bool:
    """Whether the doctor's top finding about the training in ``run`` is ``label``; for ``label=None`` (the
    healthy scenario), whether it finds anything at all.

    Findings about the machine (``rules.MACHINE``: speed, GPU utilisation) count only when ``label`` is one:
    a busy neighbour slows any run down, and a tiny model leaves a big GPU idle, neither of which is the
    failure a scenario is about."""
    labels = [finding.anomaly for finding in diagnose_run(run).findings
              if finding.anomaly not in MACHINE or label in MACHINE]
    return bool(labels) if label is None else labels[:1] == [label]


def shows_symptom(scenario: ModuleType, run: RunLog) -> bool:
    """Whether ``run`` shows ``scenario``'s failure: the doctor names its label first -- or, for a scenario
    with a documented gap in the doctor (docs/doctor.md, "Known gaps"), the scenario's own ``symptom(run)``."""
    own = getattr(scenario, "symptom", None)
    return bool(own(run)) if own is not None else doctor_shows(run, scenario.LABEL)
