"""The Sequence of Play (RB 3.0): the only place that moves the game on.

Who decides next (``pending``, STEP_OWNER), and every move from one step to
the next: the Month (RB 3.1), the Initiative (RB 3.3), the Buildup (RB 16.1),
the Player-Turn's steps (RB 3.4: supply, option, Movement, Refusing Battle,
reveals, Combat, Blitz, Final Supply, Supply Revealed), Retreats and Probes
(RB 10.3-10.41), Routs (RB 11.3) and the end of the turn.
"""

from __future__ import annotations

from typing import TypeVar, cast

import msgspec

from pbem.deck import DECK
from pbem.rulesapi import DICE, Decision, Problem
from rules.ritd import battle, checked, group_moves, hidden, minefield_rules, routs, supply_checks, supplycards
from rules.ritd import buildup as bu
from rules.ritd import combat_round as cr
from rules.ritd import fire as fr
from rules.ritd import fortresses as fo
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd import reinforcements as rf
from rules.ritd import supply as sp
from rules.ritd.actions import kind_of
from rules.ritd.cards import OPTION_COST
from rules.ritd.position import SIDES, Side, enemy_of
from rules.ritd.state import State, all_scenarios, current_turn, game_map, scenario_of
from rules.ritd.turn import PendingRout, Turn, movement_of
from rules.ritd.victory import strategic_victory

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
    if turn.probing and turn.step in _COMBAT_STEPS:
        role = enemy_of(role)  # RB 10.41: roles reversed in Probe Combat
    if turn.step in ("defensive-dice", "offensive-dice"):
        return Decision(role=role, kind=DICE, dice=fr.dice_needed(battle.combat_position(state, turn),
                                                                  battle.combat_round(state, turn), _fired(turn.fire)),
                        prompt=f"{turn.step.split('-')[0].capitalize()} Fire dice in "
                               f"{game_map().name(turn.battles[0])} (RB 9.4)")
    prompt = PROMPTS[turn.step]
    if turn.battles and turn.step != "battles":
        prompt += f": {game_map().name(turn.battles[0])}"
    if turn.fire_result is not None and turn.step in ("defensive-fire", "offensive-fire"):
        prompt += battle.fire_so_far(turn.fire_result)  # RB 9.2: step-by-step fire under way
    if turn.step == "refuse":
        prompt += ": " + ", ".join(game_map().name(h) for h in turn.refusals)
    elif turn.refusing:
        prompt += f": {game_map().name(turn.refusing)}"
    elif turn.retreating and not turn.battles:
        prompt += f": {game_map().name(turn.retreating)}"
    if turn.probing:
        prompt = f"Probe Combat (RB 10.41): {prompt}"
    return Decision(role=role, kind=turn.step, prompt=prompt)


#: The Combat Round's steps, reused for Probe Combat with the roles reversed (RB 10.41).
_COMBAT_STEPS = ("defensive-fire", "defensive-dice", "offensive-losses", "offensive-fire", "offensive-dice",
                 "defensive-losses")


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


def after_mines(state: State, turn: Turn) -> State:
    """The Minefield openings owed (T-30), passive player first, then the reveals (RB 7.3)."""
    for side, step in ((turn.passive, "mines-passive"), (turn.active, "mines-active")):
        if minefield_rules.mines_of(state, side).due:
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step))
    return _reveals(state, turn)


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


def after_redraw(state: State, side: Side) -> State:
    if side == "axis":
        return msgspec.structs.replace(state, stage="redraw", side="allied")
    return begin_month(state, scenario_of(state).special.first_player)


def begin_month(state: State, first: Side) -> State:
    """RB 3.1: the Player-Turns of the Month, the Initiative holder first."""
    state = msgspec.structs.replace(state, phase="turn", stage="", passes=0, challenge="", answer="",
                                    ledgers={}, networks={}, reinforced=(), bonus={},
                                    captures=fo.start_month_ledger(state.month, state.position.fortresses))
    return begin_turn(state, first)


def begin_initiative(state: State) -> State:
    """RB 3.3: the Allied player may challenge for the Initiative (never in
    the first Month: the Initiative follows a Buildup, which Month 1 lacks)."""
    return msgspec.structs.replace(state, phase="initiative", stage="challenge", side="allied")


