"""The rulebook's Buildup examples (RB 16.3-16.53, 19.0 Month 2), one test
each, named after the example (STYLE 7). Digest ids: EX-16, EX-19 to EX-22,
EX-31 D-8."""

from __future__ import annotations

import pytest

from rules.ritd import buildup as bu
from rules.ritd import reinforcements as rf
from rules.ritd import supply_checks
from rules.ritd.position import Battle, Position, Side
from rules.ritd.scenarios import load_scenarios
from tests.ritd.movement_support import MAP, at, block, position, route, rules_of

SCENARIOS = load_scenarios()


def context(pos: Position) -> bu.BuildupContext:
    return bu.BuildupContext(MAP, bu.buildup_networks(MAP, pos), SCENARIOS.roster)


def spend(ctx: bu.BuildupContext, pos: Position, ledger: bu.Ledger, action: bu.SpendAction) -> bu.Spent:
    """Check then apply; fail loudly on any problem."""
    problems = bu.check_spend(ctx, pos, ledger, action)
    assert problems == [], [str(p) for p in problems]
    return bu.apply_spend(ctx, pos, ledger, action)


def road(a: str, b: str, kinds: tuple[str, ...] = ("highway", "track", "trail")) -> tuple[str, ...]:
    path = MAP.road_path(at(a), at(b), kinds)
    assert path is not None
    return path


# -- EX-19 BP Determination (RB 16.3) -------------------------------------------------


def test_rb_16_3_bp_determination_example_9_and_7_give_16_each_and_the_7_is_player_1() -> None:
    s = SCENARIOS.get("1941")
    result = bu.determine_bp(s, axis_dice=(4, 5), allied_dice=(3, 4))
    assert (result.bp, result.player1, result.player2) == (16, "allied", "axis")
    result = bu.determine_bp(s, axis_dice=(3, 4), allied_dice=(6, 3))
    assert (result.bp, result.player1) == (16, "axis")


def test_rb_16_3_bp_determination_tie_makes_the_allies_player_1() -> None:
    result = bu.determine_bp(SCENARIOS.get("1942"), axis_dice=(6, 1), allied_dice=(3, 4))
    assert (result.bp, result.player1) == (14, "allied")


def test_rb_16_3_and_18_1_one_die_each_in_1940() -> None:
    s = SCENARIOS.get("1940")
    assert bu.bp_dice_count(s) == 1 and bu.bp_dice_count(SCENARIOS.get("crusader")) == 2
    with pytest.raises(ValueError, match="16.3"):
        bu.determine_bp(s, axis_dice=(5, 1), allied_dice=(4,))
    with pytest.raises(ValueError, match="16.3"):
        bu.determine_bp(SCENARIOS.get("1941"), axis_dice=(5,), allied_dice=(4, 7))


def test_rb_18_7_gazala_pregame_buildup_30_bp_each_allies_first() -> None:
    s = SCENARIOS.get("gazala")
    assert bu.pregame_order(s) == ("allied", "axis")
    assert bu.pregame_bp(s) == 30
    assert bu.open_ledger("allied", bu.pregame_bp(s)).available == 30
    assert bu.pregame_order(SCENARIOS.get("1941")) is None
    with pytest.raises(ValueError, match="18.7"):
        bu.pregame_bp(SCENARIOS.get("1941"))


# -- EX-20 Early Arrival Example (RB 16.41 sidebar) --------------------------------


def test_rb_16_41_early_arrival_example_month_2_of_1941() -> None:
    s = SCENARIOS.get("1941")
    # None can have arrived early in the first month: there is no Buildup then.
    assert rf.early_arrival_candidates(SCENARIOS, s, "allied", 1) == ()
    arriving = rf.on_schedule(SCENARIOS, s, "allied", 2)
    assert len(arriving) == 4
    # The four Axis Month 3 Reinforcements are then each checked.
    candidates = rf.early_arrival_candidates(SCENARIOS, s, "axis", 2)
    assert len(candidates) == 4
    assert rf.early_arrival_candidates(SCENARIOS, s, "allied", 2) == ()  # no Allied Month 3 units
    order = [u.name for u in reversed(candidates)]
    assert rf.check_early_arrival_order(candidates, order) == []
    slots = ("a.s1", "a.s2", "a.s3", "a.s4")
    assert rf.early_arrivals(slots, (1, 3, 2, 6)) == ("a.s1", "a.s3")
    assert rf.early_arrivals(slots, (3, 4, 5, 6)) == ()
    # Next Buildup: only the units that did not come early arrive.
    early = {order[0], order[2]}
    later = rf.on_schedule(SCENARIOS, s, "axis", 3, arrived_early=early)
    assert sorted(u.name for u in later) == sorted(set(order) - early)


