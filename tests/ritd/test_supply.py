"""Supply (RB 12.0-12.7, 13.3, 15.1): every rulebook example, laid on the real map.

"RB" = shared/seeds/rommel-in-the-desert.txt; "EX-nn" = the worked examples
of shared/facts/rommel-in-the-desert-rules-digest.md; "S-nn" = the decisions
in rules/ritd/decisions/supply.md.
"""

from __future__ import annotations

import msgspec
import pytest

from rules.ritd.hexmap import HexMap, load_map
from rules.ritd.position import Battle, Block, Position
from rules.ritd.supply import SupplyChoices, is_supplied, isolated_fortresses, supplied_tokens, supply_lines
from rules.ritd.supply_checks import explain_supply, final_supply_check, initial_supply_check
from tests.ritd.rulebook_cases import MECHILI_SUPPLY_LINES

M = load_map()
AT = M.resolve
AXIS_FORTRESSES = {AT("Benghazi"): "axis", AT("Tobruk"): "axis", AT("Bardia"): "axis"}


@pytest.fixture(scope="module")
def m() -> HexMap:
    return M


def unit(token: str, side: str, place: str, **kw: object) -> Block:
    return Block(token, side, AT(place), **kw)  # type: ignore[arg-type]


def chains(m: HexMap, pos: Position, side: str, place: str) -> list[tuple[str, ...]]:
    return [tuple(m.name(h) for h in line.chain) for line in supply_lines(m, pos, side, AT(place))]  # type: ignore[arg-type]


def highway_hex_after(place: str) -> str:
    """The highway hex one step east of ``place`` (towards Alexandria)."""
    path = M.road_path(M.base("axis"), M.base("allied"), {"highway"})
    assert path is not None
    return M.name(path[path.index(AT(place)) + 1])


# ------------------------------------------------ RB 5.3 Withdrawal Example


MECHILI = Position(
    blocks=(unit("recon", "axis", "Mechili"), unit("msus", "axis", "Msus"), unit("charruba", "axis", "Charruba")),
    fortresses=AXIS_FORTRESSES,
)


def test_rb_5_3_withdrawal_example_mechili_has_exactly_8_supply_lines(m: HexMap) -> None:
    assert set(chains(m, MECHILI, "axis", "Mechili")) == set(MECHILI_SUPPLY_LINES)
    assert len(supply_lines(m, MECHILI, "axis", AT("Mechili"))) == 8


def test_rb_5_3_withdrawal_example_lines_1_to_4_never_lead_away_from_base(m: HexMap) -> None:
    base = m.base("axis")

    def never_away(hexes: tuple[str, ...]) -> bool:
        dist = [m.distance(base, h) for h in hexes]
        return all(b <= a for a, b in zip(dist, dist[1:]))

    valid = set()
    for line in supply_lines(m, MECHILI, "axis", AT("Mechili")):
        # The part the Withdrawal example is about: the chain up to the highway.
        upto = line.hexes[: line.hexes.index(line.chain[-1]) + 1]
        if never_away(upto):
            valid.add(tuple(m.name(h) for h in line.chain))
    assert valid == {
        ("Mechili", "Msus", "Agedabia"),
        ("Mechili", "Msus", "Beda Fomm"),
        ("Mechili", "Msus", "Ghemines"),
        ("Mechili", "Charruba", "Er Regima"),
    }


def test_rb_5_3_supply_lines_are_hex_by_hex_and_end_at_the_base(m: HexMap) -> None:
    for line in supply_lines(m, MECHILI, "axis", AT("Mechili")):
        hexes = line.hexes
        assert hexes[0] == AT("Mechili") and hexes[-1] == m.base("axis") == line.source_hex
        assert line.source == "base"
        assert len(set(hexes)) == len(hexes)  # RB 12.4: no loops
        assert all(m.is_adjacent(a, b) and m.is_passable(a, b) for a, b in zip(hexes, hexes[1:]))
        for leg in line.legs:
            if leg.kind in ("track", "trail"):
                assert len(leg.hexes) - 1 <= {"track": 3, "trail": 2}[leg.kind]
                assert m.worst_road(leg.hexes) == leg.kind


