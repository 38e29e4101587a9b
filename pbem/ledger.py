"""The shared deck's bookkeeping of one replay (pbem.deck, DESIGN 4): a ledger.

A ``DeckLedger`` records what the log published about the shared deck: the
shuffle steps of each round in play order, each round's first role and
input deck, every per-card key published (each checked against its step
when it arrived), the deals (round, pos) -> role, the positions opened by
their holder, and which event carried each of them. ``pbem.game.Replay``
holds one and hands it each deck message (``record``); it asks it for the
cards its perspective can see (``card``) and for the whole-deck audit
(``audit``). What the ledger cannot know by itself (the game id, the roles,
the seeds this replay can see, which labels are committed) is passed in by
the Replay as a ``Seats`` view.

``data()``/``from_data`` turn a ledger into the plain, typed ``DeckData``
that the replay cache (pbem.snapshot) stores, and back. The cache stores it
as JSON (``encoded``), and a ledger restored from it (``from_encoded``)
decodes that JSON only when something first reads it: most commands that
restore a cache (an ordinary turn received, a report shown) never touch
the deck, and a late game's deck is most of its cache (issue 20).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, NamedTuple, Protocol

import msgspec

from pbem import deck as deckmod
from pbem.deck import DeckError
from pbem.errors import BadFile


class Seats(Protocol):
    """What the ledger needs to know of the replay that holds it."""

    @property
    def game_id(self) -> bytes: ...

    @property
    def deck_group(self) -> deckmod.AnyGroup: ...

    def other(self, role: str) -> str: ...

    def has_role(self, role: str) -> bool: ...

    def committed(self, label: str) -> bool: ...

    def value(self, label: str) -> bytes | None:
        """The value of commitment ``label`` if this replay knows it (opened, or its own)."""
        ...


class AuditInput(NamedTuple):
    """The input of ``deckmod.audit_rounds`` for a whole game (``DeckLedger.audit_input``)."""

    rounds: list[deckmod.DeckRound]
    openings: list[deckmod.KeyOpening]
    authors: dict[str, tuple[str, str]]


# -- the plain form of a ledger (the replay cache) -------------------------------


class SourceData(msgspec.Struct, frozen=True, array_like=True):
    """A ``deckmod.Card`` (pos -1) or ``deckmod.Carry`` (label = its round)."""

    label: str
    pos: int = -1


class StepData(msgspec.Struct, frozen=True, array_like=True):
    """A ``deckmod.Step``, its elements as plain strings.

    The cache holds only what this player's replay already checked, and it is
    authenticated (sealed like the vault): decoding it again through the wire
    types' hex patterns cost about half of a receive on a 20-month log."""

    round: str
    step: int
    cards: list[str]
    commits: list[str]
    sources: list[SourceData] = []


class KeyData(msgspec.Struct, frozen=True, array_like=True):
    round: str
    step: int
    index: int
    key: str
    salt: str


class DeckData(msgspec.Struct, frozen=True):
    """The shared deck as a ledger holds it; a round's sources are those of its step 1."""

    rounds: dict[str, list[StepData]] = {}
    first: dict[str, str] = {}
    keys: list[KeyData] = []
    dealt: list[tuple[str, int, str]] = []
    opened: list[tuple[str, int, str]] = []
    where: list[tuple[str, int, int, str]] = []


def _source_out(src: deckmod.Source) -> SourceData:
    return SourceData(src.label) if isinstance(src, deckmod.Card) else SourceData(src.round, src.pos)


def _source_in(src: SourceData) -> deckmod.Source:
    return deckmod.Card(label=src.label) if src.pos < 0 else deckmod.Carry(round=src.label, pos=src.pos)


def _step_out(step: deckmod.Step) -> StepData:
    return StepData(step.round, step.step, step.cards, step.commits, [_source_out(s) for s in step.sources])


def _step_in(step: StepData) -> deckmod.Step:
    return deckmod.Step(round=step.round, step=step.step, cards=step.cards, commits=step.commits,
                        sources=[_source_in(s) for s in step.sources])


# -- the ledger -------------------------------------------------------------------


