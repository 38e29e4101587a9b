"""Movement and engagement rules one by one (RB 5.0-8.4, 10.1-10.4), on the real map."""

from __future__ import annotations

import msgspec

from rules.ritd import forced_marches, reachability
from rules.ritd import movement as mv
from rules.ritd.position import Battle, Position
from tests.ritd.movement_support import MAP, at, block, group, position, regroup, route, rules_of, step

SOLLUM = at("Sollum")
BUQ = at("Buq Buq")


def _battle_at_buq_buq(**extra_blocks: str) -> Position:
    """Axis attacked Buq Buq from Sollum; the Allies defend it."""
    bs = [block("a1", "axis", "Buq Buq"), block("d1", "allied", "Buq Buq"), block("d2", "allied", "Buq Buq")]
    bs += [block(t, "axis" if t.startswith("a") else "allied", h) for t, h in extra_blocks.items()]
    return position(*bs).with_battles([Battle(BUQ, "axis", {SOLLUM: "axis"})])


# ------------------------------------------------------------------ RB 7.1


def test_rb_7_1_clear_hexside_takes_two_units_per_phase_with_message() -> None:
    pos = position(*(block(f"a{i}", "axis", "Sollum") for i in range(3)), block("e", "allied", "Buq Buq"))
    turn = mv.start_movement(pos, "axis")
    path = route("Sollum", "Buq Buq")
    check = mv.check_move(MAP, pos, turn, group("Sollum", *((f"a{i}", path) for i in range(3))), {})
    assert [str(p) for p in check.problems] == [
        "RB 7.1: hexside limit reached: 2 units already engaged Buq Buq across the Buq Buq W hexside "
        "this phase (limit 2 for a clear hexside)"]


def test_rb_7_1_mountain_road_hexside_takes_one_unit() -> None:
    mech, derna_sw1 = at("Mechili"), at("Derna SW1")
    assert MAP.hexside(mech, derna_sw1) == "mountain" and MAP.hexside_limit(mech, derna_sw1) == 1
    pos = position(block("a", "axis", "Mechili"), block("b", "axis", "Mechili"), block("e", "allied", "Derna SW1"))
    turn = mv.start_movement(pos, "axis")
    check = mv.check_move(MAP, pos, turn, group("Mechili", ("a", (mech, derna_sw1)), ("b", (mech, derna_sw1))), {})
    assert rules_of(check.problems) == ["RB 7.1"]
    assert "limit 1 for a gap or mountain road hexside" in check.problems[0].message
    # A mountain hexside without a road is not crossed at all (RB 1.4).
    nw = at("Mechili NW1")
    check = mv.check_move(MAP, pos, turn, group("Mechili", ("a", (mech, nw))), {"a": 4})
    assert rules_of(check.problems) == ["RB 1.4"]


def test_rb_7_1_both_moves_of_an_offensive_turn_share_the_limits() -> None:
    pos = position(block("a", "axis", "Sollum"), block("b", "axis", "Sollum"), block("f", "axis", "Ft Capuzzo"),
                   block("c", "axis", "Sidi Barrani"), block("e", "allied", "Buq Buq"))
    turn = mv.start_movement(pos, "axis", moves_allowed=2)
    w = route("Sollum", "Buq Buq")
    out = step(pos, turn, group("Sollum", ("a", w), ("b", w)), {})
    # Second Move: across the Buq Buq W hexside again (Ft Capuzzo - Sollum - Buq Buq, highway) ...
    check = mv.check_move(MAP, out.position, out.turn,
                          group("Ft Capuzzo", ("f", route("Ft Capuzzo", "Sollum", "Buq Buq"))), {"f": 1})
    assert rules_of(check.problems) == ["RB 7.1"]
    # ... while the Buq Buq E hexside is still free.
    assert mv.check_move(MAP, out.position, out.turn,
                         group("Sidi Barrani", ("c", route("Sidi Barrani", "Buq Buq"))), {}).ok


