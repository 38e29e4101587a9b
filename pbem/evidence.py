"""Clearing equivocation evidence by both players' signed consent (issue 21
point 1; PLAN: "Clearing evidence: only by a signed consent event from each
player; the record stays").

An equivocation record (``evidence/equivocation-<seq>-<author>-a.json`` and
``-b.json``, DESIGN 3) stops the game. If both players agree it was a
mistake (a player restored an old copy of its game directory and signed its
turn again), each signs a *consent*: a statement, under the domain tag
``pbem/v1/clear-evidence``, naming the game, the record's seq and author,
the hash of the event that stays in the log (the one the evidence holder
holds, ``-a``) and the hash of the one set aside (``-b``). The stop is lifted
only when valid consents of both players are present; one side alone can
never lift it, and a consent binds one record of one game, so it cannot be
reused. Nothing is deleted: both events, both consents and the old STOPPED
reason stay in ``evidence/``, and ``pbem verify`` names the record as cleared
by both players.

Consents travel as a small JSON file (``pbem-consent v1``) carrying the two
events and the consents so far, so that the other player (who may not hold
the evidence) can check exactly what it agrees to.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import msgspec

from pbem import codec
from pbem.errors import BadFile, IllegalAction, NotFound, UsageProblem, VerifyError
from pbem.fileio import write_atomic
from pbem.game import Replay, event_game
from pbem.identity import Identity, verify_signature
from pbem.store import GameDir
from pbem.text import shown

DOMAIN = b"pbem/v1/clear-evidence\x00"
MAGIC = "pbem-consent v1"
#: Largest consent file accepted: two events and two consents.
MAX_BYTES = 3 * codec.MAX_EVENT_BYTES

Hex32 = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]


class Consent(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a player signs: in ``game``, ``author``'s two events for ``seq`` were a
    mistake; the event with hash ``stands`` stays in the log, ``other`` is set aside."""

    game: Hex32
    seq: codec.Seq
    author: codec.Role
    stands: Hex32
    other: Hex32
    role: codec.Role


