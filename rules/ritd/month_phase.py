"""The Month outside the Player-Turns: initial hands (RB 18.0), the Initiative
(RB 3.3), the Buildup's orders (RB 16, dispatched to rules.ritd.buildup_orders)
and turning every block face up at the end (RB 17.0): check, apply, parsing
and order listing of those actions.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import NamedTuple

import msgspec

from pbem.rulesapi import Order, Problem
from rules.ritd import buildup as bu
from rules.ritd import (
    buildup_orders,
    deployment,
    group_moves,
    hidden,
    initiative,
    minefield_rules,
    sequence,
    supplycards,
)
from rules.ritd import cards as cd
from rules.ritd import reinforcements as rf
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
from rules.ritd.position import SIDES, Block, Side, enemy_of
from rules.ritd.state import State, all_scenarios, game_map, hand_of, identity_of, scenario_of
from rules.ritd.steps import STAGE_PROMPTS, MonthNext, not_now
from rules.ritd.victory import victory as judge_victory


class MonthRule(NamedTuple):
    """One rule's check and apply of an action outside the Player-Turns
    (arguments: state, action, the acting side, ctx)."""

    check: Callable[..., list[Problem]]
    apply: Callable[..., State | MonthNext]


def check_month(state: State, action: object, side: Side, ctx) -> list[Problem]:
    """Actions outside the Player-Turns: hands, Initiative, the end (by the
    table below), else the Buildup's orders in the Buildup."""
    rule = _month_rules().get(type(action))
    if rule is not None and rule.check is not _buildup_check:
        return rule.check(state, action, side, ctx)
    return _buildup_check(state, action, side, ctx)


def apply_month(state: State, action: object, side: Side, ctx) -> State:
    """A checked action outside the Player-Turns, applied by its rule; the
    stage that follows is the sequence's to decide (rules.ritd.sequence)."""
    rule = _month_rules().get(type(action))
    if rule is None:
        raise ValueError(f"unchecked action {action!r}")
    out = rule.apply(state, action, side, ctx)
    return sequence.advance_month(out) if isinstance(out, MonthNext) else out


def _buildup_check(state: State, action: object, side: Side, ctx) -> list[Problem]:
    if state.phase != "buildup" or state.stage != "buildup":
        return not_now(state, action)
    return buildup_orders.check_buildup(state, action, side, hand_of(state, side), ctx)


@functools.cache
def _month_rules() -> dict[type, MonthRule]:
    """The dispatch table (built at first use: the rule modules import each other)."""
    buildup = MonthRule(_buildup_check, buildup_orders.apply_buildup_action)
    return {
        KeepHand: MonthRule(check_keep_hand, apply_keep_hand),  # RB 18.0
        Redraw: MonthRule(check_redraw, apply_redraw),  # RB 18.0
        Challenge: MonthRule(initiative.check_challenge, initiative.apply_challenge),  # RB 3.3
        Answer: MonthRule(initiative.check_answer, initiative.apply_answer),  # RB 3.3
        OpenChallenge: MonthRule(initiative.check_open_challenge, initiative.apply_open_challenge),  # RB 3.3
        RevealAll: MonthRule(check_reveal_all, apply_reveal_all),  # RB 17.0
        EarlyArrival: buildup,  # RB 16.41
        Reinforce: buildup,  # RB 16.4
        bu.Redeploy: buildup,  # RB 16.51
        bu.SeaRedeploy: buildup,  # RB 16.53
        bu.ReturnForRefit: buildup,  # RB 16.52
        bu.BuySupply: buildup,  # RB 16.5
        Rebuild: buildup,  # RB 16.54
        BuildMinefield: MonthRule(_buildup_check, minefield_rules.apply_minefield_action),  # RB 16.55
        CallMalta: buildup,  # RB 18.6
        EndBuildup: buildup,  # RB 16.6
    }


# -- RB 18.0: the initial hands, kept or redrawn once ------------------------------------------

def check_keep_hand(state: State, action: KeepHand, side: Side, ctx) -> list[Problem]:
    if state.stage != "redraw":
        return [Problem("RB 18.0", "the initial hand is kept or redrawn once, before the first Player-Turn")]
    return []


def apply_keep_hand(state: State, action: KeepHand, side: Side, ctx) -> MonthNext:
    return MonthNext("hand_kept", state, side)


def check_redraw(state: State, action: Redraw, side: Side, ctx) -> list[Problem]:
    if state.stage != "redraw":
        return [Problem("RB 18.0", "the initial hand is kept or redrawn once, before the first Player-Turn")]
    return supplycards.no_seeds(action.cards, "RB 18.0")


