"""``clinic grade``: grade a folder of submissions, each in its own confined process (instructors)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from chapters.cli.args import add_course_option, number_between, open_course, positive_int, writable_dir
from chapters.errors import UsageError

# A submission needs seconds to minutes and a few GiB; anything far outside is a typo that would zero a
# class (every child killed at once, or one that can never allocate), so it is refused.
TIMEOUT_SECONDS = number_between(10, 86_400, " seconds")
MEMORY_GB = number_between(0.5, 1024, " GiB")


def add_parser(verbs) -> None:
    parser = verbs.add_parser("grade", help="grade submissions DIR/<student>/<ID>/<notebook>.ipynb (instructors)")
    parser.add_argument("--assignment", required=True, metavar="ID", help="the assignment id, e.g. 02_metrics")
    parser.add_argument("--submissions", required=True, type=Path, metavar="DIR",
                        help="folder with one sub-folder per student (nbgrader's submitted/ layout)")
    parser.add_argument("--jobs", type=positive_int, default=1, metavar="N", help="submissions graded at once")
    parser.add_argument("--out", type=writable_dir, default=Path("grades"), metavar="DIR",
                        help="where grades.csv, feedback/ and results/ go (default: ./grades)")
    parser.add_argument("--timeout", type=TIMEOUT_SECONDS, default=300.0, metavar="S",
                        help="wall-clock seconds per submission, 10 to 86400 (default 300); one cell gets at most half")
    parser.add_argument("--memory-gb", type=MEMORY_GB, default=4.0, metavar="G",
                        help="address-space limit of a submission's process, 0.5 to 1024 GiB (default 4)")
    parser.add_argument("--force", action="store_true", help="grade again submissions already graded")
    parser.add_argument("--json", action="store_true", help="print one JSON document with every result")
    add_course_option(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    from autograder.batch import grade_all, summary
    from autograder.confine import Limits
    from autograder.sandbox import SandboxLimits

    course = open_course(args, args.assignment)
    if not args.submissions.is_dir():
        raise UsageError(f"--submissions {args.submissions}: not a folder")
    limits = SandboxLimits(wall_seconds=args.timeout, cell_seconds=args.timeout / 2,
                           process=Limits(memory_gb=args.memory_gb, cpu_seconds=int(args.timeout) + 1))
    try:
        records = grade_all(course, args.assignment, args.submissions, args.out, args.jobs, limits, args.force)
    except Exception as err:  # the grader itself failed (not a submission): exit 1, as the contract says
        print(f"clinic grade: the grader failed: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    results = [summary(record) for record in records]
    if args.json:
        print(json.dumps({"results": results}))
    else:
        for result in results:
            print(f"{result['student']:<24} {result['score']:g} / {result['max_score']:g}  {result['status']}")
        print(f"grades: {args.out / 'grades.csv'}; feedback: {args.out / 'feedback'}")
    return 0
