"""Pursuit Fire, Probes and Routs (rules/ritd/routs.py; RB 10.3-10.5,
10.41), the checks the rulebook-example tests leave open (issue 29:
mutation score), through the module's public functions."""

from __future__ import annotations

import pytest

from rules.ritd import movement as mv
from rules.ritd import routs as rt
from rules.ritd.position import Position

HEX = "1010"


def test_rb_6_1_an_announced_slowest_speed_outside_1_to_4_is_refused() -> None:
    """RB 10.5: the retreating player announces the speed of its slowest
    unit; RB 6.1: unit speeds are 1 to 4, so anything else is refused at once."""
    for speed in (0, 5):
        check = rt.check_slowest_speed(("a",), rt.SlowestSpeed(HEX, speed), {"a": None})
        assert [p.rule for p in check.problems] == ["RB 6.1"] and f"not {speed}" in check.problems[0].message
        assert check.obligations == () and not check.ok
    for speed in (1, 4):
        assert rt.check_slowest_speed(("a",), rt.SlowestSpeed(HEX, speed), {"a": speed}).ok


def test_rb_10_5_each_pursuer_fires_once() -> None:
    fire = rt.PursuitFire(HEX, (rt.Pursuer("p", 1), rt.Pursuer("p", 1)))
    check = rt.check_pursuit(Position(), fire, 2, eligible=("p",), speeds={"p": 2})
    assert [p.message for p in check.problems] == ["p pursues twice; each unit fires once"]


def test_rb_10_5_a_hidden_pursuer_rolling_two_dice_must_be_faster_than_the_slowest() -> None:
    """RB 10.5: two dice for a faster pursuer. Against a group of speed 4
    nothing is faster, so two dice are refused even for a unit this replay
    cannot see; against speed 3 they become the obligation speed 4."""
    fire = rt.PursuitFire(HEX, (rt.Pursuer("p", 2),))
    check = rt.check_pursuit(Position(), fire, mv.MAX_SPEED, eligible=("p",), speeds={"p": None})
    assert [p.rule for p in check.problems] == ["RB 10.5"] and "no unit is faster than speed 4" in check.problems[0].message
    assert check.obligations == ()
    check = rt.check_pursuit(Position(), fire, 3, eligible=("p",), speeds={"p": None})
    assert check.ok and check.obligations == (rt.PursuitSpeedObligation(("p",), 4, 4),)


def test_rb_10_5_pursuit_dice_are_six_sided_rolls() -> None:
    fire = rt.PursuitFire(HEX, (rt.Pursuer("p", 2),))
    assert rt.score_pursuit(fire, (4, 3)) == 1
    for bad in ((0, 4), (4, 7)):
        with pytest.raises(ValueError, match="a die roll is 1..6"):
            rt.score_pursuit(fire, bad)


def test_rb_10_41_a_probe_is_a_plain_combat_round_unless_told_of_a_fortress_or_minefield() -> None:
    """RB 10.41: the Probe is one Combat Round in which the Rearguard fires
    first; Fortress and Minefield benefits only where the caller says so."""
    retreat = mv.Retreat(hex=HEX, side="allied", kind="partial", units=("a",), rearguard=("r",))
    rnd = rt.probe_round(retreat)
    assert (rnd.hex, rnd.active, rnd.probe, rnd.fortress, rnd.minefield) == (HEX, "allied", True, False, False)
    rnd = rt.probe_round(retreat, fortress=True, minefield=True)
    assert (rnd.fortress, rnd.minefield) == (True, True)
