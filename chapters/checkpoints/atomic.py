"""Atomic writes: after a crash, a file holds the old version or the new one -- never a torn mixture.

``torch.save(state, "ckpt.pt")`` writes in place. Kill the process half-way (OOM killer, pre-emption,
Ctrl-C at the wrong moment) and ``ckpt.pt`` is truncated: the previous good checkpoint is gone *and* the new
one is unreadable. The fix is the classic recipe, step by step:

1. write to a temporary file in the *same directory* (``os.replace`` is atomic only within one filesystem);
2. ``flush`` Python's buffer and ``fsync`` the file, so the bytes are on disk, not in the page cache;
3. ``os.replace(tmp, final)``: readers see either the old name target or the new one;
4. ``fsync`` the directory, so the rename itself survives a power cut.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

TEMP_PREFIX = ".tmp-"  # half-written files start with this; anything left over after a crash is debris


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` all or nothing. If the write fails -- a full disk, Ctrl-C -- the temporary
    file is removed before the error goes on: a half-written file helps nobody, and on a full disk it holds
    exactly the space the rest of the run needs (to write its last log line, say)."""
    path = Path(path)
    temporary = path.with_name(f"{TEMP_PREFIX}{os.getpid()}-{path.name}")
    try:
        with open(temporary, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException as err:
        temporary.unlink(missing_ok=True)
        if isinstance(err, OSError) and err.filename is None:
            err.filename = str(path)  # a failed write() does not say which file; the user needs to know
        raise
    fsync_directory(path.parent)


def fsync_directory(directory: Path) -> None:
    """Make a rename or delete in ``directory`` durable (a no-op where directories cannot be opened)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:  # Windows cannot open a directory; its rename is durable enough for us
        return
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def remove_debris(directory: Path) -> list[Path]:
    """Delete temporary files a killed writer left behind; returns what was removed."""
    removed = sorted(Path(directory).glob(f"{TEMP_PREFIX}*"))
    for path in removed:
        path.unlink(missing_ok=True)
    return removed
