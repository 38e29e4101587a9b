"""The turn option (RB 3.42, 4.0-4.5): Supply Cards played face down for a
Pass, Basic, Offensive, Assault or Blitz Turn; the Blitz phases (RB 3.45,
4.4); Supply Revealed (RB 3.48), where the cards must pay for what was done:
check, apply, parsing and the orders listed.
"""

from __future__ import annotations

import re

import msgspec

from pbem.rulesapi import Order, Problem
from rules.ritd import cards as cd
from rules.ritd import fortresses as fo
from rules.ritd import movement as mv
from rules.ritd import supplycards
from rules.ritd.actions import Blitz, OrderError, PlayCards, RevealOption
from rules.ritd.cards import OPTION_COST, Hand
from rules.ritd.position import Side
from rules.ritd.state import State, game_map, hand_of, scenario_of
from rules.ritd.steps import TurnNext
from rules.ritd.turn import Turn, movement_of, option_label

#: 'pass', '<option> [+ n dummies]' or 'bluff n' (RB 3.42, 4.5); the cards played
#: may be named at the end ("basic cards s1:3", supplycards.named_cards).
OPTION = re.compile(r"^(?:pass|(?:(?P<option>basic|offensive|assault|blitz)"
                    r"(?:\s*\+\s*(?P<dummies>\d+)\s+dumm(?:y|ies))?|bluff\s+(?P<bluff>\d+))"
                    r"(?:\s+cards?\s+s\d+:\d+(?:\s*,?\s*s\d+:\d+)*)?)$")


# -- RB 3.42, 4.0-4.5: the cards played face down ----------------------------------------

def check_play_cards(state: State, turn: Turn, action: PlayCards, side: Side, ctx) -> list[Problem]:
    count, label = action.count, action.label
    if count == 0 and action.cards:
        return [Problem("RB 4.5", "a Pass plays no cards")]
    if turn.step != "option":
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
    return cd.play_problems(hand_of(state, side), count, real, "RB 3.42") or fortress_bluff_problems(
        state, side, count, real) or supplycards.card_checks(state, side, action.cards, count, real, "RB 3.42", ctx)


def fortress_bluff_problems(state: State, side: Side, count: int, real: int | None) -> list[Problem]:
    """T-42: no turn of dummy cards only while ``side`` is the Original
    Attacker of a Fortress battle. It "must have combat when Engaged in a
    Fortress" (RB 13.2 sidebar), a Combat Round needs a real card (RB 4.1)
    and cards that are all dummies allow no Move to Withdraw by, so the turn
    could only end illegal at its reveal (RB 3.48). The player Passes openly
    instead: one Withdrawal Move, else its Fortress attackers are Routed
    (RB 4.5, 13.2 sidebar "Fortress Combat in Pass Turns"). ``real`` is None
    where this replay cannot see the cards: the reveal judges it then."""
    if count == 0 or real != 0:
        return []
    m = game_map()
    attacked = fo.pass_turn_fortress_battles(state.position, side, fo.fortress_hexes(m))
    if not attacked:
        return []
    return [Problem("RB 13.2", f"your units attack the Fortress battle in {', '.join(m.name(h) for h in attacked)}: "
                               "its Original Attacker must have combat there, which needs a real card (RB 4.1), "
                               "so dummy cards alone cannot pay for this turn; 'pass' to Withdraw from it or be "
                               "Routed (RB 4.5, 13.2 sidebar; T-42)")]


def apply_play_cards(state: State, turn: Turn, action: PlayCards, side: Side, ctx) -> TurnNext:
    count, label = action.count, action.label
    real = 0 if count == 0 else cd.parse_real(ctx.value(label), count)
    # RB 4.0-4.2: one Move, two with two real cards; a replay that cannot
    # see the cards allows what the count could pay for (checked at 3.48).
    allowed = 1 if count == 0 else min(count if real is None else real, 2)
    movement = mv.start_movement(state.position, side, moves_allowed=allowed, withdrawal_only=count == 0,
                                 rommel_bonus=scenario_of(state).special.rommel_bonus)
    hands = {**state.hands, side: cd.spend(hand_of(state, side), count, real)}
    deck = cd.take(state.deck, side, action.cards, to_played=True)
    # A new Movement begins: the previous Player-Turn's arrows go.
    return TurnNext("cards_played", msgspec.structs.replace(state, hands=hands, deck=deck, last_moves=()),
                    msgspec.structs.replace(turn, cards=count, option_label=label, real=-1 if real is None else real,
                                            option="pass" if count == 0 else "", movement=movement))


def parse_play_cards(state: State, role: Side, turn: Turn, low: str, ctx) -> Order | None:
    """'pass', 'basic', 'offensive + 1 dummy', 'bluff 2' (RB 3.42, 4.5); None if ``low`` is none of them."""
    if not OPTION.match(low):
        return None
    if low == "pass":
        return Order(action=PlayCards(count=0))
    low, named = supplycards.named_cards(low)
    cards = OPTION.match(low)
    assert cards is not None  # the ending removed, the order still has its form
    real = OPTION_COST.get(cards.group("option") or "", 0)
    count = real + int(cards.group("dummies") or cards.group("bluff") or 0)
    label = option_label(turn.number)
    short = cd.play_problems(hand_of(state, role), count, real, "RB 3.42") if cards.group("option") == "blitz" else []
    if short:  # 'blitz' here is the Blitz Turn option, not the later Blitz decision: say both
        raise OrderError(f"RB 4.4: a Blitz Turn is played with {real} real cards face down, which your hand "
                         f"cannot pay ({'; '.join(map(str, short))}); the Blitz itself, 'blitz' or 'no blitz', "
                         f"is ordered after the first Combat phase of a Player-Turn played with {real} or more "
                         "cards (RB 3.45, 4.4)")
    refs = supplycards.pick_cards(state, role, real, count - real, ctx, "RB 3.42", named)
    return Order(action=PlayCards(count=count, label=label, cards=refs), secrets={label: str(real).encode()})


