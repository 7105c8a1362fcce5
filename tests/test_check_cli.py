"""``clinic check`` (learners) and ``clinic course`` (authors) from the command line."""

from __future__ import annotations

from autograder.course import Course
from tests.conftest import clinic
from tests.exercise_tools import solved, write

ASSIGNMENT = "08_checkpoints"


def test_check_on_the_blank_release_fails_every_problem_with_a_hint():
    done = clinic("check", ASSIGNMENT)
    assert done.returncode == 1, done.stderr
    assert "FAIL" in done.stdout and "PASS" not in done.stdout
    assert "not implemented yet. Hint:" in done.stdout
    assert "_hidden" not in done.stdout  # public tests only


def test_check_on_a_solved_notebook_passes_every_public_test(tmp_path):
    notebook = write(solved(Course.find(), ASSIGNMENT), tmp_path / "mine.ipynb")
    done = clinic("check", ASSIGNMENT, str(notebook))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout and "PASS" in done.stdout


def test_check_rejects_what_it_cannot_check_in_one_line(tmp_path):
    broken = tmp_path / "broken.ipynb"
    broken.write_text("not json")
    for args, message in [(["99_nope"], "unknown assignment"), ([ASSIGNMENT, str(broken)], "not a readable notebook")]:
        done = clinic("check", *args)
        assert done.returncode == 2 and message in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_course_release_rejects_an_unknown_assignment():
    done = clinic("course", "release", "99_nope")
    assert done.returncode == 2 and "unknown assignment" in done.stderr
