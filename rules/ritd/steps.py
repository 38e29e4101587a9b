"""The steps of the Sequence of Play (RB 3.0) as tables, and who decides next.

Each Player-Turn step's owner (STEP_OWNER) and prompt (PROMPTS), the Month's
stages (STAGE_PROMPTS), the steps of a Retreat and of a Combat Round;
``pending`` (the decision the game waits for) and ``not_now`` (an action of
another step refused, naming the step). Only tables and queries: the moves
from step to step are rules.ritd.sequence's; no order-rule module is imported.
"""

from __future__ import annotations

from typing import Literal, NamedTuple, TypeVar

from pbem.deck import DECK
from pbem.rulesapi import DICE, Decision, Problem
from rules.ritd import buildup as bu
from rules.ritd import checked, routs, supplycards
from rules.ritd import fire as fr
from rules.ritd.actions import kind_of
from rules.ritd.combat_state import combat_position, combat_round, fire_so_far
from rules.ritd.position import Side, enemy_of
from rules.ritd.state import State, current_turn, game_map, scenario_of
from rules.ritd.turn import PendingRout, Turn, movement_of

STEP_OWNER = {"initial-supply": "active", "option": "active", "blitz": "active", "movement": "active", "forced-march": "passive",
              "refuse": "passive", "refuse-pursuit": "active", "refuse-dice": "passive",
              "refuse-losses": "passive", "refuse-withdraw": "passive", "reveal-passive": "passive", "reveal-active": "active",
              "battles": "active", "defensive-fire": "passive", "defensive-dice": "active",
              "offensive-losses": "active", "offensive-fire": "active", "offensive-dice": "passive",
              "defensive-losses": "passive", "final-supply": "active", "supply-revealed": "active",
              "mines-passive": "passive", "mines-active": "active",
              "retreat-probe": "passive", "probe-reveal": "active", "retreat-slowest": "active",
              "retreat-pursuit": "passive", "retreat-dice": "active", "retreat-losses": "active",
              "march-losses": "active",
              # Rout steps belong to the Routing side or its enemy (T-12), see pending()
              "rout-slowest": "", "rout-pursuit": "", "rout-dice": "", "rout-losses": "", "rout-withdraw": ""}


