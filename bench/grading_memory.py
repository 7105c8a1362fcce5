"""Peak memory of `clinic grade` itself (the grader and its workers, not the submissions) on hostile input.

    PYTHONPATH=. python bench/grading_memory.py [--line-gib 1.5] [--jobs 2]

Grades, beside an honest submission of 08_checkpoints: a 1.5 GiB line written to the result channel, 1.5 GiB
printed to stdout, a memory bomb, and a 60 MiB notebook. The grader's processes are sampled every 0.1 s
(psutil, RSS); the learner's child processes are left out -- their memory is capped by --memory-gb.
Goal: the sum over the grader's processes stays <= 1.5 GiB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.course import Course  # noqa: E402
from tests.grading_corpus import ASSIGNMENT, _prepend  # noqa: E402
from tests.exercise_tools import solved  # noqa: E402


def hostile(course: Course, line_gib: float) -> dict:
    good = solved(course, ASSIGNMENT)
    blocks = int(line_gib * 1024)
    line = f"import os, sys\nfd = int(sys.argv[-1])\nfor _ in range({blocks}):\n    os.write(fd, b'x' * (1 << 20))\n"
    printed = f"import sys\nfor _ in range({blocks}):\n    sys.stdout.write('y' * (1 << 20))\n"
    bomb = "hog = []\nwhile True:\n    hog.append(bytearray(256 * 1024**2))"
    big = _prepend(good, "BIG = '" + "z" * (60 * 1024**2) + "'", 0)
    return {"honest": good, "huge_line": _prepend(good, line), "huge_stdout": _prepend(good, printed),
            "memory_bomb": _prepend(good, bomb), "huge_notebook": big}


def grader_rss(root: psutil.Process) -> int:
    """RSS of the grader and its workers; the sandboxed children (``autograder.child``) are not ours."""
    total = 0
    for process in [root, *root.children(recursive=True)]:
        try:
            if "autograder.child" not in " ".join(process.cmdline()):
                total += process.memory_info().rss
        except psutil.Error:
            continue
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--line-gib", type=float, default=1.5)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    course = Course.find()
    with tempfile.TemporaryDirectory() as scratch:
        submissions = Path(scratch) / "submitted"
        for student, notebook in hostile(course, args.line_gib).items():
            path = submissions / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
            path.parent.mkdir(parents=True)
            nbformat.write(notebook, str(path))
        command = [sys.executable, "-m", "chapters.cli", "grade", "--assignment", ASSIGNMENT, "--submissions",
                   str(submissions), "--out", str(Path(scratch) / "out"), "--jobs", str(args.jobs), "--json",
                   "--timeout", "120", "--memory-gb", "3"]
        start, peak = time.perf_counter(), 0
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        root = psutil.Process(process.pid)
        while process.poll() is None:
            peak = max(peak, grader_rss(root))
            time.sleep(0.1)
        results = json.loads(process.stdout.read())["results"]
    for result in results:
        print(f"{result['student']:<14} {result['score']:g}/{result['max_score']:g} {result['status']}")
    print(f"exit code {process.returncode}; {time.perf_counter() - start:.0f} s; "
          f"peak grader RSS (all its processes): {peak / 1024**3:.2f} GiB")


if __name__ == "__main__":
    main()
