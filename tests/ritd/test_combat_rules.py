"""Battles, retreats, pursuit, routs and Fortresses (RB 8.6, 10, 11, 13), rule by rule."""

from __future__ import annotations

import msgspec

from rules.ritd import combat_round as cr
from rules.ritd import fire as fr
from rules.ritd import fortresses as fo
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd import routs as rt
from rules.ritd.hexmap import load_map
from rules.ritd.position import Battle, Position
from tests.ritd.combat_support import HEX, battle_pos, blk, cv, units

OTHER = "1020"


def rules_of(problems):
    return [p.rule for p in problems]


# ------------------------------------------------------------------ RB 8.6


def _two_battles() -> Position:
    return Position(
        blocks=(blk("A1", "allied", "Br Arm 4"), blk("X1", "axis", "It Inf 4"),
                blk("A2", "allied", "Br Inf 3", hex_=OTHER), blk("X2", "axis", "It Inf 4", hex_=OTHER)),
        battles=(Battle(HEX, "axis"), Battle(OTHER, "axis")))


def test_rb_8_6_new_battles_and_fortress_attacks_are_mandatory_except_in_blitz_combat() -> None:
    pos = _two_battles()
    kw = {"new_battles": [HEX], "fortress_hexes": [OTHER]}
    assert cr.mandatory_battles(pos, "axis", **kw) == (HEX, OTHER)
    assert cr.mandatory_battles(pos, "axis", blitz=True, **kw) == (HEX,)
    assert cr.mandatory_battles(pos, "allied", **kw) == (HEX,)  # the Fortress Defender need not fight
    probs = cr.check_battle_selection(pos, "axis", cr.BattleSelection(active=(HEX,)), **kw)
    assert rules_of(probs) == ["RB 13.2"]
    assert cr.check_battle_selection(pos, "axis", cr.BattleSelection(active=(HEX, OTHER)), **kw) == []


def test_rb_10_4_no_combat_after_a_partial_retreat_even_in_a_fortress() -> None:
    pos = _two_battles()
    kw = {"new_battles": [], "fortress_hexes": [OTHER], "partial_retreats": [OTHER]}
    assert cr.mandatory_battles(pos, "axis", **kw) == ()
    probs = cr.check_battle_selection(pos, "axis", cr.BattleSelection(active=(OTHER,)), **kw)
    assert rules_of(probs) == ["RB 10.4"]


def test_rb_8_6_assault_battles_are_active_battles_of_an_assault_turn() -> None:
    pos = _two_battles()
    sel = cr.BattleSelection(active=(HEX,), assault=(OTHER,))
    kw = {"new_battles": [], "fortress_hexes": []}
    assert rules_of(cr.check_battle_selection(pos, "axis", sel, assault_turn=False, **kw)) == ["RB 4.3", "RB 8.6"]
    ok = cr.BattleSelection(active=(HEX, OTHER), assault=(OTHER,))
    assert cr.check_battle_selection(pos, "axis", ok, assault_turn=True, **kw) == []
    assert cr.check_battle_selection(pos, "axis", ok, assault_turn=None, **kw) == []
    assert cr.needs_assault_turn(ok)
    assert rules_of(cr.check_battle_selection(pos, "axis", ok, blitz=True, **kw)) == ["RB 4.4"]


def test_rb_9_21_assault_battle_doubles_both_sides_dice() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Inf 3"), blk("X1", "axis", "It Inf 4"))
    rnd = cr.CombatRound(HEX, active="axis", assault=True)
    assert fr.dice_counts(pos, rnd, fr.FirePlan(HEX, "allied", (fr.UnitFire("A1", "infantry"),)),
                          units=units) == (6,)
    assert fr.dice_counts(pos, rnd, fr.FirePlan(HEX, "axis", (fr.UnitFire("X1", "infantry"),)),
                          units=units) == (8,)


