"""§10 C² (Allied turn only): §10.1 one roll for the map, §10.2 one roll per
hex (Table 7), and the effects of being out of C² (§10.3).

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
The factions choose the method before the game (§10): the option group
``c2 = single | per-hex`` (R-19 for the default).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from msgspec.structs import replace

from pbem.rulesapi import OptionGroup
from rules.paa.mapview import last_digit
from rules.paa.tables import C2_PER_HEX, C2_SINGLE
from rules.paa.units import Piece

Method = Literal["single", "per-hex"]

C2_OPTION = OptionGroup(
    name="c2",
    choices=("single", "per-hex"),
    text="§10: Allied C², one die for the map (§10.1, Table 7 column 2) or one die per hex (§10.2, column 3)",
    default="single",
)


def method_of(value: str) -> Method:
    if value == "single":
        return "single"
    if value == "per-hex":
        return "per-hex"
    raise ValueError(f"§10: C² method is single or per-hex, not {value!r}")


def c2_hexes(pieces: Iterable[Piece]) -> tuple[str, ...]:
    """§10.1-§10.2: the hexes with Allied regular or transport units or supply installations."""
    return tuple(sorted({p.hex for p in pieces if p.faction == "allied"}))


def _check_die(die: int) -> None:
    if die not in C2_SINGLE:
        raise ValueError(f"Table 7: a die shows 1-6, not {die}")


def out_of_c2_single(hexes: Iterable[str], die: int) -> frozenset[str]:
    """§10.1: one die; every hex whose last digit is in Table 7's second column for it is out of C²."""
    _check_die(die)
    return frozenset(h for h in hexes if last_digit(h) in C2_SINGLE[die])


def out_of_c2_per_hex(dice: Mapping[str, int]) -> frozenset[str]:
    """§10.2: one die per hex; the hex is out of C² if its last digit is in
    Table 7's third column for its own die."""
    for d in dice.values():
        _check_die(d)
    return frozenset(h for h, d in dice.items() if last_digit(h) in C2_PER_HEX[d])


def out_of_c2(method: Method, pieces: Iterable[Piece], dice: Mapping[str, int] | int) -> frozenset[str]:
    """§10: the hexes whose Allied units are out of C², by the chosen method.
    ``dice``: one die (single) or hex -> die for exactly the C² hexes (per-hex).
    No hex is exempt (§10)."""
    hexes = c2_hexes(pieces)
    if method == "single":
        if not isinstance(dice, int):
            raise ValueError("§10.1: the single method takes one die")
        return out_of_c2_single(hexes, dice)
    if isinstance(dice, int) or set(dice) != set(hexes):
        raise ValueError(f"§10.2: one die for each hex with Allied units: {', '.join(hexes)}")
    return out_of_c2_per_hex(dice)


def dice_needed(method: Method, pieces: Iterable[Piece]) -> int:
    """§10.1-§10.2: how many dice the C² phase rolls."""
    return 1 if method == "single" else len(c2_hexes(pieces))


def mark_out_of_c2(pieces: Iterable[Piece], hexes: frozenset[str]) -> tuple[Piece, ...]:
    """§10.3: Allied units and installations in ``hexes`` are out of C² until the end of the Allied turn."""
    return tuple(replace(p, ooc2=True) if p.faction == "allied" and p.hex in hexes else p for p in pieces)


def end_of_allied_turn(pieces: Iterable[Piece]) -> tuple[Piece, ...]:
    """§10.3: the OOC² state ends with the Allied turn (dismounted units stay flipped, §13.6)."""
    return tuple(replace(p, ooc2=False) if p.ooc2 else p for p in pieces)
