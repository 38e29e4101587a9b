"""Movement (rules/ritd/movement.py; RB 4.5, 5.3, 6.1-6.4, 7.2, 8.4, 10.2),
the checks the rulebook-example tests leave open (issue 29: mutation
score), through the module's public functions."""

from __future__ import annotations

import msgspec
import pytest

from rules.ritd import forced_marches, reachability
from rules.ritd import game as ritd
from rules.ritd import movement as mv
from rules.ritd.position import Battle
from tests.ritd.movement_support import MAP, at, block, group, position, route, rules_of, step

BUQ, SOLLUM = at("Buq Buq"), at("Sollum")


@pytest.mark.parametrize("kind", ["", "pass", "refuse", "rout"])
def test_rb_5_3_every_kind_of_withdrawal_move_decodes_from_a_signed_event(kind: str) -> None:
    """RB 5.3: a Withdrawal Move is made in a Pass Turn, to Refuse Battle or
    to Rout; a Move of each kind (or none) survives the event's JSON."""
    move = group("Buq Buq", ("d", route("Buq Buq", "Sidi Barrani")), withdrawal=kind)
    assert msgspec.json.decode(msgspec.json.encode(move), type=ritd.Action) == move


def test_rb_5_3_a_free_withdrawal_move_only_in_a_pass_turn() -> None:
    pos = position(block("d", "allied", "Sidi Barrani"))
    turn = mv.start_movement(pos, "allied")
    move = group("Sidi Barrani", ("d", route("Sidi Barrani", "Sidi Barrani E1")), withdrawal="pass")
    probs = mv.check_move(MAP, pos, turn, move, {"d": 1}).problems
    assert rules_of(probs) == ["RB 5.3"] and "made only in a Pass Turn" in probs[0].message


def test_rb_6_4_forced_march_allowance_is_one_hex_more_only_when_forced() -> None:
    path = route("Sidi Barrani", "Sidi Barrani E1")  # highway: +4 (RB 6.2)
    assert mv.allowance(MAP, path, 2) == 6
    assert mv.allowance(MAP, path, 2, forced=True) == 7
    assert mv.allowance(MAP, path, 2, rommel=True) == mv.allowance(MAP, path, 2) + mv.ROMMEL_BONUS


def _moved_to_sidi_barrani():
    pos = position(block("d", "allied", "Buq Buq"), block("e", "allied", "Buq Buq"))
    turn = mv.start_movement(pos, "allied")
    return step(pos, turn, group("Buq Buq", ("d", route("Buq Buq", "Sidi Barrani"))), {"d": 1})


def test_rb_6_4_a_forced_march_names_a_unit_on_the_map() -> None:
    out = _moved_to_sidi_barrani()
    check = forced_marches.check_forced_marches(MAP, out.position, out.turn, [mv.ForcedMarch("zz", route("Buq Buq", "Sollum"))],
                                    {"zz": 1})
    assert rules_of(check.problems) == ["RB 6.4"] and check.problems[0].message == "no such block: zz"


def test_rb_6_4_a_forced_march_continues_the_units_own_move_by_one_adjacent_hex() -> None:
    out = _moved_to_sidi_barrani()
    ok = [mv.ForcedMarch("d", route("Buq Buq", "Sidi Barrani", "Sidi Barrani E1"))]
    assert forced_marches.check_forced_marches(MAP, out.position, out.turn, ok, {"d": 1}).ok
    other = [mv.ForcedMarch("d", route("Sollum", "Buq Buq", "Sidi Barrani"))]
    probs = forced_marches.check_forced_marches(MAP, out.position, out.turn, other, {"d": 1}).problems
    assert rules_of(probs) == ["RB 6.4"] and "continues the unit's own move" in probs[0].message
    jump = [mv.ForcedMarch("d", route("Buq Buq", "Sidi Barrani", "Mersa Matruh"))]
    probs = forced_marches.check_forced_marches(MAP, out.position, out.turn, jump, {"d": 1}).problems
    assert rules_of(probs) == ["RB 6.4"] and "Mersa Matruh is not next to Sidi Barrani" in probs[0].message


def test_rb_6_4_forced_marches_are_announced_once_per_phase() -> None:
    out = _moved_to_sidi_barrani()
    marches = [mv.ForcedMarch("d", route("Buq Buq", "Sidi Barrani", "Sidi Barrani E1"))]
    turn = forced_marches.announce_forced_marches(MAP, out.position, out.turn, marches)
    probs = forced_marches.check_forced_marches(MAP, out.position, turn, marches, {"d": 1}).problems
    assert "Forced Marches have already been announced this phase" in [p.message for p in probs]


def test_rb_7_2_a_retreating_unit_may_not_force_march_into_an_enemy_hex() -> None:
    """RB 7.2: a unit that Disengaged may not re-engage this Player-Turn, not
    even with the extra hex of a Forced March (RB 6.4)."""
    pos = position(block("a1", "axis", "Buq Buq"), block("d1", "allied", "Buq Buq"), block("x", "axis", "Sidi Barrani E1"))
    pos = pos.with_battles([Battle(BUQ, "axis", {SOLLUM: "axis"})])
    turn = mv.start_movement(pos, "allied")
    out = step(pos, turn, group("Buq Buq", ("d1", route("Buq Buq", "Sidi Barrani"))), {"d1": 1})
    fm = [mv.ForcedMarch("d1", route("Buq Buq", "Sidi Barrani", "Sidi Barrani E1"))]
    probs = forced_marches.check_forced_marches(MAP, out.position, out.turn, fm, {"d1": 1}).problems
    assert "RB 7.2" in rules_of(probs) and any("may not re-engage" in p.message for p in probs)


