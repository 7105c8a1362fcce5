"""Run one submission's grading child and watch it from outside.

The child confines itself (``autograder.confine``); what only a parent can enforce lives here:

* a wall-clock limit (a submission that blocks signals or sleeps forever is killed);
* a process limit watched from outside, because Linux exempts root from ``RLIMIT_NPROC`` (fork bombs);
* a process of the child that stops (``SIGSTOP``) is killed: nothing is left waiting forever, and a probe
  that must see a process die mid-write (the crash-proof logger) stops it and lets the grader do the kill;
* output caps: output beyond them is read and thrown away, so the child never blocks and the grader's
  memory stays bounded -- at most one line of ``EVENT_BYTES`` is ever held, whatever the child writes;
* cleanup of every process the child started (its PID namespace dies with it; without one, its
  descendants and session are killed), so nothing of a submission outlives its grading.
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
from typing import Callable

import psutil

from autograder.confine import Limits

POLL_SECONDS = 0.05
READER_GRACE_SECONDS = 5.0
EVENT_BYTES = 2 * 1024 * 1024  # one event line; the child caps each check's result at half of this


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

    @property
    def current_call(self) -> int | None:
        """The test call the child said it is probing (``{"start": N}``), if any."""
        starts = [event["start"] for event in self.events if isinstance(event.get("start"), int)]
        return starts[-1] if starts else None


# Asked about a stopped process of the child, with the call being probed: True to let it continue (the
# grader measured what it needed while it was frozen), False to kill it.
OnStop = Callable[[int | None], bool]


def kill_always(call: int | None) -> bool:
    return False


# Answers a probe's question (``probes.ask``) for a call: a JSON-safe answer, or raises ValueError.
OnAsk = Callable[[int | None, object], object]


def cannot_answer(call: int | None, request: object) -> object:
    raise ValueError("this check asks nothing")


MAX_QUESTIONS = 100_000  # per run: a flood of questions gets no more answers


# What the child may read of the grader: itself, the probes and ``cells`` (the notebooks' setup cells import
# ``check`` from it; it holds no seeds or answers) -- never the problems (judges, reference answers), the
# engine or the batch.
CHILD_SIDE = ("__init__.py", "cells.py", "checks.py", "child.py", "confine.py", "probes")


def course_packages() -> list[str]:
    """What a submission may read besides Python itself: the lesson code, the data, the child's side."""
    root = Path(__file__).resolve().parents[1]
    grader = Path(__file__).resolve().parent
    paths = [root / name for name in ("chapters", "datasets")] + [grader / name for name in CHILD_SIDE]
    return [str(path) for path in paths if path.exists()]


