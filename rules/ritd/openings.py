"""Hidden information decided when it opens (DESIGN 4): dice answered
(Forced March RB 6.4, Pursuit RB 10.5, Fire RB 9.4, BP RB 16.3, Early Arrival
RB 16.41), commitments opened (identities RB 7.3, cards RB 3.3, 3.48) and the
obligations they settle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import msgspec

from pbem.rulesapi import Problem
from rules.ritd import (
    battle,
    buildup_orders,
    forced_marches,
    group_moves,
    hidden,
    minefield_rules,
    mines,
    routs,
    sequence,
    step_losses,
)
from rules.ritd import buildup as bu
from rules.ritd import reinforcements as rf
from rules.ritd.hidden import Obligation
from rules.ritd.position import SIDES, Side
from rules.ritd.setup import (
    check_hidden_placement,
)
from rules.ritd.state import (
    State,
    all_scenarios,
    current_turn,
    decode_identity,
    game_map,
    known_units,
    roster_of,
    scenario_of,
)
from rules.ritd.turn import movement_of
from rules.ritd.units import UnknownUnit


def _token(label: str) -> str:
    """The token of an identity label an obligation names (always one)."""
    return cast(tuple[str, int], hidden.token_of_label(label))[0]


def _pursuit(fire: routs.PursuitFire | None) -> routs.PursuitFire:
    """The Pursuit Fire whose dice are rolled (RB 10.5): its step follows it."""
    assert fire is not None
    return fire


def resolve_dice(state: State, values: tuple[int, ...], ctx) -> State:
    """RB 6.4: one die per announced Forced March, in the order announced;
    RB 10.5: the Pursuit Fire dice, in pursuer order; RB 9.4: the fire dice,
    in fire-plan order; RB 16.6: the cards drawn (secret dice, None where
    this replay cannot see them); RB 16.3: the BP dice, Axis first."""
    state = msgspec.structs.replace(state, actor=ctx.author)
    if state.phase == "buildup" and state.stage == "early-dice":
        side = state.side
        arrived = rf.early_arrivals(state.early_slots, values)
        names = [ctx.value(lbl) for lbl in arrived]
        known = tuple(v.decode("utf-8", "replace") for v in names if v is not None)
        obligation = Obligation(token="", seq=ctx.seq, kind="early-order", rule="RB 16.41",
                                labels=state.early_slots, needed=state.month, unit=side,
                                what=f"the Early Arrival slots of Month {state.month}")
        return sequence.buildup_dice_rolled(msgspec.structs.replace(
            state, early_slots=(), early_arrived=arrived, last_rolls=tuple(values),
            obligations=state.obligations + (obligation,),
            early_next={**state.early_next, side: len(arrived)},
            early_units_next={**state.early_units_next, side: known} if len(known) == len(arrived)
            else state.early_units_next), side)
    if state.phase == "buildup" and state.stage == "bp-dice":
        n = bu.bp_dice_count(scenario_of(state))
        det = bu.determine_bp(scenario_of(state), values[:n], values[n:])
        ledgers = {s: bu.open_ledger(s, det.bp, state.saved.get(s, 0)) for s in SIDES}
        return sequence.buildup_dice_rolled(msgspec.structs.replace(
            state, player1=det.player1, bp_dice=tuple(values), ledgers=ledgers, last_rolls=tuple(values)), det.player1)
    turn = current_turn(state)
    if turn.step in ("defensive-dice", "offensive-dice"):
        return sequence.fire_rolled(*battle.score_fire_dice(state, turn, tuple(values)))
    if turn.step == "rout-dice":
        hits = routs.score_pursuit(_pursuit(turn.rout_pursuit), values)
        state = msgspec.structs.replace(state, last_rolls=tuple(values))
        return sequence.rout_after_pursuit(state, turn, hits)
    if turn.step == "retreat-dice":
        hits = routs.score_pursuit(_pursuit(turn.pursuit), values)
        state = msgspec.structs.replace(state, last_rolls=tuple(values))
        return sequence.after_retreat_pursuit(state, msgspec.structs.replace(turn, hits=hits))
    if turn.step == "refuse-dice":
        hits = routs.score_pursuit(_pursuit(turn.pursuit), values)
        state = msgspec.structs.replace(state, last_rolls=tuple(values))
        return sequence.after_pursuit(state, msgspec.structs.replace(turn, hits=hits))
    movement = movement_of(turn)
    pos = state.position
    disrupted = dict(state.disrupted_in)
    overruns: list[str] = []
    marched: list[tuple[str, tuple[str, ...]]] = []
    losers: list[str] = []
    for march, roll in zip(movement.marches, values):
        out = forced_marches.apply_forced_march(game_map(), pos, movement, march.token, roll)
        pos, movement = out.position, out.turn
        overruns += out.overruns
        if not out.succeeded:
            disrupted[march.token] = turn.number
            if out.step_loss:  # RB 6.4 sidebar: a failed Retreat Forced March also costs a step
                losers.append(march.token)
        else:
            marched.append((march.token, march.path if march.regroup else march.path[-2:]))
    state = group_moves.note_routes(state, state.position, marched, turn.number, forced=True)
    state = msgspec.structs.replace(state, position=pos, disrupted_in=disrupted, last_rolls=tuple(values))
    turn = msgspec.structs.replace(turn, movement=movement)
    if losers:
        # T-39: the owner applies those steps in secret first; the Overrun Routs wait.
        turn = msgspec.structs.replace(turn, march_losses=tuple(losers), march_overruns=tuple(overruns))
        return sequence.marches_rolled(state, turn, ())
    # RB 11.4 (T-13): Overruns by Forced Marches Rout once all marches are made.
    return sequence.marches_rolled(state, turn, tuple(group_moves.overrun_routs(state, turn, overruns)))


def on_open(state: State, label: str, value: bytes, ctx) -> tuple[State, list[Problem]]:
    """An identity is opened: fill it in and decide the token's deferred checks."""
    state, problems = decide_labelled(state, ctx)
    if mines.parse_label(label) is not None:
        return state, problems + minefield_rules.open_whole_set(state, label, value, ctx)
    parsed = hidden.token_of_label(label)
    if parsed is None or not state.position.has_block(parsed[0]):
        return state, problems
    token, version = parsed
    try:
        unit, cv = decode_identity(state, label, value)
    except ValueError as exc:
        return state, [Problem("RB 2.0", f"block {token}: {exc}")]
    block = state.position.block(token)
    keep = []
    others = known_units(state.position, block.side) - {block.unit}
    for ob in state.obligations:
        if ob.token != token or ob.labels or (ob.kind in ("placement", "arrival", "malta") and version != 0):
            # a later identity version has lost CV since: arrival checks wait for version 0
            keep.append(ob)
            continue
        if ob.kind == "malta":  # RB 18.6: a Malta Group unit at full CV
            group = {(u.name, u.max_cv) for u in all_scenarios().malta_group(scenario_of(state))}
            if (unit, cv) not in group or unit in others:
                problems.append(Problem(ob.rule, f"event {ob.seq} by {block.side}: block {token} {ob.what}: "
                                                 f"{unit} at CV {cv} is not a Malta Group unit at full strength, "
                                                 "or it is already on the map"))
        elif ob.kind == "arrival":  # RB 16.4: one of this month's Reinforcements, at full CV
            due = {(u.name, u.max_cv) for u in rf.on_schedule(all_scenarios(), scenario_of(state), block.side, ob.needed)}
            if (unit, cv) not in due or unit in others:
                problems.append(Problem(ob.rule, f"event {ob.seq} by {block.side}: block {token} {ob.what}: "
                                                 f"{unit} at CV {cv} is not a Reinforcement due then at full "
                                                 "strength, or it is already on the map"))
        elif ob.kind == "placement":
            for p in check_hidden_placement(game_map(), all_scenarios(), scenario_of(state), block.side, ob.hex, unit, cv,
                                            others):
                problems.append(Problem(p.rule, f"event {ob.seq} by {block.side}: block {token} {ob.what}: "
                                                f"{p.message}"))
        elif ob.kind in ("speed", "speed-range"):  # RB 6.1 / 10.5: at least, or within, a range
            try:
                speed = group_moves.speed_of(state, unit)
            except UnknownUnit:
                problems.append(Problem("RB 2.0", f"block {token} is {unit!r}, not a unit of the game"))
                continue
            top = ob.maximum if ob.kind == "speed-range" else speed
            if not ob.needed <= speed <= top:
                want = f"speed {ob.needed}" if ob.needed == top or ob.kind == "speed" else \
                    f"speed {ob.needed}-{ob.maximum}"
                problems.append(Problem(ob.rule, f"event {ob.seq} by {block.side}: block {token} {ob.what}: "
                                                 f"that needs {want}, but {unit} has speed {speed}"))
    current = version == state.versions.get(token, 0)
    position = state.position.replace_blocks([msgspec.structs.replace(block, unit=unit,
                                                                      cv=cv if current else block.cv)])
    disclosed = state.disclosed if token in state.disclosed or not current else state.disclosed + (token,)
    return msgspec.structs.replace(state, position=position, obligations=tuple(keep),
                                   disclosed=disclosed), problems


