"""Argument types that reject bad values with a message naming the accepted range."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

from chapters.doctor.findings import LABELS
from chapters.errors import CourseError, UsageError


def integer_at_least(minimum: int, expected: str, maximum: int | None = None):
    """An argument type for integers >= ``minimum`` (and <= ``maximum``, when given); ``expected`` names the
    range in error messages."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer (expected {expected})") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"{value} is not allowed (expected {expected})")
        return value

    return parse


positive_int = integer_at_least(1, "a positive integer")
non_negative_int = integer_at_least(0, "0 or more")
# torch seeds its generators with a signed 64-bit integer: a bigger seed is an error deep inside torch.
MAX_SEED = 2**63 - 1
seed = integer_at_least(0, f"an integer from 0 to 2^63-1 = {MAX_SEED}", MAX_SEED)


def float_within(low: float, high: float, expected: str):
    """An argument type for finite numbers with ``low < value <= high``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number (expected {expected})") from None
        if not (math.isfinite(value) and low < value <= high):
            raise argparse.ArgumentTypeError(f"{text} is not allowed (expected {expected})")
        return value

    return parse


positive_float = float_within(0, math.inf, "a positive, finite number")


def path_text(text: str) -> str:
    """A path argument, refused when empty: ``Path("")`` means the current directory, which is never what a
    user who passed an empty variable (``clinic plot "$RUN"``) meant."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path is not allowed")
    return text


def number_between(low: float, high: float, unit: str):
    """An argument type for numbers in [low, high]: a typo such as ``1e12`` is refused, never clamped."""

    def parse(text: str) -> float:
        expected = f"a positive number from {low:g} to {high:g}{unit}"
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number (expected {expected})") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is out of range (expected {expected})")
        return value

    return parse


def writable_dir(text: str) -> Path:
    """Create the directory (and parents) now and prove we can write there, before any work is done.

    An empty string is refused: ``Path("")`` is the current directory, where a run would overwrite
    whatever ``config.json`` or ``metrics.jsonl`` happens to be there."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path is not allowed (name a directory)")
    path = Path(text)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".clinic-write-test-{os.getpid()}"  # per process: torchrun's ranks all probe at once
        probe.write_text("")
        probe.unlink()
    except OSError as err:
        raise argparse.ArgumentTypeError(f"cannot write to {text!r}: {err.strerror}") from None
    return path


def doctor_labels(text: str) -> tuple[str, ...]:
    """``nan_loss,divergence`` -> a tuple of labels from the doctor's vocabulary."""

    labels = tuple(label.strip() for label in text.split(",") if label.strip())
    unknown = [label for label in labels if label not in LABELS]
    if unknown or not labels:
        raise argparse.ArgumentTypeError(f"unknown label {', '.join(unknown) or repr(text)} "
                                         f"(accepted: {', '.join(LABELS)})")
    return labels


def add_course_option(parser) -> None:
    """``--course DIR``, shared by the verbs that work on the course (check, grade, course release)."""
    parser.add_argument("--course", type=Path, metavar="DIR", help="the course directory (default: this checkout)")


def open_course(args, assignment: str | None = None):
    """The course ``--course`` names (default: this checkout), holding ``assignment`` when one is given.

    A missing course or an unknown assignment is the user's input, not a bug: a ``UsageError`` (exit 2).
    """
    from autograder.course import Course

    try:
        course = Course.find(args.course)
        if assignment is not None:
            course.source_path(assignment)
    except CourseError as err:
        raise UsageError(err) from None
    return course
