"""Rommel in the Desert as a pbem rules module (DESIGN 6).

State is one immutable Struct folded over the log. Each replaying side has
its own copy: its own blocks carry unit and CV, the opponent's carry them
only once opened (DESIGN 4). Checks that need a hidden value the replaying
side lacks become ``Obligation``s, decided in ``on_open`` or by the audit.

Implemented: the scenario set-up (RB 18.0: the Axis deploys first, then
the Allies, hidden identities committed block by block; Gazala's pre-game
Buildup, RB 18.7), the initial hands and the one redraw; the Player-Turn
steps of rules.ritd.turn: supply checks, Supply Cards played face down
(rules.ritd.cards), Moves, Forced Marches with engine dice, Refusing Battle,
revealing battle units, the Combat phase, Blitz phases, Routs (RB 11.3,
T-12), Overruns (RB 11.4) and Final Supply Check Routs (RB 12.7, CB-11;
T-13); Retreats of the active player, Full (Pursuit Fire) and Partial (Probe
Combat with reversed roles), Pass-Turn Withdrawals out of battles included
(RB 10.0, 10.3-10.5; T-35..T-38); the Month (two Passes end it, RB 3.1), the Initiative (RB 3.3), the
Buildup (RB 16, rules.ritd.buildup), Minefields (RB 14, 16.55, as Merkle
sets: rules.ritd.mines, T-30..T-33) and victory (RB 17, rules.ritd.victory).
The optional rule "Allied I-Tanks" (RB 17.0) with ``--option i-tanks``
(``OptionalITank``; decisions/combat.md CB-15..CB-18).
"""
from __future__ import annotations

import msgspec

from pbem.rulesapi import DICE, ActingAs, Problem
from rules.ritd import buildup as bu
from rules.ritd import cards as cd
from rules.ritd import deployment, group_moves, month_phase, routs, sequence, supplycards, turn_orders
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
from rules.ritd.position import SIDES, Block, Side
from rules.ritd.setup import (
    check_deployment_complete,
)
from rules.ritd.state import State, current_turn, game_map, identity_of, scenario_of, supply_deck


def check(state: State, action: object, ctx) -> list[Problem]:
    side: Side = ctx.author
    decision = sequence.pending(state)
    if decision is None or decision.role != side:
        return [Problem("RB 3.0", "it is not your decision")]
    unknown = unknown_hexes(action)
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
        return [Problem(p.rule, turn_orders.with_unit_names(state, p.message)) for p in month_phase.check_month(state, action, side, ctx)]
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
            if side == "axis":  # RB 18.0: the Axis deploys first, then the Allies
                return msgspec.structs.replace(state, side="allied")
            pre = scenario_of(state).special.pregame_buildup
            if pre is not None:  # RB 18.7 (BU-20): 30 BP each, no dice, before the first cards
                state = msgspec.structs.replace(state, position=deployment.initial_fortress_control(state))
                networks = {s: tuple(sorted(n)) for s, n in bu.buildup_networks(game_map(), state.position).items()}
                return msgspec.structs.replace(state, phase="buildup", stage="buildup", side=pre.first,
                                               player1=pre.first, pregame=True, networks=networks,
                                               ledgers={s: bu.open_ledger(s, pre.bp) for s in SIDES})
            # RB 18.0: the first shuffle of the shared deck deals both initial
            # hands (its first step rides on this event), then each may redraw
            # once, Axis first.
            dealt = msgspec.structs.replace(state, phase="cards", stage="redraw", side="axis",
                                            position=deployment.initial_fortress_control(state))
            deals = [(s, supplycards.initial_cards(dealt, s)) for s in ("axis", "allied")]
            return msgspec.structs.replace(dealt, deck=cd.begin_round(dealt.deck, side, cd.deck_labels(supply_deck()),
                                                                      deals))
    if state.phase != "turn":
        return month_phase.apply_month(state, action, side, ctx)
    return turn_orders.apply_turn(state, current_turn(state), action, side, ctx)


def legal_actions(state: State, role: Side, ctx) -> list[object]:
    """Actions that carry no new secret and need no route choice; Moves and
    secret-bearing orders are listed by ``legal_orders``."""
    decision = sequence.pending(state)
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
from rules.ritd.sequence import pending  # noqa: E402
from rules.ritd.state import SPEC, initial_state, outcome, scenario_info  # noqa: E402
from rules.ritd.supplycards import deck_task, on_deck  # noqa: E402
from rules.ritd.view import View, render_text, view  # noqa: E402

__all__ = ["SPEC", "Action", "State", "View", "initial_state", "pending", "legal_actions", "legal_orders", "check",
           "apply", "resolve_dice", "on_open", "view", "outcome", "parse_order", "format_action", "render_text",
           "explain", "EXPLAIN_TOPICS", "reveal_die", "scenario_info", "deck_task", "on_deck", "describe_action",
           "on_open_leaf"]
