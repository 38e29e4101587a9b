"""Movement and engagement: Group, Regroup and Withdrawal Moves (RB 5.0-8.4, 10.1-10.4).

Pure functions over ``Position`` (rules.ritd.position) and the map. The
legality of an action is decided by a ``check_*`` function that returns every
problem at once, each naming its rule; the matching ``apply_*`` function
never re-checks and never fails on a checked action (STYLE 1, 2).

Per-phase bookkeeping that the board does not show (units that moved this
Player-Turn, hexside usage this Movement phase, battles at the start of
movement, Groups just Attacked, the Rommel Bonus, announced Forced Marches)
lives in ``MovementTurn``; every apply function returns the new one.

Hidden speeds (DESIGN 4): functions take a ``speeds`` mapping token ->
speed, where ``None`` (or a missing token) means the speed is not known to
the replaying side. Everything public is then checked at once and the speed
the move needs is returned as a ``SpeedObligation`` for a deferred check.

Decisions on rulebook ambiguities: decisions/movement.md (MV-nn).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

import msgspec

from pbem.rulesapi import Problem
from rules.ritd.hexmap import HexMap
from rules.ritd.movement_types import (
    FORCED_MARCH_HEXES,
    FORCED_MARCH_SUCCESS,
    MAX_SPEED,
    MIN_SPEED,
    ROAD_BONUS,
    ROAD_RANK,
    ROMMEL_BONUS,
    Disengagement,
    Engagement,
    ForcedMarch,
    InterruptedMove,
    MarchOutcome,
    Move,
    MoveCheck,
    MovedUnit,
    MoveKind,
    MovementTurn,
    MoveOutcome,
    PendingMarch,
    PendingRetreat,
    Reach,
    RegroupRecord,
    Retreat,
    RetreatKind,
    SpeedObligation,
    SupplyLines,
    SupplyNetwork,
    SupplyRoute,
    UnitMove,
    WithdrawalKind,
)
from rules.ritd.position import Battle, Block, Position, Side, enemy_of
from rules.ritd.withdrawals import (
    WithdrawalRoute,
    default_lines,
    default_network,
    line_away_step,
    lines_memo,
    network_from_lines,
    withdrawal_lines,
    withdrawal_route_problems,
    withdrawal_routes,
)
from rules.ritd.wording import UnitNamer, unit_labels

#: The movement vocabulary is rules.ritd.movement_types, re-exported here;
#: Forced Marches are rules.ritd.forced_marches, reachability rules.ritd.reachability,
#: the routes of Withdrawal Moves rules.ritd.withdrawals (re-exported here).
__all__ = [
    "WithdrawalRoute",
    "default_lines",
    "default_network",
    "line_away_step",
    "lines_memo",
    "network_from_lines",
    "withdrawal_lines",
    "withdrawal_route_problems",
    "withdrawal_routes",
    "Disengagement",
    "Engagement",
    "FORCED_MARCH_HEXES",
    "FORCED_MARCH_SUCCESS",
    "ForcedMarch",
    "MAX_SPEED",
    "MIN_SPEED",
    "MarchOutcome",
    "Move",
    "MoveCheck",
    "MoveKind",
    "MoveOutcome",
    "MovedUnit",
    "MovementTurn",
    "PendingMarch",
    "PendingRetreat",
    "ROAD_BONUS",
    "ROAD_RANK",
    "ROMMEL_BONUS",
    "Reach",
    "RegroupRecord",
    "Retreat",
    "RetreatKind",
    "SpeedObligation",
    "SupplyLines",
    "SupplyNetwork",
    "SupplyRoute",
    "UnitMove",
    "WithdrawalKind",
]


# ------------------------------------------------------------ phase start


def start_movement(
    pos: Position,
    side: Side,
    *,
    moves_allowed: int = 1,
    withdrawal_only: bool = False,
    rommel_bonus: bool = True,
) -> MovementTurn:
    """Bookkeeping for the first Movement phase of ``side``'s Player-Turn.

    ``moves_allowed``: 2 for an Offensive Turn (RB 4.2), else 1;
    ``withdrawal_only``: a Pass Turn (RB 4.5); ``rommel_bonus``: the
    scenario allows it (``Scenario.special.rommel_bonus``, RB 18.1).
    """
    return MovementTurn(
        side=side,
        moves_allowed=moves_allowed,
        withdrawal_only=withdrawal_only,
        rommel_available=rommel_bonus and side == "axis",  # RB 6.3
        battles_at_start=tuple(b.hex for b in pos.battles),
    )


def start_blitz_movement(pos: Position, turn: MovementTurn) -> MovementTurn:
    """Bookkeeping for Blitz Movement (RB 3.45, 4.4): one more Move; units
    that moved may not move again; hexside limits are reset (RB 7.1)."""
    return msgspec.structs.replace(
        turn,
        phase=2,
        moves_allowed=1,
        moves_made=0,
        engagements=(),
        battles_at_start=tuple(b.hex for b in pos.battles),
        attacked=(),
        regroups=(),
        marches=(),
        marches_announced=False,
        refused=(),
        interrupted=(),
    )


# ------------------------------------------------------------ unit speed


def road_bonus(m: HexMap, path: Sequence[str], *, retreat: bool = False) -> int:
    """RB 6.2: +4 highway, +2 track, +1 trail if the unit starts, remains on
    and ends its move on road (every hexside crossed carries a road); the
    lesser bonus when road types are mixed; none for a Retreat."""
    if retreat or len(path) < 2:
        return 0
    kind = m.worst_road(path)
    return 0 if kind is None else ROAD_BONUS[kind]


def allowance(m: HexMap, path: Sequence[str], speed: int, *, rommel: bool = False,
              retreat: bool = False, forced: bool = False) -> int:
    """Hexes a unit of ``speed`` may move along ``path`` (RB 6.1-6.4)."""
    return (speed + road_bonus(m, path, retreat=retreat) + (ROMMEL_BONUS if rommel else 0)
            + (FORCED_MARCH_HEXES if forced else 0))


def route_text(m: HexMap, path: Sequence[str], retreat: bool, rommel: bool, forced: bool) -> str:
    parts = []
    kind = m.worst_road(path)
    if retreat:
        parts.append("no road bonus on a Retreat (RB 6.2)")
    elif kind is None:
        parts.append("no road bonus, the route leaves the road (RB 6.2)")
    else:
        parts.append(f"{kind} bonus +{ROAD_BONUS[kind]} (RB 6.2)")
    if rommel:
        parts.append(f"Rommel Bonus +{ROMMEL_BONUS} (RB 6.3)")
    if forced:
        parts.append(f"Forced March +{FORCED_MARCH_HEXES} (RB 6.4)")
    return ", ".join(parts)


def off_map_distance(m: HexMap, route: Sequence[str], token: str, speed: int | None, *, rommel: bool,
                     too_far: str, too_far_for_any: str) -> tuple[Problem | None, SpeedObligation | None]:
    """RB 6.1-6.3 for a Move with one hex off the map: ``route`` on the map
    and the step onto or off it, each one hex of movement (RB 16.4 sidebar
    Base entry, RB 17.1 sidebar exits). A known ``speed`` too slow is a
    problem worded ``too_far`` + the allowance; a hidden unit (speed None)
    that no unit type could move so far is ``too_far_for_any``; one that only
    the faster types could is a speed obligation, checked when it opens."""
    extra = allowance(m, route, 0, rommel=rommel)
    needed = len(route)
    if speed is not None:
        if needed > speed + extra:
            return Problem("RB 6.1", f"{too_far}: speed {speed}, {route_text(m, route, False, rommel, False)} "
                                     f"allows {speed + extra}"), None
        return None, None
    if needed - extra > MAX_SPEED:
        return Problem("RB 6.1", f"{too_far_for_any}: no unit is fast enough"), None
    if needed - extra > MIN_SPEED:
        return None, SpeedObligation(token, needed - extra)
    return None, None


# ---------------------------------------------------------------- helpers


def enemy_in(pos: Position, hex_: str, side: Side) -> tuple[Block, ...]:
    return pos.blocks_in(hex_, enemy_of(side))


def _only_disrupted(blocks: Iterable[Block]) -> bool:
    bs = tuple(blocks)
    return bool(bs) and all(b.disrupted for b in bs)


def coexists(pos: Position, hex_: str, side: Side, retreat: bool, withdrawal: WithdrawalKind) -> bool:
    """RB 5.3 sidebar: a Retreating Withdrawal passes through, or stops with,
    enemy units that are all Disrupted, with no effect on either force."""
    return bool(withdrawal) and retreat and _only_disrupted(enemy_in(pos, hex_, side))


def hexside_used(turn: MovementTurn, from_hex: str, to: str) -> int:
    used = sum(1 for e in turn.engagements if e.hex == to and e.from_hex == from_hex)
    used += sum(1 for p in turn.marches if p.path[-1] == to and p.path[-2] == from_hex)
    return used


def is_retreat(pos: Position, block: Block) -> bool:
    """Leaving a hex containing enemy units is Disengaging (RB 7.2)."""
    return bool(enemy_in(pos, block.hex, block.side))


class MoveContext(msgspec.Struct, frozen=True):
    """What a single unit's route is judged against."""

    withdrawal: WithdrawalKind = ""
    rommel: bool = False
    forced: bool = False
    retreat: bool | None = None  # None: from the position (start hex engaged)


