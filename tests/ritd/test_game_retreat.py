"""Retreats and Probes of the active player through the engine (RB 10.3,
10.4, 10.41, 10.5; T-35..T-38): Disengaging units announced during Movement
wait in the battle hex; after all other Moves the passive player Pursues (or
Probes a Partial Retreat), the engine rolls, the active player places the hits
in secret, the survivors complete their Moves Disrupted, and what is left
behind Routs."""

from __future__ import annotations

import re

import pytest

from pbem import session
from pbem.errors import IllegalAction
from rules.ritd import game as ritd
from rules.ritd import routs
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_refusal import REGROUP, _send
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")

#: Every engine die shows FACE["die"] (1: every fire misses, 6: every die hits).
FACE = {"die": 1}


def _units(state, hex_name, side=None):
    h = ritd._map().resolve(hex_name)
    return sorted((b.unit, b.cv) for b in state.position.blocks_in(h, side))


def _block(state, side, unit):
    return next(b for b in state.position.blocks_of(side) if b.unit == unit)


@pytest.fixture
def standoff(tmp_path, monkeypatch):
    """The Demo: the Axis Regroups into Sollum, the Allies accept; a Combat
    Round in which every die misses, so the battle goes on into the Allied
    Player-Turn. Trento and Brescia are fast (speed 4) enough to pursue the
    7/7 Tk (speed 3)."""
    speed = ritd._unit_speed
    monkeypatch.setattr(ritd, "_unit_speed", lambda u: 4 if u in ("Trento", "Brescia") else speed(u))
    FACE["die"] = 1
    monkeypatch.setattr("pbem.game.roll", lambda *args: (FACE["die"],) * len(args[-1]))
    table = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    table.play("axis", *REGROUP)
    table.play("allied", "accept-battle Sollum", "reveal units")
    table.play("axis", "reveal units", "battles Sollum")
    table.play("allied", "fire Sollum: 7/7 Tk at infantry")
    table.play("axis", "fire Sollum: Brescia at armor, Savona at armor, Trento at armor")
    table.play("axis", "supply check", "reveal option")
    assert table.allied.seat().replay.state.turn.active == "allied"
    return table


def test_rb_10_3_full_retreat_procedure_step_by_step(standoff):
    m = ritd._map()
    sollum, barrani = m.resolve("Sollum"), m.resolve("Sidi Barrani")
    allied = standoff.allied.seat()
    session.add_orders(allied, ["supply check", "basic", "group Sollum -> Sidi Barrani 7/7 Tk"])
    draft, _ = session.draft_replay(allied)
    # Step 1: the Move is announced; the 7/7 Tk waits upright in Sollum.
    tk = _block(draft.state, "allied", "7/7 Tk")
    assert tk.hex == sollum and not tk.disrupted
    assert draft.state.turn.movement.pending_retreat(tk.token) is not None
    session.add_orders(allied, ["end movement"])
    draft, _ = session.draft_replay(allied)
    assert draft.pending().kind == "retreat-slowest"
    assert session.legal_orders(allied) == ["retreat Sollum slowest 3"]
    with pytest.raises(IllegalAction, match="RB 10.5"):  # the Tk has speed 3
        session.add_orders(allied, ["retreat Sollum slowest 4"])
    standoff.play("allied", "retreat Sollum slowest 3")
    # Step 2: the Axis pursues; Savona (speed 2) is too slow.
    axis = standoff.axis.seat()
    assert axis.replay.pending().kind == "retreat-pursuit"
    orders = session.legal_orders(axis)
    assert "pursue Sollum with none" in orders and "pursue Sollum with Trento" in orders
    assert not any("Savona" in o for o in orders)
    with pytest.raises(IllegalAction, match="RB 10.5"):
        session.add_orders(axis, ["pursue Sollum with Savona"])
    FACE["die"] = 6
    standoff.play("axis", "pursue Sollum with Trento")
    allied = standoff.allied.seat()
    draft, _ = session.draft_replay(allied)  # the engine's dice come with the Allies' next event
    assert draft.pending().kind == "retreat-losses" and draft.state.turn.hits == 2
    cv = _block(draft.state, "allied", "7/7 Tk").cv
    # Step 3: hits placed (an elite unit loses one step for two hits, RB 9.5); the Tk completes its Move.
    standoff.play("allied", "pursuit losses auto")
    for state in (standoff.allied.seat().replay.state, standoff.axis.seat().replay.state):
        moved = state.position.block(tk.token)
        assert moved.hex == barrani and moved.disrupted and not moved.revealed
        assert state.position.battle(sollum) is None and state.turn.retreating == ""
        assert state.turn.movement.retreating == ()
    step = ritd._scenarios().roster.get("7/7 Tk").cv_per_step
    assert standoff.allied.seat().replay.state.position.block(tk.token).cv == cv - step
    assert standoff.axis.seat().replay.state.versions[tk.token] == 1
    # The map shows the route taken.
    assert any(mv.token == tk.token and mv.path[-1] == barrani for mv in standoff.axis.seat().replay.state.last_moves)


def test_rb_10_3_pursuit_deception_fire_withheld_and_no_pursuers_no_dice(standoff):
    m = ritd._map()
    standoff.play("allied", "supply check", "basic", "group Sollum -> Sidi Barrani 7/7 Tk", "end movement",
                  "retreat Sollum slowest 3")
    standoff.play("axis", "pursue Sollum with none")
    state = standoff.axis.seat().replay.state
    tk = next(b for b in state.position.blocks_of("allied") if b.hex == m.resolve("Sidi Barrani")
              and b.disrupted)
    assert state.versions.get(tk.token, 0) == 0  # no hits, no new identity


def test_rb_10_0_a_pass_turn_withdrawal_out_of_a_battle_takes_pursuit_fire(standoff):
    m = ritd._map()
    allied = standoff.allied.seat()
    session.add_orders(allied, ["supply check", "pass"])
    withdrawals = [o for o in session.legal_orders(allied) if o.startswith("withdraw Sollum")]
    assert withdrawals, session.legal_orders(allied)
    session.add_orders(allied, [withdrawals[0], "end movement"])
    draft, _ = session.draft_replay(allied)
    assert draft.pending().kind == "retreat-slowest"  # RB 10.0: a Full Retreat
    standoff.play("allied", "retreat Sollum slowest 3")
    FACE["die"] = 6
    standoff.play("axis", "pursue Sollum with Trento, Brescia")
    draft, _ = session.draft_replay(standoff.allied.seat())
    assert draft.state.turn.hits == 4 and draft.pending().kind == "retreat-losses"
    standoff.play("allied", "pursuit losses auto")
    state = standoff.axis.seat().replay.state
    assert not [b for b in state.position.blocks_of("allied") if b.hex == m.resolve("Sollum")]
    assert state.position.battle(m.resolve("Sollum")) is None
