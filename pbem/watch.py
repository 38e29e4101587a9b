"""``pbem fetch`` and ``pbem watch`` (issue 21 point 6): turn mail from an IMAP
mailbox into every game on this machine, automatic answers out by email.

fetch, one pass:
  1. list the mailbox's messages not yet taken (pbem.imap);
  2. download each (BODY.PEEK[]) and keep the turn files it carries (an
     attachment, a forwarded message, base64, quoted-printable: the same
     parser as ``pbem receive``, pbem.mail.turn_files_in_message); a message
     without any is left alone;
  3. receive each message's turn files into its game, messages in log order
     (by their first event), under the game's exclusive lock, through
     ``pbem.session.receive`` (all or nothing per message, events written
     atomically, duplicates recognised), with its automatic answer (entropy,
     deck steps) mailed per the game's mail settings
     (pbem.mail.mail_automatic_answer);
  4. mark each message taken (``$PbemTaken`` and ``\\Seen``) only after its
     events are stored. Nothing is ever deleted or expunged.

So a second run takes nothing twice; a message that fails (another game's,
out of order, forged) stays unmarked and is reported with its error and exit
code while the others go on; a connection dropped half-way leaves every game
as after its last whole message, and the next run marks what was stored and
continues.

watch repeats fetch, the automatic answers of every game, and the queued
emails (pbem.mail.send_queued) every interval until SIGINT or SIGTERM, which
end it after the step under way.
"""

from __future__ import annotations

import email
import email.policy
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from pbem import codec
from pbem.errors import BadFile, Equivocation, ForeignGame, MailServerProblem, NotFound, PbemError, UsageProblem
from pbem.fileio import make_dirs, read_regular, write_atomic
from pbem.identity import Identity
from pbem.imap import Mailbox, too_large
from pbem.mail import _may_hold_turn, mail_automatic_answer, send_queued, turn_files_in_message
from pbem.store import GameDir
from pbem.text import shown

#: The games on this machine: one game directory per line, added by 'pbem new' and 'pbem join'.
GAMES_FILE = "games"

Unlock = Callable[[GameDir], Identity]


# -- the games on this machine -------------------------------------------------------

def remember_game(home: Path, directory: Path) -> None:
    """Add ``directory`` to $PBEM_HOME/games (once), for fetch and watch."""
    path = home / GAMES_FILE
    line = str(Path(directory).absolute())
    known = _registered(path)
    if line in known:
        return
    make_dirs(home)
    write_atomic(path, ("\n".join([*known, line]) + "\n").encode("utf-8"))


def _registered(path: Path) -> list[str]:
    try:
        text = read_regular(path, 1 << 20, "list of games").decode("utf-8", "replace")
    except NotFound:
        return []
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def games_here(home: Path, named: Sequence[Path]) -> tuple[list[GameDir], list[str]]:
    """The named game directories, else those of $PBEM_HOME/games that still hold
    a game: (games, notes about entries skipped)."""
    if named:
        games = [GameDir(p) for p in named]
        for gd in games:
            gd.require()
        return games, []
    games, notes = [], []
    for line in _registered(home / GAMES_FILE):
        gd = GameDir(line)
        if gd.exists():
            games.append(gd)
        else:
            notes.append(f"{shown(line)} (listed in {home / GAMES_FILE}) holds no game now: skipped")
    if not games:
        raise UsageProblem(f"no game to fetch for: name game directories, or create or join one ('pbem new', "
                           f"'pbem join' list it in {home / GAMES_FILE})")
    return games, notes


def game_id(gd: GameDir) -> str:
    from pbem.session import genesis_of

    _, stored = genesis_of(gd)
    return codec.sha256(codec.signing_input(codec.unwrap(stored).body)).hex()


# -- what was looked at -------------------------------------------------------------------

#: $PBEM_HOME/imap-seen.json: per mailbox, its UIDVALIDITY and the UIDs of messages that
#: carry no turn file at all (a message never changes under its UID, RFC 3501 2.3.1.1), so
#: that an inbox's other mail is downloaded once, not at every run.
SEEN_FILE = "imap-seen.json"


