"""Reinforcements to an Engaged Base (RB 16.4 sidebar): the units waiting off
board near their engaged Base enter it by a normal Group Move in a later
Player-Turn. Their check, apply, order listing, parsing and wording; holding
them is rules.ritd.rf.held_off_board, the Move rules rules.ritd.movement.

RB 16.4 sidebar: "If a Base is engaged, Reinforcements cannot arrive there,
but must wait off board near Base. They are considered a single Group
located one hex directly east / west of the friendly Base. In a subsequent
Player Turn, they can only enter the Base by normal Group Move. There are no
Hexside limits to enter the Base from this offboard area." (MV-21)
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from pbem.rulesapi import Order, Problem
from rules.ritd import deployment, group_moves, reachability, wording
from rules.ritd import movement as mv
from rules.ritd.actions import EnterBase, OrderError
from rules.ritd.hexmap import HexMap
from rules.ritd.movement_types import MAX_SPEED
from rules.ritd.position import Battle, Block, Position, Side
from rules.ritd.state import State, game_map
from rules.ritd.steps import TurnNext
from rules.ritd.turn import Turn, movement_of
from rules.ritd.wording import UnitNamer, unit_labels

#: ``Engagement.from_hex`` of a unit that Engaged its Base from the off-board area.
OFF_BOARD = ""


def waiting_blocks(state: State, side: Side) -> dict[str, Block]:
    """``side``'s units waiting off board near its Base, by token."""
    return {b.token: b for b in state.waiting.get(side, ())}


def entry_problems(m: HexMap, pos: Position, turn: mv.MovementTurn, action: EnterBase,
                   waiting: Mapping[str, Block], speeds: Mapping[str, int | None], *,
                   name: UnitNamer = str) -> mv.MoveCheck:
    """Every problem with the entry (RB 4.0-7.0 as for any Group Move, RB 16.4
    sidebar), and the speeds hidden blocks need (the step onto the map is one
    hex of movement); ``name``: how the problems name a block (the token as
    it is by default)."""
    side = turn.side
    base = m.base(side)
    probs: list[Problem] = []
    obligations: list[mv.SpeedObligation] = []
    tokens = [u.token for u in action.units]
    if not tokens:
        probs.append(Problem("RB 5.0", "a Move must move at least one unit"))
    if len(set(tokens)) != len(tokens):
        probs.append(Problem("RB 6.0", "a unit is listed twice in one Move"))
    absent = [t for t in tokens if t not in waiting]
    if absent:
        probs.append(Problem("RB 16.4", f"{unit_labels(name, absent)} {'is' if len(absent) == 1 else 'are'} not waiting "
                                        f"off board near the {side} Base"))
    if probs:
        return mv.MoveCheck(tuple(probs))
    if turn.withdrawal_only:
        probs.append(Problem("RB 4.5", "in a Pass Turn the only movement allowed is one Withdrawal Move"))
    engaged = bool(mv.enemy_in(pos, base, side))
    # The units as if in their Base: the Move's rules for the route on from it.
    at_base = msgspec.structs.replace(
        pos, blocks=pos.blocks + tuple(msgspec.structs.replace(waiting[t], hex=base) for t in tokens))
    onward = tuple(u for u in action.units if len(u.path) >= 2)
    move = mv.Move(kind="group", origin=base, units=onward, rommel=action.rommel)
    probs += [p for p in mv.check_move(m, at_base, turn, move, dict.fromkeys(tokens, MAX_SPEED), name=name).problems
              if not (p.rule == "RB 5.0" and "at least one unit" in p.message) and p.rule != "RB 6.1"
              and not (engaged and p.rule in ("RB 7.2", "RB 10.1"))]
    for u in action.units:
        b = waiting[u.token]
        if not u.path or u.path[0] != base:
            probs.append(Problem("RB 16.4", f"{name(b.token)} enters by its Base {m.name(base)}: its route begins there"))
            continue
        if engaged and len(u.path) > 1:
            probs.append(Problem("RB 6.0", f"{name(b.token)} must stop on Engaging in {m.name(base)}; it cannot move "
                                           f"on to {m.name(u.path[-1])}"))
            continue
        # RB 6.1-6.3: one hex onto the map, then the route on it.
        into = f"{name(b.token)} cannot enter {m.name(base)} and move {len(u.path) - 1} hexes"
        problem, obligation = mv.off_map_distance(m, u.path, u.token, speeds.get(u.token), rommel=action.rommel,
                                                  too_far=f"{into} on to {m.name(u.path[-1])}", too_far_for_any=into)
        probs += [problem] if problem else []
        obligations += [obligation] if obligation else []
    return mv.MoveCheck(tuple(dict.fromkeys(probs)), tuple(obligations))