# ------------------------------------------------- RB 12.7 Supply Example A


def test_rb_12_7_example_a_chain_around_the_block_at_gazala(m: HexMap) -> None:
    east = highway_hex_after("Bir Harmat")
    cut = Position(blocks=(unit("recon", "allied", "Gazala"), unit("east", "axis", east)), fortresses=AXIS_FORTRESSES)
    assert supplied_tokens(m, cut, "axis") == frozenset()
    restored = Position(
        blocks=cut.blocks + (unit("harmat", "axis", "Bir Harmat"), unit("mechili", "axis", "Mechili")),
        fortresses=AXIS_FORTRESSES,
    )
    assert supplied_tokens(m, restored, "axis") == {"east", "harmat", "mechili"}
    harmat = supply_lines(m, restored, "axis", AT("Bir Harmat"))
    assert [tuple(m.name(h) for h in line.chain) for line in harmat] == [("Bir Harmat", "Mechili", "Derna")]
    assert [leg.kind for leg in harmat[0].legs[:2]] == ["track", "trail"]
    assert harmat[0].legs[0].hexes[-1] == AT("Mechili") and len(harmat[0].legs[0].hexes) - 1 == 3
    # The east unit's line uses the highway re-established from Bir Harmat.
    line = supply_lines(m, restored, "axis", AT(east))[0]
    assert AT("Gazala") not in line.hexes and AT("Mechili") in line.hexes
    # Without the Mechili unit the chain breaks: no projection from Bir Harmat.
    alone = Position(blocks=cut.blocks + (unit("harmat", "axis", "Bir Harmat"),), fortresses=AXIS_FORTRESSES)
    assert supplied_tokens(m, alone, "axis") == frozenset()


# ------------------------------------------------- RB 12.7 Supply Example B


BENGHAZI_SIEGE = Battle(AT("Benghazi"), "axis", {AT("Ghemines"): "axis"})
EXAMPLE_B = (
    unit("garrison", "allied", "Benghazi"),
    unit("besieger", "axis", "Benghazi"),
    unit("gazala", "axis", "Gazala"),
)
ALLIED_BENGHAZI = {**AXIS_FORTRESSES, AT("Benghazi"): "allied"}


def test_rb_12_7_example_b_attacker_cannot_trace_through_benghazi(m: HexMap) -> None:
    pos = Position(blocks=EXAMPLE_B, battles=(BENGHAZI_SIEGE,), fortresses=ALLIED_BENGHAZI)
    assert supplied_tokens(m, pos, "axis") == {"besieger"}  # traces INTO the battle (RB 12.5)


def test_rb_12_7_example_b_er_regima_chains_around_benghazi_to_ghemines(m: HexMap) -> None:
    pos = Position(
        blocks=EXAMPLE_B + (unit("regima", "axis", "Er Regima"),),
        battles=(BENGHAZI_SIEGE,),
        fortresses=ALLIED_BENGHAZI,
    )
    assert supplied_tokens(m, pos, "axis") == {"besieger", "gazala", "regima"}
    lines = supply_lines(m, pos, "axis", AT("Er Regima"))
    assert {tuple(m.name(h) for h in line.chain) for line in lines} == {("Er Regima", "Ghemines")}
    assert all(AT("Benghazi") not in line.hexes[: line.hexes.index(AT("Ghemines"))] for line in lines)
    shortest = lines[0].legs[0]
    assert len(shortest.hexes) - 1 == 2 and shortest.kind == "trail"  # "two hexes along the trail/track"
    assert AT("Benghazi") not in supply_lines(m, pos, "axis", AT("Gazala"))[0].hexes


def test_rb_12_5_lines_into_a_battle_cross_friendly_battle_hexsides_only(m: HexMap) -> None:
    # The Axis entered Benghazi only from Er Regima: every other hexside is
    # still the Defender's, so the besiegers get no line from Ghemines.
    from_north = Battle(AT("Benghazi"), "axis", {AT("Er Regima"): "axis"})
    pos = Position(blocks=EXAMPLE_B, battles=(from_north,), fortresses=ALLIED_BENGHAZI)
    assert "besieger" not in supplied_tokens(m, pos, "axis")
    assert any("battle hexside" in text for text in explain_supply(m, pos, "besieger"))