def _begin_buildup(state: State) -> State:
    """RB 16.1-16.2: advance the Month; the Buildup Supply Check (its
    Fortress and Oasis choices made by rule, T-19); units back from Refit;
    both Supply Networks fixed; then the BP dice (RB 16.3)."""
    m = game_map()
    month = state.month + 1
    bonus = fo.captured_supply(state.captures, fo.map_port_capacity(m)) if state.captures else {}
    pos, report = supply_checks.buildup_supply_check(m, state.position)
    if report.needed:
        pos, report = supply_checks.buildup_supply_check(m, state.position, _default_choices(report.needed))
    waiting = state.waiting
    for side in SIDES:
        back = state.refitting.get(side, ())
        if back:  # RB 16.52; at an engaged Base they wait off board (RB 16.4 sidebar, BU-16)
            arrival = rf.arrive(m, pos, side, back)
            pos, waiting = arrival.pos, rf.held_off_board(waiting, side, arrival.waiting)
    networks = {side: tuple(sorted(net)) for side, net in bu.buildup_networks(m, pos).items()}
    disrupted = {t: n for t, n in state.disrupted_in.items() if pos.has_block(t) and pos.block(t).disrupted}
    return msgspec.structs.replace(state, phase="buildup", stage="bp-dice", month=month, position=pos,
                                   networks=networks, refitting={}, waiting=waiting, bonus=bonus,
                                   disrupted_in=disrupted,
                                   side=enemy_of(cast(Side, state.actor)), turn=None, reinforced=(), ledgers={},
                                   early=state.early_next, early_units=state.early_units_next, early_next={},
                                   early_units_next={}, early_done=(), early_arrived=())


def _default_choices(needed) -> dict[Side, sp.SupplyChoices]:
    """T-19: Buildup Supply Check choices nobody is asked for: the first
    candidates in token order (both sides' choices would otherwise cost a
    round of messages for a rare case)."""
    out: dict[Side, dict[str, dict]] = {}
    for n in needed:
        side: Side = "axis" if hidden.is_token_of(n.candidates[0], "axis") else "allied"
        bucket = out.setdefault(side, {"fortress": {}, "oasis": {}})
        picked = tuple(sorted(n.candidates)[:n.count])
        if n.kind == "fortress":
            bucket["fortress"][n.hex] = picked
        else:
            bucket["oasis"][n.hex] = picked[0]
    return {side: sp.SupplyChoices(fortress=v["fortress"], oasis=v["oasis"]) for side, v in out.items()}


def begin_turn(state: State, active: Side) -> State:
    number = len(state.turns) + 1
    return msgspec.structs.replace(state, side=active, turn=Turn(number=number, active=active),
                                   turns=state.turns + (active,))


def after_refusal(state: State, turn: Turn, hex_: str) -> State:
    """The refusing Group has withdrawn (or was wiped out): Disrupted units left
    behind Rout, pursued by units that have not fired (EX-26, T-12)."""
    left = tuple(b.token for b in state.position.blocks_in(hex_, turn.passive) if b.disrupted)
    if not left or not state.position.blocks_in(hex_, turn.active):
        return decided(state, turn, hex_)
    fired = tuple(p.token for p in turn.pursuit.pursuers) if turn.pursuit is not None else ()
    return start_routs(state, turn, [PendingRout(hex=hex_, side=turn.passive, tokens=left, fired=fired)], "refuse")


#: The steps of a Retreat; a Probe's Combat Round runs in the combat steps (``turn.probing``).
RETREAT_STEPS = ("retreat-probe", "probe-reveal", "retreat-slowest", "retreat-pursuit", "retreat-losses")


def next_retreat(state: State, turn: Turn) -> State:
    """After all other Moves (RB 10.3, 10.4 procedures, T-35): each battle hex
    the active player announced Disengagements from, in hex order, then the
    Forced March dice, then the Refusals (RB 8.4)."""
    turn = msgspec.structs.replace(turn, retreating="", retreaters=(), rearguard=(), probing=False, probe_fired=(),
                                   slowest=0, pursuit=None, hits=0, battles=(), fire=None, fire_result=None)
    pos = state.position
    pending_retreats = mv.pending_retreats(pos, movement_of(turn))
    if not pending_retreats:
        if movement_of(turn).marches:
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="forced-march"))
        return after_movement(state, turn)
    r = pending_retreats[0]
    turn = msgspec.structs.replace(turn, retreating=r.hex, retreaters=r.units, rearguard=r.rearguard)
    pursuers = routs.pursuit_eligible(pos, r.hex, turn.passive)
    if r.kind == "partial":
        # RB 10.4: no combat in that battle this Player-Turn (CB-03), Probe or not.
        turn = msgspec.structs.replace(turn, partial=turn.partial + (r.hex,))
        step = "retreat-probe"
    else:
        step = "retreat-slowest"
    if not pursuers:  # nobody to Probe or Pursue: the units just leave
        return complete_retreat(state, turn)
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step))


