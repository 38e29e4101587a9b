"""A Rommel in the Desert game ended by a resignation mid-turn (docs/protocol.md
decision 26, issue 21 point 8): the resigning player's event opens every secret
it holds (hidden blocks, the secret turn option, its deck seeds), the opponent
wins, and the opponent's audit afterwards is complete."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem import codec, session
from pbem.errors import IllegalAction
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")


def test_ritd_resign_mid_turn_and_the_opponents_audit_is_complete(tmp_path):
    demo = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    demo.play("axis", "supply check", "basic", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento",
              "end movement")
    assert demo.allied.seat().replay.pending().kind == "refuse"
    allied = demo.allied.seat()
    unopened_before = allied.replay.unopened("allied")
    assert unopened_before  # hidden blocks and deck seeds
    sent = session.resign(allied, note="I concede the desert")
    demo.deliver(demo.axis, Path(sent.turn_file).read_bytes())
    axis = demo.axis.seat()
    outcome = axis.replay.outcome()
    assert outcome is not None and outcome.winner == "axis" and "allied resigned" in outcome.summary
    assert axis.replay.unopened("allied") == []
    with pytest.raises(IllegalAction, match="game is over"):
        session.add_orders(axis, ["supply check"])
    # The winner's audit: everything of the Allies is open, its own secrets are its own.
    audit = session.audit(axis.gd.read_events(), axis.rules)
    assert "allied" not in audit.unopened
    # The winner publishes its openings too: the audit is complete for anyone.
    sent = session.send(axis, open_all=True)
    session.receive(demo.allied.seat(), [("t", Path(sent.turn_file).read_bytes())])
    for side in (demo.axis, demo.allied):
        audit = session.audit(side.gd.read_events(), axis.rules)
        assert audit.unopened == {}, audit.unopened
        assert audit.replay.outcome() == outcome
        assert audit.replay.history[-2].end == codec.RESIGN