# -- EX-16 Port Capacity Example (RB 16.53 sidebar) ---------------------------------


def _tobruk_position(side: Side) -> Position:
    enemy: Side = "axis" if side == "allied" else "allied"
    own_far, enemy_far = ("Alexandria", "El Agheila") if side == "allied" else ("El Agheila", "Alexandria")
    return position(
        *(block(f"T{i}", side, "Tobruk") for i in range(3)),
        *(block(f"B{i}", side, own_far) for i in range(3)),
        block("E1", enemy, enemy_far),
        fortresses={"Tobruk": side},
    )


def test_rb_16_53_port_capacity_example_allies_two_in_three_out_for_5_bp() -> None:
    pos = _tobruk_position("allied")
    ctx = context(pos)
    ledger = bu.open_ledger("allied", 12)
    alexandria, tobruk = at("Alexandria"), at("Tobruk")
    for t in ("T0", "T1", "T2"):
        done = spend(ctx, pos, ledger, bu.SeaRedeploy(t, alexandria))
        pos, ledger = done.pos, done.ledger
    for t in ("B0", "B1"):
        done = spend(ctx, pos, ledger, bu.SeaRedeploy(t, tobruk))
        pos, ledger = done.pos, done.ledger
    assert ledger.spent == 5 and ledger.port_use(tobruk) == 5
    problems = bu.check_spend(ctx, pos, ledger, bu.SeaRedeploy("B2", tobruk))
    assert rules_of(problems) == ["RB 16.53"] and "Port Capacity (5)" in problems[0].message


def test_rb_16_53_port_capacity_example_axis_one_in_one_out_for_2_bp() -> None:
    pos = _tobruk_position("axis")
    ctx = context(pos)
    ledger = bu.open_ledger("axis", 12)
    agheila, tobruk = at("El Agheila"), at("Tobruk")
    done = spend(ctx, pos, ledger, bu.SeaRedeploy("T0", agheila))
    done = spend(ctx, done.pos, done.ledger, bu.SeaRedeploy("B0", tobruk))
    assert done.ledger.spent == 2
    out = bu.check_spend(ctx, done.pos, done.ledger, bu.SeaRedeploy("T1", agheila))
    into = bu.check_spend(ctx, done.pos, done.ledger, bu.SeaRedeploy("B1", tobruk))
    assert rules_of(out) == rules_of(into) == ["RB 16.53"]
    assert "Port Capacity (2)" in out[0].message


# -- EX-21 Redeployment rate (RB 16.51) ------------------------------------------


def _coast_position() -> Position:
    return position(
        block("A1", "axis", "El Agheila"), block("A2", "axis", "Tobruk"),
        block("L1", "allied", "Bardia"), block("L2", "allied", "Alexandria"),
        fortresses={"Tobruk": "axis", "Bardia": "allied", "Benghazi": "axis"},
    )


def test_rb_16_51_redeployment_rate_six_hexes_along_the_coast_highway_for_1_bp() -> None:
    pos = _coast_position()
    ctx = context(pos)
    highway = road("El Agheila", "Tobruk", ("highway",))
    six, seven = highway[:7], highway[:8]
    assert MAP.worst_road(seven) == "highway"
    assert bu.redeployment_cost(MAP, six) == 1
    assert bu.redeployment_cost(MAP, seven) == 2
    ledger = bu.open_ledger("axis", 1)
    done = spend(ctx, pos, ledger, bu.Redeploy("A1", six))
    assert (done.pos.block("A1").hex, done.ledger.available) == (six[-1], 0)
    problems = bu.check_spend(ctx, pos, ledger, bu.Redeploy("A1", seven))
    assert rules_of(problems) == ["RB 16.5"] and "2 Redeployments" in problems[0].message


