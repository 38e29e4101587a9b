"""Orders as players write them: ``parse_order`` (text to action),
``legal_orders`` (every order the pending decision allows), ``format_action``
and ``describe_action`` (action to text) and ``explain``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pbem.rulesapi import DICE, Order
from rules.ritd import (
    base_entry,
    battle,
    buildup_orders,
    deployment,
    exits,
    group_moves,
    initiative,
    minefield_rules,
    month_phase,
    reachability,
    refusal,
    retreats,
    rout_orders,
    routs,
    steps,
    supply_checks,
    supply_steps,
    supplycards,
    turn_options,
    wording,
)
from rules.ritd import buildup as bu
from rules.ritd import combat_round as cr
from rules.ritd import fire as fr
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd.actions import (
    AcceptBattle,
    Answer,
    Blitz,
    BuildMinefield,
    CallMalta,
    Challenge,
    Deploy,
    EarlyArrival,
    EndBuildup,
    EndDeployment,
    EndMovement,
    EnterBase,
    ExitMap,
    ForcedMarches,
    KeepHand,
    MarchLosses,
    OpenChallenge,
    OpenMinefields,
    OrderError,
    PlayCards,
    Probe,
    PursuitLosses,
    Rebuild,
    Redraw,
    RefuseBattle,
    Reinforce,
    RetreatSpeed,
    RevealAll,
    RevealOption,
    RevealUnits,
    Rout,
    SupplyCheck,
)
from rules.ritd.position import SIDES, Side
from rules.ritd.state import (
    State,
    current_turn,
    game_map,
    scenario_of,
)
from rules.ritd.turn import Turn


def parse_order(state: State, role: Side, text: str, ctx) -> Order:
    """An order's text as an action (OrderError naming the syntax or the rule
    if it cannot be read); whether it is legal now is ``check``'s to say.
    Each order's reading lives in the module of its rule; the table below
    says which text is which order, in the order the forms are tried."""
    words = text.strip()
    low = words.lower()
    if state.phase == "deploy":
        return deployment.parse_deploy_order(state, role, text, words, low, ctx)
    if state.phase != "turn":
        return month_phase.parse_month_order(state, role, words, ctx)
    turn = current_turn(state)
    verb = low.split(None, 1)[0] if low else ""
    for matches, parse in _TURN_ORDERS:
        if matches(low, verb, words, turn):
            return parse(state, role, turn, words, low, ctx)
    raise OrderError(f"not an order now: '{text}' (now: {steps.PROMPTS.get(turn.step, turn.step)})")


#: Does an order's text (lower case, first word, as written, the turn) have a form?
Matches = Callable[[str, str, str, Turn], bool]


#: The Player-Turn's order forms, tried in this order.
_TURN_ORDERS: tuple[tuple[Matches, Callable[..., Order]], ...] = (
    (lambda low, verb, words, turn: low.startswith("supply check"), supply_steps.parse_supply_order),
    (lambda low, verb, words, turn: low in ("blitz", "no blitz") and turn.step == "blitz",
     turn_options.parse_blitz_order),
    (lambda low, verb, words, turn: turn_options.OPTION.match(low) is not None, turn_options.parse_option_order),
    (lambda low, verb, words, turn: verb == "refuse-battle" and "->" not in words, refusal.parse_refuse_battle),
    (lambda low, verb, words, turn: verb == "rout" and "->" not in words, rout_orders.parse_rout_order),
    (lambda low, verb, words, turn: verb == "retreat", retreats.parse_retreat_speed),
    (lambda low, verb, words, turn: verb == "probe" or low.startswith("no probe "), retreats.parse_probe),
    (lambda low, verb, words, turn: verb == "pursue", refusal.parse_pursue_order),
    (lambda low, verb, words, turn: low.startswith("pursuit losses"), refusal.parse_pursuit_losses_order),
    (lambda low, verb, words, turn: low.startswith("march losses"), retreats.parse_march_losses_order),
    (lambda low, verb, words, turn: verb in ("group", "regroup", "withdraw", "refuse-battle", "rout"),
     group_moves.parse_move_order),
    (lambda low, verb, words, turn: verb == "forced-march", group_moves.parse_forced_march_order),
    (lambda low, verb, words, turn: verb == "exit", exits.parse_exit_order),  # RB 17.1 sidebar
    (lambda low, verb, words, turn: verb == "enter", base_entry.parse_enter_base_order),  # RB 16.4 sidebar
    (lambda low, verb, words, turn: low == "end movement", group_moves.parse_end_movement),
    (lambda low, verb, words, turn: verb == "accept-battle", refusal.parse_accept_battle),
    (lambda low, verb, words, turn: low == "open minefields", minefield_rules.parse_open_minefields),
    (lambda low, verb, words, turn: low == "reveal units", battle.parse_reveal_units),
    (lambda low, verb, words, turn: low == "reveal option", turn_options.parse_reveal_option),
    (lambda low, verb, words, turn: verb == "battles", battle.parse_battles_order),
    (lambda low, verb, words, turn: verb == "fire", battle.parse_fire_order),
    (lambda low, verb, words, turn: verb == "losses", battle.parse_losses_order),
)


def legal_orders(state: State, role: Side, ctx) -> list[str]:
    """Every order ``role`` may give now, in the syntax of parse_order."""
    if state.phase == "deploy":
        return deployment.listed_deployment(state, role)  # RB 18.0
    decision = steps.pending(state)
    if decision is None or decision.role != role or decision.kind == DICE:
        return []
    if state.phase != "turn":
        return month_phase.month_orders(state, role, ctx)
    turn = current_turn(state)
    listing = _STEP_ORDERS.get(turn.step)
    return listing(state, role, turn, ctx) if listing is not None else []


def _listed_movement(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "movement" (RB 3.44): the Moves (RB 5.0),
    Base entries (RB 16.4 sidebar), exits (RB 17.1 sidebar), the Forced
    Marches (RB 6.4), then the end of movement."""
    return group_moves.movement_orders(state, role, turn) + base_entry.enter_base_orders(state, role, turn) + \
        exits.exit_orders(state, role, turn) + group_moves.forced_march_orders(state, role, turn, ctx) + ["end movement"]