def path_problems(
    m: HexMap,
    pos: Position,
    turn: MovementTurn,
    block: Block,
    path: Sequence[str],
    speed: int | None,
    ctx: MoveContext,
    lines: Sequence[SupplyRoute] | None,
    *,
    name: UnitNamer = str,
) -> tuple[list[Problem], int]:
    """Every problem with one unit's route, and the minimum speed it needs.

    ``lines``: the unit's withdrawal Supply Lines when this is a Withdrawal;
    ``name``: how the problems name the unit (the token as it is by default).
    """
    probs: list[Problem] = []
    who = name(block.token)
    side = block.side
    if len(path) < 2:
        return [Problem("RB 5.1", f"{who}: a move needs a destination other than its own hex")], MIN_SPEED
    if path[0] != block.hex:
        probs.append(Problem("RB 5.1", f"{who} is in {m.name(block.hex)}, not {m.name(path[0])}"))
        return probs, MIN_SPEED
    for a, b in zip(path, path[1:]):
        if a not in m.hexes or b not in m.hexes or not m.is_adjacent(a, b):
            probs.append(Problem("RB 6.0", f"{who}: {a} and {b} are not adjacent hexes"))
            return probs, MIN_SPEED
        if not m.is_passable(a, b):
            probs.append(Problem("RB 1.4", f"{who} cannot cross the {m.hexside(a, b)} hexside "
                                           f"{m.hexside_name(a, b)} ({m.name(a)} to {m.name(b)})"))
    retreat = is_retreat(pos, block) if ctx.retreat is None else ctx.retreat
    start_enemy = enemy_in(pos, path[0], side)
    # RB 7.2, 10.1: out of a battle only through friendly Battle Hexsides,
    # into a friendly or empty hex.
    if start_enemy and pos.block(block.token).hex == path[0]:
        battle = pos.battle(path[0])
        owner = battle.hexside_owner(path[1]) if battle is not None else side
        if owner != side:
            probs.append(Problem("RB 7.2", f"{who} may Disengage from {m.name(path[0])} only through "
                                           f"friendly battle hexsides; {m.hexside_name(path[0], path[1])} "
                                           f"is controlled by the {owner} side"))
        if enemy_in(pos, path[1], side) and not coexists(pos, path[1], side, True, ctx.withdrawal):
            probs.append(Problem("RB 10.1", f"{who}: Disengaging units may not move directly into "
                                            f"an enemy or battle hex ({m.name(path[1])})"))
    no_reengage = retreat or turn.has_disengaged(block.token)
    for i, h in enumerate(path[1:], start=1):
        enemy = enemy_in(pos, h, side)
        if not enemy or coexists(pos, h, side, retreat, ctx.withdrawal):
            continue
        if i == 1 and start_enemy:
            continue  # reported above (RB 10.1)
        if i < len(path) - 1:
            probs.append(Problem("RB 6.0", f"{who} must stop on Engaging in {m.name(h)}; it cannot "
                                           f"move on to {m.name(path[-1])}"))
            break
        # The destination holds enemy units: this is Engaging (RB 7.0).
        if no_reengage:
            probs.append(Problem("RB 7.2", f"{who} has Disengaged this Player-Turn and may not "
                                           f"re-engage ({m.name(h)})"))
        if ctx.withdrawal and not _only_disrupted(enemy):
            probs.append(Problem("RB 5.3", f"{who}: withdrawing units cannot Engage undisrupted "
                                           f"enemy units ({m.name(h)})"))
        frm = path[-2]
        limit = m.hexside_limit(frm, h)
        used = hexside_used(turn, frm, h)
        if limit and used >= limit:
            terrain = "clear" if limit == 2 else "gap or mountain road"
            probs.append(Problem("RB 7.1", f"hexside limit reached: {used} unit{'s' if used != 1 else ''} "
                                           f"already engaged {m.name(h)} across the "
                                           f"{m.hexside_name(h, frm)} hexside this phase "
                                           f"(limit {limit} for a {terrain} hexside)"))
    # RB 6.1-6.4: distance.
    needed = len(path) - 1
    extra = allowance(m, path, 0, rommel=ctx.rommel, retreat=retreat, forced=ctx.forced)  # beyond the speed
    min_speed = max(MIN_SPEED, needed - extra)
    if speed is not None:
        if needed > speed + extra:
            probs.append(Problem("RB 6.1", f"{who} cannot move {needed} hexes to {m.name(path[-1])}: "
                                           f"speed {speed}, {route_text(m, path, retreat, ctx.rommel, ctx.forced)}"
                                           f" allows {speed + extra}"))
    elif min_speed > MAX_SPEED:
        probs.append(Problem("RB 6.1", f"{who} cannot move {needed} hexes to {m.name(path[-1])}: no unit "
                                       f"is fast enough (speed {MAX_SPEED}, "
                                       f"{route_text(m, path, retreat, ctx.rommel, ctx.forced)})"))
    # RB 5.3 conditions 1, 2 and 4 (3 is about the whole Move).
    if ctx.withdrawal:
        probs.extend(withdrawal_route_problems(m, block, path, lines or (), name=name))
    return probs, min_speed


