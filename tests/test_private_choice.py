"""The engine's private randomness for a player's own hidden choices (issue 27
point 3; pbem/private.py, docs/protocol.md decision 25): uniform, repeatable
at the same place, independent between places, keyed by a secret nobody
else holds, and reaching the rules only through the compose ctx."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from pbem import session
from pbem.identity import Identity
from pbem.private import PrivateChoices, key_of
from pbem.vault import _key as vault_key


def _choices(key: bytes, seq: int = 5, index: int = 0, game: str = "g" * 64, role: str = "axis") -> PrivateChoices:
    return PrivateChoices(key, game, role, seq, index)


def test_a_sample_is_k_distinct_increasing_indices_of_range_n():
    c = _choices(bytes(32))
    for n in range(0, 9):
        for k in range(0, n + 1):
            got = c.sample("p", n, k)
            assert len(got) == k and list(got) == sorted(set(got)) and all(0 <= i < n for i in got)
    assert c.sample("p", 4, 4) == (0, 1, 2, 3)
    assert c.sample("p", 4, 0) == ()


@pytest.mark.parametrize(("n", "k"), [(3, 4), (2, -1)])
def test_an_impossible_sample_is_refused(n, k):
    with pytest.raises(ValueError, match=f"cannot choose {k} of {n}"):
        _choices(bytes(32)).sample("p", n, k)


def test_every_subset_is_equally_likely():
    """Over 6,000 keys, each of the C(5,2) = 10 subsets of a sample of 2 of 5
    comes up within 5 standard deviations of 600 times (a biased draw, e.g.
    the first k or a modulo on a small word, fails), and a chi-square over the
    10 cells stays below its 0.1% point (27.9 for 9 degrees of freedom)."""
    trials = 6000
    counts = Counter(_choices(i.to_bytes(32, "big")).sample("cards", 5, 2) for i in range(trials))
    subsets = list(itertools.combinations(range(5), 2))
    assert set(counts) == set(subsets)
    expected = trials / len(subsets)
    sd = (expected * (1 - 1 / len(subsets))) ** 0.5
    assert all(abs(counts[s] - expected) < 5 * sd for s in subsets), counts
    chi2 = sum((counts[s] - expected) ** 2 / expected for s in subsets)
    assert chi2 < 27.9, (chi2, counts)


def test_the_same_place_chooses_the_same_and_other_places_choose_afresh():
    key = bytes(range(32))
    first = [_choices(key).sample("cards", 20, 5) for _ in range(2)]
    assert first[0] == first[1]  # composed again after an undo: the same choice
    c = _choices(key)
    assert c.sample("cards", 20, 5) == first[0]
    assert c.sample("cards", 20, 5) != first[0]  # a second sample of the same order draws afresh
    others = [_choices(key, seq=6).sample("cards", 20, 5), _choices(key, index=1).sample("cards", 20, 5),
              _choices(key, role="allied").sample("cards", 20, 5), _choices(key, game="h" * 64).sample("cards", 20, 5),
              _choices(key).sample("discard", 20, 5), _choices(bytes(32)).sample("cards", 20, 5)]
    assert all(o != first[0] for o in others)  # C(20,5) = 15,504: a clash by chance is rare


def test_without_a_key_the_stream_is_fresh_each_time():
    draws = {PrivateChoices(None, "g", "axis", 1, 0).sample("cards", 30, 6) for _ in range(5)}
    assert len(draws) > 1


def test_the_key_is_the_identitys_own_and_not_the_vault_key():
    alice, bob = Identity.generate(), Identity.generate()
    assert len(key_of(alice)) == 32 and key_of(alice) == key_of(alice)
    assert key_of(alice) != key_of(bob)
    assert key_of(alice) != vault_key(alice, "game", "axis")


def test_the_compose_ctx_hands_the_rules_the_players_private_stream():
    class Replayed:  # what ActingAs reads of a replay's ctx
        role, seq, author = "axis", 3, "axis"

    key = key_of(Identity.generate())
    ctx = session._ComposeCtx(Replayed(), PrivateChoices(key, "g", "axis", 4, 2))  # type: ignore[arg-type]
    assert ctx.private_sample("cards", 12, 3) == PrivateChoices(key, "g", "axis", 4, 2).sample("cards", 12, 3)
