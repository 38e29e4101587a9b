"""Hex grid geometry, pure and typed: the one place pbem knows how hexes fit.

Three coordinate systems, after the usual treatment of hex grids:

- ``Axial(q, r)``: the lattice itself. Neighbours, distance, hexsides and
  paths are computed here; the third cube coordinate is ``s = -q - r``.
- ``Offset(col, row)``: the column and row numbers a map prints. Which rows
  (pointy-top hexes, in horizontal rows) or columns (flat-top hexes, in
  vertical columns) stand half a hex further along is the grid's *parity*.
- hex ids: the text players write ("0712", "A3012", "Sidi Barrani"), read
  and written by an ``IdScheme`` (digit pairs in column-row or row-column
  order, names, or sheet-prefixed ids with aliases where map sheets overlap).

A ``Grid`` ties orientation, parity and the direction row numbers grow on
the printed page together, converts between the systems and places hexes on
a page. The path functions are generic over any hashable hex type, so a
game may use them with its own ids.

Everything here is integer arithmetic except the page geometry (``centre``,
``corners``), which only pictures use: pictures are never signed.
"""

from __future__ import annotations

import heapq
import itertools
import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, NamedTuple, Protocol, TypeVar

Orientation = Literal["pointy", "flat"]
Parity = Literal["odd", "even"]
RowsGrow = Literal["down", "up"]


class HexIdError(ValueError):
    """A hex id that the scheme cannot read, or a hex the scheme cannot name."""


class NotAdjacent(ValueError):
    """Two hexes that share no hexside."""


class Axial(NamedTuple):
    """Lattice coordinates: ``q`` along a row (pointy) or a column (flat), ``r`` across."""

    q: int
    r: int

    @property
    def s(self) -> int:
        return -self.q - self.r

    def __add__(self, other: object) -> Axial:
        if not isinstance(other, Axial):
            return NotImplemented
        return Axial(self.q + other.q, self.r + other.r)

    def __sub__(self, other: Axial) -> Axial:
        return Axial(self.q - other.q, self.r - other.r)


class Offset(NamedTuple):
    """A printed column and row number."""

    col: int
    row: int


#: The six unit steps of the lattice, counter-clockwise from "+q". Every
#: listing of neighbours uses this order, so paths and listings are
#: deterministic.
DIRECTIONS: tuple[Axial, ...] = (
    Axial(1, 0), Axial(1, -1), Axial(0, -1), Axial(-1, 0), Axial(-1, 1), Axial(0, 1),
)


def neighbours(h: Axial) -> tuple[Axial, ...]:
    """The six hexes that share a hexside with ``h``, in ``DIRECTIONS`` order."""
    return tuple(Axial(h.q + d.q, h.r + d.r) for d in DIRECTIONS)


def distance(a: Axial, b: Axial) -> int:
    """The number of hexsides crossed on the shortest way from ``a`` to ``b``."""
    dq, dr = a.q - b.q, a.r - b.r
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def is_adjacent(a: Axial, b: Axial) -> bool:
    return distance(a, b) == 1


Hexside = tuple[Axial, Axial]


def hexside(a: Axial, b: Axial) -> Hexside:
    """The canonical key of the hexside between adjacent ``a`` and ``b``: the
    same key whichever hex is named first. Raises NotAdjacent otherwise."""
    if not is_adjacent(a, b):
        raise NotAdjacent(f"{tuple(a)} and {tuple(b)} share no hexside")
    return (a, b) if a < b else (b, a)


def ring(centre: Axial, radius: int) -> tuple[Axial, ...]:
    """The hexes at exactly ``radius`` from ``centre`` (just ``centre`` at 0)."""
    if radius < 0:
        raise ValueError("a ring's radius is not negative")
    if radius == 0:
        return (centre,)
    out = []
    h = Axial(centre.q + DIRECTIONS[4].q * radius, centre.r + DIRECTIONS[4].r * radius)
    for d in DIRECTIONS:
        for _ in range(radius):
            out.append(h)
            h = Axial(h.q + d.q, h.r + d.r)
    return tuple(out)


