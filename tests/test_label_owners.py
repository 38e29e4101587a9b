"""Commitment labels belong to their author (issue 27 point 2; docs/protocol.md
decision 24). The attack: an otherwise legal signed event commits under a
label the opponent will need later (RitD's ``turn2.option``, the opponent's
deck seed ``deck/s2/seed/allied``); before, receive, verify and audit
accepted it and the victim's own event was refused later ("already in use"):
the victim could never play Supply Cards, or the shared deck stopped. Now the
event is refused with exit 5 naming its signer, by receive (the victim's
game directory unchanged), verify and audit. Honest logs never squat: every
published log verifies with the check in place."""

from __future__ import annotations

import importlib

import msgspec
import pytest

from pbem import codec, rulesapi, session
from pbem.codec import Commitment
from pbem.errors import IllegalAction
from pbem.game import Replay
from pbem.rulesapi import NOBODY
from rules.ritd import game as ritd
from rules.ritd import labels
from tests.ritd.conftest import _real_cards, registered_ritd  # noqa: F401 - fixtures of the RitD games
from tests.ritd.ritd_table import new_game
from tests.ritd.test_crafted_events import TO_MOVEMENT, deliver_everywhere
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied
from tests.test_time_control import HEADS, published_log

pytestmark = pytest.mark.usefixtures("registered_ritd")

DIGEST = "ab" * 32


@pytest.fixture
def demo(tmp_path):
    """The 19.0 Demo after both set-ups: the Axis Player-Turn 1 is about to begin."""
    return new_game(tmp_path / "game", "demo", DEMO_AXIS, demo_allied())


def squatting(side, honest: list[str], *labels_: str) -> tuple[bytes, int]:
    """``side``'s honest next event with commitments under ``labels_`` added, signed."""
    seat = side.seat()
    orders = session.parse_orders(seat.rules, seat.replay, seat.role, seat.vault, [], honest)
    body = session._body(seat.replay, seat.role, session._with_secrets(seat.vault, orders), orders,
                         x_next=bytes(32))
    body = msgspec.structs.replace(body, commits=[*body.commits, *(Commitment(label=lb, digest=DIGEST)
                                                                    for lb in labels_)])
    return session._sign(seat.identity, body), body.seq


def test_the_honest_event_alone_is_accepted(demo, tmp_path):
    """The control: the same event without the squatted label is legal."""
    stored, seq = squatting(demo.axis, TO_MOVEMENT)
    received = session.receive(demo.allied.seat(), [("honest", b"pbem-turn v1\n---\n" + stored + b"\n")],
                               auto_reply=False)
    assert received.appended == [seq]


@pytest.mark.parametrize("label, whose", [
    ("turn2.option", "a label nobody may commit under now"),  # the Allied option of Player-Turn 2 (RB 3.42)
    ("deck/s2/seed/allied", "a label of allied"),  # the Allied seed of the second deck round (engine)
    ("month1.initiative.allied", "a label of allied"),  # the Allied Initiative card (RB 3.3)
    ("mines.allied.1", "a label of allied"),  # the Allied first Minefield set (RB 14.1)
    ("deck/s2/key/axis", "a label nobody may commit under now"),  # the engine's namespace, not a seed
    ("axis.anything", "a label nobody may commit under now"),  # outside every RitD namespace
], ids=["turn-option", "deck-seed", "initiative", "mines", "deck-other", "no-namespace"])
def test_squatting_a_label_is_refused_naming_the_signer(demo, tmp_path, label, whose):
    stored, seq = squatting(demo.axis, TO_MOVEMENT, label)
    for out in deliver_everywhere(demo.allied, stored, seq, "axis", tmp_path):
        assert f"event {seq} by axis: commits under '{label}', {whose}" in out, out
        assert "issue 27 point 2" in out


def test_squatting_the_opponents_block_identity_is_refused(demo, tmp_path):
    """The next identity version of an Allied block (RB 16.54 rebuild, RB 9.5 losses)."""
    token = next(b.token for b in demo.allied.seat().replay.state.position.blocks_of("allied"))
    label = f"{token}.id1"
    stored, seq = squatting(demo.axis, TO_MOVEMENT, label)
    for out in deliver_everywhere(demo.allied, stored, seq, "axis", tmp_path):
        assert f"commits under '{label}', a label of allied" in out