def test_rb_16_51_redeployment_rate_track_four_hexes_off_road_two_hexes() -> None:
    track = road("Agedabia", "Mechili", ("track",))
    assert MAP.worst_road(track) == "track" and len(track) == 7
    assert [len(leg) - 1 for leg in bu.redeployment_legs(MAP, track)] == [4, 2]
    off_road = route("Msus", "Msus E1", "Tengeder W1", "Tengeder")
    assert MAP.worst_road(off_road[:2]) is None
    assert [len(leg) - 1 for leg in bu.redeployment_legs(MAP, off_road)] == [2, 1]
    # Starting on a track and leaving it: no Road Bonus for that leg (RB 6.2).
    mixed = (*road("Agedabia", "Msus", ("track",)), at("Msus E1"))
    assert [len(leg) - 1 for leg in bu.redeployment_legs(MAP, mixed)] == [3, 1]


# -- EX-22 Redeployment Example (RB 16.51 sidebar) --------------------------------


def test_rb_16_51_redeployment_example_out_of_battle_to_tobruk_by_sea_to_base_rebuilt_and_back() -> None:
    pos = position(
        block("X1", "axis", "Sollum", unit="Pavia", cv=2), block("X2", "axis", "Sollum", unit="Brescia", cv=4),
        block("X3", "axis", "Ft Capuzzo", unit="Bologna", cv=4),
        block("L1", "allied", "Sollum", unit="7 SG", cv=3), block("L2", "allied", "Buq Buq", unit="11H", cv=2),
        fortresses={"Tobruk": "axis", "Bardia": "axis", "Benghazi": "axis"},
    )
    pos = pos.with_battles([Battle(at("Sollum"), "axis", {at("Ft Capuzzo"): "axis"})])
    ctx = context(pos)
    ledger = bu.open_ledger("axis", 12)
    tobruk, agheila = at("Tobruk"), at("El Agheila")
    to_tobruk = road("Sollum", "Tobruk")
    assert bu.redeployment_cost(MAP, to_tobruk) == 1
    done = spend(ctx, pos, ledger, bu.Redeploy("X1", to_tobruk))
    done = spend(ctx, done.pos, done.ledger, bu.SeaRedeploy("X1", agheila))
    done = spend(ctx, done.pos, done.ledger, bu.Replace("X1", 2))
    assert done.pos.block("X1").cv == 4
    done = spend(ctx, done.pos, done.ledger, bu.SeaRedeploy("X1", tobruk))
    assert done.ledger.port_use(tobruk) == 2  # Tobruk's Axis capacity, 1 out + 1 in
    back = road("Tobruk", "Ft Capuzzo")
    done = spend(ctx, done.pos, done.ledger, bu.Redeploy("X1", back))
    assert done.pos.block("X1").hex == at("Ft Capuzzo")
    assert done.ledger.spent == 1 + 1 + 2 + 1 + 1
    # ... but it could not enter a Battle Hex.
    into_battle = bu.check_spend(ctx, done.pos, done.ledger, bu.Redeploy("X1", route("Ft Capuzzo", "Sollum")))
    assert set(rules_of(into_battle)) == {"RB 16.51"}
    assert any("Battle Hex" in p.message for p in into_battle)
    # X2 is now alone in the battle and must stay (RB 16.51).
    alone = bu.check_spend(ctx, done.pos, done.ledger, bu.Redeploy("X2", route("Sollum", "Ft Capuzzo")))
    assert rules_of(alone) == ["RB 16.51"] and "stays behind" in alone[0].message


# -- EX-31 D-8: the 19.0 Demo, Month 2 Buildup ---------------------------------------


def demo_month_1_end() -> Position:
    """The 19.0 Demo after Month 1 (digest EX-31 D-1..D-7): Axis at Buq Buq
    (the infantry that took 2 hits), Sidi Barrani, Sidi Omar, Sofafi and
    Bir Habata; Allies at Sidi Barrani E1 (the mech infantry down 1 CV) and,
    Disrupted, at Mersa Matruh. Unit identities as in scenarios.toml."""
    return position(
        block("X1", "axis", "Buq Buq", unit="Brescia", cv=2), block("X2", "axis", "Buq Buq", unit="Pavia", cv=4),
        block("X3", "axis", "Sidi Barrani", unit="Bologna", cv=4),
        block("X4", "axis", "Sidi Barrani", unit="Savona", cv=4),
        block("X5", "axis", "Sidi Omar", unit="Sabratha", cv=4), block("X6", "axis", "Sofafi", unit="Trento", cv=4),
        block("X7", "axis", "Sofafi", unit="Trieste", cv=4), block("X8", "axis", "Bir Habata", unit="GGFF", cv=3),
        block("L1", "allied", "Sidi Barrani E1", unit="7/4 Armd", cv=6),
        block("L2", "allied", "Sidi Barrani E1", unit="7 SG", cv=2),
        block("L3", "allied", "Sidi Barrani E1", unit="11H", cv=2),
        block("L4", "allied", "Mersa Matruh", unit="7/7 Tk", cv=4, disrupted=True),
        fortresses={"Tobruk": "axis", "Bardia": "axis", "Benghazi": "axis"},
    )


