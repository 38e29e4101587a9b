"""Game binding (issue 27 point 1, issue 21 point 1): a file of another game,
signed with any key (the opponent's, or the victim's own: players use one key
for all their games) at any sequence number, is refused with exit 11 and its
own message, is never stored, is never equivocation evidence and never stops
the game. Each attack is performed through the CLI and the victim's whole game
directory is hashed before and after."""

from __future__ import annotations

import hashlib
import mailbox
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem import codec, session
from pbem.cli import cli
from pbem.errors import ForeignGame
from pbem.store import GameDir
from tests.conftest import Side, Table, new_table

FOREIGN = ForeignGame.exit_code


def tree_hash(directory: Path) -> str:
    """SHA-256 over every path (files, directories, links) under ``directory``
    with its kind and, for files, its bytes: any change anywhere changes it."""
    h = hashlib.sha256()
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(dirs + files):
            p = Path(root) / name
            rel = str(p.relative_to(directory)).encode()
            h.update(len(rel).to_bytes(4, "big") + rel)
            if p.is_symlink():
                h.update(b"L" + os.readlink(p).encode())
            elif p.is_file():
                data = p.read_bytes()
                h.update(b"F" + len(data).to_bytes(8, "big") + data)
            else:
                h.update(b"D")
    return h.hexdigest()


def second_game(t: Table, tmp: Path) -> Table:
    """Game B between the same two players with the same identity keys as ``t``."""
    red = Side("red", t.red.identity, t.red.key_path, GameDir(tmp / "B-red"))
    blue = Side("blue", t.blue.identity, t.blue.key_path, GameDir(tmp / "B-blue"))
    sent = session.new_game(red.gd.path, "race", "sprint", "red", red.identity, red.key_path,
                            blue.identity.public_text, orders=["setup speed 3"])
    joined, _ = session.join_game(blue.gd.path, Path(sent.turn_file).read_bytes(), blue.identity, blue.key_path,
                                  orders=["setup speed 1"])
    session.receive(red.seat(), [("join", Path(joined.turn_file).read_bytes())])
    return Table(red, blue, tmp)


def turn_of(*events: bytes) -> bytes:
    return b"pbem-turn v1\n---\n" + b"\n".join(events) + b"\n"


@pytest.fixture
def games(tmp_path):
    """Game A at event 5 (both players hold 0..5; red signed 2 and 4, blue 3 and 5)
    and game B at event 6 (red signed 6 too), with the same keys."""
    a = new_table(tmp_path / "A")
    b = second_game(a, tmp_path / "B")
    for role in ("red", "blue", "red", "blue"):
        a.play(role, "advance 1", "pass")
        b.play(role, "advance 1", "pass")
    b.play("red", "advance 1", "pass")
    assert a.red.gd.event_count() == a.blue.gd.event_count() == 6 and b.blue.gd.event_count() == 7
    return a, b


def _attack(victim: Side, data: bytes, tmp: Path, *command: str):
    path = tmp / "attack.pbem"
    path.write_bytes(data)
    before = tree_hash(victim.gd.path)
    result = CliRunner().invoke(cli, [*(command or ("receive",)), "-g", str(victim.gd.path), str(path)])
    assert tree_hash(victim.gd.path) == before, "the victim's game directory changed"
    return result


def _refused_as_foreign(result, a: Table, b: Table) -> None:
    assert result.exit_code == FOREIGN, result.output
    out = result.output
    assert out.startswith("pbem: ") and out.count("\n") == 1, out
    assert "another game" in out and "nothing was stored" in out
    # both game ids, in the short form 'pbem show' prints
    assert b.red.seat().replay.game_hex[:16] in out and a.red.seat().replay.game_hex[:16] in out
    assert "equivocation" not in out.lower() and "signed two different" not in out


def _clean_afterwards(victim: Side) -> None:
    gd = victim.gd
    assert gd.stopped_reason() is None and not list(gd.evidence_dir.glob("*"))
    verify = CliRunner().invoke(cli, ["verify", "-g", str(gd.path)])
    assert verify.exit_code == 0, verify.output


