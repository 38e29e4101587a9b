"""Checking a whole log, as ``pbem verify`` and ``pbem audit`` do, on two cores (issue 20).

The reference is plain: ``Replay.apply_stored`` of every event in order, then
(audit) the shared deck's audit (``DeckLedger.audit``). This module gives the
same result, and on a bad log the same first error, faster:

- the replay does not word events for people (``Replay.describe``): verify
  and audit print no history;
- a second process (``os.fork``, Linux, a single-threaded caller, a log of at
  least ``MIN_EVENTS``) checks every event's signature ahead of the replay,
  which waits for the answer of each event before it applies the event, so a
  forged event never reaches the rules (a valid answer also means the second
  process unwrapped those very bytes, so the replay reads their canonical
  wrapper without checking it again: ``codec.unwrap_vouched``). On verify it
  sends with each answer what it computed ahead for that event (card
  multiplications, whole-set openings: ``_Ahead``), and then checks the
  points of every shuffle step (the group's check:
  ``crypto_core_ed25519_is_valid_point``, or
  ``crypto_core_ristretto255_is_valid_point`` in a game of format version 7
  or 8) but those the opponent's next step took as its input
  (``consented_only``, left to receive and audit: docs/deck.md "Checks
  computed once"); on audit it runs the arithmetic of
  the deck audit (``deckmod.RoundsAudit``) on the rounds it reads from the
  log, from the first round on, and sends each round's result as it has it;
  the replay's process, its replay done, takes rounds from the last one
  back until the two meet (so neither core waits while the other has work),
  and uses the second process's results only if their input is byte for
  byte the one the replay's ledger gives;
- the replay reads the shuffle steps' points without their subgroup check
  (``DeckLedger.unchecked``) and checks, before it trusts anything, every
  point neither the second process checked nor the deck audit multiplied
  (a multiplication in libsodium refuses what the check refuses:
  ``Ed25519Group.exp`` and ``Ristretto255Group.exp`` in pbem.deck).

On one core, verify reads the points unchecked and checks all but
``consented_only`` after the replay (``_deferred``).

Any failure of the fast path (a refused event, a deck audit fault, a point
that is not valid, a second process that died) reruns the reference, whose
error is the one reported: error messages, exit codes and the event named
stay those of the plain replay, and the outcome never depends on timing.
docs/protocol.md ("What verify and audit compute") states this.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import select
import signal
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from pbem import codec, commit
from pbem import deck as deckmod
from pbem.codec import Unwrapped
from pbem.errors import IllegalAction
from pbem.game import Replay, audit_knowledge
from pbem.identity import verify_signature
from pbem.ledger import AuditInput
from pbem.rulesapi import RulesModule

#: Below this many events a second process costs more than it saves.
MIN_EVENTS = 64
#: Set to "0" to check on one core (the reference path, for comparison).
ENV = "PBEM_SECOND_CORE"

_SIG_OK, _SIG_BAD, _SIG_NONE = 1, 0, 2
#: The kinds of the second process's records after its event answers: verify's
#: ``_Result``; the audit's input digest, then one round's permutations at a
#: time, or a fault (no more rounds).
_RESULT, _INPUT, _ROUND, _FAULT = 16, 17, 18, 19
_deck_actions = msgspec.json.Decoder(deckmod.DeckAction)


@dataclass
class Checked:
    """A checked log: its replay, the unopened commitments by role (audit) and the deck's audit."""

    replay: Replay
    unopened: dict[str, list[str]] = field(default_factory=dict)
    deck: list[deckmod.Dealt] = field(default_factory=list)


class _Fallback(Exception):
    """The fast path cannot vouch for its result: run the reference."""


# -- the reference ---------------------------------------------------------------


def _plain(rules: RulesModule, events: Sequence[bytes], role: str | None, known: Mapping[str, bytes],
           audit: bool, salts: Mapping[str, bytes], decoded: dict[bytes, codec.Body] | None = None) -> Checked:
    r = Replay(rules, role=role, known=dict(known), describe=False, known_salts=salts, decoded=decoded)
    for stored in events:
        r.apply_stored(stored)
    return _finish(r, known, audit, None)


