"""Supply Cards in hand and the public record of the shared deck
(rules/ritd/cards.py; RB 3.3, 3.42, 3.48, 4.0-4.5, 16.6; decisions/turn.md
T-14..T-19), tested through the module's public functions (issue 29:
mutation score). The deck here is the game's: 28 real and 14 dummy cards,
hand limit 16 (scenarios.toml, RB 16.6)."""

from __future__ import annotations

import pytest

from rules.ritd import cards as cd
from rules.ritd.scenarios import load_scenarios

#: The plain deck order, not the test deal order of conftest.py.
pytestmark = pytest.mark.random_cards

DECK = load_scenarios().supply_deck


def test_rb_16_6_the_deck_is_28_real_and_14_dummy_cards_with_a_hand_limit_of_16() -> None:
    assert (DECK.real, DECK.dummy, DECK.total, DECK.hand_limit) == (28, 14, 42, 16)
    labels = cd.deck_labels(DECK)
    assert len(labels) == 42 and len(set(labels)) == 42
    assert labels[0] == "real-01" and labels[27] == "real-28" and labels[28] == "dummy-01" and labels[-1] == "dummy-14"
    assert sum(cd.label_is_real(lb) for lb in labels) == 28
    assert not cd.label_is_real("dummy-03") and cd.label_is_real("real-03")


def test_rb_16_6_cards_are_dealt_only_up_to_the_hand_limit() -> None:
    assert cd.room(cd.Hand(count=0), DECK) == 16
    assert cd.room(cd.Hand(count=15), DECK) == 1
    assert cd.room(cd.Hand(count=16), DECK) == 0
    assert cd.room(cd.Hand(count=18), DECK) == 0  # never negative


def test_rb_16_6_a_hand_knows_its_dummies_only_where_it_knows_its_real_cards() -> None:
    assert cd.Hand(count=5, real=3).dummy == 2 and cd.Hand(count=5, real=None).dummy is None


def test_rb_3_42_the_committed_number_of_real_cards_played() -> None:
    """RB 3.42: cards are played face down; the number of real ones is
    committed and must be a whole number from 0 to the cards played."""
    assert cd.parse_real(None, 2) is None
    assert cd.parse_real(b"0", 2) == 0 and cd.parse_real(b"2", 2) == 2
    for bad in (b"3", b"-1", b"x", b"", b"1.0", b" 1"):
        assert cd.parse_real(bad, 2) == -1, bad


def test_rb_3_48_the_cards_played_must_be_in_the_hand() -> None:
    hand = cd.Hand(count=3, real=1)
    assert cd.play_problems(hand, 3, 1, "RB 3.42") == []
    assert cd.play_problems(hand, 2, 0, "RB 3.42") == []
    too_many = cd.play_problems(hand, 4, None, "RB 3.42")
    assert [p.rule for p in too_many] == ["RB 3.42"] and "4 cards played, but the hand holds 3" in too_many[0].message
    reals = cd.play_problems(hand, 2, 2, "RB 3.48")
    assert [p.rule for p in reals] == ["RB 3.48"]
    assert "2 real cards played, but the hand holds 1 real cards" in reals[0].message
    dummies = cd.play_problems(hand, 3, 0, "RB 3.48")
    assert [p.message for p in dummies] == ["3 dummy cards played, but the hand holds 2 dummies"]
    malformed = cd.play_problems(hand, 2, -1, "RB 3.42")
    assert [p.rule for p in malformed] == ["RB 3.42"] and "(0-2)" in malformed[0].message
    # Secret to this replay (the opponent's): only the public count is checked.
    assert cd.play_problems(hand, 3, None, "RB 3.42") == []
    assert cd.play_problems(cd.Hand(count=3, real=None), 3, 3, "RB 3.42") == []
    assert cd.play_problems(cd.Hand(count=3, real=None), 3, -1, "RB 3.42") != []


def test_rb_3_48_cards_spent_and_dummies_discarded_leave_the_hand() -> None:
    hand = cd.Hand(count=5, real=3)
    assert cd.spend(hand, 2, 1) == cd.Hand(count=3, real=2)
    assert cd.spend(hand, 2, None) == cd.Hand(count=3, real=None)
    assert cd.spend(hand, 2, -1) == cd.Hand(count=3, real=None)
    assert cd.spend(cd.Hand(count=5, real=None), 2, 1) == cd.Hand(count=3, real=None)
    assert cd.discard_dummies(hand, 2) == cd.Hand(count=3, real=3)


