"""Rulebook examples of combat (RB 9.2-9.52, 14.2, 19.0), one test each.

Dice are fixed in the tests; the engine would roll ``dice_needed``.
"""

from __future__ import annotations

from rules.ritd import combat_round as cr
from rules.ritd import fire as fr
from rules.ritd import losses as ls
from tests.ritd.combat_support import HEX, battle_pos, blk, cv, units


def rules_of(problems):
    return [p.rule for p in problems]


def plan(side, *fires):
    return fr.FirePlan(HEX, side, tuple(fr.UnitFire(*f) if isinstance(f, tuple) else f for f in fires))


# ------------------------------------------------------------------ RB 9.2 sidebar


def test_rb_9_2_unit_fire_example_6_cv_armor_on_infantry_scores_two_hits() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Arm 6"), blk("X1", "axis", "It Inf 4"), blk("X2", "axis", "It Inf 4"))
    rnd = cr.CombatRound(HEX, active="axis")
    p = plan("allied", ("A1", "infantry"))
    assert fr.check_fire_plan(pos, rnd, p, units=units) == []
    assert fr.dice_needed(pos, rnd, p, units=units) == (6,) * 6
    result = fr.score(pos, rnd, p, (4, 5, 1, 6, 3, 3), units=units)
    assert result.shots[0].fire == "DF"
    assert result.hits == {"infantry": ls.ClassHits(hits=2)}


def test_rb_9_21_double_dice_example_3_cv_infantry_defending_a_fortress_rolls_6_dice_at_sf() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Inf 3"), blk("A2", "allied", "Br Arm 4"),
                     blk("X1", "axis", "It Inf 4"), attacker="axis")
    rnd = cr.CombatRound(HEX, active="axis", fortress=True)
    p = plan("allied", ("A1", "infantry"), ("A2", "infantry"))
    assert fr.check_fire_plan(pos, rnd, p, units=units) == []
    # Armor is excluded from the Fortress double dice (RB 13.2).
    assert fr.dice_counts(pos, rnd, p, units=units) == (6, 4)
    result = fr.score(pos, rnd, p, (6, 5, 5, 5, 5, 1) + (1, 1, 1, 1), units=units)
    assert result.shots[0].fire == "SF" and result.shots[0].hits == 1


def test_rb_13_sidebar_fortress_assault_quadruple_dice_armor_double() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Inf 3"), blk("A2", "allied", "Br Arm 4"),
                     blk("X1", "axis", "It Inf 4"), attacker="axis")
    rnd = cr.CombatRound(HEX, active="axis", fortress=True, assault=True)
    assert fr.dice_counts(pos, rnd, plan("allied", ("A1", "infantry"), ("A2", "infantry")), units=units) == (12, 8)
    # The Attacker's Offensive Fire in the Assault is doubled only.
    assert fr.dice_counts(pos, rnd, plan("axis", ("X1", "infantry")), units=units) == (8,)


def test_rb_13_2_fortress_double_dice_lost_when_the_defender_initiates_combat() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Inf 3"), blk("X1", "axis", "It Inf 4"), attacker="axis")
    rnd = cr.CombatRound(HEX, active="allied", fortress=True)  # the Defender's own turn
    assert rnd.defensive_side == "axis"
    assert fr.dice_counts(pos, rnd, plan("allied", ("A1", "infantry")), units=units) == (3,)
    assert fr.dice_counts(pos, rnd, plan("axis", ("X1", "infantry")), units=units) == (4,)


# ------------------------------------------------------------------ RB 9.3 / 9.4 sidebars


def test_rb_9_4_firepower_example_armor_must_target_enemy_armor_at_sf() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Arm 4"), blk("X1", "axis", "It Arm 4"), blk("X2", "axis", "It Inf 4"))
    rnd = cr.CombatRound(HEX, active="axis")
    bad = fr.check_fire_plan(pos, rnd, plan("allied", ("A1", "infantry")), units=units)
    assert rules_of(bad) == ["RB 9.3"] and "armor must fire at enemy armor" in bad[0].message
    good = plan("allied", ("A1", "armor"))
    assert fr.check_fire_plan(pos, rnd, good, units=units) == []
    assert fr.score(pos, rnd, good, (5, 5, 6, 1), units=units).shots[0].fire == "SF"


