"""Victory Conditions (RB 17.0-17.4).

Pure functions over ``Position`` and the scenario data; integers only:
unit counts are kept in half units, so a German unit (1.5, RB 17.2) is 3
and any other unit 2.

``strategic_victory`` is the sudden-death test (RB 17.1) the state machine
runs after every action; ``victory`` judges the end of the game, highest
level first (a higher level overrules a lower one, RB 17.0). Decisions on
the rulebook's gaps: decisions/buildup.md (BU-10..BU-15).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import msgspec

from rules.ritd.fortresses import is_besieged
from rules.ritd.hexmap import HexMap
from rules.ritd.position import SIDES, Position, Side, enemy_of
from rules.ritd.scenarios import Scenario, Scenarios, Victory
from rules.ritd.units import Roster, Unit

LevelId = Literal["strategic", "decisive", "positional", "attrition"]
#: RB 17.3: the Fortress of Positional Victory.
TOBRUK = "Tobruk"
#: Counts are in half units (RB 17.2 "1.5 units").
HALF = 2


class VictoryResult(msgspec.Struct, frozen=True):
    """The level reached (None: no level, a draw), its winner, its VPs
    (RB 17.0 "for tournament purposes") and why, line by line.
    ``halves``: each side's units in play, in half units."""

    level: LevelId | None
    winner: Side | None
    vp: int
    explanation: tuple[str, ...]
    halves: dict[str, int] = {}

    @property
    def rule(self) -> str:
        return {"strategic": "RB 17.1", "decisive": "RB 17.2", "positional": "RB 17.3",
                "attrition": "RB 17.4", None: "RB 17.0"}[self.level]


def _vp(rules: Victory, level: LevelId) -> int:
    for lv in rules.levels:
        if lv.id == level:
            return lv.vp
    raise ValueError(f"scenarios.toml has no victory level {level!r}")


def unit_halves(unit: Unit, rules: Victory) -> int:
    """RB 17.2, 17.4: a unit's count in half units: German 1.5 (not Italians
    or Allied elites), any other unit 1. Raises ValueError if the data's
    German value is not a whole number of halves."""
    if unit.nationality != "german":
        return HALF
    num, den = rules.german_unit_value_num * HALF, rules.german_unit_value_den
    if num % den:
        raise ValueError(f"German unit value {rules.german_unit_value} is not a whole number of halves")
    return num // den


def units_in_play(pos: Position, side: Side, off_board: Sequence[str] = ()) -> tuple[str, ...]:
    """RB 17.2: the unit names of ``side`` in play: every block on the map
    plus ``off_board`` (Refitting units, Reinforcements waiting at an engaged
    Base; BU-12). Raises ValueError for a block whose identity is unknown
    (count after every identity is opened)."""
    names = []
    for b in pos.blocks_of(side):
        if not b.unit:
            raise ValueError(f"RB 17.2: the identity of {b.token} is not open; units cannot be counted")
        names.append(b.unit)
    return (*names, *off_board)


def count_halves(roster: Roster, rules: Victory, names: Sequence[str]) -> int:
    """RB 17.2, 17.4: the count of these units in half units."""
    return sum(unit_halves(roster.get(n), rules) for n in names)


