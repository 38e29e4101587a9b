"""Refusals of the engine's checks in pbem/game.py that no game test pinned
(issue 29): the shared deck's messages at receipt and the audit's game
invariants, driven through ``Replay`` directly (no rules module deals cards
here, so the deck state is set up by hand as a game would leave it), and a
Merkle leaf whose opening proves an earlier action illegal."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from pbem import codec, session
from pbem import deck as D
from pbem.errors import IllegalAction
from pbem.game import CommitRecord, Replay
from pbem.identity import Identity
from pbem.rulesapi import Rules
from tests.conftest import new_table
from tests.race import rules as race

G = D.PLAY
GAME = bytes(range(32))
SEEDS = {("r1", "axis"): bytes([1]) * 32, ("r1", "allied"): bytes([2]) * 32,
         ("r2", "axis"): bytes([3]) * 32, ("r2", "allied"): bytes([4]) * 32,
         ("r3", "axis"): bytes([5]) * 32, ("r3", "allied"): bytes([6]) * 32}


def _replay() -> Replay:
    r = Replay(race.RULES)
    r.keys = {"axis": Identity.generate().public, "allied": Identity.generate().public}
    r.game_id = GAME
    r.version = codec.new_game_version(False)  # a game pbem new makes: its deck is D.PLAY's group
    assert r.deck_group is G
    return r


def _commit_seed(r: Replay, rnd: str, role: str) -> None:
    r.commitments[D.seed_label(rnd, role)] = CommitRecord(bytes(32), 0, role)


def _step(r: Replay, rnd: str, sources, author: str, deal=(), old=None) -> D.DeckStep:
    done = r.ledger.rounds.get(rnd, [])
    olds = {k[0]: v for k, v in SEEDS.items() if k[1] == author and k[0] != rnd} if old is None else old
    step = D.make_step(G, GAME, rnd, sources, done, SEEDS[(rnd, author)],
                       D.history_resolver(G, r.ledger.history()), olds)
    number = len(done) + 1
    keys = [D.open_key(G, GAME, rnd, SEEDS[(rnd, author)], number, p) for p in deal]
    return D.DeckStep(step=step, deal=keys)


def _task(rnd, sources, role, deal=(), first="axis") -> D.DeckTask:
    return D.DeckTask(role=role, kind="step", round=rnd, first=first, sources=tuple(sources), deal=tuple(deal))


def _play_round(r: Replay, rnd: str, sources, deal3=(), deal4=(), seq=1):
    """Four honest steps by axis (first) and allied; step 3 deals ``deal3`` to
    allied, step 4 deals ``deal4`` to axis."""
    for role in ("axis", "allied"):
        _commit_seed(r, rnd, role)
    for number, author in enumerate(("axis", "allied", "axis", "allied"), 1):
        deal = deal3 if number == 3 else deal4 if number == 4 else ()
        r.ledger.record(r, _task(rnd, sources, author, deal), _step(r, rnd, sources, author, deal), author, seq)
        seq += 1
    return seq


CARDS = [D.Card(label=lb) for lb in ("a", "b", "c", "d")]


def _open_seeds(r: Replay, *rounds: str) -> None:
    for rnd in rounds:
        for role in ("axis", "allied"):
            r.opened[D.seed_label(rnd, role)] = SEEDS[(rnd, role)]


def test_an_honest_round_through_the_receiver_and_the_audit():
    r = _replay()
    _play_round(r, "r1", CARDS, deal3=(0,), deal4=(1,))
    assert r.ledger.dealt == {("r1", 0): "allied", ("r1", 1): "axis"}
    assert r.ledger.first == {"r1": "axis"} and len(r.ledger.rounds["r1"]) == 4
    assert r.card("r1", 2) is None  # nobody sees an undealt card
    _open_seeds(r, "r1")
    [dealt] = r.deck_audit()
    assert sorted(dealt.labels) == ["a", "b", "c", "d"] and dealt.holders == ["allied", "axis", "", ""]
    # With both seeds known, every position shows its card, dealt (published key) or not.
    assert [r.card("r1", p) for p in range(4)] == dealt.labels
    assert r.card("r1", 4) is None and r.card("r9", 0) is None


def _record(r, task, action, author, seq):
    """A deck message recorded by the replay's ledger, as the replay does."""
    r.ledger.record(r, task, action, author, seq)


