"""``clinic check``: run a notebook's public tests with the same engine as the official grading (learners)."""

from __future__ import annotations

import time
from pathlib import Path

from chapters.cli.args import add_course_option, open_course, path_text
from chapters.errors import NotebookError, UsageError


def add_parser(verbs) -> None:
    parser = verbs.add_parser("check", help="run the public tests of your notebook for assignment ID")
    parser.add_argument("assignment", metavar="ID", help="the assignment id, e.g. 02_metrics")
    parser.add_argument("notebook", nargs="?", type=lambda text: Path(path_text(text)), metavar="NOTEBOOK",
                        help="your notebook (default: exercises/ID/ID.ipynb)")
    add_course_option(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    """Exit 0 when every public test passes, 1 when some fail, 2 when the notebook cannot be checked."""
    from autograder.engine import grade_notebook

    course = open_course(args, args.assignment)
    notebook = args.notebook or course.release_path(args.assignment)
    # Running a notebook takes seconds to a minute: say so first, so a learner does not wait in silence.
    print(f"checking {notebook}: running it top to bottom, then its public tests...", flush=True)
    started = time.perf_counter()
    try:
        result = grade_notebook(course, args.assignment, notebook, public_only=True)
    except NotebookError as err:  # the course's own notebook (the tests come from its source) is broken
        raise UsageError(f"the course notebook is broken: {err}") from None
    print(f"checked in {time.perf_counter() - started:.0f} s", flush=True)
    if result.status == "invalid":
        raise UsageError(result.notes[0])
    for problem in result.problems:
        mark = "PASS" if problem.score == problem.max_score else "FAIL"
        print(f"{mark}  {problem.grade_id}  ({problem.score:g}/{problem.max_score:g} points)")
        for message in problem.messages:
            print(f"      {message}")
    for note in result.notes:
        print(f"note: {note}")
    print(f"public tests: {result.score:g} / {sum(p.max_score for p in result.problems):g} points "
          "(hidden tests run only when your instructor grades)")
    return 0 if all(problem.score == problem.max_score for problem in result.problems) else 1
