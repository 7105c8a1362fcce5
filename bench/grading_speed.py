"""How fast is `clinic grade`? Seconds per complete submission, and the speed-up of --jobs 2.

    PYTHONPATH=. python bench/grading_speed.py [--repeats 3] [--students 20] [--assignment 02_metrics]

1. Each assignment's full solution (every answer filled in from the source notebook) graded once per
   repeat through the whole path -- confined child, hidden checks, judges. Goal: <= 180 s each.
2. ``--students`` copies of one assignment's solution graded with ``--jobs 1`` and ``--jobs 2``
   (``--force``, so nothing is skipped). Goal: speed-up >= 1.8 on 2 cores.
Run it on a quiet machine: other processes on the cores change both figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.batch import grade_all  # noqa: E402
from autograder.course import Course  # noqa: E402
from autograder.engine import grade_notebook  # noqa: E402
from autograder.sandbox import SandboxLimits  # noqa: E402
from tests.exercise_tools import solved, write  # noqa: E402


def per_assignment(course: Course, repeats: int, scratch: Path) -> None:
    print(f"{'assignment':<22}{'median s':>10}{'score':>12}")
    for assignment in course.assignments():
        notebook = write(solved(course, assignment), scratch / assignment / f"{assignment}.ipynb")
        times, result = [], None
        for _ in range(repeats):
            start = time.perf_counter()
            result = grade_notebook(course, assignment, notebook)
            times.append(time.perf_counter() - start)
        maximum = sum(problem.max_score for problem in result.problems)
        print(f"{assignment:<22}{statistics.median(times):>10.1f}{f'{result.score:g}/{maximum:g}':>12}")


def jobs_speedup(course: Course, assignment: str, students: int, repeats: int, scratch: Path) -> None:
    submissions = scratch / "submitted"
    notebook = solved(course, assignment)
    for index in range(students):
        write(notebook, submissions / f"student{index:02d}" / assignment / f"{assignment}.ipynb")
    medians = {}
    for jobs in (1, 2):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            grade_all(course, assignment, submissions, scratch / f"out{jobs}", jobs, SandboxLimits(), force=True,
                      progress=False)
            times.append(time.perf_counter() - start)
        medians[jobs] = statistics.median(times)
        print(f"{students} submissions of {assignment}, --jobs {jobs}: median {medians[jobs]:.1f} s "
              f"({repeats} runs)")
    print(f"speed-up of --jobs 2 over --jobs 1: {medians[1] / medians[2]:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--assignment", default="02_metrics")
    parser.add_argument("--skip-per-assignment", action="store_true")
    args = parser.parse_args()
    course = Course.find()
    with tempfile.TemporaryDirectory() as scratch:
        if not args.skip_per_assignment:
            per_assignment(course, args.repeats, Path(scratch))
        jobs_speedup(course, args.assignment, args.students, args.repeats, Path(scratch))


if __name__ == "__main__":
    main()
