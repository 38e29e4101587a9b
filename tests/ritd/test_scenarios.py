"""Scenarios 18.1-18.8 and the 19.0 Demo against the rulebook; broken copies."""

from __future__ import annotations

import pytest

from rules.ritd.datafiles import DataError, read_bytes
from rules.ritd.scenarios import (
    AreaZone,
    HexZone,
    LineZone,
    Scenario,
    check_places,
    load_scenarios,
    load_scenarios_bytes,
    month_label,
    place_names,
)
from rules.ritd.units import Side, load_units

REAL = read_bytes("scenarios.toml").decode()


def edit(old: str, new: str, within: str | None = None) -> bytes:
    """The real file with ``old`` replaced by ``new``; ``old`` must occur
    exactly once (in scenario ``within``'s section, when given)."""
    start, end = 0, len(REAL)
    if within is not None:
        start = REAL.index(f'[[scenario]]\nid = "{within}"\n')
        following = REAL.find("[[scenario]]\n", start + 1)
        end = len(REAL) if following < 0 else following
    section = REAL[start:end]
    assert section.count(old) == 1, old
    return (REAL[:start] + section.replace(old, new) + REAL[end:]).encode()


def load_error(data: bytes) -> str:
    with pytest.raises(DataError) as info:
        load_scenarios_bytes(data)
    return str(info.value)


def sc(scenario_id: str) -> Scenario:
    return load_scenarios().get(scenario_id)


def names(scenario_id: str, side: Side, group: str | None = None) -> set[str]:
    scenarios = load_scenarios()
    scenario = scenarios.get(scenario_id)
    units = (
        scenarios.starting_units(scenario, side)
        if group is None
        else scenarios.setup_units(scenario, side, group)
    )
    return {u.name for u in units}


def zones(scenario_id: str, side: Side, group: str) -> list[AreaZone | HexZone | LineZone]:
    for g in sc(scenario_id).side(side).setup:
        if g.id == group:
            return list(g.zones)
    raise AssertionError(group)


def arrival_months(scenario_id: str, side: Side) -> list[int]:
    return [r.month for r in sc(scenario_id).side(side).reinforcements]


# --- RB numbers per scenario -------------------------------------------------

# rule, id, start month, length, end month, time,
# Axis initial supply / resupply, Allied initial supply / resupply.
RB_NUMBERS = [
    ("18.1", "1940", 1, 6, 6, "2 hours", 6, 2, 3, 3),
    ("18.2", "1941", 1, 10, 10, "3-4 hours", 6, 2, 6, 3),
    ("18.3", "1941-42", 1, 20, 20, "6-8 hours", 6, 2, 6, 3),
    ("18.4", "crusader", 8, 3, 10, "1-2 hours", 10, 2, 12, 3),
    ("18.5", "battleaxe", 4, 7, 10, "2-3 hours", 4, 2, 8, 3),
    ("18.6", "1942", 11, 10, 20, "4-5 hours", 5, 3, 5, 3),
    ("18.7", "gazala", 14, 2, 15, "1-2 hours", 10, 3, 12, 3),
    ("18.8", "pursuit", 15, 6, 20, "2-3 hours", 8, 3, 8, 3),
    # 19.0: "The Axis have six Supply Cards, the Allies three" (as 18.1).
    ("19.0", "demo", 1, 6, 6, "2 hours", 6, 2, 3, 3),
]

# RB's dates; 18.3 and 18.6 say "Dec. 1942" for Month 20 (decisions D-01).
RB_DATES = [
    ("18.1", "1940", "Sep 1940", "Feb 1941"),
    ("18.2", "1941", "Apr 1941", "Jan 1942"),
    ("18.3", "1941-42", "Apr 1941", "Nov 1942"),
    ("18.4", "crusader", "Nov 1941", "Jan 1942"),
    ("18.5", "battleaxe", "Jul 1941", "Jan 1942"),
    ("18.6", "1942", "Feb 1942", "Nov 1942"),
    ("18.7", "gazala", "May 1942", "Jun 1942"),
    ("18.8", "pursuit", "Jun 1942", "Nov 1942"),
    ("19.0", "demo", "Sep 1940", "Feb 1941"),
]


