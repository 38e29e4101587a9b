"""The Player-Turn's actions (RB 3.4): the Supply Checks (RB 12.7), the turn
option's Supply Cards (RB 3.42, 4.0), Moves and Forced Marches (RB 5, 6.4),
accepting battle (RB 8.4), revealing units (RB 7.3), the Blitz (RB 3.45, 4.4)
and Supply Revealed (RB 3.48): check and apply, dispatching Retreats, Routs,
Refusals, Minefields and Combat to their modules.
"""

from __future__ import annotations

import re

import msgspec

from pbem.rulesapi import Problem
from rules.ritd import (
    battle,
    group_moves,
    hidden,
    minefield_rules,
    player_orders,
    refusal,
    retreats,
    rout_orders,
    routs,
    sequence,
    supplycards,
)
from rules.ritd import cards as cd
from rules.ritd import combat as cb
from rules.ritd import movement as mv
from rules.ritd import supply as sp
from rules.ritd.actions import (
    AcceptBattle,
    Blitz,
    EndMovement,
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
from rules.ritd.cards import OPTION_COST
from rules.ritd.position import Block, Side
from rules.ritd.state import State, game_map, hand_of, roster_of, scenario_of
from rules.ritd.turn import PendingRout, Turn, option_label


def recoverable(state: State, side: Side) -> tuple[str, ...]:
    """RB 11.2: Disrupted units that have spent a complete enemy Player-Turn Disrupted."""
    now = len(state.turns)
    out = []
    for b in state.position.blocks_of(side):
        since = state.disrupted_in.get(b.token)
        if b.disrupted and since is not None and any(
                state.turns[t - 1] != side for t in range(since + 1, now)):
            out.append(b.token)
    return tuple(out)


_TOKENS = re.compile(r"\b[AL][0-9a-f]{8}\b")


def with_unit_names(state: State, text: str) -> str:
    """``text`` with the tokens of blocks this replay can identify shown as
    "Unit (token)"; other tokens stay as they are (nothing hidden leaks)."""
    pos = state.position

    def name(match: re.Match[str]) -> str:
        token = match.group()
        unit = pos.block(token).unit if pos.has_block(token) else ""
        return f"{unit} ({token})" if unit else token

    return _TOKENS.sub(name, text)


def check_turn(state: State, turn: Turn, action: object, side: Side, ctx) -> list[Problem]:
    return [Problem(p.rule, with_unit_names(state, p.message)) for p in _check_turn_raw(state, turn, action, side, ctx)]


def _check_turn_raw(state: State, turn: Turn, action: object, side: Side, ctx) -> list[Problem]:
    m, pos = game_map(), state.position
    step = turn.step
    if step.startswith("rout-"):
        return rout_orders.check_rout(state, turn, action, side, ctx)
    if step in ("mines-passive", "mines-active") or isinstance(action, OpenMinefields):
        return minefield_rules.open_minefields_problems(state, turn, action, side)
    if step in sequence.RETREAT_STEPS or isinstance(action, (Probe, RetreatSpeed)):
        return retreats.check_retreat(state, turn, action, side, ctx)
    if step == "march-losses" or isinstance(action, MarchLosses):
        return retreats.check_march_losses(state, turn, action, side, ctx)
    match action:
        case SupplyCheck(fortress=fortress, oasis=oasis):
            if step not in ("initial-supply", "final-supply"):
                return [Problem("RB 12.7", "Supply Checks come at the start and the end of the Player-Turn")]
            choices = sp.SupplyChoices(fortress=dict(fortress), oasis=dict(oasis))
            check = sp.initial_supply_check if step == "initial-supply" else sp.final_supply_check
            kwargs = {"recoverable": recoverable(state, side)} if step == "initial-supply" else {}
            _, report = check(m, pos, side, choices, **kwargs)
            problems = list(report.problems)
            problems += [Problem(n.rule, f"{n.message}: one of {', '.join(n.candidates)}") for n in report.needed]
            return problems
        case PlayCards(count=count, label=label) if count == 0 and action.cards:
            return [Problem("RB 4.5", "a Pass plays no cards")]
        case PlayCards(count=count, label=label):
            if step != "option":
                return [Problem("RB 3.42", "supply cards for the turn option are played after the Initial "
                                           "Supply Check, before movement")]
            if count == 0:
                return [] if not label else [Problem("RB 4.5", "a Pass plays no cards and commits nothing")]
            if count < 0:
                return [Problem("RB 3.42", "a number of cards, 0 or more")]
            if label != option_label(turn.number) or not ctx.committed(label):
                return [Problem("RB 3.42", f"how many of the cards are real must be committed as "
                                           f"'{option_label(turn.number)}'")]
            real = cd.parse_real(ctx.value(label), count)
            return cd.play_problems(hand_of(state, side), count, real, "RB 3.42") or supplycards.card_checks(
                state, side, action.cards, count, real, "RB 3.42", ctx)
        case mv.Move():
            if step == "refuse-withdraw":
                if action.withdrawal != "refuse" or action.origin != turn.refusing:
                    return [Problem("RB 10.2", f"now the Group Refusing Battle in {m.name(turn.refusing)} "
                                               "makes its Withdrawal Group Move")]
                problems = mv.refusal_problems(m, pos, turn.movement, action.origin)
            elif step == "movement":
                problems = []
            else:
                return [Problem("RB 3.44", "Moves are made in the Movement phase")]
            tokens = [u.token for u in action.units]
            result = mv.check_move(m, pos, turn.movement, action, group_moves.speeds_of(state, pos, tokens),
                                   network=refusal.refusal_network(pos, action))
            return problems + list(result.problems)
        case ForcedMarches(marches=marches):
            if step != "movement":
                return [Problem("RB 6.4", "Forced Marches are announced at the end of the Movement phase")]
            if turn.movement.marches_announced:
                return [Problem("RB 6.4", "Forced Marches are announced once, after all Moves")]
            result = mv.check_forced_marches(m, pos, turn.movement, marches,
                                             group_moves.speeds_of(state, pos, [f.token for f in marches]))
            return list(result.problems)
        case EndMovement():
            return [] if step == "movement" else [Problem("RB 3.44", "the Movement phase is not under way")]
        case RefuseBattle() | routs.PursuitFire() | PursuitLosses() | Rout():
            return refusal.check_refusal(state, turn, action, side, ctx)
        case AcceptBattle(hex=hex_):
            if step != "refuse" or hex_ not in turn.refusals:
                return [Problem("RB 8.4", f"there is no Attacked Group awaiting a decision in "
                                          f"{m.name(hex_) if hex_ in m.hexes else hex_}")]
            return []
        case RevealUnits():
            if step not in ("reveal-passive", "reveal-active"):
                return [Problem("RB 7.3", "units in battles are revealed when all Movement is complete")]
            missing = [b.token for b in to_reveal(state, side)
                       if not ctx.opened(hidden.identity_label(b.token, state.versions.get(b.token, 0)))]
            if missing:
                return [Problem("RB 7.3", f"open the identity of every unit of yours in a battle: "
                                          f"{', '.join(missing)} not opened")]
            return []
        case cb.BattleSelection() | cb.FirePlan() | cb.LossAllocation():
            return battle.check_combat(state, turn, action, side)
        case Blitz(go=go):
            if step != "blitz":
                return [Problem("RB 3.45", "the Blitz phases follow the first Combat phase of a turn with three "
                                           "or more cards")]
            if not go:
                return []
            probs = []
            made = turn.movement.moves_made if turn.movement else 0
            if made > 1:
                probs.append(Problem("RB 4.4", f"a Blitz Turn is two Basic Turns: {made} Moves were made in the "
                                               "first Movement phase, which allows one"))
            if turn.assault:
                probs.append(Problem("RB 4.4", "a Blitz Turn is two Basic Turns: no Assault Battles"))
            if 0 <= turn.real < OPTION_COST["blitz"]:
                probs.append(Problem("RB 4.4", f"a Blitz Turn needs 3 real cards; {turn.real} of the "
                                               f"{turn.cards} played are real"))
            return probs
        case RevealOption():
            if step != "supply-revealed":
                return [Problem("RB 3.48", "the supply cards are revealed at the end of the Player-Turn")]
            if turn.cards == 0:
                return [Problem("RB 3.48", "a Pass played no cards")]
            if not ctx.opened(turn.option_label):
                return [Problem("RB 3.48", f"open the cards played '{turn.option_label}' in this event")]
            return _option_problems(state, turn, ctx.value(turn.option_label))
    return sequence.not_now(state, action)


def _option_problems(state: State, turn: Turn, value: bytes | None) -> list[Problem]:
    """RB 3.48, 4.0-4.3: the cards turned up must pay for what the player did
    (the "Two Supply Cards Committed" sidebar: two Moves make an Offensive
    Turn, otherwise two cards are an Assault Turn)."""
    real = cd.parse_real(value, turn.cards)
    if real is None or real < 0:
        return [Problem("RB 3.48", f"the cards committed must say how many of the {turn.cards} are real")]
    made = turn.movement.moves_made if turn.movement else 0
    problems = []
    if made >= 2 and turn.assault:
        problems.append(Problem("RB 4.3", f"{made} Moves were made and Assault Battles fought in "
                                          f"{', '.join(map(game_map().name, turn.assault))}: an Assault Turn allows "
                                          "one Move, an Offensive Turn no Assault"))
    needed, rule, what = cd.turn_cost(made, turn.fought, bool(turn.assault), turn.blitz)
    if real < needed:
        problems.append(Problem(rule, f"{what} needs {needed} real card{'s' if needed > 1 else ''}, but only "
                                      f"{real} of the {turn.cards} cards played {'is' if real == 1 else 'are'} real: "
                                      "an illegal Player-Turn"))
    return problems


def to_reveal(state: State, side: Side) -> list[Block]:
    show = set(mv.units_to_reveal(state.position))
    return [b for b in state.position.blocks_of(side) if b.token in show]


def apply_turn(state: State, turn: Turn, action: object, side: Side, ctx) -> State:
    m, pos = game_map(), state.position
    if turn.step.startswith("rout-"):
        return rout_orders.apply_rout(state, turn, action, side, ctx)
    if turn.step in sequence.RETREAT_STEPS:
        return retreats.apply_retreat(state, turn, action, side, ctx)
    if turn.step == "march-losses":
        return retreats.apply_march_losses(state, turn, action, ctx)
    match action:
        case SupplyCheck(fortress=fortress, oasis=oasis):
            choices = sp.SupplyChoices(fortress=dict(fortress), oasis=dict(oasis))
            if turn.step == "initial-supply":
                recovered = recoverable(state, side)
                pos, _ = sp.initial_supply_check(m, pos, side, choices, recoverable=recovered)
                state = group_moves.note_disruptions(state, pos, turn.number)
                return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="option"))
            pos, report = sp.final_supply_check(m, pos, side, choices)
            # RB 12.7, 11 sidebar (CB-11, T-13): engaged units newly Disrupted
            # for lack of a Supply Line and unshielded are eliminated; the
            # Disrupted units they shielded Rout (T-12).
            final = routs.final_supply_routs(pos, report.rout)
            state = group_moves.note_disruptions(state, final.position, turn.number)
            turn = msgspec.structs.replace(turn, supply_eliminated=turn.supply_eliminated + final.eliminated)
            where = {pos.block(t).hex for t in final.eliminated}
            pending_routs = [PendingRout(hex=h, side=owner, tokens=tokens) for h, owner, tokens in final.rout
                             if owner == side and h in where]
            return sequence.start_routs(state, turn, pending_routs, "supply-revealed")
        case PlayCards(count=count, label=label):
            real = 0 if count == 0 else cd.parse_real(ctx.value(label), count)
            # RB 4.0-4.2: one Move, two with two real cards; a replay that cannot
            # see the cards allows what the count could pay for (checked at 3.48).
            allowed = 1 if count == 0 else min(count if real is None else real, 2)
            movement = mv.start_movement(pos, side, moves_allowed=allowed, withdrawal_only=count == 0,
                                         rommel_bonus=scenario_of(state).special.rommel_bonus)
            hands = {**state.hands, side: cd.spend(hand_of(state, side), count, real)}
            deck = cd.take(state.deck, side, action.cards, to_played=True)
            # A new Movement begins: the previous Player-Turn's arrows go.
            return msgspec.structs.replace(state, hands=hands, deck=deck, last_moves=(), turn=msgspec.structs.replace(
                turn, step="movement", cards=count, option_label=label, real=-1 if real is None else real,
                option="pass" if count == 0 else "", movement=movement))
        case mv.Move():
            tokens = [u.token for u in action.units]
            result = mv.check_move(m, pos, turn.movement, action, group_moves.speeds_of(state, pos, tokens))
            what = f"moved in event {ctx.seq} ({player_orders.format_action(action)})"
            out = mv.apply_move(m, pos, turn.movement, action, defer_retreats=True)
            state = msgspec.structs.replace(state, position=out.position,
                                            obligations=state.obligations + group_moves.speed_obligations(result, ctx.seq, what))
            # Retreating units' routes are drawn when they are taken (T-35).
            state = group_moves.note_routes(state, pos, [(u.token, u.path) for u in action.units
                                              if out.turn.pending_retreat(u.token) is None], turn.number,
                                 withdrawal=action.withdrawal)
            state = group_moves.note_disruptions(state, out.position, turn.number)
            turn = msgspec.structs.replace(turn, movement=out.turn)
            if turn.step == "refuse-withdraw":
                return sequence.after_refusal(state, turn, action.origin)
            # RB 11.4 (T-13): an Overrun interrupts movement for the Rout.
            return sequence.start_routs(state, turn, rout_orders.overrun_routs(state, turn, out.overruns), "movement")
        case ForcedMarches(marches=marches):
            result = mv.check_forced_marches(m, pos, turn.movement, marches,
                                             group_moves.speeds_of(state, pos, [f.token for f in marches]))
            movement = mv.announce_forced_marches(m, pos, turn.movement, marches)
            obligations = group_moves.speed_obligations(result, ctx.seq, f"forced march announced in event {ctx.seq}")
            return msgspec.structs.replace(state, obligations=state.obligations + obligations,
                                           turn=msgspec.structs.replace(turn, movement=movement))
        case EndMovement():
            return sequence.next_retreat(state, turn)
        case AcceptBattle(hex=hex_):
            return sequence.decided(state, turn, hex_)
        case RefuseBattle(hex=hex_, slowest=slowest):
            refusers, _ = routs.refusal_split(pos, hex_, side)
            result = routs.check_slowest_speed(refusers, routs.SlowestSpeed(hex_, slowest),
                                               group_moves.speeds_of(state, pos, refusers))
            what = f"Refused Battle in event {ctx.seq} announcing slowest speed {slowest}"
            obligations = refusal.slowest_obligations(state, result, hex_, refusers, ctx.seq, what)
            turn = msgspec.structs.replace(turn, step="refuse-pursuit", refusing=hex_, refusers=refusers,
                                           slowest=slowest, pursuit=None, hits=0)
            return msgspec.structs.replace(state, turn=turn, obligations=state.obligations + tuple(obligations))
        case routs.PursuitFire(pursuers=pursuers):
            state = refusal.with_pursuit_obligations(state, action, turn.slowest, ctx.seq)
            if not pursuers:  # fire withheld (RB 10.2 sidebar)
                return sequence.after_pursuit(state, msgspec.structs.replace(turn, pursuit=action, hits=0))
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="refuse-dice",
                                                                               pursuit=action))
        case PursuitLosses(hex=hex_, recommit=recommit):
            state = refusal.apply_pursuit_losses(state, turn.refusers, turn.hits, action, ctx)
            if not recommit:
                return sequence.after_refusal(state, turn, hex_)
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="refuse-withdraw"))
        case OpenMinefields():
            return sequence.after_mines(minefield_rules.with_mines(state, side, due=(), fresh=()), turn)
        case RevealUnits():
            show = {b.token for b in to_reveal(state, side)}
            pos = pos.replace_blocks([msgspec.structs.replace(b, revealed=True) for b in pos.blocks
                                      if b.token in show])
            state = msgspec.structs.replace(state, position=pos)
            if turn.step == "reveal-passive" and to_reveal(state, turn.active):
                return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="reveal-active"))
            return sequence.to_combat(state, turn)
        case cb.BattleSelection(active=active, assault=assault):
            return sequence.next_battle(state, msgspec.structs.replace(turn, battles=tuple(active), assault=tuple(assault),
                                                               fought=turn.fought or bool(active)))
        case cb.FirePlan():
            step = "defensive-dice" if turn.step == "defensive-fire" else "offensive-dice"
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step, fire=action))
        case cb.LossAllocation():
            fighting = battle.combat_position(state, turn)
            out = cb.apply_allocation(fighting, turn.fire_result, action, units=roster_of(state).get)
            # T-34: the new CVs are public; they stand for the committed ones from now on.
            hit = {hidden.identity_label(b.token, state.versions.get(b.token, 0)): b.cv
                   for b in out.position.blocks if pos.has_block(b.token) and pos.block(b.token).cv != b.cv}
            after = retreats.with_retreaters(pos, out.position, turn.retreaters) if turn.probing else out.position
            state = msgspec.structs.replace(state, position=after, public_cv={**state.public_cv, **hit})
            # T-11, T-12: unshielded Disrupted units Rout at once (RB 11.3); only
            # enemy units that have not fired in this Combat Round Pursue.
            by_hex: dict[tuple[str, Side], list[str]] = {}
            for t in out.unshielded:
                b = out.position.block(t)
                by_hex.setdefault((b.hex, b.side), []).append(t)
            # In a Probe the Disengaging units still shield their side until
            # they leave; what is left behind Routs after them (RB 10.3 step 4).
            # Nor do the Disengaging units Pursue (T-37).
            fired = turn.fire_result.fired + (turn.retreaters if turn.probing else ())
            pending_routs = [PendingRout(hex=h, side=owner, tokens=tuple(ts), fired=fired)
                             for (h, owner), ts in by_hex.items() if not (turn.probing and owner == turn.active)]
            return sequence.start_routs(state, turn, pending_routs, turn.step)
        case Blitz(go=go):
            if not go:
                return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="final-supply"))
            movement = mv.start_blitz_movement(pos, turn.movement)
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(
                turn, step="movement", blitz=True, movement=movement, battles=(), assault=()))
        case RevealOption():
            real = cd.parse_real(ctx.value(turn.option_label), turn.cards) or 0
            made = turn.movement.moves_made if turn.movement else 0
            # RB 3.48: the cards played are shown (their keys opened in this event).
            state = msgspec.structs.replace(state, deck=cd.queue_show(
                state.deck, side, state.deck.played.get(side, ()), "play", turn.option_label))
            return sequence.end_turn(state, msgspec.structs.replace(turn, real=real, option=cd.option_name(
                real, made, bool(turn.assault), turn.blitz)))
    raise ValueError(f"unchecked action {action!r}")


_HEX = re.compile(r"\b\d{4}\b")


def with_hex_names(text: str) -> str:
    """``text`` with hex numbers shown by their names."""
    m = game_map()
    return _HEX.sub(lambda x: m.name(x.group()) if x.group() in m.hexes else x.group(), text)
