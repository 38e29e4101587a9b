"""A game directory on disk (DESIGN 2).

    game.toml            public facts copied from genesis, for humans
    local.json           which role this copy plays and which identity key it uses
    events/000000.json   genesis, then one file per event, never rewritten
    evidence/            equivocation proofs (both signed events), and STOPPED
    vault/<role>.bin     this player's encrypted secrets
    drafts/<role>.json   orders composed but not yet signed (local, never sent)
    cache/<role>.bin     this player's encrypted replay cache (pbem.snapshot)
    outbox/              turn files written by 'pbem send'
    lock                 serializes pbem processes on this directory
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

import msgspec

from pbem import codec
from pbem.errors import BadFile, Equivocation, NotFound, StorageProblem
from pbem.fileio import TMP_PREFIX, locked, make_dirs, read_regular, remove_stale_temps, write_atomic
from pbem.identity import fingerprint

#: Largest local.json, STOPPED or evidence file read.
MAX_SMALL_FILE = 1 << 20


class LocalConfig(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    role: str
    identity: str
    rules: str
    email: str = ""
    opponent_email: str = ""
    #: The standing orders this player set (``pbem standing``; the game's
    #: ``Rules.standing_orders``): local, never sent; pbem's automatic answer
    #: gives them (issue 21 point 5).
    standing: tuple[str, ...] = ()


class GameDir:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.events_dir = self.path / "events"
        self.evidence_dir = self.path / "evidence"
        self.vault_dir = self.path / "vault"
        self.drafts_dir = self.path / "drafts"
        self.outbox_dir = self.path / "outbox"
        self.lock_path = self.path / "lock"
        self.local_path = self.path / "local.json"
        self.stopped_path = self.evidence_dir / "STOPPED"
        #: The event log's names (temp files left out) as the exclusive lock
        #: listed them, until ``_seqs`` takes them or an event is appended.
        self._listing: list[str] | None = None

    # -- layout -----------------------------------------------------------

    def exists(self) -> bool:
        return self.events_dir.is_dir() and (self.events_dir / _name(0)).is_file()

    def require(self) -> None:
        for path, kind in ((self.path, "directory"), (self.events_dir, "directory"),
                           (self.event_path(0), "file")):
            if os.path.lexists(path) and os.path.isdir(path) != (kind == "directory"):
                raise StorageProblem(f"{path} is a {'file' if kind == 'directory' else 'directory'} "
                                     f"where pbem expects a {kind}")
        if not self.exists():
            raise NotFound(f"{self.path} is not a pbem game directory (no events/{_name(0)}); "
                           "create one with 'pbem new' or 'pbem join', or pass --game DIR")

    def create_layout(self) -> None:
        """Create an empty game directory; refuses a directory that holds a game."""
        if self.events_dir.exists() and any(self.events_dir.iterdir()):
            raise BadFile(f"{self.path} already holds a game; choose an empty directory")
        for d in (self.events_dir, self.evidence_dir, self.vault_dir, self.drafts_dir, self.outbox_dir):
            make_dirs(d)
        self.vault_dir.chmod(0o700)

    @contextlib.contextmanager
    def lock(self, *, exclusive: bool) -> Iterator[None]:
        """The directory's lock (pbem.fileio.locked): take it before reading anything of the
        game and hold it until the last write. An exclusive lock creates the directory."""
        if exclusive:
            make_dirs(self.path)
        elif not self.path.is_dir():
            self.require()
        with locked(self.lock_path, exclusive=exclusive):
            if exclusive:  # no other pbem process holds the lock: every temp file is a crash's leftover
                for d in (self.evidence_dir, self.vault_dir, self.drafts_dir, self.outbox_dir, self.path / "cache"):
                    if d.is_dir():
                        remove_stale_temps(d)
                # The event log's names, listed once: its first count under this lock
                # reads them instead of listing the directory again (it grows with the
                # game, and a receive listed it twice: issue 20).
                self._listing = remove_stale_temps(self.events_dir) if self.events_dir.is_dir() else None
            try:
                yield
            finally:
                self._listing = None

    # -- events -----------------------------------------------------------

    def event_path(self, seq: int) -> Path:
        return self.events_dir / _name(seq)

    def event_count(self) -> int:
        """How many events are stored; BadFile if the sequence has a gap."""
        return len(self._seqs())

    def read_events(self, start: int = 0) -> list[bytes]:
        """Stored events ``start``.. in seq order; BadFile if the sequence has a gap."""
        return [self.read_event(seq) for seq in self._seqs()[start:]]

    def read_event(self, seq: int) -> bytes:
        """The stored bytes of event ``seq``; BadFile if oversized."""
        return read_regular(self.event_path(seq), codec.MAX_EVENT_BYTES, "event file")

    def _seqs(self) -> list[int]:
        names, self._listing = self._listing, None  # the lock's listing serves once: what follows may append
        if names is None:
            names = [name for name in os.listdir(self.events_dir) if not name.startswith(TMP_PREFIX)]
        # Fast path (every command lists the log; a name check per file cost 1.6 ms on 5,000
        # events): every name of the six-digit form (joined by "/", which no file name
        # holds), so distinct names are distinct numbers; the largest is n-1, so the n of
        # them are exactly 0..n-1.
        if _SIX_DIGIT_NAMES.fullmatch("/".join(names)) and (not names or max(names) == _name(len(names) - 1)):
            return list(range(len(names)))
        seqs = []
        for name in names:
            stem = name[:-5]
            if not (name.endswith(".json") and len(stem) >= 6 and stem.isascii() and stem.isdigit()):
                raise BadFile(f"unexpected file {self.events_dir / name} in the event log")
            seqs.append(int(stem))
        seqs.sort()
        for expected, seq in enumerate(seqs):
            if seq != expected:
                raise BadFile(f"event log in {self.events_dir} is damaged: event {expected} is missing")
        return seqs

    def append(self, seq: int, stored: bytes) -> None:
        """Write event ``seq``; never overwrites (FileExistsError if it exists)."""
        self._listing = None
        write_atomic(self.event_path(seq), stored, exclusive=True)

    # -- equivocation -------------------------------------------------------

    def record_equivocation(self, seq: int, author: str, held: bytes, other: bytes) -> Path:
        """Keep both signed events as proof and stop the game. The -b file is written
        first: readers look for -a files, so a crash never leaves half a proof."""
        make_dirs(self.evidence_dir)
        base = self.evidence_dir / f"equivocation-{seq:06d}-{author}"
        write_atomic(base.with_name(base.name + "-b.json"), other)
        write_atomic(base.with_name(base.name + "-a.json"), held)
        write_atomic(self.stopped_path,
                     f"equivocation by {author} at event {seq}: see {base.name}-a.json and -b.json\n".encode())
        return base

    def stopped_reason(self) -> str | None:
        try:
            return read_regular(self.stopped_path, MAX_SMALL_FILE, "stop file").decode("utf-8", "replace").strip()
        except NotFound:
            return None

    def require_not_stopped(self) -> None:
        reason = self.stopped_reason()
        if reason:
            raise Equivocation(f"this game is stopped: {reason}")

    # -- local config and public summary -------------------------------------

    def read_local(self) -> LocalConfig:
        try:
            return msgspec.json.decode(read_regular(self.local_path, MAX_SMALL_FILE), type=LocalConfig)
        except NotFound:
            raise NotFound(f"{self.local_path} is missing: this directory does not say which "
                           "role you play (was it created with 'pbem new' or 'pbem join'?)") from None
        except msgspec.DecodeError as exc:
            raise BadFile(f"{self.local_path}: {exc}") from None

    def write_local(self, config: LocalConfig) -> None:
        write_atomic(self.local_path, msgspec.json.format(msgspec.json.encode(config)) + b"\n")

    def write_game_toml(self, game_id: str, genesis: codec.Genesis) -> None:
        """Public summary of genesis for humans (the events are authoritative)."""
        def q(text: str) -> str:
            import json

            return json.dumps(text)  # JSON strings are valid TOML basic strings

        lines = [
            "# Public facts of this game, copied from its genesis event (events/000000.json",
            "# is authoritative; editing this file changes nothing).",
            f"game = {q(game_id)}",
            f"rules = {q(genesis.rules)}",
            f"rules_version = {q(genesis.rules_version)}",
            f"data_hash = {q(genesis.data_hash)}",
            f"scenario = {q(genesis.scenario)}",
            f"options = [{', '.join(q(o) for o in genesis.options)}]",
            f"title = {q(genesis.title)}",
        ]
        for p in genesis.players:
            lines += ["", "[[players]]", f"role = {q(p.role)}", f"key = {q(p.key)}",
                      f"fingerprint = {q(fingerprint(p.key))}"]
        write_atomic(self.path / "game.toml", ("\n".join(lines) + "\n").encode())


def _name(seq: int) -> str:
    return f"{seq:06d}.json"


_SIX_DIGIT_NAMES = re.compile(r"(?:[0-9]{6}\.json(?:/[0-9]{6}\.json)*)?")
