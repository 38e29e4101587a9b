"""Every spatial fact the rulebook states, checked as map topology.

Each test names the rule it comes from ("RB" = shared/seeds/
rommel-in-the-desert.txt; "facts 5.2" = the table of adjacency facts in
shared/facts/rommel-in-the-desert-public-facts.md).
"""

from __future__ import annotations

import pytest

from rules.ritd.hexmap import HexMap, load_map
from rules.ritd.position import Block, Position
from rules.ritd.supply import supply_lines
from tests.ritd.rulebook_cases import MECHILI_SUPPLY_LINES

TRACK_RANGE = 3  # RB 12.4
TRAIL_RANGE = 2
RANGE = {"highway": TRACK_RANGE, "track": TRACK_RANGE, "trail": TRAIL_RANGE}


@pytest.fixture(scope="module")
def m() -> HexMap:
    return load_map()


def at(m: HexMap, text: str) -> str:
    return m.resolve(text)


def on_highway(m: HexMap, text: str) -> bool:
    return at(m, text) in m.highway_hexes()


# ------------------------------------------------------------- RB 1.x


def test_rb_1_6_bases_el_agheila_west_edge_alexandria_east_edge(m: HexMap) -> None:
    agheila, alexandria = m.base("axis"), m.base("allied")
    assert m.name(agheila) == "El Agheila" and m.name(alexandria) == "Alexandria"
    assert m.hex(agheila).col == 1
    assert m.hex(alexandria).col == m.columns
    assert m.neighbour(agheila, "W") is None  # the holding area west is off-board (RB 16.4 sidebar)
    assert m.neighbour(alexandria, "E") is None


def test_facts_5_1_scale_about_22_hexes_from_el_agheila_to_alexandria(m: HexMap) -> None:
    assert m.hex_km == 45
    assert 20 <= m.distance(m.base("axis"), m.base("allied")) <= 23


def test_rb_1_7_and_13_3_fortress_port_capacities(m: HexMap) -> None:
    ports = {p.name: (p.port_axis, p.port_allied) for p in m.places if p.is_fortress}
    assert ports == {"Tobruk": (2, 5), "Bardia": (1, 2), "Benghazi": (1, 2)}
    assert m.fortress(at(m, "Tobruk")) is not None
    assert m.fortress(at(m, "Sollum")) is None


def test_rb_1_8_oases_jalo_jarabub_siwa(m: HexMap) -> None:
    assert {p.name for p in m.places if p.is_oasis} == {"Jalo", "Jarabub", "Siwa"}


def test_rb_1_4_coast_is_impassable_for_land_units(m: HexMap) -> None:
    tobruk = at(m, "Tobruk")
    sea = [n for _, n in m.neighbours(tobruk) if m.hex(n).kind == "sea"]
    assert sea
    for n in sea:
        assert m.hexside(tobruk, n) == "sea"
        assert not m.is_passable(tobruk, n)
        assert m.hexside_limit(tobruk, n) == 0


def test_rb_1_4_jebel_el_akhdar_passable_only_along_roads(m: HexMap) -> None:
    mountain_sides = [
        (h, n) for h in m.playable_hexes() for _, n in m.neighbours(h) if m.hexside(h, n) == "mountain"
    ]
    assert len(mountain_sides) > 20
    for h, n in mountain_sides:
        assert m.is_passable(h, n) == (m.road(h, n) is not None)
        assert m.hexside_limit(h, n) == (1 if m.road(h, n) else 0)  # RB 7.1 mountain road: 1
    # The highway crosses the Jebel between Benghazi and Derna.
    path = m.road_path(at(m, "Benghazi"), at(m, "Derna"), {"highway"})
    assert path is not None
    assert any(m.hex(h).kind == "mountain" for h in path)


def test_rb_7_1_hexside_limits_clear_2_gap_1(m: HexMap) -> None:
    sollum, buq_buq, ft_capuzzo = at(m, "Sollum"), at(m, "Buq Buq"), at(m, "Ft Capuzzo")
    assert m.hexside_limit(sollum, buq_buq) == 2
    assert m.hexside_limit(ft_capuzzo, sollum) == 1
    assert m.hexside_limit(sollum, at(m, "Bir Habata")) == 0  # ridge


