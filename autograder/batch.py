"""Grade a folder of submissions: ``DIR/<student>/<assignment>/<notebook>.ipynb`` (nbgrader's layout).

Submissions are graded in worker processes (``--jobs N`` at a time), each worker starting a confined child
for the learner's code. A worker that dies, stops or hangs is replaced, and only the submission it was
grading is marked ``crashed``; a folder or notebook that cannot be read is ``invalid``. Results are saved per student as soon as they are known, so an
interrupted batch resumes where it stopped; a submission is graded again only when its notebook changed
or ``--force`` is given.
"""

from __future__ import annotations

import csv
import ctypes
import json
import multiprocessing
import os
import time
import traceback
from dataclasses import asdict
from pathlib import Path

import psutil
import torch
from tqdm import tqdm

from autograder import submissions as found
from autograder.course import Course
from autograder.engine import grade_notebook, unusable
from autograder.feedback import write_feedback
from autograder.notebook import NotebookError, reads
from autograder.sandbox import SandboxLimits
from autograder.submissions import Submission, fingerprint

CSV_COLUMNS = ["student", "assignment", "problem", "score", "max_score", "status"]
JUDGE_SECONDS = 900  # on top of the child's wall-clock limit: the judges train and evaluate
POLL_SECONDS = 0.2
PR_SET_DUMPABLE = 4


def find_submissions(submissions_dir: Path, assignment: str) -> list[Submission]:
    return found.find(submissions_dir, assignment)


def grade_one(course_root: str, submission: Submission, limits: SandboxLimits) -> dict:
    """Grade one submission and return its record (plain data). A broken folder or notebook is ``invalid``."""
    course = Course(Path(course_root))
    try:
        if submission.notebook is None:
            raise NotebookError(submission.note)
        notebook = reads(found.read_bytes(submission), printable_path(submission))
        result = grade_notebook(course, submission.assignment, submission.notebook, limits, notebook=notebook)
        if submission.note:
            result.notes.insert(0, submission.note)
    except (NotebookError, found.SubmissionError) as err:
        result = unusable(course, submission.assignment, str(err))
    except Exception as err:  # noqa: BLE001 -- a grader bug on one submission must not stop the batch
        traceback.print_exc()  # the instructor's stderr gets the whole story; the student's note gets one line
        result = unusable(course, submission.assignment, f"the grader failed on this submission "
                                                          f"({type(err).__name__}: {str(err)[:200]})")
        result.status = "crashed"
    return record_of(submission, result.status, result.notes, result.confinement,
                     [asdict(problem) for problem in result.problems])


def printable_path(submission: Submission) -> str:
    return found.printable(str(submission.notebook))


def record_of(submission: Submission, status: str, notes: list[str], confinement: list[str],
              problems: list[dict]) -> dict:
    return {"student": submission.student, "assignment": submission.assignment,
            "fingerprint": fingerprint(submission), "status": status, "notes": notes,
            "confinement": confinement, "problems": problems}


def _worker(course_root: str, limits: SandboxLimits, threads: int, connection) -> None:
    """A grading worker: grade each submission it is sent until it is sent ``None``.

    ``threads`` is this worker's share of the cores for the judges' own training: N workers each using
    every core would fight over them and all run slower. The worker is not dumpable, so without Landlock
    too no process of the same user may read its memory (where the seeds are) through /proc or ptrace.
    """
    ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    torch.set_num_threads(threads)
    while (submission := connection.recv()) is not None:
        connection.send(grade_one(course_root, submission, limits))


