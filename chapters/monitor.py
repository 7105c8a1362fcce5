"""Monitoring for a training loop you wrote yourself: the course's callbacks without the course's Trainer.

    monitor = Monitor(model, optimizer, out="runs/mine", log_every=10)
    with monitor:
        for batch in loader:
            loss = model(batch)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            monitor.step(loss, batch)     # after optimizer.step(): no sync, except on logging steps
            if monitor.should_stop:       # the live doctor asked to stop (doctor=True, stop_on=...)
                break

It writes the same ``metrics.jsonl`` (and, with ``tensorboard=True``, the same event files) as
``clinic train``, with the same keys -- gradient norms per group, update ratios, step time, memory, the
``nan`` event -- so ``clinic diagnose`` and ``clinic plot`` read it like any course run.

How, without a second copy of any metric: every measuring callback and writer in the course reads a small
surface of the Trainer (``trainer.model``, ``trainer.step``, ``trainer.grad_norm``, ``trainer.config
.log_every``...). A Monitor keeps an object with exactly that surface (:class:`LoopView`) and calls the
callbacks' hooks at the moments the Trainer calls them:

* ``on_before_optimizer_step`` from a hook registered on *your* optimizer (``register_step_pre_hook``):
  the gradients are complete there, whatever your loop does between ``backward`` and ``step``. That is
  also where every parameter's gradient norm is taken -- one batched kernel, on the device, as the Trainer
  does to clip -- so the norms are those the optimizer receives: after your clipping, if you clip. Pass
  what ``clip_grad_norm_`` returned as ``monitor.step(loss, grad_norm=norm)`` to log the norm before it;
* ``on_step_end`` and, on logging steps, ``on_measure`` then ``on_log`` from :meth:`Monitor.step`;
* ``on_eval_end`` from :meth:`Monitor.eval`, ``on_run_end`` from :meth:`Monitor.close` (or the ``with``).

The record itself is built by the Trainer's own methods (``log_record``, ``log``, ``emit_event``), borrowed
below as they are: a ``LoopView`` holds the attributes they read (the loss summed on the device over the
window, the window's tokens and clock), so a monitored loop and ``clinic train`` cannot drift apart.
Same overhead rule as the Trainer: between logging steps nothing is read back from the device.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import torch

from chapters.core import distributed
from chapters.core.callbacks import FrozenRecord
from chapters.core.devices import is_out_of_memory
from chapters.core.trainer import Trainer
from chapters.doctor.live import DoctorCallback
from chapters.logging_levels.level2_histograms import HISTOGRAM_EVERY
from chapters.metrics.groups import Grouping, module_group
from chapters.monitoring import metric_callbacks, writer_callbacks


@dataclass
class MonitorConfig:
    """The few Trainer settings the callbacks read (written to ``run_start`` as the run's config)."""

    log_every: int = 10
    steps: int | None = None  # the planned number of steps, when known: the last one is then logged too


class LoopView:
    """What the course's callbacks see as ``trainer``: the Trainer's surface, kept up to date by a Monitor.

    A separate object because the two step counters collide: callbacks read ``trainer.step`` (steps
    completed, an int) while your loop calls ``monitor.step(loss)``.
    """

    # The Trainer's record-building code, reused as is (see the module docstring).
    log_record = Trainer.log_record
    log = Trainer.log
    emit_event = Trainer.emit_event
    _reset_window = Trainer._reset_window
    _emit = Trainer._emit
    measure_gradients = Trainer.measure_gradients

    def __init__(self, model, optimizer, config: MonitorConfig, callbacks, corpus, steps_per_epoch):
        self.model, self.optimizer, self.config, self.callbacks = model, optimizer, config, callbacks
        self.corpus, self.steps_per_epoch = corpus, steps_per_epoch
        self.device = next(model.parameters()).device
        self.parameters = list(model.parameters())
        self.scaler = torch.amp.GradScaler(self.device.type, enabled=False)  # your loop scales, if anything
        self.ranks = distributed.Ranks()  # one process
        self._work_clock = None  # the Trainer's per-rank clock: only under torchrun
        self.step = self.epoch = 0  # optimizer steps completed
        self.lr: float | None = None
        self.last_loss = self.grad_norm = self.parameter_grad_norms = None
        self.should_stop = False
        self.error: str | None = None
        self._no_grad = torch.zeros((), device=self.device)  # stands in for a missing gradient
        self._reset_window()

    @torch.no_grad()
    def before_optimizer_step(self, optimizer, args, kwargs) -> None:
        """The gradients are complete: take every parameter's norm (on the device), let the callbacks look."""
        self.measure_gradients()
        self.lr = optimizer.param_groups[0]["lr"]  # the rate this step uses (a scheduler moves it after)
        self._emit("on_before_optimizer_step")

    def write_record(self) -> None:
        counted_tokens = self._tokens
        record = self.log_record()  # reads the loss and the norm: the one sync of the window
        if not counted_tokens:  # no batch was given: the speed is unknown, and an unknown key is absent
            record.pop("tokens_per_sec")
        self.log(record)


class Monitor:
    """Course monitoring for any loop: call :meth:`step` once per optimizer step.

    ``out``: the run folder (``metrics.jsonl``; ``tensorboard/`` with ``tensorboard=True``, with activation and
    gradient histograms every ``histogram_every`` steps -- ``None`` for none).
    ``grouping``: parameter name -> group for ``grad_norm/<group>`` (default: the top-level module).
    ``doctor=True`` runs the live doctor every ``log_every * 10`` steps and prints new findings on stderr;
    a label in ``stop_on`` sets :attr:`should_stop`. ``loss_floor``, ``vocab_size`` and ``steps_per_epoch``
    go to ``run_start`` when you know them: the doctor compares the loss with them.
    """

    def __init__(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, out: str | Path,
                 log_every: int = 10, tensorboard: bool = False, doctor: bool = False, stop_on=(),
                 grouping: Grouping = module_group, steps: int | None = None, loss_floor: float | None = None,
                 vocab_size: int | None = None, steps_per_epoch: int | None = None,
                 histogram_every: int | None = HISTOGRAM_EVERY):
        if not isinstance(log_every, int) or log_every < 1:
            raise ValueError(f"log_every must be a positive integer, got {log_every!r}")
        callbacks = [*metric_callbacks(grouping),
                     *writer_callbacks(out, (2, 3) if tensorboard else (3,), histogram_every=histogram_every)]
        if doctor or stop_on:
            callbacks.append(DoctorCallback(stop_on, stream=sys.stderr if doctor else None))
        corpus = SimpleNamespace(loss_floor=loss_floor, tokenizer=SimpleNamespace(vocab_size=vocab_size))
        self.view = LoopView(model, optimizer, MonitorConfig(log_every, steps), callbacks, corpus, steps_per_epoch)
        self._hook = optimizer.register_step_pre_hook(self.view.before_optimizer_step)
        self._closed = False
        self.view._emit("on_run_start")

    @property
    def should_stop(self) -> bool:
        """True once the live doctor found a label named in ``stop_on``: end your loop."""
        return self.view.should_stop

    @property
    def steps_done(self) -> int:
        return self.view.step

    @property
    def epoch(self) -> int:
        return self.view.epoch

    @epoch.setter
    def epoch(self, epoch: int) -> None:
        """Set it at each new pass over your data: records carry it, and the plots mark epochs."""
        self.view.epoch = epoch

    def step(self, loss: torch.Tensor | float, batch=None, grad_norm: torch.Tensor | float | None = None) -> None:
        """Count one optimizer step; on logging steps, build and write the record.

        ``loss``: this step's loss (a tensor stays on the device). ``batch``: a tensor of token ids, or a dict
        holding ``input_ids``, for ``tokens_per_sec``. ``grad_norm``: the norm before your clipping.
        """
        view = self.view
        if view.grad_norm is None and grad_norm is None:
            raise RuntimeError("monitor.step() came before the optimizer's first step(): call it after "
                               "optimizer.step() (the Monitor reads the gradients there)")
        loss = loss.detach() if torch.is_tensor(loss) else torch.tensor(float(loss), device=view.device)
        view.last_loss = loss
        if grad_norm is not None:
            view.grad_norm = (grad_norm.detach() if torch.is_tensor(grad_norm)
                              else torch.tensor(float(grad_norm), device=view.device))
        view._loss_sum += loss
        view._tokens += count_tokens(batch)
        view.step += 1
        view._window_steps += 1
        view._emit("on_step_end")
        if view.step % view.config.log_every == 0 or view.step == view.config.steps:
            view.write_record()
        view._emit("on_step_complete")

    def eval(self, val_loss: torch.Tensor | float) -> None:
        """Log an evaluation's loss at the current step (an eval record, as the Trainer's ``evaluate``)."""
        view = self.view
        record = {"step": view.step, "epoch": view.epoch, "timestamp": time.time(), "val_loss": float(val_loss)}
        view._emit("on_eval_end", FrozenRecord(record))

    def close(self, status: str = "completed") -> None:
        """Write the last, partial window's record and ``run_end``; close the files. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._hook.remove()
        try:
            if self.view._window_steps:
                self.view.write_record()
        finally:
            self.view._emit("on_run_end", status)

    def __enter__(self) -> Monitor:
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        status = "completed"
        if isinstance(error, KeyboardInterrupt):
            status = "interrupted"
        elif error is not None:
            self.view.error = f"{kind.__name__}: {error}"
            status = "oom" if is_out_of_memory(error) else "failed"
            if status == "oom":
                self.view.emit_event("oom", message=str(error))
        self.close(status)
        return False  # the error, if any, goes on to the caller


def count_tokens(batch) -> int:
    """Tokens in ``batch``: a tensor's elements, or a dict's ``input_ids`` (0 when unknown)."""
    if torch.is_tensor(batch):
        return batch.numel()
    if isinstance(batch, dict) and torch.is_tensor(batch.get("input_ids")):
        return batch["input_ids"].numel()
    return 0