def test_a_player_sees_exactly_the_cards_dealt_to_it():
    """Axis knows its own seed only: the card allied dealt it (position 1), not the
    one it dealt to allied (position 0) nor any undealt one."""
    r = _replay()
    _play_round(r, "r1", CARDS, deal3=(0,), deal4=(1,))
    r.known = {D.seed_label("r1", "axis"): SEEDS[("r1", "axis")]}
    seen = [r.card("r1", p) for p in range(4)]
    assert seen[0] is None and seen[2] is None and seen[3] is None
    r.ledger._cards.clear()
    r.opened = {D.seed_label(rnd, role): seed for (rnd, role), seed in SEEDS.items() if rnd == "r1"}
    assert seen[1] == r.card("r1", 1) is not None


def test_a_card_read_once_is_remembered_across_later_deck_messages_and_only_what_was_readable():
    """The card memo (issue 20: openings were recomputed after every deck message)
    keeps a card this replay could read through later rounds' messages, and never
    holds a card it could not read."""
    r = _replay()
    _play_round(r, "r1", CARDS, deal3=(0,), deal4=(1,))
    r.known = {D.seed_label("r1", "axis"): SEEDS[("r1", "axis")]}
    own = r.card("r1", 1)
    assert own is not None and r.card("r1", 0) is None
    _play_round(r, "r2", CARDS, deal3=(0,), deal4=(1,), seq=5)
    assert r.ledger._cards.get(("r1", 1)) == own and ("r1", 0) not in r.ledger._cards
    assert r.card("r1", 1) == own and r.card("r1", 0) is None


def test_a_second_players_step_2_before_its_seed_commitment_is_refused():
    r = _replay()
    _commit_seed(r, "r1", "axis")
    r.ledger.record(r, _task("r1", CARDS, "axis"), _step(r, "r1", CARDS, "axis"), "axis", 1)
    with pytest.raises(D.DeckError, match="the author's seed for the round is not committed") as err:
        r.ledger.record(r, _task("r1", CARDS, "allied"), _step(r, "r1", CARDS, "allied"), "allied", 2)
    assert (err.value.step, err.value.author) == (2, "allied")
    assert len(r.ledger.rounds["r1"]) == 1  # nothing recorded
    _commit_seed(r, "r1", "allied")
    r.ledger.record(r, _task("r1", CARDS, "allied"), _step(r, "r1", CARDS, "allied"), "allied", 2)
    assert len(r.ledger.rounds["r1"]) == 2


def test_a_first_step_before_its_seed_commitment_is_refused():
    r = _replay()
    with pytest.raises(D.DeckError, match="seed for the round is not committed") as err:
        r.ledger.record(r, _task("r1", CARDS, "axis"), _step(r, "r1", CARDS, "axis"), "axis", 1)
    assert (err.value.step, err.value.author) == (1, "axis")
    assert "r1" not in r.ledger.rounds


def test_steps_3_and_4_need_no_further_commitment_of_the_seed():
    r = _replay()
    for role in ("axis", "allied"):
        _commit_seed(r, "r1", role)
    for author in ("axis", "allied"):
        r.ledger.record(r, _task("r1", CARDS, author), _step(r, "r1", CARDS, author), author, 1)
    r.commitments.clear()  # only steps 1 and 2 ask for the seed's commitment
    for author in ("axis", "allied"):
        r.ledger.record(r, _task("r1", CARDS, author), _step(r, "r1", CARDS, author), author, 1)
    assert len(r.ledger.rounds["r1"]) == 4


def test_a_step_by_the_wrong_player_is_refused():
    r = _replay()
    for role in ("axis", "allied"):
        _commit_seed(r, "r1", role)
    with pytest.raises(D.DeckError, match="step 1 is not allied's"):
        r.ledger.record(r, _task("r1", CARDS, "allied"), _step(r, "r1", CARDS, "allied"), "allied", 1)
    r.ledger.record(r, _task("r1", CARDS, "axis"), _step(r, "r1", CARDS, "axis"), "axis", 1)
    with pytest.raises(D.DeckError, match="step 2 is not axis's"):
        r.ledger.record(r, _task("r1", CARDS, "axis"), _step(r, "r1", CARDS, "axis"), "axis", 2)