def test_rb_9_4_firepower_example_without_enemy_armor_armor_fires_on_infantry_at_df() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Arm 4"), blk("X1", "axis", "It Inf 4"),
                     blk("X2", "axis", "It Arm 4", disrupted=True))  # Disrupted: ignored (RB 9.3)
    rnd = cr.CombatRound(HEX, active="axis")
    p = plan("allied", ("A1", "infantry"))
    assert fr.check_fire_plan(pos, rnd, p, units=units) == []
    assert fr.score(pos, rnd, p, (5, 5, 6, 1), units=units).hits == {"infantry": ls.ClassHits(3)}


def test_rb_9_3_targeting_artillery_only_artillery_while_supported() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Arm 4"), blk("A2", "allied", "Br Art 4"),
                     blk("X1", "axis", "It Art 4"), blk("X2", "axis", "It Inf 4"))
    rnd = cr.CombatRound(HEX, active="axis")
    probs = fr.check_fire_plan(pos, rnd, plan("allied", ("A2", "artillery"), ("A1", "artillery")), units=units)
    assert rules_of(probs) == ["RB 9.3"] and "only artillery" in probs[0].message
    assert fr.check_fire_plan(pos, rnd, plan("allied", ("A2", "artillery"), ("A1", "infantry")), units=units) == []
    # Artillery must fire first (RB 9.2).
    late = fr.check_fire_plan(pos, rnd, plan("allied", ("A1", "infantry"), ("A2", "artillery")), units=units)
    assert rules_of(late) == ["RB 9.2"]


def test_rb_9_3_targeting_artillery_unsupported_artillery_is_hit_at_tf() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Arm 4"), blk("X1", "axis", "It Art 4"),
                     blk("X2", "axis", "It Inf 4", disrupted=True))
    rnd = cr.CombatRound(HEX, active="axis")
    p = plan("allied", ("A1", "artillery"))
    assert fr.check_fire_plan(pos, rnd, p, units=units) == []
    result = fr.score(pos, rnd, p, (4, 3, 2, 1), units=units)
    assert result.shots[0].fire == "TF" and result.hits == {"artillery": ls.ClassHits(1)}


def test_rb_9_3_class_wiped_out_during_fire_frees_the_next_unit_and_unsupports_artillery() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Arm 4"), blk("A2", "allied", "Br Arm 4"),
                     blk("X1", "axis", "It Inf 4", cv=1), blk("X2", "axis", "It Art 4"))
    rnd = cr.CombatRound(HEX, active="axis")
    p = plan("allied", ("A1", "infantry"), fr.UnitFire("A2", "infantry", ("artillery",)))
    assert fr.check_fire_plan(pos, rnd, p, units=units) == []
    result = fr.score(pos, rnd, p, (6, 1, 1, 1) + (4, 4, 1, 1), units=units)
    assert result.wiped_out == ("infantry",)
    assert (result.shots[1].target, result.shots[1].fire, result.shots[1].hits) == ("artillery", "TF", 2)


# ------------------------------------------------------------------ RB 9.5 sidebars


def _three_armor_hits(*targets):
    pos = battle_pos(blk("A1", "allied", "Br Arm 6"), *targets)
    rnd = cr.CombatRound(HEX, active="axis")
    result = fr.score(pos, rnd, plan("allied", ("A1", "armor")), (6, 6, 6, 1, 1, 1), units=units)
    assert result.hits == {"armor": ls.ClassHits(3)}
    return pos, result


