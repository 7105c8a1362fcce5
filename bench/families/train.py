"""One plain training loop for every family, writing the JSONL contract (docs/jsonl-contract.md) itself.

Faults are injected into the *training*, never into the log: a batch whose labels are all ignored (0/0 ->
NaN), a learning rate far too high from the start or from a random step, inputs that stop being
normalised, a hidden layer knocked dead by one huge bad update, data read in sorted order, a frozen
first layer, a handful of training examples, tiny batches at a high learning rate, labels leaking into
the inputs. Timing and memory are *constructed* (a simulated clock and allocator), not measured: this
machine is shared, and a benchmark whose healthy runs slow down with the neighbours' load measures the
neighbours. The constructed clock has the realistic parts -- warm-up, per-window jitter, busy-neighbour
episodes on healthy runs -- and the faults (a loader that stalls, a leak that grows every step) are
applied to it at their onset.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import torch
from torch import nn

from bench.families.cases import Case
from bench.families.tasks import FAMILIES, HELD_OUT_FAMILIES

MINIMAL_KEYS = ("step", "epoch", "train_loss", "val_loss", "lr", "tokens_per_sec", "gpu_memory_gb", "timestamp")
BASE_LR = {"sgd": 0.1, "momentum": 0.03, "adam": 3e-3, "adamw": 3e-3, "rmsprop": 1e-3, "adagrad": 0.05}


def optimizer(name, params, lr):
    if name == "sgd":
        return torch.optim.SGD(params, lr)
    if name == "momentum":
        return torch.optim.SGD(params, lr, momentum=0.9)
    if name == "adam":
        return torch.optim.Adam(params, lr)
    if name == "adamw":
        return torch.optim.AdamW(params, lr, weight_decay=0.01)
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr)
    return torch.optim.Adagrad(params, lr)


class Log:
    """Writes records and events, keeping only the keys the case's log style allows."""

    def __init__(self, path: Path, minimal: bool, extra: set[str]):
        self.file = path.open("w")
        self.minimal, self.extra = minimal, extra

    def record(self, values: dict):
        if self.minimal:
            values = {k: v for k, v in values.items()
                      if k in MINIMAL_KEYS or k in self.extra or k.split("/")[0] in self.extra}
        self.file.write(json.dumps(values) + "\n")

    def event(self, name: str, **values):
        if not self.minimal or name in self.extra:
            self.file.write(json.dumps({"event": name, **values}) + "\n")


def groups(model: nn.Module) -> dict[str, list[torch.Tensor]]:
    named = {}
    for name, parameter in model.named_parameters():
        named.setdefault("layer" + name.split(".")[0], []).append(parameter)
    return named


def hidden_biases(model):
    return [m.bias for m in model.modules() if isinstance(m, (nn.Linear, nn.Conv2d)) and m.bias is not None][:-1]


