"""§5 Control and §5.1 bases.

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rules.paa.mapview import ALEXANDRIA, EL_AGHEILA, TOBRUK
from rules.paa.units import Faction, Piece

#: §6: the hexes whose control the rules track with markers (El Agheila, Tobruk, Alexandria).
MARKED = (EL_AGHEILA, TOBRUK, ALEXANDRIA)


def after_passage(control: Mapping[str, Faction], piece: Piece, path: Iterable[str]) -> dict[str, Faction]:
    """§5: a hex belongs to the faction whose regular unit last occupied or
    moved through it; supply installations and transport units change nothing."""
    out = dict(control)
    if piece.is_regular:
        for h in path:
            out[h] = piece.faction
    return out


def after_placement(control: Mapping[str, Faction], pieces: Iterable[Piece]) -> dict[str, Faction]:
    """§5: every hex occupied by a regular unit is controlled by its faction."""
    out = dict(control)
    for p in pieces:
        if p.is_regular:
            out[p.hex] = p.faction
    return out


def controls_base(control: Mapping[str, Faction], faction: Faction, centre: str) -> bool:
    """§5.1: a faction controls a base if it controls the base's centre hex (0702 or 1351)."""
    return control.get(centre) == faction