# ------------------------------------------------------------ applying


def prune_battles(pos: Position) -> Position:
    """A battle ends when one side has left its hex (RB 8.0)."""
    keep = [b for b in pos.battles if {x.side for x in pos.blocks_in(b.hex)} == {"axis", "allied"}]
    if len(keep) == len(pos.battles):
        return pos
    return pos.with_battles(keep)


def move_unit(
    pos: Position, turn: MovementTurn, block: Block, path: Sequence[str], ctx: MoveContext, *,
    regroup: bool, record: bool,
) -> tuple[Position, MovementTurn, list[str], list[str]]:
    """Move one unit along a checked route; returns (pos, turn, attacked, overruns)."""
    side = block.side
    dest, frm = path[-1], path[-2]
    retreat = is_retreat(pos, block) if ctx.retreat is None else ctx.retreat
    disengaging = bool(enemy_in(pos, path[0], side)) and block.hex == path[0]
    enemy = enemy_in(pos, dest, side)
    engaging = bool(enemy) and not coexists(pos, dest, side, retreat, ctx.withdrawal)
    attacked: list[str] = []
    overruns: list[str] = []
    battles = {b.hex: b for b in pos.battles}
    if enemy and not engaging and dest not in battles:
        # RB 5.3 sidebar: co-existing with Disrupted enemy units, no effect on
        # either force. Recorded as a battle the earlier occupant defends,
        # with no hexside claimed and no Attack (MV-11).
        battles[dest] = Battle(hex=dest, attacker=side)
    if engaging:
        battle = battles.get(dest)
        # RB 12.5: an Unsupplied unit cannot make an enemy hexside friendly.
        claims = not block.unsupplied
        if battle is None:
            battles[dest] = Battle(hex=dest, attacker=side, hexsides={frm: side} if claims else {})
            attacked.append(dest)  # RB 8.2: entering a hex solely of enemy units
            if _only_disrupted(enemy):
                overruns.append(dest)  # RB 11.4
        else:
            if claims or battle.hexside_owner(frm) == side:
                battles[dest] = msgspec.structs.replace(battle, hexsides={**battle.hexsides, frm: side})
            if _only_disrupted(enemy):
                # RB 11.11, 11.4: Engaged unshielded Disrupted units Rout even where a
                # battle is recorded (co-existing Disrupted units, RB 5.3 sidebar, MV-11).
                overruns.append(dest)
        turn = msgspec.structs.replace(
            turn, engagements=turn.engagements + (Engagement(block.token, frm, dest),),
            attacked=turn.attacked + tuple(h for h in attacked if h not in turn.attacked))
    moved = msgspec.structs.replace(block, hex=dest)
    if disengaging:
        # RB 7.2: stood upright to leave, face-down (Disrupted) after moving.
        moved = msgspec.structs.replace(moved, revealed=False, disrupted=True)
        turn = msgspec.structs.replace(
            turn, disengaged=turn.disengaged + (Disengagement(block.token, side, path[0]),))
    pos = pos.replace_blocks([moved]).with_battles(battles.values())
    pos = prune_battles(pos)
    if record:
        prev = turn.moved_unit(block.token)
        if prev is None:
            entry = MovedUnit(block.token, tuple(path), turn.phase, regroup=regroup, rommel=ctx.rommel,
                              retreat=retreat)
            turn = msgspec.structs.replace(turn, moved=turn.moved + (entry,))
        else:
            entry = msgspec.structs.replace(prev, path=prev.path + tuple(path[1:]))
            turn = msgspec.structs.replace(
                turn, moved=tuple(entry if u.token == block.token else u for u in turn.moved))
    return pos, turn, attacked, overruns


