"""The rulebook's movement examples, laid on the real map (RB = shared/seeds/
rommel-in-the-desert.txt; EX-nn = the rules digest's worked examples)."""

from __future__ import annotations

import msgspec
import pytest

from rules.ritd import forced_marches, reachability, supply
from rules.ritd import movement as mv
from rules.ritd.position import Battle, Position
from tests.ritd.movement_support import (
    MAP,
    at,
    block,
    group,
    position,
    regroup,
    route,
    rules_of,
    step,
)
from tests.ritd.rulebook_cases import MECHILI_SUPPLY_LINES

# ------------------------------------------------------- RB 5.2 Regroup Example (EX-02)


def _walk(start: str, *dirs: str) -> str:
    h = at(start)
    for d in dirs:
        n = MAP.neighbour(h, d)
        assert n is not None
        h = n
    return h


# Laid in the open desert south of Bir Hacheim, no roads, all clear hexsides.
CP = at("Bir Hacheim SE1")  # [C]
DEST = _walk("Bir Hacheim SE1", "E", "E")  # [D]
HEX1 = _walk("Bir Hacheim SE1", "W")  # [1]: adjacent to [C], 3 from [D]
HEX3 = _walk("Bir Hacheim SE1", "SW")  # [3]: adjacent to [C], 3 from [D]
HEX4 = _walk("Bir Hacheim SE1", "W", "W")  # [4]: 2 from [C], 4 from [D]


def _regroup_position() -> Position:
    b = []
    b.append(block("u1", "allied", HEX1))
    b.append(block("u2", "allied", HEX1))
    b.append(block("u3", "allied", CP))  # [2] is the Command Point itself
    b.append(block("u4", "allied", CP))
    b.append(block("u5", "allied", HEX3))
    b.append(block("art", "allied", HEX3))
    b.append(block("far", "allied", HEX4))
    return position(*b)


REGROUP_SPEEDS = {"u1": 3, "u2": 4, "u3": 2, "u4": 2, "u5": 3, "art": 1, "far": 4}


def _straight(a: str, b: str) -> tuple[str, ...]:
    """A shortest off-road route (the example's area has no roads)."""
    path = [a]
    while path[-1] != b:
        here = path[-1]
        path.append(min((n for n in MAP.passable_neighbours(here)), key=lambda n: (MAP.distance(n, b), n)))
    return tuple(path)


def test_rb_5_2_regroup_example_layout() -> None:
    assert MAP.is_adjacent(HEX1, CP) and MAP.is_adjacent(HEX3, CP)
    assert not MAP.is_adjacent(HEX4, CP) and HEX4 != CP
    assert MAP.distance(HEX1, DEST) == 3 and MAP.distance(HEX3, DEST) == 3
    assert MAP.distance(CP, DEST) == 2 and MAP.distance(HEX4, DEST) == 4
    for a in (HEX1, HEX3, HEX4, CP):
        assert MAP.worst_road(_straight(a, DEST)) is None  # no road bonus anywhere


def test_rb_5_2_regroup_example_five_units_regroup_to_d() -> None:
    pos = _regroup_position()
    turn = mv.start_movement(pos, "allied")
    five = [("u1", _straight(HEX1, DEST)), ("u2", _straight(HEX1, DEST)), ("u3", _straight(CP, DEST)),
            ("u4", _straight(CP, DEST)), ("u5", _straight(HEX3, DEST))]
    out = step(pos, turn, regroup(CP, DEST, *five), REGROUP_SPEEDS)
    assert {b.token for b in out.position.blocks_in(DEST)} == {"u1", "u2", "u3", "u4", "u5"}
    assert out.position.block("art").hex == HEX3 and out.position.block("far").hex == HEX4
    assert out.turn.moves_made == 1


def test_rb_5_2_regroup_example_artillery_in_3_too_slow_cannot_move_at_all() -> None:
    pos = _regroup_position()
    turn = mv.start_movement(pos, "allied")
    move = regroup(CP, DEST, ("u5", _straight(HEX3, DEST)), ("art", _straight(HEX3, DEST)))
    check = mv.check_move(MAP, pos, turn, move, REGROUP_SPEEDS)
    assert rules_of(check.problems) == ["RB 6.1"]
    assert "cannot move 3 hexes" in check.problems[0].message and "speed 1" in check.problems[0].message
    # Distance is measured from the unit's own hex, not from the Command Point (2 hexes).
    assert DEST not in reachability.reachable(MAP, pos, turn, "art", 1).paths
    # It cannot reach [D] even by Forced March (3 > 1 + 1), so it cannot take part at all.
    fm = forced_marches.check_forced_marches(MAP, pos, turn, [mv.ForcedMarch("art", _straight(HEX3, DEST))], REGROUP_SPEEDS)
    assert "RB 6.4" in rules_of(fm.problems)


