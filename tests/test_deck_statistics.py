"""Issue 10 "done when": the cards dealt from the shared deck behave like a
42-card deck of 28 real and 14 dummy cards dealt without replacement.

Many full rounds go through the real code path of play (pbem.deck in the
Ed25519 group: both players' four steps checked as a receiver checks them,
every card dealt with the opponent's published key and unlocked by the
drawer), with seeds from a fixed seed, so the test is deterministic. The
RitD rules deal from the top of a round (rules.ritd.cards.next_positions).

Checked, with bounds far outside chance (a false failure would need a
deviation beyond 4 standard errors, about 1 in 15,000 per bound; the fixed
seed makes the outcome the same on every run):
- every round deals each of the 42 cards exactly once (28 real in all);
- the number of real cards in a first hand of 6 follows the hypergeometric
  law (chi-square over 0-2 / 3 / 4 / 5 / 6 real cards);
- the spread of real cards in a hand of 16 (the hand limit) is the
  hypergeometric one, 2.25, and not the 3.56 of independent draws (the
  approximation of rules version 2 would fail here);
- each position of the deck holds a real card about 2/3 of the time.
"""

from __future__ import annotations

import math

import pytest

from pbem import deck as D

G = D.PLAY
GAME = bytes(range(32))
LABELS = [f"real-{i:02d}" for i in range(1, 29)] + [f"dummy-{i:02d}" for i in range(1, 15)]
ROUNDS = 120


def _deal_round(i: int) -> list[str]:
    """One round through make_step / check_step, then every position dealt:
    even positions to first (second's key), odd ones to second (first's key)."""
    sa, sb = D.hash_parts(b"stat-a", i.to_bytes(4, "big")), D.hash_parts(b"stat-b", i.to_bytes(4, "big"))
    sources = [D.Card(label=lb) for lb in LABELS]
    name = f"r{i}"
    history: dict[str, D.DeckRound] = {}
    done: list[D.Step] = []
    for k in range(4):
        step = D.make_step(G, GAME, name, sources, done, sa if k % 2 == 0 else sb, D.history_resolver(G, history))
        D.check_step(G, sources, done, step)
        done.append(step)
    history[name] = D.DeckRound(steps=done)
    out = []
    for pos in range(len(LABELS)):
        drawer = D.FIRST if pos % 2 == 0 else D.SECOND
        mine, theirs = (sa, sb) if drawer == D.FIRST else (sb, sa)
        out.append(D.draw_card(G, GAME, history, name, pos, drawer, mine,
                               D.deal_key(G, GAME, name, theirs, drawer, pos)))
    return out


@pytest.fixture(scope="module")
def deals() -> list[list[str]]:
    return [_deal_round(i) for i in range(ROUNDS)]


def _hyper(n: int, k: int, N: int = 42, K: int = 28) -> float:
    return math.comb(K, k) * math.comb(N - K, n - k) / math.comb(N, n)


def test_every_round_deals_each_card_once(deals):
    for cards in deals:
        assert sorted(cards) == sorted(LABELS)


def test_real_cards_in_a_hand_of_6_follow_the_hypergeometric_law(deals):
    counts = [sum(c.startswith("real") for c in cards[:6]) for cards in deals]
    bins = [(0, 1, 2), (3,), (4,), (5,), (6,)]
    chi2 = 0.0
    for b in bins:
        expected = ROUNDS * sum(_hyper(6, k) for k in b)
        observed = sum(c in b for c in counts)
        chi2 += (observed - expected) ** 2 / expected
    assert chi2 < 18.5  # chi-square, 4 degrees of freedom: P(> 18.5) = 0.001


def test_a_hand_of_16_spreads_like_a_deck_without_replacement(deals):
    counts = [sum(c.startswith("real") for c in cards[:16]) for cards in deals]
    mean = sum(counts) / ROUNDS
    var = sum((c - mean) ** 2 for c in counts) / (ROUNDS - 1)
    hyper_mean = 16 * 28 / 42
    hyper_var = 16 * (2 / 3) * (1 / 3) * (42 - 16) / (42 - 1)  # 2.25
    binom_var = 16 * (2 / 3) * (1 / 3)  # 3.56: independent draws
    assert abs(mean - hyper_mean) < 4 * math.sqrt(hyper_var / ROUNDS)
    se = hyper_var * math.sqrt(2 / (ROUNDS - 1))  # about 0.29
    assert abs(var - hyper_var) < 4 * se
    assert var < binom_var - 3 * se


def test_each_position_is_real_two_times_in_three(deals):
    p = 2 / 3
    bound = 4.5 * math.sqrt(p * (1 - p) / ROUNDS)
    for pos in range(42):
        share = sum(cards[pos].startswith("real") for cards in deals) / ROUNDS
        assert abs(share - p) < bound, pos
