"""``clinic course release [ID]``: regenerate release notebooks from their sources (course authors).

nbgrader replaces a release folder by deleting it first and then generating the new one, so a source
notebook it cannot convert would leave the course with *no* release. We let it generate into a temporary
folder beside ``exercises/`` and swap the result in only once it is complete: on any error the old release
is untouched.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from chapters.cli.args import add_course_option, open_course
from chapters.errors import CourseError, NotebookError, UsageError


def add_parser(verbs) -> None:
    parser = verbs.add_parser("course", help="course authoring: `clinic course release [ID]`")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True,
                                    parser_class=type(parser))
    release = actions.add_parser("release", help="run nbgrader generate_assignment for ID (default: all)")
    release.add_argument("assignment", nargs="?", metavar="ID")
    add_course_option(release)
    parser.set_defaults(run=run)


def run(args) -> int:
    course = open_course(args, args.assignment)
    for assignment in [args.assignment] if args.assignment else course.assignments():
        path = release(course, assignment)
        print(f"released {assignment}: {path.relative_to(course.root)}")
    return 0


def release(course, assignment: str) -> Path:
    """Generate ``exercises/ID`` from ``solutions/ID`` all or nothing; returns the release notebook."""
    from autograder.notebook import read

    source = course.source_path(assignment)
    try:
        read(source)  # nbgrader's own message for a broken file is "see the traceback above"; ours names it
    except NotebookError as err:
        raise UsageError(f"cannot release {assignment}: {err}") from None
    exercises = course.root / "exercises"
    exercises.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=exercises, prefix=".release-") as scratch:
        try:
            course.generate_release(assignment, into=Path(scratch))
        except CourseError as err:
            raise UsageError(f"{source.relative_to(course.root)} cannot be released: {err}") from None
        target, old = exercises / assignment, Path(scratch) / "previous-release"
        if target.exists():
            os.replace(target, old)  # removed with the temporary folder
        os.replace(Path(scratch) / assignment, target)
    return course.release_path(assignment)
