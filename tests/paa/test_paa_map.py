"""The authored Panzerarmee Afrika map (rules/paa/data/map.toml) against
every spatial fact the revised text states (quoted briefly, CC BY-SA 4.0)."""

from __future__ import annotations

import heapq
from collections import deque

import pytest

from rules.paa.mapdata import IDS, MapDataError, load_map, map_picture, parse_map

M = load_map()


def road_distance(a: str, b: str) -> int | None:
    """Shortest road-only path in MF, 1 MF per road hex (Table 1)."""
    best = {a: 0}
    todo = [(0, a)]
    while todo:
        d, h = heapq.heappop(todo)
        if h == b:
            return d
        if d > best[h]:
            continue
        for n in M.neighbours(h):
            if M.side(h, n).road and d + 1 < best.get(n, 1 << 30):
                best[n] = d + 1
                heapq.heappush(todo, (d + 1, n))
    return None


def regular_cost(a: str, b: str) -> int:
    """§11.1.2 cost for a regular unit stepping from a into b (no road/track change)."""
    s = M.side(a, b)
    assert not s.prohibited
    if s.road:
        return 1
    if s.track:
        return 2
    base = {"clear": 3, "rough": 10, "swamp": 10}[M.terrain(b)]
    return base + (10 if s.escarpment else 0)


def cheapest(a: str, b: str) -> int:
    best = {a: 0}
    todo = [(0, a)]
    while todo:
        d, h = heapq.heappop(todo)
        if h == b:
            return d
        if d > best[h]:
            continue
        for n in M.neighbours(h):
            if M.terrain(n) == "sea" or M.side(h, n).prohibited:
                continue
            nd = d + regular_cost(h, n)
            if nd < best.get(n, 1 << 30):
                best[n] = nd
                heapq.heappush(todo, (nd, n))
    raise AssertionError(f"{b} unreachable from {a}")


# Player aid, "Distances in MF Along Coastal Road" (complete).
DISTANCES = {
    "Alexandria": {"El Agheila": 73, "Benghazi": 57, "Derna": 41, "Gazala": 35, "Tobruk": 32, "Bardia": 26,
                   "Sidi Barrani": 19, "Matruh": 12},
    "Matruh": {"El Agheila": 61, "Benghazi": 45, "Derna": 29, "Gazala": 23, "Tobruk": 20, "Bardia": 14,
               "Sidi Barrani": 7},
    "Sidi Barrani": {"El Agheila": 54, "Benghazi": 38, "Derna": 22, "Gazala": 16, "Tobruk": 13, "Bardia": 7},
    "Bardia": {"El Agheila": 47, "Benghazi": 31, "Derna": 15, "Gazala": 9, "Tobruk": 6},
    "Tobruk": {"El Agheila": 41, "Benghazi": 25, "Derna": 9, "Gazala": 3},
    "Gazala": {"El Agheila": 38, "Benghazi": 22, "Derna": 6},
    "Derna": {"El Agheila": 32, "Benghazi": 16},
    "Benghazi": {"El Agheila": 16},
}


@pytest.mark.parametrize(("east", "west", "mf"),
                         [(e, w, mf) for e, row in DISTANCES.items() for w, mf in row.items()])
def test_player_aid_coastal_road_distances(east: str, west: str, mf: int) -> None:
    """Player aid: the shortest road-only path between the named places, at 1 MF per road hex."""
    assert road_distance(M.places[east], M.places[west]) == mf
    assert road_distance(M.places[west], M.places[east]) == mf


def test_grid_extent_and_cited_hexes_exist() -> None:
    """§2.1: RRCC ids; every hex the text cites is on the map."""
    assert (M.rows, M.columns) == (25, 53)
    assert len(M.hexes()) == 25 * 53
    for h in ("0702", "1351", "1925", "1730", "1531", "0130", "1353", "1440", "1341", "1826", "1724", "1723",
              "0906", "1006", "0807", "0907", "1005", "1007", "1508", "1509", "1608", "1406"):
        assert M.terrain(h) != "sea", h


def test_named_hexes_of_the_text() -> None:
    """§5.1, §2.1.1, §11.2: El Agheila 0702, Alexandria 1351, Tobruk 1925, Bardia 1730."""
    assert M.places["El Agheila"] == "0702"
    assert M.places["Alexandria"] == "1351"
    assert M.places["Tobruk"] == "1925"
    assert M.places["Bardia"] == "1730"


