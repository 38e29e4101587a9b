"""A game-agnostic hex-map picture and its SVG rendering.

A rules package builds a ``Picture`` (hexes with a fill kind, hexside
features, roads, point symbols, labels, pieces, and optionally tinted hexes,
arrows and callouts) and supplies the ``styles`` that say how each kind
looks; this module knows no game. ``render_svg``
lays the picture out on one landscape page (A4 by default, which also fits
Letter) and renders it through ``templates/map.svg.j2``. Every string is
escaped by the template environment, so player-supplied text is safe.

Coordinates are axial (q, r) in the picture's ``grid`` (pbem/hexgrid.py:
pointy-top hexes in rows or flat-top hexes in columns). A map too large
for a page at a playable hex size is printed as an overview and tiles
(``render_pages``). Pictures are never part of a signed log, so
floats are fine here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, cast

import msgspec

from pbem.hexgrid import Axial, Grid

PageName = Literal["a4", "a3", "letter"]
#: Landscape pages, width and height in mm.
PAGES: dict[str, tuple[float, float]] = {"a4": (297.0, 210.0), "a3": (420.0, 297.0), "letter": (279.4, 215.9)}
#: The smallest hex (across flats, mm) a map is printed at for play (PLAN,
#: "Maps"): a map whose one-page rendering is smaller is tiled.
MIN_HEX_MM = 12.0
#: A tile's header (title and tile name) and its edge labels, in mm.
TILE_HEADER_MM = 8.0
TILE_EDGE_MM = 6.0
MARGIN_MM = 7.0
TITLE_MM = 11.0
LEGEND_ROW_MM = 6.0
#: Hex captions sit this far (in hex sizes) above the centre, near the top corner.
CAPTION_DY = 0.62
#: Piece layout, in hex sizes: a piece's side, the gap between things in a
#: row, an invisible piece's width, and the widest row before pieces shrink.
PIECE_SIDE = 0.55
PIECE_GAP = 0.08
PIECE_SPACER = 0.06
ROW_MAX = 1.6
MIN_PIECE_SCALE = 0.7

#: A counter's side, in hex sizes (centre to corner): about half the hex
#: across, as printed counters are; stacked counters step this far (mm).
COUNTER_SIDE = 1.05
STACK_STEP = 0.7
#: Stack layers drawn under the top counter at most.
STACK_LAYERS = 3

#: Callouts, in mm: the padding inside the box, the line pitch (in font
#: sizes), the most lines in one column, the gap between columns.
CALLOUT_PAD = 0.5
CALLOUT_LEADING = 1.22
CALLOUT_ROWS = 6
CALLOUT_COL_GAP = 1.2
#: An arrow stops this far (hex sizes) short of its last hex's centre, so
#: that its head shows beside the pieces there instead of under them.
ARROW_SHORT = 0.32
#: ... or, where the last hex holds pieces, this far (mm) before them.
ARROW_GAP = 0.5

SymbolShape = Literal["circle", "square", "star", "triangle", "diamond"]
LegendShape = Literal["hex", "edge", "road", "symbol", "piece", "arrow", "callout"]


class Style(msgspec.Struct, frozen=True):
    """How one kind is drawn. Lengths are in mm on the printed page.

    ``pattern`` applies to hexside features: "full" draws the whole edge,
    "ends" only its two outer thirds (a gap through a line), "teeth" the
    edge plus short ticks toward the first hex of the feature.
    """

    fill: str = "none"
    stroke: str = "none"
    width: float = 0.3
    dash: str = ""
    opacity: float = 1.0
    pattern: Literal["full", "ends", "teeth"] = "full"
    shape: SymbolShape = "circle"
    size: float = 2.0
    font_size: float = 2.4
    bold: bool = False
    italic: bool = False
    halo: str = "#ffffff"


class HexCell(msgspec.Struct, frozen=True):
    """One hex: id, axial position, fill kind, optional small caption."""

    id: str
    q: int
    r: int
    kind: str
    caption: str = ""


class HexsideFeature(msgspec.Struct, frozen=True):
    """Something drawn along the edge shared by adjacent hexes a and b."""

    a: str
    b: str
    kind: str


class RoadPath(msgspec.Struct, frozen=True):
    """A road (or any route) through the centres of consecutive hexes."""

    kind: str
    hexes: tuple[str, ...]


class Symbol(msgspec.Struct, frozen=True):
    """A point symbol in a hex (a fortress, a base ...) with short text.

    At the hex centre it moves aside for the hex's pieces (see ``Piece``);
    shifted by (dx, dy) hex sizes (a marker in a corner) it stays put.
    """

    hex: str
    kind: str
    text: str = ""
    dx: float = 0.0
    dy: float = 0.0

    @property
    def is_fixed(self) -> bool:
        return bool(self.dx or self.dy)


class Label(msgspec.Struct, frozen=True):
    """Text placed at a hex centre, shifted by (dx, dy) hex sizes.

    With ``piece`` >= 0 the label belongs to that piece of the hex (its index
    among the hex's pieces, in order) and is shifted from the piece's centre
    instead, so it follows the piece wherever the layout puts it.
    """

    hex: str
    text: str
    kind: str
    dx: float = 0.0
    dy: float = 0.0
    piece: int = -1


class Piece(msgspec.Struct, frozen=True):
    """A playing piece or marker shown in a hex.

    The pieces of a hex stand side by side in a row, in order, after the
    hex's symbols (which move aside so the pieces do not hide them); a piece
    whose style draws nothing (no fill, no stroke, no text) is a narrow gap.
    """

    hex: str
    kind: str
    text: str = ""


CounterType = Literal["infantry", "motorised", "airborne", "air_assault", "mechanised", "recon",
                      "armour", "artillery", "supply", "transport", "none"]
Echelon = Literal["", "battalion", "regiment", "brigade", "division"]
#: NATO (APP-6) echelon marks drawn above the type frame.
ECHELON_MARKS: dict[str, str] = {"": "", "battalion": "II", "regiment": "III", "brigade": "X", "division": "XX"}


class Counter(msgspec.Struct, frozen=True):
    """A face-up counter, as open-information games print them: a square in
    its nation's colours (the style's ``fill``; frame ``stroke``; text and
    symbol ``halo``) with the unit's id on top, a NATO type symbol in a
    frame (``symbol_fill`` behind it, e.g. an Allied unit's nation colour),
    its echelon mark, and its figures below ("3-4": strength-movement).
    ``flipped`` shows the back side (out of supply, dismounted ...),
    hatched, with ``back`` as its label. The counters of a hex form a stack
    in the order given, the last on top; the stack shows its height.
    """

    hex: str
    kind: str
    id: str = ""
    type: CounterType = "infantry"
    echelon: Echelon = ""
    figures: str = ""
    flipped: bool = False
    back: str = ""
    symbol_fill: str = ""


class Display(msgspec.Struct, frozen=True):
    """A box or track printed beside the map that holds counters: a box
    (destroyed units, units refitting, reinforcements to come) or, with
    ``cells``, a track of labelled cells (the turn track, replacement
    points). A counter's ``hex`` names its cell on a track, or its slot in
    a box (counters with the same slot stack)."""

    id: str
    title: str
    cells: tuple[str, ...] = ()
    counters: tuple[Counter, ...] = ()


class Shade(msgspec.Struct, frozen=True):
    """A tint laid over one hex, under everything but the hex fills (an
    overlay such as a network of hexes)."""

    hex: str
    kind: str


class Arrow(msgspec.Struct, frozen=True):
    """A route through the centres of consecutive hexes, drawn under the
    symbols and pieces with a head at its end; it starts at the first hex's
    centre and stops ``ARROW_SHORT`` short of the last one's."""

    kind: str
    hexes: tuple[str, ...]


class Callout(msgspec.Struct, frozen=True):
    """Lines of text in a box set in free space near a hex, tied to it by a
    leader line: for text too long to fit in a hex (the names of the pieces
    there). With ``piece`` >= 0 the leader starts at that piece of the hex.
    ``title``, if any, is a first line in bold. Text is in the style's
    ``fill``, the box in its ``halo``, edged (and the leader drawn) in its
    ``stroke``.
    """

    hex: str
    kind: str
    lines: tuple[str, ...]
    title: str = ""
    piece: int = -1


class LegendEntry(msgspec.Struct, frozen=True):
    kind: str
    text: str
    shape: LegendShape


class Picture(msgspec.Struct, frozen=True):
    title: str
    hexes: tuple[HexCell, ...]
    styles: dict[str, Style]
    subtitle: str = ""
    hexsides: tuple[HexsideFeature, ...] = ()
    roads: tuple[RoadPath, ...] = ()
    symbols: tuple[Symbol, ...] = ()
    labels: tuple[Label, ...] = ()
    pieces: tuple[Piece, ...] = ()
    legend: tuple[LegendEntry, ...] = ()
    shades: tuple[Shade, ...] = ()
    arrows: tuple[Arrow, ...] = ()
    callouts: tuple[Callout, ...] = ()
    counters: tuple[Counter, ...] = ()
    #: Boxes and tracks beside the map, printed on a page of their own.
    displays: tuple[Display, ...] = ()
    #: How the game's map lays out its hexes (orientation, which way rows
    #: grow on the page); ``HexCell`` positions are axial in this grid.
    grid: Grid = Grid()
    #: Kilometres per hex, for the overview's scale bar (0: unknown).
    hex_km: float = 0.0
    #: Hexes the reader cares about (where their own units stand): a report
    #: prints the tiles holding them (by default, those holding any piece).
    focus: tuple[str, ...] = ()


class PictureError(ValueError):
    """A picture refers to a hex it does not contain, or a kind with no style."""


#: Hex captions' font size (mm): players cite hex ids, so they must read
#: them on the printed page (issue 26: at least 1.8 mm).
CAPTION_FONT = 1.8
#: The smallest text on a counter (mm); a style asking for less gets this.
MIN_COUNTER_TEXT_MM = 1.6
#: How much covering a mm² of each thing costs a callout: pieces and symbols
#: must stay visible, text should, roads and arrows preferably, the small
#: hex captions matter least. A callout pays W_DISTANCE per mm away from its
#: hex, so it stays close when the space there is free.
W_PIECE = 60.0
W_CALLOUT = 60.0
W_LABEL = 12.0
W_ARROW = 12.0
W_LINE = 1.0
W_CAPTION = 0.6
W_DISTANCE = 0.6
#: A leader line crossing a piece or another callout, per mm (text: in proportion to W_LABEL).
W_LEADER = 25.0

# Advance widths in DejaVu Sans (the SVG's first font), in ems, by character class.
_NARROW = frozenset("ijlIJ.,:;'|! ")
_SEMI = frozenset("frt/-()[]")
_WIDE = {"m": 0.97, "w": 0.82, "M": 0.86, "W": 0.99, "+": 0.84, "=": 0.84, "%": 0.95, "@": 1.0}


def text_width(text: str, font_size: float, bold: bool = False) -> float:
    """The width (mm) that ``text`` takes at ``font_size`` mm, estimated from
    DejaVu Sans's advance widths and erring on the wide side (fallback fonts
    are narrower), for laying out boxes around text."""
    em = 0.0
    for ch in text:
        if ch in _NARROW:
            em += 0.3
        elif ch in _SEMI:
            em += 0.4
        elif ch in _WIDE:
            em += _WIDE[ch]
        elif ch.isupper():
            em += 0.72
        else:
            em += 0.64
    return em * font_size * (1.1 if bold else 1.0)


def _line_boxes(pts: list[tuple[float, float]], width: float, weight: float,
                step: float = 1.5) -> list[tuple[float, float, float, float, float]]:
    """Small boxes along a polyline, ``step`` mm apart, standing for it as an obstacle."""
    out = []
    half = max(width, 0.6) / 2
    for (x1, y1), (x2, y2) in itertools.pairwise(pts):
        n = max(1, math.ceil(math.hypot(x2 - x1, y2 - y1) / step))
        for k in range(n + 1):
            x, y = x1 + (x2 - x1) * k / n, y1 + (y2 - y1) * k / n
            out.append((x - half, y - half, x + half, y + half, weight))
    return out


def _entry(a: tuple[float, float], b: tuple[float, float], box: tuple[float, float, float, float]) -> float | None:
    """Where (0..1) the segment from ``a`` to ``b`` first enters ``box``;
    None if ``a`` lies inside the box or the segment misses it."""
    (ax, ay), (bx, by) = a, b
    if box[0] <= ax <= box[2] and box[1] <= ay <= box[3]:
        return None
    lo, hi = 0.0, 1.0
    for p, q in ((-(bx - ax), ax - box[0]), (bx - ax, box[2] - ax), (-(by - ay), ay - box[1]), (by - ay, box[3] - ay)):
        if p == 0:
            if q < 0:
                return None
            continue
        t = q / p
        if p < 0:
            lo = max(lo, t)
        else:
            hi = min(hi, t)
    return lo if lo <= hi else None


def _marker_id(picture: Picture, kind: str) -> str:
    """A safe SVG id for the arrowhead of ``kind`` (kinds are free text)."""
    kinds = list(dict.fromkeys([a.kind for a in picture.arrows] + [e.kind for e in picture.legend]))
    return f"arrowhead-{kinds.index(kind)}"


class _Grid:
    """Obstacle boxes bucketed in square cells, to find those near a box quickly."""

    def __init__(self, cell: float = 6.0) -> None:
        self.cell = cell
        self.cells: dict[tuple[int, int], list[int]] = {}
        self.boxes: list[tuple[float, float, float, float, float]] = []

    def _keys(self, x0: float, y0: float, x1: float, y1: float) -> list[tuple[int, int]]:
        c = self.cell
        return [(i, j) for i in range(math.floor(x0 / c), math.floor(x1 / c) + 1)
                for j in range(math.floor(y0 / c), math.floor(y1 / c) + 1)]

    def add(self, box: tuple[float, float, float, float, float]) -> None:
        self.boxes.append(box)
        for key in self._keys(*box[:4]):
            self.cells.setdefault(key, []).append(len(self.boxes) - 1)

    def near(self, x0: float, y0: float, x1: float, y1: float) -> list[tuple[float, float, float, float, float]]:
        seen: set[int] = set()
        for key in self._keys(x0, y0, x1, y1):
            seen.update(self.cells.get(key, ()))
        return [self.boxes[i] for i in sorted(seen)]

    def cost(self, x0: float, y0: float, x1: float, y1: float) -> float:
        total = 0.0
        for bx0, by0, bx1, by1, weight in self.near(x0, y0, x1, y1):
            w, h = min(x1, bx1) - max(x0, bx0), min(y1, by1) - max(y0, by0)
            if w > 0 and h > 0:
                total += w * h * weight
        return total

    def hits(self, x: float, y: float, min_weight: float) -> float:
        """The weight of the heaviest obstacle at point (x, y) of at least ``min_weight``, else 0."""
        best = 0.0
        for bx0, by0, bx1, by1, weight in self.near(x, y, x, y):
            if weight >= min_weight and bx0 <= x <= bx1 and by0 <= y <= by1:
                best = max(best, weight)
        return best


#: Where a callout may go, as distances from its anchor (hex sizes) and directions (degrees, 0 east, 90 south).
_CALLOUT_DISTANCES = (0.42, 0.7, 1.0, 1.4, 1.9, 2.5, 3.2, 4.0, 5.0)
_CALLOUT_ANGLES = tuple(range(0, 360, 20))


def _callout_columns(c: Callout) -> list[list[str]]:
    rows = c.lines
    ncols = max(1, math.ceil(len(rows) / CALLOUT_ROWS))
    per = math.ceil(len(rows) / ncols) if rows else 0
    return [list(rows[i * per:(i + 1) * per]) for i in range(ncols)]


def _place_callouts(
    callouts: tuple[Callout, ...],
    style: Callable[[str], Style],
    centre: Callable[[str], tuple[float, float]],
    piece_centres: dict[str, list[tuple[float, float]]],
    piece_sides: dict[str, list[float]],
    obstacles: list[tuple[float, float, float, float, float]],
    bounds: tuple[float, float, float, float],
    size: float,
) -> list[dict[str, object]]:
    """Lay out the callouts one by one, the biggest first, each where it
    covers least (weighted by what it covers, see W_*) close to its hex,
    inside ``bounds``; a placed callout is an obstacle to the next ones.
    Returns what the template draws, in the order of ``callouts``."""
    grid = _Grid()
    for box in obstacles:
        grid.add(box)
    sized = []
    for i, c in enumerate(callouts):
        st = style(c.kind)
        fs = st.font_size
        cols = _callout_columns(c)
        widths = [max((text_width(t, fs, st.bold) for t in col), default=0.0) for col in cols]
        title_w = text_width(c.title, fs, True) if c.title else 0.0
        w = max(sum(widths) + CALLOUT_COL_GAP * (len(cols) - 1), title_w) + 2 * CALLOUT_PAD
        n_rows = max((len(col) for col in cols), default=0) + (1 if c.title else 0)
        h = n_rows * fs * CALLOUT_LEADING + 2 * CALLOUT_PAD - (CALLOUT_LEADING - 1) * fs
        sized.append((i, c, st, cols, widths, w, h))
    placed: dict[int, dict[str, object]] = {}
    for i, c, st, cols, widths, w, h in sorted(sized, key=lambda t: -t[5] * t[6]):
        if c.piece >= 0:
            ax, ay = piece_centres[c.hex][c.piece]
            half = piece_sides[c.hex][c.piece] / 2
        else:
            (ax, ay), half = centre(c.hex), 0.0
        best: tuple[float, float, float] | None = None
        for dist in _CALLOUT_DISTANCES:
            d = dist * size
            for deg in _CALLOUT_ANGLES:
                ux, uy = math.cos(math.radians(deg)), math.sin(math.radians(deg))
                x0 = ax + ux * (d + w / 2) - w / 2
                y0 = ay + uy * (d + h / 2) - h / 2
                if x0 < bounds[0] or y0 < bounds[1] or x0 + w > bounds[2] or y0 + h > bounds[3]:
                    continue
                cost = grid.cost(x0, y0, x0 + w, y0 + h) + W_DISTANCE * d
                if best is not None and cost >= best[0]:
                    continue
                cost += _leader_cost(grid, (ax, ay), half, (x0, y0, x0 + w, y0 + h))
                if best is None or cost < best[0]:
                    best = (cost, x0, y0)
        if best is None:  # no room inside the bounds: at the hex, clipped by nothing
            best = (0.0, ax - w / 2, ay + half)
        _, x0, y0 = best
        grid.add((x0 - 0.4, y0 - 0.4, x0 + w + 0.4, y0 + h + 0.4, W_CALLOUT))
        (sx, sy), (ex, ey) = _leader((ax, ay), half, (x0, y0, x0 + w, y0 + h))
        fs = st.font_size
        texts = []
        y = y0 + CALLOUT_PAD + fs * 0.8
        if c.title:
            texts.append({"x": _fmt(x0 + CALLOUT_PAD), "y": _fmt(y), "text": c.title, "bold": True})
            y += fs * CALLOUT_LEADING
        x = x0 + CALLOUT_PAD
        for col, cw in zip(cols, widths):
            for k, t in enumerate(col):
                texts.append({"x": _fmt(x), "y": _fmt(y + k * fs * CALLOUT_LEADING), "text": t, "bold": st.bold})
            x += cw + CALLOUT_COL_GAP
        placed[i] = {"style": st, "x": _fmt(x0), "y": _fmt(y0), "w": _fmt(w), "h": _fmt(h), "texts": texts,
                     "x1": _fmt(sx), "y1": _fmt(sy), "x2": _fmt(ex), "y2": _fmt(ey),
                     "leader": math.hypot(ex - sx, ey - sy) > 0.3}
    return [placed[i] for i in range(len(callouts))]


def _leader(anchor: tuple[float, float], half: float, box: tuple[float, float, float, float]
            ) -> tuple[tuple[float, float], tuple[float, float]]:
    """The leader line from the edge of the anchor's piece (a square of half
    side ``half``) to the nearest point of the box."""
    ax, ay = anchor
    ex, ey = min(max(ax, box[0]), box[2]), min(max(ay, box[1]), box[3])
    dx, dy = ex - ax, ey - ay
    m = max(abs(dx), abs(dy))
    if m <= half or m == 0:
        return (ex, ey), (ex, ey)
    k = half / m
    return (ax + dx * k, ay + dy * k), (ex, ey)


def _leader_cost(grid: _Grid, anchor: tuple[float, float], half: float,
                 box: tuple[float, float, float, float]) -> float:
    (sx, sy), (ex, ey) = _leader(anchor, half, box)
    length = math.hypot(ex - sx, ey - sy)
    n = math.ceil(length)
    cost = 0.0
    for k in range(1, n):
        x, y = sx + (ex - sx) * k / n, sy + (ey - sy) * k / n
        # Through a piece or a callout costs most, through text less.
        cost += W_LEADER * grid.hits(x, y, W_LABEL) / W_PIECE
    return cost


def _fmt(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if x % 1 else str(int(x))


def _points(pts: list[tuple[float, float]]) -> str:
    return " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in pts)


def _symbol_points(shape: str, cx: float, cy: float, s: float) -> str:
    if shape == "square":
        pts = [(cx - s, cy - s), (cx + s, cy - s), (cx + s, cy + s), (cx - s, cy + s)]
    elif shape == "diamond":
        pts = [(cx, cy - s * 1.3), (cx + s, cy), (cx, cy + s * 1.3), (cx - s, cy)]
    elif shape == "triangle":
        pts = [(cx, cy - s * 1.2), (cx + s * 1.1, cy + s * 0.8), (cx - s * 1.1, cy + s * 0.8)]
    elif shape == "star":
        pts = []
        for i in range(10):
            rad = s * (1.25 if i % 2 == 0 else 0.5)
            ang = math.radians(-90 + 36 * i)
            pts.append((cx + rad * math.cos(ang), cy + rad * math.sin(ang)))
    else:
        raise PictureError(f"not a polygon shape: {shape!r}")
    return _points(pts)


def _invisible(st: Style, text: str) -> bool:
    return st.fill in ("none", "") and st.stroke in ("none", "") and not text


def _symbol_half_width(st: Style) -> float:
    return st.size * {"triangle": 1.1, "star": 1.25}.get(st.shape, 1.0)


class _HexLayout(msgspec.Struct):
    """Offsets (mm) from a hex centre: of its symbols by index, of its pieces with their side."""

    symbols: dict[int, tuple[float, float]]
    pieces: list[tuple[float, float, float]]


def _layout_pieces(picture: Picture, size: float, style: Callable[[str], Style]) -> dict[str, _HexLayout]:
    """Where the symbols and pieces of every hex holding pieces go: one row
    (symbols first, then the pieces in order) centred on the hex centre,
    pieces shrunk to fit ROW_MAX, wrapped into more rows if they still do not."""
    by_hex: dict[str, list[Piece]] = {}
    for piece in picture.pieces:
        by_hex.setdefault(piece.hex, []).append(piece)
    syms: dict[str, list[float]] = {}
    for sym in picture.symbols:
        if sym.hex in by_hex and not sym.is_fixed:
            syms.setdefault(sym.hex, []).append(2 * _symbol_half_width(style(sym.kind)))
    out: dict[str, _HexLayout] = {}
    for hex_, ps in by_hex.items():
        sym_w = syms.get(hex_, [])
        widths = [PIECE_SPACER if _invisible(style(p.kind), p.text) else PIECE_SIDE for p in ps]

        def row_scale(lo: int, hi: int, with_syms: bool, sym_w: list[float] = sym_w,
                      widths: list[float] = widths) -> float:
            fixed = sum(sym_w) if with_syms else 0.0
            n_items = (len(sym_w) if with_syms else 0) + hi - lo
            scalable = (sum(widths[lo:hi]) + PIECE_GAP * (n_items - 1)) * size
            room = ROW_MAX * size - fixed
            return 1.0 if scalable <= room else max(room, 0.0) / scalable

        # Greedy rows: as many pieces as fit at the smallest allowed scale.
        rows: list[tuple[int, int]] = []
        lo = 0
        while lo < len(ps):
            hi = lo + 1
            while hi < len(ps) and row_scale(lo, hi + 1, not rows) >= MIN_PIECE_SCALE:
                hi += 1
            rows.append((lo, hi))
            lo = hi
        scale = max(min(min(row_scale(a, b, i == 0) for i, (a, b) in enumerate(rows)), 1.0), 0.3)
        side = PIECE_SIDE * size * scale
        pitch = side + PIECE_GAP * size * scale
        layout = _HexLayout(symbols={}, pieces=[])
        for i, (a, b) in enumerate(rows):
            y = (i - (len(rows) - 1) / 2) * pitch
            items: list[tuple[str, int, float]] = []
            if i == 0:
                items += [("s", k, w) for k, w in enumerate(sym_w)]
            items += [("p", j, widths[j] * size * scale) for j in range(a, b)]
            gap = PIECE_GAP * size * scale
            total = sum(w for _, _, w in items) + gap * (len(items) - 1)
            x = -total / 2
            for what, k, w in items:
                if what == "s":
                    layout.symbols[k] = (x + w / 2, y)
                else:
                    layout.pieces.append((x + w / 2, y, side))
                x += w + gap
        out[hex_] = layout
    return out


def _styler(picture: Picture) -> Callable[[str], Style]:
    def style(kind: str) -> Style:
        try:
            return picture.styles[kind]
        except KeyError:
            raise PictureError(f"no style for kind {kind!r}") from None
    return style


@dataclass(frozen=True, slots=True)
class _Extent:
    """Where the hex centres lie at size 1 (origin at axial (0, 0)), and one
    hex's width and height: enough to scale and place a map."""

    min_x: float
    min_y: float
    max_x: float
    max_y: float
    hex_w: float
    hex_h: float

    @property
    def span_x(self) -> float:
        return self.max_x - self.min_x + self.hex_w

    @property
    def span_y(self) -> float:
        return self.max_y - self.min_y + self.hex_h


def _extent(picture: Picture) -> _Extent:
    if not picture.hexes:
        raise PictureError("a picture needs at least one hex")
    pts = [picture.grid.centre(Axial(h.q, h.r), 1.0) for h in picture.hexes]
    w, h = picture.grid.extent(1.0)
    return _Extent(min(x for x, _ in pts), min(y for _, y in pts), max(x for x, _ in pts), max(y for _, y in pts), w, h)


def _draw(picture: Picture, size: float, ox: float, oy: float,
          bounds: tuple[float, float, float, float]) -> dict[str, object]:
    """Everything on the map itself (hexes to callouts) at hex ``size``, the
    hex at axial (0, 0) centred at (ox, oy); callouts stay inside
    ``bounds``. Returns the template's variables for templates/map-body.svg.j2."""
    grid = picture.grid
    style = _styler(picture)
    cells = {h.id: h for h in picture.hexes}

    def cell(hex_: str) -> HexCell:
        try:
            return cells[hex_]
        except KeyError:
            raise PictureError(f"no hex {hex_!r} in the picture") from None

    def centre(hex_: str) -> tuple[float, float]:
        h = cell(hex_)
        x, y = grid.centre(Axial(h.q, h.r), size)
        return ox + x, oy + y

    def corners(cx: float, cy: float, s: float) -> list[tuple[float, float]]:
        return grid.corners(cx, cy, s)

    hexes = []
    for h in picture.hexes:
        cx, cy = centre(h.id)
        st = style(h.kind)
        hexes.append(
            {
                "id": h.id,
                "points": _points(corners(cx, cy, size)),
                "style": st,
                "caption": h.caption,
                "cx": _fmt(cx),
                "cap_y": _fmt(cy - size * CAPTION_DY),
            }
        )

    sides = []
    for f in picture.hexsides:
        (ax, ay), (bx, by) = centre(f.a), centre(f.b)
        dist = math.hypot(bx - ax, by - ay)
        if abs(dist - grid.across_flats(size)) > 1e-6 * size:
            raise PictureError(f"hexside {f.a}-{f.b}: the hexes are not adjacent")
        mx, my = (ax + bx) / 2, (ay + by) / 2
        ux, uy = -(by - ay) / dist, (bx - ax) / dist
        half = size / 2
        p1, p2 = (mx - ux * half, my - uy * half), (mx + ux * half, my + uy * half)
        st = style(f.kind)
        segs: list[tuple[tuple[float, float], tuple[float, float]]]
        if st.pattern == "ends":
            third = ((p2[0] - p1[0]) / 3, (p2[1] - p1[1]) / 3)
            segs = [(p1, (p1[0] + third[0], p1[1] + third[1])), ((p2[0] - third[0], p2[1] - third[1]), p2)]
        else:
            segs = [(p1, p2)]
        if st.pattern == "teeth":
            tx, ty = (ax - mx) / dist * size * 0.35, (ay - my) / dist * size * 0.35
            for k in (1, 2, 3):
                px = p1[0] + (p2[0] - p1[0]) * k / 4
                py = p1[1] + (p2[1] - p1[1]) * k / 4
                segs.append(((px, py), (px + tx, py + ty)))
        sides.append(
            {
                "style": st,
                "segments": [
                    {"x1": _fmt(s[0][0]), "y1": _fmt(s[0][1]), "x2": _fmt(s[1][0]), "y2": _fmt(s[1][1])}
                    for s in segs
                ],
            }
        )

    roads = []
    for road in picture.roads:
        if len(road.hexes) < 2:
            raise PictureError(f"road {road.kind!r} needs at least two hexes")
        pts = [centre(h) for h in road.hexes]
        roads.append({"style": style(road.kind), "points": _points(pts)})

    # Pieces stand side by side in one row per hex (more rows if many), after
    # the hex's symbols, which leave the centre so that no piece hides them.
    layout = _layout_pieces(picture, size, style)
    sym_seen: dict[str, int] = {}
    # The row of symbols and pieces of each hex with pieces, box by box (arrows stop before it).
    row_boxes: dict[str, list[tuple[float, float, float, float]]] = {}

    symbols = []
    for sym in picture.symbols:
        cx, cy = centre(sym.hex)
        if sym.is_fixed:
            cx, cy = cx + sym.dx * size, cy + sym.dy * size
        elif sym.hex in layout:
            k = sym_seen.get(sym.hex, 0)
            sym_seen[sym.hex] = k + 1
            ddx, ddy = layout[sym.hex].symbols.get(k, (0.0, 0.0))
            cx, cy = cx + ddx, cy + ddy
            half = _symbol_half_width(style(sym.kind))
            row_boxes.setdefault(sym.hex, []).append((cx - half, cy - half, cx + half, cy + half))
        st = style(sym.kind)
        symbols.append(
            {
                "style": st,
                "shape": st.shape,
                "cx": _fmt(cx),
                "cy": _fmt(cy),
                "r": _fmt(st.size),
                "points": "" if st.shape == "circle" else _symbol_points(st.shape, cx, cy, st.size),
                "text": sym.text,
                "ty": _fmt(cy + st.font_size * 0.35),
            }
        )

    pieces = []
    piece_centres: dict[str, list[tuple[float, float]]] = {}
    piece_sides: dict[str, list[float]] = {}
    # What callouts should not cover, as boxes (x0, y0, x1, y1) with a weight per mm² covered.
    obstacles: list[tuple[float, float, float, float, float]] = []
    piece_seen: dict[str, int] = {}
    for piece in picture.pieces:
        cx, cy = centre(piece.hex)
        n = piece_seen.get(piece.hex, 0)
        piece_seen[piece.hex] = n + 1
        st = style(piece.kind)
        ddx, ddy, side = layout[piece.hex].pieces[n]
        px, py = cx + ddx, cy + ddy
        piece_centres.setdefault(piece.hex, []).append((px, py))
        piece_sides.setdefault(piece.hex, []).append(side)
        if _invisible(st, piece.text):
            continue
        obstacles.append((px - side / 2, py - side / 2, px + side / 2, py + side / 2, W_PIECE))
        row_boxes.setdefault(piece.hex, []).append((px - side / 2, py - side / 2, px + side / 2, py + side / 2))
        x, y = px - side / 2, py - side / 2
        font = max(st.font_size, MIN_COUNTER_TEXT_MM)
        pieces.append(
            {
                "style": st,
                "x": _fmt(x),
                "y": _fmt(y),
                "w": _fmt(side),
                "tx": _fmt(px),
                "ty": _fmt(py + font * 0.35),
                "font": font,
                "text": piece.text,
            }
        )

    labels = []
    for lab in picture.labels:
        cx, cy = centre(lab.hex)
        if lab.piece >= 0:
            at = piece_centres.get(lab.hex, [])
            if lab.piece >= len(at):
                raise PictureError(f"label {lab.text!r}: no piece {lab.piece} in hex {lab.hex!r}")
            cx, cy = at[lab.piece]
        st = style(lab.kind)
        lx, ly = cx + lab.dx * size, cy + lab.dy * size
        labels.append({"style": st, "x": _fmt(lx), "y": _fmt(ly), "text": lab.text})
        half = text_width(lab.text, st.font_size, st.bold) / 2
        obstacles.append((lx - half, ly - 0.8 * st.font_size, lx + half, ly + 0.25 * st.font_size, W_LABEL))

    for placed in symbols:
        r = float(str(placed["r"])) * 1.25
        x, y = float(str(placed["cx"])), float(str(placed["cy"]))
        obstacles.append((x - r, y - r, x + r, y + r, W_PIECE))
    for drawn in hexes:
        if drawn["caption"]:
            x, y = float(str(drawn["cx"])), float(str(drawn["cap_y"]))
            half = text_width(str(drawn["caption"]), CAPTION_FONT) / 2
            obstacles.append((x - half, y - CAPTION_FONT, x + half, y + 0.2 * CAPTION_FONT, W_CAPTION))
    for road in picture.roads:
        obstacles += _line_boxes([centre(h) for h in road.hexes], style(road.kind).width, W_LINE)

    arrows = []
    for arrow in picture.arrows:
        if len(arrow.hexes) < 2:
            raise PictureError(f"arrow {arrow.kind!r} needs at least two hexes")
        pts = [centre(h) for h in arrow.hexes]
        (x1, y1), (x2, y2) = pts[-2], pts[-1]
        d = math.hypot(x2 - x1, y2 - y1) or 1.0
        short = min(ARROW_SHORT * size, d * 0.6)
        boxes = row_boxes.get(arrow.hexes[-1])
        if boxes:
            # The head touches the pieces there instead of hiding under them.
            box = (min(b[0] for b in boxes) - ARROW_GAP, min(b[1] for b in boxes) - ARROW_GAP,
                   max(b[2] for b in boxes) + ARROW_GAP, max(b[3] for b in boxes) + ARROW_GAP)
            t = _entry(pts[-2], pts[-1], box)
            short = (1 - t) * d if t is not None else short
        pts[-1] = (x2 - (x2 - x1) / d * short, y2 - (y2 - y1) / d * short)
        st = style(arrow.kind)
        arrows.append({"style": st, "points": _points(pts), "marker": _marker_id(picture, arrow.kind)})
        obstacles += _line_boxes(pts, st.width, W_ARROW)
        hx, hy = pts[-1]
        obstacles.append((hx - st.size, hy - st.size, hx + st.size, hy + st.size, W_PIECE))  # the head

    shades = []
    for shade in picture.shades:
        cx, cy = centre(shade.hex)
        shades.append({"style": style(shade.kind), "points": _points(corners(cx, cy, size))})

    counters = _draw_counters(picture, picture.counters, size, centre, below=size * 0.12)
    for stack in counters:
        x, y, w = float(str(stack["x"])), float(str(stack["y"])), float(str(stack["w"]))
        obstacles.append((x, y - STACK_STEP * STACK_LAYERS, x + w + STACK_STEP * STACK_LAYERS, y + w, W_PIECE))
    for c in picture.callouts:
        cell(c.hex)
        if c.piece >= len(piece_centres.get(c.hex, [])):
            raise PictureError(f"callout {c.title or c.hex!r}: no piece {c.piece} in hex {c.hex!r}")
    callouts = _place_callouts(picture.callouts, style, centre, piece_centres, piece_sides, obstacles, bounds, size)
    return {
        "hexes": hexes, "shades": shades, "sides": sides, "roads": roads, "arrows": arrows,
        "callouts": callouts, "symbols": symbols, "labels": labels, "pieces": pieces, "counters": counters,
        "caption_font": CAPTION_FONT,
    }


def _nato(kind: CounterType, x: float, y: float, w: float, h: float) -> dict[str, object]:
    """The lines, ovals and dots of a NATO (APP-6) type symbol in the frame
    at (x, y), ``w`` x ``h`` (mm)."""
    lines: list[tuple[float, float, float, float]] = []
    ovals: list[tuple[float, float, float, float]] = []
    dots: list[tuple[float, float, float]] = []
    cross = [(x, y, x + w, y + h), (x, y + h, x + w, y)]
    cx, cy = x + w / 2, y + h / 2
    track = (cx, cy, w * 0.32, h * 0.28)
    if kind in ("infantry", "motorised", "airborne", "air_assault", "mechanised"):
        lines += cross
    if kind == "motorised":
        lines.append((cx, y, cx, y + h))
    if kind == "airborne":
        # The wings: an arc at the foot of the frame, drawn as two short strokes.
        lines += [(cx - w * 0.22, y + h * 0.85, cx, y + h * 0.7), (cx, y + h * 0.7, cx + w * 0.22, y + h * 0.85)]
    if kind == "air_assault":
        lines += [(cx - w * 0.2, y + h * 0.15, cx + w * 0.2, y + h * 0.15)]
    if kind in ("mechanised", "armour"):
        ovals.append(track)
    if kind == "recon":
        lines.append((x, y + h, x + w, y))
        ovals.append(track)
    if kind == "artillery":
        dots.append((cx, cy, h * 0.18))
    if kind == "supply":
        lines.append((x, y + h * 0.72, x + w, y + h * 0.72))
    if kind == "transport":
        ovals.append((cx, cy, h * 0.3, h * 0.3))
        lines += [(cx - h * 0.3, cy, cx + h * 0.3, cy), (cx, cy - h * 0.3, cx, cy + h * 0.3)]
    return {"lines": [tuple(_fmt(v) for v in ln) for ln in lines],
            "ovals": [tuple(_fmt(v) for v in o) for o in ovals],
            "dots": [tuple(_fmt(v) for v in d) for d in dots]}


def _draw_counters(picture: Picture, counters: Sequence[Counter], size: float,
                   centre: Callable[[str], tuple[float, float]], below: float = 0.0) -> list[dict[str, object]]:
    """Each place's stack of counters (a hex, or a display's slot), centred
    ``below`` mm under the place's centre (on the map, the hex id stays
    readable above it): the lower counters as edges stepping up and right,
    the top one in full."""
    style = _styler(picture)
    stacks: dict[str, list[Counter]] = {}
    for c in counters:
        stacks.setdefault(c.hex, []).append(c)
    out = []
    side = COUNTER_SIDE * size
    for hex_, pile in stacks.items():
        cx, cy = centre(hex_)
        under = min(len(pile) - 1, STACK_LAYERS)
        # The whole stack, layers included, is centred on the hex.
        x = cx - side / 2 - under * STACK_STEP / 2
        y = cy - side / 2 + under * STACK_STEP / 2 + below
        layers = [{"x": _fmt(x + k * STACK_STEP), "y": _fmt(y - k * STACK_STEP), "style": style(c.kind)}
                  for k, c in enumerate(pile[-1 - under:-1])]
        top = pile[-1]
        st = style(top.kind)
        tx, ty = x + under * STACK_STEP, y - under * STACK_STEP
        # Top to bottom: the id, the echelon mark, the type frame, the figures.
        fw, fh = side * 0.52, side * 0.3
        fx, fy = tx + (side - fw) / 2, ty + side * 0.38
        id_font = max(MIN_COUNTER_TEXT_MM, side * 0.18)
        fig_font = max(MIN_COUNTER_TEXT_MM, side * 0.26)
        out.append({
            "x": _fmt(tx), "y": _fmt(ty), "w": _fmt(side), "style": st, "layers": layers,
            "id": top.back if top.flipped and top.back else top.id,
            "id_x": _fmt(tx + side / 2), "id_y": _fmt(ty + side * 0.05 + id_font * 0.8), "id_font": _fmt(id_font),
            "frame": {"x": _fmt(fx), "y": _fmt(fy), "w": _fmt(fw), "h": _fmt(fh),
                      "fill": top.symbol_fill or st.fill} if top.type != "none" else None,
            "nato": _nato(top.type, fx, fy, fw, fh) if top.type != "none" else None,
            "echelon": ECHELON_MARKS[top.echelon],
            "ech_y": _fmt(fy - side * 0.02), "ech_font": _fmt(max(MIN_COUNTER_TEXT_MM * 0.8, side * 0.13)),
            "figures": top.figures, "fig_y": _fmt(ty + side - side * 0.06), "fig_font": _fmt(fig_font),
            "flipped": top.flipped,
            "count": str(len(pile)) if len(pile) > 1 else "",
            "count_x": _fmt(tx + side), "count_y": _fmt(ty), "count_r": _fmt(max(1.1, side * 0.17)),
            "count_font": _fmt(MIN_COUNTER_TEXT_MM),
        })
    return out


def _markers(picture: Picture) -> list[dict[str, object]]:
    style = _styler(picture)
    return [{"id": _marker_id(picture, kind), "style": style(kind)}
            for kind in dict.fromkeys([a.kind for a in picture.arrows]
                                      + [e.kind for e in picture.legend if e.shape == "arrow"])]


def _legend(picture: Picture, top: float, page_w: float) -> list[dict[str, object]]:
    """The legend's entries in rows of five from ``top`` (mm) down."""
    style = _styler(picture)
    grid = picture.grid
    legend = []
    col_w = (page_w - 2 * MARGIN_MM) / 5
    for i, entry in enumerate(picture.legend):
        st = style(entry.kind)
        x = MARGIN_MM + (i % 5) * col_w
        y = top + (i // 5) * LEGEND_ROW_MM + LEGEND_ROW_MM / 2
        item: dict[str, object] = {"style": st, "shape": entry.shape, "text": entry.text, "chip": None}
        item["tx"], item["ty"] = _fmt(x + 10), _fmt(y + 1.2)
        item["y"] = _fmt(y)
        if entry.shape == "hex":
            item["points"] = _points(grid.corners(x + 4, y, 2.6))
        elif entry.shape == "symbol":
            item["sym_shape"] = st.shape
            item["cx"], item["cy"] = _fmt(x + 4), _fmt(y)
            item["r"] = _fmt(min(st.size, 2.2))
            item["points"] = "" if st.shape == "circle" else _symbol_points(st.shape, x + 4, y, min(st.size, 2.2))
        elif entry.shape == "piece":
            item["px"], item["py"] = _fmt(x + 2), _fmt(y - 2)
        elif entry.shape == "arrow":
            item["points"] = _points([(x, y), (x + 7, y)])
            item["marker"] = _marker_id(picture, entry.kind)
        elif entry.shape == "callout":
            item["px"], item["py"] = _fmt(x + 3.2), _fmt(y - 1.6)
            item["x1"], item["x2"] = _fmt(x), _fmt(x + 3.2)
        else:
            ends = entry.shape == "edge" and st.pattern == "ends"
            item["segments"] = [(_fmt(x), _fmt(x + 2.7)), (_fmt(x + 5.3), _fmt(x + 8))] if ends else [(_fmt(x), _fmt(x + 8))]
            if _pale(st.stroke):
                # A pale line (drawn on the sea, say) would vanish on white paper: a grey chip behind it.
                item["chip"] = {"x": _fmt(x - 0.8), "y": _fmt(y - 1.6), "w": _fmt(9.6), "h": _fmt(3.2)}
        legend.append(item)
    return legend


def _pale(colour: str) -> bool:
    """Whether a '#rrggbb' colour is too light to see on white paper."""
    if len(colour) != 7 or not colour.startswith("#"):
        return colour in ("white", "#fff")
    try:
        r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    except ValueError:
        return False
    return 0.2126 * r + 0.7152 * g + 0.0722 * b > 200


def _legend_height(picture: Picture) -> float:
    rows = math.ceil(len(picture.legend) / 5) if picture.legend else 0
    return rows * LEGEND_ROW_MM + (3 if rows else 0)


def page_size(page: PageName) -> tuple[float, float]:
    """Width and height (mm) of a landscape page."""
    try:
        return PAGES[page]
    except KeyError:
        raise PictureError(f"no page size {page!r}: choose one of {', '.join(PAGES)}") from None


def _fit(picture: Picture, page: PageName) -> tuple[float, _Extent]:
    """The widest hex size (centre to corner, mm) at which the whole map,
    its title and legend fit on one page."""
    page_w, page_h = page_size(page)
    ext = _extent(picture)
    avail_w = page_w - 2 * MARGIN_MM
    avail_h = page_h - 2 * MARGIN_MM - TITLE_MM - _legend_height(picture)
    return min(avail_w / ext.span_x, avail_h / ext.span_y), ext


def render_svg(picture: Picture, page: PageName = "a4", *, tiles: Sequence[TileWindow] = ()) -> str:
    """The picture as a standalone SVG document on one landscape page,
    scaled to fit; A4 fits Letter too. With ``tiles`` (the overview of a
    tiled map), each tile's window is outlined and named, and a scale bar
    shows the scaling.

    Raises PictureError if an element names a hex the picture does not
    contain or a kind that has no style.
    """
    from pbem.resources import template_env

    page_w, page_h = page_size(page)
    size, ext = _fit(picture, page)
    avail_w = page_w - 2 * MARGIN_MM
    map_w = ext.span_x * size
    ox = MARGIN_MM + (avail_w - map_w) / 2 - ext.min_x * size + ext.hex_w * size / 2
    oy = MARGIN_MM + TITLE_MM - ext.min_y * size + ext.hex_h * size / 2
    map_bottom = oy + (ext.max_y + ext.hex_h / 2) * size
    bounds = (MARGIN_MM, MARGIN_MM + TITLE_MM, page_w - MARGIN_MM, map_bottom + 2.0)
    body = _draw(picture, size, ox, oy, bounds)
    outlines = []
    if tiles:
        # The tiles' windows were laid out at the tiles' own hex size.
        k = size / tiles[0].size
        for t in tiles:
            x, y = ox + (t.x - t.ox) * k, oy + (t.y - t.oy) * k
            outlines.append({"name": t.name, "x": _fmt(x), "y": _fmt(y), "w": _fmt(t.w * k), "h": _fmt(t.h * k),
                             "tx": _fmt(x + 1.2), "ty": _fmt(y + 4.2)})
    scale = _scale_bar(picture, size, MARGIN_MM, page_h - MARGIN_MM + 3.5) if tiles else None
    template = template_env().get_template("map.svg.j2")
    return template.render(
        width=_fmt(page_w),
        height=_fmt(page_h),
        title=picture.title,
        subtitle=picture.subtitle,
        title_x=_fmt(MARGIN_MM),
        title_y=_fmt(MARGIN_MM + 5),
        subtitle_y=_fmt(MARGIN_MM + 9.5),
        markers=_markers(picture),
        legend=_legend(picture, map_bottom + 3.0, page_w),
        outlines=outlines,
        scale=scale,
        fmt=_fmt,
        **body,
    )


def _scale_bar(picture: Picture, size: float, x: float, y: float) -> dict[str, object]:
    """A bar a few hexes long at the overview's scale, with its length in
    hexes (and km where the picture says how long a hex is)."""
    across = picture.grid.across_flats(size)
    n = 5
    text = f"{n} hexes" + (f" = {n * picture.hex_km:g} km" if picture.hex_km else "")
    return {"x1": _fmt(x), "x2": _fmt(x + n * across), "y": _fmt(y - 3.0),
            "ticks": [_fmt(x + i * across) for i in range(n + 1)],
            "tx": _fmt(x + n * across + 2.0), "ty": _fmt(y - 2.2), "text": text}


class TileWindow(msgspec.Struct, frozen=True):
    """One tile of a map too large for a page at playing size: its name
    (column letter, row number: "A1" top left), and the window it shows of
    the whole map drawn at hex ``size`` with axial (0, 0) at (ox, oy)."""

    name: str
    x: float
    y: float
    w: float
    h: float
    size: float
    ox: float
    oy: float
    left: str = ""
    right: str = ""
    up: str = ""
    down: str = ""


class MapPage(msgspec.Struct, frozen=True):
    """One page of a map: "map" (the whole map on one page), "overview",
    or a tile's name; and its SVG."""

    name: str
    svg: str


def hex_size_on_page(picture: Picture, page: PageName = "a4") -> float:
    """The hex size across flats (mm) of the one-page rendering."""
    size, _ = _fit(picture, page)
    return picture.grid.across_flats(size)


def tile_windows(picture: Picture, page: PageName = "a4", min_hex: float = MIN_HEX_MM) -> list[TileWindow]:
    """The tiles that show the whole map with hexes ``min_hex`` mm across
    flats, each a page's map area, overlapping their neighbours by a hex."""
    page_w, page_h = page_size(page)
    ext = _extent(picture)
    size = min_hex / picture.grid.across_flats(1.0)
    pad = 2.0
    ox = pad - ext.min_x * size + ext.hex_w * size / 2
    oy = pad - ext.min_y * size + ext.hex_h * size / 2
    total_w, total_h = ext.span_x * size + 2 * pad, ext.span_y * size + 2 * pad
    win_w = page_w - 2 * MARGIN_MM
    win_h = page_h - 2 * MARGIN_MM - TILE_HEADER_MM - TILE_EDGE_MM
    overlap_x, overlap_y = ext.hex_w * size, ext.hex_h * size

    def cuts(total: float, win: float, overlap: float) -> list[float]:
        if total <= win:
            return [0.0]
        n = math.ceil((total - overlap) / (win - overlap))
        step = (total - win) / (n - 1)
        return [i * step for i in range(n)]

    xs, ys = cuts(total_w, win_w, overlap_x), cuts(total_h, win_h, overlap_y)

    def name(i: int, j: int) -> str:
        if 0 <= i < len(xs) and 0 <= j < len(ys):
            return f"{_column_letters(i)}{j + 1}"
        return ""

    return [TileWindow(name(i, j), x, y, min(win_w, total_w), min(win_h, total_h), size, ox, oy,
                       left=name(i - 1, j), right=name(i + 1, j), up=name(i, j - 1), down=name(i, j + 1))
            for j, y in enumerate(ys) for i, x in enumerate(xs)]


def _column_letters(i: int) -> str:
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(ord("A") + r) + out
    return out


def _in_window(picture: Picture, cells: dict[str, HexCell], t: TileWindow, hexes: Sequence[str]) -> bool:
    for hid in hexes:
        h = cells.get(hid)
        if h is None:
            raise PictureError(f"no hex {hid!r} in the picture")
        x, y = picture.grid.centre(Axial(h.q, h.r), t.size)
        if t.x <= x + t.ox <= t.x + t.w and t.y <= y + t.oy <= t.y + t.h:
            return True
    return False


def render_displays(picture: Picture, page: PageName = "a4") -> list[MapPage]:
    """The picture's boxes and tracks on pages of their own ("displays",
    "displays-2" ...), counters at the size they have on 12 mm hexes, each
    display a titled frame of square cells; a track's cells are labelled."""
    from pbem.resources import template_env

    page_w, page_h = page_size(page)
    size = MIN_HEX_MM / math.sqrt(3.0)
    cell = COUNTER_SIDE * size + 2.5 + STACK_STEP * STACK_LAYERS
    per_row = max(1, int((page_w - 2 * MARGIN_MM - 2.0) // cell))
    top = MARGIN_MM + TILE_HEADER_MM
    pages: list[list[dict[str, object]]] = [[]]
    y = top
    for d in picture.displays:
        slots = list(d.cells) or list(dict.fromkeys(c.hex for c in d.counters)) or [""]
        unknown = [c.hex for c in d.counters if d.cells and c.hex not in d.cells]
        if unknown:
            raise PictureError(f"display {d.id!r} has no cell {unknown[0]!r}")
        rows = math.ceil(len(slots) / per_row)
        height = 6.0 + rows * cell + 2.0
        if y + height > page_h - MARGIN_MM and pages[-1]:
            pages.append([])
            y = top
        places: dict[str, tuple[float, float]] = {}
        cells = []
        for k, slot in enumerate(slots):
            cx = MARGIN_MM + 1.0 + (k % per_row) * cell
            cy = y + 6.0 + (k // per_row) * cell
            places[slot] = (cx + cell / 2, cy + cell / 2)
            cells.append({"x": _fmt(cx), "y": _fmt(cy), "label": slot if d.cells else "",
                          "lx": _fmt(cx + 0.8), "ly": _fmt(cy + 2.3)})
        width = max(min(len(slots), per_row) * cell, text_width(d.title, 3.0, bold=True) + 1.0) + 2.0
        pages[-1].append({
            "title": d.title, "x": _fmt(MARGIN_MM), "y": _fmt(y), "w": _fmt(width), "h": _fmt(height - 2.0),
            "tx": _fmt(MARGIN_MM + 1.0), "ty": _fmt(y + 4.3), "cell": _fmt(cell), "cells": cells,
            "counters": _draw_counters(picture, d.counters, size, places.__getitem__, below=1.0),
        })
        y += height + 2.0
    template = template_env().get_template("map-displays.svg.j2")
    out = []
    for i, boxes in enumerate(pages):
        name = "displays" if i == 0 else f"displays-{i + 1}"
        counters = [c for b in boxes for c in cast("list[dict[str, object]]", b["counters"])]
        out.append(MapPage(name, template.render(
            width=_fmt(page_w), height=_fmt(page_h), title=picture.title, boxes=boxes, counters=counters,
            markers=[], title_x=_fmt(MARGIN_MM), title_y=_fmt(MARGIN_MM + 5), fmt=_fmt)))
    return out


def render_pages(picture: Picture, page: PageName = "a4", min_hex: float = MIN_HEX_MM, *,
                 focused: bool = False) -> list[MapPage]:
    """The map for printing and play: one page when the whole map fits with
    hexes at least ``min_hex`` mm across flats (PLAN: 12 mm for play);
    otherwise an overview page, scaled to fit, with the legend, a scale bar
    and the tiles outlined, followed by the tiles at ``min_hex``, each
    naming its neighbours at its edges. ``focused``: only the tiles showing
    a hex of ``picture.focus`` (or, without focus, a piece or counter), for
    a report."""
    from pbem.resources import template_env

    displays = render_displays(picture, page) if picture.displays else []
    if hex_size_on_page(picture, page) >= min_hex:
        return [MapPage("map", render_svg(picture, page)), *displays]
    windows = tile_windows(picture, page, min_hex)
    pages = [MapPage("overview", render_svg(picture, page, tiles=windows))]
    page_w, page_h = page_size(page)
    w0 = windows[0]
    ext = _extent(picture)
    total = (ext.span_x * w0.size + 4.0, ext.span_y * w0.size + 4.0)
    body = _draw(picture, w0.size, w0.ox, w0.oy, (0.0, 0.0, total[0], total[1]))
    template = template_env().get_template("map-tile.svg.j2")
    top = MARGIN_MM + TILE_HEADER_MM
    wanted = picture.focus or tuple(dict.fromkeys([p.hex for p in picture.pieces] + [c.hex for c in picture.counters]))
    cells = {h.id: h for h in picture.hexes}
    for t in windows:
        if focused and not _in_window(picture, cells, t, wanted):
            continue
        mid_x, mid_y = MARGIN_MM + t.w / 2, top + t.h / 2
        # (text, x, y, rotation): the up-pointing triangle of a side label,
        # turned to read along the edge, points off the page.
        marks = [(f"\u25b2 {t.up}", mid_x, top - 1.0, 0) if t.up else None,
                 (f"\u25bc {t.down}", mid_x, top + t.h + 4.0, 0) if t.down else None,
                 (f"\u25b2 {t.left}", MARGIN_MM - 2.0, mid_y, -90) if t.left else None,
                 (f"\u25b2 {t.right}", MARGIN_MM + t.w + 2.0, mid_y, 90) if t.right else None]
        edges = [{"text": text, "x": _fmt(x), "y": _fmt(y), "rotate": rot}
                 for text, x, y, rot in filter(None, marks)]
        svg = template.render(
            width=_fmt(page_w), height=_fmt(page_h), title=picture.title,
            tile=t.name, count=len(windows),
            title_x=_fmt(MARGIN_MM), title_y=_fmt(MARGIN_MM + 5),
            win_x=_fmt(MARGIN_MM), win_y=_fmt(top), win_w=_fmt(t.w), win_h=_fmt(t.h),
            view=f"{_fmt(t.x)} {_fmt(t.y)} {_fmt(t.w)} {_fmt(t.h)}",
            edges=edges,
            markers=_markers(picture), fmt=_fmt, **body,
        )
        pages.append(MapPage(t.name, svg))
    return pages + displays
