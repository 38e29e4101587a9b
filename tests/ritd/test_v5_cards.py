"""Face-down cards do not leak through their places in the hand (issue 27
point 3; rules version 5, decisions/turn.md T-41).

Version 4 played the first real cards, then the first dummies, in the order
of the hand. The places of the cards in a hand are public, so once the cards
played are shown (Supply Revealed, the Initiative, dummies handed back) the
opponent deduced cards still held: in three 1941 self-play games 4, 4 and 8
hidden cards, all correct. Version 5 chooses uniformly at random among the
held cards of each kind, from the player's private stream (pbem.private),
or takes the cards the player names ("basic cards s1:3").
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

import msgspec
import pytest

from pbem import codec, session
from pbem.errors import IllegalAction
from pbem.private import PrivateChoices, key_of
from rules.ritd import cards as cd
from rules.ritd import supplycards
from rules.ritd.actions import EndBuildup, PlayCards
from rules.ritd.cards import Deck, Hand
from rules.ritd.state import State
from rules.ritd_v4 import cards as cd_v4
from tests.ritd.ritd_table import new_game
from tests.ritd.test_crafted_events import deliver_everywhere
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")

# -- the attack: do the places of the cards played predict the cards still held? --------------

class _Ctx:
    """The owner's compose ctx over one dealt hand: its faces, and the private
    stream the engine hands the rules (keyed per deal, as per player)."""

    def __init__(self, faces: dict[str, str], key: bytes) -> None:
        self.faces, self.choices = faces, PrivateChoices(key, "game", "axis", 9, 0)

    def card(self, rnd: str, pos: int) -> str | None:
        return self.faces.get(cd.ref(rnd, pos))

    def private_sample(self, purpose: str, n: int, k: int) -> tuple[int, ...]:
        return self.choices.sample(purpose, n, k)


def _deal(rng: random.Random, reals: int, dummies: int) -> tuple[tuple[str, ...], dict[str, str]]:
    """A hand in the order it was dealt (public places), its faces shuffled."""
    held = tuple(cd.ref("s1", p) for p in sorted(rng.sample(range(42), reals + dummies)))
    faces = [f"real-{i:02d}" for i in range(reals)] + [f"dummy-{i:02d}" for i in range(dummies)]
    rng.shuffle(faces)
    return held, dict(zip(held, faces, strict=True))


def _v5(held, faces, key, real, dummies) -> tuple[str, ...]:
    state = State(scenario="1941", month=1, phase="turn", side="axis", deck=Deck(held={"axis": held}),
                  hands={"axis": Hand(count=len(held), real=sum(map(cd.label_is_real, faces.values())))})
    return supplycards.pick_cards(state, "axis", real, dummies, _Ctx(faces, key), "RB 3.42")


def _v4(held, faces, key, real, dummies) -> tuple[str, ...]:
    picked = cd_v4.pick(_Ctx(faces, key).card, held, real, dummies)
    assert picked is not None
    return picked


def _attack(pick, reals: int, dummies: int, real: int, dummy: int, deals: int = 3000) -> tuple[float, float]:
    """The opponent's best guess from places: it learns, over ``deals`` hands,
    how often a still-held place is real given which places were played and
    what they showed, then guesses each still-held card of ``deals`` fresh
    hands by that table. Returns its accuracy and the best accuracy without
    places (always guessing the kind more of the cards still held are)."""
    rng = random.Random(20261126)

    def observed(i: int):
        held, faces = _deal(rng, reals, dummies)
        played = pick(held, faces, i.to_bytes(32, "big"), real, dummy)
        assert sorted(map(cd.label_is_real, (faces[r] for r in played))) == [False] * dummy + [True] * real
        seen = tuple((held.index(r), cd.label_is_real(faces[r])) for r in played)
        return seen, [(held.index(r), cd.label_is_real(faces[r])) for r in held if r not in played]

    table: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    for i in range(deals):
        seen, rest = observed(i)
        for place, is_real in rest:
            table[seen, place][0] += is_real
            table[seen, place][1] += 1
    right = total = 0
    for i in range(deals, 2 * deals):
        seen, rest = observed(i)
        for place, is_real in rest:
            n_real, n = table[seen, place]
            right += (2 * n_real > n) == is_real
            total += 1
    left_real, left = reals - real, reals + dummies - real - dummy
    return right / total, max(left_real, left - left_real) / left


@pytest.mark.parametrize(("reals", "dummies", "real", "dummy"), [
    (3, 3, 1, 1),  # "basic + 1 dummy" from a hand of 3 real and 3 dummies
    (4, 2, 2, 0),  # "offensive"
    (2, 4, 0, 2),  # "bluff 2", or two dummies handed back at Resupply (RB 16.6)
])
def test_issue_27_the_places_of_the_cards_played_do_not_predict_the_cards_still_held(reals, dummies, real, dummy):
    """Differential: against version 4's choice by place the opponent's best
    guess of each card still held is far better than chance; against version
    5's private uniform choice it is no better than guessing without places
    (within 3 points over 12,000 guesses, about 6 standard deviations)."""
    leaky, chance = _attack(_v4, reals, dummies, real, dummy)
    assert leaky > chance + 0.12, (leaky, chance)
    private, chance = _attack(_v5, reals, dummies, real, dummy)
    assert private < chance + 0.03, (private, chance)


def test_t_41_every_card_of_a_kind_is_played_equally_often():
    """The choice among the real cards (and among the dummies) of one hand is
    uniform: over 4,000 keys each of the 3 real cards is played about a third
    of the times one of them is, and each of the 3 dummies too."""
    held, faces = _deal(random.Random(1), 3, 3)
    counts = dict.fromkeys(held, 0)
    for i in range(4000):
        for r in _v5(held, faces, i.to_bytes(32, "big"), 1, 1):
            counts[r] += 1
    assert all(abs(n - 4000 / 3) < 5 * (4000 * 2 / 9) ** 0.5 for n in counts.values()), counts


# -- the player names the cards -----------------------------------------------------------------

@pytest.fixture
def demo(tmp_path):
    """The 19.0 Demo after both set-ups: the Axis Initial Supply Check of Player-Turn 1 is due."""
    return new_game(tmp_path / "game", "demo", DEMO_AXIS, demo_allied())


def _hand(side) -> tuple[list[str], list[str]]:
    """``side``'s held cards as its own replay sees them: (real, dummies), in hand order."""
    replay = side.seat().replay
    held = replay.state.deck.held[side.role]
    real = [r for r in held if cd.label_is_real(replay.card(*cd.unref(r)) or "")]
    return real, [r for r in held if r not in real]


