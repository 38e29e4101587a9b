"""Minefields as hidden board facts (rules/ritd/mines.py; RB 14.0-14.2,
16.55, 18.4), tested through the module's public functions: the leaf
encoding a Merkle set opening carries, the checks on an opened leaf and on
one construction's new set, and the hexes an enemy entered (issue 29:
mutation score)."""

from __future__ import annotations

import pytest

from rules.ritd import mines
from rules.ritd.hexmap import load_map

M = load_map()


def at(name: str) -> str:
    return M.resolve(name)


GAZALA, TOBRUK, ACROMA, DERNA, SIWA = (at(n) for n in ("Gazala", "Tobruk", "Acroma", "Derna", "Siwa"))
NETWORK = (GAZALA, TOBRUK, ACROMA, DERNA)


def _build(number: int = 1, *, free: bool = False, engaged: tuple[str, ...] = (), shown: tuple[str, ...] = (),
           dismantled_shown: tuple[str, ...] = ()) -> mines.MineBuild:
    return mines.MineBuild(side="axis", number=number, month=3, free=free, network=NETWORK, engaged=engaged,
                           shown=shown, dismantled_shown=dismantled_shown)


# ------------------------------------------------------------------ labels and leaves


def test_rb_16_55_each_construction_commits_a_new_numbered_set_per_side() -> None:
    """RB 16.55 (location not divulged): side and number of a set are read
    back from its label; anything else is not a Minefield set."""
    assert mines.set_label("allied", 3) == "mines.allied.3"
    assert mines.parse_label("mines.allied.3") == ("allied", 3)
    assert mines.parse_label(mines.set_label("axis", 12)) == ("axis", 12)
    for bad in ("mines.allied", "mines.allied.3.1", "mine.allied.3", "mines.italian.3", "mines.axis.x",
                "mines.axis.-1", "mines.axis."):
        assert mines.parse_label(bad) is None, bad


def test_rb_14_1_a_leaf_says_no_minefield_a_scenario_one_or_the_set_that_built_it() -> None:
    """RB 14.1, 18.4 rule 2: every hex's leaf is b"0" (none), b"s" (scenario
    Minefield) or the building set's number; decode is exact (no leading
    zero, no sign, at most four digits)."""
    assert mines.encode(None) == b"0" and mines.decode(b"0") is None
    assert mines.encode(mines.SCENARIO_BUILD) == b"s" and mines.decode(b"s") == mines.SCENARIO_BUILD
    for n in (1, 7, 10, 9999):
        assert mines.decode(mines.encode(n)) == n
    assert mines.encode(12) == b"12"
    for bad in (b"", b"01", b"00", b"-1", b"x", b"12345", b"1.0", b" 1", b"S"):
        with pytest.raises(ValueError, match="not a Minefield leaf"):
            mines.decode(bad)


def test_rb_14_1_the_set_covers_every_hex_of_the_map() -> None:
    """The committed set has a leaf for every hex (so "no Minefield" can be
    proved anywhere); read back whole it gives the Minefields and who built them."""
    built = {GAZALA: 2, TOBRUK: mines.SCENARIO_BUILD}
    leaves = mines.leaves(M, built)
    assert set(leaves) == set(M.hexes)
    assert leaves[GAZALA] == b"2" and leaves[TOBRUK] == b"s" and leaves[DERNA] == b"0"
    assert mines.read_set(M, [leaves[h] for h in M.hexes]) == built
    # One leaf this replay does not know: the set is not known whole.
    assert mines.read_set(M, [None if h == DERNA else leaves[h] for h in M.hexes]) is None
    with pytest.raises(ValueError):
        mines.read_set(M, [b"x" if h == DERNA else leaves[h] for h in M.hexes])
    # Read in the map's order: the first leaf that is unknown or not a Minefield leaf decides.
    order = list(M.hexes)
    first, later = order[0], order[-1]
    with pytest.raises(ValueError):
        mines.read_set(M, [b"x" if h == first else None if h == later else leaves[h] for h in order])
    assert mines.read_set(M, [None if h == first else b"x" if h == later else leaves[h] for h in order]) is None


