"""The exact shared deck in the group of play: Ed25519's prime-order subgroup
(pbem/deck.py ``ED25519``, libsodium through PyNaCl). The same functions as
the MODP tests (tests/test_deck.py), in the group a game uses: a full round
of 42 cards, draws, a reshuffle with carried cards, the audit, and the
cheats of issue 10 point 5."""

from __future__ import annotations

import msgspec
import pytest

from pbem import deck as D
from tests.test_deck import _is_prime

G = D.ED25519
GAME = bytes(range(32))
AUTHORS = ("axis", "allied")
LABELS = [f"real-{i:02d}" for i in range(28)] + [f"dummy-{i:02d}" for i in range(14)]


def seeds(tag: str) -> tuple[bytes, bytes]:
    return (D.hash_parts(b"ed-seed-a", tag.encode()), D.hash_parts(b"ed-seed-b", tag.encode()))


def run_round(name, sources, sa, sb, history, old=({}, {})):
    done: list[D.Step] = []
    resolve = D.history_resolver(G, history)
    for i in range(4):
        seed, olds = (sa, old[0]) if i % 2 == 0 else (sb, old[1])
        step = D.make_step(G, GAME, name, sources, done, seed, resolve, olds)
        D.check_step(G, sources, done, step)
        done.append(step)
    history[name] = D.DeckRound(steps=done)
    return history[name]


def openings(name, sa, sb, n):
    return D.open_all(G, GAME, name, sa, D.FIRST, n) + D.open_all(G, GAME, name, sb, D.SECOND, n)


@pytest.fixture(scope="module")
def ed_round():
    sa, sb = seeds("r1")
    history: dict[str, D.DeckRound] = {}
    rnd = run_round("r1", [D.Card(label=lb) for lb in LABELS], sa, sb, history)
    return history, rnd, sa, sb


def test_group_order_is_prime_and_the_base_point_has_it():
    from nacl.bindings import crypto_scalarmult_ed25519_base_noclamp, crypto_scalarmult_ed25519_noclamp
    assert D.ED25519_L == 2**252 + 27742317777372353535851937790883648493
    assert _is_prime(D.ED25519_L, rounds=16)
    b = crypto_scalarmult_ed25519_base_noclamp((1).to_bytes(32, "little"))
    base = int.from_bytes(b, "big")
    assert G.is_element(base)
    # (l + 1) B = B: the base point has order l (libsodium's noclamp does not reduce the scalar)
    assert crypto_scalarmult_ed25519_noclamp((D.ED25519_L + 1).to_bytes(32, "little"), b) == b
    assert G.exp(G.exp(base, 5), pow(5, -1, G.q)) == base


def test_cards_are_distinct_valid_points():
    elems = D.encode_deck(G, GAME, LABELS)
    assert len(set(elems)) == 42 and all(G.is_element(x) for x in elems)
    assert D.encode_card(G, GAME, "real-00") != D.encode_card(G, bytes(32), "real-00")
    assert D.decode_card(G, GAME, LABELS, elems[7]) == LABELS[7]


def test_full_round_draw_and_audit(ed_round):
    history, rnd, sa, sb = ed_round
    hands: dict[int, list[str]] = {D.FIRST: [], D.SECOND: []}
    draws = []
    for pos in range(12):
        drawer = pos % 2
        key = D.deal_key(G, GAME, "r1", sb if drawer == D.FIRST else sa, drawer, pos)
        hands[drawer].append(D.draw_card(G, GAME, history, "r1", pos, drawer, sa if drawer == D.FIRST else sb, key))
        draws.append(D.Draw(round="r1", pos=pos, to=AUTHORS[drawer]))
    [dealt] = D.audit_deck(G, GAME, [rnd], openings("r1", sa, sb, 42), draws, AUTHORS)
    assert sorted(dealt.labels) == sorted(LABELS)
    assert [dealt.labels[p] for p in range(0, 12, 2)] == hands[D.FIRST]
    assert [dealt.labels[p] for p in range(1, 12, 2)] == hands[D.SECOND]
    k1 = D.own_key(G, GAME, "r1", sa, D.FIRST, 0)
    assert D.verify_open(G, GAME, history, "r1", 0, k1, D.deal_key(G, GAME, "r1", sb, D.FIRST, 0)) == hands[0][0]


def test_reshuffle_with_carried_cards_audits(ed_round):
    history, rnd, sa, sb = ed_round
    history = dict(history)
    sa2, sb2 = seeds("r2")
    sources = [D.Carry(round="r1", pos=k) for k in range(10, 42)] + [D.Card(label="spent-x")]
    rnd2 = run_round("r2", sources, sa2, sb2, history, ({"r1": sa}, {"r1": sb}))
    ops = openings("r1", sa, sb, 42) + openings("r2", sa2, sb2, len(sources))
    r1, r2 = D.audit_deck(G, GAME, [rnd, rnd2], ops, [], AUTHORS)
    assert sorted(r2.labels) == sorted(r1.labels[10:] + ["spent-x"])
    got = D.draw_card(G, GAME, history, "r2", 0, D.FIRST, sa2, D.deal_key(G, GAME, "r2", sb2, D.FIRST, 0))
    assert got == r2.labels[0]