PROMPTS = {
    "initial-supply": "Initial Supply Check (RB 12.7): 'supply check', with Fortress or Oasis choices if asked",
    "option": "play supply cards face down (RB 4.0): 'pass', 'basic', 'offensive' or 'assault'",
    "movement": "Moves (RB 5.0), then 'forced march ...' (RB 6.4), then 'end movement'",
    "refuse": "accept or Refuse Battle for each Attacked Group (RB 8.4)",
    "refuse-pursuit": "Pursuit Fire on the Group Refusing Battle (RB 10.2, 10.5): 'pursue <hex> with <units>' "
                      "or 'pursue <hex> with none'",
    "refuse-losses": "place the Pursuit hits (RB 10.5, 9.5): 'pursuit losses <unit> <hits>, ...' or "
                     "'pursuit losses auto'",
    "refuse-withdraw": "the Withdrawal Group Move of the Group Refusing Battle (RB 10.2): "
                       "'refuse-battle <hex> -> <destination>'",
    "retreat-probe": "Probe Combat against the Partial Retreat (RB 10.4, 10.41): 'probe <hex>' or "
                     "'no probe <hex>'",
    "probe-reveal": "reveal your Rearguard for the Probe Combat (RB 10.41, 8.5): 'reveal units'",
    "retreat-slowest": "the slowest speed of your Retreating units (RB 10.3, 10.5): 'retreat <hex> slowest <speed>'",
    "retreat-pursuit": "Pursuit Fire on the Retreating units (RB 10.3, 10.5): 'pursue <hex> with <units>' "
                       "or 'pursue <hex> with none'",
    "retreat-losses": "place the Pursuit hits on your Retreating units (RB 10.5, 9.5): 'pursuit losses <unit> "
                      "<hits>, ...' or 'pursuit losses auto'",
    "march-losses": "the step lost by each Retreating unit whose Forced March failed (RB 6.4 sidebar "
                    "\"Retreat Forced Marches\", 2.3): 'march losses auto'",
    "mines-passive": "open your Minefield hexes that enemy units entered (RB 14.2): 'open minefields'",
    "mines-active": "open your Minefield hexes that enemy units entered (RB 14.2): 'open minefields'",
    "reveal-passive": "reveal your units in battles (RB 7.3): 'reveal units'",
    "reveal-active": "reveal your units in battles (RB 7.3): 'reveal units'",
    "battles": "choose the Active Battles (RB 8.6): 'battles <hex>, ...' or 'battles none', "
               "with 'assault <hex>, ...' for Assault Battles (RB 4.3)",
    "defensive-fire": "Defensive Fire (RB 9.1-9.3): the next unit, step by step, 'fire <hex>: <unit> at <class>', "
                      "or a plan 'fire <hex>: <unit> at <class> [else <class>], ...' ('pbem explain fire <battle>')",
    "offensive-fire": "Offensive Fire (RB 9.1-9.3): the next unit, step by step, 'fire <hex>: <unit> at <class>', "
                      "or a plan 'fire <hex>: <unit> at <class> [else <class>], ...' ('pbem explain fire <battle>')",
    "offensive-losses": "place the Defensive Fire hits (RB 9.5): 'losses <hex>: <unit> <hits>, ...' or "
                        "'losses <hex> auto'",
    "defensive-losses": "place the Offensive Fire hits (RB 9.5): 'losses <hex>: <unit> <hits>, ...' or "
                        "'losses <hex> auto'",
    "rout-slowest": "Rout (RB 11.3): Rout Attrition and the slowest speed of the survivors: "
                    "'rout <hex> slowest <speed>'",
    "rout-pursuit": "Pursuit Fire on the Routed units (RB 11.3, 10.5): 'pursue <hex> with <units>' or "
                    "'pursue <hex> with none'",
    "rout-losses": "place the Pursuit hits on the Routed units (RB 10.5, 9.5): 'pursuit losses <unit> <hits>, "
                   "...' or 'pursuit losses auto'",
    "rout-withdraw": "the Rout Withdrawal Group Move (RB 11.3): 'rout <hex> -> <destination>'",
    "final-supply": "Final Supply Check (RB 12.7): 'supply check'",
    "blitz": "Blitz (RB 3.45, 4.4): 'blitz' for the Blitz Movement and Combat phases, or 'no blitz'",
    "supply-revealed": "Supply Revealed (RB 3.48): 'reveal option'",
}


STAGE_PROMPTS = {
    "redraw": "keep your initial hand or redraw it once (RB 18.0): 'keep hand' or 'redraw'",
    "challenge": "Initiative (RB 3.3): 'challenge' (one card face down, 'challenge with dummy' to bluff) "
                 "or 'no challenge'",
    "answer": "answer the Initiative challenge (RB 3.3): 'answer' (one card), 'answer with dummy' or 'decline'",
    "open-challenge": "turn the challenge card face up (RB 3.3): 'open challenge'",
    "buildup": "Buildup (RB 16.4-16.6): 'early arrival' and 'reinforce' first if units are due, then 'redeploy <unit> <hex> -> "
               "... -> <hex>', 'sea <unit> -> <port>', 'refit <unit> <hex> -> ... -> <base>', "
               "'rebuild <unit> [steps]', 'buy supply [n]', 'call malta group' (RB 18.6), and "
               "'end buildup [discard <n> dummies]'",
    "reveal-all": "the end of the game (RB 17.0): 'reveal all' turns every block face up",
}


#: The steps of a Retreat; a Probe's Combat Round runs in the combat steps (``turn.probing``).
RETREAT_STEPS = ("retreat-probe", "probe-reveal", "retreat-slowest", "retreat-pursuit", "retreat-losses")


#: The Combat Round's steps, reused for Probe Combat with the roles reversed (RB 10.41).
COMBAT_STEPS = ("defensive-fire", "defensive-dice", "offensive-losses", "offensive-fire", "offensive-dice",
                 "defensive-losses")


T = TypeVar("T")


def _fired(plan: T | None) -> T:
    """The fire plan a dice step rolls for (its step follows the plan)."""
    assert plan is not None
    return plan


def pending(state: State) -> Decision | None:
    """RB 3.0: who decides next and what (a function of the frozen state,
    asked several times per action: kept for the same state object)."""
    return checked.once("pending", (state,), lambda: _pending(state))


