"""The Panzerarmee Afrika map, read from ``rules/paa/data/map.toml``.

The revision's text has no map: only the hex numbers it cites (§2.1 ids are
RRCC, row first), Table 1's terrain and features and the player aid's
coastal-road distance table. ``data/map.toml`` holds the authored rest, each
data set with its source or reasoning (``PaaMap.authored``); this module
reads it, checks it and answers the questions the rules ask of a map:
terrain (Table 1), hexside features (escarpment, prohibited, border, road,
track, rail), places, ports (§11.2), sea lines (§2.1.2), bases (§5.1), forts
and their ZOC (§3, §11.1.5, §12.1.1), Libya (§9) and whether a road and a
track connect where they meet (§11.1.2, Figure 6).

It reads package data only (importlib.resources), never a game file.
"""

from __future__ import annotations

import functools
import importlib.resources
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import msgspec

from pbem.hexgrid import DigitIds, Grid, HexIdError, neighbours

Terrain = Literal["clear", "rough", "swamp", "sea"]

#: The characters of a ``cells`` row (header of map.toml).
TERRAIN_CODES: dict[str, Terrain] = {".": "clear", "r": "rough", "s": "swamp", "~": "sea"}

#: §2.1 and Figure 7: pointy-top hexes in rows, even rows half a hex east,
#: row numbers growing northward (up the page); ids are RRCC.
GRID = Grid("pointy", "even", "up")
IDS = DigitIds(GRID, "RRCC")

MAP_FILE = "map.toml"


