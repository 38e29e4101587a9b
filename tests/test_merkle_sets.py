"""Merkle set commitments in play (DESIGN 4, hidden board facts): one root
published, single leaves opened with proofs, the whole set at the audit.
Played with the race test game's traps (RACE 7)."""

from __future__ import annotations

import msgspec
import pytest

from pbem import codec, session
from pbem.commit import decode_leaves, encode_leaves, set_from_seed, set_opens
from pbem.errors import IllegalAction, VerifyError
from pbem.game import AUDIT, Replay
from tests.conftest import new_table
from tests.race import rules as race


def _trapped(tmp_path):
    """Blue (speed 3) lays traps on squares 3 and 5; red (speed 2) advances 2
    onto square 2 (no trap: blue opens 'none'), then later to 4 and so on."""
    table = new_table(tmp_path, scenario="standard")
    table.play("red", "advance 1", "pass")
    table.play("blue", "traps 3 5", "advance 1", "pass")
    return table


def _state(side):
    return side.seat().replay.state


def test_a_set_is_one_root_in_the_event_and_the_owner_knows_every_leaf(tmp_path):
    table = _trapped(tmp_path)
    event = codec.decode_body(codec.unwrap(table.blue.gd.read_event(table.blue.seat().replay.seq)).body)
    sets = [c for c in event.commits if c.kind == "set"]
    assert [c.label for c in sets] == ["blue.traps"]
    blue, red = table.blue.seat().replay, table.red.seat().replay
    assert blue.leaf("blue.traps", "3") == b"1" and blue.leaf("blue.traps", "4") == b"0"
    assert red.leaf("blue.traps", "3") is None  # red sees the root only
    assert red.commitments["blue.traps"].digest == blue.commitments["blue.traps"].digest


def test_entering_a_square_makes_the_owner_open_that_leaf_and_only_it(tmp_path):
    table = _trapped(tmp_path)
    table.play("red", "advance 2")  # red from 1 to 3: blue's trap square
    assert race.pending(_state(table.red)).kind == "trap"
    table.play("blue", "open trap 3")
    red = table.red.seat().replay
    assert red.leaf("blue.traps", "3") == b"1"
    assert red.leaf("blue.traps", "5") is None  # no other leaf leaks
    assert _state(table.red).runners["red"].pos == 2  # RACE 7: one step back
    assert red.history[-1].reveals == ("blue.traps[3]",)
    assert _state(table.blue).runners["red"].pos == 2


def test_the_owner_cannot_skip_the_opening(tmp_path):
    table = _trapped(tmp_path)
    table.play("red", "advance 2")
    seat = table.blue.seat()
    order = race.parse_order(seat.replay.state, "blue", "open trap 3", seat.replay.ctx("blue"))
    body = session._body(seat.replay, "blue", seat.vault,
                         [session.DraftOrder(text="x", action=codec.raw(order.action))], x_next=bytes(32))
    with pytest.raises(IllegalAction, match="RACE 7: square 3 of blue.traps must be opened"):
        table.red.seat().replay.clone().apply_stored(session._sign(seat.identity, body))


def _forged_leaf(table, **change):
    seat = table.blue.seat()
    order = race.parse_order(seat.replay.state, "blue", "open trap 3", seat.replay.ctx("blue"))
    draft = session.DraftOrder(text="x", action=codec.raw(order.action), leaves=[("blue.traps", "3")])
    body = session._body(seat.replay, "blue", seat.vault, [draft], x_next=bytes(32))
    leaf = msgspec.structs.replace(body.leaves[0], **change)
    body = msgspec.structs.replace(body, leaves=[leaf])
    return session._sign(seat.identity, body)


@pytest.mark.parametrize("change, message", [
    ({"value": "30"}, "proof does not match"),      # deny the trap: "0" at square 3
    ({"key": "4"}, "proof does not match"),         # the proof of 3 shown as square 4
    ({"index": 4}, "proof does not match"),
    ({"salt": "00" * 32}, "proof does not match"),
])
def test_a_forged_leaf_opening_is_refused(tmp_path, change, message):
    table = _trapped(tmp_path)
    table.play("red", "advance 2")
    with pytest.raises(VerifyError, match=message):
        table.red.seat().replay.clone().apply_stored(_forged_leaf(table, **change))