class _Seen(msgspec.Struct):
    uidvalidity: int
    unrelated: list[int] = []


def _load_seen(path: Path | None, box: Mailbox) -> set[int]:
    if path is None:
        return set()
    try:
        data = msgspec.json.decode(read_regular(path, 64 << 20, "IMAP state"), type=dict[str, _Seen])
    except (NotFound, msgspec.DecodeError):  # lost or damaged: look at everything again, nothing else
        return set()
    entry = data.get(box.key)
    return set(entry.unrelated) if entry is not None and entry.uidvalidity == box.uidvalidity else set()


def _save_seen(path: Path | None, box: Mailbox, unrelated: set[int]) -> None:
    if path is None:
        return
    try:
        data = msgspec.json.decode(read_regular(path, 64 << 20, "IMAP state"), type=dict[str, _Seen])
    except (NotFound, msgspec.DecodeError):
        data = {}
    data[box.key] = _Seen(box.uidvalidity, sorted(unrelated))
    make_dirs(path.parent)
    write_atomic(path, msgspec.json.encode(data), mode=0o600)


# -- one fetch ---------------------------------------------------------------------------

@dataclass
class Failure:
    uid: int
    subject: str
    error: PbemError

    def __str__(self) -> str:
        return f"message {self.uid} ({self.subject}) left unmarked: {self.error} (exit {self.error.exit_code})"


@dataclass
class _Item:
    uid: int
    subject: str
    gd: GameDir
    first_seq: int
    files: list[tuple[str, bytes]]


@dataclass
class FetchResult:
    lines: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    taken: list[int] = field(default_factory=list)
    dropped: MailServerProblem | None = None
    unrelated: int = 0

    @property
    def exit_code(self) -> int:
        if self.dropped is not None:
            return self.dropped.exit_code
        return self.failures[0].error.exit_code if self.failures else 0


def _items_of(uid: int, data: bytes, games: dict[str, GameDir]) -> tuple[str, list[_Item]]:
    """(subject, what of message ``uid`` goes into which game). ForeignGame if it
    carries only turn files of games not on this machine; BadFile for a damaged one."""
    from pbem.game import short_game
    from pbem.turnfile import parse_turn

    if not _may_hold_turn(data):
        return "", []
    msg = email.message_from_bytes(data, policy=email.policy.default)
    subject = f"'{shown(str(msg.get('Subject', '')), 80)}'"
    per_game: dict[str, list[tuple[str, bytes]]] = {}
    firsts: dict[str, int] = {}
    others: list[str] = []
    for turn in turn_files_in_message(msg):
        name = f"IMAP message {uid}"
        parsed = parse_turn(turn, name)
        gid = parsed.header.get("game", "")
        if gid not in games:
            others.append(gid)
            continue
        per_game.setdefault(gid, []).append((name, turn))
        try:
            seqs = [codec.unwrap(e).seq for e in parsed.events]
        except codec.CodecError as exc:
            raise BadFile(f"{name}: {exc}") from None
        firsts[gid] = min([firsts.get(gid, 1 << 62), *seqs])
    if not per_game and others:
        seen = ", ".join(dict.fromkeys(short_game(g) for g in others))
        raise ForeignGame(f"its turn files belong to game {seen}, which is not a game on this machine "
                          f"(games here: {', '.join(short_game(g) for g in games) or 'none'}): nothing was stored")
    return subject, [_Item(uid, subject, games[g], firsts[g], files) for g, files in per_game.items()]


