"""The Month outside the Player-Turns: initial hands (RB 18.0), the Initiative
(RB 3.3), the Buildup's orders (RB 16, dispatched to rules.ritd.buildup_orders)
and turning every block face up at the end (RB 17.0): check, apply, parsing
and order listing of those actions.
"""

from __future__ import annotations

import re
from typing import cast

import msgspec

from pbem.rulesapi import Order, Problem
from rules.ritd import buildup as bu
from rules.ritd import (
    buildup_orders,
    deployment,
    group_moves,
    hidden,
    minefield_rules,
    sequence,
    supplycards,
)
from rules.ritd import cards as cd
from rules.ritd.actions import (
    Answer,
    BuildMinefield,
    CallMalta,
    Challenge,
    EarlyArrival,
    EndBuildup,
    KeepHand,
    OpenChallenge,
    OrderError,
    Rebuild,
    Redraw,
    Reinforce,
    RevealAll,
)
from rules.ritd.cards import Hand
from rules.ritd.hidden import Obligation
from rules.ritd.position import SIDES, Side, enemy_of
from rules.ritd.state import State, all_scenarios, game_map, hand_of, scenario_of, supply_deck
from rules.ritd.victory import victory as judge_victory


def _challenge_label(state: State, side: Side) -> str:
    return f"month{state.month}.initiative.{side}"


def check_month(state: State, action: object, side: Side, ctx) -> list[Problem]:
    """Actions outside the Player-Turns: hands, Initiative, Buildup, the end."""
    stage = state.stage
    hand = hand_of(state, side)
    match action:
        case KeepHand() | Redraw() if stage != "redraw":
            return [Problem("RB 18.0", "the initial hand is kept or redrawn once, before the first Player-Turn")]
        case KeepHand():
            return []
        case Redraw(cards=labels):
            return supplycards.no_seeds(labels, "RB 18.0")
        case Challenge() | Answer() | OpenChallenge() if state.phase != "initiative":
            return [Problem("RB 3.3", "the Initiative is settled after the Buildup, before the first Player-Turn")]
        case Challenge(label=label, card=card):
            if stage != "challenge":
                return [Problem("RB 3.3", "the Allied challenge comes first")]
            if not label:
                return [] if not card else [Problem("RB 3.3", "no challenge plays no card")]
            return one_card_problems(state, side, label, ctx, opened=False) + supplycards.card_checks(
                state, side, (card,), 1, cd.parse_real(ctx.value(label), 1), "RB 3.3", ctx)
        case Answer(label=label, card=card):
            if stage != "answer":
                return [Problem("RB 3.3", "the Axis answers an Allied challenge")]
            if not label:
                return [] if not card else [Problem("RB 3.3", "declining plays no card")]
            return one_card_problems(state, side, label, ctx, opened=True) + supplycards.card_checks(
                state, side, (card,), 1, cd.parse_real(ctx.value(label), 1), "RB 3.3", ctx)
        case OpenChallenge():
            if stage != "open-challenge":
                return [Problem("RB 3.3", "no challenge card is waiting to be turned up")]
            if not ctx.opened(state.challenge):
                return [Problem("RB 3.3", f"open the challenge card '{state.challenge}' in this event")]
            return []
        case RevealAll():
            if state.phase != "final":
                return [Problem("RB 17.0", "blocks are turned face up at the end of the game")]
            missing = [lbl for lbl in _final_labels(state, side) if not ctx.opened(lbl)]
            return [Problem("RB 17.0", f"open every block's identity: {', '.join(missing)} not opened")] if missing else []
    if state.phase != "buildup" or stage != "buildup":
        return sequence.not_now(state, action)
    return buildup_orders.check_buildup(state, action, side, hand, ctx)


def one_card_problems(state: State, side: Side, label: str, ctx, *, opened: bool) -> list[Problem]:
    if label != _challenge_label(state, side) or not ctx.committed(label):
        return [Problem("RB 3.3", f"the card must be committed as '{_challenge_label(state, side)}'")]
    if opened and not ctx.opened(label):
        return [Problem("RB 3.3", "the Axis answer is opened in the same event (the Allied card is already fixed)")]
    return cd.play_problems(hand_of(state, side), 1, cd.parse_real(ctx.value(label), 1), "RB 3.3")


def _final_labels(state: State, side: Side) -> list[str]:
    blocks = list(state.position.blocks_of(side)) + list(state.refitting.get(side, ()))
    return [hidden.identity_label(b.token, state.versions.get(b.token, 0)) for b in blocks]


