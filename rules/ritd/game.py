"""Rommel in the Desert as a pbem rules module (DESIGN 6).

State is one immutable Struct folded over the log. Each replaying side has
its own copy: its own blocks carry unit and CV, the opponent's carry them
only once opened (DESIGN 4). Checks that need a hidden value the replaying
side lacks become ``Obligation``s, decided in ``on_open`` or by the audit.

``check`` and ``apply`` here dispatch to the module of each rule; the other
hooks are re-exported from theirs. The modules, by rulebook section:

  sequence         RB 3.0-3.4, 3.1, 3.3, 16.1, 17.0, 18.0: every step, stage and phase change,
                   decided from what the rules hand over (steps.TurnNext, MonthNext)
  steps            RB 3.0: the step tables, who decides next (pending), not_now
  actions          the action union (log encoding) and RB 1.0 hex names
  state, view      the State, scenario data, SPEC; what a player sees
  deployment       RB 18.0 set-up
  supplycards      RB 3.42, 16.6, 18.0: hands and the shared deck (T-15)
  initiative       RB 3.3;  month_phase: RB 18.0 hands, RB 17.0 the end, Buildup dispatch
  buildup_orders   RB 16.4-16.6, 18.6 (ledger model: buildup)
  minefield_rules  RB 14, 16.55 (Merkle-set model: mines)
  turn_orders      RB 3.4: the Player-Turn's dispatch table
  supply_steps     RB 12.7 in the Player-Turn (checks: supply_checks; lines: supply)
  turn_options     RB 3.42, 4.0-4.5, 3.45, 3.48
  group_moves      RB 5.0-6.4 as orders (rules: movement, forced_marches, reachability)
  refusal          RB 8.4, 10.2, 10.5;  retreats: RB 10.3-10.41, 6.4 sidebar
  rout_orders      RB 11.3, 11.4 (tables: routs);  step_losses: RB 9.5, 2.3 on hidden units
  battle           RB 7.3, 8.6, 9.1-9.5 (fire model: combat_round, fire, losses, fortresses)
  combat_state     RB 7.3, 8.6, 9.1, 10.41, 13.2, 14.2: the Combat Round under way (queries)
  wording          units and hexes named in problems and descriptions (RB 1.1)
  openings         dice and commitments decided when they open (DESIGN 4); the dice's dispatch
  player_orders    parse_order, legal_orders (RB 3.44: the movement orders), format_action, explain
  victory          RB 17;  checked: what check established, for apply
"""
from __future__ import annotations

import msgspec

from pbem.rulesapi import DICE, ActingAs, Problem
from rules.ritd import (
    canonical,
    deployment,
    group_moves,
    month_phase,
    routs,
    sequence,
    steps,
    supplycards,
    turn_orders,
)
from rules.ritd.actions import (
    AcceptBattle,
    Deploy,
    EndDeployment,
    EndMovement,
    MarchLosses,
    PlayCards,
    Probe,
    RetreatSpeed,
    SupplyCheck,
    unknown_hexes,
)
from rules.ritd.hidden import Obligation
from rules.ritd.position import Block, Side
from rules.ritd.setup import (
    check_deployment_complete,
)
from rules.ritd.state import State, current_turn, game_map, identity_of, scenario_of


def check(state: State, action: object, ctx) -> list[Problem]:
    side: Side = ctx.author
    decision = steps.pending(state)
    if decision is None or decision.role != side:
        return [Problem("RB 3.0", "it is not your decision")]
    unknown = unknown_hexes(action) or canonical.problems(state, action, side)
    if unknown:
        return unknown
    match action:
        case Deploy():
            return deployment.check_deploy(state, action, side, ctx)
        case EndDeployment(cards=labels):
            if state.phase != "deploy":
                return [Problem("RB 18.0", "deployment is over")]
            return (check_deployment_complete(game_map(), scenario_of(state), side, state.position)
                    + supplycards.no_seeds(labels, "RB 18.0"))
    if state.phase == "deploy":
        return [Problem("RB 18.0", "the scenario set-up comes first")]
    if state.phase != "turn":
        return month_phase.check_month(state, action, side, ctx)
    return turn_orders.check_turn(state, current_turn(state), action, side, ctx)


