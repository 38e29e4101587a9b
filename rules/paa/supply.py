"""§8 Supply: tracing supply lines (§8.1), valid segments and lines (§8.2),
terminals (§8.3), out of supply (§8.4) and the supply states GS and AS
(§8.5, Table 5).

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).

A segment runs from a unit or installation to an installation (or, from an
installation, to a terminal), at most 20 MF priced as regular-unit movement
(§8.1), never through enemy units nor through enemy ZOC unless a friendly
unit stands in that hex (§8.2). The origin hex costs nothing, the target
hex counts. Installations linked to a terminal through such segments form
the network; a unit is in general supply (GS) within 20 MF of a linked
installation, in attack supply (AS) within 8 MF of one not moved this turn.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Literal

import msgspec

from rules.paa.mapview import ALEXANDRIA, BARDIA, EL_AGHEILA, TOBRUK, MapView, per_board
from rules.paa.movement import reachable
from rules.paa.tables import AS_RANGE, GS_RANGE
from rules.paa.units import Faction, Piece, enemy_of
from rules.paa.zoc import zoc

UnitState = Literal["OOS", "GS", "AS"]

#: Names of the Allied terminals that count as installations (§8.3.2).
ALEXANDRIA_BASE = "Alexandria base"
TOBRUK_DEPOT = "Tobruk"
BARDIA_DEPOT = "Bardia"


def base_hexes(board: MapView, centre: str) -> frozenset[str]:
    """§5.1: the land hexes of the base whose centre is ``centre``."""
    for name, c in board.base_centres.items():
        if c == centre:
            return board.bases[name]
    return frozenset({centre})


def terminals(board: MapView, faction: Faction, control: Mapping[str, Faction]) -> frozenset[str]:
    """§8.3: the hexes that are supply terminals for ``faction``, given who
    controls El Agheila (0702), Tobruk (1925) and Alexandria (1351). A base
    is controlled with its centre hex (§5.1). Axis: the El Agheila base;
    Tobruk and the Alexandria base once captured (R-16). Allied: the
    Alexandria base and Tobruk; the El Agheila base once taken (Bardia is a
    terminal only for a unit in it, see ``unit_supply``)."""
    for key in (EL_AGHEILA, TOBRUK, ALEXANDRIA):
        if key not in control:
            raise ValueError(f"§5: control of {key} is needed to find supply terminals")
    out: set[str] = set()
    if control[EL_AGHEILA] == faction:
        out |= base_hexes(board, EL_AGHEILA)
    if control[ALEXANDRIA] == faction:
        out |= base_hexes(board, ALEXANDRIA)
    if control[TOBRUK] == faction:
        out.add(TOBRUK)
    return frozenset(out)


def terminal_installations(board: MapView, faction: Faction, control: Mapping[str, Faction]) -> dict[str, frozenset[str]]:
    """§8.3.2: for the Allies the Alexandria base and Tobruk, while Allied,
    also count as supply installations (never moved: R-17). Name -> hexes."""
    if faction != "allied":
        return {}
    out: dict[str, frozenset[str]] = {}
    if control[ALEXANDRIA] == "allied":
        out[ALEXANDRIA_BASE] = base_hexes(board, ALEXANDRIA)
    if control[TOBRUK] == "allied":
        out[TOBRUK_DEPOT] = frozenset({TOBRUK})
    return out


def closed_hexes(board: MapView, pieces: Sequence[Piece], faction: Faction, *, icf: int | None = None) -> frozenset[str]:
    """§8.2: hexes a supply segment of ``faction`` may not enter: those with
    enemy regular or transport units (OOS or OOC² alike), and enemy ZOC hexes
    without a friendly regular or transport unit (R-18). ``icf``: §15.2 (zoc.exerts_zoc)."""
    enemy = enemy_of(faction)
    enemy_units = {p.hex for p in pieces if p.faction == enemy and p.kind != "installation"}
    friendly_units = {p.hex for p in pieces if p.faction == faction and p.kind != "installation"}
    return frozenset(enemy_units | (zoc(board, pieces, enemy, icf=icf) - friendly_units))


#: Most segments are asked again: every unit of a stack, every installation,
#: and every candidate order of a listing that moves an installation (which
#: closes no hex: §8.2) ask the same ones. Before they were kept, a campaign's
#: listing of 70 rail moves of the Allied movement phase (§11.3.1; each judged
#: by §8.4.1, the supply of every unit after it) searched the map 41 times per
#: candidate.
@per_board(256)
def _costs(board: MapView, start: str, closed: frozenset[str]) -> dict[str, int]:
    """The MF a segment from ``start`` needs to each hex it reaches within
    20 MF (§8.1, §8.2), never entering ``closed``. Read only: the result is
    kept for the next question with the same three arguments."""
    return reachable(board, start, mover="regular", mf=GS_RANGE, blocked=closed - {start})


class Network(msgspec.Struct, frozen=True):
    """§8.2: the supply network of one faction: its terminal hexes, the
    installations linked to a terminal (ids, with the Allied terminal
    installations by name) and the installations cut off."""

    terminals: frozenset[str]
    linked: dict[str, frozenset[str]]
    cut_off: tuple[str, ...]


def network(board: MapView, pieces: Sequence[Piece], faction: Faction, control: Mapping[str, Faction], *,
            icf: int | None = None) -> Network:
    """§8.2-§8.3: which installations reach a terminal through segments of
    at most 20 MF each."""
    closed = closed_hexes(board, pieces, faction, icf=icf)
    terms = terminals(board, faction, control)
    nodes: dict[str, frozenset[str]] = {p.id: frozenset({p.hex}) for p in pieces
                                        if p.faction == faction and p.kind == "installation"}
    linked: dict[str, frozenset[str]] = dict(terminal_installations(board, faction, control))
    reach_of = {i: _costs(board, next(iter(h)), closed) for i, h in nodes.items()}
    targets = set(terms)
    for hexes in linked.values():
        targets |= hexes
    changed = True
    while changed:
        changed = False
        for i in sorted(nodes):
            if i in linked:
                continue
            if any(h in reach_of[i] for h in targets):
                linked[i] = nodes[i]
                targets |= nodes[i]
                changed = True
    return Network(terms, linked, tuple(sorted(i for i in nodes if i not in linked)))


class UnitSupply(msgspec.Struct, frozen=True):
    """§8.5: a unit's state and the linked installations it reaches: within
    20 MF (``general``) and, not moved this turn, within 8 MF (``attack``)."""

    state: UnitState
    general: tuple[str, ...]
    attack: tuple[str, ...]


def unit_supply(
    board: MapView,
    pieces: Sequence[Piece],
    piece: Piece,
    net: Network,
    *,
    moved: Collection[str] = (),
    icf: int | None = None,
    closed: frozenset[str] | None = None,
) -> UnitSupply:
    """§8.4-§8.5: the supply state of one regular or transport unit. A
    dismounted unit is always OOS (§13.6). An Allied unit in Bardia (1730)
    traces to Bardia itself, installation and terminal (§8.3.2). ``closed``:
    ``closed_hexes`` of ``pieces`` for the unit's faction, if the caller has it."""
    if piece.dismounted:
        return UnitSupply("OOS", (), ())
    if closed is None:
        closed = closed_hexes(board, pieces, piece.faction, icf=icf)
    costs = _costs(board, piece.hex, closed)
    general: list[str] = []
    attack: list[str] = []
    for name, hexes in sorted(net.linked.items()):
        best = min((costs[h] for h in hexes if h in costs), default=None)
        if best is None:
            continue
        general.append(name)
        if best <= AS_RANGE and name not in moved:
            attack.append(name)
    if piece.faction == "allied" and piece.hex == BARDIA:
        general.append(BARDIA_DEPOT)
        attack.append(BARDIA_DEPOT)
    state: UnitState = "AS" if attack and piece.is_regular else "GS" if general else "OOS"
    return UnitSupply(state, tuple(general), tuple(attack))