def test_rb_1_4_no_road_crosses_a_ridge_or_marsh_without_a_gap(m: HexMap) -> None:
    for road in m.roads:
        for a, b in zip(road.path, road.path[1:]):
            assert m.hexside(a, b) not in ("ridge", "marsh", "sea", "impassable"), road.name


# ------------------------------------------------- RB 5.3 Withdrawal Example


@pytest.mark.parametrize(
    ("place", "linked"),
    [
        ("Mechili", ["Msus", "Charruba", "Derna", "Gazala", "Bir Harmat"]),
        ("Msus", ["Agedabia", "Beda Fomm", "Ghemines", "Er Regima"]),
        ("Charruba", ["Er Regima"]),
    ],
)
def test_rb_5_3_withdrawal_example_road_links(m: HexMap, place: str, linked: list[str]) -> None:
    for other in linked:
        path = m.road_path(at(m, place), at(m, other), {"track", "trail"})
        assert path is not None, f"{place}-{other}"
        assert len(path) - 1 <= RANGE[m.worst_road(path) or "trail"], f"{place}-{other}"


def test_rb_5_3_withdrawal_example_mechili_has_exactly_8_supply_lines(m: HexMap) -> None:
    msus, charruba, mechili = at(m, "Msus"), at(m, "Charruba"), at(m, "Mechili")
    pos = Position(
        blocks=(Block("recon", "axis", mechili), Block("msus", "axis", msus), Block("charruba", "axis", charruba)),
        fortresses={at(m, "Benghazi"): "axis"},
    )
    lines = supply_lines(m, pos, "axis", mechili)
    assert len(lines) == 8
    named = {tuple(m.name(h) for h in line.chain) for line in lines}
    assert named == set(MECHILI_SUPPLY_LINES)


def test_rb_5_3_withdrawal_example_routes_1_to_4_never_move_away_from_base(m: HexMap) -> None:
    base = m.base("axis")

    def never_away(stops: list[str], kinds: set[str]) -> bool:
        hexes: list[str] = [at(m, stops[0])]
        for x, y in zip(stops, stops[1:]):
            leg = m.road_path(at(m, x), at(m, y), kinds)
            assert leg is not None
            hexes.extend(leg[1:])
        dist = [m.distance(base, h) for h in hexes]
        return all(b <= a for a, b in zip(dist, dist[1:]))

    roads = {"track", "trail"}
    assert never_away(["Mechili", "Msus", "Agedabia"], roads)
    assert never_away(["Mechili", "Msus", "Beda Fomm"], roads)
    assert never_away(["Mechili", "Msus", "Ghemines"], roads)
    assert never_away(["Mechili", "Charruba", "Er Regima"], roads)
    # Routes 5-8 "involve movement physically away from Base".
    assert not never_away(["Mechili", "Msus", "Er Regima"], roads)
    assert not never_away(["Mechili", "Derna"], roads)
    assert not never_away(["Mechili", "Gazala"], roads)
    assert not never_away(["Mechili", "Bir Harmat"], roads)


def test_rb_5_3_sidebar_highway_jogs_back_at_bardia_ft_capuzzo(m: HexMap) -> None:
    bardia, capuzzo, base = at(m, "Bardia"), at(m, "Ft Capuzzo"), m.base("axis")
    assert m.road(bardia, capuzzo) == "highway"
    # Along the highway Bardia comes before Ft Capuzzo going east ...
    path = m.road_path(base, at(m, "Sollum"), {"highway"})
    assert path is not None and path.index(bardia) < path.index(capuzzo)
    # ... yet Bardia is further from the Axis Base in absolute hexes, so an
    # Axis Withdrawal Ft Capuzzo -> Bardia needs the sidebar's exception.
    assert m.distance(base, bardia) == m.distance(base, capuzzo) + 1


