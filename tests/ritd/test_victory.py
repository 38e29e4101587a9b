"""Victory Conditions (RB 17.0-17.4), with the Victory Hierarchy Example
(RB 17 sidebar, digest EX-23) and the decisions BU-10..BU-15."""

from __future__ import annotations

import pytest

from rules.ritd import victory as vi
from rules.ritd.position import Battle, Block, Position, Side
from rules.ritd.scenarios import load_scenarios
from tests.ritd.movement_support import MAP, at, block, position

SCENARIOS = load_scenarios()
RULES = SCENARIOS.victory
S1941 = SCENARIOS.get("1941")


def units(side: Side, where: str, names: list[str], prefix: str) -> list[Block]:
    return [block(f"{prefix}{i}", side, where, unit=n, cv=1) for i, n in enumerate(names)]


ITALIANS = ["Brescia", "Pavia", "Bologna", "Savona", "Sabratha", "Trento", "Trieste", "Ariete"]
GERMANS = ["21Pz/5", "21Pz/3", "21Pz/8MG", "21Pz/605", "21Pz/155"]
BRITISH = ["7/4 Armd", "7 SG", "11H", "4 Ind/5", "4 Ind/11", "7/7 Tk"]


def test_rb_17_victory_levels_and_vps_come_from_the_data() -> None:
    assert [(lv.id, lv.vp) for lv in RULES.levels] == [
        ("strategic", 10), ("decisive", 5), ("positional", 2), ("attrition", 1)]


def test_rb_17_2_germans_count_one_and_a_half_italians_and_allied_elites_one() -> None:
    roster = SCENARIOS.roster
    assert vi.unit_halves(roster.get("21Pz/5"), RULES) == 3
    assert vi.unit_halves(roster.get("Ariete"), RULES) == 2
    assert roster.get("7/4 Armd").elite and vi.unit_halves(roster.get("7/4 Armd"), RULES) == 2


def test_rb_17_2_decisive_two_to_one_with_germans_counting_one_and_a_half() -> None:
    # 4 Germans = 6 units against 3 Allied units: exactly twice as many.
    pos = position(*units("axis", "Gazala", GERMANS[:4], "X"), *units("allied", "Mersa Matruh", BRITISH[:3], "L"),
                   fortresses={"Tobruk": "allied"})
    result = vi.victory(MAP, pos, S1941, SCENARIOS)
    assert (result.level, result.winner, result.vp) == ("decisive", "axis", 5)
    assert result.halves == {"axis": 12, "allied": 6}
    # 4 Italians against 3 is not Decisive: Tobruk held unbesieged makes it Positional for the Allies.
    pos = position(*units("axis", "Gazala", ITALIANS[:4], "X"), *units("allied", "Mersa Matruh", BRITISH[:3], "L"),
                   fortresses={"Tobruk": "allied"})
    result = vi.victory(MAP, pos, S1941, SCENARIOS)
    assert (result.level, result.winner, result.vp) == ("positional", "allied", 2)


def test_rb_17_victory_hierarchy_example_decisive_overrules_positional() -> None:
    # The Allies hold Tobruk, not besieged; the Axis has twice their units.
    pos = position(*units("axis", "Gazala", ITALIANS[:6], "X"),
                   *units("allied", "Tobruk", BRITISH[:3], "L"),
                   fortresses={"Tobruk": "allied"})
    assert vi.holds_tobruk(MAP, pos) == "allied"
    result = vi.victory(MAP, pos, S1941, SCENARIOS)
    assert (result.level, result.winner, result.vp) == ("decisive", "axis", 5)
    assert any("Decisive" in line for line in result.explanation)


def test_rb_17_3_positional_tobruk_held_and_not_besieged() -> None:
    base = [*units("axis", "Gazala", ITALIANS[:3], "X"), *units("allied", "Tobruk", BRITISH[:5], "L")]
    pos = position(*base, fortresses={"Tobruk": "allied"})
    assert vi.victory(MAP, pos, S1941, SCENARIOS).level == "positional"
    # An Axis unit next to Tobruk besieges it (RB 13.5): only Attrition is left.
    besieged = position(*base, block("XB", "axis", "Acroma", unit="Savona", cv=1), fortresses={"Tobruk": "allied"})
    assert vi.holds_tobruk(MAP, besieged) is None
    result = vi.victory(MAP, besieged, S1941, SCENARIOS)
    assert (result.level, result.winner, result.vp) == ("attrition", "allied", 1)
    # An empty Tobruk is held by its last occupant (RB 13.1, BU-13).
    empty = position(*units("axis", "Gazala", ITALIANS[:3], "X"), *units("allied", "Bardia", BRITISH[:3], "L"),
                     fortresses={"Tobruk": "axis"})
    assert vi.holds_tobruk(MAP, empty) == "axis"
    # Enemy units inside Tobruk (a battle there): it is not held (BU-13).
    fought = position(*base, block("XB", "axis", "Tobruk", unit="Savona", cv=1), fortresses={"Tobruk": "allied"})
    fought = fought.with_battles([Battle(at("Tobruk"), "axis", {})])
    assert vi.holds_tobruk(MAP, fought) is None


