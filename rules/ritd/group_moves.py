"""Group Moves, Regroups and Forced Marches as orders (RB 5.0-6.4): unit speeds
(RB 6.1, 17.0 I-Tanks), the routes recorded for the map (decisions M-24),
the Supply Network a Group Refusing Battle is judged on (RB 5.3, EX-26), the
Routs a Move's Overruns cause (RB 11.4, T-13), parsing moves and listing the
legal ones. The move rules are rules.ritd.movement.
"""

from __future__ import annotations

import re
from typing import cast

import msgspec

from pbem.rulesapi import Order, Problem
from rules.ritd import (
    canonical,
    checked,
    deployment,
    forced_marches,
    reachability,
    routs,
    steps,
    wording,
)
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd.actions import EndMovement, ForcedMarches, OrderError
from rules.ritd.hidden import Obligation
from rules.ritd.names import UnknownLocation
from rules.ritd.position import Block, Position, Side
from rules.ritd.state import LastMove, State, all_scenarios, game_map, roster_of
from rules.ritd.steps import TurnNext
from rules.ritd.turn import PendingRout, Turn, movement_of
from rules.ritd.units import OptionalITank


def block_speed(state: State, block: Block) -> int | None:
    """A block's speed in this game when this replay knows its unit (RB 6.1,
    17.0 optional rules), else None."""
    if not block.unit:
        return None
    return speed_of(state, block.unit)


def unit_speed(unit: str) -> int:
    """The printed speed of ``unit`` (RB 6.1); UnknownUnit if it is none."""
    return all_scenarios().roster.get(unit).speed


def speed_of(state: State, unit: str) -> int:
    """``unit``'s Unit Speed in this game: 2 for an I-tank under the optional
    rule "Allied I-Tanks" (RB 17.0), else its printed speed (RB 6.1).
    UnknownUnit if it is none."""
    u = roster_of(state).get(unit)
    return u.speed if isinstance(u, OptionalITank) else unit_speed(unit)


def speeds_of(state: State, pos: Position, tokens) -> dict[str, int | None]:
    return {t: block_speed(state, pos.block(t)) for t in tokens if pos.has_block(t)}


def checked_move(state: State, pos: Position, movement: mv.MovementTurn, action: mv.Move,
                 network=None) -> mv.MoveCheck:
    """The check of a Move (RB 5.0-6.4) with this game's unit speeds, blocks
    named as ``pos`` knows them. Judged on the default Supply Network it is
    kept for ``apply`` (rules.ritd.checked)."""
    def compute() -> mv.MoveCheck:
        tokens = [u.token for u in action.units]
        return mv.check_move(game_map(), pos, movement, action, speeds_of(state, pos, tokens), network=network,
                             name=wording.unit_namer(pos))

    if network is not None:
        return compute()
    return checked.once("move", (pos, movement, action, state.options), compute)


def checked_marches(state: State, pos: Position, movement: mv.MovementTurn,
                    marches: tuple[mv.ForcedMarch, ...]) -> mv.MoveCheck:
    """The check of the Forced Marches announced (RB 6.4) with this game's
    unit speeds, blocks named as ``pos`` knows them, kept for ``apply``
    (rules.ritd.checked)."""
    def compute() -> mv.MoveCheck:
        speeds = speeds_of(state, pos, [f.token for f in marches])
        return forced_marches.check_forced_marches(game_map(), pos, movement, marches, speeds,
                                                   name=wording.unit_namer(pos))

    return checked.once("marches", (pos, movement, marches, state.options), compute)


def speed_obligations(result: mv.MoveCheck, seq: int, what: str) -> tuple[Obligation, ...]:
    return tuple(Obligation(token=o.token, seq=seq, kind="speed", rule=o.rule, needed=o.min_speed, what=what)
                 for o in result.obligations)


def note_disruptions(state: State, pos: Position, number: int) -> State:
    """Record when units became Disrupted (RB 11.2) and forget recovered ones."""
    since = {t: n for t, n in state.disrupted_in.items() if pos.has_block(t) and pos.block(t).disrupted}
    for b in pos.blocks:
        if b.disrupted and b.token not in since:
            since[b.token] = number
    return msgspec.structs.replace(state, position=pos, disrupted_in=since)


