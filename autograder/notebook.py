"""Read a course notebook the way the grader needs it: which cells are answers, which are tests.

nbgrader marks cells in their metadata (``metadata.nbgrader``): *solution* cells hold the learner's answer,
*grade* cells hold tests worth ``points``, *locked* cells are read-only narrative or setup. The grader builds
its own run of the notebook from three sources:

* the instructor's cells (setup and tests) from the **source** notebook -- never the learner's copies, so an
  edited or deleted test cell changes nothing;
* the learner's answer cells, matched by ``grade_id`` (by position when a notebook lost its metadata);
* for ``clinic check`` (students), the tests of the **release** notebook, which has no hidden tests.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.utils import compute_checksum, is_grade, is_locked, is_solution

from chapters.errors import NotebookError


@dataclass(frozen=True)
class Call:
    check: str
    args: tuple[str, ...]  # names in the learner's namespace, passed to the check's collect


@dataclass(frozen=True)
class Problem:
    """One graded test cell: its id, its points and the checks it runs."""

    grade_id: str
    points: float
    calls: tuple[Call, ...]


@dataclass
class GradingPlan:
    steps: list  # in notebook order: str (code to run) or Problem
    notes: list[str] = field(default_factory=list)  # what the grader noticed: edited tests, missing answers

    @property
    def problems(self) -> list[Problem]:
        return [step for step in self.steps if isinstance(step, Problem)]


def read(path: Path) -> nbformat.NotebookNode:
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise NotebookError(f"{path}: no such notebook") from None
    except OSError as err:
        raise NotebookError(f"{path}: cannot be read ({err.strerror})") from None
    return reads(data, str(path))


def reads(data: bytes, name: str) -> nbformat.NotebookNode:
    """A notebook from bytes, with the shape the grader relies on checked (a learner's file may hold
    anything that parses as JSON: metadata that is a string, cells that are lists)."""
    try:
        notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception as err:  # nbformat raises several types for bytes that are not a notebook
        raise NotebookError(f"{name}: not a readable notebook ({type(err).__name__}: {str(err)[:120]})") from None
    problem = _shape_problem(notebook)
    if problem:
        raise NotebookError(f"{name}: {problem}")
    return notebook


def _shape_problem(notebook) -> str:
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        return "no list of cells"
    for number, cell in enumerate(notebook["cells"], 1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            return f"cell {number} is not a notebook cell"
        if not isinstance(cell.get("source", ""), str):
            return f"cell {number}: its source is not text"
        metadata = cell.get("metadata", {})
        if not isinstance(metadata, dict):
            return f"cell {number}: its metadata is not an object"
        nbgrader = metadata.get("nbgrader", {})
        if not isinstance(nbgrader, dict):
            return f"cell {number}: its nbgrader metadata is a {type(nbgrader).__name__}, not an object"
        if not isinstance(nbgrader.get("grade_id", ""), str):
            return f"cell {number}: its nbgrader grade_id is not text"
        for key in ("solution", "grade", "locked"):
            if not isinstance(nbgrader.get(key, False), bool):
                return f"cell {number}: its nbgrader {key!r} is not true or false"
    return ""


def grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def answer_cells(notebook) -> list:
    return [cell for cell in notebook.cells if cell.cell_type == "code" and is_solution(cell) and not is_grade(cell)]


def parse_test_cell(source: str) -> tuple[Call, ...]:
    """A test cell may only import from ``autograder`` and call ``check("name", obj, ...)``.

    Keeping tests declarative is what lets the grader run them outside the learner's interpreter: the
    grader reads *which* checks a cell runs on *which* objects, and never executes the cell's text itself.
    """
    calls = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("autograder"):
            continue
        call = node.value if isinstance(node, ast.Expr) else None
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "check"
                and call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)
                and all(isinstance(arg, ast.Name) for arg in call.args[1:]) and not call.keywords):
            calls.append(Call(call.args[0].value, tuple(arg.id for arg in call.args[1:])))
            continue
        raise ValueError(f"test cell line {node.lineno}: only `check(\"name\", obj, ...)` calls are allowed")
    return tuple(calls)


def plan(source, release, submission, public_only: bool = False) -> GradingPlan:
    """The run the grader will make: instructor cells from ``source``, answers from ``submission``.

    The tests that count are the source's (with hidden tests) when grading, the release's (public tests
    only) for a learner's local check. Tampering is judged against the release: what learners received.
    """
    tests_by_id = {grade_id(cell): cell for cell in (release if public_only else source).cells if is_grade(cell)}
    answers, notes = _match_answers(source, submission)
    notes += _tampering(release, submission)
    steps = []
    for cell in source.cells:
        if cell.cell_type != "code":
            continue
        if is_grade(cell):
            test_cell = tests_by_id.get(grade_id(cell))
            if test_cell is not None:
                steps.append(Problem(grade_id(cell), float(cell.metadata.nbgrader.get("points", 0)),
                                     parse_test_cell(test_cell.source)))
        elif is_solution(cell):
            steps.append(answers.get(grade_id(cell), ""))
        else:
            steps.append(cell.source)
    return GradingPlan(steps, notes)


def _match_answers(source, submission) -> tuple[dict[str, str], list[str]]:
    wanted = [grade_id(cell) for cell in answer_cells(source)]
    by_id = {grade_id(cell): cell.source for cell in answer_cells(submission)}
    if not by_id and wanted:
        return _match_by_position(source, submission, wanted)
    notes = [f"answer cell {gid!r} is missing: graded as empty" for gid in wanted if gid not in by_id]
    return {gid: by_id[gid] for gid in wanted if gid in by_id}, notes


def _match_by_position(source, submission, wanted) -> tuple[dict[str, str], list[str]]:
    """A notebook whose metadata was stripped (some editors do it) still has its cells in order."""
    source_code = [cell for cell in source.cells if cell.cell_type == "code"]
    submitted_code = [cell for cell in submission.cells if cell.cell_type == "code"]
    if len(source_code) != len(submitted_code):
        return {}, ["nbgrader metadata is missing and the code cells do not line up: no answer could be found"]
    answers = {grade_id(ours): theirs.source for ours, theirs in zip(source_code, submitted_code)
               if grade_id(ours) in wanted}
    return answers, ["nbgrader metadata is missing: answer cells were matched by position"]


def _tampering(reference, submission) -> list[str]:
    """Read-only and test cells whose checksum differs from the instructor's: reported, then ignored."""
    theirs = {grade_id(cell): cell for cell in submission.cells if grade_id(cell)}
    notes = []
    for cell in reference.cells:
        if not (is_grade(cell) or is_locked(cell)) or is_solution(cell):
            continue
        gid = grade_id(cell)
        if gid not in theirs:
            if theirs:  # a notebook without metadata was already reported
                notes.append(f"read-only cell {gid!r} was deleted: the instructor's copy was used")
        elif _checksum(theirs[gid]) != _checksum(cell):
            notes.append(f"read-only cell {gid!r} was edited: the instructor's copy was used")
    return notes


def _checksum(cell) -> str | None:
    try:
        return compute_checksum(cell)
    except (KeyError, ValueError, TypeError):  # metadata mangled by hand: not the instructor's cell
        return None