def run_child(steps: list[dict], sandbox: Path, limits: SandboxLimits, on_stop: OnStop = kill_always,
              on_ask: OnAsk = cannot_answer) -> ChildRun:
    read_end, write_end = os.pipe()
    answers_read, answers_write = os.pipe()
    spec = {"steps": steps, "sandbox": str(sandbox), "course_packages": course_packages(),
            "cell_timeout": limits.cell_seconds, "limits": vars(limits.process), "answers_fd": answers_read}
    env = _child_env(sandbox)
    # The spec goes through stdin, never onto the disk the submission can read.
    process = subprocess.Popen([sys.executable, "-m", "autograder.child", str(write_end)], cwd=sandbox, env=env,
                               pass_fds=(write_end, answers_read), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    os.close(write_end)
    os.close(answers_read)
    answers = os.fdopen(answers_write, "wb", buffering=0)
    answer = _answerer(answers, on_ask)
    run = ChildRun()
    output = bytearray()
    # Daemon readers: a process that escaped the session may hold the pipes open; we stop waiting for it.
    readers = [threading.Thread(target=_drain, args=(process.stdout, output, limits.output_bytes), daemon=True),
               threading.Thread(target=_read_events, args=(os.fdopen(read_end, "rb"), run.events,
                                                          _max_events(steps), answer), daemon=True)]
    for reader in readers:
        reader.start()
    try:
        process.stdin.write(json.dumps(spec).encode())
        process.stdin.close()
    except OSError:
        pass  # the child died at once: reported as crashed below
    run.ended = _supervise(process, limits, lambda: on_stop(run.current_call))
    _kill_tree(process)
    for reader in readers:
        reader.join(timeout=READER_GRACE_SECONDS)
    try:
        answers.close()
    except OSError:
        pass
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


def _max_events(steps: list[dict]) -> int:
    """Events the grader keeps: one per cell and per check, and some room; a flood beyond is dropped."""
    return 2 * (len(steps) + sum(len(step.get("calls", ())) for step in steps)) + 10


def _supervise(process: subprocess.Popen, limits: SandboxLimits, resume: Callable[[], bool]) -> str:
    deadline = time.monotonic() + limits.wall_seconds
    while process.poll() is None:
        if time.monotonic() > deadline:
            return "timeout"
        members = _descendants(process.pid)
        if len(members) > limits.process.max_processes:
            return "too many processes"
        for member in members:
            _handle_if_stopped(member, resume)
        _continue_if_stopped(process.pid)
        time.sleep(POLL_SECONDS)
    return "finished"


def _continue_if_stopped(pid: int) -> None:
    """The child's outer process only waits for its namespace's init: a submission that stops it (its
    process group) would stall grading until the wall-clock limit, so it is simply continued."""
    try:
        _handle_if_stopped(psutil.Process(pid), lambda: True)
    except psutil.Error:
        pass


def _descendants(pid: int) -> list[psutil.Process]:
    """Every process below ``pid``, walking the kernel's per-thread ``children`` lists: a few reads for a
    submission's small tree, where psutil would read every process of the machine (polled 20 times a second)."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue  # exited meanwhile
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as file:
                    children = [int(child) for child in file.read().split()]
            except FileNotFoundError:  # a kernel without CONFIG_PROC_CHILDREN
                return _all_descendants(pid)
            except OSError:
                continue
            todo += children
            found += children
    return [process for process in map(_process, found) if process is not None]


def _all_descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.Error:
        return None


def _handle_if_stopped(member: psutil.Process, resume: Callable[[], bool]) -> None:
    """A stopped process is measured and continued when a probe asked for it, else killed."""
    try:
        if member.status() == psutil.STATUS_STOPPED:
            if resume():
                member.resume()
            else:
                member.kill()
    except psutil.Error:
        pass  # exited meanwhile


def _session_members(session_id: int) -> list[int]:
    members = []
    for pid in psutil.pids():
        try:
            if os.getsid(pid) == session_id:
                members.append(pid)
        except OSError:
            continue  # exited meanwhile
    return members


def _kill_tree(process: subprocess.Popen) -> None:
    """SIGKILL the child, everything it started and its session until none is left (fork bombs fork on).

    With a PID namespace killing the child is enough (the kernel kills the rest); without one, a
    ``setsid()`` daemon has left the session but was a descendant when the snapshot was taken."""
    doomed = {member.pid for member in _descendants(process.pid)}
    process.kill()
    process.wait()
    for _ in range(100):
        alive = [pid for pid in doomed | set(_session_members(process.pid)) if _running(pid)]
        if not alive:
            return
        for pid in alive:
            doomed.update(member.pid for member in _descendants(pid))
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(POLL_SECONDS)


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _drain(stream, into: bytearray, cap: int) -> None:
    while chunk := stream.read1(65536):
        if len(into) < cap:
            into.extend(chunk[: cap - len(into)])


def _answerer(stream, on_ask: OnAsk) -> Callable[[dict], None]:
    """Answer one question event on the answers pipe: ``{"answer": ...}`` or ``{"error": ...}``."""
    asked = [0]

    def answer(event: dict) -> None:
        asked[0] += 1
        try:
            if asked[0] > MAX_QUESTIONS:
                raise ValueError("too many questions")
            reply = {"answer": on_ask(event.get("ask"), event.get("request"))}
        except Exception as err:  # noqa: BLE001 -- a malformed question gets an error, never a grader crash
            reply = {"error": f"{type(err).__name__}: {str(err)[:200]}"}
        try:
            stream.write((json.dumps(reply) + "\n").encode())
        except OSError:
            pass  # the child is gone

    return answer


def _read_events(stream, events: list[dict], max_events: int, answer: Callable[[dict], None]) -> None:
    """Keep at most ``max_events`` JSON objects of at most ``EVENT_BYTES`` each, until ``done``; answer
    questions (``{"ask": ...}``) as they come.

    Everything else -- longer lines, a flood, whatever a submission's thread writes after ``done`` -- is
    read and dropped, so the child never blocks on a full pipe and the grader holds one bounded line."""
    finished = False
    while line := stream.readline(EVENT_BYTES + 1):
        if not line.endswith(b"\n"):  # longer than any event: skip to its end
            while (rest := stream.readline(EVENT_BYTES)) and not rest.endswith(b"\n"):
                pass
            continue
        if finished or len(events) >= max_events:
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            continue  # garbage written to our pipe by a submission
        if isinstance(event, dict) and "ask" in event:
            answer(event)
        elif isinstance(event, dict):
            events.append(event)
            finished = event.get("done") is True


def remove_tree(path: Path) -> None:
    """Delete a sandbox whatever the submission left in it (``rm`` walks 5000 nested folders; Python 3.11's
    ``shutil.rmtree`` recurses and would raise RecursionError)."""
    subprocess.run(["rm", "-rf", "--one-file-system", str(path)], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