def test_every_rb_scenario_loads() -> None:
    scenarios = load_scenarios()
    assert load_scenarios() is scenarios
    assert scenarios.ids == (
        "1940",
        "1941",
        "1941-42",
        "crusader",
        "battleaxe",
        "1942",
        "gazala",
        "pursuit",
        "demo",
    )
    assert [s.rule for s in scenarios] == [row[0] for row in RB_NUMBERS]


@pytest.mark.parametrize("row", RB_NUMBERS, ids=[f"RB{r[0]}-{r[1]}" for r in RB_NUMBERS])
def test_rb_scenario_months_and_supply(row: tuple) -> None:
    rule, sid, start, length, end, time, ax_init, ax_re, al_init, al_re = row
    s = sc(sid)
    assert s.rule == rule
    assert (s.start_month, s.length, s.end_month, s.time) == (start, length, end, time)
    assert (s.axis.initial_supply, s.axis.resupply) == (ax_init, ax_re)
    assert (s.allied.initial_supply, s.allied.resupply) == (al_init, al_re)


@pytest.mark.parametrize("row", RB_DATES, ids=[f"RB{r[0]}-{r[1]}" for r in RB_DATES])
def test_rb_scenario_dates(row: tuple) -> None:
    _, sid, start, end = row
    scenarios = load_scenarios()
    s = scenarios.get(sid)
    assert scenarios.month_label(s, s.start_month) == start
    assert scenarios.month_label(s, s.end_month) == end
    assert s.start_text.replace(".", "") == start


def test_rb_18_3_18_6_18_8_month_20_is_nov_1942_not_dec() -> None:
    # Decision D-01: RB 18.3 and 18.6 say "Dec. 1942 (Month 20)", RB 18.8 says
    # "Nov. 1942 (Month 20)"; counting from Apr 1941 = Month 1 gives Nov.
    assert sc("1941-42").end_text == sc("1942").end_text == "Dec. 1942"
    assert sc("pursuit").end_text == "Nov. 1942"
    scenarios = load_scenarios()
    for sid in ("1941-42", "1942", "pursuit"):
        assert scenarios.month_label(sc(sid), 20) == "Nov 1942"
    # The other dates RB gives fix Month 1 = Apr 1941.
    cal = scenarios.calendar(sc("1941"))
    assert [month_label(cal, m) for m in (1, 4, 8, 10, 11, 14, 15)] == [
        "Apr 1941",
        "Jul 1941",
        "Nov 1941",
        "Jan 1942",
        "Feb 1942",
        "May 1942",
        "Jun 1942",
    ]
    for s in scenarios:
        if s.end_month != 20:
            assert s.end_text.replace(".", "") == scenarios.month_label(s, s.end_month)


def test_rb_18_0_axis_has_the_first_turn_except_in_crusader() -> None:
    for s in load_scenarios():
        assert s.special.first_player == ("allied" if s.id == "crusader" else "axis"), s.id


def test_rb_18_0_victory_conditions_are_standard() -> None:
    assert {s.victory for s in load_scenarios()} == {"standard"}


# --- per scenario ------------------------------------------------------------


def test_rb_18_1_1940() -> None:
    s = sc("1940")
    assert s.calendar == "1940"
    assert s.special.rommel_bonus is False  # special rule 1
    assert s.special.bp_dice == 1  # special rule 2
    assert s.special.appearance_codes_apply is False
    units = [load_units().get(n) for n in names("1940", "axis")]
    assert len(units) == 8 and all(u.nationality == "italian" for u in units)
    assert zones("1940", "axis", "start") == [AreaZone(areas=["Libya", "Sidi Omar"])]
    assert len(names("1940", "allied")) == 4
    assert zones("1940", "allied", "start") == [AreaZone(areas=["Egypt"])]
    assert arrival_months("1940", "axis") == [3, 5]
    assert arrival_months("1940", "allied") == [2, 4]


def test_rb_18_1_later_scenarios_allow_the_rommel_bonus() -> None:
    for s in load_scenarios():
        if s.calendar == "1941":
            assert s.special.rommel_bonus and s.special.bp_dice == 2, s.id


