"""A small but real IMAP4rev1 server (RFC 3501) for the tests of ``pbem fetch``
and ``pbem watch``: asyncio on a loopback socket, one mailbox (INBOX) per
server, implicit TLS or STARTTLS with a throwaway self-signed certificate made
with ``cryptography``, or plain text.

Why not pymap (a pure-Python IMAP server on PyPI, tried first): it installs
and runs on 3.11, but its backends keep no keywords (PERMANENTFLAGS lacks
``\\*`` and ``STORE +FLAGS ($PbemTaken)`` is silently dropped), which is the
very mark ``pbem fetch`` sets; it has no implicit TLS and no way to drop a
connection half-way. So the tests use this one.

Commands: CAPABILITY, STARTTLS, LOGIN, SELECT, EXAMINE, UID SEARCH, UID FETCH,
UID STORE, NOOP, CHECK, CLOSE, LOGOUT (and their non-UID forms for FETCH,
SEARCH and STORE). Literals are read from the client ({n} with a continuation,
{n+} without) and sent in FETCH answers. Every command line is recorded in
``commands`` so that tests can assert what the client never did (EXPUNGE,
\\Deleted). ``drop_after_fetches = N`` closes the socket right after the
answer to the N-th FETCH command of the server's life (a dropped connection).
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import re
import ssl
import threading
from dataclasses import dataclass, field
from pathlib import Path

SYSTEM_FLAGS = ("\\Seen", "\\Answered", "\\Flagged", "\\Deleted", "\\Draft")


@dataclass
class Stored:
    uid: int
    data: bytes
    flags: set[str] = field(default_factory=set)


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A throwaway self-signed certificate for 127.0.0.1 and localhost: (cert, key) PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / "imap-cert.pem", directory / "imap-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class BadCommand(Exception):
    pass


def _tokens(line: bytes, literals: list[bytes]) -> list[object]:
    """Arguments of a command line: atoms and quoted strings as str, literals as bytes
    (``literals`` in order, each marked in ``line`` by a NUL placeholder), and
    parenthesized lists as lists."""
    out: list[object] = []
    stack: list[list[object]] = [out]
    i, lit = 0, iter(literals)
    while i < len(line):
        c = line[i:i + 1]
        if c == b" ":
            i += 1
        elif c == b"(":
            inner: list[object] = []
            stack[-1].append(inner)
            stack.append(inner)
            i += 1
        elif c == b")":
            if len(stack) == 1:
                raise BadCommand("unbalanced )")
            stack.pop()
            i += 1
        elif c == b"\0":
            stack[-1].append(next(lit))
            i += 1
        elif c == b'"':
            i += 1
            buf = bytearray()
            while True:
                if i >= len(line):
                    raise BadCommand("unterminated quoted string")
                ch = line[i:i + 1]
                if ch == b"\\":
                    buf += line[i + 1:i + 2]
                    i += 2
                elif ch == b'"':
                    i += 1
                    break
                else:
                    buf += ch
                    i += 1
            stack[-1].append(buf.decode("utf-8"))
        else:
            # An atom; "BODY.PEEK[]" and "BODY[HEADER.FIELDS (A B)]" keep their brackets.
            j, depth = i, 0
            while j < len(line):
                ch = line[j:j + 1]
                if ch == b"[":
                    depth += 1
                elif ch == b"]":
                    depth -= 1
                elif depth == 0 and ch in (b" ", b"(", b")"):
                    break
                j += 1
            stack[-1].append(line[i:j].decode("utf-8"))
            i = j
    if len(stack) != 1:
        raise BadCommand("unbalanced (")
    return out


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _number_set(text: str, largest: int) -> set[int]:
    """An IMAP sequence set ("1:*", "2,4:6") over numbers up to ``largest``."""
    found: set[int] = set()
    for part in text.split(","):
        lo_text, _, hi_text = part.partition(":")
        try:
            lo = largest if lo_text == "*" else int(lo_text)
            hi = lo if not hi_text else largest if hi_text == "*" else int(hi_text)
        except ValueError:
            raise BadCommand(f"bad sequence set {text!r}") from None
        lo, hi = min(lo, hi), max(lo, hi)
        found.update(range(lo, hi + 1))
    return found


class ImapServer:
    """One IMAP server on 127.0.0.1 in a thread of its own; ``deliver`` adds mail."""

    def __init__(self, directory: Path, *, user: str = "player@example.org", password: str = "mail secret",
                 security: str = "ssl", keywords: bool = True) -> None:
        assert security in ("ssl", "starttls", "none")
        self.user, self.password, self.security, self.keywords = user, password, security, keywords
        self.cafile, keyfile = make_certificate(directory)
        self.tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.tls.load_cert_chain(self.cafile, keyfile)
        self.messages: list[Stored] = []
        self.uidvalidity = 3141
        self.next_uid = 101
        self.commands: list[str] = []
        self.fetches = 0
        self.logins = 0
        self.drop_after_fetches: int | None = None
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._server: asyncio.base_events.Server | None = None
        self.port = 0

    # -- life cycle -----------------------------------------------------------

    def __enter__(self) -> ImapServer:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the IMAP test server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        async def close() -> None:
            assert self._server is not None
            self._server.close()
            await self._server.wait_closed()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        implicit = self.tls if self.security == "ssl" else None
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._session, "127.0.0.1", 0, ssl=implicit))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    def config(self, path: Path, *, password: str | None = None, mailbox: str = "INBOX", extra: str = "") -> Path:
        """Write an imap.toml for this server (the password in the file, mode 0600, unless None)."""
        lines = ["[imap]", 'host = "127.0.0.1"', f"port = {self.port}", f'security = "{self.security}"',
                 f'username = "{self.user}"', f'mailbox = "{mailbox}"', f'cafile = "{self.cafile}"', "timeout = 10"]
        if password is not None:
            lines.append(f"password = {_quote(password)}")
        path.write_text("\n".join(lines) + "\n" + extra)
        path.chmod(0o600)
        return path

    # -- the mailbox ------------------------------------------------------------

    def deliver(self, data: bytes) -> int:
        with self._lock:
            uid = self.next_uid
            self.next_uid += 1
            self.messages.append(Stored(uid, data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")))
            return uid

    def flags(self, uid: int) -> set[str]:
        with self._lock:
            return set(next(m.flags for m in self.messages if m.uid == uid))

    # -- one connection ------------------------------------------------------

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        state = {"auth": False, "selected": False, "readonly": False, "tls": self.security == "ssl"}

        async def send(data: bytes) -> None:
            writer.write(data)
            await writer.drain()

        try:
            await send(b"* OK [CAPABILITY " + self._capability(state).encode() + b"] pbem test IMAP ready\r\n")
            while True:
                line, literals = await self._read_command(reader, send)
                if line is None:
                    break
                text = line.decode("utf-8", "replace")
                self.commands.append(text.replace("\0", "{literal}"))
                tag, _, rest = text.partition(" ")
                try:
                    args = _tokens(rest.encode(), literals)
                    if not tag or not args or not isinstance(args[0], str):
                        raise BadCommand("no command")
                    name = args[0].upper()
                    done = await self._dispatch(name, args[1:], tag, state, send, writer)
                except BadCommand as exc:
                    await send(f"{tag or '*'} BAD {exc}\r\n".encode())
                    continue
                if done == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            writer.close()

    async def _read_command(self, reader, send) -> tuple[bytes | None, list[bytes]]:
        """One command line with its literals replaced by NUL placeholders."""
        parts: list[bytes] = []
        literals: list[bytes] = []
        while True:
            raw = await reader.readline()
            if not raw:
                return None, []
            raw = raw.rstrip(b"\r\n")
            m = re.search(rb"\{(\d+)(\+?)\}$", raw)
            if not m:
                parts.append(raw)
                return b"".join(parts), literals
            parts.append(raw[:m.start()] + b"\0")
            if not m.group(2):
                await send(b"+ Ready for literal data\r\n")
            literals.append(await reader.readexactly(int(m.group(1))))

    def _capability(self, state: dict) -> str:
        caps = ["IMAP4rev1", "LITERAL+", "UIDPLUS"]
        if self.security == "starttls" and not state["tls"]:
            caps += ["STARTTLS", "LOGINDISABLED"]
        return " ".join(caps)

    async def _dispatch(self, name: str, args: list[object], tag: str, state: dict, send, writer) -> str:
        ok = f"{tag} OK {name} completed\r\n".encode()
        if name == "CAPABILITY":
            await send(f"* CAPABILITY {self._capability(state)}\r\n".encode() + ok)
        elif name == "NOOP" or name == "CHECK":
            await send(ok)
        elif name == "LOGOUT":
            await send(b"* BYE logging out\r\n" + ok)
            return "close"
        elif name == "STARTTLS":
            if self.security != "starttls" or state["tls"]:
                raise BadCommand("STARTTLS not offered now")
            await send(ok)
            await writer.start_tls(self.tls)
            state["tls"] = True
        elif name == "LOGIN":
            if self.security == "starttls" and not state["tls"]:
                await send(f"{tag} NO [PRIVACYREQUIRED] LOGIN only after STARTTLS\r\n".encode())
                return ""
            if len(args) != 2:
                raise BadCommand("LOGIN needs a user and a password")
            user, password = (a.decode("utf-8") if isinstance(a, bytes) else str(a) for a in args)
            if (user, password) != (self.user, self.password):
                await send(f"{tag} NO [AUTHENTICATIONFAILED] Invalid credentials\r\n".encode())
                return ""
            self.logins += 1
            state["auth"] = True
            await send(f"{tag} OK [CAPABILITY {self._capability(state)}] LOGIN completed\r\n".encode())
        elif not state["auth"]:
            await send(f"{tag} NO log in first\r\n".encode())
        elif name in ("SELECT", "EXAMINE"):
            if len(args) != 1 or str(args[0]).upper() != "INBOX":
                await send(f"{tag} NO [NONEXISTENT] no such mailbox\r\n".encode())
                return ""
            state["selected"], state["readonly"] = True, name == "EXAMINE"
            with self._lock:
                count = len(self.messages)
            permanent = "\\Seen \\Answered \\Flagged \\Deleted \\Draft" + (" \\*" if self.keywords else "")
            await send(f"* FLAGS (\\Seen \\Answered \\Flagged \\Deleted \\Draft)\r\n* {count} EXISTS\r\n"
                       f"* 0 RECENT\r\n* OK [UIDVALIDITY {self.uidvalidity}] UIDs valid\r\n"
                       f"* OK [UIDNEXT {self.next_uid}] next\r\n* OK [PERMANENTFLAGS ({permanent})] flags\r\n"
                       f"{tag} OK [{'READ-ONLY' if state['readonly'] else 'READ-WRITE'}] {name} completed\r\n"
                       .encode())
        elif name == "CLOSE":
            state["selected"] = False  # nothing here is ever \Deleted, so nothing is expunged
            await send(ok)
        elif not state["selected"]:
            await send(f"{tag} NO select a mailbox first\r\n".encode())
        elif name == "UID" and args and str(args[0]).upper() in ("FETCH", "SEARCH", "STORE"):
            return await self._command(str(args[0]).upper(), args[1:], tag, state, send, writer, uid=True)
        elif name in ("FETCH", "SEARCH", "STORE"):
            return await self._command(name, args, tag, state, send, writer, uid=False)
        else:
            raise BadCommand(f"command {name} not supported by this test server")
        return ""

    def _targets(self, text: str, uid: bool) -> list[tuple[int, Stored]]:
        with self._lock:
            numbered = list(enumerate(self.messages, start=1))
        if not numbered:
            return []
        largest = numbered[-1][1].uid if uid else len(numbered)
        wanted = _number_set(text, largest)
        return [(n, m) for n, m in numbered if (m.uid if uid else n) in wanted]

    async def _command(self, name: str, args: list[object], tag: str, state: dict, send, writer, *,
                       uid: bool) -> str:
        done = f"{tag} OK {'UID ' if uid else ''}{name} completed\r\n".encode()
        if name == "SEARCH":
            with self._lock:
                numbered = list(enumerate(self.messages, start=1))
            hits = [str(m.uid if uid else n) for n, m in numbered if self._matches(args, n, m)]
            await send(f"* SEARCH{''.join(' ' + h for h in hits)}\r\n".encode() + done)
        elif name == "FETCH":
            if len(args) != 2:
                raise BadCommand("FETCH needs a set and items")
            items = args[1] if isinstance(args[1], list) else [args[1]]
            wanted = [str(i).upper() for i in items]
            out = bytearray()
            for n, m in self._targets(str(args[0]), uid):
                fields: list[bytes] = [f"UID {m.uid}".encode()]
                for item in wanted:
                    if item == "UID":
                        continue
                    if item == "FLAGS":
                        fields.append(f"FLAGS ({' '.join(sorted(m.flags))})".encode())
                    elif item == "RFC822.SIZE":
                        fields.append(f"RFC822.SIZE {len(m.data)}".encode())
                    elif item in ("BODY.PEEK[]", "BODY[]", "RFC822"):
                        if item != "BODY.PEEK[]" and not state["readonly"]:
                            m.flags.add("\\Seen")
                        label = "RFC822" if item == "RFC822" else "BODY[]"
                        fields.append(f"{label} {{{len(m.data)}}}\r\n".encode() + m.data)
                    else:
                        raise BadCommand(f"fetch item {item} not supported by this test server")
                out += f"* {n} FETCH (".encode() + b" ".join(fields) + b")\r\n"
            await send(bytes(out) + done)
            self.fetches += 1
            if self.drop_after_fetches is not None and self.fetches >= self.drop_after_fetches:
                self.drop_after_fetches = None
                transport = writer.transport
                transport.abort()  # the connection drops: no BYE, no more answers
                return "close"
        elif name == "STORE":
            if state["readonly"]:
                await send(f"{tag} NO mailbox is read-only\r\n".encode())
                return ""
            if len(args) != 3:
                raise BadCommand("STORE needs a set, an item and flags")
            how = str(args[1]).upper()
            flags = args[2] if isinstance(args[2], list) else [args[2]]
            names = [str(f) for f in flags]
            system = {f.lower(): f for f in SYSTEM_FLAGS}
            allowed = [system.get(f.lower(), f) for f in names if self.keywords or f.lower() in system]
            out = bytearray()
            for n, m in self._targets(str(args[0]), uid):
                with self._lock:
                    if how.startswith("+FLAGS"):
                        m.flags.update(allowed)
                    elif how.startswith("-FLAGS"):
                        m.flags.difference_update(allowed)
                    elif how.startswith("FLAGS"):
                        m.flags = set(allowed)
                    else:
                        raise BadCommand(f"bad STORE item {how}")
                if not how.endswith(".SILENT"):
                    out += f"* {n} FETCH (UID {m.uid} FLAGS ({' '.join(sorted(m.flags))}))\r\n".encode()
            await send(bytes(out) + done)
        return ""

    def _matches(self, criteria: list[object], n: int, m: Stored) -> bool:
        items = list(criteria)
        while items:
            key = str(items.pop(0)).upper()
            if key == "ALL":
                continue
            if key in ("KEYWORD", "UNKEYWORD"):
                if not items:
                    raise BadCommand(f"{key} needs a flag")
                has = str(items.pop(0)) in m.flags
                if has != (key == "KEYWORD"):
                    return False
            elif key in ("SEEN", "UNSEEN"):
                if ("\\Seen" in m.flags) != (key == "SEEN"):
                    return False
            elif key == "UID":
                if not items:
                    raise BadCommand("UID needs a set")
                if m.uid not in _number_set(str(items.pop(0)), self.next_uid):
                    return False
            else:
                raise BadCommand(f"search key {key} not supported by this test server")
        return True
