"""Checks for ``01_logging_levels``: a crash-proof JSONL logger, logging + tqdm, TensorBoard.

The JSONL checks train a short tiny-GPT run with the learner's logger (one batch made unlearnable, so one
record's loss is NaN and a ``nan`` event fires) and watch the file while it is written: after every record
(flushed?), at every ``os.fsync`` (events on disk?), and after the writer is stopped and killed from outside
with SIGKILL (what survives? -- read here, in the grader). The judge trains the same run with the course's
``JsonlLogger`` and compares.
"""

from __future__ import annotations

import io
import json
import math
import os
import random
import re
import stat
import tempfile
from pathlib import Path

from autograder.checks import CheckFailed, artifact, register_with_hidden
from autograder.probes.logging_levels import LOG_NAME, STOP_REASON, train
COMPARED = ("train_loss", "lr", "grad_norm")  # deterministic on the CPU; timestamps and speeds are not


def run_settings(seed: int) -> dict:
    """The short run of a check: its length, logging interval, the poisoned step and the step to die at."""
    rng = random.Random(seed)
    log_every = 2 if seed == 0 else rng.randint(1, 3)
    steps = 12 if seed == 0 else rng.randint(10, 14)
    return {"seed": seed % 1000, "steps": steps, "log_every": log_every,
            "poisoned": 4 if seed == 0 else rng.randint(2, steps - 4),  # 0-based index of the unlearnable step
            "kill_at": 8 if seed == 0 else rng.randint(log_every, steps - 2)}


def read_reason(path: Path) -> str:
    """Why the writer stopped ("record" or "fsync"), as it wrote it just before: a few bytes at most."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    with os.fdopen(descriptor, "rb") as file:
        return file.read(16).decode(errors="replace") if stat.S_ISREG(os.fstat(descriptor).st_mode) else ""


def count_lines(path: Path, cap: int = 64 * 1024**2) -> int:
    """Newlines in the first ``cap`` bytes of a learner's file (read in chunks: the file may be huge)."""
    lines = 0
    try:  # a regular file only: a link or a FIFO planted there must not block or redirect the grader
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return 0
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return 0
        while cap > 0 and (chunk := file.read(min(cap, 1 << 20))):
            lines, cap = lines + chunk.count(b"\n"), cap - len(chunk)
    return lines


def reference_records(settings: dict) -> list[dict]:
    """The lines the course's JsonlLogger writes for this run."""
    from chapters.records.jsonl import JsonlLogger

    with tempfile.TemporaryDirectory() as run_dir:
        train(settings, [JsonlLogger(run_dir)])
        return [json.loads(line) for line in (Path(run_dir) / LOG_NAME).read_text().splitlines()]


def read_learner_log(name: str) -> tuple[list[dict], object]:
    """The learner's file as JSON objects (NaN must stay NaN) and as a pandas frame."""
    import pandas as pd

    path = artifact(name)
    lines = path.read_text().splitlines()
    try:
        records = [json.loads(line) for line in lines]
        frame = pd.read_json(io.StringIO("\n".join(lines) + "\n"), lines=True)
    except ValueError as err:
        raise CheckFailed(f"{name} is not JSON Lines that pandas can load: {str(err)[:150]}") from None
    if not all(isinstance(record, dict) for record in records):
        raise CheckFailed(f"{name}: every line must be one JSON object")
    return records, frame


def same_metrics(got: list[dict], expected: list[dict], where: str) -> None:
    got_rows = [r for r in got if "train_loss" in r or "val_loss" in r]
    want_rows = [r for r in expected if "train_loss" in r or "val_loss" in r]
    steps = [r.get("step") for r in got_rows]
    if steps != [r["step"] for r in want_rows]:
        raise CheckFailed(f"{where}: metric records at steps {steps}, expected {[r['step'] for r in want_rows]} "
                          "(one line per on_log and per on_eval_end, none dropped)")
    for mine, theirs in zip(got_rows, want_rows):
        for key in (*COMPARED, "val_loss"):
            if key not in theirs:
                continue
            value = mine.get(key)
            if value is None and math.isnan(theirs[key]):
                raise CheckFailed(f"{where}: step {mine['step']} {key} was written as null; keep NaN as NaN "
                                  "(json.dumps writes the token NaN)")
            if not isinstance(value, (int, float)):
                raise CheckFailed(f"{where}: step {mine['step']} has no number for {key!r}")
            if math.isnan(theirs[key]) != math.isnan(value) or (
                    not math.isnan(value) and not math.isclose(value, theirs[key], rel_tol=1e-4)):
                raise CheckFailed(f"{where}: step {mine['step']} {key} = {value}, expected {theirs[key]}")


