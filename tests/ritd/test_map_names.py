"""Location names (RB 1.1): parse, print, round trip, "did you mean"."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.ritd.hexmap import load_map
from rules.ritd.names import AXIAL_STEP, DIRECTIONS, UnknownLocation, decompose

MAP = load_map()
HEXES = sorted(MAP.hexes)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Msus E1", "Msus E1"),
        ("El Alamein SW1", "El Alamein SW1"),
        ("Alamein SW2", "El Alamein SW2"),  # RB 16.55 spelling
        ("Ft. Capuzzo", "Ft Capuzzo"),  # RB 19.0 spelling
        ("  tobruk  ", "Tobruk"),
        ("Agheila", "El Agheila"),
        ("Bir el Gubi", "Bir Guba"),
        ("Tobruk E1 SE2", "Ft Capuzzo"),
        ("Sidi Barrani e1", "Mersa Matruh W1"),  # RB 19.0 "the hex east of Sidi Barrani"
        ("1103", "Tobruk"),
        ("1103 E1", "Tobruk E1"),
    ],
)
def test_rb_1_1_names_parse_and_print(text: str, expected: str) -> None:
    assert MAP.name(MAP.resolve(text)) == expected


def test_rb_1_1_msus_e1_is_one_hex_east_of_msus() -> None:
    assert MAP.neighbour(MAP.resolve("Msus"), "E") == MAP.resolve("Msus E1")


def test_every_hex_has_a_unique_canonical_name_that_round_trips() -> None:
    names = {MAP.name(h): h for h in HEXES}
    assert len(names) == len(HEXES)
    for name, h in names.items():
        assert MAP.resolve(name) == h


@given(st.sampled_from(HEXES), st.lists(st.tuples(st.sampled_from(DIRECTIONS), st.integers(1, 4)), max_size=3))
def test_chained_offsets_equal_stepping(start: str, steps: list[tuple[str, int]]) -> None:
    text = " ".join([MAP.name(start)] + [f"{d}{n}" for d, n in steps])
    h = MAP.hex(start)
    q, r = h.q, h.r
    for d, n in steps:
        q, r = q + AXIAL_STEP[d][0] * n, r + AXIAL_STEP[d][1] * n
    target = next((x.id for x in MAP.hexes.values() if (x.q, x.r) == (q, r)), None)
    if target is None:
        with pytest.raises(UnknownLocation, match="off the map"):
            MAP.resolve(text)
    else:
        assert MAP.resolve(text) == target
        assert MAP.resolve(MAP.name(target)) == target


@given(st.integers(-12, 12), st.integers(-12, 12))
def test_decompose_is_shortest_and_exact(dq: int, dr: int) -> None:
    runs = decompose(dq, dr)
    assert len(runs) <= 2
    assert sum(n for _, n in runs) == (abs(dq) + abs(dr) + abs(dq + dr)) // 2
    assert (sum(AXIAL_STEP[d][0] * n for d, n in runs), sum(AXIAL_STEP[d][1] * n for d, n in runs)) == (dq, dr)


def test_unknown_name_suggests_did_you_mean() -> None:
    with pytest.raises(UnknownLocation) as info:
        MAP.resolve("Tobruck")
    assert "did you mean 'Tobruk'" in str(info.value)
    assert info.value.suggestions == ("Tobruk",)
    assert isinstance(info.value, ValueError)


def test_unknown_name_with_offset_suggests_the_place() -> None:
    with pytest.raises(UnknownLocation, match="did you mean 'Sidi Barrani'"):
        MAP.resolve("Sidi Barani E1")


@pytest.mark.parametrize("text", ["", "Narnia", "Tobruk NE9", "9999", "Msus N1"])
def test_unknown_locations_raise(text: str) -> None:
    with pytest.raises(UnknownLocation):
        MAP.resolve(text)


def test_areas_resolve_to_hex_sets() -> None:
    assert MAP.resolve("Tobruk") in MAP.area_hexes("libya")
    assert MAP.area_hexes("Sollum") == {MAP.resolve("Sollum")}
    with pytest.raises(UnknownLocation, match="did you mean 'Egypt'"):
        MAP.area_hexes("Egipt")


def test_hexside_names() -> None:
    assert MAP.hexside_name(MAP.resolve("Sollum"), MAP.resolve("Ft Capuzzo")) == "Sollum W"
