"""``clinic course release [ID]``: regenerate release notebooks from their sources (course authors)."""

from __future__ import annotations

from chapters.cli.args import add_course_option, open_course


def add_parser(verbs) -> None:
    parser = verbs.add_parser("course", help="course authoring: `clinic course release [ID]`")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True,
                                    parser_class=type(parser))
    release = actions.add_parser("release", help="run nbgrader generate_assignment for ID (default: all)")
    release.add_argument("assignment", nargs="?", metavar="ID")
    add_course_option(release)
    parser.set_defaults(run=run)


def run(args) -> int:
    from chapters.cli import UsageError
    from autograder.course import CourseError

    course = open_course(args, args.assignment)
    try:
        for assignment in [args.assignment] if args.assignment else course.assignments():
            path = course.generate_release(assignment)
            print(f"released {assignment}: {path.relative_to(course.root)}")
    except CourseError as err:
        raise UsageError(err) from None
    return 0
