"""Rules version 5, RB 9.2 fire (issue 25): units fire one at a time and the
firer sees each shot's result before the next unit fires, choosing its target
knowing it (step-by-step fire, the default); or a fire plan in one order,
later units with fallback targets (CB-19). Pure rules first, then through
the engine on the 19.0 Demo's battle in Sollum."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from pbem import session
from pbem.errors import IllegalAction
from rules.ritd import RULES as RITD
from rules.ritd import combat_round as cr
from rules.ritd import fire as fr
from rules.ritd import game as ritd
from rules.ritd import losses as ls
from rules.ritd.state import game_map
from tests.ritd.combat_support import HEX, battle_pos, blk, units
from tests.ritd.ritd_table import new_game
from tests.ritd.test_combat_properties import battles
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

REGROUP = ["supply check", "basic", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento", "end movement"]


def _order(side, *fires: tuple[str, str] | tuple[str, str, tuple[str, ...]]) -> fr.FirePlan:
    return fr.FirePlan(HEX, side, tuple(fr.UnitFire(f[0], f[1], f[2] if len(f) > 2 else ()) for f in fires))


# -- pure rules -------------------------------------------------------------------------------


def test_rb_9_2_step_by_step_the_next_unit_chooses_its_target_knowing_the_hits_so_far() -> None:
    """RB 9.2: "To fire a unit, the firing player indicates the unit firing and
    the Class ... being targeted, and rolls one die per firing unit CV";
    RB 9.3: "If all units of a required target class are eliminated, unfired
    units may fire at other target Classes." One order per unit: after the
    first unit's dice wipe out the armor, the second may target the infantry
    (which it could not while armor was present)."""
    pos = battle_pos(blk("X1", "axis", "Ger Arm 4"), blk("X2", "axis", "Ger Arm 4"),
                     blk("A1", "allied", "Br Arm 1", cv=1), blk("A2", "allied", "Br Inf 3"))
    rnd = cr.CombatRound(HEX, active="axis")
    first = _order("axis", ("X1", "armor"))
    assert fr.check_fire_plan(pos, rnd, first, units=units) == []
    assert fr.dice_needed(pos, rnd, first, units=units) == (6,) * 4
    # Armor may not target infantry while enemy armor is present (RB 9.3).
    assert [p.rule for p in fr.check_fire_plan(pos, rnd, _order("axis", ("X2", "infantry")), units=units)] \
        == ["RB 9.3"]
    done = fr.score(pos, rnd, first, [6, 1, 1, 1], units=units)
    assert done.wiped_out == ("armor",) and not fr.fire_complete(pos, rnd, done, units=units)
    assert fr.targets_left(pos, rnd, "axis", done, units=units) == frozenset({"infantry"})
    second = _order("axis", ("X2", "infantry"))
    assert fr.check_fire_plan(pos, rnd, second, prior=done, units=units) == []
    assert [p.rule for p in fr.check_fire_plan(pos, rnd, _order("axis", ("X2", "armor")), prior=done,
                                               units=units)] == ["RB 9.3"]
    end = fr.score(pos, rnd, second, [5, 5, 6, 1], prior=done, units=units)
    assert [(s.token, s.target, s.fire, s.hits) for s in end.shots] == [("X1", "armor", "SF", 1),
                                                                        ("X2", "infantry", "DF", 3)]
    assert end.hits == {"armor": ls.ClassHits(1), "infantry": ls.ClassHits(3)}
    assert end.wiped_out == ("armor", "infantry") and fr.fire_complete(pos, rnd, end, units=units)


def test_rb_9_2_artillery_must_fire_first_also_step_by_step() -> None:
    """RB 9.2: "each unit fires once in any desired order, except that
    artillery must fire first"."""
    pos = battle_pos(blk("X1", "axis", "Ger Art 4"), blk("X2", "axis", "Ger Inf 4"),
                     blk("A1", "allied", "Br Inf 3"))
    rnd = cr.CombatRound(HEX, active="axis")
    probs = fr.check_fire_plan(pos, rnd, _order("axis", ("X2", "infantry")), units=units)
    assert [p.rule for p in probs] == ["RB 9.2"] and "artillery must fire first" in probs[0].message
    done = fr.score(pos, rnd, _order("axis", ("X1", "infantry")), [1, 1, 1, 1], units=units)
    assert fr.check_fire_plan(pos, rnd, _order("axis", ("X2", "infantry")), prior=done, units=units) == []