def check_events(records: list[dict], expected: list[dict]) -> None:
    names = [r.get("event") for r in records if "event" in r]
    if not records or records[0].get("event") != "run_start":
        raise CheckFailed("the first line must be the run_start event")
    if records[-1].get("event") != "run_end" or records[-1].get("status") != "completed":
        raise CheckFailed("the last line must be the run_end event with status 'completed'")
    nan_expected = next(r for r in expected if r.get("event") == "nan")
    nan_got = [r for r in records if r.get("event") == "nan"]
    if len(nan_got) != 1 or nan_got[0].get("step") != nan_expected["step"]:
        raise CheckFailed(f"events written: {names}; expected one 'nan' event at step {nan_expected['step']} "
                          "(write every event on_event receives)")


class JsonlLoggerCheck:
    @staticmethod
    def prepare(seed, folder):
        return run_settings(seed)

    @staticmethod
    def measure(folder):
        """Lines on disk while the writer is frozen after a record or an fsync: measured here, in the grader."""
        return [read_reason(folder / STOP_REASON), count_lines(folder / "run" / LOG_NAME)]

    @staticmethod
    def judge(seed, observation):
        expected = reference_records(run_settings(seed))
        records, frame = read_learner_log(observation["log"])
        has_loss = [index for index, record in enumerate(records) if "train_loss" in record]
        nan_losses = sum(1 for r in expected if isinstance(r.get("train_loss"), float) and math.isnan(r["train_loss"]))
        if "train_loss" not in frame or frame["train_loss"].iloc[has_loss].isna().sum() != nan_losses:
            raise CheckFailed(f"pandas does not read back the {nan_losses} NaN train_loss value(s) of this run")
        check_events(records, expected)
        same_metrics(records, expected, "metrics.jsonl")
        counts = [lines for reason, lines in observation["measured"] if reason == "record"]
        fsyncs = [lines for reason, lines in observation["measured"] if reason == "fsync"]
        if any(later != earlier + 1 for earlier, later in zip(counts, counts[1:])) or not counts or counts[0] < 2:
            raise CheckFailed(f"lines on disk after each record: {counts[:12]}...: flush after every record, so "
                              "each one is in the file as soon as it is written")
        event_lines = [index + 1 for index, record in enumerate(records) if "event" in record]
        missing = [n for n in event_lines if n not in fsyncs]
        if missing:
            raise CheckFailed(f"no os.fsync right after event line(s) {missing}: flush, then os.fsync(file.fileno()) "
                              "after writing each event")


HINT = ("the three rules in section 1 (what reaches the OS, what reaches the disk, what happens to NaN) and "
        "the hooks listed under them: each hook writes something")
register_with_hidden("01_logging_levels.jsonl_logger", hint=HINT)(JsonlLoggerCheck)


def killed_steps(settings: dict) -> list[int]:
    """The steps whose records were written before the kill."""
    steps = list(range(settings["log_every"], settings["steps"] + 1, settings["log_every"]))
    if steps[-1] != settings["steps"]:
        steps.append(settings["steps"])
    return [step for step in steps if step <= next(s for s in steps if s >= settings["kill_at"])]


class CrashCheck:
    @staticmethod
    def prepare(seed, folder):
        return run_settings(seed)

    @staticmethod
    def judge(seed, observation):
        if not observation["killed"]:
            raise CheckFailed("the training process ended before it could be killed (an exception in the logger?)")
        settings = run_settings(seed)
        records, _ = read_learner_log(observation["log"])
        if not records or records[0].get("event") != "run_start":
            raise CheckFailed("after the crash the file does not start with the run_start event")
        steps = [r.get("step") for r in records if "train_loss" in r]
        expected = killed_steps(settings)
        if steps != expected:
            raise CheckFailed(f"killed with SIGKILL after step {expected[-1]} was logged, the file holds records for "
                              f"steps {steps}, expected {expected}: flush every record as it is written")


HINT = "what is in the file at the moment the process dies? Python keeps a buffer of its own"
register_with_hidden("01_logging_levels.jsonl_crash", hint=HINT)(CrashCheck)


# ------------------------------------------------------------------------------------ logging + tqdm
LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \| INFO \| step (\d+) \| train_loss (\S+)$")


def loop_inputs(seed: int) -> tuple[list[float], int]:
    rng = random.Random(seed)
    losses = [3.5 * math.exp(-step / 30) + rng.uniform(0, 0.1) for step in range(40 if seed == 0 else rng.randint(20, 50))]
    if seed:
        losses[rng.randrange(len(losses))] = math.nan  # a NaN must be logged, not skipped
    return losses, 10 if seed == 0 else rng.randint(3, 9)


