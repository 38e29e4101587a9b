"""Canonical encoding of events (DESIGN section 3).

Stored event = the exact bytes that were signed, wrapped as
``{"body":<body bytes>,"sig":"<hex>"}``. Body bytes are msgspec JSON with
deterministic key order, no whitespace, fields at their default omitted (so a
field added later with a default leaves old events canonical), integers only,
byte strings as lowercase hex, and every non-ASCII character escaped as
``\\uXXXX`` so that event files are plain ASCII and survive email.

Verification never re-encodes to check a signature: the signature covers the
stored body slice. After verifying, the body is decoded and re-encoded once to
insist that it is canonical, so every game state has exactly one encoding.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Annotated, Any, Literal

import msgspec

from pbem.text import shown

FORMAT_VERSION = 1
#: The format version of a game under a time control (docs/protocol.md decision
#: 23): its genesis carries ``clock`` and every event a signed ``time``. A game
#: without a time control stays at FORMAT_VERSION, readable by older pbem.
CLOCK_VERSION = 2
#: The format versions with terminal events (docs/protocol.md decision 26): an
#: event may carry ``end`` (a resignation, a draw offered, accepted or
#: declined). Version 3 is version 1 with them, version 4 version 2 with them;
#: every game ``pbem new`` creates is at one of these.
TERMINAL_VERSION = 3
TERMINAL_CLOCK_VERSION = 4
#: The format versions with agreed takebacks (docs/protocol.md decision 28): an
#: event may carry ``takeback``, the opponent's signed request it grants.
#: Version 5 is version 3 with them, version 6 version 4 with them; every game
#: ``pbem new`` creates is at one of these.
TAKEBACK_VERSION = 5
TAKEBACK_CLOCK_VERSION = 6
#: The format versions whose shared deck is Ristretto255 (docs/protocol.md
#: decision 29, docs/deck.md "Choice of group"): the deck's elements, cards and
#: keys are of that group; everything else is as before. Version 7 is version
#: 5 with it, version 8 version 6 with it; every game ``pbem new`` creates is
#: at one of these. A game of an older version keeps its Ed25519 deck.
RISTRETTO_VERSION = 7
RISTRETTO_CLOCK_VERSION = 8
#: Every format version this pbem reads; the newest is the one it needs most.
FORMAT_VERSIONS = (FORMAT_VERSION, CLOCK_VERSION, TERMINAL_VERSION, TERMINAL_CLOCK_VERSION, TAKEBACK_VERSION,
                   TAKEBACK_CLOCK_VERSION, RISTRETTO_VERSION, RISTRETTO_CLOCK_VERSION)
#: The versions whose events carry a signed time.
TIMED_VERSIONS = (CLOCK_VERSION, TERMINAL_CLOCK_VERSION, TAKEBACK_CLOCK_VERSION, RISTRETTO_CLOCK_VERSION)
#: ``Body.end`` values: what an event does to the game as a whole.
RESIGN, DRAW_OFFER, DRAW_ACCEPT, DRAW_DECLINE = "resign", "draw-offer", "draw-accept", "draw-decline"
#: The ``end`` values after which nothing but openings may follow.
TERMINAL = (RESIGN, DRAW_ACCEPT)


def is_timed(version: int) -> bool:
    """Whether events of format ``version`` carry a signed time (and its genesis a clock)."""
    return version in TIMED_VERSIONS


def has_ends(version: int) -> bool:
    """Whether events of format ``version`` may carry ``end`` (decision 26)."""
    return version >= TERMINAL_VERSION


def has_takebacks(version: int) -> bool:
    """Whether events of format ``version`` may carry ``takeback`` (decision 28)."""
    return version >= TAKEBACK_VERSION


def new_game_version(clock: bool) -> int:
    """The format version of a game ``pbem new`` creates (with a time control or not)."""
    return RISTRETTO_CLOCK_VERSION if clock else RISTRETTO_VERSION


def has_ristretto_deck(version: int) -> bool:
    """Whether the shared deck of a game of format ``version`` is Ristretto255 (decision 29)."""
    return version >= RISTRETTO_VERSION


SIG_DOMAIN = b"pbem/v1/event\x00"

#: Largest stored event accepted (bytes). An honest event is a few KiB.
MAX_EVENT_BYTES = 1 << 20

Hex32 = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]
OptHex32 = Annotated[str, msgspec.Meta(pattern="^([0-9a-f]{64})?$")]
HexSig = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{128}$")]
#: Up to 4,096 bytes as lowercase hex. Whole bytes (an even number of digits)
#: are checked by the struct (``whole_bytes``): the pattern of whole bytes,
#: ``^([0-9a-f]{2}){0,4096}$``, cost a regular-expression group per byte, a
#: sixth of the campaign's event bodies' decode (pbem.deck.HexElem likewise).
HexBytes = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{0,8192}$")]
Label = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_.:/+-]{1,128}$")]
Role = Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9_-]{0,31}$")]
Seq = Annotated[int, msgspec.Meta(ge=0, le=10**9)]
Note = Annotated[str, msgspec.Meta(max_length=4000)]


class _Strict(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    pass


class Entropy(_Strict, frozen=True):
    """Entropy ratchet (DESIGN 5): open the previous secret, commit the next."""

    commit: Hex32
    reveal: OptHex32 = ""


class Commitment(_Strict, frozen=True):
    """A new salted commitment published by the event's author. ``kind``
    "set": ``digest`` is the root of a Merkle set (pbem.commit), whose leaves
    are opened one by one (``LeafOpening``) and the whole at the audit."""

    label: Label
    digest: Hex32
    kind: Literal["", "set"] = ""


def whole_bytes(texts: Iterable[str], what: str) -> None:
    """ValueError (msgspec's decode reports it as invalid) unless every hex
    text of ``texts`` is whole bytes: an even number of digits. For the wire's
    hex fields whose pattern leaves this out (``HexBytes``, pbem.deck.HexElem)."""
    for text in texts:
        if len(text) % 2:
            raise ValueError(f"{what} has an odd number of hex digits ({len(text)})")


class LeafOpening(_Strict, frozen=True):
    """Opening of one leaf of a committed Merkle set: the value of ``key``,
    the leaf's salt and the sibling path to the root (pbem.commit.verify_leaf)."""

    label: Label
    key: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_.:/+-]{1,64}$")]
    value: Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{0,128}$")]
    salt: Hex32
    index: Annotated[int, msgspec.Meta(ge=0, lt=1 << 20)]
    size: Annotated[int, msgspec.Meta(ge=1, le=1 << 20)]
    path: Annotated[list[tuple[Hex32, bool]], msgspec.Meta(max_length=20)]

    def __post_init__(self) -> None:
        whole_bytes((self.value,), "a leaf's value")


