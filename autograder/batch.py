"""Grade a folder of submissions: ``DIR/<student>/<assignment>/<notebook>.ipynb`` (nbgrader's layout).

Each submission is graded in its own worker process (``--jobs N`` at a time), each worker starting a
confined child for the learner's code. Results are saved per student as soon as they are known, so an
interrupted batch resumes where it stopped; a submission is graded again only when its notebook changed
or ``--force`` is given.
"""

from __future__ import annotations

import csv
import hashlib
import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from tqdm import tqdm

from autograder.course import Course
from autograder.engine import grade_notebook, unusable
from autograder.feedback import write_feedback
from autograder.sandbox import SandboxLimits

CSV_COLUMNS = ["student", "assignment", "problem", "score", "max_score", "status"]


@dataclass(frozen=True)
class Submission:
    student: str
    assignment: str
    notebook: Path | None  # None when the folder holds no notebook
    note: str = ""


def find_submissions(submissions_dir: Path, assignment: str) -> list[Submission]:
    found = []
    for student_dir in sorted(path for path in submissions_dir.iterdir() if path.is_dir()):
        folder = student_dir / assignment
        if not folder.is_dir():
            continue
        expected = folder / f"{assignment}.ipynb"
        notebooks = sorted(folder.glob("*.ipynb"))
        if expected.is_file():
            found.append(Submission(student_dir.name, assignment, expected))
        elif len(notebooks) == 1:  # renamed by the learner: still theirs
            found.append(Submission(student_dir.name, assignment, notebooks[0],
                                    f"notebook was renamed to {notebooks[0].name}"))
        else:
            why = "no notebook" if not notebooks else f"{len(notebooks)} notebooks and none named {expected.name}"
            found.append(Submission(student_dir.name, assignment, None, why))
    return found


def fingerprint(submission: Submission) -> str:
    if submission.notebook is None:
        return "missing"
    return hashlib.sha256(submission.notebook.read_bytes()).hexdigest()


def grade_one(course_root: str, submission: Submission, limits: SandboxLimits, threads: int) -> dict:
    """Runs in a worker process: grade one submission and return its record (plain data).

    ``threads`` is this worker's share of the cores for the judges' own training: N workers each using
    every core would fight over them and all run slower.
    """
    torch.set_num_threads(threads)
    course = Course(Path(course_root))
    if submission.notebook is None:
        result = unusable(course, submission.assignment, submission.note)
    else:
        result = grade_notebook(course, submission.assignment, submission.notebook, limits)
        if submission.note:
            result.notes.insert(0, submission.note)
    return {"student": submission.student, "assignment": submission.assignment,
            "fingerprint": fingerprint(submission), "status": result.status, "notes": result.notes,
            "confinement": result.confinement, "problems": [asdict(problem) for problem in result.problems]}


def grade_all(course: Course, assignment: str, submissions_dir: Path, out: Path, jobs: int,
              limits: SandboxLimits, force: bool, progress: bool = True) -> list[dict]:
    submissions = find_submissions(submissions_dir, assignment)
    results_dir = out / "results" / assignment
    results_dir.mkdir(parents=True, exist_ok=True)
    records, todo = {}, []
    for submission in submissions:
        saved = results_dir / f"{submission.student}.json"
        if not force and saved.is_file():
            record = json.loads(saved.read_text())
            if record.get("fingerprint") == fingerprint(submission):
                records[submission.student] = record
                continue
        todo.append(submission)
    # "spawn": a fresh interpreter per worker, not a fork of this one (torch's threads do not survive fork).
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        threads = max(1, (os.cpu_count() or 1) // jobs)
        futures = [pool.submit(grade_one, str(course.root), submission, limits, threads) for submission in todo]
        for future in tqdm(as_completed(futures), total=len(futures), desc=f"grading {assignment}",
                           unit="submission", disable=not progress):
            record = future.result()
            (results_dir / f"{record['student']}.json").write_text(json.dumps(record, indent=1))
            write_feedback(record, out / "feedback" / record["student"] / f"{assignment}.html")
            records[record["student"]] = record
    ordered = [records[submission.student] for submission in submissions]
    write_csv(ordered, out / "grades.csv")
    return ordered


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