def test_rb_9_0_every_undisrupted_unit_fires_once_disrupted_ones_never() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Inf 3"), blk("A2", "allied", "Br Inf 3", disrupted=True),
                     blk("A3", "allied", "Br Inf 3"), blk("X1", "axis", "It Inf 4"))
    rnd = cr.CombatRound(HEX, active="axis")
    probs = fr.check_fire_plan(pos, rnd, fr.FirePlan(HEX, "allied", (
        fr.UnitFire("A1", "infantry"), fr.UnitFire("A1", "infantry"), fr.UnitFire("A2", "infantry"))),
        units=units)
    # Version 5 (CB-19): A3 not named is no problem: it fires in a later order of the same fire.
    assert rules_of(probs) == ["RB 9.2", "RB 11.1"]
    done = fr.score(pos, rnd, fr.FirePlan(HEX, "allied", (fr.UnitFire("A1", "infantry"),)), [1, 2, 3], units=units)
    again = fr.check_fire_plan(pos, rnd, fr.FirePlan(HEX, "allied", (fr.UnitFire("A1", "infantry"),)),
                               prior=done, units=units)
    assert rules_of(again) == ["RB 9.0"] and "already fired" in again[0].message
    assert not fr.fire_complete(pos, rnd, done, units=units)


def test_rb_9_5_losses_go_to_the_target_class_only() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Arm 4"), blk("X1", "axis", "It Inf 4"), blk("X2", "axis", "It Art 4"))
    rnd = cr.CombatRound(HEX, active="axis")
    result = fr.score(pos, rnd, fr.FirePlan(HEX, "allied", (fr.UnitFire("A1", "infantry"),)),
                      (6, 1, 1, 1), units=units)
    probs = ls.check_allocation(pos, result, ls.LossAllocation(HEX, (ls.Loss("X2", 1),)), units=units)
    assert rules_of(probs) == ["RB 9.5", "RB 9.5"]


def test_rb_11_11_losses_that_kill_the_shield_rout_the_disrupted_units() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Arm 4"), blk("X1", "axis", "It Inf 4", cv=1),
                     blk("D1", "axis", "It Inf 4", disrupted=True))
    rnd = cr.CombatRound(HEX, active="axis")
    result = fr.score(pos, rnd, fr.FirePlan(HEX, "allied", (fr.UnitFire("A1", "infantry"),)),
                      (6, 1, 1, 1), units=units)
    out = ls.apply_allocation(pos, result, ls.default_allocation(pos, result, units=units), units=units)
    assert out.eliminated == ("X1",) and out.unshielded == ("D1",) and not out.battle_over


# ------------------------------------------------------------------ RB 10.5


def test_rb_10_5_pursuit_fire_dice_counts() -> None:
    assert [rt.pursuit_dice_for(2, s) for s in (1, 2, 3, 4)] == [0, 1, 2, 2]
    pos = battle_pos(blk("R1", "allied", "Br Mot Inf 4"), blk("P1", "axis", "It Inf 4"),
                     blk("P2", "axis", "It Mot Inf 4"), blk("P3", "axis", "It Arm 4"), blk("P4", "axis", "It Recon 2"))
    speeds = {"P1": 1, "P2": 2, "P3": 3, "P4": 4}
    eligible = rt.pursuit_eligible(pos, HEX, "axis")
    fire = rt.PursuitFire(HEX, (rt.Pursuer("P2", 1), rt.Pursuer("P3", 2), rt.Pursuer("P4", 2)))
    assert rt.check_pursuit(pos, fire, 2, eligible=eligible, speeds=speeds).ok
    assert rt.pursuit_dice_needed(fire) == (6,) * 5
    assert rt.score_pursuit(fire, (4, 3, 5, 6, 1)) == 3
    slow = rt.check_pursuit(pos, rt.PursuitFire(HEX, (rt.Pursuer("P1", 1), rt.Pursuer("P4", 1))), 2,
                            eligible=eligible, speeds=speeds)
    assert rules_of(slow.problems) == ["RB 10.5", "RB 10.5"]


def test_rb_10_5_hidden_speeds_become_obligations() -> None:
    pos = battle_pos(blk("R1", "allied", "Br Mot Inf 4"), blk("P1", "axis", "It Arm 4"))
    check = rt.check_pursuit(pos, rt.PursuitFire(HEX, (rt.Pursuer("P1", 2),)), 2,
                             eligible=("P1",), speeds={})
    assert check.ok and check.obligations == (rt.PursuitSpeedObligation(("P1",), 3, 4),)
    slowest = rt.check_slowest_speed(("R1", "R2"), rt.SlowestSpeed(HEX, 2), {"R1": 3})
    assert slowest.ok and slowest.obligations == (rt.PursuitSpeedObligation(("R2",), 2, 4, slowest=True),)
    wrong = rt.check_slowest_speed(("R1", "R2"), rt.SlowestSpeed(HEX, 2), {"R1": 3, "R2": 4})
    assert rules_of(wrong.problems) == ["RB 10.5"]
    lie = rt.check_slowest_speed(("R1",), rt.SlowestSpeed(HEX, 3), {"R1": 2})
    assert rules_of(lie.problems) == ["RB 10.5"]