def test_rb_5_2_regroup_example_units_in_4_not_adjacent_to_cp_cannot_take_part() -> None:
    pos = _regroup_position()
    turn = mv.start_movement(pos, "allied")
    # Fast enough (4 hexes, speed 4), but not in or adjacent to [C].
    assert DEST in reachability.reachable(MAP, pos, turn, "far", 4).paths
    check = mv.check_move(MAP, pos, turn, regroup(CP, DEST, ("far", _straight(HEX4, DEST))), REGROUP_SPEEDS)
    assert rules_of(check.problems) == ["RB 5.2"]
    assert "neither in nor adjacent to the Command Point" in check.problems[0].message


def test_rb_5_2_command_point_may_not_be_an_enemy_hex() -> None:
    pos = position(block("a", "allied", HEX1), block("e", "axis", CP))
    turn = mv.start_movement(pos, "allied")
    check = mv.check_move(MAP, pos, turn, regroup(CP, DEST, ("a", _straight(HEX1, DEST))), {"a": 4})
    assert "RB 5.2" in rules_of(check.problems)
    assert any("is an enemy hex" in p.message for p in check.problems)


def test_rb_5_2_sidebar_regrouping_forced_march_disrupts_at_original_hex() -> None:
    pos = _regroup_position()
    turn = mv.start_movement(pos, "allied")
    near = _walk("Bir Hacheim SE1", "E")  # 2 hexes from [3]: one more than the artillery can move
    path = _straight(HEX3, near)
    assert len(path) - 1 == 2 and MAP.is_adjacent(HEX3, CP)
    out = step(pos, turn, regroup(CP, near, ("u5", _straight(HEX3, near))), REGROUP_SPEEDS)
    marches = [mv.ForcedMarch("art", path)]
    assert forced_marches.check_forced_marches(MAP, out.position, out.turn, marches, REGROUP_SPEEDS).problems == ()
    turn2 = forced_marches.announce_forced_marches(MAP, out.position, out.turn, marches)
    failed = forced_marches.apply_forced_march(MAP, out.position, turn2, "art", 3)
    assert not failed.succeeded and failed.position.block("art").hex == HEX3
    assert failed.position.block("art").disrupted and not failed.step_loss
    ok = forced_marches.apply_forced_march(MAP, out.position, turn2, "art", 4)
    assert ok.succeeded and ok.position.block("art").hex == near and not ok.position.block("art").disrupted


# ------------------------------------------------------- RB 6.2 Road Bonus Example (EX-01)


def _road_run(kinds: set[str], hexes: int, need_all: bool = False) -> tuple[str, ...]:
    """A simple road path of ``hexes`` steps using only ``kinds`` (and, with
    ``need_all``, every one of them), empty of units."""
    def walk(path: tuple[str, ...]):
        if len(path) - 1 == hexes:
            used = {MAP.road(a, b) for a, b in zip(path, path[1:])}
            if not need_all or used == kinds:
                yield path
            return
        for n in MAP.road_neighbours(path[-1], kinds):
            if n not in path:
                yield from walk(path + (n,))

    for start in sorted(MAP.playable_hexes()):
        for p in walk((start,)):
            return p
    raise AssertionError(f"no {kinds} run of {hexes}")


@pytest.mark.parametrize(("kinds", "most", "mixed"), [
    ({"highway"}, 8, False),
    ({"track"}, 6, False),
    ({"trail"}, 5, False),
    ({"track", "trail"}, 5, True),
])
def test_rb_6_2_road_bonus_example_recon(kinds: set[str], most: int, mixed: bool) -> None:
    path = _road_run(kinds, most, need_all=mixed)
    pos = position(block("recon", "axis", path[0]))
    turn = mv.start_movement(pos, "axis", rommel_bonus=False)
    assert mv.check_move(MAP, pos, turn, group(path[0], ("recon", path)), {"recon": 4}).problems == ()
    try:
        longer = _road_run(kinds, most + 1, need_all=mixed)
    except AssertionError:
        return  # the map has no longer run of these roads: nothing further to reject
    pos2 = position(block("recon", "axis", longer[0]))
    check = mv.check_move(MAP, pos2, turn, group(longer[0], ("recon", longer)), {"recon": 4})
    assert rules_of(check.problems) == ["RB 6.1"]
    assert f"allows {most}" in check.problems[0].message