def test_rb_7_1_limits_reset_for_blitz_movement() -> None:
    pos = position(*(block(f"a{i}", "axis", "Sollum") for i in range(4)), block("e", "allied", "Buq Buq"))
    turn = mv.start_movement(pos, "axis")
    path = route("Sollum", "Buq Buq")
    out = step(pos, turn, group("Sollum", ("a0", path), ("a1", path)), {})
    blitz = mv.start_blitz_movement(out.position, out.turn)
    out2 = step(out.position, blitz, group("Sollum", ("a2", path), ("a3", path)), {})
    assert len(out2.position.blocks_in(BUQ, "axis")) == 4
    # ... but units that moved in the first phase may not move again (RB 3.45).
    back = group("Buq Buq", ("a0", route("Buq Buq", "Sollum")))
    assert "RB 6.0" in rules_of(mv.check_move(MAP, out.position, blitz, back, {}).problems)


def test_rb_7_1_limits_do_not_apply_when_disengaging() -> None:
    pos = _battle_at_buq_buq(a2="Buq Buq", a3="Buq Buq")
    turn = mv.start_movement(pos, "axis")
    back = route("Buq Buq", "Sollum")
    out = step(pos, turn, group("Buq Buq", ("a1", back), ("a2", back), ("a3", back)), {})
    assert {b.token for b in out.position.blocks_in(SOLLUM)} == {"a1", "a2", "a3"}


# ------------------------------------------------------------------ RB 6.0, 7.0, 8.1-8.3


def test_rb_6_0_must_stop_on_engaging() -> None:
    pos = position(block("a", "axis", "Sollum"), block("e", "allied", "Buq Buq"))
    turn = mv.start_movement(pos, "axis")
    check = mv.check_move(MAP, pos, turn, group("Sollum", ("a", route("Sollum", "Buq Buq", "Sidi Barrani"))), {})
    assert rules_of(check.problems) == ["RB 6.0"]
    assert "must stop on Engaging in Buq Buq" in check.problems[0].message


def test_rb_8_1_to_8_3_adding_to_a_battle_is_not_an_attack_and_takes_the_hexside() -> None:
    pos = _battle_at_buq_buq(r="Sidi Barrani")
    turn = mv.start_movement(pos, "allied")
    out = step(pos, turn, group("Sidi Barrani", ("r", route("Sidi Barrani", "Buq Buq"))), {})
    assert out.attacked == () and out.turn.attacked == ()
    battle = out.position.battle(BUQ)
    assert battle is not None and battle.attacker == "axis"  # RB 8.3: for the life of the battle
    assert battle.hexside_owner(at("Sidi Barrani")) == "allied"
    # An Allied unit then engages across the Sollum hexside: it becomes theirs (last to engage, RB 8.1).
    assert battle.hexside_owner(SOLLUM) == "axis"
    pos3 = Position(blocks=out.position.blocks + (block("r2", "allied", "Sollum"),), battles=out.position.battles)
    out2 = step(pos3, mv.start_movement(pos3, "allied"), group("Sollum", ("r2", route("Sollum", "Buq Buq"))), {})
    b2 = out2.position.battle(BUQ)
    assert b2 is not None and b2.hexside_owner(SOLLUM) == "allied" and b2.attacker == "axis"


def test_rb_12_5_unsupplied_unit_cannot_make_an_enemy_hexside_friendly_and_becomes_raider() -> None:
    pos = _battle_at_buq_buq()
    pos = Position(blocks=pos.blocks + (block("u", "axis", "Sidi Barrani", unsupplied=True),), battles=pos.battles)
    turn = mv.start_movement(pos, "axis")
    out = step(pos, turn, group("Sidi Barrani", ("u", route("Sidi Barrani", "Buq Buq"))), {})
    battle = out.position.battle(BUQ)
    assert battle is not None and battle.hexside_owner(at("Sidi Barrani")) == "allied"
    assert mv.raiders(out.position, out.turn) == ("u",)


