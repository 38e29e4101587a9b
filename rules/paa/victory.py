"""§14 Victory: sudden death, the victory calculation (§14.1, Table 12),
draws and the optional Tobruk modifier.

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

import msgspec

from rules.paa.mapview import ALEXANDRIA, EL_AGHEILA
from rules.paa.reinforcements import penalty_deduction
from rules.paa.tables import TABLE_12, TOBRUK_HOLD_TURNS, Condition, Level, VictoryRow
from rules.paa.units import Faction, Piece

#: §14.1: the AHGC Tobruk modifier is on unless the factions agree to drop it.
NO_TOBRUK_OPTION = "no-tobruk-hold"
LAST_TURN = 20


class Result(msgspec.Struct, frozen=True):
    """A game result: ``winner`` None is a draw (``level`` then None)."""

    winner: Faction | None
    level: Level | None

    def __str__(self) -> str:
        if self.winner is None:
            return "draw"
        name = {"D": "decisive", "S": "substantive", "M": "marginal"}[self.level or "M"]
        return f"{self.winner} {name} victory"


DRAW = Result(None, None)


def sudden_death(control: Mapping[str, Faction]) -> bool:
    """§14: the game ends at the end of an Axis turn in which the Axis controls Alexandria."""
    return control.get(ALEXANDRIA) == "axis"


def cf_on_map(pieces: Iterable[Piece], faction: Faction, in_supply: Iterable[str]) -> int:
    """§14.1: Σ CF of the faction's in-supply regular units on the map (not
    OOS, not dismounted; the Cadre is off the map)."""
    ok = set(in_supply)
    return sum(p.cf for p in pieces if p.faction == faction and p.is_regular and p.id in ok
               and not p.oos and not p.dismounted)


def cf_victory(on_map: int, penalty: int) -> int:
    """§14.1: CF_victory = CF_on-map − ⌈3/2 CF_penalty⌉."""
    return on_map - penalty_deduction(penalty)


def cf_ratio(allied: int, axis: int) -> Fraction | None:
    """§14.1: CF_ratio = Allied CF_victory / Axis CF_victory, exact. R-23:
    adjusted CFs below 0 count as 0; an Axis 0 against an Allied CF above 0
    is an unbounded ratio (None); 0 against 0 is ratio 1."""
    a, x = max(0, allied), max(0, axis)
    if x == 0:
        return None if a > 0 else Fraction(1)
    return Fraction(a, x)


def _in_row(row: VictoryRow, ratio: Fraction | None) -> bool:
    if ratio is None:
        return row.high is None
    if row.low is not None and (ratio < row.low or (ratio == row.low and not row.low_inclusive)):
        return False
    return row.high is None or ratio < row.high or (ratio == row.high and row.high_inclusive)


def _met(condition: Condition, control: Mapping[str, Faction]) -> bool:
    alex, agheila = control[ALEXANDRIA], control[EL_AGHEILA]
    if condition == "allied_alexandria":
        return alex == "allied"
    if condition == "allied_both":
        return alex == "allied" and agheila == "allied"
    if condition == "axis_either":
        return alex == "axis" or agheila == "axis"
    return alex == "axis" and agheila == "axis"


def table_12(ratio: Fraction | None, control: Mapping[str, Faction]) -> Result:
    """Table 12 (R-08): the winner and level for a CF ratio and control of
    Alexandria (1351) and El Agheila (0702); no condition met is a draw (§14.1)."""
    for key in (ALEXANDRIA, EL_AGHEILA):
        if key not in control:
            raise ValueError(f"§14.1: control of {key} is needed")
    for row in TABLE_12:
        if _in_row(row, ratio):
            for condition, winner, level in row.outcomes:
                if _met(condition, control):
                    return Result(winner, level)
            return DRAW
    raise AssertionError(f"Table 12 covers every ratio, not {ratio}")


#: §14.1: the result ladder the Tobruk modifier moves along, Axis best first.
LADDER: tuple[Result, ...] = (
    Result("axis", "D"), Result("axis", "S"), Result("axis", "M"), DRAW,
    Result("allied", "M"), Result("allied", "S"), Result("allied", "D"),
)


def longest_hold(holders: Sequence[Faction | None]) -> dict[Faction, int]:
    """§14.1: the longest run of consecutive faction turns each faction controlled
    Tobruk, from the controller at the end of every faction turn in order."""
    best: dict[Faction, int] = {"allied": 0, "axis": 0}
    run, last = 0, None
    for h in holders:
        run = run + 1 if h == last else 1
        last = h
        if h is not None:
            best[h] = max(best[h], run)
    return best


def tobruk_modifier(result: Result, holders: Sequence[Faction | None]) -> Result:
    """§14.1 (AHGC, optional; R-09): at the end of turn 20, a faction that
    held Tobruk for at least 21 consecutive faction turns moves the result
    one step in its favour."""
    runs = longest_hold(holders)
    i = LADDER.index(result)
    steps: tuple[tuple[Faction, int], ...] = (("allied", 1), ("axis", -1))
    for faction, step in steps:
        if runs[faction] >= TOBRUK_HOLD_TURNS:
            i = min(max(i + step, 0), len(LADDER) - 1)
    return LADDER[i]


def victory(
    *,
    allied_on_map: int,
    axis_on_map: int,
    allied_penalty: int,
    axis_penalty: int,
    control: Mapping[str, Faction],
    turn: int,
    tobruk_holders: Sequence[Faction | None] = (),
    tobruk_modifier_on: bool = True,
) -> Result:
    """§14, §14.1: the result when the game ends (sudden death or after turn
    20). The Tobruk modifier applies only when the game ends on turn 20."""
    ratio = cf_ratio(cf_victory(allied_on_map, allied_penalty), cf_victory(axis_on_map, axis_penalty))
    result = table_12(ratio, control)
    if tobruk_modifier_on and turn == LAST_TURN:
        result = tobruk_modifier(result, tobruk_holders)
    return result
