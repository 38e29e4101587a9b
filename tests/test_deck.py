"""The exact shared deck (pbem/deck.py): mental poker with per-card keys.

Most tests run in SMALL, a 129-bit safe prime used ONLY IN TESTS: the same
group structure (quadratic residues mod p = 2q + 1, q prime) and the same
code paths, but a modexp costs microseconds instead of ~35 ms. One test deals
a full 42-card deck in the real RFC 3526 2048-bit group; the real-group audit
is marked slow (PBEM_SLOW=1).
"""

from __future__ import annotations

import random

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem import deck as D

#: TEST ONLY: a small safe prime (p = 2q + 1, both prime), p = 3 mod 8.
SMALL = D.Group(0x100000020000000000000000000001D93)
GAME = bytes(range(32))
AUTHORS = ("axis", "allied")
LABELS = [f"real-{i:02d}" for i in range(28)] + [f"dummy-{i:02d}" for i in range(14)]


def _is_prime(n: int, rounds: int = 8) -> bool:
    if n < 4:
        return n in (2, 3)
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    rng = random.Random(n)
    for _ in range(rounds):
        x = pow(rng.randrange(2, n - 1), d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def seeds(tag: str) -> tuple[bytes, bytes]:
    return (D.hash_parts(b"test-seed-a", tag.encode()), D.hash_parts(b"test-seed-b", tag.encode()))


def run_round(group, name, sources, seed_a, seed_b, history, old=({}, {})):
    done: list[D.Step] = []
    resolve = D.history_resolver(group, history)
    for i in range(4):
        seed, olds = (seed_a, old[0]) if i % 2 == 0 else (seed_b, old[1])
        step = D.make_step(group, GAME, name, sources, done, seed, resolve, olds)
        D.check_step(group, sources, done, step)
        done.append(step)
    history[name] = D.DeckRound(steps=done)
    return history[name]


def openings(group, name, sa, sb, n):
    return D.open_all(group, GAME, name, sa, D.FIRST, n) + D.open_all(group, GAME, name, sb, D.SECOND, n)


@pytest.fixture(scope="module")
def small_round():
    sa, sb = seeds("r1")
    history: dict[str, D.DeckRound] = {}
    sources = [D.Card(label=lb) for lb in LABELS]
    rnd = run_round(SMALL, "r1", sources, sa, sb, history)
    return history, rnd, sa, sb


# --- group ---------------------------------------------------------------------

def test_rfc3526_group_is_a_safe_prime_with_generator_2():
    p = D.MODP2048_P
    assert p.bit_length() == 2048 and p % 8 == 7
    assert _is_prime(p, 3) and _is_prime((p - 1) // 2, 3)
    assert pow(2, D.MODP2048.q, p) == 1  # 2 is a residue: it generates the order-q subgroup
    # RFC 3526 form 2^2048 - 2^1984 - 1 + 2^64 * (...): top and bottom 64 bits all ones
    assert p >> 1984 == 2**64 - 1 and p & (2**64 - 1) == 2**64 - 1


def test_small_test_group_is_a_safe_prime():
    assert _is_prime(SMALL.p) and _is_prime(SMALL.q)


def test_jacobi_matches_euler_criterion():
    rng = random.Random(1)
    for _ in range(300):
        x = rng.randrange(1, SMALL.p)
        euler = pow(x, SMALL.q, SMALL.p)
        assert D.jacobi(x, SMALL.p) == (1 if euler == 1 else -1)


def test_encoding_is_distinct_residues_and_domain_separated():
    elems = D.encode_deck(D.MODP2048, GAME, LABELS)
    assert len(set(elems)) == 42
    assert all(D.is_element(D.MODP2048, x) for x in elems)
    assert all(pow(x, D.MODP2048.q, D.MODP2048.p) == 1 for x in elems[:3])  # Euler, independent of jacobi
    assert D.encode_card(D.MODP2048, GAME, "real-00") != D.encode_card(D.MODP2048, bytes(32), "real-00")
    assert D.decode_card(D.MODP2048, GAME, LABELS, elems[5]) == LABELS[5]
    assert D.decode_card(D.MODP2048, GAME, LABELS, 4) is None
    with pytest.raises(ValueError):
        D.encode_deck(SMALL, GAME, ["a", "a"])


@pytest.mark.parametrize("bad", [0, 1, SMALL.p - 1, SMALL.p, SMALL.p + 4])
def test_malformed_elements_are_rejected(bad):
    with pytest.raises(D.DeckError):
        D.parse_elem(SMALL, bad.to_bytes(SMALL.size + (bad >= 1 << (8 * SMALL.size)), "big").hex())


def test_non_residue_is_rejected():
    x = next(x for x in range(2, 100) if D.jacobi(x, SMALL.p) == -1)
    with pytest.raises(D.DeckError, match="quadratic residue"):
        D.parse_elem(SMALL, D.elem_hex(SMALL, x))
    with pytest.raises(D.DeckError, match="hex digits"):
        D.parse_elem(SMALL, "04")


# --- the real group: one full 42-card deal ----------------------------------------

def test_full_deal_of_42_cards_in_the_2048_bit_group():
    g = D.MODP2048
    sa, sb = seeds("real")
    history: dict[str, D.DeckRound] = {}
    sources = [D.Card(label=lb) for lb in LABELS]
    run_round(g, "m1", sources, sa, sb, history)
    hands: dict[int, list[str]] = {D.FIRST: [], D.SECOND: []}
    for pos in range(42):
        drawer = pos % 2
        dealt = D.deal_key(g, GAME, "m1", sb if drawer == D.FIRST else sa, drawer, pos)
        dealt = msgspec.json.decode(msgspec.json.encode(dealt), type=D.KeyOpening)  # over the wire
        hands[drawer].append(D.draw_card(g, GAME, history, "m1", pos, drawer,
                                         sa if drawer == D.FIRST else sb, dealt))
    assert sorted(hands[D.FIRST] + hands[D.SECOND]) == sorted(LABELS)
    assert len(hands[D.FIRST]) == len(hands[D.SECOND]) == 21
    # a card played openly at Supply Revealed: anyone checks it with both keys
    k1 = D.own_key(g, GAME, "m1", sa, D.FIRST, 0)
    k2 = D.deal_key(g, GAME, "m1", sb, D.FIRST, 0)
    assert D.verify_open(g, GAME, history, "m1", 0, k1, k2) == hands[D.FIRST][0]


@pytest.mark.slow
def test_audit_in_the_2048_bit_group():
    g = D.MODP2048
    sa, sb = seeds("real")
    history: dict[str, D.DeckRound] = {}
    rnd = run_round(g, "m1", [D.Card(label=lb) for lb in LABELS], sa, sb, history)
    dealt = D.audit_deck(g, GAME, [rnd], openings(g, "m1", sa, sb, 42), [], AUTHORS)
    assert sorted(dealt[0].labels) == sorted(LABELS)


# --- drawing and opening ---------------------------------------------------------

def test_round_trip_and_audit_report_the_deal(small_round):
    history, rnd, sa, sb = small_round
    draws, seen = [], {}
    for pos in range(0, 42, 3):
        drawer = pos % 2
        key = D.deal_key(SMALL, GAME, "r1", sb if drawer == D.FIRST else sa, drawer, pos)
        seen[pos] = D.draw_card(SMALL, GAME, history, "r1", pos, drawer, sa if drawer == D.FIRST else sb, key)
        draws.append(D.Draw(round="r1", pos=pos, to=AUTHORS[drawer]))
    [dealt] = D.audit_deck(SMALL, GAME, [rnd], openings(SMALL, "r1", sa, sb, 42), draws, AUTHORS)
    assert sorted(dealt.labels) == sorted(LABELS)
    for pos, label in seen.items():
        assert dealt.labels[pos] == label and dealt.holders[pos] == AUTHORS[pos % 2]
    assert sum(1 for h in dealt.holders if h) == len(seen)
    assert sum(lb.startswith("real") for lb in dealt.labels) == 28


def test_only_the_drawer_learns_its_card(small_round):
    history, rnd, sa, sb = small_round
    pos = 4
    dealt = D.deal_key(SMALL, GAME, "r1", sb, D.FIRST, pos)  # public, in the opponent's event
    card = D.draw_card(SMALL, GAME, history, "r1", pos, D.FIRST, sa, dealt)
    # the opponent (or anyone) holds the public key but not the drawer's: with any
    # other candidate key for the drawer's side the position opens to no card
    wrong = D.KeyOpening(round="r1", step=3, index=pos, key=D.elem_hex(SMALL, 12345), salt="00" * 32)
    with pytest.raises(D.DeckError, match="does not open its commitment"):
        D.verify_open(SMALL, GAME, history, "r1", pos, wrong, dealt)
    # the drawer's step-2-removed value is uniform: public data minus one key is not a card
    x = D.parse_elem(SMALL, rnd.steps[-1].cards[pos])
    half = pow(x, pow(D.check_key(SMALL, GAME, rnd, dealt), -1, SMALL.q), SMALL.p)
    assert D.decode_card(SMALL, GAME, LABELS, half) is None
    # the opponent's own seed does not help either: its keys are not the drawer's
    with pytest.raises(D.DeckError, match="does not open to a card"):
        D.draw_card(SMALL, GAME, history, "r1", pos, D.FIRST, sb, dealt)
    assert card in LABELS


def test_an_opened_key_does_not_open_another_position(small_round):
    history, rnd, sa, sb = small_round
    k1 = D.own_key(SMALL, GAME, "r1", sa, D.FIRST, 7)
    k2 = D.deal_key(SMALL, GAME, "r1", sb, D.FIRST, 7)
    assert D.verify_open(SMALL, GAME, history, "r1", 7, k1, k2) in LABELS
    # relabelled for position 8 the commitment fails
    moved = msgspec.structs.replace(k1, index=8)
    with pytest.raises(D.DeckError, match="does not open its commitment"):
        D.check_key(SMALL, GAME, rnd, moved)
    # and the raw keys of position 7 decrypt position 8 to no card of the deck
    a7, b7 = D.check_key(SMALL, GAME, rnd, k1), D.check_key(SMALL, GAME, rnd, k2)
    for other in range(42):
        if other == 7:
            continue
        x = D.parse_elem(SMALL, rnd.steps[-1].cards[other])
        assert D.decode_card(SMALL, GAME, LABELS, pow(x, pow(a7 * b7, -1, SMALL.q), SMALL.p)) is None
    with pytest.raises(D.DeckError, match="expected the step 3 key of position 8"):
        D.verify_open(SMALL, GAME, history, "r1", 8, k1, k2)


def test_reshuffle_carries_undealt_cards_encrypted_and_returns_known_cards(small_round):
    history0, rnd1, sa, sb = small_round
    history = dict(history0)
    dealt_pos = list(range(10))
    undealt = [D.Carry(round="r1", pos=k) for k in range(10, 42)]
    spent = [D.Card(label="extra-1"), D.Card(label="extra-2")]
    sources = undealt[::-1] + spent  # any order the rules fix
    sa2, sb2 = seeds("r2")
    rnd2 = run_round(SMALL, "r2", sources, sa2, sb2, history, old=({"r1": sa}, {"r1": sb}))
    ops = openings(SMALL, "r1", sa, sb, 42) + openings(SMALL, "r2", sa2, sb2, len(sources))
    draws = [D.Draw(round="r1", pos=k, to=AUTHORS[k % 2]) for k in dealt_pos]
    draws.append(D.Draw(round="r2", pos=0, to="axis"))
    r1, r2 = D.audit_deck(SMALL, GAME, [rnd1, rnd2], ops, draws, AUTHORS)
    expect = sorted([r1.labels[k] for k in range(10, 42)] + ["extra-1", "extra-2"])
    assert sorted(r2.labels) == expect
    assert r1.carried_to[10:] == ["r2"] * 32 and r1.carried_to[:10] == [""] * 10
    got = D.draw_card(SMALL, GAME, history, "r2", 0, D.FIRST, sa2, D.deal_key(SMALL, GAME, "r2", sb2, D.FIRST, 0))
    assert got == r2.labels[0]
    # carrying the same position twice is refused
    with pytest.raises(D.DeckError, match="carried twice"):
        D.make_step(SMALL, GAME, "r3", [undealt[0], undealt[0]], [], sa2, D.history_resolver(SMALL, history),
                    {"r1": sa})


# --- tampering is caught at the audit, naming step and author ------------------------

def _tampered(small_round, step_no, mutate):
    history, rnd, sa, sb = small_round
    steps = list(rnd.steps)
    steps[step_no - 1] = mutate(steps[step_no - 1], sa, sb)
    return D.DeckRound(steps=steps), openings(SMALL, "r1", sa, sb, 42)


def _swap(step, *_):
    cards = list(step.cards)
    cards[0], cards[1] = cards[1], cards[0]
    return msgspec.structs.replace(step, cards=cards)


def _dup(step, *_):
    cards = list(step.cards)
    cards[1] = cards[0]
    return msgspec.structs.replace(step, cards=cards)


def _substitute(step, *_):
    """Replace one card by a different valid residue (e.g. another card value)."""
    cards = list(step.cards)
    x = D.parse_elem(SMALL, cards[3])
    cards[3] = D.elem_hex(SMALL, x * x % SMALL.p)
    return msgspec.structs.replace(step, cards=cards)


@pytest.mark.parametrize("step_no,mutate,match", [
    (1, _swap, "not the input card"),
    (1, _substitute, "not the input card"),
    (2, _dup, "two cards are the same element"),
    (2, _substitute, "not any input card"),
    (3, _substitute, "not any input card"),
    (3, _dup, "two cards are the same element"),
    (4, _swap, "not the step-3 card"),
    (4, _substitute, "not the step-3 card"),
])
def test_tampered_step_is_caught_with_its_author(small_round, step_no, mutate, match):
    rnd, ops = _tampered(small_round, step_no, mutate)
    with pytest.raises(D.DeckError, match=match) as err:
        D.audit_deck(SMALL, GAME, [rnd], ops, [], AUTHORS)
    assert err.value.step == step_no and err.value.author == AUTHORS[(step_no - 1) % 2]
    assert f"signed by {AUTHORS[(step_no - 1) % 2]}" in str(err.value)


def test_non_permutation_with_honest_keys_is_caught():
    """Second player shuffles with its committed key but drops card 0 for a copy of card 1
    (re-encrypted, so every element is distinct and check_step passes on receipt)."""
    sa, sb = seeds("np")
    sources = [D.Card(label=lb) for lb in LABELS[:8]] + [D.Card(label="dup")]
    history: dict[str, D.DeckRound] = {}
    resolve = D.history_resolver(SMALL, history)
    s1 = D.make_step(SMALL, GAME, "np", sources, [], sa, resolve)
    # forge step 1 so that input "dup" is replaced by a copy of card 0 under a^2: not detectable
    # without the keys, caught at the audit as step 1 by the first player
    x = [D.parse_elem(SMALL, c) for c in s1.cards]
    forged = msgspec.structs.replace(s1, cards=s1.cards[:-1] + [D.elem_hex(SMALL, x[0] * x[0] % SMALL.p)])
    D.check_step(SMALL, sources, [], forged)
    done = [forged]
    for i in range(1, 4):
        done.append(D.make_step(SMALL, GAME, "np", sources, done, sb if i % 2 else sa, resolve))
    with pytest.raises(D.DeckError, match="card 8 is not the input card") as err:
        D.audit_deck(SMALL, GAME, [D.DeckRound(steps=done)], openings(SMALL, "np", sa, sb, 9), [], AUTHORS)
    assert (err.value.step, err.value.author) == (1, "axis")


def test_wrong_key_opening_is_caught_with_its_author(small_round):
    history, rnd, sa, sb = small_round
    ops = openings(SMALL, "r1", sa, sb, 42)
    other = D.open_key(SMALL, GAME, "r1", D.new_seed(), 4, 5)  # a key that was never committed
    ops = [other if (o.step, o.index) == (4, 5) else o for o in ops]
    with pytest.raises(D.DeckError, match="does not open its commitment") as err:
        D.audit_deck(SMALL, GAME, [rnd], ops, [], AUTHORS)
    assert (err.value.step, err.value.author) == (4, "allied")


def test_missing_and_conflicting_openings(small_round):
    history, rnd, sa, sb = small_round
    ops = [o for o in openings(SMALL, "r1", sa, sb, 42) if (o.step, o.index) != (3, 9)]
    with pytest.raises(D.DeckError, match="key 9 was never opened") as err:
        D.audit_deck(SMALL, GAME, [rnd], ops, [], AUTHORS)
    assert (err.value.step, err.value.author) == (3, "axis")
    ops.append(D.open_key(SMALL, GAME, "r1", sa, 3, 9))
    ops.append(D.open_key(SMALL, GAME, "r1", D.new_seed(), 3, 9))
    with pytest.raises(D.DeckError, match="two different openings") as err:
        D.audit_deck(SMALL, GAME, [rnd], ops, [], AUTHORS)


def test_card_swapped_after_commitment_is_caught(small_round):
    """Step 4 recomputed with a different key for one position than the one committed."""
    history, rnd, sa, sb = small_round
    cards = list(rnd.steps[3].cards)
    x3 = D.parse_elem(SMALL, rnd.steps[2].cards[6])
    b = D.round_key(SMALL, GAME, "r1", sb, 2, 0)
    cards[6] = D.elem_hex(SMALL, pow(x3, pow(b, -1, SMALL.q) * 777 % SMALL.q, SMALL.p))
    bad = D.DeckRound(steps=rnd.steps[:3] + [msgspec.structs.replace(rnd.steps[3], cards=cards)])
    with pytest.raises(D.DeckError, match="card 6 is not the step-3 card") as err:
        D.audit_deck(SMALL, GAME, [bad], openings(SMALL, "r1", sa, sb, 42), [], AUTHORS)
    assert (err.value.step, err.value.author) == (4, "allied")


def test_dealing_one_position_twice_is_caught(small_round):
    history, rnd, sa, sb = small_round
    draws = [D.Draw(round="r1", pos=2, to="axis"), D.Draw(round="r1", pos=2, to="allied")]
    with pytest.raises(D.DeckError, match="dealt twice"):
        D.audit_deck(SMALL, GAME, [rnd], openings(SMALL, "r1", sa, sb, 42), draws, AUTHORS)


def test_receiver_checks_reject_bad_messages_at_once(small_round):
    history, rnd, sa, sb = small_round
    sources = rnd.steps[0].sources
    s = rnd.steps
    with pytest.raises(D.DeckError, match="expected step 2"):
        D.check_step(SMALL, sources, s[:1], s[2])
    with pytest.raises(D.DeckError, match="41 cards"):
        D.check_step(SMALL, sources, s[:1], msgspec.structs.replace(s[1], cards=s[1].cards[:-1]))
    with pytest.raises(D.DeckError, match="key commitments"):
        D.check_step(SMALL, sources, s[:2], msgspec.structs.replace(s[2], commits=s[2].commits[:1]))
    with pytest.raises(D.DeckError, match="agreed input deck"):
        D.check_step(SMALL, sources[:-1] + [D.Card(label="x")], [], s[0])
    nonres = next(x for x in range(2, 100) if D.jacobi(x, SMALL.p) == -1)
    bad = msgspec.structs.replace(s[3], cards=[D.elem_hex(SMALL, nonres)] + s[3].cards[1:])
    with pytest.raises(D.DeckError, match="quadratic residue") as err:
        D.check_step(SMALL, sources, s[:3], bad)
    assert err.value.step == 4


def test_messages_round_trip_canonically(small_round):
    from pbem.codec import canonical
    history, rnd, sa, sb = small_round
    data = canonical(rnd)
    assert data.isascii()
    back = msgspec.json.decode(data, type=D.DeckRound)
    assert back == rnd and canonical(back) == data


# --- properties (small group) -----------------------------------------------------------

keys = st.integers(min_value=1, max_value=SMALL.q - 1)


@settings(max_examples=200, deadline=None)
@given(label=st.text(min_size=1, max_size=8), k1=keys, k2=keys)
def test_encryption_commutes_and_keys_come_off_in_any_order(label, k1, k2):
    p, q = SMALL.p, SMALL.q
    m = D.encode_card(SMALL, GAME, label)
    c = pow(pow(m, k1, p), k2, p)
    assert c == pow(pow(m, k2, p), k1, p)
    assert D.is_element(SMALL, c)
    assert pow(pow(c, pow(k1, -1, q), p), pow(k2, -1, q), p) == m
    assert pow(pow(c, pow(k2, -1, q), p), pow(k1, -1, q), p) == m


@settings(max_examples=25, deadline=None)
@given(n=st.integers(min_value=1, max_value=9), seed=st.binary(min_size=32, max_size=32),
       order=st.permutations(range(9)))
def test_any_small_deck_deals_exactly_once_and_audits(n, seed, order):
    labels = [f"c{i}" for i in range(n)]
    sa, sb = D.hash_parts(seed, b"a"), D.hash_parts(seed, b"b")
    history: dict[str, D.DeckRound] = {}
    rnd = run_round(SMALL, "p", [D.Card(label=lb) for lb in labels], sa, sb, history)
    got = []
    for pos in [i for i in order if i < n]:
        drawer = pos % 2
        key = D.deal_key(SMALL, GAME, "p", sb if drawer == D.FIRST else sa, drawer, pos)
        got.append((pos, D.draw_card(SMALL, GAME, history, "p", pos, drawer, sa if drawer == D.FIRST else sb, key)))
    assert sorted(c for _, c in got) == labels
    [dealt] = D.audit_deck(SMALL, GAME, [rnd], openings(SMALL, "p", sa, sb, n), [], AUTHORS)
    assert all(dealt.labels[pos] == c for pos, c in got)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=D.ED25519.q - 1), max_size=50))
