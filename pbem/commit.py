"""Salted, domain-separated commitments and Merkle set commitments (DESIGN 4).

Every hash input is a sequence of length-prefixed parts, so no two different
part lists hash alike (no ambiguity between "ab"+"c" and "a"+"bc").

- ``commit(game, label, value)`` -> (digest, salt):
  ``H(len-prefixed: "pbem/v1/commit", game id, label, salt, value)``.
- ``MerkleSet``: a commitment to a keyed set of leaves (e.g. every hex of a
  map with its hidden fact). Each leaf is ``H("pbem/v1/leaf", salt_k, key,
  value)`` with its own salt, so opening one leaf reveals nothing about any
  other; the tree over the leaves sorted by key gives one root. An opening of
  a leaf proves the committed value for that key: presence ("a minefield is
  here": value b"1") or absence (value b"0"). Keys not in the set cannot be
  opened, so the committer must include every key of the domain.

In a game a Merkle set is committed from one 32-byte seed (``from_seed``):
each leaf's salt is derived from it, so opening one leaf shows that leaf's
salt only (the seed stays secret behind a hash), while opening the whole set
at the audit is just the seed and the mapping (``encode_leaves``).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
from collections.abc import Mapping

import msgspec

_COMMIT = b"pbem/v1/commit"
_LEAF = b"pbem/v1/leaf"
_NODE = b"pbem/v1/node"
_EMPTY = b"pbem/v1/empty"
_LEAF_SALT = b"pbem/v1/leafsalt"


def hash_parts(*parts: bytes) -> bytes:
    """SHA-256 over length-prefixed parts (8-byte big-endian length each)."""
    return hashlib.sha256(b"".join([len(part).to_bytes(8, "big") + part for part in parts])).digest()


def _prefixed(tag: bytes) -> bytes:
    return len(tag).to_bytes(8, "big") + tag


# The hashes a whole-set opening computes by the thousand (a map's every hex),
# written out: the same bytes as ``hash_parts`` (tests/test_vectors.py pins
# both), without its per-part loop (issue 20).
_LEN32 = (32).to_bytes(8, "big")
_LEAF_PREFIX = _prefixed(_LEAF)
_NODE_PREFIX = _prefixed(_NODE) + _LEN32
_LEAF_SALT_PREFIX = _prefixed(_LEAF_SALT)
_sha256 = hashlib.sha256


def commitment_digest(game: bytes, label: str, salt: bytes, value: bytes) -> bytes:
    return hash_parts(_COMMIT, game, label.encode("utf-8"), salt, value)


def commit(game: bytes, label: str, value: bytes, salt: bytes | None = None) -> tuple[bytes, bytes]:
    """Commit to ``value`` under ``label``; returns (digest, salt). Salt: 32 random bytes."""
    salt = os.urandom(32) if salt is None else salt
    if len(salt) != 32:
        raise ValueError("salt must be 32 bytes")
    return commitment_digest(game, label, salt, value), salt


def opens(digest: bytes, game: bytes, label: str, salt: bytes, value: bytes) -> bool:
    """True when (value, salt) opens the commitment ``digest`` for ``label`` in ``game``."""
    return hmac.compare_digest(digest, commitment_digest(game, label, salt, value))


def _leaf(salt: bytes, key: str, value: bytes) -> bytes:
    k = key.encode("utf-8")
    return _sha256(b"".join((_LEAF_PREFIX, len(salt).to_bytes(8, "big"), salt, len(k).to_bytes(8, "big"), k,
                             len(value).to_bytes(8, "big"), value))).digest()


def _node(left: bytes, right: bytes) -> bytes:
    if len(left) == 32 and len(right) == 32:
        return _sha256(_NODE_PREFIX + left + _LEN32 + right).digest()
    return hash_parts(_NODE, left, right)


class LeafOpening(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Proof of one leaf: its key, value and salt, and the sibling path to the root.

    ``path`` lists (sibling hash hex, sibling is on the right) from the leaf up;
    ``index`` and ``size`` pin the leaf's position so a proof cannot be
    replayed for another key.
    """

    key: str
    value: str  # hex
    salt: str  # hex
    index: int
    size: int
    path: list[tuple[str, bool]]