def apply_redraw(state: State, action: Redraw, side: Side, ctx) -> MonthNext:
    # RB 18.0: the hand goes back (into the next reshuffle) and a new
    # one is dealt from the rest of the deck.
    deck = cd.take(state.deck, side, state.deck.held.get(side, ()), to_played=False)
    deck = cd.queue_deal(deck, side, supplycards.initial_cards(state, side))
    state = msgspec.structs.replace(state, hands={**state.hands, side: Hand()}, deck=deck)
    return MonthNext("hand_kept", state, side)


# -- RB 17.0: every block turned face up at the end ----------------------------------------------

def _final_labels(state: State, side: Side) -> list[str]:
    blocks = list(state.position.blocks_of(side)) + list(state.refitting.get(side, ())) \
        + list(state.waiting.get(side, ()))  # RB 16.4 sidebar: waiting off board, in play (BU-12)
    return [hidden.identity_label(b.token, state.versions.get(b.token, 0)) for b in blocks]


def check_reveal_all(state: State, action: RevealAll, side: Side, ctx) -> list[Problem]:
    if state.phase != "final":
        return [Problem("RB 17.0", "blocks are turned face up at the end of the game")]
    missing = [lbl for lbl in _final_labels(state, side) if not ctx.opened(lbl)]
    return [Problem("RB 17.0", f"open every block's identity: {', '.join(missing)} not opened")] if missing else []


def apply_reveal_all(state: State, action: RevealAll, side: Side, ctx) -> State | MonthNext:
    if not state.turned_up:  # the other side turns its blocks up next
        return msgspec.structs.replace(state, turned_up=(side,), side=enemy_of(side))

    def unit_of(b: Block) -> str:
        """A refitting block's unit: known, or opened by ``reveal all`` (RB 16.52, 17.0)."""
        opened = None if b.unit else identity_of(ctx, b.token, state.versions.get(b.token, 0))
        return b.unit or (opened[0] if opened else "")

    off = {s: [unit_of(b) for b in state.refitting.get(s, ()) + state.waiting.get(s, ())] for s in SIDES}
    result = judge_victory(game_map(), state.position, scenario_of(state), all_scenarios(), off_board=off)
    return MonthNext("game_judged", msgspec.structs.replace(state, result=result, turned_up=(*state.turned_up, side)))


#: RB 3.42: "basic", "offensive", "assault", "blitz", each "+ N dummies"; "bluff N"; "pass".
_END_BUILDUP = re.compile(r"^end buildup(?:\s+discard\s+(?P<n>\d+)(?:\s+dumm(?:y|ies))?)?$")


def parse_month_order(state: State, role: Side, words: str, ctx) -> Order:
    """Orders outside the Player-Turns: hands, Initiative, Buildup, the end."""
    low = " ".join(words.lower().split())
    low, named = supplycards.named_cards(low)  # "... cards s1:3": the cards played (T-41)
    if named is not None and not low.startswith(("challenge", "answer", "end buildup")):
        raise OrderError(f"only an order that plays or hands back Supply Cards names them: '{words.strip()}'")
    if low in ("keep hand", "keep"):
        return Order(action=KeepHand())
    if low == "redraw":
        return Order(action=Redraw())
    if low in ("challenge", "challenge with real", "challenge with dummy", "answer", "answer with real",
               "answer with dummy"):
        label = initiative.challenge_label(state, role)
        value = b"0" if low.endswith("dummy") else b"1"
        if named and low in ("challenge", "answer"):  # the card named says which (T-41)
            value = str(cd.real_among(ctx.card, named[:1]) or 0).encode()
        card = supplycards.pick_cards(state, role, int(value == b"1"), int(value == b"0"), ctx, "RB 3.3", named)[0]
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
        discard = int(m.group("n") or (len(named) if named else 0))
        return Order(action=EndBuildup(discard=discard, cards=supplycards.pick_cards(state, role, 0, discard, ctx,
                                                                                    "RB 16.6", named)))
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
    raise OrderError(f"not an order now: '{words}' ({STAGE_PROMPTS.get(state.stage, state.stage)})")


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
            and not rf.check_malta_group(s, state.month, state.malta or None):
        orders.append("call malta group")
    if hand.dummy:
        orders += [f"end buildup discard {n} dummies" for n in range(1, hand.dummy + 1)]
    if ledger.available >= bu.SUPPLY_CARD_BP:
        orders.append("buy supply 1")
    orders += minefield_rules.minefield_orders(state, role, ledger)
    return orders + buildup_orders.spending_orders(state, role, ledger)


# -- the actions in words (format_action) ---------------------------------------------------

def format_keep_hand(action: KeepHand) -> str:
    """The action in words (format_action)."""
    return "keep hand"


def format_redraw(action: Redraw) -> str:
    """The action in words (format_action)."""
    cards = action.cards
    return f"redraw: {len(cards)} new cards"


def format_reveal_all(action: RevealAll) -> str:
    """The action in words (format_action)."""
    return "reveal all"