class Opening(_Strict, frozen=True):
    """Opening of an earlier commitment: the committed value bytes and salt."""

    label: Label
    salt: Hex32
    value: HexBytes

    def __post_init__(self) -> None:
        whole_bytes((self.value,), "an opening's value")


class Player(_Strict, frozen=True):
    role: Role
    key: str


class Clock(_Strict, frozen=True):
    """The agreed time control (format version 2, docs/protocol.md decision 23):
    each reply within ``reply_days`` days of the event that made it due, and
    ``leave_days`` days per player per game that absorb late replies."""

    reply_days: Annotated[int, msgspec.Meta(ge=1, le=365)]
    leave_days: Annotated[int, msgspec.Meta(ge=0, le=3650)] = 0


class Genesis(_Strict, frozen=True):
    """What seq 0 fixes for the whole game (DESIGN 3)."""

    rules: str
    rules_version: str
    data_hash: Hex32
    scenario: str
    players: list[Player]
    nonce: Hex32
    options: list[str] = []
    title: Note = ""
    clock: Clock | None = None


#: A signed time: whole seconds since 1970-01-01 UTC (format version 2).
Time = Annotated[int, msgspec.Meta(ge=0, lt=1 << 40)]


class TakebackRequest(_Strict, frozen=True):
    """What a player asks to take back (decision 28): its events ``first``..
    ``head_seq`` of game ``game``, the last of which has hash ``head``. Signed
    by ``role`` over ``TAKEBACK_DOMAIN`` + its canonical bytes, outside the log;
    the opponent's grant event carries it with that signature."""

    game: Hex32
    role: Role
    first: Seq
    head_seq: Seq
    head: Hex32


