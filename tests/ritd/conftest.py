"""Supply Cards in the RitD game tests: the shared deck (pbem.deck) is
dealt in a fixed order so that of the first round's cards every third is a
dummy and the others are real (the Demo's Axis hand of 6 holds 4 real
cards, the Allied hand of 3 holds 2), unless a test asks for the real
shuffle (``@pytest.mark.random_cards``), so that scripted turns never
depend on the luck of the deal. The rig leaves every check in place: both
players' shuffles are permutations (the identity) with committed keys, so
the receiver's checks and the audit run as in play. The hook stays in place
for the whole test: every replay of the log (the audit's too) must see the
same cards."""

from __future__ import annotations

import pytest

import pbem.deck
from pbem import rulesapi
from rules.ritd import RULES as RITD
from rules.ritd import cards as cd


@pytest.fixture
def registered_ritd():
    """The rules module registered in-process as 'ritd' (the installed entry
    point is the package rules.ritd, which serves the same functions)."""
    rulesapi.register(RITD)
    yield
    rulesapi.unregister("ritd")


@pytest.fixture(autouse=True)
def _real_cards(request, monkeypatch):
    if request.node.get_closest_marker("random_cards"):
        return
    monkeypatch.setattr(pbem.deck, "_permutation", lambda group, game, rnd, seed, n: list(range(n)))
    plain = cd.deck_labels

    def interleaved(deck):
        labels = plain(deck)
        reals, dummies = list(labels[:deck.real]), list(labels[deck.real:])
        out = []
        while reals or dummies:
            out += reals[:2] + dummies[:1]
            reals, dummies = reals[2:], dummies[1:]
        return tuple(out)

    monkeypatch.setattr(cd, "deck_labels", interleaved)