def reveal_die(state: State, label: str, value: int, ctx) -> tuple[State, list[Problem]]:
    """A card seed opened (at the audit): the replays that lacked it check
    the cards played with the audit's full knowledge instead (T-15)."""
    return state, []


def _known(value, labels: Sequence[str]) -> list[bytes] | None:
    """Each label's value, or None if there are none or one is not known yet:
    most obligations wait on a hidden value, so the first unknown label stops
    the look-up (each label is looked up once)."""
    values = []
    for label in labels:
        v = value(label)
        if v is None:
            return None
        values.append(v)
    return values or None


def decide_labelled(state: State, ctx) -> tuple[State, list[Problem]]:
    """Decide the obligations over several identity versions ("slowest",
    "losses") once every one of their values is known (T-10)."""
    problems: list[Problem] = []
    keep = []
    value = ctx.value
    for ob in state.obligations:
        values = _known(value, ob.labels)
        if values is None:
            keep.append(ob)
            continue
        if ob.kind == "early-order":  # RB 16.41, BU-06: every candidate once
            side = ob.unit
            cands = rf.early_arrival_candidates(all_scenarios(), scenario_of(state), cast(Side, side), ob.needed)
            names = [v.decode("utf-8", "replace") for v in values]
            problems += [Problem(p.rule, f"event {ob.seq} by {side}: {ob.what}: {p.message}")
                         for p in rf.check_early_arrival_order(cands, names)]
            continue
        if ob.kind == "early":  # RB 16.41: the early block is its slot's unit at full strength
            unit = values[0].decode("utf-8", "replace")
            try:
                ident = hidden.decode_identity(values[1])
            except ValueError as exc:
                problems.append(Problem("RB 2.0", f"event {ob.seq}: {exc}"))
                continue
            if ident != (unit, buildup_orders.max_cv(unit)):
                side = "axis" if hidden.is_token_of(ob.tokens[0], "axis") else "allied"
                problems.append(Problem(ob.rule, f"event {ob.seq} by {side}: block {ob.tokens[0]} {ob.what}: "
                                                 f"the slot holds {unit}, the block is {ident[0]} at CV {ident[1]}"))
            continue
        try:
            ids = {lbl: decode_identity(state, lbl, v) for lbl, v in zip(ob.labels, values)}
            # The versions the obligation's own event committed, as committed: hits
            # placed in the open on them later (T-34, ``public_cv``) came after the
            # step this obligation judges, and would count as losses of that step.
            committed = {lbl: hidden.decode_identity(v) for lbl, v in zip(ob.labels, values)}
        except ValueError as exc:
            problems.append(Problem("RB 2.0", f"event {ob.seq}: {exc}"))
            continue
        side = "axis" if hidden.is_token_of(ob.tokens[0], "axis") else "allied"
        where = f"event {ob.seq} by {side}: {ob.what}"
        if ob.kind == "slowest":
            speeds = []
            for lbl in ob.labels:
                try:
                    speeds.append(group_moves.speed_of(state, ids[lbl][0]))
                except UnknownUnit:
                    speeds.append(0)
            if ob.needed not in speeds:
                problems.append(Problem(ob.rule, f"{where}: no refusing unit has speed {ob.needed} "
                                                 f"(their speeds are {', '.join(map(str, speeds))})"))
        elif ob.kind == "attrition":
            t = ob.tokens[0]
            routed = (ob.unit, ob.cv) if ob.unit else ids[ob.labels[0]]
            survivor = {} if t in ob.eliminated else {t: committed[ob.labels[-1]]}
            problems += [Problem(p.rule, f"{where}: {p.message}")
                         for p in step_losses.attrition_problems(roster_of(state), (t,), {t: routed}, survivor,
                                                                 ob.eliminated)]
        elif ob.kind == "march-loss":  # RB 6.4 sidebar (T-39)
            t = ob.tokens[0]
            marched = (ob.unit, ob.cv) if ob.unit else ids[ob.labels[0]]
            after = None if t in ob.eliminated else committed[ob.labels[-1]]
            problems += [Problem(p.rule, f"{where}: {p.message}")
                         for p in step_losses.step_loss_problems(roster_of(state), t, marched, after, t in ob.eliminated,
                                                      "RB 6.4", step_losses.MARCH_LOSS)]
        elif ob.kind == "rebuild":  # RB 16.54 (T-21)
            old_id, new_id = cast(tuple[str, int], ids[ob.labels[0]]), committed[ob.labels[1]]
            problems += [Problem(p.rule, f"{where}: {p.message}")
                         for p in buildup_orders.rebuild_identity_problems(old_id[0], old_id[1], ob.needed, ob.hits, new_id)]
        elif ob.kind == "losses":
            n = len(ob.tokens)  # the old versions first, then the survivors' new ones
            old_ids = {_token(lbl): ids[lbl] for lbl in ob.labels[:n]}
            new_ids = {_token(lbl): committed[lbl] for lbl in ob.labels[n:]}
            problems += [Problem(p.rule, f"{where}: {p.message}")
                         for p in step_losses.loss_problems(state, cast(Side, side), ob.hex, ob.tokens, old_ids, new_ids,
                                                            ob.eliminated,
                                                 ob.hits)]
    return msgspec.structs.replace(state, obligations=tuple(keep)), problems