@pytest.mark.parametrize("moves,combat,assault,blitz,expect", [
    (0, False, False, False, (0, "RB 4.5", "nothing")),
    (1, False, False, False, (1, "RB 4.1", "a Move (a Basic Turn)")),
    (0, True, False, False, (1, "RB 4.1", "a Combat Round (a Basic Turn)")),
    (1, True, False, False, (1, "RB 4.1", "a Move (a Basic Turn)")),
    (2, False, False, False, (2, "RB 4.2", "two Moves (an Offensive Turn)")),
    (2, True, False, False, (2, "RB 4.2", "two Moves (an Offensive Turn)")),
    (1, True, True, False, (2, "RB 4.3", "Assault Battles (an Assault Turn)")),
    (2, True, True, True, (3, "RB 4.4", "the Blitz Movement and Combat phases (a Blitz Turn)")),
])
def test_rb_4_0_to_4_5_the_real_cards_a_turn_needs_for_what_it_did(moves, combat, assault, blitz, expect) -> None:
    assert cd.turn_cost(moves, combat, assault, blitz) == expect


def test_rb_4_0_each_turn_option_costs_its_real_cards() -> None:
    assert cd.OPTION_COST == {"pass": 0, "basic": 1, "offensive": 2, "assault": 2, "blitz": 3}


@pytest.mark.parametrize("real,moves,assault,blitz,name", [
    (0, 0, False, False, "no real card"),
    (-1, 2, False, False, "no real card"),
    (1, 1, False, False, "basic"),
    (2, 2, False, False, "offensive"),
    (2, 1, False, False, "assault"),
    (2, 2, True, False, "assault"),
    (3, 2, False, False, "offensive"),
    (3, 1, True, True, "blitz"),
    (2, 1, False, True, "assault"),
])
def test_rb_4_0_sidebar_the_option_a_turn_was(real, moves, assault, blitz, name) -> None:
    assert cd.option_name(real, moves, assault, blitz) == name


def test_rb_3_3_the_allies_take_the_initiative_only_with_an_unmatched_real_card() -> None:
    assert cd.initiative(True, False) == "allied"
    assert cd.initiative(True, None) == "allied"
    assert cd.initiative(True, True) == "axis"
    assert cd.initiative(False, False) == "axis"
    assert cd.initiative(None, None) == "axis"


# ------------------------------------------------------------------ the shared deck's public record (RB 16.6, T-15)


def _first_round(n: int = 42) -> cd.Deck:
    labels = cd.deck_labels(DECK)[:n]
    return cd.begin_round(cd.Deck(), "axis", labels, [("axis", 6), ("allied", 3)])


def test_rb_16_6_a_card_reference_names_its_round_and_position() -> None:
    assert cd.ref("s2", 17) == "s2:17"
    assert cd.unref("s2:17") == ("s2", 17)
    assert cd.unref(cd.ref("s10", 0)) == ("s10", 0)


def test_rb_16_6_the_first_round_is_the_whole_deck_dealt_from_the_top() -> None:
    d = _first_round()
    assert (d.rounds, d.round, d.steps, d.first) == (1, "s1", 0, "axis")
    assert d.sources["s1"] == tuple(f"card:{lb}" for lb in cd.deck_labels(DECK))
    assert d.jobs == (cd.DeckJob(kind="shuffle", side="axis",
                                 deal=(("axis", (0, 1, 2, 3, 4, 5)), ("allied", (6, 7, 8)))),)
    # The positions are marked dealt only when the keys come.
    assert d.dealt == () and cd.undealt(d) == list(range(42))
    assert cd.Deck().round == ""


def test_rb_16_6_next_positions_come_from_the_top_skipping_dealt_ones() -> None:
    d = cd.Deck(rounds=1, sources={"s1": ("card:a",) * 6}, dealt=(0, 2))
    assert cd.undealt(d) == [1, 3, 4, 5]
    assert cd.next_positions(d, 2) == (1, 3)
    assert cd.next_positions(d, 9) == (1, 3, 4, 5)


def test_rb_16_6_a_deal_is_cut_to_what_is_left_and_skips_positions_already_promised() -> None:
    d = _first_round(12)  # 9 of 12 promised to the first deal
    more = cd.queue_deal(d, "allied", 5)
    assert more.jobs[-1] == cd.DeckJob(kind="deal", side="allied", deal=(("allied", (9, 10, 11)),))
    empty = cd.queue_deal(more, "axis", 1)
    assert empty == more  # nothing left to deal: no job


def test_rb_16_6_a_reshuffle_carries_the_undealt_and_the_returned_cards() -> None:
    d = cd.Deck(rounds=1, sources={"s1": ("card:a", "card:b", "card:c", "card:d")}, dealt=(0, 2),
                returned=("s1:0",))
    new = cd.begin_round(d, "allied", (), [("allied", 2)])
    assert (new.rounds, new.round, new.first, new.returned) == (2, "s2", "allied", ())
    assert new.sources["s2"] == ("carry:s1:1", "carry:s1:3", "carry:s1:0")
    assert list(new.sources) == ["s2"]  # the rules read the current round's input deck only
    assert new.jobs[-1] == cd.DeckJob(kind="shuffle", side="allied", deal=(("allied", (0, 1)),))