# ------------------------------------------------------------------ RB 7.2, 10.1, 10.3, 10.4


def test_rb_7_2_disengage_only_through_friendly_battle_hexsides() -> None:
    pos = _battle_at_buq_buq()
    turn = mv.start_movement(pos, "allied")
    # Sollum hexside is Axis (crossed by the attacker): closed to the Allies.
    check = mv.check_move(MAP, pos, turn, group("Buq Buq", ("d1", route("Buq Buq", "Sollum"))), {})
    assert "RB 7.2" in rules_of(check.problems)
    assert "controlled by the axis side" in " ".join(p.message for p in check.problems)
    # Sidi Barrani hexside is uncrossed: the Defender's (RB 8.1).
    out = step(pos, turn, group("Buq Buq", ("d1", route("Buq Buq", "Sidi Barrani")),
                                ("d2", route("Buq Buq", "Sidi Barrani"))), {})
    assert all(b.disrupted for b in out.position.blocks_in(at("Sidi Barrani")))  # always Disrupted
    assert out.position.battles == ()
    assert [(r.kind, r.units) for r in mv.retreats(out.position, out.turn)] == [("full", ("d1", "d2"))]


def test_rb_10_4_partial_retreat_leaves_a_rearguard() -> None:
    pos = _battle_at_buq_buq()
    turn = mv.start_movement(pos, "allied")
    out = step(pos, turn, group("Buq Buq", ("d1", route("Buq Buq", "Sidi Barrani"))), {})
    (r,) = mv.retreats(out.position, out.turn)
    assert r.kind == "partial" and r.units == ("d1",) and r.rearguard == ("d2",)
    assert out.position.battle(BUQ) is not None


def test_rb_10_1_disengage_never_directly_into_an_enemy_or_battle_hex() -> None:
    pos = _battle_at_buq_buq(x="Sidi Barrani")
    turn = mv.start_movement(pos, "allied")
    pos = pos.replace_blocks([msgspec.structs.replace(pos.block("x"), side="axis")])
    check = mv.check_move(MAP, pos, turn, group("Buq Buq", ("d1", route("Buq Buq", "Sidi Barrani"))), {})
    assert "RB 10.1" in rules_of(check.problems)


def test_rb_7_2_no_re_engaging_and_no_road_bonus_on_a_retreat() -> None:
    pos = _battle_at_buq_buq(e="Mersa Matruh")
    pos = pos.replace_blocks([msgspec.structs.replace(pos.block("e"), side="axis")])
    turn = mv.start_movement(pos, "allied")
    # Buq Buq - Sidi Barrani - Sidi Barrani E1 - Mersa Matruh is highway all along, 3 hexes.
    path = route("Buq Buq", "Sidi Barrani", "Sidi Barrani E1", "Mersa Matruh")
    check = mv.check_move(MAP, pos, turn, group("Buq Buq", ("d1", path)), {"d1": 3})
    assert "RB 7.2" in rules_of(check.problems)
    assert any("may not re-engage" in p.message for p in check.problems)
    # Speed 2 on highway: 6 hexes on a normal move, 2 on a Retreat.
    far = route("Buq Buq", "Sidi Barrani", "Sidi Barrani E1")
    check = mv.check_move(MAP, pos, turn, group("Buq Buq", ("d1", far)), {"d1": 1})
    assert rules_of(check.problems) == ["RB 6.1"]
    assert "no road bonus on a Retreat" in check.problems[0].message


