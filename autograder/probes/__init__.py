"""Probes: the child's half of every check -- call the learner's code on inputs the grader prepared.

A check is cut in three so that the process running learner code knows nothing the learner must not:

1. ``prepare(seed, folder)`` runs in the **grader**: it draws the concrete inputs of the check from its seed
   (a loader, a model, a log file) and returns them; files go into ``folder``.
2. a **probe** (this package) runs in the **child**, inside ``folder``: it calls the learner's function on
   those inputs and returns plain data -- what the code did. It never sees a seed, a reference answer or
   judging code: this package and the course's ``chapters`` are all the child may read of the grader.
3. ``judge(seed, observation)`` runs in the grader and decides.

The inputs cross as a pickle written by the grader (trusted data going *to* the untrusted side); what comes
back is JSON, size-capped. Probes are registered by check name without ``_hidden``: a public check and its
hidden twin ask the same question of different inputs, so the child cannot even tell them apart.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import signal
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

import torch

# Bound now, before any learner code runs: a submission that patches ``os``/``signal`` later cannot make a
# writer run its own code (flush a logger that never flushed) before it stops.
_raise_signal, _waitpid = signal.raise_signal, os.waitpid
CASE_FILE = "inputs.pt"
PROBES: dict[str, Callable[..., Any]] = {}
# Set by ``run`` in a learner's own kernel, where no grader watches: what to do with a stopped writer.
_local_on_stop: list = []
# How a probe asks the grader about inputs it must not hold (a black box): set by ``run`` in a kernel, by
# the child (``connect``) under ``clinic grade``.
_asker: list = []


class NotImplementedYet(Exception):
    """The learner's code raised NotImplementedError: the grader adds the check's hint."""


def probe(name: str):
    """Decorator: ``@probe("03_nan.data_check")`` on ``def data_check(case, is_usable) -> observation``."""

    def add(function):
        PROBES[name] = function
        return function

    return add


def probe_name(check_name: str) -> str:
    """The probe of a check: its own when it has one, else the public twin's (``x_hidden`` -> ``x``)."""
    _load_all()
    if check_name in PROBES:
        return check_name
    return check_name.removesuffix("_hidden")


def write_case(folder: Path, case: Any) -> None:
    torch.save(case, folder / CASE_FILE)


@contextmanager
def inside(folder: Path):
    """Run in ``folder``: the learner's relative paths land next to the check's inputs."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def run(name: str, folder: Path, *learner_objects, on_stop: Callable[[], bool] | None = None,
        ask: Callable[[Any], Any] | None = None) -> Any:
    """Load the prepared inputs in ``folder``, call the probe there; return JSON-safe data.

    ``on_stop`` and ``ask`` are for a learner's own kernel only, where no grader is outside: the probe
    handles its stopped writer with ``on_stop`` (True: measured, continue it; False: kill it), and ``ask``
    answers its questions. In ``clinic grade`` both are None and the grader does it.
    """
    _load_all()
    function = PROBES[name]
    _local_on_stop[:] = [on_stop] if on_stop else []
    if ask is not None:
        _asker[:] = [ask]
    with inside(folder):
        case = torch.load(CASE_FILE, weights_only=False)  # written by the grader, not by the learner
        try:
            observation = function(case, *learner_objects)
        except NotImplementedError:
            raise NotImplementedYet() from None
    # Both grading paths see the same data: whatever survives a trip through JSON (tuples become lists).
    return json.loads(json.dumps(observation))


def connect(asker: Callable[[Any], Any]) -> None:
    """The child's channel to the grader, for :func:`ask`."""
    _asker[:] = [asker]


def ask(request: Any) -> Any:
    """Ask the grader about what this process must not hold (e.g. a model whose config says the answer):
    the question goes out as JSON, the grader computes the answer in its own process."""
    return _asker[0](request)


def stop_here() -> None:
    """Called in a probe's forked writer: freeze until whoever watches has measured (then continue) or
    decided this is where the writer dies (then SIGKILL). A frozen process runs no code, its own or patched."""
    _raise_signal(signal.SIGSTOP)


def wait_for_writer(pid: int) -> int:
    """Wait for a forked writer to end; its wait status.

    Under ``clinic grade`` the grader handles every stop from outside (measures and continues it, or
    kills it). In a learner's kernel there is nobody outside, so this process does the same here.
    """
    if not _local_on_stop:
        return _waitpid(pid, 0)[1]
    while True:
        _, status = _waitpid(pid, os.WUNTRACED)
        if not os.WIFSTOPPED(status):
            return status
        if _local_on_stop[0]():
            os.kill(pid, signal.SIGCONT)
        else:
            os.kill(pid, signal.SIGKILL)


def _load_all() -> None:
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
