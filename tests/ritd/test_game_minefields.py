"""Minefields through the engine (RB 14.0-14.2, 16.55; rules.ritd.mines,
decisions T-30..T-33): built in secret as Merkle sets, opened hex by hex
when enemy units enter, double defence when revealed and defended, and the
cheats the openings and the audit catch."""

from __future__ import annotations

import msgspec
import pytest

from pbem import codec, session
from pbem.errors import IllegalAction, VerifyError
from rules.ritd import RULES as RITD
from rules.ritd import game as ritd
from rules.ritd import mines
from rules.ritd.combat_state import combat_round
from rules.ritd.state import all_scenarios, game_map
from rules.ritd.view import MineView
from tests.ritd.ritd_table import new_game

pytestmark = pytest.mark.usefixtures("registered_ritd")


def _state(side):
    return side.seat().replay.state


@pytest.fixture
def gazala(tmp_path):
    """RB 18.7: Gazala's pre-game Buildup, 30 BP each, the Allies first; the
    Axis deployed at Segnali Rotunda, the Allied line units at Bir Hacheim,
    the rest at Alexandria. Bir Hacheim's Supply Line runs along the track
    through Sidi Mufta to the highway at Acroma and on to Alexandria: Sidi
    Mufta (two hexes from the Axis) and Acroma are in the Allied Supply
    Network (RB 12.6) and unengaged."""
    return _gazala(tmp_path)


def _gazala(tmp_path):
    sc = all_scenarios()
    s = sc.get("gazala")
    roster = sc.roster
    axis_setup = [f"deploy {u.name} at Segnali Rotunda" for u in sc.starting_units(s, "axis")] + ["end deployment"]
    allied_setup = [f"deploy {u.name} at {'Bir Hacheim' if g.id == 'line' else 'Alexandria'}"
                    for g in s.allied.setup for u in g.select(roster, "allied")] + ["end deployment"]
    return new_game(tmp_path, "gazala", axis_setup, allied_setup, keep_hands=False)


def _at(name):
    return game_map().resolve(name)


def _first_axis_turn(table):
    table.play("axis", "end buildup")
    table.keep_hands()
    assert _state(table.axis).turn.active == "axis"


def test_rb_16_55_a_minefield_is_built_in_secret_for_15_bp(gazala):
    gazala.play("allied", "minefield Sidi Mufta", "end buildup")
    allied, axis = _state(gazala.allied), _state(gazala.axis)
    # RB 16.5 sidebar: the BP spent and the count are public, the location is not.
    assert allied.ledgers["allied"].available == axis.ledgers["allied"].available == 15
    assert allied.minefields["allied"].count == axis.minefields["allied"].count == 1
    assert allied.minefields["allied"].known == (_at("Sidi Mufta"),)
    assert axis.minefields["allied"].known == ()
    log = [i.actions for i in gazala.axis.seat().replay.history][-1]
    assert "build a hidden Minefield (15 BP)" in log and not any("Sidi Mufta" in a for a in log)


@pytest.mark.parametrize("order, rule, message", [
    ("minefield Siwa", "RB 16.55", "outside the allied Supply Network"),
    ("minefield Segnali Rotunda", "RB 16.55", "engaged"),
    ("minefield Sidi Mufta dismantle Gazala, Tobruk", "RB 16.55", "a free Minefield dismantles two; the allied player has 0"),
])
def test_rb_16_55_illegal_constructions_are_refused_with_the_rule(gazala, order, rule, message):
    with pytest.raises(IllegalAction) as err:
        session.add_orders(gazala.allied.seat(), [order])
    assert any(rule in d and message in d for d in err.value.details), err.value.details


def test_rb_16_55_two_minefields_cost_30_bp_and_a_third_needs_savings(gazala):
    session.add_orders(gazala.allied.seat(), ["minefield Sidi Mufta", "minefield Acroma"])
    with pytest.raises(IllegalAction) as err:
        session.add_orders(gazala.allied.seat(), ["minefield Tobruk"])
    assert "RB 16.5: a Minefield costs 15 BP; 0 BP left" in " ".join(err.value.details)


