"""Every near-miss answer (tests/near_misses.py) loses points on its problem's hidden check, on every seed tried.

Each near miss is the reference solution with one plausible mistake; it runs in a namespace built from the
source notebook's setup cells and solution cells, exactly as the notebook would define it, and goes through
the public seam ``autograder.checks.check`` with the hidden variant's name. Seeds are fixed (drawn from
``random.Random``), so the test is deterministic; an answer that passes on one of them is a grade that
rewards luck.
"""

from __future__ import annotations

import functools
import random
from unittest import mock

import pytest

from autograder import checks
from autograder.course import Course
from autograder.notebook import answer_cells, grade_id
from tests.exercise_tools import one_thread_each
from tests.near_misses import NEAR_MISSES, NearMiss

COURSE = Course.find()
SEEDS = [random.Random(1800 + i).randrange(2**31) for i in range(3)]
EXPENSIVE_SEEDS = SEEDS[:2]  # checks that train models (each takes seconds)

# Cells that define what the answers use, besides the setup cell (09's corpus and constants).
CONTEXT = {"09_mystery_runs": ["setup", "broken_training"]}


@pytest.fixture(autouse=True, scope="module")
def _one_thread_each():
    with one_thread_each():
        yield


@functools.cache
def notebook_cells(assignment: str) -> tuple[list[str], dict[str, str]]:
    """(the context cells' sources, {answer cell id: source}) of the solved source notebook."""
    notebook = COURSE.source_notebook(assignment)
    wanted = CONTEXT.get(assignment, ["setup"])
    by_id = {grade_id(cell): cell.source for cell in notebook.cells if cell.cell_type == "code"
             and "nbgrader" in cell.metadata}
    return [by_id[name] for name in wanted], {grade_id(cell): cell.source for cell in answer_cells(notebook)}


def namespace_with(near_miss) -> dict:
    """What the notebook defines when its answers are the solutions, one of them edited by the near miss."""
    context, answers = notebook_cells(near_miss.assignment)
    source = answers[near_miss.cell]
    assert near_miss.old in source, f"{near_miss.assignment}/{near_miss.cell} no longer contains {near_miss.old!r}"
    answers = {**answers, near_miss.cell: source.replace(near_miss.old, near_miss.new)}
    namespace: dict = {}
    for code in [*context, *answers.values()]:
        exec(compile(code, f"<{near_miss.assignment}>", "exec"), namespace)  # noqa: S102 -- our own notebook
    return namespace


def graded(name: str, learner_object, seed: int) -> None:
    """``check(name, obj)`` as a test cell runs it, with the hidden seed fixed (the one place that knows how)."""
    with mock.patch.object(checks.Check, "draw_seed", lambda self: seed):
        checks.check(name, learner_object)


def cases():
    for near_miss in NEAR_MISSES:
        marks = [pytest.mark.xfail(strict=True, reason=near_miss.known_gap)] if near_miss.known_gap else []
        yield pytest.param(near_miss, marks=marks, id=f"{near_miss.assignment}-{near_miss.check}-{near_miss.mistake}")


@pytest.mark.parametrize("near_miss", list(cases()))
def test_near_miss_loses_points_on_the_hidden_check(near_miss, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # checks write their logs and weights where the notebook runs
    learner_object = namespace_with(near_miss)[near_miss.name]
    passed = []
    for seed in (EXPENSIVE_SEEDS if near_miss.expensive else SEEDS):
        try:
            graded(f"{near_miss.assignment}.{near_miss.check}_hidden", learner_object, seed)
        except Exception:  # noqa: BLE001 -- a failed check or a crash in the learner's code: the cell fails
            continue
        passed.append(seed)
    assert not passed, f"{near_miss.mistake!r} passed the hidden check on seeds {passed}"


CONTROLS = {(n.assignment, n.cell, n.name, n.check): n.expensive for n in NEAR_MISSES}


@pytest.mark.parametrize("control", sorted(CONTROLS), ids=lambda c: f"{c[0]}-{c[3]}")
def test_the_unedited_solution_passes_the_same_hidden_checks(control, tmp_path, monkeypatch):
    """The control group: without the mistake, the same answer passes on the same seeds -- so each near miss
    fails for its mistake, not because the check fails everything."""
    monkeypatch.chdir(tmp_path)
    assignment, cell, name, check = control
    unedited = NearMiss(assignment, cell, name, check, "none", old="", new="")
    learner_object = namespace_with(unedited)[name]
    for seed in (EXPENSIVE_SEEDS[:1] if CONTROLS[control] else SEEDS):
        graded(f"{assignment}.{check}_hidden", learner_object, seed)


def test_every_graded_problem_has_a_near_miss():
    hidden = {name.removesuffix("_hidden") for name, found in _registry().items() if found.hidden}
    covered = {f"{n.assignment}.{n.check}" for n in NEAR_MISSES}
    assert hidden - covered == set()


def _registry():
    checks.lookup("01_logging_levels.jsonl_logger")  # importing the problems registers them
    return checks.REGISTRY
