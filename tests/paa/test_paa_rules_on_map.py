"""PAA rules modules on the authored map (rules/paa/mapdata.py): the worked
examples again, on the map's own hexes, and the player aid's road distances
through the movement rules (§11.1.2)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from msgspec.structs import replace

from rules.paa.combat import Attacker, attack_factor, cf_differential, defence_factor
from rules.paa.mapdata import load_map
from rules.paa.mapview import MapView
from rules.paa.movement import path_cost, reachable, step_options
from rules.paa.overrun import overrun_check
from rules.paa.supply import supply_states
from rules.paa.tables import FORT_DF
from rules.paa.units import Faction, Piece
from rules.paa.zoc import enemy_fort_zoc, zoc, zoc_sources

BOARD: MapView = load_map()  # the authored map has every member the rules read


def test_forts_of_the_map_are_table_1s() -> None:
    assert dict(BOARD.forts) == FORT_DF


def test_figure_4_zoc_on_the_map_s3() -> None:
    """Figure 4 with the map's authored unit hexes (1241, 1440)."""
    de = Piece("DE 382/IREGT", "axis", "DE", "infantry", 3, 8, "1241")
    au = Piece("AU 18/IBDE", "allied", "AU", "infantry", 3, 8, "1440")
    assert len(zoc(BOARD, [de], "axis")) == 6 and len(zoc(BOARD, [au], "allied")) == 4
    assert "1341" in zoc(BOARD, [de], "axis") & zoc(BOARD, [au], "allied")


def test_figure_6_on_the_map_s11_1_2() -> None:
    """Figure 6: road 1826-1724 is 3 MF; at 1724 the road does not connect to
    the track, so the track step into 1723 costs 2 + 2."""
    road = ("1826", "1726", "1725", "1724")
    assert path_cost(BOARD, road, mover="regular") == 3
    assert (4, "track") in step_options(BOARD, "1724", "1723", mover="regular", entered_by="road")
    assert path_cost(BOARD, (*road, "1723"), mover="transport") is None  # §11.1.3: no change where not connected


@pytest.mark.parametrize(("a", "b", "mf"), [
    ("Alexandria", "El Agheila", 73), ("Alexandria", "Benghazi", 57), ("Alexandria", "Derna", 41),
    ("Alexandria", "Gazala", 35), ("Alexandria", "Tobruk", 32), ("Alexandria", "Bardia", 26),
    ("Alexandria", "Sidi Barrani", 19), ("Alexandria", "Matruh", 12), ("Matruh", "El Agheila", 61),
    ("Sidi Barrani", "Benghazi", 38), ("Bardia", "Derna", 15), ("Tobruk", "Gazala", 3), ("Benghazi", "El Agheila", 16),
])
def test_player_aid_distances_by_the_movement_rules(a: str, b: str, mf: int) -> None:
    """Player aid "Distances in MF Along Coastal Road", as land movement
    (§11.1.2) finds them: by road for a transport unit, and no cross-country
    way is shorter for a regular unit."""
    places = load_map().places
    assert reachable(BOARD, places[a], mover="transport", mf=80)[places[b]] == mf
    assert reachable(BOARD, places[a], mover="regular", mf=80)[places[b]] == mf


def test_figure_7_on_the_map_s11_4() -> None:
    bers = Piece("IT BERS/8/AIREGT", "axis", "IT", "infantry", 2, 8, "0906")
    ariete = Piece("IT 132/AREGT", "axis", "IT", "armoured", 3, 12, "0906")
    sg = Piece("BR SG/2/IBDE", "allied", "BR", "infantry", 2, 8, "1006")
    stack = [Attacker(bers, "AS"), Attacker(ariete, "AS")]

    def problems(pieces: list[Piece], from_hex: str) -> int:
        s = [Attacker(replace(a.piece, hex=from_hex), a.supply) for a in stack]
        sources = zoc_sources(BOARD, pieces, "allied").get(from_hex, frozenset())
        return len(overrun_check(BOARD, s, from_hex, "1006", [sg], started_together=True, ezoc_sources=sources).problems)

    assert problems([bers, ariete, sg], "0906") == 0
    in_1005 = Piece("IN 11/IBDE", "allied", "IN", "infantry", 2, 8, "1005")
    assert problems([bers, ariete, sg, in_1005], "0906") == 1
    assert problems([bers, ariete, sg, in_1005], "0907") == 0


def test_figure_8_on_the_map_s12_3() -> None:
    de_104 = Piece("DE 104/IREGT", "axis", "DE", "infantry", 4, 8, "1508")
    de_5 = Piece("DE 5/1/ABN", "axis", "DE", "armoured", 3, 12, "1508")
    br = Piece("BR SQ/2/IBDE", "allied", "BR", "infantry", 2, 8, "1509")
    au = Piece("AU 20/IBDE", "allied", "AU", "infantry", 2, 8, "1608")
    assert "1406" in reachable(BOARD, "1508", mover="regular", mf=8)  # attack supply reach (§8.5)
    mas = [Attacker(de_104, "MAS"), Attacker(de_5, "MAS")]
    assert attack_factor(BOARD, mas, {"1509", "1608"}) == 7
    assert defence_factor(BOARD, [br, au]) == 4
    assert cf_differential(BOARD, mas, [br, au]) == 3
    assert cf_differential(BOARD, [Attacker(de_104, "AS"), Attacker(de_5, "AS")], [br, au]) == Fraction(-1, 2)


def test_tobruk_garrison_fort_zoc_and_allied_supply_on_the_map_s8_3_2() -> None:
    garrison = Piece("AU 9/IBDE", "allied", "AU", "infantry", 3, 8, "1925")
    assert set(enemy_fort_zoc(BOARD, [garrison], "axis")) == set(load_map().fort_zoc["1925"])
    control: dict[str, Faction] = {"0702": "axis", "1351": "allied", "1925": "allied"}
    alamein = Piece("NZ 4/IBDE", "allied", "NZ", "infantry", 3, 8, "1247")
    states = supply_states(BOARD, [garrison, alamein], "allied", control)
    assert states[garrison.id].state == "AS" and states[alamein.id].state == "AS"
