"""Retreats and Probes of the active player through the engine (RB 10.3,
10.4, 10.41, 10.5; T-35..T-38): Disengaging units announced during Movement
wait in the battle hex; after all other Moves the passive player Pursues (or
Probes a Partial Retreat), the engine rolls, the active player places the hits
in secret, the survivors complete their Moves Disrupted, and what is left
behind Routs."""

from __future__ import annotations

import re

import msgspec
import pytest

from pbem import game as pbem_game
from pbem import session
from pbem.errors import IllegalAction
from rules.ritd import RULES as RITD
from rules.ritd import combat_round as cr
from rules.ritd import game as ritd
from rules.ritd import group_moves, routs, sequence, step_losses
from rules.ritd.combat_state import combat_round
from rules.ritd.group_moves import unit_speed
from rules.ritd.sequence import next_retreat
from rules.ritd.state import all_scenarios, game_map
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_refusal import REGROUP, send_orders
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")

#: Every engine die of a new roll shows FACE["die"] (1: every fire misses, 6: every die hits).
FACE: dict[str, int | None] = {"die": 1}


def _units(state, hex_name, side=None):
    h = game_map().resolve(hex_name)
    return sorted((b.unit, b.cv) for b in state.position.blocks_in(h, side))


def block_of(state, side, unit):
    return next(b for b in state.position.blocks_of(side) if b.unit == unit)


def standoff_table(tmp_path, monkeypatch):
    """The Demo: the Axis Regroups into Sollum, the Allies accept; a Combat
    Round in which every die misses, so the battle goes on into the Allied
    Player-Turn. Trento and Brescia are fast (speed 4) enough to pursue the
    7/7 Tk (speed 3). Later rolls show FACE["die"], or real dice if None."""
    speed = unit_speed
    monkeypatch.setattr(group_moves, "unit_speed", lambda u: 4 if u in ("Trento", "Brescia") else speed(u))
    FACE["die"] = 1
    faces: dict[tuple, int] = {}  # per roll, so that replays and the audit roll the same
    real = pbem_game.roll

    def roll(*args):
        if FACE["die"] is None and args[:-1] not in faces:
            return real(*args)
        return (faces.setdefault(args[:-1], FACE["die"]),) * len(args[-1])

    monkeypatch.setattr("pbem.game.roll", roll)
    table = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    table.play("axis", *REGROUP)
    table.play("allied", "accept-battle Sollum", "reveal units")
    table.play("axis", "reveal units", "battles Sollum")
    table.play("allied", "fire Sollum: 7/7 Tk at infantry")
    table.play("axis", "fire Sollum: Brescia at armor, Savona at armor, Trento at armor")
    table.play("axis", "supply check", "reveal option")
    assert table.allied.seat().replay.state.turn.active == "allied"
    return table


@pytest.fixture
def standoff(tmp_path, monkeypatch):
    return standoff_table(tmp_path, monkeypatch)


def test_rb_10_3_full_retreat_procedure_step_by_step(standoff):
    m = game_map()
    sollum, barrani = m.resolve("Sollum"), m.resolve("Sidi Barrani")
    allied = standoff.allied.seat()
    session.add_orders(allied, ["supply check", "basic", "group Sollum -> Sidi Barrani 7/7 Tk"])
    draft, _ = session.draft_replay(allied)
    # Step 1: the Move is announced; the 7/7 Tk waits upright in Sollum.
    tk = block_of(draft.state, "allied", "7/7 Tk")
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
    cv = block_of(draft.state, "allied", "7/7 Tk").cv
    # Step 3: hits placed (an elite unit loses one step for two hits, RB 9.5); the Tk completes its Move.
    standoff.play("allied", "pursuit losses auto")
    for state in (standoff.allied.seat().replay.state, standoff.axis.seat().replay.state):
        moved = state.position.block(tk.token)
        assert moved.hex == barrani and moved.disrupted and not moved.revealed
        assert state.position.battle(sollum) is None and state.turn.retreating == ""
        assert state.turn.movement.retreating == ()
    step = all_scenarios().roster.get("7/7 Tk").cv_per_step
    assert standoff.allied.seat().replay.state.position.block(tk.token).cv == cv - step
    assert standoff.axis.seat().replay.state.versions[tk.token] == 1
    # The hits went on an upright block: the Axis no longer sees a CV (not the stale 4, T-40).
    seen = standoff.axis.seat().replay.state.position.block(tk.token)
    assert (seen.unit, seen.cv) == ("", 0)
    # The map shows the route taken.
    assert any(mv.token == tk.token and mv.path[-1] == barrani for mv in standoff.axis.seat().replay.state.last_moves)


