"""Turn mail straight from an IMAP mailbox (issue 21 point 6): the client side
of ``pbem fetch`` and ``pbem watch``.

The settings live beside the SMTP settings, outside every game directory
(``$PBEM_HOME/imap.toml``, table ``[imap]``); the password comes through
``pbem.credentials`` as SMTP's does ($PBEM_IMAP_PASSWORD being the
environment's, with a warning).

TLS is the default: implicit TLS on port 993 (``security = "ssl"``), or
``"starttls"`` on port 143. Plain text (``"none"``) is accepted only for a
loopback host, for tests and local bridges: a password never crosses a
network in the clear.

What pbem does to the mailbox: it reads with ``BODY.PEEK[]`` (reading alone
marks nothing) and, for each message it took, adds the keyword
``$PbemTaken`` and the flag ``\\Seen`` (``UID STORE +FLAGS.SILENT``). It never
deletes, moves or expunges. A server that keeps no keywords (no ``\\*`` in
PERMANENTFLAGS) gets ``\\Seen`` alone, and then every message is looked at
on every run (what was taken is recognised by the game, as ``pbem receive``
recognises a duplicate).
"""

from __future__ import annotations

import imaplib
import ipaddress
import re
import ssl
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import msgspec

from pbem.errors import BadFile, MailServerProblem, UsageProblem
from pbem.mail import MAX_MESSAGE_BYTES, read_config

#: The keyword that marks a message pbem took (RFC 3501 2.3.2: an atom a client may set).
TAKEN = "$PbemTaken"
DEFAULT_PORTS = {"ssl": 993, "starttls": 143, "none": 143}


class ImapConfig(msgspec.Struct, forbid_unknown_fields=True):
    host: str
    #: 0: the usual port of ``security`` (993 for ssl, 143 otherwise)
    port: int = 0
    #: "ssl" (implicit TLS, default), "starttls", or "none" (a loopback host only)
    security: str = "ssl"
    username: str = ""
    #: The folder pbem reads turn mail from (a server-side filter may file it there).
    mailbox: str = "INBOX"
    #: As in smtp.toml (pbem.credentials); $PBEM_IMAP_PASSWORD with a warning.
    password_command: str = ""
    keyring: bool = False
    password: str = ""
    timeout: int = 30
    #: A CA certificate file to trust besides the system's (a self-hosted server).
    cafile: str = ""

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port or DEFAULT_PORTS[self.security]}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_imap_config(path: Path) -> ImapConfig:
    """The IMAP settings in ``path``; BadFile naming the problem."""
    config = read_config(path, "imap", ImapConfig, "IMAP")
    if config.security not in DEFAULT_PORTS:
        raise BadFile(f"{path}: security must be ssl, starttls or none")
    if config.security == "none" and not is_loopback(config.host):
        raise BadFile(f"{path}: security = \"none\" sends the password in the clear and is accepted only for a "
                      f"loopback host (127.0.0.1, ::1, localhost), not {config.host!r}: use ssl or starttls")
    if not config.username:
        raise BadFile(f"{path}: username is missing (the IMAP login)")
    if not 0 <= config.port <= 65535 or config.timeout <= 0:
        raise BadFile(f"{path}: port must be 0-65535 and timeout positive")
    return config


def password_for(config: ImapConfig, config_path: Path) -> tuple[str, list[str]]:
    """The IMAP password and the warnings to print (pbem.credentials, the one place)."""
    from pbem import credentials

    secret, warnings = credentials.password(config_path, config.username, in_file=config.password,
                                            command=config.password_command, use_keyring=config.keyring,
                                            env_name=credentials.ENV_IMAP_PASSWORD)
    if not secret:
        raise UsageProblem(f"no IMAP password for {config.username}: set password_command or keyring = true in "
                           f"{config_path}, or ${credentials.ENV_IMAP_PASSWORD} (see README, 'Email')")
    return secret, warnings


def _dropped(config: ImapConfig, exc: BaseException) -> MailServerProblem:
    return MailServerProblem(f"the IMAP server {config.address} failed or dropped the connection ({exc}); "
                             "what was taken before is kept: run the command again")


