"""Refusing Battle (RB 8.4, 10.2) and Pursuit Fire (RB 10.5): the announcement,
the Pursuit Fire and its losses, the Withdrawal Group Move.
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
    routs,
    step_losses,
    wording,
)
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd.actions import AcceptBattle, OrderError, PursuitLosses, RefuseBattle
from rules.ritd.hidden import Obligation
from rules.ritd.position import Side
from rules.ritd.state import State, decode_identity, game_map, roster_of
from rules.ritd.steps import TurnNext
from rules.ritd.turn import Turn, movement_of


def check_refusal(state: State, turn: Turn, action: object, side: Side, ctx) -> list[Problem]:
    """RB 10.2 Refusing Battle: the announcement, the Pursuit Fire, the losses."""
    m, pos = game_map(), state.position
    name = wording.unit_namer(pos)
    match action:
        case RefuseBattle(hex=hex_, slowest=slowest):
            if turn.step != "refuse" or hex_ not in turn.refusals:
                return [Problem("RB 8.4", f"there is no Attacked Group awaiting a decision in "
                                          f"{m.name(hex_) if hex_ in m.hexes else hex_}")]
            problems = mv.refusal_problems(m, pos, movement_of(turn), hex_, name=name)
            refusers, _ = routs.refusal_split(pos, hex_, side)  # Disrupted units left behind Rout (T-12)
            speeds = group_moves.speeds_of(state, pos, refusers)
            problems += routs.check_slowest_speed(refusers, routs.SlowestSpeed(hex_, slowest), speeds,
                                                  name).problems
            return problems
        case routs.PursuitFire(hex=hex_):
            if turn.step != "refuse-pursuit" or hex_ != turn.refusing:
                return [Problem("RB 10.5", "Pursuit Fire follows the refusing player's announcement of the "
                                           "slowest speed")]
            eligible = routs.pursuit_eligible(pos, hex_, side)
            speeds = group_moves.speeds_of(state, pos, [p.token for p in action.pursuers])
            return list(routs.check_pursuit(pos, action, turn.slowest, eligible=eligible, speeds=speeds,
                                            name=name).problems)
        case PursuitLosses(hex=hex_):
            if turn.step != "refuse-losses" or hex_ != turn.refusing:
                return [Problem("RB 10.5", "Pursuit hits are placed after the Pursuit dice")]
            return pursuit_losses_problems(state, turn.refusers, turn.hits, action, side, ctx)
    return [Problem("RB 3.0", "not an order for now")]


def pursuit_losses_problems(state: State, tokens: tuple[str, ...], hits: int, action: PursuitLosses,
                             side: Side, ctx) -> list[Problem]:
    """Pursuit hits placed in secret on ``tokens`` (T-10): each named once, new
    versions committed, the implied placement legal where this replay knows it."""
    eliminated, recommit = action.eliminated, action.recommit
    name = wording.unit_namer(state.position)
    problems = []
    strange = [t for t in eliminated if t not in tokens] + [t for t in recommit if t in eliminated]
    if strange or sorted(set(eliminated) | set(recommit)) != sorted(tokens) \
            or len(set(recommit)) != len(recommit):
        problems.append(Problem("RB 10.5", "name each pursued unit once: eliminated, or with a new "
                                           "identity version (T-10)"))
        return problems
    for t in recommit:
        label = hidden.identity_label(t, state.versions.get(t, 0) + 1)
        if not ctx.committed(label):
            problems.append(Problem("RB 10.5", f"the new identity of {name(t)} must be committed as '{label}'"))
    if problems:
        return problems
    old, new = loss_identities(state, tokens, recommit, ctx)
    if old is not None and new is not None:
        problems += step_losses.loss_problems(state, side, action.hex, tokens, old, new, eliminated, hits, name)
    return problems


def _loss_labels(state: State, tokens: tuple[str, ...], recommit: tuple[str, ...]) -> tuple[str, ...]:
    """The old identity versions of the pursued units, then the survivors' new ones."""
    v = state.versions
    return tuple(hidden.identity_label(t, v.get(t, 0)) for t in tokens) + \
        tuple(hidden.identity_label(t, v.get(t, 0) + 1) for t in recommit)


