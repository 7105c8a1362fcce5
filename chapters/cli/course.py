"""``clinic course release [ID]``: regenerate release notebooks from their sources (course authors)."""

from __future__ import annotations

from pathlib import Path


def add_parser(verbs) -> None:
    parser = verbs.add_parser("course", help="course authoring: `clinic course release [ID]`")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True,
                                    parser_class=type(parser))
    release = actions.add_parser("release", help="run nbgrader generate_assignment for ID (default: all)")
    release.add_argument("assignment", nargs="?", metavar="ID")
    release.add_argument("--course", type=Path, metavar="DIR", help="the course directory (default: this checkout)")
    parser.set_defaults(run=run)


def run(args) -> int:
    from chapters.cli import UsageError
    from autograder.course import Course, CourseError

    try:
        course = Course.find(args.course)
        for assignment in [args.assignment] if args.assignment else course.assignments():
            path = course.generate_release(assignment)
            print(f"released {assignment}: {path.relative_to(course.root)}")
    except CourseError as err:
        raise UsageError(err) from None
    return 0