def test_a_leaf_cannot_be_opened_twice_or_from_the_other_players_set(tmp_path):
    table = _trapped(tmp_path)
    table.play("red", "advance 2")
    table.play("blue", "open trap 3")
    seat = table.red.seat()
    other = session.DraftOrder(text="x", action=codec.raw(race.Advance(steps=1)), leaves=[("blue.traps", "3")])
    with pytest.raises(Exception, match="not a set in your vault"):
        session._body(seat.replay, "red", seat.vault, [other], x_next=bytes(32))


def test_the_audit_opens_whole_sets_and_checks_them(tmp_path):
    table = _trapped(tmp_path)
    table.play("red", "advance 2")
    table.play("blue", "open trap 3")
    table.play("red", "pass")
    table.play("blue", "advance 1", "pass", open_all=True)
    events = table.blue.gd.read_events()
    audit = session.audit(events, race.RULES)  # raises on an illegal event
    assert "blue" not in audit.unopened and "blue.traps" in audit.replay.opened
    red = table.red.seat().replay
    assert red.leaf("blue.traps", "5") == b"1"  # the whole set was opened
    assert decode_leaves(red.opened["blue.traps"])["12"] == b"0"


def test_a_whole_set_opening_must_rebuild_the_root():
    leaves = {str(n): b"1" if n == 3 else b"0" for n in range(1, 13)}
    seed = bytes(range(32))
    root = set_from_seed(leaves, seed).root
    assert set_opens(root, seed, encode_leaves(leaves))
    assert not set_opens(root, seed, encode_leaves({**leaves, "3": b"0"}))
    assert not set_opens(root, bytes(32), encode_leaves(leaves))
    assert not set_opens(root, seed, b'{"3":"31"}')
    assert not set_opens(root, seed, b"not json")


def test_leaf_salts_reveal_nothing_of_the_seed_or_other_leaves():
    leaves = {str(n): b"0" for n in range(1, 13)}
    s = set_from_seed(leaves, bytes(32))
    salts = {s.open(k).salt for k in leaves}
    assert len(salts) == len(leaves) and bytes(32).hex() not in salts


def test_opened_leaves_survive_the_replay_cache(tmp_path):
    table = _trapped(tmp_path)
    table.play("red", "advance 2")
    table.play("blue", "open trap 3")
    cached = table.red.seat().replay  # restored from the cache
    fresh = Replay(race.RULES, role="red", known=table.red.seat().vault.known_values())
    for stored in table.red.gd.read_events():
        fresh.apply_stored(stored)
    assert cached.leaves == fresh.leaves == {("blue.traps", "3"): b"1"}
    assert cached.commitments["blue.traps"].kind == "set"


def test_the_audit_perspective_knows_every_leaf_from_the_start(tmp_path):
    table = _trapped(tmp_path)
    known = table.blue.seat().vault.known_values()
    audit = Replay(race.RULES, role=AUDIT, known=known)
    for stored in table.blue.gd.read_events():
        audit.apply_stored(stored)
    assert audit.leaf("blue.traps", "5") == b"1"


def test_many_leaves_read_at_once_are_each_what_one_leaf_read_gives(tmp_path):
    """``ctx.leaves`` (issue 20: RitD reads a whole Minefield set in one call)
    gives for every key what ``ctx.leaf`` gives: the owner's whole set, an
    opened leaf only for the opponent, nothing of a label that is no set or
    not committed, None for a key outside the set."""
    table = _trapped(tmp_path)
    table.play("red", "advance 2")
    table.play("blue", "open trap 3")
    keys = [str(k) for k in range(0, 12)] + ["nowhere"]
    for replay in (table.blue.seat().replay, table.red.seat().replay, Replay(race.RULES)):
        for label in ("blue.traps", "red.traps", "nonesuch"):
            ctx = replay.ctx("red")
            assert ctx.leaves(label, keys) == [ctx.leaf(label, k) for k in keys]
    red = table.red.seat().replay.ctx("red")
    assert red.leaves("blue.traps", ["3", "5"]) == [b"1", None]  # the opened leaf, no other
    blue = table.blue.seat().replay.ctx("blue")
    assert blue.leaves("blue.traps", ["3", "4", "5"]) == [b"1", b"0", b"1"]
