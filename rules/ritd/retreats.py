"""Retreats of the active player (RB 10.3, 10.4, 10.41; T-35..T-38) and the
steps lost by failed Retreat Forced Marches (RB 6.4 sidebar, T-39).
"""

from __future__ import annotations

import re

import msgspec

from pbem.rulesapi import Order, Problem
from rules.ritd import (
    deployment,
    group_moves,
    hidden,
    refusal,
    routs,
    step_losses,
    steps,
    wording,
)
from rules.ritd import movement as mv
from rules.ritd.actions import MarchLosses, OrderError, Probe, PursuitLosses, RetreatSpeed, RevealUnits
from rules.ritd.position import Block, Position, Side
from rules.ritd.state import State, current_identity, game_map, roster_of
from rules.ritd.steps import TurnNext
from rules.ritd.turn import Turn
from rules.ritd.wording import unit_labels


def with_retreaters(before: Position, fought: Position, retreaters: tuple[str, ...]) -> Position:
    """The position after a Probe's losses (``fought``: ``_combat_position``
    with the hits applied): the Disengaging units and the battle put back."""
    now = {b.token: b for b in fought.blocks}
    blocks = tuple(now.get(b.token, b) for b in before.blocks if b.token in now or b.token in retreaters)
    return mv.prune_battles(msgspec.structs.replace(fought, blocks=blocks, battles=before.battles))


def probers_to_reveal(state: State, turn: Turn) -> list[Block]:
    """The Probing units not yet revealed (RB 8.5: combat is fought face up)."""
    return [b for b in state.position.blocks_in(turn.retreating, turn.passive) if not b.disrupted and not b.revealed]


def rearguard_to_reveal(state: State, turn: Turn) -> list[Block]:
    return [b for b in map(state.position.block, turn.rearguard) if not b.revealed]


def _turn_up(state: State, blocks: list[Block]) -> State:
    return msgspec.structs.replace(state, position=state.position.replace_blocks(
        [msgspec.structs.replace(b, revealed=True) for b in blocks]))


def _unopened(state: State, blocks: list[Block], ctx) -> list[str]:
    return [b.token for b in blocks if not ctx.opened(hidden.identity_label(b.token, state.versions.get(b.token, 0)))]


def check_retreat(state: State, turn: Turn, action: object, side: Side, ctx) -> list[Problem]:
    """A Retreat of the active player (RB 10.3, 10.4, 10.41): the Probe, the
    slowest speed, the Pursuit Fire, the losses, the Rearguard revealed."""
    m, pos = game_map(), state.position
    name = wording.unit_namer(pos)
    hex_, step = turn.retreating, turn.step
    where = m.name(hex_) if hex_ in m.hexes else "no hex"
    match action:
        case Probe(hex=h, go=go):
            if step != "retreat-probe" or h != hex_:
                return [Problem("RB 10.41", "Probe Combat is provoked against a Partial Retreat, after all other "
                                            f"movement (now: {steps.PROMPTS.get(step, step)})")]
            missing = _unopened(state, probers_to_reveal(state, turn), ctx) if go else []
            if missing:
                return [Problem("RB 8.5", f"open the identity of every Probing unit: {unit_labels(name, missing)} not opened")]
            return []
        case RetreatSpeed(hex=h, slowest=slowest):
            if step != "retreat-slowest" or h != hex_:
                return [Problem("RB 10.5", "the slowest speed is announced when a Retreat is pursued "
                                           f"(now: {steps.PROMPTS.get(step, step)})")]
            return list(routs.check_slowest_speed(turn.retreaters, routs.SlowestSpeed(h, slowest),
                                                  group_moves.speeds_of(state, pos, turn.retreaters),
                                                  name).problems)
        case routs.PursuitFire(hex=h):
            if step != "retreat-pursuit" or h != hex_:
                return [Problem("RB 10.5", "Pursuit Fire follows the Retreating player's announcement of the "
                                           "slowest speed")]
            eligible = routs.pursuit_eligible(pos, h, side, turn.probe_fired)
            speeds = group_moves.speeds_of(state, pos, [p.token for p in action.pursuers])
            return list(routs.check_pursuit(pos, action, turn.slowest, eligible=eligible, speeds=speeds,
                                            name=name).problems)
        case PursuitLosses(hex=h):
            if step != "retreat-losses" or h != hex_:
                return [Problem("RB 10.5", "Pursuit hits are placed after the Pursuit dice")]
            return refusal.pursuit_losses_problems(state, turn.retreaters, turn.hits, action, side, ctx)
        case RevealUnits():
            if step != "probe-reveal":
                return [Problem("RB 7.3", "units in battles are revealed when all Movement is complete")]
            missing = _unopened(state, rearguard_to_reveal(state, turn), ctx)
            if missing:
                return [Problem("RB 8.5", f"open the identity of every Rearguard unit: {unit_labels(name, missing)} not "
                                          "opened")]
            return []
    return [Problem("RB 10.3", f"the Retreat from {where} is under way: {steps.PROMPTS.get(step, step)}")]


