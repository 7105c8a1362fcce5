"""Find and read the submissions of a folder without trusting anything in it.

``DIR/<student>/<assignment>/<notebook>.ipynb`` is nbgrader's layout, but the folder is written by learners:
names that are not UTF-8 or too long for our own result files, symbolic links (to a peer's notebook, to the
instructor's solution, to themselves), a notebook that is a directory or a device, a file of gigabytes. Each
becomes one ``invalid`` submission with a one-line note; nothing here raises for one student's folder.
Notebooks are opened only as regular files, through folders that are not symbolic links, inside the student's
own folder (``O_NOFOLLOW`` at every step, relative to the folder already opened).
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from chapters.errors import SubmissionError

MAX_NOTEBOOK_BYTES = 64 * 1024**2
MAX_NAME_BYTES = 200  # results/<name>.json must fit in a file name (255 bytes)
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class Submission:
    student: str  # printable: a name that is not UTF-8 is shown with \x escapes
    assignment: str
    notebook: Path | None  # relative to the submissions folder; None when there is nothing to grade
    note: str = ""
    root: Path = Path(".")

    @property
    def file_name(self) -> str:
        """The student's name as our result files use it: their folder name, or a digest when it cannot be."""
        name = self.student
        if _name_problem(name) or name.startswith("."):
            return "student-" + hashlib.sha256(name.encode("utf-8", "backslashreplace")).hexdigest()[:16]
        return name


def printable(name: str) -> str:
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def _name_problem(name: str) -> str:
    raw = os.fsencode(name)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return "the folder name is not valid UTF-8"
    if len(raw) > MAX_NAME_BYTES:
        return f"the folder name is {len(raw)} bytes long (at most {MAX_NAME_BYTES})"
    if any(ord(char) < 32 for char in name):
        return "the folder name holds control characters"
    return ""


def find(submissions_dir: Path, assignment: str) -> list[Submission]:
    found = []
    with os.scandir(submissions_dir) as entries:
        students = sorted(entries, key=lambda entry: os.fsencode(entry.name))
    for entry in students:
        student = printable(entry.name)

        def invalid(why: str) -> Submission:
            return Submission(student, assignment, None, why, submissions_dir)

        if entry.is_symlink():
            found.append(invalid("the student folder is a symbolic link: refused"))
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue  # a stray file beside the students' folders
        folder = Path(entry.path) / assignment
        if folder.is_symlink():
            found.append(invalid(f"{assignment}/ is a symbolic link: refused"))
            continue
        if not folder.is_dir():
            continue  # this student did not hand in this assignment
        if problem := _name_problem(entry.name):
            found.append(invalid(problem))
            continue
        found.append(_pick_notebook(student, assignment, folder, submissions_dir))
    return found


def _pick_notebook(student: str, assignment: str, folder: Path, root: Path) -> Submission:
    expected = f"{assignment}.ipynb"
    try:
        with os.scandir(folder) as entries:
            notebooks = sorted(entry.name for entry in entries if entry.name.endswith(".ipynb"))
    except OSError as err:
        return Submission(student, assignment, None, f"the folder cannot be read ({err.strerror})", root)
    relative = Path(os.path.relpath(folder, root))
    if expected in notebooks:
        return Submission(student, assignment, relative / expected, "", root)
    if len(notebooks) == 1:  # renamed by the learner: still theirs
        return Submission(student, assignment, relative / notebooks[0],
                          f"notebook was renamed to {printable(notebooks[0])}", root)
    why = "no notebook" if not notebooks else f"{len(notebooks)} notebooks and none named {expected}"
    return Submission(student, assignment, None, why, root)


def read_bytes(submission: Submission) -> bytes:
    """The notebook's bytes: a regular file reached without following any link. Raises SubmissionError."""
    try:
        return _read_bytes(submission.root, submission.notebook.parts)
    except OSError as err:  # whatever else the disk says: this student's problem, in one line
        raise SubmissionError(f"{printable(str(submission.notebook))} cannot be read ({_why(err)})") from None


def _read_bytes(root: Path, parts: tuple[str, ...]) -> bytes:
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            try:
                inner = os.open(part, _OPEN_DIR, dir_fd=folder)
            except OSError as err:
                raise SubmissionError(f"{printable(part)}/ cannot be opened ({_why(err)})") from None
            os.close(folder)
            folder = inner
        try:
            file = os.open(parts[-1], _OPEN_FILE, dir_fd=folder)
        except OSError as err:
            raise SubmissionError(f"{printable(parts[-1])} cannot be opened ({_why(err)})") from None
    finally:
        os.close(folder)
    if not stat.S_ISREG(os.fstat(file).st_mode):
        os.close(file)
        raise SubmissionError(f"{printable(parts[-1])} is not a regular file")
    with os.fdopen(file, "rb") as stream:
        data = stream.read(MAX_NOTEBOOK_BYTES + 1)
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise SubmissionError(f"{printable(parts[-1])} is larger than {MAX_NOTEBOOK_BYTES // 1024**2} MiB")
    return data


def _why(err: OSError) -> str:
    import errno

    if err.errno == errno.ELOOP:
        return "a symbolic link: refused"
    if err.errno == errno.ENOTDIR:
        return "not a folder"
    return err.strerror or type(err).__name__


def fingerprint(submission: Submission) -> str:
    if submission.notebook is None:
        return "missing"
    try:
        return hashlib.sha256(read_bytes(submission)).hexdigest()
    except SubmissionError as err:
        return f"unreadable: {err}"
