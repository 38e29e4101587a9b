"""PAA §10 C² (Table 7, both variants) and §9 Malta (Table 6)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.rulesapi import Spec, option_problems, option_value
from rules.paa.c2 import (
    C2_OPTION,
    dice_needed,
    end_of_allied_turn,
    mark_out_of_c2,
    method_of,
    out_of_c2,
    out_of_c2_per_hex,
    out_of_c2_single,
)
from rules.paa.malta import allied_good_order_in_libya, crossing_problems, declaration_problems, invasion_result
from rules.paa.units import Piece
from tests.paa.fakemap import FakeMap, block

HEXES = tuple(f"13{c:02d}" for c in range(40, 50))  # last digits 0-9


def test_s10_c2_die_5_single_roll_hexes_ending_5_7_1() -> None:
    """§10.1, Table 7 column 2: die 5 puts hexes ending in 5, 7 or 1 out of C²."""
    assert out_of_c2_single(HEXES, 5) == {"1345", "1347", "1341"}


def test_s10_c2_die_5_per_hex_only_hexes_ending_5() -> None:
    """§10.2, Table 7 column 3: a 5 rolled for a hex puts it out of C² only if it ends in 5."""
    assert out_of_c2_per_hex(dict.fromkeys(HEXES, 5)) == {"1345"}
    assert out_of_c2_per_hex({"1347": 5}) == frozenset()


def test_c2_option_group_s10() -> None:
    """§10: the factions choose the method before the game: option c2 = single | per-hex."""
    spec = Spec("paa", "0", "Panzerarmee Afrika", ("allied", "axis"), ("campaign",), option_groups=(C2_OPTION,))
    assert option_value(spec, (), "c2") == "single"
    assert option_value(spec, ("c2=per-hex",), "c2") == "per-hex"
    assert option_problems(spec, "campaign", ("c2=both",))
    assert method_of("per-hex") == "per-hex"
    with pytest.raises(ValueError, match="§10"):
        method_of("both")


def test_c2_over_pieces_and_effects_s10_3() -> None:
    pieces = (
        Piece("BR 7/ABDE", "allied", "BR", "armoured", 4, 20, "1345"),
        Piece("BR lorry 1", "allied", "BR", "transport", 0, 20, "1346"),
        Piece("Allied depot 1", "allied", "BR", "installation", 0, 0, "1347"),
        Piece("DE 104/IREGT", "axis", "DE", "infantry", 4, 8, "1341"),
    )
    assert dice_needed("single", pieces) == 1 and dice_needed("per-hex", pieces) == 3
    hit = out_of_c2("single", pieces, 5)
    assert hit == {"1345", "1347"}  # the Axis unit in 1341 is not Allied
    marked = mark_out_of_c2(pieces, hit)
    assert [p.ooc2 for p in marked] == [True, False, True, False]
    assert not any(p.ooc2 for p in end_of_allied_turn(marked))
    with pytest.raises(ValueError, match="§10.2"):
        out_of_c2("per-hex", pieces, {"1345": 5})
    assert out_of_c2("per-hex", pieces, {"1345": 5, "1346": 6, "1347": 1}) == {"1345", "1346", "1347"}


@given(st.integers(1, 6))
def test_c2_single_hits_three_digits_per_hex_at_most_two(die: int) -> None:
    """Table 7: a single roll hits 3 of the 10 digits; a per-hex roll 1 or 2."""
    assert len(out_of_c2_single(HEXES, die)) == 3
    assert len(out_of_c2_per_hex(dict.fromkeys(HEXES, die))) in (1, 2)
    assert out_of_c2_per_hex(dict.fromkeys(HEXES, die)) <= out_of_c2_single(HEXES, die)


def test_s9_malta_success_1_2_with_allied_units_in_libya_else_1_4() -> None:
    """§9, Table 6: success on 1-2 with good-order Allied regular units in Libya, on 1-4 without."""
    assert [d for d in range(1, 7) if invasion_result(d, allied_in_libya=True) == "success"] == [1, 2]
    assert [d for d in range(1, 7) if invasion_result(d, allied_in_libya=False) == "success"] == [1, 2, 3, 4]
    with pytest.raises(ValueError, match="Table 6"):
        invasion_result(7, allied_in_libya=False)


def test_s9_malta_no_axis_crossing_into_egypt_on_turn_15() -> None:
    """§9: after an attempt no Axis regular or transport unit crosses from
    Libya into Egypt in the turn-15 movement phase; units in Egypt move freely."""
    board = FakeMap(cells=block(range(14, 16), range(28, 34)), libya=block(range(14, 16), range(28, 31)))
    de = Piece("DE 104/IREGT", "axis", "DE", "infantry", 4, 8, "1430")
    assert [p.rule for p in crossing_problems(board, 15, "failure", de, ("1430", "1431"))] == ["§9"]
    assert [p.rule for p in crossing_problems(board, 15, "success", de, ("1430", "1431"))] == ["§9"]
    assert crossing_problems(board, 15, "none", de, ("1430", "1431")) == []
    assert crossing_problems(board, 16, "failure", de, ("1430", "1431")) == []
    assert crossing_problems(board, 15, "failure", de, ("1431", "1432")) == []
    in_libya = Piece("AU 9/IBDE", "allied", "AU", "infantry", 3, 8, "1429")
    assert allied_good_order_in_libya(board, [in_libya], {in_libya.id})
    assert not allied_good_order_in_libya(board, [in_libya], set())


def test_s9_malta_declared_in_turn_15_supply_phase() -> None:
    assert declaration_problems(15, "supply") == []
    assert [p.rule for p in declaration_problems(15, "movement")] == ["§9"]
    assert [p.rule for p in declaration_problems(14, "supply")] == ["§9"]