# --- issue 10 point 5: cheats -------------------------------------------------------------

def _replace_card(step, k, value):
    cards = list(step.cards)
    cards[k] = value
    return msgspec.structs.replace(step, cards=cards)


def test_substituted_card_value_during_encryption_is_caught_at_the_audit(ed_round):
    """First encrypts another card's value (a valid point: receive cannot tell) in step 1."""
    history, rnd, sa, sb = ed_round
    a = D.round_key(G, GAME, "r1", sa, 1, 0)
    forged = D.elem_hex(G, G.exp(D.encode_card(G, GAME, "real-99"), a))
    steps = [_replace_card(rnd.steps[0], 30, forged)] + list(rnd.steps[1:])
    D.check_step(G, rnd.steps[0].sources, [], steps[0])
    with pytest.raises(D.DeckError, match="card 30 is not the input card") as err:
        D.audit_deck(G, GAME, [D.DeckRound(steps=steps)], openings("r1", sa, sb, 42), [], AUTHORS)
    assert (err.value.step, err.value.author) == (1, "axis")


def test_shuffle_that_duplicates_a_card_is_caught(ed_round):
    history, rnd, sa, sb = ed_round
    bad = _replace_card(rnd.steps[1], 5, rnd.steps[1].cards[4])
    with pytest.raises(D.DeckError, match="two cards are the same element") as err:
        D.check_step(G, rnd.steps[0].sources, rnd.steps[:1], bad)
    assert err.value.step == 2


def test_shuffle_that_drops_a_card_for_a_reencrypted_copy_is_caught(ed_round):
    """Second replaces card 5 by card 4 under an extra factor: all points distinct
    and valid at receive; the audit finds no input card for it."""
    history, rnd, sa, sb = ed_round
    x = D.parse_elem(G, rnd.steps[1].cards[4])
    bad = _replace_card(rnd.steps[1], 5, D.elem_hex(G, G.exp(x, 2)))
    D.check_step(G, rnd.steps[0].sources, rnd.steps[:1], bad)
    steps = [rnd.steps[0], bad] + list(rnd.steps[2:])
    with pytest.raises(D.DeckError, match="not any input card") as err:
        D.audit_deck(G, GAME, [D.DeckRound(steps=steps)], openings("r1", sa, sb, 42), [], AUTHORS)
    assert (err.value.step, err.value.author) == (2, "allied")
    short = msgspec.structs.replace(rnd.steps[1], cards=rnd.steps[1].cards[:-1])
    with pytest.raises(D.DeckError, match="41 cards"):
        D.check_step(G, rnd.steps[0].sources, rnd.steps[:1], short)


def test_opening_with_a_key_not_bound_to_the_card_is_refused(ed_round):
    history, rnd, sa, sb = ed_round
    moved = D.deal_key(G, GAME, "r1", sb, D.FIRST, 3)
    with pytest.raises(D.DeckError, match="does not open its commitment"):
        D.check_key(G, GAME, rnd, msgspec.structs.replace(moved, index=4))
    with pytest.raises(D.DeckError, match="not step 4 index 2"):
        D.draw_card(G, GAME, history, "r1", 2, D.FIRST, sa, moved)
    fresh = D.open_key(G, GAME, "r1", D.new_seed(), 4, 3)
    with pytest.raises(D.DeckError, match="does not open its commitment"):
        D.draw_card(G, GAME, history, "r1", 3, D.FIRST, sa, fresh)


def test_dealing_the_same_card_twice_is_caught(ed_round):
    history, rnd, sa, sb = ed_round
    draws = [D.Draw(round="r1", pos=2, to="axis"), D.Draw(round="r1", pos=2, to="allied")]
    with pytest.raises(D.DeckError, match="dealt twice"):
        D.audit_deck(G, GAME, [rnd], openings("r1", sa, sb, 42), draws, AUTHORS)


def _small_order_point() -> str:
    # the point of order 2, (0, -1): y = p - 1 little-endian
    return ((2**255 - 19) - 1).to_bytes(32, "little").hex()


@pytest.mark.parametrize("bad,why", [
    ("01" + "00" * 31, "identity"),
    (_small_order_point(), "small order"),
    ("ff" * 32, "not canonical"),
    ("02" + "00" * 31, "not on the curve"),
    ("00" * 31, "short"),
])
def test_malformed_points_are_rejected_at_receive(ed_round, bad, why):
    history, rnd, sa, sb = ed_round
    step = _replace_card(rnd.steps[3], 0, bad)
    with pytest.raises(D.DeckError, match="prime-order subgroup|hex digits") as err:
        D.check_step(G, rnd.steps[0].sources, rnd.steps[:3], step)
    assert err.value.step == 4
