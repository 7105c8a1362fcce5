"""Seconds for a real Jupyter kernel to run each assignment notebook, solved and blank. Goal: <= 90 s.

    PYTHONPATH=. python bench/notebook_times.py [--repeats 1]

The solved notebook is the source notebook (solution regions and hidden tests included); the blank one is
the release a learner starts from (it must still run to the end: its failing cells are allowed to fail).
Each runs in a copy of its assignment folder in a temporary directory, so the runs it trains and the files
it writes never land in the checkout.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.course import Course  # noqa: E402


def run_seconds(path: Path) -> float:
    """Run the notebook at ``path`` in a temporary copy of its folder; the seconds the kernel took."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(shutil.copytree(path.parent, Path(scratch) / path.parent.name))
        notebook = nbformat.read(str(folder / path.name), as_version=4)
        start = time.perf_counter()
        NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(folder)}}).execute()
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    course = Course.find()
    print(f"{'assignment':<22}{'solved s':>10}{'blank s':>10}")
    for assignment in course.assignments():
        solved = statistics.median(run_seconds(course.source_path(assignment)) for _ in range(args.repeats))
        blank = statistics.median(run_seconds(course.release_path(assignment)) for _ in range(args.repeats))
        print(f"{assignment:<22}{solved:>10.1f}{blank:>10.1f}")


if __name__ == "__main__":
    main()
