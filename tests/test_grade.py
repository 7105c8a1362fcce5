"""``clinic grade`` against the adversarial corpus, and its contract (CSV, JSON, feedback, resume, exits)."""

from __future__ import annotations

import csv
import json
import hashlib

import pytest

from autograder.course import Course
from tests.conftest import REPO, clinic
from tests.exercise_tools import one_thread_each
from tests.grading_corpus import ASSIGNMENT, expected_score, write_corpus

COURSE = Course.find()


@pytest.fixture(autouse=True, scope="module")
def _one_thread_each():
    with one_thread_each():
        yield


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory):
    """The whole corpus graded once, two at a time, as an instructor would run it."""
    root = tmp_path_factory.mktemp("corpus")
    submissions, out = root / "submitted", root / "grades"
    expected = write_corpus(COURSE, submissions, str(REPO))
    honest = submissions / "correct" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    honest_hash = hashlib.sha256(honest.read_bytes()).hexdigest()
    scratch = root / "tmp"  # every sandbox, and so every process a submission starts, lives under it
    scratch.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(scratch))
        done = clinic("grade", "--assignment", ASSIGNMENT, "--submissions", str(submissions), "--out", str(out),
                      "--jobs", "2", "--timeout", "24", "--memory-gb", "3", "--json", timeout=900)
    left = processes_started_under(scratch)
    return expected, done, out, submissions, honest, honest_hash, left


def processes_started_under(scratch) -> list[str]:
    import psutil

    left = []
    for process in psutil.process_iter():
        try:
            if process.environ().get("TMPDIR", "").startswith(str(scratch)):
                left.append(" ".join(process.cmdline())[:120])
        except psutil.Error:
            continue
    return left


def test_the_corpus_holds_at_least_15_named_submissions(corpus_run):
    assert len(corpus_run[0]) >= 15


def test_every_corpus_submission_gets_its_expected_score_and_status(corpus_run):
    expected, done, *_ = corpus_run
    assert done.returncode == 0, done.stderr[-2000:]  # also with every hostile submission in the batch
    results = {result["student"]: result for result in json.loads(done.stdout)["results"]}
    assert set(results) == set(expected)
    wrong = {student: (result["score"], result["status"], expected_score(COURSE, expected[student][0]),
                       expected[student][1])
             for student, result in results.items()
             if (result["score"], result["status"]) != (expected_score(COURSE, expected[student][0]),
                                                        expected[student][1])}
    assert not wrong, wrong


def test_attacks_leave_other_students_files_untouched(corpus_run):
    *_, honest, honest_hash, _ = corpus_run
    assert hashlib.sha256(honest.read_bytes()).hexdigest() == honest_hash


def test_no_process_of_a_submission_outlives_clinic_grade(corpus_run):
    """The corpus holds a setsid() daemon, a fork bomb and a child that stops: none is left."""
    assert corpus_run[-1] == []


def test_grade_prints_errors_on_stderr_and_json_stdout_is_one_document(corpus_run):
    _, done, *_ = corpus_run
    assert set(json.loads(done.stdout)) == {"results"}
    assert "Traceback" not in done.stderr


def test_grades_csv_has_one_row_per_problem_and_student(corpus_run):
    expected, _, out, *_ = corpus_run
    with (out / "grades.csv").open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert list(rows[0]) == ["student", "assignment", "problem", "score", "max_score", "status"]
    problems = [cell for cell in COURSE.source_notebook(ASSIGNMENT).cells if cell.metadata.get("nbgrader", {}).get("grade")]
    assert len(rows) == len(expected) * len(problems)


def test_feedback_shows_public_results_and_never_hidden_ones(corpus_run):
    _, _, out, *_ = corpus_run
    page = (out / "feedback" / "empty" / f"{ASSIGNMENT}.html").read_text()
    assert "not implemented yet" in page
    assert "_hidden" not in page and "hidden check(s), not shown" in page


def test_tampering_is_reported_in_feedback(corpus_run):
    _, _, out, *_ = corpus_run
    assert "was edited" in (out / "feedback" / "cheat_edits_test_cells" / f"{ASSIGNMENT}.html").read_text()
    assert "was deleted" in (out / "feedback" / "cheat_deletes_test_cells" / f"{ASSIGNMENT}.html").read_text()


def test_a_second_run_resumes_and_force_regrades(corpus_run, tmp_path):
    expected, _, out, submissions, *_ = corpus_run
    results = out / "results" / ASSIGNMENT / "correct.json"
    before = results.stat().st_mtime_ns
    again = clinic("grade", "--assignment", ASSIGNMENT, "--submissions", str(submissions), "--out", str(out),
                   "--json", timeout=600)
    assert again.returncode == 0
    assert results.stat().st_mtime_ns == before  # nothing was graded again
    assert len(json.loads(again.stdout)["results"]) == len(expected)


