"""The Buildup (rules/ritd/buildup.py; RB 16.0-16.54), the checks the
rulebook tests leave open (issue 29: mutation score), through the module's
public functions."""

from __future__ import annotations

import msgspec
import pytest

from rules.ritd import buildup as bu
from tests.ritd.movement_support import MAP, at, block, position, rules_of
from tests.ritd.test_buildup_rules import prepared


def test_rb_16_0_every_buildup_step_cites_its_rule_and_says_what_happens() -> None:
    for seq in (bu.BUILDUP_SEQUENCE, bu.PREGAME_SEQUENCE):
        for s in seq:
            assert s.rule.startswith("RB 1"), s.id
            assert s.text and s.text.endswith("."), s.id
            assert s.actor in ("auto", "dice", "player1", "player2", "each"), s.id
    assert bu.BUILDUP_SEQUENCE[0].rule == "RB 16.1" and bu.BUILDUP_SEQUENCE[1].rule == "RB 16.2"


@pytest.mark.parametrize("action,wire", [
    (bu.Redeploy("a", ("1010", "1011")), b'{"type":"redeploy","token":"a","path":["1010","1011"]}'),
    (bu.SeaRedeploy("a", "1103"), b'{"type":"sea-redeploy","token":"a","to":"1103"}'),
    (bu.ReturnForRefit("a", ("1010",)), b'{"type":"refit","token":"a","path":["1010"]}'),
    (bu.Replace("a", 2), b'{"type":"replace","token":"a","steps":2}'),
    (bu.BuySupply(2), b'{"type":"buy-supply","cards":2}'),
])
def test_rb_16_5_each_spending_action_has_its_one_wire_form(action, wire) -> None:
    """RB 16.5: the spending choices are actions of signed events; their tags
    are the published vocabulary (a changed tag makes old games unreadable)."""
    assert msgspec.json.decode(wire, type=bu.SpendAction) == action
    assert msgspec.json.decode(msgspec.json.encode(action), type=bu.SpendAction) == action


@pytest.mark.parametrize("path,legs", [
    (("a", "b"), 1), (("a", "b", "c"), 1), (("a", "b", "c", "d"), 2), (("a", "b", "c", "d", "e"), 2),
    (("a", "b", "c", "d", "e", "f"), 3),
])
def test_rb_16_51_redeployments_are_two_hexes_each_off_road(path, legs) -> None:
    """RB 16.51: one Redeployment moves a unit 2 hexes (plus a Road Bonus);
    a longer path is cut into the fewest legs, each starting where the last
    ended. Off-road hexes far from any road (the Jalo area)."""
    walk = [at("Jalo")]
    while len(walk) < len(path):
        walk.append(next(n for n in MAP.passable_neighbours(walk[-1])
                         if n not in walk and MAP.road(walk[-1], n) is None and MAP.distance(walk[0], n) == len(walk)))
    out = bu.redeployment_legs(MAP, walk)
    assert len(out) == legs and bu.redeployment_cost(MAP, walk) == legs
    assert out[0][0] == walk[0] and out[-1][-1] == walk[-1]
    assert all(a[-1] == b[0] for a, b in zip(out, out[1:]))
    assert all(len(leg) - 1 <= 2 for leg in out)


def test_rb_16_5_spending_on_a_unit_not_on_the_map_is_refused_not_a_crash() -> None:
    pos, ctx = prepared(position(block("A", "axis", "El Agheila", unit="Brescia", cv=1)))
    ledger = bu.open_ledger("axis", 30)
    for action, rule in ((bu.SeaRedeploy("zz", at("Tobruk")), "RB 16.53"),
                         (bu.ReturnForRefit("zz", (at("El Agheila"),)), "RB 16.52"),
                         (bu.Replace("zz", 1), "RB 16.54")):
        probs = bu.check_spend(ctx, pos, ledger, action)
        assert rules_of(probs) == [rule] and probs[0].message == "no such block on the map: zz"


def test_rb_16_54_at_least_one_step_and_never_above_full_strength() -> None:
    pos, ctx = prepared(position(block("P", "axis", "El Agheila", unit="Brescia", cv=4),
                                 block("Q", "axis", "El Agheila", unit="Brescia", cv=3)))
    full = ctx.roster.get("Brescia")
    assert pos.block("P").cv == full.max_cv
    ledger = bu.open_ledger("axis", 30)
    zero = bu.check_spend(ctx, pos, ledger, bu.Replace("Q", 0))
    assert "at least one Replacement step" in [p.message for p in zero]
    one = bu.check_spend(ctx, pos, ledger, bu.Replace("P", 1))
    assert rules_of(one) == ["RB 16.54"] and "above its full strength" in one[0].message
    assert bu.check_spend(ctx, pos, ledger, bu.Replace("Q", 1)) == []


def test_rb_16_53_applying_an_unchecked_sea_redeployment_from_a_besieged_port_raises() -> None:
    """RB 16.53, 13.5: the Axis may not Sea Redeploy from a besieged Port;
    check refuses it, and apply (which never re-checks) refuses to run on it."""
    pos, ctx = prepared(position(block("A", "axis", "Tobruk", unit="Brescia", cv=4),
                                 block("L", "allied", "Tobruk E1", unit="7 SG", cv=3),
                                 fortresses={"Tobruk": "axis", "Benghazi": "axis"}))
    ledger = bu.open_ledger("axis", 30)
    action = bu.SeaRedeploy("A", at("Benghazi"))
    assert "RB 16.53" in rules_of(bu.check_spend(ctx, pos, ledger, action))
    with pytest.raises(ValueError, match="unchecked Sea Redeployment"):
        bu.apply_spend(ctx, pos, ledger, action)