class Slot:
    """One worker process and the submission it is grading; replaced when the worker dies or stops."""

    def __init__(self, context, course_root: str, limits: SandboxLimits, threads: int):
        self.connection, theirs = context.Pipe()
        self.process = context.Process(target=_worker, args=(course_root, limits, threads, theirs), daemon=True)
        self.process.start()
        theirs.close()
        self.submission, self.deadline = None, 0.0

    def give(self, submission: Submission, seconds: float) -> None:
        self.submission, self.deadline = submission, time.monotonic() + seconds
        self.connection.send(submission)

    def result(self) -> dict | None:
        """The record when the worker answered; a ``crashed`` one when it died, stopped or hung."""
        try:
            if self.connection.poll():
                return self.connection.recv()
        except (EOFError, OSError):
            pass
        trouble = self._trouble()
        if trouble is None:
            return None
        self.close()
        return record_of(self.submission, "crashed", [f"the grading worker {trouble}: this submission was not "
                                                      "graded (the batch went on)"], [], [])

    def _trouble(self) -> str | None:
        if not self.process.is_alive():
            return f"died (exit code {self.process.exitcode})"
        try:
            if psutil.Process(self.process.pid).status() == psutil.STATUS_STOPPED:
                return "was stopped"
        except psutil.Error:
            return "disappeared"
        if time.monotonic() > self.deadline:
            return "ran past its time limit"
        return None

    def close(self) -> None:
        try:
            self.connection.send(None)
        except OSError:
            pass
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.connection.close()


def grade_all(course: Course, assignment: str, submissions_dir: Path, out: Path, jobs: int,
              limits: SandboxLimits, force: bool, progress: bool = True) -> list[dict]:
    submissions = find_submissions(submissions_dir, assignment)
    results_dir = out / "results" / assignment
    results_dir.mkdir(parents=True, exist_ok=True)
    records, todo = {}, []
    for submission in submissions:
        saved = results_dir / f"{submission.file_name}.json"
        if not force and saved.is_file():
            try:
                record = json.loads(saved.read_text())
            except ValueError:
                record = {}
            if record.get("fingerprint") == fingerprint(submission):
                records[submission.student] = record
                continue
        todo.append(submission)
    for submission, record in _grade(course, todo, jobs, limits, progress, f"grading {assignment}"):
        (results_dir / f"{submission.file_name}.json").write_text(json.dumps(record, indent=1))
        write_feedback(record, out / "feedback" / submission.file_name / f"{assignment}.html")
        records[record["student"]] = record
    ordered = [records[submission.student] for submission in submissions]
    write_csv(ordered, out / "grades.csv")
    return ordered


def _grade(course: Course, todo: list[Submission], jobs: int, limits: SandboxLimits, progress: bool, title: str):
    """Yield each submission's record as soon as it is known, ``jobs`` at a time, whatever a worker does."""
    # "spawn": a fresh interpreter per worker, not a fork of this one (torch's threads do not survive fork).
    context = multiprocessing.get_context("spawn")
    threads = max(1, (os.cpu_count() or 1) // max(jobs, 1))
    waiting, busy, idle = list(reversed(todo)), [], []
    seconds = limits.wall_seconds + JUDGE_SECONDS
    with tqdm(total=len(todo), desc=title, unit="submission", disable=not progress) as bar:
        try:
            while waiting or busy:
                while waiting and len(busy) < jobs:
                    slot = idle.pop() if idle else Slot(context, str(course.root), limits, threads)
                    slot.give(waiting.pop(), seconds)
                    busy.append(slot)
                time.sleep(POLL_SECONDS)
                for slot in list(busy):
                    record = slot.result()
                    if record is None:
                        continue
                    busy.remove(slot)
                    if slot.process.is_alive():
                        idle.append(slot)
                    if not record["problems"]:  # the worker died: every problem scores zero
                        record["problems"] = [asdict(problem) for problem in
                                              unusable(course, slot.submission.assignment, record["notes"][0]).problems]
                    bar.update()
                    yield slot.submission, record
        finally:
            for slot in busy + idle:
                slot.close()


def write_csv(records: list[dict], path: Path) -> None:
    """One row per problem; a student's other assignments already in the file are kept."""
    assignments = {record["assignment"] for record in records}
    kept = []
    if path.is_file():
        with path.open(newline="") as file:
            kept = [row for row in csv.DictReader(file) if row.get("assignment") not in assignments]
    with path.open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(kept)
        for record in records:
            for problem in record["problems"]:
                writer.writerow({"student": record["student"], "assignment": record["assignment"],
                                 "problem": problem["grade_id"], "score": problem["score"],
                                 "max_score": problem["max_score"], "status": record["status"]})


def summary(record: dict) -> dict:
    return {"student": record["student"], "assignment": record["assignment"],
            "score": sum(problem["score"] for problem in record["problems"]),
            "max_score": sum(problem["max_score"] for problem in record["problems"]), "status": record["status"]}