def loss_identities(state: State, tokens: tuple[str, ...], recommit: tuple[str, ...], ctx):
    """(old, new) identities by token when this replay knows them all, else (None, None)."""
    labels = _loss_labels(state, tokens, recommit)
    values = [ctx.value(lbl) for lbl in labels]
    if any(v is None for v in values):
        return None, None
    try:
        ids = [decode_identity(state, lbl, v) for lbl, v in zip(labels, values)]
    except ValueError:
        return None, None
    n = len(tokens)
    return dict(zip(tokens, ids[:n])), dict(zip(recommit, ids[n:]))


def slowest_obligations(state: State, result: routs.PursuitCheck, hex_: str, tokens: tuple[str, ...], seq: int,
                         what: str) -> tuple[Obligation, ...]:
    """The deferred checks of a slowest-speed announcement (RB 10.5): a speed
    range per hidden unit, and "slowest" over the current identity versions."""
    obligations = []
    for ob in result.obligations:
        obligations += [Obligation(token=t, seq=seq, kind="speed-range", rule=ob.rule, what=what,
                                   hex=hex_, needed=ob.min_speed, maximum=ob.max_speed) for t in ob.tokens]
        if ob.slowest:
            labels = tuple(hidden.identity_label(t, state.versions.get(t, 0)) for t in tokens)
            obligations.append(Obligation(token=tokens[0], seq=seq, kind="slowest", rule=ob.rule,
                                          what=what, hex=hex_, needed=ob.min_speed, tokens=tokens,
                                          labels=labels))
    return tuple(obligations)


def with_pursuit_obligations(state: State, fire: routs.PursuitFire, slowest: int, seq: int) -> State:
    """RB 10.5: each pursuer rolls dice for its speed against the announced
    ``slowest``; what this replay cannot see of a hidden pursuer's speed is
    kept as a "speed-range" obligation (Refusals, Retreats and Routs alike)."""
    tokens = [p.token for p in fire.pursuers]
    result = routs.check_pursuit(state.position, fire, slowest, eligible=tokens,
                                 speeds=group_moves.speeds_of(state, state.position, tokens))
    obligations = tuple(Obligation(token=t, seq=seq, kind="speed-range", rule=ob.rule,
                                   what=f"pursued in event {seq} against slowest speed {slowest}",
                                   hex=fire.hex, needed=ob.min_speed, maximum=ob.max_speed)
                        for ob in result.obligations for t in ob.tokens)
    return msgspec.structs.replace(state, obligations=state.obligations + obligations)


def apply_pursuit_losses(state: State, tokens: tuple[str, ...], hits: int, action: PursuitLosses, ctx) -> State:
    """T-10: survivors get new identity versions, the eliminated leave; what this
    replay cannot check becomes a "losses" obligation."""
    pos, hex_, eliminated, recommit = state.position, action.hex, action.eliminated, action.recommit
    _, new = loss_identities(state, tokens, recommit, ctx)
    obligations = state.obligations
    if new is None:
        obligations += (Obligation(token=tokens[0], seq=ctx.seq, kind="losses", rule="RB 10.5",
                                   what=f"Pursuit losses placed in event {ctx.seq} ({hits} hits)",
                                   hex=hex_, tokens=tokens, labels=_loss_labels(state, tokens, recommit),
                                   eliminated=eliminated, hits=hits),)
    versions = {**state.versions, **{t: state.versions.get(t, 0) + 1 for t in recommit}}
    changed = []
    for t in recommit:
        b = pos.block(t)
        ident = ctx.value(hidden.identity_label(t, versions[t]))
        if ident is not None:
            unit, cv = hidden.decode_identity(ident)
            changed.append(msgspec.structs.replace(b, unit=unit, cv=cv))
        elif b.unit:
            # The hits went on upright blocks (RB 10.5, 7.3): a unit this replay
            # knew now has a CV it cannot see. Its face is forgotten rather than
            # kept stale; its new identity is checked when opened (T-10, T-40).
            changed.append(msgspec.structs.replace(b, unit="", cv=0, revealed=False))
    pos = ls.eliminate(pos.replace_blocks(changed), eliminated)
    # The survivors' new versions are secret (T-10): none of them stays disclosed
    # in any fold, so every fold's view of them agrees (issue 21, view.py).
    disclosed = tuple(t for t in state.disclosed if t not in recommit)
    return msgspec.structs.replace(state, position=pos, versions=versions, obligations=obligations,
                                   disclosed=disclosed)


