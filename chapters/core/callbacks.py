"""The seam between the training loop and everything that watches it.

The loop in :mod:`chapters.core.trainer` fits on one screen because it does not log, plot, checkpoint or
stop early by itself: it calls these hooks, and callbacks do the rest. Every logging level, every metric
and every alarm in the course is a ``Callback``.

On a *logging step* the trainer builds one **metric record** -- a flat ``dict`` such as
``{"step": 120, "epoch": 0, "timestamp": ..., "train_loss": 1.93, "lr": 0.0028, ...}`` -- in two phases:

1. **measure**: every callback's ``on_measure`` may add keys (gradient norms, memory, step time);
2. **read**: every callback's ``on_log`` then receives the finished record, frozen. Writers (print,
   TensorBoard, JSONL), the early stopper, the checkpointer and the doctor all read here.

Two phases instead of "measuring callbacks first in the list": with one shared mutable dict, a writer
placed before a measurer silently lost its keys, so list order decided correctness. Now a writer sees
every key wherever it sits, and a reader that tries to change the record fails loudly instead of
changing what the next reader sees. One record, no reformatting on the way: the JSONL keys are the
TensorBoard tags.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only for type hints; importing the trainer here would be circular
    from chapters.core.trainer import Trainer

MetricRecord = dict  # str -> int | float; see docs/jsonl-contract.md for the keys


class FrozenRecord(dict):
    """A finished metric record: readable (and JSON-serialisable) like any dict, but not changeable.

    A subclass of ``dict`` rather than ``types.MappingProxyType`` so ``json.dumps(record)`` and
    ``dict(record)`` keep working in every writer. ``dict(record)`` is the way to get a copy to edit.
    """

    def _refuse(self, *args, **kwargs):
        raise TypeError("a logged metric record is read-only: add keys in on_measure, or edit dict(record)")

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse


class Callback:
    """Override the hooks you need; each default does nothing.

    In multi-process training (``torchrun``) the trainer calls callbacks on rank 0 only: one process
    writes the logs, the event file and the checkpoints, from metrics already combined over every rank.
    A callback that must run in every process (the Level-0 lesson's printing from every rank, on
    purpose) sets ``all_ranks = True``.
    """

    all_ranks: bool = False

    def on_run_start(self, trainer: Trainer) -> None:
        """Model, optimizer and data are ready; no step has run."""

    def on_before_optimizer_step(self, trainer: Trainer) -> None:
        """Gradients of this step are complete (and unscaled) but not yet clipped or applied."""

    def on_step_end(self, trainer: Trainer) -> None:
        """After every optimizer step. Runs on *every* step: keep it cheap, and never call ``.item()`` here."""

    def on_step_complete(self, trainer: Trainer) -> None:
        """The step is over: logged, evaluated, and the decision to stop taken. A checkpoint written here
        holds everything the step did -- including what callbacks learned from its evaluation."""

    def on_measure(self, trainer: Trainer, record: MetricRecord) -> None:
        """On logging steps, first phase: add this callback's keys to the record being built."""

    def on_log(self, trainer: Trainer, record: FrozenRecord) -> None:
        """On logging steps, second phase: the finished record, read-only (write it out, or act on it)."""

    def on_eval_end(self, trainer: Trainer, record: FrozenRecord) -> None:
        """After an evaluation, with a read-only record holding ``val_loss``."""

    def on_event(self, trainer: Trainer, event: FrozenRecord) -> None:
        """Something happened once (``{"event": "nan", "step": 13, ...}``); writers record it, others ignore it."""

    def on_run_end(self, trainer: Trainer, status: str) -> None:
        """Once, at the end: ``status`` is ``"completed"``, ``"stopped"`` (early stop), ``"failed"`` or ``"oom"``."""

    def state_dict(self) -> dict:
        """What this callback must carry across a resume (saved in every checkpoint); nothing by default.

        A callback whose future decisions depend on what it has seen (early stopping's best value and
        patience counter) returns that here, or the resumed run is not the run it claims to continue.
        """
        return {}

    def load_state_dict(self, state: dict) -> None:
        """Restore what :meth:`state_dict` returned."""


class History(Callback):
    """Keeps every record in memory: what tests, scenarios and notebooks inspect after a run."""

    def __init__(self):
        self.train: list[MetricRecord] = []
        self.eval: list[MetricRecord] = []

    def on_log(self, trainer, record):
        self.train.append(dict(record))

    def on_eval_end(self, trainer, record):
        self.eval.append(dict(record))

    def series(self, key: str) -> list:
        """All values of ``key`` in step order, from whichever records carry it."""
        records = self.eval if key == "val_loss" else self.train
        return [r[key] for r in records if key in r]