def test_rb_10_5_pursuit_hits_on_elite_retreaters_follow_9_5() -> None:
    pos = battle_pos(blk("G1", "axis", "Ger Arm 4"), blk("G2", "axis", "Ger Inf 4"), blk("P1", "allied", "Br Arm 4"))
    alloc = ls.LossAllocation(HEX, (ls.Loss("G2", 2),))
    assert rt.check_pursuit_losses(pos, ("G1", "G2"), 3, alloc, units=units) == []
    bad = ls.LossAllocation(HEX, (ls.Loss("G1", 1), ls.Loss("G2", 1)))
    assert rules_of(rt.check_pursuit_losses(pos, ("G1", "G2"), 3, bad, units=units)) == ["RB 9.5"]
    # The third hit cannot remove an elite step (RB 2.3): it stays unplaced;
    # placed on G1 it is a second form of the same placement (issue 27 point 6).
    wasted = ls.LossAllocation(HEX, (ls.Loss("G1", 1), ls.Loss("G2", 2)))
    assert rules_of(rt.check_pursuit_losses(pos, ("G1", "G2"), 3, wasted, units=units)) == ["RB 9.5"]
    out = rt.apply_pursuit_losses(pos, ("G1", "G2"), 3, alloc, units=units)
    assert (cv(out.position, "G1"), cv(out.position, "G2"), out.wasted_halves) == (4, 2, 2)


# ------------------------------------------------------------------ RB 8 sidebar, EX-26


def test_rb_8_sidebar_refusing_battle_with_disrupted_units_in_the_group() -> None:
    pos = battle_pos(blk("U1", "allied", "Br Mech Inf 3"), blk("U2", "allied", "Br Arm 4"),
                     blk("D1", "allied", "Br Mot Inf 4", disrupted=True),
                     blk("P1", "axis", "It Arm 4"), blk("P2", "axis", "It Inf 4"), blk("P3", "axis", "It Arm 4"))
    speeds = {"U1": 3, "U2": 3, "D1": 2, "P1": 3, "P2": 1, "P3": 3}
    # 1) The Undisrupted units take Pursuit Fire; the Axis holds P3 back.
    go, stay = rt.refusal_split(pos, HEX, "allied")
    assert (go, stay) == (("U1", "U2"), ("D1",))
    assert rt.check_slowest_speed(go, rt.SlowestSpeed(HEX, 3), speeds).ok
    fire = rt.PursuitFire(HEX, (rt.Pursuer("P1", 1),))
    assert rt.check_pursuit(pos, fire, 3, eligible=rt.pursuit_eligible(pos, HEX, "axis"), speeds=speeds).ok
    hits = rt.score_pursuit(fire, (4,))
    alloc = ls.LossAllocation(HEX, (ls.Loss("U1", 1),))
    assert rt.check_pursuit_losses(pos, go, hits, alloc, units=units) == []
    pos = rt.apply_pursuit_losses(pos, go, hits, alloc, units=units).position
    # 2) They Withdraw as a Group (movement's business; here they simply leave).
    pos = pos.replace_blocks([mv_block(pos, t) for t in go])
    # 3) D1 is now unshielded: Rout Attrition, then Pursuit by units that have not fired.
    assert ls.unshielded_disrupted(pos, HEX, "allied") == ("D1",)
    attr = rt.rout_attrition(pos, ("D1",), units=units)
    pos = attr.position
    assert cv(pos, "D1") == 3 and attr.eliminated == ()
    eligible = rt.pursuit_eligible(pos, HEX, "axis", fired={"P1"})
    assert eligible == ("P2", "P3")
    assert not rt.check_pursuit(pos, rt.PursuitFire(HEX, (rt.Pursuer("P1", 2),)), 2,
                                eligible=eligible, speeds=speeds).ok
    rout_fire = rt.PursuitFire(HEX, (rt.Pursuer("P3", 2),))
    assert rt.check_pursuit(pos, rout_fire, 2, eligible=eligible, speeds=speeds).ok
    hits = rt.score_pursuit(rout_fire, (5, 2))
    pos = rt.apply_pursuit_losses(pos, ("D1",), hits, rt.default_pursuit_allocation(
        pos, ("D1",), hits, HEX, units=units), units=units).position
    assert cv(pos, "D1") == 2
    # 4) It survives, Withdraws as a separate group and is Disrupted again.
    pos = rt.disrupt_again(pos.replace_blocks([mv_block(pos, "D1")]), ("D1",))
    d1 = pos.block("D1")
    assert d1.disrupted and not d1.revealed and d1.hex == OTHER and pos.blocks_in(HEX, "allied") == ()


