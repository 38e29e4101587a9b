"""The supply memo (rules.ritd.supply._memo) changes no result: a self-played
log replays to the same encoded state, history and pending decision at every
event with the memo as it is and with it off (every supply question computed
afresh), for both players, a public verifier and the audit."""

from __future__ import annotations

import msgspec
import pytest

from pbem import session
from pbem.game import Replay
from pbem.store import GameDir
from rules.ritd import supply


@pytest.fixture(scope="module")
def demo_log(ritd_demo_selfplay):
    gd = GameDir(ritd_demo_selfplay / "axis")
    return session.rules_for(gd), gd.read_events()


def _trail(rules, events) -> list[bytes]:
    out = []
    for role in (None, "axis", "allied"):
        r = Replay(rules, role=role)
        for stored in events:
            info = r.apply_stored(stored)
            out += [msgspec.json.encode(r.state), repr(info).encode(), repr(r.pending()).encode()]
    audited = session.audit(events, rules).replay
    out += [msgspec.json.encode(audited.state), repr(audited.history).encode()]
    return out


@pytest.mark.random_cards
def test_replay_is_the_same_with_and_without_the_supply_memo(demo_log, monkeypatch):
    rules, events = demo_log
    supply._MEMO.clear()
    supply._KEYS.clear()
    with_memo = _trail(rules, events)
    monkeypatch.setattr(supply, "_MEMO_SIZE", 0)
    supply._MEMO.clear()
    without = _trail(rules, events)
    assert len(with_memo) == len(without)
    assert with_memo == without


def test_the_supply_key_ignores_what_supply_does_not_read():
    from rules.ritd.position import Battle, Block, Position

    a = Position(blocks=(Block("t1", "axis", "0101", unit="X", cv=3), Block("t2", "allied", "0102")),
                 battles=(Battle("0102", "axis", {"0101": "axis"}),), fortresses={"0103": "allied"})
    b = msgspec.structs.replace(a, blocks=(msgspec.structs.replace(a.blocks[0], unit="", cv=0, revealed=True),
                                           a.blocks[1]))
    assert supply.supply_key(a) == supply.supply_key(b)
    for change in ({"hex": "0104"}, {"disrupted": True}, {"raider": True}, {"fortress_supply": "0103"},
                   {"oasis_supply": "0101"}, {"side": "allied"}, {"token": "t3"}):
        c = msgspec.structs.replace(a, blocks=(msgspec.structs.replace(a.blocks[0], **change), a.blocks[1]))
        assert supply.supply_key(a) != supply.supply_key(c), change
    assert supply.supply_key(a) != supply.supply_key(msgspec.structs.replace(a, battles=()))
    assert supply.supply_key(a) != supply.supply_key(
        msgspec.structs.replace(a, battles=(Battle("0102", "axis", {}),)))
    assert supply.supply_key(a) != supply.supply_key(msgspec.structs.replace(a, fortresses={"0103": "axis"}))


def _answers(m, pos):
    out = []
    for side in ("axis", "allied"):
        try:
            out.append((supply.supplied_tokens(m, pos, side), supply.isolated_fortresses(m, pos, side),
                        supply.network(m, pos, side)))
        except ValueError as exc:
            out.append(str(exc))
    return out


@pytest.mark.random_cards
def test_a_memo_hit_never_answers_for_a_position_that_differs_in_what_supply_reads(demo_log, monkeypatch):
    """Each position of the log primes the memo, then the same position with one
    block Disrupted/recovered or made a Raider must get the answers computed afresh."""
    from rules.ritd.state import game_map as _map

    rules, events = demo_log
    m = _map()
    r = Replay(rules)
    positions = []
    for stored in events:
        r.apply_stored(stored)
        if r.state.position.blocks and r.state.position not in positions:
            positions.append(r.state.position)
    step = max(1, len(positions) // 8)
    for pos in positions[::step]:
        for i, b in enumerate(pos.blocks):
            for change in ({"disrupted": not b.disrupted}, {"raider": not b.raider}):
                blocks = list(pos.blocks)
                blocks[i] = msgspec.structs.replace(b, **change)
                variant = msgspec.structs.replace(pos, blocks=tuple(blocks))
                _answers(m, pos)
                memoised = _answers(m, variant)
                monkeypatch.setattr(supply, "_MEMO_SIZE", 0)
                supply._MEMO.clear()
                assert memoised == _answers(m, variant), (b.token, change)
                monkeypatch.setattr(supply, "_MEMO_SIZE", 64)
