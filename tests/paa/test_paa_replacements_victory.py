"""PAA §13.3 replacements, §13.4-§13.5 reinforcements, §14 victory (Table 12)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.paa.mapdata import load_map
from rules.paa.reinforcements import (
    allied_option_problems,
    arrival_hexes,
    axis_option_problems,
    installation_arrives,
    m_arrival,
    option_penalty,
    penalty_deduction,
    reinforce_cap,
    reinforce_cost,
    reinforce_problems,
)
from rules.paa.replacements import Pool, end_of_phase, pool_of, rebuild_problems, receive, spend
from rules.paa.units import Faction, Piece
from rules.paa.victory import (
    DRAW,
    LADDER,
    Result,
    cf_on_map,
    cf_ratio,
    cf_victory,
    longest_hold,
    sudden_death,
    table_12,
    tobruk_modifier,
    victory,
)

INF: Pool = ("CW", "infantry")


def test_s13_3_1_rp_cap_9_plus_2_loses_1() -> None:
    """§13.3.1: 9 Infantry RP at the start of turn 8's phase, 2 received: 11;
    none spent: one is lost at the end of the phase."""
    rps = receive({INF: 9}, {INF: 2})
    assert rps[INF] == 11
    kept, lost = end_of_phase(rps)
    assert kept[INF] == 10 and lost == {INF: 1}


def test_rebuild_needs_rps_of_kind_and_nation_s13_3_2() -> None:
    de = Piece("DE 104/IREGT", "axis", "DE", "infantry", 4, 8, "0702")
    assert pool_of(de) == ("DE", "infantry")
    assert rebuild_problems({("DE", "infantry"): 4}, de, in_cadre=True) == []
    assert [p.rule for p in rebuild_problems({("IT", "infantry"): 10, ("DE", "infantry"): 3}, de, in_cadre=True)] == ["§13.3.2"]
    assert [p.rule for p in rebuild_problems({("DE", "infantry"): 4}, de, in_cadre=False)] == ["§13.3.2"]
    assert spend({("DE", "infantry"): 4}, ("DE", "infantry"), 4) == {("DE", "infantry"): 0}
    with pytest.raises(ValueError, match="§13.3"):
        spend({("DE", "infantry"): 3}, ("DE", "infantry"), 4)


@given(st.dictionaries(st.sampled_from([INF, ("CW", "armoured")]), st.integers(0, 30)))
def test_rp_never_above_10_after_the_phase_and_nothing_vanishes(rps: dict[Pool, int]) -> None:
    kept, lost = end_of_phase(rps)
    assert all(0 <= v <= 10 for v in kept.values())
    assert all(kept[p] + lost.get(p, 0) == rps[p] for p in rps)


def test_s13_4_reinforcement_caps() -> None:
    """§13.4: infantry up to 3 CF from turn 10; armoured up to 4 CF from turn 7, 5 from turn 13."""
    assert [reinforce_cap("infantry", t) for t in (9, 10, 20)] == [None, 3, 3]
    assert [reinforce_cap("armoured", t) for t in (6, 7, 12, 13)] == [None, 4, 4, 5]
    bde = Piece("BR 22/IBDE", "allied", "BR", "infantry", 2, 8, "1351")
    assert reinforce_problems(bde, 3, 10, in_alexandria_base=True) == []
    assert [p.rule for p in reinforce_problems(bde, 3, 9, in_alexandria_base=True)] == ["§13.4"]
    assert [p.rule for p in reinforce_problems(bde, 4, 12, in_alexandria_base=True)] == ["§13.4"]
    assert [p.rule for p in reinforce_problems(bde, 3, 12, in_alexandria_base=False)] == ["§13.4"]
    arm = Piece("BR 7/ABDE", "allied", "BR", "armoured", 3, 20, "1351")
    assert reinforce_problems(arm, 5, 13, in_alexandria_base=True) == []
    assert reinforce_cost(arm, 5) == 2


def test_s13_5_3_option_f_penalty_12() -> None:
    """§13.5.3: option F brings DE 10/1/ABN (3), DE 10/2/ABN (3), DE 8/ARECBN (2), DE 28/AIREGT (4): 12."""
    assert option_penalty([3, 3, 2, 4]) == 12


def test_s14_1_options_c_and_e_penalty_13_deduction_20() -> None:
    """§14.1: options C (2 CF) and E (11 CF): CF_penalty 13; ⌈1½ × 13⌉ = 20 is deducted."""
    total = option_penalty([2]) + option_penalty([11])
    assert total == 13
    assert penalty_deduction(total) == 20
    assert cf_victory(50, total) == 30


def test_allied_options_s13_5_1() -> None:
    assert allied_option_problems("A", 8, ()) == []
    assert allied_option_problems("A", 9, ())
    assert allied_option_problems("B", 13, ()) == [] and allied_option_problems("B", 15, ()) == []
    assert allied_option_problems("B", 14, ())
    assert allied_option_problems("C", 15, ("B",))  # B, C, D exclude each other
    assert allied_option_problems("D", 14, (), indian_brigades_in_base=2) == []
    assert allied_option_problems("D", 14, (), indian_brigades_in_base=1)
    assert allied_option_problems("D", 13, (), indian_brigades_in_base=2)
    assert allied_option_problems("E", 17, ("C",)) == []
    assert allied_option_problems("E", 17, ("E",))


def test_axis_options_table_11_s13_5_2() -> None:
    assert axis_option_problems("F", 15, "none", ())  # not before turn 16
    assert axis_option_problems("F", 16, "none", ()) == []
    assert axis_option_problems("G", 16, "none", ("F",))  # F or G
    assert axis_option_problems("H", 16, "none", ("F",)) == []
    assert axis_option_problems("L", 17, "none", ("F", "H"))  # one of H, J, K, L
    assert axis_option_problems("L", 16, "success", ())  # Table 11: no L after success
    assert axis_option_problems("K", 16, "success", (), ("F", "G"))  # at most two a turn
    assert axis_option_problems("K", 17, "success", ("F", "G", "H", "J")) == []
    assert axis_option_problems("H", 16, "failure", ())  # H and J not after failure
    assert axis_option_problems("K", 16, "failure", ()) == []
    assert axis_option_problems("F", 16, "failure", ("K",))  # only one of F, G, K
    assert axis_option_problems("M", 16, "none", ())
    assert (m_arrival("none", 12), m_arrival("success", 12), m_arrival("failure", 12)) == (12, 18, None)


def test_arrival_in_the_own_base_s13_1() -> None:
    """§13.1 (lost, R-28): arrivals come to the own base's hexes free of enemy units."""
    board = load_map()
    usual: dict[str, Faction] = {"0702": "axis", "1351": "allied", "1925": "allied"}
    assert arrival_hexes(board, "axis", usual, []) == board.bases["axis"]
    raider = Piece("BR 11/AHUS", "allied", "BR", "armoured", 2, 20, "0703")
    assert arrival_hexes(board, "axis", usual, [raider]) == board.bases["axis"] - {"0703"}
    assert arrival_hexes(board, "axis", {**usual, "0702": "allied"}, []) == frozenset()


