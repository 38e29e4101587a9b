"""Turn files by email: RFC 5322 messages out, turn files back in.

Out: ``build_message`` wraps a turn file as an attachment of a plain-text
message whose body is the recipient's turn summary; the subject is tagged
with the game and the events, and Message-ID / In-Reply-To / References are
derived from the game id and event numbers, so both players' mail programs
thread a whole game without pbem storing anything. ``send_smtp`` delivers it
through the server in the SMTP configuration (never in the game directory).

In: ``turn_files_from_path`` accepts a turn file, an .eml message, an mbox
file or a Maildir directory and returns every pbem turn file found in them
(attachments, or text parts that are turn files). Nothing from a message is
ever written to disk, so names in emails cannot point outside the game.
"""

from __future__ import annotations

import email
import email.policy
import os
import smtplib
import ssl
import tomllib
from collections.abc import Iterator
from email.message import EmailMessage, Message
from email.utils import formatdate, getaddresses, parseaddr
from pathlib import Path
from typing import TypeVar

import msgspec

from pbem.errors import BadFile, NotFound, UsageProblem
from pbem.fileio import open_regular, read_regular
from pbem.turnfile import MAGIC, MAX_TURN_FILE_BYTES

#: Largest message read (bytes): a larger .eml is refused unread, a larger message in a
#: mailbox is skipped (a turn file is at most 16 MiB). Mailboxes themselves have no limit
#: of size or number of messages: they are streamed, one message at a time.
MAX_MESSAGE_BYTES = 64 << 20

C = TypeVar("C")


def message_id(game: str, seq: int, address: str) -> str:
    """The Message-ID of the email carrying events up to ``seq`` sent from ``address``."""
    domain = parseaddr(address)[1].rpartition("@")[2] or "pbem.invalid"
    return f"<pbem.{game[:16]}.{seq}@{domain}>"


def build_message(*, turn: bytes, turn_name: str, game: str, title: str, seqs: list[int], author: str,
                  sender: str, recipient: str, summary: str, reply_to_seq: int | None,
                  host_seq0_sender: str) -> bytes:
    """An RFC 5322 message carrying one turn file."""
    check_address(sender, "--from")
    check_address(recipient, "--to")
    msg = EmailMessage(policy=email.policy.SMTP)
    span = f"{seqs[0]}-{seqs[-1]}" if len(seqs) > 1 else str(seqs[0])
    msg["Subject"] = f"[pbem {game[:8]}] {title}: events {span} by {author}"
    msg["From"] = sender
    msg["To"] = recipient
    msg["Date"] = formatdate(localtime=False)
    msg["Message-ID"] = message_id(game, seqs[-1], sender)
    refs = [message_id(game, 0, host_seq0_sender)]
    if reply_to_seq is not None:
        parent = message_id(game, reply_to_seq, recipient)
        msg["In-Reply-To"] = parent
        if parent not in refs:
            refs.append(parent)
    if msg["Message-ID"] not in refs:
        msg["References"] = " ".join(refs)
    msg["X-Pbem-Game"] = game
    msg.set_content(summary)
    msg.add_attachment(turn, maintype="application", subtype="octet-stream", filename=turn_name)
    return msg.as_bytes()


def check_address(address: str, option: str) -> None:
    """UsageProblem naming ``option`` if ``address`` is no single email address."""
    name, addr = parseaddr(address)
    if "@" not in addr or any(c in address for c in "\r\n"):
        raise UsageProblem(f"{option}: not an email address: {address!r}")


# -- SMTP -----------------------------------------------------------------------

class SmtpConfig(msgspec.Struct, forbid_unknown_fields=True):
    host: str
    port: int = 587
    #: "starttls" (default), "ssl" (implicit TLS, usually port 465) or "none" (loopback tests only)
    security: str = "starttls"
    username: str = ""
    #: Where the password comes from (pbem.credentials): a command printing it,
    #: the system keyring, this file (only if nobody else can read it), or
    #: $PBEM_SMTP_PASSWORD (with a warning). Never the game directory.
    password_command: str = ""
    keyring: bool = False
    password: str = ""
    timeout: int = 30