def test_ports_forts_and_sea_lines() -> None:
    """§11.2 ports 1925, 1730, 1351 only; Table 1 Bardia 2x, Tobruk 5x DF; §2.1.2 sea lines join only these ports."""
    assert M.ports == {"1925", "1730", "1351"}
    assert dict(M.forts) == {"1925": 5, "1730": 2}
    assert {frozenset(p) for p in M.sea_lines} == {frozenset(("1351", "1730")), frozenset(("1351", "1925")),
                                                  frozenset(("1730", "1925"))}


def test_fort_zoc_is_every_land_neighbour() -> None:
    """§3: the hexes neighbouring a fortified hex are in its ZOC (never sea, never across prohibited sides)."""
    for fort, zoc in M.fort_zoc.items():
        want = {n for n in M.neighbours(fort) if M.terrain(n) != "sea" and not M.side(fort, n).prohibited}
        assert zoc == want and zoc


def test_bases() -> None:
    """§5.1 centre and surrounding hexes; §8.3.1 El Agheila 'all 5 hexes'; §13.2.3 Alexandria 'any of the 5 hexes'."""
    assert dict(M.base_centres) == {"axis": "0702", "allied": "1351"}
    for faction, centre in M.base_centres.items():
        hexes = M.bases[faction]
        assert len(hexes) == 5
        assert hexes == {centre} | {n for n in M.neighbours(centre) if M.terrain(n) != "sea"}


def test_border_from_1531_to_0130() -> None:
    """§9: Libya lies west of the border line starting in 1531 and ending in 0130."""
    border = [(a, b) for a in M.hexes() for b in M.neighbours(a) if a < b and M.side(a, b).border]
    egypt_side = {h for pair in border for h in pair if h not in M.libya}
    assert max(egypt_side) == "1531"  # northernmost (highest row) Egyptian hex on the line
    assert min(egypt_side) == "0130"  # southernmost
    assert {int(h[:2]) for h in egypt_side} == set(range(1, 16))  # one hex or more on every row 01-15
    # The line is one chain: its Egyptian hexes are connected.
    seen, todo = {"1531"}, deque(["1531"])
    while todo:
        h = todo.popleft()
        for n in M.neighbours(h):
            if n in egypt_side and n not in seen:
                seen.add(n)
                todo.append(n)
    assert seen == egypt_side
    for h in ("0702", "1925", "1730"):
        assert h in M.libya
    for h in ("1351", "1440", "1531", M.places["Sidi Barrani"]):
        assert h not in M.libya and M.terrain(h) != "sea"
    for a, b in border:
        assert (a in M.libya) != (b in M.libya)


def test_libya_is_west_of_the_border() -> None:
    """§9: every land hex of each row west of the row's border is in Libya, every one east of it in Egypt."""
    for h in M.land_hexes():
        if h in M.libya:
            east = [n for n in M.neighbours(h) if int(n[:2]) == int(h[:2]) and n > h]
            for n in east:
                assert M.terrain(n) == "sea" or n in M.libya or M.side(h, n).border


def test_railroad_from_1353_to_1440() -> None:
    """§11.3.1: the Egyptian railroad starts in 1353 and runs to 1440."""
    rail = M.railroad
    assert (rail[0], rail[-1]) == ("1353", "1440")
    for a, b in zip(rail, rail[1:]):
        assert M.side(a, b).rail
    assert all(h not in M.libya for h in rail)


def test_figure_4_zoc() -> None:
    """§3 Figure 4: DE 382/IREGT has ZOC in its 6 neighbours, AU 18/IBDE in only 4 (sea and impassable
    sides), both in 1341. The figure's unit hexes are lost: authored 1241 and 1440 (decisions/data.md)."""
    def zoc(h: str) -> set[str]:
        return {n for n in M.neighbours(h) if M.terrain(n) != "sea" and not M.side(h, n).prohibited}
    assert len(zoc("1241")) == 6 and len(M.neighbours("1241")) == 6
    assert len(zoc("1440")) == 4
    assert "1341" in zoc("1241") & zoc("1440")


def test_figure_6_road_and_track() -> None:
    """§11.1.2 Figure 6: road 1826 -> 1724 is 3 hexes at 1 MF; at 1724 the road and the track are not
    connected (+2); the track into 1723 costs 2: 7 MF in all."""
    path = ("1826", "1726", "1725", "1724", "1723")
    assert road_distance("1826", "1724") == 3
    assert M.side("1724", "1723").track and not M.side("1724", "1723").road
    assert not M.road_track_connected("1724")
    total, came_by = 0, ""
    for a, b in zip(path, path[1:]):
        s = M.side(a, b)
        by = "road" if s.road else "track" if s.track else ""
        assert by, (a, b)
        if came_by and by != came_by and not M.road_track_connected(a):
            total += 2  # change of road or track, §11.1.2
        total += 1 if by == "road" else 2
        came_by = by
    assert total == 7
    # Road and track meet elsewhere and connect there.
    assert M.road_track_connected("1006")


