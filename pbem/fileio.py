"""Crash-safe file writes and the game directory lock.

``write_atomic`` writes a temp file in the target's directory, fsyncs it,
renames it over the target and fsyncs the directory: after a crash at any
point the target holds either its old bytes or its new bytes. Temp files
left by a crash start with ``.tmp-`` and are ignored by readers.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from pbem.errors import Busy

TMP_PREFIX = ".tmp-"


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, *, mode: int = 0o644, exclusive: bool = False,
                 durable: bool = True) -> None:
    """Atomically replace (or, with ``exclusive``, create) ``path`` with ``data``.

    With ``exclusive`` an existing target raises FileExistsError and is kept.
    The file is created with ``mode`` from the start (never world-readable first).
    ``durable=False`` skips both fsyncs: still all-or-nothing for readers, but
    after a power loss the file may be the old one or empty. Only for files
    that are derived and checked when read (the replay cache).
    """
    directory = path.parent
    tmp = directory / f"{TMP_PREFIX}{path.name}.{os.getpid()}.{time.monotonic_ns()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            os.fchmod(fd, mode)  # umask may have narrowed or widened nothing; be exact
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        if exclusive:
            os.link(tmp, path)  # fails if path exists; never overwrites
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(directory)


def remove_stale_temps(directory: Path) -> None:
    """Delete temp files a crashed writer left behind (call under the lock)."""
    for name in os.listdir(directory):
        if name.startswith(TMP_PREFIX):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(directory / name)


def lock_wait_seconds() -> float:
    try:
        return float(os.environ.get("PBEM_LOCK_WAIT", "5"))
    except ValueError:
        return 5.0


@contextlib.contextmanager
def locked(lock_path: Path, *, exclusive: bool, wait: float | None = None) -> Iterator[None]:
    """Hold the game's lock: shared for readers, exclusive for writers.

    Waits up to ``wait`` seconds (default $PBEM_LOCK_WAIT, 5) and then raises
    Busy naming the directory, so a second process never interleaves writes.
    """
    wait = lock_wait_seconds() if wait is None else wait
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait
        flags = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
        while True:
            try:
                fcntl.flock(fd, flags)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    raise Busy(f"game directory {lock_path.parent} is in use by another pbem "
                               f"process (waited {wait:g} s); try again when it has finished") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing releases the flock