# ------------------------------------------------------------ moves


def check_move(
    m: HexMap,
    pos: Position,
    turn: MovementTurn,
    move: Move,
    speeds: Mapping[str, int | None],
    *,
    lines: SupplyLines | None = None,
    network: SupplyNetwork | None = None,
    together: Collection[str] = (),
    name: UnitNamer = str,
) -> MoveCheck:
    """Every problem with ``move`` (RB 4.0-8.4, 10.1-10.4), and the speed
    obligations of blocks whose speed is not in ``speeds``; ``name``: how the
    problems name a block (the token as it is by default).

    ``lines`` / ``network`` default to rules.ritd.supply (needed only for
    Withdrawal Moves). ``together``: other units of the same Move, not in
    ``move`` (a route planned unit by unit): they do not stay behind.
    """
    probs: list[Problem] = []
    obligations: list[SpeedObligation] = []
    lines_of = lines or default_lines
    passive = move.withdrawal in ("refuse", "rout")
    # RB 11.4 step 5: the rest of a Move an Overrun interrupted is that Move, not a new one.
    continuing = None if passive else turn.continuing(move)
    # RB 4.0, 4.5: how many Moves, and which.
    if not passive:
        if turn.withdrawal_only and move.withdrawal != "pass":
            probs.append(Problem("RB 4.5", "in a Pass Turn the only movement allowed is one Withdrawal Move"))
        if move.withdrawal == "pass" and not turn.withdrawal_only:
            probs.append(Problem("RB 5.3", "a free Withdrawal Move is made only in a Pass Turn "
                                           "(spend a Supply Card and make an ordinary Move instead)"))
        if turn.moves_made >= turn.moves_allowed and continuing is None:
            probs.append(Problem("RB 4.0", f"no Move left this phase ({turn.moves_made} of "
                                           f"{turn.moves_allowed} made)"))
        if turn.marches_announced:
            probs.append(Problem("RB 6.4", "Forced Marches are announced after all Moves; no Move may follow"))
    if not move.units and not (move.kind == "regroup" and move.destination):
        probs.append(Problem("RB 5.0", "a Move must move at least one unit"))
    if move.origin not in m.hexes:
        return MoveCheck((Problem("RB 5.0", f"no such hex: {move.origin}"), *probs))
    tokens = [u.token for u in move.units]
    if len(set(tokens)) != len(tokens):
        probs.append(Problem("RB 6.0", "a unit is listed twice in one Move"))
    unknown = [t for t in tokens if not pos.has_block(t)]
    if unknown:
        probs.append(Problem("RB 5.0", f"no such block: {unit_labels(name, unknown)}"))
        return MoveCheck(tuple(probs))
    blocks = [pos.block(t) for t in tokens]
    mover = (blocks[0].side if blocks else
             (enemy_of(turn.side) if passive else turn.side))
    if any(b.side != mover for b in blocks):
        probs.append(Problem("RB 5.0", "a Move moves units of one side only"))
    if move.withdrawal == "refuse" and mover == turn.side:
        probs.append(Problem("RB 10.2", "only the Passive Player Refuses Battle"))
    if move.withdrawal != "rout" and move.withdrawal != "refuse" and mover != turn.side:
        probs.append(Problem("RB 3.4", "only the Active Player moves in his Movement phase"))
    # RB 6.3 Rommel Bonus.
    if move.rommel:
        if mover != "axis" or not turn.rommel_available:
            probs.append(Problem("RB 6.3", "the Rommel Bonus is for the Axis only, and never in 1940"))
        elif passive:
            probs.append(Problem("RB 6.3", "the Rommel Bonus cannot be used for Withdrawal Moves to "
                                           "Refuse Battle or Rout"))
        elif turn.rommel_used and continuing is None:
            probs.append(Problem("RB 6.3", "only one Move per Axis Player-Turn may be the Rommel Move"))
    # Per-unit status.
    for b in blocks:
        if move.withdrawal == "rout":
            if not b.disrupted:
                probs.append(Problem("RB 11.3", f"{name(b.token)} is not Disrupted; only Disrupted units Rout"))
        else:
            if b.disrupted:
                probs.append(Problem("RB 11.1", f"{name(b.token)} is Disrupted and cannot move except to Rout"))
            if not passive and turn.has_moved(b.token):
                probs.append(Problem("RB 6.0", f"{name(b.token)} has already moved this Player-Turn"))
    # RB 5.1 / 5.2 membership.
    if move.kind == "group":
        for b in blocks:
            if b.hex != move.origin:
                probs.append(Problem("RB 5.1", f"{name(b.token)} is not in the moving Group at {m.name(move.origin)}"))
        if move.destination and any(u.path[-1] != move.destination for u in move.units if u.path):
            probs.append(Problem("RB 5.1", "destination given but units end elsewhere"))
    else:
        if passive:
            probs.append(Problem("RB 10.2" if move.withdrawal == "refuse" else "RB 11.3",
                                 "Refusing Battle and Routing are made by Group Withdrawal Move, "
                                 "not by Regroup Move"))
        if pos.control(move.origin, mover) == "enemy":
            probs.append(Problem("RB 5.2", f"the Command Point {m.name(move.origin)} is an enemy hex"))
        if not move.destination:
            probs.append(Problem("RB 5.2", "a Regroup Move needs a destination hex"))
        for b in blocks:
            if b.hex != move.origin and not m.is_adjacent(b.hex, move.origin):
                probs.append(Problem("RB 5.2", f"{name(b.token)} in {m.name(b.hex)} is neither in nor adjacent to "
                                               f"the Command Point {m.name(move.origin)}"))
        for u in move.units:
            if u.path and move.destination and u.path[-1] != move.destination:
                probs.append(Problem("RB 5.2", f"{name(u.token)} does not end in the common destination "
                                               f"{m.name(move.destination)}"))
    # RB 10.2 / 10.4: whole Groups only for Refusals and Withdrawals out of battles.
    if move.withdrawal == "refuse":
        probs.extend(refusal_problems(m, pos, turn, move.origin, lines=lines_of, name=name))
    if move.withdrawal:
        for h in {b.hex for b in blocks}:
            if enemy_in(pos, h, mover):
                staying = [x.token for x in pos.blocks_in(h, mover)
                           if not x.disrupted and x.token not in tokens and x.token not in together]
                if staying and move.withdrawal != "rout":
                    probs.append(Problem("RB 10.4", f"a Partial Retreat cannot be made by Withdrawal Move: "
                                                    f"{unit_labels(name, staying)} would stay in {m.name(h)}"))
    # Routes, one unit after another on the changing position.
    wlines = {b.token: withdrawal_lines(m, pos, b, lines_of) for b in blocks} if move.withdrawal else {}
    cur_pos, cur_turn = pos, turn
    overrun_at = ""
    for u, b in zip(move.units, blocks):
        if overrun_at and u.path and u.path[-1] != overrun_at:
            # RB 11.4: "Once all Attacking units have entered the hex, movement is interrupted".
            probs.append(Problem("RB 11.4", f"movement is interrupted for the Rout once the Overrunning units "
                                            f"have entered {m.name(overrun_at)}: {name(b.token)} may join the Attack, or "
                                            f"move after the Rout in a further order of this Move"))
            continue
        ctx = MoveContext(withdrawal=move.withdrawal, rommel=move.rommel and not passive,
                   retreat=is_retreat(pos, b))
        here = cur_pos.block(b.token)
        p, need = path_problems(m, cur_pos, cur_turn, here, u.path, speeds.get(b.token), ctx,
                                 wlines.get(b.token), name=name)
        probs.extend(p)
        if speeds.get(b.token) is None and need > MIN_SPEED:
            obligations.append(SpeedObligation(b.token, need))
        if not p:
            cur_pos, cur_turn, _, overran = move_unit(cur_pos, cur_turn, here, u.path, ctx,
                                                       regroup=move.kind == "regroup", record=not passive)
            if overran and not passive:
                overrun_at = overran[0]
    # RB 5.3 condition 3: the Supply Network shrinks by at least one hex.
    if move.withdrawal and not probs:
        if network is not None:
            net = network
        elif lines is None:
            net = default_network
        else:
            def net(mm: HexMap, pp: Position, ss: Side) -> frozenset[str]:
                return network_from_lines(mm, pp, ss, lines_of)
        if together and move.units and move.units[-1].path:
            # A route planned unit by unit: the rest of the Group goes the same way.
            end = move.units[-1].path[-1]
            cur_pos = cur_pos.replace_blocks([msgspec.structs.replace(x, hex=end) for x in cur_pos.blocks
                                              if x.token in together and x.hex == move.origin])
        before, after = net(m, pos, mover), net(m, cur_pos, mover)
        if not (before - after):
            probs.append(Problem("RB 5.3", "condition 3: a Withdrawal Move must reduce the friendly "
                                           "Supply Network by at least one hex; this one concedes none"))
    return MoveCheck(tuple(probs), tuple(obligations))