# ------------------------------------------------------------ RB 6.2, 16.51


def test_rb_6_2_road_bonus_example_has_room_for_8_highway_6_track_5_trail_hexes(m: HexMap) -> None:
    def longest_run(kinds: set[str]) -> int:
        best = 0
        for road in m.roads:
            if road.kind in kinds:
                best = max(best, len(road.path) - 1)
        return best

    assert longest_run({"highway"}) >= 8
    assert longest_run({"track"}) >= 6
    assert longest_run({"trail"}) >= 5


def test_rb_16_51_one_bp_redeploys_6_hexes_along_the_coast_highway(m: HexMap) -> None:
    path = m.road_path(at(m, "Tobruk"), at(m, "Buq Buq"), {"highway"})
    assert path is not None and len(path) - 1 == 6


# ------------------------------------------------ RB 12.7 Supply Examples A, B


def test_rb_12_7_example_a_bir_harmat_track_to_mechili(m: HexMap) -> None:
    assert m.road_distance(at(m, "Bir Harmat"), at(m, "Mechili"), {"track"}) == 3


def test_rb_12_7_example_a_mechili_trail_to_derna(m: HexMap) -> None:
    assert m.road_distance(at(m, "Mechili"), at(m, "Derna"), {"trail"}) == 2


def test_rb_12_7_example_a_highway_east_from_bir_harmat(m: HexMap) -> None:
    derna, gazala, harmat = at(m, "Derna"), at(m, "Gazala"), at(m, "Bir Harmat")
    assert on_highway(m, "Derna") and on_highway(m, "Gazala") and on_highway(m, "Bir Harmat")
    path = m.road_path(m.base("axis"), at(m, "Tobruk"), {"highway"})
    assert path is not None
    assert path.index(derna) < path.index(gazala) < path.index(harmat)
    # A unit at Gazala cuts the highway: no highway route Derna -> Bir Harmat avoids it.
    assert m.road_path(derna, harmat, {"highway"}, avoid={gazala}) is None


def test_rb_12_7_example_b_er_regima_trail_track_to_ghemines_off_the_highway(m: HexMap) -> None:
    regima, ghemines, benghazi = at(m, "Er Regima"), at(m, "Ghemines"), at(m, "Benghazi")
    path = m.road_path(regima, ghemines, {"track", "trail"}, avoid={benghazi})
    assert path is not None and len(path) - 1 == 2
    assert {m.road(a, b) for a, b in zip(path, path[1:])} == {"track", "trail"}
    assert benghazi not in path and path[1] not in m.highway_hexes()
    # Along the highway, Ghemines is on the Base side of Benghazi, Er Regima beyond it.
    highway = m.road_path(m.base("axis"), at(m, "Derna"), {"highway"})
    assert highway is not None
    assert highway.index(ghemines) < highway.index(benghazi) < highway.index(regima)
    assert m.road_path(ghemines, regima, {"highway"}, avoid={benghazi}) is None


# ---------------------------------------------------- RB 12 Supply Example


def test_rb_12_supply_example_mersa_matruh_track_3_hexes_south_then_3_to_siwa(m: HexMap) -> None:
    matruh, siwa = at(m, "Mersa Matruh"), at(m, "Siwa")
    path = m.road_path(matruh, siwa, {"track"})
    assert path is not None and len(path) - 1 == 6
    unit_b = path[3]
    assert m.hex(unit_b).row == m.hex(matruh).row + 3  # three hexes south
    assert m.hex(siwa).row == m.hex(unit_b).row + 3
    assert on_highway(m, "Mersa Matruh")


def test_rb_12_supply_example_trail_from_sidi_barrani_through_sofafi(m: HexMap) -> None:
    barrani, sofafi = at(m, "Sidi Barrani"), at(m, "Sofafi")
    assert on_highway(m, "Sidi Barrani")
    assert m.road(barrani, sofafi) == "trail"
    unit_c = at(m, "Sofafi SW1")
    assert m.road(sofafi, unit_c) == "trail"
    assert m.road_distance(unit_c, barrani, {"trail"}) == 2
    # An Axis unit in Sofafi cuts [C]'s only trail to the highway.
    detour = m.road_path(unit_c, barrani, avoid={sofafi})
    assert detour is None or len(detour) - 1 > TRACK_RANGE


