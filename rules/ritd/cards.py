"""Supply Cards in hand (RB 3.3, 3.42, 3.48, 4.0-4.5, 16.6, 18.0).

Pure bookkeeping: no randomness and no cryptography here. Cards are dealt
from the one shared 42-card deck by the engine's mental poker (pbem.deck,
DESIGN 4, decisions/turn.md T-15): the rules keep the public record (the
round, which positions each side holds, what goes back at the next
reshuffle) in ``Deck`` and see a card's face only through
``ctx.card(round, position)``.

A ``Hand`` holds the public count and, for a replay that knows them (the
owner's, or the audit's), how many are real. Playing cards face down
names the cards and commits how many of them are real (the commitment is
opened at Supply Revealed or, for the Initiative card, right after the
Axis answer, and the cards are shown from the deck then); a replay that
knows the hand checks at once that the player had those cards.
Decisions: decisions/turn.md (T-14..T-19).
"""

from __future__ import annotations

from collections.abc import Callable

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


def room(hand: Hand, deck: SupplyDeck) -> int:
    """RB 16.6: cards that may still be dealt under the hand limit (T-16)."""
    return max(0, deck.hand_limit - hand.count)


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


# --- the exact shared deck (pbem.deck; decisions/turn.md T-15, T-18) -------------------------
#
# The engine shuffles and deals by mental poker; the rules keep the public
# bookkeeping: which round is current, which of its positions went to whom,
# which cards each side holds (as references "round:position"), which cards
# wait to be shown, and what goes back into the deck at the next reshuffle.
# A card's face reaches the rules only through ``ctx.card(round, position)``:
# the holder's replay knows its own cards, everybody knows a card its holder
# has shown, the audit knows all.

