"""Overruns (RB 11.4) and Final Supply Check Routs (RB 12.7, 11 sidebar; CB-11)
through the engine (T-13), with the Rout procedure of T-12."""

from __future__ import annotations

import msgspec
import pytest

from pbem import session
from pbem.errors import IllegalAction
from rules.ritd import RULES as RITD
from rules.ritd import group_moves, sequence, supply_checks
from rules.ritd import supply as sp
from rules.ritd.group_moves import unit_speed
from rules.ritd.sequence import begin_turn
from rules.ritd.state import game_map
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_refusal import send_orders
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")


def _token(table, side, unit):
    return next(b.token for b in table.side(side).seat().replay.state.position.blocks_of(side) if b.unit == unit)


@pytest.fixture
def overrun(tmp_path, monkeypatch):
    """The Demo with the 7/7 Tk Disrupted alone in Sollum when the Axis turn
    begins; Brescia fast enough (4) to pursue it; every die a 6."""
    speed = unit_speed
    monkeypatch.setattr(group_moves, "unit_speed", lambda u: 4 if u == "Brescia" else speed(u))
    monkeypatch.setattr("pbem.game.roll", lambda *args: (6,) * len(args[-1]))
    real = begin_turn

    def begin(state, active):
        state = real(state, active)
        if state.turn.number == 1:
            pos = state.position
            sollum = pos.blocks_in(game_map().resolve("Sollum"), "allied")
            state = msgspec.structs.replace(state, position=pos.replace_blocks(
                [msgspec.structs.replace(b, disrupted=True) for b in sollum]))
        return state

    monkeypatch.setattr(sequence, "begin_turn", begin)
    return new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())


def test_rb_11_4_an_overrun_routs_the_disrupted_units_pursued_by_the_overrunners_then_movement_goes_on(overrun):
    m = game_map()
    sollum = m.resolve("Sollum")
    tk = _token(overrun, "allied", "7/7 Tk")
    overrun.play("axis", "supply check", "offensive")
    axis = overrun.axis.seat()
    assert "group Ft Capuzzo -> Sollum Brescia" in session.legal_orders(axis)  # no longer refused
    overrun.play("axis", "group Ft Capuzzo -> Sollum Brescia")
    # Movement is interrupted: the 7/7 Tk Routs (RB 11.4 Overrun Procedure).
    allied = overrun.allied.seat()
    assert allied.replay.pending().kind == "rout-slowest"
    turn = allied.replay.state.turn
    assert turn.rout_resume == "movement" and turn.rout_queue[0].tokens == (tk,)
    overrun.play("allied", *session.legal_orders(allied))
    axis = overrun.axis.seat()
    assert axis.replay.pending().kind == "rout-pursuit"
    # Only the Overrunning unit may Pursue.
    assert session.legal_orders(axis) == ["pursue Sollum with none", "pursue Sollum with all",
                                          "pursue Sollum with Brescia"]
    overrun.play("axis", "pursue Sollum with Brescia")
    drafted, _ = session.draft_replay(overrun.allied.seat())  # the Allies' entropy rolls the dice
    assert drafted.pending().kind == "rout-losses" and drafted.state.turn.rout_hits == 2
    overrun.play("allied", "pursuit losses auto")
    allied = overrun.allied.seat()
    if allied.replay.pending().kind == "rout-withdraw":
        overrun.play("allied", session.legal_orders(allied)[0])
    for side in (overrun.axis, overrun.allied):
        state = side.seat().replay.state
        assert state.turn.step == "movement" and state.turn.rout_queue == ()
        assert not state.position.blocks_in(sollum, "allied") and state.position.battle(sollum) is None
        assert state.turn.movement.moves_made == 1
    # The active player moves on: the second Move of the Offensive Turn, into
    # the vacated hex; the Overrunning unit has stopped (RB 11.4).
    axis = overrun.axis.seat()
    assert axis.replay.pending().kind == "movement"
    brescia = _token(overrun, "axis", "Brescia")
    assert not [o for o in session.legal_orders(axis) if "Brescia" in o]
    with pytest.raises(IllegalAction, match="RB 11.4"):  # not even by Forced March (MV-08)
        session.add_orders(axis, ["group Sidi Omar -> Sollum Trento", "forced-march Brescia -> Bardia"])
    overrun.play("axis", "group Sidi Omar -> Sollum Trento", "end movement")
    state = overrun.axis.seat().replay.state
    assert state.turn.step == "final-supply"
    assert state.position.block(brescia).hex == sollum
    assert state.position.block(_token(overrun, "axis", "Trento")).hex == sollum
    overrun.play("axis", "supply check", "reveal option")
    overrun.deliver(overrun.axis, send_orders(overrun, "allied", "supply check", open_all=True))
    result = session.audit(overrun.allied.gd.read_events(), RITD)
    assert result.replay.state.position.block(brescia).hex == sollum


