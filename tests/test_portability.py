"""Windows and macOS (PLAN "What users expect": runs on Windows and macOS).

CI runs on Linux only, so the other platforms are simulated: pbem/fileio.py
is loaded afresh (as a separate module, the real one untouched) with
``fcntl`` blocked and a recording ``msvcrt`` in its place (Windows), or with
a recording ``fcntl`` that has F_FULLFSYNC (macOS), and each test asserts
which primitive pbem calls. A subprocess imports every pbem module with
``fcntl`` blocked by a sys.meta_path finder, as on Windows. The Windows
access-list check of a password file is tested on access lists given as
data (pbem.credentials.other_readers); reading one from Windows itself
(``access_list``, ctypes) runs on Windows only.
"""

from __future__ import annotations

import errno
import importlib.util
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pbem import credentials, fileio
from pbem.cli import cli
from pbem.credentials import ACCESS_ALLOWED, ACCESS_DENIED, INHERIT_ONLY, Ace
from pbem.errors import Busy, StorageProblem, UsageProblem
from pbem.fileio import FaultPlan
from tests.conftest import new_table

REPO = Path(__file__).resolve().parent.parent


LK_UNLCK, LK_NBLCK = 0, 2  # msvcrt's own values
LOCK_SH, LOCK_EX, LOCK_NB = 1, 2, 4  # fcntl's own values
F_FULLFSYNC = 51  # macOS


class Recorder(types.ModuleType):
    """A stand-in for a platform module (msvcrt or fcntl): records every call
    of its lock function ``fn`` with the file position at that moment, and of
    ``fcntl``; raises ``fail`` when it is set."""

    def __init__(self, name: str, fn: str, **constants: int) -> None:
        super().__init__(name)
        self.calls: list[tuple[int, ...]] = []
        self.fcntl_calls: list[tuple[int, int]] = []
        self.fail: OSError | None = None
        for key, value in constants.items():
            setattr(self, key, value)
        setattr(self, fn, self._lock)

    def _lock(self, fd: int, *args: int) -> None:
        self.calls.append((*args, os.lseek(fd, 0, os.SEEK_CUR)))
        if self.fail is not None:
            raise self.fail

    def fcntl(self, fd: int, cmd: int) -> int:
        self.fcntl_calls.append((fd, cmd))
        if self.fail is not None:
            raise self.fail
        return 0


def fake_msvcrt() -> Recorder:
    return Recorder("msvcrt", "locking", LK_UNLCK=LK_UNLCK, LK_LOCK=1, LK_NBLCK=LK_NBLCK, LK_RLCK=3, LK_NBRLCK=4)


def fake_fcntl(**extra: int) -> Recorder:
    return Recorder("fcntl", "flock", LOCK_SH=LOCK_SH, LOCK_EX=LOCK_EX, LOCK_NB=LOCK_NB, LOCK_UN=8, **extra)


