"""Supply Cards in the RitD game tests: of each batch of cards drawn, every
third is a dummy and the others are real (the Demo's Axis hand of 6 holds 4
real cards, the Allied hand of 3 holds 2), unless a test asks for the
engine's real draws (``@pytest.mark.random_cards``), so that scripted turns
never depend on the luck of the deal. The hook stays in
place for the whole test: every replay of the log (the audit's too) must
see the same cards."""

from __future__ import annotations

import pytest

import pbem.game
from pbem import rulesapi
from rules.ritd import game as ritd


@pytest.fixture
def registered_ritd():
    """The rules module registered in-process as 'ritd' (the installed entry
    point is the package rules.ritd, which serves the same functions)."""
    rulesapi.register(ritd)
    yield
    rulesapi.unregister("ritd")


@pytest.fixture(autouse=True)
def _real_cards(request, monkeypatch):
    if request.node.get_closest_marker("random_cards"):
        return
    real = pbem.game.roll_one
    deck = ritd._deck()

    def roll_one(game, event_hash, index, x_p, x_q, sides):
        if sides != deck.total:
            return real(game, event_hash, index, x_p, x_q, sides)
        return deck.total if index % 3 == 2 else 1

    monkeypatch.setattr(pbem.game, "roll_one", roll_one)