def test_rb_12_5_the_defender_traces_through_its_battle_hex(m: HexMap) -> None:
    # Allied Defender in Tobruk with the Axis attacking from the west only:
    # Allied units west of Tobruk trace through the battle to Alexandria.
    tobruk = AT("Tobruk")
    west = "Acroma"
    battle = Battle(tobruk, "axis", {AT(west): "axis"})
    beyond = M.road_path(M.base("axis"), tobruk, {"highway"})[-3]  # type: ignore[index]
    pos = Position(
        blocks=(unit("def", "allied", "Tobruk"), unit("att", "axis", "Tobruk"), Block("out", "allied", beyond)),
        battles=(battle,),
        fortresses={**AXIS_FORTRESSES, tobruk: "allied"},
    )
    assert "def" in supplied_tokens(m, pos, "allied")
    assert "out" not in supplied_tokens(m, pos, "allied")  # its way in is the Axis hexside
    # Once the Defender holds that hexside too, the line runs through the battle.
    held = Battle(tobruk, "axis", {})
    pos2 = Position(blocks=pos.blocks, battles=(held,), fortresses=pos.fortresses)
    assert {"def", "out"} <= supplied_tokens(m, pos2, "allied")
    assert "att" not in supplied_tokens(m, pos2, "axis")


def test_rb_12_5_raiders_are_isolated_until_the_battle_is_won(m: HexMap) -> None:
    battle = Battle(AT("Sidi Barrani"), "axis", {AT("Buq Buq"): "axis"})
    pos = Position(
        blocks=(
            unit("def", "allied", "Sidi Barrani"),
            unit("raider", "axis", "Sidi Barrani", raider=True, unsupplied=True),
            unit("other", "axis", "Sidi Barrani"),
            unit("sollum", "axis", "Sollum"),
        ),
        battles=(battle,),
        fortresses=AXIS_FORTRESSES,
    )
    got = supplied_tokens(m, pos, "axis")
    assert "other" in got and "raider" not in got
    assert supply_lines(m, pos, "axis", AT("Sidi Barrani"))  # the other unit's lines
    assert "Raider" in explain_supply(m, pos, "raider")[1]
    out, report = final_supply_check(m, pos, "axis", SupplyChoices())
    assert out.block("raider").disrupted and not out.block("raider").raider
    assert report.rout == ()  # shielded by "other"
    won = Position(blocks=tuple(b for b in pos.blocks if b.side == "axis"), fortresses=AXIS_FORTRESSES)
    out, report = final_supply_check(m, won, "axis", SupplyChoices())
    assert not out.block("raider").disrupted and not out.block("raider").unsupplied


# --------------------------------------------------------- RB 12 SUPPLY EXAMPLE


def supply_example(axis_1: str = "Sidi Omar", axis_2: str = "Sidi Omar", b: bool = True) -> Position:
    track = M.road_path(AT("Mersa Matruh"), AT("Siwa"), {"track"})
    assert track is not None
    blocks = [
        unit("A", "allied", "Sidi Barrani E1"),
        unit("C", "allied", "Sofafi SW1"),
        unit("D", "allied", "Sidi Omar SE1"),
        unit("E", "allied", "Sidi Barrani SE1"),
        unit("siwa1", "allied", "Siwa"),
        unit("siwa2", "allied", "Siwa"),
        unit("1", "axis", axis_1),
        unit("2", "axis", axis_2),
    ]
    if b:
        blocks.append(Block("B", "allied", track[3]))
    return Position(blocks=tuple(blocks), fortresses=AXIS_FORTRESSES)