def test_a_round_whose_first_player_is_not_a_player_is_refused():
    r = _replay()
    _commit_seed(r, "r1", "axis")
    with pytest.raises(D.DeckError, match="no first player"):
        r.ledger.record(r, _task("r1", CARDS, "axis", first="nobody"), _step(r, "r1", CARDS, "axis"), "axis", 1)


def test_a_step_where_keys_are_due_and_keys_where_a_step_is_due_are_refused():
    r = _replay()
    _commit_seed(r, "r1", "axis")
    keys_task = D.DeckTask(role="axis", kind="keys", round="r1")
    with pytest.raises(D.DeckError, match="a shuffle step where key openings are due"):
        r.ledger.record(r, keys_task, _step(r, "r1", CARDS, "axis"), "axis", 1)
    with pytest.raises(D.DeckError, match="key openings where a shuffle step is due"):
        r.ledger.record(r, _task("r1", CARDS, "axis"), D.DeckKeys(), "axis", 1)


def test_deals_must_be_exactly_the_positions_the_rules_deal():
    r = _replay()
    for role in ("axis", "allied"):
        _commit_seed(r, "r1", role)
    for author in ("axis", "allied"):
        r.ledger.record(r, _task("r1", CARDS, author), _step(r, "r1", CARDS, author), author, 1)
    for asked, sent in (((0,), ()), ((), (0,)), ((0, 1), (1, 0)), ((0,), (1,))):
        with pytest.raises(D.DeckError, match="the rules deal"):
            _record(r.clone(), _task("r1", CARDS, "axis", asked), _step(r, "r1", CARDS, "axis", sent), "axis", 3)
    # A step 1 or 2 deals nothing, whatever the task says.
    fresh = _replay()
    _commit_seed(fresh, "r1", "axis")
    fresh.ledger.record(fresh, _task("r1", CARDS, "axis", deal=(0,)), _step(fresh, "r1", CARDS, "axis"), "axis", 1)
    assert fresh.ledger.dealt == {}


def test_a_deal_for_another_round_is_refused():
    r = _replay()
    _play_round(r, "r1", CARDS)
    wrong = D.open_key(G, GAME, "r1", SEEDS[("r1", "axis")], 3, 0)
    task = D.DeckTask(role="axis", kind="keys", round="r2", deal=(0,))
    with pytest.raises(D.DeckError, match="the rules deal"):
        r.ledger.record(r, task, D.DeckKeys(deal=[wrong]), "axis", 9)


def test_a_position_cannot_be_dealt_twice_nor_with_the_wrong_key():
    r = _replay()
    _play_round(r, "r1", CARDS, deal3=(0,))
    again = D.DeckKeys(deal=[D.open_key(G, GAME, "r1", SEEDS[("r1", "axis")], 3, 0)])
    with pytest.raises(D.DeckError, match="position 0 dealt twice"):
        r.ledger.record(r, D.DeckTask(role="axis", kind="keys", round="r1", deal=(0,)), again, "axis", 9)
    # Axis deals with its per-card key of step 3; a step-4 key is allied's, not axis's.
    theirs = D.DeckKeys(deal=[D.open_key(G, GAME, "r1", SEEDS[("r1", "axis")], 4, 2)])
    with pytest.raises(D.DeckError, match="key of step 4, not axis's per-card key"):
        r.ledger.record(r, D.DeckTask(role="axis", kind="keys", round="r1", deal=(2,)), theirs, "axis", 9)
    forged = D.DeckKeys(deal=[D.open_key(G, GAME, "r1", bytes([9]) * 32, 3, 2)])
    with pytest.raises(D.DeckError, match="does not open its commitment"):
        r.ledger.record(r, D.DeckTask(role="axis", kind="keys", round="r1", deal=(2,)), forged, "axis", 9)
    assert ("r1", 2) not in r.ledger.dealt
    r.ledger.record(r, D.DeckTask(role="allied", kind="keys", round="r1", deal=(2,)),
                    D.DeckKeys(deal=[D.open_key(G, GAME, "r1", SEEDS[("r1", "allied")], 4, 2)]), "allied", 9)
    assert r.ledger.dealt[("r1", 2)] == "axis"


