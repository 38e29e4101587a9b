"""The console script (pbem.entry.run): a command as a process.

``run`` ends the process without the interpreter's teardown (issue 20's cold
start), so these tests pin what the teardown would otherwise have done for
the user: the exit code is the command's, everything printed reaches its
reader, ``atexit`` handlers still run, and a standard output that cannot be
written is an error (exit 120, as Python's own exit), never a silent success.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pbem import entry
from pbem.errors import EXIT_CODES


class _Exited(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


@pytest.fixture
def ended(monkeypatch):
    """``os._exit`` replaced by an exception carrying its code; the GC's
    thresholds put back afterwards."""
    def fake_exit(code: int) -> None:
        raise _Exited(code)

    monkeypatch.setattr(entry.os, "_exit", fake_exit)
    monkeypatch.setattr(entry.atexit, "_run_exitfuncs", lambda: None)  # the session's own handlers
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_run_ends_the_process_with_the_commands_exit_code(monkeypatch, ended):
    import pbem.cli

    monkeypatch.setattr(pbem.cli, "main", lambda: 7)
    with pytest.raises(_Exited) as exc:
        entry.run()
    assert exc.value.code == 7


def test_run_runs_the_atexit_handlers_before_it_ends(tmp_path):
    """In a process of its own (the handlers of this test session are not
    this test's to run): a handler registered by the command still runs, and
    what was printed is all there."""
    marker = tmp_path / "cleaned"
    script = ("import atexit, sys\n"
              "import pbem.cli\n"
              "from pbem import entry\n"
              "def main():\n"
              f"    atexit.register(open({str(marker)!r}, 'w').close)\n"
              "    print('printed', end='')\n"
              "    return 3\n"
              "pbem.cli.main = main\n"
              "entry.run()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])
    assert (done.returncode, done.stdout, done.stderr) == (3, "printed", "")
    assert marker.exists()


def test_a_standard_output_that_cannot_be_flushed_exits_120(monkeypatch, ended):
    """A closed pipe or a full disk at the last flush: Python's own exit
    status for it, not the command's 0."""
    import pbem.cli

    class Full:
        def flush(self) -> None:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(pbem.cli, "main", lambda: 0)
    monkeypatch.setattr(entry.sys, "stdout", Full())
    with pytest.raises(_Exited) as exc:
        entry.run()
    assert exc.value.code == 120


def test_run_collects_cyclic_garbage_less_often(monkeypatch, ended):
    import pbem.cli

    seen: list[tuple[int, int, int]] = []
    monkeypatch.setattr(pbem.cli, "main", lambda: seen.append(gc.get_threshold()) or 0)
    with pytest.raises(_Exited):
        entry.run()
    assert seen == [entry.GC_THRESHOLDS] and gc.isenabled()


def _pbem(*args: str, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pbem", *args], capture_output=True, text=True, check=False,
                          cwd=Path(__file__).resolve().parents[1], timeout=120, **kw)


def test_python_m_pbem_prints_everything_and_exits_0():
    done = _pbem("exit-codes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"{code:>3}  {meaning}" for code, meaning in EXIT_CODES]
    assert done.stderr == ""


def test_python_m_pbem_exits_with_the_error_code_and_its_message(tmp_path):
    done = _pbem("show", "-g", str(tmp_path / "no-such-game"))
    assert done.returncode not in (0, 120)
    assert done.stderr.strip() and "no-such-game" in done.stderr


def test_python_m_pbem_into_an_output_that_cannot_be_written_is_not_a_success():
    """Standard output is a pipe whose reader is gone: the command's own
    writes fail, and so would the last flush; either way not 0."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "pbem", "exit-codes"], stdout=write, stderr=subprocess.PIPE,
                              text=True, check=False, timeout=120, cwd=Path(__file__).resolve().parents[1])
    finally:
        os.close(write)
    assert done.returncode != 0