def test_rb_6_4_failed_forced_march_on_a_retreat_loses_a_step() -> None:
    pos = _battle_at_buq_buq()
    turn = mv.start_movement(pos, "allied")
    out = step(pos, turn, group("Buq Buq", ("d1", route("Buq Buq", "Sidi Barrani")),
                                ("d2", route("Buq Buq", "Sidi Barrani"))), {"d1": 1, "d2": 1})
    fm = [mv.ForcedMarch("d1", route("Buq Buq", "Sidi Barrani", "Sidi Barrani E1"))]
    assert forced_marches.check_forced_marches(MAP, out.position, out.turn, fm, {"d1": 1}).ok
    t2 = forced_marches.announce_forced_marches(MAP, out.position, out.turn, fm)
    res = forced_marches.apply_forced_march(MAP, out.position, t2, "d1", 2)
    assert not res.succeeded and res.step_loss and res.position.block("d1").hex == at("Sidi Barrani")
    ok = forced_marches.apply_forced_march(MAP, out.position, t2, "d1", 6)
    assert ok.succeeded and ok.position.block("d1").hex == at("Sidi Barrani E1") and ok.position.block("d1").disrupted


def test_rb_6_4_sidebar_no_forced_march_into_engagements_beyond_hexside_limits() -> None:
    pos = position(block("a", "axis", "Ft Capuzzo"), block("b", "axis", "Ft Capuzzo"),
                   block("c", "axis", "Ft Capuzzo"), block("e", "allied", "Sollum"))
    turn = mv.start_movement(pos, "axis")
    to_bardia = route("Ft Capuzzo", "Bardia")
    out = step(pos, turn, group("Ft Capuzzo", ("a", to_bardia), ("b", to_bardia),
                                ("c", route("Ft Capuzzo", "Sidi Omar"))), {"a": 1, "b": 1, "c": 1})
    via_bardia = route("Ft Capuzzo", "Bardia", "Sollum")
    speeds = {"a": 1, "b": 1, "c": 1}
    one_each = [mv.ForcedMarch("a", via_bardia), mv.ForcedMarch("c", route("Ft Capuzzo", "Sidi Omar", "Sollum"))]
    assert forced_marches.check_forced_marches(MAP, out.position, out.turn, one_each, speeds).ok  # two different gaps
    # Two attempts across the one Bardia-Sollum gap, "anticipating that some will fail": no.
    both = [mv.ForcedMarch("a", via_bardia), mv.ForcedMarch("b", via_bardia)]
    check = forced_marches.check_forced_marches(MAP, out.position, out.turn, both, speeds)
    assert rules_of(check.problems) == ["RB 7.1"]
    assert "counting Forced March attempts" in check.problems[0].message
    # A successful attempt engages: it takes the hexside and counts for the limit.
    t2 = forced_marches.announce_forced_marches(MAP, out.position, out.turn, one_each)
    res = forced_marches.apply_forced_march(MAP, out.position, t2, "a", 4)
    assert res.succeeded and res.attacked == (at("Sollum"),)
    assert res.turn.engagements[-1] == mv.Engagement("a", at("Bardia"), at("Sollum"))


def test_rb_4_5_no_forced_march_in_a_pass_turn() -> None:
    pos = position(block("d", "allied", "Sidi Barrani"))
    turn = mv.start_movement(pos, "allied", withdrawal_only=True)
    out = step(pos, turn, group("Sidi Barrani", ("d", route("Sidi Barrani", "Sidi Barrani E1")), withdrawal="pass"),
               {"d": 1})
    fm = [mv.ForcedMarch("d", route("Sidi Barrani", "Sidi Barrani E1", "Mersa Matruh"))]
    assert "RB 4.5" in rules_of(forced_marches.check_forced_marches(MAP, out.position, out.turn, fm, {"d": 1}).problems)


# ------------------------------------------------------------------ RB 6.0, 11.1


def test_rb_11_1_disrupted_units_cannot_move_except_to_rout() -> None:
    pos = position(block("d", "allied", "Sidi Barrani", disrupted=True), block("e", "axis", "Sidi Barrani"))
    pos = pos.with_battles([Battle(at("Sidi Barrani"), "axis", {BUQ: "axis"})])
    turn = mv.start_movement(pos, "allied")
    move = group("Sidi Barrani", ("d", route("Sidi Barrani", "Sidi Barrani E1")))
    assert "RB 11.1" in rules_of(mv.check_move(MAP, pos, turn, move, {"d": 3}).problems)
    rout = group("Sidi Barrani", ("d", route("Sidi Barrani", "Sidi Barrani E1")), withdrawal="rout")
    assert mv.check_move(MAP, pos, mv.start_movement(pos, "axis"), rout, {"d": 3}).ok


