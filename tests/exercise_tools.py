"""Building submissions for the exercise and grader tests."""

from __future__ import annotations

import contextlib
import copy
import os
import shutil
from pathlib import Path

import nbformat
import torch

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


@contextlib.contextmanager
def one_thread_each():
    """Torch in this process, and the kernels it starts, use one thread each while the block runs.

    The exercise tests run a kernel, two grading children and the judges side by side; each using every
    core would oversubscribe the machine and make all of them many times slower.
    """
    threads, previous = torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS")
    torch.set_num_threads(1)
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        if previous is None:
            del os.environ["OMP_NUM_THREADS"]
        else:
            os.environ["OMP_NUM_THREADS"] = previous
