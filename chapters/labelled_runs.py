"""Labelled runs for the doctor: small training runs with one injected fault each (its benchmark, and the
source of exercise 09's mystery logs). Kept outside ``chapters.doctor``: the doctor reads logs, it does not
make them, and it must not depend on the scenarios used here.

Two kinds of training code that are *not* the course GPT -- an MLP classifier on synthetic data and a GRU
language model on the Markov corpus -- share one plain training loop (:func:`train`) that writes the JSONL
contract itself. Each fault is injected the way it happens in real code (an LR spike, a forgotten
``requires_grad=False``, data sorted by class, a loss kept with its graph...), never by editing the log.
The course GPT adds runs through the project's own Trainer (:func:`gpt_case`), and every course scenario
(``chapters.scenarios``: the broken run labelled with the scenario's label, the fixed run healthy) adds
runs of the GPT broken the way the lessons break it (:func:`scenario_cases`).

Why the MLP's loss floor is exact: its labels are a deterministic function of the inputs, flipped to a
random other class with probability ``NOISE``; the best possible predictor then has expected cross-entropy
``H(NOISE) + NOISE * log(C - 1)``, so a validation loss far below that proves the model sees the labels.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import torch
from torch import nn

from chapters.core.data import Corpus, LineDataset, markov_corpus
from chapters.core.run import build_trainer, preset_config
from chapters.doctor.findings import LABELS
from chapters.metrics.grad_norm import GradNormPerGroup
from chapters.records.jsonl import JsonlLogger
from chapters.scenarios import SCENARIOS
from chapters.scenarios import nan as scenario_nan
from chapters.scenarios.base import Options
from chapters.scenarios.runner import run_variant

FAULTS = {  # fault -> the label the doctor should give (None: a healthy run, no findings expected)
    "healthy": None, "healthy_noisy": None, "healthy_converged": None, **{label: label for label in LABELS},
}
FAMILY_FAULTS = {
    "mlp": [fault for fault in FAULTS if fault != "oscillation"],
    "gru": ["healthy", "healthy_noisy", "healthy_converged", "nan_loss", "loss_plateau", "no_shuffle",
            "frozen_parameters", "overfitting", "leakage", "throughput_drop", "memory_growth", "oom", "grad_explosion"],
    "gpt": ["healthy", "loss_plateau", "nan_loss", "no_shuffle", "frozen_parameters", "overfitting"],
}
CLASSES, FEATURES, NOISE = 5, 16, 0.1


@dataclass(frozen=True)
class Case:
    family: str
    fault: str
    seed: int
    minimal: bool = False  # write only the course text's Level-3 keys (plus what the fault needs to be seen)
    onset_at: int | None = None  # the step the fault starts (default: a third of the run; the oom: two thirds)
    variant: str = "broken"  # scenario cases: the scenario's broken run or its fixed run

    @property
    def label(self) -> str | None:
        if self.family == "scenario":
            scenario = SCENARIOS[self.fault.split(":")[0]]
            return scenario.LABEL if self.variant == "broken" and scenario.EXPECT_SYMPTOM else None
        return FAULTS[self.fault]

    @property
    def name(self) -> str:
        if self.family == "scenario":
            return f"scenario-{self.fault.replace(':', '-')}-{self.variant}-s{self.seed}"
        onset = f"-at{self.onset_at}" if self.onset_at is not None else ""
        return f"{self.family}-{self.fault}-s{self.seed}{onset}{'-min' if self.minimal else ''}"


def all_cases(seeds=(0, 1, 2), gpt_seeds=(0,)) -> list[Case]:
    cases = []
    for family in ("mlp", "gru"):
        for fault in FAMILY_FAULTS[family]:
            for seed in seeds:
                cases.append(Case(family, fault, seed, minimal=seed % 2 == 1))
    for fault in FAMILY_FAULTS["gpt"]:
        for seed in gpt_seeds:
            cases.append(Case("gpt", fault, seed))
    return cases


# nan causes whose fault never reaches the metrics: on the CPU bad token ids crash the first bad step with
# an index error (in run_end's error), before any metric moves -- documented in docs/doctor.md.
NOT_IN_METRICS = {"bad_token_ids"}


def scenario_cases(seeds=(0,)) -> list[Case]:
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
                cases += [Case("scenario", fault, seed, variant=variant) for variant in variants]
    return cases


def generate(case: Case, directory: Path) -> Path:
    """Run the case and write ``directory/metrics.jsonl``; returns the log's path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "metrics.jsonl"
    path.unlink(missing_ok=True)
    if case.family == "scenario":
        sid, _, cause = case.fault.partition(":")
        run_variant(sid, case.variant, Options(seed=case.seed, device="cpu", cause=cause or None), directory)
    elif case.family == "gpt":
        gpt_case(case, directory)
    else:
        train(case, path)
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


