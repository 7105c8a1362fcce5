"""The adversarial corpus: named submissions for a real assignment, each with the score it must get.

Every submission is built from the assignment's own notebooks, so the corpus follows the assignment when
its problems change: ``solved`` answers every answer cell from the source, ``blank`` is the release as
learners receive it. Attacks are code put in front of an answer cell. ``PARTIAL`` is what a notebook earns
when its *last* answer cell produces nothing: the points of the test cells that come before that cell.
"""

from __future__ import annotations

import copy


import nbformat

from autograder.notebook import answer_cells
from nbgrader.utils import is_grade
from tests.exercise_tools import solved

ASSIGNMENT = "08_checkpoints"
FULL, PARTIAL, ZERO = "full", "partial", "zero"
LAST_ONLY = "last only"  # the last test cell's points: the others used the course's own implementation


def expected_score(course, kind: str) -> float:
    source = course.source_notebook(ASSIGNMENT)
    tests = [cell for cell in source.cells if is_grade(cell)]
    if kind == FULL:
        return sum(float(cell.metadata.nbgrader.points) for cell in tests)
    if kind == ZERO:
        return 0.0
    if kind == LAST_ONLY:
        return float(tests[-1].metadata.nbgrader.points)
    last_answer = source.cells.index(answer_cells(source)[-1])
    return sum(float(cell.metadata.nbgrader.points) for cell in tests if source.cells.index(cell) < last_answer)


def _prepend(notebook, code: str, which: int = -1):
    notebook = copy.deepcopy(notebook)
    cell = answer_cells(notebook)[which]
    cell.source = code + "\n" + cell.source
    return notebook


def _append(notebook, code: str, which: int = -1):
    notebook = copy.deepcopy(notebook)
    cell = answer_cells(notebook)[which]
    cell.source = cell.source + "\n" + code
    return notebook


def _nbgrader_metadata(notebook, value):
    notebook = copy.deepcopy(notebook)
    answer_cells(notebook)[0].metadata["nbgrader"] = value
    return notebook


def _symlink(target: str):
    def make(path):
        path.symlink_to(target)
    return make


def _directory(path):
    path.mkdir()


def _without_metadata(notebook):
    notebook = copy.deepcopy(notebook)
    for cell in notebook.cells:
        cell.metadata = {}
    return notebook


def _tests_replaced(notebook, how: str):
    notebook = copy.deepcopy(notebook)
    if how == "deleted":
        notebook.cells = [cell for cell in notebook.cells if not is_grade(cell)]
    else:
        for cell in notebook.cells:
            if is_grade(cell):
                cell.source = "pass  # tests removed"
    return notebook