def parse_pursuit(state: State, role: Side, turn: Turn, text: str) -> routs.PursuitFire:
    """'pursue Sollum with Trento, GGFF' / 'pursue Sollum with none' / '... with all' (RB 10.5)."""
    m = re.match(r"^pursue\s+(?P<where>.+?)\s+with\s+(?P<units>.+)$", text, re.IGNORECASE)
    if not m:
        raise OrderError("RB 10.5: write 'pursue <hex> with <units>' or 'pursue <hex> with none'")
    hex_ = deployment.place_name(m.group("where"))
    units = m.group("units").strip().lower()
    pos = state.position
    routing = turn.step == "rout-pursuit"
    slowest = turn.rout_slowest if routing else turn.slowest
    fired = turn.rout_queue[0].fired if routing else turn.probe_fired
    if units == "none":
        return routs.PursuitFire(hex=hex_)
    if units == "all":
        tokens = [t for t in routs.pursuit_eligible(pos, hex_, role, fired)
                  if routs.pursuit_dice_for(slowest, group_moves.block_speed(state, pos.block(t)) or 0)]
    else:
        tokens = group_moves.units_named(state, role, m.group("units"), hex_)
    pursuers = []
    for t in tokens:
        dice = routs.pursuit_dice_for(slowest, group_moves.block_speed(state, pos.block(t)) or 0)
        if not dice:
            raise OrderError(f"RB 10.5: {group_moves.unit_name(state, t)} is slower than the "
                             f"{'Routed units' if routing else 'Retreating units' if turn.retreating else 'refusing Group'} "
                             f"(speed {slowest}) and cannot pursue")
        pursuers.append(routs.Pursuer(t, dice))
    return routs.PursuitFire(hex=hex_, pursuers=tuple(pursuers))


def parse_losses(state: State, role: Side, turn: Turn, rest: str) -> Order:
    """'pursuit losses 21Pz/5 1, 15Pz/8 1' (hits per unit) or 'pursuit losses auto':
    the new CVs, committed as new identity versions of every surviving refuser (T-10)."""
    pos = state.position
    if turn.step == "rout-losses":
        hex_, group, hits = turn.rout_queue[0].hex, turn.routers, turn.rout_hits
    elif turn.step == "retreat-losses":
        hex_, group, hits = turn.retreating, turn.retreaters, turn.hits
    else:
        hex_, group, hits = turn.refusing, turn.refusers, turn.hits
    rest = rest.strip()
    if rest.lower() in ("auto", ""):
        allocation = routs.default_pursuit_allocation(pos, group, hits, hex_, units=roster_of(state).get)
    else:
        losses = []
        for part in re.split(r"\s*,\s*", rest):
            name, _, n = part.strip().rpartition(" ")
            if not name or not n.isdigit():
                raise OrderError("RB 10.5: write 'pursuit losses <unit> <hits>, ...' or 'pursuit losses auto'")
            losses.append(ls.Loss(deployment.own_token(state, role, name), hits=int(n)))
        allocation = ls.LossAllocation(hex_, tuple(losses))
    roster = roster_of(state)
    by_token = {x.token: x for x in allocation.losses}
    eliminated, recommit, secrets = [], [], {}
    for t in group:
        b = pos.block(t)
        u = roster.get(b.unit)
        cv = b.cv - ls.used_cv(by_token.get(t), ls.absorber_of(b, u))
        if cv < u.min_cv:
            eliminated.append(t)
            continue
        recommit.append(t)
        secrets[hidden.identity_label(t, state.versions.get(t, 0) + 1)] = hidden.encode_identity(b.unit, cv)
    return Order(action=PursuitLosses(hex=hex_, eliminated=tuple(eliminated), recommit=tuple(recommit)),
                 secrets=secrets)