@pytest.fixture
def cut_off(tmp_path, monkeypatch):
    """The Demo: Brescia and Trento attack the 7/7 Tk in Sollum; when the
    Combat phase begins Trento is Disrupted (shielded by Brescia) and Brescia
    Unsupplied, and Brescia has no Supply Line at the Final Supply Check; every
    die a 1 (no hits)."""
    monkeypatch.setattr("pbem.game.roll", lambda *args: (1,) * len(args[-1]))
    marks: dict[str, str] = {}
    real_combat = sequence.to_combat

    def fake_combat(state, turn):
        pos = state.position
        changed = [msgspec.structs.replace(pos.block(marks["Brescia"]), unsupplied=True),
                   msgspec.structs.replace(pos.block(marks["Trento"]), disrupted=True)]
        return real_combat(msgspec.structs.replace(state, position=pos.replace_blocks(changed)), turn)

    real_status = sp.block_status
    monkeypatch.setattr(sequence, "to_combat", fake_combat)
    def cut_off_status(s, b):
        return None if b.token == marks["Brescia"] else real_status(s, b)

    # Supply status is read by the Supply Lines (supply) and by the Supply Checks (supply_checks).
    monkeypatch.setattr(sp, "block_status", cut_off_status)
    monkeypatch.setattr(supply_checks, "block_status", cut_off_status)
    table = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    marks.update(Brescia=_token(table, "axis", "Brescia"), Trento=_token(table, "axis", "Trento"))
    return table, marks


def test_rb_12_7_final_supply_check_eliminates_the_unshielded_engaged_unit_and_the_ones_it_shielded_rout(cut_off):
    table, marks = cut_off
    m = game_map()
    sollum = m.resolve("Sollum")
    table.play("axis", "supply check", "offensive", "group Ft Capuzzo -> Sollum Brescia",
               "group Sidi Omar -> Sollum Trento", "end movement")
    table.play("allied", "accept-battle Sollum", "reveal units")
    table.play("axis", "reveal units", "battles Sollum")
    allied = table.allied.seat()
    table.play("allied", session.legal_orders(allied)[0])
    axis = table.axis.seat()
    table.play("axis", session.legal_orders(axis)[0])
    axis = table.axis.seat()
    assert axis.replay.pending().kind == "final-supply"
    assert session.legal_orders(axis) == ["supply check"]  # no longer refused
    table.play("axis", "supply check")
    # CB-11: Brescia, newly Disrupted, engaged and unshielded, is eliminated;
    # Trento, which it shielded, Routs (T-12), pursued by the 7/7 Tk.
    axis = table.axis.seat()
    state = axis.replay.state
    assert not state.position.has_block(marks["Brescia"])
    assert state.turn.supply_eliminated == (marks["Brescia"],)
    assert state.turn.step == "rout-slowest" and state.turn.rout_queue[0].tokens == (marks["Trento"],)
    assert state.turn.rout_resume == "supply-revealed"
    while True:
        for side in ("axis", "allied"):
            seat = table.side(side).seat()
            d = seat.replay.pending()
            if d is not None and d.role == side and d.kind.startswith("rout-"):
                table.play(side, session.legal_orders(seat)[0])
                break
        else:
            break
    for side in (table.axis, table.allied):
        state = side.seat().replay.state
        assert state.turn.step == "supply-revealed" and state.turn.rout_queue == ()
        assert not state.position.has_block(marks["Brescia"])
        assert not state.position.blocks_in(sollum, "axis") and state.position.battle(sollum) is None
        if state.position.has_block(marks["Trento"]):
            assert state.position.block(marks["Trento"]).disrupted
    table.play("axis", "reveal option")
    table.deliver(table.axis, send_orders(table, "allied", "supply check", open_all=True))
    result = session.audit(table.allied.gd.read_events(), RITD)
    assert not result.replay.state.position.has_block(marks["Brescia"])