def test_rb_3_42_only_the_active_player_moves() -> None:
    pos = position(block("d", "allied", "Sidi Barrani"))
    turn = mv.start_movement(pos, "axis")
    move = group("Sidi Barrani", ("d", route("Sidi Barrani", "Sidi Barrani E1")))
    assert "RB 3.4" in rules_of(mv.check_move(MAP, pos, turn, move, {"d": 3}).problems)


def test_rb_4_5_pass_turn_allows_only_one_withdrawal() -> None:
    pos = position(block("d", "allied", "Sidi Barrani"))
    turn = mv.start_movement(pos, "allied", withdrawal_only=True)
    move = group("Sidi Barrani", ("d", route("Sidi Barrani", "Buq Buq")))
    assert "RB 4.5" in rules_of(mv.check_move(MAP, pos, turn, move, {"d": 3}).problems)


# ------------------------------------------------------------------ RB 6.3


def test_rb_6_3_rommel_bonus_once_per_turn_and_not_for_refusals() -> None:
    pos = position(block("a", "axis", "Sollum"), block("b", "axis", "Sidi Omar"))
    turn = mv.start_movement(pos, "axis", moves_allowed=2)
    out = step(pos, turn, group("Sollum", ("a", route("Sollum", "Buq Buq")), rommel=True), {"a": 1})
    check = mv.check_move(MAP, out.position, out.turn,
                          group("Sidi Omar", ("b", route("Sidi Omar", "Bir Habata")), rommel=True), {"b": 1})
    assert "RB 6.3" in rules_of(check.problems)
    blitz = mv.start_blitz_movement(out.position, out.turn)
    check = mv.check_move(MAP, out.position, blitz,
                          group("Sidi Omar", ("b", route("Sidi Omar", "Bir Habata")), rommel=True), {"b": 1})
    assert "RB 6.3" in rules_of(check.problems)  # Movement or Blitz Movement, not both
    allied = mv.start_movement(pos, "allied")
    assert not allied.rommel_available


# ------------------------------------------------------------------ RB 8.4, 10.2


def test_rb_8_4_groups_engaged_when_movement_began_cannot_refuse() -> None:
    pos = _battle_at_buq_buq(a2="Sollum")
    turn = mv.start_movement(pos, "axis")
    out = step(pos, turn, group("Sollum", ("a2", route("Sollum", "Buq Buq"))), {})
    assert mv.refusable_groups(MAP, out.position, out.turn) == ()
    probs = mv.refusal_problems(MAP, out.position, out.turn, BUQ)
    assert any("already engaged when Movement began" in p.message for p in probs)


def test_rb_10_2_refusal_by_group_withdrawal_of_the_whole_group_only() -> None:
    pos = position(block("a", "axis", "Sollum"), block("d1", "allied", "Buq Buq"), block("d2", "allied", "Buq Buq"))
    turn = mv.start_movement(pos, "axis")
    out = step(pos, turn, group("Sollum", ("a", route("Sollum", "Buq Buq"))), {})
    assert mv.refusable_groups(MAP, out.position, out.turn) == (BUQ,)
    back = route("Buq Buq", "Sidi Barrani")
    part = group("Buq Buq", ("d1", back), withdrawal="refuse")
    assert "RB 10.4" in rules_of(mv.check_move(MAP, out.position, out.turn, part, {"d1": 3}).problems)
    rg = regroup("Buq Buq", "Sidi Barrani", ("d1", back), ("d2", back), withdrawal="refuse")
    assert "RB 10.2" in rules_of(mv.check_move(MAP, out.position, out.turn, rg, {"d1": 3, "d2": 3}).problems)
    rommel = group("Buq Buq", ("d1", back), ("d2", back), withdrawal="refuse")
    done = step(out.position, out.turn, rommel, {"d1": 3, "d2": 3})
    assert done.turn.moves_made == 1  # a Refusal is not one of the Active Player's Moves
    assert done.position.battles == ()


