"""Where a unit can go (RB 5.0-6.4, 10.1-10.4): every hex it may reach
with a legal Move now and the path, and ``explain_move`` (why it can or
cannot reach a hex), for order listings and ``pbem explain move``.
"""

from __future__ import annotations

from collections.abc import Collection

from rules.ritd.hexmap import HexMap
from rules.ritd.movement import (
    MoveContext,
    check_move,
    coexists,
    default_lines,
    default_network,
    enemy_in,
    is_retreat,
    lines_memo,
    path_problems,
    route_text,
    withdrawal_lines,
)
from rules.ritd.movement_types import (
    FORCED_MARCH_HEXES,
    MAX_SPEED,
    ROAD_BONUS,
    ROAD_RANK,
    ROMMEL_BONUS,
    Move,
    MoveKind,
    MovementTurn,
    Reach,
    SupplyLines,
    SupplyNetwork,
    UnitMove,
    WithdrawalKind,
)
from rules.ritd.position import Block, Position
from rules.ritd.wording import UnitNamer

# ------------------------------------------------------------ reachability


def _candidate_paths(m: HexMap, pos: Position, turn: MovementTurn, block: Block, max_steps: int,
                     withdrawal: WithdrawalKind, strict: bool) -> dict[str, list[tuple[str, ...]]]:
    """Shortest routes per (hex, road class) from the block's hex, plus one
    route per entry hexside into hexes holding enemy units. ``strict``:
    obey stop-on-engaging and the Disengagement rules (RB 6.0, 7.2)."""
    side = block.side
    start = block.hex
    retreat = is_retreat(pos, block)
    no_reengage = retreat or turn.has_disengaged(block.token)
    out: dict[str, list[tuple[str, ...]]] = {}
    best: dict[tuple[str, str], int] = {(start, "highway"): 0}
    frontier: list[tuple[str, str, tuple[str, ...]]] = [(start, "highway", (start,))]
    for step in range(1, max_steps + 1):
        nxt = []
        for h, cls, path in frontier:
            for n in m.passable_neighbours(h):
                if n in path:
                    continue
                road = m.road(h, n)
                ncls = "off" if road is None else max(cls, road, key=ROAD_RANK.__getitem__)
                npath = path + (n,)
                enemy = enemy_in(pos, n, side)
                passes = not enemy or coexists(pos, n, side, retreat, withdrawal)
                if strict and h == start and enemy_in(pos, start, side):
                    battle = pos.battle(start)
                    if battle is not None and battle.hexside_owner(n) != side:
                        continue
                    if not passes:
                        continue
                if strict and not passes:
                    if not no_reengage:
                        out.setdefault(n, []).append(npath)  # engaging: a terminal route per hexside
                    continue
                key = (n, ncls)
                if key in best:
                    continue
                best[key] = step
                out.setdefault(n, []).append(npath)
                nxt.append((n, ncls, npath))
        frontier = nxt
    out.pop(start, None)
    return out


def reachable(
    m: HexMap,
    pos: Position,
    turn: MovementTurn,
    token: str,
    speed: int | None,
    *,
    withdrawal: WithdrawalKind = "",
    rommel: bool = False,
    forced: bool = False,
    lines: SupplyLines | None = None,
    network: SupplyNetwork | None = None,
    together: Collection[str] = (),
    regroup: tuple[str, str] | None = None,
) -> Reach:
    """Every hex the unit can reach in a Move made by itself alone, with a
    legal route to each (a route ``check_move`` accepts with this turn's
    bookkeeping). ``speed`` None means the fastest unit type (what the
    public cannot rule out). ``forced``: the hexes it could try to reach by
    Forced March (one hex more, RB 6.4), judged on the route alone.
    ``regroup``: (Command Point, destination) to judge the unit as a Regroup
    Move instead (the rest of one an Overrun interrupted, RB 11.4)."""
    b = pos.block(token)
    spd = MAX_SPEED if speed is None else speed
    limit = spd + max(ROAD_BONUS.values()) + ROMMEL_BONUS + FORCED_MARCH_HEXES
    move_kind: MoveKind = "group" if regroup is None else "regroup"
    origin, destination = (b.hex, "") if regroup is None else regroup
    out: dict[str, tuple[str, ...]] = {}
    if withdrawal:
        # A unit may have hundreds of Supply Lines (one per chain of friendly
        # units, RB 12.2) sharing their first hexes: each prefix is tried once,
        # and the lines are traced once for all the routes checked here.
        if lines is None and network is None:
            network = default_network  # as check_move would use it (memoised in supply)
        lines = lines_of = lines_memo(lines or default_lines)
        prefixes: dict[str, set[tuple[str, ...]]] = {}
        for ln in withdrawal_lines(m, pos, b, lines_of):
            for k in range(2, min(len(ln.hexes), limit + 1) + 1):
                prefixes.setdefault(ln.hexes[k - 1], set()).add(tuple(ln.hexes[:k]))
        cands = {dest: sorted(paths) for dest, paths in prefixes.items()}
    else:
        cands = _candidate_paths(m, pos, turn, b, limit, withdrawal, strict=True)
    for dest, paths in sorted(cands.items()):
        for path in sorted(paths, key=len):
            mv = Move(move_kind, origin, (UnitMove(token, path),), destination=destination, withdrawal=withdrawal,
                      rommel=rommel)
            if forced:
                # Judged as a move with one more hex allowed (RB 6.4).
                ctx = MoveContext(withdrawal=withdrawal, rommel=rommel, forced=True, retreat=is_retreat(pos, b))
                probs, _ = path_problems(m, pos, turn, b, path, spd, ctx, None)
                if not probs:
                    out[dest] = path
                    break
                continue
            if not check_move(m, pos, turn, mv, {token: spd}, lines=lines, network=network,
                              together=together).problems:
                out[dest] = path
                break
    return Reach(token, out)