def test_rb_9_5_applying_half_losses_three_hits_on_all_elite_armor_one_step_one_wasted() -> None:
    pos, result = _three_armor_hits(blk("G1", "axis", "Ger Arm 6"), blk("G2", "axis", "Ger Arm 4"))
    ok = ls.LossAllocation(HEX, (ls.Loss("G1", 2),))
    assert ls.check_allocation(pos, result, ok, units=units) == []
    out = ls.apply_allocation(pos, result, ok, units=units)
    assert (cv(out.position, "G1"), cv(out.position, "G2"), out.wasted_halves) == (4, 4, 2)
    spread = ls.LossAllocation(HEX, (ls.Loss("G1", 1), ls.Loss("G2", 1)))
    assert rules_of(ls.check_allocation(pos, result, spread, units=units)) == ["RB 9.5"]


def test_rb_9_5_applying_losses_to_mixed_groups_all_three_hits_applied() -> None:
    pos, result = _three_armor_hits(blk("G1", "axis", "Ger Arm 6"), blk("I1", "axis", "It Arm 4"))
    legal = [((ls.Loss("G1", 2), ls.Loss("I1", 1)), (4, 3)), ((ls.Loss("I1", 3),), (6, 1))]
    for losses, after in legal:
        alloc = ls.LossAllocation(HEX, losses)
        assert ls.check_allocation(pos, result, alloc, units=units) == []
        out = ls.apply_allocation(pos, result, alloc, units=units)
        assert (cv(out.position, "G1"), cv(out.position, "I1")) == after and out.wasted_halves == 0
    for losses in ((ls.Loss("G1", 1), ls.Loss("I1", 2)), (ls.Loss("G1", 3),)):
        probs = ls.check_allocation(pos, result, ls.LossAllocation(HEX, losses), units=units)
        assert rules_of(probs) == ["RB 9.5"] and "no alternative" in probs[0].message


def test_rb_9_5_provisional_placement_second_hit_may_go_to_the_elite_unit() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Arm 4"), blk("A2", "allied", "Br Arm 4"),
                     blk("G1", "axis", "Ger Arm 4"), blk("I1", "axis", "It Arm 4", cv=1))
    rnd = cr.CombatRound(HEX, active="axis")
    result = fr.score(pos, rnd, plan("allied", ("A1", "armor"), ("A2", "armor")),
                      (6, 1, 1, 1, 6, 1, 1, 1), units=units)
    # The 1-CV unit is not removed after the first hit: the class is not wiped out.
    assert result.wiped_out == () and [s.target for s in result.shots] == ["armor", "armor"]
    both_on_elite = ls.LossAllocation(HEX, (ls.Loss("G1", 2),))
    assert ls.check_allocation(pos, result, both_on_elite, units=units) == []
    out = ls.apply_allocation(pos, result, both_on_elite, units=units)
    assert (cv(out.position, "G1"), cv(out.position, "I1")) == (2, 1)


# ------------------------------------------------------------------ RB 14.2 sidebar


def test_rb_14_2_elite_units_in_minefields_example_1_four_hits_for_one_step() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Arm 4"), blk("A2", "allied", "Br Arm 4"),
                     blk("G1", "axis", "Ger Arm 4"), attacker="allied")
    rnd = cr.CombatRound(HEX, active="allied", minefield=True)
    p = plan("allied", ("A1", "armor"), ("A2", "armor"))
    three = fr.score(pos, rnd, p, (6, 6, 6, 1, 1, 1, 1, 1), units=units)
    assert three.hits == {"armor": ls.ClassHits(half_hits=3)}
    out = ls.apply_allocation(pos, three, ls.default_allocation(pos, three, units=units), units=units)
    assert cv(out.position, "G1") == 4 and out.wasted_halves == 3
    four = fr.score(pos, rnd, p, (6, 6, 6, 6, 1, 1, 1, 1), units=units)
    alloc = ls.LossAllocation(HEX, (ls.Loss("G1", half_hits=4),))
    assert ls.check_allocation(pos, four, alloc, units=units) == []
    assert cv(ls.apply_allocation(pos, four, alloc, units=units).position, "G1") == 2


