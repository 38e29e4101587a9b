"""What ``check`` established, for ``apply`` of the same action (issue 19).

The engine always checks an action and then applies it, on the same State and
action objects, so the costliest findings of a check (a Move's path and speed
obligations, a Supply Check's result) are kept here, keyed by the identity of
the immutable objects they were computed from, and ``apply`` reuses them
instead of computing them again. Not working state: an empty memo changes no
result (every value is recomputed from the same arguments on a miss); the
entries hold their keys, so an identity is never reused while it is kept.
Other findings asked several times of the same frozen objects use it too
(``steps.pending``, ``view.glances``, a round's input deck in ``supplycards``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: Per kind of finding, the latest (key objects, value) pairs.
_SLOTS: dict[str, list[tuple[tuple[object, ...], object]]] = {}
_same = operator.is_
#: A check and its apply need one entry; a few more cover legal-order
#: listings and simulations interleaved with them.
_SIZE = 4


def once(what: str, key: tuple[object, ...], compute: Callable[[], T]) -> T:
    """``compute()``, or the value computed lately for ``what`` from the very
    same objects ``key`` (one object or more, compared by identity: all are frozen)."""
    slots = _SLOTS.get(what)
    if slots is None:
        slots = _SLOTS[what] = []
    first, n = key[0], len(key)
    for k, value in reversed(slots):
        # The first object (a State, a Position) tells most slots apart at once.
        if k[0] is first and len(k) == n and all(map(_same, k, key)):
            return value  # type: ignore[return-value]
    value = compute()
    slots.append((key, value))
    del slots[:-_SIZE]
    return value


def forget() -> None:
    """Empty the memo (tests, benchmarks: a cold start)."""
    _SLOTS.clear()
