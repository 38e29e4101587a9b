"""Retreat Forced Marches through the engine (RB 6.4 sidebar "Retreat Forced
Marches", T-39): a Retreating unit whose Forced March fails is Disrupted and
also loses one step. Its owner applies the step in secret right after the
dice (`march losses auto`: a new identity version, or the unit eliminated
at its last step, RB 2.3); the opponent checks it at once where it can, else
when the identity opens and at the audit. A successful Forced March, or a
failed one that is not part of a Retreat, costs nothing."""

from __future__ import annotations

import msgspec
import pytest

from pbem import session
from pbem.errors import IllegalAction
from pbem.rulesapi import ActingAs
from rules.ritd import RULES as RITD
from rules.ritd import game as ritd
from rules.ritd import retreats, step_losses
from rules.ritd.actions import MarchLosses
from rules.ritd.deployment import own_token
from rules.ritd.state import I_TANKS, game_map, option_roster, roster_of
from rules.ritd.step_losses import MARCH_LOSS, step_loss_problems
from rules.ritd.units import OptionalITank
from tests.ritd.test_game_refusal import send_orders
from tests.ritd.test_game_retreat import FACE, block_of, standoff_table

pytestmark = pytest.mark.usefixtures("registered_ritd")

RETREAT = ("supply check", "basic", "group Sollum -> Sidi Barrani 7/7 Tk", "forced-march 7/7 Tk -> Mersa Matruh W1",
           "end movement", "retreat Sollum slowest 3")


@pytest.fixture
def standoff(tmp_path, monkeypatch):
    return standoff_table(tmp_path, monkeypatch)


def _states(table):
    return table.allied.seat().replay.state, table.axis.seat().replay.state


def _retreat_and_fail(table):
    """The 7/7 Tk (CV 4, elite: 2 CV a step) Retreats from Sollum with a
    Forced March on; no Pursuit; its die shows 1 (RB 6.4: 1-3 fails)."""
    table.play("allied", *RETREAT)
    FACE["die"] = 1
    table.play("axis", "pursue Sollum with none")


def test_rb_6_4_a_failed_retreat_forced_march_costs_a_step_checked_when_opened_and_at_the_audit(standoff):
    m = game_map()
    tk = block_of(standoff.allied.seat().replay.state, "allied", "7/7 Tk")
    assert tk.cv == 4
    _retreat_and_fail(standoff)
    allied = standoff.allied.seat()
    draft, _ = session.draft_replay(allied)  # the die comes with the Allies' next event (T-35)
    assert draft.pending().kind == "march-losses" and draft.pending().role == "allied"
    assert "RB 6.4" in draft.pending().prompt
    stopped = draft.state.position.block(tk.token)
    assert stopped.hex == m.resolve("Sidi Barrani") and stopped.disrupted and stopped.cv == 4
    assert session.legal_orders(allied) == ["march losses auto"]
    with pytest.raises(IllegalAction, match="RB 6.4"):  # not the Refusal of a Group, not yet
        session.add_orders(allied, ["supply check"])
    standoff.play("allied", "march losses auto")
    own, axis = _states(standoff)
    assert own.position.block(tk.token).cv == 2 and own.versions[tk.token] == 1
    # The Axis knows the Tk (revealed in the battle): its step is lost in the open ...
    seen = axis.position.block(tk.token)
    assert seen.unit == "7/7 Tk" and seen.cv == 2 and seen.disrupted and axis.versions[tk.token] == 1
    # ... and the new commitment, still secret, is checked when it opens.
    assert [(o.kind, o.rule, o.labels) for o in axis.obligations if o.token == tk.token] == \
        [("march-loss", "RB 6.4", (f"{tk.token}.id1",))]
    assert axis.turn.march_losses == () and axis.turn.step not in ("march-losses", "forced-march")
    standoff.deliver(standoff.axis, send_orders(standoff, "allied", "supply check", "reveal option", open_all=True))
    assert not [o for o in standoff.axis.seat().replay.state.obligations if o.token == tk.token]
    result = session.audit(standoff.allied.gd.read_events(), RITD)
    assert result.replay.state.position.block(tk.token).cv == 2


