"""Crash-safe file writes, safe reads and the game directory lock.

Writes. ``write_atomic`` writes a temp file in the target's directory, fsyncs
it, renames (or, for a file that must never be overwritten, hard-links) it to
the target and fsyncs the directory: after a crash at any point the target
holds either its old bytes or its new bytes. Temp files left by a crash start
with ``.tmp-`` and are ignored by readers and removed by the next writer.
``make_dirs`` and ``remove`` are the other two changes pbem makes to a game
directory. The order of the writes of each command is in docs/protocol.md
("Write order and recovery").

Reads. ``read_regular`` reads only a regular file (a device, FIFO or socket,
or a symlink to one, is refused before a byte is read) and refuses one over
its size limit before reading it.

Lock. ``locked`` holds ``GAME/lock`` (``os_lock``: fcntl.flock on POSIX, or
msvcrt.locking on Windows, where readers take it exclusively too), shared
for commands that only read and exclusive for commands that change the game;
a command takes it before it reads anything of the game and holds it until
its last write. A second process waits $PBEM_LOCK_WAIT seconds
(default 10) and then fails with Busy (exit 7). It is re-entrant within one
process. In a directory this user cannot write, a shared lock is taken on
the existing lock file read-only, or skipped if there is none (nobody can
change such a directory through this user's pbem anyway).

Fault injection (tests only). Every write point (``mkdir``, ``create``,
``write``, ``fsync``, ``link``, ``rename``, ``unlink``, ``fsync-dir``) calls
``_point``. When the environment holds ``PBEM_FAULT=kill:N`` the process
kills itself (SIGKILL) at the N-th point, a ``write`` first writing half its
bytes; ``PBEM_FAULT=fail:N`` raises OSError(ENOSPC) there instead (a full
disk); ``PBEM_FAULT_LOG=FILE`` appends one line per point ("kind path"). The
plan is read once at import (``FAULTS``; tests may also set it directly); when
neither variable is set ``FAULTS`` is None and each point costs one global
lookup.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import stat
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Literal

from pbem.errors import BadFile, Busy, NotFound, PbemError, StorageProblem


def _platform_module(name: str) -> ModuleType | None:
    """The standard module ``name`` where this platform has it, else None."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


# The lock primitive (``os_lock``): fcntl.flock on POSIX (Linux, macOS, the BSDs), else
# msvcrt.locking (Windows). Chosen by what imports, not by platform name, so that a POSIX-only
# module is never imported where it does not exist.
_FCNTL = _platform_module("fcntl")
_MSVCRT = None if _FCNTL is not None else _platform_module("msvcrt")

TMP_PREFIX = ".tmp-"
#: errno values of a file system without hard links.
_NO_HARD_LINKS = tuple(getattr(errno, name) for name in ("EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV", "ENOSYS")
                       if hasattr(errno, name))
#: Seconds a command waits for the game directory's lock (PLAN: 10 s, $PBEM_LOCK_WAIT).
DEFAULT_LOCK_WAIT = 10.0


# -- fault injection (tests only) ---------------------------------------------------

class FaultPlan:
    """Where to kill or fail: see the module docstring."""

    def __init__(self, mode: str = "", at: int = 0, log: str | None = None) -> None:
        if mode not in ("", "kill", "fail"):
            raise ValueError(f"PBEM_FAULT mode must be kill or fail, not {mode!r}")
        self.mode, self.at, self.log, self.count = mode, at, log, 0

    @classmethod
    def from_env(cls) -> FaultPlan | None:
        spec, log = os.environ.get("PBEM_FAULT", ""), os.environ.get("PBEM_FAULT_LOG") or None
        if not spec and not log:
            return None
        mode, _, at = spec.partition(":")
        return cls(mode, int(at or 0), log)

    def reached(self, kind: str, path: os.PathLike[str] | str) -> bool:
        """Count one point; True if the process must die here (fail raises at once)."""
        self.count += 1
        if self.log:
            with open(self.log, "a", encoding="utf-8", errors="backslashreplace") as fh:
                fh.write(f"{kind} {os.fspath(path)}\n")
        if self.count != self.at:
            return False
        if self.mode == "fail":
            raise OSError(errno.ENOSPC, "No space left on device (injected fault)", os.fspath(path))
        return self.mode == "kill"

    @staticmethod
    def die() -> None:
        """A real kill: no finally block, no atexit handler, no flush runs."""
        import signal  # the fault-injection harness only: not loaded at every start

        if hasattr(signal, "SIGKILL"):
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(137)


