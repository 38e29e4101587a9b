"""Private randomness for a player's own hidden choices (issue 27 point 3;
docs/protocol.md decision 25).

Some choices among a player's hidden items must carry no information: which
of its face-down cards a player plays, for one. Taken by position (the first
real cards of the hand), the choice tells the opponent, once the cards played
are shown, what the cards still held are. The rules therefore ask the engine
(``ComposeCtx.private_sample``) for a uniform choice, and the engine answers
from a stream only the composing player can compute:

    HMAC-SHA256(key, "pbem/v1/private-choice" | game | role | seq | index
                     | purpose | call | block)

``key`` is derived from the player's identity seed as the vault's key is
(HKDF-SHA256, its own purpose), so it never leaves the machine, is never
published (not even by ``--open-all`` or an audit, which open the vault's
secrets, not the identity) and needs no storage: a restored identity gives the
same stream. ``game`` is the game id (the genesis nonce while the genesis is
composed), ``seq`` the number of the event being composed, ``index`` the
order's place in it and ``call`` counts the samples of one order, so every
place draws independently and the same order composed again at the same place
(after an undo) chooses the same.

Only composing uses it: the choice becomes part of the signed action, and
``check`` judges it like any choice the player could have named itself.
Nobody can verify it was drawn, and nobody needs to: a player who picks by
hand (or names the items, as ``basic cards s1:3``) only risks telling its own
secrets. Without a key (a draft composed outside a seat) the stream is keyed
by 32 fresh random bytes: still private and uniform, not repeatable.
"""

from __future__ import annotations

import hashlib
import hmac
import os

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from pbem.identity import Identity

_DOMAIN = b"pbem/v1/private-choice"


def key_of(identity: Identity) -> bytes:
    """The player's private-choice key: HKDF-SHA256 of the identity seed (as
    the vault key, with its own purpose); 32 bytes, never published."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_DOMAIN).derive(identity.seed())


def _field(value: str | int) -> bytes:
    data = str(value).encode()
    return len(data).to_bytes(4, "big") + data


class _Stream:
    """Uniform integers from HMAC-SHA256 blocks (8 bytes each, rejection sampled)."""

    def __init__(self, key: bytes, message: bytes) -> None:
        self._key, self._message, self._block, self._buffer = key, message, 0, b""

    def _word(self) -> int:
        if len(self._buffer) < 8:
            self._buffer += hmac.new(self._key, self._message + self._block.to_bytes(8, "big"),
                                     hashlib.sha256).digest()
            self._block += 1
        word, self._buffer = self._buffer[:8], self._buffer[8:]
        return int.from_bytes(word, "big")

    def below(self, n: int) -> int:
        """A uniform integer in range(n) (n >= 1): no modulo bias."""
        limit = (1 << 64) - (1 << 64) % n
        while True:
            word = self._word()
            if word < limit:
                return word % n


class PrivateChoices:
    """The private stream of one order being composed: ``role``'s order number
    ``index`` of event ``seq`` of ``game``, keyed by ``key`` (``key_of``; None:
    fresh random bytes)."""

    def __init__(self, key: bytes | None, game: str, role: str, seq: int, index: int) -> None:
        self._key = key if key is not None else os.urandom(32)
        self._where = _DOMAIN + _field(game) + _field(role) + _field(seq) + _field(index)
        self._calls = 0

    def sample(self, purpose: str, n: int, k: int) -> tuple[int, ...]:
        """``k`` distinct indices of ``range(n)``, increasing; each of the
        C(n, k) subsets equally likely (a partial Fisher-Yates shuffle).
        ValueError unless 0 <= k <= n."""
        if not 0 <= k <= n:
            raise ValueError(f"cannot choose {k} of {n}")
        self._calls += 1
        stream = _Stream(self._key, self._where + _field(purpose) + _field(self._calls))
        pool = list(range(n))
        for i in range(k):
            j = i + stream.below(n - i)
            pool[i], pool[j] = pool[j], pool[i]
        return tuple(sorted(pool[:k]))