def test_rb_18_2_1941() -> None:
    roster = load_units()
    assert names("1941", "axis", "start") == {u.name for u in roster.with_appearance("axis", "S")}
    assert zones("1941", "axis", "start") == [HexZone(hexes=["El Agheila"])]
    assert names("1941", "allied", "start") == {
        u.name for u in roster.with_appearance("allied", "S")
    }
    assert zones("1941", "allied", "start") == [AreaZone(areas=["Libya", "Egypt"])]
    assert names("1941", "allied", "tobruk") == {
        u.name for u in roster.with_appearance("allied", "T")
    }
    assert zones("1941", "allied", "tobruk") == [HexZone(hexes=["Tobruk"])]
    assert arrival_months("1941", "axis") == [3, 5, 7]
    assert arrival_months("1941", "allied") == [2, 4, 6, 8, 10]


def test_rb_18_3_campaign() -> None:
    s = sc("1941-42")
    for side in ("axis", "allied"):
        assert names("1941-42", side) == names("1941", side)
        assert s.side(side).initial_supply == sc("1941").side(side).initial_supply
    # "Axis Resupply increases to 3 Cards/Month" beginning Month 11.
    assert s.axis.resupply_in(10) == 2 and s.axis.resupply_in(11) == 3
    assert s.allied.resupply_in(11) == 3
    # "Axis M (Malta Group) units become available" from Month 11.
    malta = s.axis.malta_group
    assert malta is not None and malta.first_month == 11 and malta.resupply == 2
    assert {u.appearance for u in load_scenarios().malta_group(s)} == {"M"}
    # Decision D-09: after Month 10 the labels bring every block into play.
    scenarios = load_scenarios()
    everyone = set(names("1941-42", "axis")) | set(names("1941-42", "allied"))
    for side in ("axis", "allied"):
        for m in range(2, 21):
            everyone |= {u.name for u in scenarios.reinforcements(s, side, m)}
    everyone |= {u.name for u in scenarios.malta_group(s)}
    assert everyone == {u.name for u in load_units()}


def test_rb_18_4_crusader() -> None:
    s = sc("crusader")
    assert s.special.first_player == "allied"  # special rule 1
    assert [(m.side, m.hex) for m in s.special.minefields] == [("allied", "Tobruk")]  # rule 2
    roster = load_units()
    assert names("crusader", "axis") == {
        u.name for u in roster.with_appearance("axis", "S", 3, 5, 7)
    }
    assert zones("crusader", "axis", "start") == [  # less Allied Tobruk: decision D-16 (rules version 5)
        AreaZone(areas=["Libya", "Sidi Omar", "Sollum"], except_=["Tobruk"])
    ]
    allied = names("crusader", "allied")
    coded = {u.name for u in roster.with_appearance("allied", "S", "T", 2, 4, 6, 8)}
    assert len(allied) == 28 and allied < coded and len(coded - allied) == 4
    assert zones("crusader", "allied", "start") == [
        AreaZone(areas=["Egypt"]),
        HexZone(hexes=["Tobruk"], max_units=5),
    ]
    assert arrival_months("crusader", "axis") == []
    assert arrival_months("crusader", "allied") == [10]


def test_rb_18_5_battleaxe() -> None:
    assert len(names("battleaxe", "axis")) == 14
    assert zones("battleaxe", "axis", "start") == [AreaZone(areas=["Libya"], except_=["Tobruk"])]
    assert len(names("battleaxe", "allied")) == 18
    assert zones("battleaxe", "allied", "start") == [
        AreaZone(areas=["Egypt"]),
        HexZone(hexes=["Tobruk"], max_units=5),
    ]
    assert arrival_months("battleaxe", "axis") == [5, 7]
    assert arrival_months("battleaxe", "allied") == [6, 8, 10]


