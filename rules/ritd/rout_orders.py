"""Routs (RB 11.3, T-12) and Overruns (RB 11.4) as the game plays them:
check, apply and parsing. Rout Attrition and the tables are rules.ritd.routs.
"""

from __future__ import annotations

import re

import msgspec

from pbem.rulesapi import Order, Problem
from rules.ritd import (
    deployment,
    group_moves,
    hidden,
    reachability,
    refusal,
    routs,
    step_losses,
    steps,
    wording,
)
from rules.ritd import movement as mv
from rules.ritd.actions import OrderError, PursuitLosses, Rout
from rules.ritd.position import Side
from rules.ritd.state import State, all_scenarios, current_identity, game_map, roster_of
from rules.ritd.steps import TurnNext
from rules.ritd.turn import Turn, movement_of


def check_rout(state: State, turn: Turn, action: object, side: Side, ctx) -> list[Problem]:
    m, pos = game_map(), state.position
    name = wording.unit_namer(pos)
    r = turn.rout_queue[0]
    where = m.name(r.hex)
    match action:
        case Rout(hex=hex_, slowest=slowest, eliminated=eliminated, recommit=recommit):
            if turn.step != "rout-slowest" or hex_ != r.hex:
                return [Problem("RB 11.3", f"now the Rout in {where} begins: 'rout {where} slowest <speed>'")]
            if sorted(set(eliminated) | set(recommit)) != sorted(r.tokens) or set(eliminated) & set(recommit) \
                    or len(set(recommit)) != len(recommit) or len(set(eliminated)) != len(eliminated):
                return [Problem("RB 11.3", "name each Routed unit once: eliminated by Rout Attrition, or with "
                                           "a new identity version (T-12)")]
            problems = []
            for t in recommit:
                label = hidden.identity_label(t, state.versions.get(t, 0) + 1)
                if not ctx.committed(label):
                    problems.append(Problem("RB 11.3", f"the new identity of {name(t)} must be committed as '{label}'"))
            if problems:
                return problems
            old = {t: current_identity(state, t, ctx) for t in r.tokens}
            new: dict[str, tuple[str, int] | None] = {}
            for t in recommit:
                value = ctx.value(hidden.identity_label(t, state.versions.get(t, 0) + 1))
                new[t] = hidden.decode_identity(value) if value is not None else None
            known_old = {t: i for t, i in old.items() if i is not None}
            known_new = {t: i for t, i in new.items() if i is not None}
            if len(known_old) == len(old) and len(known_new) == len(new):
                problems += step_losses.attrition_problems(roster_of(state), r.tokens, known_old, known_new,
                                                           eliminated, name=name)
            if not recommit:
                if slowest:
                    problems.append(Problem("RB 11.3", "no Routed unit survives: announce no slowest speed"))
                return problems
            problems += routs.check_slowest_speed(recommit, routs.SlowestSpeed(hex_, slowest),
                                                  group_moves.speeds_of(state, pos, recommit), name).problems
            return problems
        case routs.PursuitFire(hex=hex_):
            if turn.step != "rout-pursuit" or hex_ != r.hex:
                return [Problem("RB 10.5", f"Pursuit Fire on the Rout in {where} follows the announcement of "
                                           "the slowest speed")]
            eligible = routs.pursuit_eligible(pos, hex_, side, r.fired)
            speeds = group_moves.speeds_of(state, pos, [p.token for p in action.pursuers])
            return list(routs.check_pursuit(pos, action, turn.rout_slowest, eligible=eligible,
                                            speeds=speeds, name=name).problems)
        case PursuitLosses(hex=hex_):
            if turn.step != "rout-losses" or hex_ != r.hex:
                return [Problem("RB 10.5", "Pursuit hits are placed after the Pursuit dice")]
            return refusal.pursuit_losses_problems(state, turn.routers, turn.rout_hits, action, side, ctx)
        case mv.Move():
            if turn.step != "rout-withdraw" or action.withdrawal != "rout" or action.origin != r.hex \
                    or sorted(u.token for u in action.units) != sorted(turn.routers):
                return [Problem("RB 11.3", f"now the Routed units in {where} make their Withdrawal Group Move: "
                                           f"'rout {where} -> <destination>'")]
            return list(group_moves.checked_move(state, pos, movement_of(turn), action).problems)
    return [Problem("RB 11.3", f"a Rout in {where} is under way ({steps.PROMPTS[turn.step]})")]