def test_rb_14_2_entered_minefield_is_revealed_at_the_end_of_the_movement_phase(gazala):
    gazala.play("allied", "minefield Sidi Mufta", "end buildup")
    _first_axis_turn(gazala)
    unit = next(b.unit for b in _state(gazala.axis).position.blocks_of("axis") if b.unit.startswith("15Pz"))
    gazala.play("axis", "supply check", "basic", f"group Segnali Rotunda -> Sidi Mufta {unit}", "end movement")
    # The Allies owe the opening of Sidi Mufta (and of the hexes the Axis now holds).
    decision = gazala.pending()
    assert decision.role == "allied" and decision.kind == "mines-passive"
    due = _state(gazala.allied).minefields["allied"].due
    assert _at("Sidi Mufta") in due
    gazala.play("allied", "open minefields")
    for side in (gazala.axis, gazala.allied):
        mf = _state(side).minefields["allied"]
        assert _at("Sidi Mufta") in mf.shown and _at("Sidi Mufta") in mf.known
        assert mf.due == () and set(due) <= set(mf.opened)
    # Only the hexes entered were opened: Acroma (no enemy there) stays secret.
    axis_replay = gazala.axis.seat().replay
    label = mines.set_label("allied", 1)
    assert axis_replay.leaf(label, _at("Sidi Mufta")) == b"1"
    assert axis_replay.leaf(label, _at("Acroma")) is None


def test_rb_14_2_a_hex_with_no_minefield_is_proved_empty(gazala):
    gazala.play("allied", "minefield Acroma", "end buildup")
    _first_axis_turn(gazala)
    unit = next(b.unit for b in _state(gazala.axis).position.blocks_of("axis") if b.unit.startswith("15Pz"))
    gazala.play("axis", "supply check", "basic", f"group Segnali Rotunda -> Sidi Mufta {unit}", "end movement")
    gazala.play("allied", "open minefields")
    mf = _state(gazala.axis).minefields["allied"]
    assert _at("Sidi Mufta") in mf.opened and mf.shown == ()
    assert gazala.axis.seat().replay.leaf(mines.set_label("allied", 1), _at("Sidi Mufta")) == mines.NONE


def _opening_event(table, **leaf_change):
    """The Allied reply that opens its due hexes, with one leaf forged."""
    seat = table.allied.seat()
    order = ritd.parse_order(seat.replay.state, "allied", "open minefields", seat.replay.ctx("allied"))
    draft = session.DraftOrder(text="open minefields", action=codec.raw(order.action),
                               leaves=[tuple(x) for x in order.open_leaves])
    body = session._body(seat.replay, "allied", seat.vault, [draft], x_next=bytes(32))
    leaves = [msgspec.structs.replace(x, **leaf_change) if x.key == _at("Sidi Mufta") else x for x in body.leaves]
    body = msgspec.structs.replace(body, leaves=leaves)
    return session._sign(seat.identity, body), body


def test_cheat_deny_a_minefield_in_a_hex_the_enemy_entered(gazala):
    """Issue 7 cheat: the Allies claim 'no Minefield' where they built one."""
    gazala.play("allied", "minefield Sidi Mufta", "end buildup")
    _first_axis_turn(gazala)
    unit = next(b.unit for b in _state(gazala.axis).position.blocks_of("axis") if b.unit.startswith("15Pz"))
    gazala.play("axis", "supply check", "basic", f"group Segnali Rotunda -> Sidi Mufta {unit}", "end movement")
    forged, _ = _opening_event(gazala, value=mines.NONE.hex())
    with pytest.raises(VerifyError, match="proof does not match the set's root"):
        gazala.axis.seat().replay.clone().apply_stored(forged)
    # Leaving the hex unopened is refused too (RB 14.2), naming the hexes.
    seat = gazala.allied.seat()
    order = ritd.parse_order(seat.replay.state, "allied", "open minefields", seat.replay.ctx("allied"))
    body = session._body(seat.replay, "allied", seat.vault,
                         [session.DraftOrder(text="x", action=codec.raw(order.action))], x_next=bytes(32))
    with pytest.raises(IllegalAction, match="RB 14.2") as err:
        gazala.axis.seat().replay.clone().apply_stored(session._sign(seat.identity, body))
    assert "Sidi Mufta" in " ".join(err.value.details)


