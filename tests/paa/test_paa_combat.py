"""PAA §12 combat: Figure 8 (§12.3, §12.4.2), Figure 10 (§12.4.4), §12.4.5-§12.4.7, Table 9."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.paa.combat import (
    Attacker,
    Combat,
    advance_problems,
    allocations,
    attack_column,
    attack_factor,
    best_loss,
    cf_differential,
    column_minimum,
    combat_supply,
    counter_attack_column,
    counter_attack_factor,
    counter_defence_factor,
    crt,
    declaration_problems,
    defence_factor,
    is_ineffective,
    loss_problems,
    mas_problems,
    transport_return_turn,
    transports_eliminated,
)
from rules.paa.tables import CRT
from rules.paa.units import Piece
from tests.paa.fakemap import FakeMap, Side, block

# Figure 8 gives the CFs as "½4 + ½3" without saying which unit has which; 104/IREGT 4 is our reading.
DE_104 = Piece("DE 104/IREGT", "axis", "DE", "infantry", 4, 8, "1508")
DE_5_1 = Piece("DE 5/1/ABN", "axis", "DE", "armoured", 3, 12, "1508")
BR_SQ = Piece("BR SQ/2/IBDE", "allied", "BR", "infantry", 2, 8, "1509")
AU_20 = Piece("AU 20/IBDE", "allied", "AU", "infantry", 2, 8, "1608")
DEPOT = Piece("Axis depot 1", "axis", "DE", "installation", 0, 0, "1406")


def figure_8_map() -> FakeMap:
    esc = Side(escarpment=True)
    return FakeMap(cells=block(range(13, 18), range(5, 11)),
                   sides={frozenset(("1508", "1509")): esc, frozenset(("1508", "1608")): esc})


def test_figure_8_combat_supply_mas_s12_3() -> None:
    """Figure 8: both Germans attack solely across escarpments (CF halved);
    sacrificing the installation in 1406 for MAS doubles them: AF =
    2(½·4 + ½·3) = 7, DF = 2 + 2 = 4, ΔCF = 3."""
    board = figure_8_map()
    supply = combat_supply(True, within_as_of={DEPOT.id}, sacrificed={DEPOT.id})
    assert supply == "MAS"
    attackers = [Attacker(DE_104, supply), Attacker(DE_5_1, supply)]
    assert attack_factor(board, attackers, {"1509", "1608"}) == 7
    assert defence_factor(board, [BR_SQ, AU_20]) == 4
    delta = cf_differential(board, attackers, [BR_SQ, AU_20])
    assert delta == 3
    assert attack_column(delta) == 3


def test_figure_8_without_mas_is_not_permissible_s12_4_2() -> None:
    """Figure 8: without MAS the AF is 3½ and ΔCF −½: not a permissible attack."""
    board = figure_8_map()
    supply = combat_supply(True, within_as_of={DEPOT.id}, sacrificed=())
    assert supply == "AS"
    attackers = [Attacker(DE_104, supply), Attacker(DE_5_1, supply)]
    delta = cf_differential(board, attackers, [BR_SQ, AU_20])
    assert delta == Fraction(-1, 2)
    with pytest.raises(ValueError, match="§12.4.3"):
        attack_column(delta)


def test_escarpment_halves_only_attackers_solely_across_it_s12_4_2() -> None:
    board = figure_8_map()
    other = Piece("DE 15/ARECBN", "axis", "DE", "armoured", 3, 12, "1609")
    assert "1608" in board.neighbours("1609") and "1509" in board.neighbours("1609")
    af = attack_factor(board, [Attacker(DE_104, "AS"), Attacker(other, "AS")], {"1509", "1608"})
    assert af == 2 + 3


def test_defence_terrain_and_forts_table_1_s12_4_2() -> None:
    board = FakeMap(cells=block(range(17, 20), range(24, 31)) | {"1925"},
                    terrains={"1826": "rough", "1827": "swamp"})
    t = Piece("AU 9/IBDE", "allied", "AU", "infantry", 3, 8, "1925")
    b = Piece("AU 24/IBDE", "allied", "AU", "infantry", 3, 8, "1730")
    rough = Piece("IN 5/IBDE", "allied", "IN", "infantry", 3, 8, "1826")
    swamp_allied = Piece("IN 7/IBDE", "allied", "IN", "infantry", 3, 8, "1827")
    swamp_axis = Piece("IT 25/IREGT", "axis", "IT", "infantry", 3, 8, "1827")
    oos = Piece("IN 9/IBDE", "allied", "IN", "infantry", 1, 8, "1828", oos=True)
    assert defence_factor(board, [t]) == 15  # Tobruk quintupled
    assert defence_factor(board, [b]) == 6
    assert defence_factor(board, [rough]) == 6
    assert defence_factor(board, [swamp_allied]) == 3
    assert defence_factor(board, [swamp_axis]) == 6
    assert defence_factor(board, [oos]) == 1  # half of 1 is raised to 1 (§12.4.2)
    lorry = Piece("BR lorry 1", "allied", "BR", "transport", 0, 20, "1828")
    assert defence_factor(board, [lorry]) == 1
    assert defence_factor(board, [Piece("IN 9/IBDE", "allied", "IN", "infantry", 4, 8, "1828"), lorry]) == 4


def test_figure_10_counter_attack_delta_0_result_2_ignored_s12_4_4() -> None:
    """Figure 10: one Allied unit with 2 CF is left: AF 2·2 = 4; DF of the two
    German units 3 + 4 = 7, without terrain; ΔCF = max(0, ⌈4 − 7⌉) = 0. A
    "2" (die 1) is ignored: no whole German unit can be lost within 2 CF."""
    af = counter_attack_factor([AU_20])
    df = counter_defence_factor([DE_104, DE_5_1])
    assert (af, df) == (Fraction(4), Fraction(7))
    column = counter_attack_column(af, df)
    assert column == 0
    loss = crt(column, 1)
    assert loss == 2
    assert best_loss((DE_104.cf, DE_5_1.cf), loss) == 0
    assert loss_problems({DE_104.id: 4, DE_5_1.id: 3}, (), loss) == []
    assert crt(0, 2) == 0


def test_counter_attack_german_x4_oos_full_cf_and_lone_transport_s12_4_4() -> None:
    german_oos = Piece("DE 104/IREGT", "axis", "DE", "infantry", 4, 8, "1508", oos=True)
    assert counter_attack_factor([german_oos]) == 16
    lorry = Piece("BR lorry 1", "allied", "BR", "transport", 0, 20, "1828")
    assert counter_attack_factor([lorry]) == 2
    assert counter_attack_factor([]) == 0
    assert counter_attack_column(Fraction(0), Fraction(7)) == 0
    assert counter_attack_column(Fraction(9, 2), Fraction(1)) == 4  # ⌈3½⌉


def test_s12_4_5_loss_3_from_two_2_cf_units_loses_one() -> None:
    """§12.4.5: a loss of 3 from two 2-CF units: one is lost, not the second."""
    units = {"A": 2, "B": 2}
    assert best_loss(tuple(units.values()), 3) == 2
    assert loss_problems(units, ("A",), 3) == []
    assert [p.rule for p in loss_problems(units, ("A", "B"), 3)] == ["§12.4.5"]
    assert [p.rule for p in loss_problems(units, (), 3)] == ["§12.4.5"]
    assert set(allocations(units, 3)) == {frozenset("A"), frozenset("B")}


def test_s12_4_5_loss_3_must_take_the_3_cf_unit() -> None:
    """§12.4.5: with a 3-CF unit available it must be eliminated, not a 2-CF unit."""
    units = {"A": 2, "B": 2, "C": 3}
    assert best_loss(tuple(units.values()), 3) == 3
    assert loss_problems(units, ("C",), 3) == []
    assert [p.rule for p in loss_problems(units, ("A",), 3)] == ["§12.4.5"]
    assert allocations(units, 3) == (frozenset("C"),)


@given(st.dictionaries(st.text("ABCDEFGH", min_size=1, max_size=2), st.integers(1, 12), max_size=7), st.integers(0, 12))
def test_loss_allocation_never_exceeds_and_is_closest_s12_4_5(units: dict[str, int], required: int) -> None:
    """§12.4.5: every allowed allocation loses exactly the best total, never more than required,
    and no other subset comes closer."""
    best = best_loss(tuple(units.values()), required)
    assert 0 <= best <= required
    found = allocations(units, required)
    assert found
    for chosen in found:
        assert sum(units[u] for u in chosen) == best
        assert loss_problems(units, tuple(chosen), required) == []
    for u in units:
        if units[u] <= required and best < units[u]:
            raise AssertionError("a single unit comes closer than the best")


def test_s12_4_6_transport_return_turn_3_to_turn_5() -> None:
    """§12.4.6: an Allied transport eliminated in turn 3 goes to the turn-5 slot."""
    assert transport_return_turn(3) == 5
    assert transport_return_turn(19) is None


def test_transport_dies_only_when_all_losers_do_s12_4_6() -> None:
    lorry = Piece("BR lorry 1", "allied", "BR", "transport", 0, 20, "1509")
    pieces = [BR_SQ, AU_20, lorry]
    assert transports_eliminated([BR_SQ, AU_20], {BR_SQ.id, AU_20.id}, pieces) == (lorry.id,)
    assert transports_eliminated([BR_SQ, AU_20], {BR_SQ.id}, pieces) == ()


def test_table_9_crt_values_and_column_minima() -> None:
    assert [column_minimum(c) for c in range(11)] == [0, 0, 0, 2, 3, 3, 4, 4, 6, 6, 6]
    assert crt(10, 1) == 10 and crt(3, 6) == 2
    assert attack_column(Fraction(25, 2)) == 10 and attack_column(Fraction(5, 2)) == 2
    with pytest.raises(ValueError, match="Table 9"):
        crt(0, 7)


@given(st.integers(0, 10), st.integers(1, 6), st.integers(1, 6))
def test_crt_results_are_in_the_table_and_weakly_grow_with_the_column(column: int, die: int, other: int) -> None:
    assert crt(column, die) in {v for row in CRT.values() for v in row}
    if column < 10:
        assert crt(column + 1, die) >= crt(column, die)
    assert crt(column, min(die, other)) >= crt(column, max(die, other))  # lower dice are never worse for the attacker


def test_declarations_s12_2_and_fort_zoc_s12_1_1() -> None:
    board = figure_8_map()
    pieces = [DE_104, DE_5_1, BR_SQ, AU_20, DEPOT]
    ok = [Combat((DE_104.id, DE_5_1.id), ("1509", "1608"))]
    assert declaration_problems(board, pieces, "axis", 2, ok) == []
    twice = [Combat((DE_104.id,), ("1509",)), Combat((DE_5_1.id,), ("1509",))]
    assert [p.rule for p in declaration_problems(board, pieces, "axis", 2, twice)] == ["§12.2"]
    assert [p.rule for p in declaration_problems(board, pieces, "allied", 1, [Combat((BR_SQ.id,), ("1508",))])] == ["§12"]
    far = [Combat((DE_104.id,), ("1406",))]
    assert {p.rule for p in declaration_problems(board, pieces, "axis", 2, far)} == {"§12", "§12.2"}
    # A unit in the ZOC of an enemy-occupied fort must attack it, even OOS (ineffective attack).
    oos = Piece("DE 104/IREGT", "axis", "DE", "infantry", 4, 8, "1508", oos=True)
    forced = {"1508": "1509"}
    assert [p.rule for p in declaration_problems(board, [oos, BR_SQ], "axis", 2, [], fort_zoc=forced)] == ["§12.1.1"]
    assert declaration_problems(board, [oos, BR_SQ], "axis", 2, [Combat((oos.id,), ("1509",))], fort_zoc=forced) == []
    assert is_ineffective([Attacker(oos, "OOS")], Fraction(1))
    assert [p.rule for p in declaration_problems(board, [oos, BR_SQ], "axis", 2, [Combat((oos.id,), ("1509",))])] == ["§12"]
    # An OOS unit outside the fort ZOC may not join a fort attack made by others.
    other_oos = Piece("DE 5/1/ABN", "axis", "DE", "armoured", 3, 12, "1609", oos=True)
    joined = [Combat((oos.id, other_oos.id), ("1509",))]
    assert [p.rule for p in declaration_problems(board, [oos, other_oos, BR_SQ], "axis", 2, joined, fort_zoc=forced)] == ["§12"]


def test_mas_limits_s12_3_1() -> None:
    depot = Piece("Allied depot 1", "allied", "BR", "installation", 0, 0, "1351", ooc2=True)
    assert {p.rule for p in mas_problems("allied", 1, depot, leaves_allied_oos=True)} == {
        "§12.3.1", "§12.3.1, §10.3", "§12.3.1, §8.4.1"}
    assert mas_problems("axis", 1, DEPOT, leaves_allied_oos=False) == []


def test_advance_s12_4_7() -> None:
    pieces = [DE_104, DE_5_1, AU_20]
    c = Combat((DE_104.id, DE_5_1.id), ("1509", "1608"))
    assert advance_problems(pieces, c, {DE_104.id}, {DE_104.id: "1509"}) == []
    assert [p.rule for p in advance_problems(pieces, c, {DE_104.id}, {DE_104.id: "1608"})] == ["§12.4.7"]
    assert [p.rule for p in advance_problems(pieces, c, {DE_104.id}, {DE_5_1.id: "1509"})] == ["§12.4.7"]
