"""Invariants of BP spending (RB 16.5) and Redeployment legs (RB 16.51)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules.ritd import buildup as bu
from rules.ritd import supply_checks
from rules.ritd.scenarios import load_scenarios
from tests.ritd.movement_support import MAP, at, block, position

SCENARIOS = load_scenarios()
POS, _ = supply_checks.buildup_supply_check(MAP, position(
    block("P", "axis", "El Agheila", unit="21Pz/5", cv=2), block("Q", "axis", "El Agheila", unit="Brescia", cv=1),
    block("R", "axis", "Agedabia", unit="Trento", cv=1), block("L", "allied", "Alexandria"),
    fortresses={"Benghazi": "axis", "Tobruk": "axis"}))
CTX = bu.BuildupContext(MAP, bu.buildup_networks(MAP, POS), SCENARIOS.roster)
HIGHWAY = MAP.road_path(at("El Agheila"), at("Tobruk"), ("highway",)) or ()

actions = st.one_of(
    st.builds(bu.BuySupply, st.integers(-1, 4)),
    st.builds(bu.Replace, st.sampled_from(["P", "Q", "R", "L", "nobody"]), st.integers(-1, 3)),
    st.builds(bu.Redeploy, st.sampled_from(["Q", "R"]),
              st.integers(1, 12).map(lambda n: HIGHWAY[:n + 1])),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 24), st.integers(0, 20), st.lists(actions, max_size=10))
def test_rb_16_5_ledger_never_negative_and_never_saves_more_than_20(received: int, saved: int,
                                                                      plan: list[bu.SpendAction]) -> None:
    pos, ledger = POS, bu.open_ledger("axis", received, saved)
    for action in plan:
        problems = bu.check_spend(CTX, pos, ledger, action)
        if problems:
            assert all(p.rule.startswith("RB ") for p in problems)
            continue
        before = ledger.available
        done = bu.apply_spend(CTX, pos, ledger, action)
        pos, ledger = done.pos, done.ledger
        assert 0 <= ledger.available <= before
    closing = bu.close_ledger(ledger)
    assert 0 <= closing.saved <= bu.SAVE_LIMIT
    assert closing.saved + closing.lost == ledger.available
    assert ledger.spent + ledger.available == received + saved


@given(st.integers(0, 24), st.integers(-1, 5))
def test_rb_16_5_buying_cards_is_refused_exactly_when_unaffordable(bp: int, cards: int) -> None:
    ledger = bu.open_ledger("allied", bp)
    refused = bu.check_buy_supply(ledger, bu.BuySupply(cards)) != []
    assert refused == (cards < 1 or cards * bu.SUPPLY_CARD_BP > bp)


def _fewest_legs(path: tuple[str, ...]) -> int:
    best = [0] + [10**9] * (len(path) - 1)
    for j in range(1, len(path)):
        for i in range(j):
            if bu.leg_ok(MAP, path[i:j + 1]):
                best[j] = min(best[j], best[i] + 1)
    return best[-1]


@st.composite
def walks(draw: st.DrawFn) -> tuple[str, ...]:
    start = draw(st.sampled_from(sorted(MAP.highway_hexes())))
    path = [start]
    for _ in range(draw(st.integers(1, 12))):
        options = sorted(n for n in MAP.passable_neighbours(path[-1]) if n not in path)
        if not options:
            break
        path.append(draw(st.sampled_from(options)))
    return tuple(path)


@settings(max_examples=150, deadline=None)
@given(walks())
def test_rb_16_51_legs_cover_the_path_and_are_fewest(path: tuple[str, ...]) -> None:
    legs = bu.redeployment_legs(MAP, path)
    assert legs[0][0] == path[0] and legs[-1][-1] == path[-1]
    assert sum(len(leg) - 1 for leg in legs) == len(path) - 1
    assert all(bu.leg_ok(MAP, leg) for leg in legs)
    assert len(legs) == _fewest_legs(path) == bu.redeployment_cost(MAP, path)