def note_routes(state: State, pos: Position, routes: list[tuple[str, tuple[str, ...]]], number: int, *,
                 withdrawal: str = "", forced: bool = False) -> State:
    """Add the routes (token, hexes) just moved along, in Player-Turn
    ``number``, to ``last_moves`` (``pos``: the position before they moved).
    A route going on from where the block's last one ended (a Forced March
    after its Move) extends it: one arrow per block's journey."""
    moves = list(state.last_moves)
    for token, path in routes:
        if len(path) < 2:
            continue
        last = next((i for i in reversed(range(len(moves))) if moves[i].token == token), None)
        if last is not None and moves[last].turn == number and moves[last].path[-1] == path[0]:
            moves[last] = msgspec.structs.replace(moves[last], path=moves[last].path + tuple(path[1:]), forced=forced)
        else:
            moves.append(LastMove(token=token, side=pos.block(token).side, path=tuple(path), turn=number,
                                  withdrawal=cast(mv.WithdrawalKind, withdrawal), forced=forced))
    return msgspec.structs.replace(state, last_moves=tuple(moves))


def refusal_network(pos: Position, move: mv.Move):
    """RB 5.3 condition 3 for a refusing Group that leaves Disrupted units behind
    (EX-26): they Rout out of the hex at once, so the Supply Network is judged
    without them (T-12)."""
    if move.withdrawal != "refuse":
        return None
    side = next((pos.block(u.token).side for u in move.units if pos.has_block(u.token)), None)
    left = [b.token for b in pos.blocks_in(move.origin, side)] if side else []
    left = [t for t in left if pos.block(t).disrupted]
    if not left:
        return None
    return lambda mm, pp, ss: mv.default_network(mm, ls.eliminate(pp, [t for t in left if pp.has_block(t)]), ss)


def overrun_routs(state: State, turn: Turn, hexes) -> list[PendingRout]:
    """RB 11.4 Overruns (T-13): the Disrupted enemy units in each Overrun hex
    Rout; only the Overrunning units (of both Moves of an Offensive Turn, RB 11
    sidebar) may Pursue, so every other active unit there counts as fired."""
    pos, out = state.position, []
    for h in dict.fromkeys(hexes):
        if not routs.is_overrun(pos, h, turn.active):
            continue
        pursuers = set(routs.overrun_pursuers(pos, movement_of(turn), h))
        fired = tuple(b.token for b in pos.blocks_in(h, turn.active) if b.token not in pursuers)
        tokens = tuple(b.token for b in pos.blocks_in(h, turn.passive))
        out.append(PendingRout(hex=h, side=turn.passive, tokens=tokens, fired=fired))
    return out


ARROW = re.compile(r"\s*->\s*")


def units_named(state: State, role: Side, text: str, origin: str) -> list[str]:
    """My units named in ``text`` ("21Pz/5 7/4 Armd", commas optional; "all":
    every undisrupted unit in ``origin``). Names may hold spaces, so each is
    the longest run of words that names a unit of mine or a token."""
    text = text.strip()
    if text.lower() in ("", "all"):
        return [b.token for b in state.position.blocks_in(origin, role) if not b.disrupted]
    tokens = []
    for part in re.split(r"\s*,\s*", text):
        words = part.split()
        while words:
            for n in range(len(words), 0, -1):
                try:
                    tokens.append(deployment.own_token(state, role, " ".join(words[:n])))
                except ValueError:
                    if n == 1:
                        deployment.own_token(state, role, " ".join(words))  # raises, naming what was not understood
                    continue
                words = words[n:]
                break
    return tokens


