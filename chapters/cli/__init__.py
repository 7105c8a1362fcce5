"""``clinic``: the course's command line. One module per verb; each adds its parser and runs it.

Adding a verb is one module with ``add_parser(subparsers)`` and ``run(args) -> int``, plus one line in
``VERBS``. Errors in what the user typed end in one line on stderr and exit code 2 -- never a traceback.

:func:`main` is the one place that turns the errors a user can cause into that line: a ``UsageError``
(exit 2); a file the system refuses -- missing, a directory, no permission (exit 2), a full disk (exit 1,
naming the filesystem); Ctrl-C or a scheduler's SIGTERM (exit 130 / 143); a reader that closed the pipe
(``| head``: exit 141, silently). Anything else is a bug in the
course and keeps its traceback: hiding it would hide the bug.

The CLI is the top layer: it imports ``chapters`` and ``autograder``, and neither imports it back (the error
types live in :mod:`chapters.errors`). Only the verb that was typed is imported (all of them for ``clinic``
alone or ``clinic --help``): torch alone takes about a second to import, and ``clinic diagnose`` needs
none of it. Verb modules import at the top, with one exception: the grader (nbgrader) and matplotlib take
seconds to import, so ``grade``, ``check``, ``course`` and ``plot`` import them inside ``run``.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
import warnings
from pathlib import Path

import chapters
from chapters.core import interrupts
from chapters.errors import UsageError

# In the order `clinic --help` lists them; verb V lives in chapters/cli/V.py ('-' spelled '_' there).
VERBS = ("train", "reproduce", "replay", "diagnose", "plot", "compare", "ckpt", "sanity", "estimate-memory", "check",
         "grade", "course")

USAGE_ERROR = 2
FAILED = 1
BROKEN_PIPE = 141
# OS errors that mean "the path the user gave cannot be used" (input), not "the machine failed".
INPUT_ERRNOS = {errno.ENOENT, errno.EACCES, errno.EPERM, errno.EISDIR, errno.ENOTDIR, errno.ENAMETOOLONG,
                errno.ELOOP, errno.EROFS, errno.ENXIO}
FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}  # no room: the disk, a quota, a file-size limit


class OneLineParser(argparse.ArgumentParser):
    """argparse prints the whole usage block on an error; we print one line that names the problem."""

    def error(self, message: str):
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(USAGE_ERROR)


def build_parser(verbs=VERBS) -> argparse.ArgumentParser:
    """The parser of ``verbs`` (from ``VERBS``): each verb's module adds its own."""
    parser = OneLineParser(prog="clinic", description="Training Clinic: watch, break and fix small GPT training runs.")
    parser.add_argument("--version", action="version", version=f"clinic {chapters.__version__}")
    subparsers = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=OneLineParser)
    for verb in verbs:
        importlib.import_module(f"chapters.cli.{verb.replace('-', '_')}").add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    code = run_verb(argv)
    if "WORLD_SIZE" in os.environ:  # set by torchrun: only then is torch.distributed worth importing
        from chapters.core import distributed

        if distributed.from_environment().distributed:
            distributed.exit_rank(code)  # a torchrun rank: leave before the process group can abort the exit
    return code


def run_verb(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    typed = argv[:1] if argv and argv[0] in VERBS else VERBS  # the verb comes first: import it alone
    parser = build_parser(typed)
    args = parser.parse_args(argv)
    if args.verb is None:
        parser.print_help()
        return USAGE_ERROR
    try:
        with interrupts.stop_on_sigterm(), one_line_warnings(args.verb):
            return args.run(args)
    except UsageError as err:
        sys.stderr.write(f"clinic {args.verb}: error: {err}\n")
        return USAGE_ERROR
    except KeyboardInterrupt as err:
        signal_name = "SIGTERM" if isinstance(err, interrupts.Terminated) else "Ctrl-C"
        sys.stderr.write(f"clinic {args.verb}: interrupted ({signal_name})\n")
        return interrupts.exit_code(err)
    except BrokenPipeError:
        # The reader went away (`clinic diagnose RUN | head`): what it wanted, it has. Point stdout at
        # /dev/null so the interpreter's last flush cannot fail again, and exit as a process killed by
        # SIGPIPE does (128 + 13), the shell's convention.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE
    except OSError as err:
        if err.errno not in INPUT_ERRNOS | FULL_ERRNOS:
            raise  # not something the user can fix by changing what they typed: keep the traceback
        sys.stderr.write(f"clinic {args.verb}: error: {describe_os_error(err)}\n")
        return FAILED if err.errno in FULL_ERRNOS else USAGE_ERROR


def describe_os_error(err: OSError) -> str:
    """``no space left on device writing runs/x/step-00000030.pt (filesystem mounted at /)``"""
    reason = os.strerror(err.errno).lower() if err.errno else str(err)
    if err.filename is None:
        return reason
    if err.errno not in FULL_ERRNOS:
        return f"{err.filename}: {reason}"
    return f"{reason} writing {err.filename} (filesystem mounted at {mount_point(err.filename)})"


def mount_point(path) -> Path:
    """The mount point holding ``path``: the device that is full."""
    path = Path(os.path.abspath(path))
    while not os.path.ismount(path) and path != path.parent:
        path = path.parent
    return path


class one_line_warnings(warnings.catch_warnings):
    """Python prints a warning as two lines (``file:line: UserWarning: ...`` and the source line); a user
    of the command needs one, ``clinic VERB: warning: ...``, and once (a file read three times by three
    steps of a command has the same problem each time)."""

    def __init__(self, verb: str):
        super().__init__()
        self.verb = verb
        self.shown: set[str] = set()

    def __enter__(self):
        super().__enter__()
        warnings.showwarning = self.show

    def show(self, message, *rest, **keywords) -> None:
        if str(message) not in self.shown:
            self.shown.add(str(message))
            sys.stderr.write(f"clinic {self.verb}: warning: {message}\n")
