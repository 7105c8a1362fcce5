"""Stopping a run from outside: Ctrl-C (SIGINT) and a scheduler's SIGTERM end the same way.

Cluster schedulers (SLURM, Kubernetes, ``torchrun`` passing on its own signal) stop a job with SIGTERM,
and Python's default for SIGTERM is to die on the spot: no ``run_end`` in the log, no summary, a metrics
file that just stops. Ctrl-C instead raises ``KeyboardInterrupt``, which unwinds the stack, so every
``finally`` -- the trainer's ``on_run_end``, the loggers closing their files -- gets to run.

:func:`stop_on_sigterm` makes SIGTERM raise :class:`Terminated`, a ``KeyboardInterrupt``, so both signals
take the same careful path. The first signal also stays on record (:func:`received`): under ``torchrun``
the signal may arrive while a rank waits inside a collective, which then fails with a connection error
instead; the trainer asks :func:`received` to still call that run ``interrupted``, not ``failed``.
"""

from __future__ import annotations

import contextlib
import signal
import threading

_received: int | None = None  # the first stopping signal this process got


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: stop as Ctrl-C would."""


def _on_sigterm(signum, frame):
    global _received
    _received = _received or signum
    raise Terminated()


def _on_sigint(signum, frame):
    global _received
    _received = _received or signum
    raise KeyboardInterrupt()


@contextlib.contextmanager
def stop_on_sigterm():
    """Inside this block SIGTERM (and SIGINT) raise ``KeyboardInterrupt``; the old handlers come back after.

    Signal handlers can only be set from the main thread; elsewhere this does nothing."""
    global _received
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received = None
    previous = signal.signal(signal.SIGTERM, _on_sigterm), signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])


def received() -> int | None:
    """The signal number that asked this process to stop, or None."""
    return _received


def exit_code(error: KeyboardInterrupt) -> int:
    """The shell's convention, 128 + signal number: 130 after Ctrl-C, 143 after SIGTERM."""
    return 128 + (signal.SIGTERM if isinstance(error, Terminated) else signal.SIGINT)