class LoggingTqdmCheck:
    @staticmethod
    def prepare(seed, folder):
        losses, log_every = loop_inputs(seed)
        return {"losses": losses, "log_every": log_every}

    @staticmethod
    def judge(seed, observation):
        losses, log_every = loop_inputs(seed)
        if observation["stdout"].strip():
            raise CheckFailed(f"the loop still prints to stdout: {observation['stdout'].strip()[:80]!r}")
        if observation["log"] is None:
            raise CheckFailed("no log file was written at log_path")
        expected = [(step, f"{losses[step - 1]:.4f}") for step in range(1, len(losses) + 1) if step % log_every == 0]
        lines = observation["log"].splitlines()
        parsed = [LINE.match(line) for line in lines]
        if not all(parsed):
            bad = next(line for line, match in zip(lines, parsed) if not match)
            raise CheckFailed(f"log line {bad!r} does not read 'TIME | INFO | step N | train_loss X.XXXX' "
                              "(format '%(asctime)s | %(levelname)s | %(message)s')")
        got = [(int(match.group(1)), match.group(2)) for match in parsed]
        if got != expected:
            raise CheckFailed(f"the log holds {got[:4]}..., expected {expected[:4]}... (every log_every steps, "
                              "counting from 1, loss with 4 decimals, NaN included)")
        if not observation["bars"]:
            raise CheckFailed("no tqdm progress bar was made: wrap the loop in tqdm(...)")
        missing = [f"step {s} | train_loss {v}" for s, v in expected if f"step {s} | train_loss {v}" not in observation["stderr"]]
        if missing:
            raise CheckFailed(f"{missing[0]!r} is not on the console: add a StreamHandler and route it around the "
                              "bar with logging_redirect_tqdm")


HINT = ("section 3 lists what the Level-1 loop needs (where the lines go, their format, the bar); "
        "chapters/logging_levels/level1_logging.py does the same for the trainer")
register_with_hidden("01_logging_levels.logging_tqdm", hint=HINT)(LoggingTqdmCheck)


# ------------------------------------------------------------------------------------------ TensorBoard
def fake_records(seed: int) -> list[dict]:
    """Metric records like the trainer's: grouped keys, an evaluation record, one NaN loss."""
    rng = random.Random(seed)
    groups = ["embedding", "attention", "mlp"] if seed == 0 else rng.sample(["embedding", "attention", "mlp", "norm", "head"], 3)
    records, every = [], 5 if seed == 0 else rng.randint(2, 7)
    bad = rng.randrange(2, 8)
    for index in range(1, 9):
        step = index * every
        record = {"step": step, "epoch": step // 20, "timestamp": 1.7e9 + step, "lr": 1e-3 * index,
                  "train_loss": math.nan if index == bad else 3.0 / index + rng.random() * 0.1,
                  "grad_norm": rng.uniform(0.1, 3.0)}
        record.update({f"grad_norm/{g}": rng.uniform(0.01, 1.0) for g in groups})
        records.append(record)
        if index % 4 == 0:
            records.append({"step": step, "epoch": step // 20, "timestamp": 1.7e9 + step + 0.5,
                            "val_loss": 3.2 / index})
    return records


class TensorBoardCheck:
    @staticmethod
    def prepare(seed, folder):
        return fake_records(seed)

    @staticmethod
    def judge(seed, observation):
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

        from chapters.logging_levels.level2_tensorboard import scalars

        if not observation["files"]:
            raise CheckFailed("no TensorBoard event file in log_dir (use torch.utils.tensorboard.SummaryWriter)")
        written: dict[str, dict[int, float]] = {}
        for name in observation["files"]:
            accumulator = EventAccumulator(str(artifact(name)), size_guidance={"scalars": 0})
            accumulator.Reload()
            for tag in accumulator.Tags()["scalars"]:
                written.setdefault(tag, {}).update({e.step: e.value for e in accumulator.Scalars(tag)})
        expected: dict[str, dict[int, float]] = {}
        for record in fake_records(seed):
            for tag, value in scalars(record).items():
                expected.setdefault(tag, {})[record["step"]] = value
        if set(written) != set(expected):
            raise CheckFailed(f"scalar tags {sorted(written)}, expected {sorted(expected)} (every numeric key of "
                              "each record, except step and timestamp, under its own name)")
        for tag, points in expected.items():
            if sorted(written[tag]) != sorted(points):
                raise CheckFailed(f"{tag}: steps {sorted(written[tag])}, expected {sorted(points)} (global_step=step)")
            for step, value in points.items():
                got = written[tag][step]
                if math.isnan(value) != math.isnan(got) or (not math.isnan(value) and not math.isclose(got, value, rel_tol=1e-6, abs_tol=1e-7)):
                    raise CheckFailed(f"{tag} at step {step}: {got}, expected {value} (NaN written as NaN)")


HINT = ("which keys of a record are metrics, at which step does each belong, and is everything on disk when "
        "the function returns? chapters/logging_levels/level2_tensorboard.py is the course's version")
register_with_hidden("01_logging_levels.tensorboard", hint=HINT)(TensorBoardCheck)
