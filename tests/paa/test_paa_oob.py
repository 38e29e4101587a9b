"""The authored Panzerarmee Afrika counters and Orders of Battle
(rules/paa/data/units.toml, oob.toml) against every number the revised text
gives (quoted briefly, CC BY-SA 4.0)."""

from __future__ import annotations

import heapq
import math

import pytest

from rules.paa import oob
from rules.paa.mapdata import load_map

NAMED_IN_TEXT = ("AU 18/IBDE", "AU 20/IBDE", "BR 7/ABDE", "BR SG/2/IBDE", "BR SQ/2/IBDE", "DE 10/1/ABN",
                 "DE 10/2/ABN", "DE 104/IREGT", "DE 28/AIREGT", "DE 382/IREGT", "DE 5/1/ABN", "DE 8/ARECBN",
                 "IT 132/AREGT", "IT BERS/8/AIREGT")
SCHED = oob.schedule()


def test_every_unit_the_text_names_exists() -> None:
    for uid in NAMED_IN_TEXT:
        assert oob.unit(uid).id in (uid, oob.aliases().get(uid))
    assert oob.unit("BR SQ/2/IBDE") is oob.unit("BR SG/2/IBDE")
    with pytest.raises(KeyError):
        oob.unit("DE 999/IREGT")


def test_option_f_penalty_is_12() -> None:
    """§13.5.3: F = DE 10/1/ABN (3), DE 10/2/ABN (3), DE 8/ARECBN (2), DE 28/AIREGT (4): CF_penalty,F = 12."""
    f = SCHED.options["F"]
    assert set(f.units) == {"DE 10/1/ABN", "DE 10/2/ABN", "DE 8/ARECBN", "DE 28/AIREGT"}
    assert [oob.unit(u).cf for u in ("DE 10/1/ABN", "DE 10/2/ABN", "DE 8/ARECBN", "DE 28/AIREGT")] == [3, 3, 2, 4]
    assert f.cf == 12


def test_allied_options_c_and_e_penalty_is_13() -> None:
    """§14.1: options C (2 CF) and E (11 CF) give CF_penalty 13, deducted as ceil(1.5 x 13) = 20."""
    c, e = SCHED.options["C"].cf, SCHED.options["E"].cf
    assert (c, e) == (2, 11)
    assert math.ceil(1.5 * (c + e)) == 20


def test_figure_8_cfs() -> None:
    """§12.3 Figure 8: AF = 2(1/2 4 + 1/2 3) = 7 with MAS across escarpments; DF = 2 + 2 = 4; ΔCF 3;
    without MAS AF = 3 1/2 and ΔCF = -1/2."""
    attackers = [oob.unit("DE 104/IREGT").cf, oob.unit("DE 5/1/ABN").cf]
    assert sorted(attackers) == [3, 4]
    af = sum(2 * (cf / 2) for cf in attackers)
    df = oob.unit("BR SQ/2/IBDE").cf + oob.unit("AU 20/IBDE").cf
    assert (af, df, af - df) == (7, 4, 3)
    assert sum(cf / 2 for cf in attackers) - df == -0.5


def test_figure_7_overrun_cfs() -> None:
    """§11.4 Figure 7: the two Italian units against BR SG/2/IBDE give ΔCF 3, whose least CRT loss (2)
    eliminates BR SG/2/IBDE."""
    af = oob.unit("IT BERS/8/AIREGT").cf + oob.unit("IT 132/AREGT").cf
    df = oob.unit("BR SG/2/IBDE").cf
    assert af - df == 3
    assert df <= 2


def test_figure_10_cfs() -> None:
    """§12.4.4 Figure 10: the Allied survivor has 2 CF (non-German, x2 = 4); the German attackers 3 + 4 = 7."""
    assert oob.unit("AU 20/IBDE").cf == 2 and oob.unit("AU 20/IBDE").nation != "DE"
    assert oob.unit("DE 104/IREGT").cf + oob.unit("DE 5/1/ABN").cf == 7


def test_rp_example_turn_8() -> None:
    """§13.3.1: the Allies receive 2 Infantry RP in turn 8."""
    assert SCHED.turn(8).rp["allied_infantry"] == 2
    for t in SCHED.turns:
        assert all(0 <= v <= 10 for v in t.rp.values())


