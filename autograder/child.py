"""The grading child: confine this process, run a submission's cells, probe what its code does.

Started by ``autograder.sandbox`` as ``python -m autograder.child RESULT_FD`` with the run's spec on stdin
(it also names the pipe on which the grader answers a probe's questions, see ``probes.ask``):
the cells to run in order, and for each test call a probe name, the learner's object names and the folder
holding that check's prepared inputs. No seed, no check name, no hidden parameter: the child cannot tell a
hidden check from a public one, and it cannot import the judges (``autograder.confine`` keeps them out of
reach). Cells run in an IPython shell (so magics and display calls behave as in Jupyter, without a kernel).
It writes one JSON line per event to RESULT_FD and never judges.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from contextlib import contextmanager

OBSERVATION_BYTES = 1024 * 1024  # per check: a huge answer fails its own check, not the ones after it


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
    """One line about an exception -- even one whose ``__str__`` raises or never returns a string."""
    if err is None:
        return None
    try:
        text = str(err)
    except BaseException:  # noqa: BLE001 -- a learner's exception class may break anything
        text = "<the exception cannot be printed>"
    return f"{type(err).__name__}: {text[:300]}" if isinstance(text, str) else type(err).__name__


def main(result_fd: str) -> None:
    from autograder.confine import Limits, confine, isolate_processes

    isolated = isolate_processes()  # from here on this process is PID 1 of its own namespace (when offered)
    spec = json.load(sys.stdin)
    sys.stdin = open(os.devnull)  # noqa: SIM115 -- the learner's code reads an empty stdin
    results = os.fdopen(int(result_fd), "w", buffering=1)

    def emit(**event):
        line = json.dumps(event)
        if len(line) > OBSERVATION_BYTES:
            line = json.dumps({key: event[key] for key in ("call", "cell") if key in event}
                              | {"error": f"the result is too large ({len(line)} bytes, at most {OBSERVATION_BYTES})"})
        results.write(line + "\n")

    # Import the course packages while the whole disk is readable: once confined, Python may not list the
    # course root (it holds solutions/), but submodules are found through the packages' own folders.
    import chapters  # noqa: F401

    from autograder import probes

    probes._load_all()
    answers = os.fdopen(spec["answers_fd"], "rb")
    current = {"call": None}

    def ask(request):
        emit(ask=current["call"], request=request)
        reply = json.loads(answers.readline(OBSERVATION_BYTES * 2) or b"null")
        if not isinstance(reply, dict) or "answer" not in reply:
            raise RuntimeError(f"the grader could not answer: {reply.get('error') if isinstance(reply, dict) else reply}")
        return reply["answer"]

    probes.connect(ask)
    emit(confinement=isolated + confine(spec["sandbox"], spec["course_packages"], Limits(**spec["limits"])))
    from traitlets.config import Config
    from IPython.core.interactiveshell import InteractiveShell

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    for index, step in enumerate(spec["steps"]):
        if "code" in step:
            emit(cell=index, error=run_cell(shell, step["code"], spec["cell_timeout"]))
            continue
        for call in step["calls"]:
            try:
                objects = [shell.user_ns.get(name) for name in call["args"]]
                origins = [defined_in(obj) for obj in objects]
                emit(start=call["call"])  # the grader measures a stopped writer for this call
                current["call"] = call["call"]
                with time_limit(spec["cell_timeout"]):
                    observation = probes.run(call["probe"], os.path.join(spec["sandbox"], call["folder"]), *objects)
                emit(call=call["call"], observation=observation, origins=origins)
            except probes.NotImplementedYet:
                emit(call=call["call"], not_implemented=True)
            except BaseException as err:  # SystemExit and KeyboardInterrupt too: one check fails, not the run
                emit(call=call["call"], error=describe(err))
    emit(done=True)
    results.close()
    # Skip interpreter shutdown: a submission's atexit hooks and threads cannot change what was emitted.
    os._exit(0)


def defined_in(obj) -> str | None:
    """The module a function or class handed to a check comes from (the grader refuses the course's own)."""
    import inspect

    if inspect.isfunction(obj) or inspect.isclass(obj) or inspect.ismethod(obj):
        module = getattr(obj, "__module__", None)
        return module if isinstance(module, str) else None
    return None


def run_cell(shell, code: str, seconds: float) -> str | None:
    """Run one cell; whatever it raises (even while its error is being printed) fails only this cell."""
    try:
        with time_limit(seconds):
            outcome = shell.run_cell(code, store_history=False)
        return describe(outcome.error_before_exec or outcome.error_in_exec)
    except BaseException as err:  # noqa: BLE001
        return describe(err)


if __name__ == "__main__":
    main(sys.argv[1])
