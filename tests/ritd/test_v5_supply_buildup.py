"""The Buildup spending listed (RB 16.5-16.54, rules version 5): every kind of
spending the rules accept is offered, each only where ``check_spend`` accepts
it. Version 4 listed Replacements and one-hex Redeployments only."""

from __future__ import annotations

import pytest

from pbem import session
from rules.ritd import game as ritd
from tests.ritd.test_game_minefields import _gazala, _state

pytestmark = pytest.mark.usefixtures("registered_ritd")


def test_rb_16_52_16_53_sea_redeployment_and_return_for_refit_are_offered(tmp_path):
    """RB 16.53 "Units can Redeploy by sea between controlled Ports"; RB 16.52
    "undisrupted units can Return for Refit at no cost ... must follow an
    overland (not sea) route within the friendly Supply Network". Gazala's
    pre-game Buildup (RB 18.7), the Allies first: units in Alexandria may sail
    to Allied Tobruk, on the Supply Line of the units at Bir Hacheim, who may
    Return for Refit along it."""
    table = _gazala(tmp_path)
    seat = table.allied.seat()
    state = seat.replay.state
    legal = ritd.legal_orders(state, "allied", seat.replay.ctx("allied"))
    in_base = sorted(b.unit for b in state.position.blocks_of("allied") if b.hex == ritd.game_map().base("allied"))
    forward = sorted(b.unit for b in state.position.blocks_of("allied") if b.unit not in in_base)
    assert f"sea {in_base[0]} -> Tobruk" in legal
    assert f"refit {forward[0]}" in legal
    assert not any(o.startswith(f"refit {u}") for u in in_base for o in legal)  # already in Base
    # What is listed is accepted.
    session.add_orders(seat, [f"sea {in_base[0]} -> Tobruk", f"refit {forward[0]}"])
    draft, _ = session.draft_replay(seat)
    assert draft.state.position.block(next(b.token for b in draft.state.position.blocks_of("allied")
                                           if b.unit == in_base[0])).hex == ritd.game_map().resolve("Tobruk")
    assert any(b.unit == forward[0] for b in draft.state.refitting["allied"])
    assert _state(table.allied).ledgers["allied"].available == 30


def test_rb_16_52_a_unit_refitting_when_the_game_ends_is_counted_by_both_players(tmp_path):
    """RB 16.52: a unit Returned for Refit is off-board until the next
    Buildup; RB 17.0 turns every block face up at the end. The opponent knows
    the refitting unit only from 'reveal all': judging victory must read it
    from there (it failed with 'unknown unit' before)."""
    import msgspec

    from rules.ritd import month_phase
    from rules.ritd.actions import RevealAll
    from rules.ritd.position import Block

    table = _gazala(tmp_path)
    state = _state(table.axis)
    # Every block on the map turned up (what 'reveal all' opens, RB 17.0) ...
    allied = {b.token: b for b in _state(table.allied).position.blocks_of("allied")}
    position = state.position.replace_blocks(allied.values())
    # ... and one Allied unit refitting off-board, its identity unknown to the Axis until opened.
    hidden_block = Block("Lrefit", "allied", ritd.game_map().base("allied"))
    state = msgspec.structs.replace(state, position=position, phase="final", stage="reveal-all",
                                    turned_up=("axis",), refitting={"allied": (hidden_block,)})

    class Opened:
        def value(self, label: str):
            from rules.ritd import hidden
            return hidden.encode_identity("7 SG", 3) if label == hidden.identity_label("Lrefit", 0) else None

    over = month_phase.apply_month(state, RevealAll(), "allied", Opened())  # RB 17.0: the sequence ends the game
    assert over.phase == "over" and over.result is not None
