"""Labelled runs: small training runs with one fault injected each, and the label the doctor should give.
They are the doctor's benchmark (``bench/doctor_eval.py``, which adds course-GPT and scenario runs:
``bench/labelled_cases.py``) and the source of exercise 09's mystery logs (:mod:`chapters.mystery_runs`).
Kept outside ``chapters.doctor``: the doctor reads logs, it does not make them.

Two kinds of models that are *not* the course GPT -- an MLP classifier on synthetic data and a GRU language
model on the Markov corpus -- train on the course's own :class:`~chapters.core.trainer.Trainer`, measured by
the course's metric callbacks and written by its JSONL writer, like any course run (:func:`train`). Each
fault is injected the way it happens in real code, never by editing the log: in the recipe (a learning rate
1000x too small, a forgotten ``requires_grad=False``, data sorted by class), in the data from a step on (a
batch with no labels, inputs no longer normalised: :class:`FaultyBatches`), or by a callback doing what
buggy training code does (a learning rate that overrides the schedule, outputs kept with their graphs).

Why the MLP's loss floor is exact: its labels are a deterministic function of the inputs, flipped to a
random other class with probability ``NOISE``; the best possible predictor then has expected cross-entropy
``H(NOISE) + NOISE * log(C - 1)``, so a validation loss far below that proves the model sees the labels.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import Dataset

from chapters.core.callbacks import Callback
from chapters.core.data import CharTokenizer, Corpus, LineDataset, markov_corpus
from chapters.core.devices import is_out_of_memory, seed_everything
from chapters.core.trainer import TrainConfig, Trainer, parameter_groups
from chapters.doctor.findings import LABELS
from chapters.metrics.first_nonfinite import FirstNonFinite
from chapters.metrics.grad_norm import GradNormPerGroup
from chapters.metrics.groups import module_group
from chapters.metrics.memory import Memory
from chapters.metrics.update_ratio import UpdateRatio
from chapters.records.jsonl import JsonlLogger

FAULTS = {  # fault -> the label the doctor should give (None: a healthy run, no findings expected)
    "healthy": None, "healthy_noisy": None, "healthy_converged": None, **{label: label for label in LABELS},
}
FAMILY_FAULTS = {
    # oscillation: no MLP recipe made one (docs/doctor.md); gpu_underutilised: a CPU run has no GPU to idle
    "mlp": [fault for fault in FAULTS if fault not in ("oscillation", "gpu_underutilised")],
    "gru": ["healthy", "healthy_noisy", "healthy_converged", "nan_loss", "loss_plateau", "no_shuffle",
            "frozen_parameters", "overfitting", "leakage", "throughput_drop", "memory_growth", "oom", "grad_explosion"],
}
CLASSES, FEATURES, NOISE = 5, 16, 0.1
VAL_COUNT = 1024  # the MLP's validation examples


@dataclass(frozen=True)
class Case:
    family: str  # "mlp" or "gru"
    fault: str
    seed: int
    minimal: bool = False  # write only the course text's Level-3 keys (plus what the fault needs to be seen)
    onset_at: int | None = None  # the step the fault starts (default: a third of the run; the oom: two thirds)

    @property
    def label(self) -> str | None:
        return FAULTS[self.fault]

    @property
    def name(self) -> str:
        onset = f"-at{self.onset_at}" if self.onset_at is not None else ""
        return f"{self.family}-{self.fault}-s{self.seed}{onset}{'-min' if self.minimal else ''}"


def generate(case: Case, directory: Path) -> Path:
    """Run the case and write ``directory/metrics.jsonl``; returns the log's path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "metrics.jsonl"
    path.unlink(missing_ok=True)
    train(case, directory)
    return path


# ------------------------------------------------------------------------------------------ the data
def classification_data(seed: int, count: int, leak: bool = False):
    """Inputs, noisy labels; labels = argmax of a fixed random linear map, flipped with prob. NOISE."""
    generator = torch.Generator().manual_seed(1000 + seed)
    teacher = torch.randn(FEATURES, CLASSES, generator=generator)
    x = torch.randn(count, FEATURES, generator=generator)
    clean = (x @ teacher).argmax(1)
    flip = torch.rand(count, generator=generator) < NOISE
    other = (clean + torch.randint(1, CLASSES, (count,), generator=generator)) % CLASSES
    y = torch.where(flip, other, clean)
    if leak:  # the bug: a feature column derived from the label (a target-encoded id, a joined column)
        x = torch.cat([x, nn.functional.one_hot(y, CLASSES).float()], 1)
    return x, y


def mlp_floor() -> float:
    return -(1 - NOISE) * math.log(1 - NOISE) - NOISE * math.log(NOISE / (CLASSES - 1))