def apply_retreat(state: State, turn: Turn, action: object, side: Side, ctx) -> TurnNext:
    pos = state.position
    match action:
        case Probe(go=False):  # RB 10.41: no Probe, no Pursuit Fire
            return TurnNext("probe_declined", state, turn)
        case Probe():
            return TurnNext("probe_provoked", _turn_up(state, probers_to_reveal(state, turn)), turn)
        case RevealUnits():
            return TurnNext("rearguard_revealed", _turn_up(state, rearguard_to_reveal(state, turn)), turn)
        case RetreatSpeed(hex=hex_, slowest=slowest):
            result = routs.check_slowest_speed(turn.retreaters, routs.SlowestSpeed(hex_, slowest),
                                               group_moves.speeds_of(state, pos, turn.retreaters))
            what = f"Retreated in event {ctx.seq} announcing slowest speed {slowest}"
            obligations = refusal.slowest_obligations(state, result, hex_, turn.retreaters, ctx.seq, what)
            turn = msgspec.structs.replace(turn, slowest=slowest, pursuit=None, hits=0)
            return TurnNext("retreat_announced", msgspec.structs.replace(
                state, obligations=state.obligations + obligations), turn)
        case routs.PursuitFire():  # none may fire: withheld (RB 10.3 sidebar "Pursuit Deception")
            state = refusal.with_pursuit_obligations(state, action, turn.slowest, ctx.seq)
            return TurnNext("retreat_pursued", state, msgspec.structs.replace(turn, pursuit=action, hits=0))
        case PursuitLosses(recommit=recommit):
            state = refusal.apply_pursuit_losses(state, turn.retreaters, turn.hits, action, ctx)
            return TurnNext("retreat_losses_placed", state, msgspec.structs.replace(turn, retreaters=tuple(recommit)))
    raise ValueError(f"unchecked action {action!r}")


def check_march_losses(state: State, turn: Turn, action: object, side: Side, ctx) -> list[Problem]:
    """RB 6.4 sidebar "Retreat Forced Marches" (T-39): each failed Retreating
    unit named once, its new identity committed one step less (RB 2.3:
    eliminated at its last step), checked where this replay can see it."""
    if turn.step != "march-losses" or not isinstance(action, MarchLosses):
        if isinstance(action, MarchLosses):
            return [Problem("RB 6.4", "only a Retreating unit whose Forced March has just failed loses a step "
                                      "(RB 6.4 sidebar \"Retreat Forced Marches\")")]
        return [Problem("RB 6.4", f"first {steps.PROMPTS['march-losses']}")]
    eliminated, recommit = action.eliminated, action.recommit
    named = list(eliminated) + list(recommit)
    if sorted(named) != sorted(turn.march_losses) or len(set(named)) != len(named):
        return [Problem("RB 6.4", "name each Retreating unit whose Forced March failed once: eliminated at its "
                                  "last step (RB 2.3), or with a new identity version one step less (T-39)")]
    problems = []
    name = wording.unit_namer(state.position)
    for t in recommit:
        label = hidden.identity_label(t, state.versions.get(t, 0) + 1)
        if not ctx.committed(label):
            problems.append(Problem("RB 6.4", f"the new identity of {name(t)} must be committed as '{label}'"))
    if problems:
        return problems
    roster = roster_of(state)
    for t in turn.march_losses:
        old = current_identity(state, t, ctx)
        if old is None:
            continue  # an obligation decides it when the identity opens (T-39)
        new = None
        if t in recommit:
            value = ctx.value(hidden.identity_label(t, state.versions.get(t, 0) + 1))
            if value is not None:
                try:
                    new = hidden.decode_identity(value)
                except ValueError as exc:
                    problems.append(Problem("RB 2.0", f"block {name(t)}: {exc}"))
                    continue
        problems += step_losses.step_loss_problems(roster, t, old, new, t in eliminated, "RB 6.4", step_losses.MARCH_LOSS,
                                                   name)  # positional: tests stand in for it (lambda *args)
    return problems


def apply_march_losses(state: State, turn: Turn, action: MarchLosses, ctx) -> TurnNext:
    """T-39: the new identity versions; a unit the opponent knows loses its step
    in the open (its new CV public, the commitment checked when opened); what
    this replay cannot check becomes a "march-loss" obligation. Then the
    Overrun Routs of the same dice, and movement ends as before (T-13, T-35)."""
    what = f"{step_losses.MARCH_LOSS} in event {ctx.seq} ({format_march_losses(action)})"
    state = step_losses.apply_secret_step_losses(state, turn.march_losses, action.eliminated, action.recommit, ctx,
                                                 kind="march-loss", rule="RB 6.4", what=what)
    overruns = turn.march_overruns
    turn = msgspec.structs.replace(turn, march_losses=(), march_overruns=())
    return TurnNext("march_losses_placed", state, turn, routs=tuple(group_moves.overrun_routs(state, turn, overruns)))