def test_figure_7_overrun_hexes_are_open_clear_ground() -> None:
    """§11.4 Figure 7: 0906, 1006, 0807, 0907, 1005, 1007 are clear land with no escarpment or prohibited
    side between them (the example's ΔCF 3 has no terrain factor)."""
    group = ("0906", "1006", "0807", "0907", "1005", "1007")
    for h in group:
        assert M.terrain(h) == "clear", h
    for a in group:
        for b in group:
            if b in M.neighbours(a):
                s = M.side(a, b)
                assert not s.escarpment and not s.prohibited
    assert "1005" in M.neighbours("0906") and "1007" not in M.neighbours("0906")
    assert "1006" in M.neighbours("0907") and "1005" not in M.neighbours("0907")


def test_figure_8_escarpments_and_attack_supply() -> None:
    """§12.3 Figure 8: 1508 attacks 1509 and 1608 across escarpments; neither defender has terrain benefit;
    the installation in 1406 is within 8 MF (attack supply, §8.5) of 1508."""
    assert M.side("1508", "1509").escarpment and M.side("1508", "1608").escarpment
    assert M.terrain("1509") == "clear" and M.terrain("1608") == "clear" and M.terrain("1508") == "clear"
    assert cheapest("1508", "1406") <= 8


def test_every_land_hex_is_reachable() -> None:
    """Connectivity: every land hex can be entered from El Agheila by land (not across prohibited sides)."""
    seen, todo = {"0702"}, deque(["0702"])
    while todo:
        h = todo.popleft()
        for n in M.neighbours(h):
            if n not in seen and M.terrain(n) != "sea" and not M.side(h, n).prohibited:
                seen.add(n)
                todo.append(n)
    assert seen == set(M.land_hexes())


def test_neighbours_and_sides_are_symmetric() -> None:
    for h in M.hexes():
        ns = M.neighbours(h)
        assert 2 <= len(ns) <= 6
        for n in ns:
            assert h in M.neighbours(n)
            assert M.side(h, n) == M.side(n, h)
            assert IDS.parse(n) != IDS.parse(h)
    with pytest.raises(ValueError, match="not adjacent"):
        M.side("0702", "1351")


def test_routes_are_on_land_and_continuous() -> None:
    for route in M.routes:
        for a, b in zip(route.hexes, route.hexes[1:]):
            assert b in M.neighbours(a)
            assert M.terrain(a) != "sea" and M.terrain(b) != "sea"


def test_every_data_set_has_a_note() -> None:
    for what in ("map", "terrain", "country", "escarpments", "prohibited", "roads", "tracks", "road_track",
                 "railroad", "places", "ports", "sea_lines", "bases", "forts", "fort_zoc", "control"):
        assert M.authored(what)
    assert "distance table" in M.authored("place:Derna")
    for h in ("1906", "2418", "1005", "1630", "1450", "1451", "1247", "1724", "1440", "1241", "1508"):
        assert M.authored(f"hex:{h}")
    with pytest.raises(KeyError):
        M.authored("nonsense")


def test_initial_control() -> None:
    """Decision (lost passage): the Axis starts controlling its base, the Allies every other land hex."""
    assert M.control_at_start["axis"] == M.bases["axis"]
    assert "1925" in M.control_at_start["allied"] and "1351" in M.control_at_start["allied"]


def test_a_bad_entry_is_named() -> None:
    from rules.paa.mapdata import map_bytes
    text = map_bytes().decode()
    bad = text.replace('"1508-1509"', '"1508-1510"', 1)
    with pytest.raises(MapDataError, match="1508 and 1510 are not adjacent"):
        parse_map(bad)
    with pytest.raises(MapDataError, match="unknown terrain"):
        parse_map(text.replace('cells   = "~', 'cells   = "x', 1))


def test_picture_builds() -> None:
    from pbem.board import render_svg
    pic = map_picture(M)
    assert len(pic.hexes) == 25 * 53
    svg = render_svg(pic, "a3")
    assert "Tobruk" in svg and "Alexandria" in svg
