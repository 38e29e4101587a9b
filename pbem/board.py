"""A game-agnostic hex-map picture and its SVG rendering.

A rules package builds a ``Picture`` (hexes with a fill kind, hexside
features, roads, point symbols, labels, pieces) and supplies the ``styles``
that say how each kind looks; this module knows no game. ``render_svg``
lays the picture out on one landscape A4 page (297 x 210 mm; it also fits
Letter) and renders it through ``templates/map.svg.j2``. Every string is
escaped by the template environment, so player-supplied text is safe.

Coordinates are axial (q, r) for pointy-top hexes in east-west rows, r
growing southwards (north up). Pictures are never part of a signed log, so
floats are fine here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import msgspec

PAGE_W_MM = 297.0
PAGE_H_MM = 210.0
MARGIN_MM = 7.0
TITLE_MM = 11.0
LEGEND_ROW_MM = 6.0
#: Hex captions sit this far (in hex sizes) above the centre, near the top corner.
CAPTION_DY = 0.7
#: Piece layout, in hex sizes: a piece's side, the gap between things in a
#: row, an invisible piece's width, and the widest row before pieces shrink.
PIECE_SIDE = 0.55
PIECE_GAP = 0.08
PIECE_SPACER = 0.06
ROW_MAX = 1.6
MIN_PIECE_SCALE = 0.7

SymbolShape = Literal["circle", "square", "star", "triangle", "diamond"]
LegendShape = Literal["hex", "edge", "road", "symbol", "piece"]


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
    """A point symbol in a hex (a fortress, a base ...) with short text."""

    hex: str
    kind: str
    text: str = ""


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


class PictureError(ValueError):
    """A picture refers to a hex it does not contain, or a kind with no style."""


_SQRT3 = math.sqrt(3.0)


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
        if sym.hex in by_hex:
            syms.setdefault(sym.hex, []).append(2 * _symbol_half_width(style(sym.kind)))
    out: dict[str, _HexLayout] = {}
    for hex_, ps in by_hex.items():
        sym_w = syms.get(hex_, [])
        widths = [PIECE_SPACER if _invisible(style(p.kind), p.text) else PIECE_SIDE for p in ps]

        def row_scale(lo: int, hi: int, with_syms: bool) -> float:
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


def render_svg(picture: Picture) -> str:
    """The picture as a standalone SVG document on a landscape A4 page.

    Raises PictureError if an element names a hex the picture does not
    contain or a kind that has no style.
    """
    from pbem.resources import template_env

    cells = {h.id: h for h in picture.hexes}
    if not cells:
        raise PictureError("a picture needs at least one hex")

    def style(kind: str) -> Style:
        try:
            return picture.styles[kind]
        except KeyError:
            raise PictureError(f"no style for kind {kind!r}") from None

    def cell(hex_: str) -> HexCell:
        try:
            return cells[hex_]
        except KeyError:
            raise PictureError(f"no hex {hex_!r} in the picture") from None

    # Scale: the widest hex size that fits the page, leaving room for title and legend.
    legend_rows = math.ceil(len(picture.legend) / 5) if picture.legend else 0
    avail_w = PAGE_W_MM - 2 * MARGIN_MM
    avail_h = PAGE_H_MM - 2 * MARGIN_MM - TITLE_MM - legend_rows * LEGEND_ROW_MM - (3 if legend_rows else 0)
    xs = [h.q + h.r / 2 for h in picture.hexes]
    ys = [h.r for h in picture.hexes]
    span_x = (max(xs) - min(xs)) * _SQRT3 + _SQRT3
    span_y = (max(ys) - min(ys)) * 1.5 + 2.0
    size = min(avail_w / span_x, avail_h / span_y)
    map_w = span_x * size
    ox = MARGIN_MM + (avail_w - map_w) / 2 - min(xs) * _SQRT3 * size + _SQRT3 * size / 2
    oy = MARGIN_MM + TITLE_MM - min(ys) * 1.5 * size + size

    def centre(hex_: str) -> tuple[float, float]:
        h = cell(hex_)
        return ox + _SQRT3 * size * (h.q + h.r / 2), oy + 1.5 * size * h.r

    def corners(cx: float, cy: float, s: float) -> list[tuple[float, float]]:
        return [
            (cx + s * math.cos(math.radians(60 * i - 30)), cy + s * math.sin(math.radians(60 * i - 30)))
            for i in range(6)
        ]

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
        if abs(dist - _SQRT3 * size) > 1e-6 * size:
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

    symbols = []
    for sym in picture.symbols:
        cx, cy = centre(sym.hex)
        k = sym_seen.get(sym.hex, 0)
        sym_seen[sym.hex] = k + 1
        if sym.hex in layout:
            ddx, ddy = layout[sym.hex].symbols.get(k, (0.0, 0.0))
            cx, cy = cx + ddx, cy + ddy
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
    piece_seen: dict[str, int] = {}
    for piece in picture.pieces:
        cx, cy = centre(piece.hex)
        n = piece_seen.get(piece.hex, 0)
        piece_seen[piece.hex] = n + 1
        st = style(piece.kind)
        ddx, ddy, side = layout[piece.hex].pieces[n]
        px, py = cx + ddx, cy + ddy
        piece_centres.setdefault(piece.hex, []).append((px, py))
        if _invisible(st, piece.text):
            continue
        x, y = px - side / 2, py - side / 2
        pieces.append(
            {
                "style": st,
                "x": _fmt(x),
                "y": _fmt(y),
                "w": _fmt(side),
                "tx": _fmt(px),
                "ty": _fmt(py + st.font_size * 0.35),
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
        labels.append(
            {
                "style": style(lab.kind),
                "x": _fmt(cx + lab.dx * size),
                "y": _fmt(cy + lab.dy * size),
                "text": lab.text,
            }
        )

    legend = []
    col_w = (PAGE_W_MM - 2 * MARGIN_MM) / 5
    top = oy + (max(ys) * 1.5 + 1.0) * size + 3.0
    for i, entry in enumerate(picture.legend):
        st = style(entry.kind)
        x = MARGIN_MM + (i % 5) * col_w
        y = top + (i // 5) * LEGEND_ROW_MM + LEGEND_ROW_MM / 2
        item: dict[str, object] = {"style": st, "shape": entry.shape, "text": entry.text}
        item["tx"], item["ty"] = _fmt(x + 10), _fmt(y + 1.2)
        item["y"] = _fmt(y)
        if entry.shape == "hex":
            item["points"] = _points(corners(x + 4, y, 2.6))
        elif entry.shape == "symbol":
            item["sym_shape"] = st.shape
            item["cx"], item["cy"] = _fmt(x + 4), _fmt(y)
            item["r"] = _fmt(min(st.size, 2.2))
            item["points"] = "" if st.shape == "circle" else _symbol_points(st.shape, x + 4, y, min(st.size, 2.2))
        elif entry.shape == "piece":
            item["px"], item["py"] = _fmt(x + 2), _fmt(y - 2)
        else:
            ends = entry.shape == "edge" and st.pattern == "ends"
            item["segments"] = [(_fmt(x), _fmt(x + 2.7)), (_fmt(x + 5.3), _fmt(x + 8))] if ends else [(_fmt(x), _fmt(x + 8))]
        legend.append(item)

    template = template_env().get_template("map.svg.j2")
    return template.render(
        width=_fmt(PAGE_W_MM),
        height=_fmt(PAGE_H_MM),
        title=picture.title,
        subtitle=picture.subtitle,
        title_x=_fmt(MARGIN_MM),
        title_y=_fmt(MARGIN_MM + 5),
        subtitle_y=_fmt(MARGIN_MM + 9.5),
        hexes=hexes,
        sides=sides,
        roads=roads,
        symbols=symbols,
        labels=labels,
        pieces=pieces,
        legend=legend,
        fmt=_fmt,
    )