def test_installation_reinforcements_s13_2_1() -> None:
    assert installation_arrives("axis", 15, "none", 2)
    assert not installation_arrives("axis", 15, "failure", 2) and not installation_arrives("axis", 16, "failure", 2)
    assert installation_arrives("axis", 17, "failure", 2)
    assert not installation_arrives("allied", 3, "none", 0)


def runs(*parts: tuple[Faction, int]) -> list[Faction | None]:
    """Tobruk's controller at the end of each faction turn, in runs."""
    out: list[Faction | None] = []
    for who, n in parts:
        out += [who] * n
    return out


ALLIED_BOTH: dict[str, Faction] = {"1351": "allied", "0702": "allied"}
USUAL: dict[str, Faction] = {"1351": "allied", "0702": "axis"}
AXIS_ALEX: dict[str, Faction] = {"1351": "axis", "0702": "axis"}
NEITHER: dict[str, Faction] = {"1351": "allied", "0702": "allied"}


def test_s14_1_draw_a_axis_not_weaker_but_controls_neither_base() -> None:
    """§14.1: the Axis has at least as many adjusted CFs as the Allies, but
    controls neither El Agheila nor Alexandria: a draw."""
    assert table_12(cf_ratio(30, 30), NEITHER) == DRAW
    assert table_12(cf_ratio(20, 30), NEITHER) == DRAW


