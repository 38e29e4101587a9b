"""Routs through the engine (RB 11.3, EX-26; T-12): Rout Attrition as new
identity versions, the slowest speed announced, Pursuit Fire by units that have
not fired, engine dice, secret losses, the Rout Withdrawal Group Move (or
elimination without a route), Disrupted again; then the turn resumes."""

from __future__ import annotations

import msgspec
import pytest

from pbem import session
from pbem.errors import IllegalAction
from rules.ritd import RULES as RITD
from rules.ritd import group_moves, routs, sequence
from rules.ritd import movement as mv
from rules.ritd.group_moves import unit_speed
from rules.ritd.sequence import after_movement, to_combat
from rules.ritd.state import game_map
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_refusal import REGROUP, send_orders
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")


#: The token of the 7/4 Armd (random per game), set once the Allies have deployed.
ARMD: dict[str, str] = {}


def _with_disrupted_companion(state):
    """The 7/4 Armd, Disrupted, shares Sollum with the 7/7 Tk (in every replay)."""
    pos = state.position
    armd = pos.block(ARMD["token"])
    return msgspec.structs.replace(state, position=pos.replace_blocks(
        [msgspec.structs.replace(armd, hex=game_map().resolve("Sollum"), disrupted=True)]))


def _new_game(tmp_path):
    table = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    ARMD["token"] = _block(table.allied.seat().replay.state, "7/4 Armd").token
    return table


def _block(state, unit):
    return next((b for b in state.position.blocks_of("allied") if b.unit == unit), None)


def _armd_token(table):
    return ARMD["token"]


@pytest.fixture
def ex26(tmp_path, monkeypatch):
    """The Demo with a Disrupted 7/4 Armd beside the 7/7 Tk in Sollum when the
    Axis attacks; Trento and Brescia fast enough (4) to pursue; every die a 6."""
    speed = unit_speed
    monkeypatch.setattr(group_moves, "unit_speed", lambda u: 4 if u in ("Trento", "Brescia") else speed(u))
    monkeypatch.setattr("pbem.game.roll", lambda *args: (6,) * len(args[-1]))
    real = after_movement
    monkeypatch.setattr(sequence, "after_movement", lambda state, turn: real(_with_disrupted_companion(state), turn))
    table = _new_game(tmp_path)
    table.play("axis", *REGROUP)
    return table


def test_ex_26_a_refusal_leaves_a_disrupted_unit_behind_which_routs_and_is_pursued(ex26):
    m = game_map()
    sollum = m.resolve("Sollum")
    token = _armd_token(ex26)
    assert "refuse-battle Sollum slowest 3" in session.legal_orders(ex26.allied.seat())
    ex26.play("allied", "refuse-battle Sollum slowest 3")
    ex26.play("axis", "pursue Sollum with Trento")
    ex26.play("allied", "pursuit losses auto", "refuse-battle Sollum -> Sidi Barrani")
    # The 7/4 Armd is left alone in Sollum: it Routs (RB 11.3).
    allied = ex26.allied.seat()
    assert allied.replay.pending().kind == "rout-slowest"
    assert session.legal_orders(allied) == ["rout Sollum slowest 3"]
    ex26.play("allied", "rout Sollum slowest 3")
    # Rout Attrition in secret: a new identity version; the Axis cannot see the CV.
    axis = ex26.axis.seat()
    assert axis.replay.state.versions[token] == 1 and axis.replay.state.position.block(token).unit == ""
    assert {o.kind for o in axis.replay.state.obligations} >= {"attrition", "speed-range"}
    assert axis.replay.pending().kind == "rout-pursuit"
    # Trento has fired on the refusing Group: only Brescia may pursue (EX-26).
    assert session.legal_orders(axis) == ["pursue Sollum with none", "pursue Sollum with all",
                                          "pursue Sollum with Brescia"]
    with pytest.raises(IllegalAction, match="RB 10.5"):
        session.add_orders(axis, ["pursue Sollum with Trento"])
    ex26.play("axis", "pursue Sollum with Brescia")
    drafted, _ = session.draft_replay(ex26.allied.seat())  # the Allies' entropy rolls the dice
    assert drafted.pending().kind == "rout-losses" and drafted.state.turn.rout_hits == 2
    assert drafted.state.last_rolls == (6, 6)
    ex26.play("allied", "pursuit losses auto", "rout Sollum -> Sidi Barrani")
    for side in (ex26.axis, ex26.allied):
        state = side.seat().replay.state
        b = state.position.block(token)
        assert b.hex == m.resolve("Sidi Barrani") and b.disrupted and not b.revealed
        assert state.versions[token] == 2 and state.disrupted_in[token] == state.turn.number
        assert state.position.battle(sollum) is None and not state.position.blocks_in(sollum, "allied")
        assert state.turn.step == "final-supply" and state.turn.rout_queue == ()
        # The Rout Withdrawal is among the Player-Turn's routes, for the map's arrows.
        assert [(mv.path[0], mv.path[-1], mv.withdrawal) for mv in state.last_moves if mv.token == token] == [
            (sollum, m.resolve("Sidi Barrani"), "rout")]
    assert _block(ex26.allied.seat().replay.state, "7/4 Armd").cv == 2  # 6, one step off, two hits
    # Everything opened: the deferred checks pass, and so does the audit.
    ex26.deliver(ex26.allied, send_orders(ex26, "axis", "supply check", "reveal option", open_all=True))
    ex26.deliver(ex26.axis, send_orders(ex26, "allied", "supply check", open_all=True))
    axis = ex26.axis.seat().replay.state
    assert not [o for o in axis.obligations if o.token == token]
    assert _block(axis, "7/4 Armd").cv == 2
    result = session.audit(ex26.allied.gd.read_events(), RITD)
    assert _block(result.replay.state, "7/4 Armd").cv == 2