def test_rb_3_42_cards_leave_the_hand_played_face_down_or_straight_back_to_the_deck() -> None:
    d = cd.Deck(held={"axis": ("s1:0", "s1:1", "s1:2"), "allied": ("s1:3",)}, played={"axis": ("s1:5",)})
    played = cd.take(d, "axis", ("s1:1",), to_played=True)
    assert played.held["axis"] == ("s1:0", "s1:2") and played.played["axis"] == ("s1:5", "s1:1")
    assert played.held["allied"] == ("s1:3",) and played.returned == ()
    back = cd.take(d, "axis", ("s1:0", "s1:2"), to_played=False)
    assert back.held["axis"] == ("s1:1",) and back.returned == ("s1:0", "s1:2") and back.played == d.played


def test_rb_3_42_a_show_job_is_queued_only_for_cards() -> None:
    d = cd.Deck()
    assert cd.queue_show(d, "axis", (), "play") == d
    shown = cd.queue_show(d, "axis", ("s1:0",), "play", "turn3.option")
    assert shown.jobs == (cd.DeckJob(kind="show", side="axis", refs=("s1:0",), why="play", label="turn3.option"),)


def test_rb_3_42_the_cards_named_are_that_many_distinct_cards_of_the_hand() -> None:
    d = cd.Deck(held={"axis": ("s1:0", "s1:1")})
    assert cd.ref_problems(d, "axis", ("s1:0", "s1:1"), 2, "RB 3.42") == []
    for refs in (("s1:0",), ("s1:0", "s1:0"), ("s1:0", "s1:1", "s1:2")):
        probs = cd.ref_problems(d, "axis", refs, 2, "RB 3.42")
        assert [p.rule for p in probs] == ["RB 3.42"] and "name the 2 card(s)" in probs[0].message
    missing = cd.ref_problems(d, "axis", ("s1:0", "s1:7"), 2, "RB 3.42")
    assert [p.message for p in missing] == ["card(s) s1:7 are not in the axis hand"]
    assert cd.ref_problems(d, "allied", ("s1:0",), 1, "RB 3.42") != []


def _faces(table: dict[str, str | None]):
    return lambda rnd, pos: table.get(cd.ref(rnd, pos))


def test_rb_3_42_a_replay_sees_the_faces_of_the_cards_it_knows() -> None:
    card = _faces({"s1:0": "real-01", "s1:1": "dummy-02", "s1:2": "real-05", "s1:3": None})
    assert cd.faces(card, ("s1:1", "s1:0")) == ["dummy-02", "real-01"]
    assert cd.real_among(card, ("s1:0", "s1:1", "s1:2")) == 2
    assert cd.real_among(card, ("s1:1",)) == 0
    assert cd.real_among(card, ("s1:0", "s1:3")) is None
    # The owner picks real and dummy cards of its hand: which ones of each kind
    # is the chooser's (T-41), listed in the order of the hand.
    held = ("s1:0", "s1:1", "s1:2", "s1:3")
    asked = []

    def last(kind: str, n: int, k: int) -> tuple[int, ...]:
        asked.append((kind, n, k))
        return tuple(range(n - k, n))

    assert cd.pick(card, held, 2, 1, last) == ("s1:0", "s1:1", "s1:2")
    assert asked == [("real", 2, 2), ("dummy", 1, 1)]
    assert cd.pick(card, held, 1, 0, last) == ("s1:2",)
    assert asked[2:] == [("real", 2, 1)]  # nothing of a kind played: no choice asked
    assert cd.pick(card, held, 0, 0, last) == () and len(asked) == 3
    assert cd.pick(card, held, 1, 0, lambda kind, n, k: tuple(range(k))) == ("s1:0",)
    assert cd.pick(card, held, 0, 1, last) == ("s1:1",)
    assert cd.pick(card, held, 3, 0, last) is None
    assert cd.pick(card, held, 0, 2, last) is None


def test_t_41_cards_named_are_listed_in_the_order_of_the_hand() -> None:
    held = ("s1:4", "s1:0", "s2:3")
    assert cd.in_hand_order(held, ("s1:4", "s2:3"))
    assert cd.in_hand_order(held, ())
    assert not cd.in_hand_order(held, ("s2:3", "s1:0"))
    assert not cd.in_hand_order(held, ("s1:0", "s1:4"))
