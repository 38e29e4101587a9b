"""Every block count RB gives, one test each, and the roster check report.

Counts are computed from units.toml; the expected numbers are the
rulebook's (public-facts 3.2 shows each derivation).
"""

from __future__ import annotations

from rules.ritd import roster as roster_check
from rules.ritd.datafiles import read_bytes
from rules.ritd.units import Appearance, Side, load_units

UNITS = read_bytes("units.toml")
SCENARIOS = read_bytes("scenarios.toml")


def blocks(side: Side, *codes: Appearance) -> int:
    return len(load_units().with_appearance(side, *codes))


# --- Axis ------------------------------------------------------------------


def test_rb_18_2_axis_s_units_are_10_blocks() -> None:
    assert blocks("axis", "S") == 10  # "El Agheila: all S units (10 total)"


def test_rb_16_41_axis_month_3_reinforcements_are_4_blocks() -> None:
    assert blocks("axis", 3) == 4  # Early Arrival Example


def test_rb_18_5_axis_months_5_and_7_reinforcements_are_8_blocks() -> None:
    assert blocks("axis", 5, 7) == 8  # Battleaxe: "Months 5 and 7 (8 units)"


def test_rb_18_2_axis_months_3_5_7_reinforcements_are_12_blocks() -> None:
    assert blocks("axis", 3, 5, 7) == 12  # "Months 3, 5, 7 (12 units)"


def test_rb_18_4_axis_s_and_months_3_5_7_are_22_blocks() -> None:
    assert blocks("axis", "S", 3, 5, 7) == 22  # Crusader: "22 units total"


def test_rb_18_6_axis_months_17_19_and_m_are_8_blocks() -> None:
    assert blocks("axis", 17, 19, "M") == 8  # 18.6 and 18.8: "(8 units)"


def test_rb_18_6_axis_1942_pool_needs_blocks_beyond_1941() -> None:
    # 24 start in 18.6, but S + 3 + 5 + 7 is only 22 (decisions D-05).
    assert len(load_units().side("axis")) - blocks("axis", 17, 19, "M") >= 24


# --- Allied ----------------------------------------------------------------


def test_rb_18_2_allied_s_units_are_6_blocks() -> None:
    assert blocks("allied", "S") == 6


def test_rb_18_2_allied_t_units_are_6_blocks() -> None:
    assert blocks("allied", "T") == 6


def test_rb_16_41_allied_month_2_reinforcements_are_4_blocks() -> None:
    assert blocks("allied", 2) == 4  # Early Arrival Example


def test_derived_rb_18_2_18_4_18_5_allied_month_4_is_4_blocks() -> None:
    assert blocks("allied", 4) == 24 - 16 - 4


def test_derived_rb_18_4_18_5_allied_months_6_and_8_are_12_blocks() -> None:
    assert blocks("allied", 6, 8) == 16 - 4


def test_rb_18_4_allied_month_10_reinforcements_are_4_blocks() -> None:
    assert blocks("allied", 10) == 4  # Crusader: "Month 10 (4 units)"


def test_rb_18_5_allied_months_6_8_10_reinforcements_are_16_blocks() -> None:
    assert blocks("allied", 6, 8, 10) == 16


def test_rb_18_2_allied_months_2_to_10_reinforcements_are_24_blocks() -> None:
    assert blocks("allied", 2, 4, 6, 8, 10) == 24


def test_derived_rb_18_6_18_8_allied_months_12_and_14_are_8_blocks() -> None:
    assert blocks("allied", 12, 14) == 24 - 16


def test_rb_18_8_allied_months_16_18_20_reinforcements_are_16_blocks() -> None:
    assert blocks("allied", 16, 18, 20) == 16


def test_rb_18_6_allied_months_12_to_20_reinforcements_are_24_blocks() -> None:
    assert blocks("allied", 12, 14, 16, 18, 20) == 24


def test_rb_17_0_optional_rule_four_i_tanks() -> None:
    assert len(load_units().i_tanks()) == 4  # "all four I-tanks in the game"


def test_no_allied_block_carries_an_odd_month_or_axis_an_even_one() -> None:
    # RB's schedules: Allied Months 2, 4, ..., 20; Axis 3, 5, 7, 17, 19 (and
    # the authored Month 11 pool, decisions D-05).
    for unit in load_units():
        if isinstance(unit.appearance, int):
            assert unit.appearance % 2 == (0 if unit.side == "allied" else 1), unit.name


# --- the report ------------------------------------------------------------