def test_rb_8_sidebar_mixed_group_with_units_lacking_a_supply_line_cannot_refuse() -> None:
    # Allied units at Bardia (an Allied Fortress), one assigned Fortress Supply,
    # the other cut off from Alexandria: Axis units hold Sollum and Ft Capuzzo.
    pos = position(block("f", "allied", "Bardia", fortress_supply=at("Bardia")), block("n", "allied", "Bardia"),
                   block("a", "axis", "Bardia W1"), block("s", "axis", "Sollum"), block("c", "axis", "Ft Capuzzo"),
                   fortresses={"Bardia": "allied"})
    turn = mv.start_movement(pos, "axis")
    out = step(pos, turn, group("Bardia W1", ("a", route("Bardia W1", "Bardia"))), {})
    probs = mv.refusal_problems(MAP, out.position, out.turn, at("Bardia"))
    assert [p.rule for p in probs] == ["RB 10.2"]
    assert "mixed Group" in probs[0].message and "n has none" in probs[0].message


# ------------------------------------------------------------------ RB 5.3 sidebars


def test_rb_5_3_sidebar_retreating_withdrawal_passes_disrupted_enemy_units() -> None:
    pos = _battle_at_buq_buq(x="Sidi Barrani")
    pos = pos.replace_blocks([msgspec.structs.replace(pos.block("x"), side="axis", disrupted=True)])
    turn = mv.start_movement(pos, "allied", withdrawal_only=True)
    path = route("Buq Buq", "Sidi Barrani", "Sidi Barrani E1")
    out = step(pos, turn, group("Buq Buq", ("d1", path), ("d2", path), withdrawal="pass"), {"d1": 3, "d2": 3})
    assert out.overruns == () and out.position.block("x").hex == at("Sidi Barrani")
    # Co-existing with them, no effect on either force.
    end = route("Buq Buq", "Sidi Barrani")
    out2 = step(pos, turn, group("Buq Buq", ("d1", end), ("d2", end), withdrawal="pass"), {"d1": 3, "d2": 3})
    coexist = out2.position.battle(at("Sidi Barrani"))
    assert out2.attacked == () and out2.overruns == () and out2.turn.engagements == ()
    assert coexist is not None and coexist.defender == "axis" and coexist.hexsides == {}


def test_rb_5_3_sidebar_non_retreating_withdrawal_overruns_disrupted_but_not_undisrupted_enemy() -> None:
    pos = position(block("d", "allied", "Buq Buq"), block("x", "axis", "Sidi Barrani", disrupted=True))
    turn = mv.start_movement(pos, "allied", withdrawal_only=True)
    out = step(pos, turn, group("Buq Buq", ("d", route("Buq Buq", "Sidi Barrani")), withdrawal="pass"), {"d": 3})
    assert out.overruns == (at("Sidi Barrani"),)
    # Overruns count against hexside limits (RB 11.4, MV-17).
    assert out.turn.engagements == (mv.Engagement("d", BUQ, at("Sidi Barrani")),)
    pos2 = position(block("d", "allied", "Buq Buq"), block("x", "axis", "Sidi Barrani"))
    check = mv.check_move(MAP, pos2, turn, group("Buq Buq", ("d", route("Buq Buq", "Sidi Barrani")),
                                                 withdrawal="pass"), {"d": 3})
    assert any(p.rule == "RB 5.3" and "cannot Engage undisrupted" in p.message for p in check.problems)