def test_reinforcement_caps() -> None:
    """§13.4: infantry up to 3 CF from turn 10; armour up to 4 CF from turn 7, 5 CF from turn 13."""
    assert [SCHED.cap(t, "infantry") for t in (1, 9, 10, 20)] == [None, None, 3, 3]
    assert [SCHED.cap(t, "armour") for t in (6, 7, 12, 13, 20)] == [None, 4, 4, 5, 5]
    for u in oob.units():
        if u.faction == "allied" and u.kind in ("infantry", "armour"):
            cap = 3 if u.kind == "infantry" else 5
            assert u.counters == tuple(range(u.cf, cap + 1))


def test_units_have_player_aid_nations_kinds_and_echelons() -> None:
    """Player aid Nations / Table 2, Table 3 categories, §2.3.1 echelons."""
    for u in oob.units():
        assert u.nation in oob.NATIONS and oob.NATIONS[u.nation] == u.faction
        assert u.kind in ("infantry", "armour", "transport", "installation")
        if u.kind in ("infantry", "armour"):
            assert u.echelon in ("BN", "REGT", "BDE")
            assert u.cf >= 1 and u.mf >= 10
            assert oob.parse_id(u.id)[0] == u.nation
            assert u.back_cf == u.cf / 2
            assert u.note


def test_arrivals_and_options() -> None:
    """§2.3.1: a unit has a set-up hex, an arrival turn (1..20) or an option letter; §13.5: A-E Allied,
    F-L (no I) and M Axis."""
    for u in oob.units():
        if u.kind not in ("infantry", "armour"):
            continue
        assert sum(x is not None for x in (u.setup, u.arrival, u.option)) == 1, u.id
        if u.arrival is not None:
            assert 1 <= u.arrival <= 20
        if u.option is not None:
            assert u.option in ("ABCDE" if u.faction == "allied" else "FGHJKLM")
    assert sorted(SCHED.options) == list("ABCDEFGHJKLM")


def test_option_turns_follow_13_5() -> None:
    """§13.5.1: A turn 8, B 13 or 15, C 15, D 14 on, E 17, B/C/D exclusive; §13.5.2: F-L from 16, two a turn."""
    o = SCHED.options
    assert o["A"].turns == (8,) and o["B"].turns == (13, 15) and o["C"].turns == (15,)
    assert o["D"].turns == tuple(range(14, 21)) and o["E"].turns == (17,)
    assert set(o["B"].exclusive) == {"C", "D"} and set(o["C"].exclusive) == {"B", "D"}
    assert o["D"].withdraw == {"nation": "IN", "kind": "infantry", "count": 2, "from": "Alexandria"}
    for letter in "FGHJKL":
        assert o[letter].turns == tuple(range(16, 21))
    assert (SCHED.axis_options_first_turn, SCHED.axis_options_per_turn) == (16, 2)
    assert o["M"].automatic and o["B"].units == ("PL 1/IBDE",)


def test_table_11_malta() -> None:
    """Table 11: no attempt: F or G and one of H, J, K, L; success: F, G, H, J and K; failure: one of F, G, K;
    M on time / turn 18 / never; no Axis installation on turns 15 and 16 after a failure."""
    assert SCHED.malta_turn == 15
    assert SCHED.available_options("none") == (("F", "G"), ("H", "J", "K", "L"))
    assert {g for (g,) in SCHED.available_options("success")} == set("FGHJK")
    assert SCHED.available_options("failure") == (("F", "G", "K"),)
    assert dict(SCHED.m_arrival) == {"none": 16, "success": 18, "failure": None}
    assert SCHED.no_installation_after_failure == (15, 16)


def test_counter_totals_match_section_2() -> None:
    """§2: 162 Allied and 71 Axis counters; §2.3.2: 3 transports a faction."""
    assert oob.counter_totals() == {"allied": 162, "axis": 71}
    for faction in ("axis", "allied"):
        assert sum(1 for u in oob.units() if u.faction == faction and u.kind == "transport") == 3
        assert len(SCHED.transports[faction]) == 3


