"""Run one submission's grading child and watch it from outside.

The child confines itself (``autograder.confine``); what only a parent can enforce lives here:

* a wall-clock limit (a submission that blocks signals or sleeps forever is killed);
* a process limit watched from outside, because Linux exempts root from ``RLIMIT_NPROC`` (fork bombs);
* an output cap: output beyond it is read and thrown away, so the child never blocks and the grader's
  memory stays bounded;
* cleanup of the whole session, so no background process of a submission outlives its grading.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from autograder.confine import Limits

POLL_SECONDS = 0.05
READER_GRACE_SECONDS = 5.0


@dataclass(frozen=True)
class SandboxLimits:
    wall_seconds: float = 300.0
    cell_seconds: float = 120.0
    output_bytes: int = 256 * 1024
    process: Limits = Limits()


@dataclass
class ChildRun:
    events: list[dict] = field(default_factory=list)
    output: str = ""
    ended: str = "finished"  # finished | timeout | too many processes | crashed


def course_packages() -> list[str]:
    """The folders a submission may read besides Python itself: the course's packages and data."""
    root = Path(__file__).resolve().parents[1]
    return [str(root / name) for name in ("chapters", "autograder", "datasets") if (root / name).is_dir()]


def run_child(steps: list[dict], sandbox: Path, limits: SandboxLimits) -> ChildRun:
    spec = {"steps": steps, "sandbox": str(sandbox), "course_packages": course_packages(),
            "cell_timeout": limits.cell_seconds, "limits": vars(limits.process)}
    spec_path = sandbox / ".grading-spec.json"
    spec_path.write_text(json.dumps(spec))
    read_end, write_end = os.pipe()
    env = _child_env(sandbox)
    process = subprocess.Popen([sys.executable, "-m", "autograder.child", str(spec_path), str(write_end)],
                               cwd=sandbox, env=env, pass_fds=(write_end,), stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    os.close(write_end)
    run = ChildRun()
    output = bytearray()
    # Daemon readers: a process that escaped the session may hold the pipes open; we stop waiting for it.
    readers = [threading.Thread(target=_drain, args=(process.stdout, output, limits.output_bytes), daemon=True),
               threading.Thread(target=_read_events, args=(os.fdopen(read_end, "rb"), run.events,
                                                          limits.output_bytes * 16), daemon=True)]
    for reader in readers:
        reader.start()
    run.ended = _supervise(process, limits)
    _kill_session(process.pid)
    for reader in readers:
        reader.join(timeout=READER_GRACE_SECONDS)
    run.output = output.decode(errors="replace")
    if run.ended == "finished" and not any(event.get("done") for event in run.events):
        run.ended = "crashed"
    return run


def _child_env(sandbox: Path) -> dict:
    keep = {name: os.environ[name] for name in ("PATH", "LANG") if name in os.environ}
    # The child imports this very autograder (and the chapters beside it), whatever is installed.
    package_root = str(Path(__file__).resolve().parents[1])
    python_path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    return {**keep, "PYTHONPATH": python_path, "HOME": str(sandbox), "TMPDIR": str(sandbox), "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": str(sandbox / ".matplotlib"), "IPYTHONDIR": str(sandbox / ".ipython"),
            "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def _supervise(process: subprocess.Popen, limits: SandboxLimits) -> str:
    deadline = time.monotonic() + limits.wall_seconds
    while process.poll() is None:
        if time.monotonic() > deadline:
            return "timeout"
        if len(_session_members(process.pid)) > limits.process.max_processes:
            return "too many processes"
        time.sleep(POLL_SECONDS)
    return "finished"


def _session_members(session_id: int) -> list[int]:
    members = []
    for pid in psutil.pids():
        try:
            if os.getsid(pid) == session_id:
                members.append(pid)
        except OSError:
            continue  # exited meanwhile
    return members


def _kill_session(session_id: int) -> None:
    """SIGKILL every process of the child's session until none is left (a fork bomb keeps forking)."""
    for _ in range(100):
        members = _session_members(session_id)
        if not members:
            return
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(POLL_SECONDS)


def _drain(stream, into: bytearray, cap: int) -> None:
    while chunk := stream.read1(65536):
        if len(into) < cap:
            into.extend(chunk[: cap - len(into)])


def _read_events(stream, events: list[dict], cap: int) -> None:
    total = 0
    for line in stream:
        total += len(line)
        if total > cap:
            continue  # keep reading so the child never blocks on a full pipe
        try:
            event = json.loads(line)
        except ValueError:
            continue  # garbage written to our pipe by a submission
        if isinstance(event, dict):
            events.append(event)