def apply_move(m: HexMap, pos: Position, turn: MovementTurn, move: Move, *,
               defer_retreats: bool = False) -> MoveOutcome:
    """Carry out a checked Move: units move in order, Engage and Attack
    (RB 7.0, 8.1-8.3), Disengage Disrupted (RB 7.2). ``defer_retreats``:
    the Active Player's Disengaging units only announce their routes and
    wait in the battle hex for the Retreat procedure (RB 10.3, 10.4; T-35),
    made by ``complete_retreat``."""
    passive = move.withdrawal in ("refuse", "rout")
    continuing = None if passive else turn.continuing(move)
    attacked: list[str] = []
    overruns: list[str] = []
    for u in move.units:
        b = pos.block(u.token)
        ctx = MoveContext(withdrawal=move.withdrawal, rommel=move.rommel and not passive, retreat=is_retreat(pos, b))
        if defer_retreats and not passive and ctx.retreat:
            # RB 10.3, 10.4 procedures: the Disengaging unit waits upright in
            # the battle hex; its route is taken after Pursuit (T-35).
            turn = _announce_retreat(turn, b, u.path, ctx, regroup=move.kind == "regroup")
            continue
        pos, turn, a, o = move_unit(pos, turn, b, u.path, ctx, regroup=move.kind == "regroup",
                                     record=not passive)
        attacked += a
        overruns += o
    if passive:
        if move.withdrawal == "refuse":
            turn = msgspec.structs.replace(turn, refused=turn.refused + (move.origin,))
    elif continuing is None:
        turn = msgspec.structs.replace(turn, moves_made=turn.moves_made + 1,
                                       rommel_used=turn.rommel_used or move.rommel)
        if overruns:  # RB 11.4 step 5: its unmoved units may complete it after the Rout
            turn = msgspec.structs.replace(turn, interrupted=turn.interrupted + (InterruptedMove(
                move.kind, move.origin, move.destination, move.withdrawal, move.rommel),))
        if move.kind == "regroup":
            turn = msgspec.structs.replace(
                turn, regroups=turn.regroups + (RegroupRecord(move.origin, move.destination, move.rommel),))
    return MoveOutcome(pos, turn, tuple(attacked), tuple(overruns))