def test_rb_18_6_1942() -> None:
    s = sc("1942")
    assert zones("1942", "axis", "start") == [
        HexZone(hexes=["El Agheila"], min_units=14, max_units=14),
        HexZone(hexes=["Mersa Brega"], min_units=10, max_units=10),
    ]
    assert arrival_months("1942", "axis") == [17, 19]
    malta = s.axis.malta_group
    # "They may arrive during any Buildup, but Axis Resupply immediately
    # drops to 2 Supply Cards per month."
    assert malta is not None and malta.resupply == 2 and malta.first_month == s.start_month + 1
    assert len(load_scenarios().malta_group(s)) + sum(
        len(load_scenarios().reinforcements(s, "axis", m)) for m in (17, 19)
    ) == 8
    assert [(g.id, g.count) for g in s.allied.setup] == [
        ("free", 10),
        ("tobruk", 10),
        ("alexandria", 8),
    ]
    assert zones("1942", "allied", "free") == [AreaZone(areas=["Libya", "Egypt"])]
    assert zones("1942", "allied", "tobruk") == [HexZone(hexes=["Tobruk"])]
    assert zones("1942", "allied", "alexandria") == [HexZone(hexes=["Alexandria"])]
    assert arrival_months("1942", "allied") == [12, 14, 16, 18, 20]


def test_rb_18_7_gazala() -> None:
    s = sc("gazala")
    pre = s.special.pregame_buildup
    assert pre is not None and (pre.bp, pre.first) == (30, "allied")
    (axis_line,) = zones("gazala", "axis", "start")
    assert isinstance(axis_line, LineZone) and axis_line.side == "west"
    assert axis_line.line == ["Gazala", "Segnali Rotunda", "Tengeder", "Agedabia"]
    assert "Trigh el Abd" in axis_line.text
    (allied_line,) = zones("gazala", "allied", "line")
    assert isinstance(allied_line, LineZone) and allied_line.side == "east"
    assert allied_line.line == [
        "Acroma",
        "Sidi Mufta",
        "Bir Hacheim",
        "Retma",
        "Bir Guba",
        "Jarabub",
    ]
    assert zones("gazala", "allied", "alexandria") == [HexZone(hexes=["Alexandria"])]
    assert len(names("gazala", "axis")) == 24
    assert len(names("gazala", "allied", "line")) == 20
    assert len(names("gazala", "allied", "alexandria")) == 16
    assert arrival_months("gazala", "axis") == arrival_months("gazala", "allied") == []


def test_rb_18_8_pursuit() -> None:
    s = sc("pursuit")
    assert zones("pursuit", "axis", "start") == [AreaZone(areas=["Libya"])]
    assert zones("pursuit", "allied", "egypt") == [AreaZone(areas=["Egypt"])]
    assert zones("pursuit", "allied", "alexandria") == [HexZone(hexes=["Alexandria"])]
    assert arrival_months("pursuit", "axis") == [17, 19]
    assert arrival_months("pursuit", "allied") == [16, 18, 20]
    malta = s.axis.malta_group
    assert malta is not None and malta.resupply == 2


def test_rb_19_0_demo_deployment() -> None:
    roster = load_units()
    s = sc("demo")

    def at(side: Side, group: str) -> tuple[str, list]:
        (zone,) = zones("demo", side, group)
        assert isinstance(zone, HexZone)
        (hex_,) = zone.hexes
        return hex_, [roster.get(n) for n in sorted(names("demo", side, group))]

    axis = {at("axis", g)[0]: at("axis", g)[1] for g in ("bardia", "capuzzo", "sidi-omar")}
    allied = {at("allied", g)[0]: at("allied", g)[1] for g in ("sollum", "buq-buq", "sofafi")}
    assert {h: len(u) for h, u in axis.items()} == {"Bardia": 1, "Ft. Capuzzo": 4, "Sidi Omar": 3}
    assert {h: len(u) for h, u in allied.items()} == {"Sollum": 1, "Buq Buq": 2, "Sofafi": 1}
    assert all(u.nationality == "italian" for us in axis.values() for u in us)
    # Sollum: "a mechanized unit" (speed 3).
    assert [u.speed for u in allied["Sollum"]] == [3]
    # Buq Buq: "The armored unit" fires DF; "the mechanized infantry (SF)",
    # rebuilt 1 step for 2 BPs in Month 2.
    assert sorted(u.type for u in allied["Buq Buq"]) == ["armor", "mech_inf"]
    assert roster.get("7 SG").unit_type.bp_per_cv == 2
    # Two 4-CV infantry units attack Buq Buq from Ft. Capuzzo; one is rebuilt
    # 2 steps for 2 BPs (leg infantry, 1 BP per CV).
    legs = [u for u in axis["Ft. Capuzzo"] if u.type == "infantry" and u.max_cv == 4]
    assert len(legs) >= 2 and all(u.unit_type.bp_per_cv == 1 for u in legs)
    # Month 2: "The Allied player receives two Reinforcement units".
    assert len(load_scenarios().reinforcements(s, "allied", 2)) == 2
    assert (s.special.rommel_bonus, s.special.bp_dice) == (False, 1)