def test_rb_6_2_leaving_the_road_anywhere_loses_the_bonus() -> None:
    path = MAP.road_path(at("Acroma"), at("Bardia"), {"highway"})
    assert path is not None and len(path) - 1 == 4
    off = at("Sollum")
    assert MAP.road(path[-1], off) is None and MAP.is_passable(path[-1], off)
    pos = position(block("recon", "axis", path[0]))
    turn = mv.start_movement(pos, "axis", rommel_bonus=False)
    check = mv.check_move(MAP, pos, turn, group(path[0], ("recon", path + (off,))), {"recon": 4})
    assert rules_of(check.problems) == ["RB 6.1"]
    assert "route leaves the road" in check.problems[0].message and "allows 4" in check.problems[0].message


def test_rb_6_3_rommel_bonus_adds_one_hex_to_a_recon_on_highway() -> None:
    path = _road_run({"highway"}, 9)
    pos = position(block("recon", "axis", path[0]))
    turn = mv.start_movement(pos, "axis", rommel_bonus=True)
    assert mv.check_move(MAP, pos, turn, group(path[0], ("recon", path), rommel=True), {"recon": 4}).ok
    assert not mv.check_move(MAP, pos, turn, group(path[0], ("recon", path)), {"recon": 4}).ok
    # Never in 1940 (RB 18.1): the scenario switches it off.
    no = mv.start_movement(pos, "axis", rommel_bonus=False)
    check = mv.check_move(MAP, pos, no, group(path[0], ("recon", path), rommel=True), {"recon": 4})
    assert "RB 6.3" in rules_of(check.problems)


# ------------------------------------------------------- RB 5.3 Withdrawal Example (EX-03)


def _mechili() -> Position:
    return position(
        block("recon", "axis", "Mechili"),
        block("msus", "axis", "Msus"),
        block("charruba", "axis", "Charruba"),
        block("tommy", "allied", "Tobruk"),  # no Allied units west of Tobruk
        fortresses={"Benghazi": "axis", "Tobruk": "allied"},
    )


LINES = list(MECHILI_SUPPLY_LINES)


def test_rb_5_3_withdrawal_example_exactly_first_four_of_eight_lines_valid() -> None:
    pos = _mechili()
    lines = supply.supply_lines(MAP, pos, "axis", at("Mechili"))
    named = {tuple(MAP.name(h) for h in ln.chain): ln.hexes for ln in lines}
    assert set(named) == set(LINES)
    routes = mv.withdrawal_routes(MAP, pos, "recon")
    valid = {r.line.hexes for r in routes if r.valid}
    assert valid == {named[c] for c in LINES[:4]}
    for r in routes:
        if not r.valid:
            assert r.problem is not None and "physically away" in r.problem.message


def test_rb_5_3_withdrawal_example_recon_withdraws_along_route_1_in_a_pass_turn() -> None:
    pos = _mechili()
    turn = mv.start_movement(pos, "axis", withdrawal_only=True, rommel_bonus=False)
    line = next(r.line for r in mv.withdrawal_routes(MAP, pos, "recon")
                if at("Agedabia E1") in r.line.hexes)
    path = line.hexes[:line.hexes.index(at("Msus")) + 1]  # 3 hexes of track
    out = step(pos, turn, group("Mechili", ("recon", path), withdrawal="pass"), {"recon": 4})
    assert out.position.block("recon").hex == at("Msus")
    assert not out.position.block("recon").disrupted  # not a Retreat: nothing to disengage from