# ---------------------------------------------------------------------------------------- the models
class MLP(nn.Module):
    def __init__(self, inputs: int, hidden: int, depth: int, activation=nn.ReLU):
        super().__init__()
        layers, width = [], inputs
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), activation()]
            width = hidden
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, CLASSES)

    def forward(self, x):
        return self.head(self.body(x))

    def groups(self) -> dict[str, list[nn.Parameter]]:
        linear = [m for m in self.body if isinstance(m, nn.Linear)]
        named = {"input_layer": list(linear[0].parameters())}
        for i, layer in enumerate(linear[1:], 1):
            named[f"hidden_{i}"] = list(layer.parameters())
        named["output_layer"] = list(self.head.parameters())
        return named


class GRULM(nn.Module):
    """A character GRU language model. ``peek``: the bug of feeding the *next* token in as well."""

    def __init__(self, vocab: int, width: int = 64, peek: bool = False):
        super().__init__()
        self.peek = peek
        self.embedding = nn.Embedding(vocab, width)
        self.rnn = nn.GRU(width * (2 if peek else 1), width, batch_first=True)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids, labels=None):
        x = self.embedding(ids)
        if self.peek:
            x = torch.cat([x, self.embedding(labels)], -1)
        return self.head(self.rnn(x)[0])

    def groups(self) -> dict[str, list[nn.Parameter]]:
        return {"embedding": list(self.embedding.parameters()), "recurrent": list(self.rnn.parameters()),
                "head": list(self.head.parameters())}


# ------------------------------------------------------------------------------------ the run recipe
def recipe(case: Case) -> dict:
    """Settings of the run: a healthy base per family, changed by the fault."""
    fault = case.fault
    if case.family == "mlp":
        r = dict(steps=400, batch=32, lr=0.05, optimizer="sgd", clip=0.0, depth=2, hidden=64, activation=nn.ReLU,
                 train_count=4096, log_every=5, eval_every=25)
    else:
        r = dict(steps=300, batch=16, lr=3e-3, optimizer="adam", clip=1.0, width=48, train_count=1024,
                 log_every=5, eval_every=25)
    r.update(shuffle=True, lr_at=None, frozen=False, leak=False, keep_graphs=False, sleep_from=None, oom_at=None,
             empty_labels_at=None, unscaled_from=None)
    third = case.onset_at or r["steps"] // 3
    if fault == "healthy_noisy":
        r.update(batch=4, log_every=1, eval_every=20, lr=r["lr"] / 2)
    elif fault == "healthy_converged":
        r.update(steps=r["steps"] * 3, eval_every=50)
    elif fault == "nan_loss":
        # A batch whose labels are all -100 (a padding or filtering bug): the mean loss over no tokens is
        # 0/0. Certain at the step it happens, for any seed -- unlike an LR spike, which an MLP with ReLUs
        # can survive (x2000 once took its loss to 3e17 and back, finite: a "nan_loss" log without a NaN).
        r.update(empty_labels_at=third)
    elif fault == "divergence":
        r.update(lr_at=(third, 40.0 if case.family == "mlp" else 30.0), clip=0.0)  # throws the weights out
        # of the basin without overflowing them
    elif fault == "grad_explosion":
        if case.family == "mlp":
            r.update(unscaled_from=third, clip=1.0)  # inputs stop being normalised (a unit change upstream)
        else:
            r.update(lr=1.0, optimizer="sgd_heavy", clip=0.0)  # an RNN, SGD with momentum 0.99, no clipping
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
            r.update(train_count=48, batch=16, hidden=256, optimizer="adam", lr=3e-3, steps=1200, eval_every=40)
        else:
            r.update(train_count=24, batch=8, width=128, lr=1e-2, steps=600, eval_every=30)
    elif fault == "leakage":
        r.update(leak=True)
    elif fault == "memory_growth":
        r.update(keep_graphs=True, hidden=256, batch=128 if case.family == "mlp" else r["batch"])
    elif fault == "throughput_drop":
        r.update(sleep_from=third)
    elif fault == "oom":
        r.update(oom_at=case.onset_at or third * 2)
    # The step where the fault starts acting (0: from the first step), to measure detection delay.
    r["onset"] = next((v if isinstance(v, int) else v[0] for v in (r["lr_at"], r["empty_labels_at"],
                       r["unscaled_from"], r["sleep_from"], r["oom_at"]) if v), 0)
    return r