def test_rb_5_3_sidebar_only_fortress_supplied_units_withdraw_towards_the_fortress() -> None:
    # Axis units west of Tobruk cut off from El Agheila by Allied units astride the highway.
    cut = [block(f"x{i}", "allied", h) for i, h in enumerate(["Gazala", "Segnali Rotunda", "Bir Hacheim"])]
    pos = position(block("f", "axis", "Acroma", fortress_supply=at("Tobruk")), block("n", "axis", "Acroma"),
                   *cut, fortresses={"Tobruk": "axis"})
    turn = mv.start_movement(pos, "axis", withdrawal_only=True)
    routes = mv.withdrawal_routes(MAP, pos, "n")
    assert routes and not any(r.valid for r in routes if r.line.fortress)
    assert any(r.valid for r in mv.withdrawal_routes(MAP, pos, "f") if r.line.fortress)
    assert mv.check_move(MAP, pos, turn, group("Acroma", ("f", route("Acroma", "Tobruk")), withdrawal="pass"),
                         {"f": 1}).ok
    check = mv.check_move(MAP, pos, turn, group("Acroma", ("n", route("Acroma", "Tobruk")), withdrawal="pass"),
                          {"n": 1})
    assert "RB 5.3" in rules_of(check.problems)


def test_rb_5_3_condition_3_the_network_must_shrink() -> None:
    # Two units in one hex: moving one back leaves the other holding every line.
    pos = position(block("a", "allied", "Sidi Barrani"), block("b", "allied", "Sidi Barrani"))
    turn = mv.start_movement(pos, "allied", withdrawal_only=True)
    check = mv.check_move(MAP, pos, turn, group("Sidi Barrani", ("a", route("Sidi Barrani", "Sidi Barrani E1")),
                                                withdrawal="pass"), {"a": 3})
    assert any("condition 3" in p.message for p in check.problems)
    both = group("Sidi Barrani", ("a", route("Sidi Barrani", "Sidi Barrani E1")),
                 ("b", route("Sidi Barrani", "Sidi Barrani E1")), withdrawal="pass")
    assert mv.check_move(MAP, pos, turn, both, {"a": 3, "b": 3}).ok


# ------------------------------------------------------------------ hidden speeds (DESIGN 4)


def test_unknown_speed_gives_an_obligation_or_an_impossible_distance() -> None:
    pos = position(block("a", "allied", "Sofafi"))
    turn = mv.start_movement(pos, "allied")
    path = route("Sofafi", "Sofafi SE1", "Mersa Matruh SW2")
    check = mv.check_move(MAP, pos, turn, group("Sofafi", ("a", path)), {"a": None})
    assert check.ok and check.obligations == (mv.SpeedObligation("a", 2),)
    far = route("Sofafi", "Sofafi SE1", "Sofafi SE2")
    far = far + tuple(n for n in [MAP.neighbour(far[-1], "E")] if n)  # 3 off-road hexes
    far = far + tuple(n for n in [MAP.neighbour(far[-1], "E")] if n)
    far = far + tuple(n for n in [MAP.neighbour(far[-1], "E")] if n)
    assert len(far) - 1 == 5 and MAP.worst_road(far) is None
    check = mv.check_move(MAP, pos, turn, group("Sofafi", ("a", far)), {"a": None})
    assert rules_of(check.problems) == ["RB 6.1"] and "no unit is fast enough" in check.problems[0].message


# ------------------------------------------------------------------ RB 7.3 and explain


def test_rb_7_3_units_revealed_when_movement_is_complete_not_disrupted_ones() -> None:
    pos = _battle_at_buq_buq()
    pos = Position(blocks=pos.blocks + (block("dd", "allied", "Buq Buq", disrupted=True),), battles=pos.battles)
    assert set(mv.units_to_reveal(pos)) == {"a1", "d1", "d2"}
    shown = mv.reveal_battles(pos)
    assert mv.units_to_reveal(shown) == () and shown.block("a1").revealed and not shown.block("dd").revealed


