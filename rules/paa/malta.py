"""§9 Malta invasion (Table 6) and its consequences.

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from pbem.rulesapi import Problem
from rules.paa.mapview import MapView
from rules.paa.tables import MALTA_SUCCESS, MaltaStatus
from rules.paa.units import Piece

MALTA_TURN = 15


def declaration_problems(turn: int, phase: str) -> list[Problem]:
    """§8, §9: the Axis declares the attempt on turn 15, no later than its
    supply phase (R-20: the declaration and its roll belong to that phase)."""
    if turn != MALTA_TURN or phase != "supply":
        return [Problem("§9", f"the invasion of Malta is declared in the Axis supply phase of turn {MALTA_TURN} only")]
    return []


def allied_good_order_in_libya(board: MapView, pieces: Iterable[Piece], in_supply: Collection[str]) -> bool:
    """§9 (R-03): whether any in-supply ("good order") Allied regular unit is in Libya."""
    return any(p.faction == "allied" and p.is_regular and p.hex in board.libya and p.id in in_supply for p in pieces)


def invasion_result(die: int, *, allied_in_libya: bool) -> MaltaStatus:
    """Table 6, §9: success on 1-2 with good-order Allied regular units in Libya, on 1-4 without."""
    if not 1 <= die <= 6:
        raise ValueError(f"Table 6: a die shows 1-6, not {die}")
    return "success" if die in MALTA_SUCCESS[allied_in_libya] else "failure"


def crossing_problems(board: MapView, turn: int, status: MaltaStatus, piece: Piece, path: Sequence[str]) -> list[Problem]:
    """§9: after an attempt (success or failure) no Axis regular or transport
    unit may cross from Libya into Egypt in the movement phase of turn 15;
    units already in Egypt move as normal."""
    if turn != MALTA_TURN or status == "none" or piece.faction != "axis" or piece.kind == "installation":
        return []
    for a, b in zip(path, path[1:], strict=False):
        if a in board.libya and b not in board.libya:
            return [Problem("§9", f"{piece.id} may not cross from Libya ({a}) into Egypt ({b}) on turn 15 after the Malta attempt")]
    return []