def test_rb_12_supply_example_units_a_to_d_supplied_e_not(m: HexMap) -> None:
    pos = supply_example()
    assert supplied_tokens(m, pos, "allied") == {"A", "B", "C", "D", "siwa1", "siwa2"}
    (a,) = supply_lines(m, pos, "allied", pos.block("A").hex)
    assert [leg.kind for leg in a.legs] == ["highway"] and a.source_hex == m.base("allied")
    (b,) = supply_lines(m, pos, "allied", pos.block("B").hex)
    assert b.chain[-1] == AT("Mersa Matruh") and b.legs[0].kind == "track" and len(b.legs[0].hexes) - 1 == 3
    (c,) = supply_lines(m, pos, "allied", pos.block("C").hex)
    assert c.chain[-1] == AT("Sidi Barrani") and c.legs[0].kind == "trail" and len(c.legs[0].hexes) - 1 == 2
    (d,) = supply_lines(m, pos, "allied", pos.block("D").hex)
    assert d.chain[:2] == (AT("Sidi Omar SE1"), AT("Sofafi SW1")) and d.legs[0].kind == "adjacent"


def test_rb_12_supply_example_unit_e_blocked_by_the_ridge(m: HexMap) -> None:
    pos = supply_example()
    assert not is_supplied(m, pos, "E")
    why = explain_supply(m, pos, "E")
    assert "no Supply Line" in why[0]
    assert any("ridge hexside" in line and "impassable" in line for line in why)


def test_rb_12_supply_example_siwa_units_trace_through_b_or_the_oasis(m: HexMap) -> None:
    lines = supply_lines(m, supply_example(), "allied", AT("Siwa"))
    assert [tuple(m.name(h) for h in line.chain) for line in lines] == [("Siwa", "Sofafi SE2", "Mersa Matruh")]
    # Without B only one of them is supplied, by the Oasis (RB 15.1).
    pos = supply_example(b=False)
    _, report = initial_supply_check(m, pos, "allied", SupplyChoices())
    assert not report.ok and report.needed[0].kind == "oasis"
    assert set(report.needed[0].candidates) == {"siwa1", "siwa2"}
    out, report = initial_supply_check(m, pos, "allied", SupplyChoices(oasis={AT("Siwa"): "siwa2"}))
    assert report.ok
    assert out.block("siwa2").oasis_supply and not out.block("siwa2").unsupplied
    assert out.block("siwa1").unsupplied and not out.block("siwa1").oasis_supply


def test_rb_12_supply_example_axis_1_to_sofafi_cuts_c_and_d(m: HexMap) -> None:
    pos = supply_example(axis_1="Sofafi", axis_2="Sidi Omar")
    assert supplied_tokens(m, pos, "allied") == {"A", "B", "siwa1", "siwa2"}
    out, report = initial_supply_check(m, pos, "allied", SupplyChoices())
    assert report.ok and set(report.unsupplied) == {"C", "D", "E"}
    assert out.block("C").unsupplied and out.block("D").unsupplied
    # They must find new lines that turn or be Disrupted at the Final check (RB 12.1).
    final, report = final_supply_check(m, out, "allied", SupplyChoices())
    assert final.block("C").disrupted and final.block("D").disrupted
    assert not final.block("A").disrupted


def test_rb_12_supply_example_axis_2_must_stay_at_sidi_omar(m: HexMap) -> None:
    # If [2] also leaves Sidi Omar, D is supplied via Sollum (and C through D).
    pos = supply_example(axis_1="Sofafi", axis_2="Sofafi")
    assert {"C", "D"} <= supplied_tokens(m, pos, "allied")
    lines = supply_lines(m, pos, "allied", AT("Sidi Omar SE1"))
    via_sollum = [line for line in lines if line.chain == (AT("Sidi Omar SE1"), AT("Sollum"))]
    assert via_sollum and AT("Sidi Omar") in via_sollum[0].hexes


# ------------------------------------------------------------ RB 19.0 Demo


