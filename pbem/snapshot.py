"""A player's replay cache, so that commands do not replay the whole log.

After a command has replayed the log from a player's perspective, the
Replay's fold (rules state, commitments, openings, entropy, pending dice,
history) is saved to ``cache/<role>.bin``, encrypted like the vault (it
holds what that player knows). The next command restores it only if it is
checked against the log: same format, rules id, version and data, and the
hash of the stored event at its sequence number equals its recorded head;
then it applies just the newer events, each fully verified. Anything else
(no cache, another version, a mismatch, damage) falls back to a full
replay. ``pbem verify`` and ``pbem audit`` never use the cache.
"""

from __future__ import annotations

import msgspec

from pbem import __version__, codec
from pbem import deck as deckmod
from pbem.errors import PbemError
from pbem.fileio import write_atomic
from pbem.game import CommitRecord, DiceOrigin, EventInfo, Replay, SecretDie
from pbem.identity import Identity
from pbem.store import GameDir
from pbem.vault import seal_bytes, unseal_bytes

_MAGIC = b"PBEMCCH1"
_PURPOSE = b"cache"


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


class _Deck(msgspec.Struct, frozen=True):
    """The shared deck as this replay holds it (pbem.game.Replay.deck_*)."""

    rounds: dict[str, list[deckmod.Step]] = {}
    first: dict[str, str] = {}
    sources: dict[str, list[deckmod.Source]] = {}
    keys: list[deckmod.KeyOpening] = []
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


def _path(gd: GameDir, role: str):
    return gd.path / "cache" / f"{role}.bin"


def save(gd: GameDir, replay: Replay, identity: Identity) -> None:
    """Write the cache for ``replay`` (a player's perspective). Never raises for
    a rules module whose state cannot be encoded: it then keeps no cache."""
    state_type = getattr(replay.rules, "State", None)
    if state_type is None or replay.role is None or replay.genesis is None:
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
        deck=_Deck(rounds=replay.deck_rounds, first=replay.deck_first, sources=replay.deck_sources,
                   keys=list(replay.deck_keys.values()),
                   dealt=[(r, p, who) for (r, p), who in replay.deck_dealt.items()],
                   opened=[(r, p, who) for (r, p), who in replay.deck_opened.items()],
                   where=[(r, s, seq, who) for (r, s), (seq, who) in replay.deck_where.items()]),
    )
    path = _path(gd, replay.role)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, seal_bytes(msgspec.json.encode(snap), identity, replay.game_hex, replay.role,
                                  magic=_MAGIC, purpose=_PURPOSE), mode=0o600)


def restore(gd: GameDir, base: Replay, identity: Identity, event_count: int) -> Replay | None:
    """``base`` (genesis applied, perspective set) advanced to the cached point,
    or None when there is no cache that matches the log."""
    state_type = getattr(base.rules, "State", None)
    path = _path(gd, base.role or "")
    if state_type is None or base.role is None or not path.exists():
        return None
    try:
        plain = unseal_bytes(path.read_bytes(), identity, base.game_hex, base.role, magic=_MAGIC,
                             purpose=_PURPOSE)
        snap = msgspec.json.decode(plain, type=Snapshot)
        state = msgspec.json.decode(bytes(snap.state), type=state_type)
    except (PbemError, msgspec.DecodeError, OSError):
        return None
    spec = base.rules.SPEC
    if (snap.pbem, snap.rules, snap.rules_version, snap.game, snap.role) != \
            (__version__, spec.id, spec.version, base.game_hex, base.role) or \
            snap.data_hash != base.genesis.data_hash or not 0 <= snap.seq < event_count:
        return None
    try:
        held = gd.event_path(snap.seq).read_bytes()
    except OSError:
        return None
    if codec.sha256(held).hex() != snap.head:
        return None
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
    r.deck_rounds = {k: list(v) for k, v in d.rounds.items()}
    r.deck_first = dict(d.first)
    r.deck_sources = {k: list(v) for k, v in d.sources.items()}
    r.deck_keys = {(k.round, k.step, k.index): k for k in d.keys}
    r.deck_dealt = {(rnd, p): who for rnd, p, who in d.dealt}
    r.deck_opened = {(rnd, p): who for rnd, p, who in d.opened}
    r.deck_where = {(rnd, s): (seq, who) for rnd, s, seq, who in d.where}
    r._cards = {}
    return r

