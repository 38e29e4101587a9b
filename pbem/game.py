"""Replaying a game log: verification and the fold of events into rules state.

``Replay`` applies stored events one by one, in the order of DESIGN 3:
size and form, signature by the author's genesis key, ``game``/``seq``/
``prev`` continuity, the author's turn, the entropy reveal, every opening,
dice owed to the previous event, then every action through the rules'
``check`` and ``apply``. The first failure raises a PbemError naming the
event and the problem; a Replay that raised must be discarded (callers work
on a ``fork()`` when they need all-or-nothing).

The public API beside ``apply_stored``: ``fork`` (an independent copy:
applying events to one fork is never seen through another), ``simulate``
(an unsigned body applied to a fork), ``with_known``, ``open_event`` (an
unsigned event folded action by action: ``OpenEvent``, what pbem.session
composes drafts with), ``snapshot``/``restored`` (the fold as the plain
``ReplayData`` the replay cache stores), the queries ``value``,
``committed``, ``is_opened``, ``unopened``, ``commitment_authors``,
``entropy_seq_of``, ``format_action``, and the shared deck's ``ledger``
(pbem.ledger) with ``card``, ``deck_audit`` and ``deck_event``.

One Replay takes one *perspective*: public (keys only), a player (their own
secrets are known), or an audit (every opening in the log is known from the
start, so every deferred check becomes an immediate one).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload

import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from pbem import codec
from pbem import deck as deckmod
from pbem.codec import Body, CodecError, Unwrapped
from pbem.commit import LeafOpening as LeafProof
from pbem.commit import decode_leaves, opens, set_opens, verify_leaf
from pbem.deck import DECK, DeckError
from pbem.dice import entropy_commitment, roll, roll_one
from pbem.errors import (
    BadFile,
    ForeignGame,
    IllegalAction,
    PbemError,
    UsageProblem,
    VerifyError,
    VersionMismatch,
)
from pbem.identity import parse_public, verify_signature
from pbem.ledger import NO_DECK, AuditInput, DeckLedger
from pbem.rulesapi import (
    ACTION,
    DICE,
    NOBODY,
    OPENINGS,
    ROLL,
    Decision,
    Happening,
    Outcome,
    RulesError,
    RulesModule,
    Step,
    data_hash,
    option_problems,
)
from pbem.text import shown

AUDIT = "*"


class CommitRecord(msgspec.Struct, frozen=True, array_like=True):
    digest: bytes
    seq: int
    author: str
    kind: str = ""  # "set": a Merkle set root (pbem.commit)


class DiceOrigin(msgspec.Struct, frozen=True):
    """Dice asked for in event ``seq`` by ``author``; rolled when the opponent answers."""

    seq: int
    event_hash: bytes
    author: str
    x_author: bytes
    sides: tuple[int, ...]
    secret: tuple[str, ...] = ()
    #: What each die decides, in the rules' words (Decision.purposes).
    purposes: tuple[str, ...] = ()
    #: Sealed standing orders the answer must open (Decision.openings).
    openings: tuple[str, ...] = ()


class SecretDie(msgspec.Struct, frozen=True):
    """A secret die rolled with the seed committed as its label (DESIGN 5)."""

    event_hash: bytes
    index: int
    x_opponent: bytes
    sides: int


class Roll(msgspec.Struct, frozen=True, array_like=True):
    """A resolved request: asked in ``asked_seq``, rolled on receipt of ``rolled_seq``."""

    asked_seq: int
    rolled_seq: int
    asker: str
    sides: tuple[int, ...]
    values: tuple[int | None, ...]  # None: a secret die this replay cannot see
    #: What each die decided (the request's purposes) and what the roll did,
    #: in the rules' words (``describe_roll``).
    purposes: tuple[str, ...] = ()
    results: tuple[str, ...] = ()


class TakenBack(msgspec.Struct, frozen=True, array_like=True):
    """A takeback granted (decision 28): ``asker``'s events ``first``..``last``
    were taken back by agreement; the granting event's EventInfo carries it."""

    first: int
    last: int
    asker: str


class EventInfo(msgspec.Struct, frozen=True, array_like=True):
    seq: int
    author: str
    hash: bytes
    actions: tuple[str, ...]
    commits: int
    reveals: tuple[str, ...]
    note: str
    rolls: Roll | None
    #: The rules' ``turn_label`` when the event began (before the dice it
    #: answers, which belong to the turn that asked for them), and what
    #: the event made happen for this replay's reader (``Rules.happenings``).
    turn: str = ""
    happenings: tuple[Happening, ...] = ()
    #: The event's signed time (seconds since 1970 UTC; 0 before format version 2).
    time: int = 0
    #: What the event did to the game as a whole (``Body.end``, decision 26).
    end: str = ""
    #: The takeback this event granted (decision 28), None for any other event.
    takeback: TakenBack | None = None


class History(Sequence[EventInfo]):
    """A replay's history: one EventInfo per event, in log order (a list that
    only grows: ``append``).

    A replay restored from the cache (``Replay.restored``) holds the entries
    before its last one as the JSON the cache saved them in, and decodes them
    the first time one of them is read: a receive reads the last entry and the
    new ones only, and a late game's history was the largest part of what its
    cache decoded and encoded again at every command (issue 20). Reading any
    entry, iterating or comparing gives what a plain list would."""

    __slots__ = ("_older", "_count", "_items")

    def __init__(self, items: Iterable[EventInfo] = ()) -> None:
        #: The first ``_count`` entries as a JSON array, not decoded yet (None: none).
        self._older: bytes | None = None
        self._count = 0
        #: The other entries, decoded.
        self._items: list[EventInfo] = list(items)

    @classmethod
    def from_parts(cls, older: bytes, count: int, newer: Iterable[EventInfo]) -> History:
        """The ``parts`` of a history (trusted: the replay cache's own, authenticated)."""
        history = cls(newer)
        if count:
            history._older, history._count = older, count
        return history

    def parts(self) -> tuple[bytes, int, list[EventInfo]]:
        """(every entry but the last as a JSON array, how many, [the last entry]):
        what the replay cache stores. Entries never decoded are given back as the
        very JSON they came as."""
        items = self._items
        newer, rest = (items[-1:], items[:-1]) if items else ([], [])
        if not rest:
            return self._older or b"[]", self._count, newer
        encoded = msgspec.json.encode(rest)
        if self._older is None:
            return encoded, len(rest), newer
        return self._older[:-1] + b"," + encoded[1:], self._count + len(rest), newer

    def _all(self) -> list[EventInfo]:
        if self._older is not None:
            try:
                older = msgspec.json.decode(self._older, type=list[EventInfo])
            except msgspec.DecodeError as exc:  # an authenticated cache of this very pbem version: never expected
                raise BadFile.in_cache(f"history cannot be read ({exc})") from None
            if len(older) != self._count:
                raise BadFile.in_cache("history holds the wrong number of events")
            self._items = older + self._items
            self._older, self._count = None, 0
        return self._items

    def append(self, info: EventInfo) -> None:
        self._items.append(info)

    def copy(self) -> History:
        """An independent copy (entries are immutable and shared; so is the undecoded JSON)."""
        twin = History(self._items)
        twin._older, twin._count = self._older, self._count
        return twin

    def __len__(self) -> int:
        return self._count + len(self._items)

    @overload
    def __getitem__(self, index: int) -> EventInfo: ...

    @overload
    def __getitem__(self, index: slice) -> list[EventInfo]: ...

    def __getitem__(self, index: int | slice) -> EventInfo | list[EventInfo]:
        if isinstance(index, slice):
            return self._all()[index]
        at = index + len(self) if index < 0 else index
        if self._count <= at < len(self):
            return self._items[at - self._count]  # a newer entry: nothing to decode
        return self._all()[index]

    def __iter__(self) -> Iterator[EventInfo]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, History):
            return self._all() == other._all()
        if isinstance(other, list):
            return self._all() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        return f"History({self._all()!r})"


class Owed(msgspec.Struct, frozen=True, array_like=True):
    """Who owes the pending decision, since which event (the one after which the
    decision passed to ``role``) and that event's signed time (0: none signed)."""

    role: str
    seq: int
    time: int = 0


class OriginData(msgspec.Struct, frozen=True):
    seq: int
    event_hash: str
    author: str
    x: str
    sides: tuple[int, ...]
    secret: tuple[str, ...] = ()
    purposes: tuple[str, ...] = ()
    openings: tuple[str, ...] = ()


class SecretDieData(msgspec.Struct, frozen=True):
    event_hash: str
    index: int
    x: str
    sides: int


