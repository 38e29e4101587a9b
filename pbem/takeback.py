"""An agreed takeback (docs/protocol.md decision 28; PLAN "What users expect").

A player X who wants its last events back asks outside the log: ``ask`` signs
a *takeback request* (``codec.TakebackRequest``: this game, X's role, the
first event taken back and the hash of the head, signed by X's genesis key
over ``codec.TAKEBACK_DOMAIN``) and writes it to a file for the opponent. A
request is not an event: an event of X while the decision is the
opponent's would race the opponent's own next event (decision 26, "in turn
only").

The opponent Y, whose decision it is, grants it in the log: ``grant`` signs
Y's next event carrying the request and its signature, and nothing else.
The replay (``pbem.game.Replay._grant``) checks the request and returns the
game to what it was after the event before the span; the span and the grant
stay in the log. ``refuse`` signs nothing: not granting is the refusal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from pbem import codec
from pbem import session as sessionmod
from pbem.dice import new_secret
from pbem.errors import BadFile, ForeignGame, IllegalAction, UsageProblem, VersionMismatch
from pbem.fileio import make_dirs, write_atomic
from pbem.game import Replay, short_game, takeback_text
from pbem.text import shown

if TYPE_CHECKING:
    from pbem.session import Seat, Sent
    from pbem.store import GameDir

#: The ``type`` of a takeback request file.
REQUEST_TYPE = "pbem-takeback-request"
#: Largest request file read (a request is a few hundred bytes; an email carrying it a few KiB).
MAX_REQUEST_BYTES = 1 << 20


class RequestFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What ``pbem takeback ask`` writes: the signed request, for the opponent."""

    type: str
    v: int
    takeback: codec.Takeback


@dataclass(frozen=True)
class Asked:
    path: Path
    request: codec.TakebackRequest
    granter: str


def require_takebacks(replay: Replay) -> None:
    """VersionMismatch (exit 10) in a game whose format has no takebacks."""
    if not codec.has_takebacks(replay.version):
        raise VersionMismatch(
            f"this game is played at event format version {replay.version}, fixed by its genesis, which has no "
            f"agreed takeback (it came with format version {codec.TAKEBACK_VERSION}, docs/protocol.md decision 28); "
            "a game created before keeps its format: ask your opponent in a note instead ('pbem send --note')")


def span_of(replay: Replay, role: str, first: int | None) -> tuple[int, int]:
    """The events ``role`` may ask back: from ``first`` (default: its first event
    after the opponent's last) to the head. IllegalAction (exit 5) saying why
    there are none, or why ``first`` is not one of them."""
    mine = sessionmod.unanswered_events(replay, role)
    if not mine or replay.seq < 1 or replay.history[-1].author != role:
        raise IllegalAction(f"nothing to take back: the last event ({replay.seq}) is not yours; a takeback asks back "
                            "your own events since your opponent's last one (decision 28)")
    start = max(mine[0], 1)
    if first is None:
        first = start
    if not start <= first <= replay.seq:
        raise IllegalAction(f"--from {first}: your events since your opponent's last one are {start}..{replay.seq}; "
                            "a takeback asks back some of the last of them (decision 28)")
    return first, replay.seq


def ask(seat: Seat, *, first: int | None = None, out: Path | None = None) -> Asked:
    """Sign a request to take back my events ``first``..head and write it to
    ``out`` (default: the outbox). Refused (nothing written) where the grant
    would be refused: the game over or stopped, the decision still mine, a span
    holding dice, openings, deck work or an end; VersionMismatch in a game
    whose format has no takebacks."""
    replay, role = seat.replay, seat.role
    require_takebacks(replay)
    seat.gd.require_not_stopped()
    if replay.outcome() is not None:
        raise IllegalAction(f"the game is over ({replay.outcome_text()}): nothing can be taken back")
    first, head = span_of(replay, role, first)
    decision = replay.pending()
    other = replay.other(role)
    if decision is None or decision.role != other:
        raise IllegalAction(f"the next decision is still yours ({sessionmod.pending_text(decision)}): your "
                            f"opponent grants a takeback in its turn only (decision 28); finish and send your "
                            "turn, or ask for your events once the decision is theirs")
    request = codec.TakebackRequest(game=replay.game_hex, role=role, first=first, head_seq=head,
                                    head=replay.head.hex())
    signed = codec.Takeback(request=request, sig=seat.identity.sign(codec.takeback_signing_input(request)).hex())
    # The checks the opponent's grant will meet, made now: refuse at once what would be refused then.
    try:
        replay.check_grant(signed, other, f"a grant by {other}")
    except IllegalAction as exc:
        reason = exc.message.partition(", but ")[2] or exc.message
        raise IllegalAction(f"cannot ask back events {first}..{head}: {reason}") from None
    if out is None:
        make_dirs(seat.gd.outbox_dir)
        out = seat.gd.outbox_dir / f"{replay.game_hex[:8]}-takeback-{head:06d}.json"
    data = msgspec.json.format(msgspec.json.encode(RequestFile(REQUEST_TYPE, 1, signed)), indent=1) + b"\n"
    if str(out) == "-":
        import sys

        sys.stdout.buffer.write(data)
    else:
        write_atomic(Path(out), data)
    return Asked(Path(out), request, other)