def _announce_retreat(turn: MovementTurn, block: Block, path: Sequence[str], ctx: MoveContext, *,
                      regroup: bool) -> MovementTurn:
    """Record an announced Disengagement (RB 7.2): the unit has moved this
    Player-Turn and Disengaged, but stays in ``block.hex`` until
    ``complete_retreat`` (T-35)."""
    entry = MovedUnit(block.token, tuple(path), turn.phase, regroup=regroup, rommel=ctx.rommel, retreat=True)
    return msgspec.structs.replace(
        turn, moved=turn.moved + (entry,),
        disengaged=turn.disengaged + (Disengagement(block.token, block.side, block.hex),),
        retreating=turn.retreating + (PendingRetreat(block.token, block.hex, tuple(path), ctx.withdrawal,
                                                     regroup, ctx.rommel),))


def retreat_blockers(m: HexMap, pos: Position, turn: MovementTurn, token: str, *,
                     name: UnitNamer = str) -> list[Problem]:
    """Why the announced route of Retreating ``token`` (named by ``name``) can
    no longer be taken: a hex on it now holds enemy units it may not enter
    (RB 6.0, 7.2, 10.1; only an Overrun's Rout can have put them there since, T-36)."""
    r = turn.pending_retreat(token)
    if r is None or not pos.has_block(token):
        return []
    side = pos.block(token).side
    probs = []
    for h in r.path[1:]:
        if enemy_in(pos, h, side) and not coexists(pos, h, side, True, r.withdrawal):
            probs.append(Problem("RB 10.1", f"{name(token)} cannot Retreat through {m.name(h)}: enemy units are there "
                                            "now"))
            break
    return probs