def test_rb_9_0_each_unit_fires_once_over_all_the_orders_of_a_fire() -> None:
    """RB 9.0: "Each Combat phase involves one Combat Round in each Active
    Battle, in which each unit fires once"."""
    pos = battle_pos(blk("X1", "axis", "Ger Inf 4"), blk("X2", "axis", "Ger Inf 4"), blk("A1", "allied", "Br Inf 3"))
    rnd = cr.CombatRound(HEX, active="axis")
    done = fr.score(pos, rnd, _order("axis", ("X1", "infantry")), [1] * 4, units=units)
    probs = fr.check_fire_plan(pos, rnd, _order("axis", ("X1", "infantry")), prior=done, units=units)
    assert [p.rule for p in probs] == ["RB 9.0"] and "already fired" in probs[0].message
    assert [b.token for b in fr.yet_to_fire(pos, rnd, "axis", done)] == ["X2"]
    assert [p.rule for p in fr.check_fire_plan(pos, rnd, _order("axis"), units=units)] == ["RB 9.2"]


def test_cb_19_a_fallback_is_declared_only_where_it_can_be_used() -> None:
    """CB-19 (one valid form, PLAN "declared fallbacks ... recorded as
    unused"): the first unit of an order fires at a target legal now, so a
    fallback there could never be used; nor one naming a Class no longer in
    the battle."""
    pos = battle_pos(blk("X1", "axis", "Ger Inf 4"), blk("X2", "axis", "Ger Art 4"),
                     blk("A1", "allied", "Br Inf 3"), blk("A2", "allied", "Br Arm 4"))
    rnd = cr.CombatRound(HEX, active="axis")
    first = fr.check_fire_plan(pos, rnd, _order("axis", ("X2", "infantry", ("armor",))), units=units)
    assert [p.rule for p in first] == ["RB 9.3"] and "could never be used" in first[0].message
    absent = fr.check_fire_plan(pos, rnd, _order("axis", ("X2", "armor"), ("X1", "infantry", ("antitank",))),
                                units=units)
    assert [p.rule for p in absent] == ["RB 9.3"] and "antitank" in absent[0].message
    good = _order("axis", ("X2", "infantry"), ("X1", "infantry", ("armor",)))
    assert fr.check_fire_plan(pos, rnd, good, units=units) == []


def test_cb_19_unused_fallbacks_are_recorded_as_unused_and_used_ones_fire() -> None:
    """RB 9.3 with a plan: the first artillery wipes out the infantry; the
    second fires at its target, armor, its fallback infantry unused; the
    infantry unit fires at its fallback, armor (SF)."""
    pos = battle_pos(blk("X1", "axis", "Ger Art 4"), blk("X0", "axis", "Ger Art 4"), blk("X2", "axis", "Ger Inf 4"),
                     blk("A1", "allied", "Br Inf 3", cv=1), blk("A2", "allied", "Br Arm 4"))
    rnd = cr.CombatRound(HEX, active="axis")
    plan = _order("axis", ("X1", "infantry"), ("X0", "armor", ("infantry",)), ("X2", "infantry", ("armor",)))
    assert fr.check_fire_plan(pos, rnd, plan, units=units) == []
    result = fr.score(pos, rnd, plan, [6, 6, 1, 1] + [1, 1, 1, 1] + [6, 1, 1, 1], units=units)
    assert [(s.token, s.target, s.fire, s.hits, s.unused) for s in result.shots] == [
        ("X1", "infantry", "DF", 2, ()), ("X0", "armor", "SF", 0, ("infantry",)), ("X2", "armor", "SF", 1, ())]


@settings(max_examples=120, deadline=None)
@given(battles())
def test_rb_9_2_a_fire_plan_scores_as_its_units_fired_one_by_one(case) -> None:
    """The plan form changes who decides when (targets fixed before rolling),
    never the arithmetic: firing each unit of a plan in its own order at the
    target the plan gave it, with the same dice, scores the same fire."""
    pos, rnd, plan, dice = case
    whole = fr.score(pos, rnd, plan, dice, units=units)
    counts = fr.dice_counts(pos, rnd, plan, units=units)
    prior, i = None, 0
    for f, n, shot in zip(plan.fires, counts, whole.shots):
        if shot.target is None:  # no target left: the step-by-step fire is over already
            assert prior is not None and fr.fire_complete(pos, rnd, prior, units=units)
            break
        single = fr.FirePlan(HEX, plan.side, (fr.UnitFire(f.token, shot.target),))
        assert fr.check_fire_plan(pos, rnd, single, prior=prior, units=units) == []
        prior = fr.score(pos, rnd, single, dice[i:i + n], prior=prior, units=units)
        i += n
    assert prior is not None
    assert prior.hits == whole.hits and prior.wiped_out == whole.wiped_out
    assert [(s.token, s.target, s.hits, s.dice) for s in prior.shots] == \
        [(s.token, s.target, s.hits, s.dice) for s in whole.shots if s.target is not None]