def _played(seat, *orders: str) -> PlayCards:
    return _played_with(seat, None, *orders)


def _played_with(seat, key: bytes | None, *orders: str) -> PlayCards:
    drafted = session.parse_orders(seat.rules, seat.replay, seat.role, seat.vault, [], list(orders), private_key=key)
    return msgspec.json.decode(bytes(drafted[-1].action), type=PlayCards)


def test_t_41_the_player_may_name_the_cards_it_plays(demo):
    """RB 3.42: "the Active Player secretly selects one Turn Option by playing
    the required number of real Supply cards face-down (dummy cards may also
    be played to deceive the opponent)". Which cards is the player's: named
    at the end of the order, listed in the order of the hand whatever order
    they are named in (T-41)."""
    real, dummies = _hand(demo.axis)
    seat = demo.axis.seat()
    named = f"basic + 1 dummy cards {dummies[-1]}, {real[-1]}"
    play = _played(seat, "supply check", named)
    held = seat.replay.state.deck.held["axis"]
    assert play.cards == tuple(r for r in held if r in (real[-1], dummies[-1])) and play.count == 2
    assert _played(seat, "supply check", f"basic + 1 dummy cards {real[-1]} {dummies[-1]}") == play


def test_t_41_a_named_card_of_the_wrong_kind_or_not_held_is_refused_with_the_rule(demo):
    real, dummies = _hand(demo.axis)
    seat = demo.axis.seat()
    with pytest.raises(IllegalAction) as wrong_kind:
        _played(seat, "supply check", f"basic cards {dummies[0]}")
    assert "RB 3.42: the cards named hold 0 real card(s) and 1 dummy; the order needs 1 real and 0" in \
        str(wrong_kind.value.details)
    with pytest.raises(IllegalAction) as not_held:
        _played(seat, "supply check", "basic cards s9:40")
    assert "RB 3.42: card s9:40 is not in your hand" in str(not_held.value.details)
    with pytest.raises(IllegalAction) as too_many:
        _played(seat, "supply check", f"basic cards {real[0]} {real[1]}")
    assert "RB 3.42: name 1 card(s), one each, not 2" in str(too_many.value.details)