class MapDataError(ValueError):
    """map.toml is malformed; the message names the entry and the problem."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{MAP_FILE}: {where}: {problem}")


class HexSide(msgspec.Struct, frozen=True):
    """Features of the side between two adjacent hexes (Table 1)."""

    escarpment: bool = False
    prohibited: bool = False  # red-white striped: no movement or combat across (Table 1), no ZOC (§3)
    border: bool = False  # Libya/Egypt border (§9)
    road: bool = False  # the coastal road (or the Tobruk by-pass) crosses this side
    track: bool = False
    rail: bool = False  # Egyptian railroad (§11.3.1)


_NO_SIDE = HexSide()


class Route(msgspec.Struct, frozen=True):
    """A named road or track as a hex path (for pictures and reports)."""

    kind: Literal["road", "track", "rail"]
    name: str
    hexes: tuple[str, ...]


def _key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


class PaaMap:
    """The checked map. Build it with ``load_map()`` (cached)."""

    grid: Grid = GRID
    #: Never changed once built: the movement rules may remember its step costs (movement.step_options).
    immutable = True

    def __init__(self, raw: Mapping[str, Any]) -> None:
        try:
            self._build(raw)
        except MapDataError:
            raise
        except (KeyError, TypeError, ValueError) as exc:  # a missing table or a wrong type
            raise MapDataError("structure", f"{type(exc).__name__}: {exc}") from exc

    # --- building and checking ---------------------------------------------------

    def _build(self, raw: Mapping[str, Any]) -> None:
        meta = raw["map"]
        self.title: str = str(meta["title"])
        self.hex_km: float = float(meta["hex_km"])
        self.rows: int = int(meta["rows"])
        self.columns: int = int(meta["columns"])
        self._notes: dict[str, str] = {str(k): str(v) for k, v in raw["notes"].items()}
        self._hex_notes: dict[str, str] = {str(k): str(v) for k, v in raw.get("hex_notes", {}).items()}

        terrain: dict[str, Terrain] = {}
        country: dict[str, str] = {}
        seen_rows: set[int] = set()
        for entry in raw["rows"]:
            row = int(entry["row"])
            where = f"rows: row {row}"
            if not 1 <= row <= self.rows or row in seen_rows:
                raise MapDataError(where, f"row number outside 1..{self.rows} or given twice")
            seen_rows.add(row)
            cells, area = str(entry["cells"]), str(entry["country"])
            if len(cells) != self.columns or len(area) != self.columns:
                raise MapDataError(where, f"cells and country need {self.columns} characters each "
                                          f"(have {len(cells)} and {len(area)})")
            for col, (ch, co) in enumerate(zip(cells, area, strict=True), start=1):
                hid = f"{row:02d}{col:02d}"
                if ch not in TERRAIN_CODES:
                    raise MapDataError(where, f"column {col}: unknown terrain {ch!r} (one of {''.join(TERRAIN_CODES)})")
                t = TERRAIN_CODES[ch]
                if (t == "sea") != (co == "-") or co not in "LE-":
                    raise MapDataError(where, f"column {col}: country {co!r} does not fit terrain {t} "
                                              "(L or E on land, - on sea)")
                terrain[hid] = t
                country[hid] = co
        if len(seen_rows) != self.rows:
            raise MapDataError("rows", f"need all rows 1..{self.rows}, missing {sorted(set(range(1, self.rows + 1)) - seen_rows)}")
        self._terrain = terrain
        self._country = country
        for h in self._hex_notes:
            if h not in terrain:
                raise MapDataError(f"hex_notes: {h}", "not a hex of the map")
        self._hexes = tuple(sorted(terrain))
        self._neighbours: dict[str, tuple[str, ...]] = {}
        for h in self._hexes:
            near = (IDS.format(n) for n in neighbours(IDS.parse(h)))
            self._neighbours[h] = tuple(n for n in near if n in terrain)

        sides: dict[tuple[str, str], dict[str, bool]] = {}

        def mark(where: str, a: str, b: str, flag: str) -> None:
            self._check_land(where, a)
            self._check_land(where, b)
            if b not in self._neighbours[a]:
                raise MapDataError(where, f"{a} and {b} are not adjacent")
            sides.setdefault(_key(a, b), {})[flag] = True

        for section, flag in (("escarpments", "escarpment"), ("prohibited", "prohibited")):
            for text in raw[section]["sides"]:
                a, sep, b = str(text).partition("-")
                if not sep:
                    raise MapDataError(section, f"side {text!r} is not written 'a-b'")
                mark(f"{section}: {text}", a, b, flag)

        routes: list[Route] = []
        kinds: tuple[tuple[str, Literal["road", "track"]], ...] = (("roads", "road"), ("tracks", "track"))
        for section, kind in kinds:
            for entry in raw[section]:
                name = str(entry["name"])
                hexes = tuple(str(h) for h in entry["hexes"])
                if len(hexes) < 2:
                    raise MapDataError(f"{section}: {name}", "a route needs at least two hexes")
                for a, b in zip(hexes, hexes[1:]):
                    mark(f"{section}: {name}", a, b, kind)
                routes.append(Route(kind, name, hexes))
        rail = tuple(str(h) for h in raw["railroad"]["hexes"])
        for a, b in zip(rail, rail[1:]):
            mark("railroad", a, b, "rail")
        routes.append(Route("rail", "Egyptian railroad", rail))
        self.routes: tuple[Route, ...] = tuple(routes)
        self.railroad: tuple[str, ...] = rail

        # Border (§9): every side between a Libyan and an Egyptian land hex.
        for h in self._hexes:
            for n in self._neighbours[h]:
                if {country[h], country[n]} == {"L", "E"}:
                    sides.setdefault(_key(h, n), {})["border"] = True
        self._sides = {k: HexSide(**v) for k, v in sides.items()}
        self._road_hexes = frozenset(h for r in routes if r.kind == "road" for h in r.hexes)
        self._track_hexes = frozenset(h for r in routes if r.kind == "track" for h in r.hexes)

        features = raw["features"]
        unconnected = frozenset(str(h) for h in features["road_track_unconnected"])
        for h in unconnected:
            if h not in self._road_hexes or h not in self._track_hexes:
                raise MapDataError(f"features: road_track_unconnected {h}", "no road and track meet there")
        self._unconnected = unconnected

        self.places: Mapping[str, str] = {}
        places: dict[str, str] = {}
        self._place_sources: dict[str, str] = {}
        for entry in raw["places"]:
            name, h = str(entry["name"]), str(entry["hex"])
            self._check_land(f"places: {name}", h)
            if name in places:
                raise MapDataError(f"places: {name}", "named twice")
            places[name] = h
            self._place_sources[name] = str(entry["source"])
        self.places = places

        self.ports: frozenset[str] = frozenset(str(h) for h in features["ports"])
        for h in self.ports:
            self._check_land(f"features: port {h}", h)
            if not any(self._terrain[n] == "sea" for n in self._neighbours[h]):
                raise MapDataError(f"features: port {h}", "a port needs a sea neighbour")
        lines = []
        for pair in features["sea_lines"]:
            a, b = (str(x) for x in pair)
            if a not in self.ports or b not in self.ports or a == b:
                raise MapDataError(f"features: sea line {a}-{b}", "a sea line joins two different ports (§2.1.2)")
            lines.append(_key(a, b))
        self.sea_lines: tuple[tuple[str, str], ...] = tuple(lines)

        bases: dict[str, frozenset[str]] = {}
        centres: dict[str, str] = {}
        for faction in ("axis", "allied"):
            entry = raw["bases"][faction]
            centre = str(entry["centre"])
            base = frozenset(str(h) for h in entry["hexes"])
            for h in base:
                self._check_land(f"bases.{faction}", h)
                if h != centre and h not in self._neighbours[centre]:
                    raise MapDataError(f"bases.{faction}", f"{h} is not the centre {centre} nor next to it (§5.1)")
            if centre not in base:
                raise MapDataError(f"bases.{faction}", f"the centre {centre} must be one of the hexes")
            bases[faction] = base
            centres[faction] = centre
        self.bases: Mapping[str, frozenset[str]] = bases
        self.base_centres: Mapping[str, str] = centres

        self.forts: Mapping[str, int] = {str(h): int(m) for h, m in raw["forts"].items()}
        zoc: dict[str, frozenset[str]] = {}
        for fort in self.forts:
            self._check_land(f"forts: {fort}", fort)
            ring = frozenset(str(h) for h in raw["fort_zoc"][fort])
            for h in ring:
                self._check_land(f"fort_zoc: {fort}", h)
                if h not in self._neighbours[fort]:
                    raise MapDataError(f"fort_zoc: {fort}", f"{h} is not next to the fort (§3)")
            zoc[fort] = ring
        self.fort_zoc: Mapping[str, frozenset[str]] = zoc
        self.libya: frozenset[str] = frozenset(h for h, c in country.items() if c == "L")
        land = frozenset(h for h in self._hexes if terrain[h] != "sea")
        axis_start = bases["axis"]
        self.control_at_start: Mapping[str, frozenset[str]] = {
            "axis": axis_start, "allied": land - axis_start}

    def _check_land(self, where: str, h: str) -> None:
        if h not in self._terrain:
            raise MapDataError(where, f"{h!r} is not a hex of the map (RRCC, rows 01-{self.rows:02d}, "
                                      f"columns 01-{self.columns:02d})")
        if self._terrain[h] == "sea":
            raise MapDataError(where, f"{h} is a sea hex")

    # --- the API the rules use ---------------------------------------------------

    def hexes(self) -> tuple[str, ...]:
        """Every on-map hex id, sea hexes included, in id order."""
        return self._hexes

    def land_hexes(self) -> tuple[str, ...]:
        return tuple(h for h in self._hexes if self._terrain[h] != "sea")

    def __contains__(self, hex_id: object) -> bool:
        return hex_id in self._terrain

    def _known(self, hex_id: str) -> None:
        if hex_id not in self._terrain:
            raise HexIdError(f"hex {hex_id[:20]!r} is not on the Panzerarmee Afrika map (§2.1: RRCC, "
                             f"rows 01-{self.rows:02d}, columns 01-{self.columns:02d})")

    def terrain(self, hex_id: str) -> Terrain:
        """Table 1 terrain of the hex ("sea" = a full sea hex)."""
        self._known(hex_id)
        return self._terrain[hex_id]

    def country(self, hex_id: str) -> Literal["libya", "egypt", "sea"]:
        """Libya or Egypt (§9), or "sea"."""
        self._known(hex_id)
        code = self._country[hex_id]
        return "libya" if code == "L" else "egypt" if code == "E" else "sea"

    def neighbours(self, hex_id: str) -> tuple[str, ...]:
        """The on-map neighbours (sea hexes included; the rules decide what enters them)."""
        self._known(hex_id)
        return self._neighbours[hex_id]

    def side(self, a: str, b: str) -> HexSide:
        """The features of the side between adjacent hexes a and b (symmetric)."""
        self._known(a)
        self._known(b)
        if b not in self._neighbours[a]:
            raise ValueError(f"hexes {a} and {b} are not adjacent")
        return self._sides.get(_key(a, b), _NO_SIDE)

    def road_track_connected(self, hex_id: str) -> bool:
        """Whether a road and a track meeting in this hex connect there
        (§11.1.2, Figure 6: where they do not, changing costs +2 MF and a
        transport unit may not change at all). True where they do not meet."""
        self._known(hex_id)
        return hex_id not in self._unconnected

    def authored(self, what: str) -> str:
        """The source or reasoning of a data set ("terrain", "roads", "bases", ...),
        of a named place ("place:Derna") or of a hex that deviates ("hex:1630")."""
        if what.startswith("hex:") and what.removeprefix("hex:") in self._hex_notes:
            return self._hex_notes[what.removeprefix("hex:")]
        if what.startswith("place:"):
            name = what.removeprefix("place:")
            if name in self._place_sources:
                return self._place_sources[name]
        if what in self._notes:
            return self._notes[what]
        raise KeyError(f"map.toml has no note for {what!r}: one of {', '.join(sorted(self._notes))} or place:NAME")

    def notes(self) -> Mapping[str, str]:
        return dict(self._notes)

    def route_hexes(self, kind: Literal["road", "track", "rail"]) -> frozenset[str]:
        return frozenset(h for r in self.routes if r.kind == kind for h in r.hexes)


def parse_map(text: str) -> PaaMap:
    """Build a map from TOML text (tests and owners checking a corrected file)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MapDataError("syntax", str(exc)) from exc
    return PaaMap(raw)


