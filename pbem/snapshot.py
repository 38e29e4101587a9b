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

The shared deck's part of the fold is read back as the JSON it was saved
as and decoded only when the command first reads the deck
(``DeckLedger.from_encoded``): a late game's deck is most of the cache, and
an ordinary turn received or a report shown never reads it; a command that
does not touch it writes those bytes back as they were.

Being derived and checked when read, the cache is written atomically but
without fsync (``write_atomic(durable=False)``), after the events it
summarises are durable: after a power loss it may be stale or empty, which
only costs one full replay. A cache that cannot be written (full disk) is
skipped the same way.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from pbem import __version__, codec
from pbem.errors import BadFile, PbemError
from pbem.fileio import make_dirs, read_regular, write_atomic
from pbem.game import Replay, ReplayData
from pbem.identity import Identity
from pbem.store import GameDir
from pbem.vault import seal_bytes, unseal_bytes

_MAGIC = b"PBEMCCH4"  # 4: with the time control ledger (owed, leave used); 3: the fold as pbem.game.ReplayData (2: the deck as plain, already-checked strings)
_PURPOSE = b"cache"
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


def _path(gd: GameDir, role: str) -> Path:
    return gd.path / "cache" / f"{role}.bin"


def save(gd: GameDir, replay: Replay, identity: Identity) -> None:
    """Write the cache for ``replay`` (a player's perspective). Never raises for
    a rules module whose state cannot be encoded: it then keeps no cache."""
    if replay.role is None or replay.genesis is None:
        return
    snap = Snapshot(
        pbem=__version__, rules=replay.rules.SPEC.id, rules_version=replay.rules.SPEC.version,
        data_hash=replay.genesis.data_hash, game=replay.game_hex, role=replay.role, replay=replay.snapshot())
    path = _path(gd, replay.role)
    try:
        make_dirs(path.parent)
        write_atomic(path, seal_bytes(msgspec.json.encode(snap), identity, replay.game_hex, replay.role,
                                      magic=_MAGIC, purpose=_PURPOSE), mode=0o600, durable=False)
    except (OSError, PbemError):
        pass  # no cache this time: the next command replays the whole log


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
        snap = msgspec.json.decode(plain, type=Snapshot)
        restored = base.restored(snap.replay)
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
