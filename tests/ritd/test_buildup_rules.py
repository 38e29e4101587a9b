"""Buildup rules one by one (RB 16.0-16.55, 18.3-18.8), with the decisions
of decisions/buildup.md (BU-nn)."""

from __future__ import annotations

import pytest

from rules.ritd import buildup as bu
from rules.ritd import fortresses as fo
from rules.ritd import reinforcements as rf
from rules.ritd import supply_checks
from rules.ritd.position import Battle, Position
from rules.ritd.scenarios import load_scenarios
from tests.ritd.movement_support import MAP, at, block, position, route, rules_of

SCENARIOS = load_scenarios()
ROSTER = SCENARIOS.roster


def prepared(pos: Position) -> tuple[Position, bu.BuildupContext]:
    """The Buildup Supply Check, then the Networks fixed for the Buildup."""
    pos, report = supply_checks.buildup_supply_check(MAP, pos)
    assert report.ok
    return pos, bu.BuildupContext(MAP, bu.buildup_networks(MAP, pos), ROSTER)


def messages(problems: list) -> str:
    return " | ".join(p.message for p in problems)


def test_rb_16_0_buildup_sequence_order() -> None:
    ids = [s.id for s in bu.BUILDUP_SEQUENCE]
    assert ids[:3] == ["advance_month", "supply_check", "bp_determination"]
    assert ids[3:] == [f"{p}_{step}" for p in ("player1", "player2")
                       for step in ("reinforcements", "early_arrival", "spending", "resupply")]
    assert [s.actor for s in bu.BUILDUP_SEQUENCE if s.id.endswith("spending")] == ["player1", "player2"]
    assert [s.actor for s in bu.PREGAME_SEQUENCE] == ["player1", "player2"]


# -- RB 16.54 Replacements ------------------------------------------------------


@pytest.mark.parametrize(("unit", "cost"), [
    ("11H", 3),          # recon: "Armor & Recon" 3 per CV
    ("Ariete", 3),       # armor
    ("7 SG", 2),         # mech infantry
    ("Trento", 2),       # motorized infantry
    ("Brescia", 1),      # leg infantry
    ("21Pz/5", 6),       # elite armor: one 2-CV step costs double
    ("21Pz/8MG", 4),     # elite motorized infantry
    ("21Pz/605", 6),     # elite anti-tank
    ("21Pz/155", 6),     # elite artillery
])
def test_rb_16_54_replacement_costs_per_step_incl_elite(unit: str, cost: int) -> None:
    u = ROSTER.get(unit)
    assert bu.replacement_cost(u, 1) == cost
    assert bu.replacement_cost(u, 2) == 2 * cost


def test_rb_16_54_replacements_in_base_only_up_to_full_strength_and_paid() -> None:
    pos, ctx = prepared(position(
        block("P", "axis", "El Agheila", unit="21Pz/5", cv=2), block("Q", "axis", "Mersa Brega", unit="Brescia", cv=1),
        block("L", "allied", "Alexandria", unit="7 SG", cv=3)))
    ledger = bu.open_ledger("axis", 10)
    elite = bu.apply_spend(ctx, pos, ledger, bu.Replace("P", 1))
    assert (elite.pos.block("P").cv, elite.ledger.available) == (4, 4)
    assert rules_of(bu.check_spend(ctx, pos, ledger, bu.Replace("Q", 1))) == ["RB 16.54"]
    over = bu.check_spend(ctx, pos, ledger, bu.Replace("P", 3))
    assert "above its full strength 6" in messages(over)
    poor = bu.check_spend(ctx, pos, bu.open_ledger("axis", 11), bu.Replace("P", 2))
    assert rules_of(poor) == ["RB 16.5"]
    assert bu.check_spend(ctx, pos, bu.open_ledger("axis", 12), bu.Replace("P", 2)) == []
    assert rules_of(bu.check_spend(ctx, pos, ledger, bu.Replace("L", 1))) == ["RB 16.54"]  # not ours


# -- RB 16.55 Minefields ---------------------------------------------------------


def _mine_position() -> Position:
    pos = position(
        block("A", "axis", "Tobruk"), block("B", "axis", "Gazala"), block("C", "axis", "Acroma"),
        block("D", "axis", "Bardia"), block("L", "allied", "Bardia"), block("M", "allied", "Sollum"),
        fortresses={"Tobruk": "axis", "Bardia": "allied"})
    return pos.with_battles([Battle(at("Bardia"), "axis", {})])


def _site(pos: Position, ctx: bu.BuildupContext, hex_: str, dismantle: tuple[str, ...] = (),
          minefields: frozenset[str] = frozenset()) -> list:
    """The site rule the game checks every Minefield set against (RB 16.55,
    14.0; rules.ritd.mines.check_set): the axis builds in ``hex_``."""
    engaged = {b.hex for b in pos.blocks if b.side == "allied"}
    return bu.check_minefield_site(MAP, "axis", ctx.networks["axis"], engaged, hex_, dismantle, minefields)