def test_explain_move_names_places_and_reasons() -> None:
    pos = position(*(block(f"a{i}", "axis", "Sollum") for i in range(3)), block("e", "allied", "Buq Buq"),
                   block("x", "allied", "Ft Capuzzo"))
    turn = mv.start_movement(pos, "axis", moves_allowed=2)
    out = step(pos, turn, group("Sollum", ("a0", route("Sollum", "Buq Buq")),
                                ("a1", route("Sollum", "Buq Buq"))), {})
    text = "\n".join(reachability.explain_move(MAP, out.position, out.turn, "a2", 1))
    assert "a2 in Sollum, speed 1" in text
    assert "Buq Buq: RB 7.1: hexside limit reached" in text
    assert "Sidi Omar: 1 hex, Sollum - Sidi Omar; track bonus +2 (RB 6.2)" in text
    assert "Ft Capuzzo: 1 hex" in text and "(Engaging: must stop, RB 7.0)" in text
    assert "Bir Habata: RB 6.1: a2 cannot move 2 hexes to Bir Habata: speed 1" in text
    # With no Move left, nothing is reachable and the note says why.
    spent = msgspec.structs.replace(out.turn, moves_made=2)
    text = "\n".join(reachability.explain_move(MAP, out.position, spent, "a2", 1))
    assert "Can reach: nothing" in text and "note: RB 4.0: no Move left this phase" in text


# ------------------------------------------------------------------ T-35, T-36: Retreats wait for their procedure


def test_t_35_an_announced_retreat_waits_in_the_battle_hex_then_completes_disrupted() -> None:
    pos = _battle_at_buq_buq()
    turn = mv.start_movement(pos, "allied")
    move = group("Buq Buq", ("d1", route("Buq Buq", "Sidi Barrani")))
    assert mv.check_move(MAP, pos, turn, move, {}).ok
    out = mv.apply_move(MAP, pos, turn, move, defer_retreats=True)
    d1 = out.position.block("d1")
    assert d1.hex == BUQ and not d1.disrupted  # upright in the battle hex (RB 10.4 procedure step 1)
    assert out.turn.has_moved("d1") and out.turn.has_disengaged("d1")
    (r,) = mv.pending_retreats(out.position, out.turn)
    assert (r.kind, r.units, r.rearguard) == ("partial", ("d1",), ("d2",))
    pos2, turn2 = mv.complete_retreat(MAP, out.position, out.turn, "d1")
    assert pos2.block("d1").hex == at("Sidi Barrani") and pos2.block("d1").disrupted
    assert turn2.retreating == () and [d.token for d in turn2.disengaged] == ["d1"]


def test_t_36_a_retreat_route_blocked_since_its_announcement_leaves_the_unit_disrupted_in_the_hex() -> None:
    pos = _battle_at_buq_buq()
    turn = mv.start_movement(pos, "allied")
    sidi = route("Buq Buq", "Sidi Barrani")
    out = mv.apply_move(MAP, pos, turn, group("Buq Buq", ("d1", sidi), ("d2", sidi)), defer_retreats=True)
    assert [r.kind for r in mv.pending_retreats(out.position, out.turn)] == ["full"]
    # An enemy unit stands on the route now (as a Rout after an Overrun could leave it).
    blocked = msgspec.structs.replace(out.position, blocks=out.position.blocks + (block("a9", "axis", "Sidi Barrani"),))
    assert rules_of(mv.retreat_blockers(MAP, blocked, out.turn, "d1")) == ["RB 10.1"]
    pos2, turn2 = mv.complete_retreat(MAP, blocked, out.turn, "d1")
    assert pos2.block("d1").hex == BUQ and pos2.block("d1").disrupted
    # A unit eliminated meanwhile (by Pursuit Fire) is just forgotten.
    gone = msgspec.structs.replace(pos2, blocks=tuple(b for b in pos2.blocks if b.token != "d2"))
    _, turn3 = mv.complete_retreat(MAP, gone, turn2, "d2")
    assert turn3.retreating == ()