def test_rb_5_3_withdrawal_example_routes_5_to_8_rejected_with_reasons() -> None:
    pos = _mechili()
    turn = mv.start_movement(pos, "axis", withdrawal_only=True, rommel_bonus=False)
    lines = {tuple(MAP.name(h) for h in ln.chain): ln.hexes
             for ln in supply.supply_lines(MAP, pos, "axis", at("Mechili"))}
    for chain in LINES[5:]:
        path = lines[chain][:3]
        check = mv.check_move(MAP, pos, turn, group("Mechili", ("recon", path), withdrawal="pass"), {"recon": 4})
        assert "RB 5.3" in rules_of(check.problems), chain
        assert any("condition 4" in p.message for p in check.problems)
    # Route 5 shares its first hexes with route 1; stopping at Benghazi E1
    # is only on route 5, which turns away from the Base later (MV-04).
    five = lines[LINES[4]]
    path = five[:five.index(at("Benghazi E1")) + 1]
    check = mv.check_move(MAP, pos, turn, group("Mechili", ("recon", path), withdrawal="pass"), {"recon": 4})
    assert any("condition 4" in p.message for p in check.problems)
    # Off every Supply Line: condition 2.
    off = route("Mechili", "Mechili SE1")
    check = mv.check_move(MAP, pos, turn, group("Mechili", ("recon", off), withdrawal="pass"), {"recon": 4})
    assert any("condition 2" in p.message for p in check.problems)


def test_rb_5_3_withdrawal_reachable_hexes_lie_on_valid_lines_only() -> None:
    pos = _mechili()
    turn = mv.start_movement(pos, "axis", withdrawal_only=True, rommel_bonus=False)
    reach = reachability.reachable(MAP, pos, turn, "recon", 4, withdrawal="pass")
    valid = [r.line.hexes for r in mv.withdrawal_routes(MAP, pos, "recon") if r.valid]
    assert reach.paths
    for path in reach.paths.values():
        assert any(v[:len(path)] == path for v in valid)
    assert at("Msus") in reach.paths and at("Charruba") in reach.paths
    assert at("Derna") not in reach.paths and at("Gazala W1") not in reach.paths


def test_rb_5_3_condition_1_a_unit_without_supply_line_cannot_withdraw() -> None:
    # Cut off: Allied units astride every road out of Mechili.
    pos = position(block("recon", "axis", "Mechili"), block("x", "allied", "Mechili SW1"),
                   block("y", "allied", "Charruba E1"), block("z", "allied", "Gazala W1"),
                   block("w", "allied", "Derna SW1"), block("v", "allied", "Mechili SE1"))
    turn = mv.start_movement(pos, "axis", withdrawal_only=True, rommel_bonus=False)
    assert supply.supply_lines(MAP, pos, "axis", at("Mechili")) == ()
    check = mv.check_move(MAP, pos, turn, group("Mechili", ("recon", route("Mechili", "Mechili NW1"))
                                                , withdrawal="pass"), {"recon": 4})
    assert any("condition 1" in p.message for p in check.problems)


# ------------------------------------------------------- RB 5.3 Bardia-Ft Capuzzo (EX-04)


def test_rb_5_3_sidebar_axis_withdraws_from_ft_capuzzo_through_bardia() -> None:
    pos = position(block("i", "axis", "Ft Capuzzo"), block("t", "allied", "Sollum"))
    turn = mv.start_movement(pos, "axis", withdrawal_only=True, rommel_bonus=False)
    path = route("Ft Capuzzo", "Bardia", "Bardia W1")
    base = MAP.base("axis")
    assert MAP.distance(base, at("Bardia")) > MAP.distance(base, at("Ft Capuzzo"))
    assert MAP.worst_road(path) == "highway"
    step(pos, turn, group("Ft Capuzzo", ("i", path), withdrawal="pass"), {"i": 1})


def test_rb_5_3_sidebar_jog_exception_is_for_the_axis_base_only() -> None:
    # An Allied unit moving Ft Capuzzo -> Bardia goes towards the Axis side:
    # it cannot be a Withdrawal (Bardia is no nearer Alexandria either).
    pos = position(block("i", "allied", "Ft Capuzzo"))
    turn = mv.start_movement(pos, "allied", withdrawal_only=True)
    check = mv.check_move(MAP, pos, turn, group("Ft Capuzzo", ("i", route("Ft Capuzzo", "Bardia")),
                                                withdrawal="pass"), {"i": 1})
    assert "RB 5.3" in rules_of(check.problems)


# ------------------------------------------------------- RB 19.0 Demo (EX-31)

AXIS1 = {f"ax{i}": 1 for i in range(1, 9)}  # Italian infantry, speed 1 ...
AXIS1["ax5"] = 2  # ... but the unit that reaches Sofafi without a Forced March is motorized
ALLIED = {"mech": 3, "arm": 3, "mi": 3, "sof": 3}