def _pending(state: State) -> Decision | None:
    if state.phase == "over":
        return None
    if state.deck.jobs:
        task = supplycards.deck_task(state)
        assert task is not None  # deck jobs are waiting
        return Decision(role=task.role, kind=DECK, prompt=f"the shared supply deck: {state.deck.jobs[0].kind} "
                                                             "(RB 16.6; sent automatically)")
    if state.phase == "deploy":
        return Decision(role=state.side, kind="deploy",
                        prompt=f"deploy the {state.side} starting forces (RB 18.0)")
    if state.phase in ("cards", "initiative", "buildup", "final"):
        if state.stage == "bp-dice":
            n = bu.bp_dice_count(scenario_of(state))
            return Decision(role=state.side, kind=DICE, dice=(6,) * (2 * n),
                            prompt=f"Buildup Points dice, {n} each (RB 16.3)")
        if state.stage == "early-dice":
            return Decision(role=enemy_of(state.side), kind=DICE, dice=(6,) * len(state.early_slots),
                            prompt=f"Early Arrival dice for the {state.side} player's hidden slots (RB 16.41)")
        return Decision(role=state.side, kind=state.stage, prompt=STAGE_PROMPTS[state.stage])
    turn = current_turn(state)
    if turn.step == "forced-march":
        # Rolled by the opponent of whoever acted last: the passive player after
        # "end movement", the active one after a Retreat the passive player ended (T-35).
        role = turn.active if state.actor == turn.passive else turn.passive
        return Decision(role=role, kind=DICE, dice=(6,) * len(movement_of(turn).marches),
                        prompt="Forced March dice (RB 6.4)")
    if turn.step == "refuse-dice":
        return Decision(role=turn.passive, kind=DICE, dice=routs.pursuit_dice_needed(_fired(turn.pursuit)),
                        prompt="Pursuit Fire dice (RB 10.5)")
    if turn.step == "retreat-dice":
        return Decision(role=turn.active, kind=DICE, dice=routs.pursuit_dice_needed(_fired(turn.pursuit)),
                        prompt=f"Pursuit Fire dice on the Retreat from {game_map().name(turn.retreating)} (RB 10.5)")
    if turn.step.startswith("rout-"):
        r = turn.rout_queue[0]
        where = game_map().name(r.hex)
        if turn.step == "rout-dice":
            return Decision(role=r.side, kind=DICE, dice=routs.pursuit_dice_needed(_fired(turn.rout_pursuit)),
                            prompt=f"Pursuit Fire dice on the Rout in {where} (RB 10.5)")
        role = enemy_of(r.side) if turn.step == "rout-pursuit" else r.side
        return Decision(role=role, kind=turn.step, prompt=f"{PROMPTS[turn.step]}: {where}")
    role = turn.active if STEP_OWNER[turn.step] == "active" else turn.passive
    if turn.probing and turn.step in COMBAT_STEPS:
        role = enemy_of(role)  # RB 10.41: roles reversed in Probe Combat
    if turn.step in ("defensive-dice", "offensive-dice"):
        return Decision(role=role, kind=DICE, dice=fr.dice_needed(combat_position(state, turn),
                                                                  combat_round(state, turn), _fired(turn.fire)),
                        prompt=f"{turn.step.split('-')[0].capitalize()} Fire dice in "
                               f"{game_map().name(turn.battles[0])} (RB 9.4)")
    prompt = PROMPTS[turn.step]
    if turn.battles and turn.step != "battles":
        prompt += f": {game_map().name(turn.battles[0])}"
    if turn.fire_result is not None and turn.step in ("defensive-fire", "offensive-fire"):
        prompt += fire_so_far(turn.fire_result)  # RB 9.2: step-by-step fire under way
    if turn.step == "refuse":
        prompt += ": " + ", ".join(game_map().name(h) for h in turn.refusals)
    elif turn.refusing:
        prompt += f": {game_map().name(turn.refusing)}"
    elif turn.retreating and not turn.battles:
        prompt += f": {game_map().name(turn.retreating)}"
    if turn.probing:
        prompt = f"Probe Combat (RB 10.41): {prompt}"
    return Decision(role=role, kind=turn.step, prompt=prompt)


