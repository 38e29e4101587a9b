"""Forced Marches (RB 6.4): the Regroups a unit may join, the attempts
announced after all Moves (checked counting each as if it succeeded), and
each attempt's die (4-6 succeeds). Decisions: decisions/movement.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from pbem.rulesapi import Problem
from rules.ritd.hexmap import HexMap
from rules.ritd.movement import (
    MoveContext,
    enemy_in,
    hexside_used,
    is_retreat,
    move_unit,
    path_problems,
    road_bonus,
    route_text,
)
from rules.ritd.movement_types import (
    FORCED_MARCH_HEXES,
    FORCED_MARCH_SUCCESS,
    MAX_SPEED,
    MIN_SPEED,
    ROMMEL_BONUS,
    ForcedMarch,
    MarchOutcome,
    MoveCheck,
    MovedUnit,
    MovementTurn,
    PendingMarch,
    RegroupRecord,
    SpeedObligation,
)
from rules.ritd.position import Block, Position
from rules.ritd.wording import UnitNamer

# ------------------------------------------------------------ forced marches


def regroups_near(m: HexMap, turn: MovementTurn, hex_: str) -> tuple[RegroupRecord, ...]:
    """This phase's Regroups whose Command Point is ``hex_`` or next to it: those
    a unit there that has not moved may Force March to the destination of (RB 6.4, MV-08)."""
    return tuple(r for r in turn.regroups if hex_ == r.command_point or m.is_adjacent(hex_, r.command_point))


def _march_basis(m: HexMap, pos: Position, turn: MovementTurn, fm: ForcedMarch, name: UnitNamer = str
                 ) -> tuple[list[Problem], bool, bool, bool, tuple[str, ...]]:
    """(problems, regroup, rommel, retreat, route still to go) for one attempt
    (its unit named by ``name``)."""
    who = name(fm.token)
    if not pos.has_block(fm.token):
        return [Problem("RB 6.4", f"no such block: {who}")], False, False, False, ()
    b = pos.block(fm.token)
    rec = turn.moved_unit(fm.token)
    if len(fm.path) < 2:
        return [Problem("RB 6.4", f"{who}: a Forced March needs a destination")], False, False, False, ()
    if rec is not None and rec.phase == turn.phase and not rec.regroup:
        # A Group Move: one hex on from where it stopped.
        if tuple(fm.path[:-1]) != rec.path:
            return [Problem("RB 6.4", f"{who}: a Forced March continues the unit's own move "
                                      f"({' - '.join(m.name(h) for h in rec.path)}) by one hex")], \
                False, rec.rommel, rec.retreat, ()
        if any(p.token == fm.token for p in turn.marches):
            return [Problem("RB 6.4", f"{who} already has a Forced March announced")], False, False, False, ()
        return [], False, rec.rommel, rec.retreat, (fm.path[-2], fm.path[-1])
    if rec is not None:
        return [Problem("RB 6.0", f"{who} has already moved this Player-Turn")], False, False, False, ()
    # A Regroup: the unit did not reach the destination and has not moved.
    regroups = [r for r in regroups_near(m, turn, b.hex) if r.destination == fm.path[-1]]
    if not regroups:
        return [Problem("RB 6.4", f"{who} did not move this phase and is not in or adjacent to the "
                                  f"Command Point of a Regroup Move to {m.name(fm.path[-1])}")], \
            True, False, False, ()
    if any(p.token == fm.token for p in turn.marches):
        return [Problem("RB 6.4", f"{who} already has a Forced March announced")], True, False, False, ()
    return [], True, regroups[0].rommel, is_retreat(pos, b), tuple(fm.path)


def _march_step_problems(
    m: HexMap, pos: Position, turn: MovementTurn, block: Block, path: Sequence[str],
    speed: int | None, ctx: MoveContext, name: UnitNamer = str,
) -> tuple[list[Problem], int]:
    """The extra hex of a Group Move's Forced March: the step itself must be
    legal from where the unit stopped, and the whole route must fit the
    unit's speed plus one (RB 6.4, MV-08)."""
    here, dest = path[-2], path[-1]
    who = name(block.token)
    probs: list[Problem] = []
    if not m.is_adjacent(here, dest):
        return [Problem("RB 6.4", f"{who}: {m.name(dest)} is not next to {m.name(here)}")], MIN_SPEED
    if not m.is_passable(here, dest):
        probs.append(Problem("RB 1.4", f"{who} cannot cross the {m.hexside(here, dest)} hexside "
                                       f"{m.hexside_name(here, dest)}"))
    if enemy_in(pos, here, block.side):
        probs.append(Problem("RB 6.0", f"{who} Engaged in {m.name(here)} and must stop there"))
    elif any(e.token == block.token and e.hex == here for e in turn.engagements):
        # The enemy it Attacked is gone: Overrun and Routed (MV-08).
        probs.append(Problem("RB 11.4", f"{who} Overran {m.name(here)} and must stop there, moving no "
                                        "further this turn"))
    enemy = enemy_in(pos, dest, block.side)
    if enemy:
        if ctx.retreat or turn.has_disengaged(block.token):
            probs.append(Problem("RB 7.2", f"{who} has Disengaged this Player-Turn and may not re-engage "
                                           f"({m.name(dest)})"))
        limit, used = m.hexside_limit(here, dest), hexside_used(turn, here, dest)
        if limit and used >= limit:
            probs.append(Problem("RB 7.1", f"hexside limit reached: {used} unit{'s' if used != 1 else ''} "
                                           f"already engaged {m.name(dest)} across the "
                                           f"{m.hexside_name(dest, here)} hexside this phase, counting "
                                           "Forced March attempts (RB 6.4 sidebar)"))
    needed = len(path) - 1
    extra = road_bonus(m, path, retreat=bool(ctx.retreat)) + (ROMMEL_BONUS if ctx.rommel else 0) + FORCED_MARCH_HEXES
    if speed is not None and needed > speed + extra:
        probs.append(Problem("RB 6.4", f"{who} cannot Force March {needed} hexes to {m.name(dest)}: speed "
                                       f"{speed}, {route_text(m, path, bool(ctx.retreat), ctx.rommel, True)} "
                                       f"allows {speed + extra}"))
    if speed is None and needed - extra > MAX_SPEED:
        probs.append(Problem("RB 6.4", f"{who} cannot Force March {needed} hexes: no unit is fast enough"))
    return probs, max(MIN_SPEED, needed - extra)


