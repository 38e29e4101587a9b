"""Rules version 5, RB 16.4 sidebar "Reinforcements to an Engaged Base"
(issue 25): units held off board near an engaged Base enter it by a normal
Group Move in a later Player-Turn."""

from __future__ import annotations

import msgspec
import pytest

from pbem import session
from pbem.errors import IllegalAction
from rules.ritd import RULES as RITD
from rules.ritd import group_moves, sequence  # noqa: F401 (group_moves first: it loads the rule modules)
from rules.ritd import reinforcements as rf
from rules.ritd.position import Battle
from rules.ritd.sequence import begin_turn
from rules.ritd.state import game_map
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_overrun import _token
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")


def _waiting_game(tmp_path, monkeypatch, *, engaged: bool):
    """The Demo with the Savona (alone in Bardia) waiting off board near the
    Axis Base when the first Player-Turn begins (as Reinforcements that could
    not arrive, ``rf.held_off_board``), and, if ``engaged``, a battle in El
    Agheila once the Initial Supply Check is made: the 7/7 Tk (alone in
    Sollum) attacking the three Axis units of Sidi Omar; every die a 6."""
    monkeypatch.setattr("pbem.game.roll", lambda *args: (6,) * len(args[-1]))
    real = begin_turn
    m = game_map()

    def begin(state, active):
        state = real(state, active)
        if state.turn.number == 1:
            pos = state.position
            held = tuple(pos.blocks_in(m.resolve("Bardia"), "axis"))
            pos = msgspec.structs.replace(pos, blocks=tuple(b for b in pos.blocks if b not in held))
            state = msgspec.structs.replace(state, position=pos, waiting=rf.held_off_board(state.waiting, "axis", held))
        return state

    noted = group_moves.note_disruptions

    def after_check(state, pos, number):
        state = noted(state, pos, number)
        if engaged and number == 1 and state.turn is not None and state.turn.step == "initial-supply":
            pos = state.position
            moved = [*pos.blocks_in(m.resolve("Sollum"), "allied"), *pos.blocks_in(m.resolve("Sidi Omar"), "axis")]
            pos = pos.replace_blocks([msgspec.structs.replace(b, hex=m.base("axis")) for b in moved])
            pos = pos.with_battles((*pos.battles, Battle(hex=m.base("axis"), attacker="allied")))
            state = msgspec.structs.replace(state, position=pos)
        return state

    monkeypatch.setattr(sequence, "begin_turn", begin)
    monkeypatch.setattr(group_moves, "note_disruptions", after_check)
    return new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())


def test_rb_16_4_sidebar_reinforcements_waiting_at_an_engaged_base_enter_it_by_group_move(tmp_path, monkeypatch):
    """RB 16.4 sidebar: "If a Base is engaged, Reinforcements cannot arrive
    there, but must wait off board near Base. ... In a subsequent Player
    Turn, they can only enter the Base by normal Group Move. There are no
    Hexside limits to enter the Base from this offboard area." Entering the
    battle in the Base is Engaging: the units stop there (RB 6.0, 7.0)."""
    table = _waiting_game(tmp_path, monkeypatch, engaged=True)
    savona = next(b.token for b in table.axis.seat().replay.state.waiting["axis"])
    table.play("axis", "supply check", "basic")
    axis = table.axis.seat()
    legal = [o for o in session.legal_orders(axis) if o.startswith("enter")]
    assert legal == ["enter El Agheila Savona"]  # Engaging: it must stop in the Base
    with pytest.raises(IllegalAction, match="RB 6.0"):
        session.add_orders(axis, ["enter El Agheila -> Mersa Brega Savona"])
    table.play("axis", "enter El Agheila Savona")
    base = game_map().base("axis")
    for side in (table.axis, table.allied):
        state = side.seat().replay.state
        assert state.position.block(savona).hex == base and state.waiting.get("axis", ()) == ()
        assert state.position.battle(base) is not None and state.turn.movement.moves_made == 1
        assert [e.token for e in state.turn.movement.engagements if e.hex == base] == [savona]
    assert not [o for o in session.legal_orders(table.axis.seat()) if o.startswith(("group", "enter"))]


def test_rb_16_4_sidebar_the_waiting_group_enters_and_moves_on_when_the_base_is_free(tmp_path, monkeypatch):
    """RB 16.4 sidebar: a "normal Group Move" from "one hex directly east /
    west of the friendly Base": one hex to enter, then on along the road
    (MV-21)."""
    table = _waiting_game(tmp_path, monkeypatch, engaged=False)
    table.play("axis", "supply check", "basic")
    axis = table.axis.seat()
    legal = session.legal_orders(axis)
    assert "enter El Agheila Savona" in legal and "enter El Agheila -> Mersa Brega Savona" in legal
    table.play("axis", "enter El Agheila -> Mersa Brega Savona")
    savona = _token(table, "axis", "Savona")
    m = game_map()
    for side in (table.axis, table.allied):
        state = side.seat().replay.state
        assert state.position.block(savona).hex == m.resolve("Mersa Brega")
        assert state.turn.movement.moved_unit(savona).path == (m.base("axis"), m.resolve("Mersa Brega"))
    # One Move in a Basic Turn: nothing else moves.
    assert not [o for o in session.legal_orders(table.axis.seat()) if o.startswith(("group", "enter"))]
    table.play("axis", "end movement")
    result = session.audit(table.allied.gd.read_events(), RITD)
    assert result.replay.state.position.block(savona).hex == m.resolve("Mersa Brega")
