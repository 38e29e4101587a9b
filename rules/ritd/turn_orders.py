"""The Player-Turn's actions (RB 3.4) dispatched to the module of their rule:
a table from a step's procedure or an action's type to its check and apply.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from pbem.rulesapi import Problem
from rules.ritd import (
    base_entry,
    battle,
    exits,
    group_moves,
    minefield_rules,
    refusal,
    retreats,
    rout_orders,
    routs,
    sequence,
    steps,
    supply_steps,
    turn_options,
)
from rules.ritd import combat_round as cr
from rules.ritd import fire as fr
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd.actions import (
    AcceptBattle,
    Blitz,
    EndMovement,
    EnterBase,
    ExitMap,
    ForcedMarches,
    MarchLosses,
    OpenMinefields,
    PlayCards,
    Probe,
    PursuitLosses,
    RefuseBattle,
    RetreatSpeed,
    RevealOption,
    RevealUnits,
    Rout,
    SupplyCheck,
)
from rules.ritd.position import Side
from rules.ritd.state import State
from rules.ritd.steps import TurnNext
from rules.ritd.turn import Turn


class TurnRule(NamedTuple):
    """One rule's check and apply of a Player-Turn action (same arguments:
    state, turn, action, the acting side, ctx). ``apply`` returns the state,
    or, where the action ends a step, what the sequence moves on from."""

    check: Callable[..., list[Problem]]
    apply: Callable[..., State | TurnNext]


def _unchecked(state: State, turn: Turn, action: object, side: Side, ctx) -> State:
    raise ValueError(f"unchecked action {action!r}")


#: Procedures that own their steps: any action in one of their steps, or one
#: of their actions in another step, is theirs to judge (in this order).
_PROCEDURES: tuple[tuple[tuple[str, ...], tuple[type, ...], TurnRule], ...] = (
    # RB 14.2 (T-30): Minefield hexes opened at the end of a Movement phase.
    (("mines-passive", "mines-active"), (OpenMinefields,),
     TurnRule(lambda state, turn, action, side, ctx: minefield_rules.open_minefields_problems(state, turn, action, side),
              minefield_rules.apply_open_minefields)),
    # RB 10.3-10.41: the active player's Retreats and Probes.
    (steps.RETREAT_STEPS, (Probe, RetreatSpeed), TurnRule(retreats.check_retreat, retreats.apply_retreat)),
    # RB 6.4 sidebar: the steps lost by failed Retreat Forced Marches.
    (("march-losses",), (MarchLosses,),
     TurnRule(retreats.check_march_losses,
              lambda state, turn, action, side, ctx: retreats.apply_march_losses(state, turn, action, ctx))),
)

#: RB 11.3 (T-12): a Rout under way owns every step "rout-...".
_ROUT = TurnRule(rout_orders.check_rout, rout_orders.apply_rout)

#: Every other Player-Turn action, by type, with the module of its rule.
_BY_ACTION: dict[type, TurnRule] = {
    SupplyCheck: TurnRule(supply_steps.check_supply, supply_steps.apply_supply),  # RB 12.7
    PlayCards: TurnRule(turn_options.check_play_cards, turn_options.apply_play_cards),  # RB 3.42, 4.0
    mv.Move: TurnRule(group_moves.check_move_action, group_moves.apply_move_action),  # RB 5.0, 10.2
    ExitMap: TurnRule(exits.check_exit, exits.apply_exit),  # RB 17.1 sidebar "Exiting Units"
    EnterBase: TurnRule(base_entry.check_enter_base, base_entry.apply_enter_base),  # RB 16.4 sidebar
    ForcedMarches: TurnRule(group_moves.check_forced_marches, group_moves.apply_forced_marches),  # RB 6.4
    EndMovement: TurnRule(group_moves.check_end_movement, group_moves.apply_end_movement),  # RB 3.44
    AcceptBattle: TurnRule(refusal.check_accept_battle, refusal.apply_accept_battle),  # RB 8.4
    RefuseBattle: TurnRule(refusal.check_refusal, refusal.apply_refuse_battle),  # RB 10.2
    routs.PursuitFire: TurnRule(refusal.check_refusal, refusal.apply_pursuit_fire),  # RB 10.5
    PursuitLosses: TurnRule(refusal.check_refusal, refusal.apply_refusal_losses),  # RB 10.5, 9.5
    Rout: TurnRule(refusal.check_refusal, _unchecked),  # RB 11.3: only while a Rout is under way
    RevealUnits: TurnRule(battle.check_reveal_units, battle.apply_reveal_units),  # RB 7.3
    cr.BattleSelection: TurnRule(battle.check_combat_action, battle.apply_battle_selection),  # RB 8.6
    fr.FirePlan: TurnRule(battle.check_combat_action, battle.apply_fire_plan),  # RB 9.1-9.3
    ls.LossAllocation: TurnRule(battle.check_combat_action, battle.apply_loss_allocation),  # RB 9.5
    Blitz: TurnRule(turn_options.check_blitz, turn_options.apply_blitz),  # RB 3.45, 4.4
    RevealOption: TurnRule(turn_options.check_reveal_option, turn_options.apply_reveal_option),  # RB 3.48
}


def _rule_for(turn: Turn, action: object) -> TurnRule | None:
    if turn.step.startswith("rout-"):
        return _ROUT
    for owned, types, rule in _PROCEDURES:
        if turn.step in owned or isinstance(action, types):
            return rule
    return _BY_ACTION.get(type(action))


def check_turn(state: State, turn: Turn, action: object, side: Side, ctx) -> list[Problem]:
    """RB 3.4: a Player-Turn action, judged by the rule of its step or its type."""
    rule = _rule_for(turn, action)
    return rule.check(state, turn, action, side, ctx) if rule is not None else steps.not_now(state, action)


def apply_turn(state: State, turn: Turn, action: object, side: Side, ctx) -> State:
    """A checked Player-Turn action applied by the rule that checked it; the
    step that follows is the sequence's to decide (rules.ritd.sequence)."""
    rule = _rule_for(turn, action)
    if rule is None:
        raise ValueError(f"unchecked action {action!r}")
    out = rule.apply(state, turn, action, side, ctx)
    if isinstance(out, TurnNext):
        out = sequence.advance(out)
    return sequence.sudden_death(out)  # RB 17.1: at once
