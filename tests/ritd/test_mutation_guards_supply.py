"""Supply (rules/ritd/supply.py; RB 12.1-12.7, 13.3), the parts the rulebook
examples in test_supply.py leave open (issue 29: mutation score): what each
Supply Check records for every unit, the order of a unit's Supply Lines,
Fortress Supply from a Fortress the enemy has taken, and the explanation of
an unsupplied unit."""

from __future__ import annotations

from rules.ritd.position import Block, Position
from rules.ritd.supply import SupplyChoices, network, supply_lines
from rules.ritd.supply_checks import explain_supply, final_supply_check, initial_supply_check
from tests.ritd.test_supply import AT, AXIS_FORTRESSES, M, supply_example, tobruk_position, unit, west_of_tobruk


def _changes(report) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for c in report.changes:
        out.setdefault(c.token, []).append((c.change, c.rule))
    return out


def _marked(pos: Position, *tokens: str) -> Position:
    """``tokens`` carry the Unsupplied marker of an earlier check."""
    return pos.replace_blocks([Block(b.token, b.side, b.hex, unsupplied=True) for b in pos.blocks if b.token in tokens])


def test_rb_12_7_initial_check_records_who_lost_and_who_regained_supply_and_nobody_else() -> None:
    """RB 12.7: at the Initial Supply Check a unit with no Supply Line is
    marked Unsupplied, a marked unit that has one again loses its marker;
    a unit whose status does not change is not reported."""
    pos = _marked(supply_example(), "A")  # A is on the Supplied Highway; E is cut off by the ridge
    out, report = initial_supply_check(M, pos, "allied", SupplyChoices())
    assert report.ok
    changes = _changes(report)
    assert changes["A"] == [("resupplied", "RB 12.7")]
    assert changes["E"] == [("unsupplied", "RB 12.7")]
    assert not {"B", "C", "D"} & set(changes)
    assert not out.block("A").unsupplied and out.block("E").unsupplied
    reason = next(c.reason for c in report.changes if c.token == "A")
    assert reason == "Supplied from its base"
    # Already marked and still cut off: nothing new to report.
    again, report = initial_supply_check(M, out, "allied", SupplyChoices())
    assert "E" not in _changes(report) and again.block("E").unsupplied


def test_rb_12_7_final_check_clears_markers_of_resupplied_units_only() -> None:
    """RB 12.7, 12.1: at the Final Supply Check a marked unit with a line again
    loses its marker; a marked unit still without one is Disrupted; units
    that were supplied throughout are not reported."""
    pos = _marked(supply_example(), "A", "E")
    out, report = final_supply_check(M, pos, "allied", SupplyChoices())
    changes = _changes(report)
    assert changes["A"] == [("resupplied", "RB 12.7")]
    assert changes["E"] == [("disrupted", "RB 12.1")]
    assert not {"B", "C", "D"} & set(changes)
    assert not out.block("A").unsupplied and out.block("E").disrupted


def test_rb_13_3_fortress_supply_says_whether_the_unit_is_inside_or_how_far_out() -> None:
    _, report = initial_supply_check(M, tobruk_position({"o1": west_of_tobruk(1), "o2": west_of_tobruk(2)}),
                                     "allied", SupplyChoices())
    reasons = {c.token: c.reason for c in report.changes if c.change == "fortress_supply"}
    assert reasons["in0"] == "Fortress Supply from Isolated Tobruk (inside the Fortress)"
    assert reasons["o1"] == "Fortress Supply from Isolated Tobruk (1 hexes away)"
    assert reasons["o2"] == "Fortress Supply from Isolated Tobruk (2 hexes away)"