def _finish(r: Replay, known: Mapping[str, bytes], audit: bool,
            rounds_done: Callable[[AuditInput], list[deckmod.Dealt] | None] | None) -> Checked:
    """The audit's end: unopened commitments, then the deck audit once every seed is open."""
    if not audit:
        return Checked(r)
    unopened: dict[str, list[str]] = {}
    for label, author in r.commitment_authors().items():
        if label not in known:
            unopened.setdefault(author, []).append(label)
    dealt: list[deckmod.Dealt] = []
    seeds_open = not any(label.startswith("deck/") for labels in unopened.values() for label in labels)
    if r.ledger and seeds_open:
        try:
            dealt = r.deck_audit() if rounds_done is None else r.deck_audit(rounds_done)
        except deckmod.DeckError as exc:
            if r.ledger.unchecked is not None:
                raise _Fallback from None  # read unchecked: the checked audit names the first fault
            raise IllegalAction(f"the shared deck: {r.deck_event(exc)}") from None
    return Checked(r, unopened, dealt)


# -- the public functions -------------------------------------------------------------


def verify(rules: RulesModule, events: Sequence[bytes]) -> Replay:
    """Every event checked in order from the public perspective (``pbem verify``);
    of the shuffle points, those the next step of their round has taken as its
    input are left to receive and audit (``consented_only``)."""
    return _check(rules, events, None, {}, {}, audit=False).replay


def audit(rules: RulesModule, events: Sequence[bytes], role: str) -> Checked:
    """The replay with every opening in the log known from the start (DESIGN 4),
    the commitments never opened, and the shared deck's audit once every seed is
    open (``pbem audit``; ``role`` is the audit's perspective)."""
    decoded: dict[bytes, codec.Body] = {}
    known, salts = audit_knowledge(events, decoded)
    return _check(rules, events, role, known, salts, audit=True, decoded=decoded)


def _check(rules: RulesModule, events: Sequence[bytes], role: str | None, known: Mapping[str, bytes],
           salts: Mapping[str, bytes], audit: bool, decoded: dict[bytes, codec.Body] | None = None) -> Checked:
    # Whatever goes wrong on a faster path, the next one decides: verify's one-core
    # path accepts exactly what the two-core path accepts (a second process that
    # died changes nothing), and the reference names the first fault of a bad log.
    if _two_cores(events):
        found = _attempt(_fast, rules, events, role, known, audit, salts, decoded)
        if found is not None:
            return found
    if not audit:
        found = _attempt(_deferred, rules, events)
        if found is not None:
            return found
    return _plain(rules, events, role, known, audit, salts, decoded)


#: Why a faster path gave way to the next one, the latest few last. The
#: outcome never depends on it; the tests read it (tests/conftest.py), so that
#: a programming error in a fast path (a TypeError, say) fails them instead of
#: passing as a fallback, only slower.
FALLBACKS: list[BaseException] = []


def _attempt(path: Callable[..., Checked], *args: object) -> Checked | None:
    try:
        return path(*args)
    except Exception as exc:  # noqa: BLE001 - the next path decides; the reason is kept
        FALLBACKS.append(exc)
        del FALLBACKS[:-8]
        return None


def consented_only(rounds: Mapping[str, Sequence[deckmod.Step]]) -> set[str]:
    """The shuffle points ``pbem verify`` leaves to receive and audit: those of a
    step that the next step of its round, signed by the opponent (the ledger
    takes the steps of a round in order, alternating authors), has taken as its
    input, and of no other step. That opponent's pbem checked each of them at
    receipt and multiplied each (libsodium refuses a point the check refuses),
    so only a client that skipped both could have signed over a bad one: its
    own user, the only one a bad point can harm (it would let the step's author
    follow cards through that user's shuffle). The audit still multiplies every
    point and names the step and its signer (docs/deck.md "Checks computed once")."""
    taken: set[str] = set()
    last: set[str] = set()
    for steps in rounds.values():
        for step in steps[:-1]:
            taken.update(step.cards)
        if steps:
            last.update(steps[-1].cards)
    return taken - last


def _deferred(rules: RulesModule, events: Sequence[bytes]) -> Checked:
    """``pbem verify`` on one core: the replay reads the shuffle points unchecked,
    then checks all but ``consented_only``; any failure runs the reference."""
    r = Replay(rules, role=None, known={}, describe=False)
    unchecked: deckmod.Unchecked = set()
    r.ledger.unchecked = unchecked
    for stored in events:
        r.apply_stored(stored)
    _check_rest(r.deck_group, unchecked, consented_only(r.ledger.rounds))
    r.ledger.unchecked = None
    return Checked(r)


