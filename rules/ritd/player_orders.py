"""Orders as players write them: ``parse_order`` (text to action),
``legal_orders`` (every order the pending decision allows), ``format_action``
and ``describe_action`` (action to text) and ``explain``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import msgspec

from pbem.rulesapi import DICE, Order
from rules.ritd import (
    battle,
    buildup_orders,
    deployment,
    group_moves,
    hidden,
    initiative,
    minefield_rules,
    mines,
    month_phase,
    reachability,
    refusal,
    retreats,
    rout_orders,
    routs,
    sequence,
    supply_checks,
    supply_steps,
    turn_options,
    turn_orders,
)
from rules.ritd import buildup as bu
from rules.ritd import combat as cb
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
from rules.ritd.setup import (
    check_deployment_complete,
)
from rules.ritd.state import (
    State,
    all_scenarios,
    current_turn,
    game_map,
    known_units,
    scenario_of,
)
from rules.ritd.turn import Turn
from rules.ritd.units import UnknownUnit


def parse_order(state: State, role: Side, text: str, ctx) -> Order:
    words = text.strip()
    low = words.lower()
    if state.phase == "deploy":
        if low in ("end deployment", "deployment done", "done"):
            return Order(action=EndDeployment())
        m = deployment.DEPLOY.match(words)
        if m:
            try:
                unit = all_scenarios().roster.get(m.group("unit"))
            except UnknownUnit as exc:
                raise OrderError(f"RB 2.0: {exc}") from None
            where = deployment.place_name(m.group("where"))
            token = hidden.new_token(role, ctx.fresh())
            return Order(action=Deploy(token=token, hex=where),
                         secrets={hidden.identity_label(token): hidden.encode_identity(unit.name, unit.max_cv)})
        raise OrderError(f"not an order now: '{text}' (while deploying: 'deploy <unit> at <place>', "
                         "'end deployment')")
    if state.phase != "turn":
        return month_phase.parse_month_order(state, role, words, ctx)
    turn = current_turn(state)
    verb = low.split(None, 1)[0] if low else ""
    if low.startswith("supply check"):
        return Order(action=supply_steps.parse_supply(state, role, words[len("supply check"):]))
    if low in ("blitz", "no blitz") and turn.step == "blitz":
        return Order(action=Blitz(go=low == "blitz"))
    cards = turn_options.parse_play_cards(state, role, turn, low, ctx)
    if cards is not None:
        return cards
    if verb == "refuse-battle" and "->" not in words:
        m = re.match(r"^refuse-battle\s+(?P<where>.+?)\s+slowest\s+(?P<n>\d+)$", words, re.IGNORECASE)
        if not m:
            raise OrderError("RB 10.2: write 'refuse-battle <hex> slowest <speed>'")
        return Order(action=RefuseBattle(hex=deployment.place_name(m.group("where")), slowest=int(m.group("n"))))
    if verb == "rout" and "->" not in words:
        return rout_orders.parse_rout(state, role, turn, words)
    if verb == "retreat":
        m = re.match(r"^retreat\s+(?P<where>.+?)\s+slowest\s+(?P<n>\d+)$", words, re.IGNORECASE)
        if not m:
            raise OrderError("RB 10.5: write 'retreat <hex> slowest <speed>'")
        return Order(action=RetreatSpeed(hex=deployment.place_name(m.group("where")), slowest=int(m.group("n"))))
    if verb == "probe" or low.startswith("no probe "):
        go = verb == "probe"
        hex_ = deployment.place_name(words.split(None, 1 if go else 2)[-1])
        probe = msgspec.structs.replace(turn, retreating=hex_)
        labels = [hidden.identity_label(b.token, state.versions.get(b.token, 0))
                  for b in retreats.probers_to_reveal(state, probe)] if go else []
        return Order(action=Probe(hex=hex_, go=go), reveal=tuple(lbl for lbl in labels if not ctx.opened(lbl)))
    if verb == "pursue":
        return Order(action=refusal.parse_pursuit(state, role, turn, words))
    if low.startswith("pursuit losses"):
        return refusal.parse_losses(state, role, turn, words[len("pursuit losses"):])
    if low.startswith("march losses"):
        return retreats.parse_march_losses(state, role, turn, words[len("march losses"):])
    if verb in ("group", "regroup", "withdraw", "refuse-battle", "rout"):
        return Order(action=group_moves.parse_move(state, role, turn, words, verb))
    if verb == "forced-march":
        return Order(action=ForcedMarches(marches=tuple(group_moves.parse_march(state, role, turn, part)
                                                          for part in words.split(None, 1)[1].split(";"))))
    if low == "end movement":
        return Order(action=EndMovement())
    if verb == "accept-battle":
        return Order(action=AcceptBattle(hex=deployment.place_name(words.split(None, 1)[1])))
    if low == "open minefields":
        own = minefield_rules.mines_of(state, role)
        return Order(action=OpenMinefields(hexes=own.due),
                     open_leaves=tuple((mines.set_label(role, own.number), h) for h in own.due if h not in own.opened))
    if low == "reveal units":  # identities opened in an earlier battle stay opened (RB 8.5)
        shown = retreats.rearguard_to_reveal(state, turn) if turn.step == "probe-reveal" else battle.to_reveal(state, role)
        labels = [hidden.identity_label(b.token, state.versions.get(b.token, 0)) for b in shown]
        return Order(action=RevealUnits(), reveal=tuple(lbl for lbl in labels if not ctx.opened(lbl)))
    if low == "reveal option":
        return Order(action=RevealOption(), reveal=(turn.option_label,) if turn.option_label else ())
    if verb == "battles":
        return Order(action=battle.parse_battles(words))
    if verb == "fire":
        return Order(action=battle.parse_fire(state, role, words))
    if verb == "losses":
        return Order(action=battle.parse_combat_losses(state, role, turn, words))
    raise OrderError(f"not an order now: '{text}' (now: {sequence.PROMPTS.get(turn.step, turn.step)})")


def legal_orders(state: State, role: Side, ctx) -> list[str]:
    """Every order ``role`` may give now, in the syntax of parse_order."""
    m = game_map()
    if state.phase == "deploy":
        if state.side != role:
            return []
        s = scenario_of(state)
        placed = known_units(state.position, role)
        orders = []
        from rules.ritd.setup import group_hexes, zone_hexes
        # Zones with stated limits (e.g. "14 units in El Agheila"): no hex of a
        # full zone, and only unfilled minimums once the units left are needed there.
        mine = list(state.position.blocks_of(role))
        left = sum(1 for g in s.side(role).setup for u in g.select(all_scenarios().roster, role)
                   if u.name not in placed)
        full: set[str] = set()
        short: set[str] = set()
        need = 0
        for group in s.side(role).setup:
            for zone in group.zones:
                zh = zone_hexes(m, zone)
                count = sum(1 for b in mine if b.hex in zh)
                if zone.max_units is not None and count >= zone.max_units:
                    full |= zh
                if count < zone.min_units:
                    short |= zh
                    need += zone.min_units - count
        for group in s.side(role).setup:
            hexes = sorted(h for h in group_hexes(m, group)
                           if state.position.control(h, role) in ("friendly", "empty") and h not in full
                           and (need < left or h in short))
            for unit in group.select(all_scenarios().roster, role):
                if unit.name not in placed:
                    orders += [f"deploy {unit.name} at {m.name(h)}" for h in hexes]
        if not check_deployment_complete(m, s, role, state.position):
            orders.append("end deployment")
        return orders
    decision = sequence.pending(state)
    if decision is None or decision.role != role or decision.kind == DICE:
        return []
    if state.phase != "turn":
        return month_phase.month_orders(state, role, ctx)
    turn = current_turn(state)
    listing = _step_orders().get(turn.step)
    return listing(state, role, turn, ctx) if listing is not None else []


@functools.cache
def _step_orders() -> dict[str, Callable[[State, Side, Turn, Any], list[str]]]:
    """Each Player-Turn step's order listing, in the module of its rule (built
    at first use: the rule modules import each other)."""
    return {
        "initial-supply": supply_steps.listed_supply,
        "final-supply": supply_steps.listed_supply,
        "option": turn_options.listed_options,
        "movement": group_moves.listed_movement,
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
    """``format_action`` with the blocks this replay can identify named
    ("Unit (token)"): a player's own units, and enemy units once revealed;
    nothing hidden from ``role`` is shown (the state holds only what it knows)."""
    return turn_orders.with_unit_names(state, format_action(action))


def format_action(action: object) -> str:
    """The action in words, by the module of its rule (the type's name for one without)."""
    describe = _formats().get(type(action))
    return describe(action) if describe is not None else type(action).__name__


@functools.cache
def _formats() -> dict[type, Callable[[Any], str]]:
    """Each action type's wording, in the module of its rule (built at first use)."""
    return {
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
        cb.BattleSelection: battle.format_battle_selection,
        cb.FirePlan: battle.format_fire_plan,
        cb.LossAllocation: battle.format_loss_allocation,
    }


#: The topics of ``explain`` (``pbem explain TOPIC SUBJECT``).
EXPLAIN_TOPICS: tuple[str, ...] = ("supply", "move", "bp")


def explain(state: State, role: Side, topic: str, args: str, ctx) -> list[str]:
    """``pbem explain supply <hex or unit>`` / ``pbem explain move <unit>`` /
    ``pbem explain bp [axis|allied]`` (RB 16.5 sidebar)."""
    m, pos = game_map(), state.position
    if topic == "supply":
        try:
            target = deployment.own_token(state, role, args)
        except ValueError:
            target = deployment.place_name(args)
        return [turn_orders.with_unit_names(state, line) for line in supply_checks.explain_supply(m, pos, target)]
    if topic == "move":
        token = deployment.own_token(state, role, args)
        turn = state.turn
        movement = turn.movement if turn is not None and turn.movement is not None and turn.active == role \
            else mv.start_movement(pos, role, moves_allowed=2, rommel_bonus=scenario_of(state).special.rommel_bonus)
        return [turn_orders.with_unit_names(state, line)
                for line in reachability.explain_move(m, pos, movement, token, group_moves.block_speed(state, pos.block(token)))]
    if topic in ("bp", "buildup"):
        return _divulged(state, role, args.strip().lower())
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