def test_rb_12_supply_example_unit_d_next_to_c_supplied_via_sollum_through_sidi_omar(m: HexMap) -> None:
    unit_c, unit_d = at(m, "Sofafi SW1"), at(m, "Sidi Omar SE1")
    sollum, sidi_omar = at(m, "Sollum"), at(m, "Sidi Omar")
    assert m.is_adjacent(unit_c, unit_d) and m.is_passable(unit_c, unit_d)
    path = m.road_path(unit_d, sollum)
    assert path is not None and sidi_omar in path
    assert len(path) - 1 <= RANGE[m.worst_road(path) or "trail"]
    detour = m.road_path(unit_d, sollum, avoid={sidi_omar})
    assert detour is None or len(detour) - 1 > TRACK_RANGE
    # Axis unit [1] moves east two hexes from Sidi Omar to Sofafi.
    assert m.distance(sidi_omar, at(m, "Sofafi")) == 2
    assert m.hex(at(m, "Sofafi")).q - m.hex(sidi_omar).q == 2 and m.hex(at(m, "Sofafi")).r == m.hex(sidi_omar).r


def test_rb_12_supply_example_ridge_north_of_unit_e(m: HexMap) -> None:
    unit_e = at(m, "Sidi Barrani SE1")
    highway = m.highway_hexes()
    assert unit_e not in highway
    north = [n for d, n in m.neighbours(unit_e) if d in ("NE", "NW")]
    assert north and all(n in highway for n in north)
    for n in north:
        assert m.hexside(unit_e, n) == "ridge"
        assert not m.is_passable(unit_e, n)
    # Open desert: no road, no other highway neighbour.
    assert not m.road_neighbours(unit_e)
    assert not [n for n in m.passable_neighbours(unit_e) if n in highway]


def test_rb_12_supply_example_ridge_runs_south_of_the_egyptian_coast_highway(m: HexMap) -> None:
    # From Sollum to Mersa Matruh every hexside from a highway hex south onto
    # the plateau is a ridge or one of its gaps.
    path = m.road_path(at(m, "Sollum"), at(m, "Mersa Matruh"), {"highway"})
    assert path is not None
    for h in path:
        for d, n in m.neighbours(h):
            if d in ("SE", "SW") and n not in m.highway_hexes():
                assert m.hexside(h, n) in ("ridge", "gap"), m.hexside_name(h, n)


# ------------------------------------------------------------ RB 19.0 Demo


def test_rb_19_0_demo_sollum_entered_from_ft_capuzzo_through_exactly_three_gaps(m: HexMap) -> None:
    sollum = at(m, "Sollum")
    gaps = {m.name(n) for _, n in m.neighbours(sollum) if m.hexside(sollum, n) == "gap"}
    assert gaps == {"Bardia", "Ft Capuzzo", "Sidi Omar"}
    assert sum(m.hexside_limit(sollum, at(m, g)) for g in gaps) == 3
    # Every other way in from the Axis side is a ridge (or the sea).
    for _, n in m.neighbours(sollum):
        if m.name(n) not in gaps and m.name(n) != "Buq Buq":
            assert not m.is_passable(sollum, n)


def test_rb_19_0_demo_regroup_units_from_bardia_ft_capuzzo_sidi_omar_reach_sollum(m: HexMap) -> None:
    capuzzo = at(m, "Ft Capuzzo")
    for place in ("Bardia", "Sidi Omar"):
        assert m.is_adjacent(capuzzo, at(m, place))  # in or adjacent to the Command Point
        assert m.is_passable(at(m, place), at(m, "Sollum"))