def test_a_key_for_a_round_that_does_not_exist_is_refused():
    r = _replay()
    _play_round(r, "r1", CARDS)
    ghost = D.open_key(G, GAME, "r9", SEEDS[("r1", "axis")], 3, 0)
    with pytest.raises(D.DeckError, match="key for a round that does not exist"):
        r.ledger.record(r, D.DeckTask(role="axis", kind="keys", round="r9", deal=(0,)),
                        D.DeckKeys(deal=[ghost]), "axis", 9)


def test_showing_a_card_is_refused_unless_dealt_to_the_shower_once_and_asked_for():
    r = _replay()
    _play_round(r, "r1", CARDS, deal3=(0,), deal4=(1,))
    own = D.open_key(G, GAME, "r1", SEEDS[("r1", "axis")], 3, 1)  # axis holds position 1
    task = D.DeckTask(role="axis", kind="keys", round="r1", open=(("r1", 1),))
    with pytest.raises(D.DeckError, match="the rules ask for"):
        _record(r.clone(), D.DeckTask(role="axis", kind="keys", round="r1"), D.DeckKeys(open=[own]), "axis", 9)
    with pytest.raises(D.DeckError, match="the rules ask for"):
        _record(r.clone(), task, D.DeckKeys(), "axis", 9)
    allied_own = D.open_key(G, GAME, "r1", SEEDS[("r1", "allied")], 4, 1)
    with pytest.raises(D.DeckError, match="position 1 was not dealt to allied") as err:
        _record(r.clone(), D.DeckTask(role="allied", kind="keys", round="r1", open=(("r1", 1),)),
                                D.DeckKeys(open=[allied_own]), "allied", 9)
    assert (err.value.step, err.value.author) == (0, "allied")
    undealt = D.open_key(G, GAME, "r1", SEEDS[("r1", "axis")], 3, 3)
    with pytest.raises(D.DeckError, match="position 3 was not dealt to axis"):
        _record(r.clone(), D.DeckTask(role="axis", kind="keys", round="r1", open=(("r1", 3),)),
                                D.DeckKeys(open=[undealt]), "axis", 9)
    r.ledger.record(r, task, D.DeckKeys(open=[own]), "axis", 9)
    assert r.ledger.opened == {("r1", 1): "axis"}
    with pytest.raises(D.DeckError, match="position 1 is opened twice") as err:
        r.ledger.record(r, task, D.DeckKeys(open=[own]), "axis", 10)
    assert (err.value.step, err.value.author) == (0, "axis")
    assert r.ledger.where[("r1", -3)] == (9, "axis")  # where position 1 was shown


# --- the audit's game invariants: one deck, nothing lost, nothing in two places ------------------

def _two_rounds(r2_sources, deal3=(0,), deal4=(1,)):
    r = _replay()
    seq = _play_round(r, "r1", CARDS, deal3=deal3, deal4=deal4)
    _play_round(r, "r2", r2_sources, seq=seq)
    _open_seeds(r, "r1", "r2")
    return r


def _undealt_positions(r):
    return [p for p in range(4) if ("r1", p) not in r.ledger.dealt]


def test_a_reshuffle_of_every_undealt_card_audits():
    r = _two_rounds([D.Carry(round="r1", pos=2), D.Carry(round="r1", pos=3)])
    d1, d2 = r.deck_audit()
    assert sorted(d2.labels) == sorted(d1.labels[2:]) and d1.carried_to == ["", "", "r2", "r2"]


def test_a_reshuffle_that_returns_a_dealt_card_audits():
    r = _two_rounds([D.Carry(round="r1", pos=0), D.Carry(round="r1", pos=2), D.Carry(round="r1", pos=3)])
    d1, d2 = r.deck_audit()
    assert sorted(d2.labels) == sorted([d1.labels[0]] + d1.labels[2:])