def test_another_games_genesis_is_refused_as_foreign(games, tmp_path):
    """B's invitation (red's genesis of B, validly signed by red) delivered into
    blue's game A, where seq 0 is A's genesis by the same red key."""
    a, b = games
    invitation = turn_of(b.red.gd.read_event(0))
    result = _attack(a.blue, invitation, tmp_path)
    _refused_as_foreign(result, a, b)
    assert "is the genesis of another game" in result.output
    _clean_afterwards(a.blue)


def test_the_victims_own_genesis_of_another_game_is_refused_as_foreign(games, tmp_path):
    """Red's own genesis of B delivered into red's game A."""
    a, b = games
    result = _attack(a.red, turn_of(b.red.gd.read_event(0)), tmp_path)
    _refused_as_foreign(result, a, b)
    _clean_afterwards(a.red)


def test_another_games_event_5_signed_by_the_opponent_is_refused_as_foreign(games, tmp_path):
    """B's event 5 (by blue, validly signed with the key blue uses in A too)
    delivered into red's A, which holds a different event 5 by blue: before the
    fix, equivocation (exit 6), evidence written and the game stopped."""
    a, b = games
    assert codec.unwrap(b.red.gd.read_event(5)).author == "blue"
    result = _attack(a.red, turn_of(b.red.gd.read_event(5)), tmp_path)
    _refused_as_foreign(result, a, b)
    assert "event 5 belongs to another game" in result.output
    _clean_afterwards(a.red)


def test_another_games_event_beyond_the_log_is_refused_as_foreign(games, tmp_path):
    """B's event 6 (by red) arrives at blue's A, whose next event is 6 (red's): refused
    as foreign too, not taken for red's next move."""
    a, b = games
    result = _attack(a.blue, turn_of(b.blue.gd.read_event(6)), tmp_path)
    _refused_as_foreign(result, a, b)
    _clean_afterwards(a.blue)


def test_the_victims_own_event_from_another_game_is_refused_as_foreign(games, tmp_path):
    """Blue's own event 3 of B delivered into blue's A (where blue signed a
    different event 3): before the fix, pbem accused its own user of cheating."""
    a, b = games
    own = b.blue.gd.read_event(3)
    assert codec.unwrap(own).author == "blue"
    result = _attack(a.blue, turn_of(own), tmp_path)
    _refused_as_foreign(result, a, b)
    _clean_afterwards(a.blue)


def test_a_whole_turn_file_of_another_game_is_refused_and_nothing_of_it_stored(games, tmp_path):
    """The whole log of B (genesis to 6) as one turn file into red's A: nothing
    of it is stored, not even the events A has no counterpart for."""
    a, b = games
    result = _attack(a.red, turn_of(*b.red.gd.read_events()), tmp_path)
    _refused_as_foreign(result, a, b)


def test_a_mixed_file_with_one_foreign_event_is_refused_whole(games, tmp_path):
    """Red's real next event of A followed by B's event 6: all or nothing, so nothing."""
    a, b = games
    seat = a.red.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    mine = Path(session.send(seat).turn_file).read_bytes().split(b"---\n")[1].strip()
    result = _attack(a.blue, turn_of(mine, b.red.gd.read_event(6)), tmp_path)
    _refused_as_foreign(result, a, b)


def test_an_email_with_another_games_turn_file_is_refused_as_foreign(games, tmp_path):
    """The same attack by email: an mbox holding only B's turn mail."""
    a, b = games
    seat = b.blue.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    sent = session.send(seat)
    message = session.email_for(b.blue.gd, sent, sender="blue@example.org", recipient="red@example.org")
    box_path = tmp_path / "mail.mbox"
    box = mailbox.mbox(str(box_path))
    box.add(message)
    box.close()
    before = tree_hash(a.blue.gd.path)
    result = CliRunner().invoke(cli, ["receive", "-g", str(a.blue.gd.path), str(box_path)])
    assert tree_hash(a.blue.gd.path) == before
    _refused_as_foreign(result, a, b)
    assert "every turn file in it belongs to another game" in result.output