# --- consistency of the authored lists (decisions D-05, D-07) --------------


def test_1942_axis_pool_is_the_1941_blocks_less_savona_plus_month_11() -> None:
    roster = load_units()
    pool = names("1942", "axis")
    assert pool == (
        {u.name for u in roster.with_appearance("axis", "S", 3, 5, 7, 11)} - {"Savona"}
    )
    assert names("gazala", "axis") == pool


def test_gazala_forces_are_the_1942_start_plus_months_12_and_14() -> None:
    roster = load_units()
    assert names("gazala", "allied") == names("1942", "allied") | {
        u.name for u in roster.with_appearance("allied", 12, 14)
    }


def test_pursuit_forces_come_from_the_gazala_forces() -> None:
    for side in ("axis", "allied"):
        assert names("pursuit", side) < names("gazala", side)


def test_1942_allied_start_comes_from_the_1941_blocks() -> None:
    roster = load_units()
    assert names("1942", "allied") <= {
        u.name for u in roster.with_appearance("allied", "S", "T", 2, 4, 6, 8, 10)
    }


def test_battleaxe_starts_with_every_block_due_by_month_4() -> None:
    roster = load_units()
    assert names("battleaxe", "axis") == {u.name for u in roster.with_appearance("axis", "S", 3)}
    assert names("battleaxe", "allied") < {
        u.name for u in roster.with_appearance("allied", "S", "T", 2, 4)
    }


# --- supply deck and victory -------------------------------------------------


def test_supply_deck_42_cards_two_thirds_real_hand_limit_16() -> None:
    deck = load_scenarios().supply_deck
    assert (deck.total, deck.real, deck.dummy) == (42, 28, 14)
    assert 3 * deck.real == 2 * deck.total  # RB Introduction: two-thirds real
    assert deck.hand_limit == 16  # RB 16.6


def test_rb_17_victory_levels() -> None:
    victory = load_scenarios().victory
    assert [(lv.id, lv.vp, lv.rule) for lv in victory.levels] == [
        ("strategic", 10, "17.1"),
        ("decisive", 5, "17.2"),
        ("positional", 2, "17.3"),
        ("attrition", 1, "17.4"),
    ]
    assert victory.strategic_exit_units == 3 and victory.decisive_ratio == 2
    assert victory.german_unit_value * 2 == 3  # 1.5, kept as a fraction


# --- places on the map ------------------------------------------------------


def test_every_scenario_place_resolves_on_the_map() -> None:
    from rules.ritd.hexmap import load_map

    hexmap = load_map()
    scenarios = load_scenarios()
    assert check_places(scenarios, hexmap) == []
    assert sum(len(place_names(s)) for s in scenarios) > 0
    # The named places of the Gazala lines lie on the map's lines, in order,
    # from the line's first hex; the seeds are off the line.
    for group in (zones("gazala", "axis", "start"), zones("gazala", "allied", "line")):
        (zone,) = group
        assert isinstance(zone, LineZone)
        path = list(hexmap.line(zone.map_line).path)
        positions = [path.index(hexmap.resolve(p)) for p in zone.line]
        assert positions == sorted(positions) and positions[0] == 0
        assert all(hexmap.resolve(seed) not in path for seed in zone.seeds)


