"""PAA §13.6 dismount, §13.2.3-§13.2.4 withdrawals and reinstatement, §15 optional rules."""

from __future__ import annotations

import pytest

from rules.paa.dismount import dismount_problems, on_line, remount_problems
from rules.paa.optional import (
    icf_after,
    is_supporting,
    liable_to_surrender,
    may_attack,
    overrun_cost,
    reaction_mf,
    reaction_problems,
    reaction_succeeds,
    surrenders,
)
from rules.paa.units import Category, Faction, Piece
from rules.paa.withdrawals import allies_lose_by_withdrawal, reinstate_problems, withdrawal_problems
from tests.paa.fakemap import FakeMap, along, block

ROAD = ("0701", "0702", "0703", "0704", "0705")
BOARD = FakeMap(cells=block(range(6, 9), range(1, 8)), sides=along(ROAD, road=True))


def unit(name: str, hex_id: str, cf: int = 4, kind: str = "armoured", nation: str = "DE", faction: Faction = "axis",
         **kw: bool) -> Piece:
    k: Category = "armoured" if kind == "armoured" else "infantry"
    return Piece(name, faction, nation, k, cf, 12, hex_id, **kw)


def test_dismount_needs_10_cf_on_one_road_s13_6() -> None:
    units = [unit("a", "0702"), unit("b", "0703"), unit("c", "0703", cf=2)]
    assert on_line(BOARD, "0702") and not on_line(BOARD, "0602")
    assert dismount_problems(BOARD, units, "0704", lorries_on_oob=1) == []
    assert dismount_problems(BOARD, units[:2], "0704", lorries_on_oob=1)  # 8 CF
    assert dismount_problems(BOARD, units, "0704", lorries_on_oob=0)  # no lorry left (three at most)
    assert dismount_problems(BOARD, units, "0602", lorries_on_oob=1)  # lorry off the road
    off = [unit("a", "0702"), unit("b", "0602"), unit("c", "0703", cf=2)]
    assert dismount_problems(BOARD, off, "0704", lorries_on_oob=1)
    oos = [unit("a", "0702", oos=True), unit("b", "0703", ooc2=True), unit("c", "0703", cf=2)]
    assert dismount_problems(BOARD, oos, "0704", lorries_on_oob=1) == []


def test_remount_with_adjacent_in_supply_lorry_s13_6() -> None:
    units = [unit("a", "0702", dismounted=True), unit("b", "0703", dismounted=True)]
    lorry = Piece("DE lorry 1", "axis", "DE", "transport", 0, 20, "0704")
    assert remount_problems(BOARD, units[1:], lorry, lorry_in_supply=True) == []
    assert remount_problems(BOARD, units, lorry, lorry_in_supply=True)  # 0702 is not adjacent to 0704
    assert remount_problems(BOARD, units[1:], lorry, lorry_in_supply=False)


BASE = frozenset({"1351", "1350"})


def allied(name: str, hex_id: str, kind: str = "infantry") -> Piece:
    return unit(name, hex_id, cf=2, kind=kind, nation="IN", faction="allied")


def test_withdrawals_from_the_base_then_axis_picks_s13_2_3() -> None:
    pieces = [allied("IN 5/IBDE", "1351"), allied("IN 7/IBDE", "1247"), allied("IN 9/IBDE", "1925"), allied("BR 7/ABDE", "1351", "armoured")]
    assert withdrawal_problems(pieces, [], "infantry", 2, BASE, ["IN 5/IBDE"], "allied", from_cadre=False) == []
    assert withdrawal_problems(pieces, [], "infantry", 2, BASE, ["IN 7/IBDE"], "allied", from_cadre=False)
    assert withdrawal_problems(pieces, [], "infantry", 2, BASE, ["IN 9/IBDE"], "axis", from_cadre=False) == []
    assert withdrawal_problems(pieces, [], "infantry", 2, BASE, ["IN 9/IBDE", "IN 7/IBDE"], "axis", from_cadre=False)
    cadre = [allied("NZ 6/IBDE", "cadre")]
    assert withdrawal_problems(pieces, cadre, "infantry", 2, BASE, ["IN 5/IBDE", "NZ 6/IBDE"], "allied", from_cadre=True) == []
    assert not allies_lose_by_withdrawal(pieces, [], "infantry", 3, BASE, from_cadre=False)
    assert allies_lose_by_withdrawal(pieces, [], "armoured", 2, BASE, from_cadre=False)


def test_reinstatement_s13_2_4() -> None:
    withdrawn = [allied("IN 5/IBDE", "oob")]
    cadre = [allied("IN 7/IBDE", "cadre"), allied("BR 7/ABDE", "cadre", "armoured")]
    assert reinstate_problems(withdrawn, cadre, "infantry", 1, ["IN 7/IBDE"]) == []
    assert reinstate_problems(withdrawn, cadre, "infantry", 1, ["BR 7/ABDE"])
    assert reinstate_problems(withdrawn, cadre, "infantry", 3, ["IN 7/IBDE", "IN 5/IBDE"]) == []


def test_reaction_movement_s15_1() -> None:
    de_arm = unit("DE 5/1/ABN", "0702")
    it_arm = unit("IT 132/AREGT", "0702", nation="IT")
    it_inf = unit("IT 25/IREGT", "0702", kind="infantry", nation="IT")
    assert (reaction_mf(de_arm), reaction_mf(it_arm), reaction_mf(it_inf)) == (6, 3, 0)
    def free(p: Piece, cost: int) -> list[str]:
        return [x.rule for x in reaction_problems(p, cost=cost, in_ezoc=False, attacked=False, reacted=False, stacking_ok=True)]
    assert free(de_arm, 6) == []
    assert free(it_arm, 6) == ["§15.1"]
    assert free(it_inf, 1) == ["§15.1"]
    assert reaction_problems(de_arm, cost=3, in_ezoc=True, attacked=False, reacted=False, stacking_ok=True)
    assert [d for d in range(1, 7) if reaction_succeeds("axis", d)] == [2, 3, 4, 5, 6]
    assert [d for d in range(1, 7) if reaction_succeeds("allied", d)] == [3, 4, 5, 6]


def test_reliability_and_surrender_s15_2_s15_3() -> None:
    it_inf = unit("IT 25/IREGT", "0702", kind="infantry", nation="IT")
    assert is_supporting(unit("IT 132/AREGT", "0702", nation="IT")) and not is_supporting(it_inf)
    assert may_attack(it_inf, 9, attack_supplied=False, stacked_with_su=False)
    assert not may_attack(it_inf, 10, attack_supplied=False, stacked_with_su=False)
    assert may_attack(it_inf, 10, attack_supplied=True, stacked_with_su=False)
    assert not liable_to_surrender(it_inf, 19, stacked_with_su=False, adjacent_su=False)
    assert liable_to_surrender(it_inf, 20, stacked_with_su=False, adjacent_su=False)
    assert not liable_to_surrender(it_inf, 20, stacked_with_su=False, adjacent_su=True)
    assert liable_to_surrender(it_inf, 25, stacked_with_su=False, adjacent_su=True)
    assert [d for d in range(1, 7) if surrenders(d)] == [1, 2, 3]
    assert icf_after(18, [it_inf, unit("DE 104/IREGT", "0702", kind="infantry")]) == 22
    assert overrun_cost([it_inf], 25) == 5 and overrun_cost([it_inf], 24) == 10
    with pytest.raises(ValueError, match="§15.3"):
        surrenders(0)
