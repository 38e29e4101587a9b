"""The unit roster: unit types chart (RB 2.2), blocks, validation of broken copies."""

from __future__ import annotations

import re

import pytest

from rules.ritd.datafiles import DataError, read_bytes
from rules.ritd.units import (
    UNIT_TYPES,
    UnknownUnit,
    load_units,
    load_units_bytes,
    normalize_name,
)

REAL = read_bytes("units.toml").decode()

# RB 21.0 Unit Substitution table: the Allied game units it names.
RB_21_DESIGNATIONS = (
    "4 Ind/5",
    "4 Ind/11",
    "4 Ind/7 Mot",
    "4 Ind/3 Mot",
    "70/23",
    "70/14+16",
    "7 Aus/18",
    "9 Aus/20",
    "Pol",
    "7/7 Tk",
    "2 NZ/4",
    "2 NZ/5",
    "2 NZ/6",
    "22 Gd",
)


def with_unit_line(name: str, field: str, new_line: str | None) -> bytes:
    """The real units.toml with ``field``'s line of unit ``name`` replaced
    by ``new_line`` (or added when the unit has no such field)."""
    blocks = REAL.split("[[unit]]")
    hits = [i for i, b in enumerate(blocks) if f'\nname = "{name}"\n' in b]
    assert len(hits) == 1, name
    block = blocks[hits[0]]
    pattern = re.compile(rf"^{re.escape(field)} = .*$", re.MULTILINE)
    if pattern.search(block):
        block = pattern.sub(new_line or "", block, count=1)
    else:
        assert new_line is not None
        block = block.replace(f'\nname = "{name}"\n', f'\nname = "{name}"\n{new_line}\n')
    blocks[hits[0]] = block
    return "[[unit]]".join(blocks).encode()


def load_error(data: bytes) -> str:
    with pytest.raises(DataError) as info:
        load_units_bytes(data)
    return str(info.value)


# --- the real file -------------------------------------------------------


def test_units_toml_loads_and_is_cached() -> None:
    roster = load_units()
    assert len(roster) > 0
    assert load_units() is roster
    assert {u.side for u in roster} == {"axis", "allied"}


def test_rb_2_2_unit_types_chart() -> None:
    # RB 2.2 Unit Types Chart: class columns, speed rows; recon: decision D-02.
    chart = {
        "recon": ("armor", 4),
        "armor": ("armor", 3),
        "mech_inf": ("infantry", 3),
        "mobile_at": ("antitank", 3),
        "sp_artillery": ("artillery", 3),
        "mot_inf": ("infantry", 2),
        "mot_at": ("antitank", 2),
        "infantry": ("infantry", 1),
        "para": ("infantry", 1),
        "artillery": ("artillery", 1),
    }
    assert {k: (t.arms_class, t.speed) for k, t in UNIT_TYPES.items()} == chart


def test_rb_16_54_bp_cost_per_cv() -> None:
    # RB 16.54 sidebar: Armor & Recon 3, Anti-Tank 3, Artillery 3,
    # Mech & Motor Infantry 2, Leg Infantry & Para 1.
    assert {k: t.bp_per_cv for k, t in UNIT_TYPES.items()} == {
        "recon": 3,
        "armor": 3,
        "mobile_at": 3,
        "mot_at": 3,
        "sp_artillery": 3,
        "artillery": 3,
        "mech_inf": 2,
        "mot_inf": 2,
        "infantry": 1,
        "para": 1,
    }


def test_rb_2_4_every_german_unit_is_elite_and_no_italian_is() -> None:
    roster = load_units()
    germans = [u for u in roster if u.nationality == "german"]
    italians = [u for u in roster if u.nationality == "italian"]
    assert germans and italians
    assert all(u.elite for u in germans)
    assert not any(u.elite for u in italians)


