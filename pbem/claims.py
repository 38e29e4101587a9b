"""Time controls and claims (issue 27 point 4; docs/protocol.md decision 23).

A game created with ``pbem new --reply-days N [--leave-days M]`` is played at
format version 2: its genesis records the time control and every event a
signed time. ``clock_status`` says who owes the pending decision since which
event and until when. A player whose opponent is past the limit writes a
claim in two steps, as correspondence chess does with a repeated move before
a claim to the tournament director:

1. ``pbem claim`` (the opponent owes a decision): resends the events the
   opponent needs (the turn file ``pbem send --since N`` writes) and signs a
   *resend record* naming the log's head and the resend's time.
2. ``pbem claim`` again, once the deadline has passed and the resend is
   ``RESEND_GRACE`` old with no answer in the log: signs the *claim*, a file
   carrying the log up to its head, which anyone checks with
   ``pbem claim --check FILE`` against that log (or a longer one).

A claim proves what the log proves: the request (the event after which the
decision was the defaulter's), its signed time, the absence of an answer in
the claimant's log after the resend, and the claimant's signed times of the
resend and of the claim. It cannot prove that mail was or was not delivered:
an answer that arrives later and is signed in time makes the claim
*contested*, and the claim check says so.
"""

from __future__ import annotations

import datetime
import os
import time as timemod
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from pbem import codec
from pbem.codec import Clock
from pbem.errors import BadFile, IllegalAction, UsageProblem, VerifyError
from pbem.game import DAY, Replay, format_time
from pbem.identity import Identity, verify_signature
from pbem.rulesapi import Decision
from pbem.text import shown

if TYPE_CHECKING:
    from pbem.session import Seat
    from pbem.store import GameDir

#: Pretend the current time is this (seconds since 1970 UTC, or an ISO date and
#: time in UTC): for tests and demonstrations. A player can make pbem sign any
#: time anyway; what a signed time proves is in docs/protocol.md decision 23.
TIME_ENV = "PBEM_NOW"
#: An incoming event signed more than this ahead of the receiver's clock is refused.
SKEW = DAY
#: How old a resend must be, with no answer in the log, before a claim.
RESEND_GRACE = 2 * DAY
#: Largest claim file accepted (it carries the log).
MAX_CLAIM_BYTES = 64 << 20

CLAIM_DOMAIN = b"pbem/v1/claim\x00"
RESEND_DOMAIN = b"pbem/v1/resend\x00"
CLAIM_TYPE = "pbem-claim"