class DeckJob(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One piece of deck work the rules wait for, in order.

    ``shuffle``: a new round (first player ``side``); ``deal`` lists
    (side, positions) dealt with its steps 3 and 4. ``deal``: positions of
    the current round dealt to ``side`` (its enemy publishes the keys).
    ``show``: ``side`` shows its cards ``refs`` (``why``: "play", "initiative"
    or "discard"; ``label``: the commitment of how many are real)."""

    kind: str
    side: str
    deal: tuple[tuple[str, tuple[int, ...]], ...] = ()
    refs: tuple[str, ...] = ()
    why: str = ""
    label: str = ""


class Deck(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The public state of the shared supply deck."""

    #: Rounds begun (the current one is ``s<rounds>``), its steps taken, its first player.
    rounds: int = 0
    steps: int = 0
    first: str = ""
    #: Input deck of the current round (its only key): "card:<label>" or
    #: "carry:<round>:<pos>". An earlier round's is never read again (the
    #: engine's ledger keeps every round's, pbem.ledger), so a reshuffle
    #: (RB 16.6) drops it: kept, the 20-month campaign's were a fifth of its state.
    sources: dict[str, tuple[str, ...]] = {}
    #: Positions of the current round dealt so far.
    dealt: tuple[int, ...] = ()
    #: Cards in each hand, as "round:pos".
    held: dict[str, tuple[str, ...]] = {}
    #: Cards played face down and not yet shown, per side.
    played: dict[str, tuple[str, ...]] = {}
    #: Cards that go back into the deck at the next reshuffle (spent, discarded, redrawn).
    returned: tuple[str, ...] = ()
    jobs: tuple[DeckJob, ...] = ()

    @property
    def round(self) -> str:
        return f"s{self.rounds}" if self.rounds else ""


def ref(rnd: str, pos: int) -> str:
    return f"{rnd}:{pos}"


def unref(r: str) -> tuple[str, int]:
    rnd, _, pos = r.partition(":")
    return rnd, int(pos)


def deck_labels(deck: SupplyDeck) -> tuple[str, ...]:
    """The 42 cards (RB 16.6: 28 real, 14 dummy), in the order they enter the first round."""
    return tuple(f"real-{i:02d}" for i in range(1, deck.real + 1)) + \
        tuple(f"dummy-{i:02d}" for i in range(1, deck.total - deck.real + 1))


def label_is_real(label: str) -> bool:
    return label.startswith("real-")


def undealt(d: Deck) -> list[int]:
    n = len(d.sources.get(d.round, ()))
    taken = set(d.dealt)
    return [p for p in range(n) if p not in taken]


def next_positions(d: Deck, n: int) -> tuple[int, ...]:
    """The next ``n`` undealt positions of the current round: from the top, in order."""
    return tuple(undealt(d)[:n])


def begin_round(d: Deck, first: str, labels: tuple[str, ...], deals: list[tuple[str, int]]) -> Deck:
    """A reshuffle (RB 16.6): the undealt cards and every returned card (or,
    for the first round, ``labels``) form the next round; ``deals`` are dealt
    from its top, in order, with its last two steps."""
    if d.rounds == 0:
        sources = tuple(f"card:{lb}" for lb in labels)
    else:
        sources = tuple(f"carry:{d.round}:{p}" for p in undealt(d)) + tuple(f"carry:{r}" for r in d.returned)
    new = msgspec.structs.replace(d, rounds=d.rounds + 1, steps=0, first=first, dealt=(), returned=(),
                                  sources={f"s{d.rounds + 1}": sources})
    plan = []
    for side, n in deals:
        pos = next_positions(new, min(n, len(undealt(new))))
        new = msgspec.structs.replace(new, dealt=new.dealt + pos)
        plan.append((side, pos))
    new = msgspec.structs.replace(new, dealt=())  # marked dealt when the keys come
    return msgspec.structs.replace(new, jobs=d.jobs + (DeckJob(kind="shuffle", side=first, deal=tuple(plan)),))


def queue_deal(d: Deck, side: str, n: int) -> Deck:
    """Deal ``n`` cards of the current round to ``side`` (cut to what is left)."""
    pending = {p for job in d.jobs for _, ps in job.deal for p in ps}
    free = [p for p in undealt(d) if p not in pending][:n]
    if not free:
        return d
    return msgspec.structs.replace(d, jobs=d.jobs + (DeckJob(kind="deal", side=side, deal=((side, tuple(free)),)),))


def queue_show(d: Deck, side: str, refs: tuple[str, ...], why: str, label: str = "") -> Deck:
    if not refs:
        return d
    return msgspec.structs.replace(d, jobs=d.jobs + (DeckJob(kind="show", side=side, refs=refs, why=why,
                                                                label=label),))


def take(d: Deck, side: str, refs: tuple[str, ...], *, to_played: bool) -> Deck:
    """``refs`` leave ``side``'s hand: played face down (shown later) or straight back to the deck."""
    held = tuple(r for r in d.held.get(side, ()) if r not in refs)
    d = msgspec.structs.replace(d, held={**d.held, side: held})
    if to_played:
        return msgspec.structs.replace(d, played={**d.played, side: d.played.get(side, ()) + refs})
    return msgspec.structs.replace(d, returned=d.returned + refs)


def ref_problems(d: Deck, side: str, refs: tuple[str, ...], count: int, rule: str) -> list[Problem]:
    """The cards named must be ``count`` distinct cards of ``side``'s hand."""
    if len(refs) != count or len(set(refs)) != count:
        return [Problem(rule, f"name the {count} card(s) played (one each), not {len(refs)}")]
    held = set(d.held.get(side, ()))
    missing = [r for r in refs if r not in held]
    return [Problem(rule, f"card(s) {', '.join(missing)} are not in the {side} hand")] if missing else []


def faces(card, refs: tuple[str, ...]) -> list[str | None]:
    """The labels of ``refs`` as this replay sees them (``card``: ctx.card)."""
    return [card(*unref(r)) for r in refs]


def real_among(card, refs: tuple[str, ...]) -> int | None:
    seen = faces(card, refs)
    if any(s is None for s in seen):
        return None
    return sum(label_is_real(s) for s in seen if s)


def pick(card, held: tuple[str, ...], real: int, dummies: int,
         choose: Callable[[str, int, int], tuple[int, ...]]) -> tuple[str, ...] | None:
    """Cards of a hand its owner can see: ``real`` real ones and ``dummies``
    dummies, in the order of the hand (None: not held). Which of each kind is
    ``choose(kind, n, k)``'s: k of the n held cards of that kind, by index
    (the engine's private uniform choice, ComposeCtx.private_sample; never
    the hand's order, which would tell the opponent the cards still held
    once these are shown: issue 27, decisions/turn.md T-41)."""
    seen = {r: card(*unref(r)) for r in held}
    reals = [r for r in held if seen[r] is not None and label_is_real(seen[r])]
    dums = [r for r in held if seen[r] is not None and not label_is_real(seen[r])]
    if len(reals) < real or len(dums) < dummies:
        return None
    chosen = {pool[i] for kind, pool, k in (("real", reals, real), ("dummy", dums, dummies)) if k
              for i in choose(kind, len(pool), k)}
    return tuple(r for r in held if r in chosen)


def in_hand_order(held: tuple[str, ...], refs: tuple[str, ...]) -> bool:
    """Whether ``refs`` (cards of the hand) are listed in the order of the hand."""
    places = [held.index(r) for r in refs if r in held]
    return places == sorted(places)