def _demo() -> Position:
    return position(
        block("ax1", "axis", "Bardia"),
        block("ax2", "axis", "Ft Capuzzo"), block("ax3", "axis", "Ft Capuzzo"),
        block("ax4", "axis", "Ft Capuzzo"), block("ax5", "axis", "Ft Capuzzo"),
        block("ax6", "axis", "Sidi Omar"), block("ax7", "axis", "Sidi Omar"), block("ax8", "axis", "Sidi Omar"),
        block("mech", "allied", "Sollum"),
        block("arm", "allied", "Buq Buq"), block("mi", "allied", "Buq Buq"),
        block("sof", "allied", "Sofafi"),
        fortresses={"Bardia": "axis", "Tobruk": "axis", "Benghazi": "axis"},
    )


def test_rb_19_demo_axis_turn_1_regroup_into_sollum_three_gaps_and_no_more() -> None:
    pos = _demo()
    turn = mv.start_movement(pos, "axis", rommel_bonus=False)  # 1940: no Rommel Bonus
    three = regroup("Ft Capuzzo", "Sollum",
                    ("ax1", route("Bardia", "Sollum")),
                    ("ax2", route("Ft Capuzzo", "Sollum")),
                    ("ax6", route("Sidi Omar", "Sollum")))
    assert {MAP.hexside(a, at("Sollum")) for a in route("Bardia", "Ft Capuzzo", "Sidi Omar")} == {"gap"}
    # A fourth unit, however routed, finds every gap used (RB 7.1).
    for path in (route("Ft Capuzzo", "Sollum"), route("Ft Capuzzo", "Bardia", "Sollum"),
                 route("Ft Capuzzo", "Sidi Omar", "Sollum")):
        four = mv.Move("regroup", three.origin, three.units + (mv.UnitMove("ax3", path),),
                       destination=three.destination)
        check = mv.check_move(MAP, pos, turn, four, {**AXIS1, "ax3": 2})
        assert rules_of(check.problems) == ["RB 7.1"], path
        msg = check.problems[0].message
        assert msg.startswith("hexside limit reached: 1 unit already engaged Sollum across the Sollum ")
        assert "limit 1 for a gap or mountain road hexside" in msg
    out = step(pos, turn, three, AXIS1)
    assert out.attacked == (at("Sollum"),)
    battle = out.position.battle(at("Sollum"))
    assert battle is not None and battle.attacker == "axis" and battle.defender == "allied"
    assert {battle.hexside_owner(at(h)) for h in ("Bardia", "Ft Capuzzo", "Sidi Omar")} == {"axis"}
    assert battle.hexside_owner(at("Buq Buq")) == "allied"  # uncrossed: the Defender's (RB 8.1)
    # No other Axis unit can move: a Basic Turn has one Move (RB 4.1).
    extra = group("Ft Capuzzo", ("ax3", route("Ft Capuzzo", "Sidi Omar")))
    assert "RB 4.0" in rules_of(mv.check_move(MAP, out.position, out.turn, extra, AXIS1).problems)
    # Not revealed while movement goes on; the Allied player may refuse.
    assert mv.refusable_groups(MAP, out.position, out.turn) == (at("Sollum"),)
    # The Allied unit Refuses Battle: Withdrawal to Sidi Barrani along the highway.
    refuse = group("Sollum", ("mech", route("Sollum", "Buq Buq", "Sidi Barrani")), withdrawal="refuse")
    done = step(out.position, out.turn, refuse, ALLIED)
    mech = done.position.block("mech")
    assert mech.hex == at("Sidi Barrani") and mech.disrupted and not mech.revealed
    assert done.position.battles == ()  # no battle left, so no combat this turn
    assert mv.units_to_reveal(done.position) == ()  # neither group revealed (RB 10.2)


def _after_turn_1() -> Position:
    pos = _demo()
    moved = {"ax1": "Sollum", "ax2": "Sollum", "ax6": "Sollum", "mech": "Sidi Barrani"}
    return pos.replace_blocks([
        msgspec.structs.replace(b, hex=at(moved[b.token]), disrupted=b.token == "mech")
        for b in pos.blocks if b.token in moved
    ])


