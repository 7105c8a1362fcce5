"""The checkpointing callback, and ``resume``.

Order of operations on every save, chosen so that a kill at *any* moment leaves a usable directory:

1. write the checkpoint file atomically (a kill here leaves only a ``.tmp-`` file: debris);
2. write the index that names it, atomically (a kill before this leaves an orphan file the index ignores);
3. only then delete the files the index no longer names (a kill here leaves orphans, never a dangling name).

Debris and orphans are removed when the next run starts -- orphans only when a complete, valid
``index.json`` says what is kept: without one, no file can be called an orphan, and none is deleted.

Pair ``save_every`` with the metric: a checkpoint is ranked when a record for *its* step carries the metric,
so with ``val_loss`` make ``save_every`` a multiple of ``eval_every`` (checkpoints in between are kept only
while they are the newest ``keep_last``).
"""

from __future__ import annotations

import dataclasses
import io
import math
from pathlib import Path

import torch

from chapters.checkpoints.atomic import atomic_write_bytes, fsync_directory, remove_debris, sha256_hex
from chapters.checkpoints.keeper import INDEX_NAME, TopKKeeper
from chapters.checkpoints.verify import CHECKPOINT_FORMAT, CheckpointError, load_weights_strict, search
from chapters.core.callbacks import Callback


class Checkpointer(Callback):
    def __init__(self, directory: str | Path, save_every: int, top_k: int = 3, metric: str = "val_loss",
                 mode: str = "min", keep_last: int = 2):
        if not isinstance(save_every, int) or save_every < 1:
            raise ValueError(f"save_every must be a positive integer, got {save_every!r}")
        self.directory = Path(directory)
        self.save_every = save_every
        # keep_last=2: the previous checkpoint stays until the next one is on disk and checked, so one
        # damaged file never leaves the directory without a good checkpoint.
        self.keeper = TopKKeeper(top_k, metric, mode, keep_last)
        self._last_metric: tuple[int, float] | None = None  # (step, value) of the newest record with the metric

    # ----------------------------------------------------------------------------------------- hooks
    def on_run_start(self, trainer):
        self.directory.mkdir(parents=True, exist_ok=True)
        self.keeper.load(self.directory)
        if trainer.step == 0 and (self.keeper.entries or any(self.directory.glob("*.pt"))):
            raise CheckpointError(f"{self.directory} already holds checkpoints of another run; resume from "
                                  f"them or use an empty directory")
        # After a fallback resume, later files are another timeline; a smaller top_k than before prunes now.
        self._commit(self.keeper.forget_after(trainer.step) + self.keeper.prune())
        self._remove_orphans()

    def on_step_complete(self, trainer):
        # After the step's evaluation, so the checkpoint carries what callbacks learned from it (early
        # stopping's patience) -- and the last step is saved here, before on_run_end hooks (early stopping
        # restoring its best weights) change the model.
        last_step = trainer.should_stop or trainer.step >= trainer.config.steps
        if trainer.step % self.save_every == 0 or last_step:
            self.save(trainer)
            if self._last_metric and self._last_metric[0] == trainer.step:
                self.record_metric(*self._last_metric)  # this step's evaluation came before its file

    def on_log(self, trainer, record):
        self._observe(record)

    def on_eval_end(self, trainer, record):
        self._observe(record)

    # ---------------------------------------------------------------------------------------- actions
    def save(self, trainer) -> Path:
        checkpoint = {"format": CHECKPOINT_FORMAT, "step": trainer.step,
                      "model_config": dataclasses.asdict(trainer.model.config), "trainer": trainer.state_dict()}
        buffer = io.BytesIO()
        torch.save(checkpoint, buffer)
        return self.write(trainer.step, buffer.getvalue())

    def write(self, step: int, data: bytes) -> Path:
        """Store ``data`` as the checkpoint of ``step`` (steps 1-3 of the module docstring)."""
        digest = sha256_hex(data)
        self.keeper.add(step, digest, len(data))
        path = self.directory / self.keeper.entries[step].file
        atomic_write_bytes(path, data)
        if sha256_hex(path.read_bytes()) != digest:  # read back: a short or failed write is caught now
            raise CheckpointError(f"{path}: the bytes on disk differ from the ones written")
        self._commit(self.keeper.prune())
        return path

    def record_metric(self, step: int, value: float) -> None:
        if step in self.keeper.entries and self.keeper.entries[step].metric is None:
            self.keeper.rank(step, value)
            self._commit(self.keeper.prune())

    # ---------------------------------------------------------------------------------------- helpers
    def _observe(self, record: dict) -> None:
        value = record.get(self.keeper.metric)
        if isinstance(value, (int, float)) and not math.isnan(value):
            self._last_metric = (record["step"], float(value))
            self.record_metric(record["step"], value)

    def _commit(self, dropped_files: list[str]) -> None:
        self.keeper.save(self.directory)
        for name in dropped_files:
            (self.directory / name).unlink(missing_ok=True)
        if dropped_files:
            fsync_directory(self.directory)

    def _remove_orphans(self) -> None:
        """Files a killed run wrote or failed to delete: the index is the truth -- when there is one."""
        remove_debris(self.directory)
        if not self.keeper.trusted_index:
            return
        named = {entry.file for entry in self.keeper.entries.values()} | {INDEX_NAME}
        for path in self.directory.glob("step-*.pt"):
            if path.name not in named:
                path.unlink()


def resume(trainer, directory: str | Path, report=print) -> int | None:
    """Load the newest good checkpoint in ``directory`` into ``trainer``; returns its step, or None when the
    directory holds no checkpoint at all. Every skipped (corrupt) newer checkpoint is reported by name."""
    found, skipped = search(directory)
    if found is None:
        if skipped:
            raise CheckpointError(f"no checkpoint in {directory} passes verification, nothing to resume from "
                                  f"(newest: {skipped[0]})")
        return None
    for problem in skipped:
        report(f"skipped {problem}")
    state = found.checkpoint["trainer"]
    load_weights_strict(trainer.model, state["model"], str(found.path))
    trainer.load_state_dict(state)
    report(f"resumed from {found.path} (step {found.step})")
    return found.step