def test_t_41_without_names_the_choice_is_private_and_repeatable_at_the_same_place(demo):
    """The engine's private stream (pbem.private): the same order composed
    again (after an undo) chooses the same cards; the cards chosen are of the
    kinds the order pays with."""
    def composed() -> PlayCards:
        seat = demo.axis.seat()
        added = session.add_orders(seat, ["supply check", "offensive + 1 dummy"])
        session.undo(seat, None)
        return msgspec.json.decode(bytes(added[-1].action), type=PlayCards)

    first, again = composed(), composed()
    assert first.cards == again.cards and len(first.cards) == 3
    seat = demo.axis.seat()
    assert first == _played_with(seat, key_of(seat.identity), "supply check", "offensive + 1 dummy")
    others = {_played_with(seat, bytes([i]) * 32, "supply check", "offensive + 1 dummy").cards for i in range(12)}
    assert len(others) > 1  # another key, another choice: the stream is the player's own
    faces = [seat.replay.card(*cd.unref(r)) or "" for r in first.cards]
    assert sorted(map(cd.label_is_real, faces)) == [False, True, True]


# -- one valid form: the cards in the order of the hand (canonical.py) -------------------------

def test_t_41_cards_signed_out_of_the_order_of_the_hand_are_refused(demo, tmp_path: Path):
    """A patched client signs the cards of "offensive" in reverse order: the
    same play in a second form. receive (nothing stored), verify and audit
    refuse it with exit 5, naming the signer and the rule."""
    seat = demo.axis.seat()
    drafted = session.parse_orders(seat.rules, seat.replay, "axis", seat.vault, [], ["supply check", "offensive"])
    play = msgspec.json.decode(bytes(drafted[-1].action), type=PlayCards)
    assert len(play.cards) == 2
    drafted[-1] = session.DraftOrder(text="crafted", secrets=drafted[-1].secrets,
                                     action=codec.raw(msgspec.structs.replace(play, cards=play.cards[::-1])))
    body = session._body(seat.replay, "axis", session._with_secrets(seat.vault, drafted), drafted, x_next=bytes(32))
    for out in deliver_everywhere(demo.allied, session._sign(seat.identity, body), body.seq, "axis", tmp_path):
        assert "RB 3.42" in out and "not listed in the order of the hand" in out and "one valid form" in out, out


def test_t_41_dummies_handed_back_out_of_the_order_of_the_hand_are_refused():
    from rules.ritd import canonical

    state = State(scenario="demo", month=2, phase="buildup", side="axis",
                  deck=Deck(held={"axis": ("s1:4", "s1:1", "s1:9")}))
    assert canonical.problems(state, EndBuildup(discard=2, cards=("s1:4", "s1:9")), "axis") == []
    assert [p.rule for p in canonical.problems(state, EndBuildup(discard=2, cards=("s1:9", "s1:1")), "axis")] \
        == ["RB 16.6"]