def test_rb_16_55_minefield_costs_15_bp_in_an_unengaged_hex_of_the_friendly_network() -> None:
    pos, ctx = prepared(_mine_position())
    gazala = at("Gazala")
    assert _site(pos, ctx, gazala) == []
    ledger = bu.add_entry(bu.open_ledger("axis", 16), bu.minefield_entry(free=False))
    assert ledger.available == 1
    assert "already has" in messages(_site(pos, ctx, gazala, minefields=frozenset({gazala})))
    assert "engaged" in messages(_site(pos, ctx, at("Bardia")))
    assert "outside the axis Supply Network" in messages(_site(pos, ctx, at("Alexandria")))
    # RB 16.5 sidebar: only the BPs and the count are divulged, never the hex.
    summary = bu.divulge(ledger)
    assert (summary.minefield_bp, summary.minefields_built) == (15, 1)
    assert gazala not in repr(ledger)


def test_rb_16_55_dismantle_two_minefields_to_build_one_free() -> None:
    pos, ctx = prepared(_mine_position())
    mines = frozenset({at("Gazala"), at("Acroma")})
    assert _site(pos, ctx, at("Tobruk"), (at("Gazala"), at("Acroma")), mines) == []
    assert bu.add_entry(bu.open_ledger("axis", 0), bu.minefield_entry(free=True)).spent == 0
    assert "exactly two" in messages(_site(pos, ctx, at("Tobruk"), (at("Gazala"),), mines))
    missing = _site(pos, ctx, at("Tobruk"), (at("Gazala"), at("Derna")), mines)
    assert "no axis Minefield at Derna" in messages(missing)
    far = frozenset({at("Gazala"), at("Alexandria")})
    outside = _site(pos, ctx, at("Tobruk"), tuple(sorted(far)), far)
    assert "outside the friendly Supply Network and cannot be dismantled" in messages(outside)


def test_rb_16_5_saving_at_most_20_bp_the_rest_is_lost() -> None:
    assert bu.close_ledger(bu.open_ledger("axis", 12, saved_before=13)) == bu.Closing(saved=20, lost=5)
    assert bu.close_ledger(bu.open_ledger("axis", 7)) == bu.Closing(saved=7, lost=0)
    with pytest.raises(ValueError, match="16.5"):
        bu.open_ledger("axis", 5, saved_before=21)
    assert bu.open_ledger("allied", 9, saved_before=20).total == 29


def test_rb_16_5_extra_supply_cards_10_bp_each() -> None:
    ledger = bu.open_ledger("allied", 25)
    assert bu.check_buy_supply(ledger, bu.BuySupply(3)) != []
    assert bu.check_buy_supply(ledger, bu.BuySupply(0)) != []
    ledger = bu.apply_buy_supply(ledger, bu.BuySupply(2))
    assert (ledger.extra_cards, ledger.available) == (2, 5)
    assert bu.divulge(ledger).extra_supply_bp == 20


# -- RB 16.51 Redeployment limits ---------------------------------------------------


def test_rb_11_1_disrupted_units_cannot_redeploy_or_refit() -> None:
    pos = position(block("A", "axis", "Sollum", disrupted=True), block("B", "axis", "Sollum"),
                   block("C", "axis", "Sidi Omar"), block("L", "allied", "Sollum"),
                   fortresses={"Bardia": "axis"})
    pos = pos.with_battles([Battle(at("Sollum"), "allied", {at("Buq Buq"): "allied"})])
    pos, ctx = prepared(pos)
    assert pos.block("A").disrupted  # engaged: it does not recover (RB 16.2)
    ledger = bu.open_ledger("axis", 5)
    path = route("Sollum", "Ft Capuzzo")
    assert "RB 11.1" in rules_of(bu.check_spend(ctx, pos, ledger, bu.Redeploy("A", path)))
    refit = bu.check_spend(ctx, pos, ledger, bu.ReturnForRefit("A", path))
    assert "RB 11.1" in rules_of(refit)