def fetch(mailbox: AbstractContextManager[Mailbox], games: Sequence[GameDir], unlock: Unlock, smtp_config: Path,
          *, stop: Callable[[], bool] = lambda: False, seen: Path | None = None) -> FetchResult:
    """One pass over the mailbox (module docstring). Never raises for one
    message's problem; a connection that fails is ``result.dropped``. ``seen``
    (SEEN_FILE) remembers the messages without any turn file between runs."""
    result = FetchResult()
    ids = {game_id(gd): gd for gd in games}
    try:
        with mailbox as box:
            items: list[_Item] = []
            parts: dict[int, int] = {}  # uid -> items still to receive before it is marked
            unrelated = _load_seen(seen, box)
            known = len(unrelated)
            try:
                uids = [u for u in box.candidates() if u not in unrelated]
                sizes = box.sizes(uids)
                for uid in uids:
                    if stop():
                        break
                    if too_large(sizes.get(uid, 0)):
                        continue
                    data = box.message(uid)
                    if data is None:
                        continue
                    try:
                        subject, found = _items_of(uid, data, ids)
                    except PbemError as exc:
                        result.failures.append(Failure(uid, _subject(data), exc))
                        continue
                    if not found:
                        result.unrelated += 1
                        unrelated.add(uid)
                    items += found
                    parts[uid] = len(found)
            except MailServerProblem as exc:
                result.dropped = exc  # receive what arrived whole; the next run does the rest
            if len(unrelated) != known:
                with suppress(PbemError, OSError):  # best effort: without it, that mail is looked at again
                    _save_seen(seen, box, unrelated)
            items.sort(key=lambda i: (str(i.gd.path), i.first_seq, i.uid))
            for gd in dict.fromkeys(i.gd for i in items):
                if stop():
                    break
                for item, ok in _receive_game(gd, [i for i in items if i.gd is gd], unlock, smtp_config,
                                              result, stop):
                    if not ok:
                        parts[item.uid] = -1
                        continue
                    parts[item.uid] -= 1
                    if parts[item.uid] == 0 and result.dropped is None:
                        try:
                            box.mark_taken(item.uid)
                            result.taken.append(item.uid)
                        except MailServerProblem as exc:
                            result.dropped = exc
    except MailServerProblem as exc:
        result.dropped = exc
    return result


def _subject(data: bytes) -> str:
    msg = email.message_from_bytes(data[:1 << 16], policy=email.policy.default)
    return f"'{shown(str(msg.get('Subject', '')), 80)}'"


def _receive_game(gd: GameDir, items: list[_Item], unlock: Unlock, smtp_config: Path, result: FetchResult,
                  stop: Callable[[], bool]) -> Iterator[tuple[_Item, bool]]:
    """Receive ``items`` into ``gd`` in order under its lock; yields (item, stored)."""
    from pbem.session import load_seat, receive

    done: set[int] = set()  # ids of the items already answered for
    try:
        identity = unlock(gd)
        with gd.lock(exclusive=True):
            seat = load_seat(gd, identity)
            for item in items:
                if stop():
                    return
                try:
                    got = receive(seat, item.files, auto_reply=True, forced=True)
                except PbemError as exc:
                    result.failures.append(Failure(item.uid, item.subject, exc))
                    done.add(id(item))
                    yield item, False
                    seat = load_seat(gd, identity)  # all or nothing per message: start again from the disk
                    continue
                span = (f"received events {got.appended[0]}-{got.appended[-1]}" if got.appended
                        else f"already held events {got.duplicates[0]}-{got.duplicates[-1]}"
                        if got.duplicates else "nothing new")
                result.lines.append(f"{gd.path}: message {item.uid} {item.subject}: {span}")
                if got.auto_reply is not None:
                    result.lines += _answered(gd, got.auto_reply, smtp_config)
                done.add(id(item))
                yield item, True
    except PbemError as exc:  # the game cannot be opened: each message not yet answered for fails with that
        for item in items:
            if id(item) not in done:
                result.failures.append(Failure(item.uid, item.subject, exc))
                yield item, False


def _answered(gd: GameDir, sent, smtp_config: Path) -> list[str]:
    span = f"event {sent.seqs[-1]}"
    lines = [f"{gd.path}: answered automatically ({span}): turn file {sent.turn_file}"]
    if sent.said:
        lines.append(f"{gd.path}:   with " + "; ".join(sent.said))
    try:
        lines += [f"{gd.path}: {line}" for line in mail_automatic_answer(gd, sent, smtp_config)]
    except PbemError as exc:  # the answer is signed and its turn file written: only its email is missing
        lines.append(f"{gd.path}: the email of the automatic answer was not made: {exc}")
    return lines


