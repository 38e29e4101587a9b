"""The Replay's public API (issue 18 point 3): forks are independent, the fold
round-trips through its plain form (``snapshot``/``restored``), and a draft
composed order by order (``session.Composer``) is the draft the whole-draft
path composes, byte for byte, with the same refusals."""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path
from typing import Any

import msgspec
import pytest

from pbem import codec, session
from pbem.deck import DECK
from pbem.errors import IllegalAction, PbemError
from pbem.game import Replay
from pbem.ledger import DeckLedger
from pbem.vault import VaultData
from tests.race import rules as race


@pytest.fixture
def fixed_randomness(monkeypatch):
    """Secret salts, fresh tokens and deck seeds from a counter, so that two ways
    of composing the same orders can be compared byte for byte."""
    counter = itertools.count()

    def fake(n: int) -> bytes:
        out = b""
        while len(out) < n:
            out += hashlib.sha256(next(counter).to_bytes(8, "big")).digest()
        return out[:n]

    def reset() -> None:
        nonlocal counter
        counter = itertools.count()

    monkeypatch.setattr(session.os, "urandom", fake)  # every seed of the deck too (deck.new_seed)
    return reset


def _whole_path(rules: Any, replay: Replay, role: str, data: VaultData, texts: list[str]) -> list[session.DraftOrder]:
    """parse_orders as it was before the Composer: every text folds the whole
    draft (with its deck work), then the whole draft with the new order."""
    orders: list[session.DraftOrder] = []
    for text in texts:
        while True:
            probe = session.simulate_draft(replay, role, data, orders, None)
            decision = probe.pending()
            if decision is None or decision.role != role or decision.kind != DECK:
                break
            orders.append(session._deck_order(probe, role, session._with_secrets(data, orders)))
        order = rules.parse_order(probe.state, role, text, session._ComposeCtx(probe.ctx(role)))
        candidate = session.DraftOrder(text=text, action=codec.raw(order.action), secrets=session._secret_map(order),
                                       reveal=list(order.reveal), leaves=[(a, b) for a, b in order.open_leaves])
        session.simulate_draft(replay, role, session._with_secrets(data, orders + [candidate]),
                               orders + [candidate], None)
        orders.append(candidate)
    return orders


def _body_bytes(replay: Replay, role: str, data: VaultData, orders: list[session.DraftOrder]) -> bytes:
    merged = session._with_secrets(data, orders)
    return codec.canonical(session._body(replay, role, merged, orders, x_next=bytes(32)))


# -- fork, simulate, snapshot ------------------------------------------------------------


def test_applying_to_a_fork_leaves_the_original_unchanged(table):
    table.play("red", "advance 1", "pass")
    seat = table.blue.seat()
    r = seat.replay
    before = msgspec.json.encode(r.snapshot())
    orders = session.parse_orders(seat.rules, r, "blue", seat.vault, [], ["advance 1", "pass"])
    body = session._body(r, "blue", session._with_secrets(seat.vault, orders), orders, x_next=bytes(32))
    stored = session._sign(table.blue.identity, body)
    twin = r.fork()
    twin.apply_stored(stored)
    assert twin.seq == r.seq + 1 and twin.history[-1].author == "blue"
    assert msgspec.json.encode(r.snapshot()) == before
    # and the other way round: the original moves on, an older fork does not
    fork = r.fork()
    r.apply_stored(stored)
    assert r.seq == fork.seq + 1
    assert msgspec.json.encode(fork.snapshot()) == before
    assert r.snapshot() == twin.snapshot()


def test_simulate_is_a_fork_with_the_body_applied(table):
    seat = table.red.seat()
    orders = session.parse_orders(seat.rules, seat.replay, "red", seat.vault, [], ["advance 1", "pass"])
    merged = session._with_secrets(seat.vault, orders)
    known = seat.replay.with_known(merged.known_values())
    body = session._body(known, "red", merged, orders, x_next=bytes(32))
    before = msgspec.json.encode(known.snapshot())
    after = known.simulate(body)
    assert after.seq == known.seq + 1 and msgspec.json.encode(known.snapshot()) == before
    assert after.snapshot() == session.simulate_draft(seat.replay, "red", seat.vault, orders, None).snapshot()


def test_the_fold_round_trips_through_its_plain_form(table):
    table.play("red", "dash")
    table.play("red", "attack")
    r = table.red.seat().replay
    data = r.snapshot()
    again = msgspec.json.decode(msgspec.json.encode(data), type=type(data))
    base = Replay(r.rules, role=r.role, known=r.known)
    base.open_genesis(table.red.gd.read_event(0))
    restored = base.restored(again)
    assert restored.snapshot() == data
    assert (restored.state, restored.commitments, restored.opened, restored.dice_origin, restored.ledger) == \
        (r.state, r.commitments, r.opened, r.dice_origin, r.ledger)


def test_an_empty_ledger_round_trips_and_forks_apart():
    ledger = DeckLedger()
    assert DeckLedger.from_data(ledger.data()) == ledger and not ledger
    twin = ledger.fork()
    twin.dealt[("s1", 0)] = "red"
    assert ledger.dealt == {}


# -- composing order by order ------------------------------------------------------------


def _turn(table) -> tuple[session.Seat, list[str]]:
    table.play("red", "advance 1", "pass")
    return table.blue.seat(), ["reveal", "advance 3", "pass"]