def map_bytes() -> bytes:
    """The exact bytes of data/map.toml (what a game would hash into genesis)."""
    return importlib.resources.files("rules.paa.data").joinpath(MAP_FILE).read_bytes()


@functools.cache
def load_map() -> PaaMap:
    """The game's map, read once."""
    return parse_map(map_bytes().decode("utf-8"))


# --- the map as a picture (pbem.board) ---------------------------------------------

def map_picture(game_map: PaaMap | None = None, *, focus: Sequence[str] = ()) -> Any:
    """The empty map as a ``pbem.board.Picture``: terrain, escarpments,
    prohibited sides, the border, roads, tracks, the railroad, sea lines,
    places, ports, forts and bases. (Not wired into a Rules class: there is
    none yet; the rules helper decides how a game's picture adds units.)"""
    from pbem.board import HexCell, HexsideFeature, Label, LegendEntry, Picture, RoadPath, Style, Symbol

    m = game_map or load_map()
    styles = {
        "sea": Style(fill="#b9d7ea", stroke="#9fc3da", width=0.15),
        "clear": Style(fill="#f3e6c4", stroke="#cdbb92", width=0.15),
        "rough": Style(fill="#c9b48a", stroke="#a8915f", width=0.15),
        "swamp": Style(fill="#b8c9b0", stroke="#8fa487", width=0.15),
        "escarpment": Style(stroke="#7a4a1c", width=0.9, pattern="teeth"),
        "prohibited": Style(stroke="#c8102e", width=1.0, dash="0.8 0.8"),
        "border": Style(stroke="#8c1d8c", width=0.6, dash="2 0.8 0.4 0.8", opacity=0.9),
        "road": Style(stroke="#c0281e", width=0.9),
        "track": Style(stroke="#5a3a1a", width=0.5, dash="1.6 0.8"),
        "rail": Style(stroke="#222222", width=1.7, dash="0.5 0.5"),
        "sea_line": Style(stroke="#ffffff", width=0.6, dash="1.5 1.0"),
        "town": Style(fill="#222222", stroke="#ffffff", width=0.2, size=0.7),
        "fort": Style(fill="#1f3b6f", stroke="#ffffff", width=0.3, shape="square", size=2.0, font_size=1.7),
        "base_axis": Style(fill="#3a3a3a", stroke="#ffffff", width=0.3, shape="star", size=2.2),
        "base_allied": Style(fill="#b5651d", stroke="#ffffff", width=0.3, shape="star", size=2.2),
        "place": Style(fill="#111111", font_size=1.9, bold=True),
    }
    cells = []
    for h in m.hexes():
        q, r = IDS.parse(h)
        cells.append(HexCell(h, q, r, m.terrain(h), caption=h))
    sides: list[HexsideFeature] = []
    for h in m.hexes():
        for n in m.neighbours(h):
            if h < n:
                s = m.side(h, n)
                for flag in ("escarpment", "prohibited", "border"):
                    if getattr(s, flag):
                        sides.append(HexsideFeature(h, n, flag))
    # The railroad first: drawn wide under the coast road it runs beside, it shows as ties on both sides.
    order = {"rail": 0, "track": 1, "road": 2}
    roads = [RoadPath(r.kind, r.hexes) for r in sorted(m.routes, key=lambda r: order[r.kind])]
    roads += [RoadPath("sea_line", _sea_path(m, a, b)) for a, b in m.sea_lines]
    symbols: list[Symbol] = []
    for fort, mult in m.forts.items():
        symbols.append(Symbol(fort, "fort", f"{mult}x"))
    for faction, centre in m.base_centres.items():
        symbols.append(Symbol(centre, f"base_{faction}"))
    labels: list[Label] = []
    for name, h in m.places.items():
        if h not in m.forts and h not in m.base_centres.values():
            symbols.append(Symbol(h, "town"))
        labels.append(Label(h, name, "place", dy=-0.45))
    legend = (
        LegendEntry("clear", "Clear (3 MF)", "hex"), LegendEntry("rough", "Rough (10 MF, 2x DF)", "hex"),
        LegendEntry("swamp", "Swamp (10 MF, 2x Axis DF)", "hex"), LegendEntry("sea", "Sea", "hex"),
        LegendEntry("escarpment", "Escarpment (+10 MF, 1/2 AF)", "edge"),
        LegendEntry("prohibited", "Prohibited", "edge"), LegendEntry("border", "Libya/Egypt border", "edge"),
        LegendEntry("road", "Coastal road (1 MF)", "road"), LegendEntry("track", "Track (2 MF)", "road"),
        LegendEntry("rail", "Egyptian railroad", "road"), LegendEntry("sea_line", "Sea transport", "road"),
    )
    return Picture(
        title=m.title, subtitle="Authored map (rules/paa/data/map.toml); hex ids RRCC",
        hexes=tuple(cells), styles=styles, hexsides=tuple(sides), roads=tuple(roads),
        symbols=tuple(symbols), labels=tuple(labels), legend=legend, grid=GRID, hex_km=m.hex_km,
        focus=tuple(focus),
    )


def _sea_path(m: PaaMap, a: str, b: str) -> tuple[str, ...]:
    """A drawn course for a sea line: the shortest chain of hexes from port a to
    port b through sea hexes (ports at both ends)."""
    from pbem.hexgrid import shortest_path

    def step(_x: str, y: str) -> int | None:
        return 1 if (m.terrain(y) == "sea" or y == b) else None

    found = shortest_path(a, b, m.neighbours, step)
    return found[1] if found else (a, b)