def onset(case: Case) -> int:
    if case.family == "scenario":  # faults act from the first step, but for poisoned batches
        return scenario_nan.POISON_EVERY if case.fault == "nan:all_ignored_labels" else 0
    return 0 if case.family == "gpt" else recipe(case)["onset"]


MINIMAL_KEYS = {"step", "epoch", "timestamp", "train_loss", "val_loss", "lr", "tokens_per_sec", "gpu_memory_gb"}
NEEDS = {  # what a minimal log must still carry for the fault to be visible at all
    "memory_growth": {"cpu_memory_gb"}, "frozen_parameters": {"run_start"}, "leakage": {"run_start"},
    "oom": {"oom"}, "vanishing_gradients": {"grad_norm/"}, "grad_explosion": {"grad_norm"},
}


class LogWriter:
    """Writes the JSONL contract: metric records, and events unless the case asks for a minimal log."""

    def __init__(self, path: Path, case: Case):
        self.file = open(path, "w", encoding="utf-8")
        self.keep = None
        if case.minimal:
            needs = NEEDS.get(case.fault, set())
            self.keep = lambda key: key in MINIMAL_KEYS or key in needs or any(
                n.endswith("/") and key.startswith(n) for n in needs)

    def metrics(self, record: dict) -> None:
        if self.keep is not None:
            record = {k: v for k, v in record.items() if self.keep(k)}
        self.file.write(json.dumps(record) + "\n")

    def event(self, name: str, **fields) -> None:
        if self.keep is None or self.keep(name):
            self.file.write(json.dumps({"event": name, "timestamp": time.time(), **fields}) + "\n")

    def close(self):
        self.file.close()


def _data(case: Case, r: dict):
    """(train batches factory, val batch, units per example, vocab/classes, model, floor)."""
    torch.manual_seed(case.seed)
    if case.family == "mlp":
        x, y = classification_data(case.seed, r["train_count"] + 1024, leak=r["leak"])
        train_x, train_y, val = x[:-1024], y[:-1024], (x[-1024:], y[-1024:])
        if not r["shuffle"]:  # the bug's setting: a file sorted by class, read in order
            order = train_y.argsort(stable=True)
            train_x, train_y = train_x[order], train_y[order]
        model = MLP(x.shape[1], r["hidden"], r["depth"], r["activation"])
        return (train_x, train_y), val, 1, model, mlp_floor()
    corpus = markov_corpus(32)
    generator = torch.Generator().manual_seed(case.seed)
    rows = corpus.train.tokens[torch.randperm(len(corpus.train), generator=generator)[: r["train_count"]]]
    if not r["shuffle"]:
        rows = rows[rows[:, 0].argsort(stable=True)]  # grouped by dialect tag, as a concatenated file would be
    val_rows = corpus.val.tokens[:256]
    model = GRULM(corpus.tokenizer.vocab_size, r["width"], peek=r["leak"])
    return (rows[:, :-1], rows[:, 1:]), (val_rows[:, :-1], val_rows[:, 1:]), rows.shape[1] - 1, model, \
        corpus.loss_floor


def _loss(case, model, x, y):
    if case.family == "mlp":
        return nn.functional.cross_entropy(model(x), y)
    logits = model(x, y)
    return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=-100)


