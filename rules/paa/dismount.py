"""§13.6 Dismount and remount.

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
Units of 10 CF or more, adjacent and all on the same road or track, may
dismount and free a transport unit from the OOB; dismounted units are
always OOS. They remount in the R&R phase when an in-supply transport unit
stands adjacent.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pbem.rulesapi import Problem
from rules.paa.mapview import MapView
from rules.paa.units import Piece

#: §13.6: the CF the dismounting units must total at least.
DISMOUNT_CF = 10


def on_line(board: MapView, hex_id: str) -> bool:
    """Whether a road or track runs through ``hex_id`` (crosses one of its hexsides)."""
    return any(board.side(hex_id, n).road or board.side(hex_id, n).track for n in board.neighbours(hex_id))


def _connected(board: MapView, hexes: Collection[str]) -> bool:
    hs = set(hexes)
    if not hs:
        return False
    start = next(iter(sorted(hs)))
    seen = {start}
    todo = [start]
    while todo:
        h = todo.pop()
        for n in board.neighbours(h):
            if n in hs and n not in seen and (board.side(h, n).road or board.side(h, n).track):
                seen.add(n)
                todo.append(n)
    return seen == hs


def dismount_problems(board: MapView, units: Sequence[Piece], lorry_hex: str, *, lorries_on_oob: int) -> list[Problem]:
    """§13.6 (R-31: in the movement phase): every reason ``units`` may not
    dismount to create a transport unit in ``lorry_hex``. The units must
    be regular, of one faction, total at least 10 nominal CF, stand on road
    or track hexes joined along that road or track; the new transport unit
    goes on the road or track adjacent to them; the OOB must still hold a
    transport unit (at most three per faction). OOS and OOC² units may
    dismount."""
    out: list[Problem] = []
    if not units or any(not p.is_regular for p in units) or len({p.faction for p in units}) != 1:
        return [Problem("§13.6", "only regular units of one faction dismount")]
    if any(p.dismounted for p in units):
        out.append(Problem("§13.6", "a dismounted unit cannot dismount again"))
    total = sum(p.cf for p in units)
    if total < DISMOUNT_CF:
        out.append(Problem("§13.6", f"the dismounting units total {total} CF; at least {DISMOUNT_CF} are needed"))
    hexes = {p.hex for p in units}
    if not all(on_line(board, h) for h in hexes) or not _connected(board, hexes):
        out.append(Problem("§13.6", "the dismounting units must be adjacent and all on the same road or track"))
    if not on_line(board, lorry_hex) or not any(lorry_hex in board.neighbours(h) for h in hexes):
        out.append(Problem("§13.6", f"the new transport unit goes on the road or track adjacent to the dismounted units, not {lorry_hex}"))
    if lorries_on_oob <= 0:
        out.append(Problem("§13.6", "no transport unit is left on the OOB"))
    return out


def remount_problems(board: MapView, units: Sequence[Piece], lorry: Piece, *, lorry_in_supply: bool) -> list[Problem]:
    """§13.6: in the R&R phase dismounted units remount when an in-supply
    transport unit of their faction is adjacent; the transport goes back to
    the OOB, and the units flip face up if in supply."""
    out: list[Problem] = []
    if lorry.kind != "transport":
        return [Problem("§13.6", f"{lorry.id} is not a transport unit")]
    if not lorry_in_supply:
        out.append(Problem("§13.6", f"{lorry.id} is not in supply"))
    for p in units:
        if not p.dismounted or p.faction != lorry.faction:
            out.append(Problem("§13.6", f"{p.id} is not a dismounted {lorry.faction} unit"))
        elif lorry.hex not in board.neighbours(p.hex):
            out.append(Problem("§13.6", f"{lorry.id} in {lorry.hex} is not adjacent to {p.id} in {p.hex}"))
    return out
