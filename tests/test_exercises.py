"""The nbgrader assignments: releases match their sources, solutions score full marks, blanks score zero.

Each notebook is run for real: by the project's grading path (a confined child process per notebook) and
by ``nbgrader autograde`` in a temporary copy of the course, and the two must agree.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest

from autograder.course import Course
from autograder.engine import grade_notebook
from autograder.notebook import parse_test_cell
from nbgrader.utils import is_grade
from tests.exercise_tools import nbgrader_autograde, one_thread_each, solved, write

COURSE = Course.find()


@pytest.fixture(autouse=True, scope="module")
def _one_thread_each():
    with one_thread_each():
        yield
ASSIGNMENTS = COURSE.assignments()


def test_every_assignment_of_the_course_exists():
    from autograder.course import ASSIGNMENTS as ALL

    assert ASSIGNMENTS == ALL


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_release_is_what_nbgrader_generates_from_the_source(assignment, tmp_path):
    regenerated = nbformat.read(str(COURSE.generate_release(assignment, into=tmp_path)), as_version=4)
    committed = COURSE.release_notebook(assignment)
    assert [cell.source for cell in regenerated.cells] == [cell.source for cell in committed.cells], \
        f"exercises/{assignment} drifted from solutions/{assignment}: run `clinic course release {assignment}`"
    assert [cell.metadata for cell in regenerated.cells] == [cell.metadata for cell in committed.cells]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_release_holds_no_solution_and_no_hidden_test(assignment):
    text = COURSE.release_path(assignment).read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "_hidden\""):
        assert marker not in text
    source = COURSE.source_notebook(assignment)
    for cell in source.cells:  # every solution region's body is gone from the release
        for region in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", cell.source, re.S):
            for line in region.strip().splitlines():
                if len(line.strip()) > 25:
                    assert line.strip() not in text, f"solution line leaked: {line.strip()!r}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_test_cells_are_declarative_and_every_problem_has_a_hidden_variant(assignment):
    for cell in COURSE.source_notebook(assignment).cells:
        if is_grade(cell):
            calls = parse_test_cell(cell.source)
            assert calls, f"test cell {cell.metadata.nbgrader.grade_id} runs no check"
            assert any(call.check.endswith("_hidden") for call in calls) or cell.metadata.nbgrader.get("public_only"), \
                f"test cell {cell.metadata.nbgrader.grade_id} has no hidden variant"




@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_scores_full_marks_and_blank_release_scores_zero_on_both_paths(assignment, tmp_path):
    solution = write(solved(COURSE, assignment), tmp_path / "solution.ipynb")
    blank = COURSE.release_path(assignment)
    # The three gradings are independent processes (two confined children, one Jupyter kernel at a time):
    # run them side by side so both cores work.
    with ThreadPoolExecutor(max_workers=3) as pool:
        full = pool.submit(grade_notebook, COURSE, assignment, solution)
        empty = pool.submit(grade_notebook, COURSE, assignment, blank)
        nbgrader = pool.submit(nbgrader_autograde, COURSE, assignment,
                               {"solution": nbformat.read(str(solution), 4), "blank": nbformat.read(str(blank), 4)},
                               tmp_path)
        full, empty, scores = full.result(), empty.result(), nbgrader.result()
    max_score = sum(problem.max_score for problem in full.problems)
    assert max_score > 0
    assert (full.status, full.score) == ("graded", max_score), [p for p in full.problems if p.score < p.max_score]
    assert (empty.status, empty.score) == ("graded", 0.0)
    for problem in empty.problems:  # each failure reads as a hint, not a stack trace
        assert any("not implemented yet. Hint:" in message for message in problem.messages) or not problem.messages
    assert scores == {"solution": max_score, "blank": 0.0}
