"""Issue 10 point 5 through the engine: a tampered client's deck messages are
signed events; the honest receiver refuses them at once where it can
(``check_step``, keys against their commitments, the deals the rules ask
for), and the audit names the rest (a substituted card) with the event and
its signer.

Set-up: the Demo after both set-ups, hands not yet kept. The Axis's next
event carries the fourth step of the first shuffle (the Allied initial hand
dealt with it) and its 'keep hand'. The tampered client is the same code
with a patch while it composes its event (its own pbem would refuse it); the
patch is gone when the Allied player receives it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import pbem.deck as D
from pbem import session
from pbem.errors import IllegalAction
from pbem.game import AUDIT, Replay
from rules.ritd import RULES as RITD
from rules.ritd.cards import Hand
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")


@pytest.fixture
def table(tmp_path):
    t = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied(), keep_hands=False)
    assert t.pending().kind == "deck" and t.pending().role == "axis"
    return t


def _tampered_axis_event(table, monkeypatch, mutate_step=None, mutate_keys=None) -> bytes:
    """The Axis sends 'keep hand' with its step 4 changed by ``mutate_step``
    (Step -> Step) or its dealing keys by ``mutate_keys``; its own checks are off."""
    honest = D.make_step
    honest_open = D.open_key

    def make_step(*args, **kwargs):
        step = honest(*args, **kwargs)
        return mutate_step(step) if mutate_step and step.step == 4 else step

    def open_key(group, game, rnd, seed, step, index):
        k = honest_open(group, game, rnd, seed, step, index)
        return mutate_keys(k, lambda i: honest_open(group, game, rnd, seed, step, i)) if mutate_keys else k

    with monkeypatch.context() as cheat:
        cheat.setattr(D, "make_step", make_step)
        cheat.setattr(D, "open_key", open_key)
        cheat.setattr(D, "check_step", lambda *a, **k: None)
        cheat.setattr(D, "check_key", lambda group, game, rnd, o: int(o.key, 16))
        seat = table.axis.seat()
        session.add_orders(seat, ["keep hand"])
        return Path(session.send(seat).turn_file).read_bytes()


def _refused(table, data) -> str:
    with pytest.raises(IllegalAction) as err:
        table.deliver(table.allied, data)
    return str(err.value) + " ".join(getattr(err.value, "details", []) or [])


def _cards(step, cards):
    import msgspec
    return msgspec.structs.replace(step, cards=cards)


def test_a_malformed_point_in_a_shuffle_step_is_refused_at_receipt(table, monkeypatch):
    bad = "02" + "00" * 31  # s = 2: no Ristretto255 element (nor an Ed25519 point) has this encoding
    data = _tampered_axis_event(table, monkeypatch, mutate_step=lambda s: _cards(s, [bad] + s.cards[1:]))
    text = _refused(table, data)
    assert "by axis" in text and "step 4" in text and D.PLAY.not_element in text


def test_a_shuffle_that_duplicates_a_card_is_refused_at_receipt(table, monkeypatch):
    data = _tampered_axis_event(table, monkeypatch,
                                mutate_step=lambda s: _cards(s, [s.cards[0], s.cards[0]] + s.cards[2:]))
    text = _refused(table, data)
    assert "by axis" in text and "two cards are the same element" in text


def test_a_shuffle_that_drops_a_card_is_refused_at_receipt(table, monkeypatch):
    data = _tampered_axis_event(table, monkeypatch, mutate_step=lambda s: _cards(s, s.cards[:-1]))
    assert "41 cards, the round has 42" in _refused(table, data)


def test_a_key_not_bound_to_its_card_is_refused_at_receipt(table, monkeypatch):
    """The Axis deals the Allied card at position 6 with its key of position 7."""
    import msgspec

    def shift(k, other):
        if k.step == 4 and k.index == 6:
            return msgspec.structs.replace(other(7), index=6)
        return k

    text = _refused(table, _tampered_axis_event(table, monkeypatch, mutate_keys=shift))
    assert "by axis" in text and "key for index 6 does not open its commitment" in text


def test_dealing_a_card_already_dealt_is_refused_at_receipt(table):
    """After the Axis redraw, a tampered Allied client deals the Axis a card of
    its first hand again (position 0, with the genuine Allied key of that
    position) instead of the next one; the event is re-signed."""
    import msgspec

    from pbem import codec
    table.play("axis", "redraw")
    seat = table.allied.seat()
    session.add_orders(seat, ["keep hand"])
    sent = session.send(seat)
    from pbem.turnfile import parse_turn
    stored = parse_turn(Path(sent.turn_file).read_bytes()).events[-1]
    body = codec.decode_body(codec.unwrap(stored).body)
    seed = bytes.fromhex(seat.vault.secrets[D.seed_label("s1", "allied")].value)
    actions = []
    for raw in body.actions:
        if b'"deck-keys"' in bytes(raw):
            keys = msgspec.json.decode(bytes(raw), type=D.DeckKeys)
            again = D.open_key(D.PLAY, seat.replay.game_id, "s1", seed, 3, 0)
            raw = codec.raw(msgspec.structs.replace(keys, deal=[again] + keys.deal[1:]))
        actions.append(raw)
    forged = session._sign(table.allied.identity, msgspec.structs.replace(body, actions=actions))
    axis = table.axis.seat()
    with pytest.raises(IllegalAction) as err:
        axis.replay.clone().apply_stored(forged)
    assert "by allied" in str(err.value) and "deals positions [0, 10, 11, 12, 13, 14]" in str(err.value)
    # and were the rules to ask for it, the engine refuses a position dealt before
    twin = axis.replay.clone()
    twin.ledger.dealt[("s1", 9)] = "axis"
    with pytest.raises(IllegalAction, match="position 9 dealt twice"):
        twin.apply_stored(stored)


def test_a_substituted_card_is_named_by_the_audit(table, monkeypatch):
    """Step 4 with one card replaced by another valid point (the receiver cannot
    tell): the audit, with both seeds, names round s1 step 4 and the Axis."""
    def substitute(s):
        x = D.parse_elem(D.PLAY, s.cards[40])
        return _cards(s, s.cards[:40] + [D.elem_hex(D.PLAY, D.PLAY.exp(x, 2))] + s.cards[41:])

    data = _tampered_axis_event(table, monkeypatch, mutate_step=substitute)
    table.deliver(table.allied, data)  # accepted: only the keys show it
    known = {**table.axis.seat().vault.known_values(), **table.allied.seat().vault.known_values()}
    r = Replay(RITD, role=AUDIT, known=known)
    for stored in table.allied.gd.read_events():
        r.apply_stored(stored)
    with pytest.raises(D.DeckError) as err:
        r.deck_audit()
    assert (err.value.round, err.value.step, err.value.author) == ("s1", 4, "axis")
    assert "card 40 is not the step-3 card" in str(err.value)
    assert r.deck_event(err.value).startswith(f"event {r.ledger.where[('s1', 4)][0]} by axis")


def test_the_honest_deal_audits_with_the_game_invariants(table):
    table.play("axis", "keep hand")
    table.play("allied", "keep hand")
    known = {**table.axis.seat().vault.known_values(), **table.allied.seat().vault.known_values()}
    r = Replay(RITD, role=AUDIT, known=known)
    for stored in table.allied.gd.read_events():
        r.apply_stored(stored)
    [s1] = r.deck_audit()
    assert sum(lb.startswith("real") for lb in s1.labels) == 28 and len(s1.labels) == 42
    assert s1.holders[:9] == ["axis"] * 6 + ["allied"] * 3 and not any(s1.holders[9:])
    assert r.state.hands["axis"] == Hand(count=6, real=4)