def test_a_reshuffle_that_drops_an_undealt_card_is_refused():
    r = _two_rounds([D.Carry(round="r1", pos=2)])
    with pytest.raises(D.DeckError, match=r"1 undealt card\(s\) of the previous round left out of the reshuffle") \
            as err:
        r.deck_audit()
    assert (err.value.round, err.value.step, err.value.author) == ("r2", 1, "axis")
    assert r.deck_event(err.value).startswith("event 5 by axis: ")


def test_a_reshuffle_that_smuggles_in_a_card_held_by_a_player_is_refused():
    """Card 0 was dealt to allied; the reshuffle enters its label afresh: two copies in play."""
    r = _replay()
    _play_round(r, "r1", CARDS, deal3=(0,))
    _open_seeds(r, "r1")
    [d1] = r.deck_audit()
    held = d1.labels[0]
    _play_round(r, "r2", [D.Carry(round="r1", pos=p) for p in (1, 2, 3)] + [D.Card(label=held)], seq=5)
    _open_seeds(r, "r2")
    with pytest.raises(D.DeckError, match=f"card '{held}' enters the deck while it is already in play") as err:
        r.deck_audit()
    assert (err.value.round, err.value.step, err.value.author) == ("r2", 1, "axis")


def test_a_reshuffle_that_enters_an_undealt_card_again_is_refused():
    r = _replay()
    _play_round(r, "r1", CARDS)
    _open_seeds(r, "r1")
    [d1] = r.deck_audit()
    _play_round(r, "r2", [D.Card(label=d1.labels[3])], seq=5)
    _open_seeds(r, "r2")
    with pytest.raises(D.DeckError, match="enters the deck while it is already in play"):
        r.deck_audit()


def test_a_new_card_may_join_the_deck_in_a_reshuffle():
    r = _two_rounds([D.Carry(round="r1", pos=2), D.Carry(round="r1", pos=3), D.Card(label="e")])
    d1, d2 = r.deck_audit()
    assert "e" in d2.labels and len(d2.labels) == 3


def test_the_audit_refuses_a_card_shown_by_a_player_it_was_not_dealt_to():
    r = _replay()
    _play_round(r, "r1", CARDS, deal3=(0,))
    _open_seeds(r, "r1")
    r.ledger.opened[("r1", 0)] = "axis"  # as if axis had shown allied's card
    with pytest.raises(D.DeckError, match="position 0 opened by axis, who was not dealt it"):
        r.deck_audit()
    r.ledger.opened[("r1", 0)] = "allied"
    r.deck_audit()


@pytest.mark.parametrize("role, index", [("axis", 1), ("allied", 2)])
def test_the_audit_needs_both_seeds_of_every_round(role, index):
    r = _replay()
    _play_round(r, "r1", CARDS)
    _open_seeds(r, "r1")
    del r.opened[D.seed_label("r1", role)]
    with pytest.raises(D.DeckError, match="the seed of the round was never opened") as err:
        r.deck_audit()
    assert (err.value.step, err.value.author) == (index, role)
    r.known = {D.seed_label("r1", role): SEEDS[("r1", role)]}  # a seed the replay knows counts too
    r.deck_audit()
    r.known = {D.seed_label("r1", role): SEEDS[("r1", role)][:31]}
    with pytest.raises(D.DeckError, match="never opened"):
        r.deck_audit()


def test_an_unfinished_round_is_left_out_of_the_audit_and_shows_no_card():
    r = _replay()
    _play_round(r, "r1", CARDS, deal3=(0,))
    for role in ("axis", "allied"):
        _commit_seed(r, "r2", role)
    r.ledger.record(r, _task("r2", [D.Carry(round="r1", pos=1)], "axis"),
                    _step(r, "r2", [D.Carry(round="r1", pos=1)], "axis"), "axis", 5)
    _open_seeds(r, "r1", "r2")
    assert [d.round for d in r.deck_audit()] == ["r1"]
    assert r.card("r2", 0) is None