def _grant_body(replay: Replay, role: str, signed: codec.Takeback, *, x_next: bytes,
                reveal: bytes = b"", note: str = "") -> codec.Body:
    """The body of ``role``'s next event granting ``signed`` (entropy as given)."""
    from pbem.claims import signing_time
    from pbem.dice import entropy_commitment

    return codec.Body(v=replay.version, game=replay.game_hex, seq=replay.seq + 1, prev=replay.head.hex(),
                      author=role, entropy=codec.Entropy(commit=entropy_commitment(role, x_next).hex(),
                                                         reveal=reveal.hex()),
                      note=note, time=signing_time(replay) if codec.is_timed(replay.version) else 0,
                      takeback=signed)


def request_email(gd: GameDir, asked: Asked, *, sender: str = "", recipient: str = "") -> bytes:
    """An RFC 5322 message carrying the request file of ``asked`` (the game's
    addresses unless given), its body saying what is asked and how to answer."""
    import email.policy
    from email.message import EmailMessage
    from email.utils import formatdate

    from pbem.mail import check_address

    local = gd.read_local()
    sender, recipient = sender or local.email, recipient or local.opponent_email
    if not sender or not recipient:
        raise UsageProblem("email needs --from and --to, or the game's addresses: 'pbem address --email ME "
                           "--opponent-email THEM'")
    check_address(sender, "--from")
    check_address(recipient, "--to")
    r = asked.request
    msg = EmailMessage(policy=email.policy.SMTP)
    msg["Subject"] = f"[pbem {r.game[:8]}] takeback request: events {r.first}..{r.head_seq} by {r.role}"
    msg["From"], msg["To"], msg["Date"] = sender, recipient, formatdate(localtime=False)
    msg["X-Pbem-Game"] = r.game
    msg.set_content(
        f"{r.role} asks to take back its events {r.first}..{r.head_seq} (docs/protocol.md decision 28).\n\n"
        "To grant it (your next event carries this request; the game returns to what it was before them):\n"
        "  pbem takeback grant THIS-MESSAGE.eml\n"
        "To refuse it, sign nothing and play on ('pbem takeback refuse THIS-MESSAGE.eml' says so).\n")
    msg.add_attachment(Path(asked.path).read_bytes(), maintype="application", subtype="json",
                       filename=Path(asked.path).name)
    return msg.as_bytes()


def _from_email(data: bytes) -> bytes | None:
    """The request file attached to an email message, or None if ``data`` holds none."""
    import email
    import email.policy

    msg = email.message_from_bytes(data, policy=email.policy.default)
    for part in msg.walk():
        if part.is_multipart():
            continue
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes) and REQUEST_TYPE.encode() in payload and payload.lstrip().startswith(b"{"):
            return payload
    return None


def read_request(data: bytes, name: str) -> codec.Takeback:
    """The signed request in a request file, or attached to an email message;
    BadFile if it is neither."""
    if len(data) > MAX_REQUEST_BYTES:
        raise BadFile(f"{shown(name)}: {len(data)} bytes, over the limit of {MAX_REQUEST_BYTES} for a takeback request")
    if not data.lstrip().startswith(b"{"):
        data = _from_email(data) or data
    try:
        parsed = msgspec.json.decode(data, type=RequestFile)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise BadFile(f"{shown(name)}: not a pbem takeback request: {shown(str(exc))}") from None
    if parsed.type != REQUEST_TYPE or parsed.v != 1:
        raise BadFile(f"{shown(name)}: not a pbem takeback request (type {shown(parsed.type, 40)!r}, "
                      f"version {parsed.v})")
    return parsed.takeback


def grant(seat: Seat, data: bytes, name: str, *, note: str = "", out: Path | None = None) -> Sent:
    """Sign my next event granting the request in ``data`` and write its turn
    file. ForeignGame (exit 11) for a request of another game; every other
    refusal is the replay's (exit 5, naming this event and why), nothing written."""
    replay, role = seat.replay, seat.role
    require_takebacks(replay)
    seat.gd.require_not_stopped()
    signed = read_request(data, name)
    if signed.request.game != replay.game_hex:
        raise ForeignGame(f"{shown(name)} is a takeback request of another game (game "
                          f"{short_game(signed.request.game)}; this game is {short_game(replay.game_hex)}): "
                          "nothing was signed")
    sessionmod.require_turn_target(seat.gd, out)
    x_next = new_secret()
    body = _grant_body(replay, role, signed, x_next=x_next, reveal=sessionmod._my_reveal(role, replay, seat.vault),
                       note=note)
    stored = sessionmod._sign(seat.identity, body)
    check = replay.with_known(seat.vault.known_values(), seat.vault.known_salts())
    check.apply_stored(stored)
    vault = sessionmod._with_secrets(seat.vault, [])
    vault.entropy[str(body.seq)] = x_next.hex()
    return sessionmod._commit_send(seat, sessionmod._Composed(body, stored, vault, check), out)


def refusal_text(data: bytes, name: str, replay: Replay) -> str:
    """What ``pbem takeback refuse`` says: nothing is signed; how to tell the asker."""
    signed = read_request(data, name)
    r = signed.request
    if r.game != replay.game_hex:
        raise ForeignGame(f"{shown(name)} is a takeback request of another game (game {short_game(r.game)}; "
                          f"this game is {short_game(replay.game_hex)})")
    return (f"not granted: {shown(r.role, 40)}'s request to take back events {r.first}..{r.head_seq} is refused by "
            "signing nothing; tell your opponent (e.g. 'pbem send --note \"no takeback\"' with your next turn) and "
            "play on: once your next event is signed the request is stale and can never be granted")


#: The takeback an event granted, in words (``pbem.game.takeback_text``).
sentence = takeback_text

