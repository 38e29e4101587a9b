"""A player's replay cache, so that commands do not replay the whole log.

After a command has replayed the log from a player's perspective, the
Replay's fold (rules state, commitments, openings, entropy, pending dice,
history) is saved to ``cache/<role>.bin``, encrypted like the vault (it
holds what that player knows). The next command restores it only if it is
checked against the log: same format, rules id, version and data, and the
hash of the stored event at its sequence number equals its recorded head;
then it applies just the newer events, each fully verified. A cache of
another version, game or role, or a damaged or unreadable cache, falls back
to a full replay. A cache of this game that has seen more events than the
log now holds, or another event at its head, means the event log lost or
changed events: that is reported (BadFile), never hidden by a shorter
replay (PLAN: the cheap check is the event count and the hash of the last
event; ``pbem verify`` and ``pbem audit`` never use the cache and check
every event).

Two parts of a late game's fold are most of its cache and an ordinary
turn received never reads them, so they are left as they were saved until
something reads them (issue 20):

- the shared deck is in a file of its own, ``cache/<role>.deck-<token>.bin``
  (sealed like the rest, with the token the main file names in its
  associated data, so that only that file is taken for it). A restored
  ledger reads and decodes it when first read (``DeckLedger.from_encoded``);
  while nothing read it, the next save names the same file again instead of
  writing it. A new deck file is written before the main file that names it,
  and older deck files are removed after, so a crash leaves the main file
  with the deck file it names. Should that file still be unreadable when the
  deck is read (a power loss: neither file is fsynced), the deck is
  recomputed from the log, as a full replay would;
- the history's entries before the last are kept as their JSON
  (``pbem.game.History``).

The main file's sealed text is three sections, each preceded by its length
(``_sections``): the ``Snapshot`` as JSON without the two largest parts of
the fold, then the rules state's JSON and the older history's JSON. Decoding
the first section never reads the other two, and the state is decoded once,
by the rules' type (``Replay.restored``): embedded in the JSON, both were
scanned by every decode and copied by every encode.

Being derived and checked when read, the cache is written atomically but
without fsync (``write_atomic(durable=False)``), after the events it
summarises are durable: after a power loss it may be stale or empty, which
only costs one full replay. A cache that cannot be written (full disk) is
skipped the same way.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Callable
from pathlib import Path

import msgspec

from pbem import __version__, codec
from pbem.errors import BadFile, PbemError
from pbem.fileio import make_dirs, read_regular, write_atomic
from pbem.game import Replay, ReplayData
from pbem.identity import Identity
from pbem.ledger import NO_DECK, DeckLedger
from pbem.store import GameDir
from pbem.vault import seal_bytes, unseal_bytes

_MAGIC = b"PBEMCCH6"  # 6: three sections, the state and the older history out of the JSON; 5: the deck in a file of its own, the history as its last entry and the JSON of the others, the commitments as label -> CommitRecord; 4: with the time control ledger (owed, leave used); 3: the fold as pbem.game.ReplayData (2: the deck as plain, already-checked strings)
_PURPOSE = b"cache"
_DECK_MAGIC = b"PBEMCDK1"
#: Largest cache read (a 20-month campaign's is a few MiB).
MAX_CACHE_BYTES = 1 << 30


class Snapshot(msgspec.Struct, frozen=True):
    """What ``cache/<role>.bin`` holds: whose fold, of which game and rules, and the fold."""

    pbem: str
    rules: str
    rules_version: str
    data_hash: str
    game: str
    role: str
    replay: ReplayData
    #: The token of the deck file (``cache/<role>.deck-<token>.bin``); "": the
    #: ledger is empty, and there is no deck file.
    deck: str = ""


#: Each section's length, before it.
_LENGTH = struct.Struct(">I")
#: What the JSON section holds in place of the parts kept in sections of their own.
_ELSEWHERE = msgspec.Raw(b"null")


def _sections(*parts: bytes) -> bytes:
    return b"".join(_LENGTH.pack(len(part)) + part for part in parts)


def _split(plain: bytes, count: int) -> list[memoryview]:
    """The ``count`` sections of ``plain``; BadFile unless they are exactly all of it."""
    view, out, at = memoryview(plain), [], 0
    for _ in range(count):
        if at + _LENGTH.size > len(view):
            raise BadFile("the replay cache is truncated")
        (n,), at = _LENGTH.unpack_from(view, at), at + _LENGTH.size
        if at + n > len(view):
            raise BadFile("the replay cache is truncated")
        out.append(view[at:at + n])
        at += n
    if at != len(view):
        raise BadFile("the replay cache has bytes after its last section")
    return out


def _path(gd: GameDir, role: str) -> Path:
    return gd.path / "cache" / f"{role}.bin"


def _is_token(token: str) -> bool:
    return len(token) == 32 and all(c in "0123456789abcdef" for c in token)


def _deck_path(gd: GameDir, role: str, token: str) -> Path:
    return gd.path / "cache" / f"{role}.deck-{token}.bin"


class _DeckFile:
    """The deck file a restored cache names: read, unsealed and decoded when the
    ledger is first read. What a file that cannot be read then gives instead is
    the deck of a full replay of the log up to the cached event (``rebuild``)."""

    __slots__ = ("path", "token", "identity", "game", "role", "rebuild")

    def __init__(self, path: Path, token: str, identity: Identity, game: str, role: str,
                 rebuild: Callable[[], bytes]) -> None:
        self.path, self.token, self.identity, self.game, self.role = path, token, identity, game, role
        self.rebuild = rebuild

    def __call__(self) -> bytes:
        try:
            blob = read_regular(self.path, MAX_CACHE_BYTES, "replay cache")
            return unseal_bytes(blob, self.identity, self.game, self.role, magic=_DECK_MAGIC, purpose=_PURPOSE,
                                context=self.token.encode())
        except (PbemError, OSError):
            return self.rebuild()


def save(gd: GameDir, replay: Replay, identity: Identity) -> None:
    """Write the cache for ``replay`` (a player's perspective). Never raises for
    a rules module whose state cannot be encoded: it then keeps no cache."""
    if replay.role is None or replay.genesis is None:
        return
    role, game = replay.role, replay.game_hex
    path = _path(gd, role)
    try:
        make_dirs(path.parent)
        source = replay.ledger.source()
        if isinstance(source, _DeckFile) and source.path.parent == path.parent and source.role == role and \
                source.path.exists():
            token = source.token  # nothing read the deck: its file is still the deck
        else:
            deck = replay.ledger.encoded()
            token = "" if deck == NO_DECK else os.urandom(16).hex()  # an empty deck: no deck file
            if token:
                write_atomic(_deck_path(gd, role, token),
                             seal_bytes(deck, identity, game, role, magic=_DECK_MAGIC, purpose=_PURPOSE,
                                        context=token.encode()), mode=0o600, durable=False)
        data = replay.snapshot(with_deck=False)
        snap = Snapshot(
            pbem=__version__, rules=replay.rules.SPEC.id, rules_version=replay.rules.SPEC.version,
            data_hash=replay.genesis.data_hash, game=game, role=role,
            replay=msgspec.structs.replace(data, state=_ELSEWHERE, history_older=_ELSEWHERE), deck=token)
        plain = _sections(msgspec.json.encode(snap), bytes(data.state), bytes(data.history_older))
        write_atomic(path, seal_bytes(plain, identity, game, role, magic=_MAGIC, purpose=_PURPOSE),
                     mode=0o600, durable=False)
    except (OSError, PbemError):
        return  # no cache this time: the next command replays the whole log
    keep = _deck_path(gd, role, token).name
    with contextlib.suppress(OSError):
        for name in os.listdir(path.parent):
            if name.startswith(f"{role}.deck-") and name.endswith(".bin") and name != keep:
                os.unlink(path.parent / name)  # a deck file no main file names any more


def restore(gd: GameDir, base: Replay, identity: Identity, event_count: int) -> Replay | None:
    """``base`` (its genesis verified by ``Replay.open_genesis``, perspective set)
    advanced to the cached point, or None when there is no usable cache. The
    cache holds the genesis' own effects too, so they are not applied again.
    BadFile if the cache shows that the log lost or changed events."""
    path = _path(gd, base.role or "")
    if base.role is None or not path.exists():
        return None
    try:
        plain = unseal_bytes(read_regular(path, MAX_CACHE_BYTES, "replay cache"), identity, base.game_hex, base.role, magic=_MAGIC,
                             purpose=_PURPOSE)
        head, state, older = _split(plain, 3)
        snap = msgspec.json.decode(head, type=Snapshot)
        data = msgspec.structs.replace(snap.replay, state=msgspec.Raw(state), history_older=msgspec.Raw(older))
        ledger = None
        if snap.deck and not _is_token(snap.deck):
            return None
        if snap.deck:
            seq = snap.replay.seq
            ledger = DeckLedger.from_encoded(_DeckFile(_deck_path(gd, base.role, snap.deck), snap.deck, identity,
                                                       base.game_hex, base.role, lambda: _replayed_deck(gd, base, seq)))
        restored = base.restored(data, ledger)
    except (PbemError, msgspec.DecodeError, OSError):
        return None
    spec = base.rules.SPEC
    if (snap.pbem, snap.rules, snap.rules_version, snap.game, snap.role) != \
            (__version__, spec.id, spec.version, base.game_hex, base.role) or \
            base.genesis is None or snap.data_hash != base.genesis.data_hash or restored.seq < 0:
        return None
    if restored.seq >= event_count:
        raise BadFile(f"the event log in {gd.events_dir} is damaged: it holds {event_count} events but this "
                      f"copy had stored {restored.seq + 1} (its replay cache saw them); events {event_count}-"
                      f"{restored.seq} are missing. Restore the game directory from a backup, or ask your "
                      f"opponent to resend them ('pbem send --since {event_count}') and receive that file")
    held = gd.read_event(restored.seq)
    if codec.sha256(held).hex() != snap.replay.head:
        raise BadFile(f"the event log in {gd.events_dir} is damaged: {gd.event_path(restored.seq)} is not the "
                      "event this copy stored (its hash differs from the one the replay cache recorded); "
                      "restore the game directory from a backup and run 'pbem verify'")
    return restored


def _replayed_deck(gd: GameDir, base: Replay, seq: int) -> bytes:
    """The shared deck after event ``seq`` by a full replay of the log from
    ``base``'s perspective: what a deck file that cannot be read is replaced by."""
    r = Replay(base.rules, role=base.role, known=base.known, known_salts=base.known_salts,
               event_reader=gd.read_event, describe=False)
    for at in range(seq + 1):
        r.apply_stored(gd.read_event(at))
    return r.ledger.encoded()