def test_s14_1_draw_b_allies_twice_but_axis_holds_alexandria() -> None:
    """§14.1: the Allies have (more than) twice the Axis adjusted CFs, but the Axis controls Alexandria: a draw."""
    assert table_12(cf_ratio(50, 20), AXIS_ALEX) == DRAW
    assert table_12(cf_ratio(90, 30), {"1351": "axis", "0702": "allied"}) == DRAW


def test_table_12_levels_and_el_agheila_promotion_s14_1() -> None:
    assert table_12(cf_ratio(100, 20), USUAL) == Result("allied", "D")
    assert table_12(cf_ratio(60, 20), USUAL) == Result("allied", "S")
    assert table_12(cf_ratio(60, 20), ALLIED_BOTH) == Result("allied", "D")
    assert table_12(cf_ratio(50, 20), USUAL) == Result("allied", "M")
    assert table_12(cf_ratio(50, 20), ALLIED_BOTH) == Result("allied", "S")
    assert table_12(cf_ratio(30, 20), USUAL) == Result("axis", "M")
    assert table_12(cf_ratio(20, 20), USUAL) == Result("axis", "S")
    assert table_12(cf_ratio(20, 20), AXIS_ALEX) == Result("axis", "D")
    assert table_12(cf_ratio(10, 0), USUAL) == Result("allied", "D")
    assert cf_ratio(-5, 10) == 0 and cf_ratio(0, 0) == 1 and cf_ratio(10, -3) is None


def test_s14_1_tobruk_modifier_axis_marginal_becomes_draw() -> None:
    """§14.1: an Axis marginal victory, but the Allies held Tobruk 21 consecutive faction turns: a draw."""
    holders = runs(("allied", 21), ("axis", 19))
    assert tobruk_modifier(Result("axis", "M"), holders) == DRAW
    assert tobruk_modifier(Result("axis", "M"), runs(("allied", 20), ("axis", 20))) == Result("axis", "M")


def test_s14_1_tobruk_modifier_allied_substantive_becomes_marginal() -> None:
    """§14.1: an Allied substantive victory, the Axis held Tobruk long enough: Allied marginal."""
    holders = runs(("allied", 5), ("axis", 21), ("allied", 14))
    assert tobruk_modifier(Result("allied", "S"), holders) == Result("allied", "M")
    assert longest_hold(holders) == {"allied": 14, "axis": 21}


def test_victory_end_to_end_s14() -> None:
    assert sudden_death(AXIS_ALEX) and not sudden_death(USUAL)
    r = victory(allied_on_map=60, axis_on_map=20, allied_penalty=0, axis_penalty=0, control=USUAL, turn=20,
                tobruk_holders=runs(("axis", 21), ("allied", 19)))
    assert r == Result("allied", "M")
    same = victory(allied_on_map=60, axis_on_map=20, allied_penalty=0, axis_penalty=0, control=USUAL, turn=20,
                   tobruk_holders=runs(("axis", 21)), tobruk_modifier_on=False)
    assert same == Result("allied", "S")
    early = victory(allied_on_map=30, axis_on_map=30, allied_penalty=0, axis_penalty=0, control=AXIS_ALEX, turn=12,
                    tobruk_holders=runs(("axis", 23)))
    assert early == Result("axis", "D")
    pieces = [Piece("A", "allied", "BR", "infantry", 3, 8, "1351"), Piece("B", "allied", "BR", "infantry", 2, 8, "1350", oos=True),
              Piece("C", "allied", "BR", "transport", 0, 20, "1351")]
    assert cf_on_map(pieces, "allied", {"A", "B", "C"}) == 3


@given(st.integers(-20, 200), st.integers(-20, 200), st.sampled_from([USUAL, ALLIED_BOTH, AXIS_ALEX, NEITHER]))
def test_table_12_gives_one_result_and_more_allied_cf_never_hurts_the_allies(allied: int, axis: int,
                                                                               control: dict[str, Faction]) -> None:
    r = table_12(cf_ratio(allied, axis), control)
    assert r in LADDER
    better = table_12(cf_ratio(allied + 10, axis), control)
    assert LADDER.index(better) >= LADDER.index(r)


def test_ratio_is_exact() -> None:
    assert cf_ratio(7, 3) == Fraction(7, 3)
