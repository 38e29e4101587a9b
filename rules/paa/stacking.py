"""§4 Stacking.

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
Limits hold at the *end* of the movement, combat and replacement &
reinforcement phases; during them they may be broken (§4).
"""

from __future__ import annotations

from collections.abc import Iterable

from pbem.rulesapi import Problem
from rules.paa.mapview import BARDIA
from rules.paa.units import Piece

#: §4: regular units per hex, and the Bardia exception.
STACK_LIMIT = 3
BARDIA_LIMIT = 2
INSTALLATION_LIMIT = 1


def regular_limit(hex_id: str) -> int:
    """§4: at most three friendly regular units, two in Bardia (1730)."""
    return BARDIA_LIMIT if hex_id == BARDIA else STACK_LIMIT


def stacking_problems(pieces: Iterable[Piece]) -> list[Problem]:
    """§4: every hex whose friendly stack breaks a limit at the end of a phase.
    Transport units and installations are not regular units; at most one
    supply installation per hex."""
    regular: dict[tuple[str, str], list[str]] = {}
    installs: dict[tuple[str, str], list[str]] = {}
    for p in pieces:
        if p.is_regular:
            regular.setdefault((p.hex, p.faction), []).append(p.id)
        elif p.kind == "installation":
            installs.setdefault((p.hex, p.faction), []).append(p.id)
    out: list[Problem] = []
    for (h, faction), ids in sorted(regular.items()):
        limit = regular_limit(h)
        if len(ids) > limit:
            out.append(Problem("§4", f"{len(ids)} {faction} regular units in {h} ({', '.join(ids)}); at most {limit}"))
    for (h, faction), ids in sorted(installs.items()):
        if len(ids) > INSTALLATION_LIMIT:
            out.append(Problem("§4", f"{len(ids)} {faction} supply installations in {h}; at most one"))
    return out
