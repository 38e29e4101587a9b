"""Deterministic fault injection at every write point of every state-changing command
(issue 28). pbem.fileio counts its write points (mkdir, create, write, fsync, link,
rename, unlink, fsync-dir); a clean run of each command lists them, then:

- kill: a forked child runs the command and SIGKILLs itself at point N (a write
  first writes half its bytes), for every N in turn;
- fail: the command runs in this process and point N raises ENOSPC (a full disk),
  for every N in turn; it must exit 0 (only the replay cache was refused) or 12
  naming a path, never 1.

After each fault: every game directory verifies, the vault holds the secret of every
stored event of its player, the same command run again finishes the job (``do``
may answer 5 when its order was already added; ``keygen`` 2 when its key was
already written, saying --force), then the players exchange what is owed, play on,
end with identical logs, and no turn file ever written holds an event other than
the one stored for its seq (no second, different signature).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pbem import fileio, rulesapi, session
from pbem import identity as identity_mod
from pbem.fileio import FaultPlan
from pbem.identity import load_identity
from pbem.store import GameDir
from tests import faultkit
from tests.conftest import PASSPHRASE, make_side, new_table
from tests.race import rules as race

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forks real processes (POSIX)")


@dataclass(frozen=True)
class Command:
    name: str
    argv: tuple[str, ...]                 # {root} is the copy of the players' files
    build: Callable[[Path], None]
    retry_codes: tuple[int, ...] = (0,)   # the same command run again after the fault

    def args(self, root: Path) -> list[str]:
        return [a.format(root=root) for a in self.argv]


def _keys(root: Path) -> None:
    make_side(root, "red")
    make_side(root, "blue")


def _invited(root: Path) -> None:
    red, _ = make_side(root, "red"), make_side(root, "blue")
    blue_pub = (root / "blue.key.pub").read_text().strip()
    sent = session.new_game(red.gd.path, "race", "sprint", "red", red.identity, red.key_path, blue_pub,
                            orders=["setup speed 2"])
    (root / "inbox").mkdir()
    (root / "inbox" / "invitation.pbem").write_bytes(Path(sent.turn_file).read_bytes())


def _table(root: Path) -> None:
    new_table(root)


def _drafted(root: Path) -> None:
    t = new_table(root)
    session.add_orders(t.red.seat(), ["advance 1", "pass"])


def _dashed(root: Path) -> None:
    t = new_table(root)
    session.add_orders(t.red.seat(), ["dash"])


def _dash_sent(root: Path) -> None:
    """Red's dash (asking blue's entropy for a die) is in blue's inbox."""
    t = new_table(root)
    seat = t.red.seat()
    session.add_orders(seat, ["dash"])
    (root / "inbox").mkdir()
    (root / "inbox" / "turn.pbem").write_bytes(Path(session.send(seat).turn_file).read_bytes())


def _answered(root: Path) -> None:
    """Blue's automatic answer to red's dash is in red's inbox."""
    t = new_table(root)
    seat = t.red.seat()
    session.add_orders(seat, ["dash"])
    red_turn = Path(session.send(seat).turn_file).read_bytes()
    answer = session.receive(t.blue.seat(), [("red", red_turn)]).auto_reply
    (root / "inbox").mkdir()
    (root / "inbox" / "turn.pbem").write_bytes(Path(answer.turn_file).read_bytes())


COMMANDS = (
    Command("new", ("new", "{root}/red", "--rules", "race", "--scenario", "sprint", "--role", "red",
                    "--opponent", "{root}/blue.key.pub", "--order", "setup speed 2", "-i", "{root}/red.key"),
            _keys),
    Command("join", ("join", "{root}/inbox/invitation.pbem", "{root}/blue", "--order", "setup speed 3",
                     "-i", "{root}/blue.key"), _invited),
    Command("do", ("do", "-g", "{root}/red", "advance 1"), _table, (0, 5)),
    Command("undo", ("undo", "-g", "{root}/red"), _drafted),
    Command("send", ("send", "-g", "{root}/red"), _dashed),
    Command("receive", ("receive", "-g", "{root}/blue", "{root}/inbox/turn.pbem"), _dash_sent),
    Command("receive-answer", ("receive", "-g", "{root}/red", "{root}/inbox/turn.pbem"), _answered),
    Command("send-since", ("send", "--since", "0", "-g", "{root}/red", "-o", "{root}/resend.pbem"), _table),
    Command("vault-backup", ("vault", "backup", "{root}/vault-copy.bin", "-g", "{root}/red"), _table),
    Command("keygen", ("keygen", "-o", "{root}/third.key", "--name", "third"), _keys, (0, 2)),
)
BY_NAME = {c.name: c for c in COMMANDS}
#: Events played after each kill (each player then opens the entropy it committed); after
#: a full disk only in the slow suite (the vault check covers the secrets there).
PLAY_ON = 1
SLOW = os.environ.get("PBEM_SLOW") == "1"