def test_rb_19_0_demo_bir_habata_chains_sofafi_to_sidi_omar(m: HexMap) -> None:
    battle = Battle(AT("Sidi Barrani"), "axis", {AT("Buq Buq"): "axis"})
    blocks = (
        unit("omar", "axis", "Sidi Omar"),
        unit("habata", "axis", "Bir Habata"),
        unit("sofafi1", "axis", "Sofafi"),
        unit("sofafi2", "axis", "Sofafi"),
        unit("barrani", "axis", "Sidi Barrani"),
        unit("defender", "allied", "Sidi Barrani"),
    )
    pos = Position(blocks=blocks, battles=(battle,), fortresses=AXIS_FORTRESSES)
    assert {"sofafi1", "sofafi2", "habata", "omar"} <= supplied_tokens(m, pos, "axis")
    assert all(c[:3] == ("Sofafi", "Bir Habata", "Sidi Omar") for c in chains(m, pos, "axis", "Sofafi"))
    without = Position(blocks=tuple(b for b in blocks if b.token != "habata"), battles=(battle,), fortresses=AXIS_FORTRESSES)
    assert "sofafi1" not in supplied_tokens(m, without, "axis")


# ------------------------------------------------------ RB 12.4 sidebars


def test_rb_12_4_disrupted_units_trace_but_do_not_chain(m: HexMap) -> None:
    pos = Position(
        blocks=(
            unit("recon", "axis", "Mechili"),
            unit("msus", "axis", "Msus", disrupted=True),
            unit("charruba", "axis", "Charruba"),
        ),
        fortresses=AXIS_FORTRESSES,
    )
    assert "msus" in supplied_tokens(m, pos, "axis")  # traces to the highway itself
    assert ("Mechili", "Msus", "Agedabia") not in chains(m, pos, "axis", "Mechili")
    assert ("Mechili", "Charruba", "Er Regima") in chains(m, pos, "axis", "Mechili")


def test_rb_11_1_disrupted_enemy_units_do_not_block(m: HexMap) -> None:
    pos = supply_example(axis_1="Sofafi", axis_2="Sidi Omar")
    pos = pos.replace_blocks([unit("1", "axis", "Sofafi", disrupted=True)])
    assert {"C", "D"} <= supplied_tokens(m, pos, "allied")


def test_rb_13_1_empty_enemy_fortress_is_an_empty_hex(m: HexMap) -> None:
    pos = Position(blocks=(unit("e", "axis", "Tobruk E1"),), fortresses={**AXIS_FORTRESSES, AT("Tobruk"): "allied"})
    assert supplied_tokens(m, pos, "axis") == {"e"}


# ------------------------------------------------------------- RB 13.3


def tobruk_position(outside: dict[str, str], inside: int = 2, unsupplied: bool = False) -> Position:
    """Tobruk Allied and Isolated: Axis units cut the highway east of it."""
    blocks = [unit(f"in{i}", "allied", "Tobruk", unsupplied=unsupplied) for i in range(inside)]
    blocks += [unit(t, "allied", place, unsupplied=unsupplied) for t, place in outside.items()]
    blocks += [unit("cut", "axis", "Tobruk E1"), unit("cut2", "axis", "Acroma E1")]
    return Position(blocks=tuple(blocks), fortresses={**AXIS_FORTRESSES, AT("Tobruk"): "allied"})


def west_of_tobruk(n: int) -> str:
    path = M.road_path(AT("Tobruk"), M.base("axis"), {"highway"})
    assert path is not None
    return M.name(path[n])


def test_rb_13_3_fortress_supply_example_three_supplied_farthest_disrupted(m: HexMap) -> None:
    far = {f"o{i}": "Sidi Barrani SE1" for i in range(1, 5)}  # cut off at the Initial check
    start = tobruk_position(far)
    assert isolated_fortresses(m, start, "allied") == (AT("Tobruk"),)
    after_initial, report = initial_supply_check(m, start, "allied", SupplyChoices())
    assert report.ok
    assert {t for t in ("in0", "in1") if after_initial.block(t).fortress_supply == AT("Tobruk")} == {"in0", "in1"}
    assert all(after_initial.block(f"o{i}").unsupplied for i in range(1, 5))
    # The four move so that they can trace to Tobruk, at 1, 2, 3 and 4 hexes.
    moved = after_initial.replace_blocks(
        [unit(f"o{i}", "allied", west_of_tobruk(i), unsupplied=True) for i in range(1, 5)]
    )
    final, report = final_supply_check(m, moved, "allied", SupplyChoices())
    assert report.ok
    assigned = {b.token for b in final.blocks if b.fortress_supply == AT("Tobruk")}
    assert assigned == {"in0", "in1", "o1", "o2", "o3"}
    assert final.block("o4").disrupted and not final.block("o3").disrupted
    assert [c.token for c in report.changes if c.change == "disrupted"] == ["o4"]