def refuse_battle_orders(state: State, role: Side, turn: Turn, hex_: str) -> list[str]:
    """'refuse-battle <hex> slowest <speed>' with the true slowest speed, when
    the refusal is legal and something can withdraw."""
    m, pos = game_map(), state.position
    refusers, _ = routs.refusal_split(pos, hex_, role)
    speeds = [group_moves.block_speed(state, pos.block(t)) for t in refusers]
    if not refusers or None in speeds or mv.refusal_problems(m, pos, movement_of(turn), hex_) \
            or not refusal_orders(state, role, turn, hex_):
        return []
    return [f"refuse-battle {m.name(hex_)} slowest {min(s for s in speeds if s is not None)}"]


def refusal_orders(state: State, role: Side, turn: Turn, hex_: str) -> list[str]:
    m, pos = game_map(), state.position
    group = [b for b in pos.blocks_in(hex_, role) if not b.disrupted]
    network = group_moves.refusal_network(pos, mv.Move(kind="group", origin=hex_, withdrawal="refuse",
                                            units=tuple(mv.UnitMove(b.token, (hex_,)) for b in group)))
    common: set[str] | None = None
    for b in group:
        dests = set(reachability.reachable(m, pos, movement_of(turn), b.token, group_moves.block_speed(state, b), withdrawal="refuse",
                                 network=network).paths)
        common = dests if common is None else common & dests
    return [f"refuse-battle {m.name(hex_)} -> {m.name(d)}" for d in sorted(common or (), key=m.name)
            if d != hex_]


# -- RB 8.4, 10.2, 10.5: the Player-Turn's decisions on Attacked Groups -----------------------

def check_accept_battle(state: State, turn: Turn, action: AcceptBattle, side: Side, ctx) -> list[Problem]:
    m = game_map()
    if turn.step != "refuse" or action.hex not in turn.refusals:
        return [Problem("RB 8.4", f"there is no Attacked Group awaiting a decision in "
                                  f"{m.name(action.hex) if action.hex in m.hexes else action.hex}")]
    return []


def apply_accept_battle(state: State, turn: Turn, action: AcceptBattle, side: Side, ctx) -> TurnNext:
    return TurnNext("battle_accepted", state, turn, hex=action.hex)


def apply_refuse_battle(state: State, turn: Turn, action: RefuseBattle, side: Side, ctx) -> TurnNext:
    pos, hex_, slowest = state.position, action.hex, action.slowest
    refusers, _ = routs.refusal_split(pos, hex_, side)
    result = routs.check_slowest_speed(refusers, routs.SlowestSpeed(hex_, slowest),
                                       group_moves.speeds_of(state, pos, refusers))
    what = f"Refused Battle in event {ctx.seq} announcing slowest speed {slowest}"
    obligations = slowest_obligations(state, result, hex_, refusers, ctx.seq, what)
    turn = msgspec.structs.replace(turn, refusing=hex_, refusers=refusers, slowest=slowest, pursuit=None, hits=0)
    return TurnNext("refusal_announced", msgspec.structs.replace(
        state, obligations=state.obligations + tuple(obligations)), turn)


