"""Boundaries and refusals of the shared deck's checks (pbem/deck.py, issue 29).

Each test sits on one side of one check of the deck: the Fisher-Yates
shuffle reaches every permutation, receivers refuse malformed steps and keys
at the edge of each size, the audit refuses a reshuffle that drops,
duplicates or smuggles a card. Mostly in the small test group of
tests/test_deck.py (same code paths, microseconds per operation)."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys

import hypothesis
import msgspec
import pytest
from hypothesis import strategies as st

from pbem import deck as D
from tests.test_deck import GAME, SMALL, openings, run_round, seeds

AUTHORS = ("axis", "allied")


def _round(name="r1", labels=("a", "b", "c"), group=SMALL, history=None, tag=None, old=({}, {}), sources=None):
    history = {} if history is None else history
    sa, sb = seeds(tag or name)
    sources = sources if sources is not None else [D.Card(label=lb) for lb in labels]
    rnd = run_round(group, name, sources, sa, sb, history, old)
    return history, rnd, sa, sb


# --- Fisher-Yates ---------------------------------------------------------------------

def test_every_permutation_of_three_cards_is_reachable():
    seen = {tuple(D._permutation(D.PLAY, GAME, "r", bytes([i]) * 32, 3)) for i in range(64)}
    assert seen == set(itertools.permutations(range(3)))


def test_a_two_card_round_is_shuffled_both_ways():
    seen = {tuple(D._permutation(D.PLAY, GAME, "r", bytes([i]) * 32, 2)) for i in range(16)}
    assert seen == {(0, 1), (1, 0)}
    # ... and the round's deal follows: both orders occur over seeds.
    deals = set()
    for i in range(12):
        history = {}
        sa, sb = bytes([i]) * 32, bytes([i + 100]) * 32
        rnd = run_round(SMALL, "two", [D.Card(label="x"), D.Card(label="y")], sa, sb, history)
        [dealt] = D.audit_deck(SMALL, GAME, [rnd], openings(SMALL, "two", sa, sb, 2), [], AUTHORS)
        deals.add(tuple(dealt.labels))
    assert deals == {("x", "y"), ("y", "x")}


def test_one_card_and_zero_cards():
    assert D._permutation(D.PLAY, GAME, "r", bytes(32), 1) == [0]
    assert D._permutation(D.PLAY, GAME, "r", bytes(32), 0) == []
    history, rnd, sa, sb = _round("one", ("solo",))
    key = D.deal_key(SMALL, GAME, "one", sb, D.FIRST, 0)
    assert D.draw_card(SMALL, GAME, history, "one", 0, D.FIRST, sa, key) == "solo"


def test_the_permutation_depends_on_seed_round_and_game():
    base = D._permutation(D.PLAY, GAME, "r", bytes(32), 12)
    assert sorted(base) == list(range(12))
    assert D._permutation(D.PLAY, GAME, "s", bytes(32), 12) != base
    assert D._permutation(D.PLAY, bytes(32), "r", bytes(32), 12) != base
    assert D._permutation(D.PLAY, GAME, "r", bytes([1]) * 32, 12) != base


# --- seeds and keys ---------------------------------------------------------------------------

@pytest.mark.parametrize("size", [0, 31, 33])
def test_a_deck_seed_other_than_32_bytes_is_refused(size):
    with pytest.raises(ValueError, match="a deck seed is 32 bytes"):
        D.round_key(SMALL, GAME, "r", bytes(size), 1, 0)
    with pytest.raises(ValueError, match="a deck seed is 32 bytes"):
        D._permutation(D.PLAY, GAME, "r", bytes(size), 3)


def test_new_seeds_are_32_fresh_bytes():
    a, b = D.new_seed(), D.new_seed()
    assert len(a) == len(b) == 32 and a != b


def test_round_keys_lie_in_1_to_q_minus_1_and_differ_per_step_and_index():
    keys = {D.round_key(D.PLAY, GAME, "r", bytes(32), step, index) for step in (1, 2, 3, 4) for index in range(4)}
    assert len(keys) == 16 and all(1 <= k < D.PLAY.q for k in keys)
    # A tiny group makes the reduction visible: q - 1 = 2 leaves keys 1 and 2 only.
    tiny = D.Group(7)  # p = 7 = 2*3 + 1
    assert {D.round_key(tiny, GAME, "r", bytes([i]) * 32, 1, 0) for i in range(40)} == {1, 2}


def test_open_all_covers_the_global_and_every_per_card_key_of_a_role():
    first = D.open_all(SMALL, GAME, "r", bytes(32), D.FIRST, 3)
    second = D.open_all(SMALL, GAME, "r", bytes(32), D.SECOND, 3)
    assert [(o.step, o.index) for o in first] == [(1, 0), (3, 0), (3, 1), (3, 2)]
    assert [(o.step, o.index) for o in second] == [(2, 0), (4, 0), (4, 1), (4, 2)]
    assert D.seed_label("m3", "axis") == "deck/m3/seed/axis"


# --- elements ---------------------------------------------------------------------------------

def test_element_width_is_exact():
    x = D.encode_card(SMALL, GAME, "a")
    text = D.elem_hex(SMALL, x)
    assert len(text) == 2 * SMALL.size and D.parse_elem(SMALL, text) == x
    for bad in (text[2:], "00" + text, text[1:], text + "0"):
        with pytest.raises(D.DeckError, match="hex digits"):
            D.parse_elem(SMALL, bad)


#: The wire language of an element or key, as the decode refused it before it was
#: split into a faster pattern and ``codec.whole_bytes`` (issue 20): whole bytes of
#: lowercase hex, 1 to 512 of them.
_WHOLE_BYTES = re.compile(r"([0-9a-f]{2}){1,512}")


@hypothesis.settings(max_examples=400, deadline=None)
@hypothesis.given(text=st.one_of(st.text(alphabet="0123456789abcdefABz -", max_size=12),
                                 st.integers(0, 1030).map(lambda n: "ab" * (n // 2) + "c" * (n % 2)),
                                 st.text(alphabet="0123456789abcdef", min_size=1020, max_size=1030)))
def test_the_wire_refuses_exactly_what_is_not_whole_bytes_of_lowercase_hex(text):
    good = D.KeyOpening(round="s1", step=3, index=0, key="ab" * 32, salt="00" * 32)
    step = D.Step(round="s1", step=1, cards=["ab" * 32], commits=["00" * 32])
    for value, type_ in ((msgspec.structs.replace(good, key="ab"), D.KeyOpening),
                         (msgspec.structs.replace(step, cards=["ab" * 32, "ab"]), D.Step)):
        raw = msgspec.json.encode(value).replace(b'"ab"', msgspec.json.encode(text))
        if _WHOLE_BYTES.fullmatch(text):
            assert msgspec.json.decode(raw, type=type_) is not None
        else:
            with pytest.raises(msgspec.ValidationError):
                msgspec.json.decode(raw, type=type_)


def test_residue_bounds_of_the_modp_group():
    p = SMALL.p
    assert not SMALL.is_element(1) and not SMALL.is_element(0)
    assert not SMALL.is_element(p - 1) and not SMALL.is_element(p)
    assert SMALL.is_element(4) and not SMALL.is_element(p + 4)
    assert SMALL.q == (p - 1) // 2 and SMALL.size == 17 and SMALL.tag == p.to_bytes(17, "big")
    assert SMALL.from_hash(0) is None and SMALL.from_hash(1) is None and SMALL.from_hash(2) == 4


@pytest.mark.parametrize("group", [D.ED25519, D.RISTRETTO255], ids=["ed25519", "ristretto255"])
def test_point_bounds_of_the_groups_of_play(group):
    x = D.encode_card(group, GAME, "a")
    assert group.is_element(x)
    assert not group.is_element(-1) and not group.is_element(1 << 256) and not group.is_element(0)
    with pytest.raises(D.DeckError, match=group.not_element):
        D.parse_elem(group, "00" * 32)
    with pytest.raises(D.DeckError, match="not a quadratic residue"):
        D.parse_elem(SMALL, D.elem_hex(SMALL, 1))


@pytest.mark.parametrize("n", [0, -3, 4, 10])
def test_jacobi_needs_an_odd_positive_modulus(n):
    with pytest.raises(ValueError, match="odd and positive"):
        D.jacobi(3, n)


def test_jacobi_known_values():
    # (2/7) = 1, (3/7) = -1, (6/9) = 0, (2/3) = -1, (5/21) = (5/3)(5/7) = -1 * -1 = 1
    assert [D.jacobi(2, 7), D.jacobi(3, 7), D.jacobi(6, 9), D.jacobi(2, 3), D.jacobi(5, 21)] == [1, -1, 0, -1, 1]
    assert [D.jacobi(a, 11) for a in range(1, 11)] == [1, -1, 1, 1, 1, -1, -1, -1, 1, -1]
    assert D.jacobi(2, 17) == 1 and D.jacobi(2, 11) == -1 and D.jacobi(7, 15) == -1


def test_distinct_labels_encode_to_distinct_elements_and_repeats_are_refused():
    assert len(set(D.encode_deck(SMALL, GAME, ["a", "b", "c"]))) == 3
    with pytest.raises(ValueError, match="distinct"):
        D.encode_deck(SMALL, GAME, ["a", "b", "a"])
    assert D.decode_card(SMALL, GAME, ["a", "b"], D.encode_card(SMALL, GAME, "b")) == "b"
    assert D.decode_card(SMALL, GAME, ["a", "b"], D.encode_card(SMALL, GAME, "c")) is None


# --- check_step: the receiver's checks ------------------------------------------------------------

@pytest.fixture(scope="module")
def three():
    return _round("r1", ("a", "b", "c"))


def test_check_step_accepts_every_honest_step(three):
    history, rnd, sa, sb = three
    sources = rnd.steps[0].sources
    for i, step in enumerate(rnd.steps):
        D.check_step(SMALL, sources, rnd.steps[:i], step)


def test_check_step_refuses_another_round_or_step_number(three):
    history, rnd, sa, sb = three
    s, sources = rnd.steps, rnd.steps[0].sources
    with pytest.raises(D.DeckError, match="expected step 3"):
        D.check_step(SMALL, sources, s[:2], s[3])
    with pytest.raises(D.DeckError, match="expected step 2 of round 'r1'"):
        D.check_step(SMALL, sources, s[:1], msgspec.structs.replace(s[1], round="r2"))
    with pytest.raises(D.DeckError, match="expected step 1"):
        D.check_step(SMALL, sources, [], s[1])


def test_check_step_refuses_an_empty_round():
    step = D.Step(round="e", step=1, cards=[], commits=["00" * 32])
    with pytest.raises(D.DeckError, match="at least one card"):
        D.check_step(SMALL, [], [], step)


def test_only_step_1_carries_the_input_deck(three):
    history, rnd, sa, sb = three
    s, sources = rnd.steps, rnd.steps[0].sources
    with pytest.raises(D.DeckError, match="agreed input deck"):
        D.check_step(SMALL, sources, [], msgspec.structs.replace(s[0], sources=list(sources)[::-1]))
    for n in (2, 3, 4):
        with pytest.raises(D.DeckError, match="only step 1 carries the input deck") as err:
            D.check_step(SMALL, sources, s[:n - 1], msgspec.structs.replace(s[n - 1], sources=list(sources)))
        assert err.value.step == n


@pytest.mark.parametrize("number", [1, 2, 3, 4])
def test_check_step_refuses_one_card_more_or_less(three, number):
    history, rnd, sa, sb = three
    s, sources = rnd.steps, rnd.steps[0].sources
    step = s[number - 1]
    extra = D.elem_hex(SMALL, D.encode_card(SMALL, GAME, "extra"))
    for cards in (step.cards[:-1], step.cards + [extra]):
        with pytest.raises(D.DeckError, match=f"{len(cards)} cards, the round has 3"):
            D.check_step(SMALL, sources, s[:number - 1], msgspec.structs.replace(step, cards=cards))


@pytest.mark.parametrize("number", [1, 2, 3, 4])
def test_check_step_wants_one_commitment_per_key(three, number):
    history, rnd, sa, sb = three
    s, sources = rnd.steps, rnd.steps[0].sources
    step = s[number - 1]
    want = 1 if number <= 2 else 3
    assert len(step.commits) == want
    for commits in (step.commits[:-1], step.commits + ["00" * 32]):
        with pytest.raises(D.DeckError, match=f"{len(commits)} key commitments, expected {want}"):
            D.check_step(SMALL, sources, s[:number - 1], msgspec.structs.replace(step, commits=commits))


def test_check_step_refuses_a_visibly_duplicated_card(three):
    history, rnd, sa, sb = three
    s, sources = rnd.steps, rnd.steps[0].sources
    for number in (1, 4):
        step = s[number - 1]
        cards = [step.cards[0]] + step.cards[:-1]
        with pytest.raises(D.DeckError, match="two cards are the same element"):
            D.check_step(SMALL, sources, s[:number - 1], msgspec.structs.replace(step, cards=cards))


def test_make_step_refuses_a_fifth_step_and_a_carry_without_the_old_seed(three):
    history, rnd, sa, sb = three
    with pytest.raises(ValueError, match="round is complete"):
        D.make_step(SMALL, GAME, "r1", rnd.steps[0].sources, rnd.steps, sa, D.history_resolver(SMALL, history))
    carry = [D.Carry(round="r1", pos=0)]
    with pytest.raises(ValueError, match="need this player's seed of round 'r1'"):
        D.make_step(SMALL, GAME, "r2", carry, [], sa, D.history_resolver(SMALL, history))
    with pytest.raises(ValueError, match="need this player's seed of round 'r1'"):
        D.make_step(SMALL, GAME, "r2", carry, [], sa, D.history_resolver(SMALL, history), {"r0": sa})


# --- carried cards ----------------------------------------------------------------------------

def test_a_carried_card_must_come_from_a_completed_round_and_exist(three):
    history, rnd, sa, sb = three
    resolve = D.history_resolver(SMALL, history)
    assert resolve("r1", 0) == D.parse_elem(SMALL, rnd.steps[-1].cards[0])
    assert resolve("r1", 2) == D.parse_elem(SMALL, rnd.steps[-1].cards[2])
    for pos in (-1, 3):
        with pytest.raises(D.DeckError, match=f"carried position {pos} is outside round 'r1'"):
            resolve("r1", pos)
    with pytest.raises(D.DeckError, match="not a completed round"):
        resolve("nope", 0)
    partial = D.history_resolver(SMALL, {"half": D.DeckRound(steps=rnd.steps[:3])})
    with pytest.raises(D.DeckError, match="not a completed round"):
        partial("half", 0)


def test_input_deck_refuses_a_card_or_position_twice(three):
    history, rnd, sa, sb = three
    resolve = D.history_resolver(SMALL, history)
    with pytest.raises(D.DeckError, match="card 'a' enters the round twice"):
        D.input_elements(SMALL, GAME, [D.Card(label="a"), D.Card(label="a")], resolve)
    with pytest.raises(D.DeckError, match="position 1 of round 'r1' is carried twice"):
        D.input_elements(SMALL, GAME, [D.Carry(round="r1", pos=1), D.Carry(round="r1", pos=1)], resolve)
    both = D.input_elements(SMALL, GAME, [D.Carry(round="r1", pos=1), D.Carry(round="r1", pos=2),
                                          D.Card(label="a")], resolve)
    assert len(set(both)) == 3


# --- key openings -----------------------------------------------------------------------------

def test_check_key_bounds(three):
    history, rnd, sa, sb = three
    good = D.open_key(SMALL, GAME, "r1", sa, 3, 2)
    assert D.check_key(SMALL, GAME, rnd, good) == D.round_key(SMALL, GAME, "r1", sa, 3, 2)
    assert D.check_key(SMALL, GAME, rnd, D.open_key(SMALL, GAME, "r1", sb, 4, 0))
    cases = [
        (msgspec.structs.replace(good, round="r2"), "another round"),
        (msgspec.structs.replace(good, step=0), "step that was not taken"),
        (msgspec.structs.replace(good, step=5), "step that was not taken"),
        (msgspec.structs.replace(good, index=3), "index 3, out of range"),
        (msgspec.structs.replace(good, index=-1), "index -1, out of range"),
        (msgspec.structs.replace(good, key=good.key[2:]), "wrong width"),
        (msgspec.structs.replace(good, key="00" + good.key), "wrong width"),
        (msgspec.structs.replace(good, index=1), "does not open its commitment"),
        (msgspec.structs.replace(good, salt="00" * 32), "does not open its commitment"),
    ]
    for opening, message in cases:
        with pytest.raises(D.DeckError, match=message):
            D.check_key(SMALL, GAME, rnd, opening)
    with pytest.raises(D.DeckError, match="another round"):
        D.check_key(SMALL, GAME, D.DeckRound(steps=[]), good)
    # Steps 1 and 2 have one key each, at index 0 only.
    assert D.check_key(SMALL, GAME, rnd, D.open_key(SMALL, GAME, "r1", sb, 2, 0))
    with pytest.raises(D.DeckError, match="index 1, out of range"):
        D.check_key(SMALL, GAME, rnd, D.open_key(SMALL, GAME, "r1", sb, 2, 1))


@pytest.mark.parametrize("key", [0, "q"])
def test_a_committed_key_outside_1_to_q_minus_1_is_refused(key):
    """A cheater may commit to 0 or q (which would collapse every card); opening it is refused."""
    k = SMALL.q if key == "q" else 0
    salt = bytes(32)
    digest = D._key_digest(SMALL, GAME, "z", 3, 0, k, salt)
    step = D.Step(round="z", step=1, cards=[], commits=[digest.hex()])
    rnd = D.DeckRound(steps=[step])
    opening = D.KeyOpening(round="z", step=1, index=0, key=k.to_bytes(SMALL.size, "big").hex(), salt=salt.hex())
    opening_bad_label = opening
    with pytest.raises(D.DeckError, match="does not open"):
        D.check_key(SMALL, GAME, rnd, opening_bad_label)  # committed for step 3: the label binds the step
    digest = D._key_digest(SMALL, GAME, "z", 1, 0, k, salt)
    rnd = D.DeckRound(steps=[msgspec.structs.replace(step, commits=[digest.hex()])])
    with pytest.raises(D.DeckError, match=r"not in \[1, q-1\]"):
        D.check_key(SMALL, GAME, rnd, opening)
    ok = D.KeyOpening(round="z", step=1, index=0, key=(SMALL.q - 1).to_bytes(SMALL.size, "big").hex(),
                      salt=salt.hex())
    rnd = D.DeckRound(steps=[msgspec.structs.replace(
        step, commits=[D._key_digest(SMALL, GAME, "z", 1, 0, SMALL.q - 1, salt).hex()])])
    assert D.check_key(SMALL, GAME, rnd, ok) == SMALL.q - 1


def test_a_drawer_refuses_a_dealt_key_for_another_step_or_position(three):
    history, rnd, sa, sb = three
    right = D.deal_key(SMALL, GAME, "r1", sb, D.FIRST, 1)
    assert right.step == 4 and D.draw_card(SMALL, GAME, history, "r1", 1, D.FIRST, sa, right)
    with pytest.raises(D.DeckError, match="not step 4 index 0"):
        D.draw_card(SMALL, GAME, history, "r1", 0, D.FIRST, sa, right)
    theirs = D.deal_key(SMALL, GAME, "r1", sa, D.SECOND, 1)
    assert theirs.step == 3 and D.draw_card(SMALL, GAME, history, "r1", 1, D.SECOND, sb, theirs)
    with pytest.raises(D.DeckError, match="not step 4 index 1"):
        D.draw_card(SMALL, GAME, history, "r1", 1, D.FIRST, sa, theirs)


def test_showing_a_card_needs_both_keys_of_that_position(three):
    history, rnd, sa, sb = three
    k1 = D.own_key(SMALL, GAME, "r1", sa, D.FIRST, 2)
    k2 = D.own_key(SMALL, GAME, "r1", sb, D.SECOND, 2)
    label = D.verify_open(SMALL, GAME, history, "r1", 2, k1, k2)
    assert label in ("a", "b", "c")
    assert D.unlock(SMALL, GAME, history, "r1", 2, int(k1.key, 16), int(k2.key, 16)) == label
    for a, b, message in [
        (k2, k1, "expected the step 3 key of position 2"),
        (k1, D.own_key(SMALL, GAME, "r1", sb, D.SECOND, 1), "expected the step 4 key of position 2"),
        (msgspec.structs.replace(k1, round="r9"), k2, "expected the step 3 key"),
    ]:
        with pytest.raises(D.DeckError, match=message):
            D.verify_open(SMALL, GAME, history, "r1", 2, a, b)
    with pytest.raises(D.DeckError, match="no such round"):
        D.verify_open(SMALL, GAME, history, "r9", 2, k1, k2)


def test_unlock_bounds(three):
    history, rnd, sa, sb = three
    with pytest.raises(D.DeckError, match="no such completed round"):
        D.unlock(SMALL, GAME, history, "r9", 0, 1, 1)
    with pytest.raises(D.DeckError, match="no such completed round"):
        D.unlock(SMALL, GAME, {"r1": D.DeckRound(steps=rnd.steps[:3])}, "r1", 0, 1, 1)
    for pos in (-1, 3):
        with pytest.raises(D.DeckError, match=f"position {pos} is outside the deck"):
            D.unlock(SMALL, GAME, history, "r1", pos, 1, 1)
    with pytest.raises(D.DeckError, match="does not open to a card of the deck"):
        D.unlock(SMALL, GAME, history, "r1", 0, 2, 3)


# --- the audit ----------------------------------------------------------------------------------

def test_audit_refuses_structural_faults(three):
    history, rnd, sa, sb = three
    ops = openings(SMALL, "r1", sa, sb, 3)
    with pytest.raises(D.DeckError, match="round without steps"):
        D.audit_deck(SMALL, GAME, [D.DeckRound(steps=[])], ops, [], AUTHORS)
    with pytest.raises(D.DeckError, match="round label used twice") as err:
        D.audit_deck(SMALL, GAME, [rnd, rnd], ops, [], AUTHORS)
    assert err.value.author == "axis"
    for k, who in ((1, "allied"), (2, "axis"), (3, "allied")):
        with pytest.raises(D.DeckError, match=f"round has {k} steps, not 4") as err:
            D.audit_deck(SMALL, GAME, [D.DeckRound(steps=rnd.steps[:k])], ops, [], AUTHORS)
        assert (err.value.step, err.value.author) == (k + 1, who)
    bad = D.DeckRound(steps=rnd.steps[:2] + [msgspec.structs.replace(rnd.steps[2], commits=rnd.steps[2].commits[:2])]
                      + rnd.steps[3:])
    with pytest.raises(D.DeckError, match="key commitments") as err:
        D.audit_deck(SMALL, GAME, [bad], ops, [], AUTHORS)
    assert (err.value.step, err.value.author) == (3, "axis")


def test_audit_refuses_openings_and_draws_that_do_not_exist(three):
    history, rnd, sa, sb = three
    ops = openings(SMALL, "r1", sa, sb, 3)
    stray = D.open_key(SMALL, GAME, "r7", sa, 3, 0)
    with pytest.raises(D.DeckError, match="opening of a key of an unknown round"):
        D.audit_deck(SMALL, GAME, [rnd], ops + [stray], [], AUTHORS)
    for draw in (D.Draw(round="r1", pos=3, to="axis"), D.Draw(round="r1", pos=-1, to="axis"),
                 D.Draw(round="r7", pos=0, to="axis")):
        with pytest.raises(D.DeckError, match="which does not exist"):
            D.audit_deck(SMALL, GAME, [rnd], ops, [draw], AUTHORS)
    [dealt] = D.audit_deck(SMALL, GAME, [rnd], ops, [D.Draw(round="r1", pos=2, to="allied")], AUTHORS)
    assert dealt.holders == ["", "", "allied"]


def test_two_different_openings_name_the_keys_owner(three):
    history, rnd, sa, sb = three
    ops = openings(SMALL, "r1", sa, sb, 3)
    for step, who in ((3, "axis"), (4, "allied"), (1, "axis"), (2, "allied")):
        twin = D.open_key(SMALL, GAME, "r1", bytes([9]) * 32, step, 0)
        with pytest.raises(D.DeckError, match="two different openings of key 0") as err:
            D.audit_deck(SMALL, GAME, [rnd], ops + [twin], [], AUTHORS)
        assert err.value.author == who
    # The same opening twice is no conflict.
    D.audit_deck(SMALL, GAME, [rnd], ops + ops[:2], [], AUTHORS)


def test_the_audit_names_whose_global_key_is_missing(three):
    history, rnd, sa, sb = three
    ops = openings(SMALL, "r1", sa, sb, 3)
    for step, who in ((1, "axis"), (2, "allied"), (4, "allied")):
        missing = [o for o in ops if (o.step, o.index) != (step, 0)]
        with pytest.raises(D.DeckError, match="key 0 was never opened") as err:
            D.audit_deck(SMALL, GAME, [rnd], missing, [], AUTHORS)
        assert (err.value.step, err.value.author) == (step, who)


def _reshuffle(history, r1, sa, sb, sources, name="r2", old_steps=None):
    """Round ``name`` with ``sources`` (carried cards of r1), each side stripping its old key."""
    sa2, sb2 = seeds(name)
    done: list[D.Step] = []
    resolve = D.history_resolver(SMALL, history)
    for i in range(4):
        seed, olds = (sa2, {"r1": sa}) if i % 2 == 0 else (sb2, {"r1": sb})
        done.append(D.make_step(SMALL, GAME, name, sources, done, seed, resolve, olds, old_steps))
    return D.DeckRound(steps=done), sa2, sb2


def test_a_reshuffle_that_carries_and_adds_audits_and_tracks_the_carried_cards():
    history, r1, sa, sb = _round("r1", ("a", "b", "c"), tag="rs")
    sources = [D.Carry(round="r1", pos=1), D.Carry(round="r1", pos=2), D.Card(label="d")]
    r2, sa2, sb2 = _reshuffle(history, r1, sa, sb, sources)
    ops = openings(SMALL, "r1", sa, sb, 3) + openings(SMALL, "r2", sa2, sb2, 3)
    d1, d2 = D.audit_deck(SMALL, GAME, [r1, r2], ops, [D.Draw(round="r1", pos=0, to="axis")], AUTHORS)
    assert d1.carried_to == ["", "r2", "r2"] and d1.holders == ["axis", "", ""]
    assert sorted(d2.labels) == sorted(d1.labels[1:] + ["d"])


def test_a_reshuffle_that_duplicates_a_carried_card_as_a_fresh_one_is_refused():
    """Position 1 of r1 carried and the same card entered afresh: distinct
    elements in step 1, but once both players have stripped their old keys
    (step 2) both are the card under a*b, one element twice: refused there,
    at receipt as at the audit. (So the audit's later check that a round
    holds no label twice cannot fire; see tests/mutation-equivalents.toml.)"""
    history, r1, sa, sb = _round("r1", ("a", "b", "c"), tag="rs")
    ops1 = openings(SMALL, "r1", sa, sb, 3)
    [d1] = D.audit_deck(SMALL, GAME, [r1], ops1, [], AUTHORS)
    twin = d1.labels[1]
    sources = [D.Carry(round="r1", pos=1), D.Card(label=twin)]
    r2, sa2, sb2 = _reshuffle(history, r1, sa, sb, sources)
    D.check_step(SMALL, sources, [], r2.steps[0])
    with pytest.raises(D.DeckError, match="two cards are the same element"):
        D.check_step(SMALL, sources, r2.steps[:1], r2.steps[1])
    with pytest.raises(D.DeckError, match="two cards are the same element") as err:
        D.audit_deck(SMALL, GAME, [r1, r2], ops1 + openings(SMALL, "r2", sa2, sb2, 2), [], AUTHORS)
    assert (err.value.round, err.value.step) == ("r2", 2)


def test_a_position_carried_into_two_rounds_is_refused():
    history, r1, sa, sb = _round("r1", ("a", "b", "c"), tag="rs")
    r2, sa2, sb2 = _reshuffle(history, r1, sa, sb, [D.Carry(round="r1", pos=0)], "r2")
    history["r2"] = r2
    r3, sa3, sb3 = _reshuffle(history, r1, sa, sb, [D.Carry(round="r1", pos=0), D.Card(label="z")], "r3")
    ops = openings(SMALL, "r1", sa, sb, 3) + openings(SMALL, "r2", sa2, sb2, 1) + openings(SMALL, "r3", sa3, sb3, 2)
    with pytest.raises(D.DeckError, match="position 0 of 'r1' was carried before") as err:
        D.audit_deck(SMALL, GAME, [r1, r2, r3], ops, [], AUTHORS)
    assert (err.value.round, err.value.author) == ("r3", "axis")


def test_a_carried_card_whose_old_key_was_never_opened_is_refused():
    history, r1, sa, sb = _round("r1", ("a", "b", "c"), tag="rs")
    r2, sa2, sb2 = _reshuffle(history, r1, sa, sb, [D.Carry(round="r1", pos=2)])
    ops = [o for o in openings(SMALL, "r1", sa, sb, 3) if (o.step, o.index) != (4, 2)]
    with pytest.raises(D.DeckError, match="key 2 was never opened") as err:
        D.audit_deck(SMALL, GAME, [r1, r2], ops + openings(SMALL, "r2", sa2, sb2, 1), [], AUTHORS)
    assert (err.value.round, err.value.step, err.value.author) == ("r1", 4, "allied")


def test_roles_swapped_in_the_next_round_strip_the_right_old_keys():
    """r2 is led by the other player: each strips its own r1 key (allied's step 4,
    axis's step 3) although its role in r2 is the other one."""
    history, r1, sa, sb = _round("r1", ("a", "b", "c"), tag="sw")
    sources = [D.Carry(round="r1", pos=0), D.Carry(round="r1", pos=1)]
    sa2, sb2 = seeds("sw2")
    done: list[D.Step] = []
    resolve = D.history_resolver(SMALL, history)
    for i in range(4):
        # r2's first is allied (r1's second): its seeds are sb2 (new) and sb (old, step 4)
        seed, olds, old_steps = (sb2, {"r1": sb}, {"r1": 4}) if i % 2 == 0 else (sa2, {"r1": sa}, {"r1": 3})
        done.append(D.make_step(SMALL, GAME, "r2", sources, done, seed, resolve, olds, old_steps))
    r2 = D.DeckRound(steps=done)
    ops = openings(SMALL, "r1", sa, sb, 3) + D.open_all(SMALL, GAME, "r2", sb2, D.FIRST, 2) + \
        D.open_all(SMALL, GAME, "r2", sa2, D.SECOND, 2)
    authors = {"r1": ("axis", "allied"), "r2": ("allied", "axis")}
    d1, d2 = D.audit_deck(SMALL, GAME, [r1, r2], ops, [], authors)
    assert sorted(d2.labels) == sorted(d1.labels[:2])
    # Read with r1's roles instead, the audit strips the wrong keys and refuses step 1.
    with pytest.raises(D.DeckError, match="not the input card"):
        D.audit_deck(SMALL, GAME, [r1, r2], ops, [], {"r1": ("axis", "allied"), "r2": ("axis", "allied")})


def test_deck_wire_types_refuse_unknown_fields_and_are_immutable(three):
    history, rnd, sa, sb = three
    samples = [rnd, rnd.steps[0], rnd.steps[0].sources[0], D.Carry(round="r1", pos=0),
               D.open_key(SMALL, GAME, "r1", sa, 3, 0), D.Draw(round="r1", pos=0, to="axis")]
    for obj in samples:
        data = msgspec.json.encode(obj)
        assert msgspec.json.decode(data, type=type(obj)) == obj
        with pytest.raises(msgspec.ValidationError, match="unknown field"):
            msgspec.json.decode(data[:-1] + b',"extra":1}', type=type(obj))
    with pytest.raises(AttributeError):
        rnd.steps[0].round = "r2"


def test_an_input_deck_carrying_from_an_unknown_round_is_refused_at_step_1_by_the_first(three):
    history, rnd, sa, sb = three
    sources = [D.Carry(round="nope", pos=0)] + list(rnd.steps[0].sources[1:])
    bad = D.DeckRound(steps=[msgspec.structs.replace(rnd.steps[0], sources=sources)] + rnd.steps[1:])
    with pytest.raises(D.DeckError, match="carried card from round 'nope', which is not a completed round") as err:
        D.audit_deck(SMALL, GAME, [bad], openings(SMALL, "r1", sa, sb, 3), [], AUTHORS)
    assert (err.value.round, err.value.step, err.value.author) == ("r1", 1, "axis")


def test_the_ristretto255_library_leaves_no_file_behind(tmp_path):
    """rbcl writes its libsodium to a temporary file at import and leaves it;
    pbem.deck removes it once loaded, so no pbem command leaves 2.7 MB behind.
    On Windows a loaded library cannot be removed: there that one file stays
    (docs/deck.md), and nothing else."""
    code = ("from pbem import deck as D; g = D.RISTRETTO255; "
            "assert g.is_element(g.exp(D.encode_card(g, bytes(32), 'a'), 3))")
    env = dict(os.environ, TMPDIR=str(tmp_path), TMP=str(tmp_path), TEMP=str(tmp_path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    left = list(tmp_path.iterdir())
    if sys.platform == "win32":
        assert len(left) <= 1 and all(p.suffix == ".pyd" for p in left)
    else:
        assert left == []