def train(case: Case, path: Path) -> None:
    """The shared training loop, with the case's fault injected."""
    torch.set_num_threads(1)
    r = recipe(case)
    (train_x, train_y), (val_x, val_y), units, model, floor = _data(case, r)
    groups = model.groups()
    if r["frozen"]:
        for p in groups["input_layer" if case.family == "mlp" else "embedding"]:
            p.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    if r["optimizer"] == "adam":
        optimizer = torch.optim.Adam(params, lr=r["lr"])
    else:
        momentum = {"sgd": 0.9, "sgd_heavy": 0.99}[r["optimizer"]]
        optimizer = torch.optim.SGD(params, lr=r["lr"], momentum=momentum)
    steps_per_epoch = len(train_x) // r["batch"]
    log = LogWriter(path, case)
    total = sum(p.numel() for p in model.parameters())
    log.event("run_start", step=0, config={k: str(v) for k, v in r.items()}, total_params=total,
              trainable_params=sum(p.numel() for p in params), steps_per_epoch=steps_per_epoch, loss_floor=floor,
              device="cpu", torch_version=torch.__version__)
    generator = torch.Generator().manual_seed(case.seed)
    kept, window_loss, window_units, window_start, nan_seen = [], 0.0, 0, time.perf_counter(), False
    order, status = None, "completed"
    for step in range(1, r["steps"] + 1):
        epoch, position = divmod(step - 1, steps_per_epoch)
        if position == 0:
            order = torch.randperm(len(train_x), generator=generator) if r["shuffle"] else torch.arange(len(train_x))
        index = order[position * r["batch"]:(position + 1) * r["batch"]]
        x, y = train_x[index], train_y[index].clone()
        if step == 1:
            first_step_started = time.perf_counter()
        if r["sleep_from"] and step == r["sleep_from"]:
            stall = 2 * (time.perf_counter() - first_step_started) / (step - 1)  # twice a normal step
        if r["sleep_from"] and step >= r["sleep_from"]:
            time.sleep(stall)  # the data loader starts to stall (a slow disk, a transform gone quadratic)
        if r["unscaled_from"] and step >= r["unscaled_from"]:
            x = x * 1000.0
        if r["empty_labels_at"] == step:
            y[:] = -100
        if r["lr_at"] and step == r["lr_at"][0]:
            for group in optimizer.param_groups:
                group["lr"] *= r["lr_at"][1]
        try:
            if r["oom_at"] == step:  # a batch padded to an absurd length: the allocator refuses it
                torch.zeros(r["batch"], 2 ** 40)
            loss = _loss(case, model, x, y)
        except RuntimeError as err:
            if "allocate" not in str(err):
                raise
            log.event("oom", step=step, message=str(err).splitlines()[0][:200])
            status = "oom"
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        logging_step = step % r["log_every"] == 0
        if logging_step:
            before = {name: [p.detach().clone() for p in ps] for name, ps in groups.items()}
            group_norms = {name: _norm([p.grad for p in ps if p.grad is not None]) for name, ps in groups.items()}
        norm = torch.nn.utils.clip_grad_norm_(params, r["clip"] or math.inf)
        optimizer.step()
        if r["keep_graphs"]:  # the bug: outputs kept for an end-of-epoch metric, graphs and all
            kept.append(model(x) if case.family == "mlp" else model(x, y))
        window_loss += loss.item()
        window_units += len(x) * units
        if not math.isfinite(loss.item()) and not nan_seen:
            nan_seen = True
            log.event("nan", step=step, tensor="loss")
        if logging_step:
            elapsed = time.perf_counter() - window_start
            record = {"step": step, "epoch": epoch, "timestamp": time.time(),
                      "train_loss": window_loss / r["log_every"], "lr": optimizer.param_groups[0]["lr"],
                      "grad_norm": float(norm), "tokens_per_sec": window_units / elapsed,
                      "cpu_memory_gb": psutil.Process().memory_info().rss / 1e9}
            for name, ps in groups.items():
                record[f"grad_norm/{name}"] = group_norms[name]
                change = _norm([p.detach() - b for p, b in zip(ps, before[name])])
                record[f"update_ratio/{name}"] = change / max(_norm([p.detach() for p in ps]), 1e-12)
            log.metrics(record)
            window_loss, window_units, window_start = 0.0, 0, time.perf_counter()
        if step % r["eval_every"] == 0 or step == r["steps"]:
            with torch.no_grad():
                val = _loss(case, model.eval(), val_x, val_y).item()
            model.train()
            log.metrics({"step": step, "epoch": epoch, "timestamp": time.time(), "val_loss": val})
    log.event("run_end", step=step, status=status)
    log.close()


def _norm(tensors) -> float:
    tensors = [t for t in tensors if t is not None]
    if not tensors:
        return 0.0
    return float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(t.float()) for t in tensors])))


# ---------------------------------------------------------------------------------------- course GPT
def gpt_case(case: Case, directory: Path) -> None:
    """A course-GPT run through the project's Trainer, with the case's fault in its config."""
    torch.set_num_threads(1)
    full = markov_corpus(32)
    lines = 24 if case.fault == "overfitting" else 640
    rows = full.train.tokens[torch.randperm(len(full.train), generator=torch.Generator().manual_seed(case.seed))[:lines]]
    if case.fault == "no_shuffle":
        rows = rows[rows[:, 0].argsort(stable=True)]  # grouped by dialect, as concatenated files are
    corpus = Corpus("markov-subset", full.tokenizer, LineDataset(rows), LineDataset(full.val.tokens[:256]),
                    full.loss_floor)
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