# -- through the engine -------------------------------------------------------------------------

pytestmark = pytest.mark.usefixtures("registered_ritd")


@pytest.fixture
def battle(tmp_path, monkeypatch):
    """The Demo: the Axis regroups into Sollum, the Allies accept the battle,
    both reveal; every engine die is a 6."""
    monkeypatch.setattr("pbem.game.roll", lambda *args: (6,) * len(args[-1]))
    table = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    table.play("axis", *REGROUP)
    table.play("allied", "accept-battle Sollum", "reveal units")
    table.play("axis", "reveal units")
    table.play("axis", "battles Sollum")
    table.play("allied", "fire Sollum: 7/7 Tk at infantry")
    table.play("axis", "losses Sollum: Brescia 2, Trento 2")
    return table


def test_rb_9_2_step_by_step_fire_through_the_engine_one_exchange_per_unit(battle):
    """RB 9.2 as the rulebook plays it: Brescia fires alone; its dice are the
    Allied player's automatic answer; the Axis sees 2 hits on the 7/7 Tk (4 CV)
    and orders the next unit; Savona's 4 hits wipe the armor out; Trento, with
    no target left, does not fire and may still Pursue (RB 11 sidebar)."""
    axis = battle.axis.seat()
    assert axis.replay.pending().kind == "offensive-fire"
    tree = RITD.order_tree(axis.replay.state, "axis", axis.replay.ctx("axis"))
    assert [g.label for g in tree] == ["Fire one unit (step by step)", "Fire plan (one message, with fallbacks)"]
    assert all(g.example for g in tree) and "2 messages a unit" in tree[0].note and "One message" in tree[1].note
    before = len(axis.replay.history)
    battle.play("axis", "fire Sollum: Brescia at armor")
    axis = battle.axis.seat()
    # Two messages: the order, and the Allied pbem's automatic answer (entropy only: nothing
    # to decide) with Brescia's 2 dice; back to the Axis, the hits seen.
    order, answer = axis.replay.history[before:]
    assert order.author == "axis" and answer.author == "allied" and answer.actions == ()
    assert answer.rolls is not None and answer.rolls.values == (6, 6)
    state = axis.replay.state
    assert axis.replay.pending().kind == "offensive-fire" and axis.replay.pending().role == "axis"
    assert axis.replay.pending().prompt.endswith("Sollum (so far 1 unit fired, hits: 2 on armor)")
    assert state.turn.fire_result.hits == {"armor": ls.ClassHits(2)} and state.turn.fire_result.wiped_out == ()
    assert state.last_fire[-1].endswith("at armor (SF): 6 6 -> 2 hits")
    assert session.legal_orders(axis) == ["fire Sollum: Savona at armor", "fire Sollum: Trento at armor",
                                          "fire Sollum: Savona at armor, Trento at armor"]
    with pytest.raises(IllegalAction, match="already fired"):
        session.add_orders(axis, ["fire Sollum: Brescia at armor"])
    explained = RITD.explain(state, "axis", "fire", "now", axis.replay.ctx("axis"))
    assert any(line.startswith("Step by step") for line in explained)
    assert any(line.startswith("Fire plan") for line in explained)
    assert "Hits so far: 2 hits on armor" in explained
    assert any("To fire:" in line and "Savona" in line for line in explained)
    battle.play("axis", "fire Sollum: Savona at armor")
    battle.play("allied", "losses Sollum auto")
    for seat in (battle.axis.seat(), battle.allied.seat()):
        st = seat.replay.state
        assert st.position.battles == () and st.turn.step == "final-supply"
    said = [h.text for item in battle.axis.seat().replay.history for h in item.happenings]
    fire_said = [t for t in said if t.startswith("Offensive Fire")]
    assert fire_said == ["Offensive Fire by the Axis in Sollum: 2 hits on armor",
                         "Offensive Fire by the Axis in Sollum: 4 hits on armor "
                         "(so far in this fire: 6 hits on armor)"]