def _check_rest(group: deckmod.AnyGroup, unchecked: deckmod.Unchecked, covered: set[str]) -> None:
    """Check every point read unchecked that nothing else vouched for; _Fallback on a bad one."""
    for text in unchecked - covered:
        if deckmod._valid(group, text) is None:
            raise _Fallback


def _two_cores(events: Sequence[bytes]) -> bool:
    return (os.environ.get(ENV, "1") != "0" and len(events) >= MIN_EVENTS and sys.platform.startswith("linux")
            and hasattr(os, "fork") and threading.active_count() == 1)


# -- the fast path -------------------------------------------------------------------------


def _fast(rules: RulesModule, events: Sequence[bytes], role: str | None, known: Mapping[str, bytes],
          audit: bool, salts: Mapping[str, bytes], decoded: dict[bytes, codec.Body] | None = None) -> Checked:
    r = Replay(rules, role=role, known=dict(known), describe=False, known_salts=salts, decoded=decoded)
    r.apply_stored(events[0])  # the genesis, checked here: its keys are the second process's
    keys = dict(r.keys)
    group = r.deck_group  # Ed25519 or Ristretto255, whose multiplication refuses what their check refuses
    helper = _Helper.start(events, keys, r.roles, known, r.game_id, group, audit)
    try:
        unchecked: deckmod.Unchecked = set()
        r.ledger.unchecked = unchecked
        position = [0]

        def signature_ok(key: Ed25519PublicKey, u: Unwrapped) -> bool:
            answer = helper.signature(position[0]) if keys.get(u.author) is key else _SIG_NONE
            if answer == _SIG_NONE:
                return verify_signature(key, u.sig, codec.signing_input(u.body))
            return answer == _SIG_OK

        def unwrapper(stored: bytes) -> Unwrapped:
            # A valid signature answer means the second process unwrapped these very bytes.
            at = position[0]
            if stored is events[at] and helper.signature(at) == _SIG_OK:
                return codec.unwrap_vouched(stored)
            return codec.unwrap(stored)

        r.signature_check = signature_ok
        r.unwrapper = unwrapper
        if not audit:  # the second process works ahead of the replay: its hints arrive with the signatures
            r.set_hints = helper.set_hints
            r.ledger.exp_hints = helper.exp_hints
        for index in range(1, len(events)):
            position[0] = index
            r.apply_stored(events[index])
        # Points known valid: checked by the second process (verify), or multiplied
        # by a deck audit that passed, here or in the second process (audit; it
        # raises otherwise, and the reference runs). The rest is checked here
        # before anything is trusted.
        covered: set[str] = set()
        rounds_done = None
        if audit:
            def rounds_done(given: AuditInput) -> list[deckmod.Dealt] | None:
                covered.update(c for rnd in given.rounds for step in rnd.steps for c in step.cards)
                if helper.audit_input(len(events) - 1) != _digest(given):
                    return None
                rounds = deckmod.RoundsAudit(group, r.game_id, given.openings, given.authors)
                jobs = list(rounds.jobs(given.rounds, unchecked))
                perms: dict[str, deckmod.Perms] = {}
                back = len(jobs)  # the rounds from ``back`` on are done here, from the last
                while True:
                    ahead = helper.rounds_ahead(perms)  # the second process's, from the first
                    if ahead is None:
                        return None
                    if ahead >= back:
                        return rounds.result(jobs, perms)
                    back -= 1
                    perms[jobs[back].name] = jobs[back].arith()
        else:
            result = helper.result(len(events) - 1)
            covered.update(consented_only(r.ledger.rounds))
            if result is not None:
                covered.update(p.hex() for p in result.valid)
        checked = _finish(r, known, audit, rounds_done)
        _check_rest(group, unchecked, covered)
        r.ledger.unchecked = None
        r.ledger.exp_hints = None
        r.signature_check = None
        r.unwrapper = None
        r.set_hints = None
        return checked
    finally:
        helper.close()


def _digest(given: AuditInput) -> bytes:
    return hashlib.sha256(msgspec.msgpack.encode([given.rounds, given.openings, sorted(given.authors.items())],
                                                 order="deterministic")).digest()


class _Result(msgspec.Struct, frozen=True):
    """What the second process found beyond the signatures (verify): every shuffle
    point it found valid (32 bytes each)."""

    valid: list[bytes] = []