def read_config(path: Path, table: str, kind: type[C], what: str) -> C:
    """The ``[table]`` of the TOML file ``path`` (or the whole file) as ``kind``:
    NotFound naming README's email section when the file is missing, BadFile
    naming the file for anything else (not UTF-8, not TOML, an unknown key)."""
    try:
        data = tomllib.loads(read_regular(path, 1 << 20, f"{what} configuration").decode("utf-8"))
    except NotFound:
        raise NotFound(f"no {what} configuration at {path} (see README, 'Email')") from None
    except UnicodeDecodeError:
        raise BadFile(f"{path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadFile(f"{path}: {exc}") from None
    try:
        return msgspec.convert(data.get(table, data), kind)
    except msgspec.ValidationError as exc:
        raise BadFile(f"{path}: {exc}") from None


def load_smtp_config(path: Path) -> SmtpConfig:
    config = read_config(path, "smtp", SmtpConfig, "SMTP")
    if config.security not in ("starttls", "ssl", "none"):
        raise BadFile(f"{path}: security must be starttls, ssl or none")
    return config


def send_smtp(config: SmtpConfig, message: bytes, password: str = "") -> None:
    """Deliver ``message`` to the recipients in its To header, logging in
    with ``password`` (pbem.credentials) when the configuration names a user."""
    msg = email.message_from_bytes(message, policy=email.policy.SMTP)
    sender = parseaddr(msg["From"])[1]
    recipients = [addr for _, addr in getaddresses(msg.get_all("To", []))]
    try:
        if config.security == "ssl":
            client: smtplib.SMTP = smtplib.SMTP_SSL(config.host, config.port, timeout=config.timeout,
                                                   context=ssl.create_default_context())
        else:
            client = smtplib.SMTP(config.host, config.port, timeout=config.timeout)
        with client:
            client.ehlo()
            if config.security == "starttls":
                client.starttls(context=ssl.create_default_context())
                client.ehlo()
            if config.username:
                client.login(config.username, password)
            client.sendmail(sender, recipients, message)
    except (OSError, smtplib.SMTPException) as exc:
        raise UsageProblem(f"could not send through {config.host}:{config.port}: {exc}") from None


# -- reading turn files back ----------------------------------------------------

def is_turn_file(data: bytes) -> bool:
    return data.lstrip(b"\r\n").startswith(MAGIC.encode())


def turn_files_in_message(msg: Message) -> list[bytes]:
    """Every turn file attached to (or pasted as a part of) one message."""
    found = []
    for part in msg.walk():
        if part.is_multipart():
            continue
        payload = part.get_payload(decode=True)
        if not isinstance(payload, bytes) or not payload or len(payload) > MAX_TURN_FILE_BYTES + 1024:
            continue
        payload = payload.lstrip(b"\r\n")
        if is_turn_file(payload):
            found.append(payload)
    return found


def _read_limited(path: Path) -> bytes:
    """A message file: a regular file only (never a device or FIFO), size checked first."""
    return read_regular(path, MAX_MESSAGE_BYTES, "message")


def _may_hold_turn(data: bytes) -> bool:
    """False when ``data`` cannot carry a turn file: its first line appears nowhere, neither
    as it is (plain or quoted-printable parts) nor base64-encoded. Saves parsing every
    message of a large mailbox."""
    return any(marker in data for marker in _MARKERS)


def _base64_markers() -> tuple[bytes, ...]:
    import base64

    # At an attachment's start (offset 0) all 16 characters are the magic's own; after
    # one or two other bytes (a CRLF), characters 4-15 still are.
    return tuple(base64.b64encode(b"\0" * k + MAGIC.encode())[4 if k else 0:16] for k in range(3))


_MARKERS = (MAGIC.encode(), *_base64_markers())


def _maildir_messages(path: Path) -> Iterator[tuple[str, Message]]:
    """Every message of a Maildir (new/ and cur/), one file in memory at a time; no
    limit on their number. A message over MAX_MESSAGE_BYTES cannot be one pbem wrote
    and is skipped; an entry that is not a regular file is refused (BadFile)."""
    for sub in ("new", "cur"):
        for name in sorted(os.listdir(path / sub)):
            if name.startswith("."):
                continue
            file = path / sub / name
            try:
                if os.stat(file).st_size > MAX_MESSAGE_BYTES:
                    continue
                data = _read_limited(file)
            except (FileNotFoundError, NotFound):  # a dangling symlink, or a message moved meanwhile
                continue
            if _may_hold_turn(data):
                yield f"{path}/{sub}/{name}", email.message_from_bytes(data, policy=email.policy.default)


def _mbox_messages(path: Path) -> Iterator[tuple[str, Message]]:
    """Every message of an mbox file, streamed: one message in memory at a time, no limit
    on the file's size or the number of messages. Messages are separated by lines
    starting "From " (as Python's mailbox module reads them); one over MAX_MESSAGE_BYTES
    is skipped."""
    with open_regular(path, "mailbox") as fh:
        count, size, at_line_start = 0, 0, True
        chunks: list[bytes] = []

        def finish() -> Iterator[tuple[str, Message]]:
            data = b"".join(chunks)
            if size <= MAX_MESSAGE_BYTES and _may_hold_turn(data):
                yield f"{path}#{count}", email.message_from_bytes(data, policy=email.policy.default)

        while line := fh.readline(1 << 20):
            if at_line_start and line.startswith(b"From "):
                if count:
                    yield from finish()
                count, size, chunks = count + 1, 0, []
            elif count:
                size += len(line)
                if size <= MAX_MESSAGE_BYTES:
                    chunks.append(line)
                else:
                    chunks = []
            at_line_start = line.endswith(b"\n")
        if count:
            yield from finish()


def turn_files_from_path(path: Path, data: bytes | None = None) -> tuple[str, list[tuple[str, bytes]]]:
    """(kind, [(source name, turn file bytes)]) for a turn file, .eml, mbox or Maildir.

    ``data`` is the content when it was already read (e.g. from stdin).
    """
    if data is None and path.is_dir():
        if not all((path / sub).is_dir() for sub in ("cur", "new", "tmp")):
            raise BadFile(f"{path} is a directory but not a Maildir (no cur/, new/, tmp/)")
        return "maildir", [(name, tf) for name, msg in _maildir_messages(path) for tf in turn_files_in_message(msg)]
    if data is None:
        with open_regular(path, "input file") as fh:
            head = fh.read(64)
        if head.startswith(b"From "):  # an mbox: streamed, whatever its size
            return "mbox", [(name, tf) for name, msg in _mbox_messages(path) for tf in turn_files_in_message(msg)]
        data = _read_limited(path)
    if is_turn_file(data):
        return "turn file", [(str(path), data)]
    if data.startswith(b"From "):
        if str(path) == "-":
            raise UsageProblem("an mbox must be given as a file, not on standard input")
        return "mbox", [(name, tf) for name, msg in _mbox_messages(path) for tf in turn_files_in_message(msg)]
    msg = email.message_from_bytes(data, policy=email.policy.default)
    if not msg.keys():
        raise BadFile(f"{path} is not a pbem turn file, an email message, an mbox or a Maildir")
    return "email", [(str(path), tf) for tf in turn_files_in_message(msg)]


# -- delivering a turn file by email (pbem send, automatic answers, pbem watch) ----------

#: Automatic answers whose email the SMTP server did not take wait here (GAME/outbox/mailq/)
#: until 'pbem watch' (or the next automatic answer) sends them; a sent one moves to GAME/outbox/.
QUEUE = "mailq"


def smtp_send_configured(config_path: Path, message: bytes) -> tuple[str, list[str]]:
    """Send ``message`` through the server of ``config_path``, its password from
    pbem.credentials: (where it went, warnings). UsageProblem if it fails."""
    from pbem import credentials

    config = load_smtp_config(config_path)
    secret, warnings = "", list[str]()
    if config.username:
        secret, warnings = credentials.password(config_path, config.username, in_file=config.password,
                                                command=config.password_command, use_keyring=config.keyring)
    send_smtp(config, message, secret)
    return f"{config.host}:{config.port}", warnings


def deliver_turn(gd, sent, *, sender: str = "", recipient: str = "", write_eml: bool = False,
                 smtp_config: Path | None = None) -> tuple[dict[str, str], list[str]]:
    """The email of the turn file of ``sent`` (pbem.session.email_for): written
    beside the turn file as .eml with ``write_eml``, sent through the SMTP
    server of ``smtp_config`` when given. Returns (what was done, lines to
    print); Undelivered (exit 13) if the server did not take it."""
    from pbem.errors import Undelivered
    from pbem.fileio import write_atomic
    from pbem.session import email_for

    if str(sent.turn_file) == "-":
        raise UsageProblem("--eml and --smtp need the turn file in a file, not on stdout")
    message = email_for(gd, sent, sender=sender, recipient=recipient)
    done: dict[str, str] = {}
    lines: list[str] = []
    if write_eml:
        path = Path(sent.turn_file).with_suffix(".eml")
        write_atomic(path, message)
        done["eml"] = str(path)
        lines.append(f"email message {path}")
    if smtp_config is not None:
        try:
            where, warnings = smtp_send_configured(smtp_config, message)
        except UsageProblem as exc:
            span = f"event {sent.seqs[0]}" if len(sent.seqs) == 1 else f"events {sent.seqs[0]}-{sent.seqs[-1]}"
            raise Undelivered(f"{span} signed and stored, but not delivered: {exc.message}; the same "
                              f"command resends it (or 'pbem send --since {sent.seqs[0]} --smtp')") from None
        lines = [f"warning: {w}" for w in warnings] + lines
        done["smtp"] = where
        lines.append(f"sent by email through {where}")
    return done, lines


def mail_automatic_answer(gd, sent, smtp_config: Path) -> list[str]:
    """Issue 21 point 5: the email of an automatic answer (entropy, deck steps),
    per the game's mail settings. With both addresses set (``pbem address``) and
    the SMTP settings at ``smtp_config``: sent at once, or, if the server does
    not take it, queued in GAME/outbox/mailq/ for 'pbem watch' (never an error:
    the answer is signed and its turn file written). With the addresses but no
    SMTP settings: the .eml is written beside the turn file, to send by hand.
    Without addresses: nothing (the turn file, as before). Lines to print."""
    from pbem.fileio import make_dirs, write_atomic
    from pbem.session import email_for

    local = gd.read_local()
    if not local.email or not local.opponent_email or str(sent.turn_file) == "-":
        return []
    span = f"event {sent.seqs[0]}" if len(sent.seqs) == 1 else f"events {sent.seqs[0]}-{sent.seqs[-1]}"
    if not smtp_config.exists():
        done, lines = deliver_turn(gd, sent, write_eml=True)
        return [f"automatic answer ({span}): email message {done['eml']}: send it to {local.opponent_email}"]
    message = email_for(gd, sent)
    name = Path(sent.turn_file).with_suffix(".eml").name
    try:
        where, warnings = smtp_send_configured(smtp_config, message)
    except (UsageProblem, BadFile, NotFound) as exc:
        queue = gd.outbox_dir / QUEUE
        make_dirs(queue)
        write_atomic(queue / name, message)
        return [f"automatic answer ({span}) not sent ({exc.message}): queued in {queue / name}; "
                "'pbem watch' sends it"]
    write_atomic(gd.outbox_dir / name, message)  # the copy of what was sent, as 'send --eml' keeps
    return [f"warning: {w}" for w in warnings] + \
        [f"automatic answer ({span}) sent by email to {local.opponent_email} through {where}"]


def send_queued(gd, smtp_config: Path) -> tuple[list[str], list[str]]:
    """Send the emails queued in GAME/outbox/mailq/, oldest event first; each sent
    one moves to GAME/outbox/. (lines of what was sent, lines of what failed)."""
    from pbem.fileio import read_regular

    queue = gd.outbox_dir / QUEUE
    if not queue.is_dir():
        return [], []
    sent_lines: list[str] = []
    for path in sorted(p for p in queue.iterdir() if p.suffix == ".eml"):
        message = read_regular(path, MAX_MESSAGE_BYTES, "queued email")
        try:
            where, warnings = smtp_send_configured(smtp_config, message)
        except (UsageProblem, BadFile, NotFound) as exc:
            return sent_lines, [f"{gd.path}: queued email {path.name} not sent: {exc.message}"]
        os.replace(path, gd.outbox_dir / path.name)
        sent_lines += [f"warning: {w}" for w in warnings]
        sent_lines.append(f"{gd.path}: sent queued email {path.name} through {where}")
    return sent_lines, []
