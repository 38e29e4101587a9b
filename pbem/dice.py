"""Entropy ratchet and dice neither player can bias (DESIGN 5).

Each event carries ``entropy = {reveal: x_prev, commit: H(x_next)}``. Rolls
asked for in an event by player P are

    SHA-256(domain ‖ game id ‖ event hash ‖ roll index ‖ attempt ‖ x_P ‖ x_Q)

where ``x_P`` is what P reveals in that event and ``x_Q`` is what the
opponent Q committed most recently before it (opened in Q's next event).
Each 8-byte draw is mapped to 1..sides by rejection sampling: a draw in the
top partial block of 2^64 is thrown away and the attempt counter advanced,
so every face has exactly equal probability (no modulo bias).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from pbem.commit import hash_parts

_ENTROPY = b"pbem/v1/entropy"
_DICE = b"pbem/v1/dice"
ENTROPY_BYTES = 32
MAX_SIDES = 1 << 16
MAX_ROLLS = 4096


def new_secret() -> bytes:
    return os.urandom(ENTROPY_BYTES)


def entropy_commitment(role: str, x: bytes) -> bytes:
    """H(x_next) as published in ``entropy.commit``."""
    return hash_parts(_ENTROPY, role.encode("utf-8"), x)


def roll(game: bytes, event_hash: bytes, x_p: bytes, x_q: bytes, sides: Sequence[int]) -> tuple[int, ...]:
    """Roll one die per entry of ``sides`` (e.g. (6, 6, 6) for 3d6).

    Deterministic in its inputs: anyone holding the log reproduces the roll.
    """
    if len(sides) > MAX_ROLLS:
        raise ValueError(f"at most {MAX_ROLLS} dice per request")
    return tuple(roll_one(game, event_hash, index, x_p, x_q, n) for index, n in enumerate(sides))


def roll_one(game: bytes, event_hash: bytes, index: int, x_p: bytes, x_q: bytes, sides: int) -> int:
    """Die ``index`` of a request: 1..sides by rejection sampling.

    A secret die uses the asker's committed seed in place of ``x_p``: the
    asker knows it at once, the opponent when the seed is opened, and
    neither could choose it (the seed was fixed before ``x_q`` was known).
    """
    if not 2 <= sides <= MAX_SIDES:
        raise ValueError(f"a die needs 2..{MAX_SIDES} sides, not {sides}")
    limit = (1 << 64) - ((1 << 64) % sides)
    attempt = 0
    while True:
        digest = hash_parts(_DICE, game, event_hash, index.to_bytes(4, "big"),
                            attempt.to_bytes(4, "big"), x_p, x_q)
        draw = int.from_bytes(digest[:8], "big")
        if draw < limit:
            return draw % sides + 1
        attempt += 1