def test_rb_13_3_no_fortress_supply_from_a_fortress_the_enemy_has_taken() -> None:
    """RB 13.3: Fortress Supply comes from a friendly Fortress. A unit still
    assigned to Tobruk after the enemy has taken it (empty, RB 13.1) has no
    line to it, and Tobruk is not in its Supply Network."""
    outside = west_of_tobruk(1)
    blocks = (Block("o1", "allied", AT(outside), fortress_supply=AT("Tobruk")),
              Block("cut", "axis", AT("Tobruk E1")), Block("cut2", "axis", AT("Acroma E1")))
    taken = Position(blocks=blocks, fortresses=AXIS_FORTRESSES)
    assert supply_lines(M, taken, "allied", AT(outside)) == ()
    assert AT("Tobruk") not in network(M, taken, "allied")
    held = Position(blocks=blocks, fortresses={**AXIS_FORTRESSES, AT("Tobruk"): "allied"})
    (line,) = supply_lines(M, held, "allied", AT(outside))
    assert line.source == "fortress"
    assert {AT(outside), AT("Tobruk")} <= network(M, held, "allied")


def test_rb_12_2_a_units_supply_lines_are_listed_shortest_first() -> None:
    """supply_lines: "Sorted shortest first" (what ``pbem explain supply``
    shows and the RB 5.3 Withdrawal check reads)."""
    places = ["Msus", "Charruba", "Mechili", "Er Regima", "Benghazi", "Agedabia", "Beda Fomm", "Derna", "Gazala"]
    pos = Position(blocks=tuple(unit(f"u{i}", "axis", p) for i, p in enumerate(places)), fortresses=AXIS_FORTRESSES)
    # Er Regima is on the open Supplied Highway: its one highway line (RB 12.3).
    for p in ("Msus", "Charruba", "Mechili", "Derna"):
        lines = supply_lines(M, pos, "axis", AT(p))
        assert len(lines) > 1
        keys = [(line.length, line.chain, line.hexes) for line in lines]
        assert keys == sorted(keys), p


def test_rb_12_4_an_unsupplied_unit_is_told_that_its_chain_member_is_unsupplied_too() -> None:
    pos = Position(blocks=(unit("x", "allied", "Tengeder"), unit("y", "allied", "Tengeder W1")),
                   fortresses=AXIS_FORTRESSES)
    why = explain_supply(M, pos, "x")
    assert why[0] == "x (allied) at Tengeder: no Supply Line (RB 12.2)"
    assert "  - the chain member at Tengeder W1 is itself unsupplied (RB 12.4)" in why



def test_rb_12_4_the_highway_within_supply_range_is_blocked_by_an_enemy_hex_on_it() -> None:
    """RB 12.4: along the highway a Supply Chain link reaches 3 hexes; RB 12.2:
    never through an enemy hex. An Allied unit at Acroma with the Axis in
    Tobruk: the Supplied Highway at Tobruk E1 and Bardia W1 is within range
    along the highway, and the explanation names Tobruk as what blocks it."""
    pos = Position(blocks=(unit("a", "allied", "Acroma"), unit("x", "axis", "Tobruk")), fortresses=AXIS_FORTRESSES)
    why = explain_supply(M, pos, "a")
    assert why[0] == "a (allied) at Acroma: no Supply Line (RB 12.2)"
    assert "  - the highway to Tobruk E1 passes Tobruk, which blocks it (RB 12.2)" in why
    assert "  - the highway to Bardia W1 passes Tobruk, which blocks it (RB 12.2)" in why


def test_rb_12_3_a_unit_on_the_open_supplied_highway_has_the_one_highway_line() -> None:
    """RB 12.3 ("any stretch of highway not blocked by enemy units is a valid
    Supply Line"), decision S-08: "A unit on highway supplied along the
    highway has exactly that one line". An Axis unit alone at Er Regima, the
    highway open from El Agheila through Benghazi (Axis, empty)."""
    pos = Position(blocks=(unit("u", "axis", "Er Regima"),), fortresses=AXIS_FORTRESSES)
    (line,) = supply_lines(M, pos, "axis", AT("Er Regima"))
    assert line.chain == (AT("Er Regima"),) and [leg.kind for leg in line.legs] == ["highway"]
