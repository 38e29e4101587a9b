"""Invariants of fire and losses (RB 9.2-9.52), over random battles."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.ritd import combat_round as cr
from rules.ritd import fire as fr
from rules.ritd import losses as ls
from tests.ritd.combat_support import HEX, UNIT_NAMES, battle_pos, blk, units


@st.composite
def battles(draw):
    def side_blocks(side, prefix):
        names = draw(st.lists(st.sampled_from(UNIT_NAMES), min_size=1, max_size=4))
        out = []
        for i, n in enumerate(names):
            u = units(n)
            level = draw(st.sampled_from(u.cv_levels))
            out.append(blk(f"{prefix}{i}", side, n, cv=level))
        return out
    pos = battle_pos(*side_blocks("allied", "A"), *side_blocks("axis", "X"))
    rnd = cr.CombatRound(HEX, active=draw(st.sampled_from(["axis", "allied"])), assault=draw(st.booleans()),
                         fortress=draw(st.booleans()), minefield=draw(st.booleans()))
    side = draw(st.sampled_from(["axis", "allied"]))
    present = fr.present_classes(pos, HEX, "allied" if side == "axis" else "axis", units)
    shooters = sorted(cr.firing_units(pos, HEX, side), key=lambda b: units(b.unit).arms_class != "artillery")
    fires = []
    for i, b in enumerate(shooters):
        legal = fr.legal_targets(units(b.unit).arms_class, present)
        target = draw(st.sampled_from(legal))
        # CB-19: fallbacks only for a later unit of the order, and only Classes present in the battle.
        others = [c for c in ("armor", "infantry", "antitank", "artillery") if c != target and c in present] if i else []
        fires.append(fr.UnitFire(b.token, target, tuple(draw(st.lists(st.sampled_from(others), unique=True)))
                                 if others else ()))
    plan = fr.FirePlan(HEX, side, tuple(fires))
    n = len(fr.dice_needed(pos, rnd, plan, units=units))
    dice = tuple(draw(st.lists(st.integers(1, 6), min_size=n, max_size=n)))
    return pos, rnd, plan, dice


@settings(max_examples=150, deadline=None)
@given(battles())
def test_rb_9_2_random_plans_are_legal_and_scoring_is_deterministic(case) -> None:
    pos, rnd, plan, dice = case
    assert fr.check_fire_plan(pos, rnd, plan, units=units) == []
    assert fr.score(pos, rnd, plan, dice, units=units) == fr.score(pos, rnd, plan, dice, units=units)


def _halves_lost(before, after) -> int:
    lost = 0
    for b in before.blocks:
        if after.has_block(b.token):
            lost += b.cv - after.block(b.token).cv
        else:
            lost += b.cv - units(b.unit).min_cv + units(b.unit).cv_per_step
    return cr.HALVES_PER_HIT * lost


@settings(max_examples=150, deadline=None)
@given(battles(), st.data())
def test_rb_9_5_applied_hits_never_exceed_scored_and_cv_stays_on_the_label(case, data) -> None:
    pos, rnd, plan, dice = case
    result = fr.score(pos, rnd, plan, dice, units=units)
    scored = sum(h.halves for h in result.hits.values())
    default = ls.default_allocation(pos, result, units=units)
    assert ls.check_allocation(pos, result, default, units=units) == []
    owner = "allied" if plan.side == "axis" else "axis"
    targets = [b.token for b in cr.firing_units(pos, HEX, owner)]
    random_alloc = ls.LossAllocation(HEX, tuple(
        ls.Loss(t, data.draw(st.integers(0, 4)), data.draw(st.integers(0, 4))) for t in targets))
    for alloc in (default, random_alloc):
        if ls.check_allocation(pos, result, alloc, units=units):
            continue
        out = ls.apply_allocation(pos, result, alloc, units=units)
        assert _halves_lost(pos, out.position) + out.wasted_halves == scored
        assert _halves_lost(pos, out.position) <= scored
        for b in out.position.blocks:
            assert b.cv in units(b.unit).cv_levels
        assert (out.position.battle(HEX) is None) == out.battle_over
