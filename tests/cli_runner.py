"""Run many ``clinic`` commands fast: one process imports torch once, then forks a child per command.

Each child is a separate process that runs the real entry point (``chapters.cli.main``) with its own
working directory, stdout and stderr -- what ``python -m chapters.cli ARGS`` does, minus the seconds of
importing torch again. An exception that escapes ``main`` is printed as Python prints it (a traceback on
stderr, exit 1), so a test sees exactly what a user would.

Protocol, one JSON line each way: ``{"args": [...], "cwd": DIR}`` -> ``{"code": N, "stdout": S, "stderr": S}``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback

import torch

from chapters.cli import main

torch.set_num_threads(1)  # forking after torch's thread pool started can deadlock the child (see fork_server.py)


def run_child(args: list[str], cwd: str, stdout: str, stderr: str) -> None:
    os.chdir(cwd)
    os.dup2(os.open(stdout, os.O_WRONLY), 1)
    os.dup2(os.open(stderr, os.O_WRONLY), 2)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    try:
        code = main(args)
    except SystemExit as exit_:  # argparse's errors, --help, --version
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    except BaseException:  # noqa: BLE001 -- what the interpreter would print for an uncaught error
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def serve() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        with tempfile.TemporaryDirectory() as scratch:
            out, err = os.path.join(scratch, "out"), os.path.join(scratch, "err")
            open(out, "w").close()
            open(err, "w").close()
            sys.stdout.flush()
            child = os.fork()
            if child == 0:
                run_child(request["args"], request["cwd"], out, err)
            _, status = os.waitpid(child, 0)
            code = os.waitstatus_to_exitcode(status)
            with open(out) as o, open(err) as e:
                reply = {"code": code, "stdout": o.read(), "stderr": e.read()}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    serve()