def test_rb_6_4_a_hidden_units_forced_march_may_reach_as_far_as_speed_4_allows() -> None:
    """RB 6.1, 6.4: a unit of unknown speed (the opponent's) may Force March
    one hex past a 4-hex move off road: 5 hexes is what a speed-4 unit could
    reach, so it is accepted (its speed is checked when revealed)."""
    walk = [at("Jalo")]
    while len(walk) < 6:
        walk.append(next(n for n in MAP.passable_neighbours(walk[-1])
                         if n not in walk and MAP.road(walk[-1], n) is None
                         and MAP.distance(walk[0], n) == len(walk)))
    pos = position(block("d", "allied", "Jalo"))
    out = step(pos, mv.start_movement(pos, "allied"), group("Jalo", ("d", tuple(walk[:5]))), {"d": None})
    check = forced_marches.check_forced_marches(MAP, out.position, out.turn, [mv.ForcedMarch("d", tuple(walk))], {"d": None})
    assert check.ok, [str(p) for p in check.problems]


def test_rb_8_4_only_an_attacked_group_in_a_battle_it_defends_may_refuse() -> None:
    pos = position(block("d", "allied", "Sidi Barrani"))
    turn = mv.start_movement(pos, "axis")
    probs = mv.refusal_problems(MAP, pos, turn, at("Sidi Barrani"))
    assert rules_of(probs) == ["RB 8.4", "RB 10.2"]
    assert "was not Attacked in this Movement phase" in probs[0].message
    assert "there is no battle in Sidi Barrani in which the allied side defends" in probs[1].message


def test_rb_5_2_a_regroup_out_of_a_battle_is_recorded_as_a_regroup_while_the_retreat_waits() -> None:
    """RB 5.2, 10.3 (T-35): a unit Disengaging in a Regroup Move waits in the
    battle hex for its Retreat; the record says its Move was a Regroup (what
    a later Forced March of it is judged by, RB 6.4, MV-08)."""
    pos = position(block("a1", "axis", "Buq Buq"), block("d1", "allied", "Buq Buq"), block("d2", "allied", "Buq Buq"))
    pos = pos.with_battles([Battle(BUQ, "axis", {SOLLUM: "axis"})])
    turn = mv.start_movement(pos, "allied")
    move = mv.Move("regroup", BUQ, (mv.UnitMove("d1", route("Buq Buq", "Sidi Barrani")),),
                   destination=at("Sidi Barrani"))
    assert mv.check_move(MAP, pos, turn, move, {"d1": 1}).ok
    out = mv.apply_move(MAP, pos, turn, move, defer_retreats=True)
    assert out.turn.moved_unit("d1").regroup and out.turn.pending_retreat("d1").regroup
    plain = mv.apply_move(MAP, pos, turn, group("Buq Buq", ("d1", route("Buq Buq", "Sidi Barrani"))),
                          defer_retreats=True)
    assert not plain.turn.moved_unit("d1").regroup and not plain.turn.pending_retreat("d1").regroup


def _jalo_walk(n: int) -> tuple[str, ...]:
    walk = [at("Jalo")]
    while len(walk) < n:
        walk.append(next(x for x in MAP.passable_neighbours(walk[-1])
                         if x not in walk and MAP.road(walk[-1], x) is None and MAP.distance(walk[0], x) == len(walk)))
    return tuple(walk)


@pytest.mark.parametrize("speed", [1, 2, 3, 4])
def test_rb_6_1_off_road_a_unit_reaches_exactly_as_many_hexes_as_its_speed(speed: int) -> None:
    walk = _jalo_walk(6)
    pos = position(block("d", "allied", "Jalo"))
    reach = reachability.reachable(MAP, pos, mv.start_movement(pos, "allied"), "d", speed)
    assert walk[speed] in reach.paths and len(reach.paths[walk[speed]]) - 1 == speed
    assert walk[speed + 1] not in reach.paths


def test_rb_11_1_explain_move_says_a_disrupted_unit_moves_only_to_rout() -> None:
    pos = position(block("d", "allied", "Jalo", disrupted=True))
    turn = mv.start_movement(pos, "allied")
    note = "  note: it is Disrupted and cannot move except to Rout (RB 11.1)"
    assert note in reachability.explain_move(MAP, pos, turn, "d", 2)
    assert note not in reachability.explain_move(MAP, pos, turn, "d", 2, withdrawal="rout")


def test_rb_6_1_explain_move_lists_the_neighbouring_hexes_it_cannot_reach() -> None:
    walk = _jalo_walk(3)
    pos = position(block("d", "allied", "Jalo"))
    text = reachability.explain_move(MAP, pos, mv.start_movement(pos, "allied"), "d", 1)
    assert "Cannot reach:" in text
    after = text[text.index("Cannot reach:") + 1:]
    assert any(line.startswith(f"  {MAP.name(walk[2])}: RB 6.1") for line in after)


def test_rb_6_2_to_6_4_the_longest_move_is_ten_highway_hexes() -> None:
    """Speed 4 (RB 6.1) + highway bonus 4 (RB 6.2) + Rommel 1 (RB 6.3) +
    Forced March 1 (RB 6.4): a unit starting on the highway may try to
    reach the 10th highway hex, not the 11th."""
    hw = MAP.road_path(MAP.base("axis"), MAP.base("allied"), {"highway"})
    pos = position(block("d", "axis", MAP.name(hw[0])))
    reach = reachability.reachable(MAP, pos, mv.start_movement(pos, "axis"), "d", 4, rommel=True, forced=True)
    assert hw[10] in reach.paths and reach.paths[hw[10]] == tuple(hw[:11])
    assert hw[11] not in reach.paths
    plain = reachability.reachable(MAP, pos, mv.start_movement(pos, "axis"), "d", 4)
    assert hw[8] in plain.paths and hw[9] not in plain.paths