_SQRT3 = math.sqrt(3.0)


@dataclass(frozen=True, slots=True)
class Grid:
    """How a printed map lays its hexes out.

    ``orientation``: "pointy" hexes stand in horizontal rows (a vertex at
    the top), "flat" hexes in vertical columns (an edge at the top).
    ``parity``: which rows (pointy) or columns (flat), by their printed
    number, stand half a hex toward higher numbers of the other coordinate.
    ``rows_grow``: whether printed row numbers grow down the page or up it
    (north up either way); it changes only the picture, never adjacency.
    """

    orientation: Orientation = "pointy"
    parity: Parity = "odd"
    rows_grow: RowsGrow = "down"

    def to_axial(self, o: Offset) -> Axial:
        col, row = o
        # The shoved rows (columns) are those whose number has this parity;
        # x & 1 is 0 or 1 for negative numbers too.
        sign = 1 if self.parity == "even" else -1
        if self.orientation == "pointy":
            return Axial(col - (row + sign * (row & 1)) // 2, row)
        return Axial(col, row - (col + sign * (col & 1)) // 2)

    def to_offset(self, h: Axial) -> Offset:
        q, r = h
        sign = 1 if self.parity == "even" else -1
        if self.orientation == "pointy":
            return Offset(q + (r + sign * (r & 1)) // 2, r)
        return Offset(q, r + (q + sign * (q & 1)) // 2)

    def offset_neighbours(self, o: Offset) -> tuple[Offset, ...]:
        """The printed positions of the six neighbours of ``o``."""
        return tuple(self.to_offset(n) for n in neighbours(self.to_axial(o)))

    # --- the page (pictures only) -------------------------------------------------

    def centre(self, h: Axial, size: float) -> tuple[float, float]:
        """The centre of ``h`` on the page, y growing down; ``size`` is the
        distance from a hex's centre to its corners."""
        q, r = h
        if self.orientation == "pointy":
            x, y = _SQRT3 * size * (q + r / 2), 1.5 * size * r
        else:
            x, y = 1.5 * size * q, _SQRT3 * size * (r + q / 2)
        return (x, -y) if self.rows_grow == "up" else (x, y)

    def corners(self, cx: float, cy: float, size: float) -> list[tuple[float, float]]:
        """The six corners of the hex centred at (cx, cy)."""
        start = -30 if self.orientation == "pointy" else 0
        return [
            (cx + size * math.cos(math.radians(60 * i + start)), cy + size * math.sin(math.radians(60 * i + start)))
            for i in range(6)
        ]

    def extent(self, size: float) -> tuple[float, float]:
        """Width and height of one hex on the page."""
        if self.orientation == "pointy":
            return _SQRT3 * size, 2.0 * size
        return 2.0 * size, _SQRT3 * size

    def across_flats(self, size: float) -> float:
        """The distance between opposite hexsides: what a printed map calls
        the hex's size (RitD's and PAA's hexes are measured this way)."""
        return _SQRT3 * size


# --- hex ids -----------------------------------------------------------------------


class IdScheme(Protocol):
    """Reads and writes the hex ids players write. ``parse`` raises
    HexIdError naming the text; ``aliases`` lists every id of a hex, the
    canonical one (``format``) first."""

    def parse(self, text: str) -> Axial: ...

    def format(self, h: Axial) -> str: ...

    def aliases(self, h: Axial) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class DigitIds:
    """Printed numbers as fixed-width digit groups: "CCRR" (column then row,
    as most hex maps print) or "RRCC" (row then column, as Panzerarmee
    Afrika's §2.1 says: "The first two digits index the row, while the third
    and fourth index the column"). ``width`` digits each; no sign."""

    grid: Grid
    order: Literal["CCRR", "RRCC"] = "CCRR"
    width: int = 2

    def parse(self, text: str) -> Axial:
        t = text.strip()
        if len(t) != 2 * self.width or not t.isascii() or not t.isdigit():
            raise HexIdError(f"hex id {t[:40]!r}: expected {2 * self.width} digits ({self.order})")
        a, b = int(t[: self.width]), int(t[self.width:])
        o = Offset(a, b) if self.order == "CCRR" else Offset(b, a)
        return self.grid.to_axial(o)

    def format(self, h: Axial) -> str:
        col, row = self.grid.to_offset(h)
        limit = 10 ** self.width
        if not (0 <= col < limit and 0 <= row < limit):
            raise HexIdError(f"hex at column {col}, row {row} has no {self.order} id of width {self.width}")
        a, b = (col, row) if self.order == "CCRR" else (row, col)
        return f"{a:0{self.width}d}{b:0{self.width}d}"

    def aliases(self, h: Axial) -> tuple[str, ...]:
        return (self.format(h),)


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


@dataclass(frozen=True)
class NamedIds:
    """Ids that are names (a game's own naming of its hexes). Matching
    ignores case and runs of spaces; ``format`` gives the name as written."""

    names: Mapping[str, Axial]
    _by_key: dict[str, Axial] = field(init=False, repr=False, compare=False)
    _by_hex: dict[Axial, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_key: dict[str, Axial] = {}
        by_hex: dict[Axial, str] = {}
        for name, h in self.names.items():
            key = _fold(name)
            if key in by_key:
                raise HexIdError(f"hex name {name!r} is given twice")
            by_key[key] = h
            by_hex.setdefault(h, name)
        object.__setattr__(self, "_by_key", by_key)
        object.__setattr__(self, "_by_hex", by_hex)

    def parse(self, text: str) -> Axial:
        try:
            return self._by_key[_fold(text)]
        except KeyError:
            raise HexIdError(f"no hex is named {text.strip()[:40]!r}") from None

    def format(self, h: Axial) -> str:
        try:
            return self._by_hex[h]
        except KeyError:
            raise HexIdError(f"hex {tuple(h)} has no name") from None

    def aliases(self, h: Axial) -> tuple[str, ...]:
        first = self.format(h)
        return (first, *sorted(n for n, x in self.names.items() if x == h and n != first))


@dataclass(frozen=True, slots=True)
class Sheet:
    """One map sheet: its id prefix, how its own numbers read (its own grid
    parity included), where its origin (local axial (0, 0)) lies on the
    whole map, and which local hexes it prints (``cols`` x ``rows``
    inclusive ranges of its printed numbers)."""

    prefix: str
    ids: DigitIds
    origin: Axial
    cols: tuple[int, int]
    rows: tuple[int, int]

    def holds(self, local: Offset) -> bool:
        return self.cols[0] <= local.col <= self.cols[1] and self.rows[0] <= local.row <= self.rows[1]


_SHEET_ID = re.compile(r"\s*([A-Za-z]+)\s*(\d+)\s*")


@dataclass(frozen=True, slots=True)
class SheetIds:
    """Sheet-prefixed ids ("A3012") on a map of several sheets. Where sheets
    overlap, a hex is printed on each: every such id reads, and ``format``
    uses the first sheet (in the order given) that prints the hex."""

    sheets: tuple[Sheet, ...]

    def _local(self, sheet: Sheet, h: Axial) -> Offset:
        return sheet.ids.grid.to_offset(h - sheet.origin)

    def parse(self, text: str) -> Axial:
        m = _SHEET_ID.fullmatch(text)
        if not m:
            raise HexIdError(f"hex id {text.strip()[:40]!r}: expected a sheet letter and digits")
        for sheet in self.sheets:
            if sheet.prefix.casefold() == m.group(1).casefold():
                local = sheet.ids.parse(m.group(2))
                if not sheet.holds(sheet.ids.grid.to_offset(local)):
                    raise HexIdError(f"hex id {text.strip()!r}: sheet {sheet.prefix} prints no such hex")
                return local + sheet.origin
        raise HexIdError(f"hex id {text.strip()[:40]!r}: no sheet {m.group(1)!r}")

    def aliases(self, h: Axial) -> tuple[str, ...]:
        out = []
        for sheet in self.sheets:
            if sheet.holds(self._local(sheet, h)):
                out.append(sheet.prefix + sheet.ids.format(h - sheet.origin))
        if not out:
            raise HexIdError(f"hex {tuple(h)} lies on no sheet")
        return tuple(out)

    def format(self, h: Axial) -> str:
        return self.aliases(h)[0]


# --- paths ---------------------------------------------------------------------------

H = TypeVar("H", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Reach(Generic[H]):
    """Where a mover can get: the least cost of every hex reached, and the
    hex it came from on one cheapest way there (for path recovery)."""

    start: H
    cost: Mapping[H, int]
    previous: Mapping[H, H]

    def path_to(self, goal: H) -> tuple[H, ...]:
        """The cheapest way from ``start`` to ``goal``, both included.
        Raises KeyError if ``goal`` was not reached."""
        if goal not in self.cost:
            raise KeyError(goal)
        way = [goal]
        while way[-1] != self.start:
            way.append(self.previous[way[-1]])
        return tuple(reversed(way))


def reach(
    start: H,
    neighbours_of: Callable[[H], Iterable[H]],
    step_cost: Callable[[H, H], int | None],
    *,
    budget: int | None = None,
    stops: Callable[[H], bool] | None = None,
) -> Reach[H]:
    """Every hex reachable from ``start`` within ``budget`` (no limit when
    None), by least total cost (Dijkstra over integer costs).

    ``step_cost(a, b)`` is the cost of entering b from a, or None where the
    step is forbidden (prohibited terrain or hexside, an enemy unit);
    costs must not be negative. ``stops(h)`` says that a mover that enters
    ``h`` must stop there (an enemy zone of control): h is reached, but no
    step leads on from it. The start never stops its own mover. Ties are
    broken by discovery order, so the result is deterministic for a
    deterministic ``neighbours_of``.
    """
    best: dict[H, int] = {start: 0}
    previous: dict[H, H] = {}
    order = itertools.count()
    heap: list[tuple[int, int, H]] = [(0, next(order), start)]
    done: set[H] = set()
    while heap:
        c, _, h = heapq.heappop(heap)
        if h in done or c > best[h]:
            continue
        done.add(h)
        if h != start and stops is not None and stops(h):
            continue
        for n in neighbours_of(h):
            step = step_cost(h, n)
            if step is None:
                continue
            if step < 0:
                raise ValueError(f"negative step cost {step} from {h!r} to {n!r}")
            nc = c + step
            if budget is not None and nc > budget:
                continue
            if n not in best or nc < best[n]:
                best[n] = nc
                previous[n] = h
                heapq.heappush(heap, (nc, next(order), n))
    return Reach(start, best, previous)


def shortest_path(
    start: H,
    goal: H,
    neighbours_of: Callable[[H], Iterable[H]],
    step_cost: Callable[[H, H], int | None],
    *,
    budget: int | None = None,
    stops: Callable[[H], bool] | None = None,
) -> tuple[int, tuple[H, ...]] | None:
    """The least cost and one cheapest way from ``start`` to ``goal`` (see
    ``reach``), or None if ``goal`` cannot be reached within ``budget``."""
    r = reach(start, neighbours_of, step_cost, budget=budget, stops=stops)
    if goal not in r.cost:
        return None
    return r.cost[goal], r.path_to(goal)


def path_cost(path: Sequence[H], step_cost: Callable[[H, H], int | None]) -> int | None:
    """The cost of following ``path`` step by step, or None if a step is
    forbidden. A path of one hex costs nothing."""
    total = 0
    for a, b in itertools.pairwise(path):
        step = step_cost(a, b)
        if step is None:
            return None
        total += step
    return total