class _Round(msgspec.Struct, frozen=True, array_like=True):
    """One round's permutations from the second process's deck audit (audit)."""

    name: str
    pi: list[int]
    sigma: list[int]


class _Hints(msgspec.Struct, frozen=True, array_like=True):
    """What the second process computed ahead for one event (verify): the
    event's whole-set openings ((root, seed, sha256 of the leaves, opens?),
    ``commit.set_opens``) and the cards its published keys unlock ((step-4
    point hex, ``deck.key_product`` of the point's keys, result), 32-byte
    big-endian integers: ``deck.unlock``). Hints of an event the replay
    refuses, or that it never asks for, are never used."""

    sets: list[tuple[bytes, bytes, bytes, bool]] = []
    exps: list[tuple[str, bytes, bytes]] = []


class _Helper:
    """The second process and the pipe its answers come through, in records of a
    kind (1 byte), a length (4 bytes) and a payload: per event after the
    genesis, its signature answer as the kind and its ``_Hints`` (msgpack;
    verify only); then verify's ``_Result``, or the audit's input digest and
    its rounds one at a time (``_Round``; a ``_FAULT`` ends them)."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid, self.fd = pid, fd
        self.buf = bytearray()
        self.eof = False
        self.answers: list[int] = []
        self.offset = 0
        self.set_hints: dict[tuple[bytes, bytes, bytes], bool] = {}
        self.exp_hints: dict[tuple[str, int], int] = {}
        #: The audit's rounds received so far, in order; None after a fault.
        self.rounds: int | None = 0

    @classmethod
    def start(cls, events: Sequence[bytes], keys: Mapping[str, Ed25519PublicKey], roles: Sequence[str],
              known: Mapping[str, bytes], game: bytes, group: deckmod.AnyGroup, audit: bool) -> _Helper:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the second process: never returns
            code = 0
            try:
                os.close(read)
                _work(write, events, keys, roles, known, game, group, audit)
            except BaseException:  # noqa: BLE001 - the parent reads a short answer and checks alone
                code = 1
            finally:
                os._exit(code)
        os.close(write)
        return cls(pid, read)

    def _need(self, n: int, wait: bool = True) -> bool:
        """Whether ``n`` bytes came; reads what it needs, without waiting unless ``wait``."""
        while len(self.buf) < n and not self.eof:
            if not wait and not select.select([self.fd], [], [], 0)[0]:
                return False
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.eof = True
            self.buf += chunk
        return len(self.buf) >= n

    def _next(self, wait: bool = True) -> tuple[int, bytes] | None:
        """The next record (kind, payload); None if it has not come (or never will)."""
        at = self.offset
        if not self._need(at + 5, wait):
            return None
        size = int.from_bytes(self.buf[at + 1:at + 5], "big")
        if not self._need(at + 5 + size, wait):
            return None
        self.offset = at + 5 + size
        return self.buf[at], bytes(self.buf[at + 5:at + 5 + size])

    def _record(self) -> bool:
        """Read the next event's answer and hints; False if the second process sent no more."""
        found = self._next()
        if found is None or found[0] not in (_SIG_OK, _SIG_BAD, _SIG_NONE):
            return False
        answer, payload = found
        if payload:
            try:
                hints = _hints.decode(payload)
            except (msgspec.DecodeError, ValueError):
                return False
            for root, seed, digest, ok in hints.sets:
                self.set_hints[(root, seed, digest)] = ok
            for text, product, x in hints.exps:
                self.exp_hints[(text, int.from_bytes(product, "big"))] = int.from_bytes(x, "big")
        self.answers.append(answer)
        return True

    def _records(self, n: int) -> bool:
        """Whether the answers of the first ``n`` events came (read as needed)."""
        while len(self.answers) < n:
            if not self._record():
                return False
        return True

    def signature(self, position: int) -> int:
        """The answer for the event at ``position`` (from 1), _SIG_NONE if there is none."""
        return self.answers[position - 1] if self._records(position) else _SIG_NONE

    def _after(self, answers: int, kind: int) -> bytes | None:
        """The payload of the record after the ``answers`` event answers, if it is of ``kind``."""
        found = self._next() if self._records(answers) else None
        return found[1] if found is not None and found[0] == kind else None

    def result(self, answers: int) -> _Result | None:
        """Verify: what the second process sent after its ``answers`` event answers (None: nothing usable)."""
        payload = self._after(answers, _RESULT)
        if payload is None:
            return None
        try:
            return msgspec.msgpack.decode(payload, type=_Result)
        except (msgspec.DecodeError, ValueError):
            return None

    def audit_input(self, answers: int) -> bytes | None:
        """Audit: the digest of the deck audit's input the second process read
        after its ``answers`` event answers (None: none)."""
        return self._after(answers, _INPUT)

    def rounds_ahead(self, perms: dict[str, deckmod.Perms]) -> int | None:
        """Audit: the rounds' permutations that came since the last call, into
        ``perms``, without waiting; how many rounds from the first the second
        process has done (it does them in order), None if it found a fault."""
        while self.rounds is not None:
            found = self._next(wait=False)
            if found is None:
                break
            try:
                if found[0] != _ROUND:
                    raise ValueError(found[0])
                done = _round.decode(found[1])
            except (msgspec.DecodeError, ValueError):
                self.rounds = None
                break
            perms.setdefault(done.name, (done.pi, done.sigma))
            self.rounds += 1
        return self.rounds

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)