@dataclass
class Base:
    command: Command
    root: Path
    points: list[str]


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> dict[str, Base]:
    """Each command's starting files, and the write points of a clean run of it."""
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        rulesapi.register(race.RULES)
        mp.setattr(identity_mod, "SCRYPT_N", 1 << 10)
        mp.setenv("PBEM_PASSPHRASE", PASSPHRASE)
        mp.setenv("PBEM_LOCK_WAIT", "5")
        # As conftest gives each test: an existing $PBEM_HOME of its own ('new' and 'join' list games there).
        mp.setenv("PBEM_HOME", str(tmp_path_factory.mktemp("pbem-home")))
        for command in COMMANDS:
            root = tmp_path_factory.mktemp(f"base-{command.name}")
            command.build(root)
            clean = faultkit.copy(root, tmp_path_factory.mktemp(f"clean-{command.name}") / "root")
            log = clean.parent / "points.log"
            code = faultkit.run(command.args(clean), plan=FaultPlan(log=str(log)), output=clean.parent / "out")
            assert code == 0, (clean.parent / "out").read_text()
            points = log.read_text().replace(f"{clean}/", "").splitlines()
            out[command.name] = Base(command, root, points)
    return out


def _check_and_finish(base: Base, root: Path, what: str, play_on: int) -> None:
    """Everything that must hold after a fault at one point, then the retry and play on."""
    command = base.command
    for role in faultkit.ROLES:
        faultkit.check_game(root, role)
    for turn in root.rglob("*.pbem"):  # a turn file is whole or absent
        if not turn.name.startswith(fileio.TMP_PREFIX):
            session.parse_turn(turn.read_bytes(), str(turn))
    code, out = faultkit.cli_run(*command.args(root))
    assert code in command.retry_codes, f"{what}: the retry exits {code}: {out}"
    if command.name == "keygen":
        assert load_identity(root / "third.key", PASSPHRASE).name == "third"
        assert code == 0 or "--force" in out
        return
    if command.name == "vault-backup":
        assert (root / "vault-copy.bin").read_bytes() == (root / "red" / "vault" / "red.bin").read_bytes()
    for role in faultkit.ROLES:
        gd = GameDir(root / role)
        if gd.exists():
            assert not [p for p in gd.events_dir.iterdir() if p.name.startswith(fileio.TMP_PREFIX)], \
                f"{what}: temp files left in {role}/events after the retry"
    faultkit.settle(root, play_on=play_on)


def _trials(bases: dict[str, Base]) -> list[tuple[str, int]]:
    return [(name, n) for name, base in bases.items() for n in range(1, len(base.points) + 1)]


