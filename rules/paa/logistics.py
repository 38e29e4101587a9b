"""§11.2 Sea transport, §11.3 supply transportation and §11.3.1 the
Allied (Egyptian) railroad.

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

import msgspec

from pbem.hexgrid import DigitIds, Grid, distance
from pbem.rulesapi import Problem
from rules.paa.mapview import ALEXANDRIA, BARDIA, TOBRUK, MapView, per_board
from rules.paa.units import Faction, Piece
from rules.paa.zoc import zoc

#: §2.1: the hex numbers' geometry (RRCC, rows up), for distances in hexes (§11.2).
IDS = DigitIds(Grid("pointy", "even", "up"), "RRCC")

#: §11.2: regular units and installations out of and into a port per movement phase.
PORT_CAPACITY: dict[str, tuple[int, int]] = {TOBRUK: (2, 1), ALEXANDRIA: (2, 1)}
#: §11.2: the Axis ships only with no in-supply Allied unit this close (in hexes) to either port.
AXIS_SEA_RANGE = 20


def hex_distance(a: str, b: str) -> int:
    """§11.2: the distance in hexes ("20 hexes (19 intervening hexes)")."""
    return distance(IDS.parse(a), IDS.parse(b))


class SeaMove(msgspec.Struct, frozen=True):
    """One piece shipped from port to port in a movement phase (§11.2)."""

    piece: str
    origin: str
    destination: str


def sea_problems(
    board: MapView,
    pieces: Sequence[Piece],
    moves: Sequence[SeaMove],
    control: Mapping[str, Faction],
    *,
    manoeuvred: Collection[str] = (),
    allied_in_supply: Collection[str] = (),
) -> list[Problem]:
    """§11.2: every reason this phase's sea transport is illegal.
    ``manoeuvred``: pieces that made another manoeuvre this phase;
    ``allied_in_supply``: ids of in-supply Allied units (the Axis limit)."""
    by_id = {p.id: p for p in pieces}
    lines = {frozenset(line) for line in board.sea_lines}
    out: list[Problem] = []
    for m in moves:
        p = by_id.get(m.piece)
        if p is None:
            out.append(Problem("§11.2", f"no piece {m.piece} on the map"))
            continue
        if p.kind == "transport":
            out.append(Problem("§11.2", f"transport units ({p.id}) may not be transported by sea"))
        if p.hex != m.origin or m.origin not in board.ports:
            out.append(Problem("§11.2", f"{p.id} must start the movement phase in the port {m.origin}"))
        if m.destination not in board.ports or frozenset((m.origin, m.destination)) not in lines:
            out.append(Problem("§2.1.2, §11.2", f"no sea line from {m.origin} to {m.destination}"))
        for port in (m.origin, m.destination):
            if control.get(port) != p.faction:
                out.append(Problem("§11.2", f"{port} is not a port controlled by the {p.faction} faction"))
        if p.id in manoeuvred:
            out.append(Problem("§11.2", f"{p.id} made another manoeuvre this phase"))
        if p.oos or p.dismounted:
            out.append(Problem("§11", f"{p.id} is OOS and may not move"))
        if p.ooc2:
            out.append(Problem("§10.3", f"{p.id} is out of C² and may not move by sea"))
        if p.faction == "axis" and {m.origin, m.destination} & {TOBRUK, BARDIA}:
            near = [a.id for a in pieces if a.faction == "allied" and a.id in allied_in_supply
                    and min(hex_distance(a.hex, m.origin), hex_distance(a.hex, m.destination)) <= AXIS_SEA_RANGE]
            if near:
                out.append(Problem("§11.2", f"the Axis may not ship via Tobruk or Bardia with in-supply Allied units within {AXIS_SEA_RANGE} hexes of a port ({', '.join(sorted(near))}) (R-36)"))
    out += _port_capacity(moves, by_id)
    return out


def _port_capacity(moves: Sequence[SeaMove], by_id: Mapping[str, Piece]) -> list[Problem]:
    out: list[Problem] = []
    ports = sorted({m.origin for m in moves} | {m.destination for m in moves})
    for port in ports:
        leaving = [by_id[m.piece] for m in moves if m.origin == port and m.piece in by_id]
        arriving = [by_id[m.piece] for m in moves if m.destination == port and m.piece in by_id]
        if port == BARDIA:
            if len(leaving) + len(arriving) > 1:
                out.append(Problem("§11.2", "Bardia ships one regular unit or installation, either out or in, per movement phase"))
            continue
        units_max, installs_max = PORT_CAPACITY.get(port, (0, 0))
        for what, group in (("out of", leaving), ("into", arriving)):
            units = sum(1 for p in group if p.is_regular)
            installs = sum(1 for p in group if p.kind == "installation")
            if units > units_max or installs > installs_max:
                out.append(Problem("§11.2", f"at most {units_max} regular units and {installs_max} supply installation go {what} {port} per movement phase"))
    return out


@per_board(1)
def rail_hexes(board: MapView) -> frozenset[str]:
    """§11.3.1: the hexes the Egyptian railroad runs through (1353 to 1440).
    A fact of the map, read from all its hexsides once per board: every
    listing of rail moves and every check of one asks it."""
    return frozenset(h for h in board.hexes() for n in board.neighbours(h) if board.side(h, n).rail)


def usable_rail(board: MapView, pieces: Iterable[Piece], *, icf: int | None = None) -> frozenset[str]:
    """§11.3.1: the rail hexes usable this phase: none in Axis ZOC, and only
    east of the eastern-most rail hex in Axis ZOC. Allied units do not negate it."""
    rail = rail_hexes(board)
    blocked = rail & zoc(board, tuple(pieces), "axis", icf=icf)
    if not blocked:
        return rail
    east_edge = max(int(h[2:]) for h in blocked)
    return frozenset(h for h in rail if int(h[2:]) > east_edge)


def rail_destinations(board: MapView, pieces: Iterable[Piece], start: str, *,
                      icf: int | None = None) -> frozenset[str]:
    """§11.3.1: where an Allied supply installation in rail hex ``start`` can
    go by rail, any distance, at no MF cost (empty if ``start`` is not usable)."""
    usable = usable_rail(board, pieces, icf=icf)
    if start not in usable:
        return frozenset()
    seen = {start}
    todo = [start]
    while todo:
        h = todo.pop()
        for n in board.neighbours(h):
            if n in usable and n not in seen and board.side(h, n).rail:
                seen.add(n)
                todo.append(n)
    return frozenset(seen)


def rail_problems(board: MapView, pieces: Sequence[Piece], installation: Piece, destination: str, *,
                  icf: int | None = None) -> list[Problem]:
    """§11.3.1: Allied supply installations only, along usable rail."""
    if installation.faction != "allied" or installation.kind != "installation":
        return [Problem("§11.3.1", "only Allied supply installations move by rail")]
    if installation.ooc2:
        return [Problem("§10.3", f"{installation.id} is out of C² and cannot be transported")]
    if destination not in rail_destinations(board, pieces, installation.hex, icf=icf):
        return [Problem("§11.3.1", f"{installation.id} cannot go by rail from {installation.hex} to {destination} (not through or west of Axis ZOC)")]
    return []


def carry_problems(lorry: Piece, installation: Piece, path: Sequence[str]) -> list[Problem]:
    """§11.3: a transport unit loads an installation in the installation's
    hex at no MF cost and may unload it anywhere on its route; it carries
    one at a time. ``path``: the lorry's route (its own hex first)."""
    out: list[Problem] = []
    if lorry.kind != "transport" or installation.kind != "installation" or lorry.faction != installation.faction:
        return [Problem("§11.3", f"{lorry.id} cannot carry {installation.id}: a transport unit carries its own faction's installations")]
    if installation.hex not in path:
        out.append(Problem("§11.3", f"{lorry.id} does not pass {installation.hex} to load {installation.id}"))
    if installation.ooc2 or lorry.ooc2:
        out.append(Problem("§10.3", "out of C² supply installations cannot be transported, nor can OOC² transport units move"))
    return out
