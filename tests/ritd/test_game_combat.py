"""The Combat phase through the engine (T9; RB 8.6, 9.1-9.5; T-11): the
Active Battles chosen, Defensive then Offensive Fire with engine dice, the
hits placed by their owner, finished battles removed; the 19.0 Demo's first
Axis turn with the Allies accepting the battle in Sollum."""

from __future__ import annotations

import re

import msgspec
import pytest

from pbem import session
from pbem.errors import IllegalAction
from rules.ritd import RULES as RITD
from rules.ritd import combat_round as cr
from rules.ritd import fire as fr
from rules.ritd import game as ritd
from rules.ritd import losses as ls
from rules.ritd.battle import check_combat
from rules.ritd.refusal import loss_identities
from rules.ritd.state import game_map
from rules.ritd.step_losses import loss_problems
from rules.ritd.turn import PendingRout
from rules.ritd.turn_options import option_problems
from rules.ritd.turn_orders import apply_turn
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

REGROUP = ["supply check", "basic", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento", "end movement"]


pytestmark = pytest.mark.usefixtures("registered_ritd")


@pytest.fixture
def battle(tmp_path, monkeypatch):
    """The Demo: the Axis regroups into Sollum, the Allies accept the battle,
    both reveal; every engine die is a 6."""
    monkeypatch.setattr("pbem.game.roll", lambda *args: (6,) * len(args[-1]))
    table = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    table.play("axis", *REGROUP)
    table.play("allied", "accept-battle Sollum", "reveal units")
    table.play("axis", "reveal units")
    return table


def _units(state, hex_name):
    h = game_map().resolve(hex_name)
    return sorted((b.unit, b.cv) for b in state.position.blocks_in(h))


def _add(table, role, *orders):
    session.add_orders(table.side(role).seat(), list(orders))


def test_rb_8_6_a_new_battle_is_mandatory(battle):
    seat = battle.axis.seat()
    assert seat.replay.pending().kind == "battles"
    assert session.legal_orders(seat) == ["battles Sollum"]
    with pytest.raises(IllegalAction) as err:
        _add(battle, "axis", "battles none")
    assert "RB 8.6" in str(err.value) and "combat in Sollum is mandatory" in str(err.value)
    with pytest.raises(IllegalAction, match="RB 4.3"):  # a Basic Turn has no Assault Battles
        _add(battle, "axis", "battles Sollum assault Sollum")


def test_rb_9_1_defensive_fire_first_dice_from_the_plans_hits_placed_by_the_owner(battle):
    battle.play("axis", "battles Sollum")
    # RB 9.1: the Defender (the passive player here) fires first.
    allied = battle.allied.seat()
    assert allied.replay.pending().kind == "defensive-fire"
    assert session.legal_orders(allied) == ["fire Sollum: 7/7 Tk at infantry"]
    with pytest.raises(IllegalAction, match="RB 9.3"):  # infantry is present: no armor to fire at
        _add(battle, "allied", "fire Sollum: 7/7 Tk at armour")
    battle.play("allied", "fire Sollum: 7/7 Tk at infantry")
    # The history names the 7/7 Tk, revealed in the battle (RB 8.5): public knowledge now;
    # by name, never by token (issue 21 point 3).
    fired = battle.axis.seat().replay.history[-1].actions
    assert any("fire Sollum: 7/7 Tk at infantry" in label for label in fired)
    assert not any(re.search(r"\b[AL][0-9a-f]{8}\b", label) for label in fired)
    assert session.load_public(battle.axis.gd).history[-1].actions == fired
    # RB 9.2: one die per CV; the Axis rolls them with its next event.
    assert battle.axis.seat().replay.pending().dice == (6,) * 4
    axis, _ = session.draft_replay(battle.axis.seat())
    assert axis.pending().kind == "offensive-losses" and axis.state.last_rolls == (6, 6, 6, 6)
    assert axis.state.turn.fire_result.hits["infantry"].hits == 4
    # The report says what the dice decided: the 7/7 Tk's four dice at infantry and their hits.
    assert [line.split(" (L")[0] for line in axis.state.last_fire] == ["Sollum: 7/7 Tk"]
    assert axis.state.last_fire[0].endswith("at infantry (DF): 6 6 6 6 -> 4 hits")
    # RB 9.5: hits that can remove CV must: one hit on Savona wastes three.
    with pytest.raises(IllegalAction) as err:
        _add(battle, "axis", "losses Sollum: Savona 1")
    assert "RB 9.5" in str(err.value)
    battle.play("axis", "losses Sollum: Brescia 2, Trento 2")
    assert _units(battle.allied.seat().replay.state, "Sollum") == \
        [("7/7 Tk", 4), ("Brescia", 2), ("Savona", 4), ("Trento", 2)]
    # Offensive Fire: every Undisrupted Axis unit, at the armor; the Allies roll.
    axis = battle.axis.seat()
    assert axis.replay.pending().kind == "offensive-fire"
    plan = "fire Sollum: Brescia at armor, Savona at armor, Trento at armor"
    # RB 9.2 (version 5, CB-19): one unit at a time, step by step, or the plan for them all.
    assert session.legal_orders(axis) == [f"fire Sollum: {u} at armor" for u in ("Brescia", "Savona", "Trento")] \
        + [plan]
    battle.play("axis", plan)
    assert battle.allied.seat().replay.pending().dice == (6,) * 8
    assert session.legal_orders(battle.allied.seat()) == ["losses Sollum auto"]
    battle.play("allied", "losses Sollum auto")
    # The 7/7 Tk is eliminated: the battle is over and the turn goes on (RB 8.0).
    axis, allied = battle.axis.seat().replay, battle.allied.seat().replay
    assert axis.head == allied.head
    for state in (axis.state, allied.state):
        assert _units(state, "Sollum") == [("Brescia", 2), ("Savona", 4), ("Trento", 2)]
        assert state.position.battles == () and state.turn.step == "final-supply"
    battle.play("axis", "supply check", "reveal option")
    assert battle.allied.seat().replay.state.turn.active == "allied"
    result = session.audit(battle.allied.gd.read_events(), RITD)
    assert _units(result.replay.state, "Sollum") == [("Brescia", 2), ("Savona", 4), ("Trento", 2)]


def test_rb_9_1_no_hits_means_no_loss_step(battle, monkeypatch):
    monkeypatch.setattr("pbem.game.roll", lambda *args: (1,) * len(args[-1]))
    battle.play("axis", "battles Sollum")
    battle.play("allied", "fire Sollum: 7/7 Tk at infantry")
    axis, _ = session.draft_replay(battle.axis.seat())
    assert axis.pending().kind == "offensive-fire" and axis.state.last_rolls == (1, 1, 1, 1)


def test_t_11_hits_that_leave_disrupted_units_unshielded_hand_over_to_the_rout(battle):
    """A placement that leaves Disrupted units alone in the battle is legal (the
    dice decided it); they Rout (RB 11.3) instead of being eliminated (T-11,
    T-12). The whole Rout is played in tests/ritd/test_game_rout.py."""
    state = battle.allied.seat().replay.state
    pos = state.position
    tk = next(b for b in pos.blocks_of("allied") if b.unit == "7/7 Tk")
    other = next(b for b in pos.blocks_of("allied") if b.hex != tk.hex)
    pos = pos.replace_blocks([msgspec.structs.replace(other, hex=tk.hex, disrupted=True)])
    fire = fr.FireResult(hex=tk.hex, side="axis", shots=(),
                              hits={"armor": ls.ClassHits(hits=tk.cv)})
    turn = msgspec.structs.replace(state.turn, step="defensive-losses", battles=(tk.hex,), fire_result=fire)
    state = msgspec.structs.replace(state, position=pos, turn=turn)
    allocation = ls.LossAllocation(tk.hex, (ls.Loss(tk.token, hits=tk.cv),))
    assert check_combat(state, turn, allocation, "allied") == []
    after = apply_turn(state, turn, allocation, "allied", None)
    assert not after.position.has_block(tk.token) and after.position.block(other.token).hex == tk.hex
    assert after.turn.step == "rout-slowest" and after.turn.rout_resume == "defensive-losses"
    assert after.turn.rout_queue == (PendingRout(hex=tk.hex, side="allied", tokens=(other.token,)),)
    assert ritd.pending(after).role == "allied"


def test_rb_4_3_assault_battles_need_an_assault_option_at_supply_revealed(battle):
    """Two cards do not tell a bluff from an Assault: a replay that cannot see
    the cards accepts Assault Battles and checks them when the cards are
    opened (RB 3.48): two real cards pay for them, one does not."""
    state = battle.allied.seat().replay.state
    turn = msgspec.structs.replace(state.turn, cards=2, option="", real=-1,
                                        assault=(game_map().resolve("Sollum"),))
    problems = option_problems(state, turn, b"1")
    assert [p.rule for p in problems] == ["RB 4.3"] and "Assault Battles" in problems[0].message
    assert option_problems(state, turn, b"2") == []
    unknown = msgspec.structs.replace(turn, step="battles", assault=())
    sel = cr.BattleSelection(active=turn.assault, assault=turn.assault)
    assert check_combat(state, unknown, sel, "axis") == []
    # The owner, who knows only one of its two cards is real, is refused at once.
    basic = msgspec.structs.replace(unknown, real=1)
    assert [p.rule for p in check_combat(state, basic, sel, "axis")] == ["RB 4.3"]


def test_t_34_hits_placed_in_the_open_stand_for_the_committed_cv_in_later_secret_losses(battle):
    """T-34: Brescia and Trento lose CV in the open in Sollum (4 -> 2, RB 9.5);
    their committed identities still say 4. A later secret change (Pursuit
    losses as a new identity version, T-10) is judged from the public CV 2
    by the opponent and the audit, not from the stale committed 4."""
    from rules.ritd import hidden
    battle.play("axis", "battles Sollum")
    battle.play("allied", "fire Sollum: 7/7 Tk at infantry")
    battle.play("axis", "losses Sollum: Brescia 2, Trento 2",
                "fire Sollum: Brescia at armor, Savona at armor, Trento at armor")
    battle.play("allied", "losses Sollum auto")
    allied = battle.allied.seat().replay
    brescia = next(b.token for b in allied.state.position.blocks if b.unit == "Brescia")
    for side in (battle.axis, battle.allied):
        assert side.seat().replay.state.public_cv == {hidden.identity_label(brescia, 0): 2,
                                                     hidden.identity_label(next(
                                                         b.token for b in allied.state.position.blocks
                                                         if b.unit == "Trento"), 0): 2}

    class Opened:  # the committed version 0 (CV 4) and a new version 1 at CV 1
        def value(self, label):
            return {hidden.identity_label(brescia, 0): hidden.encode_identity("Brescia", 4),
                    hidden.identity_label(brescia, 1): hidden.encode_identity("Brescia", 1)}.get(label)

    old, new = loss_identities(allied.state, (brescia,), (brescia,), Opened())
    assert old == {brescia: ("Brescia", 2)} and new == {brescia: ("Brescia", 1)}
    hex_ = game_map().resolve("Sollum")
    assert loss_problems(allied.state, "axis", hex_, (brescia,), old, new, (), 1) == []