def start_probe(state: State, turn: Turn) -> State:
    """RB 10.41: one Combat Round in the Retreat hex, the Rearguard firing first."""
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(
        turn, probing=True, battles=(turn.retreating,), step="defensive-fire", fire=None, fire_result=None,
        probe_fired=()))


def _after_probe(state: State, turn: Turn) -> State:
    """RB 10.41: a Rearguard wiped out makes the Partial Retreat a Full one,
    pursued by the Probing units that did not fire; otherwise the Disengaging
    units leave without Pursuit Fire."""
    turn = msgspec.structs.replace(turn, probing=False, battles=(), fire=None, fire_result=None)
    pos = state.position
    if any(pos.has_block(t) for t in turn.rearguard) \
            or not routs.pursuit_eligible(pos, turn.retreating, turn.passive, turn.probe_fired):
        return complete_retreat(state, turn)
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="retreat-slowest"))


def after_retreat_pursuit(state: State, turn: Turn) -> State:
    """RB 10.5: hits to place, else straight to the announced Moves."""
    if turn.hits:
        return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="retreat-losses"))
    return complete_retreat(state, turn)


def complete_retreat(state: State, turn: Turn) -> State:
    """Step 3 of the Retreat procedures (RB 10.3): the surviving Retreating
    units make their announced Moves and are Disrupted (RB 7.2); step 4: the
    Disrupted units left in the hex unshielded Rout, pursued by units that
    have not fired (T-12, T-36). Then the next Retreat."""
    m, hex_ = game_map(), turn.retreating
    pos, movement = state.position, movement_of(turn)
    for r in [x for x in movement.retreating if x.hex == hex_]:
        pos, movement = mv.complete_retreat(m, pos, movement, r.token)
        if pos.has_block(r.token) and pos.block(r.token).hex != hex_:
            state = group_moves.note_routes(state, state.position, [(r.token, r.path)], turn.number, withdrawal=r.withdrawal)
    state = group_moves.note_disruptions(msgspec.structs.replace(state, position=pos), pos, turn.number)
    turn = msgspec.structs.replace(turn, movement=movement)
    left = ls.unshielded_disrupted(pos, hex_, turn.active)
    fired = tuple(p.token for p in turn.pursuit.pursuers) if turn.pursuit is not None else ()
    pending_routs = [PendingRout(hex=hex_, side=turn.active, tokens=left, fired=fired + turn.probe_fired)] \
        if left else []
    return start_routs(state, turn, pending_routs, "retreat-losses")


def sudden_death(state: State) -> State:
    """RB 17.1: "If either of these conditions occurs, the game ends
    immediately": a Strategic Victory (the enemy Base controlled, or three
    Supplied units exited off the enemy map-end) ends the game the moment it
    holds, in the middle of a Player-Turn too. Run after every Player-Turn
    action (turn_orders.apply_turn) and after the dice that move or eliminate
    units (Forced Marches, Routs)."""
    if state.phase != "turn":
        return state
    sudden = strategic_victory(game_map(), state.position, all_scenarios().victory, state.exited)
    if sudden is None:
        return state
    return msgspec.structs.replace(state, phase="over", result=sudden)


def start_routs(state: State, turn: Turn, pending_routs, resume: str) -> State:
    """Queue Routs; they interrupt play and then ``resume`` goes on (unless
    what came before won the game, RB 17.1)."""
    state = sudden_death(state)
    if state.phase == "over":
        return state
    if not pending_routs:
        return _resume(state, msgspec.structs.replace(turn, step=resume))
    queue = turn.rout_queue + tuple(pending_routs)
    turn = msgspec.structs.replace(turn, rout_queue=queue, rout_resume=turn.rout_resume or resume)
    if turn.step.startswith("rout-"):  # already routing: the new ones follow
        return msgspec.structs.replace(state, turn=turn)
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="rout-slowest"))