def complete_retreat(m: HexMap, pos: Position, turn: MovementTurn, token: str) -> tuple[Position, MovementTurn]:
    """Step 3 of the Retreat procedures (RB 10.3, 10.41): a surviving
    Retreating unit makes its announced Move and is Disrupted (RB 7.2, 11.0).
    A unit whose route is now blocked (``retreat_blockers``) stays in the
    Retreat hex, Disrupted, and Routs with the others left there (T-36). An
    eliminated unit is just forgotten. Its pending Forced March goes with it."""
    r = turn.pending_retreat(token)
    rest = tuple(x for x in turn.retreating if x.token != token)
    if r is None:
        return pos, turn
    turn = msgspec.structs.replace(turn, retreating=rest)
    if not pos.has_block(token):
        return pos, msgspec.structs.replace(turn, marches=tuple(p for p in turn.marches if p.token != token))
    block = pos.block(token)
    if retreat_blockers(m, pos, msgspec.structs.replace(turn, retreating=(r,)), token):
        pos = pos.replace_blocks([msgspec.structs.replace(block, disrupted=True, revealed=False)])
        return pos, msgspec.structs.replace(turn, marches=tuple(p for p in turn.marches if p.token != token))
    ctx = MoveContext(withdrawal=r.withdrawal, rommel=r.rommel, retreat=True)
    before = turn.disengaged
    pos, turn, _, _ = move_unit(pos, turn, block, r.path, ctx, regroup=r.regroup, record=False)
    pos = pos.replace_blocks([msgspec.structs.replace(pos.block(token), disrupted=True, revealed=False)])
    return pos, msgspec.structs.replace(turn, disengaged=before)


# ------------------------------------------------------------ refusing battle


