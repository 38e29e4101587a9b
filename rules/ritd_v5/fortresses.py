"""Fortresses (RB 13): the Fortress hexes, combat in a Pass Turn (RB 13.2
sidebar), capture and Captured Supply (RB 13.4), Port Capacity (RB 13.3)
and Besieged Fortresses (RB 13.5). Fortress double dice are part of the
Combat Round (rules.ritd_v5.combat_round). Decisions: CB-12, CB-13.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import msgspec

from rules.ritd_v5.hexmap import HexMap
from rules.ritd_v5.position import Position, Side, enemy_of

# ------------------------------------------------------------------ Fortresses (RB 13)


#: (map, its Fortress hexes) for the maps asked about (one in play): a map never changes.
_FORTRESS_HEXES: list[tuple[HexMap, tuple[str, ...]]] = []


def fortress_hexes(m: HexMap) -> tuple[str, ...]:
    """Every Fortress hex of the map (RB 1.7, 13), sorted."""
    for known, hexes in _FORTRESS_HEXES:
        if known is m:
            return hexes
    hexes = tuple(sorted(h for h in m.playable_hexes() if m.fortress(h) is not None))
    _FORTRESS_HEXES.append((m, hexes))
    del _FORTRESS_HEXES[:-4]
    return hexes


def pass_turn_fortress_battles(pos: Position, side: Side, fortresses: Iterable[str]) -> tuple[str, ...]:
    """Fortress battles ``side`` attacks: in a Pass Turn it must Withdraw from
    them, as no combat is allowed (RB 13.2 sidebar, 8 sidebar)."""
    forts = set(fortresses)
    return tuple(sorted(b.hex for b in pos.battles if b.hex in forts and b.attacker == side))


def pass_turn_fortress_routs(pos: Position, side: Side, fortresses: Iterable[str]) -> tuple[str, ...]:
    """At the end of a Pass Turn's movement, ``side``'s units still in a
    Fortress battle it attacks are Routed (RB 13.2 sidebar; CB-12)."""
    return tuple(b.token for h in pass_turn_fortress_battles(pos, side, fortresses)
                 for b in pos.blocks_in(h, side))


def fortress_captures(pos: Position, fortresses: Iterable[str]) -> dict[str, Side]:
    """Fortresses that change hands at the end of a Player-Turn: a side's
    Undisrupted units are the sole occupants of one the other side controls
    (RB 13.4; CB-13). Fortress -> new owner."""
    out: dict[str, Side] = {}
    for h in fortresses:
        here = pos.blocks_in(h)
        sides = {b.side for b in here}
        if len(sides) != 1 or not any(not b.disrupted for b in here):
            continue
        side = next(iter(sides))
        if pos.fortresses.get(h) not in (None, side):
            out[h] = side
    return dict(sorted(out.items()))


def apply_captures(pos: Position, captures: Mapping[str, Side]) -> Position:
    return msgspec.structs.replace(pos, fortresses={**pos.fortresses, **captures})


class Capture(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    fortress: str
    side: Side  # the new owner


class CaptureLedger(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Fortress captures in the current Month (RB 13.4): who owned each
    Fortress when the Month began, and the captures since, in order."""

    month: int
    owners_at_start: dict[str, Side] = {}
    captures: tuple[Capture, ...] = ()


def start_month_ledger(month: int, fortresses: Mapping[str, Side]) -> CaptureLedger:
    return CaptureLedger(month, dict(fortresses))


def record_captures(ledger: CaptureLedger, captures: Mapping[str, Side]) -> CaptureLedger:
    return msgspec.structs.replace(
        ledger, captures=ledger.captures + tuple(Capture(h, s) for h, s in sorted(captures.items())))


def captured_supply(ledger: CaptureLedger, port_capacity: Callable[[str, Side], int]) -> dict[Side, int]:
    """Bonus Supply Cards for the next Buildup (RB 13.4): for each Fortress
    captured this Month and not back with its owner at the Month's start, the
    last captor gets the enemy's Port Capacity there, once (RB 13 sidebar
    "Captured Supply"). ``port_capacity(fortress, side)`` is ``side``'s
    capacity (RB 13.3)."""
    bonus: dict[Side, int] = {"axis": 0, "allied": 0}
    final: dict[str, Side] = {}
    for c in ledger.captures:
        final[c.fortress] = c.side
    for h, side in sorted(final.items()):
        if ledger.owners_at_start.get(h) == side:
            continue
        bonus[side] += port_capacity(h, enemy_of(side))
    return bonus


def map_port_capacity(m: HexMap) -> Callable[[str, Side], int]:
    """``port_capacity`` for ``captured_supply`` from the map's Fortresses (RB 13.3)."""
    def cap(hex_: str, side: Side) -> int:
        f = m.fortress(hex_)
        if f is None:
            return 0
        value = f.port_axis if side == "axis" else f.port_allied
        return value or 0
    return cap


def is_besieged(m: HexMap, pos: Position, fortress: str, side: Side) -> bool:
    """RB 13.5: a ``side`` Fortress is besieged if any adjacent hex holds
    enemy units (an enemy or battle hex). Bases are never besieged (BU-07).
    The one definition: Sea Redeployment (RB 16.53) and Tobruk's Positional
    Victory (RB 17.3) ask it."""
    if m.fortress(fortress) is None:
        return False
    return any(pos.blocks_in(n, enemy_of(side)) for _, n in m.neighbours(fortress))