def test_rb_19_demo_axis_turn_2_two_units_attack_buq_buq_across_one_clear_hexside() -> None:
    pos = _after_turn_1()
    turn = mv.start_movement(pos, "axis", rommel_bonus=False)
    to_buq = route("Ft Capuzzo", "Sollum", "Buq Buq")  # 2 hexes of highway: speed 1 + 4
    three = group("Ft Capuzzo", ("ax3", to_buq), ("ax4", to_buq), ("ax5", to_buq))
    check = mv.check_move(MAP, pos, turn, three, AXIS1)
    assert rules_of(check.problems) == ["RB 7.1"]
    assert check.problems[0].message.startswith(
        "hexside limit reached: 2 units already engaged Buq Buq across the Buq Buq W hexside this phase")
    move = group("Ft Capuzzo", ("ax3", to_buq), ("ax4", to_buq), ("ax5", route("Ft Capuzzo", "Sidi Omar")))
    out = step(pos, turn, move, AXIS1)
    assert out.attacked == (at("Buq Buq"),)
    assert len(out.position.blocks_in(at("Buq Buq"), "axis")) == 2
    assert len(out.position.blocks_in(at("Sidi Omar"), "axis")) == 3
    # The Allies accept: after movement both sides in Buq Buq are revealed (RB 7.3, 8.5).
    assert set(mv.units_to_reveal(out.position)) == {"ax3", "ax4", "arm", "mi"}


def _after_turn_2_allied() -> Position:
    """Demo after the Allied Pass-Turn Regroup to Sidi Barrani E1 (D-4)."""
    pos = _after_turn_1()
    where = {"ax3": "Buq Buq", "ax4": "Buq Buq", "ax5": "Sidi Omar",
             "arm": "Sidi Barrani E1", "mi": "Sidi Barrani E1", "sof": "Sidi Barrani E1"}
    return pos.replace_blocks([
        msgspec.structs.replace(b, hex=at(where[b.token]), disrupted=b.token in ("arm", "mi", "sof"))
        for b in pos.blocks if b.token in where
    ] + [msgspec.structs.replace(pos.block("mech"), disrupted=False)])


def test_rb_19_demo_allied_turn_2_pass_turn_regroup_withdrawal_across_the_ridge() -> None:
    pos = _after_turn_1()
    buq = at("Buq Buq")
    pos = pos.replace_blocks([msgspec.structs.replace(pos.block(t), hex=buq) for t in ("ax3", "ax4")]
                             + [msgspec.structs.replace(pos.block("ax5"), hex=at("Sidi Omar")),
                                msgspec.structs.replace(pos.block("mech"), disrupted=False)])
    pos = pos.with_battles([Battle(buq, "axis", {at("Sollum"): "axis"})])
    turn = mv.start_movement(pos, "allied", withdrawal_only=True)
    assert MAP.hexside(at("Sofafi"), buq) == "ridge"  # "the ridge does not interfere"
    dest = "Sidi Barrani E1"
    move = regroup("Buq Buq", dest,
                   ("arm", route("Buq Buq", "Sidi Barrani", dest)),
                   ("mi", route("Buq Buq", "Sidi Barrani", dest)),
                   ("sof", route("Sofafi", "Sidi Barrani", dest)),
                   withdrawal="pass")
    out = step(pos, turn, move, ALLIED)
    assert {b.token for b in out.position.blocks_in(at(dest))} == {"arm", "mi", "sof"}
    assert out.position.block("arm").disrupted and out.position.block("mi").disrupted  # Retreated
    assert not out.position.block("sof").disrupted  # it was not engaged
    assert out.position.battles == ()
    assert [r.kind for r in mv.retreats(out.position, out.turn)] == ["full"]
    # Leaving one unit behind would be a Partial Retreat, impossible by Withdrawal (RB 10.4).
    partial = regroup("Buq Buq", dest, ("arm", route("Buq Buq", "Sidi Barrani", dest)), withdrawal="pass")
    assert "RB 10.4" in rules_of(mv.check_move(MAP, pos, turn, partial, ALLIED).problems)