def test_rb_19_0_demo_buq_buq_attacked_across_one_clear_hexside_from_ft_capuzzo(m: HexMap) -> None:
    capuzzo, sollum, buq_buq = at(m, "Ft Capuzzo"), at(m, "Sollum"), at(m, "Buq Buq")
    assert m.hexside(sollum, buq_buq) == "clear" and m.hexside_limit(sollum, buq_buq) == 2
    assert m.road_path(capuzzo, buq_buq, {"highway"}) == (capuzzo, sollum, buq_buq)
    assert m.is_adjacent(capuzzo, at(m, "Sidi Omar"))  # the third unit joins the Sidi Omar group


def test_rb_19_0_demo_withdrawals_sollum_to_sidi_barrani_to_mersa_matruh(m: HexMap) -> None:
    sollum, barrani, matruh = at(m, "Sollum"), at(m, "Sidi Barrani"), at(m, "Mersa Matruh")
    # A speed-3 mechanized unit, without road bonus (RB 6.2 sidebar: none for Retreats).
    assert m.movement_distance(sollum, barrani) <= 3
    assert m.movement_distance(barrani, matruh) <= 3
    assert m.road_path(sollum, barrani, {"highway"}) is not None  # along a valid Supply Line
    # "The hex east of Sidi Barrani" lies west of Mersa Matruh.
    east = at(m, "Sidi Barrani E1")
    assert m.hex(east).q < m.hex(matruh).q or m.hex(east).col < m.hex(matruh).col
    assert east in m.road_path(barrani, matruh, {"highway"})  # type: ignore[operator]


def test_rb_19_0_demo_regroup_at_buq_buq_reaches_across_the_ridge_to_sofafi(m: HexMap) -> None:
    buq_buq, sofafi, target = at(m, "Buq Buq"), at(m, "Sofafi"), at(m, "Sidi Barrani E1")
    assert m.is_adjacent(buq_buq, sofafi) and m.hexside(buq_buq, sofafi) == "ridge"
    assert m.movement_distance(buq_buq, target) == 2
    assert m.movement_distance(sofafi, target) == 2


def test_rb_19_0_demo_sidi_omar_bir_habata_sofafi_chain(m: HexMap) -> None:
    omar, habata, sofafi = at(m, "Sidi Omar"), at(m, "Bir Habata"), at(m, "Sofafi")
    assert m.is_passable(omar, habata) and m.is_passable(habata, sofafi)
    # Speed 1 + Forced March: Sidi Omar to Sofafi is 2 hexes.
    assert m.movement_distance(omar, sofafi) == 2


def test_rb_19_0_demo_month_2_redeployments_fit_road_bonus(m: HexMap) -> None:
    def highway(a: str, b: str) -> int:
        d = m.road_distance(at(m, a), at(m, b), {"highway"})
        assert d is not None
        return d

    assert highway("Buq Buq", "Bardia") <= 6  # 1 BP
    assert highway("Sidi Barrani E1", "Alexandria") <= 6  # 1 BP to Base
    assert highway("Alexandria", "Mersa Matruh") <= 6  # 1 BP back to the front
    # Tobruk -> Sofafi in 2 BP: 6 highway hexes, then 2 + trail bonus.
    assert highway("Tobruk", "Buq Buq") <= 6
    assert m.movement_distance(at(m, "Buq Buq"), at(m, "Sofafi")) <= 3


# ------------------------------------------------ RB 18.x areas and lines


def test_rb_18_1_and_18_4_sidi_omar_and_sollum_are_not_in_libya(m: HexMap) -> None:
    libya, egypt = m.area_hexes("Libya"), m.area_hexes("Egypt")
    assert at(m, "Sidi Omar") not in libya and at(m, "Sollum") not in libya
    assert at(m, "Sidi Omar") in egypt and at(m, "Sollum") in egypt
    for place in ("Bardia", "Ft Capuzzo", "Tobruk", "Benghazi", "El Agheila", "Jarabub", "Jalo"):
        assert at(m, place) in libya, place
    for place in ("Buq Buq", "Sidi Barrani", "Mersa Matruh", "Siwa", "El Alamein", "Alexandria"):
        assert at(m, place) in egypt, place
    assert not libya & egypt
    assert libya | egypt == frozenset(m.playable_hexes())
    assert m.area_hexes("Sidi Omar") == {at(m, "Sidi Omar")}