def not_now(state: State, action: object) -> list[Problem]:
    """RB 3.0: an action of another step of the Sequence of Play is refused
    naming the step the game is in and what that step allows (its rule)."""
    decision = pending(state)
    if state.phase == "turn":
        turn = current_turn(state)
        where = f"{turn.active} Player-Turn {turn.number}, step '{turn.step}'"
    else:
        where = f"the {state.phase} phase" + (f", step '{state.stage}'" if state.stage else "")
    now = decision.prompt if decision is not None else "nothing (the game is over)"
    return [Problem("RB 3.0", f"{kind_of(action)} is not allowed now: the game is at {where}, "
                              f"which allows {now}")]


#: The moments of a Player-Turn a rule's ``apply`` hands to the sequence
#: (rules.ritd.sequence.advance decides the step that follows each).
TurnMoment = Literal[
    "supply_checked",  # RB 12.7: an Initial or Final Supply Check made (its Routs in ``routs``)
    "cards_played",  # RB 3.42, 4.0: the supply cards played face down
    "blitz_taken", "blitz_declined",  # RB 3.45, 4.4
    "option_revealed",  # RB 3.48: the cards played shown
    "moved",  # RB 5.0, 16.4 sidebar: a Move or a Base entry made (its Overruns in ``routs``, RB 11.4)
    "movement_ended",  # RB 3.44: 'end movement'
    "mines_opened",  # RB 14.2: Minefield hexes opened
    "units_revealed",  # RB 7.3
    "battles_chosen",  # RB 8.6: the Active Battles (in ``turn.battles``)
    "fire_ordered",  # RB 9.1-9.3: a fire order (in ``turn.fire``), its dice to roll
    "losses_placed",  # RB 9.5: fire hits placed (the unshielded Disrupted units' Routs in ``routs``)
    "battle_accepted",  # RB 8.4: the Attacked Group in ``hex`` fights
    "refusal_announced",  # RB 10.2: a Group Refuses Battle, its slowest speed announced
    "refusal_pursued",  # RB 10.5: the Pursuit Fire on it ordered (``turn.pursuit``)
    "refusal_losses_placed",  # RB 10.5, 9.5: the Pursuit hits placed (``hex``; ``survivors``: any left)
    "probe_declined", "probe_provoked",  # RB 10.41
    "rearguard_revealed",  # RB 10.41, 8.5
    "retreat_announced",  # RB 10.3, 10.5: the slowest speed of the Retreating units
    "retreat_pursued",  # RB 10.5: the Pursuit Fire on the Retreat ordered (``turn.pursuit``)
    "retreat_losses_placed",  # RB 10.5, 9.5
    "march_losses_placed",  # RB 6.4 sidebar: the steps lost by failed Retreat Forced Marches (Overruns in ``routs``)
    "rout_announced",  # RB 11.3: Rout Attrition and the survivors' slowest speed (``turn.routers``)
    "rout_pursued",  # RB 11.3, 10.5: the Pursuit Fire on the Rout ordered (``turn.rout_pursuit``)
    "rout_losses_placed",  # RB 10.5, 9.5
    "rout_withdrawn",  # RB 11.3: the Rout Withdrawal Group Move made
]


class TurnNext(NamedTuple):
    """What a Player-Turn rule's ``apply`` did, for the sequence to move on
    from: the moment, the state and turn after the rule's effect, the Routs
    it caused (RB 11.3), the hex it concerns, whether units survive."""

    moment: TurnMoment
    state: State
    turn: Turn
    routs: tuple[PendingRout, ...] = ()
    hex: str = ""
    survivors: bool = False


#: The moments outside the Player-Turns a rule's ``apply`` hands to the sequence.
MonthMoment = Literal[
    "hand_kept",  # RB 18.0: the initial hand kept or redrawn
    "challenged", "no_challenge",  # RB 3.3: the Allied player challenges for the Initiative, or not
    "answered",  # RB 3.3: the Axis answer (a card, a dummy or none)
    "challenge_opened",  # RB 3.3: the Initiative decided (``side``: its holder)
    "early_arrival_announced",  # RB 16.41: the Early Arrival slots, their dice to roll
    "buildup_ended",  # RB 16.6, 18.7: 'end buildup' (``side``: who ended)
    "game_judged",  # RB 17.0: every block face up, the victory judged (``state.result``)
]


class MonthNext(NamedTuple):
    """What a rule's ``apply`` outside the Player-Turns did, for the sequence
    to move on from: the moment, the state after the rule's effect, the side
    it concerns."""

    moment: MonthMoment
    state: State
    side: Side = "axis"