def build(course, honest_path_hint: str, repo_root: str):
    """``{name: (notebook or raw bytes, file name, expected kind, expected status)}``.

    ``honest_path_hint`` is another student's notebook the attacks try to read and overwrite.
    """
    good = solved(course, ASSIGNMENT)
    blank = course.release_notebook(ASSIGNMENT)
    steal_source = (f"import json\nsrc = json.load(open({repo_root!r} + '/solutions/{ASSIGNMENT}/{ASSIGNMENT}.ipynb'))\n"
                    "for c in src['cells']:\n    exec(''.join(c['source']).replace('### BEGIN SOLUTION', ''), globals())")
    steal_peer = (f"import json\npeer = json.load(open({honest_path_hint!r}))\n"
                  "for c in peer['cells']:\n    if c['cell_type'] == 'code' and 'check(' not in ''.join(c['source']):\n"
                  "        exec(''.join(c['source']), globals())")
    overwrite_peer = (f"import nbformat\nnb = nbformat.read({honest_path_hint!r}, 4)\n"
                      "for c in nb.cells: c.source = ''\nnbformat.write(nb, " + repr(honest_path_hint) + ")")
    forge = ("import os, sys, json\nfd = int(sys.argv[2])\n"
             "for pid in ['test_' + n for n in ('a','b','c','d','e','f')]:\n"
             "    os.write(fd, (json.dumps({'problem': pid, 'check': 'x', 'observation': {}}) + '\\n').encode())")
    corpus = {
        "correct": (good, FULL, "graded"),
        "partially_correct": (_prepend(good, "raise NotImplementedError('not finished')"), PARTIAL, "graded"),
        "empty": (blank, ZERO, "graded"),
        "metadata_stripped": (_without_metadata(good), FULL, "graded"),
        "huge_output": (_prepend(good, "print('spam ' * 20_000_000)"), FULL, "graded"),
        "cheat_hides_tracebacks": (_prepend(blank, "get_ipython().showtraceback = lambda *a, **k: None", 0),
                                   ZERO, "graded"),
        "cheat_patches_check_helpers": (_prepend(blank, "import autograder.checks as c\n"
                                                 "c.check = c.judge = c.run = lambda *a, **k: None", 0), ZERO, "graded"),
        "cheat_patches_assert": (_prepend(blank, "import builtins\nbuiltins.AssertionError = type('Nope', (Exception,), {})\n"
                                          "builtins.NotImplementedError = type('Nope2', (Exception,), {})", 0),
                                 ZERO, "graded"),
        "cheat_forges_results": (_prepend(blank, forge, 0), ZERO, "graded"),
        "cheat_edits_test_cells": (_tests_replaced(blank, "edited"), ZERO, "graded"),
        "cheat_deletes_test_cells": (_tests_replaced(blank, "deleted"), ZERO, "graded"),
        "cheat_reads_hidden_tests": (_prepend(blank, steal_source, 0), ZERO, "graded"),
        "cheat_reads_other_student": (_prepend(blank, steal_peer, 0), ZERO, "graded"),
        "writes_outside_sandbox": (_prepend(blank, overwrite_peer, 0), ZERO, "graded"),
        "sys_exit": (_prepend(good, "import sys\nsys.exit(0)"), PARTIAL, "graded"),
        "os_exit": (_prepend(good, "import os\nos._exit(0)"), PARTIAL, "crashed"),
        "segfault": (_prepend(good, "import ctypes\nctypes.string_at(0)"), PARTIAL, "crashed"),
        "infinite_loop": (_prepend(good, "while True:\n    pass"), PARTIAL, "graded"),
        "infinite_loop_ignoring_alarms": (_prepend(good, "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                                                   "while True:\n    pass"), PARTIAL, "timeout"),
        "fork_bomb": (_prepend(good, "import os, time\nfor _ in range(9):\n    os.fork()\ntime.sleep(600)"),
                      PARTIAL, "crashed"),
        "memory_bomb": (_prepend(good, "hog = []\nwhile True:\n    hog.append(bytearray(256 * 1024**2))"),
                        PARTIAL, "graded"),
        "not_json": (b"{ this is not a notebook", ZERO, "invalid"),
        "renamed_notebook": (good, FULL, "graded"),
        # malformed input: that student is invalid, the batch goes on
        "metadata_is_a_string": (_nbgrader_metadata(good, "oops"), ZERO, "invalid"),
        "metadata_is_a_list": (_nbgrader_metadata(good, ["grade_id"]), ZERO, "invalid"),
        "notebook_is_a_directory": (_directory, ZERO, "invalid"),
        "dangling_symlink": (_symlink("/nonexistent/notebook.ipynb"), ZERO, "invalid"),
        "self_symlink": (_symlink(f"{ASSIGNMENT}.ipynb"), ZERO, "invalid"),
        "symlink_to_solution": (_symlink(f"{repo_root}/solutions/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"), ZERO, "invalid"),
        # nothing in the child to steal: no seed, no judge, no parent to reach
        "forges_public_results_and_done": (_prepend(blank, FORGE_AFTER_DONE, 0), ZERO, "graded"),
        "reads_judge_module_by_path": (_prepend(good, READ_JUDGE), PARTIAL, "graded"),
        "reads_parent_memory": (_prepend(blank, READ_PARENT, 0), ZERO, "graded"),
        "signals_every_process": (_prepend(good, SIGNAL_ALL), FULL, "graded"),
        "stops_its_process_group": (_prepend(good, "import os, signal\nos.kill(0, signal.SIGSTOP)"), FULL, "graded"),
        "forks_a_process_that_stops": (_prepend(good, STOPPED_CHILD), FULL, "graded"),
        "kills_its_process_group": (_prepend(good, "import os, signal\nos.kill(0, signal.SIGKILL)"), PARTIAL, "crashed"),
        "setsid_daemon": (_prepend(good, DAEMON), FULL, "graded"),
        "folders_5000_deep": (_prepend(good, DEEP_FOLDERS), FULL, "graded"),
        "huge_line_on_result_channel": (_prepend(good, HUGE_LINE), FULL, "graded"),
        "uses_course_topk_keeper": (_prepend(good, "from chapters.checkpoints.keeper import TopKKeeper", 0),
                                    LAST_ONLY, "graded"),
        # honest work the harness must not lose
        "exception_that_cannot_be_printed": (_append(good, UNPRINTABLE), FULL, "graded"),
    }
    return corpus


FORGE_AFTER_DONE = """import os, sys, json, threading, time
fd = int(sys.argv[-1])
def forge():
    for _ in range(200):
        for call in range(1, 20):
            os.write(fd, (json.dumps({"call": call, "observation": {"kept": [], "error": None}}) + "\\n").encode())
        os.write(fd, b'{"done": true}\\n')
        time.sleep(0.05)
threading.Thread(target=forge, daemon=True).start()"""
READ_JUDGE = """import os, autograder
source = open(os.path.join(autograder.__path__[0], "problems", "checkpoints.py")).read()"""
READ_PARENT = """import os
for pid in os.listdir("/proc"):
    if pid.isdigit():
        for name in ("environ", "mem", "cmdline"):
            try:
                open(f"/proc/{pid}/{name}", "rb").read(1 << 16)
            except OSError:
                pass"""
SIGNAL_ALL = """import os, signal
for pid in range(2, 5000):
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except OSError:
            pass"""
DAEMON = """import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(3600)
    os._exit(0)"""
DEEP_FOLDERS = """import os
start = os.open(".", os.O_RDONLY)
for _ in range(5000):
    os.mkdir("d")
    os.chdir("d")
os.fchdir(start)"""
HUGE_LINE = """import os, sys
fd = int(sys.argv[-1])
chunk = b"x" * (1 << 20)
for _ in range(300):
    os.write(fd, chunk)
os.write(fd, b"\\n")"""
STOPPED_CHILD = """import os, signal
if os.fork() == 0:
    os.kill(os.getpid(), signal.SIGSTOP)
    os._exit(0)"""
UNPRINTABLE = """class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no")
raise Unprintable()"""


# Student folders whose names or kinds are themselves the attack: {folder name (bytes): expected}.
def special_folders(submissions_dir, honest_student: str) -> dict[str, tuple[str, str]]:
    import os

    expected = {}
    for raw in (b"name_not_utf8_\xff", b"n" * 255):
        folder = os.path.join(os.fsencode(submissions_dir), raw, ASSIGNMENT.encode())
        os.makedirs(folder)
        with open(os.path.join(folder, f"{ASSIGNMENT}.ipynb".encode()), "wb") as file:
            file.write(b"{}")
        expected[raw.decode("utf-8", "backslashreplace")] = (ZERO, "invalid")
    (submissions_dir / "symlinked_student_folder").symlink_to(submissions_dir / honest_student)
    expected["symlinked_student_folder"] = (ZERO, "invalid")
    return expected


def write_corpus(course, submissions_dir, repo_root: str) -> dict[str, tuple[str, str]]:
    """Write every corpus submission; return ``{student: (expected kind, expected status)}``."""
    honest = submissions_dir / "correct" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    expected = {}
    for student, (content, kind, status) in build(course, str(honest), repo_root).items():
        name = "my_renamed_work.ipynb" if student == "renamed_notebook" else f"{ASSIGNMENT}.ipynb"
        path = submissions_dir / student / ASSIGNMENT / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            nbformat.write(content, str(path))
        expected[student] = (kind, status)
    expected.update(special_folders(submissions_dir, "correct"))
    return expected


