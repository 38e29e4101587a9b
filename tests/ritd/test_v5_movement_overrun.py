"""Rules version 5, RB 11.4 Overrun Procedure step 5 (issue 25): after an
Overrun's Rout the unmoved units of the Group/Regroup Move under way may
complete their movement, through the hex the Routed units vacated."""

from __future__ import annotations

import pytest

from pbem import session
from pbem.errors import IllegalAction
from rules.ritd.state import game_map
from tests.ritd.test_game_overrun import _token
from tests.ritd.test_game_overrun import overrun as overrun  # noqa: F401 (fixture)

pytestmark = pytest.mark.usefixtures("registered_ritd")


def _resolve_rout(table) -> None:
    """Every Rout step answered with the first listed order, pursuing with all."""
    while True:
        for side in ("axis", "allied"):
            seat = table.side(side).seat()
            d = session.draft_replay(seat)[0].pending()  # the dice this side answers included
            if d is not None and d.role == side and d.kind.startswith("rout-"):
                orders = session.legal_orders(seat)
                pick = next((o for o in orders if o.endswith(" with all")), orders[0])
                table.play(side, pick)
                break
        else:
            return


def test_rb_11_4_step_5_the_rest_of_the_group_may_move_through_the_overrun_hex(overrun):  # noqa: F811
    """RB 11.4: "After resolving the Rout, the Active Player may still have
    other units qualified to move (as part of Group or Regrouping Moves
    already underway), but as yet unmoved. These units may then complete
    their Movement, including passing through the Overrun hex now vacated
    of enemy units." Overrun Procedure step 5: "These units may move into
    or through the Overrun hex just vacated by Routed enemy units." A Basic
    Turn has one Move: the Group Move from Ft Capuzzo goes on after the Rout."""
    m = game_map()
    sollum, buq_buq = m.resolve("Sollum"), m.resolve("Buq Buq")
    overrun.play("axis", "supply check", "basic")
    overrun.play("axis", "group Ft Capuzzo -> Sollum Brescia")
    _resolve_rout(overrun)
    axis = overrun.axis.seat()
    state = axis.replay.state
    assert state.turn.step == "movement" and not state.position.blocks_in(sollum, "allied")
    assert state.turn.movement.moves_made == 1 and state.turn.movement.moves_allowed == 1
    legal = session.legal_orders(axis)
    # The others of that Group Move: through the vacated Sollum and on.
    assert "group Ft Capuzzo -> Buq Buq Pavia" in legal
    assert "group Ft Capuzzo -> Sollum Bologna" in legal
    # Only the Overrunning unit stops; no other Group starts a Move (one Move in a Basic Turn).
    assert not [o for o in legal if "Brescia" in o]
    assert not [o for o in legal if o.startswith("group Sidi Omar")]
    with pytest.raises(IllegalAction, match="RB 4.0"):
        session.add_orders(axis, ["group Sidi Omar -> Sollum Trento"])
    overrun.play("axis", "group Ft Capuzzo -> Buq Buq Pavia")
    state = overrun.axis.seat().replay.state
    pavia = state.position.block(_token(overrun, "axis", "Pavia"))
    assert pavia.hex == buq_buq
    assert state.turn.movement.moved_unit(pavia.token).path[:3] == (m.resolve("Ft Capuzzo"), sollum, buq_buq)
    assert state.turn.movement.moves_made == 1  # still the one Move of the Basic Turn
    # Both replays agree, and the rest of the Group may still complete its movement.
    assert overrun.allied.seat().replay.state.position.block(pavia.token).hex == buq_buq
    assert "group Ft Capuzzo -> Sollum Bologna" in session.legal_orders(overrun.axis.seat())


def test_rb_11_4_movement_is_interrupted_once_the_overrunning_units_have_entered(overrun):  # noqa: F811
    """RB 11.4: "Once all Attacking units have entered the hex, movement is
    interrupted to resolve the Rout." A unit of the same order that would
    move on elsewhere before the Rout is refused; it moves after it."""
    overrun.play("axis", "supply check", "basic")
    axis = overrun.axis.seat()
    with pytest.raises(IllegalAction, match="RB 11.4"):
        session.add_orders(axis, ["group Ft Capuzzo -> Sollum Brescia; -> Bardia Pavia"])
    overrun.play("axis", "group Ft Capuzzo -> Sollum Brescia")
    assert overrun.allied.seat().replay.pending().kind == "rout-slowest"