def parse_march_losses(state: State, role: Side, turn: Turn, rest: str) -> Order:
    """'march losses auto' (or naming the units: 'march losses 7/7 Tk, ...'):
    each Retreating unit whose Forced March failed loses one step, committed
    as a new identity version; one at its last step is eliminated (RB 6.4
    sidebar "Retreat Forced Marches", RB 2.3; T-39)."""
    group = turn.march_losses if turn.step == "march-losses" else ()
    if not group:
        raise OrderError("RB 6.4: only a Retreating unit whose Forced March has just failed loses a step "
                         f"(now: {steps.PROMPTS.get(turn.step, turn.step)})")
    rest = rest.strip()
    if rest.lower() not in ("", "auto"):
        named = [deployment.own_token(state, role, name) for name in re.split(r"\s*,\s*", rest)]
        if sorted(named) != sorted(group):
            raise OrderError("RB 6.4: the units whose Retreat Forced March failed are "
                             f"{', '.join(group_moves.unit_name(state, t) for t in group)}: name them all, or write "
                             "'march losses auto'")
    pos, roster = state.position, roster_of(state)
    eliminated, recommit, secrets = [], [], {}
    for t in group:
        b = pos.block(t)
        u = roster.get(b.unit)
        cv = b.cv - u.cv_per_step
        if cv < u.min_cv:
            eliminated.append(t)
            continue
        recommit.append(t)
        secrets[hidden.identity_label(t, state.versions.get(t, 0) + 1)] = hidden.encode_identity(b.unit, cv)
    return Order(action=MarchLosses(eliminated=tuple(eliminated), recommit=tuple(recommit)), secrets=secrets)


# -- the orders listed (legal_orders) --------------------------------------------------

def listed_march_losses(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "march-losses"."""
    return ["march losses auto"]


def listed_probe(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "retreat-probe"."""
    m = game_map()
    name = m.name(turn.retreating)
    return [f"no probe {name}", f"probe {name}"]


def listed_probe_reveal(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "probe-reveal"."""
    return ["reveal units"]


def listed_retreat_slowest(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "retreat-slowest"."""
    m = game_map()
    speeds = [group_moves.block_speed(state, state.position.block(t)) for t in turn.retreaters]
    return [f"retreat {m.name(turn.retreating)} slowest {min(s for s in speeds if s is not None)}"] if None not in speeds else []


def listed_retreat_pursuit(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "retreat-pursuit"."""
    m = game_map()
    name = m.name(turn.retreating)
    able = [t for t in routs.pursuit_eligible(state.position, turn.retreating, role, turn.probe_fired)
            if routs.pursuit_dice_for(turn.slowest, group_moves.block_speed(state, state.position.block(t)) or 0)]
    return [f"pursue {name} with none"] + ([f"pursue {name} with all"] if able else []) + \
        [f"pursue {name} with {group_moves.unit_name(state, t)}" for t in able]


# -- the actions in words (format_action) ---------------------------------------------------

def format_retreat_speed(action: RetreatSpeed) -> str:
    """The action in words (format_action)."""
    m = game_map()
    hex_ = action.hex
    slowest = action.slowest
    return f"retreat {m.name(hex_)} slowest {slowest}"


def format_probe(action: Probe) -> str:
    """The action in words (format_action)."""
    m = game_map()
    hex_ = action.hex
    go = action.go
    return f"{'probe' if go else 'no probe'} {m.name(hex_)}"


def format_march_losses(action: MarchLosses) -> str:
    """The action in words (format_action)."""
    eliminated = action.eliminated
    recommit = action.recommit
    return (f"march losses (failed Retreat Forced Marches): eliminated {', '.join(eliminated) or 'none'}; "
            f"new identities for {', '.join(recommit) or 'none'}")


# -- orders read (parse_order) ---------------------------------------------------------------

def parse_retreat_speed(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'retreat <hex> slowest <speed>' (RB 10.3, 10.5)."""
    m = re.match(r"^retreat\s+(?P<where>.+?)\s+slowest\s+(?P<n>\d+)$", words, re.IGNORECASE)
    if not m:
        raise OrderError("RB 10.5: write 'retreat <hex> slowest <speed>'")
    return Order(action=RetreatSpeed(hex=deployment.place_name(m.group("where")), slowest=int(m.group("n"))))


def parse_probe(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'probe <hex>' or 'no probe <hex>' (RB 10.41): a Probe reveals the Probing units."""
    go = low.split(None, 1)[0] == "probe"
    hex_ = deployment.place_name(words.split(None, 1 if go else 2)[-1])
    probe = msgspec.structs.replace(turn, retreating=hex_)
    labels = [hidden.identity_label(b.token, state.versions.get(b.token, 0))
              for b in probers_to_reveal(state, probe)] if go else []
    return Order(action=Probe(hex=hex_, go=go), reveal=tuple(lbl for lbl in labels if not ctx.opened(lbl)))


def parse_march_losses_order(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'march losses auto' (RB 6.4 sidebar)."""
    return parse_march_losses(state, role, turn, words[len("march losses"):])
