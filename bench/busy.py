"""Busy neighbours for benchmarks: processes that each spin one core, as other users of a shared server would.

A context manager, so the spinners die however the benchmark ends (a crash or Ctrl-C included)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time


@contextlib.contextmanager
def busy_neighbours(count: int):
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        if spinners:
            time.sleep(0.5)  # let the spinners take their cores before anything is timed
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
