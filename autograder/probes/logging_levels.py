"""Probes for ``01_logging_levels``: train a short run with the learner's logger, run their logging loop,
their TensorBoard writer. The files they write are read and judged by the grader.

What is on disk when is measured from outside the writer: the writer is a forked process that *stops
itself* after each record and each ``os.fsync`` (a stopped process runs no more Python: no flush, no
handler). The grader counts the file's lines while it is frozen and continues it -- or, for the crash check,
kills it there with SIGKILL. (In a learner's own kernel the probe's parent plays the grader.)
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
from pathlib import Path

import torch

from autograder.probes import probe, stop_here, wait_for_writer
from chapters.core.callbacks import Callback

LOG_NAME = "metrics.jsonl"


def train(settings: dict, callbacks: list) -> None:
    """The run, with ``callbacks`` after the course's NaN detector (it emits the ``nan`` event)."""
    from chapters.core.model import IGNORE_INDEX
    from chapters.core.run import build_trainer, preset_config
    from chapters.metrics.first_nonfinite import FirstNonFinite

    def poison(batch, step):
        if step == settings["poisoned"]:  # nothing to predict: the mean loss is 0/0 = NaN
            batch = {**batch, "labels": batch["labels"].new_full(batch["labels"].shape, IGNORE_INDEX)}
        return batch

    config = preset_config("tiny", steps=settings["steps"], batch_size=8, log_every=settings["log_every"],
                           eval_every=1000, eval_batches=1, seed=settings["seed"], device="cpu")
    trainer = build_trainer("tiny", config, [FirstNonFinite(), *callbacks])
    trainer.batch_transform = poison
    trainer.fit()


STOP_REASON = "stop-reason"  # what the writer was doing when it froze: "record" or "fsync"


def stop_after(reason: str) -> None:
    Path(STOP_REASON).write_text(reason)
    stop_here()


class StopAfterEachRecord(Callback):
    """Placed after the learner's logger: the writer freezes after every record and event it handled."""

    def on_log(self, trainer, record):
        stop_after("record")

    on_eval_end = on_log

    def on_event(self, trainer, event):
        stop_after("record")


@contextlib.contextmanager
def stopping_at_fsync():
    """The writer also freezes right after each ``os.fsync``: an fsync after an unflushed write saves nothing,
    and the grader sees how many lines were on disk then."""
    real = os.fsync

    def fsync(fd):
        real(fd)
        stop_after("fsync")

    os.fsync = fsync
    try:
        yield
    finally:
        os.fsync = real


def in_writer(work) -> int:
    """Run ``work`` in a forked writer process; its wait status once it ended (or was killed)."""
    pid = os.fork()
    if pid == 0:
        try:
            # A forked child inherits torch's OpenMP pool without its threads: its first parallel op would
            # wait forever for them. One thread means no parallel region at all.
            torch.set_num_threads(1)
            work()
        finally:
            os._exit(0)
    return wait_for_writer(pid)


@probe("01_logging_levels.jsonl_logger")
def jsonl_logger(settings: dict, logger_class) -> dict:
    run_dir = Path("run")
    path = run_dir / LOG_NAME
    logger = logger_class(run_dir)  # made here, so a missing implementation is reported as such

    def work():
        with stopping_at_fsync():
            train(settings, [logger, StopAfterEachRecord()])

    in_writer(work)
    return {"log": str(path)}


class StopAfter(Callback):
    """Placed after the learner's logger: the process stops right after step ``step`` was logged."""

    def __init__(self, step: int):
        self.step = step

    def on_log(self, trainer, record):
        if record["step"] >= self.step:
            stop_here()


@probe("01_logging_levels.jsonl_crash")
def jsonl_crash(settings: dict, logger_class) -> dict:
    run_dir = Path("run")
    logger = logger_class(run_dir)  # made here, so a missing implementation is reported as such
    status = in_writer(lambda: train(settings, [logger, StopAfter(settings["kill_at"])]))
    return {"log": str(run_dir / LOG_NAME), "killed": os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL}


@contextlib.contextmanager
def counting_bars():
    """Count the tqdm bars made meanwhile. Every flavour (console, notebook widget, ``tqdm.auto``) is a
    subclass of ``tqdm.std.tqdm``, so wrapping its constructor sees them all; in Jupyter the bar is a
    widget, not text on stderr."""
    from tqdm.std import tqdm

    made, real = [], tqdm.__init__

    def init(self, *args, **kwargs):
        made.append(1)
        real(self, *args, **kwargs)

    tqdm.__init__ = init
    try:
        yield made
    finally:
        tqdm.__init__ = real


@probe("01_logging_levels.logging_tqdm")
def logging_tqdm(case: dict, logged_loop) -> dict:
    log_path = Path("loop.log")
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), counting_bars() as bars:
        logged_loop(case["losses"], case["log_every"], str(log_path))
    return {"stdout": stdout.getvalue()[-5000:], "stderr": stderr.getvalue()[-20000:], "bars": len(bars),
            "log": log_path.read_text()[-20000:] if log_path.exists() else None}


@probe("01_logging_levels.tensorboard")
def tensorboard(records: list[dict], write_tensorboard) -> dict:
    log_dir = Path("tb")
    write_tensorboard(records, str(log_dir))
    return {"files": sorted(str(p) for p in log_dir.rglob("events.out.tfevents*"))}
