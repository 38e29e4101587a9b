"""Environment faults (issue 28): each gives one line naming the path and a
documented exit code (12 for the file system, 7 for the lock, 3 for damage),
never 1 ("internal error"), and changes nothing it should not; read-only
commands work on a read-only copy of a game; the replay cache never hides a
damaged log. Also the recoveries the issue names: a send killed after storing
an event that carries more than its draft, a join killed after local.json, a
new killed after its genesis.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem import session
from pbem.cli import cli
from pbem.errors import EXIT_CODES
from pbem.fileio import DEFAULT_LOCK_WAIT, lock_wait_seconds
from pbem.store import GameDir
from tests.conftest import make_side, new_table
from tests.test_cli import plugin_env

ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0


def pbem(*args: object):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.output


def _under(path: object, top: Path) -> bool:
    try:
        return Path(os.fsdecode(path)).absolute().is_relative_to(top)
    except (TypeError, ValueError):
        return False


def deny_writes(monkeypatch, top: Path) -> None:
    """Make ``top`` read-only for this process: chmod when not root (root ignores modes),
    else every write below it fails with EACCES as the kernel would answer."""
    top = top.absolute()
    if not ROOT_USER:
        for path in [top, *top.rglob("*")]:
            if not path.is_symlink():
                path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        return
    real_open = os.open
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def denied(path):
        raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))

    def guarded_open(path, flags, *args, **kwargs):
        if flags & writing and _under(path, top):
            denied(path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", guarded_open)
    for name in ("mkdir", "unlink", "rmdir", "replace", "rename", "link"):
        real = getattr(os, name)

        def guarded(*args, _real=real, **kwargs):
            if any(_under(a, top) for a in args[:2] if isinstance(a, (str, os.PathLike))):
                denied(args[0])
            return _real(*args, **kwargs)
        monkeypatch.setattr(os, name, guarded)


@pytest.fixture
def played(tmp_path):
    t = new_table(tmp_path / "players")
    t.play("red", "advance 1", "pass")
    t.play("blue", "advance 2", "pass")
    return t


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


# -- read-only game directories ---------------------------------------------------------

@pytest.mark.parametrize("lock_file", ["kept", "absent"])
def test_read_only_commands_work_on_a_read_only_game_directory(played, monkeypatch, lock_file):
    gd = played.red.gd
    if lock_file == "absent":
        gd.lock_path.unlink()
    before = _tree(gd.path)
    deny_writes(monkeypatch, gd.path)
    try:
        for args in (["show"], ["options"], ["log"], ["verify"], ["audit"], ["report", "--format", "text"]):
            code, out = pbem(*args, "-g", gd.path)
            assert code == 0, (args, out)
        code, out = pbem("do", "-g", gd.path, "advance 1")  # a command that changes the game
        assert code == 12 and str(gd.path) in out and out.count("\n") == 1, out
        assert "permission denied" in out
    finally:
        if not ROOT_USER:
            for path in [gd.path, *gd.path.rglob("*")]:
                path.chmod(path.stat().st_mode | stat.S_IWUSR)
    assert _tree(gd.path) == before  # no replay cache, no lock file, nothing written


# -- full disk, file size limit ---------------------------------------------------------------

def test_a_file_size_limit_is_exit_12_and_the_same_send_then_completes(played, tmp_path):
    """RLIMIT_FSIZE in a real process (Python ignores SIGXFSZ, so writes fail with EFBIG)."""
    resource = pytest.importorskip("resource")
    gd = played.red.gd
    session.add_orders(played.red.seat(), ["advance 1", "pass"])
    before = _tree(gd.path)
    limit = min(len(before["vault/red.bin"]), len(before["events/000001.json"])) // 2

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = plugin_env(tmp_path)
    args = [sys.executable, "-m", "pbem", "send", "-g", str(gd.path)]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, preexec_fn=small_files)
    assert proc.returncode == 12, proc.stderr
    assert "file too large writing" in proc.stderr and str(gd.path) in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1
    assert _tree(gd.path) == {k: v for k, v in before.items() if k != "lock"} | {"lock": before.get("lock", b"")}
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert gd.event_count() == 5


# -- paths of the wrong kind ------------------------------------------------------------------

def test_an_outbox_that_is_a_file_is_refused_before_anything_is_signed(played):
    gd = played.red.gd
    session.add_orders(played.red.seat(), ["advance 1", "pass"])
    shutil.rmtree(gd.outbox_dir)
    gd.outbox_dir.write_text("not a directory")
    before = _tree(gd.path)
    code, out = pbem("send", "-g", gd.path)
    assert code == 12 and f"{gd.outbox_dir} is a file where pbem needs a directory" in out, out
    assert "nothing was signed" in out and out.count("\n") == 1
    assert _tree(gd.path) == before
    gd.outbox_dir.unlink()
    code, out = pbem("send", "-g", gd.path)
    assert code == 0, out


def test_an_event_file_replaced_by_a_directory_is_named(played):
    gd = played.red.gd
    for seq in (3, 0):
        path = gd.event_path(seq)
        data = path.read_bytes()
        path.unlink()
        path.mkdir()
        for command in ("show", "verify", "log"):
            code, out = pbem(command, "-g", gd.path)
            assert code == 12 and f"{path} is a directory where pbem expects a file" in out, (command, out)
        path.rmdir()
        path.write_bytes(data)
    shutil.rmtree(gd.events_dir)
    gd.events_dir.write_text("")
    code, out = pbem("verify", "-g", gd.path)
    assert code == 12 and f"{gd.events_dir} is a file where pbem expects a directory" in out, out


def test_keygen_with_an_unwritable_home_is_exit_12(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("PBEM_HOME", str(tmp_path / "a-file" / "pbem"))
    code, out = pbem("keygen")
    assert code == 12 and str(tmp_path / "a-file") in out and out.count("\n") == 1, out
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("PBEM_HOME", str(home))
    deny_writes(monkeypatch, home)
    try:
        code, out = pbem("keygen")
    finally:
        home.chmod(0o755)
    assert code == 12 and "permission denied" in out and str(home) in out and out.count("\n") == 1, out
    assert not list(home.iterdir())


def test_paths_that_are_not_utf8_are_refused_before_anything_is_written(played, tmp_path, monkeypatch):
    bad = str(tmp_path) + "/game-\udcff"  # the bytes b"game-\xff" as Python decodes them
    code, out = pbem("new", bad, "--rules", "race", "--scenario", "sprint", "--role", "red", "--opponent",
                     played.blue.identity.public_text, "-i", played.red.key_path)
    assert code == 12 and "not UTF-8" in out and "game-\\xff" in out and out.count("\n") == 1, out
    assert not [p for p in os.listdir(os.fsencode(tmp_path)) if b"\xff" in p]
    for args in (["show", "-g", bad], ["verify", bad], ["receive", "-g", played.blue.gd.path, bad]):
        code, out = pbem(*args)
        assert code == 12 and "not UTF-8" in out, (args, out)
    monkeypatch.setenv("PBEM_GAME", bad)
    code, out = pbem("show")
    assert code == 12 and "$PBEM_GAME" in out, out
    monkeypatch.delenv("PBEM_GAME")
    os.mkdir(bad)  # a working directory that is not UTF-8: the key's absolute path would be stored
    shutil.copy(played.red.key_path, Path(bad) / "red.key")
    monkeypatch.chdir(bad)
    code, out = pbem("new", "game", "--rules", "race", "--scenario", "sprint", "--role", "red", "--opponent",
                     played.blue.identity.public_text, "-i", "red.key")
    assert code == 12 and "identity key path" in out and "not UTF-8" in out, out
    assert sorted(os.listdir(".")) == ["red.key"]


# -- the replay cache never hides damage ----------------------------------------------------

def test_a_damaged_event_log_is_reported_although_a_replay_cache_exists(played):
    gd = played.red.gd
    assert (gd.path / "cache" / "red.bin").exists()
    code, _ = pbem("show", "-g", gd.path)
    assert code == 0
    last = gd.event_path(gd.event_count() - 1)
    data = last.read_bytes()
    last.unlink()  # the newest event lost: the log is shorter but still a valid game
    code, out = pbem("show", "-g", gd.path)
    assert code == 3 and "damaged" in out and "events 3-3 are missing" in out, out
    last.write_bytes(gd.event_path(1).read_bytes())  # another event where the newest was
    code, out = pbem("show", "-g", gd.path)
    assert code == 3 and "damaged" in out and str(last) in out, out
    last.write_bytes(data)
    code, out = pbem("show", "-g", gd.path)
    assert code == 0, out


# -- the lock ----------------------------------------------------------------------------------

def test_a_second_command_waits_then_exits_7_naming_the_directory(played, tmp_path, monkeypatch):
    monkeypatch.delenv("PBEM_LOCK_WAIT")
    assert lock_wait_seconds() == DEFAULT_LOCK_WAIT == 10
    monkeypatch.setenv("PBEM_LOCK_WAIT", "0.5")
    holder = tmp_path / "hold.py"
    holder.write_text(textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).parents[1])!r})
        from pbem.store import GameDir
        with GameDir({str(played.red.gd.path)!r}).lock(exclusive=False):
            print("locked", flush=True)
            time.sleep(20)
    """))
    proc = subprocess.Popen([sys.executable, str(holder)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        code, out = pbem("show", "-g", played.red.gd.path)  # readers share the lock
        assert code == 0, out
        start = time.monotonic()
        code, out = pbem("do", "-g", played.red.gd.path, "advance 1")
        assert code == 7 and "in use by another pbem process" in out and str(played.red.gd.path) in out, out
        assert time.monotonic() - start >= 0.45
    finally:
        proc.kill()
        proc.wait()
    assert (7, EXIT_CODES[7][1]) in EXIT_CODES and any(code == 12 for code, _ in EXIT_CODES)
    code, out = pbem("exit-codes")
    assert " 12  the file system refused" in out and "  7  the game directory is in use" in out


# -- recoveries the issue names ------------------------------------------------------------------

def test_a_send_killed_after_storing_an_event_with_more_actions_than_its_draft_is_sent_again(played):
    """The event a send signs may add deck messages (pbem.deck) after the draft's orders;
    killed before the draft was deleted, the retry said 'your draft was composed at event
    32 but the log is now at 33'. Here the stored event holds the draft's order and one
    more, as a deck message would add."""
    gd = played.red.gd
    seat = played.red.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    draft = (gd.drafts_dir / "red.json").read_bytes()
    sent = session.send(seat)
    stored = gd.event_path(sent.seqs[-1]).read_bytes()
    Path(sent.turn_file).unlink()
    short = session.read_draft(gd, "red", 0)
    assert not short.orders
    d = session.msgspec.json.decode(draft, type=session.Draft)
    session.write_draft(gd, "red", session.Draft(base=d.base, orders=d.orders[:1]))  # the draft's part
    code, out = pbem("send", "-g", gd.path)
    assert code == 0 and "nothing new to sign" in out, out
    assert session.parse_turn(Path(sent.turn_file).read_bytes()).events == [stored]
    assert not (gd.drafts_dir / "red.json").exists()


def test_a_join_killed_after_local_json_before_the_vault_is_finished_by_joining_again(tmp_path):
    """What an earlier pbem left (events and local.json, no vault): join refused it
    ('already holds a game') and send said the vault was lost. Joining again finishes it."""
    red, blue = make_side(tmp_path, "red"), make_side(tmp_path, "blue")
    sent = session.new_game(red.gd.path, "race", "sprint", "red", red.identity, red.key_path,
                            blue.identity.public_text, orders=["setup speed 2"])
    invitation = Path(sent.turn_file)
    blue.gd.create_layout()
    blue.gd.append(0, red.gd.event_path(0).read_bytes())
    blue.gd.write_local(session.LocalConfig(role="blue", identity=str(blue.key_path), rules="race"))
    code, out = pbem("join", invitation, blue.gd.path, "--order", "setup speed 3", "-i", blue.key_path)
    assert code == 0, out
    assert blue.gd.event_count() == 2 and (blue.gd.vault_dir / "blue.bin").exists()
    code, out = pbem("join", invitation, blue.gd.path, "--order", "setup speed 3", "-i", blue.key_path)
    assert code == 0 and "nothing new to sign" in out, out  # the same answer again, not a second one
    assert blue.gd.event_count() == 2
    code, out = pbem("receive", "-g", red.gd.path, next(blue.gd.outbox_dir.glob("*-000001.pbem")))
    assert code == 0, out


def test_new_run_again_after_its_genesis_writes_the_same_invitation(tmp_path):
    red, blue = make_side(tmp_path, "red"), make_side(tmp_path, "blue")
    args = ["new", red.gd.path, "--rules", "race", "--scenario", "sprint", "--role", "red", "--opponent",
            blue.identity.public_text, "--order", "setup speed 2", "-i", red.key_path]
    code, out = pbem(*args)
    assert code == 0, out
    (invitation,) = red.gd.outbox_dir.glob("*.pbem")
    first = invitation.read_bytes()
    invitation.unlink()  # killed before the invitation was written, or it was lost
    code, out = pbem(*args)
    assert code == 0 and "nothing new to sign" in out, out
    assert invitation.read_bytes() == first
    code, out = pbem("new", red.gd.path, "--rules", "race", "--scenario", "standard", "--role", "red",
                     "--opponent", blue.identity.public_text, "-i", red.key_path)
    assert code == 3 and "already holds a game" in out, out
    assert GameDir(red.gd.path).event_count() == 1
