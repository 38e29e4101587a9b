"""Exiting units off the enemy map-end (RB 17.1 and its sidebar "Exiting
Units"): the hexes of each map-end, the exit move's check, apply, order
listing, parsing and wording. Three Supplied units exited win a Strategic
Victory at once (rules.ritd.victory, rules.ritd.sequence.sudden_death).

RB 17.1 sidebar: "To exit a unit just move into a mapedge hex and continue
moving offboard. ... exited units cannot return." An exit is a Group Move
(RB 5.1) from one hex whose units each move to a hex of the enemy map-end
and one hex more, off the board (decisions/movement.md MV-20).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import msgspec

from pbem.rulesapi import Order, Problem
from rules.ritd import group_moves, reachability, wording
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd.actions import ExitMap, OrderError
from rules.ritd.hexmap import HexMap
from rules.ritd.movement_types import MAX_SPEED
from rules.ritd.position import Position, Side
from rules.ritd.state import State, game_map
from rules.ritd.turn import Turn, movement_of
from rules.ritd.wording import UnitNamer, unit_labels


@functools.cache
def _edge_columns(m: HexMap) -> tuple[str, str]:
    cols = sorted({h[:2] for h in m.playable_hexes()})
    return cols[0], cols[-1]


def map_end_hexes(m: HexMap, side: Side) -> frozenset[str]:
    """RB 1.6, 17.1: the hexes ``side``'s units exit the enemy map-end from:
    the playable hexes of the map's easternmost column (Alexandria's end) for
    the Axis, of its westernmost column (El Agheila's end) for the Allies."""
    west, east = _edge_columns(m)
    col = east if side == "axis" else west
    return frozenset(h for h in m.playable_hexes() if h[:2] == col)


def exit_problems(m: HexMap, pos: Position, turn: mv.MovementTurn, action: ExitMap,
                  speeds: Mapping[str, int | None], *, name: UnitNamer = str) -> mv.MoveCheck:
    """Every problem with the exit (RB 5.1, 6.1-6.3, 7.2, 17.1 sidebar) and
    the speeds hidden blocks need (one hex more than their route on the map);
    ``name``: how the problems name a block (the token as it is by default)."""
    units = tuple(u for u in action.units if len(u.path) >= 2)
    move = mv.Move(kind="group", origin=action.origin, units=units, rommel=action.rommel)
    # The Move's rules (Moves left, RB 11.4 step 5, Rommel Bonus, membership, routes); the
    # distance is judged below with the step off the map (every speed "fastest" here).
    probs = [p for p in mv.check_move(m, pos, turn, move, dict.fromkeys(speeds, MAX_SPEED), name=name).problems
             if not (p.rule == "RB 5.0" and "at least one unit" in p.message) and p.rule != "RB 6.1"]
    obligations: list[mv.SpeedObligation] = []
    if not action.units:
        probs.append(Problem("RB 17.1", "an exit names at least one unit"))
    tokens = [u.token for u in action.units]
    if len(set(tokens)) != len(tokens):
        probs.append(Problem("RB 6.0", "a unit is listed twice in one Move"))
    unknown = [t for t in tokens if not pos.has_block(t)]
    if unknown:
        probs.append(Problem("RB 5.0", f"no such block: {unit_labels(name, unknown)}"))
    ends = map_end_hexes(m, turn.side)
    for u in action.units:
        if not pos.has_block(u.token):
            continue
        b = pos.block(u.token)
        if len(u.path) < 2:  # already in the edge hex: its Move is the step off the map
            if b.hex != action.origin or (u.path and u.path[0] != b.hex):
                probs.append(Problem("RB 5.1", f"{name(b.token)} is not in the moving Group at {m.name(action.origin)}"))
            if b.side != turn.side:
                probs.append(Problem("RB 3.4", "only the Active Player moves in his Movement phase"))
            if b.disrupted:
                probs.append(Problem("RB 11.1", f"{name(b.token)} is Disrupted and cannot move except to Rout"))
            if turn.has_moved(b.token):
                probs.append(Problem("RB 6.0", f"{name(b.token)} has already moved this Player-Turn"))
        last = u.path[-1] if u.path else b.hex
        if mv.enemy_in(pos, b.hex, b.side):
            probs.append(Problem("RB 7.2", f"{name(b.token)} is in a battle: a unit leaving one Disengages and "
                                           "Retreats (RB 10.3); it cannot leave the map"))
        if last not in ends:
            probs.append(Problem("RB 17.1", f"{m.name(last)} is not on the enemy map-end: the {turn.side} "
                                            f"player exits from {', '.join(sorted(m.name(h) for h in ends))}"))
        elif len(u.path) >= 2 and mv.enemy_in(pos, last, b.side):
            probs.append(Problem("RB 6.0", f"{name(b.token)} must stop on Engaging in {m.name(last)}; it cannot "
                                           "move on off the map"))
        # RB 6.1-6.3: the route on the map and one hex more.
        route = u.path if len(u.path) >= 2 else (b.hex,)
        far = f"{name(b.token)} cannot move {len(route) - 1} hexes to {m.name(last)} and off the map"
        problem, obligation = mv.off_map_distance(m, route, u.token, speeds.get(u.token), rommel=action.rommel,
                                                  too_far=far, too_far_for_any=far)
        probs += [problem] if problem else []
        obligations += [obligation] if obligation else []
    return mv.MoveCheck(tuple(dict.fromkeys(probs)), tuple(obligations))


def apply_exit_move(m: HexMap, pos: Position, turn: mv.MovementTurn,
                    action: ExitMap) -> tuple[Position, mv.MovementTurn, int]:
    """Carry out a checked exit: the units leave the map for good (17.1
    sidebar), the Move is counted (RB 4.0; not when it completes one an
    Overrun interrupted, RB 11.4). Returns the position, the bookkeeping and
    how many of the units were Supplied (RB 12.1: no Unsupplied marker)."""
    move = mv.Move(kind="group", origin=action.origin, units=(), rommel=action.rommel)
    blocks = [pos.block(u.token) for u in action.units]
    moved = tuple(mv.MovedUnit(u.token, u.path if len(u.path) >= 2 else (b.hex,), turn.phase, rommel=action.rommel)
                  for u, b in zip(action.units, blocks))
    if turn.continuing(move) is None:
        turn = msgspec.structs.replace(turn, moves_made=turn.moves_made + 1,
                                       rommel_used=turn.rommel_used or action.rommel)
    turn = msgspec.structs.replace(turn, moved=turn.moved + moved)
    supplied = sum(1 for b in blocks if not b.unsupplied)
    return ls.eliminate(pos, [b.token for b in blocks]), turn, supplied


# -- the Player-Turn action (turn_orders) ---------------------------------------------------

def check_exit(state: State, turn: Turn, action: ExitMap, side: Side, ctx) -> list[Problem]:
    """RB 17.1 sidebar: an exit is made in the Movement phase, as a Move."""
    if turn.step != "movement":
        return [Problem("RB 3.44", "units exit the map by a Move, in the Movement phase")]
    speeds = group_moves.speeds_of(state, state.position, [u.token for u in action.units])
    return list(exit_problems(game_map(), state.position, movement_of(turn), action, speeds,
                              name=wording.unit_namer(state.position)).problems)


def apply_exit(state: State, turn: Turn, action: ExitMap, side: Side, ctx) -> State:
    m, pos = game_map(), state.position
    speeds = group_moves.speeds_of(state, pos, [u.token for u in action.units])
    result = exit_problems(m, pos, movement_of(turn), action, speeds)
    state = group_moves.note_routes(state, pos, [(u.token, u.path) for u in action.units], turn.number)
    new_pos, movement, supplied = apply_exit_move(m, pos, movement_of(turn), action)
    what = f"exited the map in event {ctx.seq} ({format_exit(action)})"
    gone = {u.token for u in action.units}
    return msgspec.structs.replace(
        state, position=new_pos, turn=msgspec.structs.replace(turn, movement=movement),
        exited={**state.exited, side: state.exited.get(side, 0) + supplied},
        disrupted_in={t: n for t, n in state.disrupted_in.items() if t not in gone},
        obligations=state.obligations + group_moves.speed_obligations(result, ctx.seq, what))


# -- listing, parsing, wording ---------------------------------------------------------------

def exit_orders(state: State, role: Side, turn: Turn) -> list[str]:
    """'exit <from> -> <map-end hex> <unit>' (or 'exit <hex> <unit>' for a unit
    already on the map-end), one unit each, where the check finds no problem."""
    m, pos, movement = game_map(), state.position, movement_of(turn)
    if movement.withdrawal_only:
        return []
    ends = map_end_hexes(m, role)
    out = []
    for b in group_moves.group_movers(state, role, turn):
        speed = group_moves.block_speed(state, b)
        name = b.unit or b.token
        for rommel in (False, True) if movement.rommel_available else (False,):
            suffix = " rommel" if rommel else ""
            candidates: list[tuple[tuple[str, ...], str]]
            if b.hex in ends:
                candidates = [((b.hex,), f"exit {m.name(b.hex)} {name}{suffix}")]
            else:
                reach = reachability.reachable(m, pos, movement, b.token, speed, rommel=rommel)
                candidates = [(reach.paths[h], f"exit {m.name(b.hex)} -> {m.name(h)} {name}{suffix}")
                              for h in sorted(ends, key=m.name) if h in reach.paths]
            for path, order in candidates:
                action = ExitMap(origin=b.hex, units=(mv.UnitMove(b.token, path),), rommel=rommel)
                if not exit_problems(m, pos, movement, action, {b.token: speed}).problems:
                    out.append(order)
    return out


def parse_exit_order(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'exit <from> -> <map-end hex> <units> [rommel]', or 'exit <map-end hex>
    <units> [rommel]' for units already there (RB 17.1 sidebar)."""
    body = words.split(None, 1)[1] if " " in words.strip() else ""
    if not body:
        raise OrderError("RB 17.1: write 'exit <from> -> <map-end hex> <units>' or 'exit <map-end hex> <units>'")
    if "->" in body:
        move = group_moves.parse_move(state, role, turn, f"group {body}", "group")
        return Order(action=ExitMap(origin=move.origin, units=move.units, rommel=move.rommel))
    rommel = body.lower().endswith(" rommel")
    if rommel:
        body = body[: -len(" rommel")]
    origin, units = group_moves.split_destination(body)
    tokens = group_moves.units_named(state, role, units, origin)
    return Order(action=ExitMap(origin=origin, units=tuple(mv.UnitMove(t, (origin,)) for t in tokens), rommel=rommel))


def format_exit(action: ExitMap) -> str:
    """The action in words (format_action)."""
    m = game_map()
    legs: dict[str, list[str]] = {}
    for u in action.units:
        legs.setdefault(u.path[-1] if u.path else action.origin, []).append(u.token)
    text = f"exit {m.name(action.origin)}" + "".join(
        f" -> {m.name(d)} {' '.join(ts)}" if d != action.origin else f" {' '.join(ts)}" for d, ts in legs.items())
    return text + (" rommel" if action.rommel else "")
