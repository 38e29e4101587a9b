"""Location names of Rommel in the Desert: hex ids, "Name", "Name DIRn".

RB 1.1: a hex is named by the town or fortress it contains, or by a
direction and distance from one ("Msus E1" is one hex east of Msus). The map
has east-west rows of pointy-top hexes, so the six directions are E, W, NE,
NW, SE and SW. Offsets may be chained ("Tobruk E1 SE2"), and every hex also
has a fixed id ``CCRR`` (column, row; both from 1, column 01 at the west
edge, row 01 at the north edge; even-numbered rows are shifted half a hex
east).

This module knows coordinates and names only; the map data comes from
``hexmap``. It is pure: no files, no global state.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TypeVar

import msgspec

T = TypeVar("T")

HexId = str

#: The six hex directions (RB 1.1 compass rose), counter-clockwise from east.
DIRECTIONS: tuple[str, ...] = ("E", "NE", "NW", "W", "SW", "SE")

#: Axial (q, r) step of each direction; r grows southwards.
AXIAL_STEP: dict[str, tuple[int, int]] = {
    "E": (1, 0),
    "NE": (1, -1),
    "NW": (0, -1),
    "W": (-1, 0),
    "SW": (-1, 1),
    "SE": (0, 1),
}

OPPOSITE: dict[str, str] = {"E": "W", "W": "E", "NE": "SW", "SW": "NE", "NW": "SE", "SE": "NW"}

_HEX_ID = re.compile(r"^(\d{2})(\d{2})$")
_OFFSET = re.compile(r"^(NE|NW|SE|SW|E|W)(\d+)$", re.IGNORECASE)


class UnknownLocation(ValueError):
    """A location text names no hex on the map (message may suggest a name)."""

    def __init__(self, text: str, problem: str, suggestions: tuple[str, ...] = ()) -> None:
        self.text = text
        self.problem = problem
        self.suggestions = suggestions
        message = f"unknown location {text!r}: {problem}"
        if suggestions:
            message += "; did you mean " + " or ".join(repr(s) for s in suggestions) + "?"
        super().__init__(message)


def hex_id(col: int, row: int) -> HexId:
    """The id ``CCRR`` of the hex in column ``col`` and row ``row`` (from 1)."""
    return f"{col:02d}{row:02d}"


def col_row(hex_: HexId) -> tuple[int, int]:
    """(column, row) of a hex id; raises ValueError if it is not ``CCRR``."""
    m = _HEX_ID.match(hex_)
    if m is None:
        raise ValueError(f"not a hex id: {hex_!r}")
    return int(m.group(1)), int(m.group(2))


def is_hex_id(text: str) -> bool:
    return _HEX_ID.match(text) is not None


def to_axial(col: int, row: int) -> tuple[int, int]:
    """Axial (q, r) of an offset (col, row). Even rows are shifted east."""
    r = row - 1
    doubled_x = 2 * (col - 1) + (r & 1)
    return (doubled_x - r) // 2, r


def from_axial(q: int, r: int) -> tuple[int, int]:
    """Offset (col, row) of axial (q, r); the inverse of ``to_axial``."""
    doubled_x = 2 * q + r
    return (doubled_x - (r & 1)) // 2 + 1, r + 1


def axial_distance(a: tuple[int, int], b: tuple[int, int]) -> int:
    dq, dr = b[0] - a[0], b[1] - a[1]
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def decompose(dq: int, dr: int) -> tuple[tuple[str, int], ...]:
    """Shortest description of the axial vector (dq, dr) as direction runs.

    At most two runs along adjacent directions, the longer run first (on a
    tie, the direction first in ``DIRECTIONS`` order); () for the zero vector.
    """
    if dq == 0 and dr == 0:
        return ()
    for k, d1 in enumerate(DIRECTIONS):
        d2 = DIRECTIONS[(k + 1) % 6]
        (a1, b1), (a2, b2) = AXIAL_STEP[d1], AXIAL_STEP[d2]
        det = a1 * b2 - a2 * b1
        x = (dq * b2 - a2 * dr) // det
        y = (a1 * dr - dq * b1) // det
        if x >= 0 and y >= 0 and x * a1 + y * a2 == dq and x * b1 + y * b2 == dr:
            if x > 0 and (y == 0 or x >= y):
                return ((d1, x),) + (((d2, y),) if y else ())
            return ((d2, y),) + (((d1, x),) if x else ())
    raise AssertionError("unreachable: the six sectors cover the plane")


def normalize(name: str) -> str:
    """Canonical spelling for matching: case, dots and spacing do not count."""
    return " ".join(name.replace(".", " ").replace("-", " ").lower().split())


def close_matches(key: str, index: Mapping[str, T], n: int) -> list[T]:
    """What ``index`` holds for its (at most ``n``) keys spelt most like ``key``
    (difflib, cutoff 0.6), best first: the suggestions of a name not found."""
    import difflib  # only for a name not found: not loaded at every start

    return [index[k] for k in difflib.get_close_matches(key, list(index), n=n, cutoff=0.6)]


class Gazetteer(msgspec.Struct, frozen=True):
    """Place names of one map and the hexes that exist on it.

    ``places`` maps each printable place name to its hex; ``aliases`` maps
    other spellings (e.g. "Alamein", "Ft. Capuzzo") to a printable name.
    """

    places: Mapping[str, HexId]
    aliases: Mapping[str, str]
    hexes: frozenset[HexId]
    #: Made from the fields by ``__post_init__`` (never given).
    _index: dict[str, str] = {}
    _by_hex: dict[HexId, str] = {}

    def __post_init__(self) -> None:
        index, by_hex = self._index, self._by_hex  # each instance's own (fresh) dicts
        index.clear()
        by_hex.clear()
        for name in self.places:
            index[normalize(name)] = name
        for alias, name in self.aliases.items():
            index[normalize(alias)] = name
        by_hex.update({h: n for n, h in self.places.items()})

    def spellings(self) -> Iterable[str]:
        """Every normalized spelling that names a place."""
        return self._index.keys()

    def parse(self, text: str) -> HexId:
        """The hex named by ``text``: a hex id or place name, then offsets.

        Raises UnknownLocation (with "did you mean" suggestions when a place
        name is misspelt) if no such hex exists on the map.
        """
        tokens = text.replace(".", " ").split()
        if not tokens:
            raise UnknownLocation(text, "empty location")
        offsets: list[tuple[str, int]] = []
        while len(tokens) > 1 and _OFFSET.match(tokens[-1]):
            m = _OFFSET.match(tokens.pop())
            assert m is not None
            offsets.append((m.group(1).upper(), int(m.group(2))))
        offsets.reverse()
        base_text = " ".join(tokens)
        if is_hex_id(base_text):
            if base_text not in self.hexes:
                raise UnknownLocation(text, f"hex {base_text} is not on the map")
            hex_ = base_text
        else:
            key = normalize(base_text)
            name = self._index.get(key)
            if name is None:
                raise UnknownLocation(text, f"no place called {base_text!r}", self.suggest(base_text))
            hex_ = self.places[name]
        q, r = to_axial(*col_row(hex_))
        for direction, count in offsets:
            dq, dr = AXIAL_STEP[direction]
            q, r = q + dq * count, r + dr * count
        target = hex_id(*from_axial(q, r)) if r >= 0 and from_axial(q, r)[0] >= 1 else None
        if target is None or target not in self.hexes:
            raise UnknownLocation(text, "that hex is off the map")
        return target

    def suggest(self, text: str) -> tuple[str, ...]:
        """Up to three place names spelt like ``text`` (difflib)."""
        return tuple(dict.fromkeys(close_matches(normalize(text), self._index, 3)))

    def format(self, hex_: HexId) -> str:
        """The canonical printable name of a hex.

        A place's own name; otherwise the nearest place (fewest hexes; then
        fewest direction runs; then first by name) with at most two runs,
        e.g. "Msus E1" or "Tobruk SE2 E1". ``parse(format(h)) == h``.
        """
        own = self._by_hex.get(hex_)
        if own is not None:
            return own
        q, r = to_axial(*col_row(hex_))
        best: tuple[int, int, str] | None = None
        best_runs: tuple[tuple[str, int], ...] = ()
        for name, place_hex in self.places.items():
            pq, pr = to_axial(*col_row(place_hex))
            runs = decompose(q - pq, r - pr)
            key = (axial_distance((pq, pr), (q, r)), len(runs), name)
            if best is None or key < best:
                best, best_runs = key, runs
        if best is None:
            return hex_
        return " ".join([best[2]] + [f"{d}{n}" for d, n in best_runs])