def test_withdrawals_and_reinstatements() -> None:
    for t in SCHED.turns:
        for w in t.withdrawals:
            assert w.kind in ("infantry", "armour") and w.count >= 1 and w.note
        for r in t.reinstatements:
            assert r.kind in ("infantry", "armour") and r.count >= 1 and r.note
    assert sum(w.count for t in SCHED.turns for w in t.withdrawals) == 10
    assert SCHED.turn(20).month == "Nov 1942" and SCHED.turn(1).month == "Apr 1941"
    with pytest.raises(ValueError):
        SCHED.turn(21)


def _regular_cost(m, a: str, b: str) -> int | None:  # type: ignore[no-untyped-def]
    s = m.side(a, b)
    if m.terrain(b) == "sea" or s.prohibited:
        return None
    if s.road:
        return 1
    if s.track:
        return 2
    return {"clear": 3, "rough": 10, "swamp": 10}[m.terrain(b)] + (10 if s.escarpment else 0)


def _within(m, start: str, targets: set[str], budget: int) -> bool:  # type: ignore[no-untyped-def]
    best = {start: 0}
    todo = [(0, start)]
    while todo:
        d, h = heapq.heappop(todo)
        if h in targets and h != start:
            return True
        if d > best[h]:
            continue
        for n in m.neighbours(h):
            c = _regular_cost(m, h, n)
            if c is not None and d + c <= budget and d + c < best.get(n, 1 << 30):
                best[n] = d + c
                heapq.heappush(todo, (d + c, n))
    return start in targets


def test_set_up_places_exist_and_the_allies_start_in_supply() -> None:
    """§6 set-up hexes and bases exist; §8.2-8.3.2: every Allied at-start unit can trace 20 MF to an
    installation (Tobruk and the Alexandria base count as one) linked by 20 MF segments to a terminal
    (ignoring §11.1.2's +2 at unconnected road/track changes, which no set-up path crosses)."""
    m = load_map()
    bases = {"El Agheila": m.bases["axis"], "Alexandria": m.bases["allied"]}

    def hexes(place: str) -> frozenset[str]:
        return bases[place] if place in bases else frozenset({place})

    for u in oob.units():
        if u.setup is not None:
            for h in hexes(u.setup):
                assert m.terrain(h) != "sea", u.id
    for faction in ("axis", "allied"):
        for place in (*SCHED.transports[faction], *SCHED.installations[faction]):
            assert all(m.terrain(h) != "sea" for h in hexes(place))
    terminals = set(m.bases["allied"]) | {"1925"}
    depots = set(SCHED.installations["allied"]) | terminals
    linked = set(terminals)
    for _ in range(len(depots)):
        for d in depots - linked:
            if _within(m, d, linked, 20):
                linked.add(d)
    assert linked == depots
    for u in oob.units():
        if u.faction == "allied" and u.setup is not None:
            start = sorted(hexes(u.setup))[0]
            assert start in linked or _within(m, start, linked, 20), u.id
    assert set(SCHED.installations["axis"]) <= m.bases["axis"]


def test_every_data_set_has_a_note() -> None:
    for what in ("turns", "rp", "caps", "logistics", "malta", "withdrawals", "reinstatements", "movement",
                 "reinforcement_caps", "counters", "aliases", "option:A", "option:M"):
        assert SCHED.authored(what)


def test_a_bad_unit_entry_is_named() -> None:
    import tomllib
    from importlib.resources import files
    raw = tomllib.loads(files("rules.paa.data").joinpath("units.toml").read_text())
    raw["group"][0]["units"][0] = {"id": "XX 5/1/ABN", "cf": 3, "setup": "El Agheila"}
    with pytest.raises(oob.OobDataError, match="XX 5/1/ABN: nation XX is not in Table 2"):
        oob.build_units(raw)
    raw["group"][0]["units"][0] = {"id": "DE 5/1/ABN", "cf": 3, "arrival": 21}
    with pytest.raises(oob.OobDataError, match="arrival turn 21 outside 1..20"):
        oob.build_units(raw)
    raw["group"][0]["units"][0] = {"id": "DE 5/1/QBN", "cf": 3, "arrival": 2}
    with pytest.raises(oob.OobDataError, match="no type code"):
        oob.build_units(raw)