def now() -> int:
    """The current time in whole seconds since 1970 UTC (``$PBEM_NOW`` if set)."""
    value = os.environ.get(TIME_ENV, "").strip()
    if not value:
        return int(timemod.time())
    if value.isdigit():
        return int(value)
    try:
        moment = datetime.datetime.fromisoformat(value)
    except ValueError:
        raise UsageProblem(f"${TIME_ENV} is {shown(value, 40)!r}: give seconds since 1970 or an ISO date "
                           "and time (UTC)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return int(moment.timestamp())


def signing_time(replay: Replay) -> int:
    """The time to sign a new event with: now, but never before the log's last signed time."""
    last = replay.history[-1].time if replay.history else 0
    return max(now(), last)


def require_plausible_time(seq: int, author: str, signed: int, at: int | None = None) -> None:
    """IllegalAction naming the signer if an incoming event's signed time is more
    than ``SKEW`` ahead of this machine's clock: such a time would push every
    later time (they never go back) past any deadline the opponent could claim."""
    at = now() if at is None else at
    if signed > at + SKEW:
        raise IllegalAction(f"event {seq} by {author}: signed time {format_time(signed)} is more than a day "
                            f"ahead of this machine's clock ({format_time(at)}); refused (decision 23): a "
                            "time in the future would move every deadline of the game")


def span(seconds: int) -> str:
    """A duration as people read it ('2 days 4 hours', '35 minutes')."""
    seconds = abs(seconds)
    days, rest = divmod(seconds, DAY)
    hours, rest = divmod(rest, 3600)
    parts = []
    if days:
        parts.append(f"{days} day" + ("s" if days != 1 else ""))
    if hours:
        parts.append(f"{hours} hour" + ("s" if hours != 1 else ""))
    if not parts:
        minutes = rest // 60
        parts.append(f"{minutes} minute" + ("s" if minutes != 1 else ""))
    return " ".join(parts)


class ClockStatus(msgspec.Struct, frozen=True):
    """Who owes the pending decision since when, and the time control's limit."""

    role: str
    decision: Decision
    seq: int
    by: str
    since: int
    clock: Clock | None
    leave_used: int

    @property
    def leave_left(self) -> int:
        return 0 if self.clock is None else max(0, self.clock.leave_days * DAY - self.leave_used)

    @property
    def deadline(self) -> int | None:
        """The last moment the reply is in time (reply time plus the leave left);
        None without a time control."""
        if self.clock is None or not self.since:
            return None
        return self.since + self.clock.reply_days * DAY + self.leave_left

    def lines(self, at: int) -> list[str]:
        from pbem.session import pending_text

        since = f"since event {self.seq} by {self.by}"
        if self.since:
            since += f", signed {format_time(self.since)} ({span(at - self.since)} ago)"
        out = [f"owed: {pending_text(self.decision)} {since}"]
        deadline = self.deadline
        if self.clock is None or deadline is None:
            out.append("time control: none (the genesis sets no reply time)")
            return out
        c = self.clock
        out.append(f"time control: {c.reply_days} days per reply, {c.leave_days} days of leave per player; "
                   f"{self.role} has {span(self.leave_left)} of leave left" if self.leave_left else
                   f"time control: {c.reply_days} days per reply, {c.leave_days} days of leave per player; "
                   f"{self.role} has no leave left")
        if at <= deadline:
            out.append(f"{self.role}'s reply is due by {format_time(deadline)} ({span(deadline - at)} left)")
        else:
            out.append(f"{self.role}'s reply was due by {format_time(deadline)}: overdue by "
                       f"{span(at - deadline)} ('pbem claim' resends and then claims)")
        return out


def clock_status(replay: Replay) -> ClockStatus | None:
    """Who owes the pending decision since when (None when the game is over or not begun)."""
    owed = replay.owed
    decision = replay.pending()
    if owed is None or decision is None or decision.role != owed.role:
        return None
    g = replay.genesis
    return ClockStatus(role=owed.role, decision=decision, seq=owed.seq, by=replay.history[owed.seq].author,
                       since=owed.time, clock=None if g is None else g.clock,
                       leave_used=replay.leave_used.get(owed.role, 0))


# -- signed records -----------------------------------------------------------------

class Resend(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The claimant's signed statement that it resent events ``since``.. of the
    log ending at ``head`` (event ``head_seq``) at ``time``."""

    game: str
    role: str
    head_seq: int
    head: str
    since: int
    time: int


class Claim(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a claim states (signed by ``claimant`` with its genesis key)."""

    game: str
    claimant: str
    defaulter: str
    owed: str
    since_seq: int
    since_hash: str
    since_time: int
    head_seq: int
    head: str
    reply_days: int
    leave_days: int
    leave_used: int
    deadline: int
    resend_since: int
    resend_time: int
    resend_sig: str
    time: int


class ClaimFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A claim file: the signed claim and the log it is about (events 0..head)."""

    type: str
    v: int
    claim: Claim
    sig: str
    events: list[str]


class ResendFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    resend: Resend
    sig: str


def _signed(domain: bytes, record: msgspec.Struct) -> bytes:
    return domain + codec.canonical(record)


def resend_record(replay: Replay, role: str, since: int, identity: Identity, at: int) -> ResendFile:
    record = Resend(game=replay.game_hex, role=role, head_seq=replay.seq, head=replay.head.hex(), since=since,
                    time=at)
    return ResendFile(record, identity.sign(_signed(RESEND_DOMAIN, record)).hex())


def read_resend(data: bytes) -> ResendFile | None:
    try:
        return msgspec.json.decode(data, type=ResendFile)
    except (msgspec.DecodeError, RecursionError):
        return None


def _owed_by_opponent(replay: Replay, role: str) -> ClockStatus:
    """The opponent's pending obligation under the time control, or the error
    saying why there is nothing to claim."""
    if replay.genesis is None or replay.genesis.clock is None:
        raise UsageProblem("this game has no time control (its genesis sets no reply time): there is nothing "
                           "to claim; 'pbem show' says who owes what since when")
    status = clock_status(replay)
    if status is None:
        raise IllegalAction("no claim: nobody owes a decision (the game is over)")
    if status.role == role:
        raise IllegalAction(f"no claim: the next decision is yours ({status.decision.kind}), since event "
                            f"{status.seq}; the opponent owes nothing")
    return status


def make_claim(replay: Replay, role: str, resend: ResendFile, identity: Identity, events: Sequence[bytes],
               at: int) -> ClaimFile:
    """The signed claim of ``role`` at ``at``; IllegalAction (exit 5) naming why
    if it would not hold: nothing owed by the opponent, the deadline not passed,
    no resend of this log's head or one younger than ``RESEND_GRACE``."""
    status = _owed_by_opponent(replay, role)
    deadline = status.deadline
    assert deadline is not None  # a game with a clock signs every time
    if at <= deadline:
        raise IllegalAction(f"premature claim refused: {status.role}'s reply is due by {format_time(deadline)} "
                            f"({span(deadline - at)} from now); the log holds no answer yet, which is no default "
                            "before then")
    r = resend.resend
    if r.head_seq != replay.seq or r.head != replay.head.hex() or r.role != role:
        raise IllegalAction("no claim: your last resend was of another log head; resend first")
    if at < r.time + RESEND_GRACE:
        raise IllegalAction(f"premature claim refused: your resend of {format_time(r.time)} must be "
                            f"{span(RESEND_GRACE)} old with no answer (until {format_time(r.time + RESEND_GRACE)}), "
                            "so that a lost mail is not taken for a default")
    c = status.clock
    assert c is not None
    claim = Claim(game=replay.game_hex, claimant=role, defaulter=status.role, owed=status.decision.kind,
                  since_seq=status.seq, since_hash=replay.history[status.seq].hash.hex(), since_time=status.since,
                  head_seq=replay.seq, head=replay.head.hex(), reply_days=c.reply_days, leave_days=c.leave_days,
                  leave_used=status.leave_used, deadline=deadline, resend_since=r.since, resend_time=r.time,
                  resend_sig=resend.sig, time=at)
    return ClaimFile(type=CLAIM_TYPE, v=1, claim=claim, sig=identity.sign(_signed(CLAIM_DOMAIN, claim)).hex(),
                     events=[e.decode("ascii") for e in events])


def encode_claim(claim: ClaimFile) -> bytes:
    return msgspec.json.format(msgspec.json.encode(claim), indent=1) + b"\n"


# -- checking a claim ---------------------------------------------------------------

class Verdict(msgspec.Struct, frozen=True):
    holds: bool
    text: str
    claim: Claim


def parse_claim(data: bytes, name: str) -> ClaimFile:
    if len(data) > MAX_CLAIM_BYTES:
        raise BadFile(f"{shown(name)} is {len(data)} bytes, over the limit of {MAX_CLAIM_BYTES} for a claim")
    try:
        claim = msgspec.json.decode(data, type=ClaimFile)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise BadFile(f"{shown(name)} is not a pbem claim file: {shown(str(exc))}") from None
    if claim.type != CLAIM_TYPE or claim.v != 1:
        raise BadFile(f"{shown(name)} is not a version-1 pbem claim file")
    if not claim.events or not all(e.isascii() for e in claim.events):
        raise BadFile(f"{shown(name)} carries no log")
    return claim


def check_claim(claim_file: ClaimFile, replay: Replay, later: Sequence[bytes] = (),
                at: int | None = None) -> Verdict:
    """Whether the claim holds against the log it carries (already folded into
    ``replay``, a public replay of events 0..head) and the events that followed
    it in the checker's copy (``later``). VerifyError if the claim is not what
    its claimant signed about this log; a Verdict otherwise (``holds`` False:
    premature, answered in time, or contested)."""
    c = claim_file.claim
    at = now() if at is None else at
    if c.game != replay.game_hex or c.head_seq != replay.seq or c.head != replay.head.hex():
        raise VerifyError("the claim names another game or log head than the log it carries")
    key = replay.keys.get(c.claimant)
    if key is None or c.defaulter not in replay.keys or c.defaulter == c.claimant:
        raise VerifyError(f"the claim names roles that are not this game's players "
                          f"({shown(c.claimant, 32)} against {shown(c.defaulter, 32)})")
    if not _verify(key, claim_file.sig, _signed(CLAIM_DOMAIN, c)):
        raise VerifyError(f"the claim's signature is not valid for {c.claimant}'s key (forged or altered)")
    resend = Resend(game=c.game, role=c.claimant, head_seq=c.head_seq, head=c.head, since=c.resend_since,
                    time=c.resend_time)
    if not _verify(key, c.resend_sig, _signed(RESEND_DOMAIN, resend)):
        raise VerifyError(f"the claim's resend record is not signed by {c.claimant}")
    status = clock_status(replay)
    g = replay.genesis
    problems = []
    if g is None or g.clock is None or status is None:
        raise VerifyError("the log has no time control or nobody owes a decision at its head: nothing to claim")
    if status.role != c.defaulter:
        problems.append(f"at event {replay.seq} the next decision is {status.role}'s, not {c.defaulter}'s")
    if (status.seq, replay.history[status.seq].hash.hex(), status.since) != (c.since_seq, c.since_hash,
                                                                              c.since_time):
        problems.append(f"the decision became {status.role}'s with event {status.seq} "
                        f"(signed {format_time(status.since)}), not as the claim states")
    if (g.clock.reply_days, g.clock.leave_days, status.leave_used, status.deadline) != (
            c.reply_days, c.leave_days, c.leave_used, c.deadline):
        problems.append(f"the time control gives a deadline of {format_time(status.deadline or 0)}, not "
                        f"{format_time(c.deadline)} as the claim states")
    if problems:
        raise VerifyError(f"the claim by {c.claimant} misstates the log:", details=problems)
    head_time = replay.history[-1].time
    timing = []
    if c.resend_since > c.since_seq:
        timing.append(f"the resend (events {c.resend_since}..) does not include event {c.since_seq}, "
                      "which made the decision due")
    if c.resend_time < head_time:
        timing.append(f"the resend ({format_time(c.resend_time)}) is older than the log's last event")
    if c.time < c.resend_time + RESEND_GRACE:
        timing.append(f"the claim ({format_time(c.time)}) came less than {span(RESEND_GRACE)} after the "
                      f"resend ({format_time(c.resend_time)})")
    if c.time <= c.deadline:
        timing.append(f"the claim ({format_time(c.time)}) is not after the deadline ({format_time(c.deadline)})")
    if c.time > at + SKEW:
        timing.append(f"the claim is signed {format_time(c.time)}, in the future")
    summary = (f"{c.claimant} claims that {c.defaulter} has owed the decision '{c.owed}' since event "
               f"{c.since_seq} (signed {format_time(c.since_time)}) and did not answer by "
               f"{format_time(c.deadline)} ({c.reply_days} days per reply, leave left "
               f"{span(max(0, c.leave_days * DAY - c.leave_used))}); {c.claimant} resent events "
               f"{c.resend_since}.. at {format_time(c.resend_time)} and claimed at {format_time(c.time)} "
               f"with the log at event {c.head_seq}")
    if timing:
        return Verdict(False, f"the claim does not hold: {'; '.join(timing)}.\n{summary}", c)
    if later:
        answer = codec.unwrap(later[0])
        body = codec.decode_body(answer.body)
        if body.time > c.deadline:
            return Verdict(True, f"the claim holds: {summary}. The answer arrived later: event {body.seq} by "
                                 f"{body.author} is itself signed {format_time(body.time)}, "
                                 f"{span(body.time - c.deadline)} after the deadline.", c)
        return Verdict(False, f"the claim is contested: {summary}. Event {body.seq} by {body.author}, signed "
                              f"{format_time(body.time)}, answers in time by its signed time, yet was not in "
                              f"{c.claimant}'s log at the claim, after a resend; the log cannot tell a lost "
                              "mail from a backdated answer: an arbiter must judge.", c)
    return Verdict(True, f"the claim holds: {summary}. The log holds no answer; what it cannot prove is "
                         "whether mail was delivered.", c)


def _verify(key: object, sig_hex: str, data: bytes) -> bool:
    try:
        sig = bytes.fromhex(sig_hex)
    except ValueError:
        return False
    return len(sig) == 64 and verify_signature(key, sig, data)  # type: ignore[arg-type]


# -- the commands (pbem claim, pbem claim --check) -----------------------------------

class ClaimStep(msgspec.Struct, frozen=True):
    """What ``pbem claim`` did: resent (``turn_file``, claimable from ``claim_from``)
    or claimed (``claim_file``)."""

    text: str
    turn_file: Path | None = None
    claim_file: Path | None = None
    claim_from: int = 0


def claims_dir(gd: GameDir) -> Path:
    """Where a player's resend records and claims are kept (``GAME/claims``)."""
    return gd.path / "claims"


def claim_step(seat: Seat, out: Path | None = None) -> ClaimStep:
    """``pbem claim`` for ``seat`` (held under the exclusive lock): the resend
    when no resend of the log's head is recorded, else the claim (refused with
    IllegalAction while premature). Writes one file each, whole or not at all."""
    from pbem.fileio import make_dirs, read_regular, write_atomic
    from pbem.session import export_turn, unanswered_events

    replay, role, gd = seat.replay, seat.role, seat.gd
    at = now()
    status = _owed_by_opponent(replay, role)
    folder = claims_dir(gd)
    resend_path = folder / f"resend-{replay.seq:06d}.json"
    resend = read_resend(read_regular(resend_path, 1 << 16, "resend record")) if resend_path.is_file() else None
    if resend is None or resend.resend.head != replay.head.hex():
        mine = unanswered_events(replay, role) or [status.seq]
        since = min(mine[0], status.seq)
        make_dirs(folder)
        at = max(at, replay.history[-1].time)  # never before the log's last signed time
        record = resend_record(replay, role, since, seat.identity, at)
        sent = export_turn(gd, since, out)
        write_atomic(resend_path, msgspec.json.encode(record) + b"\n")
        deadline = status.deadline or 0
        claim_from = max(deadline + 1, at + RESEND_GRACE)
        return ClaimStep(f"resent events {since}-{replay.seq} as {sent.turn_file} (what 'pbem send --since "
                         f"{since}' writes): send it to your opponent. {status.role} owes "
                         f"'{status.decision.kind}' since event {status.seq}; if no answer arrives, "
                         f"'pbem claim' writes the claim from {format_time(claim_from)}; the resend is "
                         f"recorded, signed, in {resend_path}", turn_file=sent.turn_file, claim_from=claim_from)
    claim = make_claim(replay, role, resend, seat.identity, gd.read_events()[: replay.seq + 1], at)
    target = out if out is not None else folder / f"claim-{replay.seq:06d}.json"
    write_atomic(target, encode_claim(claim))
    verdict = check_claim(claim, replay, at=at)
    return ClaimStep(f"claim written to {target}: {verdict.text}\nSend it to your opponent (and any arbiter); "
                     f"'pbem claim --check {target.name}' checks it against the log", claim_file=target)


def check_claim_file(data: bytes, name: str, events: Sequence[bytes] | None = None) -> Verdict:
    """Check a claim file against the log it carries, or against ``events`` (a
    game's whole log, which must begin with the claim's log)."""
    from pbem import rulesapi

    claim_file = parse_claim(data, name)
    own = [e.encode("ascii") for e in claim_file.events]
    if events is not None:
        for seq, (mine, theirs) in enumerate(zip(own, events)):
            if mine != theirs:
                raise VerifyError(f"the claim's log differs from this game's log at event {seq}")
        if len(events) < len(own):
            raise VerifyError(f"the claim's log runs to event {len(own) - 1}; this game's log only to "
                              f"{len(events) - 1}: receive the missing events first")
    try:
        body = codec.decode_body(codec.unwrap(own[0]).body)
    except codec.CodecError as exc:
        raise BadFile(f"{shown(name)}: event 0: {exc}") from None
    if body.genesis is None:
        raise BadFile(f"{shown(name)}: the claim's log does not begin with a genesis")
    replay = Replay(rulesapi.load_version(body.genesis.rules, body.genesis.rules_version))
    for stored in own:
        replay.apply_stored(stored)
    later = list(events[len(own):]) if events is not None else []
    if later:  # what followed the claim must be the game's valid continuation
        rest = replay.fork()
        for stored in later:
            rest.apply_stored(stored)
    return check_claim(claim_file, replay, later)