# ------------------------------------------------------------------ one opened leaf (RB 14.2)


def test_rb_14_2_an_opened_leaf_with_a_legally_built_minefield_passes() -> None:
    build = _build(2)
    assert mines.check_leaf(M, "axis", GAZALA, b"2", 2, [build], (), ()) == []
    # A later set still holds it.
    assert mines.check_leaf(M, "axis", GAZALA, b"2", 5, [build], (), ()) == []
    assert mines.check_leaf(M, "axis", GAZALA, b"0", 2, [build], (), ()) == []


def test_rb_16_55_an_opened_minefield_must_come_from_a_construction_of_that_side_up_to_the_set() -> None:
    build = _build(2)
    later = mines.check_leaf(M, "axis", GAZALA, b"3", 2, [build, _build(3)], (), ())
    assert [p.rule for p in later] == ["RB 16.55"] and "claims set 3, which never built one" in later[0].message
    other_side = mines.MineBuild(side="allied", number=2, month=3, free=False, network=NETWORK, engaged=())
    probs = mines.check_leaf(M, "axis", GAZALA, b"2", 2, [other_side], (), ())
    assert [p.rule for p in probs] == ["RB 16.55"] and "never built one" in probs[0].message


def test_rb_16_55_an_opened_minefield_must_have_been_built_in_a_legal_hex() -> None:
    """Built outside the friendly Supply Network fixed at that Buildup, or in
    an engaged hex: the opening proves the construction illegal (RB 14.0)."""
    outside = mines.check_leaf(M, "axis", SIWA, b"1", 1, [_build(1)], (), ())
    assert [p.rule for p in outside] == ["RB 16.55"]
    assert "built in Month 3" in outside[0].message and "outside the axis Supply Network" in outside[0].message
    engaged = mines.check_leaf(M, "axis", GAZALA, b"1", 1, [_build(1, engaged=(GAZALA,))], (), ())
    assert [p.rule for p in engaged] == ["RB 16.55"] and "engaged" in engaged[0].message


def test_rb_18_0_a_scenario_minefield_only_where_the_scenario_places_one() -> None:
    assert mines.check_leaf(M, "allied", TOBRUK, b"s", 1, [], (TOBRUK,), ()) == []
    probs = mines.check_leaf(M, "allied", GAZALA, b"s", 1, [], (TOBRUK,), ())
    assert [p.rule for p in probs] == ["RB 18.0"] and "no allied scenario Minefield" in probs[0].message


def test_rb_14_2_a_revealed_minefield_cannot_vanish_from_a_later_set() -> None:
    probs = mines.check_leaf(M, "axis", GAZALA, b"0", 3, [], (), (GAZALA,))
    assert [p.rule for p in probs] == ["RB 14.2"] and "never publicly dismantled" in probs[0].message
    assert "Minefield at Gazala" in probs[0].message
    # A hex id the map does not know is named as given.
    odd = mines.check_leaf(M, "axis", "9999", b"0", 3, [], (), ("9999",))
    assert [p.rule for p in odd] == ["RB 14.2"] and "Minefield at 9999" in odd[0].message
    # Still standing: fine.
    assert mines.check_leaf(M, "axis", GAZALA, b"1", 3, [_build(1)], (), (GAZALA,)) == []


def test_rb_14_1_an_opened_leaf_that_is_no_minefield_value_is_refused() -> None:
    probs = mines.check_leaf(M, "axis", GAZALA, b"07", 3, [], (), ())
    assert [p.rule for p in probs] == ["RB 14.1"] and "set 3" in probs[0].message


# ------------------------------------------------------------------ one construction's set (RB 16.55)


