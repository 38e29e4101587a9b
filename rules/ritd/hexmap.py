"""The Rommel in the Desert map: loading, validation and topology queries.

The map comes only from ``data/map.toml`` (see the comment block at its top);
correcting it needs no code change. ``load_map()`` reads, checks and caches
it; ``load_map_bytes()`` does the same for given bytes (tests feed it broken
copies). Every problem raises ``DataError`` naming the exact entry.

Vocabulary follows the rulebook: hexsides are clear, ridge, gap, marsh,
marsh_gap (a gap through a marsh), mountain (Jebel el Akhdar), plus sea and
impassable at the map's water and sand edges (RB 1.4, 7.1); roads are
highway, track and trail (RB 1.5).
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Iterable, Iterator
from typing import Literal

import msgspec

from rules.ritd.datafiles import DataError, decode, read_bytes
from rules.ritd.names import (
    AXIAL_STEP,
    DIRECTIONS,
    OPPOSITE,
    Gazetteer,
    HexId,
    UnknownLocation,
    axial_distance,
    close_matches,
    col_row,
    from_axial,
    hex_id,
    normalize,
    to_axial,
)

FILE = "map.toml"

Terrain = Literal["clear", "ridge", "gap", "marsh", "marsh_gap", "mountain", "sea", "impassable"]
RoadKind = Literal["highway", "track", "trail"]
HexKind = Literal["sea", "desert", "mountain", "depression", "sand"]
PlaceKind = Literal["town", "fortress", "oasis", "base"]
Side = Literal["axis", "allied"]

#: Terrain that an entry in [[hexsides]] may set (the rest follows from cells).
AUTHORED_TERRAIN: frozenset[str] = frozenset({"clear", "ridge", "gap", "marsh", "marsh_gap", "mountain"})
ROAD_KINDS: tuple[RoadKind, ...] = ("highway", "track", "trail")
#: Road kinds from best to worst; RB 12.4 "the lesser Supply Range applies".
_ROAD_RANK = {"highway": 0, "track": 1, "trail": 2}

_CELL_KINDS: dict[str, HexKind] = {
    "~": "sea",
    ".": "desert",
    "^": "mountain",
    "_": "depression",
    ":": "sand",
}
_PLAYABLE_KINDS = frozenset({"desert", "mountain"})
# Hexside terrain implied by an unplayable neighbour.
_EDGE_TERRAIN: dict[str, Terrain] = {"sea": "sea", "depression": "marsh", "sand": "impassable"}


# ---------------------------------------------------------------- file schema


class _MapMeta(msgspec.Struct, forbid_unknown_fields=True):
    title: str
    hex_km: int
    columns: int
    rows: int
    source: str


class _Row(msgspec.Struct, forbid_unknown_fields=True):
    row: int
    cells: str
    area: str


class _Place(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    hex: str
    kind: str
    source: str
    side: str | None = None
    port_axis: int | None = None
    port_allied: int | None = None
    aliases: list[str] = []


class _Hexsides(msgspec.Struct, forbid_unknown_fields=True):
    terrain: str
    sides: list[str]
    source: str


class _Road(msgspec.Struct, forbid_unknown_fields=True):
    kind: str
    name: str
    path: list[str]
    source: str


class _Line(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    path: list[str]
    source: str


class _Label(msgspec.Struct, forbid_unknown_fields=True):
    text: str
    at: str
    kind: str
    source: str


class _MapFile(msgspec.Struct, forbid_unknown_fields=True):
    map: _MapMeta
    areas: dict[str, str]
    rows: list[_Row]
    places: list[_Place]
    hexsides: list[_Hexsides] = []
    roads: list[_Road] = []
    lines: list[_Line] = []
    labels: list[_Label] = []


# ------------------------------------------------------------- public records


class Hex(msgspec.Struct, frozen=True):
    """One hex: id ``CCRR``, offset and axial coordinates, kind, country."""

    id: HexId
    col: int
    row: int
    q: int
    r: int
    kind: HexKind
    area: str | None

    @property
    def is_playable(self) -> bool:
        return self.kind in _PLAYABLE_KINDS


class Place(msgspec.Struct, frozen=True):
    """A named hex (RB 1.1): a town, a Fortress (RB 1.7, port capacities per
    RB 13.3), an Oasis (RB 1.8) or a Base (RB 1.6, with its side)."""

    name: str
    hex: HexId
    kind: PlaceKind
    source: str
    aliases: tuple[str, ...] = ()
    side: Side | None = None
    port_axis: int | None = None
    port_allied: int | None = None

    @property
    def is_fortress(self) -> bool:
        return self.kind == "fortress"

    @property
    def is_oasis(self) -> bool:
        return self.kind == "oasis"

    @property
    def is_base(self) -> bool:
        return self.kind == "base"


class Road(msgspec.Struct, frozen=True):
    kind: RoadKind
    name: str
    path: tuple[HexId, ...]
    source: str


class SetupLine(msgspec.Struct, frozen=True):
    """A scenario set-up line (RB 18.7) as a chain of adjacent hexes."""

    name: str
    path: tuple[HexId, ...]
    source: str


class Label(msgspec.Struct, frozen=True):
    text: str
    hex: HexId
    kind: str


def _side_key(a: HexId, b: HexId) -> tuple[HexId, HexId]:
    return (a, b) if a < b else (b, a)


class HexMap:
    """The loaded, validated map. Immutable after construction; all
    adjacency, hexside terrain and roads are precomputed."""

    def __init__(
        self,
        *,
        title: str,
        hex_km: int,
        columns: int,
        rows: int,
        hexes: dict[HexId, Hex],
        places: tuple[Place, ...],
        gazetteer: Gazetteer,
        areas: dict[str, frozenset[HexId]],
        terrain: dict[tuple[HexId, HexId], Terrain],
        authored_sides: dict[tuple[HexId, HexId], str],
        roads: tuple[Road, ...],
        road_at: dict[tuple[HexId, HexId], RoadKind],
        lines: tuple[SetupLine, ...],
        labels: tuple[Label, ...],
    ) -> None:
        self.title = title
        self.hex_km = hex_km
        self.columns = columns
        self.rows = rows
        self.hexes = hexes
        self.places = places
        self.gazetteer = gazetteer
        self.areas = areas
        self.roads = roads
        self.lines = lines
        self.labels = labels
        self._terrain = terrain
        self._authored_sides = authored_sides
        self._road_at = road_at
        self._place_at = {p.hex: p for p in places}
        self._place_by_name = {p.name: p for p in places}
        #: Side -> the hex of its Base (RB 1.6), the first listed (``base``).
        self._base_of: dict[Side, HexId] = {}
        for p in places:
            if p.is_base and p.side is not None:
                self._base_of.setdefault(p.side, p.hex)
        self._line_by_name = {normalize(line.name): line for line in lines}
        self._area_by_name = {normalize(name): name for name in areas}
        by_axial = {(h.q, h.r): h.id for h in hexes.values()}
        nbrs: dict[HexId, tuple[tuple[str, HexId], ...]] = {}
        for h in hexes.values():
            out = []
            for d in DIRECTIONS:
                dq, dr = AXIAL_STEP[d]
                other = by_axial.get((h.q + dq, h.r + dr))
                if other is not None:
                    out.append((d, other))
            nbrs[h.id] = tuple(out)
        self._neighbours = nbrs
        self._name_cache: dict[HexId, str] = {}  # filled on demand: naming every hex took 35 ms at start-up
        self._passable: dict[HexId, tuple[HexId, ...]] = {
            h: tuple(n for _, n in nbrs[h] if self.is_passable(h, n)) for h in hexes
        }

    # ------------------------------------------------------------ names

    def resolve(self, text: str) -> HexId:
        """The hex id named by ``text`` ("Tobruk", "Msus E1", "1103").

        Raises UnknownLocation, with a "did you mean" suggestion for
        misspelt place names.
        """
        return self.gazetteer.parse(text)

    def name(self, hex_: HexId) -> str:
        """The canonical printable name of a hex (RB 1.1 notation)."""
        name = self._name_cache.get(hex_)
        if name is None:
            if hex_ not in self.hexes:
                raise UnknownLocation(hex_, "no such hex")
            name = self._name_cache[hex_] = self.gazetteer.format(hex_)
        return name

    def hexside_name(self, a: HexId, b: HexId) -> str:
        """A printable name of the hexside between adjacent a and b ("Sollum W")."""
        return f"{self.name(a)} {self.direction(a, b)}"

    # --------------------------------------------------------- geometry

    def hex(self, hex_: HexId) -> Hex:
        return self.hexes[hex_]

    def neighbours(self, hex_: HexId) -> tuple[tuple[str, HexId], ...]:
        """(direction, hex) of every on-map neighbour, E, NE, NW, W, SW, SE."""
        return self._neighbours[hex_]

    def neighbour(self, hex_: HexId, direction: str) -> HexId | None:
        for d, n in self._neighbours[hex_]:
            if d == direction:
                return n
        return None

    def direction(self, a: HexId, b: HexId) -> str:
        """The direction from a to adjacent b; ValueError if not adjacent."""
        for d, n in self._neighbours[a]:
            if n == b:
                return d
        raise ValueError(f"{self.name(a)} and {self.name(b)} are not adjacent")

    def is_adjacent(self, a: HexId, b: HexId) -> bool:
        return any(n == b for _, n in self._neighbours[a])

    def distance(self, a: HexId, b: HexId) -> int:
        """Hexes between a and b in a straight count, terrain ignored."""
        ha, hb = self.hexes[a], self.hexes[b]
        return axial_distance((ha.q, ha.r), (hb.q, hb.r))

    def is_playable(self, hex_: HexId) -> bool:
        """Land a unit may occupy (RB 1.4: not sea, depression or sand sea)."""
        return self.hexes[hex_].is_playable

    def playable_hexes(self) -> Iterator[HexId]:
        return (h for h, x in self.hexes.items() if x.is_playable)

    # --------------------------------------------------- hexsides, roads

    def hexside(self, a: HexId, b: HexId) -> Terrain:
        """Terrain of the hexside between adjacent hexes a and b (RB 1.4)."""
        try:
            return self._terrain[_side_key(a, b)]
        except KeyError:
            raise ValueError(f"{a} and {b} are not adjacent") from None

    def hexside_source(self, a: HexId, b: HexId) -> str | None:
        """The data entry's source for an authored hexside, else None."""
        return self._authored_sides.get(_side_key(a, b))

    def road(self, a: HexId, b: HexId) -> RoadKind | None:
        """The road crossing the hexside between a and b, if any (RB 1.5)."""
        return self._road_at.get(_side_key(a, b))

    def is_passable(self, a: HexId, b: HexId) -> bool:
        """May a unit cross from a to adjacent b? (RB 1.4, 7.1)

        Clear hexsides and gaps: yes. Mountain hexsides: only along a road.
        Ridges and marshes: never (only their gaps). Sea, depression and
        sand-sea edges: never.
        """
        t = self.hexside(a, b)
        if t in ("clear", "gap", "marsh_gap"):
            return True
        if t == "mountain":
            return self.road(a, b) is not None
        return False

    def hexside_limit(self, a: HexId, b: HexId) -> int:
        """Units that may Engage across this hexside per Movement phase (RB
        7.1): 2 for clear, 1 for a gap or a mountain road, 0 if impassable."""
        if not self.is_passable(a, b):
            return 0
        return 2 if self.hexside(a, b) == "clear" else 1

    def passable_neighbours(self, hex_: HexId) -> tuple[HexId, ...]:
        return self._passable[hex_]

    def road_neighbours(self, hex_: HexId, kinds: Iterable[str] = ROAD_KINDS) -> tuple[HexId, ...]:
        """Neighbours reached from ``hex_`` along a road of one of ``kinds``."""
        allowed = frozenset(kinds)
        return tuple(n for _, n in self._neighbours[hex_] if self._road_at.get(_side_key(hex_, n)) in allowed)

    def road_distance(self, a: HexId, b: HexId, kinds: Iterable[str] = ROAD_KINDS) -> int | None:
        """Fewest hexsides from a to b moving only along roads of ``kinds``
        (e.g. {"track"}; RB 6.2, 12.4), or None if no such road route."""
        path = self.road_path(a, b, kinds)
        return None if path is None else len(path) - 1

    def road_path(
        self, a: HexId, b: HexId, kinds: Iterable[str] = ROAD_KINDS, avoid: Iterable[HexId] = ()
    ) -> tuple[HexId, ...] | None:
        """A shortest route a..b along roads of ``kinds`` not entering any
        hex in ``avoid`` (a and b themselves excepted), or None."""
        allowed = frozenset(kinds)
        blocked = frozenset(avoid) - {a, b}
        prev: dict[HexId, HexId | None] = {a: None}
        frontier = [a]
        while frontier:
            nxt = []
            for h in frontier:
                if h == b:
                    out = [h]
                    while prev[out[-1]] is not None:
                        out.append(prev[out[-1]])  # type: ignore[arg-type]
                    return tuple(reversed(out))
                for n in self.road_neighbours(h, allowed):
                    if n not in prev and n not in blocked:
                        prev[n] = h
                        nxt.append(n)
            frontier = nxt
        return None

    def highway_hexes(self) -> frozenset[HexId]:
        """Every hex the highway passes through (RB 12.3)."""
        return frozenset(h for road in self.roads if road.kind == "highway" for h in road.path)

    def worst_road(self, path: Iterable[HexId]) -> RoadKind | None:
        """The lowest road kind along a hex path (RB 12.4 "the lesser Supply
        Range applies"); None if any step is off road."""
        hexes = list(path)
        worst: RoadKind | None = "highway"
        for x, y in zip(hexes, hexes[1:]):
            kind = self.road(x, y)
            if kind is None:
                return None
            if worst is None or _ROAD_RANK[kind] > _ROAD_RANK[worst]:
                worst = kind
        return worst

    def movement_distance(self, a: HexId, b: HexId) -> int | None:
        """Fewest passable hexsides from a to b over land, or None."""
        dist = {a: 0}
        queue: list[tuple[int, HexId]] = [(0, a)]
        while queue:
            d, h = heapq.heappop(queue)
            if h == b:
                return d
            if d > dist[h]:
                continue
            for n in self._passable[h]:
                if n not in dist or d + 1 < dist[n]:
                    dist[n] = d + 1
                    heapq.heappush(queue, (d + 1, n))
        return None

    # --------------------------------------------------- hex attributes

    def place(self, hex_: HexId) -> Place | None:
        """The town, Fortress, Oasis or Base in a hex, if any."""
        return self._place_at.get(hex_)

    def place_named(self, name: str) -> Place:
        return self._place_by_name[name]

    def fortress(self, hex_: HexId) -> Place | None:
        """The Fortress in a hex (RB 1.7), with its port capacities."""
        p = self._place_at.get(hex_)
        return p if p is not None and p.is_fortress else None

    def oasis(self, hex_: HexId) -> Place | None:
        p = self._place_at.get(hex_)
        return p if p is not None and p.is_oasis else None

    def base(self, side: Side) -> HexId:
        """The hex of a side's Base (RB 1.6); KeyError if it has none."""
        return self._base_of[side]

    def base_side(self, hex_: HexId) -> Side | None:
        p = self._place_at.get(hex_)
        return p.side if p is not None and p.is_base else None

    def area(self, hex_: HexId) -> str | None:
        """The country of a hex ("Libya", "Egypt"), None for sea."""
        return self.hexes[hex_].area

    def area_hexes(self, text: str) -> frozenset[HexId]:
        """The playable hexes a scenario area names: a country ("Libya",
        "Egypt") or a single location ("Sidi Omar", "Tobruk E1").

        Raises UnknownLocation if ``text`` is neither.
        """
        area = self._area_by_name.get(normalize(text))
        if area is not None:
            return self.areas[area]
        try:
            return frozenset({self.resolve(text)})
        except UnknownLocation as exc:
            suggestions = tuple(close_matches(normalize(text), self._area_by_name, 2)) + exc.suggestions
            raise UnknownLocation(text, "no area or place of that name", suggestions) from None

    def line(self, name: str) -> SetupLine:
        """A scenario set-up line by name (RB 18.7), e.g. "Gazala Axis line"."""
        try:
            return self._line_by_name[normalize(name)]
        except KeyError:
            raise UnknownLocation(name, "no set-up line of that name") from None

    def side_of_line(self, name: str, seed: HexId) -> frozenset[HexId]:
        """The line's hexes plus every playable hex reachable from ``seed``
        by stepping between adjacent playable hexes without entering the
        line ("on or west of the line", RB 18.7, with a seed on the west)."""
        line = frozenset(self.line(name).path)
        seen = set(line)
        stack = [seed] if seed not in line else []
        seen.add(seed)
        while stack:
            h = stack.pop()
            for _, n in self._neighbours[h]:
                if n not in seen and self.is_playable(n):
                    seen.add(n)
                    stack.append(n)
        return frozenset(seen)


