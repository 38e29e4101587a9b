"""PAA §7 sequence of play (Table 4)."""

from __future__ import annotations

import pytest

from rules.paa.state import (
    FIRST,
    Step,
    check_step,
    faction_turn_index,
    game_over_after,
    month,
    next_step,
    steps,
)
from rules.paa.units import Faction


def test_table_4_allied_then_axis_s7_1() -> None:
    got = [(s.faction, s.phase) for s in steps() if s.turn == 1]
    assert got == [
        ("allied", "supply"), ("allied", "c2"), ("allied", "movement"), ("allied", "attack_supply"),
        ("allied", "resolution"), ("allied", "reinforcement"),
        ("axis", "supply"), ("axis", "movement"), ("axis", "attack_supply"), ("axis", "resolution"),
        ("axis", "reinforcement"),
    ]
    assert next_step(Step(1, "axis", "reinforcement")) == Step(2, "allied", "supply")


def test_twenty_turns_and_their_months_s7() -> None:
    all_steps = list(steps())
    assert all_steps[0] == FIRST and all_steps[-1] == Step(20, "axis", "reinforcement")
    assert len(all_steps) == 20 * 11
    assert (month(1), month(15), month(20)) == ("April 1941", "June 1942", "November 1942")
    with pytest.raises(ValueError, match="§7"):
        month(21)
    with pytest.raises(ValueError, match="Table 4"):
        check_step(Step(3, "axis", "c2"))


def test_sudden_death_and_end_s14() -> None:
    axis_alex: dict[str, Faction] = {"1351": "axis"}
    usual: dict[str, Faction] = {"1351": "allied"}
    assert game_over_after(Step(9, "axis", "reinforcement"), axis_alex)
    assert not game_over_after(Step(9, "axis", "resolution"), axis_alex)
    assert not game_over_after(Step(9, "allied", "reinforcement"), axis_alex)
    assert not game_over_after(Step(9, "axis", "reinforcement"), usual)
    assert game_over_after(Step(20, "axis", "reinforcement"), usual)
    assert (faction_turn_index(1, "allied"), faction_turn_index(1, "axis"), faction_turn_index(20, "axis")) == (0, 1, 39)
