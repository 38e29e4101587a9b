"""Rules version 5: movement sidebar rules found unplayed while re-reading
RB 5-11 (issue 25's last point)."""

from __future__ import annotations

from rules.ritd import movement as mv
from rules.ritd.position import Battle
from tests.ritd.movement_support import MAP, at, block, group, position, regroup, route, step


def test_rb_11_11_engaging_disrupted_units_that_co_exist_with_disrupted_enemies_routs_them() -> None:
    """RB 11.11: "Disrupted units that are Engaged are immediately Routed
    (11.3) unless Shielded by friendly Undisrupted units in the same hex";
    RB 11.4: "An Overrun occurs when one or more units enter a hex containing
    Unshielded enemy Disrupted units". A hex where Disrupted units of both
    sides co-exist (RB 5.3 sidebar, MV-11) already has a Battle record; an
    Undisrupted unit entering it still Overruns the enemy ones."""
    sidi = at("Sidi Barrani")
    pos = position(block("a", "allied", "Buq Buq"), block("r", "allied", "Sidi Barrani", disrupted=True),
                   block("x", "axis", "Sidi Barrani", disrupted=True))
    pos = pos.with_battles([Battle(hex=sidi, attacker="allied")])  # the co-existence of MV-11
    turn = mv.start_movement(pos, "allied")
    out = step(pos, turn, group("Buq Buq", ("a", route("Buq Buq", "Sidi Barrani"))), {"a": 3})
    assert out.overruns == (sidi,) and out.attacked == ()
    assert out.turn.engagements == (mv.Engagement("a", at("Buq Buq"), sidi),)
    # Shielded by an Undisrupted unit, they are not Routed: an ordinary Engagement.
    shielded = position(block("a", "allied", "Buq Buq"), block("x", "axis", "Sidi Barrani", disrupted=True),
                        block("y", "axis", "Sidi Barrani"), block("r", "allied", "Sidi Barrani"))
    shielded = shielded.with_battles([Battle(hex=sidi, attacker="allied")])
    out = step(shielded, turn, group("Buq Buq", ("a", route("Buq Buq", "Sidi Barrani"))), {"a": 3})
    assert out.overruns == () and out.attacked == ()


def test_rb_11_4_step_5_a_regroup_interrupted_by_an_overrun_is_completed_after_the_rout() -> None:
    """RB 11.4: the units "qualified to move (as part of Group or Regrouping
    Moves already underway), but as yet unmoved ... may then complete their
    Movement"; a Regroup's units still go to its one destination (RB 5.2;
    MV-19). The completion is that Move, not a new one (one Move here)."""
    sidi = at("Sidi Barrani")
    pos = position(block("a", "allied", "Buq Buq"), block("b", "allied", "Sollum"),
                   block("x", "axis", "Sidi Barrani", disrupted=True))
    turn = mv.start_movement(pos, "allied")
    first = regroup("Buq Buq", "Sidi Barrani", ("a", route("Buq Buq", "Sidi Barrani")))
    out = step(pos, turn, first, {"a": 3})
    assert out.overruns == (sidi,) and out.turn.moves_made == 1
    assert out.turn.interrupted == (mv.InterruptedMove("regroup", at("Buq Buq"), sidi),)
    routed = out.position.replace_blocks([block("x", "axis", "Sofafi", disrupted=True)]).with_battles([])
    rest = regroup("Buq Buq", "Sidi Barrani", ("b", route("Sollum", "Buq Buq", "Sidi Barrani")))
    done = step(routed, out.turn, rest, {"b": 2})
    assert done.position.block("b").hex == sidi and done.turn.moves_made == 1
    # Another destination is another Move: none is left.
    other = regroup("Buq Buq", "Buq Buq", ("b", route("Sollum", "Buq Buq")))
    assert [p.rule for p in mv.check_move(MAP, routed, out.turn, other, {"b": 2}).problems] == ["RB 4.0"]
