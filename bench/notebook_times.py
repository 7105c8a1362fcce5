"""Seconds for a real Jupyter kernel to run each assignment notebook, solved and blank. Goal: <= 90 s solved,
<= 20 s blank (a blank notebook must say "not implemented" fast).

    PYTHONPATH=. python bench/notebook_times.py [--repeats 1] [--busy 1] [ID ...]

``--busy N`` starts N processes spinning on a core (``while True: pass``) for the whole measurement: the
normal state of a class sharing one server.

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
from busy import busy_neighbours  # noqa: E402 -- bench/busy.py: this script's folder is on sys.path


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
    parser.add_argument("--busy", type=int, default=0, help="processes spinning on a core meanwhile")
    parser.add_argument("assignments", nargs="*", metavar="ID", help="default: every assignment")
    args = parser.parse_args()
    course = Course.find()
    with busy_neighbours(args.busy):
        print(f"{'assignment':<22}{'solved s':>10}{'blank s':>10}   ({args.busy} busy process(es))")
        for assignment in args.assignments or course.assignments():
            solved = statistics.median(run_seconds(course.source_path(assignment)) for _ in range(args.repeats))
            blank = statistics.median(run_seconds(course.release_path(assignment)) for _ in range(args.repeats))
            print(f"{assignment:<22}{solved:>10.1f}{blank:>10.1f}", flush=True)


if __name__ == "__main__":
    main()