def _route(state: State, turn: Turn, token: str, dest: str, *, withdrawal: str = "", rommel: bool = False,
           via: list[str] | None = None, together: tuple[str, ...] = (), regroup: str | None = None) -> tuple[str, ...]:
    """The unit's path: the explicit hexes given, or the shortest legal one
    (``together``: the other units of the Move, which do not stay behind)."""
    start = state.position.block(token).hex
    if via:
        return (start, *via, dest) if via[0] != start else (*via, dest)
    if regroup is not None and movement_of(turn).continuing(mv.Move(
            kind="regroup", origin=regroup, units=(), destination=dest, rommel=rommel,
            withdrawal=cast(mv.WithdrawalKind, withdrawal))) is not None:
        # RB 11.4 step 5: the rest of a Regroup an Overrun interrupted is judged as that Regroup.
        reach = reachability.reachable(game_map(), state.position, movement_of(turn), token,
                                       block_speed(state, state.position.block(token)), rommel=rommel,
                                       withdrawal=cast(mv.WithdrawalKind, withdrawal), regroup=(regroup, dest))
        if dest in reach.paths:
            return reach.paths[dest]
    network = refusal_network(state.position, mv.Move(kind="group", origin=start, withdrawal=cast(mv.WithdrawalKind, withdrawal),
                                                       units=(mv.UnitMove(token, (start,)),)))
    reach = reachability.reachable(game_map(), state.position, movement_of(turn), token, block_speed(state, state.position.block(token)),
                         withdrawal=cast(mv.WithdrawalKind, withdrawal), rommel=rommel, network=network, together=together)
    path = reach.paths.get(dest)
    if path is None:
        explanation = reachability.explain_move(game_map(), state.position, movement_of(turn), token,
                                      block_speed(state, state.position.block(token)), withdrawal=cast(mv.WithdrawalKind, withdrawal), rommel=rommel)
        why = next((line.strip() for line in explanation if line.strip().startswith(game_map().name(dest) + ":")), "")
        raise OrderError(f"{unit_name(state, token)} cannot reach {game_map().name(dest)} this move"
                         + (f" ({why})" if why else "") + " (see 'pbem explain move')")
    return path


def unit_name(state: State, token: str) -> str:
    b = state.position.block(token)
    return b.unit or f"block {token}"


def parse_move(state: State, role: Side, turn: Turn, text: str, kind: str) -> mv.Move:
    """'group Msus -> Mechili 21Pz/5 3Rec [; -> Charruba 8Pz]' and the like."""
    if turn.movement is None:
        raise OrderError(f"not an order now: '{text}' (now: {steps.PROMPTS.get(turn.step, turn.step)})")
    rommel = bool(re.search(r"\s+rommel$", text, re.IGNORECASE))
    text = re.sub(r"\s+rommel$", "", text, flags=re.IGNORECASE)
    withdrawal = {"withdraw": "pass", "refuse-battle": "refuse", "rout": "rout"}.get(kind, "")
    body = text.split(None, 1)[1] if " " in text else ""
    if kind == "withdraw" and re.match(r"^regroup\s", body, re.IGNORECASE):  # a Regroup Withdrawal (RB 4.5, 5.3)
        kind, body = "regroup", body.split(None, 1)[1]
    if kind == "regroup":
        body = re.sub(r"^cp\s+", "", body, flags=re.IGNORECASE)
    parts = [p for p in body.split(";") if p.strip()]
    if not parts:
        raise OrderError(f"write '{kind} <from> -> <to> <units>'")
    origin = deployment.place_name(ARROW.split(parts[0], 1)[0])
    legs = []
    for i, part in enumerate(parts):
        pieces = ARROW.split(part.strip())
        if i == 0 or pieces and not pieces[0]:
            pieces = pieces[1:]
        if not pieces:
            raise OrderError("RB 5.1: name a destination after '->'")
        *via, last = pieces
        dest, units = split_destination(last)
        legs.append(([deployment.place_name(v) for v in via], dest, units))
    moves = []
    if kind == "regroup":
        if len(legs) != 1:  # the words Python gave before (a Regroup has one destination, RB 5.2)
            raise OrderError("too many values to unpack (expected 1)")
        (via, dest, units), = legs
        tokens = units_named(state, role, units, origin) if units.strip().lower() not in ("", "all") else \
            [b.token for b in state.position.blocks_of(role) if not b.disrupted and not turn.movement.has_moved(b.token)
             and (b.hex == origin or game_map().is_adjacent(b.hex, origin))]
        for t in tokens:
            moves.append(mv.UnitMove(t, _route(state, turn, t, dest, rommel=rommel, via=via or None,
                                               withdrawal=cast(mv.WithdrawalKind, withdrawal), together=tuple(tokens),
                                               regroup=origin)))
        return mv.Move(kind="regroup", origin=origin, destination=dest, units=tuple(moves), rommel=rommel,
                       withdrawal=cast(mv.WithdrawalKind, withdrawal))
    chosen_by_leg = []
    for _via, _dest, units in legs:
        if kind == "rout" and units.strip().lower() in ("", "all"):
            chosen_by_leg.append(list(turn.routers))  # the Routed units (RB 11.3)
        else:
            chosen_by_leg.append(units_named(state, role, units, origin))
    group = tuple(t for chosen in chosen_by_leg for t in chosen)
    for (via, dest, _), chosen in zip(legs, chosen_by_leg):
        for t in chosen:
            moves.append(mv.UnitMove(t, _route(state, turn, t, dest, withdrawal=cast(mv.WithdrawalKind, withdrawal), rommel=rommel,
                                               via=via or None, together=group)))
    return mv.Move(kind="group", origin=origin, units=tuple(moves), withdrawal=cast(mv.WithdrawalKind, withdrawal), rommel=rommel)


