"""The optional rule "Allied I-Tanks" (RB 17.0 optional rules): the four
I-tanks are elite (two hits per step) with Unit Speed 2. Pure tests of the
rules parts; decisions/combat.md CB-15..CB-18. The game through the engine
is in test_game_i_tanks.py."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.ritd import buildup as bu
from rules.ritd import combat_round as cr
from rules.ritd import fire as fr
from rules.ritd import game as ritd
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd import reachability
from rules.ritd import routs as rt
from rules.ritd.group_moves import block_speed, speed_of, speeds_of
from rules.ritd.position import Block, Position
from rules.ritd.state import OPTIONS, game_map, roster_of
from rules.ritd.step_losses import loss_problems
from rules.ritd.units import I_TANK_OPTIONAL_SPEED, OptionalITank, load_units
from tests.ritd.combat_support import HEX, battle_pos, blk, cv, units

PRINTED = load_units()
OPTIONAL = PRINTED.with_optional_i_tanks()
ITANK = "32AT/1"  # armor, CV 4-3-2-1 (four 1-CV steps)


def with_option(name: str):
    """The combat test roster plus the real I-tanks under the optional rule."""
    return OPTIONAL.get(name) if name in OPTIONAL else units(name)


def without_option(name: str):
    return PRINTED.get(name) if name in PRINTED else units(name)


def itank(token: str, side="allied", cv_: int | None = None, hex_: str = HEX, **kw) -> Block:
    return Block(token=token, side=side, hex=hex_, unit=ITANK, cv=4 if cv_ is None else cv_, revealed=True, **kw)


def plan(side, *fires):
    return fr.FirePlan(HEX, side, tuple(fr.UnitFire(*f) for f in fires))


def state(*options: str) -> ritd.State:
    return ritd.initial_state("1941", options)


# ------------------------------------------------------------------ the roster and the game's options


def test_rb_17_optional_i_tanks_roster_variant_keeps_the_label() -> None:
    tanks = OPTIONAL.i_tanks()
    assert len(tanks) == 4 and all(isinstance(u, OptionalITank) for u in tanks)
    for u in tanks:
        printed = PRINTED.get(u.name)
        assert (u.speed, u.hits_per_step) == (I_TANK_OPTIONAL_SPEED, 2) == (2, 2)
        assert (printed.speed, printed.hits_per_step) == (3, 1)
        # CB-15: the label is unchanged, so a step is still 1 CV.
        assert u.cv_per_step == printed.cv_per_step == 1 and u.cv_levels == printed.cv_levels
    others = [u for u in OPTIONAL if not u.army_tank]
    assert others == [u for u in PRINTED if not u.army_tank]
    assert all(u.hits_per_step == (2 if u.elite else 1) for u in others)


def test_rb_17_optional_rules_are_offered_stored_and_checked() -> None:
    assert ritd.SPEC.options == ("i-tanks",)
    assert state("i-tanks", "i-tanks").options == ("i-tanks",)
    assert state().options == ()
    with pytest.raises(ValueError, match="unknown optional rules"):
        ritd.initial_state("1941", ("i-tank",))


def test_rb_17_optional_i_tanks_are_named_in_the_view_and_situation() -> None:
    from rules.ritd.report import situation

    v = ritd.view(state("i-tanks"), "allied")
    assert v.options == [OPTIONS["i-tanks"]]
    assert "optional rule: Allied I-Tanks (RB 17.0 optional rule)" in ritd.render_text(v)
    assert any(line.startswith("Optional rule: Allied I-Tanks") for line in situation(v))
    plain = ritd.view(state(), "allied")
    assert plain.options == [] and "optional rule" not in ritd.render_text(plain).lower()
    assert not any("Optional rule" in line for line in situation(plain))


# ------------------------------------------------------------------ Unit Speed 2 (CB-18)


def test_rb_17_optional_i_tanks_move_at_speed_2() -> None:
    on, off = state("i-tanks"), state()
    assert speed_of(on, ITANK) == 2 and speed_of(off, ITANK) == 3
    assert speed_of(on, "7/7 Tk") == speed_of(off, "7/7 Tk") == 3  # other tanks unchanged
    hidden = Block(token="L00000001", side="allied", hex="2024", unit="")
    assert block_speed(on, hidden) is None  # unknown to this replay: an obligation instead
    # From Tobruk along the coast road's hexes: speed 2 reaches fewer hexes than speed 3.
    m = game_map()
    tobruk = m.resolve("Tobruk")
    pos = Position(blocks=(itank("L1", hex_=tobruk),))
    turn = mv.start_movement(pos, "allied", moves_allowed=1)
    slow = set(reachability.reachable(m, pos, turn, "L1", block_speed(on, pos.block("L1"))).paths)
    fast = set(reachability.reachable(m, pos, turn, "L1", block_speed(off, pos.block("L1"))).paths)
    assert slow < fast
    far = min(fast - slow)
    move = mv.Move(kind="group", origin=tobruk, units=(mv.UnitMove("L1", fast_path(m, pos, turn, far)),))
    problems = mv.check_move(m, pos, turn, move, speeds_of(on, pos, ["L1"])).problems
    assert problems and all(p.rule.startswith("RB 6") for p in problems)
    assert "speed 2" in " ".join(p.message for p in problems)
    assert mv.check_move(m, pos, turn, move, speeds_of(off, pos, ["L1"])).ok


def fast_path(m, pos, turn, dest):
    return tuple(reachability.reachable(m, pos, turn, "L1", 3).paths[dest])


# ------------------------------------------------------------------ two hits per step (CB-15, CB-16)


def test_rb_17_optional_i_tanks_need_two_hits_per_step() -> None:
    pos = battle_pos(itank("T1"), blk("X1", "axis", "It Arm 4"))
    rnd = cr.CombatRound(HEX, active="axis")
    three = fr.score(pos, rnd, plan("axis", ("X1", "armor")), (6, 6, 6, 1), units=with_option)
    assert three.hits == {"armor": ls.ClassHits(hits=3)}
    # Three hits: one 1-CV step, the odd hit is wasted (RB 9.5 "Applying Half Losses").
    alloc = ls.default_allocation(pos, three, units=with_option)
    assert alloc.losses == (ls.Loss("T1", hits=2),)
    assert ls.check_allocation(pos, three, alloc, units=with_option) == []
    out = ls.apply_allocation(pos, three, alloc, units=with_option)
    assert cv(out.position, "T1") == 3 and out.wasted_halves == 2
    # Placing all three changes nothing: the third hit has no step to take.
    all_three = ls.LossAllocation(HEX, (ls.Loss("T1", hits=3),))
    assert cv(ls.apply_allocation(pos, three, all_three, units=with_option).position, "T1") == 3
    # One hit placed where two are needed for a step: rejected, the hits can remove a step.
    one = ls.LossAllocation(HEX, (ls.Loss("T1", hits=1),))
    assert [p.rule for p in ls.check_allocation(pos, three, one, units=with_option)] == ["RB 9.5"]


def test_rb_17_optional_i_tank_wiped_out_only_by_two_hits_per_step() -> None:
    pos = battle_pos(itank("T1", cv_=2), blk("X1", "axis", "It Arm 4"))  # two steps left: 4 hits
    rnd = cr.CombatRound(HEX, active="axis")
    p = plan("axis", ("X1", "armor"))
    assert fr.score(pos, rnd, p, (6, 6, 6, 1), units=with_option).wiped_out == ()
    four = fr.score(pos, rnd, p, (6, 6, 6, 6), units=with_option)
    assert four.wiped_out == ("armor",)
    out = ls.apply_allocation(pos, four, ls.default_allocation(pos, four, units=with_option), units=with_option)
    assert not out.position.has_block("T1") and out.battle_over
    # Without the option two hits were enough.
    assert fr.score(pos, rnd, p, (6, 6, 1, 1), units=without_option).wiped_out == ("armor",)


def test_rb_17_without_the_option_i_tanks_keep_speed_3_and_one_hit_per_step() -> None:
    assert PRINTED.get(ITANK).speed == 3 and speed_of(state(), ITANK) == 3
    pos = battle_pos(itank("T1"), blk("X1", "axis", "It Arm 4"))
    rnd = cr.CombatRound(HEX, active="axis")
    three = fr.score(pos, rnd, plan("axis", ("X1", "armor")), (6, 6, 6, 1), units=without_option)
    alloc = ls.default_allocation(pos, three, units=without_option)
    assert alloc.losses == (ls.Loss("T1", hits=3),)
    out = ls.apply_allocation(pos, three, alloc, units=without_option)
    assert cv(out.position, "T1") == 1 and out.wasted_halves == 0
    # The game's roster follows the game's options.
    assert roster_of(state()).get(ITANK).hits_per_step == 1
    assert roster_of(state("i-tanks")).get(ITANK).hits_per_step == 2


def test_rb_17_optional_i_tank_half_hits_in_a_minefield_four_per_step() -> None:
    """RB 9.52, 14.2 "elite units in minefields": four half-hits per step;
    for an I-tank the step is 1 CV (CB-15)."""
    pos = battle_pos(blk("A1", "axis", "Ger Arm 4"), blk("A2", "axis", "Ger Arm 4"), itank("T1"),
                     attacker="axis")
    rnd = cr.CombatRound(HEX, active="axis", minefield=True)
    p = plan("axis", ("A1", "armor"), ("A2", "armor"))
    three = fr.score(pos, rnd, p, (6, 6, 6, 1, 1, 1, 1, 1), units=with_option)
    assert three.hits == {"armor": ls.ClassHits(half_hits=3)}
    out = ls.apply_allocation(pos, three, ls.default_allocation(pos, three, units=with_option), units=with_option)
    assert cv(out.position, "T1") == 4 and out.wasted_halves == 3
    four = fr.score(pos, rnd, p, (6, 6, 6, 6, 1, 1, 1, 1), units=with_option)
    alloc = ls.LossAllocation(HEX, (ls.Loss("T1", half_hits=4),))
    assert ls.check_allocation(pos, four, alloc, units=with_option) == []
    out = ls.apply_allocation(pos, four, alloc, units=with_option)
    assert cv(out.position, "T1") == 3 and out.wasted_halves == 0
    # An artillery hit and two half-hits make the two hits of one step (RB 14.2 example 2).
    assert ls.best_use(1, 2, [(4, 2)]) == 2
    mixed = ls.LossAllocation(HEX, (ls.Loss("T1", hits=1, half_hits=2),))
    assert ls.apply_losses(pos, mixed.losses, 4, HEX, "allied", units=with_option).position.block("T1").cv == 3


def test_rb_17_optional_i_tank_mixed_with_a_normal_tank_hits_may_be_wasted_only_without_alternative() -> None:
    """CB-16: with an I-tank in the class, RB 9.5 counts hits, not CV."""
    pos = battle_pos(itank("T1"), blk("B1", "allied", "Br Arm 4", 1), blk("X1", "axis", "It Arm 4"))
    rnd = cr.CombatRound(HEX, active="axis")
    p = plan("axis", ("X1", "armor"))

    def check(result, *losses):
        return [x.rule for x in ls.check_allocation(pos, result, ls.LossAllocation(HEX, losses), units=with_option)]

    one = fr.score(pos, rnd, p, (6, 1, 1, 1), units=with_option)
    assert check(one, ls.Loss("B1", 1)) == []
    assert check(one, ls.Loss("T1", 1)) == ["RB 9.5"]  # a lone hit on the I-tank is wasted; B1 can take it
    two = fr.score(pos, rnd, p, (6, 6, 1, 1), units=with_option)
    assert check(two, ls.Loss("T1", 2)) == []
    # Both placements remove 1 CV, but this one wastes a hit that the I-tank could take.
    problems = ls.check_allocation(pos, two, ls.LossAllocation(HEX, (ls.Loss("B1", 2),)), units=with_option)
    assert [x.rule for x in problems] == ["RB 9.5"] and "applies 1 hits but 2 can be applied" in problems[0].message
    three = fr.score(pos, rnd, p, (6, 6, 6, 1), units=with_option)
    assert check(three, ls.Loss("B1", 1), ls.Loss("T1", 2)) == []
    assert check(three, ls.Loss("T1", 3)) == ["RB 9.5"]
    for result in (one, two, three):
        alloc = ls.default_allocation(pos, result, units=with_option)
        assert ls.check_allocation(pos, result, alloc, units=with_option) == []
    out = ls.apply_allocation(pos, three, ls.default_allocation(pos, three, units=with_option), units=with_option)
    assert (cv(out.position, "T1"), cv(out.position, "B1"), out.wasted_halves) == (3, None, 0)


def test_rb_17_optional_i_tank_with_a_normal_elite_tank_both_two_hits_per_step() -> None:
    pos = battle_pos(itank("T1"), blk("E1", "allied", "Br Elite Arm 4"), blk("X1", "axis", "It Arm 4"))
    rnd = cr.CombatRound(HEX, active="axis")
    three = fr.score(pos, rnd, plan("axis", ("X1", "armor")), (6, 6, 6, 1), units=with_option)
    # Two hits take a 2-CV step of the elite tank or a 1-CV step of the I-tank; the odd hit is wasted.
    for losses in ((ls.Loss("E1", 2),), (ls.Loss("T1", 2),)):
        assert ls.check_allocation(pos, three, ls.LossAllocation(HEX, losses), units=with_option) == []
    out = ls.apply_allocation(pos, three, ls.LossAllocation(HEX, (ls.Loss("E1", 2),)), units=with_option)
    assert cv(out.position, "E1") == 2 and out.wasted_halves == 2
    out = ls.apply_allocation(pos, three, ls.LossAllocation(HEX, (ls.Loss("T1", 2),)), units=with_option)
    assert cv(out.position, "T1") == 3 and out.wasted_halves == 2


def test_rb_17_optional_i_tank_rout_attrition_is_one_step_of_1_cv() -> None:
    pos = Position(blocks=(itank("T1", cv_=2),))
    after, dead = ls.lose_step(pos, "T1", units=with_option)
    assert after.block("T1").cv == 1 and not dead
    after, dead = ls.lose_step(after, "T1", units=with_option)
    assert dead and not after.has_block("T1")


# ------------------------------------------------------------------ Pursuit Fire (RB 10.5)


def test_rb_17_optional_i_tank_as_the_slowest_retreating_unit_sets_the_pursuit_dice() -> None:
    mech = Block(token="M1", side="allied", hex=HEX, unit="7 SG", cv=3, revealed=True)  # speed 3
    pos = battle_pos(itank("T1"), mech, blk("P1", "axis", "It Arm 4"), blk("P2", "axis", "It Mot Inf 4"),
                     attacker="axis")
    on, off = state("i-tanks"), state()
    retreating = ("T1", "M1")
    # RB 10.5: announce the slowest Retreating unit's speed: 2 with the option, 3 without.
    assert rt.check_slowest_speed(retreating, rt.SlowestSpeed(HEX, 2), speeds_of(on, pos, retreating)).ok
    lie = rt.check_slowest_speed(retreating, rt.SlowestSpeed(HEX, 3), speeds_of(on, pos, retreating))
    assert [p.rule for p in lie.problems] == ["RB 10.5"]
    assert rt.check_slowest_speed(retreating, rt.SlowestSpeed(HEX, 3), speeds_of(off, pos, retreating)).ok
    # Against slowest 2, the speed-3 tank rolls two dice and the speed-2 infantry one.
    speeds = {**speeds_of(on, pos, retreating), "P1": 3, "P2": 2}
    fire = rt.PursuitFire(HEX, (rt.Pursuer("P1", 2), rt.Pursuer("P2", 1)))
    assert rt.check_pursuit(pos, fire, 2, eligible=("P1", "P2"), speeds=speeds).ok
    assert rt.pursuit_dice_needed(fire) == (6, 6, 6)
    # Against slowest 3 (no option) the speed-2 infantry cannot pursue.
    assert not rt.check_pursuit(pos, fire, 3, eligible=("P1", "P2"), speeds=speeds).ok


def test_rb_17_optional_i_tank_pursuing_rolls_as_a_speed_2_unit() -> None:
    on = state("i-tanks")
    b = itank("T1")
    assert rt.pursuit_dice_for(2, block_speed(on, b)) == 1
    assert rt.pursuit_dice_for(3, block_speed(on, b)) == 0
    assert rt.pursuit_dice_for(1, block_speed(on, b)) == 2
    assert rt.pursuit_dice_for(2, block_speed(state(), b)) == 2


def test_rb_17_optional_i_tank_pursuit_losses_two_hits_per_step() -> None:
    """RB 10.5: Pursuit hits go to the Retreating units "as per 9.5"."""
    pos = battle_pos(itank("T1"), blk("M1", "allied", "Br Mech Inf 3", 1), blk("P1", "axis", "It Arm 4"))
    group = ("T1", "M1")
    good = ls.LossAllocation(HEX, (ls.Loss("T1", 2), ls.Loss("M1", 1)))
    assert rt.check_pursuit_losses(pos, group, 3, good, units=with_option) == []
    waste = ls.LossAllocation(HEX, (ls.Loss("T1", 3),))
    assert [p.rule for p in rt.check_pursuit_losses(pos, group, 3, waste, units=with_option)] == ["RB 9.5"]
    out = rt.apply_pursuit_losses(pos, group, 3, good, units=with_option)
    assert (cv(out.position, "T1"), cv(out.position, "M1"), out.wasted_halves) == (3, None, 0)
    auto = rt.default_pursuit_allocation(pos, group, 3, HEX, units=with_option)
    assert rt.check_pursuit_losses(pos, group, 3, auto, units=with_option) == []


def test_rb_17_optional_i_tank_secret_pursuit_losses_checked_from_identities() -> None:
    """The audit's check of secret Pursuit losses (T-10) from the old and new
    identities: an I-tank that lost one CV took two hits (CB-15)."""
    on, off = state("i-tanks"), state()
    old = {"L1": (ITANK, 4), "L2": ("7/7 Tk", 4)}
    honest = {"L1": (ITANK, 3), "L2": ("7/7 Tk", 4)}
    assert loss_problems(on, "allied", "2024", ("L1", "L2"), old, honest, (), 2) == []
    # Without the option the same identities say the I-tank took one hit of two: the other was
    # wasted although the I-tank could take it (RB 9.5).
    assert [p.rule for p in loss_problems(off, "allied", "2024", ("L1", "L2"), old, honest, (), 2)] == \
        ["RB 9.5"]
    # Eliminated at CV 1: one step, two hits.
    low = {"L1": (ITANK, 1), "L2": ("7/7 Tk", 4)}
    assert loss_problems(on, "allied", "2024", ("L1", "L2"), low, {"L2": ("7/7 Tk", 4)}, ("L1",), 2) == []
    # Three hits on two units of two hits per step: one step of either, the odd hit wasted.
    elite_step = {"L1": (ITANK, 4), "L2": ("7/7 Tk", 2)}
    assert loss_problems(on, "allied", "2024", ("L1", "L2"), old, elite_step, (), 3) == []


# ------------------------------------------------------------------ Replacements (CB-17)


def test_rb_16_54_optional_i_tank_replacements_cost_as_1_cv_steps() -> None:
    printed, optional = PRINTED.get(ITANK), OPTIONAL.get(ITANK)
    assert bu.replacement_cost(optional, 1) == bu.replacement_cost(printed, 1) == 3  # armor: 3 BP per CV
    assert bu.replacement_cost(optional, 2) == 6
    assert bu.replacement_cost(PRINTED.get("7/7 Tk"), 1) == 6  # a real elite step is 2 CV


# ------------------------------------------------------------------ invariant (CB-16)

KINDS = {"normal": "Br Arm 4", "elite": "Br Elite Arm 4", "itank": ITANK}


@st.composite
def armor_classes(draw):
    """An Allied armor class mixing normal, elite and optional-rule I-tanks at
    random CV levels, and random hits and half-hits scored on it."""
    blocks = []
    for i, kind in enumerate(draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=4))):
        name = KINDS[kind]
        unit = with_option(name)
        level = draw(st.sampled_from(unit.cv_levels))
        blocks.append(Block(token=f"A{i}", side="allied", hex=HEX, unit=name, cv=level, revealed=True))
    return blocks, draw(st.integers(0, 9)), draw(st.integers(0, 9))


@settings(max_examples=200, deadline=None)
@given(armor_classes())
def test_rb_17_optional_i_tanks_best_use_is_the_most_hits_any_placement_applies(case) -> None:
    blocks, hits, half_hits = case
    pos = battle_pos(*blocks, blk("X1", "axis", "It Arm 4"))
    steps = [((b.cv - with_option(b.unit).min_cv) // with_option(b.unit).cv_per_step + 1,
              with_option(b.unit).hits_per_step) for b in blocks]
    pairs = hits + half_hits // 2
    brute = max(sum(k * h for k, (_, h) in zip(ks, steps))
                for ks in itertools.product(*(range(s + 1) for s, _ in steps))
                if sum(k * h for k, (_, h) in zip(ks, steps)) <= pairs)
    assert ls.best_use(hits, half_hits, steps) == brute
    result = fr.FireResult(HEX, "axis", (), {"armor": ls.ClassHits(hits, half_hits)})
    alloc = ls.default_allocation(pos, result, units=with_option)
    assert ls.check_allocation(pos, result, alloc, units=with_option) == []
    out = ls.apply_allocation(pos, result, alloc, units=with_option)
    lost_hits = 0
    for b, (_, h) in zip(blocks, steps):
        u = with_option(b.unit)
        if out.position.has_block(b.token):
            after = out.position.block(b.token).cv
            assert after in u.cv_levels  # whole steps only (RB 2.3)
        else:
            after = u.min_cv - u.cv_per_step  # eliminated: one step below the lowest CV
        lost_hits += (b.cv - after) // u.cv_per_step * h
    assert lost_hits == brute
    assert 2 * lost_hits + out.wasted_halves == 2 * hits + half_hits