def load_fileio(monkeypatch: pytest.MonkeyPatch, *, fcntl: types.ModuleType | None,
                msvcrt: types.ModuleType | None) -> Any:
    """pbem/fileio.py executed afresh as if on a platform whose standard
    library holds ``fcntl`` and ``msvcrt`` (None: that module does not exist)."""
    monkeypatch.setitem(sys.modules, "fcntl", fcntl)  # None in sys.modules: the import fails
    monkeypatch.setitem(sys.modules, "msvcrt", msvcrt)
    spec = importlib.util.spec_from_file_location("pbem_fileio_elsewhere", fileio.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def record_fsync(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    return calls


# -- the lock ------------------------------------------------------------------------

@pytest.mark.skipif(sys.platform == "win32", reason="flock exists only on POSIX; the Windows lock is tested "
                                                     "with a fake msvcrt above and below")
def test_posix_locks_with_flock_and_never_imports_msvcrt() -> None:
    import fcntl

    assert fileio._FCNTL is fcntl and fileio._MSVCRT is None
    assert "msvcrt" not in sys.modules


def test_without_fcntl_the_lock_is_msvcrt_locking_of_the_first_byte(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    msvcrt = fake_msvcrt()
    windows = load_fileio(monkeypatch, fcntl=None, msvcrt=msvcrt)
    assert windows._FCNTL is None and windows._MSVCRT is msvcrt
    lock = tmp_path / "lock"
    lock.write_bytes(b"xyz")
    for exclusive in (False, True):  # readers lock exclusively too: msvcrt has no shared lock
        msvcrt.calls.clear()
        with windows.locked(lock, exclusive=exclusive, wait=0):
            assert msvcrt.calls == [(LK_NBLCK, 1, 0)]  # one byte, at the start of the file
        assert msvcrt.calls == [(LK_NBLCK, 1, 0), (LK_UNLCK, 1, 0)]


def test_without_fcntl_a_held_byte_waits_then_is_busy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    msvcrt = fake_msvcrt()
    windows = load_fileio(monkeypatch, fcntl=None, msvcrt=msvcrt)
    msvcrt.fail = PermissionError(errno.EACCES, "Permission denied")  # what msvcrt.locking raises when held
    with pytest.raises(Busy, match="in use by another pbem process"), windows.locked(tmp_path / "lock",
                                                                                     exclusive=True, wait=0.12):
        pass
    assert len(msvcrt.calls) >= 2  # it tried again while waiting
    msvcrt.fail = OSError(errno.EBADF, "Bad file descriptor")  # not a held lock: reported, not waited on
    with pytest.raises(OSError, match="Bad file descriptor"), windows.locked(tmp_path / "lock", exclusive=True,
                                                                             wait=10):
        pass


def test_with_fcntl_the_lock_is_flock_shared_or_exclusive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fcntl, msvcrt = fake_fcntl(), fake_msvcrt()
    posix = load_fileio(monkeypatch, fcntl=fcntl, msvcrt=msvcrt)
    assert posix._FCNTL is fcntl and posix._MSVCRT is None  # msvcrt is not even looked at
    with posix.locked(tmp_path / "lock", exclusive=False, wait=0):
        pass
    with posix.locked(tmp_path / "lock", exclusive=True, wait=0):
        pass
    assert [call[0] for call in fcntl.calls] == [LOCK_SH | LOCK_NB, LOCK_EX | LOCK_NB]  # closing unlocks
    assert msvcrt.calls == []
    fcntl.fail = BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
    with pytest.raises(Busy), posix.locked(tmp_path / "lock", exclusive=True, wait=0):
        pass


def test_with_neither_primitive_pbem_imports_and_a_lock_is_a_clear_error(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    neither = load_fileio(monkeypatch, fcntl=None, msvcrt=None)
    with pytest.raises(StorageProblem, match="neither fcntl.flock nor msvcrt.locking"), \
            neither.locked(tmp_path / "lock", exclusive=True, wait=0):
        pass
    assert neither._HELD == {}


def test_the_commands_run_through_the_windows_primitives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """do, send, receive, show and verify of the race game with msvcrt.locking for the lock,
    no directory fsync (no O_DIRECTORY) and no non-blocking open (no O_NONBLOCK), as on
    Windows; a held lock is exit 7 there too."""
    table = new_table(tmp_path)
    msvcrt = fake_msvcrt()
    monkeypatch.setattr(fileio, "_FCNTL", None)
    monkeypatch.setattr(fileio, "_MSVCRT", msvcrt)
    monkeypatch.delattr(os, "O_DIRECTORY")
    monkeypatch.delattr(os, "O_NONBLOCK")
    red, blue, turn = table.red.gd.path, table.blue.gd.path, tmp_path / "t.pbem"
    for args in (["do", "-g", red, "advance 1", "pass"], ["send", "-g", red, "-o", turn],
                 ["receive", "-g", blue, turn], ["show", "-g", blue], ["verify", blue]):
        result = CliRunner().invoke(cli, [str(a) for a in args])
        assert result.exit_code == 0, (args, result.output)
    assert len(msvcrt.calls) >= 10
    assert msvcrt.calls == [(LK_NBLCK, 1, 0), (LK_UNLCK, 1, 0)] * (len(msvcrt.calls) // 2)  # each lock released
    msvcrt.fail = PermissionError(errno.EACCES, "Permission denied")  # another pbem holds it
    result = CliRunner().invoke(cli, ["show", "-g", str(blue)])
    assert result.exit_code == Busy.exit_code == 7 and "in use by another pbem process" in result.output


# -- durable writes -------------------------------------------------------------------

@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts the fsync calls Linux makes; macOS (F_FULLFSYNC) and Windows are tested with fakes")
def test_linux_durable_writes_fsync_the_file_and_its_directory(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    calls = record_fsync(monkeypatch)
    fileio.write_atomic(tmp_path / "a", b"data")
    assert len(calls) == 2 and (tmp_path / "a").read_bytes() == b"data"


def test_macos_durable_writes_use_f_fullfsync_and_fall_back_to_fsync(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    fcntl = fake_fcntl(F_FULLFSYNC=F_FULLFSYNC)  # macOS: fsync stops at the drive's cache
    mac = load_fileio(monkeypatch, fcntl=fcntl, msvcrt=None)
    calls = record_fsync(monkeypatch)
    mac.write_atomic(tmp_path / "a", b"data")
    assert [cmd for _, cmd in fcntl.fcntl_calls] == [F_FULLFSYNC, F_FULLFSYNC] and calls == []  # file, directory
    fcntl.fail = OSError(errno.ENOTSUP, "Operation not supported")  # e.g. a network file system
    mac.write_atomic(tmp_path / "a", b"more")
    assert len(calls) == 2 and (tmp_path / "a").read_bytes() == b"more"


def test_without_o_directory_the_directory_is_not_opened_but_the_fault_point_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "O_DIRECTORY")  # Windows: a directory cannot be opened as a file
    calls = record_fsync(monkeypatch)
    log = tmp_path / "points"
    monkeypatch.setattr(fileio, "FAULTS", FaultPlan(log=str(log)))
    fileio.write_atomic(tmp_path / "a", b"data")
    assert len(calls) == 1  # the file only
    assert log.read_text().split("\n")[-2] == f"fsync-dir {tmp_path}"  # the same points on every platform


def test_without_o_nonblock_a_stream_is_opened_without_set_blocking(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def pipes_only(fd: int, blocking: bool) -> None:  # Windows' os.set_blocking (3.12+) on a file
        raise OSError(errno.ENOTSUP, "Operation not supported")

    monkeypatch.delattr(os, "O_NONBLOCK")
    monkeypatch.setattr(os, "set_blocking", pipes_only)
    (tmp_path / "turn").write_bytes(b"turn file")
    with fileio.open_regular(tmp_path / "turn") as fh:
        assert fh.read() == b"turn file"


# -- importing pbem where fcntl does not exist -------------------------------------------

BLOCK_FCNTL = """
import pkgutil, sys

class NoFcntl:
    def find_spec(self, name, path=None, target=None):
        if name == "fcntl":
            raise ModuleNotFoundError("No module named 'fcntl' (blocked by the test)", name=name)
        return None

sys.modules.pop("fcntl", None)
sys.meta_path.insert(0, NoFcntl())
import pbem, pbem.cli
for info in pkgutil.iter_modules(pbem.__path__, "pbem."):
    if info.name != "pbem.__main__":  # that one runs the CLI
        __import__(info.name)
from pbem import fileio
assert fileio._FCNTL is None and "fcntl" not in sys.modules
sys.exit(pbem.cli.main(["exit-codes"]))
"""


def test_every_pbem_module_imports_and_runs_without_fcntl(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", BLOCK_FCNTL], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "7  the game directory is in use by another pbem process" in done.stdout  # the exit-code table


def test_the_blocking_finder_really_blocks_fcntl() -> None:
    """The finder above is not vacuous: without it the same import finds fcntl."""
    code = BLOCK_FCNTL.replace("sys.meta_path.insert(0, NoFcntl())", "")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120, check=False)
    assert done.returncode != 0 and "AssertionError" in done.stderr


# -- who may read a password file on Windows --------------------------------------------

OWNER = "S-1-5-21-1004336348-1177238915-682003330-1001"
OTHER_USER = "S-1-5-21-1004336348-1177238915-682003330-1002"
FULL = 0x1F01FF  # FILE_ALL_ACCESS
READ_EXECUTE = 0x1200A9


def test_a_file_in_one_s_own_profile_folder_is_read_by_nobody_else() -> None:
    """The inherited access list of C:\\Users\\NAME: SYSTEM, Administrators and the owner (OpenSSH's rule)."""
    profile = [Ace(ACCESS_ALLOWED, 0x10, FULL, "S-1-5-18"), Ace(ACCESS_ALLOWED, 0x10, FULL, "S-1-5-32-544"),
               Ace(ACCESS_ALLOWED, 0x10, FULL, OWNER)]
    assert credentials.other_readers(OWNER, profile) == []


def test_broad_groups_and_other_users_that_may_read_are_named() -> None:
    """The inherited access list of a folder under C:\\ lets Users and Authenticated Users read."""
    elsewhere = [Ace(ACCESS_ALLOWED, 0x10, FULL, "S-1-5-18"), Ace(ACCESS_ALLOWED, 0x10, READ_EXECUTE, "S-1-5-32-545"),
                 Ace(ACCESS_ALLOWED, 0x10, 0x1301BF, "S-1-5-11"), Ace(ACCESS_ALLOWED, 0, 0x1, OTHER_USER),
                 Ace(ACCESS_ALLOWED, 0, 0x80000000, "S-1-1-0")]
    assert credentials.other_readers(OWNER, elsewhere) == ["Users", "Authenticated Users", OTHER_USER, "Everyone"]


def test_entries_that_do_not_let_this_file_be_read_are_not_counted() -> None:
    aces = [Ace(ACCESS_ALLOWED, INHERIT_ONLY, FULL, "S-1-1-0"),  # for files created inside, not this one
            Ace(ACCESS_ALLOWED, 0, 0x100000 | 0x80, "S-1-5-32-545"),  # SYNCHRONIZE | FILE_READ_ATTRIBUTES
            Ace(ACCESS_DENIED, 0, FULL, "S-1-5-11"), Ace(ACCESS_ALLOWED, 0, FULL, "S-1-5-11"),  # denied first
            Ace(ACCESS_ALLOWED, 0, FULL, OWNER)]
    assert credentials.other_readers(OWNER, aces) == []
    assert credentials.other_readers(OWNER, [Ace(ACCESS_DENIED, 0, FULL, "S-1-1-0"),
                                             Ace(ACCESS_ALLOWED, 0, FULL, OTHER_USER)]) == []
    assert credentials.other_readers(OWNER, [Ace(ACCESS_ALLOWED, 0, FULL, OTHER_USER),  # allowed before denied
                                             Ace(ACCESS_DENIED, 0, FULL, "S-1-1-0")]) == [OTHER_USER]


def test_a_file_without_an_access_list_is_open_to_everyone() -> None:
    assert credentials.other_readers(OWNER, None) == ["Everyone (the file has no access list)"]


def windows_file(monkeypatch: pytest.MonkeyPatch, aces: list[Ace] | None) -> list[Path]:
    """Pretend to be on Windows, where ``path`` has this access list; the paths whose list was read."""
    monkeypatch.setattr(credentials, "WINDOWS", True)
    seen: list[Path] = []

    def access_list(path: Path) -> tuple[str, list[Ace] | None]:
        seen.append(path)
        return OWNER, aces

    monkeypatch.setattr(credentials, "access_list", access_list)
    return seen


def test_on_windows_a_password_file_others_can_read_is_refused_by_its_access_list(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "smtp.toml"
    path.write_text('[smtp]\npassword = "s3cret"\n')
    path.chmod(0o600)  # mode bits do not count on Windows
    seen = windows_file(monkeypatch, [Ace(ACCESS_ALLOWED, 0, READ_EXECUTE, "S-1-5-32-545"),
                                      Ace(ACCESS_ALLOWED, 0, FULL, OWNER)])
    monkeypatch.setenv("USERNAME", "rommel")
    with pytest.raises(UsageProblem, match=r"others can read it \(its access list lets Users read it\): "
                                           r'icacls ".*smtp.toml" /inheritance:r /grant:r "rommel:F"'):
        credentials.password(path, "red", in_file="s3cret")
    assert seen and set(seen) == {path}


def test_on_windows_a_password_file_only_its_owner_reads_is_accepted_whatever_its_mode(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "smtp.toml"
    path.write_text('[smtp]\npassword = "s3cret"\n')
    path.chmod(0o644)  # Windows reports 0o666 or 0o444 for every file: modes say nothing there
    seen = windows_file(monkeypatch, [Ace(ACCESS_ALLOWED, 0, FULL, "S-1-5-18"), Ace(ACCESS_ALLOWED, 0, FULL, OWNER)])
    assert credentials.password(path, "red", in_file="s3cret") == ("s3cret", [])
    assert seen == [path]


@pytest.mark.skipif(sys.platform == "win32", reason="checks the refusal on POSIX; on Windows the access list "
                                                     "is really read")
def test_access_lists_are_not_read_on_posix(tmp_path: Path) -> None:
    with pytest.raises(UsageProblem, match="Windows only"):
        credentials.access_list(tmp_path)