def _forged_set(gazala, mined: dict[str, int]):
    """An Allied 'minefield Sidi Mufta' order whose committed set really holds
    the Minefields ``mined`` (place -> building set): a modified client."""
    from pbem.commit import encode_leaves
    seat = gazala.allied.seat()
    label = mines.set_label("allied", 1)
    leaves = mines.leaves(game_map(), {_at(place): n for place, n in mined.items()})
    order = ritd.parse_order(seat.replay.state, "allied", "minefield Sidi Mufta", seat.replay.ctx("allied"))
    secret = session.Secret(value=encode_leaves(leaves).hex(), salt=bytes(range(32)).hex(), kind="set")
    return seat, session.DraftOrder(text="minefield", action=codec.raw(order.action), secrets={label: secret})


def _audit(events, known):
    from pbem.game import AUDIT, Replay
    r = Replay(RITD, role=AUDIT, known=known)
    for stored in events:
        r.apply_stored(stored)
    return r


@pytest.mark.parametrize("mined, message", [
    ({"Siwa": 1}, "Siwa is outside the allied Supply Network"),  # built where it may not be
    ({"Sidi Mufta": 1, "Acroma": 1}, "must add exactly one Minefield, not 2"),  # one never paid for
])
def test_cheat_minefields_built_illegally_are_caught_by_the_audit(gazala, mined, message):
    """Issue 7 cheats: the set behind 'minefield Sidi Mufta' holds a
    Minefield outside the Supply Network, or one more than was built. The
    builder's own client refuses the order; a modified client's event passes
    the opponent (it sees only the root) and the audit, with the set opened,
    names the event, its signer and the rule."""
    seat, draft = _forged_set(gazala, mined)
    data = session._with_secrets(seat.vault, [draft])
    with pytest.raises(IllegalAction, match="RB 16.55") as err:
        session.simulate_draft(seat.replay, "allied", data, [draft], None)
    assert message in " ".join(err.value.details)
    body = session._body(seat.replay, "allied", data, [draft], x_next=bytes(32))
    stored = session._sign(seat.identity, body)
    gazala.axis.seat().replay.clone().apply_stored(stored)  # the Axis cannot tell
    events = [*gazala.allied.gd.read_events(), stored]
    with pytest.raises(IllegalAction, match=f"event {body.seq} by allied") as err:
        _audit(events, data.known_values())
    assert any("RB 16.55" in d and message in d for d in err.value.details)


def test_cheat_reveal_a_minefield_that_was_never_built_is_caught_when_opened(gazala):
    """Issue 7 cheats at the leaf opening: a Minefield outside the Supply
    Network where it was built, one claiming a construction that never
    happened, and a revealed one that vanished."""
    build = mines.MineBuild(side="allied", number=1, month=14, free=False,
                            network=_state(gazala.axis).networks["allied"], engaged=())
    bad = mines.check_leaf(game_map(), "allied", _at("Siwa"), b"1", 1, [build], (), ())
    assert [p.rule for p in bad] == ["RB 16.55"] and "outside the allied Supply Network" in bad[0].message
    never = mines.check_leaf(game_map(), "allied", _at("Gazala"), b"2", 1, [build], (), ())
    assert "claims set 2, which never built one" in never[0].message
    vanished = mines.check_leaf(game_map(), "allied", _at("Tobruk"), mines.NONE, 1, [build], (), (_at("Tobruk"),))
    assert vanished[0].rule == "RB 14.2" and "never publicly dismantled" in vanished[0].message


def test_rb_16_55_the_audit_reads_every_construction_from_the_sets(gazala):
    gazala.play("allied", "minefield Sidi Mufta", "minefield Acroma", "end buildup")
    _first_axis_turn(gazala)
    audit = _audit(gazala.allied.gd.read_events(), gazala.allied.seat().vault.known_values())
    assert audit.leaf(mines.set_label("allied", 2), _at("Acroma")) == b"2"
    assert audit.leaf(mines.set_label("allied", 2), _at("Sidi Mufta")) == b"1"
    assert audit.state.minefields["allied"].known == tuple(sorted((_at("Acroma"), _at("Sidi Mufta"))))