class Takeback(_Strict, frozen=True):
    """A granted takeback inside the granting event: the request and its signature."""

    request: TakebackRequest
    sig: HexSig


#: Domain of a takeback request's signature (never an event's: ``SIG_DOMAIN``).
TAKEBACK_DOMAIN = b"pbem/v1/takeback\x00"


def takeback_signing_input(request: TakebackRequest) -> bytes:
    """What the requester's Ed25519 signature covers."""
    return TAKEBACK_DOMAIN + canonical(request)


class Body(_Strict, frozen=True):
    """The signed content of one event."""

    v: int
    game: OptHex32
    seq: Seq
    prev: OptHex32
    author: Role
    entropy: Entropy
    actions: list[msgspec.Raw] = []
    commits: list[Commitment] = []
    reveals: list[Opening] = []
    leaves: list[LeafOpening] = []
    note: Note = ""
    genesis: Genesis | None = None
    time: Time = 0
    #: What the event does to the game as a whole (format version 3 and 4,
    #: decision 26): "" (nothing), a resignation or a draw offered, accepted or declined.
    end: Literal["", "resign", "draw-offer", "draw-accept", "draw-decline"] = ""
    #: The opponent's signed request this event grants (format versions 5 and 6,
    #: decision 28): the game returns to what it was before the request's events.
    takeback: Takeback | None = None


class _Head(msgspec.Struct):
    """Lenient peek at a body before its signature is checked: who signed it."""

    author: str = ""
    seq: int = -1
    v: int = 0
    game: str = ""


class _Signed(msgspec.Struct, forbid_unknown_fields=True):
    body: msgspec.Raw
    sig: HexSig


