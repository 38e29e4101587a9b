"""Supply Cards in hand (RB 3.3, 3.42, 3.48, 4.0-4.5, 16.6, 18.0).

Pure bookkeeping: no randomness here. A card is drawn by the engine as a
secret die of ``deck.total`` faces whose seed the drawer committed (DESIGN
4-5): faces 1..``deck.real`` are real cards, the others dummies. The drawer
knows the die at once, the opponent only when the seed is opened (at the
audit). Each card is drawn independently with the deck's real fraction:
an APPROXIMATION of drawing from the one shared 42-card deck (DESIGN 4,
"Shared deck"), labelled so in reports; the exact shared deck will replace
``is_real`` and the dice behind it without changing this interface.

A ``Hand`` holds the public count and, for a replay that knows them (the
owner's, or the audit's), how many are real. Playing cards face down
commits how many of them are real (the commitment is opened at Supply
Revealed or, for the Initiative card, right after the Axis answer); a
replay that knows the hand checks at once that the player had those cards.
Decisions: decisions/turn.md (T-14..T-19).
"""

from __future__ import annotations

import msgspec

from pbem.rulesapi import Problem
from rules.ritd.scenarios import SupplyDeck

#: RB 4.0-4.5: the real Supply Cards each Turn Option costs.
OPTION_COST = {"pass": 0, "basic": 1, "offensive": 2, "assault": 2, "blitz": 3}


class Hand(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A player's Supply Cards: ``count`` is public (RB 16.6 sidebar);
    ``real`` is the number of real cards, None where this replay cannot know it."""

    count: int = 0
    real: int | None = 0

    @property
    def dummy(self) -> int | None:
        return None if self.real is None else self.count - self.real


def is_real(face: int, deck: SupplyDeck) -> bool:
    """A drawn card: faces 1..real of a ``deck.total``-sided die are real."""
    return face <= deck.real


def room(hand: Hand, deck: SupplyDeck) -> int:
    """RB 16.6: cards that may still be dealt under the hand limit (T-16)."""
    return max(0, deck.hand_limit - hand.count)


def add_drawn(hand: Hand, faces: tuple[int | None, ...], deck: SupplyDeck) -> Hand:
    """The hand after drawing one card per face (None: a face this replay cannot see)."""
    if hand.real is None or any(f is None for f in faces):
        return Hand(count=hand.count + len(faces), real=None)
    return Hand(count=hand.count + len(faces), real=hand.real + sum(is_real(f, deck) for f in faces if f))


def parse_real(value: bytes | None, played: int) -> int | None:
    """The committed number of real cards among ``played`` (None if unknown or malformed)."""
    if value is None:
        return None
    text = value.decode("ascii", "replace")
    if not text.isdigit() or not 0 <= int(text) <= played:
        return -1
    return int(text)


def play_problems(hand: Hand, played: int, real: int | None, rule: str) -> list[Problem]:
    """Can ``hand`` supply ``played`` cards of which ``real`` are real? (``real``
    None: secret to this replay; only the public count is checked.)"""
    if played > hand.count:
        return [Problem(rule, f"{played} cards played, but the hand holds {hand.count}")]
    if real is None:
        return []
    if real < 0:
        return [Problem(rule, f"the cards committed must say how many of the {played} are real (0-{played})")]
    if hand.real is None:
        return []
    probs = []
    if real > hand.real:
        probs.append(Problem(rule, f"{real} real cards played, but the hand holds {hand.real} real cards"))
    if played - real > hand.count - hand.real:
        probs.append(Problem(rule, f"{played - real} dummy cards played, but the hand holds "
                                   f"{hand.count - hand.real} dummies"))
    return probs


def spend(hand: Hand, played: int, real: int | None) -> Hand:
    """The hand after ``played`` cards (``real`` of them real) are spent (RB 3.48)."""
    if hand.real is None or real is None or real < 0:
        return Hand(count=hand.count - played, real=None)
    return Hand(count=hand.count - played, real=hand.real - real)


def discard_dummies(hand: Hand, n: int) -> Hand:
    """RB 16.6: dummies handed back at Resupply (the count is public, T-17)."""
    return Hand(count=hand.count - n, real=hand.real)


def turn_cost(moves: int, combat: bool, assault: bool, blitz: bool = False) -> tuple[int, str, str]:
    """RB 4.0-4.5 and the "Two Supply Cards Committed" sidebar: the real
    cards a Player-Turn needs for what it did: (cards, rule, what)."""
    if blitz:
        return OPTION_COST["blitz"], "RB 4.4", "the Blitz Movement and Combat phases (a Blitz Turn)"
    if assault:
        return OPTION_COST["assault"], "RB 4.3", "Assault Battles (an Assault Turn)"
    if moves >= 2:
        return OPTION_COST["offensive"], "RB 4.2", "two Moves (an Offensive Turn)"
    if moves or combat:
        return OPTION_COST["basic"], "RB 4.1", ("a Move" if moves else "a Combat Round") + " (a Basic Turn)"
    return OPTION_COST["pass"], "RB 4.5", "nothing"


def option_name(real: int, moves: int, assault: bool, blitz: bool = False) -> str:
    """The Turn Option a turn with ``real`` real cards was (RB 4.0 sidebar)."""
    if blitz and real >= 3:
        return "blitz"
    if real <= 0:
        return "no real card"
    if real == 1:
        return "basic"
    return "offensive" if moves >= 2 and not assault else "assault"


def initiative(allied_real: bool | None, axis_real: bool | None) -> str:
    """RB 3.3: the Allies take the Initiative only with a real card not
    matched by a real Axis card (None: no card played)."""
    return "allied" if allied_real and not axis_real else "axis"
