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

Being derived and checked when read, the cache is written atomically but
without fsync (``write_atomic(durable=False)``), after the events it
summarises are durable: after a power loss it may be stale or empty, which
only costs one full replay. A cache that cannot be written (full disk) is
skipped the same way.
"""

from __future__ import annotations

import msgspec

from pbem import __version__, codec
from pbem import deck as deckmod
from pbem.errors import BadFile, PbemError
from pbem.fileio import make_dirs, read_regular, write_atomic
from pbem.game import CommitRecord, DiceOrigin, EventInfo, Replay, SecretDie
from pbem.identity import Identity
from pbem.store import GameDir
from pbem.vault import seal_bytes, unseal_bytes

_MAGIC = b"PBEMCCH2"  # 2: the deck as plain, already-checked strings
_PURPOSE = b"cache"
#: Largest cache read (a 20-month campaign's is a few MiB).
MAX_CACHE_BYTES = 1 << 30


class _Commit(msgspec.Struct, frozen=True):
    label: str
    digest: str
    seq: int
    author: str
    kind: str = ""


class _Origin(msgspec.Struct, frozen=True):
    seq: int
    event_hash: str
    author: str
    x: str
    sides: tuple[int, ...]
    secret: tuple[str, ...] = ()


class _SecretDie(msgspec.Struct, frozen=True):
    event_hash: str
    index: int
    x: str
    sides: int


class _Source(msgspec.Struct, frozen=True, array_like=True):
    """A ``deckmod.Card`` (pos -1) or ``deckmod.Carry`` (label = its round)."""

    label: str
    pos: int = -1


class _Step(msgspec.Struct, frozen=True, array_like=True):
    """A ``deckmod.Step``, its elements as plain strings.

    The cache holds only what this player's replay already checked, and it is
    authenticated (sealed like the vault): decoding it again through the wire
    types' hex patterns cost about half of a receive on a 20-month log."""

    round: str
    step: int
    cards: list[str]
    commits: list[str]
    sources: list[_Source] = []


class _Key(msgspec.Struct, frozen=True, array_like=True):
    round: str
    step: int
    index: int
    key: str
    salt: str


class _Deck(msgspec.Struct, frozen=True):
    """The shared deck as this replay holds it (pbem.game.Replay.deck_*); a
    round's sources are those of its step 1."""

    rounds: dict[str, list[_Step]] = {}
    first: dict[str, str] = {}
    keys: list[_Key] = []
    dealt: list[tuple[str, int, str]] = []
    opened: list[tuple[str, int, str]] = []
    where: list[tuple[str, int, int, str]] = []


class Snapshot(msgspec.Struct, frozen=True):
    pbem: str
    rules: str
    rules_version: str
    data_hash: str
    game: str
    role: str
    seq: int
    head: str
    state: msgspec.Raw
    commitments: list[_Commit]
    opened: dict[str, str]
    entropy_commit: dict[str, str]
    entropy_seq: dict[str, int]
    history: list[EventInfo]
    dice_origin: _Origin | None = None
    secret_dice: dict[str, _SecretDie] = {}
    #: Opened leaves of Merkle sets: [label, key, value hex].
    leaves: list[tuple[str, str, str]] = []
    deck: _Deck = _Deck()


def _source_out(src: deckmod.Source) -> _Source:
    return _Source(src.label) if isinstance(src, deckmod.Card) else _Source(src.round, src.pos)


def _source_in(src: _Source) -> deckmod.Source:
    return deckmod.Card(label=src.label) if src.pos < 0 else deckmod.Carry(round=src.label, pos=src.pos)


def _step_out(step: deckmod.Step) -> _Step:
    return _Step(step.round, step.step, step.cards, step.commits, [_source_out(s) for s in step.sources])


def _step_in(step: _Step) -> deckmod.Step:
    return deckmod.Step(round=step.round, step=step.step, cards=step.cards, commits=step.commits,
                        sources=[_source_in(s) for s in step.sources])


def _path(gd: GameDir, role: str):
    return gd.path / "cache" / f"{role}.bin"