def test_rb_13_3_owner_chooses_among_equally_distant_units(m: HexMap) -> None:
    # Two units 3 hexes out on different roads: one of them gets the last slot.
    three = west_of_tobruk(3)
    outs = {"o1": west_of_tobruk(1), "o2": west_of_tobruk(2), "o3": three, "o4": three}
    start = tobruk_position(outs)
    # Before the Initial check none of them could trace; here they can at once.
    _, report = initial_supply_check(m, start, "allied", SupplyChoices())
    assert not report.ok and report.needed[0].kind == "fortress"
    assert report.needed[0].candidates == ("o3", "o4") and report.needed[0].count == 1
    out, report = initial_supply_check(m, start, "allied", SupplyChoices(fortress={AT("Tobruk"): ("o4",)}))
    assert report.ok
    assert out.block("o4").fortress_supply == AT("Tobruk") and out.block("o3").unsupplied


def test_rb_13_3_units_inside_cannot_be_starved(m: HexMap) -> None:
    outs = {f"o{i}": west_of_tobruk(i) for i in range(1, 5)}
    start = tobruk_position(outs, inside=2)
    # Asking for the four outside units ahead of those inside is refused.
    _, report = initial_supply_check(
        m, start, "allied", SupplyChoices(fortress={AT("Tobruk"): ("o1", "o2", "o3", "o4")})
    )
    assert report.problems and report.problems[0].rule == "RB 13.3"
    out, report = initial_supply_check(m, start, "allied", SupplyChoices())
    assert out.block("in0").fortress_supply and out.block("in1").fortress_supply
    assert out.block("o4").unsupplied
    # More units inside than capacity: the owner picks among them only.
    crowded = tobruk_position({}, inside=6)
    _, report = initial_supply_check(m, crowded, "allied", SupplyChoices())
    assert report.needed[0].candidates == tuple(f"in{i}" for i in range(6)) and report.needed[0].count == 5


def test_rb_13_3_fortress_supply_needs_isolation_and_persists(m: HexMap) -> None:
    # Not isolated: no Fortress Supply assigned, Base lines instead.
    pos = Position(blocks=(unit("t", "allied", "Tobruk"),), fortresses={**AXIS_FORTRESSES, AT("Tobruk"): "allied"})
    out, report = initial_supply_check(m, pos, "allied", SupplyChoices())
    assert isolated_fortresses(m, pos, "allied") == () and not out.block("t").fortress_supply
    # Assigned units keep it for the turn and trace only towards their Fortress.
    iso = tobruk_position({"o1": west_of_tobruk(1)})
    out, _ = initial_supply_check(m, iso, "allied", SupplyChoices())
    assert out.block("o1").fortress_supply == AT("Tobruk")
    (line,) = supply_lines(m, out, "allied", out.block("o1").hex)
    assert line.source == "fortress" and line.hexes == (out.block("o1").hex, AT("Tobruk"))
    unassigned = out.replace_blocks([unit("o1", "allied", west_of_tobruk(1))])
    assert supply_lines(m, unassigned, "allied", unassigned.block("o1").hex) == ()
    assert supply_lines(m, unassigned, "allied", unassigned.block("o1").hex, source=AT("Tobruk"))