def test_join_refuses_an_invitation_with_events_of_another_game(games, tmp_path):
    """An invitation (A's genesis) followed by B's event 1 is not joined."""
    a, b = games
    data = turn_of(a.red.gd.read_event(0), b.red.gd.read_event(1))
    path = tmp_path / "invitation.pbem"
    path.write_bytes(data)
    target = tmp_path / "joined"
    result = CliRunner().invoke(cli, ["join", str(path), str(target), "-i", str(a.blue.key_path)])
    assert result.exit_code == FOREIGN, result.output
    assert "another game" in result.output and not target.exists()


def test_verify_refuses_a_log_with_a_spliced_foreign_event(games, tmp_path):
    a, b = games
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(a.blue.gd.path, copy)
    (copy / "events" / "000005.json").write_bytes(b.blue.gd.read_event(5))
    result = CliRunner().invoke(cli, ["verify", str(copy)])
    assert result.exit_code == FOREIGN and "event 5 belongs to another game" in result.output, result.output


def test_evidence_from_another_game_left_by_an_older_pbem_accuses_nobody(games, tmp_path):
    """An older pbem stored a foreign event as 'equivocation evidence'. verify
    re-checks it: the pair is not of this game, so it proves nothing and verify
    passes with a warning instead of accusing the honest player."""
    a, b = games
    gd = a.blue.gd
    gd.record_equivocation(5, "red", gd.read_event(5), b.blue.gd.read_event(5))
    records = session.evidence_records(gd, session.load_public(gd))
    assert [(r.valid, r.why) for r in records] == [(False, "an event of another game")]
    result = CliRunner().invoke(cli, ["verify", "-g", str(gd.path)])
    assert result.exit_code == 0, result.output
    assert "does NOT verify: an event of another game" in result.output and "accuses nobody" in result.output


def test_real_equivocation_in_this_game_is_still_exit_6(games, tmp_path):
    """Red signs a second, different event 6 of game A after blue holds the
    first: two validly signed events of one game, one author, one seq."""
    from pbem.game import Replay

    a, _ = games
    seat = a.red.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    first = Path(session.send(seat).turn_file).read_bytes()
    a.deliver(a.blue, first)
    seat = a.red.seat()
    rewound = Replay(seat.rules, role="red", known=seat.vault.known_values())
    for stored in a.blue.gd.read_events()[:6]:
        rewound.apply_stored(stored)
    seat.replay = rewound
    orders = session.parse_orders(seat.rules, rewound, "red", seat.vault, [], ["advance 2", "pass"])
    other = session._compose(seat, orders).stored
    path = tmp_path / "second.pbem"
    path.write_bytes(turn_of(other))
    result = CliRunner().invoke(cli, ["receive", "-g", str(a.blue.gd.path), str(path)])
    assert result.exit_code == 6 and "red signed two different events for seq 6" in result.output
    verify = CliRunner().invoke(cli, ["verify", "-g", str(a.blue.gd.path)])
    assert verify.exit_code == 6 and "red signed two different events for seq 6" in verify.output


def test_a_different_event_with_a_bad_signature_at_a_held_seq_is_no_equivocation(games, tmp_path):
    """Only two VALIDLY signed events of one author at one seq are evidence:
    a held event altered in transit (its signature no longer verifies) is
    refused as a forgery, stores nothing and stops nothing."""
    import msgspec

    from pbem import codec

    a, _ = games
    held = a.blue.gd.read_event(4)
    u = codec.unwrap(held)
    body = codec.decode_body(u.body)
    altered = session._sign(a.red.identity, msgspec.structs.replace(body, note="altered"))
    forged = altered.replace(codec.unwrap(altered).sig.hex().encode(), u.sig.hex().encode())
    result = _attack(a.blue, turn_of(forged), tmp_path)
    assert result.exit_code != 6 and "signed two different" not in result.output, result.output
    _clean_afterwards(a.blue)