def apply_month(state: State, action: object, side: Side, ctx) -> State:
    m, pos = game_map(), state.position
    hand = hand_of(state, side)
    match action:
        case KeepHand():
            return sequence.after_redraw(state, side)
        case Redraw():
            # RB 18.0: the hand goes back (into the next reshuffle) and a new
            # one is dealt from the rest of the deck.
            deck = cd.take(state.deck, side, state.deck.held.get(side, ()), to_played=False)
            deck = cd.queue_deal(deck, side, supplycards.initial_cards(state, side))
            state = msgspec.structs.replace(state, hands={**state.hands, side: Hand()}, deck=deck)
            return sequence.after_redraw(state, side)
        case Challenge(label=label, card=card):
            if not label:
                return sequence.begin_month(state, "axis")
            real = cd.parse_real(ctx.value(label), 1)
            return msgspec.structs.replace(state, hands={**state.hands, side: cd.spend(hand, 1, real)},
                                           deck=cd.take(state.deck, side, (card,), to_played=True),
                                           challenge=label, stage="answer", side="axis")
        case Answer(label=label, card=card):
            if label:
                real = cd.parse_real(ctx.value(label), 1)
                deck = cd.take(state.deck, side, (card,), to_played=True)
                state = msgspec.structs.replace(state, hands={**state.hands, side: cd.spend(hand, 1, real)},
                                                answer=label,
                                                deck=cd.queue_show(deck, side, (card,), "initiative", label))
            return msgspec.structs.replace(state, stage="open-challenge", side="allied")
        case OpenChallenge():
            state = msgspec.structs.replace(state, deck=cd.queue_show(
                state.deck, side, state.deck.played.get(side, ()), "initiative", state.challenge))
            allied = ctx.value(state.challenge) == b"1"
            axis = (ctx.value(state.answer) == b"1") if state.answer else None
            return sequence.begin_month(state, cast(Side, cd.initiative(allied, axis)))
        case RevealAll():
            if not state.turned_up:  # the other side turns its blocks up next
                return msgspec.structs.replace(state, turned_up=(side,), side=enemy_of(side))
            off = {s: [b.unit for b in state.refitting.get(s, ())] for s in SIDES}
            result = judge_victory(m, pos, scenario_of(state), all_scenarios(), off_board=off)
            return msgspec.structs.replace(state, phase="over", stage="", result=result, turned_up=(*state.turned_up, side))
        case EarlyArrival(slots=slots):
            return msgspec.structs.replace(state, stage="early-dice", early_slots=tuple(slots),
                                           early_done=state.early_done + (side,))
        case Reinforce(tokens=tokens, early=early):
            early_of = dict(zip(tokens[len(tokens) - len(early):], early))

            def reinforcement(t: str, base: str) -> Obligation:
                if t in early_of:  # RB 16.41: the block is its slot's unit
                    return Obligation(token=t, seq=ctx.seq, kind="early", rule="RB 16.41",
                                      labels=(early_of[t], hidden.identity_label(t)), tokens=(t,),
                                      what=f"arrived early from slot {early_of[t]}")
                return Obligation(token=t, seq=ctx.seq, kind="arrival", hex=base, needed=state.month,
                                  rule="RB 16.4", what=f"arrived as a Reinforcement in Month {state.month}")

            state = buildup_orders.enter_base(state, side, tokens, ctx, reinforcement)
            return msgspec.structs.replace(state, reinforced=state.reinforced + (side,), early_arrived=())
        case bu.Redeploy() | bu.SeaRedeploy() | bu.ReturnForRefit() | bu.BuySupply():
            before = state.ledgers[side]
            spent = bu.apply_spend(buildup_orders.buildup_ctx(state), pos, before, action)
            refit = state.refitting
            if len(spent.ledger.refit) > len(before.refit):
                refit = {**refit, side: refit.get(side, ()) + spent.ledger.refit[len(before.refit):]}
            return msgspec.structs.replace(state, position=spent.pos, ledgers={**state.ledgers, side: spent.ledger},
                                           refitting=refit)
        case Rebuild(token=token, steps=steps, bp=bp):
            return buildup_orders.apply_rebuild(state, side, token, steps, bp, ctx)
        case BuildMinefield():
            return minefield_rules.apply_minefield(state, side, action, ctx)
        case CallMalta(tokens=tokens):
            state = buildup_orders.enter_base(state, side, tokens, ctx, lambda t, base: Obligation(
                token=t, seq=ctx.seq, kind="malta", hex=base, rule="RB 18.6",
                what=f"arrived with the Malta Group in Month {state.month}"))
            return msgspec.structs.replace(state, malta=state.month)
        case EndBuildup(discard=discard, cards=refs):
            n = buildup_orders.resupply_cards(state, side, discard)
            closing = bu.close_ledger(state.ledgers[side])
            # RB 16.6: the dummies handed back are shown at once and go back into the deck.
            deck = cd.queue_show(cd.take(state.deck, side, refs, to_played=False), side, refs, "discard")
            state = msgspec.structs.replace(state, saved={**state.saved, side: closing.saved}, deck=deck,
                                            hands={**state.hands, side: cd.discard_dummies(hand, discard)})
            if state.pregame:  # RB 18.7: the initial hands are dealt after both have spent
                if side == state.player1:
                    return msgspec.structs.replace(state, side=enemy_of(side), owed={**state.owed, side: n})
                deals = [(state.player1, state.owed.get(state.player1, 0)), (side, n)]
                return msgspec.structs.replace(
                    state, phase="cards", stage="redraw", side="axis", pregame=False, ledgers={}, networks={},
                    owed={}, deck=cd.begin_round(state.deck, side, cd.deck_labels(supply_deck()), deals))
            # T-18: Player 1's Resupply reshuffles the deck (RB 16.6: spent cards
            # and dummies handed back go in) and deals from it; Player 2 draws
            # from the same deck at the end of its own Buildup.
            if side == state.player1:
                deck = cd.begin_round(state.deck, side, (), [(side, n)])
                return msgspec.structs.replace(state, deck=deck, stage="buildup", side=enemy_of(side))
            return sequence.begin_initiative(msgspec.structs.replace(state, deck=cd.queue_deal(state.deck, side, n)))
    raise ValueError(f"unchecked action {action!r}")


