"""Scenario set-up checks (RB 18.0, 18.4, 19.0): public and hidden parts."""

from __future__ import annotations

import pytest

from rules.ritd.hexmap import load_map
from rules.ritd.position import Block, Position
from rules.ritd.scenarios import load_scenarios
from rules.ritd.setup import (
    check_deployment_complete,
    check_hidden_placement,
    check_public_placement,
    side_hexes,
    starting_count,
)


@pytest.fixture(scope="module")
def m():
    return load_map()


@pytest.fixture(scope="module")
def sc():
    return load_scenarios()


def test_rb_19_0_demo_axis_deploys_eight_blocks_in_bardia_capuzzo_and_sidi_omar(m, sc):
    demo = sc.get("demo")
    assert starting_count(demo, "axis") == 8
    assert side_hexes(m, demo, "axis") == {m.resolve(p) for p in ("Bardia", "Ft. Capuzzo", "Sidi Omar")}


def test_rb_18_0_free_deployment_never_in_an_enemy_hex(m, sc):
    s = sc.get("1941")
    pos = Position(blocks=(Block("Ax1", "axis", m.resolve("Msus")),))
    problems = check_public_placement(m, s, "allied", pos, m.resolve("Msus"), placed=0)
    assert [p.rule for p in problems] == ["RB 18.0"] and "occupied by the enemy" in problems[0].message
    assert check_public_placement(m, s, "allied", pos, m.resolve("Mechili"), placed=0) == []


def test_rb_18_2_axis_starts_at_el_agheila_only(m, sc):
    s = sc.get("1941")
    problems = check_public_placement(m, s, "axis", Position(), m.resolve("Benghazi"), placed=0)
    assert problems and problems[0].rule == "RB 18.2" and "not in the axis deployment area" in problems[0].message
    assert check_public_placement(m, s, "axis", Position(), m.resolve("El Agheila"), placed=9) == []
    assert "all are placed" in check_public_placement(m, s, "axis", Position(), m.resolve("El Agheila"),
                                                      placed=10)[0].message


def test_hidden_part_unit_group_zone_duplicates_and_full_cv(m, sc):
    s = sc.get("demo")
    savona = sc.roster.get("Savona")
    ok = check_hidden_placement(m, sc, s, "axis", m.resolve("Bardia"), "Savona", savona.max_cv, set())
    assert ok == []
    wrong_hex = check_hidden_placement(m, sc, s, "axis", m.resolve("Sidi Omar"), "Savona", savona.max_cv, set())
    assert "may not deploy in Sidi Omar" in wrong_hex[0].message
    twice = check_hidden_placement(m, sc, s, "axis", m.resolve("Bardia"), "Savona", savona.max_cv, {"Savona"})
    assert "deployed twice" in twice[0].message
    weak = check_hidden_placement(m, sc, s, "axis", m.resolve("Bardia"), "Savona", savona.max_cv - 1, set())
    assert weak[0].rule == "RB 18.0" and "maximum CV" in weak[0].message
    other = check_hidden_placement(m, sc, s, "axis", m.resolve("Bardia"), "7/7 Tk", 3, set())
    assert "7/7 Tk is not on the axis side" in other[0].message


def test_rb_18_4_crusader_at_most_five_allied_units_in_tobruk(m, sc):
    s = sc.get("crusader")
    tobruk = m.resolve("Tobruk")
    egypt = sorted(side_hexes(m, s, "allied") - {tobruk})
    blocks = [Block(f"L{i}", "allied", tobruk) for i in range(6)]
    blocks += [Block(f"L{i}", "allied", egypt[i % len(egypt)]) for i in range(6, 28)]
    problems = check_deployment_complete(m, s, "allied", Position(blocks=tuple(blocks)))
    assert any("at most 5 units in Tobruk" in p.message for p in problems)
    fixed = blocks[:5] + [Block("L5", "allied", egypt[0])] + blocks[6:]
    assert check_deployment_complete(m, s, "allied", Position(blocks=tuple(fixed))) == []
    assert "must deploy 28 blocks" in check_deployment_complete(m, s, "allied",
                                                                Position(blocks=tuple(fixed[:-1])))[0].message


def test_rb_18_4_d_16_crusader_the_axis_may_not_deploy_in_tobruk(m, sc):
    """RB 18.4: the Axis has "Free Deployment in Libya, Sidi Omar and Sollum",
    the Allies "up to 5 units in Tobruk"; decision D-16 (issue 21 point 9):
    the scenario starts with Tobruk held by the Allies, so "Libya" is Libya
    less Tobruk. Rules version 5; version 4 keeps its own data (ritd@4)."""
    s = sc.get("crusader")
    tobruk = m.resolve("Tobruk")
    assert tobruk not in side_hexes(m, s, "axis")
    assert {m.resolve(p) for p in ("Acroma", "Tobruk E1", "Bardia", "Sidi Omar", "Sollum")} <= side_hexes(m, s, "axis")
    problems = check_public_placement(m, s, "axis", Position(), tobruk, placed=0)
    assert [p.rule for p in problems] == ["RB 18.4"] and "not in the axis deployment area" in problems[0].message
    pz = sc.roster.get("15Pz/8")
    hidden = check_hidden_placement(m, sc, s, "axis", tobruk, "15Pz/8", pz.max_cv, set())
    assert hidden and "may not deploy in Tobruk" in hidden[0].message


def test_rb_18_4_version_4_still_lets_the_axis_deploy_in_tobruk():
    """Games of rules version 4 keep the version-4 reading (docs/protocol.md
    decision 21): its frozen data has no exception for Tobruk."""
    from rules.ritd_v4.hexmap import load_map as load_map_v4
    from rules.ritd_v4.scenarios import load_scenarios as load_scenarios_v4
    from rules.ritd_v4.setup import side_hexes as side_hexes_v4

    m4 = load_map_v4()
    assert m4.resolve("Tobruk") in side_hexes_v4(m4, load_scenarios_v4().get("crusader"), "axis")