@pytest.mark.parametrize("args, message", [
    (["--assignment", "99_nope", "--submissions", "."], "unknown assignment"),
    (["--assignment", ASSIGNMENT, "--submissions", "/nonexistent/dir"], "not a folder"),
    (["--assignment", ASSIGNMENT, "--submissions", ".", "--jobs", "0"], "positive integer"),
    (["--assignment", ASSIGNMENT, "--submissions", ".", "--timeout", "-1"], "positive"),
    (["--assignment", ASSIGNMENT, "--submissions", ".", "--timeout", "1e12"], "from 10 to 86400 seconds"),
    (["--assignment", ASSIGNMENT, "--submissions", ".", "--memory-gb", "1e10"], "from 0.5 to 1024 GiB"),
    (["--assignment", ASSIGNMENT, "--submissions", ".", "--memory-gb", "nan"], "from 0.5 to 1024 GiB"),
])
def test_usage_errors_are_one_line_and_exit_2(args, message):
    done = clinic("grade", *args)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_nbgrader_autograde_agrees_on_honest_submissions_and_is_fooled_where_clinic_grade_is_not(
        corpus_run, tmp_path):
    """Same scores for honest work; a notebook that patches the check helpers in its own kernel gets full
    marks from nbgrader (tests run in that kernel) and zero from clinic grade (tests judged elsewhere)."""
    import nbformat

    from tests.exercise_tools import nbgrader_autograde

    expected, done, _, submissions, *_ = corpus_run
    ours = {result["student"]: result["score"] for result in json.loads(done.stdout)["results"]}
    # (full and blank notebooks of every assignment agree in test_exercises.py)
    students = ("partially_correct", "cheat_patches_check_helpers")
    notebooks = {student: nbformat.read(str(submissions / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), 4)
                 for student in students}
    theirs = nbgrader_autograde(COURSE, ASSIGNMENT, notebooks, tmp_path)
    honest = students[:1]
    assert {student: theirs[student] for student in honest} == {student: ours[student] for student in honest}
    assert ours["cheat_patches_check_helpers"] == 0.0
    assert theirs["cheat_patches_check_helpers"] == expected_score(COURSE, "full")


MEASURED = "01_logging_levels"
# A logger that never flushes, in a notebook that patches every instrument the old child-side checks used.
UNFLUSHED_BUT_PATCHED = """
import os, signal
import autograder.probes.logging_levels as probe_module
probe_module.complete_lines = lambda path: 10**6
_kill, _fsync = os.kill, os.fsync
def flushing_kill(pid, sig):
    import gc, io
    for obj in gc.get_objects():
        if isinstance(obj, io.TextIOWrapper) and not obj.closed:
            obj.flush()
    _kill(pid, sig)
os.kill = flushing_kill
signal.raise_signal = lambda sig: flushing_kill(os.getpid(), sig)
"""


def test_what_reached_the_disk_is_measured_by_the_grader_not_by_the_child(tmp_path):
    """A non-flushing logger cannot pass the flush and crash checks by patching instruments in its own
    process: the writer freezes and the grader counts and kills from outside. Its honest peer is unaffected."""
    from tests.exercise_tools import solved, write
    from tests.grading_corpus import _prepend

    good = solved(COURSE, MEASURED)
    cheat = _prepend(good, UNFLUSHED_BUT_PATCHED, 0)
    logger = next(cell for cell in cheat.cells if "class JsonlLogger" in cell.source)
    logger.source = logger.source.replace("self.file.flush()", "pass")
    submissions = tmp_path / "submitted"
    write(good, submissions / "honest" / MEASURED / f"{MEASURED}.ipynb")
    write(cheat, submissions / "patches_instruments" / MEASURED / f"{MEASURED}.ipynb")
    done = clinic("grade", "--assignment", MEASURED, "--submissions", str(submissions), "--out",
                  str(tmp_path / "grades"), "--jobs", "2", "--timeout", "200", "--json", timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads((tmp_path / "grades" / "results" / MEASURED / "patches_instruments.json").read_text())
    scores = {problem["grade_id"]: problem["score"] for problem in record["problems"]}
    full = {problem["grade_id"]: problem["max_score"] for problem in record["problems"]}
    logger_problems = [gid for gid in scores if "jsonl" in gid]
    assert logger_problems and all(scores[gid] == 0 for gid in logger_problems), scores
    assert all(scores[gid] == full[gid] for gid in scores if gid not in logger_problems), scores
    results = {result["student"]: result for result in json.loads(done.stdout)["results"]}
    assert results["honest"]["score"] == results["honest"]["max_score"]
