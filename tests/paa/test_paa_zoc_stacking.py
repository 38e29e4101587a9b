"""PAA §3 ZOC (Figure 4, fort ZOC) and §4 stacking."""

from __future__ import annotations

from rules.paa.stacking import stacking_problems
from rules.paa.units import Piece
from rules.paa.zoc import enemy_fort_zoc, enemy_zoc, exerts_zoc, zoc, zoc_of_hex
from tests.paa.fakemap import FakeMap, Side, block

# Figure 4 has no hex numbers for the two units; we place them on a fragment
# where 1341 neighbours both and AU 18/IBDE has one sea neighbour and one
# prohibited hexside, as the caption says.
DE_382 = Piece("DE 382/IREGT", "axis", "DE", "infantry", 3, 8, "1240")
AU_18 = Piece("AU 18/IBDE", "allied", "AU", "infantry", 3, 8, "1441")
FIG4 = FakeMap(cells=block(range(11, 16), range(38, 45)), terrains={"1542": "sea"},
               sides={frozenset(("1441", "1442")): Side(prohibited=True)})


def test_figure_4_zoc_6_and_4_hexes_both_in_1341_s3() -> None:
    """Figure 4: DE 382/IREGT has ZOC in its 6 neighbours; AU 18/IBDE in 4
    (none into the sea, none across the impassable hexside); both in 1341."""
    de = zoc(FIG4, [DE_382], "axis")
    au = zoc(FIG4, [AU_18], "allied")
    assert len(de) == 6 and len(au) == 4
    assert "1542" not in au and "1442" not in au
    assert "1341" in de & au


def test_no_zoc_from_logistics_s3() -> None:
    lorry = Piece("DE lorry 1", "axis", "DE", "transport", 0, 20, "1240")
    depot = Piece("Axis depot 1", "axis", "DE", "installation", 0, 0, "1240")
    assert not exerts_zoc(lorry) and not exerts_zoc(depot)
    assert zoc(FIG4, [lorry, depot], "axis") == frozenset()
    assert enemy_zoc(FIG4, [DE_382], "allied") == zoc_of_hex(FIG4, "1240")


def test_italian_infantry_without_support_exerts_no_zoc_at_icf_20_s15_2() -> None:
    it = Piece("IT 25/IREGT", "axis", "IT", "infantry", 3, 8, "1240")
    assert exerts_zoc(it, [it], icf=19) and not exerts_zoc(it, [it], icf=20)
    assert exerts_zoc(it, [it, DE_382], icf=20)


def test_fort_zoc_of_enemy_occupied_fort_s3_s12_1_1() -> None:
    board = FakeMap(cells=block(range(18, 21), range(23, 28)), forts={"1925": 5},
                    fort_zoc={"1925": frozenset({"1924", "1926", "1825", "2025", "1826", "2026"})})
    garrison = Piece("AU 9/IBDE", "allied", "AU", "infantry", 3, 8, "1925")
    assert enemy_fort_zoc(board, [garrison], "axis") == dict.fromkeys(("1924", "1926", "1825", "2025", "1826", "2026"), "1925")
    assert enemy_fort_zoc(board, [garrison], "allied") == {}
    assert enemy_fort_zoc(board, [], "axis") == {}


def test_stacking_limits_s4() -> None:
    def inf(i: int, h: str) -> Piece:
        return Piece(f"IN {i}/IBDE", "allied", "IN", "infantry", 2, 8, h)
    ok = [inf(1, "1351"), inf(2, "1351"), inf(3, "1351"), Piece("lorry", "allied", "BR", "transport", 0, 20, "1351")]
    assert stacking_problems(ok) == []
    assert [p.rule for p in stacking_problems([*ok, inf(4, "1351")])] == ["§4"]
    assert [p.rule for p in stacking_problems([inf(1, "1730"), inf(2, "1730"), inf(3, "1730")])] == ["§4"]
    depots = [Piece(f"depot {i}", "allied", "BR", "installation", 0, 0, "1351") for i in (1, 2)]
    assert [p.rule for p in stacking_problems(depots)] == ["§4"]
