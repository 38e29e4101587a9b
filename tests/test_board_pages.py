"""Maps people can read (issue 26 point 2, issue 18 point 4): page sizes,
tiles with minimum sizes, flat and pointy grids, the overview."""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem.board import (
    CAPTION_FONT,
    MIN_HEX_MM,
    PAGES,
    Counter,
    HexCell,
    Picture,
    PictureError,
    Piece,
    RoadPath,
    Style,
    hex_size_on_page,
    render_pages,
    render_svg,
    tile_windows,
)
from pbem.cli import cli
from pbem.hexgrid import Axial, DigitIds, Grid, Offset

STYLES = {
    "clear": Style(fill="#f3e6c4", stroke="#b0a080", width=0.2),
    "unit": Style(fill="#3b4a5c", stroke="#111111", font_size=1.2, halo="#ffffff"),
    "road": Style(stroke="#c0392b", width=0.8),
}


def synthetic(cols: int = 60, rows: int = 30, grid: Grid | None = None) -> Picture:
    """A cols x rows map numbered CCRR (flat hexes unless ``grid`` says
    otherwise), a road along row 5, a unit every 7th hex."""
    grid = grid or Grid("flat", "odd")
    ids = DigitIds(grid)
    hexes = []
    for c in range(1, cols + 1):
        for r in range(1, rows + 1):
            h = grid.to_axial(Offset(c, r))
            hid = ids.format(h)
            hexes.append(HexCell(hid, h.q, h.r, "clear", caption=hid))
    pieces = tuple(Piece(h.id, "unit", "3-4") for k, h in enumerate(hexes) if k % 7 == 0)
    road = RoadPath("road", tuple(ids.format(grid.to_axial(Offset(c, 5))) for c in range(1, cols + 1)))
    return Picture(title="A synthetic map", hexes=tuple(hexes), styles=STYLES, pieces=pieces,
                   roads=(road,), grid=grid, hex_km=10.0)


