"""A process that imports torch once and forks a fresh ``clinic`` process per request.

The kill test needs many short-lived training processes; starting each from scratch spends seconds
importing torch. Each forked child is still a separate process running ``clinic ARGS``, and SIGKILL hits it
exactly as it would hit a fresh one. Protocol on stdin/stdout, one line each:

    start ARG ARG ...  ->  PID          (fork a child that runs ``clinic ARG ...``)
    wait               ->  killed N | exit N   (reap the last child)

Forking after torch's thread pool has started can deadlock the child (OpenMP is not fork-safe), so the
server pins torch to one thread before anything runs -- the same thing DataLoader workers do.
"""

from __future__ import annotations

import os
import shlex
import sys

import torch

from chapters.cli import main

torch.set_num_threads(1)


def serve() -> None:
    child = None
    for line in sys.stdin:
        command, *args = shlex.split(line)
        if command == "start":
            child = os.fork()
            if child == 0:
                sys.stdin.close()
                os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
                os._exit(main(args))
            print(child, flush=True)
        elif command == "wait":
            _, status = os.waitpid(child, 0)
            signal_number = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
            print(f"killed {signal_number}" if signal_number else f"exit {os.WEXITSTATUS(status)}", flush=True)


if __name__ == "__main__":
    serve()