def test_rb_14_2_whole_set_history_checks():
    m = game_map()
    build = mines.MineBuild(side="axis", number=2, month=5, free=True, network=(_at("Gazala"), _at("Tobruk"),
                            _at("Acroma")), engaged=(), shown=(_at("Gazala"),), dismantled_shown=(_at("Gazala"),))
    before = {_at("Gazala"): 1, _at("Acroma"): 1}
    assert mines.check_set(m, build, before, {_at("Tobruk"): 2}) == []
    # a free one that keeps a Minefield it claims to have dismantled
    kept = mines.check_set(m, build, before, {_at("Tobruk"): 2, _at("Gazala"): 1})
    assert any("announced dismantled" in p.message for p in kept)
    # two new Minefields for one construction
    two = mines.check_set(m, build, before, {_at("Tobruk"): 2, _at("Derna"): 2})
    assert any("exactly one" in p.message for p in two)


def test_rb_14_0_a_revealed_minefield_gives_its_defender_double_defence():
    """RB 14.0, 14.2, 9.52: impartial; Crusader's Tobruk Minefield (RB 18.4 rule 2)
    is public from the start, so a Combat Round in Tobruk is a Minefield round."""
    state = ritd.initial_state("crusader", ())
    tobruk = _at("Tobruk")
    assert state.minefields["allied"].shown == (tobruk,) and state.minefields["allied"].count == 1
    from rules.ritd.turn import Turn
    turn = Turn(number=1, active="axis", battles=(tobruk,))
    assert combat_round(state, turn).minefield
    assert not combat_round(state, Turn(number=1, active="axis", battles=(_at("Gazala"),))).minefield


def test_leak_the_axis_report_and_map_are_the_same_wherever_the_hidden_minefield_is(tmp_path):
    """Issue 7 leak test for Minefields: two games that differ only in where
    the Allies built theirs; the Axis's report (HTML and text, with the map)
    is byte-identical once the random game id and tokens are normalised,
    while the Allied reports name the place."""
    from pbem import report
    from tests.test_report import normalise

    outputs = []
    for i, place in enumerate(("Sidi Mufta", "Acroma")):
        table = _gazala(tmp_path / f"v{i}")
        table.play("allied", f"minefield {place}", "end buildup")
        _first_axis_turn(table)
        replay = table.axis.seat().replay
        axis = tuple(normalise(report.render(report.build(replay, "axis"), f), replay.game_hex)
                     for f in ("html", "text"))
        own = report.render(report.build(table.allied.seat().replay, "allied"), "text")
        assert f"Yours: 1: {place} (hidden)" in own
        assert "Allied: 1; none revealed" in axis[1] and place not in axis[1].split("MINEFIELDS (RB 14)")[1].split("\n\n")[0]
        outputs.append(axis)
    assert outputs[0] == outputs[1]


def test_the_report_shows_a_revealed_enemy_minefield(gazala):
    from pbem import report
    gazala.play("allied", "minefield Sidi Mufta", "end buildup")
    _first_axis_turn(gazala)
    unit = next(b.unit for b in _state(gazala.axis).position.blocks_of("axis") if b.unit.startswith("15Pz"))
    gazala.play("axis", "supply check", "basic", f"group Segnali Rotunda -> Sidi Mufta {unit}", "end movement")
    gazala.play("allied", "open minefields")
    text = report.render(report.build(gazala.axis.seat().replay, "axis"), "text")
    assert "Allied: 1; revealed: Sidi Mufta" in text
    view = ritd.view(_state(gazala.axis), "axis")
    assert view.mines == [MineView(hex=_at("Sidi Mufta"), where="Sidi Mufta", side="allied", revealed=True)]


def test_rb_16_55_every_unengaged_hex_of_the_network_is_offered(gazala):
    """RB 16.55: "players may spend 15 BPs to build a hidden Minefield in any
    hex within the friendly Supply Network (not in battle hexes)": the
    listing offers every such hex, with or without a unit in it (version 4
    offered only hexes under the builder's own units)."""
    seat = gazala.allied.seat()
    state = seat.replay.state
    legal = ritd.legal_orders(state, "allied", seat.replay.ctx("allied"))
    offered = {o.removeprefix("minefield ") for o in legal if o.startswith("minefield ") and " dismantle " not in o}
    network = {game_map().name(h) for h in state.networks["allied"]}
    assert offered == network
    assert {"Sidi Mufta", "Acroma", "Bir Hacheim", "Alexandria"} <= offered
    assert "Segnali Rotunda" not in offered and "Siwa" not in offered