def test_rb_2_4_some_allied_tank_units_are_elite_and_only_tanks() -> None:
    allied = load_units().side("allied")
    elite = [u for u in allied if u.elite]
    assert elite, "RB 2.4: some Allied tank units are elite"
    assert all(u.type == "armor" and not u.army_tank for u in elite)
    assert any(u.type == "armor" and not u.elite for u in allied)


def test_rb_2_3_cv_levels_fit_a_label() -> None:
    for unit in load_units():
        levels = unit.cv_levels
        assert levels[0] == unit.max_cv and levels[-1] == unit.min_cv, unit.name
        assert 1 <= len(levels) <= 4, unit.name
        assert all(a - b == unit.cv_per_step for a, b in zip(levels, levels[1:])), unit.name
    assert load_units().get("21Pz/5").cv_levels == (6, 4, 2)
    assert load_units().get("Brescia").cv_levels == (4, 3, 2, 1)


def test_rb_21_0_designations_are_allied_blocks() -> None:
    roster = load_units()
    for name in RB_21_DESIGNATIONS:
        unit = roster.get(name)
        assert unit.name == name and unit.side == "allied"
        assert unit.source.startswith("RB 21.0"), name


def test_rb_17_0_i_tanks_are_the_1at_and_32at_blocks() -> None:
    tanks = load_units().i_tanks()
    assert sorted(u.name.split("/")[0] for u in tanks) == ["1AT", "1AT", "32AT", "32AT"]
    assert all(u.type == "armor" and u.speed == 3 and not u.elite for u in tanks)


def test_every_value_not_stated_by_rb_is_marked_authored() -> None:
    for unit in load_units():
        assert unit.source.startswith(("RB ", "authored:")), unit.name
        # RB states no CV, type or month for any block: all are authored.
        assert unit.is_authored, unit.name


def test_rb_2_0_codes_by_side() -> None:
    roster = load_units()
    tobruk = [u for u in roster if u.appearance == "T"]
    malta = [u for u in roster if u.appearance == "M"]
    assert tobruk and all(u.side == "allied" for u in tobruk)
    assert malta and all(u.side == "axis" for u in malta)


def test_lookup_ignores_case_and_spacing() -> None:
    roster = load_units()
    assert roster.get("7/7tk").name == "7/7 Tk"
    assert roster.get("  4 ind/7 MOT ").name == "4 Ind/7 Mot"
    assert "21pz/5" in roster
    assert normalize_name("2 NZ/4") == normalize_name("2nz/4")


def test_unknown_unit_suggests_close_names() -> None:
    with pytest.raises(UnknownUnit) as info:
        load_units().get("7/7 Tj")
    assert "7/7 Tk" in info.value.suggestions
    assert "did you mean" in str(info.value)


# --- broken copies --------------------------------------------------------


def test_broken_unknown_unit_type_names_the_unit() -> None:
    message = load_error(with_unit_line("21Pz/5", "type", 'type = "tank"'))
    assert message.startswith('units.toml: unit "21Pz/5": invalid entry')
    assert "'tank'" in message and "type" in message


def test_broken_duplicate_name() -> None:
    message = load_error(with_unit_line("15Pz/8", "name", 'name = "21Pz/5"'))
    assert message == (
        'units.toml: unit "21Pz/5": duplicate name (same as unit "21Pz/5" ignoring case and spaces)'
    )


def test_broken_duplicate_name_ignoring_spacing() -> None:
    message = load_error(with_unit_line("KDG", "name", 'name = "7/7tk"'))
    assert 'unit "7/7tk": duplicate name (same as unit "7/7 Tk"' in message


def test_broken_cv_above_four_steps() -> None:
    message = load_error(with_unit_line("Brescia", "max_cv", "max_cv = 5"))
    assert message.startswith('units.toml: unit "Brescia": max_cv 5 exceeds 4 steps')


def test_broken_elite_cv_in_part_steps() -> None:
    message = load_error(with_unit_line("21Pz/5", "max_cv", "max_cv = 5"))
    assert 'unit "21Pz/5": max_cv 5 and min_cv 2 differ by a part step' in message


