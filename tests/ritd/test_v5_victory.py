"""Rules version 5, RB 17.1 Strategic Victory (issue 25): the game ends the
moment it is won (controlling the enemy Base, or three Supplied units exited
off the enemy map-end, sidebar "Exiting Units")."""

from __future__ import annotations

import msgspec
import pytest

from pbem import session
from rules.ritd import RULES as RITD
from rules.ritd import group_moves, sequence  # noqa: F401 (group_moves first: it loads the rule modules)
from rules.ritd.sequence import begin_turn
from rules.ritd.state import game_map
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")


def _placed(tmp_path, monkeypatch, to_place: str, *, unsupplied: bool = False):
    """The Demo with the four Axis units of Ft Capuzzo (Brescia, Pavia,
    Bologna, Sabratha) in ``to_place`` when the first Player-Turn begins,
    marked Unsupplied (RB 12.1) if ``unsupplied``; every die a 6."""
    monkeypatch.setattr("pbem.game.roll", lambda *args: (6,) * len(args[-1]))
    real = begin_turn

    def begin(state, active):
        state = real(state, active)
        if state.turn.number == 1:
            pos = state.position
            moved = [msgspec.structs.replace(b, hex=game_map().resolve(to_place), unsupplied=unsupplied)
                     for b in pos.blocks_in(game_map().resolve("Ft Capuzzo"), "axis")]
            state = msgspec.structs.replace(state, position=pos.replace_blocks(moved))
        return state

    monkeypatch.setattr(sequence, "begin_turn", begin)
    return new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())


def test_rb_17_1_strategic_victory_by_base_control_ends_the_game_at_once(tmp_path, monkeypatch):
    """RB 17.1: "A 'sudden-death' Strategic Victory is achieved by ...
    controlling (1.2) the enemy Base. If either of these conditions occurs,
    the game ends immediately." The Move that takes Alexandria ends the game:
    no 'end movement', no Combat, no end of the Player-Turn."""
    table = _placed(tmp_path, monkeypatch, "El Alamein")
    table.play("axis", "supply check", "basic")
    axis = table.axis.seat()
    assert "group El Alamein -> Alexandria Brescia" in session.legal_orders(axis)
    table.play("axis", "group El Alamein -> Alexandria Brescia")
    for side in (table.axis, table.allied):
        replay = side.seat().replay
        assert replay.state.phase == "over" and replay.pending() is None
        assert (replay.state.result.level, replay.state.result.winner) == ("strategic", "axis")
        assert "controls the enemy Base Alexandria" in replay.state.result.explanation[0]
    result = session.audit(table.allied.gd.read_events(), RITD)
    assert result.replay.state.phase == "over"
