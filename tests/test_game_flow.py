"""End-to-end play of the race test game through pbem.session: decisions
passed back and forth, dice, automatic entropy replies, hidden values
revealed, deferred checks and the audit."""

from __future__ import annotations

import msgspec
import pytest

from pbem import session
from pbem.errors import IllegalAction
from pbem.rulesapi import DICE


def test_setup_and_join_give_both_sides_the_same_public_state(table):
    red, blue = table.red.seat(), table.blue.seat()
    assert red.replay.head == blue.replay.head
    assert red.replay.seq == blue.replay.seq == 1
    assert red.replay.pending().role == "red"
    # each side knows its own speed and not the other's
    assert red.replay.state.runners["red"].speed == 2 and red.replay.state.runners["blue"].speed == 0
    assert blue.replay.state.runners["blue"].speed == 3 and blue.replay.state.runners["red"].speed == 0


def test_an_attack_waits_for_the_defenders_entropy_then_the_defender_decides(table):
    table.play("red", "advance 1", "attack")
    blue = table.blue.seat()
    # The roll is already known to blue (it knows its own entropy), not yet in the log.
    assert blue.replay.pending() == session.Decision(role="blue", kind=DICE, dice=(6,))
    probe, _ = session.draft_replay(blue)
    assert probe.state.last_roll in range(1, 7)
    expected = "defend" if probe.state.last_roll >= 4 else "move"
    assert probe.pending().kind == expected


def test_a_dash_is_answered_automatically_and_the_roll_is_identical_on_both_sides(table):
    table.play("red", "dash")
    red, blue = table.red.seat(), table.blue.seat()
    assert red.replay.head == blue.replay.head  # blue's automatic entropy reply arrived
    assert red.replay.history[-1].author == "blue" and red.replay.history[-1].actions == ()
    roll = red.replay.history[-1].rolls
    assert roll.asked_seq == 2 and roll.asker == "red" and len(roll.values) == 1
    assert red.replay.state.last_roll == blue.replay.state.last_roll == roll.values[0]
    assert red.replay.pending().role == "red" and red.replay.pending().kind == "act"


def test_own_hidden_speed_is_checked_at_once_when_composing(table):
    with pytest.raises(IllegalAction) as err:
        session.add_orders(table.red.seat(), ["advance 3"])
    assert "RACE 2" in str(err.value) and "exceeds speed 2" in str(err.value)


def test_orders_out_of_turn_are_refused(table):
    with pytest.raises(IllegalAction, match="not your decision"):
        session.add_orders(table.blue.seat(), ["advance 1"])


def test_all_problems_are_listed_and_nothing_is_added(table):
    seat = table.red.seat()
    with pytest.raises(IllegalAction) as err:
        session.add_orders(seat, ["advance 9", "fly away"])
    text = str(err.value)
    assert "advance 9" in text and "fly away" in text
    assert session.read_draft(seat.gd, "red", seat.replay.seq).orders == []


def test_reveal_opens_the_commitment_and_discharges_deferred_checks(table):
    table.play("red", "advance 2", "pass")
    blue = table.blue.seat()
    assert blue.replay.state.obligations and blue.replay.state.obligations[0].steps == 2
    table.play("blue", "advance 1", "pass")
    table.play("red", "reveal", "advance 1", "pass")
    blue = table.blue.seat()
    assert blue.replay.state.runners["red"].speed == 2
    assert not blue.replay.state.obligations


def test_a_whole_game_ends_and_the_audit_is_complete_after_both_open_all(table):
    steps = {"red": "advance 2", "blue": "advance 3"}
    role = "red"
    for _ in range(10):
        table.play(role, steps[role], *(["pass"] if table.side(role).seat().replay.state.runners[role].pos
                                         + int(steps[role][-1]) < 5 else []))
        if table.red.seat().replay.outcome() is not None:
            break
        role = "blue" if role == "red" else "red"
    red = table.red.seat()
    assert red.replay.outcome() is not None
    loser = "red" if red.replay.outcome().winner == "blue" else "blue"
    partial = session.audit(red.gd.read_events(), red.rules)
    assert set(partial.unopened) == {"red", "blue"}
    table.play(loser, open_all=True)
    winner = "blue" if loser == "red" else "red"
    table.play(winner, open_all=True)
    result = session.audit(table.red.gd.read_events(), red.rules)
    assert result.unopened == {}
    assert result.replay.outcome().winner == winner


def test_a_game_of_another_rules_version_or_data_is_refused_with_the_version_it_needs(table, monkeypatch):
    from pbem.errors import VersionMismatch
    from tests.race import rules as race

    monkeypatch.setattr(race, "SPEC", msgspec.structs.replace(race.SPEC, version="2"))
    with pytest.raises(VersionMismatch, match="needs rules race version 1; this pbem has version 2"):
        session.load_public(table.red.gd)
    monkeypatch.undo()
    import pbem.game

    monkeypatch.setattr(pbem.game, "data_hash", lambda spec: b"\x01" * 32)
    with pytest.raises(VersionMismatch, match="different race data files"):
        session.load_public(table.red.gd)
