"""Withdrawal Moves (RB 5.3 and its sidebar): the Supply Lines a unit may
withdraw along (to its Base, or to the Fortress it draws Fortress Supply
from), conditions 1, 2 and 4 on a unit's route, and the adapter to
rules.ritd.supply's Supply Lines and Network (RB 12.2, 12.6). The Move that
carries a Withdrawal is rules.ritd.movement's (condition 3 is about the
whole Move and is checked there).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from pbem.rulesapi import Problem
from rules.ritd.hexmap import HexMap
from rules.ritd.movement_types import SupplyLines, SupplyRoute
from rules.ritd.position import Block, Position, Side
from rules.ritd.wording import UnitNamer

# ------------------------------------------------------------ supply adapter


def default_lines(m: HexMap, pos: Position, block: Block) -> Sequence[SupplyRoute]:
    """The block's Supply Lines from rules.ritd.supply, as hex routes."""
    from rules.ritd import supply

    return tuple(
        SupplyRoute(hexes=line.hexes, source=line.source_hex, fortress=line.source == "fortress")
        for line in supply.supply_lines(m, pos, block.side, block.hex)
        if line.source != "oasis"  # RB 15.1: no external line to withdraw along
    )


def default_network(m: HexMap, pos: Position, side: Side) -> frozenset[str]:
    """RB 12.6 for Withdrawal condition 3 (MV-06): the hexes of every current
    Supply Line of every friendly unit."""
    from rules.ritd import supply

    return supply.network(m, pos, side)


def network_from_lines(m: HexMap, pos: Position, side: Side, lines: SupplyLines) -> frozenset[str]:
    """RB 12.6: the union of every friendly unit's Supply Lines."""
    out: set[str] = set()
    for b in pos.blocks_of(side):
        for line in lines(m, pos, b):
            out.update(line.hexes)
    return frozenset(out)


def lines_memo(lines: SupplyLines) -> SupplyLines:
    """``lines`` remembered per position and block, for many checks of one
    position (each entry keeps its position alive, so its id is not reused)."""
    memo: dict[tuple[int, Block], tuple[Position, Sequence[SupplyRoute]]] = {}

    def remembered(m: HexMap, pos: Position, block: Block) -> Sequence[SupplyRoute]:
        key = (id(pos), block)
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = (pos, lines(m, pos, block))
        return hit[1]

    return remembered


def withdrawal_lines(m: HexMap, pos: Position, block: Block, lines: SupplyLines) -> tuple[SupplyRoute, ...]:
    """Supply Lines a unit may withdraw along: to its Base, or to the Fortress
    it is assigned Fortress Supply from (RB 5.3 sidebar, 13.3)."""
    base = m.base(block.side)
    return tuple(line for line in lines(m, pos, block)
                 if line.source == base and not line.fortress
                 or line.fortress and line.source == block.fortress_supply)


def distance_from_source(m: HexMap, side: Side, source: str, a: str, b: str) -> tuple[int, int]:
    """Hex distances of a and b from ``source`` for Withdrawal condition 4,
    with the Bardia-Ft Capuzzo exception (RB 5.3 sidebar, MV-05)."""
    da, db = m.distance(source, a), m.distance(source, b)
    if side == "axis" and source == m.base("axis") and m.road(a, b) == "highway":
        pair = {m.resolve("Bardia"), m.resolve("Ft Capuzzo")}
        if {a, b} == pair:
            db = da
    return da, db



def line_away_step(m: HexMap, side: Side, line: SupplyRoute) -> tuple[str, str] | None:
    """The first step of a Supply Line, from the unit towards its Source,
    that moves physically away from the Source (RB 5.3 condition 4), or
    None. The Bardia-Ft Capuzzo jog does not count for the Axis (sidebar)."""
    for a, b in zip(line.hexes, line.hexes[1:]):
        da, db = distance_from_source(m, side, line.source, a, b)
        if db > da:
            return a, b
    return None


class WithdrawalRoute(msgspec.Struct, frozen=True):
    """One Supply Line of a unit and whether it may Withdraw along it."""

    line: SupplyRoute
    problem: Problem | None = None

    @property
    def valid(self) -> bool:
        return self.problem is None


def withdrawal_routes(m: HexMap, pos: Position, token: str, *,
                      lines: SupplyLines | None = None) -> tuple[WithdrawalRoute, ...]:
    """Every Supply Line of the unit now (RB 5.3 sidebar: defined at the
    moment of the Withdrawal), each with the reason it cannot be withdrawn
    along: a Fortress line without Fortress Supply (sidebar), or movement
    physically away from the Source (condition 4, MV-04)."""
    b = pos.block(token)
    lines_of = lines or default_lines
    allowed = withdrawal_lines(m, pos, b, lines_of)
    out = []
    for line in lines_of(m, pos, b):
        if line not in allowed:
            out.append(WithdrawalRoute(line, Problem(
                "RB 5.3", f"{token} is not assigned Fortress Supply from {m.name(line.source)}, so it may "
                          "not withdraw towards it")))
            continue
        away = line_away_step(m, b.side, line)
        if away is not None:
            x, y = away
            out.append(WithdrawalRoute(line, Problem(
                "RB 5.3", f"condition 4: the Supply Line through {', '.join(m.name(h) for h in line.hexes[1:-1][:3])}"
                          f"... moves physically away from {m.name(line.source)} "
                          f"({m.name(x)} {m.distance(line.source, x)} hexes, {m.name(y)} "
                          f"{m.distance(line.source, y)})")))
            continue
        out.append(WithdrawalRoute(line))
    return tuple(out)


def withdrawal_route_problems(m: HexMap, block: Block, path: Sequence[str],
                               lines: Sequence[SupplyRoute], *, name: UnitNamer = str) -> list[Problem]:
    """RB 5.3 conditions 1, 2 and 4 for one unit's Withdrawal route, the unit
    named by ``name`` (the token as it is by default)."""
    who = name(block.token)
    if not lines:
        return [Problem("RB 5.3", f"condition 1: {who} has no Supply Line it may withdraw along, "
                                  "so it cannot make a Withdrawal Move")]
    along = [ln for ln in lines if len(ln.hexes) >= len(path) and tuple(ln.hexes[:len(path)]) == tuple(path)]
    if not along:
        return [Problem("RB 5.3", f"condition 2: {who} must move only along one of its own Supply "
                                  f"Lines, each hex entered shortening it; {' - '.join(m.name(h) for h in path)}"
                                  " is not such a route")]
    for ln in along:
        if line_away_step(m, block.side, ln) is None:
            return []
    x, y = line_away_step(m, block.side, along[0]) or ("", "")
    src = along[0].source
    return [Problem("RB 5.3", f"condition 4: every Supply Line {who} could be following here moves "
                              f"physically away from its Source {m.name(src)} (first at {m.name(x)} "
                              f"{m.distance(src, x)} hexes to {m.name(y)} {m.distance(src, y)})")]
