"""PAA §8 supply: segments (§8.1-§8.2), terminals (§8.3), states (§8.4-§8.5, Table 5)."""

from __future__ import annotations

import pytest

from rules.paa.supply import (
    ALEXANDRIA_BASE,
    BARDIA_DEPOT,
    counts_as_in_supply,
    network,
    newly_oos,
    supply_states,
    terminals,
)
from rules.paa.units import Faction, Piece
from tests.paa.fakemap import FakeMap, block

AXIS_BASE = frozenset({"0702", "0701", "0703", "0601", "0602", "0801", "0802"})
ALLIED_BASE = frozenset({"1351", "1350", "1352", "1250", "1251", "1450", "1451"})
BOARD = FakeMap(
    cells=block(range(5, 10), range(1, 21)) | block(range(12, 15), range(45, 55)) | block(range(16, 20), range(24, 33)),
    bases={"axis": AXIS_BASE, "allied": ALLIED_BASE},
    base_centres={"axis": "0702", "allied": "1351"},
)
CONTROL: dict[str, Faction] = {"0702": "axis", "1351": "allied", "1925": "allied"}


def depot(i: int, hex_id: str, faction: Faction = "axis") -> Piece:
    return Piece(f"{faction} depot {i}", faction, "DE" if faction == "axis" else "BR", "installation", 0, 0, hex_id)


def unit(name: str, hex_id: str, faction: Faction = "axis", **kw: bool) -> Piece:
    return Piece(name, faction, "DE" if faction == "axis" else "BR", "infantry", 3, 8, hex_id, **kw)


def test_terminals_by_control_s8_3() -> None:
    assert terminals(BOARD, "axis", CONTROL) == AXIS_BASE
    assert terminals(BOARD, "allied", CONTROL) == ALLIED_BASE | {"1925"}
    taken: dict[str, Faction] = {"0702": "allied", "1351": "allied", "1925": "axis"}
    assert terminals(BOARD, "axis", taken) == {"1925"}
    assert terminals(BOARD, "allied", taken) >= AXIS_BASE
    with pytest.raises(ValueError, match="§5"):
        terminals(BOARD, "axis", {"0702": "axis"})


def test_general_and_attack_supply_s8_5() -> None:
    """A depot 5 clear hexes (15 MF) from the base is linked; units 6 MF from
    it are in AS, 12 MF in GS; a moved depot gives no AS (§8.5)."""
    pieces = [depot(1, "0708"), unit("near", "0710"), unit("far", "0712"), unit("beyond", "0716")]
    net = network(BOARD, pieces, "axis", CONTROL)
    assert set(net.linked) == {"axis depot 1"}
    s = supply_states(BOARD, pieces, "axis", CONTROL)
    assert (s["near"].state, s["far"].state, s["beyond"].state) == ("AS", "GS", "OOS")
    assert s["near"].attack == ("axis depot 1",)
    moved = supply_states(BOARD, pieces, "axis", CONTROL, moved={"axis depot 1"})
    assert moved["near"].state == "GS"


def test_units_cannot_trace_directly_to_axis_terminal_s8_2() -> None:
    """§8.2: a regular unit cannot trace straight to a terminal (Axis)."""
    s = supply_states(BOARD, [unit("home", "0702")], "axis", CONTROL)
    assert s["home"].state == "OOS"


def test_chain_of_installations_s8_2() -> None:
    """§8.2: a depot out of reach of a terminal is linked through another depot within 20 MF."""
    pieces = [depot(1, "0708"), depot(2, "0714"), unit("front", "0716")]
    assert set(network(BOARD, pieces, "axis", CONTROL).linked) == {"axis depot 1", "axis depot 2"}
    cut = [depot(2, "0714"), unit("front", "0716")]
    assert network(BOARD, cut, "axis", CONTROL).cut_off == ("axis depot 2",)
    assert supply_states(BOARD, cut, "axis", CONTROL)["front"].state == "OOS"


def test_enemy_units_and_zoc_block_unless_friendly_units_negate_s8_2() -> None:
    """§8.2: no segment through enemy units or enemy ZOC, unless a friendly unit is in the ZOC hex."""
    one_row = FakeMap(cells=block([7], range(1, 21)), bases={"axis": frozenset({"0701", "0702", "0703"})},
                      base_centres={"axis": "0702"})
    pieces = [depot(1, "0706"), unit("front", "0708")]
    assert supply_states(one_row, pieces, "axis", CONTROL)["front"].state == "AS"
    enemy = unit("BR 22/ABDE", "0707", "allied")
    assert supply_states(one_row, [*pieces, enemy], "axis", CONTROL)["front"].state == "OOS"
    # Enemy in 0704: its ZOC covers 0705 and 0703, cutting the depot from the base...
    zoc_only = [*pieces, unit("BR 22/ABDE", "0704", "allied")]
    assert network(one_row, zoc_only, "axis", CONTROL).cut_off == ("axis depot 1",)
    # ...but not through enemy units themselves, even with friendly units beside them.
    assert network(one_row, [*zoc_only, unit("guard", "0705")], "axis", CONTROL).cut_off == ("axis depot 1",)