def test_ex_27_mixed_group_fortress_supplied_and_cut_off_units(m: HexMap) -> None:
    # RB 8 sidebar: in one hex a Fortress-supplied unit has lines (it could
    # Withdraw), the other has none, so the group may not Refuse Battle.
    iso = tobruk_position({"o1": west_of_tobruk(1)}, inside=5)
    out, report = initial_supply_check(m, iso, "allied", SupplyChoices())
    assert report.ok and not out.block("o1").fortress_supply  # capacity 5 used inside
    assert out.block("o1").unsupplied
    mixed = out.replace_blocks([unit("o1", "allied", west_of_tobruk(1), fortress_supply=AT("Tobruk"))])
    mixed = Position(
        blocks=mixed.blocks + (unit("o2", "allied", west_of_tobruk(1)),), fortresses=mixed.fortresses
    )
    assert is_supplied(m, mixed, "o1") and not is_supplied(m, mixed, "o2")


# -------------------------------------------------------------- RB 15.1


def test_rb_15_1_oasis_priority_persistence_and_final_assignment(m: HexMap) -> None:
    jalo = AT("Jalo")
    first = Position(blocks=(unit("j1", "axis", "Jalo"),), fortresses=AXIS_FORTRESSES)
    assert not supplied_tokens(m, first, "axis")  # no Base line from Jalo
    out, report = initial_supply_check(m, first, "axis", SupplyChoices())
    assert out.block("j1").oasis_supply == jalo and not out.block("j1").unsupplied
    # A unit arriving later cannot take the Oasis Supply away (RB 15.1).
    later = Position(blocks=out.blocks + (unit("j2", "axis", "Jalo", unsupplied=True),), fortresses=AXIS_FORTRESSES)
    final, report = final_supply_check(m, later, "axis", SupplyChoices(oasis={jalo: "j2"}))
    assert final.block("j2").disrupted and not final.block("j1").disrupted
    # No unit there at the Initial check: one arriving gets it at the Final check.
    empty = Position(blocks=(unit("j3", "axis", "Jalo NW1", unsupplied=True),), fortresses=AXIS_FORTRESSES)
    out, _ = initial_supply_check(m, empty, "axis", SupplyChoices())
    arrived = out.replace_blocks([unit("j3", "axis", "Jalo", unsupplied=True)])
    final, report = final_supply_check(m, arrived, "axis", SupplyChoices())
    assert final.block("j3").oasis_supply == jalo and not final.block("j3").disrupted


def test_rb_15_1_the_assignment_cannot_be_switched_after_the_unit_leaves(m: HexMap) -> None:
    """S-17: the Oasis keeps its Initial-check assignment for the whole
    Player-Turn even when that unit moves out; a unit arriving meanwhile
    gets nothing."""
    jalo = AT("Jalo")
    first = Position(blocks=(unit("j1", "axis", "Jalo"),), fortresses=AXIS_FORTRESSES)
    out, _ = initial_supply_check(m, first, "axis", SupplyChoices())
    left = out.replace_blocks([msgspec.structs.replace(out.block("j1"), hex=AT("Jalo NW1"))])
    arrived = Position(blocks=left.blocks + (unit("j2", "axis", "Jalo", unsupplied=True),),
                       fortresses=AXIS_FORTRESSES)
    final, _ = final_supply_check(m, arrived, "axis", SupplyChoices(oasis={jalo: "j2"}))
    assert final.block("j2").disrupted and final.block("j2").oasis_supply == ""
    assert final.block("j1").oasis_supply == jalo  # still recorded, though it no longer helps


def test_rb_15_1_only_the_defender_gets_oasis_supply_in_an_oasis_battle(m: HexMap) -> None:
    battle = Battle(AT("Jalo"), "allied", {})
    pos = Position(
        blocks=(unit("def", "axis", "Jalo"), unit("att", "allied", "Jalo")),
        battles=(battle,),
        fortresses=AXIS_FORTRESSES,
    )
    out, report = initial_supply_check(m, pos, "axis", SupplyChoices())
    assert out.block("def").oasis_supply
    out, report = initial_supply_check(m, pos, "allied", SupplyChoices())
    assert not out.block("att").oasis_supply and out.block("att").unsupplied


# ---------------------------------------------------------- RB 12.7 checks