def explain_move(
    m: HexMap,
    pos: Position,
    turn: MovementTurn,
    token: str,
    speed: int | None,
    *,
    withdrawal: WithdrawalKind = "",
    rommel: bool = False,
    lines: SupplyLines | None = None,
    network: SupplyNetwork | None = None,
    name: UnitNamer = str,
) -> list[str]:
    """``pbem explain move <unit>``: the hexes the unit can reach this move,
    by place name with route, then every neighbouring hex it cannot reach
    and why (speed, terrain, engagement stop, hexside limit, road bonus);
    units named by ``name`` (the token as it is by default)."""
    b = pos.block(token)
    spd = MAX_SPEED if speed is None else speed
    reach = reachable(m, pos, turn, token, speed, withdrawal=withdrawal, rommel=rommel,
                      lines=lines, network=network)
    head = f"{name(token)} in {m.name(b.hex)}, speed {spd if speed is not None else f'unknown (at most {MAX_SPEED})'}"
    out = [head]
    status = []
    if b.disrupted and withdrawal != "rout":
        status.append("it is Disrupted and cannot move except to Rout (RB 11.1)")
    if turn.has_moved(token) and withdrawal not in ("refuse", "rout"):
        status.append("it has already moved this Player-Turn (RB 6.0)")
    if is_retreat(pos, b):
        status.append("it is engaged: leaving is Disengaging, only through friendly battle hexsides, "
                      "ending Disrupted, with no road bonus (RB 7.2, 6.2)")
    out += [f"  note: {s}" for s in status]
    if reach.paths:
        out.append("Can reach:")
        for dest, path in sorted(reach.paths.items(), key=lambda kv: (len(kv[1]), m.name(kv[0]))):
            engage = " (Engaging: must stop, RB 7.0)" if enemy_in(pos, dest, b.side) else ""
            route = " - ".join(m.name(h) for h in path)
            retreat = is_retreat(pos, b)
            out.append(f"  {m.name(dest)}: {len(path) - 1} hex{'es' if len(path) > 2 else ''}, "
                       f"{route}; {route_text(m, path, retreat, rommel, False)}{engage}")
    else:
        out.append("Can reach: nothing")
    # Frontier: hexes next to the start or a reachable hex that are not reachable.
    near = {b.hex, *reach.paths}
    frontier = sorted({n for h in near for _, n in m.neighbours(h)
                       if n not in near and m.is_playable(n)}, key=m.name)
    loose = _candidate_paths(m, pos, turn, b, spd + max(ROAD_BONUS.values()) + ROMMEL_BONUS + 4,
                             withdrawal, strict=False)
    lines_of = lines or default_lines
    wl = withdrawal_lines(m, pos, b, lines_of) if withdrawal else None
    ctx = MoveContext(withdrawal=withdrawal, rommel=rommel, retreat=is_retreat(pos, b))
    if not reach.paths and not status:
        # Nothing reachable for a reason of the Move, not of any one route.
        probe = Move("group", b.hex, (), withdrawal=withdrawal, rommel=rommel)
        general = [p for p in check_move(m, pos, turn, probe, {token: spd}, lines=lines, network=network,
                                         name=name).problems
                   if p.rule != "RB 5.0"]
        out += [f"  note: {p}" for p in general]
    if frontier:
        out.append("Cannot reach:")
    for dest in frontier:
        paths = loose.get(dest)
        if not paths:
            sides = sorted({m.hexside(h, dest) for h in near if m.is_adjacent(h, dest)})
            out.append(f"  {m.name(dest)}: no passable route ({', '.join(sides)} hexside; RB 1.4)")
            continue
        path = min(paths, key=lambda p: (len(p), p))
        probs, _ = path_problems(m, pos, turn, b, path, spd, ctx, wl, name=name)
        if not probs:
            mv = Move("group", b.hex, (UnitMove(token, path),), withdrawal=withdrawal, rommel=rommel)
            probs = list(check_move(m, pos, turn, mv, {token: spd}, lines=lines, network=network,
                                    name=name).problems)
        reasons = list(dict.fromkeys(str(p) for p in probs)) or ["only by a longer route than the unit can take"]
        out.append(f"  {m.name(dest)}: {'; '.join(reasons)}")
    return out