class ReplayData(msgspec.Struct, frozen=True):
    """A Replay's fold as plain, typed data (``Replay.snapshot``, ``Replay.restored``):
    what the replay cache (pbem.snapshot) stores. Bytes are hex; the rules state
    is its JSON encoding, decoded with the rules' ``state_type``."""

    seq: int
    head: str
    state: msgspec.Raw
    #: label -> its commitment, in log order.
    commitments: dict[str, CommitRecord]
    opened: dict[str, str]
    entropy_commit: dict[str, str]
    entropy_seq: dict[str, int]
    #: The history's last entry ([] before the genesis), and the entries before it
    #: as a JSON array of ``history_older_count`` EventInfo (``History.parts``).
    history: list[EventInfo]
    dice_origin: OriginData | None = None
    secret_dice: dict[str, SecretDieData] = {}
    #: Opened leaves of Merkle sets: [label, key, value hex].
    leaves: list[tuple[str, str, str]] = []
    #: The shared deck's ``DeckData`` as JSON (``DeckLedger.encoded``): decoded
    #: only when the restored replay first reads its ledger.
    deck: msgspec.Raw = msgspec.Raw(b"{}")
    #: The time control's ledger (docs/protocol.md decision 23).
    owed: Owed | None = None
    leave_used: dict[str, int] = {}
    #: The engine's end of the game (a resignation, a draw agreed; decision 26).
    ended: Outcome | None = None
    #: The event holding the draw offer that stands (-1: none).
    draw_offer: int = -1
    history_older: msgspec.Raw = msgspec.Raw(b"[]")
    history_older_count: int = 0


class _Ctx:
    """The Ctx handed to the rules (see pbem.rulesapi.Ctx)."""

    __slots__ = ("_replay", "seq", "author")

    def __init__(self, replay: Replay, seq: int, author: str) -> None:
        self._replay = replay
        self.seq = seq
        self.author = author

    @property
    def role(self) -> str | None:
        return self._replay.role

    def value(self, label: str) -> bytes | None:
        return self._replay.value(label)

    def committed(self, label: str) -> bool:
        return self._replay.committed(label)

    def opened(self, label: str) -> bool:
        return self._replay.is_opened(label)

    def leaf(self, label: str, key: str) -> bytes | None:
        return self._replay.leaf(label, key)

    def leaves(self, label: str, keys: Iterable[str]) -> list[bytes | None]:
        return self._replay.leaf_values(label, keys)

    def card(self, rnd: str, pos: int) -> str | None:
        return self._replay.card(rnd, pos)


class _Event(msgspec.Struct):
    """An event being folded: what its start found, the action labels so far."""

    seq: int
    author: str
    where: str
    x: bytes
    rolled: Roll | None
    game_over: bool = False
    #: A granted takeback (decision 28): the game as it was after the event
    #: before the span, rebuilt; ``_finish`` puts its fold in place.
    rewind: Replay | None = None
    #: A game action (not a deck message) was applied: the author played on.
    played: bool = False
    labels: list[str] = msgspec.field(default_factory=list)
    said: list[Happening] = msgspec.field(default_factory=list)
    turn: str = ""


_T = TypeVar("_T")


class OpenEvent:
    """An unsigned event of one author folded as far as its actions so far, not
    yet ended (``Replay.open_event``). Immutable: ``add`` and ``close`` work on
    forks, so an OpenEvent can be extended twice in two ways, and a refused
    action leaves it as it was.

    ``add`` differs from folding the whole longer body in one way only: the
    commitments and secret values the new action brings are recorded just
    before it, where a whole body records every commitment of the event before
    its first action. Actions already added were judged without them; a rule
    that let an action depend on a *later* action's commitment in the same
    event would be judged differently here (no game does; the event is folded
    whole again when it is signed and sent, so nothing is ever signed on this
    path alone). An action that opens a value or a leaf changes the state
    before all actions of a whole body: it cannot be added (``addable``)."""

    __slots__ = ("_body", "_event", "_replay")

    def __init__(self, replay: Replay, event: _Event, body: Body) -> None:
        self._replay = replay
        self._event = event
        self._body = body

    @property
    def body(self) -> Body:
        """The body of the actions so far (its commitments as folded)."""
        return self._body

    @staticmethod
    def addable(reveals: Sequence[str], leaves: Sequence[object]) -> bool:
        """Whether an action with these openings can be added (none: see the class)."""
        return not reveals and not leaves

    def add(self, raw: msgspec.Raw, commits: Sequence[codec.Commitment] = (),
            known: Mapping[str, bytes] | None = None) -> OpenEvent:
        """A new OpenEvent: this one with ``commits`` recorded, ``known`` values
        known, then the action ``raw`` checked and applied (one rules step).
        Raises the PbemError folding the whole body would raise for that action."""
        body = self._body
        twin = self._replay.fork()
        if known:
            twin._learn(known)
        ev = msgspec.structs.replace(self._event, labels=list(self._event.labels), said=list(self._event.said))
        index = len(body.actions) + 1
        judging: list[Any] = []

        def step() -> None:
            if ev.game_over:  # as _begin says of a whole body with actions
                raise IllegalAction(f"{ev.where}: the game is over; only openings for the audit may follow")
            twin._commit(commits, ev.seq, ev.author, ev.where)
            twin._act(ev, index, raw, judging)

        twin._judged(body, judging, step)
        longer = msgspec.structs.replace(body, actions=[*body.actions, raw], commits=[*body.commits, *commits])
        return OpenEvent(twin, ev, longer)

    def close(self, body: Body | None = None) -> Replay:
        """The replay after the event, ended as ``body`` (by default the body of
        the actions so far): the dice it asks for, its entropy commitment, its
        hash as head. ``body`` must hold the same actions and commitments."""
        body = self._body if body is None else body
        twin = self._replay.fork()
        ev = msgspec.structs.replace(self._event, labels=list(self._event.labels), said=list(self._event.said))
        twin._judged(body, [], lambda: twin._finish(ev, body, codec.sha256(codec.canonical(body))))
        return twin