def apply_pursuit_fire(state: State, turn: Turn, action: routs.PursuitFire, side: Side, ctx) -> TurnNext:
    state = with_pursuit_obligations(state, action, turn.slowest, ctx.seq)
    return TurnNext("refusal_pursued", state, msgspec.structs.replace(turn, pursuit=action))


def apply_refusal_losses(state: State, turn: Turn, action: PursuitLosses, side: Side, ctx) -> TurnNext:
    state = apply_pursuit_losses(state, turn.refusers, turn.hits, action, ctx)
    return TurnNext("refusal_losses_placed", state, turn, hex=action.hex, survivors=bool(action.recommit))


# -- the orders listed (legal_orders) --------------------------------------------------

def listed_refusals(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "refuse"."""
    m = game_map()
    return [order for h in turn.refusals for order in
            [f"accept-battle {m.name(h)}"] + refuse_battle_orders(state, role, turn, h)]


def listed_refusal_pursuit(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "refuse-pursuit"."""
    m = game_map()
    name = m.name(turn.refusing)
    able = [t for t in routs.pursuit_eligible(state.position, turn.refusing, role)
            if routs.pursuit_dice_for(turn.slowest, group_moves.block_speed(state, state.position.block(t)) or 0)]
    return [f"pursue {name} with none"] + ([f"pursue {name} with all"] if able else []) + \
        [f"pursue {name} with {group_moves.unit_name(state, t)}" for t in able]


def listed_pursuit_losses(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in steps "refuse-losses", "retreat-losses"."""
    return ["pursuit losses auto"]


def listed_refusal_withdrawal(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "refuse-withdraw"."""
    return refusal_orders(state, role, turn, turn.refusing)


# -- the actions in words (format_action) ---------------------------------------------------

def format_accept_battle(action: AcceptBattle) -> str:
    """The action in words (format_action)."""
    m = game_map()
    hex_ = action.hex
    return f"accept-battle {m.name(hex_)}"


def format_refuse_battle(action: RefuseBattle) -> str:
    """The action in words (format_action)."""
    m = game_map()
    hex_ = action.hex
    slowest = action.slowest
    return f"refuse-battle {m.name(hex_)} slowest {slowest}"


def format_pursuit_fire(action: routs.PursuitFire) -> str:
    """The action in words (format_action)."""
    m = game_map()
    hex_ = action.hex
    pursuers = action.pursuers
    return f"pursue {m.name(hex_)} with " + (", ".join(f"{p.token} ({p.dice} dice)" for p in pursuers)
                                             or "none")


def format_pursuit_losses(action: PursuitLosses) -> str:
    """The action in words (format_action)."""
    m = game_map()
    hex_ = action.hex
    eliminated = action.eliminated
    recommit = action.recommit
    return (f"pursuit losses in {m.name(hex_)}: eliminated {', '.join(eliminated) or 'none'}; "
            f"new identities for {', '.join(recommit) or 'none'}")


# -- orders read (parse_order) ---------------------------------------------------------------

def parse_refuse_battle(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'refuse-battle <hex> slowest <speed>' (RB 10.2)."""
    m = re.match(r"^refuse-battle\s+(?P<where>.+?)\s+slowest\s+(?P<n>\d+)$", words, re.IGNORECASE)
    if not m:
        raise OrderError("RB 10.2: write 'refuse-battle <hex> slowest <speed>'")
    return Order(action=RefuseBattle(hex=deployment.place_name(m.group("where")), slowest=int(m.group("n"))))


def parse_pursue_order(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'pursue <hex> with <units>' (RB 10.5)."""
    return Order(action=parse_pursuit(state, role, turn, words))


def parse_pursuit_losses_order(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'pursuit losses <unit> <hits>, ...' or 'pursuit losses auto' (RB 10.5, 9.5)."""
    return parse_losses(state, role, turn, words[len("pursuit losses"):])


def parse_accept_battle(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'accept-battle <hex>' (RB 8.4)."""
    return Order(action=AcceptBattle(hex=deployment.place_name(words.split(None, 1)[1])))