def test_broken_max_below_min() -> None:
    message = load_error(with_unit_line("Pavia", "max_cv", "max_cv = 0"))
    assert 'unit "Pavia": max_cv 0 is below min_cv 1' in message


def test_broken_float_where_int_required() -> None:
    message = load_error(with_unit_line("Pavia", "max_cv", "max_cv = 4.0"))
    assert message.startswith('units.toml: unit "Pavia": invalid entry')
    assert "Expected `int`, got `float`" in message and "max_cv" in message


def test_broken_float_appearance() -> None:
    message = load_error(with_unit_line("15Pz/8", "appearance", "appearance = 3.0"))
    assert 'unit "15Pz/8"' in message and "got `float`" in message


def test_broken_unknown_field() -> None:
    message = load_error(with_unit_line("Trento", "speed", "speed = 2"))
    assert message.startswith('units.toml: unit "Trento": invalid entry')
    assert "unknown field `speed`" in message


def test_broken_non_elite_german() -> None:
    message = load_error(with_unit_line("21Pz/3", "elite", "elite = false"))
    assert message.startswith('units.toml: unit "21Pz/3": ')
    assert "German units are all elite (RB 2.4)" in message


def test_broken_elite_allied_infantry() -> None:
    message = load_error(
        with_unit_line("22 Gd", "elite", "elite = true").replace(
            b'name = "22 Gd"\nnationality = "british"\ntype = "mot_inf"\nelite = true\n'
            b"max_cv = 4\nmin_cv = 1",
            b'name = "22 Gd"\nnationality = "british"\ntype = "mot_inf"\nelite = true\n'
            b"max_cv = 4\nmin_cv = 2",
        )
    )
    assert "only Allied tank units may be elite (RB 2.4)" in message


def test_broken_axis_unit_in_tobruk_code() -> None:
    message = load_error(with_unit_line("Pavia", "appearance", 'appearance = "T"'))
    assert 'unit "Pavia": appearance "T" (starts in Tobruk) is an Allied code' in message


def test_broken_unknown_appearance_code() -> None:
    message = load_error(with_unit_line("Pavia", "appearance", 'appearance = "X"'))
    assert 'unit "Pavia": invalid entry' in message and "'X'" in message


def test_broken_month_outside_the_game() -> None:
    message = load_error(with_unit_line("15Pz/8", "appearance", "appearance = 21"))
    assert 'unit "15Pz/8": appearance month 21 is outside 1..20' in message


def test_broken_source_without_basis() -> None:
    message = load_error(with_unit_line("KDG", "source", 'source = "trust me"'))
    assert 'unit "KDG": source must start with "RB " or "authored:"' in message


def test_broken_i_tank_marked_elite() -> None:
    data = with_unit_line("32AT/1", "elite", "elite = true").replace(
        b"max_cv = 4\nmin_cv = 1\nappearance = \"T\"\narmy_tank",
        b"max_cv = 4\nmin_cv = 2\nappearance = \"T\"\narmy_tank",
    )
    assert "I-tanks are elite only under the optional rule" in load_error(data)


def test_broken_not_toml() -> None:
    message = load_error(b"[[unit]\nname = ")
    assert message.startswith("units.toml: not valid TOML")


def test_broken_empty_roster() -> None:
    assert load_error(b"unit = []\n") == "units.toml: the roster has no units"


def test_all_problems_of_a_unit_are_listed() -> None:
    data = with_unit_line("21Pz/3", "elite", "elite = false")
    data = data.replace(
        b'name = "21Pz/3"\nnationality = "german"\ntype = "recon"\nelite = false\nmax_cv = 4',
        b'name = "21Pz/3"\nnationality = "german"\ntype = "recon"\nelite = false\nmax_cv = 9',
    )
    message = load_error(data)
    assert "exceeds 4 steps" in message and "German units are all elite" in message