def test_rb_6_4_a_forged_retreat_march_loss_is_caught_when_opened_and_at_the_audit(standoff, monkeypatch):
    tk = block_of(standoff.allied.seat().replay.state, "allied", "7/7 Tk")
    _retreat_and_fail(standoff)
    real = roster_of

    class Sturdy:  # the Allied client pretends a step costs nothing, and skips its own check
        def __init__(self, roster):
            self.roster = roster

        def get(self, name):
            u = self.roster.get(name)
            return msgspec.structs.replace(u, elite=False, min_cv=0) if name == "7/7 Tk" else u

    with monkeypatch.context() as cheat:
        cheat.setattr(retreats, "roster_of", lambda state: Sturdy(real(state)))
        cheat.setattr(step_losses, "step_loss_problems", lambda *args: [])
        forged = send_orders(standoff, "allied", "march losses auto")  # the Tk committed at CV 3
    standoff.deliver(standoff.axis, forged)  # the new identity is secret: the Axis cannot tell yet
    assert "march-loss" in {o.kind for o in standoff.axis.seat().replay.state.obligations}
    with monkeypatch.context() as cheat:  # the new version is opened in the Allies' next event
        cheat.setattr(step_losses, "step_loss_problems", lambda *args: [])
        data = send_orders(standoff, "allied", "supply check", "reveal option", open_all=True)
        events = standoff.allied.gd.read_events()
    with pytest.raises(IllegalAction, match=r"(?s)by allied.*RB 6\.4.*7/7 Tk .* must be 7/7 Tk at CV 2"):
        standoff.deliver(standoff.axis, data)
    with pytest.raises(IllegalAction) as err:
        session.audit(events, RITD)
    text = str(err.value) + " ".join(getattr(err.value, "details", []) or [])
    assert "by allied" in text and "march losses" in text and "RB 6.4" in text and tk.token in text


def test_rb_6_4_a_retreating_unit_at_its_last_step_is_eliminated_by_a_failed_forced_march(standoff):
    """Pursuit hits first take the Tk to its last step in secret (T-10): the
    Axis cannot see it, so the elimination is checked when that version opens."""
    tk = block_of(standoff.allied.seat().replay.state, "allied", "7/7 Tk")
    standoff.play("allied", *RETREAT)
    FACE["die"] = 6  # Trento's two dice hit twice: one elite step
    standoff.play("axis", "pursue Sollum with Trento")
    session.draft_replay(standoff.allied.seat())  # the Pursuit dice are rolled now
    FACE["die"] = 1  # then the Forced March fails
    standoff.play("allied", "pursuit losses auto")
    allied = standoff.allied.seat()
    draft, _ = session.draft_replay(allied)
    assert draft.pending().kind == "march-losses" and draft.state.position.block(tk.token).cv == 2
    assert session.legal_orders(allied) == ["march losses auto"]
    standoff.play("allied", "march losses auto")
    own, axis = _states(standoff)
    assert not own.position.has_block(tk.token) and not axis.position.has_block(tk.token)
    assert [(o.labels, o.eliminated) for o in axis.obligations if o.kind == "march-loss"] == \
        [((f"{tk.token}.id1",), (tk.token,))]
    standoff.deliver(standoff.axis, send_orders(standoff, "allied", "supply check", "reveal option", open_all=True))
    assert not [o for o in standoff.axis.seat().replay.state.obligations if o.token == tk.token]
    session.audit(standoff.allied.gd.read_events(), RITD)


def test_rb_6_4_a_unit_at_its_last_step_may_not_survive_a_failed_retreat_forced_march(standoff, monkeypatch):
    tk = block_of(standoff.allied.seat().replay.state, "allied", "7/7 Tk")
    standoff.play("allied", *RETREAT)
    FACE["die"] = 6
    standoff.play("axis", "pursue Sollum with Trento")
    session.draft_replay(standoff.allied.seat())
    FACE["die"] = 1
    standoff.play("allied", "pursuit losses auto")
    allied = standoff.allied.seat()
    draft, _ = session.draft_replay(allied)
    order = MarchLosses(recommit=(tk.token,))
    ctx = draft.ctx("allied")
    problems = ritd.check(draft.state, order, ActingAs(ctx, "allied"))
    assert any(p.rule == "RB 6.4" for p in problems)
    assert ritd.check(draft.state, MarchLosses(eliminated=(tk.token,)), ActingAs(ctx, "allied")) == []
    assert ritd.legal_actions(draft.state, "allied", ctx) == [MarchLosses(eliminated=(tk.token,))]


def test_rb_6_4_a_successful_retreat_forced_march_costs_nothing(standoff):
    tk = block_of(standoff.allied.seat().replay.state, "allied", "7/7 Tk")
    standoff.play("allied", *RETREAT)
    FACE["die"] = 6
    standoff.play("axis", "pursue Sollum with none")
    draft, _ = session.draft_replay(standoff.allied.seat())
    moved = draft.state.position.block(tk.token)
    assert moved.hex == game_map().resolve("Mersa Matruh W1") and moved.disrupted and moved.cv == 4
    assert draft.pending().kind != "march-losses" and draft.state.versions[tk.token] == 0