def test_rb_16_55_a_paid_construction_adds_exactly_one_minefield_and_dismantles_none() -> None:
    before = {GAZALA: 1}
    assert mines.check_set(M, _build(2), before, {GAZALA: 1, TOBRUK: 2}) == []
    dropped = mines.check_set(M, _build(2), before, {TOBRUK: 2})
    assert {p.rule for p in dropped} == {"RB 16.55"}
    assert "dismantles 1 Minefields; a paid one none" in dropped[0].message
    none = mines.check_set(M, _build(2), before, {GAZALA: 1})
    assert [p.rule for p in none] == ["RB 16.55"] and "exactly one Minefield, not 0" in none[0].message
    moved = mines.check_set(M, _build(2), before, {GAZALA: 2})
    assert {p.rule for p in moved} == {"RB 16.55"} and "dismantles 1" in moved[0].message


def test_rb_16_55_a_construction_may_not_change_or_add_older_minefields() -> None:
    before = {GAZALA: 1}
    probs = mines.check_set(M, _build(2), before, {GAZALA: 1, ACROMA: 1, TOBRUK: 2})
    assert [p.rule for p in probs] == ["RB 16.55"] and "changes or adds older Minefields at Acroma" in probs[0].message
    relabel = mines.check_set(M, _build(3), {GAZALA: 1}, {GAZALA: 2, TOBRUK: 3})
    assert [p.rule for p in relabel] == ["RB 16.55"] and "changes or adds" in relabel[0].message


def test_rb_16_55_a_free_minefield_dismantles_exactly_two_in_the_network() -> None:
    before = {GAZALA: 1, ACROMA: 1}
    assert mines.check_set(M, _build(2, free=True), before, {TOBRUK: 2}) == []
    one = mines.check_set(M, _build(2, free=True), before, {ACROMA: 1, TOBRUK: 2})
    assert "dismantles 1 Minefields; a free one dismantles exactly two" in one[0].message
    # A Minefield outside the network cannot be dismantled (checked as at the Buildup).
    far = {GAZALA: 1, SIWA: 1}
    probs = mines.check_set(M, _build(2, free=True), far, {TOBRUK: 2})
    assert any("outside the friendly Supply Network" in p.message for p in probs)


def test_rb_16_55_the_new_minefield_is_in_a_legal_hex() -> None:
    outside = mines.check_set(M, _build(1), {}, {SIWA: 1})
    assert [p.rule for p in outside] == ["RB 16.55"] and "outside the axis Supply Network" in outside[0].message
    twice = mines.check_set(M, _build(1, engaged=(TOBRUK,)), {}, {TOBRUK: 1})
    assert "engaged" in twice[0].message


def test_rb_14_2_revealed_minefields_go_only_when_publicly_dismantled() -> None:
    before = {GAZALA: 1, ACROMA: 1}
    hidden_drop = mines.check_set(M, _build(2, free=True, shown=(GAZALA,)), before, {TOBRUK: 2})
    assert [p.rule for p in hidden_drop] == ["RB 14.2"] and "at Gazala vanished" in hidden_drop[0].message
    public = _build(2, free=True, shown=(GAZALA,), dismantled_shown=(GAZALA,))
    assert mines.check_set(M, public, before, {TOBRUK: 2}) == []
    lied = mines.check_set(M, public, {GAZALA: 1, ACROMA: 1, DERNA: 1}, {GAZALA: 1, TOBRUK: 2})
    assert [p.rule for p in lied] == ["RB 16.55"] and "Gazala was announced dismantled" in lied[0].message


# ------------------------------------------------------------------ hexes entered (RB 14.2, T-30)


def test_rb_14_2_entered_hexes_are_the_paths_after_their_start_and_newly_occupied_hexes() -> None:
    paths = [(GAZALA, ACROMA, TOBRUK), (DERNA,)]
    assert mines.entered(paths, occupied=(TOBRUK, SIWA, DERNA), watch=(DERNA, GAZALA)) == {ACROMA, TOBRUK, SIWA}
    assert mines.entered([], occupied=(GAZALA,), watch=(GAZALA,)) == set()