def apply(state: State, action: object, ctx) -> State:
    side: Side = ctx.author
    state = msgspec.structs.replace(state, actor=side)
    match action:
        case Deploy(token=token, hex=hex_):
            identity = identity_of(ctx, token)
            unit, cv = identity if identity is not None else ("", 0)
            block = Block(token=token, side=side, hex=hex_, unit=unit, cv=cv)
            obligations = state.obligations
            if identity is None:
                obligations += (Obligation(token=token, seq=ctx.seq, kind="placement", hex=hex_,
                                           rule=f"RB {scenario_of(state).rule}",
                                           what=f"deployed in {game_map().name(hex_)}"),)
            position = msgspec.structs.replace(state.position, blocks=state.position.blocks + (block,))
            return msgspec.structs.replace(state, position=position, obligations=obligations,
                                           placed={**state.placed, side: state.placed.get(side, 0) + 1},
                                           versions={**state.versions, token: 0})
        case EndDeployment():
            return sequence.deployment_ended(state, side)
    if state.phase != "turn":
        return month_phase.apply_month(state, action, side, ctx)
    return turn_orders.apply_turn(state, current_turn(state), action, side, ctx)


def legal_actions(state: State, role: Side, ctx) -> list[object]:
    """Actions that carry no new secret and need no route choice; Moves and
    secret-bearing orders are listed by ``legal_orders``."""
    decision = steps.pending(state)
    if decision is None or decision.role != role or decision.kind == DICE:
        return []
    if state.phase == "deploy":
        if not check_deployment_complete(game_map(), scenario_of(state), role, state.position):
            return [EndDeployment()]
        return []
    turn = current_turn(state)
    candidates: list[object] = {  # type: ignore[assignment]
        "initial-supply": [SupplyCheck()], "final-supply": [SupplyCheck()], "option": [PlayCards(count=0)],
        "movement": [EndMovement()], "refuse": [AcceptBattle(hex=h) for h in turn.refusals],
        "retreat-probe": [Probe(hex=turn.retreating, go=False)],
        "retreat-pursuit": [routs.PursuitFire(hex=turn.retreating)],
    }.get(turn.step, [])
    if turn.step == "retreat-slowest":
        speeds = [group_moves.block_speed(state, state.position.block(t)) for t in turn.retreaters]
        if None not in speeds:
            candidates.append(RetreatSpeed(hex=turn.retreating, slowest=min(s for s in speeds if s is not None)))
    if turn.step == "march-losses":  # secret-free only when every unit is at its last step (T-39)
        candidates.append(MarchLosses(eliminated=turn.march_losses))
    return [a for a in candidates if not check(state, a, ActingAs(ctx, role))]


# The rules' hooks and types, by the module of their rule (rules.ritd.__init__
# calls them through here).
from rules.ritd.actions import Action  # noqa: E402
from rules.ritd.minefield_rules import on_open_leaf  # noqa: E402
from rules.ritd.openings import on_open, resolve_dice, reveal_die  # noqa: E402
from rules.ritd.player_orders import (  # noqa: E402
    EXPLAIN_TOPICS,
    describe_action,
    explain,
    format_action,
    legal_orders,
    parse_order,
)
from rules.ritd.state import SPEC, initial_state, outcome, scenario_info  # noqa: E402
from rules.ritd.steps import pending  # noqa: E402
from rules.ritd.supplycards import deck_task, on_deck  # noqa: E402
from rules.ritd.view import View, render_text, view  # noqa: E402

__all__ = ["SPEC", "Action", "State", "View", "initial_state", "pending", "legal_actions", "legal_orders", "check",
           "apply", "resolve_dice", "on_open", "view", "outcome", "parse_order", "format_action", "render_text",
           "explain", "EXPLAIN_TOPICS", "reveal_die", "scenario_info", "deck_task", "on_deck", "describe_action",
           "on_open_leaf"]