def test_rb_17_4_attrition_and_a_tie_is_a_draw() -> None:
    pos = position(*units("axis", "Gazala", ["21Pz/5", "21Pz/3"], "X"),
                   *units("allied", "Mersa Matruh", BRITISH[:3], "L"),
                   block("LB", "allied", "Acroma", unit="4 Ind/5", cv=1), fortresses={"Tobruk": "axis"})
    # 2 Germans = 3 against 4 Allied; Tobruk besieged by the Allied unit at Acroma.
    result = vi.victory(MAP, pos, S1941, SCENARIOS)
    assert (result.level, result.winner, result.vp) == ("attrition", "allied", 1)
    tie = position(*units("axis", "Gazala", ["21Pz/5", "21Pz/3"], "X"),
                   *units("allied", "Mersa Matruh", BRITISH[:3], "L"))
    result = vi.victory(MAP, tie, S1941, SCENARIOS)
    assert (result.level, result.winner, result.vp) == (None, None, 0)
    assert "drawn" in result.explanation[-1]


def test_rb_17_units_off_board_count_and_hidden_units_cannot_be_counted() -> None:
    pos = position(*units("axis", "Gazala", ITALIANS[:2], "X"), *units("allied", "Mersa Matruh", BRITISH[:2], "L"))
    result = vi.victory(MAP, pos, S1941, SCENARIOS, off_board={"allied": ["4 Ind/5"]})
    assert (result.level, result.winner) == ("attrition", "allied")
    hidden = position(block("X", "axis", "Gazala"), *units("allied", "Mersa Matruh", BRITISH[:1], "L"))
    with pytest.raises(ValueError, match="17.2"):
        vi.victory(MAP, hidden, S1941, SCENARIOS)


def test_rb_17_1_strategic_victory_by_controlling_the_enemy_base() -> None:
    pos = position(block("X", "axis", "Alexandria"), block("L", "allied", "Mersa Matruh"))
    result = vi.strategic_victory(MAP, pos, RULES)
    assert result is not None and (result.level, result.winner, result.vp) == ("strategic", "axis", 10)
    # A battle in the Base: the defender keeps control (RB 1.2), no victory yet.
    fight = position(block("X", "axis", "Alexandria"), block("L", "allied", "Alexandria"))
    fight = fight.with_battles([Battle(at("Alexandria"), "axis", {})])
    assert vi.strategic_victory(MAP, fight, RULES) is None
    # It also decides the end-of-game result, over every other level.
    assert vi.victory(MAP, pos, S1941, SCENARIOS).level == "strategic"


def test_rb_17_1_strategic_victory_by_exiting_three_supplied_units() -> None:
    pos = position(block("X", "axis", "Gazala", unit="Brescia"), block("L", "allied", "Mersa Matruh", unit="11H"))
    assert vi.strategic_victory(MAP, pos, RULES, {"allied": 2}) is None
    result = vi.strategic_victory(MAP, pos, RULES, {"allied": 3})
    assert result is not None and (result.level, result.winner) == ("strategic", "allied")


def test_rb_17_counts_are_exact_halves() -> None:
    pos: Position = position(*units("axis", "Gazala", GERMANS[:1], "X"), *units("allied", "Mersa Matruh", [], "L"))
    result = vi.victory(MAP, pos, S1941, SCENARIOS)
    assert result.halves == {"axis": 3, "allied": 0}
    assert "Axis 1.5" in result.explanation[0]
    assert (result.level, result.winner) == ("decisive", "axis")


def test_rb_17_no_supply_check_at_the_end_unsupplied_units_still_count() -> None:
    # BU-14: an Unsupplied Axis unit cut off at the end is still in play.
    pos = position(*units("axis", "Gazala", ITALIANS[:3], "X"),
                   block("XU", "axis", "Siwa", unit="Savona", cv=1, unsupplied=True),
                   *units("allied", "Mersa Matruh", BRITISH[:2], "L"))
    result = vi.victory(MAP, pos, S1941, SCENARIOS)
    assert result.halves == {"axis": 8, "allied": 4}
    assert (result.level, result.winner) == ("decisive", "axis")
