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


def expected_score(course, kind: str) -> float:
    source = course.source_notebook(ASSIGNMENT)
    tests = [cell for cell in source.cells if is_grade(cell)]
    if kind == FULL:
        return sum(float(cell.metadata.nbgrader.points) for cell in tests)
    if kind == ZERO:
        return 0.0
    last_answer = source.cells.index(answer_cells(source)[-1])
    return sum(float(cell.metadata.nbgrader.points) for cell in tests if source.cells.index(cell) < last_answer)


def _prepend(notebook, code: str, which: int = -1):
    notebook = copy.deepcopy(notebook)
    cell = answer_cells(notebook)[which]
    cell.source = code + "\n" + cell.source
    return notebook


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
                                                 "c.check = c.judge = lambda *a, **k: None\n"
                                                 "c.collect = lambda *a, **k: {}", 0), ZERO, "graded"),
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
    }
    return corpus


def write_corpus(course, submissions_dir, repo_root: str) -> dict[str, tuple[str, str]]:
    """Write every corpus submission; return ``{student: (expected kind, expected status)}``."""
    honest = submissions_dir / "correct" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    expected = {}
    for student, (content, kind, status) in build(course, str(honest), repo_root).items():
        name = "my_renamed_work.ipynb" if student == "renamed_notebook" else f"{ASSIGNMENT}.ipynb"
        path = submissions_dir / student / ASSIGNMENT / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            nbformat.write(content, str(path))
        expected[student] = (kind, status)
    return expected