def test_rb_19_demo_axis_turn_3_offensive_two_moves_and_the_forced_march_to_sofafi() -> None:
    pos = _after_turn_2_allied()
    turn = mv.start_movement(pos, "axis", moves_allowed=2, rommel_bonus=False)
    # Move 1: two units out of Sollum attack Sidi Barrani, the third to Sidi Omar.
    to_sb = route("Sollum", "Buq Buq", "Sidi Barrani")
    m1 = group("Sollum", ("ax1", to_sb), ("ax2", to_sb), ("ax6", route("Sollum", "Sidi Omar")))
    out1 = step(pos, turn, m1, AXIS1)
    assert out1.attacked == (at("Sidi Barrani"),)
    # Move 2: three of the four units in Sidi Omar; the one that just arrived may not move again.
    again = group("Sidi Omar", ("ax6", route("Sidi Omar", "Bir Habata")))
    assert "RB 6.0" in rules_of(mv.check_move(MAP, out1.position, out1.turn, again, AXIS1).problems)
    to_sofafi = route("Sidi Omar", "Bir Habata", "Sofafi")
    m2 = group("Sidi Omar", ("ax5", to_sofafi), ("ax7", route("Sidi Omar", "Bir Habata")),
               ("ax8", route("Sidi Omar", "Bir Habata")))
    # The infantry cannot walk to Sofafi: 2 hexes at speed 1.
    walk = group("Sidi Omar", ("ax7", to_sofafi))
    assert rules_of(mv.check_move(MAP, out1.position, out1.turn, walk, AXIS1).problems) == ["RB 6.1"]
    out2 = step(out1.position, out1.turn, m2, AXIS1)
    assert out2.turn.moves_made == 2
    # A third Move is not allowed.
    third = group("Buq Buq", ("ax4", route("Buq Buq", "Sollum")))
    assert "RB 4.0" in rules_of(mv.check_move(MAP, out2.position, out2.turn, third, AXIS1).problems)
    # After all Moves: the non-motorized unit Force Marches on to Sofafi.
    fm = [mv.ForcedMarch("ax7", to_sofafi)]
    assert forced_marches.check_forced_marches(MAP, out2.position, out2.turn, fm, AXIS1).problems == ()
    too_far = [mv.ForcedMarch("ax8", route("Sidi Omar", "Bir Habata", "Sofafi", "Sofafi SE1"))]
    assert forced_marches.check_forced_marches(MAP, out2.position, out2.turn, too_far, AXIS1).problems
    turn3 = forced_marches.announce_forced_marches(MAP, out2.position, out2.turn, fm)
    # No Refusal before the Forced Marches are resolved (RB 8.4).
    assert mv.refusable_groups(MAP, out2.position, turn3) == ()
    done = forced_marches.apply_forced_march(MAP, out2.position, turn3, "ax7", 5)
    assert done.succeeded and done.position.block("ax7").hex == at("Sofafi")
    assert {b.token for b in done.position.blocks_in(at("Sofafi"))} == {"ax5", "ax7"}
    assert [b.token for b in done.position.blocks_in(at("Bir Habata"))] == ["ax8"]
    # The Allied mechanized unit Refuses and Withdraws to Mersa Matruh.
    assert mv.refusable_groups(MAP, done.position, done.turn) == (at("Sidi Barrani"),)
    refuse = group("Sidi Barrani", ("mech", route("Sidi Barrani", "Sidi Barrani E1", "Mersa Matruh")),
                   withdrawal="refuse")
    fin = step(done.position, done.turn, refuse, ALLIED)
    assert fin.position.block("mech").hex == at("Mersa Matruh") and fin.position.block("mech").disrupted
    assert fin.position.battles == ()


def test_rb_19_demo_failed_forced_march_disrupts_in_current_hex_after_group_move() -> None:
    pos = _after_turn_2_allied()
    turn = mv.start_movement(pos, "axis", moves_allowed=2, rommel_bonus=False)
    out = step(pos, turn, group("Sidi Omar", ("ax7", route("Sidi Omar", "Bir Habata"))), AXIS1)
    fm = [mv.ForcedMarch("ax7", route("Sidi Omar", "Bir Habata", "Sofafi"))]
    turn2 = forced_marches.announce_forced_marches(MAP, out.position, out.turn, fm)
    res = forced_marches.apply_forced_march(MAP, out.position, turn2, "ax7", 3)
    assert not res.succeeded and res.position.block("ax7").hex == at("Bir Habata")
    assert res.position.block("ax7").disrupted and not res.step_loss
    # Announcing ends movement: no further Move.
    assert "RB 6.4" in rules_of(mv.check_move(
        MAP, res.position, res.turn, group("Sollum", ("ax1", route("Sollum", "Buq Buq"))), AXIS1).problems)