class Examples(Dataset):
    """(features, class) pairs in the Trainer's batch format: ``{"input_ids": x, "labels": y}``. For a
    classifier the "ids" are feature vectors; like :class:`~chapters.core.data.LineDataset`, indexing with a
    list of indices returns a whole batch."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor):
        self.x, self.y = x, y

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, indices) -> dict[str, torch.Tensor]:
        return {"input_ids": self.x[indices], "labels": self.y[indices]}


def mlp_corpus(seed: int, train_count: int, shuffle: bool, leak: bool) -> Corpus:
    """The classification data as the Trainer's corpus. Its "tokenizer" names the classes: ``run_start``
    reports the tokenizer's size as ``vocab_size``, and a classifier's output vocabulary is its classes, so
    the doctor takes ln K as the untrained loss, as it should."""
    x, y = classification_data(seed, train_count + VAL_COUNT, leak=leak)
    train_x, train_y = x[:-VAL_COUNT], y[:-VAL_COUNT]
    if not shuffle:  # the bug's setting: a file sorted by class, read in order
        order = train_y.argsort(stable=True)
        train_x, train_y = train_x[order], train_y[order]
    classes = CharTokenizer("".join(str(k) for k in range(CLASSES)))
    return Corpus("teacher-classes", classes, Examples(train_x, train_y), Examples(x[-VAL_COUNT:], y[-VAL_COUNT:]),
                  mlp_floor())


def markov_subset(seed: int, train_count: int, shuffle: bool) -> Corpus:
    """``train_count`` lines of the Markov corpus drawn by the seed (sorted by dialect when not shuffled)."""
    full = markov_corpus(32)
    rows = full.train.tokens[torch.randperm(len(full.train), generator=torch.Generator().manual_seed(seed))]
    rows = rows[:train_count]
    if not shuffle:
        rows = rows[rows[:, 0].argsort(stable=True)]  # grouped by dialect tag, as a concatenated file would be
    return Corpus("markov-subset", full.tokenizer, LineDataset(rows), LineDataset(full.val.tokens[:256]),
                  full.loss_floor)


# ---------------------------------------------------------------------------------------- the models
# Each layer is a top-level module named after its group, so ``module_group`` gives the per-group metrics
# (``grad_norm/input_layer``, ``update_ratio/recurrent``...) their names.
class MLP(nn.Module):
    def __init__(self, inputs: int, hidden: int, depth: int, activation=nn.ReLU):
        super().__init__()
        self.hidden_layers = []  # a plain list: the layers are registered once, under their group names
        for i in range(depth):
            layer = nn.Linear(inputs if i == 0 else hidden, hidden)
            self.add_module("input_layer" if i == 0 else f"hidden_{i}", layer)
            self.hidden_layers.append(layer)
        self.output_layer = nn.Linear(hidden, CLASSES)
        self.activation = activation()

    def forward(self, input_ids, labels=None):
        x = input_ids
        for layer in self.hidden_layers:
            x = self.activation(layer(x))
        logits = self.output_layer(x)
        return {"logits": logits, "loss": None if labels is None else nn.functional.cross_entropy(logits, labels)}


class GRULM(nn.Module):
    """A character GRU language model. ``peek``: the bug of feeding the *next* token in as well."""

    def __init__(self, vocab: int, width: int = 64, peek: bool = False):
        super().__init__()
        self.peek = peek
        self.embedding = nn.Embedding(vocab, width)
        self.recurrent = nn.GRU(width * (2 if peek else 1), width, batch_first=True)
        self.head = nn.Linear(width, vocab)

    def forward(self, input_ids, labels=None):
        x = self.embedding(input_ids)
        if self.peek:
            x = torch.cat([x, self.embedding(labels)], -1)
        logits = self.head(self.recurrent(x)[0])
        loss = None if labels is None else nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100)
        return {"logits": logits, "loss": loss}


# ------------------------------------------------------------------------------------ the run recipe
ONSET_FAULTS = {"nan_loss", "divergence", "grad_explosion", "throughput_drop", "oom"}  # the others: from step 1
LOSS_SCALE = 65536.0  # GradScaler's initial scale


def recipe(case: Case) -> dict:
    """Settings of the run: a healthy base per family, changed by the fault."""
    fault = case.fault
    if case.family == "mlp":
        r = dict(steps=400, batch=32, lr=0.05, momentum=0.9, clip=0.0, depth=2, hidden=64, activation=nn.ReLU,
                 train_count=4096, log_every=5, eval_every=25)
    else:  # momentum None: the course Trainer's AdamW (no weight decay here, so Adam)
        r = dict(steps=300, batch=16, lr=3e-3, momentum=None, clip=1.0, width=48, train_count=1024,
                 log_every=5, eval_every=25)
    r.update(shuffle=True, frozen=False, leak=False, keep_graphs=False, lr_factor=None)
    if fault == "healthy_noisy":
        r.update(batch=4, log_every=1, eval_every=20, lr=r["lr"] / 2)
    elif fault == "healthy_converged":
        r.update(steps=r["steps"] * 3, eval_every=50)
    elif fault == "divergence":  # throws the weights out of the basin without overflowing them
        r.update(lr_factor=40.0 if case.family == "mlp" else 30.0, clip=0.0)
    elif fault == "grad_explosion":  # from the onset, the MLP's inputs stop being normalised (FaultyBatches),
        r.update(clip=1.0)  # the GRU's gradients stop being unscaled (ScaledGradients); clipping saves the updates
    elif fault == "vanishing_gradients":
        r.update(depth=10, hidden=32, activation=nn.Sigmoid, lr=0.05)
    elif fault == "loss_plateau":
        r.update(lr=r["lr"] * 1e-3)
    elif fault == "no_shuffle":
        r.update(shuffle=False, steps=r["train_count"] // r["batch"] * 5, log_every=4, lr=r["lr"] / 5)
    elif fault == "frozen_parameters":
        r.update(frozen=True)
    elif fault == "overfitting":
        if case.family == "mlp":
            r.update(train_count=48, batch=16, hidden=256, momentum=None, lr=3e-3, steps=1200, eval_every=40)
        else:
            r.update(train_count=24, batch=8, width=128, lr=1e-2, steps=600, eval_every=30)
    elif fault == "leakage":
        r.update(leak=True)
    elif fault == "memory_growth":
        r.update(keep_graphs=True, hidden=256, batch=128 if case.family == "mlp" else r["batch"])
    # The step where the fault starts acting (0: from the first step), to measure detection delay.
    default = r["steps"] // 3 * (2 if fault == "oom" else 1)
    r["onset"] = (case.onset_at or default) if fault in ONSET_FAULTS else 0
    return r


def onset(case: Case) -> int:
    """The step where the case's fault starts acting (0: from the first step)."""
    return recipe(case)["onset"]


