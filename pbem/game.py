"""Replaying a game log: verification and the fold of events into rules state.

``Replay`` applies stored events one by one, in the order of DESIGN 3:
size and form, signature by the author's genesis key, ``game``/``seq``/
``prev`` continuity, the author's turn, the entropy reveal, every opening,
dice owed to the previous event, then every action through the rules'
``check`` and ``apply``. The first failure raises a PbemError naming the
event and the problem; a Replay that raised must be discarded (callers work
on a ``clone()`` when they need all-or-nothing).

One Replay takes one *perspective*: public (keys only), a player (their own
secrets are known), or an audit (every opening in the log is known from the
start, so every deferred check becomes an immediate one).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

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
from pbem.rulesapi import DICE, Decision, Outcome, RulesError, RulesModule, data_hash, option_problems
from pbem.text import shown

AUDIT = "*"


@dataclass(frozen=True)
class CommitRecord:
    digest: bytes
    seq: int
    author: str
    kind: str = ""  # "set": a Merkle set root (pbem.commit)


@dataclass(frozen=True)
class DiceOrigin:
    """Dice asked for in event ``seq`` by ``author``; rolled when the opponent answers."""

    seq: int
    event_hash: bytes
    author: str
    x_author: bytes
    sides: tuple[int, ...]
    secret: tuple[str, ...] = ()


@dataclass(frozen=True)
class SecretDie:
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


class EventInfo(msgspec.Struct, frozen=True, array_like=True):
    seq: int
    author: str
    hash: bytes
    actions: tuple[str, ...]
    commits: int
    reveals: tuple[str, ...]
    note: str
    rolls: Roll | None


class _Ctx:
    """The Ctx handed to the rules (see pbem.rulesapi.Ctx)."""

    __slots__ = ("_replay", "seq", "author")

    def __init__(self, replay: "Replay", seq: int, author: str) -> None:
        self._replay = replay
        self.seq = seq
        self.author = author

    @property
    def role(self) -> str | None:
        return self._replay.role

    def value(self, label: str) -> bytes | None:
        r = self._replay
        if label in r.opened:
            return r.opened[label]
        return r.known.get(label)

    def committed(self, label: str) -> bool:
        return label in self._replay.commitments

    def opened(self, label: str) -> bool:
        return label in self._replay.opened

    def leaf(self, label: str, key: str) -> bytes | None:
        return self._replay.leaf(label, key)

    def card(self, rnd: str, pos: int) -> str | None:
        return self._replay.card(rnd, pos)


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
    history: list[EventInfo] = field(default_factory=list)
    _sets: dict[str, dict[str, bytes]] = field(default_factory=dict, repr=False)
    #: The shared deck (pbem.deck, DESIGN 4): steps per round in play order,
    #: each round's first role and input deck, every key published (checked),
    #: the deals (round, pos) -> role, the positions opened by their holder,
    #: and (round, step or -1 for a deal) -> (seq, author) of the event that carried it.
    deck_rounds: dict[str, list[deckmod.Step]] = field(default_factory=dict)
    deck_first: dict[str, str] = field(default_factory=dict)
    deck_sources: dict[str, list[deckmod.Source]] = field(default_factory=dict)
    deck_keys: dict[tuple[str, int, int], deckmod.KeyOpening] = field(default_factory=dict)
    deck_dealt: dict[tuple[str, int], str] = field(default_factory=dict)
    deck_opened: dict[tuple[str, int], str] = field(default_factory=dict)
    deck_where: dict[tuple[str, int], tuple[int, str]] = field(default_factory=dict)
    _cards: dict[tuple[str, int], str] = field(default_factory=dict, repr=False)

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
        return None if self.state is None else self.rules.outcome(self.state)

    def leaf(self, label: str, key: str) -> bytes | None:
        """The value of leaf ``key`` of the Merkle set ``label`` if this replay
        knows it (the leaf was opened, or the whole set is known), else None."""
        opened = self.leaves.get((label, key))
        if opened is not None:
            return opened
        leaves = self._sets.get(label)
        if leaves is None:
            record = self.commitments.get(label)
            whole = self.opened.get(label, self.known.get(label))
            if record is None or record.kind != "set" or whole is None:
                return None
            try:
                leaves = self._sets[label] = decode_leaves(whole)
            except ValueError:
                return None
        return leaves.get(key)

    def ctx(self, author: str, seq: int | None = None) -> _Ctx:
        return _Ctx(self, self.seq + 1 if seq is None else seq, author)

    def clone(self) -> "Replay":
        """An independent copy (rules states are immutable and shared)."""
        twin = copy.copy(self)
        twin.keys = dict(self.keys)
        twin.commitments = dict(self.commitments)
        twin.opened = dict(self.opened)
        twin.entropy_commit = dict(self.entropy_commit)
        twin.entropy_seq = dict(self.entropy_seq)
        twin.secret_dice = dict(self.secret_dice)
        twin.leaves = dict(self.leaves)
        twin._sets = {}
        twin.history = list(self.history)
        twin.deck_rounds = {k: list(v) for k, v in self.deck_rounds.items()}
        twin.deck_first = dict(self.deck_first)
        twin.deck_sources = dict(self.deck_sources)
        twin.deck_keys = dict(self.deck_keys)
        twin.deck_dealt = dict(self.deck_dealt)
        twin.deck_opened = dict(self.deck_opened)
        twin.deck_where = dict(self.deck_where)
        twin._cards = dict(self._cards)
        return twin

    # -- applying events ------------------------------------------------

    def apply_stored(self, stored: bytes, *, verify_signature_: bool = True) -> EventInfo:
        """Verify and apply one stored event. Raises a PbemError on the first problem."""
        try:
            unwrapped = codec.unwrap(stored)
        except CodecError as exc:
            raise BadFile(f"event {self.seq + 1}: {exc}") from None
        if self.genesis is None:
            return self._apply_genesis(unwrapped, verify_signature_)
        theirs = event_game(unwrapped)
        if theirs != self.game_hex:  # checked again after the signature
            raise ForeignGame(f"event {unwrapped.seq} {foreign_game_text(unwrapped.seq, theirs, self.game_hex)}")
        if unwrapped.seq == 0:
            return self._apply_genesis(unwrapped, verify_signature_)
        key = self.keys.get(unwrapped.author)
        if key is None:
            raise VerifyError(f"event {unwrapped.seq}: author '{shown(unwrapped.author)}' is not a player "
                              f"of this game (players: {', '.join(self.keys)})")
        if verify_signature_ and not verify_signature(key, unwrapped.sig, codec.signing_input(unwrapped.body)):
            raise VerifyError(f"event {unwrapped.seq}: signature is not valid for {unwrapped.author}'s "
                              "key (forged, altered, or signed by someone else)")
        body = self._decode(unwrapped)
        if body.genesis is not None:
            raise VerifyError(f"event {body.seq}: a second genesis inside the game")
        if body.game != self.game_hex:
            raise ForeignGame(f"event {body.seq} {foreign_game_text(body.seq, body.game, self.game_hex)}")
        self._check_continuity(body)
        return self._apply_body(body, codec.sha256(stored))

    def _decode(self, unwrapped: Unwrapped) -> Body:
        try:
            return codec.decode_body(unwrapped.body)
        except CodecError as exc:
            if "format version" in str(exc):
                if self.genesis is not None:
                    # Signed (checked before decoding) inside a game whose genesis fixed the
                    # format: the signer broke the game's protocol; no pbem upgrade helps.
                    raise IllegalAction(
                        f"event {unwrapped.seq} by {unwrapped.author}: signed with event format version "
                        f"{_format_version(unwrapped.body)}, but this game is played at format version "
                        f"{codec.FORMAT_VERSION}, fixed by its genesis; a game changes format version only "
                        "by an upgrade both players sign, so the event is refused") from None
                raise VersionMismatch(f"event {unwrapped.seq}: {exc}") from None
            raise BadFile(f"event {unwrapped.seq}: {exc}") from None

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
        self.state = self.rules.initial_state(body.genesis.scenario, tuple(body.genesis.options))
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
        self.game_id = codec.sha256(codec.signing_input(unwrapped.body))
        return body

    def _apply_body(self, body: Body, event_hash: bytes) -> EventInfo:
        """``_fold`` with the engine's guarantee (issue 27 point 5): whatever a
        signed event holds, judging it ends in acceptance or a PbemError naming
        the event and its signer, never in another exception. A rules module
        that raises while judging an event refuses it (never accepts it)."""
        judging: list[Any] = []  # [index, action] while an action is judged: named only on failure
        try:
            return self._fold(body, event_hash, judging)
        except PbemError:
            raise
        except Exception as exc:  # noqa: BLE001 - see the docstring
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

    def _fold(self, body: Body, event_hash: bytes, judging: list[Any]) -> EventInfo:
        seq, author = body.seq, body.author
        where = f"event {seq} by {author}"
        decision = self.pending()
        game_over = self.state is not None and self.outcome() is not None
        if game_over:
            if body.actions:
                raise IllegalAction(f"{where}: the game is over; only openings for the audit may follow")
        elif seq > 0 and (decision is None or decision.role != author):
            who = "nobody" if decision is None else f"{decision.role} ({decision.kind})"
            raise IllegalAction(f"{where}: out of turn: the next decision is {who}'s")

        x = self._check_entropy(body, where)
        ctx = _Ctx(self, seq, author)
        # Commitments first: an event may open what it commits (a whole turn in
        # one event commits its secret option and opens it at its end).
        for c in body.commits:
            if c.label in self.commitments:
                raise VerifyError(f"{where}: commitment label '{c.label}' is already in use")
            self.commitments[c.label] = CommitRecord(bytes.fromhex(c.digest), seq, author, c.kind)
        self._open(body, where, ctx)
        self._open_leaves(body, where, ctx)

        rolled = None
        if self.dice_origin is not None and self.dice_origin.author != author and decision is not None \
                and decision.kind == DICE:
            origin = self.dice_origin
            if origin.secret:
                values = self._secret_roll(origin, x, ctx)
            else:
                values = roll(self.game_id, origin.event_hash, origin.x_author, x, origin.sides)
            self.state = self.rules.resolve_dice(self.state, values, ctx)
            rolled = Roll(origin.seq, seq, origin.author, origin.sides, values)
            self.dice_origin = None

        labels = []
        for index, raw in enumerate(body.actions, 1):
            judging[:] = [index, None]
            action = self._decode_action(raw, f"{where}, action {index}")
            judging[1] = action
            now = self.rules.pending(self.state) if self.rules.outcome(self.state) is None else None
            if isinstance(action, deckmod.DeckAction) and now is not None and now.role == author \
                    and now.kind == DECK:
                labels.append(self._apply_deck(action, author, seq, f"{where}, action {index}", ctx))
                continue
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
            label = self.rules.describe_action(self.state, action, self.role)
            self.state = self.rules.apply(self.state, action, ctx)
            labels.append(label)

        judging.clear()
        after = self.pending()
        if after is not None and after.kind == DICE:
            if after.role == author:
                raise IllegalAction(f"{where}: the rules wait for {author}'s own entropy "
                                    "(a rules module error: dice must wait for the opponent)")
            if self.dice_origin is None:
                self._check_secret_request(after, author, where)
                self.dice_origin = DiceOrigin(seq, event_hash, author, x, after.dice, after.secret)

        self.entropy_commit[author] = bytes.fromhex(body.entropy.commit)
        self.entropy_seq[author] = seq
        self.seq = seq
        self.head = event_hash
        info = EventInfo(seq, author, event_hash, tuple(labels), len(body.commits),
                         tuple(o.label for o in body.reveals) + tuple(f"{o.label}[{o.key}]" for o in body.leaves),
                         body.note, rolled)
        self.history.append(info)
        return info

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

    def _apply_deck(self, action: Any, author: str, seq: int, where: str, ctx: "_Ctx") -> str:
        """Check a deck message at once (``check_step``, every key against its
        commitment, deals and openings exactly as the rules asked) and record it."""
        task = self.rules.deck_task(self.state)
        if task is None or task.role != author:
            raise IllegalAction(f"{where}: the rules wait for no deck work of {author} "
                                "(a rules module error)")
        try:
            self._deck_message(task, action, author, seq)
        except DeckError as exc:
            raise IllegalAction(f"{where} ({self._format(action)}) is refused: {exc}") from None
        self._cards.clear()
        self.state, problems = self.rules.on_deck(self.state, ctx)
        if problems:
            raise IllegalAction(f"{where} ({self._format(action)}) shows an illegal play:",
                                details=[shown(str(p), PROBLEM_LIMIT) for p in problems])
        return self._format(action)

    def _deck_message(self, task: deckmod.DeckTask, action: Any, author: str, seq: int) -> None:
        g, game = deckmod.PLAY, self.game_id
        if isinstance(action, deckmod.DeckStep):
            if task.kind != "step":
                raise DeckError("a shuffle step where key openings are due")
            rnd = task.round
            done = self.deck_rounds.get(rnd, [])
            if not done:
                if rnd in self.deck_rounds or task.first not in self.keys:
                    raise DeckError("round label used twice or no first player", rnd, 1, author)
                resolve = deckmod.history_resolver(g, self._deck_history())
                for src in task.sources:
                    if isinstance(src, deckmod.Carry) and any(
                            src in s for r, s in self.deck_sources.items() if r != rnd):
                        raise DeckError(f"position {src.pos} of {src.round!r} was carried before", rnd, 1, author)
                deckmod.input_elements(g, game, task.sources, resolve)
            first = self.deck_first.get(rnd, task.first)
            number = len(done) + 1
            if author != (first if number % 2 else self.other(first)):
                raise DeckError(f"step {number} is not {author}'s", rnd, number, author)
            deckmod.check_step(g, task.sources, done, action.step)
            if number <= 2 and deckmod.seed_label(rnd, author) not in self.commitments:
                raise DeckError("the author's seed for the round is not committed", rnd, number, author)
            self.deck_rounds[rnd] = done + [action.step]
            self.deck_first[rnd] = first
            self.deck_sources[rnd] = list(task.sources)
            self.deck_where[(rnd, number)] = (seq, author)
            want = list(task.deal) if number >= 3 else []
            self._deck_keys_for(rnd, action.deal, want, number, author, seq, deal=True)
            return
        if task.kind != "keys":
            raise DeckError("key openings where a shuffle step is due")
        self._deck_keys_for(task.round, action.deal, list(task.deal), None, author, seq, deal=True)
        want_open = list(task.open)
        if [(k.round, k.index) for k in action.open] != [tuple(o) for o in want_open]:
            raise DeckError(f"opens {[(k.round, k.index) for k in action.open]}, the rules ask for {want_open}")
        for k in action.open:
            if self.deck_dealt.get((k.round, k.index)) != author:
                raise DeckError(f"position {k.index} was not dealt to {author}", k.round, 0, author)
            if (k.round, k.index) in self.deck_opened:
                raise DeckError(f"position {k.index} is opened twice", k.round, 0, author)
            self._deck_check_key(k, author)
            self.deck_opened[(k.round, k.index)] = author
            self.deck_where[(k.round, -2 - k.index)] = (seq, author)

    def _own_step(self, rnd: str, role: str) -> int:
        return 3 if self.deck_first.get(rnd) == role else 4

    def _deck_check_key(self, k: deckmod.KeyOpening, author: str) -> None:
        steps = self.deck_rounds.get(k.round)
        if steps is None:
            raise DeckError("key for a round that does not exist", k.round, k.step, author)
        if k.step != self._own_step(k.round, author):
            raise DeckError(f"key of step {k.step}, not {author}'s per-card key", k.round, k.step, author)
        deckmod.check_key(deckmod.PLAY, self.game_id, deckmod.DeckRound(steps=steps), k)
        self.deck_keys[(k.round, k.step, k.index)] = k

    def _deck_keys_for(self, rnd: str, keys: list[deckmod.KeyOpening], want: list[int], number: int | None,
                       author: str, seq: int, *, deal: bool) -> None:
        if [k.index for k in keys] != want or any(k.round != rnd for k in keys):
            raise DeckError(f"deals positions {[k.index for k in keys]}, the rules deal {want}", rnd, number or 0, author)
        other = self.other(author)
        for k in keys:
            if (rnd, k.index) in self.deck_dealt:
                raise DeckError(f"position {k.index} dealt twice", rnd, k.step, author)
            self._deck_check_key(k, author)
            self.deck_dealt[(rnd, k.index)] = other
            self.deck_where[(rnd, -2 - k.index)] = (seq, author)

    def _deck_history(self) -> dict[str, deckmod.DeckRound]:
        return {r: deckmod.DeckRound(steps=s) for r, s in self.deck_rounds.items() if len(s) == deckmod.STEPS}

    def _deck_key(self, rnd: str, step: int, pos: int, role: str) -> int | None:
        k = self.deck_keys.get((rnd, step, pos))
        if k is not None:
            return int(k.key, 16)
        label = deckmod.seed_label(rnd, role)
        seed = self.opened.get(label, self.known.get(label))
        if seed is None or len(seed) != 32:
            return None
        return deckmod.round_key(deckmod.PLAY, self.game_id, rnd, seed, step, pos)

    def card(self, rnd: str, pos: int) -> str | None:
        """The label at position ``pos`` of round ``rnd`` if this replay can see it:
        its own card (the opponent's key dealt it), a card opened by its holder,
        every card in an audit. None otherwise."""
        hit = self._cards.get((rnd, pos))
        if hit is not None:
            return hit
        steps = self.deck_rounds.get(rnd)
        if steps is None or len(steps) != deckmod.STEPS:
            return None
        first = self.deck_first[rnd]
        k1 = self._deck_key(rnd, 3, pos, first)
        k2 = self._deck_key(rnd, 4, pos, self.other(first))
        if k1 is None or k2 is None:
            return None
        try:
            label = deckmod.unlock(deckmod.PLAY, self.game_id, self._deck_history(), rnd, pos, k1, k2)
        except DeckError:
            return None
        self._cards[(rnd, pos)] = label
        return label

    def deck_audit(self) -> list[deckmod.Dealt]:
        """``audit_deck`` over every completed round with every seed opened, then
        the game invariants: the deck and the cards outside it always make the
        one deck of the first round (nothing lost, nothing in two places), every
        card opened was dealt to its opener. DeckError names round, step and author;
        ``deck_event`` turns it into the event."""
        g, game = deckmod.PLAY, self.game_id
        names = [r for r, s in self.deck_rounds.items() if len(s) == deckmod.STEPS]
        authors = {r: (self.deck_first[r], self.other(self.deck_first[r])) for r in names}
        openings: list[deckmod.KeyOpening] = list(self.deck_keys.values())
        for r in names:
            n = len(self.deck_sources[r])
            for index, role in enumerate(authors[r]):
                label = deckmod.seed_label(r, role)
                seed = self.opened.get(label, self.known.get(label))
                if seed is None or len(seed) != 32:
                    raise DeckError("the seed of the round was never opened", r, 1 + index, role)
                openings += deckmod.open_all(g, game, r, seed, index, n)
        draws = [deckmod.Draw(round=r, pos=p, to=to) for (r, p), to in self.deck_dealt.items() if r in authors]
        dealt = deckmod.audit_deck(g, game, [deckmod.DeckRound(steps=self.deck_rounds[r]) for r in names],
                                   openings, draws, authors)
        universe: set[str] = set()
        outside: set[str] = set()
        deck_now: set[str] = set()
        by_round = {d.round: d for d in dealt}
        for d in dealt:
            entering = set()
            for src in self.deck_sources[d.round]:
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
        for (r, p), who in self.deck_opened.items():
            if self.deck_dealt.get((r, p)) != who:
                raise DeckError(f"position {p} opened by {who}, who was not dealt it", r, 0, who)
        return dealt

    def deck_event(self, exc: DeckError) -> str:
        """'event N by X: ...' for an audit DeckError (the step's event, or the round's first)."""
        hit = self.deck_where.get((exc.round, exc.step)) or self.deck_where.get((exc.round, 1))
        if hit is None:
            return str(exc)
        seq, author = hit
        return f"event {seq} by {author}: {exc}"

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
            value = bytes.fromhex(opening.value)
            if not opening_matches(record, self.commit_domain, opening.label, bytes.fromhex(opening.salt), value):
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


def replay(rules: RulesModule, events: Iterable[bytes], *, role: str | None = None,
           known: Mapping[str, bytes] | None = None) -> Replay:
    """Verify and fold a whole log; raises on the first bad event."""
    r = Replay(rules, role=role, known=dict(known or {}))
    for stored in events:
        r.apply_stored(stored)
    return r


def audit_openings(events: Iterable[bytes]) -> dict[str, bytes]:
    """Every valid opening published anywhere in a log: label -> value.

    Openings are checked against their commitments here, so an audit never
    judges an early action by a value its owner could not open.
    """
    game = b""
    digests: dict[str, CommitRecord] = {}
    found: dict[str, bytes] = {}
    for stored in events:
        try:
            unwrapped = codec.unwrap(stored)
            body = codec.decode_body(unwrapped.body)
        except CodecError:
            continue
        if body.genesis is not None:
            game = bytes.fromhex(body.genesis.nonce)
        for c in body.commits:
            digests.setdefault(c.label, CommitRecord(bytes.fromhex(c.digest), body.seq, body.author, c.kind))
        for o in body.reveals:
            record = digests.get(o.label)
            value = bytes.fromhex(o.value)
            if record is not None and opening_matches(record, game, o.label, bytes.fromhex(o.salt), value):
                found.setdefault(o.label, value)
    return found