@dataclass
class Replay:
    """The fold of a verified log prefix, from one perspective."""

    rules: RulesModule
    role: str | None = None
    known: Mapping[str, bytes] = field(default_factory=dict)
    check_data_hash: bool = True

    game_id: bytes = b""
    genesis: codec.Genesis | None = None
    keys: dict[str, Ed25519PublicKey] = field(default_factory=dict)
    seq: int = -1
    head: bytes = b""
    state: Any = None
    commitments: dict[str, CommitRecord] = field(default_factory=dict)
    opened: dict[str, bytes] = field(default_factory=dict)
    entropy_commit: dict[str, bytes] = field(default_factory=dict)
    entropy_seq: dict[str, int] = field(default_factory=dict)
    dice_origin: DiceOrigin | None = None
    secret_dice: dict[str, SecretDie] = field(default_factory=dict)
    #: (set label, key) -> value of every leaf opened in the log.
    leaves: dict[tuple[str, str], bytes] = field(default_factory=dict)
    history: History = field(default_factory=History)
    _sets: dict[str, dict[str, bytes]] = field(default_factory=dict, repr=False)
    #: The shared deck (pbem.deck, DESIGN 4): its own ledger (pbem.ledger).
    ledger: DeckLedger = field(default_factory=DeckLedger)
    #: The game's format version, fixed by its genesis (decision 9b).
    version: int = codec.FORMAT_VERSION
    #: Who owes the pending decision since when (None: nobody; decision 23).
    owed: Owed | None = None
    #: Seconds each role has replied later than the time control allows (its leave used).
    leave_used: dict[str, int] = field(default_factory=dict)
    #: How the game ended by a terminal event (a resignation, a draw agreed:
    #: decision 26); None while it goes on or when the rules ended it.
    ended: Outcome | None = None
    #: The event holding the draw offer that stands (-1: none).
    draw_offer: int = -1
    #: Word the events for people (``describe_action``, ``describe_roll``, ``happenings``
    #: in the history). ``pbem verify`` and ``pbem audit`` judge legality and print no
    #: history: they replay without (docs/protocol.md, "What verify and audit compute").
    describe: bool = True
    #: How an event's signature is checked: (the author's key, the unwrapped
    #: event) -> valid. None: here and now (``verify_signature``); pbem.logcheck
    #: gives the same answers, computed by its second process.
    signature_check: Callable[[Ed25519PublicKey, Unwrapped], bool] | None = field(
        default=None, repr=False, compare=False)
    #: How stored bytes are split into body and signature: None, ``codec.unwrap``;
    #: pbem.logcheck gives the same result, reading the bytes its second process
    #: unwrapped already with ``codec.unwrap_vouched``.
    unwrapper: Callable[[bytes], Unwrapped] | None = field(default=None, repr=False, compare=False)
    #: Whole-set openings checked ahead by pbem.logcheck's second process (the same
    #: ``set_opens``): (root, seed, sha256 of the encoded leaves) -> whether it opens.
    set_hints: Mapping[tuple[bytes, bytes, bytes], bool] | None = field(default=None, repr=False, compare=False)
    #: Event bodies decoded already (``audit_knowledge`` decodes every body of the
    #: log the audit then replays): signed bytes -> ``codec.decode_body`` of them,
    #: taken (and dropped) instead of decoding those bytes again.
    decoded: dict[bytes, Body] | None = field(default=None, repr=False, compare=False)
    #: The salt of each ``known`` value (label -> salt): a value counts only for a
    #: commitment it opens. After a takeback (decision 28) a label may be committed
    #: again with another value; the perspective knows the new one only, and the
    #: taken-back commitment of the same label stays hidden from it, as it would be
    #: from the public. A label without a salt here is trusted as before.
    known_salts: Mapping[str, bytes] = field(default_factory=dict, repr=False)
    #: Reads stored event ``seq`` of this log (a game directory's): what a takeback's
    #: rebuild reads of the events this replay did not apply itself (restored from a cache).
    event_reader: Callable[[int], bytes] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Bookkeeping, not part of the fold (no dataclass fields: never compared or cached).
        #: The stored bytes of the events this replay applied, from seq ``_log_start``: the
        #: first ``_log_len`` of ``_log``, a list forks share (each appends only at its end).
        self._log: list[bytes] = []
        self._log_start = 0
        self._log_len = 0
        #: Memo of known values checked against a commitment: (label, digest, value, salt) -> opens.
        self._opens_memo: dict[tuple[str, bytes, bytes, bytes], bool] = {}

    # -- public queries -------------------------------------------------

    @property
    def commit_domain(self) -> bytes:
        """Game-specific input of every commitment: the genesis nonce (the game id
        does not exist yet when genesis commitments are made)."""
        return bytes.fromhex(self.genesis.nonce) if self.genesis is not None else b""

    @property
    def game_hex(self) -> str:
        return self.game_id.hex()

    @property
    def deck_group(self) -> deckmod.AnyGroup:
        """The group of the game's shared deck, fixed by its format version (docs/protocol.md decision 29)."""
        return deckmod.play_group(self.version)

    @property
    def started(self) -> codec.Genesis:
        """The genesis of a replay that has taken it; VerifyError before that."""
        if self.genesis is None:
            raise VerifyError("the log has no genesis yet")
        return self.genesis

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(self.keys)

    def other(self, role: str) -> str:
        others = [r for r in self.keys if r != role]
        return others[0]

    def pending(self) -> Decision | None:
        if self.state is None or self.outcome() is not None:
            return None
        return self.rules.pending(self.state)

    def outcome(self) -> Outcome | None:
        """How the game ended: by a terminal event (``ended``) or by the rules; None while it goes on."""
        if self.ended is not None:
            return self.ended
        return None if self.state is None else self.rules.outcome(self.state)

    def standing_offer(self) -> tuple[str, int] | None:
        """The draw offer that stands (its author and event), None if none does."""
        if self.draw_offer < 0 or self.ended is not None:
            return None
        return self.history[self.draw_offer].author, self.draw_offer

    def leaf(self, label: str, key: str) -> bytes | None:
        """The value of leaf ``key`` of the Merkle set ``label`` if this replay
        knows it (the leaf was opened, or the whole set is known), else None."""
        opened = self.leaves.get((label, key))
        if opened is not None:
            return opened
        leaves = self._whole_set(label)
        return None if leaves is None else leaves.get(key)

    def leaf_values(self, label: str, keys: Iterable[str]) -> list[bytes | None]:
        """``leaf(label, key)`` for each of ``keys``, in one call (a rules
        module reading a whole set: a Minefield set is every hex of the map)."""
        opened, leaves = self.leaves, self._whole_set(label) or {}
        if not any(set_label == label for set_label, _ in opened):  # no leaf of it opened one by one
            return list(map(leaves.get, keys))
        return [leaves.get(key) if (value := opened.get((label, key))) is None else value for key in keys]

    def _whole_set(self, label: str) -> dict[str, bytes] | None:
        """Every leaf of the Merkle set ``label`` if this replay knows its whole
        value (decoded once), else None."""
        leaves = self._sets.get(label)
        if leaves is None:
            record = self.commitments.get(label)
            whole = self.value(label)
            if record is None or record.kind != "set" or whole is None:
                return None
            try:
                leaves = self._sets[label] = decode_leaves(whole)
            except ValueError:
                return None
        return leaves

    def ctx(self, author: str, seq: int | None = None) -> _Ctx:
        return _Ctx(self, self.seq + 1 if seq is None else seq, author)

    def fork(self) -> Replay:
        """An independent copy: applying events to it, or to this replay, is never
        seen through the other (every mutable field is copied; rules states,
        records and deck steps are immutable and shared)."""
        twin = copy.copy(self)
        twin.keys = dict(self.keys)
        twin.commitments = dict(self.commitments)
        twin.opened = dict(self.opened)
        twin.entropy_commit = dict(self.entropy_commit)
        twin.entropy_seq = dict(self.entropy_seq)
        twin.secret_dice = dict(self.secret_dice)
        twin.leaves = dict(self.leaves)
        twin._sets = {}
        twin.decoded = None  # taken as it is used: the copy decodes for itself
        twin.history = self.history.copy()
        twin.ledger = self.ledger.fork()
        twin.leave_used = dict(self.leave_used)
        return twin

    #: The older name of ``fork``.
    clone = fork

    def with_known(self, values: Mapping[str, bytes], salts: Mapping[str, bytes] | None = None) -> Replay:
        """A fork that also knows ``values`` (label -> value: e.g. the secrets of a
        draft), with their ``salts`` if given (``known_salts``)."""
        twin = self.fork()
        twin._learn(values, salts)
        return twin

    def _learn(self, values: Mapping[str, bytes], salts: Mapping[str, bytes] | None = None) -> None:
        """Know ``values`` too, each replacing what was known of its label, salt
        included (without ``salts``: trusted for the commitment of its label, as
        a draft's secrets are for the commitments it is about to make)."""
        self.known = {**self.known, **values}
        if salts is not None:
            self.known_salts = {**{k: v for k, v in self.known_salts.items() if k not in values}, **salts}
        elif self.known_salts and not self.known_salts.keys().isdisjoint(values):
            self.known_salts = {k: v for k, v in self.known_salts.items() if k not in values}

    def simulate(self, body: Body) -> Replay:
        """A fork with the unsigned ``body`` applied (for checking drafts): every
        check of ``apply_stored`` but the signature; a genesis body is applied to
        a fork of an empty replay. Raises a PbemError like ``apply_stored``."""
        twin = self.fork()
        if body.genesis is not None:
            twin.genesis = None
            stored = codec.wrap(codec.canonical(body), bytes(64))
            twin.apply_stored(stored, verify_signature_=False)
        else:
            twin._check_continuity(body)
            twin._apply_body(body, codec.sha256(codec.canonical(body)))
        return twin

    def snapshot(self, *, with_deck: bool = True) -> ReplayData:
        """This replay's fold as plain data (the genesis, keys and perspective are
        not in it: ``restored`` takes them from the replay it is called on).
        ``with_deck=False``: the shared deck left out (an empty ledger's), for a
        caller that stores ``self.ledger`` itself (pbem.snapshot)."""
        o = self.dice_origin
        older, older_count, newer = self.history.parts()
        return ReplayData(
            seq=self.seq, head=self.head.hex(), state=msgspec.Raw(msgspec.json.encode(self.state)),
            commitments=dict(self.commitments),
            opened={k: v.hex() for k, v in self.opened.items()},
            entropy_commit={k: v.hex() for k, v in self.entropy_commit.items()},
            entropy_seq=dict(self.entropy_seq),
            history=newer,
            dice_origin=None if o is None else OriginData(o.seq, o.event_hash.hex(), o.author, o.x_author.hex(),
                                                          o.sides, o.secret, o.purposes, o.openings),
            secret_dice={k: SecretDieData(d.event_hash.hex(), d.index, d.x_opponent.hex(), d.sides)
                         for k, d in self.secret_dice.items()},
            leaves=[(label, key, value.hex()) for (label, key), value in self.leaves.items()],
            deck=msgspec.Raw(self.ledger.encoded() if with_deck else NO_DECK), owed=self.owed, leave_used=dict(self.leave_used), ended=self.ended,
            draw_offer=self.draw_offer, history_older=msgspec.Raw(older), history_older_count=older_count)

    def restored(self, data: ReplayData, ledger: DeckLedger | None = None) -> Replay:
        """A fork of this replay (its genesis opened, perspective set) advanced to
        the fold ``data`` describes, with ``ledger`` as its shared deck if given
        (``data`` taken with ``with_deck=False``). ``data`` is trusted (a checked
        replay's own ``snapshot``); msgspec.DecodeError if its state is not of the
        rules' type."""
        state = msgspec.json.decode(bytes(data.state), type=self.rules.state_type)
        r = self.fork()
        r.state = state
        r.seq = data.seq
        r.head = bytes.fromhex(data.head)
        r.commitments = dict(data.commitments)
        r.opened = {k: bytes.fromhex(v) for k, v in data.opened.items()}
        r.entropy_commit = {k: bytes.fromhex(v) for k, v in data.entropy_commit.items()}
        r.entropy_seq = dict(data.entropy_seq)
        o = data.dice_origin
        r.dice_origin = None if o is None else DiceOrigin(o.seq, bytes.fromhex(o.event_hash), o.author,
                                                          bytes.fromhex(o.x), tuple(o.sides), tuple(o.secret),
                                                          tuple(o.purposes), tuple(o.openings))
        r.secret_dice = {k: SecretDie(bytes.fromhex(d.event_hash), d.index, bytes.fromhex(d.x), d.sides)
                         for k, d in data.secret_dice.items()}
        r.leaves = {(label, key): bytes.fromhex(value) for label, key, value in data.leaves}
        r.history = History.from_parts(bytes(data.history_older), data.history_older_count, data.history)
        r.ledger = ledger if ledger is not None else DeckLedger.from_encoded(bytes(data.deck))
        r.owed = data.owed
        r.leave_used = dict(data.leave_used)
        r.ended = data.ended
        r.draw_offer = data.draw_offer
        r._log, r._log_start, r._log_len = [], data.seq + 1, 0
        return r

    # -- what this replay knows of the secrets ---------------------------------

    def value(self, label: str) -> bytes | None:
        """The value of commitment ``label`` if this replay knows it (opened in the
        log, or known to its perspective), else None."""
        hit = self.opened.get(label)
        if hit is not None:
            return hit
        value = self.known.get(label)
        salt = self.known_salts.get(label) if value is not None and self.known_salts else None
        record = self.commitments.get(label) if salt is not None else None
        if record is None or salt is None or value is None:
            return value
        key = (label, record.digest, value, salt)
        ok = self._opens_memo.get(key)
        if ok is None:
            ok = self._opens_memo[key] = opening_matches(record, self.commit_domain, label, salt, value)
        return value if ok else None

    def committed(self, label: str) -> bool:
        return label in self.commitments

    def is_opened(self, label: str) -> bool:
        return label in self.opened

    def has_role(self, role: str) -> bool:
        return role in self.keys

    def commitment_authors(self) -> dict[str, str]:
        """Every commitment label in the log -> the role that committed it."""
        return {label: rec.author for label, rec in self.commitments.items()}

    def unopened(self, role: str) -> list[str]:
        """The labels ``role`` committed and has not opened, in log order."""
        return [label for label, rec in self.commitments.items() if rec.author == role and label not in self.opened]

    def entropy_seq_of(self, role: str) -> int | None:
        """The event that holds ``role``'s latest entropy commitment (None before its first event)."""
        return self.entropy_seq.get(role)

    def format_action(self, action: Any) -> str:
        """An action (the game's or a deck message) as people read it."""
        return self._format(action)

    # -- applying events ------------------------------------------------

    def apply_stored(self, stored: bytes, *, verify_signature_: bool = True) -> EventInfo:
        """Verify and apply one stored event. Raises a PbemError on the first problem."""
        try:
            unwrapped = codec.unwrap(stored) if self.unwrapper is None else self.unwrapper(stored)
        except CodecError as exc:
            raise BadFile(f"event {self.seq + 1}: {exc}") from None
        if self.genesis is None:
            return self._logged(stored, self._apply_genesis(unwrapped, verify_signature_))
        theirs = event_game(unwrapped)
        if theirs != self.game_hex:  # checked again after the signature
            raise ForeignGame(f"event {unwrapped.seq} {foreign_game_text(unwrapped.seq, theirs, self.game_hex)}")
        if unwrapped.seq == 0:
            return self._logged(stored, self._apply_genesis(unwrapped, verify_signature_))
        key = self.keys.get(unwrapped.author)
        if key is None:
            raise VerifyError(f"event {unwrapped.seq}: author '{shown(unwrapped.author)}' is not a player "
                              f"of this game (players: {', '.join(self.keys)})")
        if verify_signature_ and not (verify_signature(key, unwrapped.sig, codec.signing_input(unwrapped.body))
                                      if self.signature_check is None else self.signature_check(key, unwrapped)):
            raise VerifyError(f"event {unwrapped.seq}: signature is not valid for {unwrapped.author}'s "
                              "key (forged, altered, or signed by someone else)")
        body = self._decode(unwrapped)
        if body.genesis is not None:
            raise VerifyError(f"event {body.seq}: a second genesis inside the game")
        if body.game != self.game_hex:
            raise ForeignGame(f"event {body.seq} {foreign_game_text(body.seq, body.game, self.game_hex)}")
        self._check_continuity(body)
        return self._logged(stored, self._apply_body(body, codec.sha256(stored)))

    def _logged(self, stored: bytes, info: EventInfo) -> EventInfo:
        """Keep an applied event's bytes for a later takeback's rebuild (decision 28)."""
        if self._log_start + self._log_len == info.seq:
            if len(self._log) != self._log_len:  # a fork went on from here: copy before appending
                self._log = self._log[:self._log_len]
            self._log.append(stored)
            self._log_len += 1
        return info

    def _stored(self, seq: int) -> bytes:
        """The stored bytes of event ``seq`` of this log (applied here, or read)."""
        index = seq - self._log_start
        if 0 <= index < self._log_len:
            return self._log[index]
        if self.event_reader is None:
            raise VerifyError(f"event {seq} is needed to rebuild the game before a takeback, and this replay "
                              "holds no copy of it (replay the whole log)")
        return self.event_reader(seq)

    def _decode(self, unwrapped: Unwrapped) -> Body:
        """The event's body. One that claims another format version than the
        game's is IllegalAction whatever else is wrong with it (``_check_version``:
        the signer broke the game's protocol); then come the body's own faults."""
        body = self.decoded.pop(unwrapped.body, None) if self.decoded is not None else None
        if body is None:
            try:
                body = codec.decode_body(unwrapped.body)
            except CodecError as exc:
                self._check_version(unwrapped, _claimed_version(unwrapped.body))
                unread = VersionMismatch if isinstance(exc, codec.UnsupportedVersion) else BadFile
                raise unread(f"event {unwrapped.seq}: {exc}") from None
        self._check_version(unwrapped, body.v)
        return body

    def _check_version(self, unwrapped: Unwrapped, claimed: Any) -> None:
        if self.genesis is not None and claimed != self.version:
            # Signed (checked before decoding) inside a game whose genesis fixed the
            # format: the signer broke the game's protocol; no pbem upgrade helps.
            raise IllegalAction(
                f"event {unwrapped.seq} by {unwrapped.author}: signed with event format version "
                f"{_format_version(unwrapped.body)}, but this game is played at format version "
                f"{self.version}, fixed by its genesis; a game changes format version only "
                "by an upgrade both players sign, so the event is refused")

    def _check_continuity(self, body: Body) -> None:
        expected = self.seq + 1
        if body.seq < expected:
            raise VerifyError(f"event {body.seq}: replayed or stale: this log already holds "
                              f"events up to {self.seq}")
        if body.seq > expected:
            raise VerifyError(f"event {body.seq}: out of order: the next event must be {expected} "
                              f"(events {expected}..{body.seq - 1} are missing)")
        if body.prev != self.head.hex():
            raise VerifyError(f"event {body.seq}: does not follow event {self.seq} (prev hash "
                              "mismatch: spliced from another history or the log was altered)")

    def open_genesis(self, stored: bytes) -> None:
        """Verify the genesis event and take its game id, rules and keys, without
        applying its actions: the base that a checked replay cache (pbem.snapshot)
        continues from. ``apply_stored`` of the genesis does this and then applies it."""
        try:
            unwrapped = codec.unwrap(stored)
        except CodecError as exc:
            raise BadFile(f"event 0: {exc}") from None
        self._genesis_header(unwrapped, True)

    def _apply_genesis(self, unwrapped: Unwrapped, verify_sig: bool) -> EventInfo:
        body = self._genesis_header(unwrapped, verify_sig)
        g = body.genesis
        assert g is not None  # _genesis_header refuses a body without one
        self.state = self.rules.initial_state(g.scenario, tuple(g.options))
        return self._apply_body(body, codec.sha256(unwrapped.stored))

    def _genesis_header(self, unwrapped: Unwrapped, verify_sig: bool) -> Body:
        if self.genesis is not None or unwrapped.seq != 0:
            raise VerifyError(f"event {unwrapped.seq}: expected the genesis event (seq 0) first")
        body = self._decode(unwrapped)
        g = body.genesis
        if g is None or body.game or body.prev:
            raise VerifyError("event 0 is not a genesis event")
        spec = self.rules.SPEC
        if g.rules != spec.id:
            raise VersionMismatch(f"this game is played with rules '{g.rules}', not '{spec.id}'")
        if g.rules_version != spec.version:
            raise VersionMismatch(f"this game needs rules {g.rules} version {g.rules_version}; "
                                  f"this pbem has version {spec.version}")
        if self.check_data_hash and g.data_hash != data_hash(spec).hex():
            raise VersionMismatch(f"this game was created with different {spec.id} data files "
                                  "(map, units or tables): both players must use the same data")
        roles = [p.role for p in g.players]
        if sorted(roles) != sorted(spec.roles) or len(set(roles)) != len(roles):
            raise VerifyError(f"genesis players {roles} do not match the roles {list(spec.roles)}")
        if g.scenario not in spec.scenarios:
            raise VerifyError(f"genesis scenario '{g.scenario}' is not one of {list(spec.scenarios)}")
        bad = option_problems(spec, g.scenario, g.options)
        if bad:
            raise VerifyError(f"genesis options of {spec.id}: {'; '.join(bad)}")
        try:
            keys = {p.role: parse_public(p.key) for p in g.players}
        except UsageProblem as exc:
            raise VerifyError(f"genesis: {exc}") from None
        if len({p.key for p in g.players}) != len(g.players):
            raise VerifyError("genesis gives two players the same key")
        if body.author not in keys:
            raise VerifyError(f"genesis author '{body.author}' is not a player")
        if verify_sig and not verify_signature(keys[body.author], unwrapped.sig,
                                               codec.signing_input(unwrapped.body)):
            raise VerifyError("genesis signature is not valid for the host's key")
        self.genesis = g
        self.keys = keys
        self.version = body.v
        self.game_id = codec.sha256(codec.signing_input(unwrapped.body))
        return body

    def _apply_body(self, body: Body, event_hash: bytes) -> EventInfo:
        """The fold of one event (``_begin``, each action, ``_finish``) with the
        engine's guarantee (issue 27 point 5): whatever a signed event holds,
        judging it ends in acceptance or a PbemError naming the event and its
        signer, never in another exception. A rules module that raises while
        judging an event refuses it (never accepts it)."""
        judging: list[Any] = []  # [index, action] while an action is judged: named only on failure

        def fold() -> EventInfo:
            ev = self._begin(body)
            for index, raw in enumerate(body.actions, 1):
                self._act(ev, index, raw, judging)
            judging.clear()
            return self._finish(ev, body, event_hash)

        return self._judged(body, judging, fold)

    def _judged(self, body: Body, judging: list[Any], step: Callable[[], _T]) -> _T:
        """``step()``, any exception but a PbemError turned into the refusal of the event."""
        try:
            return step()
        except PbemError:
            raise
        except Exception as exc:  # noqa: BLE001 - see _apply_body
            what = f"event {body.seq} by {body.author}"
            if judging:
                index, action = judging
                what += f", action {index}" + ("" if action is None else f" ({self._safe_format(action)})")
            raise IllegalAction(
                f"{what}: refused: the {self.rules.SPEC.id} rules could not judge it ({type(exc).__name__}: "
                f"{shown(str(exc), 200)}); nothing of the event is accepted (if it is legal, this is a "
                "rules bug: report it with --traceback)") from exc

    def _safe_format(self, action: Any) -> str:
        """How an action is named in a refusal, even one the rules cannot format."""
        try:
            return shown(self._format(action), 200)
        except Exception:  # noqa: BLE001 - a crafted action must still be named
            return shown(codec.canonical(action).decode("ascii", "replace"), 200)

    def _begin(self, body: Body) -> _Event:
        """The start of an event: its turn, its entropy, its commitments, its
        openings (of values and of leaves) and the dice it answers."""
        seq, author = body.seq, body.author
        where = f"event {seq} by {author}"
        decision = self.pending()
        game_over = self.state is not None and self.outcome() is not None
        if game_over:
            if body.actions:
                raise IllegalAction(f"{where}: the game is over; only openings for the audit may follow")
            if body.end or (self.ended is not None and body.commits):
                raise IllegalAction(f"{where}: the game is over ({shown(self.outcome_text(), 200)}); after the end "
                                    "only openings for the audit may follow (decision 26)")
        elif seq > 0 and (decision is None or decision.role != author):
            who = "nobody" if decision is None else f"{decision.role} ({decision.kind})"
            raise IllegalAction(f"{where}: out of turn: the next decision is {who}'s")
        if body.end:
            self._check_end(body, where)
        rewind = None if body.takeback is None else self._grant(body, where)

        if codec.is_timed(self.version) and self.history and body.time < self.history[-1].time:
            raise IllegalAction(f"{where}: signed time {format_time(body.time)} is before the signed time of "
                                f"event {self.history[-1].seq} ({format_time(self.history[-1].time)}); a game's "
                                "signed times never go back (decision 23)")
        x = self._check_entropy(body, where)
        ctx = _Ctx(self, seq, author)
        # Commitments first: an event may open what it commits (a whole turn in
        # one event commits its secret option and opens it at its end).
        self._commit(body.commits, seq, author, where)
        before = self.state
        turn = self.rules.turn_label(before) if before is not None else ""
        self._open(body, where, ctx)
        self._open_leaves(body, where, ctx)
        said = list(self._happenings(before, Step(OPENINGS, labels=tuple(o.label for o in body.reveals) + tuple(
            f"{o.label}[{o.key}]" for o in body.leaves)))) if (body.reveals or body.leaves) and self.describe else []

        rolled = None
        if self.dice_origin is not None and self.dice_origin.author != author and decision is not None \
                and decision.kind == DICE:
            origin = self.dice_origin
            missing = [label for label in origin.openings if label not in self.opened]
            if missing:
                raise IllegalAction(f"{where}: answers the dice of event {origin.seq} without opening "
                                    f"{', '.join(repr(m) for m in missing)}, the sealed standing order(s) the "
                                    "request names; refused before any die is resolved")
            if origin.secret:
                values = self._secret_roll(origin, x, ctx)
            else:
                values = roll(self.game_id, origin.event_hash, origin.x_author, x, origin.sides)
            before = self.state
            self.state = self.rules.resolve_dice(self.state, values, ctx)
            rolled = Roll(origin.seq, seq, origin.author, origin.sides, values, origin.purposes,
                          tuple(self.rules.describe_roll(before, self.state, values)) if self.describe else ())
            said += self._happenings(before, Step(ROLL, values=tuple(values)))
            self.dice_origin = None
        return _Event(seq, author, where, x, rolled, game_over, rewind=rewind, said=said, turn=turn)

    def _happenings(self, before: Any, step: Step) -> tuple[Happening, ...]:
        """What ``step`` (from ``before`` to the state now) made happen, for this replay's reader."""
        if before is None or self.state is None or not self.describe:
            return ()
        return tuple(self.rules.happenings(before, self.state, step, self.role))

    def _commit(self, commits: Iterable[codec.Commitment], seq: int, author: str, where: str) -> None:
        for c in commits:
            if c.label in self.commitments:
                raise VerifyError(f"{where}: commitment label '{c.label}' is already in use")
            if c.label.startswith(DECK_NAMESPACE):
                _require_owner(self.label_owner(c.label), c.label, author, where)
            self.commitments[c.label] = CommitRecord(bytes.fromhex(c.digest), seq, author, c.kind)

    def label_owner(self, label: str) -> str | None:
        """Who may commit under ``label`` in the present state: the engine's own
        labels (the shared deck's seeds, ``deck/<round>/seed/<role>``, each its
        role's; any other label under ``deck/`` is nobody's), else what the rules
        say (``Rules.label_owner``; None: any player)."""
        if label.startswith(DECK_NAMESPACE):
            parts = label.split("/")
            if len(parts) == 4 and parts[2] == "seed" and parts[3] in self.keys and \
                    label == deckmod.seed_label(parts[1], parts[3]):
                return parts[3]
            return NOBODY
        return self.rules.label_owner(self.state, label)

    def _act(self, ev: _Event, index: int, raw: msgspec.Raw, judging: list[Any]) -> None:
        """Action ``index`` (from 1) of the event: decoded, checked and applied."""
        where, author = ev.where, ev.author
        judging[:] = [index, None]
        action = self._decode_action(raw, f"{where}, action {index}")
        judging[1] = action
        ctx = _Ctx(self, ev.seq, author)
        ev.played = ev.played or not isinstance(action, deckmod.DeckAction)
        now = self.rules.pending(self.state) if self.rules.outcome(self.state) is None else None
        if isinstance(action, deckmod.DeckAction) and now is not None and now.role == author \
                and now.kind == DECK:
            label = self._apply_deck(action, author, ev.seq, f"{where}, action {index}", ctx)
            if isinstance(action, deckmod.DeckKeys) and action.open:
                # Cards shown are public from here on: the summary says which (issue 21 point 3).
                shown_cards = [c for c in (self.card(o.round, o.index) for o in action.open) if c]
                if len(shown_cards) == len(action.open):
                    label += f": {', '.join(shown_cards)}"
            ev.labels.append(label)
            return
        if now is None or now.role != author or now.kind in (DICE, DECK) \
                or isinstance(action, deckmod.DeckAction):
            who = "nobody (the game is over)" if now is None else f"{now.role}'s ({now.kind})"
            raise IllegalAction(f"{where}, action {index} ({self._safe_format(action)}): "
                                f"out of turn: the decision is {who}")
        problems = self.rules.check(self.state, action, ctx)
        if problems:
            raise IllegalAction(f"{where}, action {index} ({self._safe_format(action)}) "
                                "is illegal:", details=[shown(str(p), PROBLEM_LIMIT) for p in problems])
        # Worded before it is applied, with what this replay knows (its own secrets).
        label = self.rules.describe_action(self.state, action, self.role) if self.describe else ""
        before = self.state
        self.state = self.rules.apply(self.state, action, ctx)
        ev.labels.append(label)
        ev.said += self._happenings(before, Step(ACTION, action=action))

    def _finish(self, ev: _Event, body: Body, event_hash: bytes) -> EventInfo:
        """The end of an event: the owners of its game labels, the dice it asks
        for, its entropy commitment, the head."""
        seq, author, where = ev.seq, ev.author, ev.where
        # The game's labels are judged with the state after the event: an event may
        # begin a stretch of play (a Player-Turn) and commit under its label.
        for c in body.commits:
            if not c.label.startswith(DECK_NAMESPACE):
                _require_owner(self.label_owner(c.label), c.label, author, where)
        self._end(body, ev)
        if ev.rewind is not None:
            self._transplant(ev.rewind)
        after = self.pending()
        if after is not None and after.kind == DICE:
            if after.role == author:
                raise IllegalAction(f"{where}: the rules wait for {author}'s own entropy "
                                    "(a rules module error: dice must wait for the opponent)")
            if self.dice_origin is None:
                self._check_secret_request(after, author, where)
                self._check_sealed_request(after, where)
                self.dice_origin = DiceOrigin(seq, event_hash, author, ev.x, after.dice, after.secret, after.purposes,
                                              after.openings)

        self.entropy_commit[author] = bytes.fromhex(body.entropy.commit)
        self.entropy_seq[author] = seq
        self.seq = seq
        self.head = event_hash
        granted = None if body.takeback is None else TakenBack(
            body.takeback.request.first, body.takeback.request.head_seq, body.takeback.request.role)
        info = EventInfo(seq, author, event_hash, tuple(ev.labels), len(body.commits),
                         tuple(o.label for o in body.reveals) + tuple(f"{o.label}[{o.key}]" for o in body.leaves),
                         body.note, ev.rolled, ev.turn, tuple(ev.said), body.time, body.end, granted)
        self.history.append(info)
        # A grant is the granter's reply to the events it takes back (decision 28).
        self._clock(seq, author, body.time, bool(body.actions) or ev.rolled is not None or granted is not None)
        return info

    # -- an agreed takeback (decision 28) --------------------------------------------

    def _grant(self, body: Body, where: str) -> Replay:
        """Check a takeback granted by ``body`` (in turn: ``_begin`` checked that)
        and rebuild the game as it was before the request's first event. Refuses
        (IllegalAction, exit 5; ForeignGame for a request of another game) a
        grant holding anything else, a request not signed by its role's genesis
        key, granted before, stale (its head is not this log's head), or whose
        span holds an event of the granter, a dice answer, dice asked, an
        opening, deck work or an ``end``: a takeback must not let anyone roll
        again or unshow what was shown."""
        tb = body.takeback
        assert tb is not None  # the caller's test
        if body.actions or body.commits or body.reveals or body.leaves or body.end:
            raise IllegalAction(f"{where}: grants a takeback and holds something else (an action, a commitment, an "
                                "opening or an end); a grant holds nothing but the request (decision 28)")
        return self.check_grant(tb, body.author, where)

    def check_grant(self, tb: codec.Takeback, granter: str, where: str) -> Replay:
        """The checks of a grant of ``tb`` by ``granter`` as the next event (see
        ``_grant``; the turn is the caller's to check), and the rebuilt game;
        this replay is not changed. ``where`` begins each refusal."""
        req = tb.request
        if self.outcome() is not None:
            raise IllegalAction(f"{where}: grants a takeback after the end of the game "
                                f"({shown(self.outcome_text(), 200)}) (decision 28)")
        if req.game != self.game_hex:
            raise ForeignGame(f"{where}: grants a takeback request of another game (game {short_game(req.game)}; "
                              f"this game is {short_game(self.game_hex)})")
        asker = req.role
        what = f"{where}: grants {shown(asker, 40)}'s takeback of events {req.first}..{req.head_seq}"
        key = self.keys.get(asker)
        if key is None or asker == granter:
            raise IllegalAction(f"{what}, but " + ("a player grants only the opponent's request" if key else
                                f"{shown(asker, 40)} is not a player of this game") + " (decision 28)")
        if not verify_signature(key, bytes.fromhex(tb.sig), codec.takeback_signing_input(req)):
            raise IllegalAction(f"{what}, but the request is not signed by {asker}'s key from the genesis "
                                "(forged or altered) (decision 28)")
        if req.head_seq < self.seq and self.history[req.head_seq].hash.hex() == req.head:
            for info in self.history[req.head_seq + 1:]:
                if info.takeback == TakenBack(req.first, req.head_seq, asker):
                    raise IllegalAction(f"{what}, but that request was granted already in event {info.seq} "
                                        "(decision 28)")
        if req.head_seq != self.seq or req.head != self.head.hex():
            raise IllegalAction(f"{what}, but the request is stale: it names event {req.head_seq} as the head, and "
                                f"the head is event {self.seq}" + (
                                    "" if req.head_seq != self.seq else " with another hash") + " (decision 28)")
        if not 1 <= req.first <= req.head_seq:
            raise IllegalAction(f"{what}, but the genesis cannot be taken back (decision 28)")
        for info in self.history[req.first:req.head_seq + 1]:
            why = ""
            if info.author != asker:
                why = f"event {info.seq} is {info.author}'s"
            elif info.rolls is not None:
                why = f"event {info.seq} answers the dice of event {info.rolls.asked_seq} (they were rolled)"
            elif info.reveals:
                why = f"event {info.seq} opens {', '.join(repr(r) for r in info.reveals[:3])} (it was shown)"
            elif info.end:
                why = f"event {info.seq} {_END_VERBS.get(info.end, info.end)}"
            if why:
                raise IllegalAction(f"{what}, but {why}: that cannot be taken back (decision 28)")
        if self.dice_origin is not None and self.dice_origin.seq >= req.first:
            raise IllegalAction(f"{what}, but event {self.dice_origin.seq} asks for dice whose roll {granter} "
                                "can already compute: that cannot be taken back (decision 28)")
        rebuilt = self._rebuilt(req.first)
        if rebuilt.ledger.data() != self.ledger.data():
            raise IllegalAction(f"{what}, but events {req.first}..{req.head_seq} work the shared deck: that cannot "
                                "be taken back (decision 28)")
        return rebuilt

    def _rebuilt(self, first: int) -> Replay:
        """A replay of this log's events 0..first-1 from this perspective (their
        own grants applied), checked to end at this log's event first-1."""
        r = Replay(self.rules, role=self.role, known=self.known, check_data_hash=self.check_data_hash,
                   describe=False, known_salts=self.known_salts, event_reader=self.event_reader)
        r._opens_memo = self._opens_memo
        for seq in range(first):
            r.apply_stored(self._stored(seq), verify_signature_=False)
        if r.head != self.history[first - 1].hash:
            raise VerifyError(f"event {first - 1} read to rebuild the game before a takeback is not the event this "
                              "log holds (the game directory was changed): run 'pbem verify'")
        return r

    def _transplant(self, r: Replay) -> None:
        """The fold of ``r`` in place of this replay's: rules state, commitments,
        openings, leaves, secret dice, pending dice, the deck, the draw offer
        (decision 28). Kept: the history, the head, the entropy ratchet and the
        time control's ledger, which go on through a takeback."""
        self.state = r.state
        self.commitments = r.commitments
        self.opened = r.opened
        self.leaves = r.leaves
        self._sets = {}
        self.secret_dice = r.secret_dice
        self.dice_origin = r.dice_origin
        old = self.ledger
        self.ledger = r.ledger
        self.ledger.unchecked, self.ledger.exp_hints = old.unchecked, old.exp_hints  # pbem.logcheck's, kept
        self.draw_offer = r.draw_offer
        self.ended = r.ended

    def taken_back(self) -> dict[int, TakenBack]:
        """Every event taken back by agreement -> the takeback (its granting event
        is the first event after ``last`` holding it: see ``grants``)."""
        out: dict[int, TakenBack] = {}
        for info in self.history:
            if info.takeback is not None:
                for seq in range(info.takeback.first, info.takeback.last + 1):
                    out[seq] = info.takeback
        return out

    # -- the end of a game by its players (decision 26) ---------------------------

    def outcome_text(self) -> str:
        outcome = self.outcome()
        return "" if outcome is None else outcome.summary

    def _check_end(self, body: Body, where: str) -> None:
        """What an event's ``end`` needs before anything of it is applied (it is
        in turn: ``_begin`` checked that): a terminal event (a resignation, a
        draw accepted) holds no action and no new commitment; a draw is
        accepted or declined only while the opponent's offer stands; a player
        offers a draw only while no offer stands."""
        offer = self.standing_offer()
        if body.end in codec.TERMINAL and (body.actions or body.commits):
            what = "a resignation" if body.end == codec.RESIGN else "accepting a draw"
            raise IllegalAction(f"{where}: {what} ends the game: it holds no action and no new commitment "
                                "(decision 26)")
        if body.end in (codec.DRAW_ACCEPT, codec.DRAW_DECLINE) and (offer is None or offer[0] == body.author):
            raise IllegalAction(f"{where}: {'accepts' if body.end == codec.DRAW_ACCEPT else 'declines'} a draw, "
                                "but no draw offer of the opponent stands (decision 26)")
        if body.end == codec.DRAW_OFFER and offer is not None:
            mine = offer[0] == body.author
            raise IllegalAction(f"{where}: offers a draw while " + (
                f"its own offer of event {offer[1]} stands" if mine else
                f"{offer[0]}'s offer of event {offer[1]} stands: accept or decline it") + " (decision 26)")

    def _end(self, body: Body, ev: _Event) -> None:
        """The event's effect on the game as a whole: a resignation or an accepted
        draw ends it (the author must have opened every commitment it made, so
        the game can be audited in full); a draw offer stands until the
        opponent accepts or declines it, or plays on (signs a game action)."""
        author, seq, where = ev.author, ev.seq, ev.where
        offer = self.standing_offer()
        if body.end in codec.TERMINAL:
            left = self.unopened(author)
            if left:
                raise IllegalAction(f"{where}: {'resigns' if body.end == codec.RESIGN else 'accepts a draw'} "
                                    f"without opening {len(left)} of its commitments (first: '{left[0]}'); "
                                    "a terminal event opens every commitment of its author, so that the game "
                                    "can be audited in full (decision 26)")
            if body.end == codec.RESIGN:
                self.ended = Outcome(self.other(author), f"{author} resigned in event {seq}; "
                                     f"{self.other(author)} wins")
            else:
                assert offer is not None  # _check_end
                self.ended = Outcome(None, f"drawn by agreement: {offer[0]} offered a draw in event {offer[1]}, "
                                     f"{author} accepted it in event {seq}")
            self.draw_offer = -1
        elif body.end == codec.DRAW_OFFER:
            self.draw_offer = seq
        elif offer is not None and offer[0] != author and (body.end == codec.DRAW_DECLINE or ev.played):
            self.draw_offer = -1

    def _clock(self, seq: int, author: str, time: int, replied: bool) -> None:
        """The time control's ledger after event ``seq`` by ``author`` signed at
        ``time``. An event of the owing role that ``replied`` (it holds an action
        or answers dice) ends that reply: its lateness beyond the reply time is
        leave used, and whoever owes the next decision owes it from this event.
        An event that changes nothing (no action, no dice) restarts nobody's
        clock, so a stall cannot be disguised as a trickle of empty events."""
        after = self.pending()
        role = None if after is None else after.role
        owed = self.owed
        ends = owed is not None and owed.role == author and replied
        if owed is not None and owed.role == role and not ends:
            return
        clock = self.genesis.clock if self.genesis is not None else None
        if owed is not None and clock is not None:
            late = time - owed.time - clock.reply_days * DAY
            if late > 0:
                self.leave_used[owed.role] = self.leave_used.get(owed.role, 0) + late
        self.owed = None if role is None else Owed(role, seq, time)

    # -- an event composed action by action (pbem.session's drafts) -------------

    def open_event(self, body: Body) -> OpenEvent:
        """The unsigned ``body`` (not a genesis) begun and its actions applied on a
        fork, the event left open so that ``OpenEvent.add`` can append one more
        action at the cost of one rules step. ``OpenEvent.close`` ends it; closing
        an OpenEvent of a body gives the replay ``simulate(body)`` gives."""
        if body.genesis is not None:
            raise UsageProblem("a genesis is composed whole (Replay.simulate), not action by action")
        twin = self.fork()
        judging: list[Any] = []
        twin._check_continuity(body)

        def begin() -> _Event:
            ev = twin._begin(body)
            for index, raw in enumerate(body.actions, 1):
                twin._act(ev, index, raw, judging)
            return ev

        return OpenEvent(twin, twin._judged(body, judging, begin), body)

    # -- the shared deck (pbem.deck, DESIGN 4) ----------------------------------

    def _format(self, action: Any) -> str:
        if isinstance(action, deckmod.DeckStep):
            return f"deck: shuffle step {action.step.step} of round {action.step.round}" + (
                f", dealing {len(action.deal)} card(s)" if action.deal else "")
        if isinstance(action, deckmod.DeckKeys):
            parts = ([f"dealing {len(action.deal)} card(s)"] if action.deal else []) + (
                [f"showing {len(action.open)} card(s)"] if action.open else [])
            return "deck: " + (", ".join(parts) or "no keys")
        return self.rules.format_action(action)

    def _apply_deck(self, action: Any, author: str, seq: int, where: str, ctx: _Ctx) -> str:
        """Check a deck message at once (``check_step``, every key against its
        commitment, deals and openings exactly as the rules asked) and record it."""
        task = self.rules.deck_task(self.state)
        if task is None or task.role != author:
            raise IllegalAction(f"{where}: the rules wait for no deck work of {author} "
                                "(a rules module error)")
        try:
            self.ledger.record(self, task, action, author, seq)
        except DeckError as exc:
            raise IllegalAction(f"{where} ({self._format(action)}) is refused: {exc}") from None
        self.state, problems = self.rules.on_deck(self.state, ctx)
        if problems:
            raise IllegalAction(f"{where} ({self._format(action)}) shows an illegal play:",
                                details=[shown(str(p), PROBLEM_LIMIT) for p in problems])
        return self._format(action)

    def card(self, rnd: str, pos: int) -> str | None:
        """The label at position ``pos`` of round ``rnd`` if this replay can see it:
        its own card (the opponent's key dealt it), a card opened by its holder,
        every card in an audit. None otherwise (``DeckLedger.card``)."""
        return self.ledger.card(self, rnd, pos)

    def deck_audit(self, rounds_done: Callable[[AuditInput], list[deckmod.Dealt] | None] | None = None
                   ) -> list[deckmod.Dealt]:
        """The whole-deck audit (``DeckLedger.audit``; ``rounds_done``: see there);
        DeckError names round, step and author, ``deck_event`` turns it into the event."""
        return self.ledger.audit(self, rounds_done)

    def deck_event(self, exc: DeckError) -> str:
        """'event N by X: ...' for an audit DeckError (the step's event, or the round's first)."""
        return self.ledger.event_of(exc)

    def _check_sealed_request(self, decision: Decision, where: str) -> None:
        """Sealed standing orders a dice request names must be commitments of
        the answering role, not yet opened: else no answer could ever be valid."""
        for label in decision.openings:
            record = self.commitments.get(label)
            if record is None or record.author != decision.role or label in self.opened:
                raise IllegalAction(f"{where}: the rules ask {decision.role} to open '{label}' with its answer, "
                                    f"which is no unopened commitment of {decision.role} (a rules module error)")

    def sealed_due(self, role: str) -> tuple[str, ...]:
        """The sealed standing orders ``role`` must open in its answer to the
        pending dice (Decision.openings); () when it answers none."""
        o = self.dice_origin
        if o is None or o.author == role:
            return ()
        return tuple(label for label in o.openings if label not in self.opened)

    def _check_secret_request(self, decision: Decision, author: str, where: str) -> None:
        if not decision.secret:
            return
        if not self.rules.secret_dice:
            raise IllegalAction(f"{where}: the rules asked for secret dice but cannot reveal them "
                                "(a rules module error: secret_dice is not declared)")
        if len(decision.secret) != len(decision.dice):
            raise IllegalAction(f"{where}: the rules asked for {len(decision.dice)} secret dice with "
                                f"{len(decision.secret)} seeds (a rules module error)")
        for label in decision.secret:
            record = self.commitments.get(label)
            if record is None or record.author != author or label in self.opened or label in self.secret_dice:
                raise IllegalAction(f"{where}: secret die seed '{label}' must be a fresh, unopened "
                                    f"commitment of {author}")

    def _secret_roll(self, origin: DiceOrigin, x: bytes, ctx: _Ctx) -> tuple[int | None, ...]:
        """Secret dice: each seeded by its own commitment; known where the seed is."""
        values: list[int | None] = []
        for index, (label, sides) in enumerate(zip(origin.secret, origin.sides)):
            die = SecretDie(origin.event_hash, index, x, sides)
            self.secret_dice[label] = die
            seed = ctx.value(label)
            values.append(None if seed is None else
                          roll_one(self.game_id, die.event_hash, index, seed, die.x_opponent, sides))
        return tuple(values)

    def _check_entropy(self, body: Body, where: str) -> bytes:
        previous = self.entropy_commit.get(body.author)
        reveal = body.entropy.reveal
        if previous is None:
            if reveal:
                raise VerifyError(f"{where}: reveals entropy but has committed none before")
            return b""
        if not reveal:
            raise VerifyError(f"{where}: must open the entropy committed in event "
                              f"{self.entropy_seq[body.author]}")
        x = bytes.fromhex(reveal)
        if entropy_commitment(body.author, x) != previous:
            raise VerifyError(f"{where}: entropy reveal does not match the commitment in event "
                              f"{self.entropy_seq[body.author]} (dice would be biased)")
        return x

    def _open(self, body: Body, where: str, ctx: _Ctx) -> None:
        for opening in body.reveals:
            record = self.commitments.get(opening.label)
            if record is None:
                raise VerifyError(f"{where}: opens '{opening.label}', which was never committed")
            if record.author != body.author:
                raise VerifyError(f"{where}: opens '{opening.label}', committed by {record.author}")
            if opening.label in self.opened:
                raise VerifyError(f"{where}: opens '{opening.label}' a second time")
            value, salt = bytes.fromhex(opening.value), bytes.fromhex(opening.salt)
            hint = None if record.kind != "set" or not self.set_hints else \
                self.set_hints.get((record.digest, salt, hashlib.sha256(value).digest()))
            if not (hint if hint is not None else opening_matches(record, self.commit_domain, opening.label, salt,
                                                                   value)):
                raise VerifyError(f"{where}: the opening of '{opening.label}' does not match its "
                                  f"commitment from event {record.seq}")
            self.opened[opening.label] = value
            self.state, problems = self.rules.on_open(self.state, opening.label, value, ctx)
            die = self.secret_dice.get(opening.label)
            if die is not None and not problems:
                result = roll_one(self.game_id, die.event_hash, die.index, value, die.x_opponent, die.sides)
                self.state, problems = self.rules.reveal_die(self.state, opening.label, result, ctx)
            if problems:
                raise IllegalAction(f"{where}: opening '{opening.label}' shows an earlier illegal "
                                    "action:", details=[shown(str(p), PROBLEM_LIMIT) for p in problems])

    def _open_leaves(self, body: Body, where: str, ctx: _Ctx) -> None:
        """Leaf openings of Merkle sets (DESIGN 4): each proves one key's value."""
        for leaf in body.leaves:
            what = f"{where}: opens '{leaf.label}' at '{leaf.key}'"
            record = self.commitments.get(leaf.label)
            if record is None or record.kind != "set":
                raise VerifyError(f"{what}, which is not a committed set")
            if record.author != body.author:
                raise VerifyError(f"{what}, a set committed by {record.author}")
            if (leaf.label, leaf.key) in self.leaves:
                raise VerifyError(f"{what} a second time")
            proof = LeafProof(key=leaf.key, value=leaf.value, salt=leaf.salt, index=leaf.index, size=leaf.size,
                              path=[(h, right) for h, right in leaf.path])
            if not verify_leaf(record.digest, proof):
                raise VerifyError(f"{what}: the proof does not match the set's root from event {record.seq}")
            value = bytes.fromhex(leaf.value)
            self.leaves[(leaf.label, leaf.key)] = value
            self.state, problems = self.rules.on_open_leaf(self.state, leaf.label, leaf.key, value, ctx)
            if problems:
                raise IllegalAction(f"{what}: the opening shows an illegal action:",
                                    details=[shown(str(p), PROBLEM_LIMIT) for p in problems])

    def _decode_action(self, raw: msgspec.Raw, where: str) -> Any:
        data = bytes(raw)
        try:
            action = _action_decoder(self.rules.action_type).decode(data)
        except msgspec.DecodeError as exc:
            raise BadFile(f"{where}: not a valid {self.rules.SPEC.id} action: {shown(str(exc))}") from None
        except RecursionError:
            raise BadFile(f"{where}: action nested too deeply") from None
        if codec.canonical(action) != data:
            raise BadFile(f"{where}: action is not in canonical form")
        return action


