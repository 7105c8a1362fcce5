"""Level 2 -- TensorBoard (and, optionally, Weights & Biases): curves in a browser.

For any run longer than a coffee break, looking beats reading: a dashboard shows the loss curve, the
learning-rate schedule and the gradient norm side by side while the run goes, and overlays runs so two
settings can be compared at a glance. ``tensorboard --logdir runs`` serves every run under ``runs/``.

How it is written here:

* every numeric key of the metric record becomes a scalar **tag of the same name** (``train_loss``,
  ``grad_norm/mlp``...), at ``global_step = step``, so a name means the same thing in TensorBoard and in
  ``metrics.jsonl``; a ``/`` in the name groups the tags into one section of the dashboard;
* non-finite values are written as they are -- a NaN loss shows as NaN, not as a gap;
* the run's configuration goes in once as a text table, and events (``nan``, ``oom``) as text too.
* activation and gradient **histograms**, every 100 steps, come from :mod:`.level2_histograms`, which
  writes them into this logger's event file.

Trade-offs: event files are a binary format that needs TensorBoard's reader, and they are flushed every
``flush_secs`` (we use 10 s), so a crash can lose the last seconds. Machines should read Level 3.

W&B (``wandb``) is the hosted alternative with the same idea. It is an optional extra: ``WandbLogger``
runs it in offline mode (nothing leaves the machine; ``wandb sync`` uploads later) and is skipped with a
note when the package is not installed.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

from chapters.core.callbacks import Callback

TB_DIR = "tensorboard"
NOT_SCALARS = ("step", "timestamp")  # the x axis and the wall time, not curves of their own


def scalars(record: dict) -> dict[str, float]:
    """The record's curves: every numeric key except ``step`` and ``timestamp``."""
    return {key: value for key, value in record.items()
            if key not in NOT_SCALARS and isinstance(value, (int, float)) and not isinstance(value, bool)}


class TensorBoardLogger(Callback):
    """Writes the metric records as scalars to ``run_dir/tensorboard``."""

    def __init__(self, run_dir: str | Path, flush_secs: int = 10):
        self.log_dir = Path(run_dir) / TB_DIR
        self.flush_secs = flush_secs
        self.writer = None

    def on_run_start(self, trainer):
        from torch.utils.tensorboard import SummaryWriter  # imported here: it takes a third of a second

        self.writer = SummaryWriter(log_dir=str(self.log_dir), flush_secs=self.flush_secs)
        config = dataclasses.asdict(trainer.config)
        table = "\n".join(["| setting | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in config.items())])
        self.writer.add_text("config", table, global_step=trainer.step)

    def on_log(self, trainer, record):
        self.write(record)

    def on_eval_end(self, trainer, record):
        self.write(record)

    def on_event(self, trainer, event):
        self.writer.add_text(f"events/{event['event']}", json.dumps(event), global_step=event["step"])
        self.writer.flush()  # events are rare and important: do not wait for the next flush

    def on_run_end(self, trainer, status):
        self.writer.add_text("events/run_end", json.dumps({"status": status}), global_step=trainer.step)
        self.writer.close()

    def write(self, record: dict) -> None:
        for tag, value in scalars(record).items():
            self.writer.add_scalar(tag, value, global_step=record["step"], walltime=record["timestamp"])


def wandb_available() -> bool:
    return importlib.util.find_spec("wandb") is not None


class WandbLogger(Callback):
    """Logs the metric records to a W&B run in offline mode (files under ``run_dir/wandb``).

    Build it only when :func:`wandb_available` says so; :func:`chapters.monitoring.monitoring_callbacks`
    does that check and skips it with a note otherwise.
    """

    def __init__(self, run_dir: str | Path, project: str = "training-clinic"):
        self.run_dir = Path(run_dir)
        self.project = project

    def on_run_start(self, trainer):
        import wandb

        self.run = wandb.init(project=self.project, dir=str(self.run_dir), mode="offline",
                              config=dataclasses.asdict(trainer.config))

    def on_log(self, trainer, record):
        self.run.log(scalars(record), step=record["step"])

    def on_eval_end(self, trainer, record):
        self.run.log(scalars(record), step=record["step"])

    def on_run_end(self, trainer, status):
        self.run.summary["status"] = status
        self.run.finish(exit_code=0 if status in ("completed", "stopped") else 1)