def test_roster_check_passes() -> None:
    lines, ok = roster_check.data_check_report()
    assert ok
    assert lines and all(line.startswith("ok   RB ") for line in lines)


def test_roster_check_has_one_line_per_rb_count() -> None:
    lines, _ = roster_check.data_check_report()
    zone_lines = sum(2 if z.min_units else 1 for z in roster_check.ZONE_LIMITS)
    assert len(lines) == (
        len(roster_check.CODE_COUNTS)
        + 1
        + len(roster_check.GROUP_COUNTS)
        + zone_lines
        + len(roster_check.ARRIVAL_COUNTS)
        + 1  # every scenario place name resolves on the map
    )
    assert 'ok   RB 18.2: Axis "S" units (El Agheila, "10 total"): RB 10, data 10' in lines
    assert lines[-1].startswith("ok   RB 18.0: every scenario place name")


def test_roster_check_fails_when_a_block_is_removed() -> None:
    text = UNITS.decode()
    start = text.index('[[unit]]\nname = "Pavia"')
    end = text.index("[[unit]]", start + 1)
    lines, ok = roster_check.report_for((text[:start] + text[end:]).encode(), SCENARIOS)
    assert not ok
    assert 'FAIL RB 18.2: Axis "S" units (El Agheila, "10 total"): RB 10, data 9' in lines
    assert 'FAIL RB 18.4: Axis "S" plus Month 3, 5, 7 units: RB 22, data 21' in lines
    # The scenarios no longer load: one line names the entry.
    assert lines[-1] == (
        "FAIL scenarios.toml: scenario '1940' axis group 'start': unknown unit 'Pavia'"
    )


def test_roster_check_fails_when_a_block_changes_month() -> None:
    text = UNITS.decode()
    old = 'name = "15Pz/8"\nnationality = "german"\ntype = "armor"\nelite = true\n'
    old += "max_cv = 6\nmin_cv = 2\nappearance = 3"
    assert text.count(old) == 1
    lines, ok = roster_check.report_for(text.replace(old, old[:-1] + "5").encode(), SCENARIOS)
    assert not ok
    assert (
        "FAIL RB 16.41: Axis Month 3 Reinforcements (Early Arrival Example): RB 4, data 3"
        in lines
    )
    assert "FAIL RB 18.5: Axis Months 5 and 7 Reinforcements: RB 8, data 9" in lines
    assert "ok   RB 18.2: Axis Months 3, 5, 7 Reinforcements: RB 12, data 12" in lines


def test_roster_check_fails_on_a_consistent_scenario_edit() -> None:
    # Drop one unit from the Crusader "except" list and raise the count to
    # match: the file still loads, but RB 18.4 says 28.
    text = SCENARIOS.decode()
    old_except = 'except = ["2/3 Armd", "2 SG", "4 Ind/3 Mot", "18 Cav"]'
    assert text.count(old_except) == 1 and text.count("count = 28\n") == 1
    text = text.replace(old_except, 'except = ["2/3 Armd", "2 SG", "4 Ind/3 Mot"]')
    text = text.replace("count = 28\n", "count = 29\n")
    lines, ok = roster_check.report_for(UNITS, text.encode())
    assert not ok
    assert (
        "FAIL RB 18.4: Crusader: Allied starting forces, group 'start': RB 28, data 29" in lines
    )


def test_roster_check_reports_an_unloadable_units_file() -> None:
    lines, ok = roster_check.report_for(b"unit = []\n", SCENARIOS)
    assert not ok
    assert lines == ["FAIL units.toml: the roster has no units"]


def test_roster_check_fails_on_a_place_the_map_does_not_know() -> None:
    text = SCENARIOS.decode().replace('hexes = ["Mersa Brega"]', 'hexes = ["Mersa Bregga"]')
    lines, ok = roster_check.report_for(UNITS, text.encode(), read_bytes("map.toml"))
    assert not ok
    bad = [line for line in lines if line.startswith("FAIL scenarios.toml")]
    assert len(bad) == 1
    assert bad[0].startswith(
        "FAIL scenarios.toml: scenario '1942' axis group 'start': hex 'Mersa Bregga': "
    )
    assert "Mersa Brega" in bad[0]  # the map's "did you mean"
    # The RB 18.6 limit "10 at Mersa Brega" no longer finds its zone either.
    assert (
        "FAIL RB 18.6: 1942 Scenario: Axis units deployed in Mersa Brega (at most): RB 10, data 0"
        in lines
    )