def test_rb_10_3_pursuit_deception_fire_withheld_no_dice_no_losses(standoff):
    m = game_map()
    standoff.play("allied", "supply check", "basic", "group Sollum -> Sidi Barrani 7/7 Tk", "end movement",
                  "retreat Sollum slowest 3")
    standoff.play("axis", "pursue Sollum with none")
    state = standoff.axis.seat().replay.state
    tk = next(b for b in state.position.blocks_of("allied") if b.hex == m.resolve("Sidi Barrani")
              and b.disrupted)
    assert state.versions.get(tk.token, 0) == 0  # no hits, no new identity


def test_rb_10_0_a_pass_turn_withdrawal_out_of_a_battle_takes_pursuit_fire(standoff):
    m = game_map()
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


def _allied_pass(table):
    table.play("allied", "supply check", "pass", "end movement", "supply check")
    assert table.axis.seat().replay.state.turn.active == "axis"


def test_rb_10_4_partial_retreat_procedure_with_probe(standoff):
    m = game_map()
    sollum, capuzzo = m.resolve("Sollum"), m.resolve("Ft Capuzzo")
    _allied_pass(standoff)
    axis = standoff.axis.seat()
    session.add_orders(axis, ["supply check", "basic", "group Sollum -> Ft Capuzzo Trento", "end movement"])
    draft, _ = session.draft_replay(axis)
    # Step 1: the Partial Retreat is announced; Savona and Brescia are the Rearguard.
    assert draft.pending().kind == "retreat-probe" and draft.pending().role == "allied"
    assert draft.state.turn.rearguard and len(draft.state.turn.rearguard) == 2
    standoff.play("axis")
    allied = standoff.allied.seat()
    assert session.legal_orders(allied) == ["no probe Sollum", "probe Sollum"]
    with pytest.raises(IllegalAction, match="RB 10.5"):  # no Pursuit Fire against a Partial Retreat
        session.add_orders(allied, ["pursue Sollum with 7/7 Tk"])
    standoff.play("allied", "probe Sollum")
    # Step 2, reversed roles (RB 10.41): the Rearguard fires Defensive Fire first.
    axis = standoff.axis.seat()
    assert axis.replay.pending().kind == "defensive-fire" and axis.replay.pending().role == "axis"
    assert "Probe Combat" in axis.replay.pending().prompt
    assert "fire Sollum: Brescia at armor, Savona at armor" in session.legal_orders(axis)  # or one unit (RB 9.2)
    standoff.play("axis", "fire Sollum: Brescia at armor, Savona at armor")
    # Every die misses: then the Probing unit returns Offensive Fire.
    allied = standoff.allied.seat()
    draft, _ = session.draft_replay(allied)
    assert draft.pending().kind == "offensive-fire" and draft.pending().role == "allied"
    standoff.play("allied", "fire Sollum: 7/7 Tk at infantry")
    # The Rearguard survives (the Axis rolls the dice with its next event):
    # Trento leaves unpursued, Disrupted (RB 10.41).
    axis = standoff.axis.seat()
    draft, _ = session.draft_replay(axis)
    state = draft.state
    trento = next(b for b in state.position.blocks_of("axis") if b.hex == capuzzo and b.disrupted)
    assert state.versions.get(trento.token, 0) == 0
    assert len(state.position.blocks_in(sollum, "axis")) == 2
    assert state.turn.partial == (sollum,) and not state.turn.probing
    # RB 10.4 (CB-03): no combat in that battle this Player-Turn.
    assert draft.pending().kind == "battles"
    assert session.legal_orders(axis) == ["battles none"]
    with pytest.raises(IllegalAction, match="RB 10.4"):
        session.add_orders(axis, ["battles Sollum"])


