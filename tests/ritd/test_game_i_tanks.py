"""The optional rule "Allied I-Tanks" (RB 17.0; decisions CB-15..CB-18)
through the engine: a 1941 game hosted with ``options=("i-tanks",)``, where
the 32AT/1 in Tobruk moves at speed 2, and a client that ignores the option
is caught when the block is opened and at the audit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pbem import session
from pbem.errors import IllegalAction
from rules.ritd import RULES as RITD
from rules.ritd import game as ritd
from rules.ritd import group_moves
from rules.ritd import losses as ls
from rules.ritd.group_moves import unit_speed
from rules.ritd.state import all_scenarios, game_map
from tests.ritd.ritd_table import new_game

pytestmark = pytest.mark.usefixtures("registered_ritd")

#: Three hexes off the road from Tobruk: speed 3 reaches it, speed 2 does not (RB 6.1, 6.2).
TOO_FAR = "group Tobruk -> Bir Hacheim NW1 32AT/1"
NEAR = "group Tobruk -> Acroma SE1 32AT/1"


def setups() -> tuple[list[str], list[str]]:
    """RB 18.2: the Axis "S" units at El Agheila; the Allied "S" units spread
    over Egypt and the "T" units (with the I-tank 32AT/1) in Tobruk."""
    sc = all_scenarios()
    s = sc.get("1941")
    axis = [f"deploy {u.name} at El Agheila" for u in sc.starting_units(s, "axis")] + ["end deployment"]
    free = [u.name for u in sc.setup_units(s, "allied", s.allied.setup[0].id)]
    tobruk = [f"deploy {u.name} at Tobruk" for u in sc.setup_units(s, "allied", s.allied.setup[1].id)]
    hexes = ["Mersa Matruh", "Sidi Barrani", "Sollum", "Bardia", "Buq Buq", "El Alamein"]
    allied = [f"deploy {u} at {h}" for u, h in zip(free, hexes)] + tobruk + ["end deployment"]
    assert "deploy 32AT/1 at Tobruk" in allied
    return axis, allied


def _allied_to_move(tmp_path: Path, options: tuple[str, ...]):
    """After the Axis passes its first Player-Turn, the Allies' turn: Initial
    Supply Check and a Basic option played."""
    axis, allied = setups()
    table = new_game(tmp_path, "1941", axis, allied, options=options)
    table.play("axis", "supply check", "pass", "end movement", "supply check")
    session.add_orders(table.allied.seat(), ["supply check", "basic"])
    return table


def _itank(state):
    return next(b for b in state.position.blocks_of("allied") if b.unit == "32AT/1")


def test_rb_17_optional_i_tanks_game_moves_at_speed_2_and_both_sides_know_the_option(tmp_path):
    table = _allied_to_move(tmp_path, ("i-tanks",))
    for side in (table.axis, table.allied):
        state = side.seat().replay.state
        assert state.options == ("i-tanks",)
        assert "optional rule: Allied I-Tanks" in ritd.render_text(ritd.view(state, side.role))
    seat = table.allied.seat()
    draft, _ = session.draft_replay(seat)
    assert ritd.explain(draft.state, "allied", "move", "32AT/1", None)[0].endswith("speed 2")
    orders = session.legal_orders(seat)
    assert NEAR in orders and TOO_FAR not in orders
    with pytest.raises(IllegalAction) as err:
        session.add_orders(seat, [TOO_FAR])
    text = str(err.value) + " ".join(getattr(err.value, "details", []) or [])
    assert "RB 6.1" in text and "speed 2" in text
    session.add_orders(table.allied.seat(), [NEAR, "end movement"])
    table.deliver(table.axis, Path(session.send(table.allied.seat()).turn_file).read_bytes())
    axis = table.axis.seat().replay.state
    moved = [b for b in axis.position.blocks_of("allied") if b.hex == game_map().resolve("Acroma SE1")]
    assert len(moved) == 1 and moved[0].unit == ""  # still hidden from the Axis
    # The Axis defers the speed check of the hidden block: 2 hexes off the road need speed 2.
    assert [o.needed for o in axis.obligations if o.kind == "speed" and o.token == moved[0].token] == [2]
    # Opened, the I-tank's speed 2 is enough: the check passes, on both sides and at the audit.
    table.deliver(table.axis, Path(session.send(table.allied.seat(), open_all=True).turn_file).read_bytes())
    axis = table.axis.seat().replay.state
    assert _itank(axis).token == moved[0].token
    assert not [o for o in axis.obligations if o.token == moved[0].token]
    assert _itank(session.audit(table.allied.gd.read_events(), RITD).replay.state).hex == moved[0].hex


def test_rb_17_optional_i_tanks_game_a_client_ignoring_the_option_is_caught(tmp_path, monkeypatch):
    table = _allied_to_move(tmp_path, ("i-tanks",))

    def printed_speed(state, unit):  # the Allied client moves the I-tank at its printed speed 3
        return unit_speed(unit)

    with monkeypatch.context() as cheat:
        cheat.setattr(group_moves, "speed_of", printed_speed)
        session.add_orders(table.allied.seat(), [TOO_FAR, "end movement"])
        token = _itank(table.allied.seat().replay.state).token
        lie = Path(session.send(table.allied.seat()).turn_file).read_bytes()
    # The Axis cannot see the block's unit: the move is accepted with a deferred
    # check that the block has speed 3 (RB 6.1, DESIGN 4).
    table.deliver(table.axis, lie)
    axis = table.axis.seat().replay.state
    assert [o.needed for o in axis.obligations if o.kind == "speed" and o.token == token] == [3]
    with monkeypatch.context() as cheat:  # the Allies' next event opens the identity
        cheat.setattr(group_moves, "speed_of", printed_speed)
        data = Path(session.send(table.allied.seat(), open_all=True).turn_file).read_bytes()
        events = table.allied.gd.read_events()
    with pytest.raises(IllegalAction) as err:
        table.deliver(table.axis, data)
    text = str(err.value) + " ".join(getattr(err.value, "details", []) or [])
    assert re.search(rf"event \d+ by allied: block {token} moved in event \d+", text)
    assert "that needs speed 3, but 32AT/1 has speed 2" in text and "RB 6.1" in text
    with pytest.raises(IllegalAction) as err:  # the audit replays with every opening known
        session.audit(events, RITD)
    text = str(err.value) + " ".join(getattr(err.value, "details", []) or [])
    assert "RB 6.1" in text and "speed 2" in text and "event 7 by allied" in text


def test_rb_17_optional_i_tanks_game_without_the_option_the_i_tank_moves_at_speed_3(tmp_path):
    table = _allied_to_move(tmp_path, ())
    seat = table.allied.seat()
    assert seat.replay.state.options == ()
    assert "optional rule" not in ritd.render_text(ritd.view(seat.replay.state, "allied"))
    assert TOO_FAR in session.legal_orders(seat)
    session.add_orders(seat, [TOO_FAR, "end movement"])
    table.deliver(table.axis, Path(session.send(table.allied.seat(), open_all=True).turn_file).read_bytes())
    assert _itank(table.axis.seat().replay.state).hex == game_map().resolve("Bir Hacheim NW1")


def _gazala_battle(tmp_path, options):
    """RB 18.7 Gazala: the 21Pz/5 (elite, 6 CV) at Gazala attacks the I-tank
    32AT/1 alone at Acroma; the Allies accept; both reveal (RB 8.5); the I-tank's
    Defensive Fire (four 6s) takes the 21Pz/5 to 2 CV, whose Offensive Fire
    (two 6s) scores 2 hits on the Allied armor."""
    sc = all_scenarios()
    s = sc.get("gazala")
    axis = [f"deploy {u.name} at {'Gazala' if u.name == '21Pz/5' else 'El Agheila'}"
            for u in sc.starting_units(s, "axis")] + ["end deployment"]
    allied = [f"deploy {u.name} at {'Acroma' if u.name == '32AT/1' else 'Alexandria'}"
              for u in sc.starting_units(s, "allied")] + ["end deployment"]
    table = new_game(tmp_path, "gazala", axis, allied, keep_hands=False, options=options)
    table.play("allied", "end buildup")
    table.play("axis", "end buildup")
    table.keep_hands()
    table.play("axis", "supply check", "basic", "group Gazala -> Acroma 21Pz/5", "end movement")
    # RB 10.5: Refusing Battle would announce the I-tank's speed as the slowest (CB-18).
    slowest = 2 if "i-tanks" in options else 3
    assert f"refuse-battle Acroma slowest {slowest}" in session.legal_orders(table.allied.seat())
    table.play("allied", "accept-battle Acroma", "reveal units")
    table.play("axis", "reveal units", "battles Acroma")
    table.play("allied", "fire Acroma: 32AT/1 at armor")
    table.play("axis", "losses Acroma auto", "fire Acroma: 21Pz/5 at armor")
    return table


@pytest.mark.parametrize("options, cv, message", [
    (("i-tanks",), 3, "this placement applies 0 hits but 2 can be applied"),
    ((), 2, "this placement removes 1 CV but the hits can remove 2"),
])
def test_rb_17_optional_i_tanks_game_combat_two_hits_take_one_step(tmp_path, monkeypatch, options, cv, message):
    monkeypatch.setattr("pbem.game.roll", lambda *args: (6,) * len(args[-1]))
    table = _gazala_battle(tmp_path, options)
    seat = table.allied.seat()
    draft, _ = session.draft_replay(seat)  # the Offensive Fire dice roll with the Allies' next event
    assert draft.pending().kind == "defensive-losses"
    assert draft.state.turn.fire_result.hits == {"armor": ls.ClassHits(hits=2)}
    # RB 9.5: one hit on the I-tank wastes the other, which it could take.
    with pytest.raises(IllegalAction) as err:
        session.add_orders(seat, ["losses Acroma: 32AT/1 1"])
    text = str(err.value) + " ".join(getattr(err.value, "details", []) or [])
    assert "RB 9.5" in text and message in text
    table.play("allied", "losses Acroma: 32AT/1 2")
    for side in (table.axis, table.allied):
        state = side.seat().replay.state
        assert (_itank(state).cv, _itank(state).hex) == (cv, game_map().resolve("Acroma"))
    assert _itank(session.audit(table.allied.gd.read_events(), RITD).replay.state).cv == cv