def save(gd: GameDir, replay: Replay, identity: Identity) -> None:
    """Write the cache for ``replay`` (a player's perspective). Never raises for
    a rules module whose state cannot be encoded: it then keeps no cache."""
    state_type = replay.rules.state_type
    if replay.role is None or replay.genesis is None:
        return
    o = replay.dice_origin
    snap = Snapshot(
        pbem=__version__, rules=replay.rules.SPEC.id, rules_version=replay.rules.SPEC.version,
        data_hash=replay.genesis.data_hash, game=replay.game_hex, role=replay.role, seq=replay.seq,
        head=replay.head.hex(), state=msgspec.Raw(msgspec.json.encode(replay.state)),
        commitments=[_Commit(k, v.digest.hex(), v.seq, v.author, v.kind) for k, v in replay.commitments.items()],
        opened={k: v.hex() for k, v in replay.opened.items()},
        entropy_commit={k: v.hex() for k, v in replay.entropy_commit.items()},
        entropy_seq=dict(replay.entropy_seq),
        history=replay.history,
        dice_origin=None if o is None else _Origin(o.seq, o.event_hash.hex(), o.author, o.x_author.hex(), o.sides,
                                                   o.secret),
        secret_dice={k: _SecretDie(d.event_hash.hex(), d.index, d.x_opponent.hex(), d.sides)
                     for k, d in replay.secret_dice.items()},
        leaves=[(label, key, value.hex()) for (label, key), value in replay.leaves.items()],
        deck=_Deck(rounds={r: [_step_out(s) for s in steps] for r, steps in replay.deck_rounds.items()},
                   first=replay.deck_first,
                   keys=[_Key(k.round, k.step, k.index, k.key, k.salt) for k in replay.deck_keys.values()],
                   dealt=[(r, p, who) for (r, p), who in replay.deck_dealt.items()],
                   opened=[(r, p, who) for (r, p), who in replay.deck_opened.items()],
                   where=[(r, s, seq, who) for (r, s), (seq, who) in replay.deck_where.items()]),
    )
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
    state_type = base.rules.state_type
    path = _path(gd, base.role or "")
    if base.role is None or not path.exists():
        return None
    try:
        plain = unseal_bytes(read_regular(path, MAX_CACHE_BYTES, "replay cache"), identity, base.game_hex, base.role, magic=_MAGIC,
                             purpose=_PURPOSE)
        snap = msgspec.json.decode(plain, type=Snapshot)
        state = msgspec.json.decode(bytes(snap.state), type=state_type)
    except (PbemError, msgspec.DecodeError, OSError):
        return None
    spec = base.rules.SPEC
    if (snap.pbem, snap.rules, snap.rules_version, snap.game, snap.role) != \
            (__version__, spec.id, spec.version, base.game_hex, base.role) or \
            snap.data_hash != base.genesis.data_hash or snap.seq < 0:
        return None
    if snap.seq >= event_count:
        raise BadFile(f"the event log in {gd.events_dir} is damaged: it holds {event_count} events but this "
                      f"copy had stored {snap.seq + 1} (its replay cache saw them); events {event_count}-"
                      f"{snap.seq} are missing. Restore the game directory from a backup, or ask your "
                      f"opponent to resend them ('pbem send --since {event_count}') and receive that file")
    held = gd.read_event(snap.seq)
    if codec.sha256(held).hex() != snap.head:
        raise BadFile(f"the event log in {gd.events_dir} is damaged: {gd.event_path(snap.seq)} is not the "
                      "event this copy stored (its hash differs from the one the replay cache recorded); "
                      "restore the game directory from a backup and run 'pbem verify'")
    r = base.clone()
    r.state = state
    r.seq = snap.seq
    r.head = bytes.fromhex(snap.head)
    r.commitments = {c.label: CommitRecord(bytes.fromhex(c.digest), c.seq, c.author, c.kind)
                     for c in snap.commitments}
    r.opened = {k: bytes.fromhex(v) for k, v in snap.opened.items()}
    r.entropy_commit = {k: bytes.fromhex(v) for k, v in snap.entropy_commit.items()}
    r.entropy_seq = dict(snap.entropy_seq)
    o = snap.dice_origin
    r.dice_origin = None if o is None else DiceOrigin(o.seq, bytes.fromhex(o.event_hash), o.author,
                                                      bytes.fromhex(o.x), tuple(o.sides), tuple(o.secret))
    r.secret_dice = {k: SecretDie(bytes.fromhex(d.event_hash), d.index, bytes.fromhex(d.x), d.sides)
                     for k, d in snap.secret_dice.items()}
    r.leaves = {(label, key): bytes.fromhex(value) for label, key, value in snap.leaves}
    r.history = list(snap.history)
    d = snap.deck
    r.deck_rounds = {k: [_step_in(s) for s in v] for k, v in d.rounds.items()}
    r.deck_first = dict(d.first)
    r.deck_sources = {k: list(v[0].sources) for k, v in r.deck_rounds.items()}
    r.deck_keys = {(k.round, k.step, k.index): deckmod.KeyOpening(round=k.round, step=k.step, index=k.index,
                                                                  key=k.key, salt=k.salt) for k in d.keys}
    r.deck_dealt = {(rnd, p): who for rnd, p, who in d.dealt}
    r.deck_opened = {(rnd, p): who for rnd, p, who in d.opened}
    r.deck_where = {(rnd, s): (seq, who) for rnd, s, seq, who in d.where}
    r._cards = {}
    return r