def apply_entry(m: HexMap, pos: Position, turn: mv.MovementTurn, action: EnterBase,
                waiting: Mapping[str, Block]) -> mv.MoveOutcome:
    """Carry out a checked entry: each unit enters the Base (Engaging there
    if enemy units hold it, with no Hexside Limit and no hexside claimed;
    RB 7.0, 8.2, 11.4) and moves on along its route; the Move is counted."""
    side = turn.side
    base = m.base(side)
    attacked: list[str] = []
    overruns: list[str] = []
    for u in action.units:
        b = msgspec.structs.replace(waiting[u.token], hex=base, side=side, disrupted=False)
        enemy = mv.enemy_in(pos, base, side)
        pos = msgspec.structs.replace(pos, blocks=pos.blocks + (b,))
        if enemy:
            if pos.battle(base) is None:
                pos = pos.with_battles((*pos.battles, Battle(hex=base, attacker=side)))
                attacked.append(base)  # RB 8.2: entering a hex solely of enemy units
                if all(x.disrupted for x in enemy):
                    overruns.append(base)  # RB 11.4
            turn = msgspec.structs.replace(
                turn, engagements=turn.engagements + (mv.Engagement(b.token, OFF_BOARD, base),),
                attacked=turn.attacked + tuple(h for h in attacked if h not in turn.attacked))
        if len(u.path) >= 2:
            ctx = mv.MoveContext(rommel=action.rommel, retreat=False)
            pos, turn, a, o = mv.move_unit(pos, turn, b, u.path, ctx, regroup=False, record=True)
            attacked += a
            overruns += o
        else:
            turn = msgspec.structs.replace(turn, moved=turn.moved + (
                mv.MovedUnit(b.token, (base,), turn.phase, rommel=action.rommel),))
    turn = msgspec.structs.replace(turn, moves_made=turn.moves_made + 1, rommel_used=turn.rommel_used or action.rommel)
    return mv.MoveOutcome(pos, turn, tuple(dict.fromkeys(attacked)), tuple(dict.fromkeys(overruns)))


# -- the Player-Turn action (turn_orders) ---------------------------------------------------

def _speeds(state: State, waiting: Mapping[str, Block], tokens) -> dict[str, int | None]:

    return {t: group_moves.block_speed(state, waiting[t]) for t in tokens if t in waiting}


def check_enter_base(state: State, turn: Turn, action: EnterBase, side: Side, ctx) -> list[Problem]:
    """RB 16.4 sidebar: the waiting Group enters by a Group Move of the Movement phase."""
    if turn.step != "movement":
        return [Problem("RB 3.44", "the units waiting off board enter their Base by a Move, in the Movement phase")]
    waiting = waiting_blocks(state, side)
    return list(entry_problems(game_map(), state.position, movement_of(turn), action, waiting,
                               _speeds(state, waiting, [u.token for u in action.units]),
                               name=wording.unit_namer(state.position)).problems)  # off board: as this replay knows


def apply_enter_base(state: State, turn: Turn, action: EnterBase, side: Side, ctx) -> TurnNext:

    m = game_map()
    waiting = waiting_blocks(state, side)
    tokens = [u.token for u in action.units]
    result = entry_problems(m, state.position, movement_of(turn), action, waiting, _speeds(state, waiting, tokens))
    out = apply_entry(m, state.position, movement_of(turn), action, waiting)
    what = f"entered its Base in event {ctx.seq} ({format_enter_base(action)})"
    state = msgspec.structs.replace(
        state, position=out.position, obligations=state.obligations + group_moves.speed_obligations(result, ctx.seq, what),
        waiting={**state.waiting, side: tuple(b for b in state.waiting.get(side, ()) if b.token not in tokens)})
    state = group_moves.note_routes(state, out.position, [(u.token, u.path) for u in action.units], turn.number)
    turn = msgspec.structs.replace(turn, movement=out.turn)
    # RB 11.4 (T-13): an Overrun interrupts movement for the Rout.
    return TurnNext("moved", state, turn, routs=tuple(group_moves.overrun_routs(state, turn, out.overruns)))


# -- listing, parsing, wording ---------------------------------------------------------------