# ------------------------------------------------------------------ loading


@functools.cache
def load_map() -> HexMap:
    """The game's map from package data, validated; cached."""
    return load_map_bytes(read_bytes(FILE))


def load_map_bytes(data: bytes) -> HexMap:
    """Decode and validate map data. Raises DataError naming the bad entry."""
    raw = decode(FILE, data, _MapFile)
    return _build(raw)


def _err(where: str, problem: str) -> DataError:
    return DataError(FILE, where, problem)


def _build(raw: _MapFile) -> HexMap:
    meta = raw.map
    if meta.columns < 1 or meta.rows < 1 or meta.columns > 99 or meta.rows > 99:
        raise _err("[map]", f"columns and rows must be 1..99, not {meta.columns}x{meta.rows}")
    for letter in raw.areas:
        if len(letter) != 1 or letter == "-":
            raise _err(f"[areas] {letter!r}", "area keys must be single letters other than '-'")

    # Rows: cells and areas.
    hexes: dict[HexId, Hex] = {}
    seen_rows: set[int] = set()
    for row_entry in raw.rows:
        where = f"row {row_entry.row}"
        if not 1 <= row_entry.row <= meta.rows:
            raise _err(where, f"row number out of range 1..{meta.rows}")
        if row_entry.row in seen_rows:
            raise _err(where, "duplicate row: every hex of this row is defined twice")
        seen_rows.add(row_entry.row)
        for field_name, text in (("cells", row_entry.cells), ("area", row_entry.area)):
            if len(text) != meta.columns:
                raise _err(where, f"{field_name} has {len(text)} characters, expected {meta.columns}")
        for i, (cell, area_letter) in enumerate(zip(row_entry.cells, row_entry.area)):
            col = i + 1
            hid = hex_id(col, row_entry.row)
            kind = _CELL_KINDS.get(cell)
            if kind is None:
                raise _err(f"{where} hex {hid}", f"unknown cell {cell!r} (expected one of {''.join(_CELL_KINDS)})")
            if kind == "sea":
                if area_letter != "-":
                    raise _err(f"{where} hex {hid}", f"sea hex has area {area_letter!r}, expected '-'")
                area = None
            else:
                if area_letter not in raw.areas:
                    raise _err(f"{where} hex {hid}", f"unknown area {area_letter!r}")
                area = raw.areas[area_letter]
            q, r = to_axial(col, row_entry.row)
            hexes[hid] = Hex(hid, col, row_entry.row, q, r, kind, area)
    missing = sorted(set(range(1, meta.rows + 1)) - seen_rows)
    if missing:
        raise _err(f"row {missing[0]}", "missing row")

    # Places.
    places: list[Place] = []
    place_hex: dict[HexId, str] = {}
    spellings: dict[str, str] = {}
    for place in raw.places:
        where = f'place "{place.name}"'
        if place.hex not in hexes:
            raise _err(where, f"hex {place.hex!r} is not on the map (ids are CCRR)")
        if not hexes[place.hex].is_playable:
            raise _err(where, f"hex {place.hex} is {hexes[place.hex].kind}, not land")
        if place.hex in place_hex:
            raise _err(where, f'duplicate hex: {place.hex} already holds "{place_hex[place.hex]}"')
        place_hex[place.hex] = place.name
        for spelling in (place.name, *place.aliases):
            spelling_key = normalize(spelling)
            if not spelling_key or spelling_key.split()[-1].upper() in AXIAL_STEP or _looks_like_offset(spelling_key):
                raise _err(where, f'name "{spelling}" ends like a direction offset')
            if spelling_key in spellings and spellings[spelling_key] != place.name:
                raise _err(where, f'name "{spelling}" is already used by "{spellings[spelling_key]}"')
            spellings[spelling_key] = place.name
        if place.kind not in ("town", "fortress", "oasis", "base"):
            raise _err(where, f'unknown kind "{place.kind}"')
        if place.kind == "base":
            if place.side not in ("axis", "allied"):
                raise _err(where, "a base needs side = \"axis\" or \"allied\"")
        elif place.side is not None:
            raise _err(where, "only a base has a side")
        if place.kind == "fortress":
            for port_name, port in (("port_axis", place.port_axis), ("port_allied", place.port_allied)):
                if port is None or port < 0:
                    raise _err(where, f"a fortress needs {port_name} >= 0 (RB 13.3)")
        elif place.port_axis is not None or place.port_allied is not None:
            raise _err(where, "only a fortress has port capacities (bases are unlimited, RB 13.3)")
        places.append(
            Place(
                name=place.name,
                hex=place.hex,
                kind=place.kind,  # type: ignore[arg-type]
                source=place.source,
                aliases=tuple(place.aliases),
                side=place.side,  # type: ignore[arg-type]
                port_axis=place.port_axis,
                port_allied=place.port_allied,
            )
        )
    for side in ("axis", "allied"):
        if sum(1 for p in places if p.is_base and p.side == side) != 1:
            raise _err("[[places]]", f"there must be exactly one {side} base (RB 1.6)")

    gazetteer = Gazetteer(
        places={p.name: p.hex for p in places},
        aliases={a: p.name for p in places for a in p.aliases},
        hexes=frozenset(hexes),
    )

    def locate(where: str, text: str) -> HexId:
        try:
            return gazetteer.parse(text)
        except UnknownLocation as exc:
            raise _err(where, str(exc)) from None

    by_axial = {(h.q, h.r): h.id for h in hexes.values()}

    def step(h: HexId, d: str) -> HexId | None:
        x = hexes[h]
        dq, dr = AXIAL_STEP[d]
        return by_axial.get((x.q + dq, x.r + dr))

    # Derived hexside terrain from the cells.
    terrain: dict[tuple[HexId, HexId], Terrain] = {}
    for h in hexes.values():
        for d in ("E", "SE", "SW"):
            n = step(h.id, d)
            if n is None:
                continue
            kinds = {h.kind, hexes[n].kind}
            t: Terrain = "clear"
            for k in ("sea", "depression", "sand"):
                if k in kinds:
                    t = _EDGE_TERRAIN[k]
                    break
            else:
                if "mountain" in kinds:
                    t = "mountain"
            terrain[_side_key(h.id, n)] = t

    # Authored hexsides.
    authored: dict[tuple[HexId, HexId], str] = {}
    for sides_entry in raw.hexsides:
        for spec in sides_entry.sides:
            where = f'hexside "{spec}"'
            if sides_entry.terrain not in AUTHORED_TERRAIN:
                raise _err(where, f'unknown terrain "{sides_entry.terrain}" (expected one of {", ".join(sorted(AUTHORED_TERRAIN))})')
            parts = spec.rsplit(None, 1)
            if len(parts) != 2 or parts[1].upper() not in AXIAL_STEP:
                raise _err(where, "expected a location and a direction, e.g. \"Sollum W\"")
            a = locate(where, parts[0])
            b = step(a, parts[1].upper())
            if b is None:
                raise _err(where, "the hexside is on the map edge")
            key = _side_key(a, b)
            if not (hexes[a].is_playable and hexes[b].is_playable):
                raise _err(where, f"the hexside borders {terrain[key]}; only hexsides between land hexes are authored")
            if key in authored:
                raise _err(where, "duplicate hexside: already set by another entry")
            authored[key] = sides_entry.source
            terrain[key] = sides_entry.terrain  # type: ignore[assignment]

    # Roads, hexside by hexside.
    roads: list[Road] = []
    road_at: dict[tuple[HexId, HexId], RoadKind] = {}
    road_name_at: dict[tuple[HexId, HexId], str] = {}
    for road in raw.roads:
        where = f'road "{road.name}"'
        if road.kind not in ROAD_KINDS:
            raise _err(where, f'unknown road kind "{road.kind}" (expected highway, track or trail)')
        if len(road.path) < 2:
            raise _err(where, "a road needs at least two hexes")
        path = tuple(locate(f'{where} hex "{text}"', text) for text in road.path)
        for text_a, text_b, a, b in zip(road.path, road.path[1:], path, path[1:]):
            step_where = f'{where} step "{text_a}" -> "{text_b}"'
            key = _side_key(a, b)
            if key not in terrain:
                raise _err(step_where, "the hexes are not adjacent")
            t = terrain[key]
            if t in ("sea", "marsh", "impassable") and not (hexes[a].is_playable and hexes[b].is_playable):
                raise _err(step_where, f"road crosses a {t} hexside into a hex that is not land")
            if t in ("ridge", "marsh"):
                raise _err(step_where, f"road crosses a {t} hexside with no gap (RB 1.4, 7.1)")
            if key in road_at:
                raise _err(step_where, f'hexside already carries the "{road_name_at[key]}" road')
            road_at[key] = road.kind
            road_name_at[key] = road.name
        roads.append(Road(road.kind, road.name, path, road.source))

    # Set-up lines.
    lines: list[SetupLine] = []
    line_names: set[str] = set()
    for line in raw.lines:
        where = f'line "{line.name}"'
        if normalize(line.name) in line_names:
            raise _err(where, "duplicate line name")
        line_names.add(normalize(line.name))
        path = tuple(locate(f'{where} hex "{text}"', text) for text in line.path)
        for text_a, text_b, a, b in zip(line.path, line.path[1:], path, path[1:]):
            if _side_key(a, b) not in terrain:
                raise _err(f'{where} step "{text_a}" -> "{text_b}"', "the hexes are not adjacent")
        for text, line_hex in zip(line.path, path):
            if not hexes[line_hex].is_playable:
                raise _err(f'{where} hex "{text}"', "not a land hex")
        lines.append(SetupLine(line.name, path, line.source))

    labels = tuple(
        Label(entry.text, locate(f'label "{entry.text}"', entry.at), entry.kind) for entry in raw.labels
    )

    areas: dict[str, frozenset[HexId]] = {
        name: frozenset(h.id for h in hexes.values() if h.area == name and h.is_playable)
        for name in raw.areas.values()
    }

    return HexMap(
        title=meta.title,
        hex_km=meta.hex_km,
        columns=meta.columns,
        rows=meta.rows,
        hexes=hexes,
        places=tuple(places),
        gazetteer=gazetteer,
        areas=areas,
        terrain=terrain,
        authored_sides=authored,
        roads=tuple(roads),
        road_at=road_at,
        lines=tuple(lines),
        labels=labels,
    )


def _looks_like_offset(key: str) -> bool:
    last = key.split()[-1].upper()
    return any(last.startswith(d) and last[len(d):].isdigit() for d in AXIAL_STEP)


__all__ = [
    "DIRECTIONS",
    "OPPOSITE",
    "HexMap",
    "Hex",
    "Place",
    "Road",
    "SetupLine",
    "Label",
    "HexId",
    "UnknownLocation",
    "load_map",
    "load_map_bytes",
    "col_row",
    "from_axial",
]
