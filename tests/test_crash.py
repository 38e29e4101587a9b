"""Crash safety of 'pbem send' and 'pbem receive' (issue 9, robustness; DESIGN 2).

Real ``python -m pbem`` subprocesses (the race game installed as a plugin,
tests.test_cli.plugin_env) are killed with SIGKILL, then the game directories
are checked and the command is retried.

How the crash points are produced: the child's PYTHONPATH starts with a
directory holding CRASH_HOOK as ``sitecustomize.py``. It wraps every os
function pbem changes files with (open for writing, write, fchmod, fsync,
link, unlink, replace, rename, mkdir, rmdir) and counts the calls; with
``PBEM_CRASH_AT=N`` the process kills itself with SIGKILL just before the
N-th one (a write first writes half its bytes, so the kill leaves a
half-written file). A clean run with ``PBEM_CRASH_LOG`` lists the points of
a command, so the quick test kills it once at every one of them,
deterministically. The slow test (PBEM_SLOW=1) makes 200 kills: every point
again, then random points and SIGKILLs sent from outside after a random delay.

After every kill:
- ``pbem verify`` exits 0 on both players' directories;
- the events held before are byte-identical, and only complete events of a
  clean run were added; every other file (vault, cache, draft, turn files)
  is whole, old or new; half-written bytes exist only in ``.tmp-*`` files;
- re-running the same command exits 0, removes the temp files of events/ and
  ends where a clean run ends; an event stored before the kill is the one
  finally sent, never re-signed differently;
- the turn files in the outboxes bring both players to identical logs, and
  they play on (their vaults still open the entropy they committed).
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from pbem import identity as identity_mod
from pbem import rulesapi, session, snapshot, vault
from pbem.cli import cli
from pbem.fileio import TMP_PREFIX
from pbem.game import Replay
from pbem.identity import load_identity
from pbem.rulesapi import DICE
from pbem.store import GameDir
from pbem.turnfile import parse_turn
from tests.conftest import PASSPHRASE, new_table
from tests.race import rules as race
from tests.test_cli import plugin_env

CRASH_HOOK = r'''
"""Crash injection for pbem test subprocesses (written by tests/test_crash.py)."""
import os
import signal

_AT = int(os.environ.get("PBEM_CRASH_AT") or 0)
_LOG = os.environ.get("PBEM_CRASH_LOG")
if _AT or _LOG:
    _NAMES = ("open", "write", "fchmod", "fsync", "link", "unlink", "replace", "rename", "mkdir", "rmdir")
    _real = {name: getattr(os, name) for name in _NAMES}
    _WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    _log_fd = _real["open"](_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if _LOG else -1
    _count = 0

    def _reached(name, args):
        """Count one crash point; True if the process must die here."""
        global _count
        _count += 1
        if _log_fd >= 0:
            paths = " ".join(os.fspath(a) for a in args if isinstance(a, (str, os.PathLike)))
            _real["write"](_log_fd, f"{name} {paths}\n".encode())
        return _count == _AT

    def _die():
        os.kill(os.getpid(), signal.SIGKILL)

    def _wrap(name):
        real = _real[name]

        def crash_point(*args, **kwargs):
            if _reached(name, args):
                _die()
            return real(*args, **kwargs)
        return crash_point

    def _open(path, flags, *args, **kwargs):
        if flags & _WRITING and _reached("open", (path,)):
            _die()
        return _real["open"](path, flags, *args, **kwargs)

    def _write(fd, data):
        if fd != _log_fd and _reached("write", ()):
            _real["write"](fd, bytes(data)[: len(data) // 2])
            _die()
        return _real["write"](fd, data)

    for _name in _NAMES[2:]:
        setattr(os, _name, _wrap(_name))
    os.open = _open
    os.write = _write
'''

SLOW_SEED = 9
SLOW_KILLS = 200
PLAY_ON_EVENTS = 2
PREFERRED_ORDERS = ("defend dodge", "advance 1", "pass")
_EVENT = re.compile(r"^\d{6}\.json$")


# -- the situations a command is killed in ------------------------------------------

@dataclass(frozen=True)
class Scenario:
    name: str
    actor: str              # the player whose directory the command changes
    argv: tuple[str, ...]   # pbem arguments; {root} is the copy of the two players' files


def _build_send(root: Path) -> None:
    """Red has a draft (a dash, which asks blue's entropy for a die) and sends it."""
    t = new_table(root)
    session.add_orders(t.red.seat(), ["dash"])


def _build_receive(root: Path) -> None:
    """Blue receives red's dash: appends it and answers the die automatically."""
    t = new_table(root)
    seat = t.red.seat()
    session.add_orders(seat, ["dash"])
    _inbox(root, Path(session.send(seat).turn_file).read_bytes())


def _build_receive_answer(root: Path) -> None:
    """Red receives blue's automatic answer: its die is rolled, nothing is sent."""
    t = new_table(root)
    seat = t.red.seat()
    session.add_orders(seat, ["dash"])
    red_turn = Path(session.send(seat).turn_file).read_bytes()
    answer = session.receive(t.blue.seat(), [("red", red_turn)]).auto_reply
    _inbox(root, Path(answer.turn_file).read_bytes())


def _inbox(root: Path, turn: bytes) -> None:
    (root / "inbox").mkdir()
    (root / "inbox" / "turn.pbem").write_bytes(turn)


SCENARIOS = (
    (Scenario("send", "red", ("send", "-g", "{root}/red")), _build_send),
    (Scenario("receive", "blue", ("receive", "-g", "{root}/blue", "{root}/inbox/turn.pbem")), _build_receive),
    (Scenario("receive-answer", "red", ("receive", "-g", "{root}/red", "{root}/inbox/turn.pbem")),
     _build_receive_answer),
)


@dataclass
class Prepared:
    scenario: Scenario
    base: Path
    points: list[str]        # the crash points of a clean run, in order
    clean: dict[str, int]    # events each player holds after a clean run


@pytest.fixture(scope="module")
def crash_env(tmp_path_factory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("crash-env")
    hook = tmp / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(CRASH_HOOK)
    env = plugin_env(tmp)
    env["PYTHONPATH"] = os.pathsep.join([str(hook), env["PYTHONPATH"]])
    env["PBEM_LOCK_WAIT"] = "5"
    for name in ("PBEM_CRASH_AT", "PBEM_CRASH_LOG", "PBEM_GAME", "PBEM_HOME"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def prepared(tmp_path_factory, crash_env) -> dict[str, Prepared]:
    """Each scenario's starting directories, and its crash points from a clean run."""
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        rulesapi.register(race.RULES)
        mp.setattr(identity_mod, "SCRYPT_N", 1 << 10)
        mp.setenv("PBEM_PASSPHRASE", PASSPHRASE)
        for scenario, build in SCENARIOS:
            base = tmp_path_factory.mktemp(f"base-{scenario.name}")
            build(base)
            clean = _copy(base, tmp_path_factory.mktemp(f"clean-{scenario.name}") / "game")
            log = clean.parent / "points.log"
            proc = _pbem(scenario, clean, dict(crash_env, PBEM_CRASH_LOG=str(log)))
            assert proc.returncode == 0, proc.stderr
            points = log.read_text().replace(f"{clean}/", "").splitlines()
            assert any(p.startswith(f"link {scenario.actor}/events/") for p in points), points
            out[scenario.name] = Prepared(scenario, base, points,
                                          {role: GameDir(clean / role).event_count() for role in ("red", "blue")})
    return out


def _copy(base: Path, dest: Path) -> Path:
    shutil.copytree(base, dest, symlinks=True)
    return dest


def _pbem(scenario: Scenario, root: Path, env: dict[str, str], *, kill_after: float | None = None):
    args = [sys.executable, "-m", "pbem", *(a.format(root=root) for a in scenario.argv)]
    if kill_after is None:
        return subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=kill_after)  # the random kill time itself, not a synchronisation
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    return proc


# -- one kill and what must hold after it ------------------------------------------------

@dataclass(frozen=True)
class Kill:
    scenario: str
    point: int = 0            # die just before this crash point (deterministic)
    after: float | None = None  # or: SIGKILL from outside after this many seconds

    def describe(self, prep: Prepared) -> str:
        if self.after is not None:
            return f"{self.scenario}: SIGKILL after {self.after * 1000:.0f} ms"
        return f"{self.scenario}: killed before point {self.point}/{len(prep.points)} " \
               f"({prep.points[self.point - 1]})"


def _kill(kill: Kill, prep: Prepared, root: Path, env: dict[str, str]) -> int | None:
    """Run the scenario's command in ``root`` and kill it; returns its exit status."""
    if kill.after is not None:
        return _pbem(prep.scenario, root, env, kill_after=kill.after).returncode
    return _pbem(prep.scenario, root, dict(env, PBEM_CRASH_AT=str(kill.point))).returncode


def _cli(*args) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, f"pbem {' '.join(map(str, args))}: exit {result.exit_code}: {result.output}"
    return result.output


def _files(gd: GameDir) -> dict[str, bytes]:
    return {str(p.relative_to(gd.path)): p.read_bytes() for p in sorted(gd.path.rglob("*"))
            if p.is_file() and p.name != "lock"}


def _identity(root: Path, role: str):
    return load_identity(root / f"{role}.key", PASSPHRASE)


def check_after_kill(prep: Prepared, root: Path, before: dict[str, dict[str, bytes]]) -> None:
    """What must hold on disk right after the kill, before anything is retried."""
    for role in ("red", "blue"):
        gd = GameDir(root / role)
        _cli("verify", gd.path)
        old = [v for k, v in sorted(before[role].items()) if k.startswith("events/")]
        events = gd.read_events()
        assert events[:len(old)] == old, f"{role}: an event held before the kill changed"
        assert len(old) <= len(events) <= prep.clean[role], f"{role}: holds {len(events)} events"
        names = [p.name for p in gd.events_dir.iterdir()]
        assert all(_EVENT.match(n) or n.startswith(TMP_PREFIX) for n in names), names
        if role != prep.scenario.actor:
            assert _files(gd) == before[role], f"{role}: the other player's directory changed"
            continue
        ident = _identity(root, role)
        replay = session.load_public(gd)
        data = vault.load(gd.vault_dir / f"{role}.bin", ident, replay.game_hex, role)
        assert all(data.entropy_for(i.seq) is not None for i in replay.history if i.author == role), \
            f"{role}: the vault lost the entropy secret of a stored event"
        cache = gd.path / "cache" / f"{role}.bin"
        if cache.exists():
            base = Replay(replay.rules, role=role, known=data.known_values())
            base.apply_stored(gd.event_path(0).read_bytes())
            assert snapshot.restore(gd, base, ident, len(events)) is not None, "the replay cache is damaged"
        for draft in gd.drafts_dir.glob("*.json"):
            msgspec.json.decode(draft.read_bytes(), type=session.Draft)
        for turn in gd.outbox_dir.glob("*.pbem"):
            parse_turn(turn.read_bytes(), str(turn))
        for path in gd.path.rglob("*"):
            if path.is_file() and not path.name.startswith(TMP_PREFIX) and path.name != "lock":
                assert path.stat().st_size > 0, f"{path} is empty"


def retry_and_complete(prep: Prepared, root: Path, after_kill: dict[str, list[bytes]]) -> None:
    """Re-run the command, pass the turn files on, play on: both logs end identical."""
    actor = GameDir(root / prep.scenario.actor)
    _cli(*(a.format(root=root) for a in prep.scenario.argv))
    assert not [p for p in actor.events_dir.iterdir() if p.name.startswith(TMP_PREFIX)], \
        "temp files left in events/ after the retry"
    assert actor.event_count() == prep.clean[prep.scenario.actor], "the retry did not finish the command"
    stored = actor.read_events()
    assert stored[:len(after_kill[prep.scenario.actor])] == after_kill[prep.scenario.actor], \
        "an event stored before the kill was signed again differently"
    _deliver_outboxes(root)
    for _ in range(PLAY_ON_EVENTS):
        _play_one_event(root)
    red, blue = GameDir(root / "red"), GameDir(root / "blue")
    assert red.read_events() == blue.read_events(), "the players' logs differ"
    assert red.read_events()[:len(stored)] == stored
    _cli("verify", red.path)


def _deliver_outboxes(root: Path) -> None:
    """Whoever is ahead has the turn file of its newest event in its outbox; deliver it."""
    for _ in range(4):
        red, blue = GameDir(root / "red"), GameDir(root / "blue")
        if red.event_count() == blue.event_count():
            return
        ahead, behind = (red, blue) if red.event_count() > blue.event_count() else (blue, red)
        replay = session.load_public(ahead)
        turn = ahead.outbox_dir / f"{replay.game_hex[:8]}-{replay.seq:06d}.pbem"
        assert turn.exists(), f"{ahead.path.name} holds event {replay.seq} but no turn file for it " \
                              f"({turn.name}): the opponent can never receive it"
        _cli("receive", "-g", behind.path, turn)
    raise AssertionError("the players' logs do not converge")


def _play_one_event(root: Path) -> None:
    decision = session.load_public(GameDir(root / "red")).pending()
    if decision is None:
        return
    me = decision.role
    gd = GameDir(root / me)
    seat = session.load_seat(gd, _identity(root, me))
    if decision.kind != DICE or session.legal_orders(seat):
        while legal := session.legal_orders(seat):
            session.add_orders(seat, [next(o for o in PREFERRED_ORDERS if o in legal)])
    sent = session.send(seat)
    other = "blue" if me == "red" else "red"
    _cli("receive", "-g", root / other, sent.turn_file)
    _deliver_outboxes(root)


def run_kills(kills: list[Kill], prepared: dict[str, Prepared], work: Path,
              env: dict[str, str]) -> tuple[list[str], int]:
    """Kill the commands in worker threads; check and complete each game in this
    thread as soon as its command is dead. Returns one line per failed kill, and
    how many commands died by SIGKILL (a random delay may outlast the command)."""
    roots = [_copy(prepared[k.scenario].base, work / f"kill-{i:03d}") for i, k in enumerate(kills)]
    befores = [{role: _files(GameDir(root / role)) for role in ("red", "blue")} for root in roots]
    failures = []
    killed = 0
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        futures = {pool.submit(_kill, kill, prepared[kill.scenario], root, env): i
                   for i, (kill, root) in enumerate(zip(kills, roots))}
        for future in as_completed(futures):
            i = futures[future]
            kill, root, prep = kills[i], roots[i], prepared[kills[i].scenario]
            killed += future.result() == -signal.SIGKILL
            try:
                if kill.after is None:
                    assert future.result() == -signal.SIGKILL, \
                        f"not killed (exit {future.result()}): the crash point was not reached"
                check_after_kill(prep, root, befores[i])
                after_kill = {role: GameDir(root / role).read_events() for role in ("red", "blue")}
                retry_and_complete(prep, root, after_kill)
            except AssertionError as exc:
                failures.append((i, f"{kill.describe(prep)}: {exc}".splitlines()[0]))
            shutil.rmtree(root)
    return [line for _, line in sorted(failures)], killed


# -- the tests ----------------------------------------------------------------------------

def test_the_hook_lists_the_writes_of_send_and_receive_in_order(prepared):
    send = prepared["send"].points
    kinds = [p.split()[0] for p in send]
    vault_at = next(i for i, p in enumerate(send) if p.startswith("replace red/vault/"))
    event_at = next(i for i, p in enumerate(send) if p.startswith("link red/events/"))
    turn_at = next(i for i, p in enumerate(send) if p.startswith("replace red/outbox/"))
    assert vault_at < event_at < turn_at  # DESIGN: the vault before the event, the turn file last
    assert {"open", "write", "fsync", "link", "unlink", "replace"} <= set(kinds)
    assert prepared["receive"].clean == {"red": 3, "blue": 4}  # event 2 and the automatic answer 3
    assert prepared["receive-answer"].clean == {"red": 4, "blue": 4}


def test_killing_send_and_receive_at_every_crash_point_loses_nothing_and_retry_completes(
        prepared, crash_env, tmp_path):
    kills = [Kill(name, point) for name, prep in prepared.items() for point in range(1, len(prep.points) + 1)]
    failures, killed = run_kills(kills, prepared, tmp_path, crash_env)
    assert killed == len(kills) > 60  # (73 since directories that exist are no longer made again)
    assert not failures, f"{len(failures)} of {len(kills)} kills failed:\n" + "\n".join(failures)


@pytest.mark.slow
def test_two_hundred_kills_at_random_points(prepared, crash_env, tmp_path):
    """Issue 9's 200 kills: every crash point again, then random points and SIGKILLs
    sent from outside after a random delay around a command's run time."""
    rng = random.Random(SLOW_SEED)
    kills = [Kill(name, point) for name, prep in prepared.items() for point in range(1, len(prep.points) + 1)]
    start = time.monotonic()
    _pbem(prepared["receive"].scenario, _copy(prepared["receive"].base, tmp_path / "timing"), crash_env)
    runtime = time.monotonic() - start
    names = sorted(prepared)
    while len(kills) < SLOW_KILLS:
        name = rng.choice(names)
        if rng.random() < 0.5:
            kills.append(Kill(name, rng.randint(1, len(prepared[name].points))))
        else:
            kills.append(Kill(name, after=rng.uniform(0.5, 1.1) * runtime))
    failures, killed = run_kills(kills, prepared, tmp_path, crash_env)
    print(f"{killed} of {len(kills)} commands died by SIGKILL")
    assert killed >= 0.75 * SLOW_KILLS
    assert not failures, f"{len(failures)} of {len(kills)} kills failed:\n" + "\n".join(failures)


# -- the two bugs the kills found, shown in-process -----------------------------------------

class Killed(BaseException):
    """Stands for SIGKILL inside this process: nothing after it runs."""


def test_send_killed_after_storing_its_event_is_finished_by_sending_again(table, monkeypatch, capsys):
    """Killed between storing event 2 and deleting the draft: 'pbem send' used to fail
    ('your draft was composed at event 1') and then 'not your turn', so the signed
    event never reached the opponent. Now it writes that event's turn file."""
    seat = table.red.seat()
    session.add_orders(seat, ["dash"])
    real_clear_draft = session.clear_draft

    def killed(*_args):
        raise Killed

    monkeypatch.setattr(session, "clear_draft", killed)
    with pytest.raises(Killed):
        session.send(seat)
    monkeypatch.setattr(session, "clear_draft", real_clear_draft)
    stored = table.red.gd.event_path(2).read_bytes()
    assert (table.red.gd.drafts_dir / "red.json").exists()
    assert not list(table.red.gd.outbox_dir.glob("*-000002.pbem"))
    result = CliRunner().invoke(cli, ["send", "-g", str(table.red.gd.path), "--note", "retry"])
    assert result.exit_code == 0, result.output
    assert "nothing new to sign: events 2-2 were signed by an earlier 'pbem send'" in result.output
    (turn,) = table.red.gd.outbox_dir.glob("*-000002.pbem")
    assert parse_turn(turn.read_bytes()).events == [stored]  # the stored event, not a new signature
    assert not (table.red.gd.drafts_dir / "red.json").exists()
    table.deliver(table.blue, turn.read_bytes())  # blue answers the die; red receives the answer
    assert table.red.gd.read_events() == table.blue.gd.read_events()
    table.play("red", "pass")  # red's vault opens the entropy of the retried event


def test_receive_killed_before_writing_its_automatic_answer_writes_it_when_retried(table, monkeypatch):
    """Killed after storing the automatic dice answer (event 3) but before its turn file:
    re-running 'pbem receive' used to find only duplicates and write nothing, so red
    waited for blue's entropy for ever. Now the retry writes the answer's turn file."""
    seat = table.red.seat()
    session.add_orders(seat, ["dash"])
    red_turn = Path(session.send(seat).turn_file).read_bytes()
    real_write_turn = session._write_turn

    def killed(*_args):
        raise Killed

    monkeypatch.setattr(session, "_write_turn", killed)
    with pytest.raises(Killed):
        session.receive(table.blue.seat(), [("red", red_turn)])
    monkeypatch.setattr(session, "_write_turn", real_write_turn)
    answer = table.blue.gd.event_path(3).read_bytes()
    assert not list(table.blue.gd.outbox_dir.glob("*-000003.pbem"))
    result = session.receive(table.blue.seat(), [("red", red_turn)])
    assert result.appended == [] and result.duplicates == [2] and result.auto_reply is not None
    assert parse_turn(Path(result.auto_reply.turn_file).read_bytes()).events == [answer]
    # A second retry, with the turn file written, answers nothing more.
    assert session.receive(table.blue.seat(), [("red", red_turn)]).auto_reply is None
    session.receive(table.red.seat(), [("blue", Path(result.auto_reply.turn_file).read_bytes())])
    assert table.red.gd.read_events() == table.blue.gd.read_events()


def test_receive_again_writes_a_forced_answer_only_when_its_event_is_that_answer(table, monkeypatch):
    """An event is a lost automatic answer only if it is exactly what pbem composes from the
    log before it (issue 21 point 5, decision 17). Blue's move and act are declared forced
    ('advance 1', 'pass'), but blue received red's file with --no-auto and signed
    'advance 2', 'pass' itself (the rules' check allows it): killed before that event's
    turn file, receiving red's file again writes nothing; the same kill in the automatic
    answer itself is written again by the same receive."""
    from tests.test_faults import _blue_forced

    _blue_forced(monkeypatch, act=True)
    seat = table.red.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    red_turn = Path(session.send(seat).turn_file).read_bytes()
    saved = shutil.copytree(table.blue.gd.path, table.tmp / "saved-blue")

    def killed(*_args):
        raise Killed

    assert session.receive(table.blue.seat(), [("red", red_turn)], auto_reply=False, forced=True).auto_reply is None
    blue = table.blue.seat()
    session.add_orders(blue, ["advance 2", "pass"])
    with monkeypatch.context() as m:
        m.setattr(session, "_write_turn", killed)
        with pytest.raises(Killed):
            session.send(blue)
    assert table.blue.gd.event_count() == 4
    again = session.receive(table.blue.seat(), [("red", red_turn)], forced=True)
    assert again.auto_reply is None and not list(table.blue.gd.outbox_dir.glob("*-000003.pbem"))
    # The automatic answer, killed at the same place, is written again.
    shutil.rmtree(table.blue.gd.path)
    shutil.copytree(saved, table.blue.gd.path)
    with monkeypatch.context() as m:
        m.setattr(session, "_write_turn", killed)
        with pytest.raises(Killed):
            session.receive(table.blue.seat(), [("red", red_turn)], forced=True)
    stored = table.blue.gd.read_event(3)
    assert session.load_public(table.blue.gd).history[3].actions == ("advance 1", "pass")
    assert session.receive(table.blue.seat(), [("red", red_turn)], auto_reply=False, forced=True).auto_reply is None
    answer = session.receive(table.blue.seat(), [("red", red_turn)], forced=True).auto_reply
    assert answer is not None and answer.auto and answer.seqs == [3]
    assert parse_turn(Path(answer.turn_file).read_bytes()).events == [stored]


def test_a_forced_answer_may_add_only_my_own_deck_seed_commitments():
    """A new round's deck seed is committed by the deck step of an automatic answer that
    first needs it; recomputed with that seed already in the vault, the step commits
    nothing, so those commitments, and only they, are set aside when comparing."""
    from pbem.codec import Commitment
    from pbem.deck import seed_label

    digest = "00" * 32
    mine, theirs = seed_label("r1", "blue"), seed_label("r1", "red")
    other = [Commitment(label=label, digest=digest) for label in
             (theirs, f"{mine}/x", f"x/{mine}", "deck/r1/blue", "blue.speed")]
    assert session._not_seeds([Commitment(label=mine, digest=digest), *other], "blue") == other