def option_orders(hand: Hand) -> list[str]:
    """RB 3.42: the options the hand pays for (with up to two dummies added)."""
    real = hand.real if hand.real is not None else hand.count
    dummies = hand.dummy if hand.dummy is not None else hand.count
    orders = ["pass"]
    for option, cost in OPTION_COST.items():
        if cost == 0 or cost > real:
            continue
        orders.append(option)
        orders += [f"{option} + {n} dumm{'y' if n == 1 else 'ies'}" for n in (1, 2) if n <= dummies]
    orders += [f"bluff {n}" for n in (1, 2) if n <= dummies]
    return orders


# -- RB 3.45, 4.4: the Blitz -------------------------------------------------------------------

def check_blitz(state: State, turn: Turn, action: Blitz, side: Side, ctx) -> list[Problem]:
    if turn.step != "blitz":
        return [Problem("RB 3.45", "the Blitz phases follow the first Combat phase of a turn with three "
                                   "or more cards")]
    if not action.go:
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


def apply_blitz(state: State, turn: Turn, action: Blitz, side: Side, ctx) -> TurnNext:
    if not action.go:
        return TurnNext("blitz_declined", state, turn)
    movement = mv.start_blitz_movement(state.position, movement_of(turn))
    return TurnNext("blitz_taken", state, msgspec.structs.replace(turn, blitz=True, movement=movement, battles=(),
                                                                  assault=()))


def blitz_orders(turn: Turn) -> list[str]:
    made = turn.movement.moves_made if turn.movement else 0
    able = made <= 1 and not turn.assault and turn.real >= OPTION_COST["blitz"]
    return ["no blitz"] + (["blitz"] if able else [])


# -- RB 3.48: Supply Revealed ---------------------------------------------------------------

def check_reveal_option(state: State, turn: Turn, action: RevealOption, side: Side, ctx) -> list[Problem]:
    if turn.step != "supply-revealed":
        return [Problem("RB 3.48", "the supply cards are revealed at the end of the Player-Turn")]
    if turn.cards == 0:
        return [Problem("RB 3.48", "a Pass played no cards")]
    if not ctx.opened(turn.option_label):
        return [Problem("RB 3.48", f"open the cards played '{turn.option_label}' in this event")]
    return option_problems(state, turn, ctx.value(turn.option_label))


def option_problems(state: State, turn: Turn, value: bytes | None) -> list[Problem]:
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


def apply_reveal_option(state: State, turn: Turn, action: RevealOption, side: Side, ctx) -> TurnNext:
    real = cd.parse_real(ctx.value(turn.option_label), turn.cards) or 0
    made = turn.movement.moves_made if turn.movement else 0
    # RB 3.48: the cards played are shown (their keys opened in this event).
    state = msgspec.structs.replace(state, deck=cd.queue_show(
        state.deck, side, state.deck.played.get(side, ()), "play", turn.option_label))
    return TurnNext("option_revealed", state, msgspec.structs.replace(turn, real=real, option=cd.option_name(
        real, made, bool(turn.assault), turn.blitz)))


# -- the orders listed (legal_orders) --------------------------------------------------

def listed_options(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "option" (no bluff where T-42 refuses it)."""
    orders = option_orders(hand_of(state, role))
    if fortress_bluff_problems(state, role, 1, 0):
        orders = [o for o in orders if not o.startswith("bluff")]
    return orders


def listed_supply_revealed(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "supply-revealed"."""
    return ["reveal option"]


def listed_blitz(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "blitz"."""
    return blitz_orders(turn)


# -- the actions in words (format_action) ---------------------------------------------------

def format_blitz(action: Blitz) -> str:
    """The action in words (format_action)."""
    go = action.go
    return "blitz" if go else "no blitz"


def format_play_cards(action: PlayCards) -> str:
    """The action in words (format_action)."""
    count = action.count
    return "pass" if count == 0 else f"play {count} card{'s' if count > 1 else ''} face down"


def format_reveal_option(action: RevealOption) -> str:
    """The action in words (format_action)."""
    return "reveal option"


# -- orders read (parse_order) ---------------------------------------------------------------

def parse_blitz_order(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'blitz' or 'no blitz' (RB 3.45, 4.4)."""
    return Order(action=Blitz(go=low == "blitz"))


def parse_option_order(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """The turn option's cards (RB 3.42): see ``parse_play_cards``."""
    order = parse_play_cards(state, role, turn, low, ctx)
    assert order is not None  # the table asks only for text OPTION matches
    return order


def parse_reveal_option(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'reveal option' (RB 3.48): the cards played are opened in this event."""
    return Order(action=RevealOption(), reveal=(turn.option_label,) if turn.option_label else ())
