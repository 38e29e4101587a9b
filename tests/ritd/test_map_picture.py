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