def _resume(state: State, turn: Turn) -> State:
    """Back to where the turn was when the Routs began."""
    if turn.step == "refuse":
        return decided(state, turn, turn.refusing)
    if turn.step == "movement":  # after an Overrun (RB 11.4): the active player moves on
        return msgspec.structs.replace(state, turn=turn)
    if turn.step == "forced-march":
        return after_movement(state, turn)
    if turn.step == "retreat-losses":  # after the Routs a Retreat left behind (RB 10.3 step 4)
        return next_retreat(state, turn)
    if turn.step == "supply-revealed":  # after the Final Supply Check (RB 12.7)
        return end_turn(state, turn) if turn.cards == 0 else msgspec.structs.replace(state, turn=turn)
    return after_losses(state, turn)


def rout_done(state: State, turn: Turn) -> State:
    r = turn.rout_queue[0]
    pos = state.position
    if pos.battle(r.hex) is not None and len({b.side for b in pos.blocks_in(r.hex)}) < 2:
        state = msgspec.structs.replace(state, position=pos.with_battles(
            [b for b in pos.battles if b.hex != r.hex]))
    turn = msgspec.structs.replace(turn, rout_queue=turn.rout_queue[1:], routers=(), rout_slowest=0,
                                   rout_pursuit=None, rout_hits=0)
    if turn.rout_queue:
        return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="rout-slowest"))
    resume = turn.rout_resume
    return _resume(state, msgspec.structs.replace(turn, step=resume, rout_resume=""))


def rout_after_pursuit(state: State, turn: Turn, hits: int) -> State:
    turn = msgspec.structs.replace(turn, rout_hits=hits)
    if hits:
        return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="rout-losses"))
    return rout_withdraw_or_eliminate(state, turn)


def rout_withdraw_or_eliminate(state: State, turn: Turn) -> State:
    """RB 11.3: the survivors Withdraw by Group Move; those unable are eliminated."""
    routers = tuple(t for t in turn.routers if state.position.has_block(t))
    pos, gone = routs.eliminate_unable(game_map(), state.position, routers)
    routers = tuple(t for t in routers if t not in gone)
    state = sudden_death(msgspec.structs.replace(state, position=pos))  # RB 17.1: a Base left to the enemy
    if state.phase == "over":
        return state
    turn = msgspec.structs.replace(turn, routers=routers)
    if routers:
        return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="rout-withdraw"))
    return rout_done(state, turn)


def after_movement(state: State, turn: Turn) -> State:
    """All Moves and Forced Marches done: in a Pass Turn the passer's units
    still in a Fortress battle it attacks are Routed first (CB-12); then the
    passive player decides on the Attacked Groups that may Refuse Battle
    (RB 8.4); the others fight."""
    if turn.cards == 0:
        routed = pass_turn_routs(state, turn)
        if routed:  # after the Routs, back here: the Fortress battles are left
            # Routed units are Disrupted units (RB 11.3: "Disrupted units in a
            # battle hex ... are Routed"; only they make a Rout's Withdrawal
            # Group Move, movement): the attackers turn face-down as the Rout
            # begins, in every replay alike (CB-12).
            tokens = {t for r in routed for t in r.tokens}
            pos = state.position
            pos = pos.replace_blocks([msgspec.structs.replace(b, disrupted=True, revealed=False)
                                      for b in pos.blocks if b.token in tokens])
            return start_routs(msgspec.structs.replace(state, position=pos), turn, routed, "forced-march")
    refusals = mv.refusable_groups(game_map(), state.position, movement_of(turn))
    if refusals:
        return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="refuse", refusals=refusals))
    return _to_reveals(state, turn)


def pass_turn_routs(state: State, turn: Turn) -> list[PendingRout]:
    """RB 13.2 sidebar "Fortress Combat in Pass Turns" (CB-12): no combat in a
    Pass Turn, so the passer's units left in a Fortress battle it attacks when
    its movement ends are Routed (RB 11.3), one Rout per Fortress; every enemy
    unit there may Pursue (none has fired)."""
    pos = state.position
    forts = fo.fortress_hexes(game_map())
    routed = set(fo.pass_turn_fortress_routs(pos, turn.active, forts))
    return [PendingRout(hex=h, side=turn.active, tokens=tuple(b.token for b in pos.blocks_in(h, turn.active)
                                                              if b.token in routed))
            for h in fo.pass_turn_fortress_battles(pos, turn.active, forts)]


def after_pursuit(state: State, turn: Turn) -> State:
    """RB 10.5: hits to place, else straight to the Withdrawal Group Move."""
    step = "refuse-losses" if turn.hits else "refuse-withdraw"
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step))


