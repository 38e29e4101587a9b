"""The Month outside the Player-Turns: initial hands (RB 18.0), the Initiative
(RB 3.3), the Buildup's orders (RB 16, dispatched to rules.ritd.buildup_orders)
and turning every block face up at the end (RB 17.0): check, apply, parsing
and order listing of those actions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import msgspec

from pbem.rulesapi import Order, Problem
from rules.ritd import buildup as bu
from rules.ritd import (
    buildup_orders,
    hidden,
    initiative,
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
    rule = _MONTH_RULES.get(type(action))
    if rule is not None and rule.check is not _buildup_check:
        return rule.check(state, action, side, ctx)
    return _buildup_check(state, action, side, ctx)


def apply_month(state: State, action: object, side: Side, ctx) -> State:
    """A checked action outside the Player-Turns, applied by its rule; the
    stage that follows is the sequence's to decide (rules.ritd.sequence)."""
    rule = _MONTH_RULES.get(type(action))
    if rule is None:
        raise ValueError(f"unchecked action {action!r}")
    out = rule.apply(state, action, side, ctx)
    return sequence.advance_month(out) if isinstance(out, MonthNext) else out


def _buildup_check(state: State, action: object, side: Side, ctx) -> list[Problem]:
    if state.phase != "buildup" or state.stage != "buildup":
        return not_now(state, action)
    return buildup_orders.check_buildup(state, action, side, hand_of(state, side), ctx)




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


#: The Buildup's actions (RB 16.4-16.6, 18.6), judged by rules.ritd.buildup_orders in stage "buildup".
_BUILDUP = MonthRule(_buildup_check, buildup_orders.apply_buildup_action)

#: The dispatch table: each action outside the Player-Turns with the module of its rule.
_MONTH_RULES: dict[type, MonthRule] = {
    KeepHand: MonthRule(check_keep_hand, apply_keep_hand),  # RB 18.0
    Redraw: MonthRule(check_redraw, apply_redraw),  # RB 18.0
    Challenge: MonthRule(initiative.check_challenge, initiative.apply_challenge),  # RB 3.3
    Answer: MonthRule(initiative.check_answer, initiative.apply_answer),  # RB 3.3
    OpenChallenge: MonthRule(initiative.check_open_challenge, initiative.apply_open_challenge),  # RB 3.3
    RevealAll: MonthRule(check_reveal_all, apply_reveal_all),  # RB 17.0
    EarlyArrival: _BUILDUP,  # RB 16.41
    Reinforce: _BUILDUP,  # RB 16.4
    bu.Redeploy: _BUILDUP,  # RB 16.51
    bu.SeaRedeploy: _BUILDUP,  # RB 16.53
    bu.ReturnForRefit: _BUILDUP,  # RB 16.52
    bu.BuySupply: _BUILDUP,  # RB 16.5
    Rebuild: _BUILDUP,  # RB 16.54
    BuildMinefield: MonthRule(_buildup_check, minefield_rules.apply_minefield_action),  # RB 16.55
    CallMalta: _BUILDUP,  # RB 18.6
    EndBuildup: _BUILDUP,  # RB 16.6
}


def parse_month_order(state: State, role: Side, words: str, ctx) -> Order:
    """Orders outside the Player-Turns: hands, Initiative, Buildup, the end.
    Each order's reading lives in the module of its rule; the table below
    says which text is which order, in the order the forms are tried."""
    low = " ".join(words.lower().split())
    low, named = supplycards.named_cards(low)  # "... cards s1:3": the cards played (T-41)
    if named is not None and not low.startswith(("challenge", "answer", "end buildup")):
        raise OrderError(f"only an order that plays or hands back Supply Cards names them: '{words.strip()}'")
    verb = words.strip().partition(" ")[0].lower()
    for matches, parse in _MONTH_ORDERS:
        if matches(low, verb):
            return parse(state, role, words, low, named, ctx)
    raise OrderError(f"not an order now: '{words}' ({STAGE_PROMPTS.get(state.stage, state.stage)})")


