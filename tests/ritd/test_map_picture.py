"""The map picture: pbem.board renders well-formed, escaped SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pbem.board import (
    HexCell,
    HexsideFeature,
    Label,
    LegendEntry,
    Piece,
    Picture,
    PictureError,
    RoadPath,
    Style,
    Symbol,
    render_svg,
)
from rules.ritd.hexmap import load_map
from rules.ritd.picture import map_picture

SVG = "{http://www.w3.org/2000/svg}"


def tiny(**changes: object) -> Picture:
    base = {
        "title": "T",
        "hexes": (
            HexCell("a", 0, 0, "land", caption="a"),
            HexCell("b", 1, 0, "land"),
            HexCell("c", 0, 1, "land"),
            HexCell("d", 3, 0, "land"),
        ),
        "styles": {
            "land": Style(fill="#eeeeee", stroke="#999999"),
            "ridge": Style(stroke="#884400", width=0.8, pattern="teeth"),
            "gap": Style(stroke="#884400", width=0.8, pattern="ends"),
            "road": Style(stroke="#cc0000", width=0.8, dash="1 1"),
            "town": Style(fill="#000000", shape="square"),
            "name": Style(fill="#000000"),
            "unit": Style(fill="#336699", stroke="#000000"),
        },
        "hexsides": (HexsideFeature("a", "b", "ridge"), HexsideFeature("a", "c", "gap")),
        "roads": (RoadPath("road", ("b", "a", "c")),),
        "symbols": (Symbol("a", "town", "2/5"),),
        "labels": (Label("a", "Alpha", "name", dy=0.6),),
        "pieces": (Piece("b", "unit", "7A"), Piece("b", "unit", "15")),
        "legend": (LegendEntry("ridge", "Ridge", "edge"), LegendEntry("town", "Town", "symbol")),
    }
    base.update(changes)
    return Picture(**base)  # type: ignore[arg-type]


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg.encode())


def test_render_svg_is_well_formed_and_page_sized() -> None:
    root = parse(render_svg(tiny()))
    assert root.tag == f"{SVG}svg"
    assert root.get("width") == "297mm" and root.get("height") == "210mm"
    assert len(root.findall(f".//{SVG}polygon")) >= 3
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "Alpha" in texts and "2/5" in texts and "7A" in texts and "15" in texts


def test_render_svg_escapes_every_string() -> None:
    evil = '<script>alert("x")</script> & "quotes"'
    svg = render_svg(
        tiny(
            title=evil,
            labels=(Label("a", evil, "name"),),
            pieces=(Piece("a", "unit", evil),),
            hexes=(HexCell("a", 0, 0, "land", caption=evil), HexCell("b", 1, 0, "land"), HexCell("c", 0, 1, "land")),
        )
    )
    assert "<script>" not in svg
    root = parse(svg)
    assert not list(root.iter("script")) and not list(root.iter(f"{SVG}script"))
    assert sum(1 for t in root.iter(f"{SVG}text") if t.text == evil) >= 3


def test_render_svg_rejects_unknown_hexes_and_kinds() -> None:
    with pytest.raises(PictureError, match="no hex 'z'"):
        render_svg(tiny(labels=(Label("z", "Z", "name"),)))
    with pytest.raises(PictureError, match="no style for kind 'swamp'"):
        render_svg(tiny(hexsides=(HexsideFeature("a", "b", "swamp"),)))
    with pytest.raises(PictureError, match="not adjacent"):
        render_svg(tiny(hexsides=(HexsideFeature("a", "d", "ridge"),)))


def test_gap_pattern_draws_two_end_pieces() -> None:
    plain = parse(render_svg(tiny(hexsides=(), legend=())))
    gap = parse(render_svg(tiny(hexsides=(HexsideFeature("a", "c", "gap"),), legend=())))
    lines = lambda root: root.find(f".//{SVG}g[@id='hexsides']").findall(f"{SVG}line")  # noqa: E731
    assert len(lines(plain)) == 0 and len(lines(gap)) == 2


def test_ritd_map_picture_shows_every_place_fortress_port_and_frontier() -> None:
    m = load_map()
    picture = map_picture()
    assert len(picture.hexes) == len(m.hexes) and not picture.pieces
    assert {lab.text for lab in picture.labels} >= {p.name for p in m.places}
    ports = {m.name(s.hex): s.text for s in picture.symbols if s.kind == "fortress"}
    assert ports == {"Tobruk": "2/5", "Bardia": "1/2", "Benghazi": "1/2"}
    kinds = {f.kind for f in picture.hexsides}
    assert {"ridge", "gap", "marsh", "marsh_gap", "frontier", "mountain_side"} <= kinds
    assert {r.kind for r in picture.roads} == {"highway", "track", "trail"}
    frontier = {frozenset((f.a, f.b)) for f in picture.hexsides if f.kind == "frontier"}
    assert frozenset((m.resolve("Ft Capuzzo"), m.resolve("Sollum"))) in frontier


def test_ritd_map_renders_with_readable_fonts() -> None:
    svg = render_svg(map_picture())
    root = parse(svg)
    sizes = [float(t.get("font-size") or 99) for t in root.iter(f"{SVG}text") if t.text and not t.text.isdigit()]
    assert min(sizes) >= 1.6  # mm; place names 2 mm (about 6 pt) on A4
    names = {t.text for t in root.iter(f"{SVG}text")}
    assert {"Tobruk", "Sollum", "El Alamein", "Jalo"} <= names


def _rects(root: ET.Element) -> list[tuple[float, float, float]]:
    return [(float(r.get("x")), float(r.get("y")), float(r.get("width")))
            for r in root.find(f".//{SVG}g[@id='pieces']").findall(f"{SVG}rect")]


def test_pieces_stand_side_by_side_after_the_symbol_and_labels_follow_them() -> None:
    styles = dict(tiny().styles, gap=Style())
    pic = tiny(pieces=(Piece("a", "unit", "1"), Piece("a", "gap"), Piece("a", "unit", "3")),
               labels=(Label("a", "CV 4", "name", dy=0.5, piece=0),), styles=styles)
    root = parse(render_svg(pic))
    (x1, y1, w1), (x2, y2, w2) = _rects(root)  # the invisible gap draws nothing
    assert y1 == y2 and x1 + w1 < x2  # side by side, not overlapping
    square = root.find(f".//{SVG}g[@id='symbols']").find(f"{SVG}polygon")
    xs = [float(pt.split(",")[0]) for pt in square.get("points").split()]
    assert max(xs) < x1  # the town symbol moved left of the pieces, not under them
    cv = next(t for t in root.iter(f"{SVG}text") if t.text == "CV 4")
    assert abs(float(cv.get("x")) - (x1 + w1 / 2)) < 0.02  # under the first piece
    with pytest.raises(PictureError, match="no piece 3"):
        render_svg(tiny(labels=(Label("b", "X", "name", piece=3),)))


def test_many_pieces_wrap_into_rows_inside_the_hex() -> None:
    root = parse(render_svg(tiny(pieces=tuple(Piece("b", "unit", str(i)) for i in range(7)))))
    rects = _rects(root)
    assert len(rects) == 7 and len({y for _, y, _ in rects}) >= 2
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert not (abs(a[0] - b[0]) < a[2] and abs(a[1] - b[1]) < a[2])  # no two overlap


def test_ritd_view_keeps_fortress_town_and_names_readable() -> None:
    from rules.ritd.game import BlockView, View

    m = load_map()
    tobruk, sollum, matruh = m.resolve("Tobruk"), m.resolve("Sollum"), m.resolve("Mersa Matruh")

    def block(token: str, side: str, hex_: str) -> BlockView:
        return BlockView(token=token, side=side, hex=hex_, where=m.name(hex_), unit="X" if side == "allied" else "",
                         cv=3 if side == "allied" else 0, disrupted=False, revealed=False)

    v = View(role="allied", scenario="demo", month=1, phase="turn", side="axis", battles=["Sollum"],
             blocks=[block("L1", "allied", tobruk), block("L2", "allied", sollum), block("A1", "axis", sollum),
                     block("L3", "allied", matruh)])
    pic = map_picture(v)
    cv = {lab.hex: lab for lab in pic.labels if lab.kind == "strength"}
    names = {lab.hex: lab for lab in pic.labels if lab.kind == "place"}
    assert cv[matruh].piece == 0 and names[matruh].dy > 0 > cv[matruh].dy  # CV over the block, name below
    assert names[sollum].dy < 0 < cv[sollum].dy  # in the battle hex: name above, CV and battle label below
    assert pic.styles["region"].halo != "none"  # area names stay readable over roads and hex edges
    root = parse(render_svg(pic))
    rects = _rects(root)
    # No block covers a symbol (town dot, fortress with its ports): no symbol's centre lies in a block.
    group = root.find(f".//{SVG}g[@id='symbols']")
    marks = [(float(c.get("cx")), float(c.get("cy"))) for c in group.findall(f"{SVG}circle")]
    for poly in group.findall(f"{SVG}polygon"):
        pts = [tuple(map(float, pt.split(","))) for pt in poly.get("points").split()]
        marks.append((sum(x for x, _ in pts) / len(pts), sum(y for _, y in pts) / len(pts)))
    assert marks and not any(x <= cx <= x + w and y <= cy <= y + w for cx, cy in marks for x, y, w in rects)
    # The two sides' blocks at Sollum do not overlap.
    assert len(rects) == 4
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert not (abs(a[0] - b[0]) < a[2] and abs(a[1] - b[1]) < a[2])
