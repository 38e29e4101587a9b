"""The Sequence of Play (RB 3.0): the only place that moves the game on.

Every write of ``step``, ``stage`` and ``phase`` is here: the end of
deployment (RB 18.0, 18.7), the initial hands (RB 18.0), the Initiative
(RB 3.3), the Month (RB 3.1), the Buildup (RB 16.1-16.6), the Player-Turn's
steps (RB 3.4: supply, option, Movement, Refusing Battle, reveals, Combat,
Blitz, Final Supply, Supply Revealed), Retreats and Probes (RB 10.3-10.41),
Routs (RB 11.3), the end of the turn and of the game (RB 17.0, 17.1).

A rule's ``apply`` applies its effect and hands back what happened (a
``steps.TurnNext`` or ``MonthNext`` naming the moment); the dispatchers
(turn_orders, month_phase, openings for the dice, game) pass it to
``advance`` or ``advance_month`` here, which decide the step that follows.
Rule modules never import this one. Who decides next (``pending``) and the
step tables are rules.ritd.steps.
"""

from __future__ import annotations

from typing import assert_never, cast

import msgspec

from rules.ritd import buildup as bu
from rules.ritd import cards as cd
from rules.ritd import combat_round as cr
from rules.ritd import deployment, group_moves, hidden, minefield_rules, retreats, routs, supply_checks, supplycards
from rules.ritd import fortresses as fo
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd import reinforcements as rf
from rules.ritd import supply as sp
from rules.ritd.cards import OPTION_COST
from rules.ritd.combat_state import battle_hexes, combat_position, to_reveal
from rules.ritd.position import SIDES, Side, enemy_of
from rules.ritd.state import State, all_scenarios, game_map, mines_of, scenario_of, supply_deck
from rules.ritd.steps import MonthNext, TurnNext
from rules.ritd.turn import PendingRout, Turn, movement_of
from rules.ritd.victory import strategic_victory


def after_mines(state: State, turn: Turn) -> State:
    """The Minefield openings owed (T-30), passive player first, then the reveals (RB 7.3)."""
    for side, step in ((turn.passive, "mines-passive"), (turn.active, "mines-active")):
        if mines_of(state, side).due:
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step))
    return _reveals(state, turn)


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
    if to_reveal(state, turn.passive):
        step = "reveal-passive"
    elif to_reveal(state, turn.active):
        step = "reveal-active"
    else:
        return to_combat(state, turn)
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step))


def to_combat(state: State, turn: Turn) -> State:
    """T9: the active player chooses the Active Battles, unless this is a Pass
    Turn or no battle can be fought; else on to the Final Supply Check."""
    step = "battles" if turn.cards and battle_hexes(state.position) else _after_combat(turn)
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
            and cr.both_sides_fight(combat_position(state, turn), turn.battles[0]):
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


# -- the moments the rules hand over (rules.ritd.steps.TurnMoment, MonthMoment) --------------

def _to_step(state: State, turn: Turn, step: str) -> State:
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step))


def advance(nxt: TurnNext) -> State:
    """RB 3.4: the step that follows what a Player-Turn rule just did
    (turn_orders.apply_turn hands every rule's ``TurnNext`` here)."""
    state, turn = nxt.state, nxt.turn
    match nxt.moment:
        case "supply_checked":
            return supply_checked(state, turn, nxt.routs)
        case "cards_played" | "blitz_taken":  # RB 3.44, 4.4: a Movement phase
            return _to_step(state, turn, "movement")
        case "blitz_declined":  # RB 3.46
            return _to_step(state, turn, "final-supply")
        case "option_revealed":
            return end_turn(state, turn)
        case "moved":
            return moved(state, turn, nxt.routs, nxt.hex)
        case "movement_ended":
            return next_retreat(state, turn)
        case "mines_opened":
            return after_mines(state, turn)
        case "units_revealed":
            return units_revealed(state, turn)
        case "battles_chosen":
            return next_battle(state, turn)
        case "fire_ordered":
            return fire_ordered(state, turn)
        case "losses_placed":  # T-11, T-12: the Routs first, then the Combat Round goes on
            return start_routs(state, turn, nxt.routs, turn.step)
        case "battle_accepted":
            return decided(state, turn, nxt.hex)
        case "refusal_announced":  # RB 10.2, 10.5
            return _to_step(state, turn, "refuse-pursuit")
        case "refusal_pursued":
            return refusal_pursued(state, turn)
        case "refusal_losses_placed":
            return refusal_losses_placed(state, turn, nxt.hex, nxt.survivors)
        case "probe_declined" | "retreat_losses_placed":  # RB 10.41, 10.3 step 3
            return complete_retreat(state, turn)
        case "probe_provoked":
            return probe_provoked(state, turn)
        case "rearguard_revealed":
            return start_probe(state, turn)
        case "retreat_announced":  # RB 10.3, 10.5
            return _to_step(state, turn, "retreat-pursuit")
        case "retreat_pursued":
            return retreat_pursued(state, turn)
        case "march_losses_placed":  # T-39: then the Overrun Routs of the same dice (T-13)
            return start_routs(state, turn, nxt.routs, "forced-march")
        case "rout_announced":
            return rout_announced(state, turn)
        case "rout_pursued":
            return rout_pursued(state, turn)
        case "rout_losses_placed":
            return rout_withdraw_or_eliminate(state, turn)
        case "rout_withdrawn":
            return rout_done(state, turn)
    assert_never(nxt.moment)