def mv_block(pos: Position, token: str):
    return msgspec.structs.replace(pos.block(token), hex=OTHER, disrupted=True, revealed=False)


def test_rb_11_3_rout_attrition_eliminates_units_at_their_lowest_step() -> None:
    pos = battle_pos(blk("G1", "axis", "Ger Arm 4", cv=2), blk("I1", "axis", "It Inf 4", cv=2),
                     blk("P1", "allied", "Br Arm 4"))
    out = rt.rout_attrition(pos, ("G1", "I1"), units=units)
    assert out.eliminated == ("G1",) and out.survivors == ("I1",) and cv(out.position, "I1") == 1


def test_rb_10_41_probe_combat_rearguard_fires_first_and_keeps_fortress_dice() -> None:
    pos = battle_pos(blk("R1", "allied", "Br Inf 3"), blk("X1", "axis", "It Inf 4"), attacker="axis")
    retreat = mv.Retreat(HEX, "allied", "partial", ("GONE",), ("R1",))
    rnd = rt.probe_round(retreat, fortress=True)
    assert rnd.defensive_side == "allied" and rnd.initiator == "axis"
    assert fr.dice_counts(pos, rnd, fr.FirePlan(HEX, "allied", (fr.UnitFire("R1", "infantry"),)),
                          units=units) == (6,)
    assert fr.dice_counts(pos, rnd, fr.FirePlan(HEX, "axis", (fr.UnitFire("X1", "infantry"),)),
                          units=units) == (4,)
    # Probing units that did not fire pursue once the Rearguard is gone.
    pos2 = battle_pos(blk("R1", "allied", "Br Inf 3", cv=1), blk("X1", "axis", "It Inf 4"),
                      blk("X2", "axis", "It Inf 4"), attacker="axis")
    plan = fr.FirePlan(HEX, "axis", (fr.UnitFire("X1", "infantry"), fr.UnitFire("X2", "infantry")))
    result = fr.score(pos2, rnd, plan, (6, 1, 1, 1) + (6, 6, 6, 6), units=units)
    out = ls.apply_allocation(pos2, result, ls.default_allocation(pos2, result, units=units), units=units)
    assert rt.rearguard_eliminated(out.position, retreat)
    assert rt.probe_pursuers(out.position, retreat, result) == ("X2",)


def test_rb_11_4_overrun_pursuers_from_both_moves_of_an_offensive_turn() -> None:
    pos = Position(blocks=(blk("D1", "allied", "Br Inf 3", disrupted=True), blk("X1", "axis", "It Arm 4"),
                           blk("X2", "axis", "It Inf 4"), blk("X3", "axis", "It Inf 4")),
                   battles=(Battle(HEX, "axis"),))
    turn = mv.MovementTurn(side="axis", moves_allowed=2, engagements=(
        mv.Engagement("X1", "0909", HEX), mv.Engagement("X2", "1009", HEX)))
    assert rt.is_overrun(pos, HEX, "axis")
    assert rt.overrun_pursuers(pos, turn, HEX) == ("X1", "X2")


