"""RB 18.0 in rules version 5 (issue 25): "Free Deployment units may be
placed in any Supplied location in the specified area and not occupied by
the enemy." Version 4 accepted any hex of the area (a German unit alone at
Jalo NE2, far from any Supply Line, in Crusader)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem import session
from pbem.errors import IllegalAction
from pbem.identity import Identity
from rules.ritd import RULES as RITD
from rules.ritd import deployment, supply_checks
from rules.ritd.position import Block, Position
from rules.ritd.state import game_map
from tests.ritd.movement_support import MAP, at

pytestmark = pytest.mark.usefixtures("registered_ritd")


def _axis_seat(tmp_path: Path, scenario: str, orders: list[str]) -> session.Seat:
    axis, allied = Identity.generate(), Identity.generate()
    session.new_game(tmp_path / "axis", "ritd", scenario, "axis", axis, tmp_path / "axis.key",
                     allied.public_text, orders=orders)
    return session.load_seat(session.GameDir(tmp_path / "axis"), axis)


def _legal(seat: session.Seat) -> list[str]:
    draft, _ = session.draft_replay(seat)
    return RITD.legal_orders(draft.state, "axis", draft.ctx("axis"))


def test_rb_18_0_a_german_unit_alone_at_jalo_ne2_is_not_in_a_supplied_location(tmp_path):
    """RB 18.0: "Free Deployment units may be placed in any Supplied
    location". Crusader (RB 18.4), the Axis deploys first: Jalo NE2 is in
    Libya but no Supply Line reaches it (RB 12.2, 12.4: no unit near to
    chain from, no road to the highway)."""
    seat = _axis_seat(tmp_path, "crusader", [])
    with pytest.raises(IllegalAction) as err:
        session.add_orders(seat, ["deploy 15Pz/8 at Jalo NE2"])
    assert any("RB 18.0" in d and "Jalo NE2 is not a Supplied location" in d for d in err.value.details), \
        err.value.details
    legal = _legal(seat)
    assert "deploy 15Pz/8 at Jalo NE2" not in legal
    # On the open Supplied Highway (RB 12.3), and alone in the Jalo Oasis (RB 15.1 Oasis Supply).
    assert {"deploy 15Pz/8 at Derna", "deploy 15Pz/8 at Jalo"} <= set(legal)


def test_rb_18_0_a_supplied_location_may_come_from_a_unit_already_deployed(tmp_path):
    """RB 12.4: a Supply Chain is "a series of spaced friendly units"; a unit
    deployed at Jalo (Oasis Supply, RB 15.1) forms no chain to Jalo NE2, but
    Mechili, chained to the highway at Derna by trail, lets a unit deploy
    next to it; a second unit in the Jalo Oasis has no Oasis Supply left."""
    seat = _axis_seat(tmp_path, "crusader", ["deploy 15Pz/8 at Jalo"])
    legal = set(_legal(seat))
    assert "deploy 15Pz/33 at Jalo" not in legal and "deploy 15Pz/33 at Jalo NE2" not in legal
    session.add_orders(seat, ["deploy 15Pz/33 at Mechili"])
    assert "deploy 15Pz/104 at Mechili SE1" in set(_legal(seat))


def test_rb_18_0_fortress_supply_capacity_makes_a_location_supplied_until_it_is_used():
    """RB 13.3: an Isolated Fortress supplies as many units as its Port
    Capacity (Tobruk: 5 Allied), units inside first. With the Axis astride
    the highway on both sides of Tobruk, Tobruk E1 is a Supplied location
    for one more Allied unit while capacity is left, and not once five
    units take it."""
    tobruk, beside = at("Tobruk"), at("Tobruk E1")
    axis = (Block("x1", "axis", at("Acroma")), Block("x2", "axis", at("Bardia")), Block("x3", "axis", at("Acroma E1")))
    four = Position(blocks=axis + tuple(Block(f"L{i}", "allied", tobruk) for i in range(4)),
                    fortresses={tobruk: "allied"})
    assert supply_checks.supplied_locations(MAP, four, "allied", {beside, at("Jalo NE2")}) == {beside}
    five = Position(blocks=four.blocks + (Block("L4", "allied", tobruk),), fortresses=four.fortresses)
    assert supply_checks.supplied_locations(MAP, five, "allied", {beside}) == frozenset()


def test_rb_18_0_the_listing_offers_only_supplied_hexes_of_the_area():
    """The deployment order listing offers exactly the Supplied locations."""
    state = RITD.initial_state("crusader", ())
    legal = deployment.listed_deployment(state, "axis")
    offered = {o.split(" at ", 1)[1] for o in legal if o.startswith("deploy ")}
    m = game_map()
    hexes = {m.resolve(p) for p in offered}
    assert hexes == deployment.supplied_hexes(state, "axis", hexes)
    assert "Jalo NE2" not in offered and "Derna" in offered
    # 'pbem options' says so in words, unit by unit.
    tree = RITD.order_tree(state, "axis", None)
    assert all(g.note.endswith("Supplied locations only (RB 18.0)") for g in tree if g.label != "End deployment")
