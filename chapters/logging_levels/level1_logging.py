"""Level 1 -- Python ``logging`` and a ``tqdm`` progress bar: the standard small-project setup.

What it adds over ``print``:

* **Timestamps and a file.** Each line goes to the console and to ``run_dir/train.log`` with the time it
  was written, so the run can be read back after the terminal is gone and slow phases can be spotted.
* **Lines that do not break the bar.** The console handler writes through ``tqdm.write`` (tqdm's own
  ``logging_redirect_tqdm``), which clears the bar, prints the line, and redraws the bar below it.
* **One writer.** In multi-process training only rank 0 logs; the others stay silent instead of
  printing every line once per GPU. The rank comes from ``torch.distributed`` when it is initialised,
  else from the ``RANK`` variable that launchers such as ``torchrun`` set.

What it still lacks: the log is text for people. Plotting it means parsing sentences back into
numbers -- Level 2 (TensorBoard) and Level 3 (JSON Lines) keep numbers as numbers. The progress bar itself,
with loss and lr in its postfix, is :class:`chapters.core.progress.ProgressBar`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from pathlib import Path

import torch.distributed as dist
from tqdm.contrib.logging import logging_redirect_tqdm

from chapters.core.callbacks import Callback
from chapters.logging_levels.level0_print import format_record

LOG_NAME = "train.log"
LINE_FORMAT = "%(asctime)s | %(levelname)s | %(message)s"


def process_rank() -> int:
    """This process's rank in distributed training; 0 when training on one process."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return int(os.environ.get("RANK", "0"))


class LoggingLogger(Callback):
    """Logs each metric record, evaluation and event to the console and ``run_dir/train.log`` (rank 0 only)."""

    def __init__(self, run_dir: str | Path, console: bool = True):
        self.path = Path(run_dir) / LOG_NAME
        self.console = console
        self.logger = None  # stays None on ranks other than 0: every hook then does nothing

    def on_run_start(self, trainer):
        if process_rank() != 0:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One logger per log file, not the root logger: libraries' own messages stay out of our file.
        self.logger = logging.getLogger(f"clinic.run.{self.path.resolve()}")
        self.logger.setLevel(logging.INFO)
        self.logger.propagate = False
        handlers = [logging.FileHandler(self.path, encoding="utf-8")]
        if self.console:
            handlers.append(logging.StreamHandler(sys.stderr))
        for handler in handlers:
            handler.setFormatter(logging.Formatter(LINE_FORMAT))
            self.logger.addHandler(handler)
        self.redirect = contextlib.ExitStack()
        if self.console:  # until the run ends, the console handler writes around tqdm bars
            self.redirect.enter_context(logging_redirect_tqdm([self.logger]))
        self.logger.info("run started: %d steps on %s", trainer.config.steps, trainer.device)

    def on_log(self, trainer, record):
        if self.logger:
            self.logger.info(format_record(record))

    def on_eval_end(self, trainer, record):
        if self.logger:
            self.logger.info(format_record(record))

    def on_event(self, trainer, event):
        if self.logger:
            details = {k: v for k, v in event.items() if k not in ("event", "timestamp")}
            self.logger.warning("%s: %s", event["event"], details)

    def on_run_end(self, trainer, status):
        if not self.logger:
            return
        self.logger.info("run ended: %s after %d steps", status, trainer.step)
        self.redirect.close()
        for handler in list(self.logger.handlers):
            handler.close()
            self.logger.removeHandler(handler)