def test_rb_18_7_gazala_set_up_lines(m: HexMap) -> None:
    axis = [m.name(h) for h in m.line("Gazala Axis line").path]
    allied = [m.name(h) for h in m.line("Gazala Allied line").path]
    assert axis[:3] == ["Gazala", "Segnali Rotunda", "Tengeder"] and "Agedabia" in axis
    assert allied[:5] == ["Acroma", "Sidi Mufta", "Bir Hacheim", "Retma", "Bir Guba"]
    assert allied[-1] == "Jarabub"
    # Tengeder is on the Trigh el Abd; the line goes on by trail southwest to Agedabia.
    trigh = next(r for r in m.roads if r.name == "Trigh el Abd")
    assert at(m, "Tengeder") == trigh.path[0]
    line = m.line("Gazala Axis line").path
    end = line.index(at(m, "Agedabia"))
    tail = line[line.index(at(m, "Tengeder")) : end + 1]
    assert {m.road(a, b) for a, b in zip(tail, tail[1:])} <= {"trail", "track"}
    assert m.hex(line[end]).q < m.hex(at(m, "Tengeder")).q
    # M-22: beyond Agedabia the line runs due south to the map edge.
    south = line[end:]
    assert all(m.hex(b).r == m.hex(a).r + 1 for a, b in zip(south, south[1:]))
    assert not any(m.neighbour(south[-1], d) for d in ("SE", "SW") if m.neighbour(south[-1], d)
                   and m.is_playable(m.neighbour(south[-1], d)))
    trail = m.line("Gazala Allied line").path
    tail = trail[trail.index(at(m, "Bir Guba")) :]
    assert {m.road(a, b) for a, b in zip(tail, tail[1:])} == {"trail"}
    # The Allied line runs from the sea to the Sand Sea: it splits the map.
    east = m.side_of_line("Gazala Allied line", at(m, "Tobruk"))
    assert at(m, "Alexandria") in east and at(m, "El Agheila") not in east


def test_rb_20_0_qattara_makes_el_alamein_the_sole_gateway_east(m: HexMap) -> None:
    gap = {at(m, "El Alamein"), at(m, "El Alamein SW1"), at(m, "El Alamein SW2")}
    assert all(m.is_playable(h) for h in gap)
    assert any(m.hexside(at(m, "El Alamein SW2"), n) == "marsh" for _, n in m.neighbours(at(m, "El Alamein SW2")))
    # Every land route from the west to Alexandria passes through the gap.
    seen = {m.base("axis")}
    stack = [m.base("axis")]
    while stack:
        h = stack.pop()
        for n in m.passable_neighbours(h):
            if n not in seen and n not in gap:
                seen.add(n)
                stack.append(n)
    assert m.base("allied") not in seen
    assert m.movement_distance(m.base("axis"), m.base("allied")) is not None


def test_rb_20_0_el_agheila_bottleneck(m: HexMap) -> None:
    # Salt marsh closes the El Agheila pocket; it opens east only through
    # the hexsides east of Mersa Brega and one marsh gap.
    pocket = {
        at(m, t)
        for t in ("El Agheila", "Mersa Brega", "El Agheila E1", "El Agheila SE1", "El Agheila SW1 SE1")
    }
    entries = [(h, n) for h in pocket for n in m.passable_neighbours(h) if n not in pocket]
    assert {n for _, n in entries} == {at(m, "Mersa Brega E1"), at(m, "El Agheila SE1 E1")}
    assert sum(m.hexside_limit(h, n) for h, n in entries) == 5
    assert sorted(m.hexside(h, n) for h, n in entries) == ["clear", "clear", "marsh_gap"]
    closed = [(h, n) for h in pocket for _, n in m.neighbours(h) if n not in pocket and m.hexside(h, n) == "marsh"]
    assert len(closed) >= 4