def parse_keep_hand(state: State, role: Side, words: str, low: str, named, ctx) -> Order:
    """'keep hand' (RB 18.0)."""
    return Order(action=KeepHand())


def parse_redraw(state: State, role: Side, words: str, low: str, named, ctx) -> Order:
    """'redraw' (RB 18.0)."""
    return Order(action=Redraw())


def parse_reveal_all(state: State, role: Side, words: str, low: str, named, ctx) -> Order:
    """'reveal all' (RB 17.0): every identity of ``role``'s blocks not opened yet."""
    return Order(action=RevealAll(), reveal=tuple(lbl for lbl in _final_labels(state, role) if not ctx.opened(lbl)))


#: Does an order's text (lower case, spaces single, the cards named taken off; its first word) have a form?
MonthMatches = Callable[[str, str], bool]

#: The forms of the orders outside the Player-Turns, tried in this order.
_MONTH_ORDERS: tuple[tuple[MonthMatches, Callable[..., Order]], ...] = (
    (lambda low, verb: low in ("keep hand", "keep"), parse_keep_hand),  # RB 18.0
    (lambda low, verb: low == "redraw", parse_redraw),  # RB 18.0
    (lambda low, verb: low in initiative.CARD_ORDERS, initiative.parse_card_order),  # RB 3.3
    (lambda low, verb: low == "no challenge", initiative.parse_no_challenge),  # RB 3.3
    (lambda low, verb: low == "decline", initiative.parse_decline),  # RB 3.3
    (lambda low, verb: low == "open challenge", initiative.parse_open_challenge),  # RB 3.3
    (lambda low, verb: low == "reveal all", parse_reveal_all),  # RB 17.0
    (lambda low, verb: low == "reinforce", buildup_orders.parse_reinforce),  # RB 16.4, 16.41
    (lambda low, verb: low in ("call malta group", "call malta", "malta group"),
     buildup_orders.parse_call_malta),  # RB 18.6
    (lambda low, verb: low.startswith("early arrival"), buildup_orders.parse_early_arrival),  # RB 16.41
    (lambda low, verb: buildup_orders.END_BUILDUP.match(low) is not None, buildup_orders.parse_end_buildup),  # RB 16.6
    (lambda low, verb: buildup_orders.BUY_SUPPLY.match(low) is not None, buildup_orders.parse_buy_supply),  # RB 16.5
    (lambda low, verb: low.startswith("minefield "), minefield_rules.parse_minefield_order),  # RB 14.1, 16.55
    (lambda low, verb: verb == "rebuild", buildup_orders.parse_rebuild),  # RB 16.54
    (lambda low, verb: verb in ("redeploy", "refit", "sea"), buildup_orders.parse_redeploy),  # RB 16.51-16.53
)


def month_orders(state: State, role: Side, ctx) -> list[str]:
    """Every order ``role`` may give in the stage the Month is at (the table below)."""
    listing = _STAGE_ORDERS.get(state.stage)
    return listing(state, role, ctx) if listing is not None else []


def listed_hands(state: State, role: Side, ctx) -> list[str]:
    """The orders listed in stage "redraw" (RB 18.0)."""
    return ["keep hand", "redraw"]


def listed_reveal_all(state: State, role: Side, ctx) -> list[str]:
    """The orders listed in stage "reveal-all" (RB 17.0)."""
    return ["reveal all"]


#: Each stage's order listing, in the module of its rule.
_STAGE_ORDERS: dict[str, Callable[[State, Side, object], list[str]]] = {
    "redraw": listed_hands,  # RB 18.0
    "challenge": initiative.listed_initiative,  # RB 3.3
    "answer": initiative.listed_initiative,  # RB 3.3
    "open-challenge": initiative.listed_open_challenge,  # RB 3.3
    "reveal-all": listed_reveal_all,  # RB 17.0
    "buildup": buildup_orders.listed_buildup,  # RB 16.4-16.6, 18.6
}


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
