"""Pieces on the map as the rules see them (§2.3).

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
A ``Piece`` is one counter on the map: a regular unit (infantry or armoured
category, Table 3), a transport unit or a supply installation (§2.3.2). Its
``cf`` is the nominal (front) CF, reinforcements included (§12.4.5, §13.4);
its flipped state (OOS, OOC², dismounted) halves what it shows (§2.3.1).
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Literal

import msgspec

Faction = Literal["axis", "allied"]
Kind = Literal["infantry", "armoured", "transport", "installation"]
Category = Literal["infantry", "armoured"]

FACTIONS: tuple[Faction, Faction] = ("allied", "axis")


def enemy_of(faction: Faction) -> Faction:
    return "axis" if faction == "allied" else "allied"


class Piece(msgspec.Struct, frozen=True):
    """One counter on the map. ``cf``: nominal CF (§12.4.5); ``mf``: MF (§2.3.1)."""

    id: str
    faction: Faction
    nation: str
    kind: Kind
    cf: int
    mf: int
    hex: str
    oos: bool = False
    ooc2: bool = False
    dismounted: bool = False

    @property
    def is_regular(self) -> bool:
        """§2.3.1: infantry and armoured units are regular units."""
        return self.kind in ("infantry", "armoured")

    @property
    def is_german(self) -> bool:
        return self.nation == "DE"

    @property
    def is_italian(self) -> bool:
        return self.nation == "IT"


#: Unit types of Table 3 and their category; also the short words an OOB may use.
_KINDS: dict[str, Kind] = {
    "infantry": "infantry",
    "motorised infantry": "infantry",
    "airborne infantry": "infantry",
    "air assault infantry": "infantry",
    "armoured": "armoured",
    "armour": "armoured",
    "mechanised infantry": "armoured",
    "mechanised reconnaissance": "armoured",
    "transport": "transport",
    "lorry": "transport",
    "installation": "installation",
    "supply installation": "installation",
}


def kind_of(unit_type: str) -> Kind:
    """Table 3: the category of a unit type. Raises ValueError on an unknown type."""
    try:
        return _KINDS[unit_type.strip().casefold()]
    except KeyError:
        raise ValueError(f"Table 3: unknown unit type {unit_type!r}") from None


def current_cf(piece: Piece) -> Fraction:
    """§2.3.1, §13.6: the CF the counter shows: half the nominal CF when it is
    flipped for OOS or dismounted (OOC² also flips, but only in the Allied
    turn, when Allied units never defend; counter-attacks use full CF, §12.4.4)."""
    if piece.oos or piece.dismounted:
        return Fraction(piece.cf, 2)
    return Fraction(piece.cf)


def at(pieces: Iterable[Piece], hex_id: str) -> tuple[Piece, ...]:
    return tuple(p for p in pieces if p.hex == hex_id)


def regulars(pieces: Iterable[Piece], faction: Faction | None = None) -> tuple[Piece, ...]:
    return tuple(p for p in pieces if p.is_regular and (faction is None or p.faction == faction))