class SignedConsent(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    consent: Consent
    sig: codec.HexSig


class ConsentFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What players send each other: the two events (ASCII, as stored) and the consents so far."""

    magic: str
    stands: str
    other: str
    consents: list[SignedConsent]


def _signing_input(consent: Consent) -> bytes:
    return DOMAIN + codec.canonical(consent)


def sign_consent(identity: Identity, consent: Consent) -> SignedConsent:
    return SignedConsent(consent=consent, sig=identity.sign(_signing_input(consent)).hex())


def consent_problem(replay: Replay, signed: SignedConsent, stands: bytes, other: bytes) -> str:
    """Why ``signed`` is not a valid consent for the pair (stands, other) of this game, or ''."""
    c = signed.consent
    if c.game != replay.game_hex:
        return "it is a consent for another game"
    key = replay.keys.get(c.role)
    if key is None:
        return f"its signer '{shown(c.role, 40)}' is not a player of this game"
    if c.stands != codec.sha256(stands).hex() or c.other != codec.sha256(other).hex():
        return "it names other events than this record"
    if not verify_signature(key, bytes.fromhex(signed.sig), _signing_input(c)):
        return f"its signature is not valid for {c.role}'s key"
    return ""


def pair_problem(replay: Replay, stands: bytes, other: bytes) -> str:
    """Why (stands, other) is not an equivocation of this game, or ''."""
    try:
        a, b = codec.unwrap(stands), codec.unwrap(other)
        body_a, body_b = codec.decode_body(a.body), codec.decode_body(b.body)
    except codec.CodecError as exc:
        return f"an event is malformed ({exc})"
    if event_game(a) != replay.game_hex or event_game(b) != replay.game_hex:
        return "an event of another game"
    if a.author != b.author or a.seq != b.seq or stands == other:
        return "not two different events of one author at one seq"
    if body_a.game != replay.game_hex or body_b.game != replay.game_hex:
        return "an event of another game"
    key = replay.keys.get(a.author)
    if key is None or not (verify_signature(key, a.sig, codec.signing_input(a.body))
                           and verify_signature(key, b.sig, codec.signing_input(b.body))):
        return "a signature is not valid"
    return ""


# -- the record in a game directory ---------------------------------------------------


@dataclass
class Record:
    """One equivocation record and the consents stored beside it."""

    base: str
    stands: bytes
    other: bytes
    consents: dict[str, SignedConsent]

    def consent_path(self, gd: GameDir, role: str) -> Path:
        return gd.evidence_dir / f"{self.base}-consent-{role}.json"


def records(gd: GameDir) -> list[Record]:
    """Every equivocation record in ``gd`` with its stored consents (unverified)."""
    out: list[Record] = []
    if not gd.evidence_dir.is_dir():
        return out
    for a in sorted(gd.evidence_dir.glob("equivocation-*-a.json")):
        base = a.name[:-len("-a.json")]
        try:
            stands, other = a.read_bytes(), a.with_name(base + "-b.json").read_bytes()
        except OSError:
            continue
        consents = {}
        for p in sorted(gd.evidence_dir.glob(f"{base}-consent-*.json")):
            try:
                signed = msgspec.json.decode(p.read_bytes(), type=SignedConsent)
            except msgspec.DecodeError:
                continue
            consents[signed.consent.role] = signed
        out.append(Record(base, stands, other, consents))
    return out


def cleared_by(replay: Replay, record: Record) -> list[str]:
    """The roles whose valid consent to clear ``record`` is stored."""
    return sorted(role for role, signed in record.consents.items()
                  if signed.consent.role == role and not consent_problem(replay, signed, record.stands, record.other))


def is_cleared(replay: Replay, record: Record) -> bool:
    return set(cleared_by(replay, record)) == set(replay.keys)


def _record_for(gd: GameDir, replay: Replay, stands: bytes, other: bytes) -> Record:
    """The record of (stands, other) in ``gd``, written if ``gd`` does not hold it yet
    (the player who equivocated holds no evidence: it keeps the pair it agrees to set aside)."""
    for r in records(gd):
        if r.stands == stands and r.other == other:
            return r
    a = codec.unwrap(stands)
    base = f"equivocation-{a.seq:06d}-{a.author}"
    gd.evidence_dir.mkdir(parents=True, exist_ok=True)
    if (gd.evidence_dir / f"{base}-a.json").exists():
        raise IllegalAction(f"this game directory holds another record for {a.author}'s event {a.seq}: "
                            "the consent file names other events; nothing was signed")
    write_atomic(gd.evidence_dir / f"{base}-a.json", stands)
    write_atomic(gd.evidence_dir / f"{base}-b.json", other)
    return Record(base, stands, other, {})


def read_consent_file(data: bytes, name: str) -> ConsentFile:
    if len(data) > MAX_BYTES:
        raise BadFile(f"{shown(name)} is over the limit of {MAX_BYTES} bytes for a consent file")
    try:
        parsed = msgspec.json.decode(data, type=ConsentFile)
    except msgspec.DecodeError as exc:
        raise BadFile(f"{shown(name)} is not a pbem consent file: {shown(str(exc))}") from None
    if parsed.magic != MAGIC:
        raise BadFile(f"{shown(name)} is not a pbem consent file (magic must be '{MAGIC}')")
    return parsed


@dataclass
class Cleared:
    """What ``clear`` did: the record, who has consented, whether the stop was lifted,
    and the consent file written for the opponent (None when nothing is left to send)."""

    record: str
    consented: list[str]
    lifted: bool
    consent_file: Path | None


def clear(gd: GameDir, replay: Replay, identity: Identity, role: str, incoming: list[tuple[str, bytes]],
          out: Path | None = None) -> list[Cleared]:
    """Sign my consent to clear each equivocation record (those in ``gd`` and
    those named by the consent files ``incoming``, whose consents are verified
    and stored), and lift the stop when both players' valid consents are here.
    Refuses (nothing written) a consent file that does not verify, or a record
    whose standing event is not the one in my log."""
    pairs: list[tuple[bytes, bytes, list[SignedConsent]]] = []
    for name, data in incoming:
        cf = read_consent_file(data, name)
        stands, other = cf.stands.encode("ascii", "replace"), cf.other.encode("ascii", "replace")
        problem = pair_problem(replay, stands, other)
        if problem:
            raise VerifyError(f"{shown(name)}: the events it names are no equivocation of this game "
                              f"({problem}); nothing was signed")
        for signed in cf.consents:
            bad = consent_problem(replay, signed, stands, other)
            if bad:
                raise VerifyError(f"{shown(name)}: a consent in it does not verify ({bad}); nothing was signed")
        pairs.append((stands, other, list(cf.consents)))
    for r in records(gd):
        if not any(p[0] == r.stands and p[1] == r.other for p in pairs):
            pairs.append((r.stands, r.other, []))
    if not pairs:
        raise NotFound(f"{gd.path} holds no equivocation evidence, and no consent file was given")
    for stands, other, _ in pairs:
        problem = pair_problem(replay, stands, other)
        if problem:
            raise VerifyError(f"the record of {shown(codec.unwrap(stands).author, 40)}'s event "
                              f"{codec.unwrap(stands).seq} does not verify ({problem}): it accuses nobody and "
                              "needs no consent (it does not stop 'pbem verify')")
        seq = codec.unwrap(stands).seq
        if seq > replay.seq or gd.read_event(seq) != stands:
            raise IllegalAction(f"event {seq} of your log is not the event the consent keeps: both players must "
                                "hold the same event for that seq before the record can be cleared; nothing "
                                "was signed")
    done = []
    for stands, other, consents in pairs:
        record = _record_for(gd, replay, stands, other)
        for signed in consents:
            if signed.consent.role not in record.consents:
                write_atomic(record.consent_path(gd, signed.consent.role), msgspec.json.encode(signed))
                record.consents[signed.consent.role] = signed
        signed_now = role not in record.consents
        if signed_now:
            a = codec.unwrap(stands)
            mine = sign_consent(identity, Consent(game=replay.game_hex, seq=a.seq, author=a.author,
                                                  stands=codec.sha256(stands).hex(),
                                                  other=codec.sha256(other).hex(), role=role))
            write_atomic(record.consent_path(gd, role), msgspec.json.encode(mine))
            record.consents[role] = mine
        lifted = is_cleared(replay, record)
        consent_file = None
        if signed_now:  # the opponent needs my consent
            cf = ConsentFile(magic=MAGIC, stands=stands.decode("ascii"), other=other.decode("ascii"),
                             consents=[record.consents[r] for r in sorted(record.consents)])
            consent_file = out or gd.outbox_dir / f"{replay.game_hex[:8]}-{record.base}-consent-{role}.json"
            gd.outbox_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(consent_file, msgspec.json.encode(cf) + b"\n")
        done.append(Cleared(record.base, cleared_by(replay, record), lifted, consent_file))
    if all(is_cleared(replay, r) for r in records(gd)):
        lift_stop(gd)
    return done


def lift_stop(gd: GameDir) -> None:
    """Lift the stop, keeping its reason: STOPPED becomes CLEARED (written first)."""
    reason = gd.stopped_reason()
    if reason is None:
        return
    write_atomic(gd.evidence_dir / "CLEARED",
                 (f"{reason}\ncleared: both players signed consents (evidence/*-consent-*.json)\n").encode())
    os.unlink(gd.stopped_path)


def describe(gd: GameDir, replay: Replay) -> list[dict[str, object]]:
    """Every record, as ``pbem evidence`` shows it."""
    from pbem.session import evidence_records

    valid = {e.name: e for e in evidence_records(gd, replay)}
    out: list[dict[str, object]] = []
    for r in records(gd):
        e = valid.get(r.base)
        a = codec.unwrap(r.stands)
        out.append({"record": r.base, "author": shown(a.author, 40), "seq": a.seq,
                    "stands": codec.sha256(r.stands).hex(), "other": codec.sha256(r.other).hex(),
                    "valid": bool(e and e.valid), "why": e.why if e else "",
                    "consents": cleared_by(replay, r), "cleared": is_cleared(replay, r)})
    return out


def require_usable(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise BadFile(f"{shown(str(path))} is over the limit of {MAX_BYTES} bytes for a consent file")
        return path.read_bytes()
    except FileNotFoundError:
        raise NotFound(f"{shown(str(path))} does not exist") from None
    except IsADirectoryError:
        raise UsageProblem(f"{shown(str(path))} is a directory, not a consent file") from None