def test_rb_10_41_probe_declined_the_disengaging_units_take_no_pursuit_fire(standoff):
    m = game_map()
    _allied_pass(standoff)
    standoff.play("axis", "supply check", "basic", "group Sollum -> Ft Capuzzo Trento", "end movement")
    FACE["die"] = 6
    standoff.play("allied", "no probe Sollum")
    state = standoff.axis.seat().replay.state
    trento = next(b for b in state.position.blocks_of("axis") if b.hex == m.resolve("Ft Capuzzo") and b.disrupted)
    assert state.versions.get(trento.token, 0) == 0 and state.last_rolls != (6, 6)
    assert state.turn.step == "battles" and state.turn.partial == (m.resolve("Sollum"),)


def test_rb_10_41_rearguard_eliminated_unfired_probers_pursue_the_disengaging_units(standoff):
    m = game_map()
    sollum, capuzzo = m.resolve("Sollum"), m.resolve("Ft Capuzzo")
    # The Allies reinforce the battle with the 7/4 Armd (no combat this turn).
    standoff.play("allied", "supply check", "basic", "group Buq Buq -> Sollum 7/4 Armd", "end movement",
                  "reveal units", "battles none", "supply check", "reveal option")
    # Brescia alone is the Rearguard; Trento and Savona Disengage.
    standoff.play("axis", "supply check", "basic", "group Sollum -> Ft Capuzzo Trento, Savona", "end movement")
    standoff.play("allied", "probe Sollum")
    standoff.play("axis", "fire Sollum: Brescia at armor")
    allied = standoff.allied.seat()  # its dice (rolled with the Allies' event) all miss
    assert "fire Sollum: 7/4 Armd at infantry, 7/7 Tk at infantry" in session.legal_orders(allied)
    session.add_orders(allied, ["fire Sollum: 7/4 Armd at infantry, 7/7 Tk at infantry"])
    FACE["die"] = 6  # the Probing units' dice, rolled with the Axis's answer, all hit
    standoff.play("allied")
    standoff.play("axis", "losses Sollum auto")
    # The 7/4 Armd's six hits eliminate Brescia: the 7/7 Tk never fired. A Full Retreat now.
    axis = standoff.axis.seat()
    state = axis.replay.state
    assert not [b for b in state.position.blocks_in(sollum, "axis") if b.unit == "Brescia"]
    assert axis.replay.pending().kind == "retreat-slowest"
    assert session.legal_orders(axis) == ["retreat Sollum slowest 1"]
    standoff.play("axis", "retreat Sollum slowest 1")
    allied = standoff.allied.seat()
    orders = session.legal_orders(allied)
    assert "pursue Sollum with 7/7 Tk" in orders and not any("7/4 Armd" in o for o in orders)
    with pytest.raises(IllegalAction, match="RB 10.5"):  # the Armd fired in the Probe
        session.add_orders(allied, ["pursue Sollum with 7/4 Armd"])
    standoff.play("allied", "pursue Sollum with 7/7 Tk")
    draft, _ = session.draft_replay(standoff.axis.seat())
    assert draft.state.turn.hits == 2 and draft.pending().kind == "retreat-losses"
    standoff.play("axis", "pursuit losses auto")
    state = standoff.allied.seat().replay.state
    assert not state.position.blocks_in(sollum, "axis") and state.position.battle(sollum) is None
    survivors = [b for b in state.position.blocks_of("axis") if b.hex == capuzzo and b.disrupted]
    assert survivors and all(state.versions.get(b.token, 0) == 1 for b in survivors)


def test_rb_10_5_a_lie_about_the_slowest_retreating_speed_is_caught(standoff, monkeypatch):
    """The 7/7 Tk was revealed in the battle: the Axis knows its speed (3)
    and refuses the claim of 4 at once."""
    with monkeypatch.context() as cheat:  # the Allied client skips its own check
        cheat.setattr(routs, "check_slowest_speed", lambda *args: routs.PursuitCheck())
        lie = send_orders(standoff, "allied", "supply check", "basic", "group Sollum -> Sidi Barrani 7/7 Tk",
                    "end movement", "retreat Sollum slowest 4")
        events = standoff.allied.gd.read_events()
    with pytest.raises(IllegalAction) as err:
        standoff.deliver(standoff.axis, lie)
    text = str(err.value) + " ".join(getattr(err.value, "details", []) or [])
    assert "RB 10.5" in text and "7/7 Tk" in text
    with pytest.raises(IllegalAction) as err:
        session.audit(events, RITD)
    text = str(err.value) + " ".join(getattr(err.value, "details", []) or [])
    assert re.search(r"event \d+ by allied", text) and "retreat Sollum slowest 4" in text