def generate(case: Case, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(case.seed)
    plan = case.plan()
    fault = case.fault
    leak = plan["leak"] if fault == "leakage" else 0.0
    task = {**FAMILIES, **HELD_OUT_FAMILIES}[case.family](case.seed, fault, leak)
    model = task.model
    if fault == "frozen_parameters":
        for parameter in next(iter(groups(model).values())):
            parameter.requires_grad_(False)
    trainable = [p for p in model.parameters() if p.requires_grad]
    lr0 = plan["lr"]
    opt = optimizer(plan["optimizer"], trainable, lr0)
    steps, log_every, batch = plan["steps"], plan["log_every"], plan["batch"]
    onset = plan["onset"]
    per_epoch = max(1, len(task.x) // batch)
    eval_every = plan["eval_every"]
    extra = set(plan["needs"])
    log = Log(directory / "metrics.jsonl", plan["minimal"], extra)
    rng = np.random.default_rng(case.seed + 7)
    loss_fn = nn.MSELoss() if task.loss == "mse" else nn.CrossEntropyLoss()
    start_info = {"total_params": sum(p.numel() for p in model.parameters()),
                  "trainable_params": sum(p.numel() for p in trainable)}
    if plan["declare_epoch"]:
        start_info["steps_per_epoch"] = per_epoch
    if plan["declare_floor"] and task.floor is not None:
        start_info["loss_floor"] = round(task.floor, 5)
    if plan["declare_classes"] and task.classes:
        start_info["vocab_size" if task.lm else "num_classes"] = task.classes
    if plan["minimal"]:
        start_info = {k: v for k, v in start_info.items() if k in plan["start_keys"]}
    clock = Clock(case, plan, rng)

    def objective(xb, yb):
        out = model(xb)
        if task.lm:
            return loss_fn(out.reshape(-1, out.shape[-1]), yb.reshape(-1))
        return loss_fn(out, yb)

    def evaluate():
        model.eval()
        with torch.no_grad():
            value = float(objective(task.val_x, task.val_y))
        model.train()
        return value

    def lr_at(step):
        if plan["schedule"] == "restarts":  # cosine with warm restarts (SGDR), three cycles
            cycle = steps / 3
            return lr0 * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * ((step - 1) % cycle) / cycle)))
        lr = lr0 * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / steps))) if plan["schedule"] == "cosine" else lr0
        if fault == "divergence" and step >= onset:
            lr *= plan["spike"]
        return lr

    order = torch.randperm(len(task.x))
    saved = None
    log.event("run_start", step=0, timestamp=clock.now, **start_info)
    window, step = [], 0
    resume_at, resume_from = plan.get("resume", (None, None))
    while step < steps:
        step += 1
        epoch, position = divmod(step - 1, per_epoch)
        if position == 0 and fault != "no_shuffle":
            order = torch.randperm(len(task.x))
        index = order[position * batch:(position + 1) * batch] if fault != "no_shuffle" else \
            torch.arange(position * batch, (position + 1) * batch)
        xb, yb = task.x[index], task.y[index].clone()
        if fault == "grad_explosion" and step >= onset:
            xb = xb * plan["spike"]
        if fault == "nan_loss" and step == onset:
            if task.loss == "ce":
                yb[...] = -100  # a batch of padding only: the mean over zero labels is 0/0
            else:
                xb = xb.clone()
                xb[0] = float("inf")
        for group in opt.param_groups:
            group["lr"] = lr_at(step)
        loss = objective(xb, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        logging = step % log_every == 0 or step == steps
        norms = {}
        if logging:
            for name, params in groups(model).items():
                grads = [p.grad.norm() ** 2 for p in params if p.grad is not None]
                norms[name] = float(torch.stack(grads).sum().sqrt()) if grads else 0.0
            total = math.sqrt(sum(v * v for v in norms.values()))
            before = {n: [p.detach().clone() for p in ps] for n, ps in groups(model).items()}
        if plan["clip"]:
            torch.nn.utils.clip_grad_norm_(trainable, plan["clip"])
        opt.step()
        if plan["dead"] and step == onset:
            with torch.no_grad():  # what one enormous bad update does to a ReLU layer: every unit switched off
                for bias in hidden_biases(model):
                    bias.sub_(50.0)
        window.append(loss.item())
        clock.tick(step, task, batch)
        if fault == "oom" and step == onset:
            log.event("oom", step=step, timestamp=clock.now, message="CUDA out of memory. Tried to allocate 8.00 GiB")
            log.event("run_end", step=step, timestamp=clock.now, status="oom")
            break
        if fault == "nan_loss" and step == onset:
            log.event("nan", step=step, timestamp=clock.now, tensor="loss")
        if logging:
            values = {"step": step, "epoch": epoch, "timestamp": round(clock.now, 3),
                      "train_loss": float(np.mean(window)), "lr": lr_at(step),
                      "tokens_per_sec": round(clock.speed(), 2), plan["memory_key"]: round(clock.memory(step), 6),
                      "grad_norm": total}
            if plan["groups"]:
                values.update({f"grad_norm/{n}": v for n, v in norms.items()})
            if plan["ratios"]:
                for name, params in groups(model).items():
                    change = math.sqrt(sum(float((p.detach() - b).norm() ** 2) for p, b in zip(params, before[name])))
                    size = math.sqrt(sum(float(p.detach().norm() ** 2) for p in params))
                    values[f"update_ratio/{name}"] = change / max(size, 1e-12)
            log.record(values)
            window = []
        if step % eval_every == 0:
            log.record({"step": step, "epoch": epoch, "timestamp": round(clock.now, 3), "val_loss": evaluate()})
        if step == resume_from:
            saved = (copy.deepcopy(model.state_dict()), copy.deepcopy(opt.state_dict()))
        if step == resume_at and saved is not None:  # the run crashed; restart from the last checkpoint
            model.load_state_dict(saved[0])
            opt.load_state_dict(saved[1])
            step, saved, window = resume_from, None, []
            log.event("run_start", step=step, timestamp=clock.now, **start_info)
    else:
        log.event("run_end", step=step, timestamp=clock.now, status="completed")
    log.file.close()
    return directory


class Clock:
    """A simulated wall clock and memory meter (see the module docstring: never the machine's own)."""

    def __init__(self, case: Case, plan: dict, rng):
        self.case, self.plan, self.rng = case, plan, rng
        self.now = 1.7e9 + case.seed * 1000.0
        self.step_time = plan["step_time"]
        self.tokens = 0
        self.elapsed = 0.0
        self.last = 0
        self.base_memory = plan["memory_base"]

    def factor(self, step) -> float:
        """How much slower than normal this step runs."""
        plan = self.plan
        slow = 1.0
        if step <= 2:
            slow *= 3.0  # warm-up
        for start, end, size in plan["load"]:  # busy neighbours: healthy, but the machine is shared
            if start <= step < end:
                slow *= size * math.exp(self.rng.normal(0, 0.2))
        if self.case.fault == "throughput_drop" and step >= plan["onset"]:
            slow *= plan["stall"]
        return slow

    def tick(self, step, task, batch):
        seconds = self.step_time * self.factor(step) * math.exp(self.rng.normal(0, self.plan["jitter"]))
        self.now += seconds
        self.elapsed += seconds
        self.tokens += batch * task.tokens_per_example

    def speed(self) -> float:
        value = self.tokens / max(self.elapsed, 1e-9)
        self.tokens, self.elapsed = 0, 0.0
        return value

    def memory(self, step) -> float:
        plan = self.plan
        value = self.base_memory * (1 + plan["creep"] * (1 - math.exp(-step / (0.1 * plan["steps"]))))
        value += self.rng.normal(0, 2e-4 * self.base_memory)
        if step >= plan["eval_every"]:
            value += plan["eval_bump"] * self.base_memory  # the first evaluation's buffers stay allocated
        if self.case.fault == "memory_growth" and step >= plan["onset"]:
            value += plan["leak_growth"] * self.base_memory * (step - plan["onset"]) / plan["steps"]
        return value