def test_rb_9_2_the_step_by_step_orders_are_listed_for_the_unit_that_may_fire_next(battle):
    axis = battle.axis.seat()
    legal = session.legal_orders(axis)
    assert legal[:3] == [f"fire Sollum: {u} at armor" for u in ("Brescia", "Savona", "Trento")]
    state = axis.replay.state
    for order in legal:
        action = ritd.parse_order(state, "axis", order, axis.replay.ctx("axis")).action
        assert ritd.check(state, action, axis.replay.ctx("axis")) == [], order


def test_rb_9_2_pbem_options_and_explain_fire_show_both_forms_through_the_cli(battle):
    """`pbem options` lists the step-by-step orders and the plan, each group
    with its note (the message cost); `pbem explain fire <battle>` says both
    forms and the fire under way there."""
    from click.testing import CliRunner

    from pbem.cli import cli

    game = str(battle.axis.gd.path)
    options = CliRunner().invoke(cli, ["options", "-g", game])
    assert options.exit_code == 0, options.output
    lines = options.output.splitlines()
    assert lines[0].startswith("Fire one unit (step by step)") and "2 messages a unit" in lines[0]
    assert "    fire Sollum: Brescia at armor" in lines
    plan = next(line for line in lines if line.startswith("Fire plan (one message, with fallbacks)"))
    assert "'else <class>'" in plan and "One message for the whole fire" in plan
    assert "    fire Sollum: Brescia at armor, Savona at armor, Trento at armor" in lines
    explain = CliRunner().invoke(cli, ["explain", "fire", "Sollum", "-g", game])
    assert explain.exit_code == 0, explain.output
    assert "Step by step (the rule, RB 9.2)" in explain.output and "Fire plan (one message)" in explain.output
    assert "Now: Offensive Fire in Sollum by you (axis)." in explain.output
    elsewhere = CliRunner().invoke(cli, ["explain", "fire", "Tobruk", "-g", game])
    assert elsewhere.exit_code == 0 and elsewhere.output.rstrip().endswith("No fire is under way in Tobruk now.")


def test_rb_10_41_probe_combat_step_by_step_the_rearguard_fires_one_unit_at_a_time(tmp_path, monkeypatch):
    """RB 10.41 with RB 9.2: in Probe Combat the Rearguard fires first, and
    step by step as in any Combat Round: Brescia, then Savona, each its own
    order and dice; then the Probing 7/7 Tk fires; the Rearguard (every die
    a miss) survives and Trento leaves (the demo position of test_game_retreat)."""
    from tests.ritd.test_game_retreat import standoff_table

    table = standoff_table(tmp_path, monkeypatch)
    table.play("allied", "supply check", "pass", "end movement", "supply check")
    table.play("axis", "supply check", "basic", "group Sollum -> Ft Capuzzo Trento", "end movement")
    table.play("allied", "probe Sollum")
    axis = table.axis.seat()
    assert axis.replay.pending().kind == "defensive-fire" and "Probe Combat" in axis.replay.pending().prompt
    table.play("axis", "fire Sollum: Brescia at armor")
    axis = table.axis.seat()
    turn = axis.replay.state.turn
    assert turn.probing and axis.replay.pending().kind == "defensive-fire"
    assert [s.token for s in turn.fire_result.shots] == list(turn.probe_fired)
    assert session.legal_orders(axis) == ["fire Sollum: Savona at armor"]
    table.play("axis", "fire Sollum: Savona at armor")
    # The last Rearguard shot's dice: the Allied answer is not automatic, it carries the Probe's fire.
    draft, _ = session.draft_replay(table.allied.seat())
    assert draft.pending().kind == "offensive-fire" and draft.pending().role == "allied"
    assert len(draft.state.turn.probe_fired) == 2
    table.play("allied", "fire Sollum: 7/7 Tk at infantry")
    draft, _ = session.draft_replay(table.axis.seat())  # the Axis rolls them with its next event
    state = draft.state
    assert not state.turn.probing and state.turn.step == "battles"
    assert len(state.position.blocks_in(game_map().resolve("Sollum"), "axis")) == 2