def test_the_engine_checks_its_deck_labels_in_a_game_without_the_hook(table, tmp_path):
    """The race game declares no label owners (its labels are unchecked), but
    the engine's own namespace is: red may not commit blue's deck seed."""
    seat = table.red.seat()
    orders = session.parse_orders(seat.rules, seat.replay, seat.role, seat.vault, [], ["advance 1", "pass"])
    body = session._body(seat.replay, seat.role, session._with_secrets(seat.vault, orders), orders,
                         x_next=bytes(32))
    squat = msgspec.structs.replace(body, commits=[Commitment(label="deck/r1/seed/blue", digest=DIGEST)])
    with pytest.raises(IllegalAction, match=r"event 2 by red: commits under 'deck/r1/seed/blue', a label of blue"):
        seat.replay.fork().apply_stored(session._sign(seat.identity, squat))
    free = msgspec.structs.replace(body, commits=[Commitment(label="blue.whatever", digest=DIGEST)])
    seat.replay.fork().apply_stored(session._sign(seat.identity, free))  # no hook: the game's labels are free


@pytest.mark.random_cards  # the published logs' own deck, not the RitD tests' rigged one
@pytest.mark.parametrize("folder", sorted(HEADS))
def test_honest_logs_never_squat(folder, monkeypatch):
    """Every published log verifies with the check in place; the RitD hook is
    asked about every game label of a current-version log (the frozen version
    3 has no hook: only the engine's labels are checked there)."""
    asked: list[tuple[str, str]] = []
    events = published_log(folder)
    genesis = codec.decode_body(codec.unwrap(events[0]).body).genesis
    assert genesis is not None
    rules = rulesapi.load_version(genesis.rules, genesis.rules_version)
    # The labels module of the package that defines the rules' class: the
    # current rules.ritd, or a frozen version that kept its own (ritd@4).
    module = importlib.import_module(f"{type(rules).__module__}.labels")
    owner = module.label_owner

    def spy(state, label):
        found = owner(state, label)
        asked.append((label, found))
        return found

    monkeypatch.setattr(module, "label_owner", spy)
    replay = Replay(rules)
    for stored in events:
        replay.apply_stored(stored)
    authors = replay.commitment_authors()
    game_labels = [lb for lb in authors if not lb.startswith("deck/")]
    if genesis.rules_version == "3":
        assert asked == []
    else:
        assert sorted(lb for lb, _ in asked) == sorted(game_labels) and game_labels
        assert all(found == authors[lb] for lb, found in asked)
    assert all(replay.label_owner(lb) == authors[lb] for lb in authors if lb.startswith("deck/"))


def test_ritd_label_owners_by_namespace():
    state = ritd.initial_state("demo", ())
    assert labels.label_owner(state, "A0a1b2c3d.id0") == "axis"
    assert labels.label_owner(state, "L0a1b2c3d.id4") == "allied"
    assert labels.label_owner(state, "X0a1b2c3d.id0") == NOBODY
    assert labels.label_owner(state, "mines.axis.2") == "axis"
    assert labels.label_owner(state, "mines.neutral.2") == NOBODY
    assert labels.label_owner(state, "month3.early.allied.0") == "allied"
    assert labels.label_owner(state, "month3.initiative.axis") == "axis"
    assert labels.label_owner(state, "turn1.option") == NOBODY  # Player-Turn 1 has not begun
    assert labels.label_owner(state, "deck/s1/seed/axis") == NOBODY  # the engine's, never asked
    begun = msgspec.structs.replace(state, turns=("axis", "allied"))  # Player-Turns 1 and 2 have begun
    assert labels.label_owner(begun, "turn2.option") == "allied"
    assert labels.label_owner(begun, "turn1.option") == "axis"
    assert labels.label_owner(begun, "turn3.option") == NOBODY  # its player is not known yet (RB 3.3)
    assert labels.label_owner(begun, "turn0.option") == NOBODY