def supply_checked(state: State, turn: Turn, pending_routs) -> State:
    """RB 3.41-3.42: after the Initial Supply Check, the option; after the
    Final one (RB 12.7, T-13), its Routs, then Supply Revealed (RB 3.48)."""
    if turn.step == "initial-supply":
        return _to_step(state, turn, "option")
    return start_routs(state, turn, pending_routs, "supply-revealed")


def moved(state: State, turn: Turn, pending_routs, origin: str) -> State:
    """A Move made: the Withdrawal Group Move of a Group Refusing Battle ends
    its Refusal (RB 10.2); in the Movement phase an Overrun interrupts
    movement for the Rout (RB 11.4, T-13), then the active player moves on."""
    if turn.step == "refuse-withdraw":
        return after_refusal(state, turn, origin)
    return start_routs(state, turn, pending_routs, "movement")


def units_revealed(state: State, turn: Turn) -> State:
    """RB 7.3: the passive player's reveal, then the active player's if he
    has units in battles; then the Combat phase."""
    if turn.step == "reveal-passive" and to_reveal(state, turn.active):
        return _to_step(state, turn, "reveal-active")
    return to_combat(state, turn)


def fire_ordered(state: State, turn: Turn) -> State:
    """RB 9.4: the fire ordered (``turn.fire``), its dice rolled next."""
    return _to_step(state, turn, "defensive-dice" if turn.step == "defensive-fire" else "offensive-dice")


def fire_rolled(state: State, turn: Turn, complete: bool) -> State:
    """RB 9.2-9.5: after a fire order's dice, while the side's fire is not
    ``complete`` (units still to fire and a target left) the same player
    orders again (step-by-step fire); then the owner places the hits, or with
    none the Combat Round goes on (RB 9.1)."""
    if not complete:
        return _to_step(state, turn, "defensive-fire" if turn.step == "defensive-dice" else "offensive-fire")
    if turn.fire_result is not None and turn.fire_result.hits:
        return _to_step(state, turn, "offensive-losses" if turn.step == "defensive-dice" else "defensive-losses")
    return after_losses(state, turn)


def refusal_pursued(state: State, turn: Turn) -> State:
    """RB 10.5: the Pursuit Fire dice, or with the fire withheld (RB 10.2
    sidebar) no hits: on to the Withdrawal Group Move."""
    if turn.pursuit is None or not turn.pursuit.pursuers:
        return after_pursuit(state, msgspec.structs.replace(turn, hits=0))
    return _to_step(state, turn, "refuse-dice")


def refusal_losses_placed(state: State, turn: Turn, hex_: str, survivors: bool) -> State:
    """RB 10.2, 10.5: the survivors of the Pursuit make the Withdrawal Group
    Move; with none the Refusal is over (its Disrupted units left Rout)."""
    if not survivors:
        return after_refusal(state, turn, hex_)
    return _to_step(state, turn, "refuse-withdraw")


def probe_provoked(state: State, turn: Turn) -> State:
    """RB 10.41, 8.5: the Rearguard is revealed for the Probe Combat, unless
    it is face up already."""
    if retreats.rearguard_to_reveal(state, turn):
        return _to_step(state, turn, "probe-reveal")
    return start_probe(state, turn)


def retreat_pursued(state: State, turn: Turn) -> State:
    """RB 10.5: the Pursuit Fire dice, or with the fire withheld (RB 10.3
    sidebar "Pursuit Deception") the Retreat completes."""
    if turn.pursuit is None or not turn.pursuit.pursuers:
        return complete_retreat(state, turn)
    return _to_step(state, turn, "retreat-dice")