def check_forced_marches(
    m: HexMap, pos: Position, turn: MovementTurn, marches: Sequence[ForcedMarch],
    speeds: Mapping[str, int | None], *, name: UnitNamer = str,
) -> MoveCheck:
    """Every problem with the Forced March attempts announced after all
    Moves (RB 6.4): one hex past the normal maximum, only by units of this
    phase's Moves, never into engagements beyond hexside limits (counting
    every attempt as if it succeeded). ``name``: how the problems name a
    block (the token as it is by default)."""
    probs: list[Problem] = []
    obligations: list[SpeedObligation] = []
    if turn.marches_announced:
        probs.append(Problem("RB 6.4", "Forced Marches have already been announced this phase"))
    if turn.withdrawal_only and marches:
        probs.append(Problem("RB 4.5", "no movement but the one Withdrawal Move in a Pass Turn, so no "
                                       "Forced March (MV-09)"))
    cur = turn
    seen: set[str] = set()
    for fm in marches:
        if fm.token in seen:
            probs.append(Problem("RB 6.4", f"{name(fm.token)}: one Forced March per unit"))
            continue
        seen.add(fm.token)
        p, regroup, rommel, retreat, _ = _march_basis(m, pos, cur, fm, name)
        if p:
            probs.extend(p)
            continue
        b = pos.block(fm.token)
        if b.side != turn.side:
            probs.append(Problem("RB 6.4", f"{name(fm.token)}: only the Active Player may Force March"))
            continue
        rec = cur.moved_unit(fm.token)
        if b.disrupted and not (rec is not None and rec.retreat):
            probs.append(Problem("RB 11.1", f"{name(fm.token)} is Disrupted and cannot move"))
            continue
        ctx = MoveContext(rommel=rommel, forced=True, retreat=retreat)
        if rec is None:
            # Regroup: the whole route from the original hex, as for a Move.
            pr, need = path_problems(m, pos, cur, b, fm.path, speeds.get(fm.token), ctx, None, name=name)
        else:
            pr, need = _march_step_problems(m, pos, cur, b, fm.path, speeds.get(fm.token), ctx, name)
        probs.extend(pr)
        if speeds.get(fm.token) is None and need > MIN_SPEED:
            obligations.append(SpeedObligation(fm.token, need, "RB 6.4"))
        cur = msgspec.structs.replace(
            cur, marches=cur.marches + (PendingMarch(fm.token, tuple(fm.path), regroup, retreat),))
    return MoveCheck(tuple(probs), tuple(obligations))


def announce_forced_marches(m: HexMap, pos: Position, turn: MovementTurn,
                            marches: Sequence[ForcedMarch]) -> MovementTurn:
    """Record checked Forced March attempts; the engine then rolls one die
    each and calls ``apply_forced_march`` in the order announced."""
    pending = []
    for fm in marches:
        _, regroup, _, retreat, _ = _march_basis(m, pos, turn, fm)
        pending.append(PendingMarch(fm.token, tuple(fm.path), regroup, retreat))
    return msgspec.structs.replace(turn, marches=turn.marches + tuple(pending), marches_announced=True)


def apply_forced_march(m: HexMap, pos: Position, turn: MovementTurn, token: str, roll: int) -> MarchOutcome:
    """Resolve one announced Forced March with its die (RB 6.4): 4-6 the
    unit moves on; 1-3 it is Disrupted where it stands (its current hex
    after a Group Move, its original hex for a Regroup), and on a Retreat it
    also loses a step (``step_loss``)."""
    pending = next(p for p in turn.marches if p.token == token)
    rest = tuple(p for p in turn.marches if p.token != token)
    turn = msgspec.structs.replace(turn, marches=rest)
    b = pos.block(token)
    if roll < FORCED_MARCH_SUCCESS:
        pos = pos.replace_blocks([msgspec.structs.replace(b, disrupted=True)])
        if pending.regroup:
            turn = msgspec.structs.replace(
                turn, moved=turn.moved + (MovedUnit(token, (b.hex,), turn.phase, regroup=True,
                                                    retreat=pending.retreat),))
        return MarchOutcome(pos, turn, succeeded=False, step_loss=pending.retreat)
    route = pending.path if pending.regroup else pending.path[-2:]
    ctx = MoveContext(forced=True, retreat=pending.retreat)
    pos, turn, attacked, overruns = move_unit(pos, turn, b, route, ctx, regroup=pending.regroup, record=True)
    if pending.retreat:
        pos = pos.replace_blocks([msgspec.structs.replace(pos.block(token), disrupted=True, revealed=False)])
    return MarchOutcome(pos, turn, succeeded=True, attacked=tuple(attacked), overruns=tuple(overruns))