def _fmt(halves: int) -> str:
    return str(halves // HALF) + (".5" if halves % HALF else "")


def holds_tobruk(m: HexMap, pos: Position) -> Side | None:
    """RB 17.3: the side holding Tobruk unbesieged at the game's end, if any.

    Holding = controlling (RB 1.2, 13.1: the last occupant, so an empty
    Tobruk counts) with no enemy unit in the hex; not besieged = no enemy
    unit in any adjacent hex (RB 13.5). BU-13.
    """
    tobruk = m.resolve(TOBRUK)
    side = pos.controller(tobruk)
    if side is None or pos.blocks_in(tobruk, enemy_of(side)):
        return None
    if is_besieged(m, pos, tobruk, side):
        return None
    return side


def strategic_victory(m: HexMap, pos: Position, rules: Victory,
                      exited: Mapping[str, int] | None = None) -> VictoryResult | None:
    """RB 17.1 sudden death, run after every action: a side controls (RB 1.2)
    the enemy Base, or has exited ``rules.strategic_exit_units`` (3) or more
    Supplied units off the enemy map-end (``exited``: Supplied units exited
    so far in the game, BU-11). None if neither holds."""
    exited = exited or {}
    vp = _vp(rules, "strategic")
    for side in SIDES:
        base = m.base(enemy_of(side))
        if pos.controller(base) == side:
            return VictoryResult("strategic", side, vp, (
                f"RB 17.1: the {side} player controls the enemy Base {m.name(base)}: "
                f"Strategic Victory, the game ends at once ({vp} VP)",))
        n = exited.get(side, 0)
        if n >= rules.strategic_exit_units:
            return VictoryResult("strategic", side, vp, (
                f"RB 17.1: the {side} player has exited {n} Supplied units off the enemy map-end "
                f"(3 needed): Strategic Victory, the game ends at once ({vp} VP)",))
    return None


def victory(m: HexMap, pos: Position, scenario: Scenario, scenarios: Scenarios, *,
            off_board: Mapping[Side, Sequence[str]] | None = None,
            exited: Mapping[str, int] | None = None) -> VictoryResult:
    """RB 17.0-17.4: the level of victory at the end of ``scenario``, highest
    level first. ``off_board``: unit names of each side in play but not on
    the map (BU-12); ``exited``: Supplied units exited so far (RB 17.1).

    Counted as the position stands: no extra Supply Check (BU-14). A tie
    in unit count with no other level is a draw (level None, BU-15).
    """
    rules = scenarios.victory
    sudden = strategic_victory(m, pos, rules, exited)
    if sudden is not None:
        return sudden
    off_board = off_board or {}
    halves = {s: count_halves(scenarios.roster, rules, units_in_play(pos, s, off_board.get(s, ())))
              for s in SIDES}
    lines = [f"RB 17.0: end of the {scenario.name} (Month {scenario.end_month}); units in play "
             f"(German units count 1.5): Axis {_fmt(halves['axis'])}, Allied {_fmt(halves['allied'])}"]
    out = {"axis": halves["axis"], "allied": halves["allied"]}
    ratio = rules.decisive_ratio
    for side in SIDES:
        mine, theirs = halves[side], halves[enemy_of(side)]
        if mine > 0 and mine >= ratio * theirs:
            vp = _vp(rules, "decisive")
            lines.append(f"RB 17.2: the {side} player has at least {ratio} times the opponent's units "
                         f"({_fmt(mine)} to {_fmt(theirs)}): Decisive Victory ({vp} VP); it overrules "
                         f"lower levels")
            return VictoryResult("decisive", side, vp, tuple(lines), out)
    lines.append(f"RB 17.2: no side has {ratio} times the other's units")
    holder = holds_tobruk(m, pos)
    if holder is not None:
        vp = _vp(rules, "positional")
        lines.append(f"RB 17.3: the {holder} player holds Tobruk and it is not besieged: "
                     f"Positional Victory ({vp} VP); it overrules Attrition")
        return VictoryResult("positional", holder, vp, tuple(lines), out)
    lines.append("RB 17.3: nobody holds Tobruk unbesieged")
    for side in SIDES:
        if halves[side] > halves[enemy_of(side)]:
            vp = _vp(rules, "attrition")
            lines.append(f"RB 17.4: the {side} player has more units in play: Attrition Victory ({vp} VP)")
            return VictoryResult("attrition", side, vp, tuple(lines), out)
    lines.append("RB 17.4: equal unit counts: no level of victory is reached, the game is drawn")
    return VictoryResult(None, None, 0, tuple(lines), out)