def _floats(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", text)]


def _scale(svg: str) -> float:
    """mm per user unit of the map drawing inside a tile (its nested viewBox)."""
    m = re.search(r'<svg x="[^"]+" y="[^"]+" width="([^"]+)" height="[^"]+" viewBox="([^"]+)"', svg)
    if m is None:
        return 1.0
    return float(m.group(1)) / _floats(m.group(2))[2]


def hex_across_flats(svg: str) -> float:
    pts = _floats(re.search(r'<g id="hexes".*?<polygon points="([^"]+)"', svg, re.DOTALL).group(1))  # type: ignore[union-attr]
    xs, ys = pts[0::2], pts[1::2]
    cx, cy = sum(xs) / 6, sum(ys) / 6
    radius = math.hypot(xs[0] - cx, ys[0] - cy)
    return math.sqrt(3) * radius * _scale(svg)


def caption_font(svg: str) -> float:
    return float(re.search(r'<g id="captions" font-size="([^"]+)"', svg).group(1)) * _scale(svg)  # type: ignore[union-attr]


def counter_fonts(svg: str) -> list[float]:
    body = svg[svg.index('<g id="pieces"'):]
    body = body[: body.index("</g>")]
    return [float(f) * _scale(svg) for f in re.findall(r'<text [^>]*font-size="([^"]+)"', body)]


@pytest.mark.parametrize("page", list(PAGES))
def test_a_60_by_30_map_prints_as_overview_and_tiles_of_readable_size(page: str) -> None:
    pages = render_pages(synthetic(), page)  # type: ignore[arg-type]
    assert pages[0].name == "overview"
    tiles = pages[1:]
    assert len(tiles) >= 2
    for t in tiles:
        assert hex_across_flats(t.svg) >= MIN_HEX_MM - 1e-6, t.name
        assert caption_font(t.svg) >= 1.8
        fonts = counter_fonts(t.svg)
        assert fonts and min(fonts) >= 1.6
        w, h = PAGES[page]
        assert f'viewBox="0 0 {w:g} {h:g}"'.replace(".0 ", " ") in t.svg or f"width=\"{w:g}mm\"" in t.svg
    # The overview is scaled down to fit, and says so with a scale bar.
    assert hex_across_flats(pages[0].svg) < MIN_HEX_MM
    assert "5 hexes = 50 km" in pages[0].svg
    for t in tiles:
        assert f">{t.name}</text>" in pages[0].svg


def test_tiles_cover_the_whole_map_and_overlap_by_a_hex() -> None:
    pic = synthetic()
    wins = tile_windows(pic, "a4")
    names = {w.name for w in wins}
    xs = sorted({w.x for w in wins})
    ys = sorted({w.y for w in wins})
    assert len(wins) == len(xs) * len(ys) >= 2
    w0 = wins[0]
    hex_w, hex_h = pic.grid.extent(w0.size)
    for a, b in itertools.pairwise(xs):
        assert b - a <= w0.w - hex_w + 1e-6, "neighbouring tiles overlap by at least a hex"
    for a, b in itertools.pairwise(ys):
        assert b - a <= w0.h - hex_h + 1e-6
    # Every hex centre lies inside some tile.
    for h in pic.hexes:
        x, y = pic.grid.centre(Axial(h.q, h.r), w0.size)
        x, y = x + w0.ox, y + w0.oy
        assert any(w.x <= x <= w.x + w.w and w.y <= y <= w.y + w.h for w in wins), h.id
    # Each tile names its neighbours, and only tiles that exist.
    for w in wins:
        for other in (w.left, w.right, w.up, w.down):
            assert other == "" or other in names
    a1 = next(w for w in wins if w.name == "A1")
    assert a1.left == "" and a1.up == "" and a1.right == "B1"


def test_tile_edges_name_the_neighbouring_tiles() -> None:
    pages = render_pages(synthetic(), "a4")
    a1 = next(p for p in pages if p.name == "A1")
    assert "\u25b2 B1" in a1.svg
    assert "tile A1 of" in a1.svg


@pytest.mark.parametrize("grid", [Grid("pointy", "even", "up"), Grid("pointy", "odd"), Grid("flat", "even")])
def test_both_orientations_tile(grid: Grid) -> None:
    pages = render_pages(synthetic(53, 25, grid), "a4")
    assert len(pages) >= 3
    for t in pages[1:]:
        assert hex_across_flats(t.svg) >= MIN_HEX_MM - 1e-6


def test_a_small_map_stays_on_one_page() -> None:
    pic = synthetic(12, 8)
    assert hex_size_on_page(pic, "a4") >= MIN_HEX_MM
    pages = render_pages(pic, "a4")
    assert [p.name for p in pages] == ["map"]
    assert pages[0].svg == render_svg(pic, "a4")


def test_unknown_page_is_refused() -> None:
    with pytest.raises(PictureError, match="no page size 'a5'"):
        render_pages(synthetic(4, 4), "a5")  # type: ignore[arg-type]


def test_ritd_map_fits_one_a4_page_at_playing_size(tmp_path: Path) -> None:
    """`pbem map ritd --page a4` writes one page; its hexes are at least 12 mm."""
    from rules.ritd import RULES

    pic = RULES.map_picture()
    assert pic is not None
    assert hex_size_on_page(pic, "a4") >= MIN_HEX_MM
    assert CAPTION_FONT >= 1.8
    r = CliRunner().invoke(cli, ["map", "ritd", "--page", "a4", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.svg"]
    svg = (tmp_path / "map.svg").read_text()
    assert hex_across_flats(svg) >= MIN_HEX_MM


def test_cli_refuses_to_write_tiles_into_one_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rules.ritd import RitdRules

    monkeypatch.setattr(RitdRules, "map_picture", lambda self, view=None, overlays=(): synthetic())
    r = CliRunner().invoke(cli, ["map", "ritd", "-o", str(tmp_path / "m.svg")])
    assert r.exit_code == 2
    assert "give -o DIRECTORY" in r.output
    r = CliRunner().invoke(cli, ["map", "ritd", "--page", "a3", "-o", str(tmp_path / "tiles")])
    assert r.exit_code == 0, r.output
    files = sorted(p.name for p in (tmp_path / "tiles").iterdir())
    assert files[0] == "overview.svg" and "tile-A1.svg" in files and len(files) >= 3


# --- counters ------------------------------------------------------------------------

COUNTER_STYLES = {
    **STYLES,
    "it": Style(fill="#7fa37a", stroke="#1d2b1a", width=0.25, halo="#111111"),
    "uk": Style(fill="#c9b38a", stroke="#3a2a12", width=0.25, halo="#111111"),
}


def figure_7() -> Picture:
    """PAA §11.4 Figure 7, as counters: two Italian units stacked in 0906,
    BR SG/2/IBDE in 1006, and an out-of-supply Italian unit (flipped) in 0807."""
    grid = Grid("pointy", "even", "up")
    ids = DigitIds(grid, "RRCC")
    hexes = []
    for row in range(6, 13):
        for col in range(3, 11):
            h = grid.to_axial(Offset(col, row))
            hexes.append(HexCell(ids.format(h), h.q, h.r, "clear", caption=ids.format(h)))
    counters = (
        Counter("0906", "it", "132/A", "armour", "regiment", "3-8"),
        Counter("0906", "it", "BERS/8", "motorised", "regiment", "2-8"),
        Counter("1006", "uk", "SG/2/I", "infantry", "battalion", "1-4", symbol_fill="#d9534f"),
        Counter("0807", "it", "PAV/17", "infantry", "regiment", "1-3", flipped=True, back="OOS"),
    )
    return Picture(title="PAA Figure 7", hexes=tuple(hexes), styles=COUNTER_STYLES, counters=counters, grid=grid)


def test_counters_show_id_type_echelon_figures_and_stack_height() -> None:
    svg = render_svg(figure_7())
    body = svg[svg.index('<g id="counters"'):]
    stacks = body.split('<g class="stack">')[1:]
    assert len(stacks) == 3
    top_0906 = stacks[0]
    # The last counter given is on top; the one under it is a layer; the stack says 2.
    assert ">BERS/8</text>" in top_0906 and ">2-8</text>" in top_0906 and ">III</text>" in top_0906
    assert "132/A" not in top_0906
    assert ">2</text>" in top_0906
    assert top_0906.count("<rect") == 3  # one layer under the counter, the counter, its type frame
    # Motorised infantry: the cross and a vertical bar.
    assert top_0906.count("<line") == 3
    uk = stacks[1]
    assert 'fill="#d9534f"' in uk and ">II</text>" in uk and uk.count("<line") == 2
    oos = stacks[2]
    assert ">OOS</text>" in oos and 'fill="url(#counter-back)"' in oos and "PAV/17" not in oos
    assert 'id="counter-back"' in svg


def test_counter_text_is_readable_on_tiles() -> None:
    pic = figure_7()
    big = Picture(title=pic.title, hexes=synthetic().hexes, styles=COUNTER_STYLES,
                  counters=tuple(Counter(h.id, "uk", "7/4", "armour", "brigade", "4-10")
                                 for k, h in enumerate(synthetic().hexes) if k % 11 == 0),
                  grid=Grid("flat", "odd"))
    pages = render_pages(big, "a4")
    assert len(pages) > 2
    for t in pages[1:]:
        body = t.svg[t.svg.index('<g id="counters"'):]
        fonts = [float(f) * _scale(t.svg) for f in re.findall(r'font-size="([^"]+)"', body)]
        assert fonts and min(fonts) >= 1.6 * 0.8 - 1e-9  # echelon marks are symbols at 80 %
        text_fonts = [float(f) * _scale(t.svg) for f in re.findall(r'<text [^>]*font-size="([^"]+)"[^>]*>[^<]*\d', body)]
        assert text_fonts and min(text_fonts) >= 1.6


def test_a_report_prints_only_the_tiles_where_the_reader_s_units_stand() -> None:
    base = synthetic()
    corner = base.hexes[0].id  # column 01, row 01: one corner of the map
    pic = Picture(title=base.title, hexes=base.hexes, styles=STYLES, grid=base.grid,
                  pieces=(Piece(corner, "unit", "1-1"),), focus=(corner,))
    every = render_pages(pic, "a4")
    few = render_pages(pic, "a4", focused=True)
    assert few[0].name == "overview" and 2 <= len(few) < len(every)
    assert all(f"{corner}</text>" in t.svg for t in few[1:])
    # Without a focus, the tiles holding pieces are printed.
    unfocused = Picture(title=base.title, hexes=base.hexes, styles=STYLES, grid=base.grid,
                        pieces=(Piece(corner, "unit", "1-1"),))
    assert [p.name for p in render_pages(unfocused, "a4", focused=True)] == [p.name for p in few]
    with pytest.raises(PictureError, match="no hex 'nowhere'"):
        render_pages(Picture(title="x", hexes=base.hexes, styles=STYLES, grid=base.grid, focus=("nowhere",)),
                     "a4", focused=True)


def test_the_html_report_has_a_print_page_per_tile() -> None:
    from pbem.report import Report, render

    r = Report(rules_title="T", game_title="g", game_id="00", scenario="s", role="red", seq=3, pending="",
               my_turn=False, since=None, happenings=(), sections=(), svg="<svg>overview</svg>",
               tiles=("<svg>tile A1</svg>", "<svg>tile B1</svg>"))
    html = render(r, "html")
    assert html.count('<div class="map">') == 3
    assert html.index("overview") < html.index("tile A1") < html.index("tile B1")


def test_displays_hold_counters_in_boxes_and_on_tracks() -> None:
    from pbem.board import Display, render_displays

    turn = Display("turn", "Turn track", cells=tuple(str(n) for n in range(1, 21)),
                   counters=(Counter("5", "it", "TURN", "none", figures="Apr 41"),))
    dead = Display("destroyed", "Destroyed units", counters=(
        Counter("a", "uk", "SG/2/I", "infantry", "battalion", "1-4"),
        Counter("b", "uk", "7/4", "armour", "brigade", "4-10"),
        Counter("b", "uk", "4/7", "armour", "brigade", "3-10")))
    pic = Picture(title="PAA", hexes=synthetic(3, 3).hexes, styles=COUNTER_STYLES, grid=Grid("flat", "odd"),
                  displays=(turn, dead))
    pages = render_pages(pic, "a4")
    assert [p.name for p in pages] == ["map", "displays"]
    svg = pages[1].svg
    assert ">Turn track</text>" in svg and ">Destroyed units</text>" in svg
    assert all(f">{n}</text>" in svg for n in range(1, 21))
    assert ">Apr 41</text>" in svg and ">SG/2/I</text>" in svg and ">4/7</text>" in svg
    assert "7/4" not in svg  # under 4/7 in the same slot: a stack of 2
    assert svg.count('<g class="stack">') == 3
    fonts = [float(f) for f in re.findall(r'<text [^>]*font-size="([^"]+)"[^>]*>[^<]*\d', svg)]
    assert min(fonts) >= 1.6
    with pytest.raises(PictureError, match="no cell '21'"):
        render_displays(Picture(title="x", hexes=pic.hexes, styles=COUNTER_STYLES,
                                displays=(Display("turn", "T", cells=("1",), counters=(Counter("21", "it"),)),)))


def test_many_displays_continue_on_more_pages() -> None:
    from pbem.board import Display

    boxes = tuple(Display(f"b{k}", f"Box {k}", counters=tuple(Counter(str(i), "uk", f"u{i}") for i in range(30)))
                  for k in range(6))
    pages = render_pages(Picture(title="x", hexes=synthetic(3, 3).hexes, styles=COUNTER_STYLES, displays=boxes))
    names = [p.name for p in pages]
    assert names[:3] == ["map", "displays", "displays-2"]
    assert all(f">Box {k}</text>" in "".join(p.svg for p in pages) for k in range(6))


def test_a_pale_line_in_the_legend_gets_a_grey_chip_so_it_shows_on_white_paper():
    """A white dashed sea line (Panzerarmee Afrika's sea transport) is drawn on the
    sea; in the legend, on white paper, it needs a backing chip; a dark line does not."""
    import msgspec

    from pbem.board import LegendEntry

    styles = {**STYLES, "sea-line": Style(stroke="#ffffff", width=0.6, dash="1.5 1")}
    picture = msgspec.structs.replace(synthetic(8, 6), styles=styles,
                                      legend=(LegendEntry("sea-line", "Sea transport", "road"),
                                              LegendEntry("road", "Coastal road", "road")))
    legend = render_svg(picture).split('<g id="legend"', 1)[1]
    assert legend.count('fill="#8c8c8c"') == 1
    chip = legend.index('fill="#8c8c8c"')
    assert chip < legend.index('stroke="#ffffff"') and chip < legend.index("Sea transport")