def test_rb_18_7_gazala_axis_zone_is_the_rear_west_of_the_line() -> None:
    """RB 18.7 "on or west of the line ... to Agedabia" (decision M-22): the
    Cyrenaican bulge and the coast back to El Agheila, nothing east of it."""
    from rules.ritd.hexmap import load_map

    hexmap = load_map()
    (zone,) = zones("gazala", "axis", "start")
    area: set[str] = set()
    for seed in zone.seeds:
        area |= set(hexmap.side_of_line(zone.map_line, hexmap.resolve(seed)))
    inside = ["El Agheila", "Mersa Brega", "Agedabia", "Benghazi", "Msus", "Mechili", "Gazala", "Derna"]
    outside = ["Jalo", "Bir Hacheim", "Tobruk", "Acroma", "Alexandria", "Siwa"]
    assert all(hexmap.resolve(p) in area for p in inside)
    assert not any(hexmap.resolve(p) in area for p in outside)


def test_check_places_reports_unknown_names() -> None:
    from rules.ritd.hexmap import load_map

    broken = load_scenarios_bytes(
        edit('areas = ["Libya", "Sidi Omar", "Sollum"]', 'areas = ["Lybia", "Sidi Omar", "Sollum"]')
    )
    problems = check_places(broken, load_map())
    assert len(problems) == 1
    assert problems[0].startswith("scenario 'crusader' axis group 'start': area 'Lybia': ")


# --- broken copies ----------------------------------------------------------


def test_broken_unknown_unit_names_the_group_and_suggests() -> None:
    data = edit('"7/7 Tk", "7 SG", "11H"]', '"7/7 Tj", "7 SG", "11H"]', within="1940")
    message = load_error(data)
    assert message == (
        "scenarios.toml: scenario '1940' allied group 'start': "
        "unknown unit '7/7 Tj'; did you mean '7/7 Tk', '7/7 Mot'?"
    )


def test_broken_count_mismatch() -> None:
    assert load_error(edit("count = 28\n", "count = 27\n")) == (
        "scenarios.toml: scenario 'crusader' allied group 'start': "
        "selects 28 units but RB 18.4 gives 27"
    )


def test_broken_unknown_appearance_month() -> None:
    data = edit("month = 5\nappearance = [5]\n", "month = 5\nappearance = [9]\n", within="1941")
    assert load_error(data) == (
        "scenarios.toml: scenario '1941' axis reinforcements month 5: "
        "no axis unit carries appearance 9"
    )


def test_broken_reinforcement_month_outside_the_scenario() -> None:
    data = edit("month = 10\nappearance = [10]", "month = 11\nappearance = [10]", within="crusader")
    assert load_error(data) == (
        "scenarios.toml: scenario 'crusader' allied reinforcements month 11: "
        "month 11 has no Buildup in Months 8-10 (none in the first month, RB 16.0)"
    )


def test_broken_reinforcement_in_the_first_month() -> None:
    data = edit("month = 2\n", "month = 1\n", within="1940")
    assert load_error(data) == (
        "scenarios.toml: scenario '1940' allied reinforcements month 1: "
        "month 1 has no Buildup in Months 1-6 (none in the first month, RB 16.0)"
    )


def test_broken_unit_due_in_another_month() -> None:
    old = "month = 16\nappearance = [16]\n"
    data = edit(old, old + 'units = ["Sherman"]\n', within="pursuit")
    assert load_error(data) == (
        "scenarios.toml: scenario 'pursuit' allied reinforcements month 16: "
        'unit "Sherman" carries Month 18 on its label'
    )


def test_broken_starting_unit_not_yet_due() -> None:
    data = edit('appearance = ["S", 3]', 'appearance = ["S", 3, 5]', within="battleaxe")
    data = data.replace(b"count = 14\n", b"count = 18\n", 1)
    assert load_error(data) == (
        "scenarios.toml: scenario 'battleaxe' axis group 'start': "
        'unit "21Pz/39" carries Month 5 on its label, after the start (Month 4)'
    )


def test_broken_unit_listed_twice() -> None:
    data = edit('units = ["Trento", "Trieste", "GGFF"]', 'units = ["Trento", "Trieste", "Savona"]')
    message = load_error(data)
    assert message.startswith("scenarios.toml: scenario 'demo' axis group 'sidi-omar': ")
    assert 'unit "Savona" is already in group \'bardia\'' in message


def test_broken_unit_of_the_other_side() -> None:
    data = edit('units = ["11H"]', 'units = ["Ariete"]', within="demo")
    assert load_error(data) == (
        "scenarios.toml: scenario 'demo' allied group 'sofafi': unit \"Ariete\" is axis, not allied"
    )