def test_zoc_negated_by_friendly_unit_s8_2() -> None:
    board = FakeMap(cells=block(range(6, 9), range(1, 12)), bases={"axis": AXIS_BASE}, base_centres={"axis": "0702"})
    pieces = [depot(1, "0707"), unit("BR 22/ABDE", "0905", "allied")]
    base = network(board, pieces, "axis", CONTROL)
    assert "axis depot 1" in base.linked
    ring = [depot(1, "0707"), *(unit(f"BR {h}", h, "allied") for h in ("0605", "0805"))]
    assert network(board, ring, "axis", CONTROL).cut_off == ("axis depot 1",)
    guarded = [*ring, unit("guard 1", "0705"), unit("guard 2", "0706")]  # the ZOC hexes 0705 and 0706 on row 7
    assert "axis depot 1" in network(board, guarded, "axis", CONTROL).linked
    assert network(board, guarded[:-1], "axis", CONTROL).cut_off == ("axis depot 1",)


def test_allied_terminals_are_installations_and_bardia_s8_3_2() -> None:
    """§8.3.2: Allied units trace directly to the Alexandria base or Tobruk;
    an Allied unit in Bardia is supplied by Bardia itself."""
    pieces = [unit("NZ 4/IBDE", "1348", "allied"), unit("AU 24/IBDE", "1730", "allied")]
    s = supply_states(BOARD, pieces, "allied", CONTROL)
    assert s["NZ 4/IBDE"].state == "AS" and s["NZ 4/IBDE"].attack == (ALEXANDRIA_BASE,)
    assert s["AU 24/IBDE"].state == "AS" and BARDIA_DEPOT in s["AU 24/IBDE"].general
    lost: dict[str, Faction] = {"0702": "axis", "1351": "axis", "1925": "axis"}
    assert supply_states(BOARD, pieces[:1], "allied", lost)["NZ 4/IBDE"].state == "OOS"


def test_dismounted_always_oos_and_axis_persistence_s8_4() -> None:
    pieces = [depot(1, "0708"), unit("dis", "0709", dismounted=True)]
    assert supply_states(BOARD, pieces, "axis", CONTROL)["dis"].state == "OOS"
    german = unit("DE 104/IREGT", "0709")
    assert counts_as_in_supply(german, started_turn_in_supply=True, traces_now=False)
    allied = unit("AU 20/IBDE", "1347", "allied")
    assert not counts_as_in_supply(allied, started_turn_in_supply=True, traces_now=False)


def test_newly_oos_names_the_units_a_voluntary_act_cuts_off_s8_4_1() -> None:
    pieces = [depot(1, "0708"), unit("IT 25/IREGT", "0710"), unit("DE 104/IREGT", "0711")]
    pieces[1] = Piece("IT 25/IREGT", "axis", "IT", "infantry", 3, 8, "0710")
    before = supply_states(BOARD, pieces, "axis", CONTROL)
    after = supply_states(BOARD, pieces[1:], "axis", CONTROL)
    assert newly_oos(before, after, "axis", pieces) == ("IT 25/IREGT",)


def test_a_moved_installation_costs_one_search_of_the_map_s8_4_1(monkeypatch) -> None:
    """§8.4.1 judges an Allied installation's move by every unit's supply after
    it, for each candidate of a listing (issue 20: a rail listing of the
    campaign took minutes). The segments from the units and the installations
    that did not move are the same (an installation closes no hex, §8.2), so
    the second question searches the map from the moved installation only,
    and the answers are those of a cold computation."""
    import rules.paa.supply as supply

    searches = []
    real = supply.reachable
    monkeypatch.setattr(supply, "reachable", lambda *a, **k: searches.append(a[1]) or real(*a, **k))
    units = [unit(f"unit {h}", h, "allied") for h in ("1247", "1248", "1249", "1346", "1446")]
    enemy = unit("DE 15/PZDIV", "1243", "axis")
    before = [depot(1, "1345", "allied"), depot(2, "1447", "allied"), *units, enemy]
    after = [depot(1, "1344", "allied"), *before[1:]]
    supply._costs.cache_clear()
    first = supply_states(BOARD, before, "allied", CONTROL)
    assert len(searches) == len(set(searches)) == 7  # each hex once: 2 installations, 5 units
    searches.clear()
    second = supply_states(BOARD, after, "allied", CONTROL)
    assert searches == ["1344"]
    supply._costs.cache_clear()
    assert supply_states(BOARD, after, "allied", CONTROL) == second
    assert supply_states(BOARD, before, "allied", CONTROL) == first
