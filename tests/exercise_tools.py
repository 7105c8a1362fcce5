"""Building submissions for the exercise and grader tests."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import nbformat

from autograder.notebook import answer_cells, grade_id


def solved(course, assignment: str):
    """The release notebook with every answer cell filled in from the source: an honest, correct submission."""
    answers = {grade_id(cell): cell.source for cell in answer_cells(course.source_notebook(assignment))}
    notebook = copy.deepcopy(course.release_notebook(assignment))
    for cell in answer_cells(notebook):
        cell.source = answers[grade_id(cell)]
    return notebook


def write(notebook, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, str(path))
    return path


def nbgrader_autograde(course, assignment: str, submissions: dict[str, object], workdir: Path) -> dict[str, float]:
    """Grade ``{student: notebook}`` with nbgrader's own autograde, in a copy of the course.

    Returns each student's total score as nbgrader's gradebook records it.
    """
    from autograder.course import Course
    from nbgrader.api import Gradebook

    root = workdir / "course"
    (root / "solutions").mkdir(parents=True)
    shutil.copy(course.root / "nbgrader_config.py", root)
    shutil.copytree(course.root / "solutions" / assignment, root / "solutions" / assignment)
    db = f"sqlite:///{root / 'gradebook.db'}"
    api = Course(root).nbgrader(db_url=db)
    assert api.generate_assignment(assignment)["success"]
    for student, notebook in submissions.items():
        write(notebook, root / "submitted" / student / assignment / f"{assignment}.ipynb")
        outcome = api.autograde(assignment, student)
        assert outcome["success"], outcome.get("error")
    with Gradebook(db) as gradebook:
        return {student: gradebook.find_submission(assignment, student).score for student in submissions}