def test_rb_19_demo_month_2_buildup() -> None:
    s = SCENARIOS.get("1940")
    # 16.2: the Disrupted Allied unit in Mersa Matruh is Supplied, so it recovers.
    pos, report = supply_checks.buildup_supply_check(MAP, demo_month_1_end())
    assert report.ok and report.eliminated == () and not pos.block("L4").disrupted
    ctx = context(pos)
    # 16.3: one die each, Allied 4 and Axis 5: 9 BP each, the Allies are Player 1.
    bp = bu.determine_bp(s, axis_dice=(5,), allied_dice=(4,))
    assert (bp.bp, bp.player1) == (9, "allied")
    assert rf.early_arrival_candidates(SCENARIOS, s, "allied", 2) == ()  # no Allied Month 3 units
    # Allied Buildup: two Reinforcements arrive in Base.
    new = rf.on_schedule(SCENARIOS, s, "allied", 2)
    assert len(new) == 2
    arrival = rf.arrive(MAP, pos, "allied", [block(f"R{i}", "allied", "Alexandria", unit=u.name, cv=u.max_cv)
                                             for i, u in enumerate(new)])
    assert arrival.waiting == () and arrival.placed == ("R0", "R1")
    pos, ledger = arrival.pos, bu.open_ledger("allied", bp.bp)
    front = road("Alexandria", "Mersa Matruh")
    for token in ("R0", "R1"):
        done = spend(ctx, pos, ledger, bu.Redeploy(token, front))
        pos, ledger = done.pos, done.ledger
    assert ledger.spent == 2
    done = spend(ctx, pos, ledger, bu.Redeploy("L2", road("Sidi Barrani E1", "Alexandria")))
    done = spend(ctx, done.pos, done.ledger, bu.Replace("L2", 1))
    assert done.ledger.spent == 2 + 1 + 2 and done.pos.block("L2").cv == 3
    done = spend(ctx, done.pos, done.ledger, bu.Redeploy("L2", front))
    assert done.ledger.spent == 6
    assert bu.close_ledger(done.ledger) == bu.Closing(saved=3, lost=0)
    allied_summary = bu.divulge(done.ledger)
    assert (allied_summary.redeployments, allied_summary.redeployment_bp) == (4, 4)
    assert (allied_summary.steps_rebuilt, allied_summary.replacement_bp) == (1, 2)
    pos = done.pos
    # Axis Buildup.
    ledger = bu.open_ledger("axis", bp.bp)
    bardia, agheila, tobruk = at("Bardia"), at("El Agheila"), at("Tobruk")
    done = spend(ctx, pos, ledger, bu.Redeploy("X1", road("Buq Buq", "Bardia")))
    done = spend(ctx, done.pos, done.ledger, bu.SeaRedeploy("X1", agheila))
    done = spend(ctx, done.pos, done.ledger, bu.Replace("X1", 2))
    assert done.pos.block("X1").cv == 4 and done.ledger.spent == 1 + 1 + 2
    # Sea Redeployment back to Bardia is not possible: its Axis capacity (1) was used.
    back = bu.check_spend(ctx, done.pos, done.ledger, bu.SeaRedeploy("X1", bardia))
    assert rules_of(back) == ["RB 16.53"] and "Bardia's axis Port Capacity (1)" in back[0].message
    done = spend(ctx, done.pos, done.ledger, bu.SeaRedeploy("X1", tobruk))
    # Along the Supply Lines: the coast highway to Sidi Barrani, then Sofafi.
    to_sofafi = (*road("Tobruk", "Sidi Barrani", ("highway",)), at("Sofafi"))
    assert bu.redeployment_cost(MAP, to_sofafi) == 2
    done = spend(ctx, done.pos, done.ledger, bu.Redeploy("X1", to_sofafi))
    assert done.pos.block("X1").hex == at("Sofafi")
    assert done.ledger.spent == 7
    assert bu.close_ledger(done.ledger) == bu.Closing(saved=2, lost=0)