def apply_rout(state: State, turn: Turn, action: object, side: Side, ctx) -> TurnNext:
    m, pos = game_map(), state.position
    r = turn.rout_queue[0]
    match action:
        case Rout(hex=hex_, slowest=slowest, eliminated=eliminated, recommit=recommit):
            # RB 11.3 Rout Attrition, in secret: new identity versions (T-12).
            what = f"Rout Attrition in event {ctx.seq} ({format_rout(action)})"
            state = step_losses.apply_secret_step_losses(state, r.tokens, eliminated, recommit, ctx,
                                                         kind="attrition", rule="RB 11.3", what=what, hex_=hex_)
            pos = state.position
            if recommit:
                result = routs.check_slowest_speed(recommit, routs.SlowestSpeed(hex_, slowest),
                                                   group_moves.speeds_of(state, pos, recommit))
                what = f"Routed in event {ctx.seq} announcing slowest speed {slowest}"
                state = msgspec.structs.replace(state, obligations=state.obligations + refusal.slowest_obligations(
                    state, result, hex_, tuple(recommit), ctx.seq, what))
            turn = msgspec.structs.replace(turn, routers=tuple(recommit), rout_slowest=slowest, rout_pursuit=None,
                                           rout_hits=0)
            return TurnNext("rout_announced", state, turn)
        case routs.PursuitFire():
            state = refusal.with_pursuit_obligations(state, action, turn.rout_slowest, ctx.seq)
            return TurnNext("rout_pursued", state, msgspec.structs.replace(turn, rout_pursuit=action))
        case PursuitLosses(recommit=recommit):
            state = refusal.apply_pursuit_losses(state, turn.routers, turn.rout_hits, action, ctx)
            return TurnNext("rout_losses_placed", state, msgspec.structs.replace(turn, routers=tuple(recommit)))
        case mv.Move():
            tokens = [u.token for u in action.units]
            moved = group_moves.checked_move(state, pos, movement_of(turn), action)
            what = f"moved in event {ctx.seq} ({group_moves.format_move(action)})"
            out = mv.apply_move(m, pos, movement_of(turn), action)
            state = group_moves.note_routes(state, pos, [(u.token, u.path) for u in action.units], turn.number,
                                 withdrawal=action.withdrawal)
            pos = routs.disrupt_again(out.position, tokens)  # RB 11.3: Disrupted again
            state = msgspec.structs.replace(state, position=pos, obligations=state.obligations
                                            + group_moves.speed_obligations(moved, ctx.seq, what),
                                            disrupted_in={**state.disrupted_in, **dict.fromkeys(tokens, turn.number)})
            state = group_moves.note_disruptions(state, pos, turn.number)
            return TurnNext("rout_withdrawn", state, msgspec.structs.replace(turn, movement=out.turn))
    raise ValueError(f"unchecked action {action!r}")


def parse_rout(state: State, role: Side, turn: Turn, text: str) -> Order:
    """'rout Sollum slowest 3' (or 'rout Sollum': the true slowest speed): Rout
    Attrition as new identity versions, and the survivors' slowest speed (T-12)."""
    m = re.match(r"^rout\s+(?P<where>.+?)(?:\s+slowest\s+(?P<n>\d+))?$", text.strip(), re.IGNORECASE)
    if not m or not turn.rout_queue:
        raise OrderError("RB 11.3: write 'rout <hex> slowest <speed>' when a Rout begins")
    hex_, r = deployment.place_name(m.group("where")), turn.rout_queue[0]
    pos, roster = state.position, all_scenarios().roster
    eliminated, recommit, secrets, speeds = [], [], {}, []
    for t in r.tokens:
        b = pos.block(t)
        u = roster.get(b.unit)
        cv = b.cv - u.cv_per_step
        if cv < u.min_cv:
            eliminated.append(t)
            continue
        recommit.append(t)
        speeds.append(group_moves.speed_of(state, b.unit))
        secrets[hidden.identity_label(t, state.versions.get(t, 0) + 1)] = hidden.encode_identity(b.unit, cv)
    slowest = int(m.group("n")) if m.group("n") else min(speeds, default=0)
    return Order(action=Rout(hex=hex_, slowest=slowest, eliminated=tuple(eliminated), recommit=tuple(recommit)),
                 secrets=secrets)


# -- the orders listed (legal_orders) --------------------------------------------------

def listed_rout_slowest(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "rout-slowest"."""
    m = game_map()
    r = turn.rout_queue[0]
    roster = all_scenarios().roster
    speeds = [group_moves.speed_of(state, b.unit) for b in map(state.position.block, r.tokens)
              if b.cv - roster.get(b.unit).cv_per_step >= roster.get(b.unit).min_cv]
    return [f"rout {m.name(r.hex)} slowest {min(speeds)}" if speeds else f"rout {m.name(r.hex)}"]


def listed_rout_pursuit(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "rout-pursuit"."""
    m = game_map()
    r = turn.rout_queue[0]
    name = m.name(r.hex)
    able = [t for t in routs.pursuit_eligible(state.position, r.hex, role, r.fired)
            if routs.pursuit_dice_for(turn.rout_slowest, group_moves.block_speed(state, state.position.block(t)) or 0)]
    return [f"pursue {name} with none"] + ([f"pursue {name} with all"] if able else []) + \
        [f"pursue {name} with {group_moves.unit_name(state, t)}" for t in able]


def listed_rout_losses(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "rout-losses"."""
    return ["pursuit losses auto"]


def listed_rout_withdrawal(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "rout-withdraw"."""
    m = game_map()
    r = turn.rout_queue[0]
    pos = state.position
    common: set[str] | None = None
    for t in turn.routers:
        b = pos.block(t)
        dests = set(reachability.reachable(m, pos, movement_of(turn), t, group_moves.block_speed(state, b), withdrawal="rout").paths)
        common = dests if common is None else common & dests
    return [f"rout {m.name(r.hex)} -> {m.name(d)}" for d in sorted(common or (), key=m.name) if d != r.hex]


# -- the actions in words (format_action) ---------------------------------------------------

def format_rout(action: Rout) -> str:
    """The action in words (format_action)."""
    m = game_map()
    hex_ = action.hex
    slowest = action.slowest
    eliminated = action.eliminated
    recommit = action.recommit
    return (f"rout {m.name(hex_)} slowest {slowest}: eliminated by Rout Attrition "
            f"{', '.join(eliminated) or 'none'}; new identities for {', '.join(recommit) or 'none'}")


# -- orders read (parse_order) ---------------------------------------------------------------

def parse_rout_order(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'rout <hex> slowest <speed>' (RB 11.3)."""
    return parse_rout(state, role, turn, words)