def split_destination(text: str) -> tuple[str, str]:
    """'Mechili 21Pz/5 3Rec' -> (hex of Mechili, '21Pz/5 3Rec'): the longest
    leading words that name a place."""
    words = text.split()
    for n in range(len(words), 0, -1):
        try:
            return game_map().resolve(" ".join(words[:n])), " ".join(words[n:])
        except UnknownLocation:
            continue
    return deployment.place_name(text), ""


def parse_march(state: State, role: Side, turn: Turn, text: str) -> mv.ForcedMarch:
    """'21Pz/5 -> Sofafi': the unit's route this turn plus the extra hex (RB 6.4)."""
    pieces = ARROW.split(text.strip())
    if len(pieces) != 2:
        raise OrderError("RB 6.4: write 'forced-march <unit> -> <hex>'")
    token = deployment.own_token(state, role, pieces[0])
    dest = deployment.place_name(pieces[1])
    moved = movement_of(turn).moved_unit(token)
    if moved is not None and not moved.regroup:
        return mv.ForcedMarch(token=token, path=moved.path + (dest,))
    reach = reachability.reachable(game_map(), state.position, movement_of(turn), token, block_speed(state, state.position.block(token)),
                         forced=True)
    path = reach.paths.get(dest)
    if path is None:
        raise OrderError(f"RB 6.4: {unit_name(state, token)} cannot reach {game_map().name(dest)} even by "
                         "Forced March")
    return mv.ForcedMarch(token=token, path=path)


def movement_orders(state: State, role: Side, turn: Turn) -> list[str]:
    """Each unit alone to each hex it can reach in a Group Move (RB 5.1)."""
    return [order for b in group_movers(state, role, turn) for order in unit_move_orders(state, role, turn, b)]


def group_movers(state: State, role: Side, turn: Turn) -> list[Block]:
    """The blocks that may still make a Group Move now (RB 5.1): Undisrupted,
    not moved this phase, while a Move is left and no Forced March is announced;
    by hex and unit."""
    movement = movement_of(turn)
    if movement.marches_announced:
        return []
    fresh = movement.moves_made < movement.moves_allowed
    return [b for b in sorted(state.position.blocks_of(role), key=lambda b: (b.hex, b.unit))
            if not b.disrupted and not movement.has_moved(b.token)
            and (fresh or _interrupted_moves_of(movement, b))]


def _interrupted_moves_of(movement: mv.MovementTurn, b: Block) -> list[mv.InterruptedMove]:
    """The Moves an Overrun interrupted that ``b`` was part of and may complete
    (RB 11.4 step 5): a Group Move from its hex, a Regroup whose Command Point
    is its hex or next to it (RB 5.2)."""
    m = game_map()
    return [i for i in movement.interrupted
            if i.origin == b.hex or i.kind == "regroup" and m.is_adjacent(b.hex, i.origin)]


