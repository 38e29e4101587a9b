"""PAA §5 control, §11.2 sea transport, §11.3 supply transportation, §11.3.1 railroad, on the authored map."""

from __future__ import annotations

import pytest

from rules.paa.control import after_passage, after_placement, controls_base
from rules.paa.logistics import (
    SeaMove,
    carry_problems,
    hex_distance,
    rail_destinations,
    rail_hexes,
    rail_problems,
    sea_problems,
    usable_rail,
)
from rules.paa.mapdata import load_map
from rules.paa.units import Faction, Piece

M = load_map()
ALLIED_PORTS: dict[str, Faction] = {"1351": "allied", "1925": "allied", "1730": "allied"}


def inf(name: str, hex_id: str, faction: Faction = "allied", **kw: bool) -> Piece:
    return Piece(name, faction, "AU" if faction == "allied" else "DE", "infantry", 3, 8, hex_id, **kw)


def depot(name: str, hex_id: str, faction: Faction = "allied", **kw: bool) -> Piece:
    return Piece(name, faction, "BR" if faction == "allied" else "DE", "installation", 0, 0, hex_id, **kw)


def test_control_s5() -> None:
    c: dict[str, Faction] = {"1925": "allied"}
    lorry = Piece("DE lorry 1", "axis", "DE", "transport", 0, 20, "1924")
    assert after_passage(c, lorry, ["1925"]) == c  # transports change nothing
    c2 = after_passage(c, inf("DE 104/IREGT", "1924", "axis"), ["1925", "1926"])
    assert c2 == {"1925": "axis", "1926": "axis"}
    assert after_placement({}, [inf("AU 9/IBDE", "1925"), depot("d", "1730")]) == {"1925": "allied"}
    assert controls_base({"1351": "allied"}, "allied", "1351") and not controls_base({}, "axis", "0702")


def test_sea_transport_capacity_and_lines_s11_2() -> None:
    pieces = [inf(f"AU {i}/IBDE", "1351") for i in range(3)] + [depot("d1", "1351"), depot("d2", "1351")]
    two = [SeaMove("AU 0/IBDE", "1351", "1925"), SeaMove("AU 1/IBDE", "1351", "1925"), SeaMove("d1", "1351", "1925")]
    assert sea_problems(M, pieces, two, ALLIED_PORTS) == []
    three = [*two, SeaMove("AU 2/IBDE", "1351", "1925")]
    assert {p.rule for p in sea_problems(M, pieces, three, ALLIED_PORTS)} == {"§11.2"}
    bardia = [SeaMove("AU 0/IBDE", "1351", "1730"), SeaMove("AU 1/IBDE", "1351", "1730")]
    assert any("Bardia" in p.message for p in sea_problems(M, pieces, bardia, ALLIED_PORTS))
    lorry = Piece("BR lorry 1", "allied", "BR", "transport", 0, 20, "1351")
    assert any("transport units" in p.message for p in sea_problems(M, [lorry], [SeaMove(lorry.id, "1351", "1925")], ALLIED_PORTS))
    assert sea_problems(M, pieces, [SeaMove("AU 0/IBDE", "1351", "1351")], ALLIED_PORTS)
    assert sea_problems(M, pieces, two[:1], ALLIED_PORTS, manoeuvred={"AU 0/IBDE"})
    lost: dict[str, Faction] = {**ALLIED_PORTS, "1925": "axis"}
    assert sea_problems(M, pieces, two[:1], lost)


def test_axis_sea_transport_only_far_from_allied_units_s11_2() -> None:
    de = inf("DE 104/IREGT", "1925", "axis")
    axis_ports: dict[str, Faction] = {"1925": "axis", "1730": "axis", "1351": "allied"}
    far = inf("NZ 4/IBDE", "1351")
    near = inf("AU 20/IBDE", "1529")
    assert hex_distance("1351", "1925") > 20 and hex_distance("1529", "1730") <= 20
    move = [SeaMove(de.id, "1925", "1730")]
    assert sea_problems(M, [de, far], move, axis_ports, allied_in_supply={far.id}) == []
    assert sea_problems(M, [de, near], move, axis_ports, allied_in_supply={near.id})
    assert sea_problems(M, [de, near], move, axis_ports, allied_in_supply=set()) == []  # only in-supply units count


def test_railroad_s11_3_1() -> None:
    rail = rail_hexes(M)
    assert {"1353", "1440"} <= rail
    assert rail_destinations(M, [], "1353") == rail
    # An Axis unit whose ZOC reaches the rail near El Alamein: only the rail east of it is usable.
    axis = inf("DE 104/IREGT", "1147", "axis")
    usable = usable_rail(M, [axis])
    assert "1353" in usable and "1440" not in usable and "1247" not in usable
    assert all(int(h[2:]) > 47 for h in usable)
    d = depot("d", "1353")
    assert rail_problems(M, [axis, d], d, "1250") == []
    assert rail_problems(M, [axis, d], d, "1243")
    assert rail_problems(M, [d], depot("x", "1353", "axis"), "1250")
    assert rail_problems(M, [d], depot("d", "1353", ooc2=True), "1250")


def test_the_rail_hexes_are_read_from_the_map_once_s11_3_1(monkeypatch) -> None:
    """A fact of the map, asked by every rail check and listing (issue 20):
    read once per board, and read again for another board."""
    import rules.paa.logistics as logistics

    logistics.rail_hexes.cache_clear()
    first = rail_hexes(M)
    monkeypatch.setattr(type(M), "side", lambda *a: pytest.fail("the map's hexsides read again"))
    assert rail_hexes(M) is first
    monkeypatch.undo()
    other = load_map.__wrapped__()  # a second board: the cache is per board
    assert other is not M and rail_hexes(other) == first and rail_hexes(other) is not first


def test_lorry_carries_an_installation_s11_3() -> None:
    lorry = Piece("BR lorry 1", "allied", "BR", "transport", 0, 20, "1440")
    assert carry_problems(lorry, depot("d", "1343"), ["1440", "1341", "1342", "1343", "1243"]) == []
    assert carry_problems(lorry, depot("d", "1250"), ["1440", "1341"])
    assert carry_problems(lorry, depot("d", "1341", "axis"), ["1440", "1341"])