def test_rb_11_sidebar_final_supply_check_routs_eliminate_unshielded_units() -> None:
    pos = battle_pos(blk("R1", "allied", "Br Arm 4", disrupted=True), blk("R2", "allied", "Br Arm 4", disrupted=True),
                     blk("S1", "allied", "Br Inf 3", hex_=OTHER, disrupted=True),
                     blk("S2", "allied", "Br Inf 3", hex_=OTHER), blk("X1", "axis", "It Inf 4"),
                     blk("X2", "axis", "It Inf 4", hex_=OTHER))
    pos = pos.with_battles([Battle(HEX, "axis"), Battle(OTHER, "axis")])
    out = rt.final_supply_routs(pos, ("R1", "S1"))
    assert out.eliminated == ("R1",)
    assert out.rout == ((HEX, "allied", ("R2",)),)  # R2 was shielded by R1 only
    assert out.position.has_block("S1")


# ------------------------------------------------------------------ RB 13


def test_rb_13_2_fortress_combat_in_pass_turns_attacker_must_withdraw_or_rout() -> None:
    pos = battle_pos(blk("X1", "axis", "It Inf 4"), blk("X2", "axis", "It Inf 4"), blk("A1", "allied", "Br Inf 3"),
                     attacker="axis")
    assert fo.pass_turn_fortress_battles(pos, "axis", [HEX]) == (HEX,)
    assert fo.pass_turn_fortress_battles(pos, "allied", [HEX]) == ()
    assert fo.pass_turn_fortress_routs(pos, "axis", [HEX]) == ("X1", "X2")
    withdrawn = ls.eliminate(pos, ["X1", "X2"])  # as if both withdrew
    assert fo.pass_turn_fortress_routs(withdrawn, "axis", [HEX]) == ()


def test_rb_13_4_fortress_capture_needs_undisrupted_sole_occupation() -> None:
    pos = Position(blocks=(blk("X1", "axis", "It Inf 4", disrupted=True),), fortresses={HEX: "allied"})
    assert fo.fortress_captures(pos, [HEX]) == {}
    pos = pos.replace_blocks([blk("X1", "axis", "It Inf 4")])
    assert fo.fortress_captures(pos, [HEX]) == {HEX: "axis"}
    assert fo.apply_captures(pos, {HEX: "axis"}).fortresses[HEX] == "axis"


def _benghazi():
    m = load_map()
    return m, m.resolve("Benghazi")


def test_rb_13_4_captured_supply_axis_2_allies_1_at_benghazi() -> None:
    m, bg = _benghazi()
    cap = fo.map_port_capacity(m)
    ledger = fo.start_month_ledger(3, {bg: "allied"})
    assert fo.captured_supply(fo.record_captures(ledger, {bg: "axis"}), cap) == {"axis": 2, "allied": 0}
    ledger = fo.start_month_ledger(3, {bg: "axis"})
    assert fo.captured_supply(fo.record_captures(ledger, {bg: "allied"}), cap) == {"axis": 0, "allied": 1}


def test_rb_13_sidebar_captured_supply_recaptured_same_month_gives_nothing() -> None:
    m, bg = _benghazi()
    ledger = fo.record_captures(fo.record_captures(fo.start_month_ledger(3, {bg: "allied"}), {bg: "axis"}),
                                {bg: "allied"})
    assert fo.captured_supply(ledger, fo.map_port_capacity(m)) == {"axis": 0, "allied": 0}


def test_rb_13_sidebar_captured_supply_captured_again_same_month_gives_the_bonus_once() -> None:
    m, bg = _benghazi()
    ledger = fo.start_month_ledger(3, {bg: "allied"})
    for side in ("axis", "allied", "axis"):
        ledger = fo.record_captures(ledger, {bg: side})
    assert fo.captured_supply(ledger, fo.map_port_capacity(m)) == {"axis": 2, "allied": 0}


def test_rb_13_5_besieged_when_an_adjacent_hex_holds_enemy_units() -> None:
    m, bg = _benghazi()
    near = m.neighbours(bg)[0][1]
    pos = Position(blocks=(blk("A1", "allied", "Br Inf 3", hex_=bg),), fortresses={bg: "allied"})
    assert not fo.is_besieged(m, pos, bg, "allied")
    pos = Position(blocks=pos.blocks + (blk("X1", "axis", "It Inf 4", hex_=near),), fortresses={bg: "allied"})
    assert fo.is_besieged(m, pos, bg, "allied")