def test_rb_10_5_a_forged_retreat_loss_allocation_is_caught_when_opened_and_at_the_audit(standoff, monkeypatch):
    standoff.play("allied", "supply check", "basic", "group Sollum -> Sidi Barrani 7/7 Tk", "end movement",
                  "retreat Sollum slowest 3")
    FACE["die"] = 6
    standoff.play("axis", "pursue Sollum with Trento")
    with monkeypatch.context() as cheat:  # two hits, but the 7/7 Tk keeps its CV
        cheat.setattr(step_losses, "loss_problems", lambda *args: [])
        forged = send_orders(standoff, "allied", "pursuit losses 7/7 Tk 0")
    standoff.deliver(standoff.axis, forged)  # the new identity is secret: the Axis cannot tell yet
    assert "losses" in {o.kind for o in standoff.axis.seat().replay.state.obligations}
    with monkeypatch.context() as cheat:  # the new version is opened in the Allies' next event
        cheat.setattr(step_losses, "loss_problems", lambda *args: [])
        data = send_orders(standoff, "allied", "supply check", "reveal option", open_all=True)
        events = standoff.allied.gd.read_events()
    with pytest.raises(IllegalAction, match="Pursuit losses placed in event"):
        standoff.deliver(standoff.axis, data)
    with pytest.raises(IllegalAction) as err:
        session.audit(events, RITD)
    text = str(err.value) + " ".join(getattr(err.value, "details", []) or [])
    assert "by allied" in text and "pursuit losses in Sollum" in text and "RB 9.5" in text


def test_rb_10_41_a_rearguard_that_arrived_this_turn_is_revealed_for_the_probe(standoff):
    m = game_map()
    _allied_pass(standoff)
    # Offensive Turn: Pavia joins the battle, then the three original units leave.
    standoff.play("axis", "supply check", "offensive", "group Ft Capuzzo -> Sollum Pavia",
                  "group Sollum -> Ft Capuzzo Savona, Brescia, Trento", "end movement")
    allied = standoff.allied.seat()
    pavia = next(b for b in allied.replay.state.position.blocks_in(m.resolve("Sollum"), "axis")
                 if not allied.replay.state.turn.movement.has_disengaged(b.token))
    assert allied.replay.state.turn.rearguard == (pavia.token,) and pavia.unit == ""
    standoff.play("allied", "probe Sollum")
    axis = standoff.axis.seat()
    assert axis.replay.pending().kind == "probe-reveal"
    assert session.legal_orders(axis) == ["reveal units"]
    with pytest.raises(IllegalAction, match="RB 10.41"):  # a Probe is not fought without its Rearguard shown
        session.add_orders(axis, ["probe Sollum"])
    standoff.play("axis", "reveal units")
    # The Allies now see Pavia (RB 8.5); the Rearguard fires first.
    state = standoff.allied.seat().replay.state
    assert state.position.block(pavia.token).unit == "Pavia" and pavia.token in state.disclosed
    assert standoff.axis.seat().replay.pending().kind == "defensive-fire"


def test_rb_6_4_a_retreating_units_forced_march_is_rolled_after_its_retreat(standoff):
    """T-35: the Forced March continues the Move the Retreat completes, so its
    die is rolled after the Pursuit; the unit ends one hex further on."""
    m = game_map()
    standoff.play("allied", "supply check", "basic", "group Sollum -> Sidi Barrani 7/7 Tk",
                  "forced-march 7/7 Tk -> Mersa Matruh W1", "end movement", "retreat Sollum slowest 3")
    FACE["die"] = 6  # the Forced March succeeds
    standoff.play("axis", "pursue Sollum with none")
    # The Axis ended the Retreat: the Allies' next event rolls the Forced March die.
    assert standoff.allied.seat().replay.pending().kind == "dice"
    draft, _ = session.draft_replay(standoff.allied.seat())
    state = draft.state
    tk = block_of(state, "allied", "7/7 Tk")
    assert tk.hex == m.resolve("Mersa Matruh W1") and tk.disrupted
    assert state.turn.movement.marches == () and state.turn.step not in ("forced-march", "retreat-slowest")
    arrow = next(x for x in state.last_moves if x.token == tk.token)
    assert arrow.path[0] == m.resolve("Sollum") and arrow.path[-1] == tk.hex and arrow.forced