def test_t_41_a_named_challenge_card_is_real_or_dummy_as_its_face_says(demo):
    """RB 3.3: "The Allied player may challenge for the Initiative by playing a
    (real or dummy) Supply Card face down." Named, the card decides which:
    the commitment follows its face; a card not held is refused."""
    from rules.ritd.actions import Challenge
    from tests.ritd.test_game_month import _to_initiative

    _to_initiative(demo)
    real, dummies = _hand(demo.allied)
    seat = demo.allied.seat()
    for ref, value in ((dummies[-1], b"0"), (real[0], b"1")):
        drafted = session.parse_orders(seat.rules, seat.replay, "allied", seat.vault, [], [f"challenge cards {ref}"])
        challenge = msgspec.json.decode(bytes(drafted[-1].action), type=Challenge)
        assert challenge.card == ref
        assert bytes.fromhex(drafted[-1].secrets[challenge.label].value) == value
    with pytest.raises(IllegalAction, match="orders rejected") as not_held:
        session.parse_orders(seat.rules, seat.replay, "allied", seat.vault, [], ["challenge cards s9:41"])
    assert "RB 3.3: card s9:41 is not in your hand" in str(not_held.value.details)
    demo.play("allied", f"challenge cards {dummies[-1]}")
    demo.play("axis", "decline")
    demo.play("allied", "open challenge")
    assert _state_of(demo.axis).turn.active == "axis"  # the dummy named was played


def _state_of(side) -> State:
    return side.seat().replay.state


def test_t_41_a_pass_plays_no_card_and_names_none(demo):
    """RB 4.5: a Pass plays no Supply Card, so it names none."""
    seat = demo.axis.seat()
    with pytest.raises(IllegalAction) as refused:
        session.parse_orders(seat.rules, seat.replay, "axis", seat.vault, [], ["supply check", "pass cards s1:0"])
    assert "'pass cards s1:0': not an order now" in str(refused.value.details)


def test_t_41_explain_cards_lists_the_hand_by_place_with_its_own_faces_only(demo):
    """`pbem explain cards hand` shows the places (RB 16.6: a hand's count is
    public) and faces of the reader's own cards, so it can name them; the
    enemy hand shows places only."""
    from click.testing import CliRunner

    from pbem.cli import cli

    real, dummies = _hand(demo.axis)
    out = CliRunner().invoke(cli, ["explain", "cards", "both", "-g", str(demo.axis.gd.path)])
    assert out.exit_code == 0, out.output
    mine, enemy, how = out.output.splitlines()[:3]
    assert all(f"{r} real" in mine for r in real) and all(f"{r} dummy" in mine for r in dummies)
    assert "the allied hand: 3 Supply Cards at " in enemy and "real" not in enemy and "dummy" not in enemy
    assert "'basic + 1 dummy cards s1:3, s1:7'" in how
    bad = CliRunner().invoke(cli, ["explain", "cards", "deck", "-g", str(demo.axis.gd.path)])
    assert bad.exit_code == 2 and "name hand, axis, allied or both" in bad.output


def test_t_41_dummies_named_at_the_end_of_the_buildup_are_the_ones_handed_back(demo):
    """RB 16.6: dummies may be handed back at Resupply; named ("end buildup
    cards s1:2"), exactly those go back, shown as dummies; a real card named
    is refused with the rule."""
    from tests.ritd.test_game_month import _now, due_count

    demo.play("axis", "supply check", "pass", "end movement", "supply check")
    demo.play("allied", "supply check", "pass", "end movement", "supply check")
    if _now(demo.axis).player1 != "axis":
        demo.play("allied", "reinforce", "end buildup")
    demo.play("axis", "early arrival")
    real, dummies = _hand(demo.axis)
    seat = demo.axis.seat()
    with pytest.raises(IllegalAction) as refused:
        session.parse_orders(seat.rules, seat.replay, "axis", seat.vault, [], [f"end buildup cards {real[0]}"])
    assert "RB 16.6: the cards named hold 1 real card(s) and 0 dummies; the order needs 0 real and 1" in \
        str(refused.value.details)
    orders = ["reinforce"] if due_count(_now(demo.axis), "axis") else []
    demo.play("axis", *orders, f"end buildup cards {dummies[-1]}")
    assert dummies[-1] not in _state_of(demo.allied).deck.held["axis"]
    assert all(r in _state_of(demo.allied).deck.held["axis"] for r in (*real, *dummies[:-1]))