def unit_move_orders(state: State, role: Side, turn: Turn, b: Block) -> list[str]:
    """The block ``b`` alone to each hex it can reach in a Group Move (RB 5.1;
    a Withdrawal Group Move in a Withdrawal-only phase, RB 5.3): one search;
    and as the rest of each Move an Overrun interrupted that it may complete
    (RB 11.4 step 5)."""
    m, pos, movement = game_map(), state.position, movement_of(turn)
    name = b.unit or b.token
    out: list[str] = []
    if movement.moves_made < movement.moves_allowed:
        verb = "withdraw" if movement.withdrawal_only else "group"
        reach = reachability.reachable(m, pos, movement, b.token, block_speed(state, b),
                                       withdrawal="pass" if movement.withdrawal_only else "")
        out += [f"{verb} {m.name(b.hex)} -> {m.name(dest)} {name}"
                for dest in sorted(reach.paths, key=m.name) if dest != b.hex]
    for i in _interrupted_moves_of(movement, b):
        verb = {"pass": "withdraw"}.get(i.withdrawal, "group")
        suffix = " rommel" if i.rommel else ""
        if i.kind == "regroup":
            reach = reachability.reachable(m, pos, movement, b.token, block_speed(state, b), rommel=i.rommel,
                                           withdrawal=i.withdrawal, regroup=(i.origin, i.destination))
            if i.destination in reach.paths:
                out.append(f"{'withdraw ' if i.withdrawal else ''}regroup {m.name(i.origin)} -> "
                           f"{m.name(i.destination)} {name}{suffix}")
            continue
        reach = reachability.reachable(m, pos, movement, b.token, block_speed(state, b), rommel=i.rommel,
                                       withdrawal=i.withdrawal)
        out += [f"{verb} {m.name(b.hex)} -> {m.name(dest)} {name}{suffix}"
                for dest in sorted(reach.paths, key=m.name) if dest != b.hex]
    return list(dict.fromkeys(out))


