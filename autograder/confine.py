"""Confine the current process before it runs a submission: the grader's sandbox, without Docker.

Called first thing in the grading child (``autograder.child``), so every limit is in place before any
learner code is imported. Each layer answers one attack from the autograder issue:

* **Resource limits** (``setrlimit``): address space caps memory bombs, CPU time caps busy loops that a
  wall-clock kill would also catch, ``RLIMIT_NPROC`` caps fork bombs, no core dumps.
* **A new user namespace** (``unshare(CLONE_NEWUSER)``): Linux never applies ``RLIMIT_NPROC`` to root
  (CI and many containers grade as root); inside a fresh user namespace the process count starts at zero
  and the limit holds. It also drops every capability the grader had on the real system.
* **A new PID namespace** (with the user namespace, no privileges needed): the child becomes PID 1 of a
  namespace of its own, so it can name -- and signal -- no process outside it, and when it ends the kernel
  kills everything it started, ``setsid()`` daemons included.
* **Landlock** (Linux >= 5.13): the kernel refuses reads outside the Python installation, the course's
  lesson code (``chapters``, ``datasets``) and the child's own part of the grader (``autograder.probes``),
  and writes outside the sandbox directory -- so a submission cannot read another student's notebook, the
  instructor's hidden tests, the judges or their reference answers, nor overwrite anything. Landlock also
  forbids tracing (and reading the memory of) any process outside the sandbox. It needs no privileges.

A layer the kernel does not offer is skipped and named in ``confinement_report``; the grader prints it so
an instructor knows what protects them (the wall-clock kill and the separate judge process always do).
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
from dataclasses import dataclass

_libc = ctypes.CDLL(None, use_errno=True)

CLONE_NEWUSER, CLONE_NEWPID = 0x10000000, 0x20000000
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38

# Landlock system calls and access rights (linux/landlock.h); the numbers are the same on every arch.
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
WRITE_RIGHTS_V1 = sum(1 << bit for bit in range(4, 13))  # remove, make dir/file/fifo/socket/symlink...
REFER, TRUNCATE = 1 << 13, 1 << 14  # ABI 2 and 3
READ = EXECUTE | READ_FILE | READ_DIR
FILE_ONLY_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # the rights a rule on a single file may hold


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@dataclass(frozen=True)
class Limits:
    memory_gb: float = 4.0
    cpu_seconds: int = 600
    max_processes: int = 64


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when it has none."""
    version = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                            ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    return max(version, 0)


def _handled_rights(abi: int) -> int:
    rights = READ | WRITE_FILE | WRITE_RIGHTS_V1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def restrict_filesystem(readable: list[str], writable: list[str]) -> bool:
    """Allow reading beneath ``readable`` and everything beneath ``writable``; deny the rest of the disk."""
    abi = landlock_abi()
    if abi == 0:
        return False
    handled = _handled_rights(abi)
    attr = _RulesetAttr(handled)
    ruleset = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                            ctypes.c_uint32(0))
    if ruleset < 0:
        return False
    try:
        for paths, rights in ((readable, READ), (writable, handled)):
            for path in paths:
                _allow(ruleset, path, rights & handled)
        # Without no_new_privs an unprivileged process may not restrict itself (and it keeps setuid
        # programs from escaping the rules).
        if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return _libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) == 0
    finally:
        os.close(ruleset)


def _allow(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path this system does not have
    try:
        if not os.path.isdir(path):
            rights &= FILE_ONLY_RIGHTS
        rule = _PathBeneathAttr(rights, fd)
        _libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, ctypes.c_uint32(LANDLOCK_RULE_PATH_BENEATH),
                      ctypes.byref(rule), ctypes.c_uint32(0))
    finally:
        os.close(fd)


def isolate_processes() -> list[str]:
    """Enter a new user and PID namespace and continue as its PID 1; return the layers in force.

    ``unshare(CLONE_NEWPID)`` puts the caller's *next child* in the new namespace, so this forks: the
    parent stays outside, waits, and exits with the child's status; the child carries on as the namespace's
    init. It dies with its parent (``PR_SET_PDEATHSIG``), and the kernel kills every process of the
    namespace when its init exits -- nothing a submission starts can outlive its grading.
    """
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0:
        return ["user namespace"] if _libc.unshare(CLONE_NEWUSER) == 0 else []
    pid = os.fork()
    if pid:
        _, status = os.waitpid(pid, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # when the waiting parent is killed by the grader
    return ["user namespace", "pid namespace"]


def set_resource_limits(limits: Limits) -> None:
    memory = int(limits.memory_gb * 1024**3)
    for name, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_CPU, limits.cpu_seconds),
                        (resource.RLIMIT_NPROC, limits.max_processes), (resource.RLIMIT_CORE, 0)):
        hard = resource.getrlimit(name)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(name, (value, value))


def python_paths() -> list[str]:
    """Where Python, its packages and their shared libraries live: a submission must read these to run."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    paths.update(entry for entry in sys.path if entry and os.path.isdir(entry))
    return sorted(paths)


SYSTEM_READABLE = ["/usr", "/lib", "/lib64", "/bin", "/etc", "/proc", "/sys", "/dev", "/opt"]


def confine(sandbox_dir: str, course_packages: list[str], limits: Limits) -> list[str]:
    """Apply resource limits and Landlock; return the names of the layers in force (for the report)."""
    set_resource_limits(limits)
    in_force = ["resource limits"]
    readable = []
    for path in SYSTEM_READABLE + python_paths():
        readable += _without_grader(path)
    if restrict_filesystem(readable + course_packages, [sandbox_dir, "/dev/null"]):
        in_force.append("landlock")
    return in_force


def _without_grader(path: str) -> list[str]:
    """``path``, or its entries but the grader, when it holds the grader (``site-packages``, a checkout).

    A checkout's root also holds ``solutions/`` (the hidden tests), so the course root is never readable
    as a whole; the child's part of the grader is granted by the caller (``course_packages``).
    """
    if not os.path.isdir(os.path.join(path, "autograder")):
        return [path]
    if os.path.isdir(os.path.join(path, "solutions")):
        return []  # a development checkout: only the packages the caller names
    return [os.path.join(path, name) for name in os.listdir(path) if name not in ("autograder", "solutions")]
