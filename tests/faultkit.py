"""Shared by tests/test_faults.py and tests/test_concurrency.py (issue 28).

pbem commands run in forked children of the test process (``spawn``): a real
process each, with its own file descriptors and locks, that can be killed at
a write point (pbem.fileio's fault plan) or started together with another
one, and costs no interpreter start-up. The checks after a kill or a race
(``check_game``, ``settle``, ``check_no_second_event``) run in this process.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
import traceback
from pathlib import Path

from click.testing import CliRunner

from pbem import fileio, session, vault
from pbem.cli import cli, main
from pbem.fileio import TMP_PREFIX, FaultPlan
from pbem.identity import load_identity
from pbem.rulesapi import DICE
from pbem.store import GameDir
from pbem.turnfile import parse_turn
from tests.conftest import PASSPHRASE

ROLES = ("red", "blue")
PREFERRED_ORDERS = ("defend dodge", "advance 1", "pass")


def spawn(argv: list[str], *, plan: FaultPlan | None = None, gate: tuple[int, int] | None = None,
          output: Path | None = None) -> int:
    """Fork a child that runs ``pbem ARGV`` (after reading EOF from ``gate``, if given) with
    ``plan`` as its fault plan; returns its pid. Its stdout and stderr go to ``output``."""
    pid = os.fork()
    if pid:
        return pid
    code = 98
    try:
        fd = os.open(output or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
        if gate is not None:
            os.close(gate[1])
            os.read(gate[0], 1)  # returns at EOF: when the parent closes its end, all start at once
        fileio.FAULTS = plan
        code = main(argv)
    except BaseException:  # noqa: BLE001 - report anything and exit; never return into pytest
        traceback.print_exc()
    finally:
        os._exit(code)


def wait(pid: int) -> int:
    """The child's exit code, or minus the signal that killed it."""
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def run(argv: list[str], *, plan: FaultPlan | None = None, output: Path | None = None) -> int:
    return wait(spawn(argv, plan=plan, output=output))


