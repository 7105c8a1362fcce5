"""Checks: the one seam between a learner's code and the grader (the CS336 "adapters" idea).

A graded test cell in a course notebook contains only calls such as::

    check("02_metrics.total_grad_norm", total_grad_norm)

A :class:`Check` is split in three on purpose:

* ``prepare(seed, folder)`` draws the concrete inputs from ``seed`` (files go into ``folder``);
* a *probe* (``autograder.probes``) calls the learner's code on those inputs and returns plain JSON data:
  what the code *did*. It never sees the seed;
* ``judge(seed, observation)`` decides, from that data alone, whether it is right. It rebuilds the inputs
  from the same seed and compares with the course's reference; it never runs learner code.

Inside a notebook (nbgrader's path) all three run in the learner's kernel, one after the other. The
instructor's ``clinic grade`` runs only the probe in a confined child process, which cannot read this
module, the problems or their seeds; ``prepare`` and ``judge`` run in the grader's own clean process. So
nothing a submission does to its interpreter (patching ``assert``, the traceback printer, these helpers,
``sys.exit``) can turn a failure into a pass: to forge an observation the learner would have to compute the
right answer for inputs drawn at grading time -- which is solving the exercise.

Hidden checks draw a fresh seed every time they run, so hard-coding the answers for the public inputs
does not help; public checks use a fixed seed so a learner can reproduce what they see.
"""

from __future__ import annotations

import json
import secrets
import tempfile
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from autograder import probes

PUBLIC_SEED = 0
MAX_ARTIFACT_BYTES = 256 * 1024**2  # a judge never loads more of a file the learner's code wrote


class CheckFailed(AssertionError):
    """A check's verdict. An ``AssertionError`` so nbgrader counts the test cell as failed."""


@dataclass(frozen=True)
class Check:
    name: str  # "<assignment id>.<what is checked>", e.g. "02_metrics.total_grad_norm"
    prepare: Callable[[int, Path], Any]
    judge: Callable[[int, Any], None]
    hint: str  # shown when the learner's code is missing or wrong
    hidden: bool = False
    # Called by the grader each time the probe's writer stops itself; the values reach the judge as
    # ``observation["measured"]``. Without it, a stopped writer is killed (a crash at a chosen moment).
    measure: Callable[[Path], Any] | None = None
    # Answers a probe's question (``probes.ask``) from the seed, in the grader: what the child must not hold.
    oracle: Callable[[int, Any], Any] | None = None

    @property
    def probe(self) -> str:
        return probes.probe_name(self.name)

    def draw_seed(self) -> int:
        return secrets.randbelow(2**31) if self.hidden else PUBLIC_SEED


REGISTRY: dict[str, Check] = {}


def register(name: str, *, hint: str, hidden: bool = False):
    """Decorator for a problem module: ``@register(...)`` on a class with ``prepare`` and ``judge``."""

    def add(cls):
        REGISTRY[name] = Check(name, cls.prepare, cls.judge, hint, hidden, getattr(cls, "measure", None),
                               getattr(cls, "oracle", None))
        return cls

    return add


def register_with_hidden(name: str, *, hint: str):
    """Register ``name`` (public, fixed seed) and ``name_hidden`` (a fresh seed each run) for one check class.

    Every test cell pairs the two: the public check shows the learner what is asked; the hidden one asks
    the same on inputs nobody has seen, so an answer hard-coded for the public inputs fails.
    """

    def add(cls):
        register(name, hint=hint)(cls)
        return register(f"{name}_hidden", hint=hint, hidden=True)(cls)

    return add


def lookup(name: str) -> Check:
    from autograder import problems  # noqa: F401  (importing the package registers every problem)

    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown check {name!r}") from None


def prepare(check: Check, seed: int, folder: Path) -> None:
    """Write the check's inputs for ``seed`` into ``folder``, where its probe will read them."""
    probes.write_case(folder, check.prepare(seed, folder))


def not_implemented(check: Check) -> CheckFailed:
    return CheckFailed(f"not implemented yet. Hint: {check.hint}")


def judge(check: Check, seed: int, observation: Any) -> None:
    """Run the judge; any mistake in a (possibly forged) observation is a failure, never a grader crash."""
    try:
        check.judge(seed, observation)
    except CheckFailed:
        raise
    except Exception as err:  # a malformed observation: missing key, wrong type...
        raise CheckFailed(f"unexpected result ({type(err).__name__}: {err}). Hint: {check.hint}") from None


# Where the learner's code ran; unset means the current directory. A context variable, not a global, so
# submissions judged at the same time in different threads each see their own sandbox.
_workdir: ContextVar[Path | None] = ContextVar("workdir", default=None)


@contextmanager
def working_directory(path: Path):
    """While judging a sandboxed run, files named in observations are looked up in its sandbox."""
    token = _workdir.set(path)
    try:
        yield
    finally:
        _workdir.reset(token)


def artifact(name: str) -> Path:
    """A file the learner's code wrote (e.g. trained weights), named relative to where it ran.

    An observation is untrusted data: a name that points outside the run's directory is refused.
    """
    base = (_workdir.get() or Path.cwd()).resolve()
    path = (base / str(name)).resolve()
    if base not in path.parents or not path.is_file():
        raise CheckFailed(f"no file {name!r} in the notebook's directory")
    if path.stat().st_size > MAX_ARTIFACT_BYTES:
        raise CheckFailed(f"{name!r} is larger than {MAX_ARTIFACT_BYTES // 1024**2} MiB")
    return path


def check(name: str, *learner_objects) -> None:
    """What a notebook's test cell calls: prepare, probe, judge, all in this kernel. Raises CheckFailed."""
    found = lookup(name)
    run(found, found.draw_seed(), *learner_objects)


def run(found: Check, seed: int, *learner_objects) -> None:
    """One check on one seed, in this process (a kernel, or a bench that tries many seeds)."""
    with tempfile.TemporaryDirectory(prefix="check-") as folder:
        prepare(found, seed, Path(folder))
        measured = []

        def on_stop() -> bool:
            if found.measure is None:
                return False
            measured.append(found.measure(Path(folder)))
            return True

        try:
            observation = probes.run(found.probe, Path(folder), *learner_objects, on_stop=on_stop,
                                     ask=lambda request: answer(found, seed, request))
        except probes.NotImplementedYet:
            raise not_implemented(found) from None
        with working_directory(Path(folder)):
            judge(found, seed, with_measurements(found, observation, measured))


def answer(found: Check, seed: int, request: Any) -> Any:
    """The check's answer to a probe's question; JSON in, JSON out, as across the sandbox's pipe."""
    if found.oracle is None:
        raise ValueError("this check asks nothing")
    return json.loads(json.dumps(found.oracle(seed, json.loads(json.dumps(request)))))


def with_measurements(found: Check, observation: Any, measured: list) -> Any:
    """The observation as the judge sees it: what the grader measured replaces anything sent under that name."""
    if found.measure is None or not isinstance(observation, dict):
        return observation
    return {**observation, "measured": measured}