#: RB 3.42: "basic", "offensive", "assault", "blitz", each "+ N dummies"; "bluff N"; "pass".
_END_BUILDUP = re.compile(r"^end buildup(?:\s+discard\s+(?P<n>\d+)(?:\s+dumm(?:y|ies))?)?$")


def parse_month_order(state: State, role: Side, words: str, ctx) -> Order:
    """Orders outside the Player-Turns: hands, Initiative, Buildup, the end."""
    low = " ".join(words.lower().split())
    if low in ("keep hand", "keep"):
        return Order(action=KeepHand())
    if low == "redraw":
        return Order(action=Redraw())
    if low in ("challenge", "challenge with real", "challenge with dummy", "answer", "answer with real",
               "answer with dummy"):
        label = _challenge_label(state, role)
        value = b"0" if low.endswith("dummy") else b"1"
        card = supplycards.pick_cards(state, role, int(value == b"1"), int(value == b"0"), ctx, "RB 3.3")[0]
        if low.startswith("challenge"):
            return Order(action=Challenge(label=label, card=card), secrets={label: value})
        return Order(action=Answer(label=label, card=card), secrets={label: value}, reveal=(label,))
    if low == "no challenge":
        return Order(action=Challenge())
    if low == "decline":
        return Order(action=Answer())
    if low == "open challenge":
        return Order(action=OpenChallenge(), reveal=(state.challenge,) if state.challenge else ())
    if low == "reveal all":
        return Order(action=RevealAll(), reveal=tuple(lbl for lbl in _final_labels(state, role)
                                                      if not ctx.opened(lbl)))
    if low == "reinforce":
        names = [u.name for u in buildup_orders.due_units(state, role)]
        names += [(ctx.value(lbl) or b"").decode("utf-8", "replace") for lbl in state.early_arrived]
        tokens, secrets = buildup_orders.new_blocks_order(role, names, ctx)
        return Order(action=Reinforce(tokens=tokens, early=state.early_arrived), secrets=secrets)
    if low in ("call malta group", "call malta", "malta group"):
        tokens, secrets = buildup_orders.new_blocks_order(role, [u.name for u in all_scenarios().malta_group(scenario_of(state))], ctx)
        return Order(action=CallMalta(tokens=tokens), secrets=secrets)
    if low.startswith("early arrival"):
        cands = [u.name for u in buildup_orders.early_candidates(state, role)]
        rest = words.strip()[len("early arrival"):].strip(" :")
        order = [all_scenarios().roster.get(n.strip()).name for n in rest.split(",")] if rest else cands
        labels = buildup_orders.early_labels(state, role, len(order))
        return Order(action=EarlyArrival(slots=labels),
                     secrets={lbl: name.encode() for lbl, name in zip(labels, order)})
    m = _END_BUILDUP.match(low)
    if m:
        discard = int(m.group("n") or 0)
        return Order(action=EndBuildup(discard=discard, cards=supplycards.pick_cards(state, role, 0, discard, ctx, "RB 16.6")))
    m = re.match(r"^buy supply(?:\s+(?P<n>\d+))?$", low)
    if m:
        return Order(action=bu.BuySupply(cards=int(m.group("n") or 1)))
    if low.startswith("minefield "):
        return minefield_rules.parse_minefield(state, role, words.strip()[len("minefield "):], ctx)
    verb, _, rest = words.strip().partition(" ")
    verb = verb.lower()
    if verb == "rebuild":
        m = re.match(r"^(?P<unit>.+?)(?:\s+(?P<n>\d+)(?:\s+steps?)?)?$", rest.strip())
        if not m:
            raise OrderError("RB 16.54: write 'rebuild <unit> [steps]'")
        token = deployment.own_token(state, role, m.group("unit"))
        b = state.position.block(token)
        u = all_scenarios().roster.get(b.unit)
        steps = int(m.group("n") or 1)
        label = hidden.identity_label(token, state.versions.get(token, 0) + 1)
        return Order(action=Rebuild(token=token, steps=steps, bp=bu.replacement_cost(u, steps)),
                     secrets={label: hidden.encode_identity(u.name, b.cv + steps * u.cv_per_step)})
    if verb in ("redeploy", "refit", "sea"):
        unit, *points = group_moves.ARROW.split(rest.strip())
        token = deployment.own_token(state, role, unit)
        start = state.position.block(token).hex
        places = [deployment.place_name(p) for p in points if p.strip()]
        if verb == "sea":
            if len(places) != 1:
                raise OrderError("RB 16.53: write 'sea <unit> -> <port>'")
            return Order(action=bu.SeaRedeploy(token=token, to=places[0]))
        if verb == "refit":
            base = game_map().base(role)
            if not places or places[-1] != base:
                places.append(base)
            return Order(action=bu.ReturnForRefit(token=token, path=buildup_orders.buildup_path(state, role, start, places)))
        if not places:
            raise OrderError("RB 16.51: write 'redeploy <unit> -> <hex> [-> <hex> ...]'")
        return Order(action=bu.Redeploy(token=token, path=buildup_orders.buildup_path(state, role, start, places)))
    raise OrderError(f"not an order now: '{words}' ({sequence.STAGE_PROMPTS.get(state.stage, state.stage)})")


