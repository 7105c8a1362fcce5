"""Probes for ``01_logging_levels``: train a short run with the learner's logger, run their logging loop,
their TensorBoard writer. The files they write are read and judged by the grader.

The crash check needs the writer to die at a known step without warning. The writer process *stops itself*
there (a stopped process runs no more Python: no flush, no handler); the one who kills it is outside it --
the probe's parent here, and the grader, which kills any stopped process of a submission.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
from pathlib import Path

import torch

from autograder.probes import probe
from chapters.core.callbacks import Callback

LOG_NAME = "metrics.jsonl"
# Bound now, before any learner code runs: a submission that patches ``os``/``signal`` later cannot make the
# stop run its own code first (flushing a logger that never flushed).
_raise_signal, _waitpid = signal.raise_signal, os.waitpid


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


def complete_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


class FileWatcher(Callback):
    """A callback placed after the learner's logger: how many lines are in the file after each record."""

    def __init__(self, path: Path):
        self.path, self.counts = path, []

    def on_log(self, trainer, record):
        self.counts.append(complete_lines(self.path))

    on_eval_end = on_log

    def on_event(self, trainer, event):
        self.counts.append(complete_lines(self.path))


@contextlib.contextmanager
def watching_fsync(path: Path, calls: list):
    """Record the file's line count at every ``os.fsync``: an fsync after an unflushed write saves nothing."""
    real = os.fsync

    def fsync(fd):
        real(fd)
        calls.append(complete_lines(path))

    os.fsync = fsync
    try:
        yield
    finally:
        os.fsync = real


@probe("01_logging_levels.jsonl_logger")
def jsonl_logger(settings: dict, logger_class) -> dict:
    run_dir = Path("run")
    path = run_dir / LOG_NAME
    watcher, fsyncs = FileWatcher(path), []
    with watching_fsync(path, fsyncs):
        train(settings, [logger_class(run_dir), watcher])
    return {"log": str(path), "counts_after_each_record": watcher.counts, "fsync_line_counts": fsyncs}


class StopAfter(Callback):
    """Placed after the learner's logger: the process stops right after step ``step`` was logged."""

    def __init__(self, step: int):
        self.step = step

    def on_log(self, trainer, record):
        if record["step"] >= self.step:
            _raise_signal(signal.SIGSTOP)


@probe("01_logging_levels.jsonl_crash")
def jsonl_crash(settings: dict, logger_class) -> dict:
    run_dir = Path("run")
    logger = logger_class(run_dir)  # made here, so a missing implementation is reported as such
    pid = os.fork()
    if pid == 0:  # the writer: train until it stops itself
        try:
            # A forked child inherits torch's OpenMP pool without its threads: its first parallel op would
            # wait forever for them. One thread means no parallel region at all.
            torch.set_num_threads(1)
            train(settings, [logger, StopAfter(settings["kill_at"])])
        finally:
            os._exit(3)  # only reached when the stop did not happen
    _, status = _waitpid(pid, os.WUNTRACED)
    if os.WIFSTOPPED(status):
        os.kill(pid, signal.SIGKILL)  # a stopped process runs no code: what is on disk now is what survives
        _, status = _waitpid(pid, 0)
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