def _send(fd: int, kind: int, payload: bytes = b"") -> None:
    """Write one record to the pipe: its kind, its length and its payload."""
    view = memoryview(bytes([kind]) + len(payload).to_bytes(4, "big") + payload)
    while view:
        view = view[os.write(fd, view):]


def _work(fd: int, events: Sequence[bytes], keys: Mapping[str, Ed25519PublicKey], roles: Sequence[str],
          known: Mapping[str, bytes], game: bytes, group: deckmod.AnyGroup, audit: bool) -> None:
    """The second process: per event after the genesis, its signature answer and
    its ``_Hints`` (verify only); then, on verify, the ``_Result`` of its check
    of the points of every shuffle step but ``consented_only``; on audit, the
    digest of the deck audit's input it reads from the log and the
    permutations of each round, from the first, as it has them."""
    steps: list[tuple[str, deckmod.DeckAction]] = []
    ahead = None if audit else _Ahead(group)
    for stored in events[1:]:
        answer = _SIG_NONE
        try:
            u = codec.unwrap(stored)
            key = keys.get(u.author)
            if key is not None:
                answer = _SIG_OK if verify_signature(key, u.sig, codec.signing_input(u.body)) else _SIG_BAD
        except Exception:  # noqa: BLE001 - the replay refuses it itself, before its signature
            u = None
        body = None
        if answer == _SIG_OK and u is not None:
            try:
                body = codec.decode_body(u.body)
            except Exception:  # noqa: BLE001 - the replay refuses it itself
                body = None
        found: list[deckmod.DeckAction] = []
        for raw in body.actions if body is not None else ():
            try:
                found.append(_deck_actions.decode(bytes(raw)))
            except msgspec.DecodeError:
                continue
        _send(fd, answer, b"" if ahead is None or body is None else ahead.event(body, found))
        if body is not None:
            steps += [(body.author, action) for action in found]
    if audit:
        _audit_rounds(fd, steps, roles, known, game, group)
        return
    rounds: dict[str, list[deckmod.Step]] = {}
    for _, action in steps:
        if isinstance(action, deckmod.DeckStep):
            rounds.setdefault(action.step.round, []).append(action.step)
    skip = consented_only(rounds)  # as the replay's ledger will find them, for an honest log
    multiplied = ahead.multiplied if ahead is not None else set()
    valid = []
    for texts in rounds.values():
        for step in texts:
            for text in step.cards:
                # A point _Ahead multiplied is valid: libsodium refuses what the check refuses.
                if text not in skip and len(text) == 2 * group.size and \
                        (text in multiplied or deckmod._valid(group, text) is not None):
                    valid.append(bytes.fromhex(text))
    _send(fd, _RESULT, msgspec.msgpack.encode(_Result(valid=valid)))


