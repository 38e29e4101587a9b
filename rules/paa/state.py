"""§7 Turns and the sequence of play (Table 4) as pure data and functions.

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
Twenty game turns, April 1941 to November 1942; in each the Allied player
turn, then the Axis player turn (§7.1). The game is not registered yet: this
module is the start of its state, with no actions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Literal

import msgspec

from rules.paa.units import Faction
from rules.paa.victory import LAST_TURN, sudden_death

Phase = Literal["supply", "c2", "movement", "attack_supply", "resolution", "reinforcement"]

#: Table 4: the phases of each player turn; the C² phase is the Allies' only (§10).
TABLE_4: dict[Faction, tuple[Phase, ...]] = {
    "allied": ("supply", "c2", "movement", "attack_supply", "resolution", "reinforcement"),
    "axis": ("supply", "movement", "attack_supply", "resolution", "reinforcement"),
}
#: §7.1: the Allied faction completes its turn first.
ORDER: tuple[Faction, Faction] = ("allied", "axis")

PHASE_NAMES: dict[Phase, str] = {
    "supply": "Supply (§8)",
    "c2": "C² (§10)",
    "movement": "Movement (§11)",
    "attack_supply": "Combat: attack supply (§12.3)",
    "resolution": "Combat: resolution (§12.4)",
    "reinforcement": "Replacements & reinforcements (§13)",
}
#: §4: the phases at whose end the stacking limits hold.
STACKING_CHECKED: frozenset[Phase] = frozenset({"movement", "resolution", "reinforcement"})

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


class Step(msgspec.Struct, frozen=True, order=True):
    """A phase of a player turn of a game turn."""

    turn: int
    faction: Faction
    phase: Phase

    def __str__(self) -> str:
        return f"turn {self.turn} ({month(self.turn)}), {self.faction} {PHASE_NAMES[self.phase]}"


FIRST = Step(1, "allied", "supply")


def month(turn: int) -> str:
    """§7, turn track: turn 1 is April 1941, turn 15 June 1942, turn 20 November 1942."""
    if not 1 <= turn <= LAST_TURN:
        raise ValueError(f"§7: turns run 1-{LAST_TURN}, not {turn}")
    index = 3 + turn - 1
    return f"{_MONTHS[index % 12]} {1941 + index // 12}"


def check_step(step: Step) -> None:
    """Raises ValueError unless ``step`` is a phase of Table 4 in a turn 1-20."""
    month(step.turn)
    if step.phase not in TABLE_4[step.faction]:
        raise ValueError(f"Table 4: the {step.faction} turn has no {step.phase} phase")


def next_step(step: Step) -> Step | None:
    """Table 4, §7.1: the phase after ``step``; None after the Axis turn of turn 20 (§14)."""
    check_step(step)
    phases = TABLE_4[step.faction]
    i = phases.index(step.phase)
    if i + 1 < len(phases):
        return Step(step.turn, step.faction, phases[i + 1])
    if step.faction == "allied":
        return Step(step.turn, "axis", TABLE_4["axis"][0])
    if step.turn == LAST_TURN:
        return None
    return Step(step.turn + 1, "allied", TABLE_4["allied"][0])


def steps(start: Step = FIRST) -> Iterator[Step]:
    """Every phase from ``start`` to the end of turn 20, in order."""
    s: Step | None = start
    while s is not None:
        yield s
        s = next_step(s)


def ends_player_turn(step: Step) -> bool:
    return step.phase == TABLE_4[step.faction][-1]


def game_over_after(step: Step, control: Mapping[str, Faction]) -> bool:
    """§14: the game ends after an Axis turn in which the Axis controls
    Alexandria (sudden death), and after the Axis turn of turn 20."""
    if step.faction != "axis" or not ends_player_turn(step):
        return False
    return step.turn == LAST_TURN or sudden_death(control)


def faction_turn_index(turn: int, faction: Faction) -> int:
    """§14.1: the faction turns (half game turns) counted from 0, for the Tobruk hold."""
    month(turn)
    return 2 * (turn - 1) + ORDER.index(faction)