def test_a_position_carried_before_is_refused_at_receipt():
    r = _replay()
    seq = _play_round(r, "r1", CARDS)
    _play_round(r, "r2", [D.Carry(round="r1", pos=1)], seq=seq)
    for role in ("axis", "allied"):
        _commit_seed(r, "r3", role)
    again = [D.Carry(round="r1", pos=1), D.Carry(round="r1", pos=2)]
    with pytest.raises(D.DeckError, match="position 1 of 'r1' was carried before"):
        r.ledger.record(r, _task("r3", again, "axis"), _step(r, "r3", again, "axis", old={"r1": SEEDS[("r1", "axis")]}),
                        "axis", 20)


# --- a Merkle leaf that proves an earlier action illegal ----------------------------------------

def test_a_leaf_opening_that_shows_an_illegal_earlier_action_is_refused(tmp_path, monkeypatch):
    """Blue commits a trap set holding '2' at square 3 (RACE 7 allows 1 or 0);
    nobody can see that until the leaf is opened, and then the opening event
    is refused naming the illegal value. Blue's client is patched to let
    its own bad set through; red's pbem is not."""
    table = new_table(tmp_path, scenario="standard")
    table.play("red", "advance 1", "pass")
    honest_parse, honest_leaf = race.parse_order, race.on_open_leaf

    def parse(state, role, text, ctx):
        order = honest_parse(state, role, text, ctx)
        if order.sets:
            bad = {k: (b"2" if k == "3" else v) for k, v in order.sets[f"{role}.traps"].items()}
            order = msgspec.structs.replace(order, sets={f"{role}.traps": bad})
        return order

    with monkeypatch.context() as cheat:
        cheat.setattr(race, "parse_order", parse)
        cheat.setattr(race, "_trap_set_problems", lambda *a: [])
        table.play("blue", "traps 3 5", "advance 1", "pass")
    table.play("red", "advance 2")  # onto square 3: blue must open it
    with monkeypatch.context() as cheat:
        cheat.setattr(race, "on_open_leaf", lambda state, label, key, value, ctx:
                      honest_leaf(state, label, key, b"1", ctx))
        seat = table.blue.seat()
        session.add_orders(seat, ["open trap 3"])
        data = Path(session.send(seat).turn_file).read_bytes()
    red = table.red.seat()
    with pytest.raises(IllegalAction, match="opens 'blue.traps' at '3': the opening shows an illegal action") as err:
        session.receive(red, [("turn", data)])
    assert "holds b'2', not 1 or 0" in str(err.value) + " ".join(getattr(err.value, "details", []) or [])


# --- public queries of a replay ------------------------------------------------------------------

def test_a_replay_names_its_roles_and_each_others_opponent(table):
    replay = table.red.seat().replay
    assert replay.roles == ("blue", "red")  # the genesis players, sorted by role
    assert replay.other("red") == "blue" and replay.other("blue") == "red"
    ctx = replay.ctx("red")
    assert ctx.role == "red" and ctx.author == "red" and ctx.seq == replay.seq + 1
    assert ctx.committed("red.speed") and not ctx.committed("red.nothing")
    assert not ctx.opened("red.speed") and ctx.value("red.speed") == b"2"
    assert table.blue.seat().replay.ctx("blue").value("red.speed") is None


# --- the genesis event and the events after it ------------------------------------------------------

def _genesis(table):
    from pbem import codec
    stored = table.red.gd.event_path(0).read_bytes()
    return codec.decode_body(codec.unwrap(stored).body), stored


def _resigned(identity, body, **change):
    return session._sign(identity, msgspec.structs.replace(body, **change))


def _genesis_with(table, **change):
    body, _ = _genesis(table)
    return _resigned(table.red.identity, body, genesis=msgspec.structs.replace(body.genesis, **change))


def test_the_genesis_as_signed_opens_a_game(table):
    body, stored = _genesis(table)
    r = Replay(race.RULES)
    r.apply_stored(stored)
    assert r.seq == 0 and set(r.keys) == {"red", "blue"} and r.genesis == body.genesis
    from pbem import codec
    assert r.game_id == codec.sha256(codec.signing_input(codec.unwrap(stored).body))