def test_rb_6_4_a_failed_forced_march_that_is_no_retreat_costs_no_step(standoff):
    m = game_map()
    armd = block_of(standoff.allied.seat().replay.state, "allied", "7/4 Armd")
    FACE["die"] = 1
    standoff.play("allied", "supply check", "basic", "group Buq Buq -> Sidi Barrani 7/4 Armd",
                  "forced-march 7/4 Armd -> Mersa Matruh W1", "end movement")
    for state in _states(standoff):
        stopped = state.position.block(armd.token)
        assert stopped.hex == m.resolve("Sidi Barrani") and stopped.disrupted
        assert state.versions[armd.token] == 0 and state.turn.step != "march-losses"
        assert not [o for o in state.obligations if o.kind == "march-loss"]
    assert _states(standoff)[0].position.block(armd.token).cv == 6


def test_rb_6_4_the_step_a_failed_retreat_forced_march_costs_follows_the_unit_and_the_options():
    """An elite unit loses 2 CV; an I-tank, elite under the optional rule
    (RB 17.0), still loses one 1-CV step (its label is unchanged, CB-15)."""
    roster = option_roster((I_TANKS,))
    tank = roster.i_tanks()[0]
    assert isinstance(tank, OptionalITank) and tank.max_cv - 1 >= tank.min_cv

    def problems(unit, cv, after):
        return step_loss_problems(roster, "L00000000", (unit.name, cv), (unit.name, after), False,
                                        "RB 6.4", MARCH_LOSS)
    assert problems(tank, tank.max_cv, tank.max_cv - 1) == []
    assert [p.rule for p in problems(tank, tank.max_cv, tank.max_cv - 2)] == ["RB 6.4"]
    tk = roster.get("7/7 Tk")
    assert problems(tk, 4, 2) == [] and [p.rule for p in problems(tk, 4, 3)] == ["RB 6.4"]
    last = step_loss_problems(roster, "L00000000", ("7/7 Tk", 2), None, False, "RB 6.4", MARCH_LOSS)
    assert [p.rule for p in last] == ["RB 6.4"] and "eliminated" in last[0].message


def test_rb_6_4_forced_marches_are_offered_once_a_unit_has_moved_and_each_offer_is_legal(standoff):
    """'pbem options' (and so the self-play bots) list Forced Marches: a unit of
    this phase's Group Moves one hex on from where it stopped, each checked
    before it is offered; none before any unit has moved."""
    allied = standoff.allied.seat()
    session.add_orders(allied, ["supply check", "basic"])
    assert not [o for o in session.legal_orders(allied) if o.startswith("forced-march")]
    session.add_orders(allied, ["group Sollum -> Sidi Barrani 7/7 Tk"])
    marches = [o for o in session.legal_orders(allied) if o.startswith("forced-march")]
    assert "forced-march 7/7 Tk -> Mersa Matruh W1" in marches
    assert all(o.startswith("forced-march 7/7 Tk -> ") for o in marches)
    for order in marches:  # each one the rules accept as it is written
        session.add_orders(allied, [order])
        assert not [o for o in session.legal_orders(allied) if o.startswith("forced-march")]  # once per phase
        session.undo(allied, 1)


def test_rb_6_4_a_regroup_offers_forced_marches_to_its_destination_to_units_that_did_not_move(tmp_path):
    """MV-08: a unit in or next to the Command Point of this phase's Regroup
    that did not move may Force March to the Regroup's destination."""
    from tests.ritd.test_game_refusal import new_game
    from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

    table = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    axis = table.axis.seat()
    session.add_orders(axis, ["supply check", "basic", "regroup cp Sidi Omar -> Bir Guba Trento"])
    marches = [o for o in session.legal_orders(axis) if o.startswith("forced-march")]
    # GGFF and Trieste stayed in Sidi Omar; the four in Ft. Capuzzo are next to it; Trento moved.
    assert sorted(marches) == [f"forced-march {u} -> Bir Guba"
                               for u in ("Bologna", "Brescia", "GGFF", "Pavia", "Sabratha", "Trieste")]
    session.add_orders(axis, ["forced-march GGFF -> Bir Guba"])
    draft, _ = session.draft_replay(axis)
    assert [p.token for p in draft.state.turn.movement.marches] == [own_token(draft.state, "axis", "GGFF")]
