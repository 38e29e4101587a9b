"""The Initiative (RB 3.3): after each Buildup the Allied player may challenge
with one card face down, the Axis player may answer with one, both turned up
(the deck shows them, T-15): check, apply, parsing and order listing of the
challenge, the answer and the turning up.
"""

from __future__ import annotations

from typing import cast

import msgspec

from pbem.rulesapi import Order, Problem
from rules.ritd import cards as cd
from rules.ritd import supplycards
from rules.ritd.actions import Answer, Challenge, OpenChallenge
from rules.ritd.position import Side
from rules.ritd.state import State, hand_of
from rules.ritd.steps import MonthNext


def challenge_label(state: State, side: Side) -> str:
    """The commitment label of ``side``'s card this Month (how many are real)."""
    return f"month{state.month}.initiative.{side}"


def one_card_problems(state: State, side: Side, label: str, ctx, *, opened: bool) -> list[Problem]:
    if label != challenge_label(state, side) or not ctx.committed(label):
        return [Problem("RB 3.3", f"the card must be committed as '{challenge_label(state, side)}'")]
    if opened and not ctx.opened(label):
        return [Problem("RB 3.3", "the Axis answer is opened in the same event (the Allied card is already fixed)")]
    return cd.play_problems(hand_of(state, side), 1, cd.parse_real(ctx.value(label), 1), "RB 3.3")


def _not_initiative(state: State) -> list[Problem]:
    return [Problem("RB 3.3", "the Initiative is settled after the Buildup, before the first Player-Turn")]


def check_challenge(state: State, action: Challenge, side: Side, ctx) -> list[Problem]:
    if state.phase != "initiative":
        return _not_initiative(state)
    label, card = action.label, action.card
    if state.stage != "challenge":
        return [Problem("RB 3.3", "the Allied challenge comes first")]
    if not label:
        return [] if not card else [Problem("RB 3.3", "no challenge plays no card")]
    return one_card_problems(state, side, label, ctx, opened=False) + supplycards.card_checks(
        state, side, (card,), 1, cd.parse_real(ctx.value(label), 1), "RB 3.3", ctx)


def apply_challenge(state: State, action: Challenge, side: Side, ctx) -> MonthNext:
    label, card = action.label, action.card
    if not label:
        return MonthNext("no_challenge", state)
    real = cd.parse_real(ctx.value(label), 1)
    return MonthNext("challenged", msgspec.structs.replace(
        state, hands={**state.hands, side: cd.spend(hand_of(state, side), 1, real)},
        deck=cd.take(state.deck, side, (card,), to_played=True), challenge=label))


def check_answer(state: State, action: Answer, side: Side, ctx) -> list[Problem]:
    if state.phase != "initiative":
        return _not_initiative(state)
    label, card = action.label, action.card
    if state.stage != "answer":
        return [Problem("RB 3.3", "the Axis answers an Allied challenge")]
    if not label:
        return [] if not card else [Problem("RB 3.3", "declining plays no card")]
    return one_card_problems(state, side, label, ctx, opened=True) + supplycards.card_checks(
        state, side, (card,), 1, cd.parse_real(ctx.value(label), 1), "RB 3.3", ctx)


def apply_answer(state: State, action: Answer, side: Side, ctx) -> MonthNext:
    label, card = action.label, action.card
    if label:
        real = cd.parse_real(ctx.value(label), 1)
        deck = cd.take(state.deck, side, (card,), to_played=True)
        state = msgspec.structs.replace(state, hands={**state.hands, side: cd.spend(hand_of(state, side), 1, real)},
                                        answer=label,
                                        deck=cd.queue_show(deck, side, (card,), "initiative", label))
    return MonthNext("answered", state)


def check_open_challenge(state: State, action: OpenChallenge, side: Side, ctx) -> list[Problem]:
    if state.phase != "initiative":
        return _not_initiative(state)
    if state.stage != "open-challenge":
        return [Problem("RB 3.3", "no challenge card is waiting to be turned up")]
    if not ctx.opened(state.challenge):
        return [Problem("RB 3.3", f"open the challenge card '{state.challenge}' in this event")]
    return []


def apply_open_challenge(state: State, action: OpenChallenge, side: Side, ctx) -> MonthNext:
    state = msgspec.structs.replace(state, deck=cd.queue_show(
        state.deck, side, state.deck.played.get(side, ()), "initiative", state.challenge))
    allied = ctx.value(state.challenge) == b"1"
    axis = (ctx.value(state.answer) == b"1") if state.answer else None
    return MonthNext("challenge_opened", state, cast(Side, cd.initiative(allied, axis)))


# -- the actions in words (format_action) ---------------------------------------------------

def format_challenge(action: Challenge) -> str:
    """The action in words (format_action)."""
    label = action.label
    return "challenge (one card face down)" if label else "no challenge"


def format_answer(action: Answer) -> str:
    """The action in words (format_action)."""
    label = action.label
    return "answer (one card)" if label else "decline"


def format_open_challenge(action: OpenChallenge) -> str:
    """The action in words (format_action)."""
    return "open challenge"


# -- the orders read (parse_order) and listed (legal_orders) ------------------------------------

#: The orders that play one card face down (RB 3.3): real or dummy, or the card named (T-41).
CARD_ORDERS = ("challenge", "challenge with real", "challenge with dummy", "answer", "answer with real",
               "answer with dummy")


def parse_card_order(state: State, role: Side, words: str, low: str, named, ctx) -> Order:
    """'challenge [with real|with dummy]', 'answer [with real|with dummy]'
    (RB 3.3): one card face down, committed as how many are real; a card
    named ('cards s1:3') says which (T-41). The answer is opened at once."""
    label = challenge_label(state, role)
    value = b"0" if low.endswith("dummy") else b"1"
    if named and low in ("challenge", "answer"):  # the card named says which (T-41)
        value = str(cd.real_among(ctx.card, named[:1]) or 0).encode()
    card = supplycards.pick_cards(state, role, int(value == b"1"), int(value == b"0"), ctx, "RB 3.3", named)[0]
    if low.startswith("challenge"):
        return Order(action=Challenge(label=label, card=card), secrets={label: value})
    return Order(action=Answer(label=label, card=card), secrets={label: value}, reveal=(label,))


def parse_no_challenge(state: State, role: Side, words: str, low: str, named, ctx) -> Order:
    """'no challenge' (RB 3.3)."""
    return Order(action=Challenge())


def parse_decline(state: State, role: Side, words: str, low: str, named, ctx) -> Order:
    """'decline' (RB 3.3): no answer to the challenge."""
    return Order(action=Answer())


def parse_open_challenge(state: State, role: Side, words: str, low: str, named, ctx) -> Order:
    """'open challenge' (RB 3.3): the challenge card turned face up."""
    return Order(action=OpenChallenge(), reveal=(state.challenge,) if state.challenge else ())


def listed_initiative(state: State, role: Side, ctx) -> list[str]:
    """The orders listed in stages "challenge" and "answer" (RB 3.3): none,
    or a card, real or dummy, as the hand allows (where this replay knows it)."""
    hand = hand_of(state, role)
    challenging = state.stage == "challenge"
    verb = "challenge" if challenging else "answer"
    orders = ["no challenge" if challenging else "decline"]
    if hand.count and (hand.real is None or hand.real):
        orders.append(verb)
    if hand.count and (hand.dummy is None or hand.dummy):
        orders.append(f"{verb} with dummy")
    return orders


def listed_open_challenge(state: State, role: Side, ctx) -> list[str]:
    """The orders listed in stage "open-challenge" (RB 3.3)."""
    return ["open challenge"]