# -- automatic answers and queued emails -----------------------------------------------

def answer_and_send(games: Sequence[GameDir], unlock: Unlock, smtp_config: Path) \
        -> tuple[list[str], list[tuple[str, int]]]:
    """For each game not stopped: its automatic answer if one is due (what
    ``pbem receive`` answers), mailed; then its queued emails. (lines,
    problems with their exit codes: 13 for an email the server did not take)."""
    from pbem.errors import Undelivered
    from pbem.session import load_seat, receive

    lines: list[str] = []
    problems: list[tuple[str, int]] = []
    for gd in games:
        if gd.stopped_reason():
            continue
        try:
            identity = unlock(gd)
            with gd.lock(exclusive=True):
                got = receive(load_seat(gd, identity), [], auto_reply=True, forced=True)
                if got.auto_reply is not None:
                    lines += _answered(gd, got.auto_reply, smtp_config)
                if smtp_config.exists():
                    sent, failed = send_queued(gd, smtp_config)
                    lines += sent
                    problems += [(f, Undelivered.exit_code) for f in failed]
        except PbemError as exc:
            problems.append((f"{gd.path}: {exc} (exit {exc.exit_code})", exc.exit_code))
    return lines, problems


def stopped_games(games: Sequence[GameDir]) -> list[str]:
    return [f"{gd.path}: GAME STOPPED: {reason}" for gd in games if (reason := gd.stopped_reason())]


# -- the loop ----------------------------------------------------------------------------

@contextmanager
def stop_on_signals() -> Iterator[threading.Event]:
    """An event set by SIGINT or SIGTERM (instead of the default ending), so that the
    step under way finishes: a turn file or an event is never half-written."""
    stop = threading.Event()
    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        with suppress(ValueError):  # not the main thread: the caller's own stop must do
            previous[sig] = signal.signal(sig, lambda *_: stop.set())
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def watch(mailbox_factory: Callable[[], AbstractContextManager[Mailbox]], games: Sequence[GameDir],
          unlock: Unlock, smtp_config: Path, echo: Callable[[str], None], *, interval: float, once: bool,
          seen: Path | None = None) -> int:
    """Fetch, answer and send every ``interval`` seconds until a signal (or
    once); one line per thing done. Returns the exit code: 6 if a game is
    stopped (its evidence), with --once the first failure's, else 0."""
    reported: set[str] = set()
    with stop_on_signals() as stop:
        while True:
            fetched = fetch(mailbox_factory(), games, unlock, smtp_config, stop=stop.is_set, seen=seen)
            for line in fetched.lines:
                echo(line)
            problems = [str(f) for f in fetched.failures]
            if fetched.dropped is not None:
                problems.append(str(fetched.dropped))
            answered, failed = ([], []) if stop.is_set() else answer_and_send(games, unlock, smtp_config)
            for line in answered:
                echo(line)
            for line in problems + [text for text, _ in failed]:
                if once or line not in reported:  # a message that keeps failing is said once per run
                    echo(f"problem: {line}")
                    reported.add(line)
            halted = stopped_games(games)
            if halted:
                for line in halted:
                    echo(line)
                return Equivocation.exit_code
            if once:
                return fetched.exit_code or (failed[0][1] if failed else 0)
            if stop.wait(interval):
                echo("stopped by a signal after the step under way")
                return 0


def passphrase_from_command(command: str) -> str:
    """``pbem watch --passphrase-command``: the first line the command prints."""
    from pbem.credentials import run_command

    return run_command(command, "the passphrase command", "passphrase")


def identity_paths(games: Sequence[GameDir], override: Path | None) -> dict[Path, list[GameDir]]:
    """Each identity key file with the games it plays (each game's local.json names its key)."""
    keys: dict[Path, list[GameDir]] = {}
    for gd in games:
        path = override or Path(gd.read_local().identity)
        keys.setdefault(Path(os.path.abspath(path)), []).append(gd)
    return keys
