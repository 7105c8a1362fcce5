"""The grading child: confine this process, run a submission's cells, collect what its code does.

Started by ``autograder.sandbox`` as ``python -m autograder.child SPEC RESULT_FD``. It runs the cells of the
grading plan in order in an IPython shell (so magics and display calls behave as in Jupyter, without a
kernel), and for each test cell calls the checks' ``collect`` half on the learner's objects. It writes one
JSON line per event to RESULT_FD. It never judges: the verdicts are given by the parent, in a process the
submission never touched.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from contextlib import contextmanager


class CellTimeout(Exception):
    """A cell ran past the per-cell limit."""


@contextmanager
def time_limit(seconds: float):
    def expire(signum, frame):
        raise CellTimeout(f"cell ran past {seconds:g} s")

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def describe(err: BaseException | None) -> str | None:
    return None if err is None else f"{type(err).__name__}: {str(err)[:300]}"


def main(spec_path: str, result_fd: str) -> None:
    with open(spec_path) as file:
        spec = json.load(file)
    results = os.fdopen(int(result_fd), "w", buffering=1)

    def emit(**event):
        results.write(json.dumps(event) + "\n")

    from autograder.confine import Limits, confine

    # Import the course packages while the whole disk is readable: once confined, Python may not list the
    # course root (it holds solutions/), but submodules are found through the packages' own folders.
    import chapters  # noqa: F401

    emit(confinement=confine(spec["sandbox"], spec["course_packages"], Limits(**spec["limits"])))
    # Imported before any learner code runs, so the collect halves are the course's own.
    from traitlets.config import Config
    from IPython.core.interactiveshell import InteractiveShell

    from autograder import checks

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    for index, step in enumerate(spec["steps"]):
        if "code" in step:
            with time_limit(spec["cell_timeout"]):
                outcome = shell.run_cell(step["code"], store_history=False)
            emit(cell=index, error=describe(outcome.error_before_exec or outcome.error_in_exec))
            continue
        for call in step["calls"]:
            objects = [shell.user_ns.get(name) for name in call["args"]]
            try:
                with time_limit(spec["cell_timeout"]):
                    observation = checks.collect(checks.lookup(call["check"]), call["seed"], *objects)
                emit(problem=step["problem"], check=call["check"], observation=observation)
            except checks.CheckFailed as failure:
                emit(problem=step["problem"], check=call["check"], error=str(failure))
            except BaseException as err:  # SystemExit and KeyboardInterrupt too: one check fails, not the run
                emit(problem=step["problem"], check=call["check"], error=describe(err))
    emit(done=True)
    results.close()
    # Skip interpreter shutdown: a submission's atexit hooks and threads cannot change what was emitted.
    os._exit(0)


if __name__ == "__main__":
    main(*sys.argv[1:3])
