"""pbem/hexgrid.py: conversions, adjacency, ids, paths (issue 26 point 1)."""

from __future__ import annotations

import math
from collections import deque

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.hexgrid import (
    DIRECTIONS,
    Axial,
    DigitIds,
    Grid,
    HexIdError,
    NamedIds,
    NotAdjacent,
    Offset,
    Sheet,
    SheetIds,
    distance,
    hexside,
    neighbours,
    path_cost,
    reach,
    ring,
    shortest_path,
)

GRIDS = [Grid(o, p, g) for o in ("pointy", "flat") for p in ("odd", "even") for g in ("down", "up")]
coord = st.integers(min_value=-60, max_value=60)
axials = st.builds(Axial, coord, coord)
offsets = st.builds(Offset, coord, coord)
grids = st.sampled_from(GRIDS)

#: Panzerarmee Afrika's map as its hex numbers imply (facts digest, "Orientation
#: and adjacency"): RRCC, pointy hexes in rows, the even rows a half hex east.
PAA = DigitIds(Grid("pointy", "even", "up"), "RRCC")


@given(grids, offsets)
def test_offset_axial_round_trip(grid: Grid, o: Offset) -> None:
    assert grid.to_offset(grid.to_axial(o)) == o


@given(grids, axials)
def test_axial_offset_round_trip(grid: Grid, h: Axial) -> None:
    assert grid.to_axial(grid.to_offset(h)) == h


@given(axials)
def test_neighbours_are_symmetric_and_at_distance_one(h: Axial) -> None:
    ns = neighbours(h)
    assert len(set(ns)) == 6
    for n in ns:
        assert h in neighbours(n)
        assert distance(h, n) == 1
        assert hexside(h, n) == hexside(n, h)


def _bfs_distance(a: Axial, b: Axial, limit: int) -> int:
    seen = {a: 0}
    todo = deque([a])
    while todo:
        h = todo.popleft()
        if h == b:
            return seen[h]
        if seen[h] >= limit:
            continue
        for n in neighbours(h):
            if n not in seen:
                seen[n] = seen[h] + 1
                todo.append(n)
    raise AssertionError("not found within the limit")


small = st.integers(min_value=-6, max_value=6)


@given(st.builds(Axial, small, small), st.builds(Axial, small, small))
def test_distance_equals_breadth_first_search(a: Axial, b: Axial) -> None:
    assert distance(a, b) == _bfs_distance(a, b, 30)


@given(st.integers(min_value=0, max_value=8), axials)
def test_ring_holds_the_hexes_at_that_distance(radius: int, centre: Axial) -> None:
    hexes = ring(centre, radius)
    assert len(hexes) == max(1, 6 * radius)
    assert len(set(hexes)) == len(hexes)
    assert all(distance(centre, h) == radius for h in hexes)


def test_hexside_of_non_adjacent_hexes_is_refused() -> None:
    with pytest.raises(NotAdjacent):
        hexside(Axial(0, 0), Axial(2, 0))
    with pytest.raises(NotAdjacent):
        hexside(Axial(0, 0), Axial(0, 0))


def test_paa_figure_7_adjacency() -> None:
    """PAA §11.4, Figure 7: with an Allied unit in 1005 the overrun from 0906
    is illegal (1005 is next to 0906) but legal from 0907 (1005 is not next
    to 0907); 1007 is not next to 0906; 0907 is next to 1006."""
    near = {PAA.format(n) for n in neighbours(PAA.parse("0906"))}
    assert near == {"0905", "0907", "0805", "0806", "1005", "1006"}
    assert "1007" not in near
    near_0907 = {PAA.format(n) for n in neighbours(PAA.parse("0907"))}
    assert "1006" in near_0907 and "1005" not in near_0907


@pytest.mark.parametrize("row", [8, 9, 12, 13])
def test_paa_rows_follow_the_digest_rule(row: int) -> None:
    """Neighbours of RRCC: (RR, CC±1), (RR±1, CC), plus (RR±1, CC-1) on odd
    rows or (RR±1, CC+1) on even rows."""
    col = 20
    extra = col - 1 if row % 2 else col + 1
    want = {(row, col - 1), (row, col + 1), (row - 1, col), (row + 1, col), (row - 1, extra), (row + 1, extra)}
    got = {(o.col, o.row) for o in PAA.grid.offset_neighbours(Offset(col, row))}
    assert got == {(c, r) for r, c in want}


def test_flat_odd_columns_golden() -> None:
    """Flat-top hexes, odd columns shoved down: an even column's neighbours
    reach up one row, an odd column's down one row."""
    grid = Grid("flat", "odd")
    assert set(grid.offset_neighbours(Offset(2, 2))) == {
        Offset(3, 2), Offset(3, 1), Offset(2, 1), Offset(1, 1), Offset(1, 2), Offset(2, 3)}
    assert set(grid.offset_neighbours(Offset(3, 2))) == {
        Offset(4, 2), Offset(4, 3), Offset(3, 1), Offset(2, 3), Offset(2, 2), Offset(3, 3)}