class MerkleSet:
    """Commitment to a mapping key -> value bytes over a fixed key domain."""

    def __init__(self, leaves: Mapping[str, bytes], salts: Mapping[str, bytes] | None = None) -> None:
        if not leaves:
            raise ValueError("a Merkle set needs at least one leaf")
        self.keys = sorted(leaves)
        self.values = dict(leaves)
        self.salts = dict(salts) if salts is not None else {k: os.urandom(32) for k in self.keys}
        missing = [k for k in self.keys if k not in self.salts]
        if missing:
            raise ValueError(f"no salt for keys {missing[:5]}")
        self._levels = [[_leaf(self.salts[k], k, self.values[k]) for k in self.keys]]
        while len(self._levels[-1]) > 1:
            level = self._levels[-1]
            nxt = [_node(level[i], level[i + 1] if i + 1 < len(level) else level[i])
                   for i in range(0, len(level), 2)]
            self._levels.append(nxt)

    @property
    def root(self) -> bytes:
        return hash_parts(_EMPTY, len(self.keys).to_bytes(8, "big"), self._levels[-1][0])

    def open(self, key: str) -> LeafOpening:
        """Proof for ``key``; KeyError if the key is not in the set."""
        index = self.keys.index(key) if key in self.values else None
        if index is None:
            raise KeyError(key)
        path: list[tuple[str, bool]] = []
        i = index
        for level in self._levels[:-1]:
            sibling = i ^ 1
            if sibling >= len(level):
                sibling = i
            path.append((level[sibling].hex(), sibling > i or sibling == i))
            i //= 2
        return LeafOpening(key=key, value=self.values[key].hex(), salt=self.salts[key].hex(),
                           index=index, size=len(self.keys), path=path)


def leaf_salt(seed: bytes, key: str) -> bytes:
    """The salt of leaf ``key`` in a set committed from ``seed``."""
    k = key.encode("utf-8")
    return _sha256(b"".join((_LEAF_SALT_PREFIX, len(seed).to_bytes(8, "big"), seed, len(k).to_bytes(8, "big"),
                             k))).digest()


def set_from_seed(leaves: Mapping[str, bytes], seed: bytes) -> MerkleSet:
    """The Merkle set of ``leaves`` with every salt derived from ``seed`` (32 bytes)."""
    if len(seed) != 32:
        raise ValueError("a set seed must be 32 bytes")
    return MerkleSet(leaves, {k: leaf_salt(seed, k) for k in leaves})


def encode_leaves(leaves: Mapping[str, bytes]) -> bytes:
    """Canonical bytes of a whole set (key -> value hex, keys sorted): what
    opening the set at the audit publishes, and what a vault keeps."""
    return msgspec.json.encode({k: leaves[k].hex() for k in sorted(leaves)})


_LEAVES = msgspec.json.Decoder(dict[str, str])


def decode_leaves(data: bytes) -> dict[str, bytes]:
    """Inverse of encode_leaves; ValueError unless ``data`` is exactly its canonical form."""
    try:
        raw = _LEAVES.decode(data)
        leaves = {k: bytes.fromhex(v) for k, v in raw.items()}
    except (msgspec.DecodeError, ValueError):
        raise ValueError("not an encoded set of leaves") from None
    if not leaves or encode_leaves(leaves) != data:
        raise ValueError("not an encoded set of leaves (empty or not canonical)")
    return leaves


@functools.lru_cache(maxsize=32)
def set_opens(root: bytes, seed: bytes, data: bytes) -> bool:
    """True when seed + encoded leaves ``data`` rebuild the set committed by ``root``.

    Memoised (a pure function of its bytes, bounded): an audit checks each
    whole-set opening twice, in ``audit_openings`` and again in the replay."""
    try:
        built = set_from_seed(decode_leaves(data), seed)
    except ValueError:
        return False
    return hmac.compare_digest(built.root, root)


def verify_leaf(root: bytes, proof: LeafOpening) -> bool:
    """True when ``proof`` shows that the set committed by ``root`` maps key -> value."""
    try:
        node = _leaf(bytes.fromhex(proof.salt), proof.key, bytes.fromhex(proof.value))
        siblings = [(bytes.fromhex(h), right) for h, right in proof.path]
    except ValueError:
        return False
    if not 0 <= proof.index < proof.size:
        return False
    i, width = proof.index, proof.size
    expected_depth = 0
    w = width
    while w > 1:
        w = (w + 1) // 2
        expected_depth += 1
    if len(siblings) != expected_depth:
        return False
    for sibling, right in siblings:
        sib_index = i ^ 1 if (i ^ 1) < width else i
        if right != (sib_index >= i):
            return False
        node = _node(node, sibling) if sib_index >= i else _node(sibling, node)
        i //= 2
        width = (width + 1) // 2
    final = hash_parts(_EMPTY, proof.size.to_bytes(8, "big"), node)
    return hmac.compare_digest(final, root)