def test_broken_nationality() -> None:
    data = edit('units = ["Savona"]', 'units = ["15Pz/8"]')
    assert load_error(data) == (
        "scenarios.toml: scenario 'demo' axis group 'bardia': "
        'unit "15Pz/8" is german, not italian'
    )


def test_broken_except_names_a_unit_not_selected() -> None:
    data = edit('except = ["2/3 Armd", "4 Ind/3 Mot"]', 'except = ["2/3 Armd", "1/2 Armd"]')
    assert load_error(data) == (
        "scenarios.toml: scenario 'battleaxe' allied group 'start': "
        'except lists "1/2 Armd", which the appearance codes do not select'
    )


def test_broken_end_month() -> None:
    data = edit("end_month = 10", "end_month = 11", within="crusader")
    assert load_error(data) == (
        "scenarios.toml: scenario 'crusader': end_month 11 does not follow "
        "from start_month 8 and length 3"
    )


def test_broken_reinforcement_total() -> None:
    data = edit("reinforcements_total = 16", "reinforcements_total = 15", within="battleaxe")
    assert load_error(data) == (
        "scenarios.toml: scenario 'battleaxe' allied reinforcements: "
        "16 units arrive but RB 18.5 gives 15"
    )


def test_broken_zone_cannot_hold_the_group() -> None:
    data = edit(
        '{ kind = "hexes", hexes = ["Mersa Brega"], min_units = 10, max_units = 10 }',
        '{ kind = "hexes", hexes = ["Mersa Brega"], min_units = 9, max_units = 9 }',
    )
    assert load_error(data) == (
        "scenarios.toml: scenario '1942' axis group 'start': the zones cannot hold exactly 24 units"
    )


def test_broken_unknown_zone_kind() -> None:
    old = 'kind = "hexes", hexes = ["El Agheila"]'
    data = edit(old, old.replace("hexes", "box", 1), within="1941")
    message = load_error(data)
    assert message.startswith('scenarios.toml: scenario "1941": invalid entry')
    assert "'box'" in message and "kind" in message


def test_broken_float_supply() -> None:
    data = edit("initial_supply = 10\n", "initial_supply = 10.0\n", within="crusader")
    message = load_error(data)
    assert message.startswith('scenarios.toml: scenario "crusader": invalid entry')
    assert "Expected `int`, got `float`" in message and "initial_supply" in message


def test_broken_unknown_field() -> None:
    data = edit('time = "1-2 hours"\n', 'time = "1-2 hours"\nweather = "hot"\n', within="crusader")
    message = load_error(data)
    assert message.startswith('scenarios.toml: scenario "crusader": invalid entry')
    assert "unknown field `weather`" in message


def test_broken_unknown_calendar() -> None:
    data = edit('calendar = "1941"', 'calendar = "1942"', within="gazala")
    assert load_error(data) == "scenarios.toml: scenario 'gazala': unknown calendar '1942'"


def test_broken_duplicate_scenario_id() -> None:
    data = edit('id = "demo"\nrule = "19.0"', 'id = "1940"\nrule = "19.0"')
    assert load_error(data) == "scenarios.toml: scenario '1940': duplicate scenario id"


def test_broken_deck_not_two_thirds_real() -> None:
    data = edit("real = 28\ndummy = 14", "real = 30\ndummy = 14")
    assert load_error(data) == (
        "scenarios.toml: supply_deck: 30 real and 14 dummy cards: "
        "RB (Introduction) says two-thirds of the cards are real"
    )


def test_broken_malta_group_for_the_allies() -> None:
    old = "reinforcements_total = 16\nreinforcements_rule = \"18.8\"\n"
    malta = (
        'malta_group = { appearance = ["S"], first_month = 16, resupply = 2, rule = "x", '
        'text = "x" }\n'
    )
    data = edit(old, old + malta, within="pursuit")
    assert load_error(data) == (
        "scenarios.toml: scenario 'pursuit' allied malta_group: the Malta Group is Axis (RB 18.6)"
    )


def test_broken_not_toml() -> None:
    assert load_error(b"[[scenario]\n").startswith("scenarios.toml: not valid TOML")