def marches_rolled(state: State, turn: Turn, pending_routs) -> State:
    """RB 6.4: after the Forced March dice, the steps lost by failed Retreat
    Forced Marches first (T-39: ``turn.march_losses``), else the Overrun
    Routs (RB 11.4, T-13), then movement ends as before (T-35)."""
    if turn.march_losses:
        return _to_step(state, turn, "march-losses")
    return start_routs(state, turn, pending_routs, "forced-march")


def rout_announced(state: State, turn: Turn) -> State:
    """RB 11.3: after Rout Attrition, no survivor ends the Rout; survivors
    nobody may Pursue withdraw at once; else the Pursuit Fire (RB 10.5)."""
    r = turn.rout_queue[0]
    if not turn.routers:
        return rout_done(state, turn)
    if not routs.pursuit_eligible(state.position, r.hex, enemy_of(r.side), r.fired):
        return rout_after_pursuit(state, turn, 0)
    return _to_step(state, turn, "rout-pursuit")


def rout_pursued(state: State, turn: Turn) -> State:
    """RB 10.5: the Pursuit Fire dice, or with the fire withheld no hits."""
    if turn.rout_pursuit is None or not turn.rout_pursuit.pursuers:
        return rout_after_pursuit(state, turn, 0)
    return _to_step(state, turn, "rout-dice")


def advance_month(nxt: MonthNext) -> State:
    """The stage that follows what a rule outside the Player-Turns just did
    (month_phase.apply_month hands every rule's ``MonthNext`` here)."""
    state, side = nxt.state, nxt.side
    match nxt.moment:
        case "hand_kept":
            return after_redraw(state, side)
        case "no_challenge":  # RB 3.3: the Axis keeps the Initiative
            return begin_month(state, "axis")
        case "challenged":
            return msgspec.structs.replace(state, stage="answer", side="axis")
        case "answered":
            return msgspec.structs.replace(state, stage="open-challenge", side="allied")
        case "challenge_opened":
            return begin_month(state, side)
        case "early_arrival_announced":  # RB 16.41: the opponent rolls for the slots
            return msgspec.structs.replace(state, stage="early-dice")
        case "buildup_ended":
            return buildup_ended(state, side)
        case "game_judged":  # RB 17.0
            return msgspec.structs.replace(state, phase="over", stage="")
    assert_never(nxt.moment)


def buildup_dice_rolled(state: State, side: Side) -> State:
    """RB 16.3, 16.41: after the BP or the Early Arrival dice the Buildup goes
    on, ``side`` to spend."""
    return msgspec.structs.replace(state, stage="buildup", side=side)


def buildup_ended(state: State, side: Side) -> State:
    """RB 16.1, 18.7: Player 1's Buildup, then Player 2's; after both the
    Initiative (RB 3.3), or after the pre-game Buildup the initial hands,
    which each player may keep or redraw (RB 18.0)."""
    if state.pregame:
        if side == state.player1:
            return msgspec.structs.replace(state, side=enemy_of(side))
        return msgspec.structs.replace(state, phase="cards", stage="redraw", side="axis", pregame=False, ledgers={},
                                       networks={}, owed={})
    if side == state.player1:
        return msgspec.structs.replace(state, stage="buildup", side=enemy_of(side))
    return begin_initiative(state)


def deployment_ended(state: State, side: Side) -> State:
    """RB 18.0: the Axis deploys first, then the Allies; then the pre-game
    Buildup (RB 18.7, BU-20: 30 BP each, no dice, before the first cards), or
    the first shuffle of the shared deck deals both initial hands (its first
    step rides on this event) and each may redraw once, Axis first."""
    if side == "axis":
        return msgspec.structs.replace(state, side="allied")
    pre = scenario_of(state).special.pregame_buildup
    if pre is not None:
        state = msgspec.structs.replace(state, position=deployment.initial_fortress_control(state))
        networks = {s: tuple(sorted(n)) for s, n in bu.buildup_networks(game_map(), state.position).items()}
        return msgspec.structs.replace(state, phase="buildup", stage="buildup", side=pre.first,
                                       player1=pre.first, pregame=True, networks=networks,
                                       ledgers={s: bu.open_ledger(s, bu.pregame_bp(scenario_of(state))) for s in SIDES})
    dealt = msgspec.structs.replace(state, phase="cards", stage="redraw", side="axis",
                                    position=deployment.initial_fortress_control(state))
    deals: list[tuple[str, int]] = [(s, supplycards.initial_cards(dealt, s)) for s in SIDES]
    return msgspec.structs.replace(dealt, deck=cd.begin_round(dealt.deck, side, cd.deck_labels(supply_deck()), deals))
