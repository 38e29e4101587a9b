"""PAA rules modules against the authored counters and Orders of Battle
(rules/paa/oob.py): the worked examples with the OOB's own numbers, the set-up
in supply by the §8 rules, and the OOB's schedule agreeing with the rules'
Tables (§13.4 caps, Table 11, §13.2.1)."""

from __future__ import annotations

import itertools

import pytest

from rules.paa import oob
from rules.paa.combat import Attacker, cf_differential
from rules.paa.mapdata import load_map
from rules.paa.reinforcements import (
    axis_option_problems,
    installation_arrives,
    m_arrival,
    option_penalty,
    penalty_deduction,
    reinforce_cap,
)
from rules.paa.supply import supply_states
from rules.paa.tables import MaltaStatus
from rules.paa.units import Faction, Piece, kind_of

M = load_map()
S = oob.schedule()
START_CONTROL: dict[str, Faction] = {"0702": "axis", "1351": "allied", "1925": "allied"}


def piece(uid: str, hex_id: str | None = None) -> Piece:
    u = oob.unit(uid)
    where = hex_id or u.setup or ""
    where = {"El Agheila": "0702", "Alexandria": "1351"}.get(where, where)
    return Piece(u.id, u.faction, u.nation, kind_of(u.kind), u.cf, u.mf, where)


def test_every_counter_kind_is_a_rules_kind_table_3() -> None:
    assert {kind_of(u.kind) for u in oob.units()} == {"infantry", "armoured", "transport", "installation"}


def test_s13_5_3_option_f_penalty_12_from_the_oob() -> None:
    f = S.options["F"]
    assert option_penalty(oob.unit(u).cf for u in f.units) == 12 == f.cf


def test_s14_1_options_c_and_e_13_from_the_oob() -> None:
    total = sum(option_penalty(oob.unit(u).cf for u in S.options[x].units) for x in "CE")
    assert total == 13 and penalty_deduction(total) == 20


def test_figures_7_and_8_with_the_oob_cfs() -> None:
    it = [Attacker(piece("IT BERS/8/AIREGT", "0906"), "AS"), Attacker(piece("IT 132/AREGT", "0906"), "AS")]
    assert cf_differential(M, it, [piece("BR SG/2/IBDE", "1006")]) == 3
    de = [Attacker(piece("DE 104/IREGT", "1508"), "MAS"), Attacker(piece("DE 5/1/ABN", "1508"), "MAS")]
    assert cf_differential(M, de, [piece("BR SG/2/IBDE", "1509"), piece("AU 20/IBDE", "1608")]) == 3


def test_caps_of_the_oob_are_the_rules_s13_4() -> None:
    for t in S.turns:
        assert t.caps["infantry"] == reinforce_cap("infantry", t.turn), t.turn
        assert t.caps["armour"] == reinforce_cap("armoured", t.turn), t.turn


def _oob_allows(status: str, chosen: tuple[str, ...]) -> bool:
    groups = S.malta_groups[status]
    if any(not any(x in g for g in groups) for x in chosen):
        return False
    return all(sum(x in g for x in chosen) <= 1 for g in groups)


def _rules_allow(status: MaltaStatus, chosen: tuple[str, ...]) -> bool:
    done: list[str] = []
    for turn, x in enumerate(chosen, start=16):
        if axis_option_problems(x, turn, status, done):
            return False
        done.append(x)
    return True


@pytest.mark.parametrize("status", ["none", "success", "failure"])
def test_table_11_of_the_oob_is_the_rules_s13_5_2(status: MaltaStatus) -> None:
    for k in range(0, 6):
        for chosen in itertools.combinations("FGHJKL", k):
            assert _oob_allows(status, chosen) == _rules_allow(status, chosen), (status, chosen)
    scheduled = S.m_arrival["none"]
    assert scheduled is not None
    assert m_arrival(status, scheduled) == S.m_arrival[status]


def test_installations_after_a_failed_invasion_s13_2_1() -> None:
    for turn in range(1, 21):
        cut = turn in S.no_installation_after_failure
        assert installation_arrives("axis", turn, "failure", 5) is not cut


def test_the_set_up_is_in_supply_by_the_rules_s6_s8() -> None:
    """§6, §8.4.1: every unit set up on the map traces supply (the Allies may never be OOS voluntarily)."""
    pieces = [piece(u.id) for u in oob.units() if u.setup and u.kind in ("infantry", "armour")]
    for faction, hexes in S.installations.items():
        f: Faction = "axis" if faction == "axis" else "allied"
        pieces += [Piece(f"{faction} depot {i}", f, "DE" if f == "axis" else "BR", "installation", 0, 0, h)
                   for i, h in enumerate(hexes)]
    for faction in ("allied", "axis"):
        fac: Faction = "axis" if faction == "axis" else "allied"
        states = supply_states(M, pieces, fac, START_CONTROL)
        assert states and all(s.state != "OOS" for s in states.values()), {k: v.state for k, v in states.items()}
