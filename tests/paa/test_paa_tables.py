"""PAA Tables as transcribed (Tables 1, 5, 6, 7, 9, 11, 12, the counter-attack multiplier)."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.paa import tables as t
from rules.paa.supply import supply_states
from rules.paa.units import Faction, Piece
from tests.paa.fakemap import FakeMap, block


def test_table_1_movement_and_combat_effects() -> None:
    """Table 1: clear 3, rough 10, swamp 10, escarpment +10, road 1, track 2
    (transport 8), change +2, overrun +10; rough and swamp 2× DF (swamp Axis
    only), Bardia 2×, Tobruk 5× (R-01), escarpment ½× AF."""
    assert t.TERRAIN_MF == {"clear": 3, "rough": 10, "swamp": 10}
    assert (t.ESCARPMENT_MF, t.CHANGE_MF, t.OVERRUN_MF) == (10, 2, 10)
    assert t.ROAD_MF == {"regular": 1, "transport": 1} and t.TRACK_MF == {"regular": 2, "transport": 8}
    assert t.TERRAIN_DF == {"rough": 2, "swamp": 2} and {"axis"} == t.SWAMP_DF_FACTIONS
    assert t.FORT_DF == {"1925": 5, "1730": 2} and Fraction(1, 2) == t.ESCARPMENT_AF


def test_table_5_supply_states() -> None:
    """Table 5 (R-02): OOS > 20 MF: no move, no attack, ½ DF; GS ≤ 20: ½ AF; AS ≤ 8: ×1; MAS: 2× AF."""
    rows = {k: tuple(map(str, (r.mf, r.af, r.df))) for k, r in t.SUPPLY_TABLE.items()}
    assert rows == {"OOS": ("0", "0", "1/2"), "GS": ("1", "1/2", "1"), "AS": ("1", "1", "1"), "MAS": ("1", "2", "1")}
    assert (t.GS_RANGE, t.AS_RANGE) == (20, 8)


def test_table_7_c2_columns() -> None:
    """Table 7: die 1 → 1, 3, 7 | 1, 7 ... die 6 → 6, 0, 2 | 6."""
    assert [sorted(t.C2_SINGLE[d]) for d in range(1, 7)] == [[1, 3, 7], [2, 4, 8], [3, 5, 9], [0, 4, 6], [1, 5, 7], [0, 2, 6]]
    assert [sorted(t.C2_PER_HEX[d]) for d in range(1, 7)] == [[1, 7], [2, 8], [3, 9], [0, 4], [5], [6]]


def test_table_9_rows_and_counter_attack_multiplier() -> None:
    assert t.CRT[1] == (2, 2, 3, 4, 4, 6, 6, 6, 8, 10, 10)
    assert t.CRT[6] == (0, 0, 0, 2, 3, 3, 4, 4, 6, 6, 6)
    assert all(len(row) == len(t.CRT_COLUMNS) == 11 for row in t.CRT.values())
    assert (t.COUNTER_ATTACK_GERMAN, t.COUNTER_ATTACK_OTHER) == (4, 2)


def test_table_6_8_11_12_shapes() -> None:
    assert {False: {1, 2, 3, 4}, True: {1, 2}} == t.MALTA_SUCCESS
    assert sorted(t.CAPTURE_TURN_1_BY_AXIS) == [1, 2, 3, 4] and sorted(t.CAPTURE_OTHERWISE) == [1, 2]
    assert set(t.TABLE_11) == {"none", "success", "failure"}
    assert [r.low for r in t.TABLE_12] == [5, 3, 2, 1, None]
    assert t.TOBRUK_HOLD_TURNS == 21


ROW = FakeMap(cells=block([7], range(1, 16)), bases={"axis": frozenset({"0701", "0702", "0703"})},
              base_centres={"axis": "0702"})
CONTROL: dict[str, Faction] = {"0702": "axis", "1351": "allied", "1925": "allied"}
RANK = {"OOS": 0, "GS": 1, "AS": 2}


@settings(max_examples=60, deadline=None)
@given(st.sets(st.integers(4, 15), max_size=3), st.integers(4, 15))
def test_more_enemies_never_improve_supply_s8_2(enemy_cols: set[int], extra: int) -> None:
    """§8.2: adding an enemy unit can only block segments, never open one."""
    own = [Piece("depot", "axis", "DE", "installation", 0, 0, "0706"), Piece("front", "axis", "DE", "infantry", 3, 8, "0709")]
    enemies = [Piece(f"e{c}", "allied", "BR", "infantry", 2, 8, f"07{c:02d}") for c in sorted(enemy_cols)]
    enemies = [e for e in enemies if e.hex not in ("0706", "0709")]
    before = supply_states(ROW, [*own, *enemies], "axis", CONTROL)["front"].state
    more = Piece("e+", "allied", "BR", "infantry", 2, 8, f"07{extra:02d}")
    if more.hex in ("0706", "0709"):
        return
    after = supply_states(ROW, [*own, *enemies, more], "axis", CONTROL)["front"].state
    assert RANK[after] <= RANK[before]