def test_incremental_compose_gives_the_whole_path_bytes_race(table, fixed_randomness):
    seat, texts = _turn(table)
    fixed_randomness()
    whole = _whole_path(seat.rules, seat.replay, "blue", seat.vault, texts)
    fixed_randomness()
    orders, comp = session.compose_orders(seat.rules, seat.replay, "blue", seat.vault, [], texts)
    assert comp is not None
    assert msgspec.json.encode(orders) == msgspec.json.encode(whole)
    assert _body_bytes(seat.replay, "blue", seat.vault, orders) == _body_bytes(seat.replay, "blue", seat.vault, whole)
    assert comp.probe.snapshot() == session.simulate_draft(seat.replay, "blue", seat.vault, whole, None).snapshot()


def test_one_order_added_to_a_held_draft_costs_one_rules_step(table, monkeypatch):
    seat = table.red.seat()
    first, comp = session.compose_orders(seat.rules, seat.replay, "red", seat.vault, [], ["advance 1"])
    steps = []
    real = race.RULES.apply
    monkeypatch.setattr(race.RULES, "apply", lambda *a: steps.append(1) or real(*a))
    _, comp2 = session.compose_orders(seat.rules, seat.replay, "red", seat.vault, first, ["pass"], held=comp)
    assert len(steps) == 1 and comp2 is not None and len(comp2.orders) == 2
    assert comp.orders == tuple(first)  # the held composer is unchanged
    steps.clear()
    session.compose_orders(seat.rules, seat.replay, "red", seat.vault, first, ["pass"])
    assert len(steps) == 2  # a new process folds the stored draft once, then adds the order


def test_a_refusal_is_the_same_message_as_the_whole_path(table):
    seat = table.red.seat()
    orders = session.parse_orders(seat.rules, seat.replay, "red", seat.vault, [], ["advance 1"])
    with pytest.raises(IllegalAction) as held:
        session.parse_orders(seat.rules, seat.replay, "red", seat.vault, orders, ["advance 1"])
    probe = session.simulate_draft(seat.replay, "red", seat.vault, orders, None)
    order = race.parse_order(probe.state, "red", "advance 1", probe.ctx("red"))
    candidate = session.DraftOrder(text="advance 1", action=codec.raw(order.action))
    with pytest.raises(PbemError) as whole:
        session.simulate_draft(seat.replay, "red", seat.vault, orders + [candidate], None)
    assert held.value.details == [f"'advance 1': {whole.value}"]


def test_the_seat_keeps_its_composer_through_a_turn(table, monkeypatch):
    seat = table.red.seat()
    starts = []
    real = session.Composer.start.__func__

    def counted(cls, *a):
        starts.append(1)
        return real(cls, *a)

    monkeypatch.setattr(session.Composer, "start", classmethod(counted))
    session.draft_replay(seat)
    session.add_orders(seat, ["advance 1"])
    probe, draft = session.draft_replay(seat)
    session.add_orders(seat, ["pass"])
    assert len(starts) == 1 and len(session.read_draft(seat.gd, "red", seat.replay.seq).orders) == 2
    assert probe.snapshot() == session.simulate_draft(seat.replay, "red", seat.vault, draft.orders, None).snapshot()
    # another process (a new Seat) folds the stored draft once
    session.draft_replay(table.red.seat())
    assert len(starts) == 2


def test_incremental_compose_gives_the_whole_path_bytes_ritd(tmp_path, fixed_randomness):
    """Deployment orders commit a secret each; the Axis's next event begins with deck work."""
    from pbem import rulesapi
    from rules.ritd import RULES as RITD
    from tests.ritd.ritd_table import new_game
    from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

    rulesapi.register(RITD)
    try:
        axis = session.new_game(tmp_path / "axis", "ritd", "demo", "axis", *_ids(tmp_path), orders=DEMO_AXIS)
        host = Replay(RITD, role="allied")
        from pbem.turnfile import parse_turn
        for stored in parse_turn(Path(axis.turn_file).read_bytes()).events:
            host.apply_stored(stored)
        data = VaultData(game=host.game_hex, role="allied")
        texts = demo_allied()
        fixed_randomness()
        whole = _whole_path(RITD, host, "allied", data, texts)
        fixed_randomness()
        orders = session.parse_orders(RITD, host, "allied", data, [], texts)
        assert msgspec.json.encode(orders) == msgspec.json.encode(whole)
        assert _body_bytes(host, "allied", data, orders) == _body_bytes(host, "allied", data, whole)

        t = new_game(tmp_path / "deck", "demo", DEMO_AXIS, demo_allied(), keep_hands=False)
        seat = t.axis.seat()
        assert seat.replay.pending().kind == DECK
        fixed_randomness()
        whole = _whole_path(RITD, seat.replay, "axis", seat.vault, ["keep hand"])
        fixed_randomness()
        orders = session.add_orders(seat, ["keep hand"])
        assert len(orders) > 1 and msgspec.json.encode(orders) == msgspec.json.encode(whole)
    finally:
        rulesapi.unregister("ritd")


def _ids(tmp_path: Path) -> tuple[Any, Path, str]:
    from pbem.identity import Identity, save_identity
    from tests.conftest import PASSPHRASE

    axis, allied = Identity.generate(), Identity.generate()
    save_identity(axis, tmp_path / "axis.key", PASSPHRASE)
    return axis, tmp_path / "axis.key", allied.public_text