#: Each Player-Turn step's order listing, in the module of its rule.
_STEP_ORDERS: dict[str, Callable[[State, Side, Turn, Any], list[str]]] = {
    "initial-supply": supply_steps.listed_supply,
    "final-supply": supply_steps.listed_supply,
    "option": turn_options.listed_options,
    "movement": _listed_movement,
    "refuse": refusal.listed_refusals,
    "refuse-pursuit": refusal.listed_refusal_pursuit,
    "refuse-losses": refusal.listed_pursuit_losses,
    "retreat-losses": refusal.listed_pursuit_losses,
    "march-losses": retreats.listed_march_losses,
    "retreat-probe": retreats.listed_probe,
    "probe-reveal": retreats.listed_probe_reveal,
    "retreat-slowest": retreats.listed_retreat_slowest,
    "retreat-pursuit": retreats.listed_retreat_pursuit,
    "refuse-withdraw": refusal.listed_refusal_withdrawal,
    "reveal-passive": battle.listed_reveals,
    "reveal-active": battle.listed_reveals,
    "battles": battle.listed_battles,
    "defensive-fire": battle.listed_fire,
    "offensive-fire": battle.listed_fire,
    "offensive-losses": battle.listed_losses,
    "defensive-losses": battle.listed_losses,
    "supply-revealed": turn_options.listed_supply_revealed,
    "mines-passive": minefield_rules.listed_mine_openings,
    "mines-active": minefield_rules.listed_mine_openings,
    "blitz": turn_options.listed_blitz,
    "rout-slowest": rout_orders.listed_rout_slowest,
    "rout-pursuit": rout_orders.listed_rout_pursuit,
    "rout-losses": rout_orders.listed_rout_losses,
    "rout-withdraw": rout_orders.listed_rout_withdrawal,
}


def describe_action(state: State, action: object, role: str | None) -> str:
    """``format_action`` for people: the blocks this replay can identify by
    name (a player's own units, enemy units once revealed), the others by
    side and count, never a token (``wording.in_words``); nothing hidden
    from ``role`` is shown (the state holds only what it knows)."""
    return wording.in_words(state, format_action(action))


def format_action(action: object) -> str:
    """The action in words, by the module of its rule (the type's name for one without)."""
    describe = _FORMATS.get(type(action))
    return describe(action) if describe is not None else type(action).__name__


