"""§3 Zone of Control, with the fort ZOC of §3, §11.1.5 and §12.1.1.

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
"""

from __future__ import annotations

from collections.abc import Iterable

from rules.paa.mapview import MapView
from rules.paa.units import Faction, Piece, enemy_of


def zoc_of_hex(board: MapView, hex_id: str) -> frozenset[str]:
    """§3: the hexes a regular unit in ``hex_id`` exerts ZOC into: its
    neighbours, except full sea hexes and across prohibited hexsides."""
    return frozenset(
        n for n in board.neighbours(hex_id)
        if board.terrain(n) != "sea" and not board.side(hex_id, n).prohibited
    )


def _supported(piece: Piece, pieces: Iterable[Piece]) -> bool:
    """§15.2: a supporting unit (German regular, Italian armoured) in the same hex."""
    return any(
        p.hex == piece.hex and p.is_regular and (p.is_german or (p.is_italian and p.kind == "armoured"))
        for p in pieces
    )


def exerts_zoc(piece: Piece, pieces: Iterable[Piece] = (), *, icf: int | None = None) -> bool:
    """§3: regular units exert ZOC; supply installations and transport units
    do not. §15.2 (optional, ``icf`` given): at ICF >= 20 Italian infantry not
    stacked with a supporting unit exerts none."""
    if not piece.is_regular:
        return False
    if icf is not None and icf >= 20 and piece.is_italian and piece.kind == "infantry":
        return _supported(piece, tuple(pieces))
    return True


def zoc_sources(board: MapView, pieces: Iterable[Piece], owner: Faction, *,
                icf: int | None = None) -> dict[str, frozenset[str]]:
    """§3: for each hex in the ZOC of ``owner``'s units, the hexes whose units exert it."""
    ps = tuple(pieces)
    out: dict[str, set[str]] = {}
    for src in sorted({p.hex for p in ps if p.faction == owner and exerts_zoc(p, ps, icf=icf)}):
        for h in zoc_of_hex(board, src):
            out.setdefault(h, set()).add(src)
    return {h: frozenset(s) for h, s in out.items()}


def zoc(board: MapView, pieces: Iterable[Piece], owner: Faction, *, icf: int | None = None) -> frozenset[str]:
    """§3: every hex in the ZOC of ``owner``'s regular units."""
    return frozenset(zoc_sources(board, pieces, owner, icf=icf))


def enemy_zoc(board: MapView, pieces: Iterable[Piece], mover: Faction, *, icf: int | None = None) -> frozenset[str]:
    """§3: the hexes in enemy ZOC (EZOC) for ``mover``."""
    return zoc(board, pieces, enemy_of(mover), icf=icf)


def occupied_forts(board: MapView, pieces: Iterable[Piece], owner: Faction) -> frozenset[str]:
    """§3, §12.1.1: the fortified hexes (map ``forts``) a regular unit of ``owner`` occupies."""
    ps = tuple(pieces)
    return frozenset(f for f in board.forts if any(p.hex == f and p.is_regular and p.faction == owner for p in ps))


def enemy_fort_zoc(board: MapView, pieces: Iterable[Piece], mover: Faction) -> dict[str, str]:
    """§3, §11.1.5, §12.1.1: each hex in the fort ZOC of an enemy-occupied
    fort, mapped to that fort. Units there must stop (§11.1.5) and attack the
    fort (§12.1.1)."""
    out: dict[str, str] = {}
    for fort in sorted(occupied_forts(board, pieces, enemy_of(mover))):
        for h in board.fort_zoc.get(fort, frozenset()):
            out[h] = fort
    return out