def test_rb_14_2_elite_units_in_minefields_example_2_artillery_hit_plus_two_others() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Arm 4"), blk("A2", "allied", "Br Art 4"),
                     blk("G1", "axis", "Ger Arm 4"), attacker="allied")
    rnd = cr.CombatRound(HEX, active="allied", minefield=True)
    p = plan("allied", ("A2", "armor"), ("A1", "armor"))
    result = fr.score(pos, rnd, p, (6, 1, 1, 1) + (6, 6, 1, 1), units=units)
    assert [(s.hits, s.half) for s in result.shots] == [(1, False), (2, True)]
    assert result.hits == {"armor": ls.ClassHits(hits=1, half_hits=2)}
    alloc = ls.LossAllocation(HEX, (ls.Loss("G1", hits=1, half_hits=2),))
    assert ls.check_allocation(pos, result, alloc, units=units) == []
    out = ls.apply_allocation(pos, result, alloc, units=units)
    assert cv(out.position, "G1") == 2 and out.wasted_halves == 0


def test_rb_14_2_minefield_advantage_lost_when_the_defender_initiates_combat() -> None:
    pos = battle_pos(blk("A1", "allied", "Br Arm 4"), blk("G1", "axis", "Ger Arm 4"), attacker="allied")
    rnd = cr.CombatRound(HEX, active="axis", minefield=True)  # the Defender's turn
    result = fr.score(pos, rnd, plan("allied", ("A1", "armor")), (6, 6, 1, 1), units=units)
    assert result.hits == {"armor": ls.ClassHits(hits=2)}


# ------------------------------------------------------------------ RB 19.0 Demo


def test_rb_19_0_demo_second_axis_player_turn_combat_at_buq_buq() -> None:
    pos = battle_pos(blk("AL-ARM", "allied", "Br Arm 4"), blk("AL-MECH", "allied", "Br Mech Inf 3"),
                     blk("AX-1", "axis", "It Inf 4"), blk("AX-2", "axis", "It Inf 4"), attacker="axis")
    rnd = cr.CombatRound(HEX, active="axis")
    # Defensive Fire (Allied): armor 2 hits at DF, mech infantry misses at SF.
    defensive = plan("allied", ("AL-ARM", "infantry"), ("AL-MECH", "infantry"))
    assert rnd.defensive_side == "allied"
    assert fr.check_fire_plan(pos, rnd, defensive, units=units) == []
    assert fr.dice_needed(pos, rnd, defensive, units=units) == (6,) * 7
    fire = fr.score(pos, rnd, defensive, (5, 6, 1, 2) + (5, 4, 1), units=units)
    assert [(s.fire, s.hits) for s in fire.shots] == [("DF", 2), ("SF", 0)]
    # Axis loss choices: one unit -2 CV, or both -1 CV; not one hit only.
    one = ls.LossAllocation(HEX, (ls.Loss("AX-1", 2),))
    both = ls.LossAllocation(HEX, (ls.Loss("AX-1", 1), ls.Loss("AX-2", 1)))
    assert ls.check_allocation(pos, fire, one, units=units) == []
    assert ls.check_allocation(pos, fire, both, units=units) == []
    short = ls.LossAllocation(HEX, (ls.Loss("AX-1", 1),))
    assert rules_of(ls.check_allocation(pos, fire, short, units=units)) == ["RB 9.5"]
    pos = ls.apply_allocation(pos, fire, one, units=units).position
    assert (cv(pos, "AX-1"), cv(pos, "AX-2")) == (2, 4)
    # Offensive Fire (Axis): both infantry (2 CV and 4 CV, 6 dice) at SF, one hit.
    offensive = plan("axis", ("AX-1", "infantry"), ("AX-2", "infantry"))
    assert fr.check_fire_plan(pos, rnd, offensive, units=units) == []
    assert fr.dice_needed(pos, rnd, offensive, units=units) == (6,) * 6
    back = fr.score(pos, rnd, offensive, (6, 1, 2, 3, 4, 5), units=units)
    assert back.hits == {"infantry": ls.ClassHits(1)} and {s.fire for s in back.shots} == {"SF"}
    out = ls.apply_allocation(pos, back, ls.LossAllocation(HEX, (ls.Loss("AL-MECH", 1),)), units=units)
    assert cv(out.position, "AL-MECH") == 2 and not out.battle_over
    assert out.position.battle(HEX) is not None
