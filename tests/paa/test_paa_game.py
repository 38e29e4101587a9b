"""Panzerarmee Afrika played through its contract class (rules.paa.RULES):
the Table 4 sequence, each phase's orders refused with their § and
accepted, dice asked from the engine and resolved, the counter-attack,
Malta, sudden death, and the orders' text round trip."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

from pbem import codec
from pbem.rulesapi import DICE
from rules.paa import RULES
from rules.paa import game as g
from rules.paa import orders as o
from rules.paa.mapdata import load_map
from rules.paa.movement import routes
from rules.paa.stacking import stacking_problems
from rules.paa.units import Piece


class Ctx:
    def __init__(self, role: str) -> None:
        self.role = self.author = role
        self.seq = 0

    def value(self, label: str) -> bytes | None:
        return None

    def committed(self, label: str) -> bool:
        return False

    def opened(self, label: str) -> bool:
        return False

    def leaf(self, label: str, key: str) -> bytes | None:
        return None

    def leaves(self, label: str, keys: Iterable[str]) -> list[bytes | None]:
        return [None for _ in keys]

    def card(self, rnd: str, pos: int) -> str | None:
        return None


def start(options: tuple[str, ...] = ()) -> g.State:
    return RULES.initial_state("campaign", options)


def do(s: g.State, text: str, role: str | None = None) -> g.State:
    d = RULES.pending(s)
    assert d is not None and d.kind != DICE, d
    who = role or d.role
    a = RULES.parse_order(s, who, text, None).action  # type: ignore[arg-type]
    problems = RULES.check(s, a, Ctx(who))
    assert not problems, (text, [str(p) for p in problems])
    return RULES.apply(s, a, Ctx(who))


def refused(s: g.State, text: str, role: str) -> list[str]:
    a = RULES.parse_order(s, role, text, None).action  # type: ignore[arg-type]
    return [str(p) for p in RULES.check(s, a, Ctx(role))]


def roll(s: g.State, *values: int) -> g.State:
    d = RULES.pending(s)
    assert d is not None and d.kind == DICE, d
    assert len(d.dice) == len(values), d.purposes
    return RULES.resolve_dice(s, values, Ctx(d.role))


def to_allied_movement(c2_die: int = 3, options: tuple[str, ...] = ()) -> g.State:
    s = do(do(start(options), "setup done"), "setup done")
    return roll(s, c2_die)


def to_axis_movement(c2_die: int = 3, options: tuple[str, ...] = ()) -> g.State:
    s = to_allied_movement(c2_die, options)
    for text in ("end movement", "end declarations", "end turn"):
        s = do(s, text)
    return s


def put(s: g.State, uid: str, hex_id: str) -> g.State:
    return replace(s, pieces=tuple(replace(p, hex=hex_id) if p.id == uid else p for p in s.pieces))


def test_s6_set_up_keeps_stacking_and_allies_decide_first_r30() -> None:
    s = start()
    assert not stacking_problems(s.pieces)
    d = RULES.pending(s)
    assert d is not None and d.role == "allied" and d.kind == "setup"
    assert g.piece_of(s, "DE 5/1/ABN") is not None and g.piece_of(s, "DE 5/1/ABN").hex in g._base_hexes("axis")  # type: ignore[union-attr]
    assert s.control == {"0702": "axis", "1925": "allied", "1351": "allied", "1730": "allied"}
    assert "§6" in refused(s, "place BR 7/ABDE 0702", "allied")[0]


def test_table_4_allied_turn_opens_with_supply_and_a_c2_die_s10_1() -> None:
    s = do(do(start(), "setup done"), "setup done")
    assert (s.turn, s.faction, s.phase) == (1, "allied", "c2")
    d = RULES.pending(s)
    assert d is not None and d.kind == DICE and d.dice == (6,) and d.role == "allied"
    assert "§10.1" in d.purposes[0]
    assert all(not p.oos for p in s.pieces if p.faction == "allied")  # §8: the set-up is in supply


def test_c2_per_hex_rolls_one_die_per_allied_hex_s10_2() -> None:
    s = do(do(start(("c2=per-hex",)), "setup done"), "setup done")
    d = RULES.pending(s)
    hexes = sorted({p.hex for p in s.pieces if p.faction == "allied"})
    assert d is not None and len(d.dice) == len(hexes)
    # Table 7 third column: die 6 puts only hexes ending in 6 out of C².
    s = roll(s, *([6] * len(hexes)))
    assert {p.hex for p in s.pieces if p.ooc2} == {h for h in hexes if h.endswith("6")}


def test_out_of_c2_units_may_not_move_s10_3() -> None:
    s = to_allied_movement(6)  # Table 7 second column for 6: last digits 6, 0, 2
    p = g.piece_of(s, "BR SG/2/IBDE")
    assert p is not None and p.hex == "1006" and p.ooc2
    assert any("§10.3" in m for m in refused(s, "move BR SG/2/IBDE 1107", "allied"))
    s = do(s, "end movement")
    assert any("§12" in m for m in refused(s, "attack BR SG/2/IBDE on 0906", "allied"))


def test_movement_costs_and_mf_s11_1() -> None:
    s = to_axis_movement()
    s = do(s, "move DE 5/1/ABN 0907")
    assert s.mf_used["DE 5/1/ABN"] == 11
    assert any("§11.1" in m for m in refused(s, "move DE 5/1/ABN 1310", "axis"))
    assert "§7.1" in refused(s, "move BR 3/ABDE 1207", "allied")[0]


def test_entering_enemy_zoc_stops_the_unit_s11_1_4() -> None:
    s = to_axis_movement()
    s = do(s, "move DE 5/2/ABN 0906")  # next to BR SG/2/IBDE in 1006: enemy ZOC
    assert "DE 5/2/ABN" in s.stopped
    assert any("§11.1.4" in m for m in refused(s, "move DE 5/2/ABN 0805", "axis"))


def test_stacking_is_checked_at_the_end_of_movement_s4() -> None:
    s = to_axis_movement()
    for u in ("IT 132/AREGT", "IT BERS/8/AIREGT", "DE 5/2/ABN", "DE 5/1/ABN"):
        s = do(s, f"move {u} 0805")
    assert any("§4" in m for m in refused(s, "end movement", "axis"))
    s = do(s, "move DE 5/1/ABN 0804")
    s = do(s, "end movement")
    assert s.phase == "attack_supply"


def test_allies_may_not_attack_on_turn_1_s12() -> None:
    s = to_allied_movement()
    s = do(put(s, "BR 3/ABDE", "0804"), "end movement")
    assert any("§12" in m and "turn 1" in m for m in refused(s, "attack BR 3/ABDE on 0703", "allied"))


def _axis_attack(crt_die: int, counter_die: int) -> g.State:
    s = to_axis_movement()
    for u, h in (("IT 132/AREGT", "0906"), ("IT BERS/8/AIREGT", "0906"), ("DE 5/2/ABN", "0906"), ("DE 5/1/ABN", "0907")):
        s = do(s, f"move {u} {h}")
    s = do(s, "end movement")
    s = do(s, "attack DE 5/1/ABN, DE 5/2/ABN, IT 132/AREGT, IT BERS/8/AIREGT on 1006")
    s = do(s, "end declarations")
    assert s.phase == "resolution"
    s = do(s, "resolve 1")
    d = RULES.pending(s)
    assert d is not None and d.kind == DICE and d.role == "allied" and "§12.4.3" in d.purposes[0]
    s = roll(s, crt_die)
    if RULES.pending(s).kind == DICE:  # type: ignore[union-attr]
        s = roll(s, counter_die)
    return s


def test_combat_crt_loss_counter_attack_and_advance_s12_4() -> None:
    s = _axis_attack(crt_die=1, counter_die=1)
    fight = s.fights[0]
    # §12.3: every attacker in AS (an unmoved Axis installation within 8 MF): AF 11, DF 2, ΔCF 9.
    assert fight.supply == ("AS", "AS", "AS", "AS") and fight.delta == "9" and fight.column == 9
    assert fight.loss == 10  # Table 9, column 9, die 1
    assert "BR SG/2/IBDE" in s.cadre and g.piece_of(s, "BR SG/2/IBDE") is None
    # §12.4.4: no survivors, AF 0, column 0, die 1: the attackers must lose 2 CF; the only 2-CF unit goes.
    assert fight.counter_column == 0 and fight.counter_loss == 2
    assert "IT BERS/8/AIREGT" in s.cadre
    assert s.stage == "advance"
    s = do(s, "advance DE 5/1/ABN 1006")
    assert g.piece_of(s, "DE 5/1/ABN").hex == "1006"  # type: ignore[union-attr]
    s = do(s, "end advance")
    assert s.fights[0].status == "done"
    s = do(s, "end combat")
    assert s.phase == "reinforcement"


def test_the_loser_chooses_when_more_than_one_set_meets_the_loss_s12_4_5() -> None:
    s = _axis_attack(crt_die=1, counter_die=2)  # counter column 0, die 2: no loss
    assert s.fights[0].counter_loss == 0 and not s.fights[0].counter_lost
    # A forced choice: four attackers 3, 3, 3, 2 and a loss of 3: any 3-CF unit.
    base = _axis_attack(crt_die=1, counter_die=1)
    st = replace(base, stage="counter-losses", loss_role="axis", loss_due=3,
                 loss_from=("DE 5/1/ABN", "DE 5/2/ABN", "IT 132/AREGT"), fights=base.fights, current=0)
    assert {frozenset(c) for c in g.loss_choices(st)} == {frozenset({u}) for u in st.loss_from}
    assert any("§12.4.5" in m for m in refused(st, "lose DE 5/1/ABN, DE 5/2/ABN", "axis"))


def test_a_voluntary_combat_may_be_cancelled_s12_4() -> None:
    s = to_axis_movement()
    s = do(s, "move DE 5/1/ABN 0907")
    s = do(s, "end movement")
    s = do(s, "attack DE 5/1/ABN on 1006")
    s = do(s, "end declarations")
    s = do(s, "cancel 1")
    assert s.fights[0].status == "cancelled"
    assert any("§12.4" in m for m in refused(s, "resolve 1", "axis"))


def test_overrun_needs_the_guaranteed_elimination_s11_4() -> None:
    s = to_axis_movement()
    s = do(s, "move DE 5/2/ABN 0906")
    problems = refused(s, "overrun DE 5/2/ABN 1006", "axis")
    # DE 5/2/ABN alone: AS 3 - DF 2 = ΔCF 1, column 1 guarantees nothing (Table 9).
    assert any("§11.4" in m and "guarantees" in m for m in problems)


def test_malta_is_declared_in_the_axis_supply_phase_of_turn_15_s9() -> None:
    s = to_axis_movement()
    s = replace(s, turn=14, faction="allied", phase="reinforcement", stage="")
    s = do(s, "end turn")
    while s.faction == "allied" or s.phase != "supply":
        d = RULES.pending(s)
        s = roll(s, 3) if d.kind == DICE else do(s, o.legal_orders(s, d.role)[-1] if d.kind != "movement"  # type: ignore[union-attr]
                                                 else "end movement")
        if s.faction == "axis" and s.stage == "malta":
            break
    assert s.turn == 15 and s.stage == "malta"
    s = do(s, "malta invade")
    d = RULES.pending(s)
    assert d is not None and d.kind == DICE and "Table 6" in d.purposes[0]
    s = roll(s, 2)
    assert s.malta == "success" and s.phase == "movement"


def test_sudden_death_when_the_axis_holds_alexandria_s14() -> None:
    s = to_axis_movement()
    s = replace(s, control={**s.control, "1351": "axis"}, phase="reinforcement")
    s = do(s, "end turn")
    out = RULES.outcome(s)
    assert out is not None and out.winner == "axis" and "§14 sudden death" in out.summary


def test_d33_figure_6_destination_costs_6_by_the_cheapest_way() -> None:
    way = routes(load_map(), "1826", mover="regular", mf=20)["1723"]
    assert way == (("1826", "1726", "1725", "1724", "1723"), 6)


def _every_kind() -> list[Any]:
    return [g.Place("DE 5/1/ABN", "0601"), g.SetupDone(), g.Move("BR 7/ABDE", "1250"),
            g.Overrun(("IT 132/AREGT", "IT BERS/8/AIREGT"), "1006"), g.Haul("BR LORRY/1", "BR DEPOT/1", "2119"),
            g.Rail("BR DEPOT/3", "1353"), g.Ship("AU 24/IBDE", "1351"), g.Dismount(("DE 5/1/ABN", "DE 5/2/ABN"), "0805"),
            g.Remount(("DE 5/1/ABN",), "DE LORRY/2"), g.Exercise("D", ("IN 5/IBDE", "IN 11/IBDE")), g.EndMovement(), g.Attack(("DE 5/1/ABN", "DE 5/2/ABN"), ("1509", "1608")),
            g.Sacrifice("DE DEPOT/1"), g.Scrap("DE DEPOT/2"), g.EndDeclarations(), g.Resolve(2), g.Cancel(1),
            g.Lose(("AU 20/IBDE", "BR SG/2/IBDE")), g.Lose(()), g.Advance("DE 5/1/ABN", "1006"), g.EndAdvance(),
            g.React("IT 132/AREGT", "0906"), g.EndReaction(),
            g.EndCombat(), g.Malta(1), g.Malta(0), g.Rebuild("BR SG/2/IBDE"), g.Reinforce("BR 7/ABDE", 4),
            g.Withdraw("AU 20/IBDE"), g.Reinstate("AU 20/IBDE"), g.Exercise("A"), g.EndTurn()]


@pytest.mark.parametrize("action", _every_kind(), ids=lambda a: type(a).__name__)
def test_every_order_formats_and_parses_back(action: Any) -> None:
    text = o.format_action(action)
    assert o.parse_action(text) == action
    assert o.parse_action(text.lower()) == action
    wire = codec.canonical(action)
    assert msgspec.json.decode(wire, type=g.Action) == action


def test_unreadable_orders_name_the_syntax() -> None:
    with pytest.raises(ValueError, match="unknown order"):
        o.parse_action("fly DE 5/1/ABN 1351")
    with pytest.raises(ValueError, match="§2.1"):
        o.parse_action("move DE 5/1/ABN Tobruk")
    with pytest.raises(ValueError, match="§2.3"):
        o.parse_action("move XX 1/ABN 1925")


def test_explain_supply_and_move_name_their_rules() -> None:
    s = to_axis_movement()
    lines = RULES.explain(s, "axis", "supply", "BR SG/2/IBDE", Ctx("axis"))
    assert any("§8" in x for x in lines)
    lines = RULES.explain(s, "axis", "move", "DE 5/1/ABN 1351", Ctx("axis"))
    assert any("Not allowed" in x and "§11.1" in x for x in lines)
    with pytest.raises(ValueError, match="topic"):
        RULES.explain(s, "axis", "weather", "x", Ctx("axis"))


def test_the_map_shows_every_counter_face_up() -> None:
    s = to_allied_movement(6)
    pic = RULES.map_picture(s)
    assert pic is not None and len(pic.counters) == len(s.pieces)
    flipped = {c.id for c in pic.counters if c.flipped}
    assert "SG/2/IBDE" in flipped  # OOC² in 1006 (§10.3), shown on its back
    assert any(c.figures == "3-20" for c in pic.counters)


def test_the_order_tree_holds_exactly_the_legal_orders_in_movement() -> None:
    s = to_axis_movement()
    tree = o.order_tree(s, "axis")
    leaves = [x for grp in tree for x in grp.leaves()]
    assert "end movement" in leaves and "move DE 5/1/ABN 0907" in leaves
    for text in leaves[:: max(1, len(leaves) // 25)]:
        assert not refused(s, text, "axis"), text


def test_a_piece_is_open_information() -> None:
    s = start()
    assert RULES.view(s, "axis") == RULES.view(s, "allied") == RULES.view(s, None) == s
    assert isinstance(s.pieces[0], Piece)


def test_the_zoc_overlay_shades_both_factions_zones_s3() -> None:
    s = to_axis_movement()
    pic = RULES.map_picture(s, ("zoc",))
    assert pic is not None
    kinds = {sh.kind for sh in pic.shades}
    assert kinds == {"zoc_axis", "zoc_allied"}
    assert any(sh.hex == "0906" and sh.kind == "zoc_allied" for sh in pic.shades)  # next to BR SG/2/IBDE in 1006
    with pytest.raises(ValueError, match="overlay"):
        RULES.map_picture(s, ("supply",))


def _allied_movement_with(moves: dict[str, str]) -> g.State:
    """The Allied turn-1 movement phase with some units standing elsewhere since it began."""
    s = do(do(start(), "setup done"), "setup done")
    for uid, h in moves.items():
        s = put(s, uid, h)
    return roll(s, 4)  # Table 7: hexes ending 4, 6, 0 out of C²


def test_sea_transport_between_friendly_ports_s11_2() -> None:
    s = _allied_movement_with({"BR 22GDS/IBDE": "1925", "IN 3/MIBDE": "1925"})
    s = do(s, "ship AU 24/IBDE 1351")
    assert g.piece_of(s, "AU 24/IBDE").hex == "1351"  # type: ignore[union-attr]
    assert any("§11.1.4" in m or "§11.1" in m for m in refused(s, "move AU 24/IBDE 1350", "allied"))
    s = do(s, "ship BR 22GDS/IBDE 1351")
    assert any("§11.2" in m and "at most 2" in m for m in refused(s, "ship IN 3/MIBDE 1351", "allied"))
    assert any("§11.2" in m for m in refused(s, "ship BR 7/ABDE 1925", "allied"))  # 1250 is no port
    s = do(s, "move BR KDG/ARECBN 1206")
    assert any("§11.2" in m for m in refused(s, "ship BR KDG/ARECBN 1925", "allied"))


def test_dismount_frees_a_lorry_and_remount_returns_it_s13_6() -> None:
    from rules.paa.dismount import on_line

    s = to_axis_movement()
    b = load_map()
    hexes = [h for h in ("0805", "0804", "0806", "0704", "0705") if on_line(b, h)]
    h = hexes[0]
    lorry_hex = next(n for n in b.neighbours(h) if on_line(b, n))
    s = replace(s, pieces=tuple(replace(p, hex=h, cf=5) if p.id in ("DE 5/1/ABN", "DE 5/2/ABN") else p for p in s.pieces))
    assert any("§13.6" in m and "OOB" in m for m in refused(s, f"dismount DE 5/1/ABN, DE 5/2/ABN {lorry_hex}", "axis"))
    s = replace(s, pieces=tuple(p for p in s.pieces if p.id != "DE LORRY/3"))  # back on the OOB
    assert any("§13.6" in m for m in refused(s, f"dismount DE 5/1/ABN {lorry_hex}", "axis"))  # 5 CF < 10
    s = do(s, f"dismount DE 5/1/ABN, DE 5/2/ABN {lorry_hex}")
    p = g.piece_of(s, "DE 5/1/ABN")
    assert p is not None and p.dismounted and p.oos
    freed = [q for q in s.pieces if q.kind == "transport" and q.hex == lorry_hex]
    assert freed
    assert any("§11" in m for m in refused(s, "move DE 5/1/ABN 0906", "axis"))
    s = do(s, "end movement")
    s = do(s, "end declarations")
    s = do(s, f"remount DE 5/1/ABN, DE 5/2/ABN on {freed[0].id}")
    p = g.piece_of(s, "DE 5/1/ABN")
    assert p is not None and not p.dismounted and g.piece_of(s, freed[0].id) is None


def test_option_d_names_two_indian_brigades_of_the_base_s13_5_1() -> None:
    s = to_axis_movement()
    base = g._base_hexes("allied")
    s = replace(s, turn=14, faction="allied", phase="reinforcement", stage="")
    s = put(put(s, "IN 11/IBDE", base[0]), "IN 3/MIBDE", base[1])
    indian = sorted(p.id for p in s.pieces if p.nation == "IN" and p.kind == "infantry" and p.hex in base)
    assert len(indian) >= 2, indian
    assert any("§13.5.1" in m for m in refused(s, "option D", "allied"))
    s = do(s, f"option D {indian[0]}, {indian[1]}")
    assert set(indian[:2]) <= set(s.withdrawn) and "D" in s.options_taken
    assert s.penalty["allied"] == oob_cf("D")


def oob_cf(letter: str) -> int:
    from rules.paa import oob

    return oob.schedule().options[letter].cf


def test_a_crt_roll_is_told_as_a_combat_table_s12_4() -> None:
    from pbem.rulesapi import Step

    s = to_axis_movement()
    for u, h in (("IT 132/AREGT", "0906"), ("IT BERS/8/AIREGT", "0906"), ("DE 5/2/ABN", "0906"), ("DE 5/1/ABN", "0907")):
        s = do(s, f"move {u} {h}")
    s = do(do(s, "end movement"), "attack DE 5/1/ABN, DE 5/2/ABN, IT 132/AREGT, IT BERS/8/AIREGT on 1006")
    before = do(do(s, "end declarations"), "resolve 1")
    after = roll(before, 4)
    said = RULES.happenings(before, after, Step("roll", values=(4,)), None)
    table = next(h for h in said if h.combat is not None)
    assert table.rule == "§12.4.3" and table.combat is not None
    assert table.combat.odds == "ΔCF 9 (column 9)" and table.combat.dice[0].value == 4
    assert table.combat.losses == ("BR SG/2/IBDE",) and "8 CF" in table.combat.result
    assert RULES.describe_roll(before, after, (4,))[0].startswith("§12.4.3 attack on 1006: ΔCF 9, die 4")


def test_moving_an_allied_installation_may_not_cut_allied_units_off_s8_4_1() -> None:
    s = to_allied_movement(1)
    # BR DEPOT/1 at Benghazi (1906) links the units of western Cyrenaica to the network: carried to
    # Derna (2418) it leaves BR SG/2/IBDE (1006) and others beyond 20 MF of any linked installation.
    problems = refused(s, "haul BR LORRY/1, BR DEPOT/1 2418", "allied")
    assert problems and problems[0].startswith("§8.4.1") and "BR SG/2/IBDE" in problems[0]
    assert "haul BR LORRY/1, BR DEPOT/1 2418" not in o._hauls(s, "allied")


def test_a_unit_that_advanced_into_fort_zoc_must_attack_the_fort_before_leaving_s11_1_5() -> None:
    # §11.1.5: the advance after combat (§12.4.7) into 1924, in Tobruk's (1925) fort ZOC, binds the unit.
    s = _axis_attack(crt_die=1, counter_die=1)
    s = replace(put(s, "DE 5/1/ABN", "1923"), fights=(replace(s.fights[0], hexes=("1924",)),))
    s = do(s, "advance DE 5/1/ABN 1924")
    assert s.fort_bound == {"DE 5/1/ABN": "1925"} and "§11.1.5" in s.news[0]
    # In its next movement phase it may not leave the ZOC; a unit that did not advance there may (§11.1.5).
    m = to_axis_movement()
    m = replace(put(put(m, "DE 5/1/ABN", "1924"), "DE 5/2/ABN", "1924"), fort_bound=s.fort_bound)
    assert any("§11.1.5" in p and "1925" in p for p in refused(m, "move DE 5/1/ABN 1923", "axis"))
    assert not refused(m, "move DE 5/2/ABN 1923", "axis")
    listed = o.legal_orders(m, "axis")
    assert "move DE 5/2/ABN 1923" in listed and not [x for x in listed if x.startswith("move DE 5/1/ABN ")]
    assert any("§11.1.5" in line for line in RULES.explain(m, "axis", "unit", "DE 5/1/ABN", Ctx("axis")))
    # The bond ends when the fort is no longer enemy-occupied.
    empty = replace(m, pieces=tuple(p for p in m.pieces if p.id != "AU 24/IBDE"))
    assert not refused(empty, "move DE 5/1/ABN 1923", "axis")
    # Attacking the fort (forced, §12.1.1) ends the bond.
    m = do(m, "end movement")
    m = do(m, "attack DE 5/1/ABN, DE 5/2/ABN on 1925")
    assert m.fort_bound == {}


def test_italian_infantry_reliability_is_an_option_counting_icf_s15_2() -> None:
    assert start().optional == () and "reliability" in RULES.SPEC.options
    for options, icf in (((), 0), (("reliability",), 1)):
        s = to_axis_movement(options=options)
        s = g._eliminate(s, ["IT 20/IREGT", "IT 132/AREGT"], [], "test")  # only infantry CF counts (§15.2)
        assert s.icf == icf and (g.icf_of(s) is None) == (not options)
    assert "§15.2): ICF 1" in RULES.render_text(s)


def test_at_icf_10_italian_infantry_attacks_only_in_as_or_with_a_supporting_unit_s15_2() -> None:
    s = to_axis_movement(options=("reliability",))
    s = do(do(s, "move IT 20/IREGT 0906"), "end movement")
    no_as = replace(s, pieces=tuple(p for p in s.pieces if p.kind != "installation" or p.faction != "axis"), icf=10)
    assert any("§15.2" in m for m in refused(no_as, "attack IT 20/IREGT on 1006", "axis"))
    assert not refused(replace(no_as, icf=9), "attack IT 20/IREGT on 1006", "axis")
    assert not refused(replace(no_as, optional=()), "attack IT 20/IREGT on 1006", "axis")
    assert not refused(put(no_as, "DE 8/MIBN", "0906"), "attack IT 20/IREGT, DE 8/MIBN on 1006", "axis")
    # In AS it may attack; then no installation may be scrapped that takes the last AS source away (§12.3).
    s = do(replace(s, icf=10), "attack IT 20/IREGT on 1006")
    it = g.piece_of(s, "IT 20/IREGT")
    assert it is not None
    sources = g.unit_supply(g.board(), s.pieces, it, g.network(g.board(), s.pieces, "axis", g.control_of(s))).attack
    assert sources
    for depot in sources[:-1]:
        s = do(s, f"scrap {depot}")
    assert any("§15.2" in m for m in refused(s, f"scrap {sources[-1]}", "axis"))


def test_at_icf_20_lone_italian_infantry_exerts_no_zoc_and_at_25_overruns_cost_5_s15_2() -> None:
    s = put(to_axis_movement(options=("reliability",)), "IT 20/IREGT", "0906")
    assert "1006" in g.ground(replace(s, icf=19), "allied").ezoc
    assert "1006" not in g.ground(replace(s, icf=20), "allied").ezoc
    assert "1006" in g.ground(put(replace(s, icf=20), "DE 8/MIBN", "0906"), "allied").ezoc
    assert "1006" in g.ground(replace(s, icf=20, optional=()), "allied").ezoc
    it = [g.piece_of(s, "IT 20/IREGT")]
    assert g._overrun_mf(replace(s, icf=25), it) == 5 and g._overrun_mf(replace(s, icf=24), it) == 10  # type: ignore[arg-type]
    assert g._overrun_mf(replace(s, icf=25, optional=()), it) == 10  # type: ignore[arg-type]


@functools.cache
def _allied_turn_2(options: tuple[str, ...]) -> g.State:
    s = to_axis_movement(options=options)
    for text in ("end movement", "end declarations", "end turn"):
        s = do(s, text)
    # BR DEPOT/4 next to the front gives the attackers AS (§12.3), so ΔCF is positive.
    return put(put(put(roll(s, 3), "IT 20/IREGT", "0906"), "BR 3/ABDE", "1006"), "BR DEPOT/4", "1107")


def _allied_attack_on_italians(options: tuple[str, ...], icf: int, *, with_su: str = "",
                               extra: tuple[tuple[str, str], ...] = ()) -> g.State:
    """Turn 2, the Allies attack IT 20/IREGT alone in 0906 from 1006 (declared and resolving)."""
    s = _allied_turn_2(options)
    if with_su:
        s = put(s, "DE 8/MIBN", with_su)
    for uid, where in extra:
        s = put(s, uid, where)
    s = do(do(replace(s, icf=icf), "end movement"), "attack BR SG/2/IBDE, BR 3/ABDE on 0906")
    return do(do(s, "end declarations"), "resolve 1")


def test_liable_italian_infantry_rolls_for_surrender_s15_3() -> None:
    # Off unless named: reliability alone asks no surrender die; 'surrender' brings reliability.
    assert "§15.3" not in RULES.pending(_allied_attack_on_italians(("reliability",), 20)).purposes[0]  # type: ignore[union-attr]
    assert start(("surrender",)).optional == ("reliability", "surrender")
    s = _allied_attack_on_italians(("surrender",), 20)
    d = RULES.pending(s)
    assert d is not None and d.kind == DICE and d.role == "axis" and d.purposes == (
        "§15.3 surrender of IT 20/IREGT (ICF 20; 1-3 surrenders)",)
    # 1-3: it surrenders to the Axis Cadre (ICF grows, R-51); no CRT, no counter-attack; the attacker may advance.
    gone = roll(s, 3)
    assert "IT 20/IREGT" in gone.cadre and gone.icf == 21 and gone.stage == "advance"
    assert gone.fights[0].surrendered == ("IT 20/IREGT",) and gone.fights[0].die == 0
    assert "advance BR 3/ABDE 0906" in o.legal_orders(gone, "allied")
    # 4-6: it stays and is attacked as normal (§12.4), the defender answering the CRT die.
    kept = roll(s, 4)
    d = RULES.pending(kept)
    assert d is not None and d.role == "axis" and "§12.4.3" in d.purposes[0] and g.piece_of(kept, "IT 20/IREGT")
    # A supporting unit stacked with it (ICF 20+) or adjacent to it (below 25) spares it the roll (§15.2).
    for icf, su, asked in ((20, "0906", False), (20, "0805", False), (25, "0805", True), (19, "", False)):
        s = _allied_attack_on_italians(("surrender",), icf, with_su=su)
        assert ("§15.3" in RULES.pending(s).purposes[0]) == asked, (icf, su)  # type: ignore[union-attr]


def test_reaction_movement_joins_the_attacked_hex_on_a_roll_s15_1() -> None:
    near = (("DE 5/1/ABN", "0804"), ("IT 19/IREGT", "0805"))
    s = _allied_attack_on_italians(("reaction", "surrender"), 20, extra=near)
    d = RULES.pending(s)
    assert d is not None and d.kind == "reaction" and d.role == "axis"
    listed = o.legal_orders(s, "axis")
    assert "react DE 5/1/ABN 0906" in listed and "end reaction" in listed
    assert not [x for x in listed if "IT 19/IREGT" in x]  # §15.1: Italian infantry may not react
    assert any("Italian infantry may not" in m for m in refused(s, "react IT 19/IREGT 0906", "axis"))
    assert any("§15.1" in m for m in refused(s, "react DE 5/1/ABN 0906", "allied"))
    tried = do(s, "react DE 5/1/ABN 0906")
    d = RULES.pending(tried)
    assert d is not None and d.kind == DICE and d.role == "allied" and "§15.1" in d.purposes[0] and "2-6" in d.purposes[0]
    # A failed roll: it stays and may not try again for this combat.
    failed = roll(tried, 1)
    assert g.piece_of(failed, "DE 5/1/ABN").hex == "0804" and "DE 5/1/ABN" not in failed.reacted  # type: ignore[union-attr]
    if failed.stage == "reaction":
        assert any("already tried" in m for m in refused(failed, "react DE 5/1/ABN 0906", "axis"))
    # A success: it joins the defenders; as a supporting unit it spares IT 20/IREGT the surrender roll (§15.3).
    joined = roll(tried, 2)
    assert g.piece_of(joined, "DE 5/1/ABN").hex == "0906" and joined.reacted == ("DE 5/1/ABN",)  # type: ignore[union-attr]
    if joined.stage == "reaction":
        joined = do(joined, "end reaction")
    d = RULES.pending(joined)
    assert d is not None and d.kind == DICE and "§12.4.3" in d.purposes[0]
    assert "DE 5/1/ABN" in joined.fights[0].defenders
    # Without the option no reaction is offered.
    assert RULES.pending(_allied_attack_on_italians(("surrender",), 20, extra=near)).kind == DICE  # type: ignore[union-attr]


def test_an_installation_waiting_for_room_arrives_once_s13_2_1_r43() -> None:
    """§13.2.1: one supply installation a turn while the OOB holds one; R-43:
    an arrival with no room waits on the OOB. The installation waiting must
    not also be "the next one" of the OOB: self-play (seed 23) once put
    BR DEPOT/8 on the map twice, and the game then had no legal order."""
    from rules.paa import oob

    s = to_allied_movement()
    on_map = {p.id for p in s.pieces}
    depots = [u.id for u in oob.units() if u.faction == "allied" and u.kind == "installation" and u.id not in on_map]
    assert len(depots) >= 2
    waiting = replace(s, waiting=(depots[0],))
    after = g._enter_rr(waiting)  # the R&R phase's arrivals (§13), the one place they are made
    ids = [p.id for p in after.pieces]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert depots[0] in ids and depots[1] in ids  # the waiting one, then the next of the OOB
