"""The seam between the training loop and everything that watches it.

The loop in :mod:`chapters.core.trainer` fits on one screen because it does not log, plot, checkpoint or
stop early by itself: it calls these hooks, and callbacks do the rest. Every logging level, every metric
and every alarm in the course is a ``Callback``.

On a *logging step* the trainer builds one **metric record** -- a flat ``dict`` such as
``{"step": 120, "epoch": 0, "timestamp": ..., "train_loss": 1.93, "lr": 0.0028, ...}`` -- and hands the
same dict to every callback's ``on_log`` in list order. Callbacks that *measure* (gradient norms, memory)
add their keys; callbacks that *write* (print, TensorBoard, JSONL) come later in the list and write the
record as it is. One record, no reformatting on the way: the JSONL keys are the TensorBoard tags.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only for type hints; importing the trainer here would be circular
    from chapters.core.trainer import Trainer

MetricRecord = dict  # str -> int | float; see docs/jsonl-contract.md for the keys


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

    def on_log(self, trainer: Trainer, record: MetricRecord) -> None:
        """On logging steps, with the step's metric record (add keys, or write it out)."""

    def on_eval_end(self, trainer: Trainer, record: MetricRecord) -> None:
        """After an evaluation, with a record holding ``val_loss``."""

    def on_event(self, trainer: Trainer, event: MetricRecord) -> None:
        """Something happened once (``{"event": "nan", "step": 13, ...}``); writers record it, others ignore it."""

    def on_run_end(self, trainer: Trainer, status: str) -> None:
        """Once, at the end: ``status`` is ``"completed"``, ``"stopped"`` (early stop), ``"failed"`` or ``"oom"``."""


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