@given(grids, axials, st.sampled_from(range(6)))
def test_neighbouring_centres_are_one_hex_apart(grid: Grid, h: Axial, k: int) -> None:
    size = 5.0
    (ax, ay), (bx, by) = grid.centre(h, size), grid.centre(h + DIRECTIONS[k], size)
    assert math.isclose(math.hypot(bx - ax, by - ay), grid.across_flats(size))


def test_rows_up_mirrors_the_page() -> None:
    down, up = Grid("pointy", "even", "down"), Grid("pointy", "even", "up")
    h = Axial(3, 4)
    assert up.centre(h, 2.0) == (down.centre(h, 2.0)[0], -down.centre(h, 2.0)[1])


def test_corners_lie_on_the_circle_and_match_the_orientation() -> None:
    for grid in (Grid("pointy"), Grid("flat")):
        pts = grid.corners(0.0, 0.0, 3.0)
        assert all(math.isclose(math.hypot(x, y), 3.0) for x, y in pts)
        top = min(pts, key=lambda p: p[1])
        tops = [p for p in pts if math.isclose(p[1], top[1])]
        # A pointy hex has one corner at the top, a flat hex an edge (two).
        assert len(tops) == (1 if grid.orientation == "pointy" else 2)
        w, h = grid.extent(3.0)
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        assert math.isclose(max(xs) - min(xs), w) and math.isclose(max(ys) - min(ys), h)


# --- ids ---------------------------------------------------------------------------


@given(grids, st.integers(0, 99), st.integers(0, 99), st.sampled_from(["CCRR", "RRCC"]))
def test_digit_ids_round_trip(grid: Grid, col: int, row: int, order: str) -> None:
    ids = DigitIds(grid, order)  # type: ignore[arg-type]
    h = grid.to_axial(Offset(col, row))
    text = ids.format(h)
    assert len(text) == 4 and ids.parse(text) == h
    assert text == (f"{col:02d}{row:02d}" if order == "CCRR" else f"{row:02d}{col:02d}")


@pytest.mark.parametrize("bad", ["", "071", "07123", "07a2", "-712", "٠٧١٢", "07 12"])
def test_digit_ids_refuse_malformed_text(bad: str) -> None:
    with pytest.raises(HexIdError, match="expected 4 digits"):
        PAA.parse(bad)


def test_digit_ids_refuse_a_hex_outside_their_width() -> None:
    with pytest.raises(HexIdError, match="no RRCC id"):
        PAA.format(PAA.grid.to_axial(Offset(100, 3)))
    with pytest.raises(HexIdError):
        PAA.format(PAA.grid.to_axial(Offset(-1, 3)))


def test_named_ids() -> None:
    ids = NamedIds({"Sidi Barrani": Axial(1, 2), "Buq Buq": Axial(0, 2), "Sidi  barrani west": Axial(0, 3)})
    assert ids.parse("  sidi   BARRANI ") == Axial(1, 2)
    assert ids.format(Axial(0, 2)) == "Buq Buq"
    with pytest.raises(HexIdError, match="no hex is named 'Tobruk'"):
        ids.parse("Tobruk")
    with pytest.raises(HexIdError, match="has no name"):
        ids.format(Axial(9, 9))
    with pytest.raises(HexIdError, match="given twice"):
        NamedIds({"Bardia": Axial(0, 0), "BARDIA": Axial(1, 0)})


def _two_sheets() -> SheetIds:
    """Two sheets side by side, each 10 columns by 8 rows (CCRR from 01),
    sharing their edge column: sheet B's column 01 is sheet A's column 10.
    Sheet A shoves its odd columns down; B's column 01 stands where A's even
    column 10 does, so B shoves its even columns: each sheet has its own
    parity, and B's origin (its local axial (0, 0)) is A's axial (9, -4)."""
    a = Sheet("A", DigitIds(Grid("flat", "odd")), Axial(0, 0), (1, 10), (1, 8))
    b = Sheet("B", DigitIds(Grid("flat", "even")), Axial(9, -4), (1, 10), (1, 8))
    return SheetIds((a, b))


def test_sheet_ids_name_an_overlapping_hex_twice() -> None:
    ids = _two_sheets()
    # A column-10 hex is also sheet B's column 01, row for row.
    for row in range(1, 9):
        h = ids.parse(f"A10{row:02d}")
        assert ids.aliases(h) == (f"A10{row:02d}", f"B01{row:02d}")
        assert ids.parse(f"b01{row:02d}") == h
        assert ids.format(h) == f"A10{row:02d}"
    assert ids.aliases(ids.parse("B0503")) == ("B0503",)