class Mailbox:
    """One selected IMAP mailbox over a logged-in connection."""

    def __init__(self, client: imaplib.IMAP4, config: ImapConfig, keywords: bool, uidvalidity: int = 0) -> None:
        self.client = client
        self.config = config
        #: Whether the server keeps the ``$PbemTaken`` keyword.
        self.keywords = keywords
        #: RFC 3501 2.3.1.1: UIDs name the same messages while this number stays.
        self.uidvalidity = uidvalidity

    @property
    def key(self) -> str:
        """This mailbox, as pbem remembers what it looked at in it."""
        return f"{self.config.username}@{self.config.address}/{self.config.mailbox}"

    def _check(self, typ: str, data: list, what: str) -> list:
        if typ != "OK":
            detail = b" ".join(d for d in data if isinstance(d, bytes)).decode("utf-8", "replace")
            raise MailServerProblem(f"the IMAP server {self.config.address} refused {what}: {detail[:300]}")
        return data

    def candidates(self) -> list[int]:
        """UIDs of the messages not yet taken (every message if the server keeps no keywords)."""
        try:
            if self.keywords:
                typ, data = self.client.uid("SEARCH", "UNKEYWORD", TAKEN)
            else:
                typ, data = self.client.uid("SEARCH", "ALL")
        except (OSError, imaplib.IMAP4.error) as exc:
            raise _dropped(self.config, exc) from None
        data = self._check(typ, data, "the search")
        return sorted(int(u) for chunk in data if chunk for u in chunk.split())

    def sizes(self, uids: list[int]) -> dict[int, int]:
        """RFC822.SIZE of each message in ``uids`` (one command)."""
        if not uids:
            return {}
        try:
            typ, data = self.client.uid("FETCH", ",".join(map(str, uids)), "(RFC822.SIZE)")
        except (OSError, imaplib.IMAP4.error) as exc:
            raise _dropped(self.config, exc) from None
        found = {}
        for item in self._check(typ, data, "to list the messages"):
            text = item[0] if isinstance(item, tuple) else item
            if not isinstance(text, bytes):
                continue
            uid = re.search(rb"UID (\d+)", text)
            size = re.search(rb"RFC822\.SIZE (\d+)", text)
            if uid and size:
                found[int(uid.group(1))] = int(size.group(1))
        return found

    def message(self, uid: int) -> bytes | None:
        """The whole message ``uid`` (BODY.PEEK[]: reading marks nothing); None if it is gone."""
        try:
            typ, data = self.client.uid("FETCH", str(uid), "(BODY.PEEK[])")
        except (OSError, imaplib.IMAP4.error) as exc:
            raise _dropped(self.config, exc) from None
        for item in self._check(typ, data, f"to send message {uid}"):
            if isinstance(item, tuple) and re.search(rb"UID %d\b" % uid, item[0]):
                return bytes(item[1])
        return None

    def mark_taken(self, uid: int) -> None:
        """Add ``$PbemTaken`` (if the server keeps keywords) and ``\\Seen`` to message ``uid``."""
        flags = f"({TAKEN} \\Seen)" if self.keywords else "(\\Seen)"
        try:
            typ, data = self.client.uid("STORE", str(uid), "+FLAGS.SILENT", flags)
        except (OSError, imaplib.IMAP4.error) as exc:
            raise _dropped(self.config, exc) from None
        self._check(typ, data, f"to mark message {uid}")


def _tls(config: ImapConfig) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if config.cafile:
        try:
            context.load_verify_locations(cafile=config.cafile)
        except (OSError, ssl.SSLError) as exc:
            raise UsageProblem(f"cafile {config.cafile} cannot be used: {exc}") from None
    return context


def _login(client: imaplib.IMAP4, config: ImapConfig, password: str) -> None:
    try:
        if password.isascii():
            client.login(config.username, password)
        else:  # RFC 3501 6.2.3: a password outside ASCII travels as a literal
            client.literal = password.encode("utf-8")  # type: ignore[assignment]
            typ, data = client._simple_command("LOGIN", client._quote(config.username))  # type: ignore[attr-defined]
            if typ != "OK":
                raise imaplib.IMAP4.error(data[-1] if data else b"")
            client.state = "AUTH"
    except imaplib.IMAP4.abort as exc:
        raise _dropped(config, exc) from None
    except imaplib.IMAP4.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) \
            else str(exc)
        raise UsageProblem(f"the IMAP server {config.address} refused the login of '{config.username}' "
                           f"({reason[:200]}): check the password (password_command, keyring or "
                           "$PBEM_IMAP_PASSWORD) and the username") from None


@contextmanager
def open_mailbox(config: ImapConfig, password: str) -> Iterator[Mailbox]:
    """Connect (TLS unless a loopback host says "none"), log in and select the
    configured mailbox read-write; log out at the end. UsageProblem for a
    refused login or an unknown mailbox, MailServerProblem for a server that
    cannot be reached or drops the connection."""
    port = config.port or DEFAULT_PORTS[config.security]
    try:
        if config.security == "ssl":
            client: imaplib.IMAP4 = imaplib.IMAP4_SSL(config.host, port, ssl_context=_tls(config),
                                                      timeout=config.timeout)
        else:
            client = imaplib.IMAP4(config.host, port, timeout=config.timeout)
            if config.security == "starttls":
                client.starttls(_tls(config))
    except (TimeoutError, OSError, imaplib.IMAP4.error) as exc:
        raise MailServerProblem(f"could not connect to the IMAP server {config.address} "
                                f"({config.security}): {exc}") from None
    try:
        _login(client, config, password)
        try:
            typ, data = client.select(_mailbox_name(config.mailbox))
        except (OSError, imaplib.IMAP4.error) as exc:
            raise _dropped(config, exc) from None
        if typ != "OK":
            raise UsageProblem(f"the IMAP server {config.address} has no mailbox '{config.mailbox}' "
                               f"({b' '.join(d for d in data if isinstance(d, bytes)).decode('utf-8', 'replace')})")
        permanent = client.untagged_responses.get("PERMANENTFLAGS", [b""])[0] or b""
        keywords = b"\\*" in permanent or TAKEN.encode() in permanent
        validity = client.untagged_responses.get("UIDVALIDITY", [b"0"])[0]
        number = int(validity) if isinstance(validity, bytes) and validity.isdigit() else 0
        yield Mailbox(client, config, keywords, number)
    finally:
        with suppress(OSError, imaplib.IMAP4.error):
            client.logout()


def _mailbox_name(name: str) -> str:
    """A mailbox name as an IMAP string (quoted when it holds spaces or specials)."""
    if re.fullmatch(r"[A-Za-z0-9._/-]+", name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def too_large(size: int) -> bool:
    return size > MAX_MESSAGE_BYTES