_encoder = msgspec.json.Encoder(order="deterministic")
_body_decoder = msgspec.json.Decoder(Body)
_head_decoder = msgspec.json.Decoder(_Head)
_signed_decoder = msgspec.json.Decoder(_Signed)
_NON_ASCII = re.compile("[^\x00-\x7f]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def canonical(obj: Any) -> bytes:
    """Canonical JSON bytes of a msgspec-encodable object (ASCII only)."""
    data = _encoder.encode(obj)
    if data.isascii():
        return data
    return _NON_ASCII.sub(_escape, data.decode("utf-8")).encode("ascii")


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def signing_input(body: bytes) -> bytes:
    """What the Ed25519 signature covers: domain tag + exact body bytes."""
    return SIG_DOMAIN + body


def wrap(body: bytes, sig: bytes) -> bytes:
    """Stored event bytes for a body and its signature."""
    return b'{"body":' + body + b',"sig":"' + sig.hex().encode("ascii") + b'"}'


class Unwrapped(msgspec.Struct, frozen=True):
    """A stored event split into its parts; nothing here is verified yet."""

    stored: bytes
    body: bytes
    sig: bytes
    author: str
    seq: int
    game: str


class CodecError(ValueError):
    """Stored bytes are not a well-formed event."""


class UnsupportedVersion(CodecError):
    """An event of a format version this pbem does not read (a newer pbem wrote it)."""


def unwrap(stored: bytes) -> Unwrapped:
    """Split stored bytes into body and signature, and peek at the author.

    Raises CodecError if the bytes are oversized, not ASCII, not the exact
    wrapper layout, or the body has no author/seq.
    """
    if len(stored) > MAX_EVENT_BYTES:
        raise CodecError(f"event is {len(stored)} bytes, over the limit of {MAX_EVENT_BYTES}")
    if not stored.isascii():
        raise CodecError("event is not plain ASCII (non-canonical or damaged in transit)")
    try:
        signed = _signed_decoder.decode(stored)
    except msgspec.DecodeError as exc:
        raise CodecError(f"not a pbem event: {shown(str(exc))}") from None
    except RecursionError:
        raise CodecError("not a pbem event: JSON nested too deeply") from None
    body = bytes(signed.body)
    sig = bytes.fromhex(signed.sig)
    if wrap(body, sig) != stored:
        raise CodecError("event wrapper is not in canonical form")
    return _unwrapped(stored, body, sig)


def _unwrapped(stored: bytes, body: bytes, sig: bytes) -> Unwrapped:
    head = _head(body, "event body is not a JSON object with author and seq")
    return Unwrapped(stored=stored, body=body, sig=sig, author=head.author, seq=head.seq, game=head.game)


#: Where ``wrap`` puts the body and the signature's 128 hex digits:
#: ``{"body":`` BODY ``,"sig":"`` SIG ``"}``.
_BODY = slice(len(b'{"body":'), -len(b',"sig":"') - 128 - len(b'"}'))
_SIG = slice(-128 - len(b'"}'), -len(b'"}'))


def unwrap_vouched(stored: bytes) -> Unwrapped:
    """``unwrap`` of stored bytes that ``unwrap`` accepted already (pbem.logcheck's
    second process unwrapped these very bytes): the canonical layout that check
    proved is read, not checked again."""
    return _unwrapped(stored, stored[_BODY], bytes.fromhex(stored[_SIG].decode("ascii")))


def _either(versions: tuple[int, ...]) -> str:
    return ", ".join(map(str, versions[:-1])) + f" or {versions[-1]}"


def _head(body: bytes, problem: str) -> _Head:
    """The body's lenient head (author, seq, version, game); CodecError saying ``problem`` if none."""
    try:
        return _head_decoder.decode(body)
    except msgspec.DecodeError as exc:
        raise CodecError(f"{problem}: {shown(str(exc))}") from None
    except RecursionError:
        raise CodecError("event body is nested too deeply") from None


def _check_version(v: object) -> None:
    if v not in FORMAT_VERSIONS:
        raise UnsupportedVersion(f"event format version {shown(repr(v), 40)} is not supported "
                                 f"(this pbem reads versions {', '.join(map(str, FORMAT_VERSIONS))}); upgrade pbem")


def decode_body(body: bytes) -> Body:
    """Strictly decode verified body bytes; reject unknown fields and non-canonical form.

    A body of a format version this pbem does not read is UnsupportedVersion,
    whatever else is wrong with it: a body the strict decode refuses is read
    again for its version alone (``_head_decoder``) before it is called malformed."""
    try:
        decoded = _body_decoder.decode(body)
    except msgspec.DecodeError as exc:
        _check_version(_head(body, "malformed event body").v)
        raise CodecError(f"malformed event body: {shown(str(exc))}") from None
    except RecursionError:
        raise CodecError("event body is nested too deeply") from None
    _check_version(decoded.v)
    if canonical(decoded) != body:
        raise CodecError("event body is not in canonical form")
    timed = is_timed(decoded.v)
    if timed != (decoded.time > 0):
        raise CodecError(f"event format version {decoded.v} " + (
            "needs a signed time" if timed else
            f"has no signed time (a time needs version {_either(TIMED_VERSIONS)})"))
    if decoded.genesis is not None and timed != (decoded.genesis.clock is not None):
        raise CodecError(f"genesis of format version {decoded.v} " + (
            "needs a time control (clock)" if timed else
            f"has no time control (a clock needs version {_either(TIMED_VERSIONS)})"))
    if decoded.end and not has_ends(decoded.v):
        raise CodecError(f"event format version {decoded.v} has no resignations or draws "
                         f"(they need version {TERMINAL_VERSION} or later)")
    if decoded.end and decoded.genesis is not None:
        raise CodecError("a genesis cannot resign or offer a draw")
    if decoded.takeback is not None:
        if not has_takebacks(decoded.v):
            raise CodecError(f"event format version {decoded.v} has no takebacks "
                             f"(they need version {TAKEBACK_VERSION} or later)")
        if decoded.genesis is not None:
            raise CodecError("a genesis cannot grant a takeback")
    return decoded


def raw(obj: Any) -> msgspec.Raw:
    """Canonical bytes of ``obj`` as a Raw value to embed in a Body."""
    return msgspec.Raw(canonical(obj))