class _Ahead:
    """The second process's work ahead of the replay, event by event (verify):
    the same pure functions the replay would call, on the log's own bytes."""

    def __init__(self, group: deckmod.AnyGroup) -> None:
        self.group = group
        self.sets: dict[str, bytes] = {}
        self.step4: dict[str, list[str]] = {}
        self.keys: dict[tuple[str, int, int], int] = {}
        self.sent: set[tuple[str, int]] = set()
        #: The step-4 points multiplied without a refusal (each is a valid point).
        self.multiplied: set[str] = set()

    def event(self, body: codec.Body, deck: Sequence[deckmod.DeckAction]) -> bytes:
        hints = _Hints(sets=[], exps=[])
        for c in body.commits:
            if c.kind == "set":
                self.sets.setdefault(c.label, bytes.fromhex(c.digest))
        for o in body.reveals:
            root = self.sets.get(o.label)
            if root is not None:
                seed, data = bytes.fromhex(o.salt), bytes.fromhex(o.value)
                hints.sets.append((root, seed, hashlib.sha256(data).digest(), commit.set_opens(root, seed, data)))
        pairs: set[tuple[str, int]] = set()
        for action in deck:
            if isinstance(action, deckmod.DeckStep) and action.step.step == deckmod.STEPS:
                self.step4.setdefault(action.step.round, list(action.step.cards))
                pairs.update((action.step.round, i) for i in range(len(action.step.cards)))
            for k in _keys_of(action):
                if k.step in (3, 4):
                    try:
                        self.keys.setdefault((k.round, k.step, k.index), int(k.key, 16))
                    except ValueError:
                        continue
                    pairs.add((k.round, k.index))
        group = self.group
        for rnd, pos in sorted(pairs):
            cards = self.step4.get(rnd)
            k3, k4 = self.keys.get((rnd, 3, pos)), self.keys.get((rnd, 4, pos))
            if cards is None or k3 is None or k4 is None or not 0 <= pos < len(cards) or (rnd, pos) in self.sent:
                continue
            self.sent.add((rnd, pos))  # keys are kept first come: a pair is computed once
            try:
                product = deckmod.key_product(group, k3, k4)
                x = deckmod.unlock_point(group, deckmod.parse_elem(group, cards[pos], set()), product)
            except (deckmod.DeckError, ValueError):
                continue  # the replay meets the same fault, and names it
            self.multiplied.add(cards[pos])
            hints.exps.append((cards[pos], product.to_bytes(32, "big"), x.to_bytes(32, "big")))
        return msgspec.msgpack.encode(hints) if hints.sets or hints.exps else b""


_hints = msgspec.msgpack.Decoder(_Hints)
_round = msgspec.msgpack.Decoder(_Round)


def _keys_of(action: deckmod.DeckAction) -> list[deckmod.KeyOpening]:
    """The per-card keys a deck message publishes: a step's deal, or the deal and
    the openings of a key message."""
    return list(action.deal) if isinstance(action, deckmod.DeckStep) else list(action.deal) + list(action.open)


def _audit_rounds(fd: int, steps: Sequence[tuple[str, deckmod.DeckAction]], roles: Sequence[str],
                  known: Mapping[str, bytes], game: bytes, group: deckmod.AnyGroup) -> None:
    """The deck audit of the input a ledger that accepted these deck messages gives
    (``DeckLedger.audit_input``), read from the messages themselves: its digest,
    then each round's permutations, from the first, until a fault."""
    rounds: dict[str, list[deckmod.Step]] = {}
    first: dict[str, str] = {}
    keys: dict[tuple[str, int, int], deckmod.KeyOpening] = {}
    for author, action in steps:
        if isinstance(action, deckmod.DeckStep):
            rounds.setdefault(action.step.round, []).append(action.step)
            first.setdefault(action.step.round, author)
        for k in _keys_of(action):
            keys.setdefault((k.round, k.step, k.index), k)
    names = [r for r, s in rounds.items() if len(s) == deckmod.STEPS]
    other = {role: next((o for o in roles if o != role), "") for role in roles}
    authors = {r: (first[r], other.get(first[r], "")) for r in names}
    openings = list(keys.values())
    for r in names:
        n = len(rounds[r][0].sources)
        for index, role in enumerate(authors[r]):
            seed = known.get(deckmod.seed_label(r, role))
            if seed is None or len(seed) != 32:
                _send(fd, _INPUT)  # the ledger refuses such a log itself
                return
            openings += deckmod.open_all(group, game, r, seed, index, n)
    given = AuditInput([deckmod.DeckRound(steps=rounds[r]) for r in names], openings, authors)
    _send(fd, _INPUT, _digest(given))
    try:
        audit = deckmod.RoundsAudit(group, game, given.openings, given.authors)
        for job in audit.jobs(given.rounds, set()):
            pi, sigma = job.arith()
            _send(fd, _ROUND, msgspec.msgpack.encode(_Round(job.name, pi, sigma)))
    except (deckmod.DeckError, ValueError):
        _send(fd, _FAULT)  # the replay's process finds it, and the reference names it