def refusal_problems(m: HexMap, pos: Position, turn: MovementTurn, hex_: str, *,
                     lines: SupplyLines | None = None, name: UnitNamer = str) -> list[Problem]:
    """Why the Group in ``hex_`` may not Refuse Battle now (RB 8.4, 10.2),
    its blocks named by ``name`` (the token as it is by default)."""
    lines_of = lines or default_lines
    passive = enemy_of(turn.side)
    where = m.name(hex_) if hex_ in m.hexes else hex_
    probs: list[Problem] = []
    if turn.marches:
        probs.append(Problem("RB 8.4", "Refusing Battle comes after all enemy Moves, including Forced Marches"))
    if hex_ not in turn.attacked:
        probs.append(Problem("RB 8.4", f"the Group in {where} was not Attacked in this Movement phase"))
    if hex_ in turn.battles_at_start:
        probs.append(Problem("RB 8.4", f"the Group in {where} was already engaged when Movement began"))
    if hex_ in turn.refused:
        probs.append(Problem("RB 10.2", f"the Group in {where} has already Refused Battle"))
    battle = pos.battle(hex_)
    if battle is None or battle.defender != passive:
        probs.append(Problem("RB 10.2", f"there is no battle in {where} in which the {passive} side defends"))
        return probs
    group = [b for b in pos.blocks_in(hex_, passive) if not b.disrupted]
    if not group:
        probs.append(Problem("RB 8.2", f"the Group in {where} is all Disrupted: it Routs (RB 11.3) rather "
                                       "than Refusing Battle"))
        return probs
    without = [b.token for b in group if not withdrawal_lines(m, pos, b, lines_of)]
    if without and len(without) < len(group):
        probs.append(Problem("RB 10.2", f"a mixed Group of which only some units have a Supply Line may not "
                                        f"Refuse Battle ({unit_labels(name, without)} ha{'s' if len(without) == 1 else 've'}"
                                        " none)"))
    elif without:
        probs.append(Problem("RB 5.3", f"no unit of the Group in {where} has a Supply Line, so none can "
                                       "Withdraw"))
    return probs


def refusable_groups(m: HexMap, pos: Position, turn: MovementTurn, *,
                     lines: SupplyLines | None = None) -> tuple[str, ...]:
    """Hexes whose Group the Passive Player may Refuse Battle with after all
    enemy movement (RB 8.4, 10.2). A Refusal also needs a legal Withdrawal
    Group Move (``check_move`` with withdrawal="refuse")."""
    return tuple(h for h in sorted(set(turn.attacked))
                 if not refusal_problems(m, pos, turn, h, lines=lines))


# ------------------------------------------------------------ end of movement


def retreats(pos: Position, turn: MovementTurn) -> tuple[Retreat, ...]:
    """Retreats of the Active Player this Player-Turn (RB 7.2, 10.3, 10.4):
    Full when no Undisrupted unit of his stays in the hex, else Partial with
    the Undisrupted stayers as the Rearguard (MV-12); units still waiting to
    leave (T-35) are not the Rearguard."""
    by_hex: dict[str, list[str]] = {}
    for d in turn.disengaged:
        if d.side == turn.side:
            by_hex.setdefault(d.hex, []).append(d.token)
    return _classify(pos, turn, by_hex)


def pending_retreats(pos: Position, turn: MovementTurn) -> tuple[Retreat, ...]:
    """The Retreats still to resolve (T-35): per battle hex, the surviving
    Disengaging units waiting there, Full or Partial as in ``retreats``."""
    by_hex: dict[str, list[str]] = {}
    for r in turn.retreating:
        if pos.has_block(r.token):
            by_hex.setdefault(r.hex, []).append(r.token)
    return _classify(pos, turn, by_hex)


def _classify(pos: Position, turn: MovementTurn, by_hex: Mapping[str, list[str]]) -> tuple[Retreat, ...]:
    out = []
    for h, tokens in sorted(by_hex.items()):
        rear = tuple(b.token for b in pos.blocks_in(h, turn.side) if not b.disrupted and b.token not in tokens)
        out.append(Retreat(h, turn.side, "partial" if rear else "full", tuple(tokens), rear))
    return tuple(out)


def units_to_reveal(pos: Position) -> tuple[str, ...]:
    """RB 7.3, 8.5: when all Movement is complete, the Undisrupted units of
    both sides in every battle hex are revealed (Disrupted units stay
    face-down behind the line, RB 11.11)."""
    return tuple(b.token for bt in pos.battles for b in pos.blocks_in(bt.hex)
                 if not b.disrupted and not b.revealed)


def reveal_battles(pos: Position) -> Position:
    """The position with ``units_to_reveal`` turned face-up (RB 7.3)."""
    show = set(units_to_reveal(pos))
    return pos.replace_blocks([msgspec.structs.replace(b, revealed=True) for b in pos.blocks if b.token in show])


def raiders(pos: Position, turn: MovementTurn) -> tuple[str, ...]:
    """RB 12.5: Unsupplied units that entered a battle across a hexside that
    is still enemy after all movement get a Raider marker."""
    out = []
    for e in turn.engagements:
        if not pos.has_block(e.token):
            continue
        b = pos.block(e.token)
        battle = pos.battle(e.hex)
        if b.unsupplied and b.hex == e.hex and battle is not None and battle.hexside_owner(e.from_hex) != b.side:
            out.append(b.token)
    return tuple(dict.fromkeys(out))