_DECODERS: dict[int, tuple[Any, msgspec.json.Decoder]] = {}


def _action_decoder(action_type: Any) -> msgspec.json.Decoder:
    """One typed decoder per game's action type, for the game's actions and
    the engine's own (the shared deck's messages, pbem.deck: the engine's
    envelope of actions, which no game lists in its union). msgspec
    rebuilds its type plan on every ``decode(..., type=Union)`` call, which
    cost about a tenth of a RitD verify. RulesError if the game's actions
    take a tag the engine's use."""
    hit = _DECODERS.get(id(action_type))
    if hit is None or hit[0] is not action_type:
        try:
            decoder = msgspec.json.Decoder(action_type | deckmod.DeckStep | deckmod.DeckKeys)
        except TypeError as exc:
            raise RulesError(f"the game's action types clash with the engine's deck messages: {exc}") from None
        hit = _DECODERS[id(action_type)] = (action_type, decoder)
    return hit[1]


#: Longest rule problem shown from a refusal (a problem may quote input).
PROBLEM_LIMIT = 1000


class _Version(msgspec.Struct):
    v: Any = None


#: The engine's own label namespace (the shared deck's seeds, pbem.deck.seed_label).
DECK_NAMESPACE = "deck/"

#: Seconds in a day of the time control.
DAY = 86400


