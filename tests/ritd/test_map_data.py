"""map.toml loads, and broken copies fail with an error naming the entry."""

from __future__ import annotations

import re

import pytest

from rules.ritd.datafiles import DataError, read_bytes
from rules.ritd.hexmap import load_map, load_map_bytes

GOOD = read_bytes("map.toml").decode()


def broken(old: str, new: str, count: int = 1) -> bytes:
    assert GOOD.count(old) >= 1, old
    return GOOD.replace(old, new, count).encode()


def fails(data: bytes, *fragments: str) -> str:
    with pytest.raises(DataError) as info:
        load_map_bytes(data)
    message = str(info.value)
    assert message.startswith("map.toml: ")
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_map_loads_and_is_cached() -> None:
    m = load_map()
    assert load_map() is m
    assert m.columns == 22 and m.rows == 12 and len(m.hexes) == 22 * 12
    assert load_map_bytes(GOOD.encode()).resolve("Tobruk") == m.resolve("Tobruk")


def test_every_entry_is_marked_rb_or_authored() -> None:
    sources = re.findall(r'^source = "([^"]*)"', GOOD, flags=re.MULTILINE)
    assert len(sources) > 60
    for source in sources:
        assert source.startswith(("RB ", "authored: ")), source


def test_unknown_hexside_terrain_names_the_hexside() -> None:
    fails(broken('terrain = "ridge"', 'terrain = "swamp"'), 'hexside "Sollum SE": unknown terrain "swamp"')


def test_hexside_off_the_map_edge() -> None:
    fails(broken('"Sollum NW"', '"El Agheila W"'), 'hexside "El Agheila W"', "map edge")


def test_authored_hexside_on_the_sea_is_rejected() -> None:
    fails(broken('"Sollum NW"', '"Tobruk NW"'), 'hexside "Tobruk NW"', "borders sea")


def test_duplicate_hexside() -> None:
    fails(
        broken('sides = ["Buq Buq SE"]', 'sides = ["Buq Buq SE", "Sofafi NW"]'),
        'hexside "Sofafi NW"',
        "duplicate hexside",
    )


def test_unknown_name_in_a_hexside_suggests_a_spelling() -> None:
    fails(broken('"Sollum NW"', '"Solum NW"'), 'hexside "Solum NW"', "did you mean 'Sollum'")


def test_road_between_non_adjacent_hexes() -> None:
    fails(
        broken('path = ["Mechili", "Derna SW1", "Derna"]', 'path = ["Mechili", "Derna"]'),
        'road "Mechili-Derna trail" step "Mechili" -> "Derna"',
        "not adjacent",
    )


def test_road_on_a_sea_hexside() -> None:
    fails(
        broken('path = ["Mechili", "Derna SW1", "Derna"]', 'path = ["Mechili", "Derna SW1", "Derna", "Derna E1"]'),
        'road "Mechili-Derna trail" step "Derna" -> "Derna E1"',
        "sea hexside",
    )


def test_road_across_a_ridge_without_a_gap() -> None:
    fails(
        broken('path = ["Ghemines", "Benghazi E1"]', 'path = ["Buq Buq", "Sofafi"]'),
        'step "Buq Buq" -> "Sofafi"',
        "ridge hexside with no gap",
    )


def test_two_roads_on_one_hexside() -> None:
    fails(broken('path = ["Ghemines", "Benghazi E1"]', 'path = ["Ghemines", "Beda Fomm"]'), "already carries")


def test_unknown_road_kind() -> None:
    fails(broken('kind = "trail"', 'kind = "motorway"'), 'road "Ghemines-Er Regima trail"', 'unknown road kind "motorway"')


def test_unknown_name_in_a_road() -> None:
    fails(broken('"Derna SW1"', '"Derna NW1"'), 'road "Mechili-Derna trail" hex "Derna NW1"', "off the map")


def test_duplicate_place_hex() -> None:
    fails(broken('hex = "0108"', 'hex = "0109"'), 'place "Mersa Brega"', "duplicate hex", '"El Agheila"')


def test_duplicate_place_name() -> None:
    fails(broken('aliases = ["Matruh"]', 'aliases = ["Msus"]'), 'place "Mersa Matruh"', 'already used by "Msus"')


def test_place_in_the_sea() -> None:
    fails(broken('hex = "1103"', 'hex = "1102"'), 'place "Tobruk"', "is sea, not land")


def test_fortress_needs_port_capacities() -> None:
    fails(broken("port_axis = 2\n", ""), 'place "Tobruk"', "port_axis")


def test_unknown_place_kind() -> None:
    fails(broken('kind = "oasis"', 'kind = "spring"'), 'place "Siwa"', 'unknown kind "spring"')


def test_duplicate_row() -> None:
    fails(broken("row = 2\n", "row = 1\n"), "row 1", "duplicate row")


def test_row_of_wrong_length() -> None:
    fails(broken('cells = "~~~~~^^.~~~~~~~~~~~~~~"', 'cells = "~~~~~^^.~~~~~~~~~~~~~"'), "row 1", "21 characters")


def test_unknown_cell_character() -> None:
    fails(broken('cells = "~~~~~^^.~~~~~~~~~~~~~~"', 'cells = "~~~~~^^X~~~~~~~~~~~~~~"'), "row 1 hex 0801", "unknown cell 'X'")


def test_unknown_area_letter() -> None:
    fails(broken('area =  "-----LLL--------------"', 'area =  "-----LLQ--------------"'), "row 1 hex 0801", "unknown area 'Q'")


def test_line_with_unknown_place() -> None:
    fails(
        broken('path = ["Gazala", "Segnali Rotunda"', 'path = ["Gazala", "Segnali Rotonde"'),
        'line "Gazala Axis line" hex "Segnali Rotonde"',
        "did you mean 'Segnali Rotunda'",
    )


def test_schema_errors_name_the_field() -> None:
    fails(broken('hex_km = 45', 'hex_km = "45"'), "$.map.hex_km")
    fails(broken("[[roads]]\n", "[[roads]]\nwidth = 3\n"), "width")


def test_not_toml() -> None:
    fails(b"[map\n", "not valid TOML")