@dataclass
class DeckLedger:
    """Steps per round in play order, each round's first role and input deck,
    every key published (checked), the deals (round, pos) -> role, the
    positions opened by their holder, and (round, step or -2 - pos for a
    deal or an opening) -> (seq, author) of the event that carried it.

    The fields are the ledger's own: read them, never write them from
    outside; ``fork`` gives an independent copy."""

    rounds: dict[str, list[deckmod.Step]] = field(default_factory=dict)
    first: dict[str, str] = field(default_factory=dict)
    sources: dict[str, list[deckmod.Source]] = field(default_factory=dict)
    keys: dict[tuple[str, int, int], deckmod.KeyOpening] = field(default_factory=dict)
    dealt: dict[tuple[str, int], str] = field(default_factory=dict)
    opened: dict[tuple[str, int], str] = field(default_factory=dict)
    where: dict[tuple[str, int], tuple[int, str]] = field(default_factory=dict)
    _cards: dict[tuple[str, int], str] = field(default_factory=dict, repr=False, compare=False)
    #: None: every element is checked as it is read (``deckmod.parse_elem``). A
    #: set: elements are read unchecked and collected here; whoever set it
    #: checks them all before trusting this ledger (pbem.logcheck).
    unchecked: deckmod.Unchecked | None = field(default=None, repr=False, compare=False)
    #: Multiplications of ``card`` computed ahead by a second process (pbem.logcheck).
    exp_hints: deckmod.ExpHints | None = field(default=None, repr=False, compare=False)
    #: The JSON of this ledger's ``DeckData`` not decoded yet, or what reads it
    #: (``from_encoded``): while it is set, the fields above from ``rounds`` to
    #: ``_cards`` are absent from the instance, and the first read of any of them
    #: decodes it.
    _encoded: bytes | Callable[[], bytes] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_encoded(cls, encoded: bytes | Callable[[], bytes]) -> DeckLedger:
        """The ledger whose ``encoded()`` JSON is ``encoded``, or what a call of
        ``encoded`` returns (trusted, as for ``from_data``: the replay cache's own,
        authenticated), read and decoded when one of its fields is first read."""
        ledger = cls.__new__(cls)
        ledger.unchecked = None
        ledger.exp_hints = None
        ledger._encoded = encoded
        return ledger

    def source(self) -> bytes | Callable[[], bytes] | None:
        """What ``from_encoded`` was given, while this ledger was never read (None after)."""
        return self._encoded

    def encoded(self) -> bytes:
        """This ledger's ``DeckData`` as JSON: what ``from_encoded`` reads. A
        ledger never decoded gives back the very bytes it was made from."""
        src = self._encoded
        if src is None:
            return msgspec.json.encode(self.data())
        if not isinstance(src, bytes):
            src = self._encoded = src()  # read once; still not decoded
        return src

    def _decode(self) -> None:
        src, self._encoded = self._encoded or b"", None
        encoded = src if isinstance(src, bytes) else src()
        try:
            d = msgspec.json.decode(encoded, type=DeckData)
        except msgspec.DecodeError as exc:  # an authenticated cache of this very pbem version: never expected
            raise BadFile.in_cache(f"shared deck cannot be read ({exc})") from None
        self.__dict__.update(DeckLedger.from_data(d).__dict__, unchecked=self.unchecked, exp_hints=self.exp_hints,
                             _encoded=None)

    if not TYPE_CHECKING:  # mypy keeps checking every attribute name of a ledger
        def __getattr__(self, name: str):
            # Called only for an attribute the instance lacks: a field of a ledger
            # made by from_encoded and not decoded yet.
            if self.__dict__.get("_encoded") is None or name not in _DECODED:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            self._decode()
            return self.__dict__[name]

    def fork(self) -> DeckLedger:
        """An independent copy (steps, sources and keys are immutable and shared)."""
        if self._encoded is not None:
            return DeckLedger.from_encoded(self._encoded)
        return DeckLedger(rounds={k: list(v) for k, v in self.rounds.items()}, first=dict(self.first),
                          sources=dict(self.sources), keys=dict(self.keys), dealt=dict(self.dealt),
                          opened=dict(self.opened), where=dict(self.where), _cards=dict(self._cards))

    def __bool__(self) -> bool:
        """Whether any round was started."""
        return bool(self.rounds)

    # -- queries -------------------------------------------------------------

    def steps(self, rnd: str) -> list[deckmod.Step]:
        """The shuffle steps of round ``rnd`` published so far (a copy)."""
        return list(self.rounds.get(rnd, []))

    def history(self) -> dict[str, deckmod.DeckRound]:
        """Every completed round (all ``deckmod.STEPS`` steps)."""
        return {r: deckmod.DeckRound(steps=s) for r, s in self.rounds.items() if len(s) == deckmod.STEPS}

    def own_step(self, rnd: str, role: str) -> int:
        """The step whose per-card keys ``role`` holds in round ``rnd``."""
        return 3 if self.first.get(rnd) == role else 4

    def event_of(self, exc: DeckError) -> str:
        """'event N by X: ...' for an audit DeckError (the step's event, or the round's first)."""
        hit = self.where.get((exc.round, exc.step)) or self.where.get((exc.round, 1))
        if hit is None:
            return str(exc)
        seq, author = hit
        return f"event {seq} by {author}: {exc}"

    # -- recording a deck message ----------------------------------------------

    def record(self, seats: Seats, task: deckmod.DeckTask, action: deckmod.DeckAction, author: str,
               seq: int) -> None:
        """Check a deck message of ``author`` in event ``seq`` against the task the
        rules set (``check_step``, every key against its commitment, deals and
        openings exactly as the rules asked) and record it. DeckError on the
        first problem; the ledger must then be discarded with its replay."""
        self._message(seats, task, action, author, seq)
        # The card memo stays: it holds only cards this replay could read, a
        # reader's knowledge only grows, and a card's label at (round, position)
        # never changes once the round is complete (a reshuffle is a new round).

    def _message(self, seats: Seats, task: deckmod.DeckTask, action: deckmod.DeckAction, author: str,
                 seq: int) -> None:
        g, game = seats.deck_group, seats.game_id
        if isinstance(action, deckmod.DeckStep):
            if task.kind != "step":
                raise DeckError("a shuffle step where key openings are due")
            rnd = task.round
            done = self.rounds.get(rnd, [])
            if not done:
                if rnd in self.rounds or not seats.has_role(task.first):
                    raise DeckError("round label used twice or no first player", rnd, 1, author)
                resolve = deckmod.history_resolver(g, self.history(), self.unchecked)
                before = {s for r, sources in self.sources.items() if r != rnd for s in sources
                          if isinstance(s, deckmod.Carry)}
                for src in task.sources:
                    if isinstance(src, deckmod.Carry) and src in before:
                        raise DeckError(f"position {src.pos} of {src.round!r} was carried before", rnd, 1, author)
                deckmod.input_elements(g, game, task.sources, resolve)
            first = self.first.get(rnd, task.first)
            number = len(done) + 1
            if author != (first if number % 2 else seats.other(first)):
                raise DeckError(f"step {number} is not {author}'s", rnd, number, author)
            deckmod.check_step(g, task.sources, done, action.step, self.unchecked)
            if number <= 2 and not seats.committed(deckmod.seed_label(rnd, author)):
                raise DeckError("the author's seed for the round is not committed", rnd, number, author)
            self.rounds[rnd] = done + [action.step]
            self.first[rnd] = first
            self.sources[rnd] = list(task.sources)
            self.where[(rnd, number)] = (seq, author)
            want = list(task.deal) if number >= 3 else []
            self._keys_for(seats, rnd, action.deal, want, number, author, seq)
            return
        if task.kind != "keys":
            raise DeckError("key openings where a shuffle step is due")
        self._keys_for(seats, task.round, action.deal, list(task.deal), None, author, seq)
        want_open = list(task.open)
        if [(k.round, k.index) for k in action.open] != [tuple(o) for o in want_open]:
            raise DeckError(f"opens {[(k.round, k.index) for k in action.open]}, the rules ask for {want_open}")
        for k in action.open:
            if self.dealt.get((k.round, k.index)) != author:
                raise DeckError(f"position {k.index} was not dealt to {author}", k.round, 0, author)
            if (k.round, k.index) in self.opened:
                raise DeckError(f"position {k.index} is opened twice", k.round, 0, author)
            self._check_key(seats, k, author)
            self.opened[(k.round, k.index)] = author
            self.where[(k.round, -2 - k.index)] = (seq, author)

    def _check_key(self, seats: Seats, k: deckmod.KeyOpening, author: str) -> None:
        steps = self.rounds.get(k.round)
        if steps is None:
            raise DeckError("key for a round that does not exist", k.round, k.step, author)
        if k.step != self.own_step(k.round, author):
            raise DeckError(f"key of step {k.step}, not {author}'s per-card key", k.round, k.step, author)
        deckmod.check_key(seats.deck_group, seats.game_id, deckmod.DeckRound(steps=steps), k)
        self.keys[(k.round, k.step, k.index)] = k

    def _keys_for(self, seats: Seats, rnd: str, keys: list[deckmod.KeyOpening], want: list[int],
                  number: int | None, author: str, seq: int) -> None:
        if [k.index for k in keys] != want or any(k.round != rnd for k in keys):
            raise DeckError(f"deals positions {[k.index for k in keys]}, the rules deal {want}", rnd, number or 0, author)
        other = seats.other(author)
        for k in keys:
            if (rnd, k.index) in self.dealt:
                raise DeckError(f"position {k.index} dealt twice", rnd, k.step, author)
            self._check_key(seats, k, author)
            self.dealt[(rnd, k.index)] = other
            self.where[(rnd, -2 - k.index)] = (seq, author)

    # -- what a perspective sees ---------------------------------------------------

    def _key(self, seats: Seats, rnd: str, step: int, pos: int, role: str) -> int | None:
        k = self.keys.get((rnd, step, pos))
        if k is not None:
            return int(k.key, 16)
        seed = seats.value(deckmod.seed_label(rnd, role))
        if seed is None or len(seed) != 32:
            return None
        return deckmod.round_key(seats.deck_group, seats.game_id, rnd, seed, step, pos)

    def card(self, seats: Seats, rnd: str, pos: int) -> str | None:
        """The label at position ``pos`` of round ``rnd`` if ``seats`` can see it:
        its own card (the opponent's key dealt it), a card opened by its holder,
        every card in an audit. None otherwise."""
        hit = self._cards.get((rnd, pos))
        if hit is not None:
            return hit
        steps = self.rounds.get(rnd)
        if steps is None or len(steps) != deckmod.STEPS:
            return None
        first = self.first[rnd]
        k1 = self._key(seats, rnd, 3, pos, first)
        k2 = self._key(seats, rnd, 4, pos, seats.other(first))
        if k1 is None or k2 is None:
            return None
        try:
            label = deckmod.unlock(seats.deck_group, seats.game_id, self.history(), rnd, pos, k1, k2, self.unchecked,
                                   self.exp_hints)
        except DeckError:
            return None
        self._cards[(rnd, pos)] = label
        return label

    def audit_input(self, seats: Seats) -> AuditInput:
        """What ``audit`` hands ``deckmod.audit_rounds``: the completed rounds, every
        key (published, and derived from the opened seeds) and each round's roles."""
        g, game = seats.deck_group, seats.game_id
        names = [r for r, s in self.rounds.items() if len(s) == deckmod.STEPS]
        authors = {r: (self.first[r], seats.other(self.first[r])) for r in names}
        openings: list[deckmod.KeyOpening] = list(self.keys.values())
        for r in names:
            n = len(self.sources[r])
            for index, role in enumerate(authors[r]):
                seed = seats.value(deckmod.seed_label(r, role))
                if seed is None or len(seed) != 32:
                    raise DeckError("the seed of the round was never opened", r, 1 + index, role)
                openings += deckmod.open_all(g, game, r, seed, index, n)
        return AuditInput([deckmod.DeckRound(steps=self.rounds[r]) for r in names], openings, authors)

    def audit(self, seats: Seats, rounds_done: Callable[[AuditInput], list[deckmod.Dealt] | None] | None = None
              ) -> list[deckmod.Dealt]:
        """``audit_deck`` over every completed round with every seed opened, then
        the game invariants: the deck and the cards outside it always make the
        one deck of the first round (nothing lost, nothing in two places), every
        card opened was dealt to its opener. DeckError names round, step and author;
        ``event_of`` turns it into the event.

        ``rounds_done``: ``deckmod.audit_rounds``' result for exactly this input,
        computed another way (pbem.logcheck: its arithmetic shared with a second
        process), or None to compute it here."""
        g, game = seats.deck_group, seats.game_id
        given = self.audit_input(seats)
        rounds, openings, authors = given.rounds, given.openings, given.authors
        draws = [deckmod.Draw(round=r, pos=p, to=to) for (r, p), to in self.dealt.items() if r in authors]
        done = rounds_done(given) if rounds_done is not None else None
        if done is None:
            done = deckmod.audit_rounds(g, game, rounds, openings, authors, self.unchecked)
        dealt = deckmod.deal(done, draws)
        universe: set[str] = set()
        outside: set[str] = set()
        deck_now: set[str] = set()
        by_round = {d.round: d for d in dealt}
        for d in dealt:
            entering = set()
            for src in self.sources[d.round]:
                if isinstance(src, deckmod.Card):
                    if src.label in universe:
                        raise DeckError(f"card {src.label!r} enters the deck while it is already in play",
                                        d.round, 1, authors[d.round][0])
                    universe.add(src.label)
                    entering.add(src.label)
                else:
                    old = by_round[src.round]
                    label = old.labels[src.pos]
                    if old.holders[src.pos]:
                        outside.discard(label)
                    else:
                        deck_now.discard(label)
                    entering.add(label)
            if deck_now:
                raise DeckError(f"{len(deck_now)} undealt card(s) of the previous round left out of the reshuffle",
                                d.round, 1, authors[d.round][0])
            if entering & outside or entering != set(d.labels) or (entering | outside) != universe:
                raise DeckError("the new deck and the cards in play are not the one deck", d.round, 1,
                                authors[d.round][0])
            deck_now = set(d.labels)
            for pos, holder in enumerate(d.holders):
                if holder:
                    deck_now.discard(d.labels[pos])
                    outside.add(d.labels[pos])
        for (r, p), who in self.opened.items():
            if self.dealt.get((r, p)) != who:
                raise DeckError(f"position {p} opened by {who}, who was not dealt it", r, 0, who)
        return dealt

    # -- the plain form --------------------------------------------------------------

    def data(self) -> DeckData:
        """The ledger as plain, typed data (what the replay cache stores)."""
        return DeckData(rounds={r: [_step_out(s) for s in steps] for r, steps in self.rounds.items()},
                        first=dict(self.first),
                        keys=[KeyData(k.round, k.step, k.index, k.key, k.salt) for k in self.keys.values()],
                        dealt=[(r, p, who) for (r, p), who in self.dealt.items()],
                        opened=[(r, p, who) for (r, p), who in self.opened.items()],
                        where=[(r, s, seq, who) for (r, s), (seq, who) in self.where.items()])

    @classmethod
    def from_data(cls, d: DeckData) -> DeckLedger:
        """The ledger ``data()`` described (trusted: only ever a checked ledger's own data)."""
        rounds = {k: [_step_in(s) for s in v] for k, v in d.rounds.items()}
        return cls(rounds=rounds, first=dict(d.first),
                   sources={k: list(v[0].sources) for k, v in rounds.items()},
                   keys={(k.round, k.step, k.index): deckmod.KeyOpening(round=k.round, step=k.step, index=k.index,
                                                                        key=k.key, salt=k.salt) for k in d.keys},
                   dealt={(rnd, p): who for rnd, p, who in d.dealt},
                   opened={(rnd, p): who for rnd, p, who in d.opened},
                   where={(rnd, s): (seq, who) for rnd, s, seq, who in d.where})


#: An empty ledger's ``DeckLedger.encoded``.
NO_DECK = msgspec.json.encode(DeckData())

#: The fields ``DeckLedger.from_encoded`` leaves to be decoded on first read:
#: all but the two a caller sets and the undecoded JSON itself.
_DECODED = frozenset(f.name for f in fields(DeckLedger)) - {"unchecked", "exp_hints", "_encoded"}