FAULTS: FaultPlan | None = FaultPlan.from_env()


def _point(kind: str, path: os.PathLike[str] | str) -> None:
    if FAULTS is not None and FAULTS.reached(kind, path):
        FAULTS.die()


# -- writes -------------------------------------------------------------------------

def fsync(fd: int) -> None:
    """Flush ``fd`` to the storage device. macOS's fsync only reaches the drive's cache;
    F_FULLFSYNC (where fcntl offers it) asks the drive to write it, and falls back to fsync
    on a file system that refuses it. Elsewhere (Linux, Windows) os.fsync."""
    if _FCNTL is not None and hasattr(_FCNTL, "F_FULLFSYNC"):
        try:
            _FCNTL.fcntl(fd, _FCNTL.F_FULLFSYNC)
        except OSError:  # e.g. a network file system: fsync is the best it offers
            pass
        else:
            return
    os.fsync(fd)


def fsync_dir(path: Path) -> None:
    """Make a rename or unlink in ``path`` durable where the platform can open a directory
    (POSIX: O_DIRECTORY); elsewhere a no-op (Windows: NTFS journals its metadata and a
    directory cannot be opened as a file). The fault point counts on every platform."""
    _point("fsync-dir", path)
    if not hasattr(os, "O_DIRECTORY"):
        return
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fsync(fd)
    finally:
        os.close(fd)


def make_dirs(path: Path, mode: int = 0o777) -> None:
    """``mkdir -p``; a path that exists as a file is reported (StorageProblem), not created."""
    if path.is_dir():
        return
    _point("mkdir", path)
    try:
        path.mkdir(mode=mode, parents=True, exist_ok=True)
    except FileExistsError:
        raise StorageProblem(f"{path} is a file where pbem needs a directory; move it away") from None