def test_rb_12_7_initial_check_recovery_only_when_supplied_and_unengaged(m: HexMap) -> None:
    battle = Battle(AT("Sollum"), "axis", {})
    pos = Position(
        blocks=(
            unit("ok", "allied", "Mersa Matruh", disrupted=True),
            unit("young", "allied", "Mersa Matruh", disrupted=True),
            unit("engaged", "allied", "Sollum", disrupted=True),
            unit("shield", "allied", "Sollum"),
            unit("att", "axis", "Sollum"),
            unit("cut", "allied", "Sidi Barrani SE1", disrupted=True),
        ),
        battles=(battle,),
        fortresses=AXIS_FORTRESSES,
    )
    out, report = initial_supply_check(m, pos, "allied", SupplyChoices(), recoverable=("ok", "engaged", "cut"))
    assert not out.block("ok").disrupted
    assert out.block("young").disrupted  # not a full enemy turn Disrupted (RB 11.2)
    assert out.block("engaged").disrupted  # in a battle hex
    assert out.block("cut").disrupted and out.block("cut").unsupplied
    assert {c.token for c in report.changes if c.change == "recovered"} == {"ok"}


def test_rb_12_7_final_check_routs_unshielded_newly_disrupted_units(m: HexMap) -> None:
    # An Allied unit alone in a battle, cut off, marked at the Initial check.
    battle = Battle(AT("Sidi Barrani SE1"), "axis", {})
    pos = Position(
        blocks=(unit("lone", "allied", "Sidi Barrani SE1", unsupplied=True), unit("att", "axis", "Sidi Barrani SE1")),
        battles=(battle,),
        fortresses=AXIS_FORTRESSES,
    )
    out, report = final_supply_check(m, pos, "allied", SupplyChoices())
    assert out.block("lone").disrupted and report.rout == ("lone",)


def test_rb_12_1_unsupplied_only_at_final_is_not_disrupted(m: HexMap) -> None:
    pos = supply_example(axis_1="Sofafi")
    out, report = final_supply_check(m, pos, "allied", SupplyChoices())
    assert not out.block("C").disrupted and not out.block("C").unsupplied  # no marker from Initial
    marked = pos.replace_blocks([unit("A", "allied", "Sidi Barrani E1", unsupplied=True)])
    out, report = final_supply_check(m, marked, "allied", SupplyChoices())
    assert not out.block("A").unsupplied and not out.block("A").disrupted  # supply regained


def test_explain_supply_names_places_and_lists_lines(m: HexMap) -> None:
    text = explain_supply(m, MECHILI, "Mechili")
    assert text[0].startswith("recon (axis) at Mechili: Supplied from the Base")
    assert "8 Supply Line(s)" in text[0] and len(text) == 9
    assert "Mechili - Msus - Agedabia" in "\n".join(text)
    assert explain_supply(m, MECHILI, "Tobruk") == ["Tobruk: no units"]


def test_rb_13_3_unassigned_units_still_form_chains_to_the_fortress(m: HexMap) -> None:
    # S-17: Tengeder reaches Tobruk only through the unit at Sidi Mufta, which
    # gets no Fortress Supply itself (capacity 5 used inside).
    pos = tobruk_position({"mufta": "Sidi Mufta", "tengeder": "Tengeder"}, inside=5)
    out, report = initial_supply_check(m, pos, "allied", SupplyChoices())
    assert report.ok and not out.block("mufta").fortress_supply and out.block("mufta").unsupplied
    assigned = out.replace_blocks([unit("tengeder", "allied", "Tengeder", fortress_supply=AT("Tobruk"))])
    assert is_supplied(m, assigned, "tengeder")
    lines = supply_lines(m, assigned, "allied", AT("Tengeder"))
    assert lines and all(x.source == "fortress" and x.chain[:2] == (AT("Tengeder"), AT("Sidi Mufta")) for x in lines)
    gone = Position(
        blocks=tuple(b for b in assigned.blocks if b.token != "mufta"), fortresses=assigned.fortresses
    )
    assert not is_supplied(m, gone, "tengeder")