def test_sheet_ids_keep_adjacency_across_the_sheet_edge() -> None:
    ids = _two_sheets()
    for row in range(2, 8):
        a = ids.parse(f"A09{row:02d}")
        # Across the shared column, the neighbours read on sheet B are the
        # same hexes as those read on sheet A.
        on_a = {ids.parse(f"A10{r:02d}") for r in range(1, 9)} & set(neighbours(a))
        assert on_a, row
        b_edge = {ids.parse(f"B01{r:02d}") for r in range(1, 9)} & set(neighbours(a))
        assert on_a == b_edge
        assert {ids.parse(f"B02{r:02d}") for r in range(1, 9)} & set(neighbours(a)) == set()


@pytest.mark.parametrize("bad,why", [("C0101", "no sheet 'C'"), ("A1109", "prints no such hex"),
                                     ("A", "sheet letter and digits"), ("0101", "sheet letter and digits")])
def test_sheet_ids_refuse(bad: str, why: str) -> None:
    with pytest.raises(HexIdError, match=why):
        _two_sheets().parse(bad)


def test_a_hex_on_no_sheet_has_no_id() -> None:
    with pytest.raises(HexIdError, match="on no sheet"):
        _two_sheets().format(Axial(40, 40))


# --- paths -------------------------------------------------------------------------


def _open(a: Axial, b: Axial) -> int | None:
    return 1


def test_reach_counts_steps_within_the_budget() -> None:
    r = reach(Axial(0, 0), neighbours, _open, budget=2)
    assert set(r.cost) == {h for k in range(3) for h in ring(Axial(0, 0), k)}
    assert all(r.cost[h] == distance(Axial(0, 0), h) for h in r.cost)


@given(st.builds(Axial, small, small))
def test_path_recovery_gives_a_cheapest_path(goal: Axial) -> None:
    r = reach(Axial(0, 0), neighbours, _open, budget=12)
    path = r.path_to(goal)
    assert path[0] == Axial(0, 0) and path[-1] == goal
    assert path_cost(path, _open) == r.cost[goal] == distance(Axial(0, 0), goal)


def test_stops_end_movement_on_entering() -> None:
    """A zone of control: entering costs as usual, but no step leads on."""
    zoc = {Axial(1, 0), Axial(1, -1), Axial(0, -1), Axial(-1, 0), Axial(-1, 1)}
    r = reach(Axial(0, 0), neighbours, _open, budget=3, stops=lambda h: h in zoc)
    assert all(h in r.cost for h in zoc)
    # Only the free side, (0, 1), leads on.
    beyond = {h for h in r.cost if distance(Axial(0, 0), h) >= 2}
    assert beyond and all(r.path_to(h)[1] == Axial(0, 1) for h in beyond)
    # The start itself may be in a zone of control: it still moves.
    r2 = reach(Axial(0, 0), neighbours, _open, budget=1, stops=lambda h: True)
    assert len(r2.cost) == 7


def test_forbidden_steps_and_costs() -> None:
    wall = {Axial(1, 0), Axial(1, -1), Axial(0, 1), Axial(1, 1)}

    def cost(a: Axial, b: Axial) -> int | None:
        if b in wall:
            return None
        return 3 if b.r < 0 else 1

    found = shortest_path(Axial(0, 0), Axial(2, 0), neighbours, cost, budget=20)
    assert found is not None
    total, path = found
    assert total == path_cost(path, cost)
    assert not set(path) & wall
    assert shortest_path(Axial(0, 0), Axial(2, 0), neighbours, cost, budget=2) is None
    assert path_cost([Axial(0, 0), Axial(1, 0)], cost) is None
    assert path_cost([Axial(0, 0)], cost) == 0


def test_negative_costs_are_refused() -> None:
    with pytest.raises(ValueError, match="negative step cost"):
        reach(Axial(0, 0), neighbours, lambda a, b: -1, budget=3)


def test_paths_work_over_a_game_s_own_ids() -> None:
    """The path functions take any hashable hex: here, PAA's printed ids."""
    def near(text: str) -> list[str]:
        # A small board: rows 05-13, columns 03-13.
        out = []
        for n in neighbours(PAA.parse(text)):
            col, row = PAA.grid.to_offset(n)
            if 5 <= row <= 13 and 3 <= col <= 13:
                out.append(PAA.format(n))
        return out

    found = shortest_path("0906", "0910", near, lambda a, b: 3 if b != "0908" else None)
    assert found is not None
    total, path = found
    assert path[0] == "0906" and path[-1] == "0910" and "0908" not in path
    assert total == 3 * (len(path) - 1) == 15


def test_unreached_goal_has_no_path() -> None:
    r = reach(Axial(0, 0), neighbours, _open, budget=1)
    with pytest.raises(KeyError):
        r.path_to(Axial(5, 5))
