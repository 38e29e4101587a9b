"""Issue 19 (speed, not behaviour): the shortcuts of the rules replay give
what the plain computation gives.

- ``Position.replace_blocks`` derives the new position's lookups (by hex, by
  token, block index) from the old one's: they equal a fresh index.

(The Supply Network's loop-test search ``supply._reaches`` went with the
version-4 Network in rules version 5: the Network is now the union of the
lines, tests/ritd/test_v5_supply_network.py.)
"""

from __future__ import annotations

import random

import msgspec
import pytest

from pbem import codec, rulesapi
from pbem.game import Replay, audit_openings
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