def month_orders(state: State, role: Side, ctx) -> list[str]:
    hand = hand_of(state, role)
    stage = state.stage
    if stage == "redraw":
        return ["keep hand", "redraw"]
    if stage in ("challenge", "answer"):
        verb = "challenge" if stage == "challenge" else "answer"
        orders = ["no challenge" if stage == "challenge" else "decline"]
        if hand.count and (hand.real is None or hand.real):
            orders.append(verb)
        if hand.count and (hand.dummy is None or hand.dummy):
            orders.append(f"{verb} with dummy")
        return orders
    if stage == "open-challenge":
        return ["open challenge"]
    if stage == "reveal-all":
        return ["reveal all"]
    if stage != "buildup":
        return []
    if buildup_orders.early_candidates(state, role):
        return ["early arrival"]
    if buildup_orders.due_count(state, role):
        return ["reinforce"]
    ledger = state.ledgers[role]
    orders = ["end buildup"]
    s = scenario_of(state)
    if role == "axis" and not state.pregame and s.axis.malta_group is not None \
            and not bu.check_malta_group(s, state.month, state.malta or None):
        orders.append("call malta group")
    if hand.dummy:
        orders += [f"end buildup discard {n} dummies" for n in range(1, hand.dummy + 1)]
    if ledger.available >= bu.SUPPLY_CARD_BP:
        orders.append("buy supply 1")
    m, pos, bctx = game_map(), state.position, buildup_orders.buildup_ctx(state)
    orders += minefield_rules.minefield_orders(state, role, ledger)
    for b in pos.blocks_of(role):
        if not b.unit:
            continue
        u = all_scenarios().roster.get(b.unit)
        if b.hex == m.base(role) and b.cv < u.max_cv and bu.replacement_cost(u, 1) <= ledger.available:
            orders.append(f"rebuild {b.unit} 1")
        for n in m.passable_neighbours(b.hex):
            action = bu.Redeploy(token=b.token, path=(b.hex, n))
            if not bu.check_spend(bctx, pos, ledger, action):
                orders.append(f"redeploy {b.unit} -> {m.name(n)}")
    return orders