def test_rb_16_51_never_into_the_enemy_network_where_networks_overlap() -> None:
    """RB 16.51 "(and may not enter the enemy Supply Network where Supply
    Networks overlap)"; RB 12.6 "It is entirely possible for a hex to be in
    the Supply Networks of both players simultaneously". The Axis unit at
    Acroma SE1 traces to the highway at Acroma and west; the Allied unit at
    Bir Hacheim traces along the track through Sidi Mufta to Acroma and east:
    Acroma is on a line of each (BU-03)."""
    pos, ctx = prepared(position(block("A", "axis", "Acroma SE1"), block("L", "allied", "Bir Hacheim"),
                                 fortresses={"Tobruk": "axis", "Bardia": "axis"}))
    assert ctx.networks["axis"] & ctx.networks["allied"] == {at("Acroma")}
    problems = bu.check_spend(ctx, pos, bu.open_ledger("axis", 5), bu.Redeploy("A", route("Acroma SE1", "Acroma")))
    assert "enemy Supply Network where the Networks overlap" in messages(problems)
    allied = bu.check_spend(ctx, pos, bu.open_ledger("allied", 5),
                            bu.Redeploy("L", route("Bir Hacheim", "Sidi Mufta", "Acroma")))
    assert "enemy Supply Network where the Networks overlap" in messages(allied)


# -- RB 16.53 Sea Redeployment, besieged ports ------------------------------------


def test_rb_16_53_besieged_port_costs_the_allies_4_bp_and_is_prohibited_for_the_axis() -> None:
    pos, ctx = prepared(position(
        block("T", "allied", "Tobruk"), block("U", "allied", "Tobruk"), block("X", "axis", "Acroma"),
        fortresses={"Tobruk": "allied", "Bardia": "allied"}))
    assert fo.is_besieged(MAP, pos, at("Tobruk"), "allied")
    assert not fo.is_besieged(MAP, pos, at("Alexandria"), "allied")  # BU-07
    ledger = bu.open_ledger("allied", 4)
    done = bu.apply_spend(ctx, pos, ledger, bu.SeaRedeploy("T", at("Alexandria")))
    assert bu.check_spend(ctx, pos, ledger, bu.SeaRedeploy("T", at("Alexandria"))) == []
    assert done.ledger.spent == 4
    assert rules_of(bu.check_spend(ctx, done.pos, done.ledger, bu.SeaRedeploy("U", at("Alexandria")))) == ["RB 16.5"]

    pos, ctx = prepared(position(
        block("T", "axis", "Tobruk"), block("U", "axis", "Tobruk"), block("L", "allied", "Tobruk E1"),
        fortresses={"Tobruk": "axis", "Bardia": "allied"}))
    problems = bu.check_spend(ctx, pos, bu.open_ledger("axis", 9), bu.SeaRedeploy("T", at("El Agheila")))
    assert "prohibited for the Axis" in messages(problems)


def test_rb_16_53_never_between_two_besieged_ports() -> None:
    pos = position(block("T", "allied", "Tobruk"), block("B", "allied", "Bardia"),
                   block("X", "axis", "Acroma"), block("Y", "axis", "Ft Capuzzo"),
                   fortresses={"Tobruk": "allied", "Bardia": "allied"})
    ctx = bu.BuildupContext(MAP, bu.buildup_networks(MAP, pos), ROSTER)
    assert bu.sea_cost(MAP, pos, "allied", at("Tobruk"), at("Bardia")) is None
    problems = bu.check_spend(ctx, pos, bu.open_ledger("allied", 9), bu.SeaRedeploy("T", at("Bardia")))
    assert "between two besieged Ports" in messages(problems)


def test_rb_16_53_ports_must_be_controlled_ports() -> None:
    pos, ctx = prepared(position(block("A", "axis", "Tobruk"), block("B", "axis", "Gazala"),
                                 block("L", "allied", "Alexandria"),
                                 fortresses={"Tobruk": "axis", "Bardia": "allied", "Benghazi": "axis"}))
    ledger = bu.open_ledger("axis", 9)
    assert "not a Port" in messages(bu.check_spend(ctx, pos, ledger, bu.SeaRedeploy("B", at("Tobruk"))))
    assert "not controlled by the axis" in messages(bu.check_spend(ctx, pos, ledger, bu.SeaRedeploy("A", at("Bardia"))))
    assert "not controlled" in messages(bu.check_spend(ctx, pos, ledger, bu.SeaRedeploy("A", at("Alexandria"))))
    assert bu.check_spend(ctx, pos, ledger, bu.SeaRedeploy("A", at("Benghazi"))) == []


# -- RB 16.52 Return for Refit, RB 16.4 engaged Base --------------------------------


