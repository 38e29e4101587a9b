"""The engine's side of forced steps (issue 21 point 5): pbem takes a step
only when the rules declare it forced in the public view (``Rules.forced_order``)
AND its legal orders are exactly that order AND it commits no new secret."""

from __future__ import annotations

from pbem import session
from tests.race import rules as race


def test_a_step_the_rules_call_forced_but_that_offers_a_choice_is_not_taken(table, monkeypatch):
    monkeypatch.setattr(type(race.RULES), "forced_order", lambda self, state, role, ctx: "pass", raising=False)
    red = table.red.seat()
    assert len(session.legal_orders(red)) > 1
    assert session.automatic_orders(red.replay, "red", red.vault) is None


def test_a_forced_order_that_commits_a_secret_is_not_taken(table, monkeypatch):
    red = table.red.seat()
    # 'scout' commits a fresh secret (RACE): legal now, but never given by pbem itself.
    orders, _ = session.compose_orders(red.rules, red.replay, "red", red.vault, [], ["scout"])
    assert orders[-1].secrets
    monkeypatch.setattr(type(race.RULES), "forced_order", lambda self, state, role, ctx: "scout", raising=False)
    monkeypatch.setattr(type(race.RULES), "legal_orders", lambda self, state, role, ctx: ["scout"])
    assert session.automatic_orders(red.replay, "red", red.vault) is None


def test_a_forced_order_is_taken_and_the_default_takes_nothing(table, monkeypatch):
    red = table.red.seat()
    assert session.automatic_orders(red.replay, "red", red.vault) is None  # the default hook: None
    table.play("red", "advance 1", "pass")
    blue = table.blue.seat()
    monkeypatch.setattr(type(race.RULES), "forced_order",
                        lambda self, state, role, ctx: "advance 1" if state.phase == "move" else "pass", raising=False)
    monkeypatch.setattr(type(race.RULES), "legal_orders",
                        lambda self, state, role, ctx: ["advance 1"] if state.phase == "move" else ["pass"])
    orders = session.automatic_orders(blue.replay, "blue", blue.vault)
    assert orders is not None and [o.text for o in orders] == ["advance 1", "pass"]


def test_the_contract_defaults_say_nothing_more(table):
    from pbem.rulesapi import Rules

    red = table.red.seat()
    assert Rules.not_now(race.RULES, red.replay.state, "red", "frobnicate") == []
    assert Rules.forced_order(race.RULES, red.replay.state, "red", red.replay.ctx("red")) is None
