"""PAA §11.1 land movement (Table 1, Figure 6, §11.1.1-§11.1.5)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.paa.movement import Mover, move_problems, oos_movement_problems, path_cost, reachable, step_options
from rules.paa.units import Piece
from tests.paa.fakemap import FakeMap, Side, along, block

ROAD = ("1826", "1726", "1725", "1724")


def figure_6_map(*, connected: bool = False) -> FakeMap:
    """Figure 6: a road from 1826 to 1724, a track from 1724 to 1723; the
    ground around is rough with escarpments, which road and track negate."""
    sides = {**along(ROAD, road=True, escarpment=True), **along(("1724", "1723"), track=True)}
    return FakeMap(
        cells=block(range(16, 20), range(21, 29)),
        terrains=dict.fromkeys(("1726", "1725", "1724", "1723"), "rough"),
        sides=sides,
        connected=frozenset({"1724"}) if connected else frozenset(),
    )


def br_7_abde(hex_id: str = "1826", mf: int = 20) -> Piece:
    return Piece("BR 7/ABDE", "allied", "BR", "armoured", 4, mf, hex_id)


def test_figure_6_road_then_unconnected_track_costs_7_mf_s11_1_2() -> None:
    """Figure 6: 3 road hexes at 1 MF, then +2 for the change at 1724 and 2
    for the track into 1723: 4 MF for the last hex, 7 MF in total."""
    board = figure_6_map()
    assert path_cost(board, ROAD, mover="regular") == 3
    assert path_cost(board, (*ROAD, "1723"), mover="regular") == 7
    assert step_options(board, "1724", "1723", mover="regular", entered_by="road")[0] == (4, "track")
    assert move_problems(board, br_7_abde(mf=7), (*ROAD, "1723")) == []
    assert [p.rule for p in move_problems(board, br_7_abde(mf=6), (*ROAD, "1723"))] == ["§11.1"]


def test_figure_6_connected_road_and_track_have_no_change_cost_s11_1_2() -> None:
    assert path_cost(figure_6_map(connected=True), (*ROAD, "1723"), mover="regular") == 5


def test_transport_may_not_change_where_not_connected_s11_1_3() -> None:
    assert path_cost(figure_6_map(), (*ROAD, "1723"), mover="transport") is None
    assert path_cost(figure_6_map(connected=True), (*ROAD, "1723"), mover="transport") == 3 + 8


def test_transport_only_along_roads_and_tracks_s11_1_3() -> None:
    board = FakeMap(cells=block(range(1, 4), range(1, 5)))
    assert path_cost(board, ("0202", "0203"), mover="transport") is None
    assert path_cost(board, ("0202", "0203"), mover="regular") == 3


def test_terrain_costs_table_1_s11_1_2() -> None:
    board = FakeMap(
        cells=block(range(1, 4), range(1, 6)),
        terrains={"0203": "rough", "0204": "swamp", "0205": "sea"},
        sides={frozenset(("0203", "0204")): Side(escarpment=True), frozenset(("0201", "0202")): Side(prohibited=True)},
    )
    assert path_cost(board, ("0202", "0203"), mover="regular") == 10
    assert path_cost(board, ("0203", "0204"), mover="regular") == 10 + 10
    assert path_cost(board, ("0204", "0205"), mover="regular") is None
    assert path_cost(board, ("0202", "0201"), mover="regular") is None
    assert path_cost(board, ("0102", "0202"), mover="regular") == 3


def test_enemy_zoc_stops_and_must_be_left_first_s11_1_4() -> None:
    board = FakeMap(cells=block(range(1, 4), range(1, 8)))
    unit = Piece("IT 132/AREGT", "axis", "IT", "armoured", 4, 12, "0201")
    ezoc = frozenset({"0203", "0204", "0201", "0202"})
    probs = move_problems(board, unit, ("0201", "0202", "0203"), ezoc=ezoc)
    assert {p.rule for p in probs} == {"§11.1.4"}
    assert len(probs) == 2  # leaves into EZOC, then passes through EZOC
    free = frozenset({"0203"})
    assert move_problems(board, unit, ("0201", "0202", "0203"), ezoc=free) == []
    assert [p.rule for p in move_problems(board, unit, ("0201", "0202", "0203", "0204"), ezoc=free)] == ["§11.1.4"]
    r = reachable(board, "0201", mover="regular", mf=12, ezoc=ezoc)
    assert r["0202"] == 6  # not 3 straight in: first out via 0102, then back into EZOC
    line = FakeMap(cells=block([2], range(1, 8)))  # a single row: the only way on is through 0203
    assert "0204" not in reachable(line, "0201", mover="regular", mf=12, ezoc={"0203"})
    assert reachable(line, "0201", mover="regular", mf=12)["0205"] == 12


def test_enemy_fort_zoc_stops_s11_1_5() -> None:
    board = FakeMap(cells=block(range(1, 4), range(1, 8)))
    unit = Piece("DE 104/IREGT", "axis", "DE", "infantry", 4, 12, "0201")
    assert [p.rule for p in move_problems(board, unit, ("0201", "0202", "0203"), fort_zoc={"0202"})] == ["§11.1.5"]
    line = FakeMap(cells=block([2], range(1, 8)))
    assert "0203" not in reachable(line, "0201", mover="regular", mf=12, fort_zoc={"0202"})


def test_oos_ooc2_and_enemy_hexes_s11_and_s10_3() -> None:
    board = FakeMap(cells=block(range(1, 4), range(1, 8)))
    oos = Piece("AU 20/IBDE", "allied", "AU", "infantry", 2, 12, "0201", oos=True, ooc2=True)
    assert {p.rule for p in move_problems(board, oos, ("0201", "0202"))} == {"§11", "§10.3"}
    ok = Piece("AU 20/IBDE", "allied", "AU", "infantry", 2, 12, "0201")
    assert [p.rule for p in move_problems(board, ok, ("0201", "0202"), blocked={"0202"})] == ["§11.1"]


def test_oos_limitations_s11_1_1() -> None:
    allied = Piece("AU 20/IBDE", "allied", "AU", "infantry", 2, 12, "0201")
    italian = Piece("IT 132/AREGT", "axis", "IT", "armoured", 4, 12, "0201")
    german = Piece("DE 104/IREGT", "axis", "DE", "infantry", 4, 12, "0201")
    for p in (allied, italian):
        assert oos_movement_problems(p, started_in_supply=True, supplied_after_steps=(True, False, True))
        assert not oos_movement_problems(p, started_in_supply=True, supplied_after_steps=(True, True))
    assert not oos_movement_problems(german, started_in_supply=True, supplied_after_steps=(False, False))
    assert oos_movement_problems(german, started_in_supply=False, supplied_after_steps=(True,))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 25), st.integers(0, 25), st.sampled_from(["regular", "transport"]))
def test_reach_is_monotone_in_mf_s11_1(small: int, extra: int, mover: str) -> None:
    """More MF never reaches less, nor at a different least cost within the smaller budget."""
    board = figure_6_map()
    m: Mover = "regular" if mover == "regular" else "transport"
    a = reachable(board, "1826", mover=m, mf=small)
    b = reachable(board, "1826", mover=m, mf=small + extra)
    assert set(a) <= set(b)
    assert all(b[h] == c for h, c in a.items())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(sorted(block(range(16, 20), range(21, 29)))), min_size=2, max_size=6))
def test_path_cost_is_monotone_along_a_path_s11_1(path: list[str]) -> None:
    """A longer prefix of a path never costs less (costs are never negative)."""
    board = figure_6_map()
    costs = [path_cost(board, path[:k], mover="regular") for k in range(1, len(path) + 1)]
    finite = [c for c in costs if c is not None]
    assert finite == sorted(finite)