def test_rb_16_52_return_for_refit_is_free_overland_to_base_and_back_next_buildup() -> None:
    pos, ctx = prepared(position(block("A", "axis", "Agedabia", unit="Ariete", cv=2),
                                 block("L", "allied", "Alexandria"), fortresses={"Benghazi": "axis"}))
    ledger = bu.open_ledger("axis", 0)
    path = MAP.road_path(at("Agedabia"), at("El Agheila"))
    assert path is not None
    assert bu.check_spend(ctx, pos, ledger, bu.ReturnForRefit("A", path)) == []
    short = bu.check_spend(ctx, pos, ledger, bu.ReturnForRefit("A", path[:-1]))
    assert "ending in the Base" in messages(short)
    done = bu.apply_spend(ctx, pos, ledger, bu.ReturnForRefit("A", path))
    assert not done.pos.has_block("A") and done.ledger.spent == 0
    assert [b.token for b in done.ledger.refit] == ["A"] and done.ledger.refit[0].cv == 2
    # Unavailable for Replacements until the next Buildup.
    assert "no such block" in messages(bu.check_spend(ctx, done.pos, bu.open_ledger("axis", 9), bu.Replace("A", 1)))
    back = rf.arrive(MAP, done.pos, "axis", done.ledger.refit)
    assert back.placed == ("A",) and back.pos.block("A").hex == at("El Agheila")


def test_rb_16_4_reinforcements_to_an_engaged_base_wait_off_board() -> None:
    pos = position(block("A", "axis", "El Agheila"), block("L", "allied", "El Agheila"))
    pos = pos.with_battles([Battle(at("El Agheila"), "allied", {})])
    assert rf.is_base_engaged(MAP, pos, "axis")
    arrival = rf.arrive(MAP, pos, "axis", [block("R1", "axis", "El Agheila"), block("R2", "axis", "El Agheila")])
    assert arrival.pos == pos and arrival.placed == ()
    assert [b.token for b in arrival.waiting] == ["R1", "R2"]


# -- RB 16.41 Early Arrival limits -----------------------------------------------


def test_rb_16_41_no_early_arrival_in_the_first_or_last_month() -> None:
    s = SCENARIOS.get("1941")
    assert rf.early_arrival_candidates(SCENARIOS, s, "axis", s.start_month) == ()
    assert rf.early_arrival_candidates(SCENARIOS, s, "allied", s.end_month) == ()
    assert len(rf.early_arrival_candidates(SCENARIOS, s, "allied", s.end_month - 1)) > 0  # Month 10 units


def test_rb_16_41_early_arrival_order_and_dice_are_checked() -> None:
    s = SCENARIOS.get("1941")
    candidates = rf.early_arrival_candidates(SCENARIOS, s, "axis", 2)
    names = [u.name for u in candidates]
    assert rules_of(rf.check_early_arrival_order(candidates, names[:-1])) == ["RB 16.41"]
    assert rules_of(rf.check_early_arrival_order(candidates, [*names[:-1], names[0]])) == ["RB 16.41"]
    with pytest.raises(ValueError, match="16.41"):
        rf.early_arrivals(("s1", "s2"), (1,))
    with pytest.raises(ValueError, match="16.41"):
        rf.early_arrivals(("s1",), (7,))


# -- RB 18.3, 18.6, 18.8 Malta Group --------------------------------------------


def test_rb_18_6_malta_group_once_from_its_month_and_resupply_drops_to_2() -> None:
    s = SCENARIOS.get("1942")
    first = s.axis.malta_group.first_month  # type: ignore[union-attr]
    assert rf.check_malta_group(s, first, None) == []
    assert "available from Month" in messages(rf.check_malta_group(s, first - 1, None))
    assert "already arrived" in messages(rf.check_malta_group(s, first + 2, first))
    assert rf.check_malta_group(SCENARIOS.get("1941"), 5, None) != []
    assert rf.monthly_resupply(s, "axis", first + 1) == 3
    assert rf.monthly_resupply(s, "axis", first + 1, malta_called_in=first + 1) == 2
    assert rf.monthly_resupply(s, "axis", first, malta_called_in=first + 1) == 3
    assert rf.monthly_resupply(s, "allied", first + 1, malta_called_in=first) == 3
    campaign = SCENARIOS.get("1941-42")
    assert (rf.monthly_resupply(campaign, "axis", 10), rf.monthly_resupply(campaign, "axis", 11)) == (2, 3)


def test_rb_16_54_replacements_in_an_engaged_base_and_a_minefield_where_one_was_dismantled() -> None:
    # BU-08: units already in an engaged Base may still receive Replacements.
    pos = position(block("P", "axis", "El Agheila", unit="Brescia", cv=1), block("L", "allied", "El Agheila"))
    pos = pos.with_battles([Battle(at("El Agheila"), "allied", {})])
    ctx = bu.BuildupContext(MAP, bu.buildup_networks(MAP, pos), ROSTER)
    assert bu.check_spend(ctx, pos, bu.open_ledger("axis", 1), bu.Replace("P", 1)) == []
    # BU-09: the free Minefield may go where one of the dismantled ones was.
    pos, ctx = prepared(_mine_position())
    mines = frozenset({at("Gazala"), at("Acroma")})
    assert _site(pos, ctx, at("Gazala"), (at("Gazala"), at("Acroma")), mines) == []