@pytest.mark.parametrize("change, message", [
    ({"scenario": "everest"}, "genesis scenario 'everest' is not one of"),
    ({"options": ["jetpack"]}, r"genesis options of race: unknown option 'jetpack' \(offered: short-dodge\)"),
    ({"rules_version": "9"}, "needs rules race version 9"),
    ({"rules": "chess"}, "played with rules 'chess', not 'race'"),
    ({"data_hash": "00" * 32}, "different race data files"),
])
def test_a_genesis_outside_what_the_rules_offer_is_refused(table, change, message):
    from pbem.errors import VerifyError, VersionMismatch
    with pytest.raises((VerifyError, VersionMismatch), match=message):
        Replay(race.RULES).apply_stored(_genesis_with(table, **change))


def test_a_genesis_with_wrong_players_is_refused(table):
    from pbem.codec import Player
    from pbem.errors import VerifyError
    body, _ = _genesis(table)
    red = next(p for p in body.genesis.players if p.role == "red")
    blue = next(p for p in body.genesis.players if p.role == "blue")
    stranger = Identity.generate().public_text
    cases = [
        ([red], r"genesis players \['red'\] do not match"),
        ([red, blue, Player(role="green", key=stranger)], "do not match"),
        ([red, Player(role="red", key=stranger)], "do not match"),
        ([red, Player(role="blue", key=red.key)], "gives two players the same key"),
        ([red, Player(role="blue", key="pbem-ed25519:" + "zz" * 32)], "genesis: public key must be"),
    ]
    for players, message in cases:
        with pytest.raises(VerifyError, match=message):
            Replay(race.RULES).apply_stored(_genesis_with(table, players=players))
    # Signed by blue: a player, but not the host who wrote it as its author.
    with pytest.raises(VerifyError, match="genesis signature is not valid for the host's key"):
        Replay(race.RULES).apply_stored(_resigned(table.blue.identity, body))
    with pytest.raises(VerifyError, match="genesis author 'green' is not a player"):
        Replay(race.RULES).apply_stored(_resigned(table.red.identity, body, author="green"))
    for change in ({"game": "11" * 32}, {"prev": "22" * 32}, {"genesis": None}):
        with pytest.raises(VerifyError, match="event 0 is not a genesis event"):
            Replay(race.RULES).apply_stored(_resigned(table.red.identity, body, **change))


def test_a_genesis_with_a_bad_signature_is_refused_unless_unchecked(table):
    from pbem import codec
    from pbem.errors import VerifyError
    _, stored = _genesis(table)
    u = codec.unwrap(stored)
    forged = codec.wrap(u.body, bytes(64))
    with pytest.raises(VerifyError, match="genesis signature is not valid"):
        Replay(race.RULES).apply_stored(forged)
    with pytest.raises(VerifyError, match="genesis signature is not valid"):
        Replay(race.RULES).open_genesis(forged)
    Replay(race.RULES).apply_stored(forged, verify_signature_=False)  # a draft simulation signs nothing


def test_a_second_genesis_or_a_genesis_out_of_place_is_refused(table):
    from pbem.errors import VerifyError
    body, stored = _genesis(table)
    seat = table.red.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    nxt = session._compose(seat, session.read_draft(seat.gd, "red", seat.replay.seq).orders).body
    with pytest.raises(VerifyError, match="a second genesis inside the game"):
        seat.replay.clone().apply_stored(_resigned(table.red.identity, nxt, genesis=body.genesis))
    with pytest.raises(VerifyError, match="expected the genesis event"):
        Replay(race.RULES).apply_stored(_resigned(table.red.identity, nxt))
    r = Replay(race.RULES)
    r.apply_stored(stored)
    with pytest.raises(VerifyError, match="expected the genesis event"):
        r.open_genesis(stored)