def test_rb_11_3_a_lie_about_the_slowest_speed_of_a_rout_is_caught_at_the_audit(ex26, monkeypatch):
    ex26.play("allied", "refuse-battle Sollum slowest 3")
    ex26.play("axis", "pursue Sollum with Trento")
    ex26.play("allied", "pursuit losses auto", "refuse-battle Sollum -> Sidi Barrani")
    with monkeypatch.context() as cheat:  # the Allied client skips its own check
        cheat.setattr(routs, "check_slowest_speed", lambda *args: routs.PursuitCheck())
        lie = send_orders(ex26, "allied", "rout Sollum slowest 2")
    ex26.deliver(ex26.axis, lie)  # the Axis cannot tell yet
    ex26.play("axis", "pursue Sollum with none")
    with monkeypatch.context() as cheat:
        cheat.setattr(routs, "check_slowest_speed", lambda *args: routs.PursuitCheck())
        data = send_orders(ex26, "allied", "rout Sollum -> Sidi Barrani", open_all=True)
        events = ex26.allied.gd.read_events()
    with pytest.raises(IllegalAction, match="Routed in event .* announcing slowest speed 2"):
        ex26.deliver(ex26.axis, data)
    with pytest.raises(IllegalAction) as err:
        session.audit(events, RITD)
    text = str(err.value) + " ".join(getattr(err.value, "details", []) or [])
    assert "by allied" in text and "rout Sollum slowest 2" in text and "RB 10.5" in text


@pytest.fixture
def battle(tmp_path, monkeypatch):
    """The Demo: a Disrupted 7/4 Armd beside the 7/7 Tk in Sollum when the
    Combat phase begins; the Allies accept the battle; every die a 6."""
    monkeypatch.setattr("pbem.game.roll", lambda *args: (6,) * len(args[-1]))
    real = to_combat
    monkeypatch.setattr(sequence, "to_combat", lambda state, turn: real(_with_disrupted_companion(state), turn))
    table = _new_game(tmp_path)
    table.play("axis", *REGROUP)
    table.play("allied", "accept-battle Sollum", "reveal units")
    table.play("axis", "reveal units")
    return table


def _fight(table):
    table.play("axis", "battles Sollum")
    table.play("allied", "fire Sollum: 7/7 Tk at infantry")
    table.play("axis", "losses Sollum: Brescia 2, Trento 2")
    table.play("axis", "fire Sollum: Brescia at armor, Savona at armor, Trento at armor")
    table.play("allied", "losses Sollum auto")  # the 7/7 Tk is eliminated: the 7/4 Armd is unshielded


def test_t_12_combat_losses_that_unshield_a_disrupted_unit_rout_it(battle):
    m = game_map()
    token = _armd_token(battle)
    _fight(battle)
    allied = battle.allied.seat()
    assert allied.replay.pending().kind == "rout-slowest"
    battle.play("allied", "rout Sollum slowest 3")
    # Only units that have not fired in this Combat Round may Pursue (RB 11
    # sidebar): the shots left once the 7/7 Tk was gone; all are too slow.
    axis = battle.axis.seat()
    assert axis.replay.pending().kind == "rout-pursuit"
    fired = axis.replay.state.turn.rout_queue[0].fired
    assert fired and set(fired) < {b.token for b in axis.replay.state.position.blocks_of("axis")}
    assert session.legal_orders(axis) == ["pursue Sollum with none"]
    battle.play("axis", "pursue Sollum with none")
    allied = battle.allied.seat()
    assert allied.replay.pending().kind == "rout-withdraw"
    assert "rout Sollum -> Sidi Barrani" in session.legal_orders(allied)
    battle.play("allied", "rout Sollum -> Sidi Barrani")
    for side in (battle.axis, battle.allied):
        state = side.seat().replay.state
        b = state.position.block(token)
        assert b.hex == m.resolve("Sidi Barrani") and b.disrupted
        assert state.position.battles == () and state.turn.step == "final-supply"
    assert _block(battle.allied.seat().replay.state, "7/4 Armd").cv == 4  # Rout Attrition
    battle.play("axis", "supply check", "reveal option")
    battle.deliver(battle.axis, send_orders(battle, "allied", "supply check", open_all=True))
    assert not [o for o in battle.axis.seat().replay.state.obligations if o.token == token]
    result = session.audit(battle.allied.gd.read_events(), RITD)
    assert _block(result.replay.state, "7/4 Armd").cv == 4


def test_rb_11_3_a_rout_with_no_route_to_withdraw_is_eliminated(battle, monkeypatch):
    token = _armd_token(battle)
    monkeypatch.setattr(mv, "withdrawal_routes", lambda *args, **kwargs: ())
    _fight(battle)
    battle.play("allied", "rout Sollum slowest 3")
    battle.play("axis", "pursue Sollum with none")  # no Withdrawal route: eliminated (RB 11.3)
    for side in (battle.axis, battle.allied):
        state = side.seat().replay.state
        assert not state.position.has_block(token)
        assert state.position.battles == () and state.turn.step == "final-supply"
    result = session.audit(battle.allied.gd.read_events(), RITD)
    assert not result.replay.state.position.has_block(token)