def supply_states(
    board: MapView,
    pieces: Sequence[Piece],
    faction: Faction,
    control: Mapping[str, Faction],
    *,
    moved: Collection[str] = (),
    icf: int | None = None,
) -> dict[str, UnitSupply]:
    """§8: the supply of every regular and transport unit of ``faction`` on the map."""
    net = network(board, pieces, faction, control, icf=icf)
    closed = closed_hexes(board, pieces, faction, icf=icf)
    return {p.id: unit_supply(board, pieces, p, net, moved=moved, icf=icf, closed=closed)
            for p in pieces if p.faction == faction and p.kind != "installation"}


def in_supply(states: Mapping[str, UnitSupply], unit_id: str) -> bool:
    """§8.4: a unit that can trace a valid supply line is in supply."""
    return states[unit_id].state != "OOS"


def newly_oos(before: Mapping[str, UnitSupply], after: Mapping[str, UnitSupply], faction: Faction,
              pieces: Sequence[Piece]) -> tuple[str, ...]:
    """§8.4.1, §11.1.1, §12.3.1: the units that a voluntary act (a move, an
    installation moved or eliminated) would put OOS; for the Allies every
    regular and transport unit counts, for the Axis only Italian regular
    units while moving (§8.4.2)."""
    by_id = {p.id: p for p in pieces}
    out = []
    for uid, s in after.items():
        if s.state != "OOS" or before.get(uid, s).state == "OOS":
            continue
        p = by_id.get(uid)
        if p is None:
            continue
        if faction == "allied" or (p.is_italian and p.is_regular):
            out.append(uid)
    return tuple(sorted(out))


def counts_as_in_supply(piece: Piece, *, started_turn_in_supply: bool, traces_now: bool) -> bool:
    """§8.4.2: Axis units in supply at the start of their turn count as in
    supply for the rest of that turn even if they become OOS; otherwise a
    unit is in supply when it traces a valid line now (§8.4). Dismounted
    units are always OOS (§13.6)."""
    if piece.dismounted:
        return False
    if piece.faction == "axis" and started_turn_in_supply:
        return True
    return traces_now