def enter_base_orders(state: State, role: Side, turn: Turn) -> list[str]:
    """'enter <Base> <unit>' and 'enter <Base> -> <hex> <unit>', one unit each,
    where the check finds no problem (RB 16.4 sidebar)."""

    waiting = waiting_blocks(state, role)
    movement = movement_of(turn)
    if not waiting or movement.withdrawal_only or movement.marches_announced \
            or movement.moves_made >= movement.moves_allowed:
        return []
    m, pos = game_map(), state.position
    base = m.base(role)
    out = []
    for b in sorted(waiting.values(), key=lambda x: (x.unit, x.token)):
        speed = _speeds(state, waiting, [b.token])[b.token]
        name = b.unit or b.token
        at_base = msgspec.structs.replace(b, hex=base)
        routes: list[tuple[str, ...]] = [(base,)]
        if not mv.enemy_in(pos, base, role):
            on_map = msgspec.structs.replace(pos, blocks=pos.blocks + (at_base,))
            reach = reachability.reachable(m, on_map, movement, b.token, None if speed is None else max(speed - 1, 0))
            routes += [reach.paths[h] for h in sorted(reach.paths, key=m.name)]
        for path in routes:
            action = EnterBase(units=(mv.UnitMove(b.token, path),))
            if not entry_problems(m, pos, movement, action, waiting, {b.token: speed}).problems:
                dest = "" if len(path) == 1 else f" -> {m.name(path[-1])}"
                out.append(f"enter {m.name(base)}{dest} {name}")
    return out


def _waiting_named(waiting: Mapping[str, Block], text: str) -> list[str]:
    """The waiting units named in ``text`` (unit names or tokens, commas
    optional; names may hold spaces: each is the longest run of words naming
    one); every waiting unit for "" or "all"."""
    if text.strip().lower() in ("", "all"):
        return sorted(waiting, key=lambda t: (waiting[t].unit, t))
    by_name = {b.unit.lower(): b.token for b in waiting.values() if b.unit}
    by_name.update({t.lower(): t for t in waiting})
    words = text.replace(",", " ").split()
    tokens = []
    while words:
        for n in range(len(words), 0, -1):
            token = by_name.get(" ".join(words[:n]).lower())
            if token is not None:
                tokens.append(token)
                words = words[n:]
                break
        else:
            raise OrderError(f"RB 16.4: no unit of yours waits off board near the Base as {' '.join(words)!r}")
    return tokens


def parse_enter_base_order(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'enter <Base> [-> <hex>] [<units>] [rommel]' (RB 16.4 sidebar): no units
    named (or 'all') for every waiting unit."""

    m = game_map()
    base = m.base(role)
    rest = words.strip().split(None, 1)[1] if len(words.split()) > 1 else ""
    rommel = rest.lower().endswith(" rommel")
    if rommel:
        rest = rest[: -len(" rommel")]
    if "->" in rest:
        where, _, after = rest.partition("->")
        here = deployment.place_name(where.strip())
        dest, names = group_moves.split_destination(after.strip())
    else:
        here, names = group_moves.split_destination(rest)
        dest = base
    if here != base:
        raise OrderError(f"RB 16.4: the units waiting off board enter their Base, {m.name(base)}; write "
                         f"'enter {m.name(base)} [-> <hex>] <units>'")
    waiting = waiting_blocks(state, role)
    if dest != base and mv.enemy_in(state.position, base, role):
        raise OrderError(f"RB 6.0: units entering {m.name(base)} Engage the enemy units there and must stop; "
                         f"write 'enter {m.name(base)} <units>'")
    units = []
    for t in _waiting_named(waiting, names):
        if dest == base:
            units.append(mv.UnitMove(t, (base,)))
            continue
        on_map = msgspec.structs.replace(state.position, blocks=state.position.blocks + (
            msgspec.structs.replace(waiting[t], hex=base),))
        speed = _speeds(state, waiting, [t])[t]
        reach = reachability.reachable(m, on_map, movement_of(turn), t, None if speed is None else max(speed - 1, 0),
                                       rommel=rommel)
        if dest not in reach.paths:
            raise OrderError(f"RB 16.4: {waiting[t].unit or t} cannot enter {m.name(base)} and reach "
                             f"{m.name(dest)} this move")
        units.append(mv.UnitMove(t, reach.paths[dest]))
    return Order(action=EnterBase(units=tuple(units), rommel=rommel))


def format_enter_base(action: EnterBase) -> str:
    """The action in words (format_action)."""
    m = game_map()
    legs: dict[str, list[str]] = {}
    for u in action.units:
        legs.setdefault(u.path[-1] if u.path else "", []).append(u.token)
    base = next((u.path[0] for u in action.units if u.path), "")
    text = f"enter {m.name(base) if base else 'Base'}" + "".join(
        f" -> {m.name(d)} {' '.join(ts)}" if d != base else f" {' '.join(ts)}" for d, ts in legs.items())
    return text + (" rommel" if action.rommel else "")