# -------------------------------------------------------------------------------- the injected faults
class FaultyBatches:
    """The case's ``batch_transform``: what goes wrong with the data from the onset step on. The trainer
    passes the number of steps completed, so the batch is for step ``done + 1``."""

    def __init__(self, case: Case, onset_step: int):
        self.fault, self.family, self.onset = case.fault, case.family, onset_step
        self.started = self.stall = None

    def __call__(self, batch: dict, done: int) -> dict:
        step = done + 1
        if self.started is None:
            self.started = time.perf_counter()
        if self.fault == "nan_loss" and step == self.onset:
            # A batch whose labels are all -100 (a padding or filtering bug): the mean loss over no labels is
            # 0/0. Certain at the step it happens, for any seed -- unlike an LR spike, which an MLP with ReLUs
            # can survive (x2000 once took its loss to 3e17 and back, finite: a "nan_loss" log without a NaN).
            return {**batch, "labels": torch.full_like(batch["labels"], -100)}
        if self.fault == "grad_explosion" and self.family == "mlp" and step >= self.onset:
            return {**batch, "input_ids": batch["input_ids"] * 100.0}  # a unit change upstream: cm, not m
        if self.fault == "throughput_drop" and step >= self.onset:
            # The data loader starts to stall (a slow disk, a transform gone quadratic): twice a normal step.
            self.stall = self.stall or 2 * (time.perf_counter() - self.started) / done
            time.sleep(self.stall)
        if self.fault == "oom" and done == self.onset:
            # A batch padded to an absurd length: the allocator refuses it. The trainer's oom event names
            # the last step completed, the onset.
            torch.zeros(len(batch["labels"]), 2 ** 40)
        return batch


class LearningRateOverride(Callback):
    """From step ``start`` on every step runs at ``factor`` x the configured learning rate, whatever the
    schedule says: a hand-set learning rate that wins over the schedule."""

    def __init__(self, start: int, factor: float):
        self.start, self.factor = start, factor

    def on_before_optimizer_step(self, trainer):
        if trainer.step + 1 >= self.start:
            for group in trainer.optimizer.param_groups:
                group["lr"] = trainer.config.lr * self.factor


