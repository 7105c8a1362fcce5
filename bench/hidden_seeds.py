"""Does every reference solution pass its hidden checks on *any* seed, not just the ones we happened to see?

Hidden checks draw a fresh seed each time they run (autograder/checks.py), so a check whose threshold is
too tight for the reference solution on one seed in a hundred fails an honest learner one time in a
hundred -- and the exercise tests, which grade the solutions, fail CI as often. This script runs each
solved notebook (the source, in a temporary copy of its folder) in a real Jupyter kernel with one extra
first cell: it replaces ``check`` so that every hidden check is collected and judged on ``--seeds`` seeds
instead of one, and prints the failures.

    PYTHONPATH=. python bench/hidden_seeds.py [--seeds 20] [--base 5000] [ID ...]

Prints one line per hidden check: ``ok`` or the failing seeds with the judge's message.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.course import Course  # noqa: E402

# The first cell of the scanned notebook. The notebooks import ``check`` from autograder.checks, so
# replacing it in that module before they do makes every test cell call this one.
SCAN_CELL = '''
import random as _random
import autograder.checks as _checks

_run_one_seed = _checks.check
_SEEDS = [_random.Random({base} + i).randrange(2**31) for i in range({count})]

def _check_many_seeds(name, *learner_objects):
    found = _checks.lookup(name)
    if not found.hidden:
        return _run_one_seed(name, *learner_objects)
    failures = []
    for seed in _SEEDS:
        try:
            _checks.run(found, seed, *learner_objects)
        except _checks.CheckFailed as err:
            failures.append((seed, str(err)[:300]))
    print("SEEDS", name, len(_SEEDS), failures or "ok")

_checks.check = _check_many_seeds
'''


def scan(course: Course, assignment: str, base: int, count: int) -> list[str]:
    """The SEEDS lines (and any cell error) of one solved notebook run with the scanning cell first."""
    source = course.source_path(assignment)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(shutil.copytree(source.parent, Path(scratch) / assignment))
        notebook = nbformat.read(str(folder / source.name), as_version=4)
        notebook.cells.insert(0, nbformat.v4.new_code_cell(SCAN_CELL.format(base=base, count=count)))
        NotebookClient(notebook, timeout=1800, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(folder)}}).execute()
    lines = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                lines += [line for line in output["text"].splitlines() if line.startswith("SEEDS")]
            elif output.get("output_type") == "error":
                lines.append(f"ERROR in {cell.metadata.get('nbgrader', {}).get('grade_id')}: "
                             f"{output['ename']}: {output['evalue'][:200]}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", metavar="ID", help="default: every assignment")
    parser.add_argument("--seeds", type=int, default=20, help="seeds per hidden check")
    parser.add_argument("--base", type=int, default=5000, help="the seeds are drawn from Random(base + i)")
    args = parser.parse_args()
    course = Course.find()
    for assignment in args.assignments or course.assignments():
        for line in scan(course, assignment, args.base, args.seeds):
            print(f"{assignment}: {line}", flush=True)


if __name__ == "__main__":
    main()