@pytest.fixture
def no_fsync(monkeypatch):
    """fsync only matters for power loss; these faults kill or fail processes, whose
    written pages the kernel keeps. Skipping it (points are still counted) halves the time."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)


def test_every_command_has_write_points_and_writes_the_vault_before_its_event(bases):
    assert all(base.points for base in bases.values())
    send = bases["send"].points
    vault_at = next(i for i, p in enumerate(send) if p.startswith("rename red/vault/red.bin"))
    event_at = next(i for i, p in enumerate(send) if p.startswith("link red/events/000002.json"))
    turn_at = next(i for i, p in enumerate(send) if p.startswith("rename red/outbox/"))
    assert vault_at < event_at < turn_at
    join = bases["join"].points
    assert next(i for i, p in enumerate(join) if p.startswith("rename blue/vault/")) < \
        next(i for i, p in enumerate(join) if p.startswith("rename blue/local.json")) < \
        next(i for i, p in enumerate(join) if p.startswith("link blue/events/000000.json"))
    kinds = {p.split()[0] for base in bases.values() for p in base.points}
    assert kinds >= {"mkdir", "create", "write", "fsync", "link", "rename", "unlink", "fsync-dir"}


def test_a_kill_at_every_write_point_of_every_command_loses_nothing_and_the_retry_finishes(
        bases, tmp_path, no_fsync):
    def trial(item: tuple[int, str, int]) -> str | None:
        i, name, n = item
        base = bases[name]
        root = faultkit.copy(base.root, tmp_path / f"kill-{i:03d}")
        what = f"{name} killed at point {n}/{len(base.points)} ({base.points[n - 1]})"
        code = faultkit.run(base.command.args(root), plan=FaultPlan("kill", n))
        try:
            assert code == -9, f"{what}: not killed (exit {code})"
            _check_and_finish(base, root, what, PLAY_ON)
        except AssertionError as exc:
            return str(exc)
        return None

    trials = [(i, name, n) for i, (name, n) in enumerate(_trials(bases))]
    failures = faultkit.in_workers(trial, trials)
    print(f"{len(trials)} kills over {len(bases)} commands: "
          + ", ".join(f"{name} {len(base.points)}" for name, base in bases.items()))
    assert len(trials) > 150
    assert not failures, f"{len(failures)} of {len(trials)} kills failed:\n" + "\n".join(failures)


def test_a_full_disk_at_every_write_point_of_every_command_is_exit_12_and_the_retry_finishes(
        bases, tmp_path, no_fsync):
    def trial(item: tuple[int, str, int]) -> str | None:
        i, name, n = item
        base = bases[name]
        root = faultkit.copy(base.root, tmp_path / f"fail-{i:03d}")
        what = f"{name} failed at point {n}/{len(base.points)} ({base.points[n - 1]})"
        fileio.FAULTS = FaultPlan("fail", n)  # (in a worker process of its own)
        try:
            code, out = faultkit.cli_run(*base.command.args(root))
        finally:
            fileio.FAULTS = None
        try:
            assert code in (0, 12), f"{what}: exit {code}: {out}"
            if code == 12:
                assert "no space left on the device" in out and str(root) in out and out.count("\n") == 1, out
            else:  # best effort: the replay cache, and the list of games in $PBEM_HOME (the one
                # absolute path among the points: the game's own are relative to its root)
                assert "/cache" in base.points[n - 1] or " /" in base.points[n - 1], \
                    f"{what}: exit 0 although a write failed"
            _check_and_finish(base, root, what, PLAY_ON if SLOW else 0)
        except AssertionError as exc:
            return str(exc)
        return None

    trials = [(i, name, n) for i, (name, n) in enumerate(_trials(bases))]
    failures = faultkit.in_workers(trial, trials)
    assert not failures, f"{len(failures)} of {len(trials)} full disks failed:\n" + "\n".join(failures)


# -- a lost automatic answer carrying forced orders (issue 21 point 5, decision 17) --------

def _blue_forced(monkeypatch, *, act: bool) -> None:
    """Blue's steps declared forced (``Rules.forced_order``) as a rules module would: its
    move ('advance 1') and, with ``act``, its act ('pass'), each then its only legal order."""
    real_legal = type(race.RULES).legal_orders

    def forced_order(self, state, role, ctx):
        if role != "blue" or state.turn != "blue":
            return None
        return {"move": "advance 1", "act": "pass" if act else None}.get(state.phase)

    def legal_orders(self, state, role, ctx):
        order = forced_order(self, state, role, ctx)
        return [order] if order else real_legal(self, state, role, ctx)

    monkeypatch.setattr(type(race.RULES), "forced_order", forced_order, raising=False)
    monkeypatch.setattr(type(race.RULES), "legal_orders", legal_orders)


def _red_moved(root: Path) -> None:
    """Red's 'advance 1', 'pass' is in blue's inbox; the decision passes to blue."""
    t = new_table(root)
    seat = t.red.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    (root / "inbox").mkdir()
    (root / "inbox" / "turn.pbem").write_bytes(Path(session.send(seat).turn_file).read_bytes())


def _points(root: Path, tmp: Path, argv: list[str]) -> list[str]:
    """The write points of a clean run of ``pbem ARGV`` on a copy of ``root``."""
    clean = faultkit.copy(root, tmp / "root")
    log = tmp / "points.log"
    code = faultkit.run([a.format(root=clean) for a in argv], plan=FaultPlan(log=str(log)), output=tmp / "out")
    assert code == 0, (tmp / "out").read_text()
    return log.read_text().replace(f"{clean}/", "").splitlines()


def _turn_missing_window(points: list[str], role: str, seq: int) -> range:
    """Kill points (1-based) after event ``seq`` is stored and up to the rename of its turn
    file: killed there, the event is signed and stored but the opponent has no file of it."""
    linked = next(i for i, p in enumerate(points, 1) if p.startswith(f"link {role}/events/{seq:06d}.json"))
    renamed = next(i for i, p in enumerate(points, 1)
                   if p.startswith(f"rename {role}/outbox/") and p.endswith(f"-{seq:06d}.pbem"))
    return range(linked + 1, renamed + 1)


def _outbox_turn(gd: GameDir, seq: int) -> list[Path]:
    return list(gd.outbox_dir.glob(f"*-{seq:06d}.pbem")) if gd.outbox_dir.exists() else []


def test_receive_killed_after_storing_a_forced_automatic_answer_writes_it_when_run_again(
        tmp_path, monkeypatch, no_fsync):
    """Blue's automatic answer is red's turn passed on to blue's forced 'advance 1', 'pass'
    (Rules.forced_order): killed after that event is stored and before its turn file,
    'pbem receive' of the same file again writes the stored event's own signed bytes as
    a turn file (so 'pbem watch' mails it), never a second signature; then play goes on."""
    _blue_forced(monkeypatch, act=True)
    base = tmp_path / "base"
    base.mkdir()
    _red_moved(base)
    argv = ["receive", "-g", "{root}/blue", "{root}/inbox/turn.pbem"]
    points = _points(base, tmp_path / "clean", argv)
    clean = GameDir(tmp_path / "clean" / "root" / "blue")
    assert session.load_public(clean).history[3].actions == ("advance 1", "pass")  # the forced answer
    window = _turn_missing_window(points, "blue", 3)
    assert len(window) >= 3, points
    for n in window:
        root = faultkit.copy(base, tmp_path / f"kill-{n:03d}")
        what = f"receive killed at point {n}/{len(points)} ({points[n - 1]})"
        blue = GameDir(root / "blue")
        assert faultkit.run([a.format(root=root) for a in argv], plan=FaultPlan("kill", n)) == -9, what
        assert blue.event_count() == 4 and not _outbox_turn(blue, 3), f"{what}: not the state this test is about"
        stored = blue.read_event(3)
        code, out = faultkit.cli_run("receive", "-g", blue.path, root / "inbox" / "turn.pbem")
        assert code == 0, f"{what}: the retry exits {code}: {out}"
        (turn,) = _outbox_turn(blue, 3)
        assert session.parse_turn(turn.read_bytes()).events == [stored], what
        assert "automatically" in out and str(turn) in out, f"{what}: {out}"
        assert blue.read_event(3) == stored
        faultkit.settle(root, play_on=1)


def test_receive_again_never_writes_a_persons_own_event_killed_before_its_turn_file(
        tmp_path, monkeypatch, no_fsync):
    """Blue's move is forced but its act ('attack' or 'pass') is a choice, so nothing is
    answered automatically: blue gives 'advance 1', 'pass' itself, the very texts a forced
    answer could hold. 'pbem send' killed after storing that event and before its turn
    file: 'pbem receive' of red's file again writes nothing (the event is a person's,
    recomputed from the log, not read from its text); 'pbem send' again writes it."""
    _blue_forced(monkeypatch, act=False)
    base = tmp_path / "base"
    base.mkdir()
    _red_moved(base)
    code, out = faultkit.cli_run("receive", "-g", base / "blue", base / "inbox" / "turn.pbem")
    assert code == 0 and "automatically" not in out, out
    code, out = faultkit.cli_run("do", "-g", base / "blue", "advance 1", "pass")
    assert code == 0, out
    argv = ["send", "-g", "{root}/blue"]
    points = _points(base, tmp_path / "clean", argv)
    window = _turn_missing_window(points, "blue", 3)
    assert len(window) >= 3, points
    for n in window:
        root = faultkit.copy(base, tmp_path / f"kill-{n:03d}")
        what = f"send killed at point {n}/{len(points)} ({points[n - 1]})"
        blue = GameDir(root / "blue")
        assert faultkit.run([a.format(root=root) for a in argv], plan=FaultPlan("kill", n)) == -9, what
        assert blue.event_count() == 4 and not _outbox_turn(blue, 3), f"{what}: not the state this test is about"
        stored = blue.read_event(3)
        code, out = faultkit.cli_run("receive", "-g", blue.path, root / "inbox" / "turn.pbem")
        assert code == 0 and not _outbox_turn(blue, 3), f"{what}: receive wrote a person's event: {out}"
        code, out = faultkit.cli_run("send", "-g", blue.path)
        assert code == 0 and "nothing new to sign" in out, f"{what}: {out}"
        (turn,) = _outbox_turn(blue, 3)
        assert session.parse_turn(turn.read_bytes()).events == [stored], what
        faultkit.settle(root, play_on=1)
