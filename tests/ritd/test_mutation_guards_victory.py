"""Victory Conditions (rules/ritd/victory.py; RB 17.0-17.4), the parts the
rulebook-example tests in test_victory.py leave open (issue 29: mutation
score): the rule each level cites, the explanation a player reads, the
boundaries of the counts, and the result kept in the game state."""

from __future__ import annotations

import msgspec
import pytest

from rules.ritd import game as ritd
from rules.ritd import victory as vi
from rules.ritd.position import Block, Side
from rules.ritd.scenarios import load_scenarios
from tests.ritd.movement_support import MAP, block, position

SCENARIOS = load_scenarios()
RULES = SCENARIOS.victory
S1941 = SCENARIOS.get("1941")
ITALIANS = ["Brescia", "Pavia", "Bologna", "Savona", "Sabratha", "Trento"]
BRITISH = ["7/4 Armd", "7 SG", "11H", "4 Ind/5", "4 Ind/11", "7/7 Tk"]


def units(side: Side, where: str, names: list[str], prefix: str) -> list[Block]:
    return [block(f"{prefix}{i}", side, where, unit=n, cv=1) for i, n in enumerate(names)]


@pytest.mark.parametrize("level,rule", [("strategic", "RB 17.1"), ("decisive", "RB 17.2"),
                                        ("positional", "RB 17.3"), ("attrition", "RB 17.4"), (None, "RB 17.0")])
def test_rb_17_each_level_of_victory_cites_its_rule(level, rule) -> None:
    assert vi.VictoryResult(level, None, 0, ()).rule == rule


@pytest.mark.parametrize("level", ["strategic", "decisive", "positional", "attrition", None])
def test_rb_17_the_result_kept_in_the_game_state_survives_the_replay_cache(level) -> None:
    """The end-of-game result is part of the state (RB 17.0); the replay
    cache restores the state by decoding its JSON, for every level."""
    result = vi.VictoryResult(level, "axis" if level else None, 1, ("why",), {"axis": 2, "allied": 2})
    state = msgspec.structs.replace(ritd.initial_state("1941", ()), result=result)
    assert msgspec.json.decode(msgspec.json.encode(state), type=ritd.State).result == result


def test_rb_17_2_german_units_count_in_whole_halves_or_the_data_is_refused() -> None:
    german = SCENARIOS.roster.get("21Pz/5")
    assert vi.unit_halves(german, RULES) == 3
    odd = msgspec.structs.replace(RULES, german_unit_value_num=4, german_unit_value_den=3)
    with pytest.raises(ValueError, match="not a whole number of halves"):
        vi.unit_halves(german, odd)
    double = msgspec.structs.replace(RULES, german_unit_value_num=2, german_unit_value_den=1)
    assert vi.unit_halves(german, double) == 4
    assert vi.unit_halves(SCENARIOS.roster.get("Ariete"), odd) == 2  # not German: always one unit


def test_rb_17_2_no_units_on_either_side_is_no_decisive_victory() -> None:
    """Twice nothing is nothing: with no units at all no side has a Decisive
    Victory; nobody holds Tobruk unbesieged, the counts are equal: a draw."""
    pos = position()
    result = vi.victory(MAP, pos, S1941, SCENARIOS)
    assert (result.level, result.winner, result.vp) == (None, None, 0)
    assert result.halves == {"axis": 0, "allied": 0}


def test_rb_17_explanation_walks_down_the_levels_to_the_one_reached() -> None:
    # Attrition: 3 Italians against 4 Allied units, Tobruk besieged by the Allied unit at Acroma.
    pos = position(*units("axis", "Gazala", ITALIANS[:3], "X"), *units("allied", "Mersa Matruh", BRITISH[:3], "L"),
                   block("LB", "allied", "Acroma", unit="4 Ind/11", cv=1), fortresses={"Tobruk": "axis"})
    result = vi.victory(MAP, pos, S1941, SCENARIOS)
    assert (result.level, result.winner, result.vp) == ("attrition", "allied", 1)
    assert [line[:7] for line in result.explanation] == ["RB 17.0", "RB 17.2", "RB 17.3", "RB 17.4"]
    assert "Axis 3, Allied 4" in result.explanation[0]
    assert result.explanation[1] == "RB 17.2: no side has 2 times the other's units"
    assert result.explanation[2] == "RB 17.3: nobody holds Tobruk unbesieged"
    assert "allied player has more units in play: Attrition Victory (1 VP)" in result.explanation[3]
    # Positional: the explanation ends at RB 17.3 and names the holder.
    held = position(*units("axis", "Gazala", ITALIANS[:3], "X"), *units("allied", "Tobruk", BRITISH[:4], "L"),
                    fortresses={"Tobruk": "allied"})
    result = vi.victory(MAP, held, S1941, SCENARIOS)
    assert result.level == "positional"
    assert [line[:7] for line in result.explanation] == ["RB 17.0", "RB 17.2", "RB 17.3"]
    assert "the allied player holds Tobruk and it is not besieged" in result.explanation[-1]
    # A draw: equal counts, Tobruk besieged.
    tie = position(*units("axis", "Gazala", ITALIANS[:4], "X"), *units("allied", "Mersa Matruh", BRITISH[:3], "L"),
                   block("LB", "allied", "Acroma", unit="4 Ind/11", cv=1), fortresses={"Tobruk": "axis"})
    result = vi.victory(MAP, tie, S1941, SCENARIOS)
    assert (result.level, result.winner) == (None, None)
    assert [line[:7] for line in result.explanation] == ["RB 17.0", "RB 17.2", "RB 17.3", "RB 17.4"]
    assert result.explanation[-1] == "RB 17.4: equal unit counts: no level of victory is reached, the game is drawn"


def test_rb_17_4_attrition_for_the_axis_too() -> None:
    pos = position(*units("axis", "Gazala", ITALIANS[:5], "X"), *units("allied", "Mersa Matruh", BRITISH[:3], "L"),
                   block("LB", "allied", "Acroma", unit="4 Ind/11", cv=1), fortresses={"Tobruk": "axis"})
    result = vi.victory(MAP, pos, S1941, SCENARIOS)
    assert (result.level, result.winner, result.vp) == ("attrition", "axis", 1)


def test_rb_17_1_strategic_victory_explains_itself_and_needs_no_exits_given() -> None:
    pos = position(block("X", "axis", "Alexandria"), block("L", "allied", "Mersa Matruh"))
    result = vi.strategic_victory(MAP, pos, RULES)
    assert result is not None and result.explanation[0].startswith("RB 17.1: the axis player controls the enemy Base")
    quiet = position(block("X", "axis", "Gazala"), block("L", "allied", "Mersa Matruh"))
    assert vi.strategic_victory(MAP, quiet, RULES) is None
    assert vi.strategic_victory(MAP, quiet, RULES, {}) is None
    out = vi.strategic_victory(MAP, quiet, RULES, {"axis": 3})
    assert out is not None and out.winner == "axis" and "exited 3 Supplied units" in out.explanation[0]
