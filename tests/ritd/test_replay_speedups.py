"""Issue 19 (speed, not behaviour): the shortcuts of the rules replay give
what the plain computation gives.

- ``Position.replace_blocks`` derives the new position's lookups (by hex, by
  token, block index) from the old one's: they equal a fresh index.
- The Supply Network's loop test (RB 12.4) asks ``supply._reaches`` which
  hexes a line reaches without a unit's hex: it equals the full trace's
  ``reached``, stopping early or not.
"""

from __future__ import annotations

import random

import msgspec
import pytest

from pbem import codec, rulesapi
from pbem.game import Replay, audit_openings
from rules.ritd import supply
from rules.ritd.position import SIDES, Position
from rules.ritd.state import game_map
from tests.ritd.test_replay_digests import _events


def _positions() -> list[Position]:
    events = _events("complete-game")
    genesis = codec.decode_body(codec.unwrap(events[0]).body).genesis
    assert genesis is not None
    replay = Replay(rulesapi.load_version(genesis.rules, genesis.rules_version), role="*", known=audit_openings(events))
    out: list[Position] = []
    for stored in events:
        replay.apply_stored(stored, verify_signature_=False)
        if replay.state is not None and replay.state.position.blocks and (
            not out or out[-1] != replay.state.position
        ):
            out.append(replay.state.position)
    return out


@pytest.mark.random_cards  # the published log was dealt by the real deck
def test_replace_blocks_keeps_its_lookups_equal_to_a_fresh_index() -> None:
    rng = random.Random(19)
    m = game_map()
    hexes = sorted(m.playable_hexes())
    for pos in _positions()[::3]:
        for _ in range(5):
            pos.blocks_in(pos.blocks[0].hex)  # build the lookups to derive from
            pos.block(pos.blocks[0].token)
            moved = rng.sample(pos.blocks, k=rng.randint(1, 3))
            new = pos.replace_blocks(msgspec.structs.replace(b, hex=rng.choice(hexes)) for b in moved)
            fresh = Position(blocks=new.blocks, battles=new.battles, fortresses=new.fortresses)
            assert {h: new.blocks_in(h) for h in new.occupied_hexes()} == {
                h: fresh.blocks_in(h) for h in fresh.occupied_hexes()}
            assert all(new.block(b.token) is fresh.block(b.token) for b in fresh.blocks)
            for side in SIDES:
                for h in fresh.occupied_hexes():
                    assert new.blocks_in(h, side) == fresh.blocks_in(h, side)
        assert pos.replace_blocks([]) is pos
        assert pos.replace_blocks([pos.blocks[-1]]) is pos  # nothing changed: the same position


@pytest.mark.random_cards
def test_reaches_equals_the_full_trace_without_each_unit_hex() -> None:
    m = game_map()
    checked = 0
    for pos in _positions()[::4]:
        for side in SIDES:
            s = supply.side_supply(m, pos, side)
            for u in sorted(s.view.receivers):
                view = supply._without(s.view, u)
                full = supply._trace(view, s.base.source)
                everything = {h for h, _ in s.base.dist}
                expected = {h for h in everything if full.reached(h)}
                assert supply._reaches(view, s.base.source, everything) == expected
                some = set(sorted(everything)[::7])
                assert supply._reaches(view, s.base.source, some) == {h for h in some if full.reached(h)}
                checked += 1
    assert checked > 50