#: Each action type's wording, in the module of its rule.
_FORMATS: dict[type, Callable[[Any], str]] = {
    Deploy: deployment.format_deploy,
    EndDeployment: deployment.format_end_deployment,
    KeepHand: month_phase.format_keep_hand,
    Redraw: month_phase.format_redraw,
    Challenge: initiative.format_challenge,
    Answer: initiative.format_answer,
    OpenChallenge: initiative.format_open_challenge,
    EarlyArrival: buildup_orders.format_early_arrival,
    Reinforce: buildup_orders.format_reinforce,
    Rebuild: buildup_orders.format_rebuild,
    CallMalta: buildup_orders.format_call_malta,
    bu.Redeploy: buildup_orders.format_redeploy,
    bu.SeaRedeploy: buildup_orders.format_sea_redeploy,
    bu.ReturnForRefit: buildup_orders.format_return_for_refit,
    bu.BuySupply: buildup_orders.format_buy_supply,
    EndBuildup: buildup_orders.format_end_buildup,
    RevealAll: month_phase.format_reveal_all,
    BuildMinefield: minefield_rules.format_build_minefield,
    OpenMinefields: minefield_rules.format_open_minefields,
    Blitz: turn_options.format_blitz,
    SupplyCheck: supply_steps.format_supply_check,
    PlayCards: turn_options.format_play_cards,
    mv.Move: group_moves.format_move,
    ExitMap: exits.format_exit,
    EnterBase: base_entry.format_enter_base,
    ForcedMarches: group_moves.format_forced_marches,
    EndMovement: group_moves.format_end_movement,
    AcceptBattle: refusal.format_accept_battle,
    RefuseBattle: refusal.format_refuse_battle,
    RetreatSpeed: retreats.format_retreat_speed,
    Probe: retreats.format_probe,
    routs.PursuitFire: refusal.format_pursuit_fire,
    Rout: rout_orders.format_rout,
    PursuitLosses: refusal.format_pursuit_losses,
    MarchLosses: retreats.format_march_losses,
    RevealUnits: battle.format_reveal_units,
    RevealOption: turn_options.format_reveal_option,
    cr.BattleSelection: battle.format_battle_selection,
    fr.FirePlan: battle.format_fire_plan,
    ls.LossAllocation: battle.format_loss_allocation,
}


#: The topics of ``explain`` (``pbem explain TOPIC SUBJECT``).
EXPLAIN_TOPICS: tuple[str, ...] = ("supply", "move", "bp", "cards", "fire")


def explain(state: State, role: Side, topic: str, args: str, ctx) -> list[str]:
    """``pbem explain supply <hex or unit>`` / ``pbem explain move <unit>`` /
    ``pbem explain bp [axis|allied]`` (RB 16.5 sidebar) / ``pbem explain cards
    hand|axis|allied`` (the Supply Cards held, T-41) / ``pbem explain fire
    <battle or now>`` (RB 9.0-9.5: the fire under way and the two forms of a
    fire order)."""
    m, pos = game_map(), state.position
    if topic == "supply":
        try:
            target = deployment.own_token(state, role, args)
        except ValueError:
            target = deployment.place_name(args)
        return supply_checks.explain_supply(m, pos, target, name=wording.unit_namer(pos))
    if topic == "move":
        token = deployment.own_token(state, role, args)
        turn = state.turn
        movement = turn.movement if turn is not None and turn.movement is not None and turn.active == role \
            else mv.start_movement(pos, role, moves_allowed=2, rommel_bonus=scenario_of(state).special.rommel_bonus)
        return reachability.explain_move(m, pos, movement, token, group_moves.block_speed(state, pos.block(token)),
                                         name=wording.unit_namer(pos))
    if topic in ("bp", "buildup"):
        return _divulged(state, role, args.strip().lower())
    if topic == "cards":
        return supplycards.explain_cards(state, role, args.strip().lower(), ctx)
    if topic == "fire":
        return battle.explain_fire(state, role, args)
    raise ValueError(f"nothing to explain about '{topic}' (topics: {', '.join(EXPLAIN_TOPICS)})")


def _divulged(state: State, role: Side, who: str) -> list[str]:
    """RB 16.5 sidebar "Divulging BP Expenditures": what a player must tell
    the opponent on request, for the Buildup under way or just ended (``who``:
    axis, allied or both; T-21: pbem answers from the log, where every
    expenditure is public except Minefield locations)."""
    sides = [s for s in SIDES if who in ("", "both", s)]
    if not sides:
        raise ValueError(f"'bp {who}': name axis, allied or both")
    if not state.ledgers and not state.saved:
        return ["no Buildup yet: BPs are determined in the Buildup (RB 16.3), not in Month 1"]
    lines = []
    for side in sides:
        ledger = state.ledgers.get(side)
        if ledger is None:
            lines.append(f"{side}: {state.saved.get(side, 0)} BP Saved (RB 16.5)")
            continue
        d = bu.divulge(ledger)
        lines += [f"{side} (RB 16.5 sidebar):", f"  BP Saved from earlier Months: {d.saved_before}",
                  f"  Redeployments: {d.redeployments}, {d.redeployment_bp} BP",
                  f"  steps rebuilt: {d.steps_rebuilt}, {d.replacement_bp} BP",
                  f"  Extra Supply: {d.extra_supply_bp} BP", f"  Minefields: {d.minefield_bp} BP",
                  f"  left to spend now: {ledger.available} BP"]
        if side == role:
            lines += [f"  {e.text}: {e.bp} BP" for e in ledger.entries]
    return lines