def cli_run(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.output


def copy(base: Path, dest: Path) -> Path:
    shutil.copytree(base, dest, symlinks=True)
    return dest


def identity(root: Path, role: str):
    return load_identity(root / f"{role}.key", PASSPHRASE)


def check_game(root: Path, role: str) -> None:
    """If ``role``'s directory holds a game: it verifies, and its vault holds the entropy
    secret of every event of ``role`` stored (no lost secret)."""
    gd = GameDir(root / role)
    if not gd.exists():
        return
    code, out = cli_run("verify", gd.path)
    assert code == 0, f"{role}: verify exit {code}: {out}"
    replay = session.load_public(gd)
    mine = [i.seq for i in replay.history if i.author == role]
    if mine:
        data = vault.load(gd.vault_dir / f"{role}.bin", identity(root, role), replay.game_hex, role)
        lost = [seq for seq in mine if data.entropy_for(seq) is None]
        assert not lost, f"{role}: the vault lost the entropy secret of events {lost}"
    names = [p.name for p in gd.events_dir.iterdir()]
    assert all(n.endswith(".json") or n.startswith(TMP_PREFIX) for n in names), names


def deliver(root: Path) -> None:
    """Pass turn files on until both players hold the same log: whoever is ahead has the
    turn file of its newest event in its outbox."""
    for _ in range(6):
        red, blue = GameDir(root / "red"), GameDir(root / "blue")
        if not blue.exists():  # the join itself is pending: blue accepts red's invitation
            invitation = _newest_turn(red, 0)
            code, out = cli_run("join", invitation, blue.path, "--order", "setup speed 3", "-i",
                                root / "blue.key")
            assert code == 0, f"join: exit {code}: {out}"
            continue
        if red.event_count() == blue.event_count():
            assert red.read_events() == blue.read_events(), "the players' logs differ"
            return
        ahead, behind = (red, blue) if red.event_count() > blue.event_count() else (blue, red)
        turn = _newest_turn(ahead, ahead.event_count() - 1)
        code, out = cli_run("receive", "-g", behind.path, turn)
        assert code == 0, f"receive into {behind.path.name}: exit {code}: {out}"
    raise AssertionError("the players' logs do not converge")


def _newest_turn(gd: GameDir, seq: int) -> Path:
    replay = session.load_public(gd)
    turn = gd.outbox_dir / f"{replay.game_hex[:8]}-{seq:06d}.pbem"
    assert turn.exists(), f"{gd.path.name} holds event {seq} but no turn file for it: the opponent " \
                          "can never receive it"
    return turn


def play_one_event(root: Path) -> None:
    """Whoever must decide gives orders (or only entropy) and sends; the other receives."""
    decision = session.load_public(GameDir(root / "red")).pending()
    if decision is None:
        return
    me = decision.role
    seat = session.load_seat(GameDir(root / me), identity(root, me))
    if decision.kind != DICE or session.legal_orders(seat):
        session.undo(seat, None)
        while legal := session.legal_orders(seat):
            session.add_orders(seat, [next((o for o in PREFERRED_ORDERS if o in legal), legal[0])])
    sent = session.send(seat)
    other = "blue" if me == "red" else "red"
    code, out = cli_run("receive", "-g", root / other, sent.turn_file)
    assert code == 0, f"receive: exit {code}: {out}"
    deliver(root)


def settle(root: Path, play_on: int = 2) -> None:
    """Deliver what is owed, play ``play_on`` more events (each player's vault must open
    the entropy it committed), and check both logs are equal and verify."""
    deliver(root)
    for _ in range(play_on):
        play_one_event(root)
    for role in ROLES:
        check_game(root, role)
    check_no_second_event(root)


def check_no_second_event(root: Path) -> None:
    """Every event in every turn file written (outboxes and other .pbem files under ``root``)
    is the event stored for its seq: nobody ever signed two different events for one seq."""
    logs = {role: GameDir(root / role).read_events() for role in ROLES if GameDir(root / role).exists()}
    for turn in root.rglob("*.pbem"):
        if turn.name.startswith(TMP_PREFIX):
            continue
        for stored in parse_turn(turn.read_bytes(), str(turn)).events:
            seq = session.codec.unwrap(stored).seq
            for role, log in logs.items():
                if seq < len(log):
                    assert log[seq] == stored, f"{turn.relative_to(root)}: event {seq} differs from the one " \
                                               f"{role} stored: a second, different event was signed"


def in_workers(trial, items: list, workers: int = 2) -> list[str]:
    """Run ``trial(item)`` for every item in ``workers`` forked processes (the trials are
    independent: each works on its own copy of the files); returns the failure lines
    (``trial`` returns one, or None), in the order of ``items``."""
    results = []
    pids = []
    for k in range(workers):
        out = Path(os.environ.get("TMPDIR", "/tmp")) / f"pbem-faultkit-{os.getpid()}-{k}.txt"
        pid = os.fork()
        if pid == 0:
            try:
                with open(out, "w", encoding="utf-8") as fh:
                    for index in range(k, len(items), workers):
                        try:
                            line = trial(items[index])
                        except BaseException as exc:  # noqa: BLE001 - reported as a failure
                            line = f"{items[index]}: {type(exc).__name__}: {exc}"
                        if line:
                            fh.write(f"{index}\t{line.splitlines()[0]}\n")
                        fh.flush()
                    fh.write("done\n")
            finally:
                os._exit(0)
        pids.append((pid, out))
    for pid, out in pids:
        wait(pid)
        lines = out.read_text(encoding="utf-8").splitlines()
        out.unlink()
        if lines[-1:] != ["done"]:
            results.append((len(items), f"a worker died before finishing its trials: {lines[-1:]}"))
        results += [(int(i), line) for i, line in (entry.split("\t", 1) for entry in lines if entry != "done")]
    return [line for _, line in sorted(results)]
