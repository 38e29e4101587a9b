"""Rules version 5, RB 17.1 Strategic Victory (issue 25): the game ends the
moment it is won (controlling the enemy Base, or three Supplied units exited
off the enemy map-end, sidebar "Exiting Units")."""

from __future__ import annotations

import msgspec
import pytest

from pbem import session
from pbem.errors import IllegalAction
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


@pytest.fixture
def at_the_map_end(tmp_path, monkeypatch):
    """The four Ft Capuzzo units in Alexandria SW1, on the Allied (east)
    map-end, with a Supply Line there (RB 12.2)."""
    from rules.ritd import supply as sp
    from rules.ritd import supply_checks

    edge = game_map().resolve("Alexandria SW1")
    real_status = sp.block_status

    def status(s, b):
        return "base" if b.side == "axis" and b.hex == edge else real_status(s, b)

    monkeypatch.setattr(sp, "block_status", status)
    monkeypatch.setattr(supply_checks, "block_status", status)
    return _placed(tmp_path, monkeypatch, "Alexandria SW1")


def test_rb_17_1_exiting_three_supplied_units_off_the_enemy_map_end_is_a_strategic_victory(at_the_map_end):
    """RB 17.1: "A 'sudden-death' Strategic Victory is achieved by exiting
    the enemy map-end with three or more Supplied units ... the game ends
    immediately." Sidebar "Exiting Units": "To exit a unit just move into a
    mapedge hex and continue moving offboard." """
    table = at_the_map_end
    table.play("axis", "supply check", "basic")
    axis = table.axis.seat()
    legal = session.legal_orders(axis)
    assert "exit Alexandria SW1 Brescia" in legal
    assert not [o for o in legal if o.startswith("exit") and "->" in o]  # Alexandria is the Base, not empty
    table.play("axis", "exit Alexandria SW1 Brescia Pavia Bologna")
    for side in (table.axis, table.allied):
        replay = side.seat().replay
        state = replay.state
        assert state.phase == "over" and replay.pending() is None
        assert state.exited == {"axis": 3}
        assert (state.result.level, state.result.winner) == ("strategic", "axis")
        assert "exited 3 Supplied units" in state.result.explanation[0]
        assert len(state.position.blocks_in(game_map().resolve("Alexandria SW1"), "axis")) == 1
    result = session.audit(table.allied.gd.read_events(), RITD)
    assert result.replay.state.exited == {"axis": 3}


def test_rb_17_1_exited_units_are_counted_and_never_return(at_the_map_end):
    """RB 17.1 sidebar: "exited units cannot return." Two exits count two;
    the exit is the Move of the Basic Turn (RB 4.0), and the game goes on."""
    table = at_the_map_end
    table.play("axis", "supply check", "basic")
    with pytest.raises(IllegalAction, match="RB 17.1: Ft Capuzzo is not on the enemy map-end"):
        session.add_orders(table.axis.seat(), ["exit Bardia -> Ft Capuzzo Savona"])
    table.play("axis", "exit Alexandria SW1 Brescia Pavia")
    state = table.axis.seat().replay.state
    assert state.phase == "turn" and state.exited == {"axis": 2}
    assert state.turn.movement.moves_made == 1
    assert not [o for o in session.legal_orders(table.axis.seat()) if o.startswith(("exit", "group"))]
    assert table.allied.seat().replay.state.exited == {"axis": 2}
    # Said as an exit (not an elimination) to the opponent, who cannot name the blocks.
    said = [h.text for info in table.allied.seat().replay.history for h in info.happenings]
    assert "2 Axis blocks exit the map off the enemy map-end from Alexandria SW1" in said
    assert not [t for t in said if "eliminated" in t]
    assert len(list(table.allied.seat().replay.state.position.blocks_of("axis"))) == 6


def test_rb_17_1_sidebar_the_step_off_the_map_is_one_hex_of_movement() -> None:
    """Sidebar "Exiting Units": "move into a mapedge hex and continue moving
    offboard": the route to the map-end hex and one hex more (RB 6.1; MV-20);
    a hidden speed becomes an obligation for that distance (DESIGN 4)."""
    from rules.ritd import exits
    from rules.ritd import movement as mv
    from rules.ritd.actions import ExitMap
    from tests.ritd.movement_support import MAP, block, position, route

    pos = position(block("A1", "axis", "Alexandria SW1 W1"))
    turn = mv.start_movement(pos, "axis")
    path = route("Alexandria SW1 W1", "Alexandria SW1")
    action = ExitMap(origin=path[0], units=(mv.UnitMove("A1", path),))
    assert exits.map_end_hexes(MAP, "axis") == {MAP.resolve("Alexandria"), MAP.resolve("Alexandria SW1")}
    slow = exits.exit_problems(MAP, pos, turn, action, {"A1": 1})
    assert [p.rule for p in slow.problems] == ["RB 6.1"] and "off the map" in slow.problems[0].message
    assert exits.exit_problems(MAP, pos, turn, action, {"A1": 2}).ok
    hidden = exits.exit_problems(MAP, pos, turn, action, {"A1": None})
    assert hidden.ok and hidden.obligations == (mv.SpeedObligation("A1", 2),)
    # The Allies exit at the other end (RB 1.6: El Agheila at the western map edge).
    assert MAP.resolve("El Agheila") in exits.map_end_hexes(MAP, "allied")