def forced_march_orders(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """'forced-march <unit> -> <hex>' (RB 6.4), one unit each, once the Moves are
    made: a unit of this phase's Group Moves one hex on from where it stopped, or
    a unit in or next to a Regroup's Command Point to that Regroup's destination;
    each offered only if ``check`` finds no problem with it."""
    m, pos, movement = game_map(), state.position, movement_of(turn)
    if movement.marches_announced or movement.withdrawal_only:
        return []
    candidates: list[tuple[Block, tuple[str, ...]]] = []
    for b in sorted(pos.blocks_of(role), key=lambda b: (b.hex, b.unit)):
        rec = movement.moved_unit(b.token)
        if rec is not None and rec.phase == movement.phase and not rec.regroup:
            candidates += [(b, rec.path + (dest,)) for dest in sorted(m.passable_neighbours(rec.path[-1]), key=m.name)]
        elif rec is None and not b.disrupted:
            dests = {r.destination for r in forced_marches.regroups_near(m, movement, b.hex)}
            if dests:
                reach = reachability.reachable(m, pos, movement, b.token, block_speed(state, b), forced=True)
                candidates += [(b, tuple(reach.paths[d])) for d in sorted(dests, key=m.name) if d in reach.paths]
    out = []
    for b, path in candidates:
        march = ForcedMarches(marches=(mv.ForcedMarch(token=b.token, path=path),))
        if not (canonical.problems(state, march, role) or check_forced_marches(state, turn, march, role, ctx)):
            out.append(f"forced-march {b.unit or b.token} -> {m.name(path[-1])}")
    return out


# -- RB 5.0-6.4: the Player-Turn's Moves, Forced Marches and the end of movement -------------

def check_move_action(state: State, turn: Turn, action: mv.Move, side: Side, ctx) -> list[Problem]:
    """A Move in the Movement phase (RB 3.44, 5.0), or the Withdrawal Group
    Move of a Group Refusing Battle (RB 10.2)."""
    m, pos = game_map(), state.position
    if turn.step == "refuse-withdraw":
        if action.withdrawal != "refuse" or action.origin != turn.refusing:
            return [Problem("RB 10.2", f"now the Group Refusing Battle in {m.name(turn.refusing)} "
                                       "makes its Withdrawal Group Move")]
        problems = mv.refusal_problems(m, pos, movement_of(turn), action.origin, name=wording.unit_namer(pos))
    elif turn.step == "movement":
        problems = []
    else:
        return [Problem("RB 3.44", "Moves are made in the Movement phase")]
    result = checked_move(state, pos, movement_of(turn), action, network=refusal_network(pos, action))
    return problems + list(result.problems)


def apply_move_action(state: State, turn: Turn, action: mv.Move, side: Side, ctx) -> TurnNext:
    m, pos = game_map(), state.position
    result = checked_move(state, pos, movement_of(turn), action)
    what = f"moved in event {ctx.seq} ({format_move(action)})"
    out = mv.apply_move(m, pos, movement_of(turn), action, defer_retreats=True)
    state = msgspec.structs.replace(state, position=out.position,
                                    obligations=state.obligations + speed_obligations(result, ctx.seq, what))
    # Retreating units' routes are drawn when they are taken (T-35).
    state = note_routes(state, pos, [(u.token, u.path) for u in action.units
                                     if out.turn.pending_retreat(u.token) is None], turn.number,
                        withdrawal=action.withdrawal)
    state = note_disruptions(state, out.position, turn.number)
    turn = msgspec.structs.replace(turn, movement=out.turn)
    # RB 11.4 (T-13): an Overrun interrupts movement for the Rout.
    return TurnNext("moved", state, turn, routs=tuple(overrun_routs(state, turn, out.overruns)), hex=action.origin)


def check_forced_marches(state: State, turn: Turn, action: ForcedMarches, side: Side, ctx) -> list[Problem]:
    """RB 6.4: announced once, at the end of the Movement phase, after all Moves."""
    if turn.step != "movement":
        return [Problem("RB 6.4", "Forced Marches are announced at the end of the Movement phase")]
    if movement_of(turn).marches_announced:
        return [Problem("RB 6.4", "Forced Marches are announced once, after all Moves")]
    return list(checked_marches(state, state.position, movement_of(turn), action.marches).problems)


def apply_forced_marches(state: State, turn: Turn, action: ForcedMarches, side: Side, ctx) -> State:
    pos = state.position
    result = checked_marches(state, pos, movement_of(turn), action.marches)
    movement = forced_marches.announce_forced_marches(game_map(), pos, movement_of(turn), action.marches)
    obligations = speed_obligations(result, ctx.seq, f"forced march announced in event {ctx.seq}")
    return msgspec.structs.replace(state, obligations=state.obligations + obligations,
                                   turn=msgspec.structs.replace(turn, movement=movement))


def check_end_movement(state: State, turn: Turn, action: EndMovement, side: Side, ctx) -> list[Problem]:
    return [] if turn.step == "movement" else [Problem("RB 3.44", "the Movement phase is not under way")]


def apply_end_movement(state: State, turn: Turn, action: EndMovement, side: Side, ctx) -> TurnNext:
    return TurnNext("movement_ended", state, turn)


# -- the orders listed (legal_orders) --------------------------------------------------


# -- the actions in words (format_action) ---------------------------------------------------

def format_move(action: mv.Move) -> str:
    """The action in words (format_action)."""
    m = game_map()
    kind = action.kind
    origin = action.origin
    units = action.units
    dest = action.destination
    w = action.withdrawal
    rommel = action.rommel
    verb = {"pass": "withdraw", "refuse": "refuse-battle", "rout": "rout"}.get(w, kind)
    legs: dict[str, list[str]] = {}
    for u in units:
        legs.setdefault(u.destination, []).append(u.token)
    text = f"{verb} {m.name(origin)}" + "".join(f" -> {m.name(d)} {' '.join(ts)}" for d, ts in legs.items())
    if kind == "regroup" and dest and not units:
        text += f" -> {m.name(dest)}"
    return text + (" rommel" if rommel else "")


def format_forced_marches(action: ForcedMarches) -> str:
    """The action in words (format_action)."""
    m = game_map()
    marches = action.marches
    return "forced-march " + "; ".join(f"{f.token} -> {m.name(f.path[-1])}" for f in marches)


def format_end_movement(action: EndMovement) -> str:
    """The action in words (format_action)."""
    return "end movement"


# -- orders read (parse_order) ---------------------------------------------------------------

def parse_move_order(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'group|regroup|withdraw|refuse-battle|rout <from> -> <to> <units>; ...' (RB 5.0-5.3, 10.2, 11.3)."""
    return Order(action=parse_move(state, role, turn, words, low.split(None, 1)[0]))


def parse_forced_march_order(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'forced-march <unit> -> <hex>; ...' (RB 6.4)."""
    return Order(action=ForcedMarches(marches=tuple(parse_march(state, role, turn, part)
                                                      for part in words.split(None, 1)[1].split(";"))))


def parse_end_movement(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'end movement' (RB 3.44)."""
    return Order(action=EndMovement())