def test_an_action_after_the_decision_passed_in_the_same_event_is_refused(table):
    """Red's event: advance, pass (its turn ends: blue decides), then one more
    advance. Each action is checked against the decision as it stands after
    the previous one (protocol decision 9)."""
    from pbem import codec
    from pbem.errors import IllegalAction
    seat = table.red.seat()
    orders = [session.DraftOrder(text=t, action=codec.raw(a))
              for t, a in (("advance 1", race.Advance(steps=1)), ("pass", race.Pass()),
                           ("advance 1", race.Advance(steps=1)))]
    body = session._body(seat.replay, "red", seat.vault, orders, x_next=bytes(32))
    with pytest.raises(IllegalAction, match=r"event 2 by red, action 3 \(advance 1\): out of turn: "
                                            r"the decision is blue's \(move\)"):
        table.blue.seat().replay.clone().apply_stored(session._sign(seat.identity, body))
    body = session._body(seat.replay, "red", seat.vault, orders[:2], x_next=bytes(32))
    table.blue.seat().replay.clone().apply_stored(session._sign(seat.identity, body))


def test_opening_a_genesis_that_is_not_an_event_is_a_bad_file():
    from pbem.errors import BadFile
    for data in (b"", b"not json", b'{"body":{},"sig":"00"}'):
        with pytest.raises(BadFile, match="event 0: "):
            Replay(race.RULES).open_genesis(data)


def test_rules_that_make_an_author_wait_for_its_own_entropy_are_refused(table, monkeypatch):
    """A rules-module error: dice must wait for the opponent's entropy, never the author's."""
    from pbem import codec
    from pbem.errors import IllegalAction
    from pbem.rulesapi import DICE
    seat = table.red.seat()
    order = session.DraftOrder(text="dash", action=codec.raw(race.Dash()))
    stored = session._sign(seat.identity, session._body(seat.replay, "red", seat.vault, [order], x_next=bytes(32)))
    table.blue.seat().replay.clone().apply_stored(stored)  # as the rules are: blue owes the entropy
    honest = race.pending

    def selfish(state):
        d = honest(state)
        return msgspec.structs.replace(d, role="red") if d is not None and d.kind == DICE else d

    monkeypatch.setattr(race, "pending", selfish)
    with pytest.raises(IllegalAction, match="the rules wait for red's own entropy"):
        table.blue.seat().replay.clone().apply_stored(stored)


@pytest.mark.parametrize("raw", [b'{"type": "pass"}', b'{"steps":1,"type":"advance"}'])
def test_an_action_not_in_canonical_form_is_refused(table, raw):
    import msgspec as ms

    from pbem.errors import BadFile
    seat = table.red.seat()
    order = session.DraftOrder(text="x", action=ms.Raw(raw))
    stored = session._sign(seat.identity, session._body(seat.replay, "red", seat.vault, [order], x_next=bytes(32)))
    with pytest.raises(BadFile, match="event 2 by red, action 1: action is not in canonical form"):
        table.blue.seat().replay.clone().apply_stored(stored)


def _trap_table(tmp_path):
    from tests.conftest import new_table
    table = new_table(tmp_path, scenario="standard")
    table.play("red", "advance 1", "pass")
    table.play("blue", "traps 3 5", "advance 1", "pass")
    table.play("red", "advance 2")  # onto square 3: blue must open it
    return table


def test_leaf_openings_of_no_set_twice_or_for_rules_without_sets_are_refused(tmp_path, monkeypatch):
    from pbem.errors import IllegalAction, VerifyError
    from tests.test_merkle_sets import _forged_leaf
    table = _trap_table(tmp_path)
    red = table.red.seat().replay
    for label in ("blue.speed", "blue.nothing"):
        with pytest.raises(VerifyError, match=f"opens '{label}' at '3', which is not a committed set"):
            red.clone().apply_stored(_forged_leaf(table, label=label))
    honest = _forged_leaf(table)
    red.clone().apply_stored(honest)
    body = codec_body(honest)
    twice = session._sign(table.blue.identity, msgspec.structs.replace(body, leaves=body.leaves * 2))
    with pytest.raises(VerifyError, match="opens 'blue.traps' at '3' a second time"):
        red.clone().apply_stored(twice)
    monkeypatch.setattr(race.RaceRules, "on_open_leaf", Rules.on_open_leaf)  # the contract's default
    with pytest.raises(IllegalAction, match="rules 'race' open no set leaves"):
        red.clone().apply_stored(honest)


def codec_body(stored):
    from pbem import codec
    return codec.decode_body(codec.unwrap(stored).body)