def remove(path: Path) -> None:
    """Delete ``path`` if it exists, durably."""
    if not os.path.lexists(path):
        return
    _point("unlink", path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    fsync_dir(path.parent)


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
    if os.path.isdir(path):
        raise StorageProblem(f"{path} is a directory where pbem writes a file; move it away")
    tmp = directory / f"{TMP_PREFIX}{path.name}.{os.getpid()}.{time.monotonic_ns()}"
    _point("create", tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode)
    try:
        try:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, mode)  # umask may have narrowed or widened nothing; be exact
            view = memoryview(data)
            while view:
                if FAULTS is not None and FAULTS.reached("write", tmp):
                    os.write(fd, view[: len(view) // 2])  # a torn write, then the kill
                    FAULTS.die()
                written = os.write(fd, view)
                view = view[written:]
            if durable:
                _point("fsync", tmp)
                fsync(fd)
        finally:
            os.close(fd)
        if exclusive:
            _point("link", path)
            try:
                os.link(tmp, path)  # fails if path exists; never overwrites
            except OSError as exc:
                if exc.errno not in _NO_HARD_LINKS or \
                        os.path.lexists(path):
                    raise
                # A file system without hard links (some network and FAT file systems): the
                # lock serializes pbem's writers, so a checked rename is as safe here.
                os.replace(tmp, path)
            else:
                _point("unlink", tmp)
                os.unlink(tmp)
        else:
            _point("rename", path)
            os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename in (None, os.fspath(tmp)):  # name the file meant
            raise OSError(exc.errno, exc.strerror, os.fspath(path)) from exc
        raise
    if durable:
        fsync_dir(directory)


def remove_stale_temps(directory: Path) -> list[str]:
    """Delete temp files a crashed writer left behind (call under the exclusive
    lock); the names of the other files in ``directory``."""
    kept = []
    for name in os.listdir(directory):
        if name.startswith(TMP_PREFIX):
            _point("unlink", directory / name)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(directory / name)
        else:
            kept.append(name)
    return kept


# -- reads --------------------------------------------------------------------------

def read_regular(path: Path, limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises NotFound if it does not exist, StorageProblem for a directory,
    BadFile for a device, FIFO or socket (or a symlink to one: refused before
    reading, and a FIFO without a writer never blocks) or a file over
    ``limit`` bytes, and lets other OSErrors through (the CLI reports them as
    StorageProblem).
    """
    fd = _open_for_reading(path, what)
    try:
        st = os.fstat(fd)
        refuse_special(path, st.st_mode, what)
        if st.st_size > limit:
            raise BadFile(f"{what} {path} is {st.st_size} bytes, over the limit of {limit}: refused unread")
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:  # it grew while being read
            raise BadFile(f"{what} {path} is over the limit of {limit} bytes: refused")
        return b"".join(chunks)
    finally:
        os.close(fd)


def refuse_special(path: Path, mode: int, what: str = "file") -> None:
    """StorageProblem for a directory, BadFile for anything else that is not a regular file."""
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise StorageProblem(f"{what} {path} is a directory where pbem expects a file")
    kind = ("a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a FIFO (named pipe)"
            if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    raise BadFile(f"{what} {path} is {kind}: pbem reads only regular files (refused unread)")


def refuse_special_inputs(paths: Iterable[Path]) -> None:
    """Refuse at once (before any passphrase or replay) an input that is a device, FIFO
    or socket, or a symlink to one, and a Maildir holding one; BadFile naming it."""
    for path in paths:
        if str(path) == "-":
            continue
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            raise NotFound(f"{path} does not exist") from None
        if stat.S_ISDIR(mode):
            for sub in ("new", "cur"):
                if (path / sub).is_dir():
                    for entry in os.scandir(path / sub):
                        if entry.name.startswith("."):
                            continue
                        try:
                            refuse_special(Path(entry.path), os.stat(entry.path).st_mode, "message")
                        except FileNotFoundError:  # a dangling symlink, or a message just moved
                            continue
            continue
        refuse_special(path, mode, "input file")


def _open_for_reading(path: Path, what: str) -> int:
    """A descriptor for reading ``path`` that never blocks on a FIFO; NotFound
    or StorageProblem (a directory) naming ``what``."""
    try:
        return os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise NotFound(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise StorageProblem(f"{what} {path} is a directory where pbem expects a file") from None


def open_regular(path: Path, what: str = "file"):
    """A binary file object for streaming the regular file ``path`` (same refusals as read_regular)."""
    fd = _open_for_reading(path, what)
    try:
        refuse_special(path, os.fstat(fd).st_mode, what)
    except PbemError:
        os.close(fd)
        raise
    if hasattr(os, "set_blocking") and hasattr(os, "O_NONBLOCK"):
        os.set_blocking(fd, True)  # opened non-blocking (POSIX); on Windows set_blocking takes only pipes
    return os.fdopen(fd, "rb")


# -- the lock -----------------------------------------------------------------------

def lock_wait_seconds() -> float:
    try:
        return max(0.0, float(os.environ.get("PBEM_LOCK_WAIT", DEFAULT_LOCK_WAIT)))
    except ValueError:
        return DEFAULT_LOCK_WAIT


#: Locks this process holds: lock file -> [exclusive, depth] (re-entrance).
_HELD: dict[str, list] = {}
_READ_ONLY = (errno.EACCES, errno.EPERM, errno.EROFS)


#: errno values of msvcrt.locking when another process holds the byte.
_WINDOWS_BUSY = (errno.EACCES, getattr(errno, "EDEADLOCK", errno.EDEADLK))


def os_lock(fd: int, how: Literal["shared", "exclusive", "unlock"]) -> bool:
    """Take (without waiting) or release the platform's lock on the open file ``fd``.

    POSIX (Linux, macOS): fcntl.flock, shared or exclusive; "unlock" does nothing, since
    closing the descriptor releases a flock. Windows: msvcrt.locking of the file's first
    byte, exclusive for "shared" too (readers then take turns), released by "unlock".
    True if the lock was taken (or released), False if another process holds it;
    StorageProblem on a platform with neither primitive.
    """
    if _FCNTL is not None:
        if how == "unlock":
            return True
        try:
            _FCNTL.flock(fd, (_FCNTL.LOCK_EX if how == "exclusive" else _FCNTL.LOCK_SH) | _FCNTL.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            return False
        return True
    if _MSVCRT is not None:
        if how == "unlock":
            with contextlib.suppress(OSError):  # closing the file releases it too
                os.lseek(fd, 0, os.SEEK_SET)
                _MSVCRT.locking(fd, _MSVCRT.LK_UNLCK, 1)
            return True
        os.lseek(fd, 0, os.SEEK_SET)  # msvcrt.locking locks from the current position
        try:
            _MSVCRT.locking(fd, _MSVCRT.LK_NBLCK, 1)
        except OSError as exc:
            if exc.errno not in _WINDOWS_BUSY:
                raise
            return False
        return True
    raise StorageProblem("this platform has neither fcntl.flock nor msvcrt.locking: pbem cannot lock "
                         "the game directory against a second pbem process")


@contextlib.contextmanager
def locked(lock_path: Path, *, exclusive: bool, wait: float | None = None) -> Iterator[None]:
    """Hold the game's lock: shared for readers, exclusive for writers.

    Waits up to ``wait`` seconds (default $PBEM_LOCK_WAIT, 10) and then raises
    Busy naming the directory, so a second process never interleaves writes.
    Re-entrant in one process (an exclusive hold covers a nested shared one).
    StorageProblem if an exclusive lock is asked in a directory this user
    cannot write.
    """
    key = os.path.abspath(lock_path)
    held = _HELD.get(key)
    if held is not None:
        if exclusive and not held[0]:
            raise RuntimeError(f"{lock_path}: exclusive lock asked while holding it shared")
        held[1] += 1
        try:
            yield
        finally:
            held[1] -= 1
        return
    wait = lock_wait_seconds() if wait is None else wait
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644)
    except OSError as exc:
        if exclusive or exc.errno not in _READ_ONLY:
            raise
        try:  # a read-only game directory (a copy to verify): read it under a shared lock if one exists
            fd = os.open(lock_path, os.O_RDONLY)
        except FileNotFoundError:
            fd = -1
    try:
        if fd >= 0:
            deadline = time.monotonic() + wait
            while not os_lock(fd, "exclusive" if exclusive else "shared"):
                if time.monotonic() >= deadline:
                    raise Busy(f"game directory {lock_path.parent} is in use by another pbem process "
                               f"(waited {wait:g} s, $PBEM_LOCK_WAIT); run the command again when it "
                               "has finished") from None
                time.sleep(0.05)
        _HELD[key] = [exclusive, 1]
        try:
            yield
        finally:
            del _HELD[key]
            if fd >= 0:
                os_lock(fd, "unlock")
    finally:
        if fd >= 0:
            os.close(fd)  # closing releases a flock


# -- operating system errors as pbem errors -------------------------------------------

def printable_path(path: object) -> str:
    """A path for a message: bytes that are not UTF-8 shown as \\xNN escapes."""
    text = os.fspath(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
    if isinstance(text, bytes):
        return text.decode("utf-8", "backslashreplace")
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def os_error(exc: OSError) -> PbemError:
    """The pbem error (one line naming the path, a documented exit code) for ``exc``."""
    path = printable_path(exc.filename) if exc.filename is not None else "a file"
    if exc.filename2 is not None:
        path += f" -> {printable_path(exc.filename2)}"
    code = exc.errno
    if code == errno.ENOENT:
        return NotFound(f"{path} does not exist (or a directory on its way is missing)")
    if code in (errno.EACCES, errno.EPERM):
        return StorageProblem(f"permission denied: {path} (check its owner and mode; show, log, verify, "
                              "audit, report and map also work in a game directory you cannot write)")
    if code == errno.EROFS:
        return StorageProblem(f"{path} is on a read-only file system; this command changes the game "
                              "(read-only commands such as show, log and verify work there)")
    if code in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        return StorageProblem(f"no space left on the device (or over quota) writing {path}: nothing was "
                              "half-written; free some space and run the same command again")
    if code == errno.EFBIG:
        return StorageProblem(f"file too large writing {path} (a file-size limit, e.g. ulimit -f): nothing "
                              "was half-written; raise the limit and run the same command again")
    if code == errno.ENOTDIR:
        return StorageProblem(f"{path}: a part of this path is a file where pbem expects a directory")
    if code == errno.EISDIR:
        return StorageProblem(f"{path} is a directory where pbem expects a file")
    if code == errno.EEXIST:
        return StorageProblem(f"{path} already exists")
    return StorageProblem(f"{exc.strerror or exc}: {path}")