def test_the_inverses_of_many_keys_at_once_are_each_keys_inverse(keys):
    """Issue 20: the audit inverts a round's keys with one modular inversion
    (Montgomery's trick); each result is what ``pow(k, -1, q)`` gives."""
    q = D.ED25519.q
    assert D.inverses(keys, q) == [pow(k, -1, q) for k in keys]


def test_a_key_that_is_zero_mod_q_has_no_inverse_among_many():
    q = D.ED25519.q
    with pytest.raises(ValueError):
        D.inverses([3, q, 5], q)


@settings(max_examples=200, deadline=None)
@given(group=st.sampled_from([D.ED25519, D.RISTRETTO255]), rnd=st.text(max_size=12),
       seed=st.binary(min_size=32, max_size=32), what=st.binary(max_size=8),
       ints=st.lists(st.integers(0, 2**64 - 1), max_size=3), nbytes=st.integers(1, 100))
def test_a_seeds_derivations_hash_exactly_what_hash_parts_hashes(group, rnd, seed, what, ints, nbytes):
    # The derivation of keys, salts and shuffles (docs/deck.md) is SHA-256 of
    # hash_parts' length-prefixed parts and a counter; _Seeded hashes the common
    # prefix once and copies it (issue 20), which must not change a byte.
    parts = [D._DERIVE, group.tag, GAME, rnd.encode("utf-8"), seed, what, *(i.to_bytes(8, "big") for i in ints)]
    assert D._Seeded(group, GAME, rnd, seed).number(what, *ints, nbytes=nbytes) == D._expand(parts, nbytes)


def test_a_seed_of_the_wrong_width_is_refused():
    with pytest.raises(ValueError, match="32 bytes"):
        D.round_key(D.RISTRETTO255, GAME, "r1", b"\x01" * 31, 1, 0)
