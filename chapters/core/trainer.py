"""The training loop, small enough to read in one sitting.

``Trainer.fit`` runs optimizer steps until ``config.steps``. Each step: ``grad_accum_steps`` micro-batches
forward and backward, then clip, optimizer step, scheduler step. Everything that *watches* the run --
logging, metrics, early stopping, checkpoints -- is a :class:`~chapters.core.callbacks.Callback`.

Two habits keep it fast on a GPU, where kernels run asynchronously behind the Python code:

* the loss stays on the device between logging steps (``self._loss_sum`` is a tensor); we read it with
  ``.item()`` -- which waits for the GPU -- only every ``log_every`` steps;
* throughput is measured over the whole logging window, after one synchronisation, instead of timing each
  step (a per-step timer on a GPU measures how fast Python *queues* work, not how fast it runs).

Under ``torchrun`` the same loop trains with several processes (DistributedDataParallel): each rank reads
its shard of every batch, gradients are averaged in ``backward``, the logged metrics are global, and only
rank 0 runs the callbacks. The few lines this needs call :mod:`chapters.core.distributed`, which explains
each of them; with one process they change nothing.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import random
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from chapters.core import distributed, interrupts
from chapters.core.callbacks import Callback, FrozenRecord, MetricRecord
from chapters.core.data import Corpus, make_loader
from chapters.core.devices import is_out_of_memory, resolve_device, resolve_precision, use_course_cpu_threads

PRECISIONS = ("auto", "fp32", "bf16", "fp16")

# (batch, step) -> batch, or None to drop it. The seam through which the data-bug lessons corrupt batches,
# and through which their fixes validate them.
BatchTransform = Callable[[dict, int], "dict | None"]


@dataclass
class TrainConfig:
    steps: int = 300
    batch_size: int = 32  # examples per micro-batch; one optimizer step sees batch_size * grad_accum_steps
    grad_accum_steps: int = 1
    lr: float = 3e-3  # peak learning rate, reached at the end of warmup
    warmup_steps: int = 30
    min_lr_ratio: float = 0.1  # cosine decays to lr * min_lr_ratio at the last step
    weight_decay: float = 0.1
    grad_clip: float = 1.0  # max total gradient norm; 0 disables clipping (the norm is still measured)
    eval_every: int = 100  # steps between evaluations (and one at the end)
    eval_batches: int = 8
    log_every: int = 10  # steps between metric records
    shuffle: bool = True
    seed: int = 0
    device: str = "auto"
    precision: str = "auto"  # auto: fp32 on CPU, bf16 on GPUs that support it, else fp16 with a GradScaler
    loss_scaling: bool = True  # GradScaler under fp16; False reproduces the NaN lesson's fp16 failure

    def validate(self) -> None:
        """Reject impossible settings with a message that names the field and what is accepted."""
        for name in ("steps", "batch_size", "grad_accum_steps", "eval_every", "eval_batches", "log_every"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive integer, got {getattr(self, name)!r}")
        if not (isinstance(self.lr, (int, float)) and math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be a positive number, got {self.lr!r}")
        if self.warmup_steps < 0 or self.weight_decay < 0 or self.grad_clip < 0:
            raise ValueError("warmup_steps, weight_decay and grad_clip must be >= 0")
        if not 0 <= self.min_lr_ratio <= 1:
            raise ValueError(f"min_lr_ratio must be between 0 and 1, got {self.min_lr_ratio}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}")


def parameter_groups(model: torch.nn.Module, weight_decay: float) -> list[dict]:
    """Weight decay for matrices only.

    Decay pulls weights towards zero. That regularises the big matrices, but on LayerNorm gains it fights
    the normalisation and on biases it buys nothing, so 1-D parameters get no decay (GPT-2's recipe).
    """
    trainable = [p for p in model.parameters() if p.requires_grad]
    return [
        {"params": [p for p in trainable if p.dim() >= 2], "weight_decay": weight_decay},
        {"params": [p for p in trainable if p.dim() < 2], "weight_decay": 0.0},
    ]


def warmup_cosine_schedule(optimizer: torch.optim.Optimizer, config: TrainConfig):
    """Linear warmup to the peak LR, then cosine decay to ``lr * min_lr_ratio``, from torch's own schedulers.

    Step ``s`` of the warmup (1-based) uses ``lr * s / warmup_steps``; the cosine then starts at the peak
    and reaches its floor on the very last step. Warmup matters because Adam's second-moment estimate is
    poor in the first steps: full-size updates then are large and noisy -- one way runs blow up early.
    """
    from torch.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR

    warmup_steps = min(config.warmup_steps, config.steps - 1)
    decay_steps = max(config.steps - warmup_steps - 1, 1)
    cosine = CosineAnnealingLR(optimizer, T_max=decay_steps, eta_min=config.lr * config.min_lr_ratio)
    if warmup_steps <= 1:
        return cosine
    warmup = LinearLR(optimizer, start_factor=1 / warmup_steps, total_iters=warmup_steps - 1)
    return SequentialLR(optimizer, [warmup, cosine], milestones=[warmup_steps])


class Trainer:
    def __init__(self, model: torch.nn.Module, corpus: Corpus, config: TrainConfig,
                 callbacks: list[Callback] | None = None, batch_transform: BatchTransform | None = None):
        config.validate()
        self.batch_transform = batch_transform
        self.config = config
        self.corpus = corpus
        device = resolve_device(config.device)
        if device.type == "cpu":
            use_course_cpu_threads()  # one thread for the course's tiny models: see course_cpu_threads
        self.ranks = distributed.setup(device)  # who this process is under torchrun; Ranks() without it
        self.device = distributed.rank_device(device, self.ranks)
        self.precision = resolve_precision(config.precision, self.device)
        self.model = model.to(self.device)
        self.train_model = distributed.wrap_model(self.model, self.device, self.ranks)  # what the loop calls
        # Fixed for the run (the optimizer holds these same tensors), so listed once, not walked every step.
        self.parameters = list(self.model.parameters())
        # One writer: with several processes, callbacks (loggers, checkpoints, the doctor) run on rank 0 only.
        self.callbacks = [c for c in callbacks or [] if self.ranks.is_main or c.all_ranks]
        self.optimizer = self.make_optimizer()
        self.scheduler = warmup_cosine_schedule(self.optimizer, config)
        # Loss scaling only for fp16, whose narrow exponent range flushes small gradients to zero.
        self.scaler = torch.amp.GradScaler(self.device.type,
                                           enabled=self.precision == "fp16" and config.loss_scaling)
        self.autocast_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(self.precision)

        self.step = 0  # optimizer steps completed
        self.epoch = 0
        self.batches_into_epoch = 0  # micro-batches already drawn from the current epoch
        examples_per_rank = len(corpus.train) // self.ranks.world_size
        self.steps_per_epoch = examples_per_rank // config.batch_size // config.grad_accum_steps
        self.error: str | None = None  # why the run failed, when it did
        self.should_stop = False  # set by callbacks (early stopping, the doctor's --stop-on)
        self.last_loss: torch.Tensor | None = None  # this step's loss, on the device
        self.grad_norm: torch.Tensor | None = None  # this step's total norm before clipping, on the device
        # ... and each parameter's, in self.parameters order (0 for one without a gradient); see clip_gradients
        self.parameter_grad_norms: torch.Tensor | None = None
        self._no_grad = torch.zeros((), device=self.device)  # stands in for a missing gradient
        self.lr: float | None = None  # the learning rate this step used
        self._batches = iter(())
        self._work_clock = distributed.WorkClock(self.device) if self.ranks.distributed else None
        self._reset_window()

    # ----------------------------------------------------------------------------------------- the loop
    def fit(self) -> str:
        """Train to ``config.steps`` (or until a callback stops us). Returns the run's final status."""
        self._emit("on_run_start")
        status = "failed"
        try:
            while self.step < self.config.steps and not self.should_stop:
                self.train_step()
                self._emit("on_step_end")
                logging_step = self.step % self.config.log_every == 0 or self.step == self.config.steps
                eval_step = self.step % self.config.eval_every == 0 or self.step == self.config.steps
                if logging_step:
                    self.log(self.log_record())
                if eval_step:
                    self.evaluate()
                if logging_step or eval_step:  # where stopping callbacks decide; all ranks stop together
                    self.should_stop = distributed.any_rank(self.should_stop, self.ranks, self.device)
                self._emit("on_step_complete")
            status = "stopped" if self.should_stop else "completed"
        except KeyboardInterrupt:  # Ctrl-C, or SIGTERM from a scheduler (see chapters.core.interrupts)
            status = "interrupted"
            raise
        except Exception as err:
            # Record what went wrong so the loggers' run_end can say it, then let it propagate.
            self.error = f"{type(err).__name__}: {err}"
            status = "oom" if is_out_of_memory(err) else "failed"
            if status == "oom":
                self.emit_event("oom", message=str(err))
            if interrupts.received():  # under torchrun the signal can surface as a broken collective
                status = "interrupted"
            raise
        finally:
            self._emit("on_run_end", status)
        return status

    def train_step(self) -> None:
        """One optimizer step over ``grad_accum_steps`` micro-batches."""
        self.model.train()
        accum = self.config.grad_accum_steps
        self.step_batches = []  # this step's micro-batches, for callbacks that must see the data (forensics)
        for micro_step in range(accum):
            batch = self._next_usable_batch()
            self.step_batches.append(batch)
            last = micro_step == accum - 1
            with distributed.gradient_sync(self.train_model, sync=last):  # all-reduce on the last one only
                with self._autocast():
                    loss = self.train_model(batch["input_ids"], labels=batch["labels"])["loss"]
                if last and self._work_clock:
                    self._work_clock.stop()  # this rank reached the gradient all-reduce
                # Dividing by `accum` makes the summed gradients equal those of one big batch.
                self.scaler.scale(loss / accum).backward()
            self._loss_sum += loss.detach() / accum
            self._tokens += batch["input_ids"].numel()
        self.scaler.unscale_(self.optimizer)  # clip and measure true gradients, not scaled ones
        self._emit("on_before_optimizer_step")
        self.clip_gradients()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.lr = self.optimizer.param_groups[0]["lr"]  # the rate this step used, before the schedule moves on
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.last_loss = loss.detach()
        self.step += 1
        self._window_steps += 1
        if self._work_clock:
            self._work_clock.start()

    @torch.no_grad()
    def clip_gradients(self) -> None:
        """``clip_grad_norm_`` in its two halves, keeping the per-parameter norms the first half computes.

        Clipping needs every parameter's gradient norm (one batched ``_foreach_norm`` kernel); the total
        norm is the norm of those, and the gradients are scaled by ``max_norm / total`` when it is larger.
        The gradient metrics (norms per group, the count of non-finite gradients) need the very same
        per-parameter norms, so we keep them in ``parameter_grad_norms`` rather than have each metric run
        the kernel again. A parameter without a gradient counts as 0, which leaves the total unchanged.
        """
        self.measure_gradients()
        max_norm = self.config.grad_clip or math.inf  # inf: measure the norm without clipping
        torch.nn.utils.clip_grads_with_norm_(self.parameters, max_norm, self.grad_norm)

    @torch.no_grad()
    def measure_gradients(self) -> None:
        """Every parameter's gradient norm in one ``_foreach_norm`` kernel, and their total -- on the device,
        no sync. (``chapters.monitor`` borrows this method, so a hand-written loop is measured the same way.)"""
        grads = [self._no_grad if p.grad is None else p.grad for p in self.parameters]
        self.parameter_grad_norms = torch.stack(torch._foreach_norm(grads))
        self.grad_norm = torch.linalg.vector_norm(self.parameter_grad_norms)  # what clip_grad_norm_ returns

    @torch.no_grad()
    def evaluate(self) -> MetricRecord:
        """Mean loss over ``eval_batches`` validation batches -- the same ones at every evaluation.

        The batches come from one fixed shuffle (seed 0), not from the start of the file: validation
        files are often grouped by source, and the first few batches would measure one domain only.
        """
        if self.device.type == "cuda":
            torch.cuda.synchronize()  # finish the queued training work, so it is not timed as evaluation
        eval_start = time.perf_counter()
        self.model.eval()
        world_size = self.ranks.world_size  # several ranks: each evaluates its shard of every batch
        loader = make_loader(self.corpus.val, min(self.config.batch_size, len(self.corpus.val) // world_size),
                             shuffle=True, seed=0, rank=self.ranks.rank, world_size=world_size)
        losses = []
        for index, batch in enumerate(loader):
            if index == self.config.eval_batches:
                break
            with self._autocast():
                losses.append(self.model(**self._to_device(batch))["loss"])
        record = {"step": self.step, "epoch": self.epoch, "timestamp": time.time(),
                  "val_loss": distributed.average(torch.stack(losses).mean(), self.ranks).item()}
        self._window_start += time.perf_counter() - eval_start  # evaluating is not training: keep it out of tokens/sec
        if self._work_clock:
            self._work_clock.start()
        self._emit("on_eval_end", FrozenRecord(record))
        return record

    def log_record(self) -> MetricRecord:
        """The metric record for this logging step: means over the window since the previous one."""
        if self.device.type == "cuda":
            torch.cuda.synchronize()  # once per window, so the clock below measures finished work
        elapsed = time.perf_counter() - self._window_start
        # Global numbers: the mean loss over every rank's shard, the job's total speed. The gradient norm
        # needs nothing: DDP already averaged the gradients, so every rank measured the same norm.
        record = {
            "step": self.step,
            "epoch": self.epoch,
            "timestamp": time.time(),
            "train_loss": distributed.average(self._loss_sum / self._window_steps, self.ranks).item(),
            "lr": self.lr,
            "grad_norm": self.grad_norm.item(),
            "tokens_per_sec": distributed.total(self._tokens / elapsed, self.ranks, self.device),
        }
        if self._work_clock:  # several ranks: how long each took to reach the all-reduce, and the slowest
            seconds = distributed.per_rank(self._work_clock.seconds_per_step(), self.ranks, self.device)
            record["step_time_min"], record["step_time_max"] = min(seconds), max(seconds)
            record["step_time_slowest_rank"] = seconds.index(max(seconds))
        self._reset_window()
        return record

    def log(self, record: MetricRecord) -> None:
        """Finish ``record`` and hand it out: every callback measures into it, then every callback reads it."""
        self._emit("on_measure", record)
        self._emit("on_log", FrozenRecord(record))

    def emit_event(self, name: str, **fields) -> None:
        """Tell every callback that ``name`` happened at this step (``nan``, ``oom``...); writers record it."""
        self._emit("on_event", FrozenRecord({"event": name, "step": self.step, "timestamp": time.time(), **fields}))

    def make_optimizer(self) -> torch.optim.Optimizer:
        """AdamW over :func:`parameter_groups`. The one place the optimizer is chosen: a subclass may
        override it (the doctor's labelled runs train with SGD, whose faults they reproduce)."""
        return torch.optim.AdamW(
            parameter_groups(self.model, self.config.weight_decay), lr=self.config.lr, betas=(0.9, 0.95),
            # The fused CUDA kernel updates all parameters in one launch; on CPU the default is right.
            fused=self.device.type == "cuda",
        )

    # ------------------------------------------------------------------------------------------- resume
    def state_dict(self) -> dict:
        """Everything the next step depends on: weights, optimizer moments, the schedule's position, the
        loss scale, every random generator, and where we are in the data. Save only the model and a resumed
        run takes different steps than the one you stopped (see chapters/checkpoints)."""
        return {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "rng": rng_state(),
            "step": self.step,
            "epoch": self.epoch,
            "batches_into_epoch": self.batches_into_epoch,
            "callbacks": {name: callback.state_dict() for name, callback in self._named_callbacks()},
        }

    def load_state_dict(self, state: dict) -> None:
        """Continue exactly where ``state`` was taken. The data order depends only on (seed, epoch), so we
        rebuild this epoch's loader and skip the batches already drawn instead of saving the loader.
        The logging window restarts: the first record after a resume averages only the steps since then."""
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.scaler.load_state_dict(state["scaler"])
        self.step, self.epoch = state["step"], state["epoch"]
        callback_states = state.get("callbacks", {})  # absent in checkpoints from before callbacks had state
        for name, callback in self._named_callbacks():
            if name in callback_states:
                callback.load_state_dict(callback_states[name])
        self.batches_into_epoch = state["batches_into_epoch"]
        self._batches = iter(())
        if self.batches_into_epoch:
            self._batches = itertools.islice(iter(self.epoch_loader()), self.batches_into_epoch, None)
        # Last: creating the loader's iterator above drew a seed from torch's global generator, which the
        # original run had done *before* its state was taken.
        set_rng_state(state["rng"])

    # ------------------------------------------------------------------------------------------ helpers
    def _reset_window(self) -> None:
        self._loss_sum = torch.zeros((), device=self.device)
        self._tokens = 0
        self._window_steps = 0
        self._window_start = time.perf_counter()

    def _next_usable_batch(self) -> dict[str, torch.Tensor]:
        """The next batch after ``batch_transform`` (when set); a batch it returns as ``None`` is dropped."""
        while True:
            batch = self._next_batch()
            if self.batch_transform is None:
                return batch
            batch = self.batch_transform(batch, self.step)
            if batch is not None:
                return batch

    def _next_batch(self) -> dict[str, torch.Tensor]:
        """Next micro-batch; a new epoch (with its own shuffled order) starts when one runs out."""
        batch = next(self._batches, None)
        if batch is None:
            if self.batches_into_epoch:  # the current epoch is used up
                self.epoch += 1
                self.batches_into_epoch = 0
            self._batches = iter(self.epoch_loader())
            batch = next(self._batches)
        self.batches_into_epoch += 1
        return self._to_device(batch)

    def epoch_loader(self):
        """This epoch's batches. The one place the data order is decided: a subclass may override it to
        draw batches differently (the no-shuffle exercise plugs in the learner's loader here)."""
        return make_loader(self.corpus.train, self.config.batch_size, self.config.shuffle,
                           self.config.seed, self.epoch, self.ranks.rank, self.ranks.world_size)

    def _to_device(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {k: v.to(self.device, non_blocking=True) for k, v in batch.items()}

    def _autocast(self):
        if self.autocast_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.autocast_dtype)

    def _named_callbacks(self):
        """``(name, callback)`` pairs that survive a resume: the class name, numbered from the second
        callback of the same class on (``EarlyStopping``, ``EarlyStopping#2``), not the list position,
        so adding a writer on resume does not shuffle whose state is whose."""
        seen: dict[str, int] = {}
        for callback in self.callbacks:
            name = type(callback).__name__
            seen[name] = seen.get(name, 0) + 1
            yield (name if seen[name] == 1 else f"{name}#{seen[name]}"), callback

    def _emit(self, hook: str, *args) -> None:
        for callback in self.callbacks:
            getattr(callback, hook)(self, *args)



def rng_state() -> dict:
    """Every generator a step can draw from. The NumPy state is stored as a tensor so the checkpoint can
    be read with ``torch.load(weights_only=True)``, which refuses arbitrary Python objects."""
    kind, keys, position, has_gauss, cached_gaussian = np.random.get_state()
    return {
        "python": random.getstate(),
        "numpy": {"kind": kind, "keys": torch.from_numpy(keys.astype(np.int64)), "position": position,
                  "has_gauss": has_gauss, "cached_gaussian": cached_gaussian},
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }


def set_rng_state(state: dict) -> None:
    random.setstate(state["python"])
    numpy = state["numpy"]
    np.random.set_state((numpy["kind"], numpy["keys"].numpy().astype(np.uint32), numpy["position"],
                         numpy["has_gauss"], numpy["cached_gaussian"]))
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