def decided(state: State, turn: Turn, hex_: str) -> State:
    rest = tuple(h for h in turn.refusals if h != hex_)
    turn = msgspec.structs.replace(turn, refusals=rest, step="refuse", refusing="", refusers=(), slowest=0,
                                   pursuit=None, hits=0)
    if rest:
        return msgspec.structs.replace(state, turn=turn)
    return _to_reveals(state, turn)


def _to_reveals(state: State, turn: Turn) -> State:
    """All Movement is complete: Minefields entered by enemy units are opened
    (RB 14.2, T-30), then the units in battles are revealed (RB 7.3)."""
    return after_mines(minefield_rules.mine_checkpoint(state, turn), turn)


def _reveals(state: State, turn: Turn) -> State:
    """RB 7.3: when all Movement is complete, both players reveal their units in
    battles, the passive player first (his decisions came last)."""
    if battle.to_reveal(state, turn.passive):
        step = "reveal-passive"
    elif battle.to_reveal(state, turn.active):
        step = "reveal-active"
    else:
        return to_combat(state, turn)
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step))


def to_combat(state: State, turn: Turn) -> State:
    """T9: the active player chooses the Active Battles, unless this is a Pass
    Turn or no battle can be fought; else on to the Final Supply Check."""
    step = "battles" if turn.cards and battle.battle_hexes(state.position) else _after_combat(turn)
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step))


def _after_combat(turn: Turn) -> str:
    """RB 3.45: three or more cards played may pay for the Blitz phases, which
    the active player takes or not (public: only the card count decides that
    the question is asked); otherwise the Final Supply Check."""
    return "blitz" if turn.cards >= OPTION_COST["blitz"] and not turn.blitz else "final-supply"


def next_battle(state: State, turn: Turn) -> State:
    """The next Active Battle's Combat Round begins with Defensive Fire (RB 9.1),
    or the Combat phase ends: the battles one side has left are gone (RB 8.0)."""
    pos = state.position
    battles = tuple(h for h in turn.battles if cr.both_sides_fight(pos, h))
    turn = msgspec.structs.replace(turn, battles=battles, fire=None, fire_result=None)
    if battles:
        return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="defensive-fire"))
    keep = [b for b in pos.battles if len({x.side for x in pos.blocks_in(b.hex)}) == 2]
    if len(keep) != len(pos.battles):
        state = msgspec.structs.replace(state, position=pos.with_battles(keep))
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=_after_combat(turn)))


def after_losses(state: State, turn: Turn) -> State:
    """After the Defensive Fire losses, Offensive Fire if both sides can still
    fire; after the Offensive Fire losses, the next Active Battle (RB 9.1)."""
    turn = msgspec.structs.replace(turn, fire=None, fire_result=None)
    if turn.step in ("defensive-dice", "offensive-losses") \
            and cr.both_sides_fight(battle.combat_position(state, turn), turn.battles[0]):
        return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="offensive-fire"))
    if turn.probing:
        return _after_probe(state, turn)
    return next_battle(state, msgspec.structs.replace(turn, battles=turn.battles[1:]))


def end_turn(state: State, turn: Turn) -> State:
    """End of the Player-Turn: Fortress capture (RB 13.4, combat.fortress_captures),
    then the other side's turn. A Fortress nobody controlled yet goes to its
    sole occupants the same way (T-03)."""
    pos = state.position
    forts = fo.fortress_hexes(game_map())
    captures = fo.fortress_captures(pos, forts)
    for h in forts:
        here = pos.blocks_in(h)
        sides = {b.side for b in here}
        if h not in pos.fortresses and len(sides) == 1 and any(not b.disrupted for b in here):
            captures[h] = next(iter(sides))
    ledger = fo.record_captures(state.captures, captures) if state.captures is not None else None
    state = sudden_death(msgspec.structs.replace(state, position=fo.apply_captures(pos, captures), captures=ledger))
    if state.phase == "over":
        return state
    # RB 3.1, 4.5: two Passes in succession end the Month (a Pass plays no card, T-14).
    passes = state.passes + 1 if turn.cards == 0 else 0
    if passes < 2:
        return begin_turn(msgspec.structs.replace(state, passes=passes), turn.passive)
    if state.month >= scenario_of(state).end_month:  # RB 17.0: the last Month is over
        return msgspec.structs.replace(state, phase="final", stage="reveal-all", side=turn.passive, passes=passes)
    return _begin_buildup(msgspec.structs.replace(state, passes=0))
