"""``clinic``: the course's command line. One module per verb; each adds its parser and runs it.

Adding a verb is one module with ``add_parser(subparsers)`` and ``run(args) -> int``, plus one line in
``VERBS``. Errors in what the user typed end in one line on stderr and exit code 2 -- never a traceback.
"""

from __future__ import annotations

import argparse
import sys

import chapters
from chapters.cli import (check, ckpt, course, diagnose, estimate_memory, grade, plot, replay, reproduce, sanity,
                          train)

VERBS = [train, reproduce, replay, diagnose, plot, ckpt, sanity, estimate_memory, check, grade, course]

USAGE_ERROR = 2


class UsageError(Exception):
    """Something the user asked for cannot be done; the message says what and what is accepted."""


class OneLineParser(argparse.ArgumentParser):
    """argparse prints the whole usage block on an error; we print one line that names the problem."""

    def error(self, message: str):
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(USAGE_ERROR)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="clinic", description="Training Clinic: watch, break and fix small GPT training runs.")
    parser.add_argument("--version", action="version", version=f"clinic {chapters.__version__}")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=OneLineParser)
    for verb in VERBS:
        verb.add_parser(verbs)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.verb is None:
        parser.print_help()
        return USAGE_ERROR
    try:
        return args.run(args)
    except UsageError as err:
        sys.stderr.write(f"clinic {args.verb}: error: {err}\n")
        return USAGE_ERROR
    except KeyboardInterrupt:
        sys.stderr.write(f"clinic {args.verb}: interrupted\n")
        return 130
