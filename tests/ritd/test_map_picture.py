"""The map picture: pbem.board renders well-formed, escaped SVG."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from pbem.board import (
    ARROW_SHORT,
    Arrow,
    Callout,
    HexCell,
    HexsideFeature,
    Label,
    LegendEntry,
    Picture,
    PictureError,
    Piece,
    RoadPath,
    Shade,
    Style,
    Symbol,
    render_svg,
    text_width,
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
    from rules.ritd.view import BlockView, View

    m = load_map()
    tobruk, sollum, matruh = m.resolve("Tobruk"), m.resolve("Sollum"), m.resolve("Mersa Matruh")

    def block(token: str, side: str, hex_: str) -> BlockView:
        return BlockView(token=token, side=side, hex=hex_, where=m.name(hex_), unit="X" if side == "allied" else "",
                         cv=3 if side == "allied" else 0, disrupted=False, revealed=False)

    v = View(role="allied", scenario="demo", month=1, phase="turn", side="axis", battles=["Sollum"],
             blocks=[block("L1", "allied", tobruk), block("L2", "allied", sollum), block("A1", "axis", sollum),
                     block("L3", "allied", matruh)])
    pic = map_picture(v)
    calls = {c.hex: c for c in pic.callouts}
    # Every own stack names its units in a callout tied to its block (the hex's first piece).
    assert set(calls) == {tobruk, sollum, matruh} and {c.piece for c in calls.values()} == {0}
    assert calls[sollum].lines == ("X 3",) and calls[sollum].kind == "units_allied"
    names = {lab.hex: lab for lab in pic.labels if lab.kind == "place"}
    battle = next(lab for lab in pic.labels if lab.kind == "battle_label")
    assert names[sollum].dy < 0 < battle.dy  # in the battle hex: name above, battle label below
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
    # No callout covers a block or a symbol.
    boxes = [(float(r.get("x")), float(r.get("y")), float(r.get("width")), float(r.get("height")))
             for r in root.find(f".//{SVG}g[@id='callouts']").iter(f"{SVG}rect")]
    assert len(boxes) == 3
    for bx, by, bw, bh in boxes:
        assert not any(bx < x + w and x < bx + bw and by < y + w and y < by + bh for x, y, w in rects)
        assert not any(bx <= cx <= bx + bw and by <= cy <= by + bh for cx, cy in marks)
    # The two sides' blocks at Sollum do not overlap.
    assert len(rects) == 4
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert not (abs(a[0] - b[0]) < a[2] and abs(a[1] - b[1]) < a[2])


# -- shades, arrows, callouts, fixed symbols (pbem.board) ------------------------------------


def _centres(root: ET.Element) -> dict[str, tuple[float, float]]:
    """Hex id -> centre, from the hex polygons (their corners' mean)."""
    out = {}
    for poly in root.find(f".//{SVG}g[@id='hexes']").findall(f"{SVG}polygon"):
        pts = [tuple(map(float, pt.split(","))) for pt in poly.get("points").split()]
        out[poly.find(f"{SVG}title").text] = (sum(x for x, _ in pts) / 6, sum(y for _, y in pts) / 6)
    return out


def _points(element: ET.Element) -> list[tuple[float, float]]:
    return [tuple(map(float, pt.split(","))) for pt in element.get("points").split()]


ARROW_STYLES = dict(tiny().styles, move=Style(stroke="#2f5f9f", width=0.5, halo="#ffffff"))


def test_an_arrow_runs_from_the_first_hex_centre_and_stops_before_the_pieces_of_the_last():
    pic = tiny(styles=ARROW_STYLES, arrows=(Arrow("move", ("a", "b")), Arrow("move", ("b", "a", "c"))),
               pieces=(Piece("b", "unit", "2"),), legend=(LegendEntry("move", "Moves", "arrow"),))
    root = parse(render_svg(pic))
    centres = _centres(root)
    lines = root.find(f".//{SVG}g[@id='arrows']").findall(f"{SVG}polyline[@class='arrow']")
    assert len(lines) == 2 and all(line.get("marker-end", "").startswith("url(#arrowhead-") for line in lines)
    (sx, sy), (ex, ey) = _points(lines[0])
    assert (sx, sy) == pytest.approx(centres["a"], abs=0.01)
    (bx, by), rect = centres["b"], _rects(root)[0]
    # On the line from a to b, short of b's piece (whose left edge is at rect[0]).
    assert ey == pytest.approx(by, abs=0.01) and sx < ex < rect[0] < bx
    # Without pieces in the last hex it stops ARROW_SHORT hex sizes short of the centre.
    pts = _points(lines[1])
    assert pts[0] == pytest.approx(centres["b"], abs=0.01) and pts[1] == pytest.approx(centres["a"], abs=0.01)
    size = math.dist(centres["a"], centres["c"]) / math.sqrt(3)
    assert math.dist(pts[2], centres["c"]) == pytest.approx(ARROW_SHORT * size, abs=0.02)
    # The arrowhead is defined once per kind and drawn in the legend too.
    markers = root.findall(f".//{SVG}marker")
    assert len(markers) == 1 and lines[0].get("marker-end") == f"url(#{markers[0].get('id')})"
    with pytest.raises(PictureError, match="at least two hexes"):
        render_svg(tiny(styles=ARROW_STYLES, arrows=(Arrow("move", ("a",)),)))


def test_shades_tint_hexes_under_everything_else():
    styles = dict(tiny().styles, net=Style(fill="#2f5f9f", opacity=0.2))
    root = parse(render_svg(tiny(styles=styles, shades=(Shade("a", "net"), Shade("c", "net")))))
    group = root.find(f".//{SVG}g[@id='shades']")
    assert [p.get("fill-opacity") for p in group.findall(f"{SVG}polygon")] == ["0.2", "0.2"]
    order = [g.get("id") for g in root.findall(f"{SVG}g")]
    assert order.index("hexes") < order.index("shades") < order.index("roads") < order.index("pieces")
    assert parse(render_svg(tiny())).find(f".//{SVG}g[@id='shades']") is None


def test_a_shifted_symbol_stays_put_when_pieces_share_its_hex():
    styles = dict(tiny().styles, mark=Style(fill="#000000", shape="diamond", size=1.0))
    plain = tiny(symbols=(Symbol("b", "mark", "M", dx=0.5, dy=-0.4),), pieces=())
    crowded = tiny(symbols=(Symbol("b", "mark", "M", dx=0.5, dy=-0.4),))
    where = [parse(render_svg(tiny(styles=styles, symbols=p.symbols, pieces=p.pieces)))
             .find(f".//{SVG}g[@id='symbols']").find(f"{SVG}polygon").get("points") for p in (plain, crowded)]
    assert where[0] == where[1]


def _callout_boxes(root: ET.Element) -> list[tuple[float, float, float, float]]:
    group = root.find(f".//{SVG}g[@id='callouts']")
    return [(float(r.get("x")), float(r.get("y")), float(r.get("width")), float(r.get("height")))
            for r in group.iter(f"{SVG}rect")]


def test_callouts_name_a_hexs_pieces_beside_them_without_covering_pieces_or_each_other():
    styles = dict(tiny().styles, names=Style(fill="#111111", stroke="#336699", width=0.25, font_size=1.7))
    many = tuple(f"Unit {i} 4" for i in range(9))
    pic = tiny(styles=styles, pieces=(Piece("a", "unit", "9"), Piece("b", "unit", "1"), Piece("c", "unit", "2")),
               callouts=(Callout("a", "names", many, title="CV 36", piece=0),
                         Callout("b", "names", ("21Pz/5 4",), piece=0),
                         Callout("c", "names", ("Ariete 6", "Trento 4"), piece=0)))
    root = parse(render_svg(pic))
    texts = [t.text for t in root.find(f".//{SVG}g[@id='callouts']").iter(f"{SVG}text")]
    assert texts[0] == "CV 36" and set(many) | {"21Pz/5 4", "Ariete 6", "Trento 4"} <= set(texts)
    boxes, rects = _callout_boxes(root), _rects(root)
    assert len(boxes) == 3

    def overlap(a, b):
        return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]

    assert not any(overlap(box, (x, y, w, w)) for box in boxes for x, y, w in rects)
    assert not any(overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    # Nine lines make two columns: the box is wider than tall enough for nine rows.
    _, _, w, h = boxes[0]
    assert h < 9 * 1.7 and w > 2 * text_width("Unit 0 4", 1.7)
    # Every callout stays on the page, and each leader runs from its piece's edge to its box.
    assert all(bx >= 0 and bx + bw <= 297 and by >= 0 and by + bh <= 210 for bx, by, bw, bh in boxes)
    leaders = root.find(f".//{SVG}g[@id='callouts']").findall(f"{SVG}line")
    for line, (px, py, pw) in zip(leaders, rects):
        x1, y1 = float(line.get("x1")), float(line.get("y1"))
        assert max(abs(x1 - (px + pw / 2)), abs(y1 - (py + pw / 2))) == pytest.approx(pw / 2, abs=0.01)
    with pytest.raises(PictureError, match="no piece 2"):
        render_svg(tiny(styles=styles, callouts=(Callout("b", "names", ("X",), piece=2),)))


def test_callout_text_and_arrow_kinds_are_escaped():
    evil = '<script>alert("x")</script> & "quotes"'
    styles = dict(ARROW_STYLES, **{evil: Style(stroke="#000000", width=0.4)},
                  names=Style(fill="#111111", stroke="#336699"))
    svg = render_svg(tiny(styles=styles, arrows=(Arrow(evil, ("a", "b")),),
                          callouts=(Callout("a", "names", (evil,), title=evil),),
                          legend=(LegendEntry(evil, evil, "arrow"), LegendEntry("names", evil, "callout"))))
    assert "<script>" not in svg
    root = parse(svg)
    assert sum(1 for t in root.iter(f"{SVG}text") if t.text == evil) == 4
    assert {m.get("id") for m in root.iter(f"{SVG}marker")} == {"arrowhead-0"}


def test_text_width_grows_with_the_text_and_the_font():
    assert text_width("", 2.0) == 0
    assert text_width("iiii", 2.0) < text_width("MMMM", 2.0) < text_width("MMMM", 2.0, bold=True)
    assert text_width("21Pz/5 4", 3.4) == pytest.approx(2 * text_width("21Pz/5 4", 1.7))