class ScaledGradients(Callback):
    """From step ``start`` on, the gradients are ``LOSS_SCALE`` times too large: the loss is scaled for fp16
    (what ``GradScaler.scale`` does) but the gradients are never unscaled before clipping and the optimizer
    step. Clipping keeps the updates sane; the gradient norm jumps by orders of magnitude and stays there."""

    def __init__(self, start: int):
        self.start = start

    @torch.no_grad()
    def on_before_optimizer_step(self, trainer):
        if trainer.step + 1 >= self.start:
            torch._foreach_mul_([p.grad for p in trainer.parameters if p.grad is not None], LOSS_SCALE)


class KeepGraphs(Callback):
    """The bug of memory_growth: every step's outputs kept for an end-of-epoch metric, graphs and all."""

    def __init__(self):
        self.kept = []

    def on_step_end(self, trainer):
        self.kept.append(trainer.model(**trainer.step_batches[-1])["logits"])


class SGDTrainer(Trainer):
    """The course Trainer with SGD and momentum instead of AdamW: the optimizer of these runs' recipes."""

    def __init__(self, *args, momentum: float, **kwargs):
        self.momentum = momentum
        super().__init__(*args, **kwargs)

    def make_optimizer(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(parameter_groups(self.model, self.config.weight_decay), lr=self.config.lr,
                               momentum=self.momentum)


MINIMAL_KEYS = {"step", "epoch", "timestamp", "train_loss", "val_loss", "lr", "tokens_per_sec", "gpu_memory_gb"}
NEEDS = {  # what a minimal log must still carry for the fault to be visible at all
    "memory_growth": {"cpu_memory_gb"}, "frozen_parameters": {"run_start"}, "leakage": {"run_start"},
    "oom": {"oom"}, "vanishing_gradients": {"grad_norm/"}, "grad_explosion": {"grad_norm"},
}


class MinimalJsonlLogger(JsonlLogger):
    """The course writer, keeping only the course text's Level-3 keys and events, plus ``needs``: the log
    of a user who wrote the minimal logger (the doctor must still see the fault in what ``needs`` names)."""

    def __init__(self, run_dir: Path, needs: set[str]):
        super().__init__(run_dir)
        self.needs = needs

    def keep(self, key: str) -> bool:
        return key in MINIMAL_KEYS or any(key == n or (n.endswith("/") and key.startswith(n)) for n in self.needs)

    def write(self, record: dict) -> None:
        if "event" in record and not self.keep(record["event"]):
            return
        super().write({k: v for k, v in record.items() if "event" in record or self.keep(k)})


def train(case: Case, directory: Path) -> None:
    """Train the case's MLP or GRU on the course Trainer, with the case's fault injected."""
    r = recipe(case)
    if case.family == "mlp":
        corpus = mlp_corpus(case.seed, r["train_count"], r["shuffle"], r["leak"])
    else:
        corpus = markov_subset(case.seed, r["train_count"], r["shuffle"])
    config = TrainConfig(steps=r["steps"], batch_size=r["batch"], lr=r["lr"], warmup_steps=0, min_lr_ratio=1.0,
                         weight_decay=0.0, grad_clip=r["clip"], eval_every=r["eval_every"],
                         eval_batches=len(corpus.val) // r["batch"], log_every=r["log_every"],
                         shuffle=r["shuffle"], seed=case.seed, device="cpu")  # a constant learning rate
    seed_everything(case.seed)
    if case.family == "mlp":
        model = MLP(corpus.train.x.shape[1], r["hidden"], r["depth"], r["activation"])
    else:
        model = GRULM(corpus.tokenizer.vocab_size, r["width"], peek=r["leak"])
    if r["frozen"]:  # before the Trainer: its optimizer takes what is trainable now
        first = model.input_layer if case.family == "mlp" else model.embedding
        first.requires_grad_(False)
    writer = MinimalJsonlLogger(directory, NEEDS.get(case.fault, set())) if case.minimal else JsonlLogger(directory)
    callbacks = [GradNormPerGroup(module_group), UpdateRatio(module_group), Memory(), FirstNonFinite(), writer]
    if r["lr_factor"]:
        callbacks.append(LearningRateOverride(r["onset"], r["lr_factor"]))
    if r["keep_graphs"]:
        callbacks.append(KeepGraphs())
    if case.family == "gru" and case.fault == "grad_explosion":
        callbacks.append(ScaledGradients(r["onset"]))
    batches = FaultyBatches(case, r["onset"]) if r["onset"] else None
    if r["momentum"] is None:
        trainer = Trainer(model, corpus, config, callbacks, batch_transform=batches)
    else:
        trainer = SGDTrainer(model, corpus, config, callbacks, batch_transform=batches, momentum=r["momentum"])
    try:
        trainer.fit()
    except RuntimeError as err:
        if not is_out_of_memory(err):  # the oom case: the log already says so (its oom event, its run_end)
            raise
