"""The last Player-Turn's routes (``State.last_moves``, ``View.last_moves``),
for the map's arrows: every Move, Forced March and Withdrawal of both sides
(RB 5.0-6.4, 10.2), the same in both replays, public, and cleared when the
next Player-Turn's Movement begins."""

from __future__ import annotations

import pytest

from rules.ritd import game as ritd
from rules.ritd.state import game_map
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_refusal import REGROUP
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied
from tests.ritd.test_game_turn import quiet_route

pytestmark = pytest.mark.usefixtures("registered_ritd")


@pytest.fixture
def demo(tmp_path):
    return new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())


def _state(side):
    return side.seat().replay.state


def test_rb_19_0_the_regroup_and_the_refusal_are_both_recorded_until_the_next_movement(demo):
    m = game_map()
    sollum, barrani = m.resolve("Sollum"), m.resolve("Sidi Barrani")
    start = {b.token: b.hex for b in _state(demo.axis).position.blocks}
    demo.play("axis", *REGROUP)
    demo.play("allied", "refuse-battle Sollum slowest 3")
    demo.play("axis", "pursue Sollum with none")
    demo.play("allied", "refuse-battle Sollum -> Sidi Barrani")
    axis, allied = _state(demo.axis), _state(demo.allied)
    moves = axis.last_moves
    assert moves == allied.last_moves  # positions are public: both replays agree
    regroup = [mv for mv in moves if mv.side == "axis"]
    # RB 5.2: three units from in or next to the Command Point into Sollum.
    assert len(regroup) == 3
    assert all(mv.path[0] == start[mv.token] and mv.path[-1] == sollum for mv in regroup)
    assert all(mv.turn == 1 and mv.withdrawal == "" and not mv.forced for mv in regroup)
    # RB 10.2: the refusing Group's Withdrawal Move, recorded in the Axis Player-Turn.
    (refusal,) = [mv for mv in moves if mv.side == "allied"]
    assert refusal.path == (sollum, m.resolve("Buq Buq"), barrani)
    assert refusal.withdrawal == "refuse" and refusal.turn == 1
    # The view shows the Axis routes to the Allies by token, with no unit named.
    view = ritd.view(allied, "allied")
    assert view.last_moves == list(moves)
    assert "Savona" not in repr(view.last_moves)
    # Kept into the next Player-Turn's first steps; its Movement clears them (a Pass moves nothing).
    demo.play("axis", "supply check", "reveal option")
    assert _state(demo.allied).last_moves == moves
    demo.play("allied", "supply check", "pass", "end movement", "supply check")
    assert _state(demo.axis).last_moves == () == _state(demo.allied).last_moves


def test_rb_6_4_a_forced_march_extends_the_units_route(demo, monkeypatch):
    monkeypatch.setattr("pbem.game.roll", lambda *args: (6,) * len(args[-1]))  # 4-6: the march succeeds
    m = game_map()
    first, second = quiet_route(_state(demo.axis), "Sidi Omar")
    demo.play("axis", "supply check", "basic", f"group Sidi Omar -> {first} GGFF",
              f"forced-march GGFF -> {second}", "end movement")
    (route,) = _state(demo.axis).last_moves
    assert route.path == (m.resolve("Sidi Omar"), m.resolve(first), m.resolve(second))
    assert route.forced and route.side == "axis" and route.turn == 1
    assert _state(demo.allied).last_moves == (route,)


def test_rb_6_4_a_failed_forced_march_leaves_the_move_as_it_was(demo, monkeypatch):
    monkeypatch.setattr("pbem.game.roll", lambda *args: (1,) * len(args[-1]))  # 1-3: Disrupted where it is
    m = game_map()
    first, second = quiet_route(_state(demo.axis), "Sidi Omar")
    demo.play("axis", "supply check", "basic", f"group Sidi Omar -> {first} GGFF",
              f"forced-march GGFF -> {second}", "end movement")
    (route,) = _state(demo.axis).last_moves
    assert route.path == (m.resolve("Sidi Omar"), m.resolve(first)) and not route.forced
