"""Refusing Battle with Pursuit Fire through the engine (RB 10.2, 10.5; T-09, T-10):
the slowest speed announced, Pursuit Fire (or fire withheld), engine dice, secret
losses as new identity versions, the Withdrawal Group Move, and the deferred checks
decided when identities are opened or by the audit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pbem import session
from pbem.errors import IllegalAction
from rules.ritd import RULES as RITD
from rules.ritd import group_moves, routs, step_losses
from rules.ritd import movement as mv
from rules.ritd.group_moves import unit_speed
from rules.ritd.state import game_map
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

REGROUP = ["supply check", "basic", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento", "end movement"]


pytestmark = pytest.mark.usefixtures("registered_ritd")


@pytest.fixture
def demo(tmp_path, monkeypatch):
    """The 19.0 Demo, with Trento made fast enough (speed 4) to pursue the 7/7 Tk
    (speed 3), and every engine die a 6."""
    speed = unit_speed
    monkeypatch.setattr(group_moves, "unit_speed", lambda unit: 4 if unit == "Trento" else speed(unit))
    monkeypatch.setattr("pbem.game.roll", lambda *args: (6,) * len(args[-1]))
    table = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    table.play("axis", *REGROUP)
    return table


def send_orders(table, role, *orders, open_all=False):
    seat = table.side(role).seat()
    if orders:
        session.add_orders(seat, list(orders))
    return Path(session.send(seat, open_all=open_all).turn_file).read_bytes()


def _tk(state):
    return next(b for b in state.position.blocks_of("allied") if b.unit == "7/7 Tk")


def test_rb_10_2_pursuit_fire_dice_secret_losses_and_withdrawal_checked_at_the_audit(demo):
    m = game_map()
    demo.play("allied", "refuse-battle Sollum slowest 3")
    axis = demo.axis.seat().replay.state
    assert axis.turn.step == "refuse-pursuit" and axis.turn.slowest == 3
    # The Axis cannot see the refusing unit's speed: deferred (RB 10.5).
    assert {o.kind for o in axis.obligations} >= {"speed-range"}
    assert "pursue Sollum with Trento" in session.legal_orders(demo.axis.seat())
    demo.play("axis", "pursue Sollum with Trento")
    assert demo.allied.seat().replay.pending().kind == "dice"
    allied, _ = session.draft_replay(demo.allied.seat())  # the dice roll with the Allies' next event
    assert allied.pending().kind == "refuse-losses"
    assert allied.state.turn.hits == 2 and allied.state.last_rolls == (6, 6)
    # The Allies cannot see Trento's speed: its 2 dice need a speed above 3.
    assert [(o.needed, o.maximum) for o in allied.state.obligations if o.kind == "speed-range"] == [(4, mv.MAX_SPEED)]
    token = _tk(allied.state).token
    demo.play("allied", "pursuit losses auto", "refuse-battle Sollum -> Sidi Barrani")
    allied = demo.allied.seat().replay.state
    assert _tk(allied).cv == 2 and allied.versions[token] == 1  # elite: two hits, one step (RB 9.5)
    axis = demo.axis.seat().replay.state
    assert axis.versions[token] == 1
    assert [o.kind for o in axis.obligations if o.kind in ("losses", "speed-range")] == ["speed-range", "losses"]
    moved = axis.position.block(token)
    assert moved.hex == m.resolve("Sidi Barrani") and moved.unit == ""
    # Both sides open everything: the deferred checks pass.
    demo.deliver(demo.allied, send_orders(demo, "axis", "supply check", "reveal option", open_all=True))
    demo.deliver(demo.axis, send_orders(demo, "allied", "supply check", open_all=True))
    axis = demo.axis.seat().replay.state
    assert not [o for o in axis.obligations if o.token == token]
    assert _tk(axis).cv == 2
    assert not [o for o in demo.allied.seat().replay.state.obligations if o.kind == "speed-range"]
    result = session.audit(demo.allied.gd.read_events(), RITD)
    assert _tk(result.replay.state).cv == 2


def test_rb_10_5_a_lie_about_the_slowest_speed_is_caught_at_the_audit(demo, monkeypatch):
    with monkeypatch.context() as cheat:  # the Allied client skips its own check
        cheat.setattr(routs, "check_slowest_speed", lambda *args: routs.PursuitCheck())
        lie = send_orders(demo, "allied", "refuse-battle Sollum slowest 4")
    demo.deliver(demo.axis, lie)
    demo.play("axis", "pursue Sollum with none")
    with monkeypatch.context() as cheat:
        cheat.setattr(routs, "check_slowest_speed", lambda *args: routs.PursuitCheck())
        data = send_orders(demo, "allied", "refuse-battle Sollum -> Sidi Barrani", open_all=True)
        events = demo.allied.gd.read_events()
    with pytest.raises(IllegalAction, match=r"Refused Battle in event \d+ announcing slowest speed 4"):
        demo.deliver(demo.axis, data)
    with pytest.raises(IllegalAction) as err:
        session.audit(events, RITD)
    text = str(err.value) + " ".join(getattr(err.value, "details", []) or [])
    assert re.search(r"event \d+ by allied", text) and "refuse-battle Sollum slowest 4" in text and "RB 10.5" in text


def test_rb_10_5_a_forged_loss_allocation_is_caught_at_the_audit(demo, monkeypatch):
    demo.play("allied", "refuse-battle Sollum slowest 3")
    demo.play("axis", "pursue Sollum with Trento")
    with monkeypatch.context() as cheat:  # two hits, but the 7/7 Tk keeps its CV
        cheat.setattr(step_losses, "loss_problems", lambda *args: [])
        forged = send_orders(demo, "allied", "pursuit losses 7/7 Tk 0", "refuse-battle Sollum -> Sidi Barrani")
    demo.deliver(demo.axis, forged)  # the Axis cannot tell yet
    demo.play("axis", "supply check", "reveal option")
    with monkeypatch.context() as cheat:  # the new version is opened in the Allies' next event
        cheat.setattr(step_losses, "loss_problems", lambda *args: [])
        data = send_orders(demo, "allied", "supply check", open_all=True)
        events = demo.allied.gd.read_events()
    with pytest.raises(IllegalAction, match="Pursuit losses placed in event"):
        demo.deliver(demo.axis, data)
    with pytest.raises(IllegalAction) as err:
        session.audit(events, RITD)
    text = str(err.value) + " ".join(getattr(err.value, "details", []) or [])
    assert "by allied" in text and "pursuit losses in Sollum" in text and "RB 9.5" in text