#: ``Body.end`` as a verb, for a refused takeback (decision 28).
_END_VERBS = {codec.RESIGN: "resigns", codec.DRAW_OFFER: "offers a draw", codec.DRAW_ACCEPT: "accepts a draw",
              codec.DRAW_DECLINE: "declines a draw"}


def takeback_text(info: EventInfo) -> str:
    """The takeback event ``info`` granted, in words ("" for any other event):
    "events K..H by X were taken back by agreement (X asked, Y granted in event G)"."""
    tb = info.takeback
    if tb is None:
        return ""
    one = tb.first == tb.last
    events = f"event {tb.first}" if one else f"events {tb.first}..{tb.last}"
    return (f"{events} by {tb.asker} {'was' if one else 'were'} taken back by agreement "
            f"({tb.asker} asked, {info.author} granted in event {info.seq})")


def format_time(time: int) -> str:
    """A signed time as people read it (UTC)."""
    import datetime

    if time <= 0:
        return "no signed time"
    return datetime.datetime.fromtimestamp(time, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _require_owner(owner: str | None, label: str, author: str, where: str) -> None:
    """IllegalAction naming the signer if ``author`` may not commit under ``label``."""
    if owner is not None and owner != author:
        whose = f"a label of {owner}" if owner else ("a label nobody may commit under now (outside the "
                                                     "namespaces of the game, or nobody's yet)")
        raise IllegalAction(f"{where}: commits under '{label}', {whose}; refused: a label belongs to its "
                            "author's namespace, so that no player can take a label the other will need "
                            "(issue 27 point 2)")


def _claimed_version(body: bytes) -> Any:
    """The ``v`` an event body claims (None if unreadable)."""
    try:
        return msgspec.json.decode(body, type=_Version).v
    except (msgspec.DecodeError, RecursionError):
        return None


def _format_version(body: bytes) -> str:
    """The ``v`` an event body claims, as text for a refusal."""
    try:
        return shown(repr(msgspec.json.decode(body, type=_Version).v), 40)
    except (msgspec.DecodeError, RecursionError):
        return "(unreadable)"


def event_game(unwrapped: Unwrapped) -> str:
    """The game id an event claims (not yet verified): its ``game`` field, or
    for a genesis (seq 0, no ``game``) the hash of its signed bytes, which is
    by definition the id of the game it creates."""
    if unwrapped.seq == 0 and not unwrapped.game:
        return codec.sha256(codec.signing_input(unwrapped.body)).hex()
    return unwrapped.game


def short_game(game: str) -> str:
    """A game id as people see it (``pbem show`` prints the same 16 digits);
    input that is no game id is shown escaped and cut."""
    if len(game) == 64 and all(c in "0123456789abcdef" for c in game):
        return game[:16]
    return f"'{shown(game, 24)}'" if game else "no game id"


def foreign_game_text(seq: int, theirs: str, ours: str) -> str:
    what = "is the genesis of another game" if seq == 0 else "belongs to another game"
    return f"{what} (game {short_game(theirs)}; this game is {short_game(ours)})"


def opening_matches(record: CommitRecord, domain: bytes, label: str, salt: bytes, value: bytes) -> bool:
    """Whether (value, salt) opens ``record``: a plain commitment, or a whole
    Merkle set (salt = the set's seed, value = its encoded leaves)."""
    if record.kind == "set":
        return set_opens(record.digest, salt, value)
    return opens(record.digest, domain, label, salt, value)


def audit_openings(events: Iterable[bytes]) -> dict[str, bytes]:
    """Every valid opening published anywhere in a log: label -> value.

    Openings are checked against their commitments here, so an audit never
    judges an early action by a value its owner could not open.
    """
    return audit_knowledge(events)[0]


def audit_knowledge(events: Iterable[bytes], decoded: dict[bytes, Body] | None = None
                    ) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """``audit_openings`` and the salt of each value (label -> salt). A label
    taken back (decision 28) may be committed again, so an opening is checked
    against every earlier commitment of its label, the latest first; the
    replay then gives the value to the rules for the commitment it opens only
    (``Replay.known_salts``). Only labels committed more than once get a salt:
    every other value is known for the one commitment it opened, checked here
    already. ``decoded``, if given, receives every body it decoded (for
    ``Replay.decoded``)."""
    game = b""
    digests: dict[str, list[CommitRecord]] = {}
    found: dict[str, bytes] = {}
    salts: dict[str, bytes] = {}
    for stored in events:
        try:
            unwrapped = codec.unwrap(stored)
            body = codec.decode_body(unwrapped.body)
        except CodecError:
            continue
        if decoded is not None:
            decoded[unwrapped.body] = body
        if body.genesis is not None:
            game = bytes.fromhex(body.genesis.nonce)
        for c in body.commits:
            digests.setdefault(c.label, []).append(CommitRecord(bytes.fromhex(c.digest), body.seq, body.author,
                                                                c.kind))
        for o in body.reveals:
            value, salt = bytes.fromhex(o.value), bytes.fromhex(o.salt)
            if o.label not in found and any(opening_matches(record, game, o.label, salt, value)
                                            for record in reversed(digests.get(o.label, []))):
                found[o.label] = value
                salts[o.label] = salt
    return found, {label: salt for label, salt in salts.items() if len(digests[label]) > 1}
