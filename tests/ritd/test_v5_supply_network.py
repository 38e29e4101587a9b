"""The Supply Network in rules version 5 (issue 25): RB 12.6 "The sum of all
current friendly Supply Lines is termed the Supply Network", used for
Redeployment by land and by sea (RB 16.51, 16.53) and for building
Minefields (RB 14.0, 16.55). Version 4 also counted the whole Supplied
Highway (RB 12.3), open up to the first enemy unit, whether or not a unit
traced a line along it."""

from __future__ import annotations

from rules.ritd import buildup as bu
from rules.ritd import supply, supply_checks
from rules.ritd.position import Position
from rules.ritd.scenarios import load_scenarios
from tests.ritd.movement_support import MAP, at, block, position, route

ROSTER = load_scenarios().roster


def prepared(pos: Position) -> tuple[Position, bu.BuildupContext]:
    """RB 16.2: the Buildup Supply Check, then both Networks fixed for the Buildup."""
    pos, report = supply_checks.buildup_supply_check(MAP, pos)
    assert report.ok and report.eliminated == ()
    return pos, bu.BuildupContext(MAP, bu.buildup_networks(MAP, pos), ROSTER)


def messages(problems: list) -> str:
    return " | ".join(f"{p.rule}: {p.message}" for p in problems)


def test_rb_16_51_allied_redeployment_mersa_matruh_to_sidi_barrani_outside_every_axis_line() -> None:
    """RB 16.51: "Units being Redeployed must remain at all times within the
    friendly Supply Network (and may not enter the enemy Supply Network where
    Supply Networks overlap)"; RB 12.6: "The sum of all current friendly
    Supply Lines is termed the Supply Network". 1940 scenario, Month 2: the
    Italians hold Tobruk, Bardia, Ft Capuzzo and Sidi Omar; the Allies hold
    Mersa Matruh, and Sofafi, whose line runs by trail to Sidi Barrani and on
    along the highway to Alexandria. No Axis line reaches east of Sollum, so
    Sidi Barrani is in the Allied Network only."""
    pos, ctx = prepared(position(
        block("I1", "axis", "Bardia"), block("I2", "axis", "Sidi Omar"), block("I3", "axis", "Tobruk"),
        block("I4", "axis", "Ft Capuzzo"),
        block("B1", "allied", "Mersa Matruh"), block("B2", "allied", "Sofafi"),
        fortresses={"Tobruk": "axis", "Bardia": "axis", "Benghazi": "axis"}))
    barrani = at("Sidi Barrani")
    assert barrani not in ctx.networks["axis"]
    assert barrani in ctx.networks["allied"]
    path = route("Mersa Matruh", "Mersa Matruh W1", "Sidi Barrani")
    assert bu.check_spend(ctx, pos, bu.open_ledger("allied", 3), bu.Redeploy("B1", path)) == []


def test_rb_16_53_axis_sea_redeployment_from_base_to_axis_tobruk_outside_every_allied_line() -> None:
    """RB 16.53: "Units can Redeploy by sea between controlled Ports"; RB
    16.51: "may not enter the enemy Supply Network where Supply Networks
    overlap"; RB 12.6: the Network is "the sum of all current friendly Supply
    Lines". The Axis controls Tobruk (empty) with units at Gazala and next
    to Tobruk at Acroma E1; the Allies hold Sollum and Sidi Barrani, whose
    lines run east to Alexandria: no Allied line passes Tobruk."""
    pos, ctx = prepared(position(
        block("A", "axis", "Gazala"), block("B", "axis", "Acroma E1"), block("R", "axis", "El Agheila"),
        block("L", "allied", "Sollum"), block("M", "allied", "Sidi Barrani"),
        fortresses={"Tobruk": "axis", "Bardia": "axis", "Benghazi": "axis"}))
    tobruk = at("Tobruk")
    assert tobruk in ctx.networks["axis"] and tobruk not in ctx.networks["allied"]
    assert bu.check_spend(ctx, pos, bu.open_ledger("axis", 5), bu.SeaRedeploy("R", tobruk)) == []


def test_rb_16_55_axis_minefield_at_acroma_next_to_allied_tobruk_is_outside_the_axis_network() -> None:
    """RB 16.55: "players may spend 15 BPs to build a hidden Minefield in any
    hex within the friendly Supply Network (not in battle hexes)"; RB 14.0:
    "Minefields can be secretly built in unengaged hexes within the friendly
    Supply Network (12.6)". The Allies hold Tobruk, Bardia and Sollum; the
    nearest Axis units are at Agedabia and Mersa Brega, their lines running
    west to El Agheila. Acroma, on the open highway next to Tobruk, lies on
    no Axis Supply Line."""
    pos, ctx = prepared(position(
        block("A", "axis", "Agedabia"), block("B", "axis", "Mersa Brega"),
        block("L", "allied", "Tobruk"), block("M", "allied", "Tobruk"), block("N", "allied", "Bardia"),
        block("O", "allied", "Sollum"),
        fortresses={"Tobruk": "allied", "Bardia": "allied", "Benghazi": "axis"}))
    acroma = at("Acroma")
    engaged = {b.hex for b in pos.blocks if b.side == "allied"}
    problems = bu.check_minefield_site(MAP, "axis", ctx.networks["axis"], engaged, acroma, (), frozenset())
    assert "RB 16.55" in messages(problems) and "outside the axis Supply Network" in messages(problems)
    # The hexes of the Axis lines are still in it (Agedabia's line to El Agheila).
    assert bu.check_minefield_site(MAP, "axis", ctx.networks["axis"], engaged, at("Mersa Brega"), (),
                                   frozenset()) == []


def test_rb_12_6_the_network_is_the_union_of_every_current_supply_line() -> None:
    """RB 12.6: "The sum of all current friendly Supply Lines is termed the
    Supply Network. When a unit has several valid Supply Lines, all of them
    contribute to the friendly Supply Network." The one network function is
    exactly the union of ``supply_lines`` over the hexes of the side's units."""
    pos = position(
        block("A", "axis", "Gazala"), block("B", "axis", "Acroma E1"), block("C", "axis", "Mechili"),
        block("D", "axis", "Msus", disrupted=True),
        block("L", "allied", "Sollum"), block("M", "allied", "Sidi Barrani"), block("N", "allied", "Siwa"),
        fortresses={"Tobruk": "axis", "Bardia": "axis", "Benghazi": "axis"})
    for side in ("axis", "allied"):
        union: set[str] = set()
        for h in {b.hex for b in pos.blocks_of(side)}:
            for line in supply.supply_lines(MAP, pos, side, h):
                union.update(line.hexes)
        assert supply.network(MAP, pos, side) == union, side