def test_the_retreat_steps_offer_secret_free_legal_actions(standoff):
    """Bots that choose among ``legal_actions`` never stall on a Retreat."""
    standoff.play("allied", "supply check", "basic", "group Sollum -> Sidi Barrani 7/7 Tk", "end movement")
    allied = standoff.allied.seat()
    actions = ritd.legal_actions(allied.replay.state, "allied", allied.replay.ctx("allied"))
    assert [ritd.format_action(a) for a in actions] == ["retreat Sollum slowest 3"]
    standoff.play("allied", "retreat Sollum slowest 3")
    axis = standoff.axis.seat()
    actions = ritd.legal_actions(axis.replay.state, "axis", axis.replay.ctx("axis"))
    assert [ritd.format_action(a) for a in actions] == ["pursue Sollum with none"]


def test_rb_10_41_a_rout_during_the_probe_is_not_pursued_by_the_disengaging_units(standoff, monkeypatch):
    """The Probing 7/7 Tk is wiped out by the Rearguard's fire; the Disrupted
    7/4 Armd it shielded Routs at once (T-11). Trento, Disengaging, may not
    Pursue the Rout (T-37)."""
    m = game_map()
    sollum = m.resolve("Sollum")
    armd = block_of(standoff.allied.seat().replay.state, "allied", "7/4 Armd").token
    real = next_retreat

    def with_armd(state, turn):  # the 7/4 Armd, Disrupted, beside the 7/7 Tk (in every replay)
        pos = state.position
        moved = msgspec.structs.replace(pos.block(armd), hex=sollum, disrupted=True)
        return real(msgspec.structs.replace(state, position=pos.replace_blocks([moved])), turn)

    monkeypatch.setattr(sequence, "next_retreat", with_armd)
    _allied_pass(standoff)
    standoff.play("axis", "supply check", "basic", "group Sollum -> Ft Capuzzo Trento", "end movement")
    standoff.play("allied", "probe Sollum")
    FACE["die"] = 6
    standoff.play("axis", "fire Sollum: Brescia at armor, Savona at armor")
    standoff.play("allied", "losses Sollum auto")  # the 7/7 Tk is eliminated
    allied = standoff.allied.seat()
    assert allied.replay.pending().kind == "rout-slowest"
    standoff.play("allied", "rout Sollum slowest 3")
    axis = standoff.axis.seat()
    assert axis.replay.pending().kind == "rout-pursuit" and axis.replay.state.turn.probing
    # Savona is too slow (speed 1 against 3); fast Trento is leaving, not fighting.
    assert session.legal_orders(axis) == ["pursue Sollum with none"]
    with pytest.raises(IllegalAction, match="RB 10.5"):
        session.add_orders(axis, ["pursue Sollum with Trento"])


def test_rb_10_41_a_rearguard_defending_a_fortress_keeps_its_double_dice_in_the_probe():
    """The game's Probe round (sidebar "Reversed Roles in Probe Combat"): the
    Rearguard, the battle's Defender in Bardia, fires first with Fortress
    dice x2 (not armor); the Probing attackers never have them."""
    from rules.ritd.position import Battle, Block, Position
    from rules.ritd.turn import Turn

    bardia = game_map().resolve("Bardia")
    pos = Position(blocks=(Block(token="A1", side="axis", hex=bardia, unit="Savona", cv=4),
                           Block(token="L1", side="allied", hex=bardia, unit="7/7 Tk", cv=4)),
                   battles=(Battle(hex=bardia, attacker="allied"),))
    state = ritd.State(scenario="demo", month=1, phase="turn", side="axis", position=pos)
    turn = Turn(number=3, active="axis", step="defensive-fire", battles=(bardia,), probing=True,
                retreating=bardia, retreaters=("A2",), rearguard=("A1",))
    rnd = combat_round(state, turn)
    assert rnd.probe and rnd.fortress and rnd.defensive_side == "axis"
    assert cr.dice_multiplier(pos, rnd, "axis", "infantry") == 2
    assert cr.dice_multiplier(pos, rnd, "allied", "armor") == 1
    # Not a Probe: the same Defender firing in the active player's own Combat Round has no benefit.
    own = msgspec.structs.replace(turn, probing=False)
    assert cr.dice_multiplier(pos, combat_round(state, own), "axis", "infantry") == 1
