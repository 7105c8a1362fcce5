"""Every error a user can cause, in one module, so every layer can raise them and the CLI can catch them.

Why one module: the command line (``chapters.cli``) sits on top of the lessons (``chapters``) and the grader
(``autograder``). If an error type lived in the CLI, the lessons below it could not raise it without importing
the layer above them. Here it sits under everything and imports nothing.

Each type names *what* the user gave that cannot be used; its message says which file or value and what to
do. ``clinic`` turns each into one line on stderr and exit code 2 (see :func:`chapters.cli.main`). The base
classes are kept as they were (``ValueError`` for bad values) so ``except ValueError`` keeps working.
"""


class UsageError(Exception):
    """Something the user asked for cannot be done; the message says what and what is accepted."""


class DataError(ValueError):
    """A corpus file is missing, altered or unusable. The message says which file and what to do."""


class DeviceError(ValueError):
    """The requested device does not exist on this machine."""


class MetricsLogError(ValueError):
    """The log cannot be used at all (missing, empty, binary). The message says which and why."""


class NotTextError(MetricsLogError):
    """The file is binary or not UTF-8: no amount of waiting turns it into a log."""


class CheckpointError(Exception):
    """A checkpoint cannot be trusted; the message names the file and what is wrong with it."""


class CheckpointIndexError(ValueError):
    """``index.json`` is missing fields or contradicts the keeper's settings."""


class ForensicsError(ValueError):
    """The run directory holds no usable forensics file."""


class CourseError(Exception):
    """The course directory or an assignment is not where it should be."""


class NotebookError(Exception):
    """The submission cannot be read as a notebook (not JSON, not nbformat, not there)."""


class SubmissionError(Exception):
    """This student's folder cannot be graded; the message says why, in one line."""


class ScenarioError(Exception):
    """A scenario's run died before its logger opened, so no log can say why (its error went to stderr)."""
