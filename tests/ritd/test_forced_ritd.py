"""Steps forced in the public view are taken by pbem's automatic answer
(issue 21 point 5; rules/ritd/forced.py, pbem.session.automatic_orders);
a step forced only by the mover's hidden blocks waits for the player (PLAN:
answering it at once would show the opponent what the blocks are)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem import session
from rules.ritd import RULES as RITD
from rules.ritd.forced import PUBLICLY_FORCED
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")


def _deliver(table, to, data: bytes, forced: bool = True) -> list[session.Received]:
    """``to`` receives ``data`` as 'pbem receive' does (forced steps taken); automatic
    answers go back and forth until one side has a decision to make."""
    results = []
    while True:
        result = session.receive(to.seat(), [("turn", data)], forced=forced)
        results.append(result)
        if result.auto_reply is None:
            return results
        data = Path(result.auto_reply.turn_file).read_bytes()
        to = table.other(to.role)


def _send(table, role, *orders) -> bytes:
    seat = table.side(role).seat()
    session.add_orders(seat, list(orders))
    return Path(session.send(seat).turn_file).read_bytes()


def test_a_hidden_blocks_only_pursuit_waits_and_the_final_supply_and_supply_revealed_go_at_once(tmp_path):
    demo = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    data = _send(demo, "axis", "supply check", "basic", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento",
                 "end movement")
    _deliver(demo, demo.allied, data)
    data = _send(demo, "allied", "refuse-battle Sollum slowest 3")
    _deliver(demo, demo.axis, data)
    axis = demo.axis.seat()
    # RB 10.5: no Axis unit in Sollum is fast enough, so only 'pursue ... with none' is
    # legal; but only the Axis' hidden blocks make it so: the step waits for the player.
    assert axis.replay.pending().kind == "refuse-pursuit"
    assert session.legal_orders(axis) == ["pursue Sollum with none"]
    assert session.automatic_orders(axis.replay, "axis", axis.vault) is None
    _deliver(demo, demo.allied, _send(demo, "axis", "pursue Sollum with none"))
    before = demo.axis.gd.event_count()
    results = _deliver(demo, demo.axis, _send(demo, "allied", "refuse-battle Sollum -> Sidi Barrani"))
    # The Axis' Final Supply Check (no Fortress choice) and Supply Revealed are forced in
    # the public view: pbem signed both in one automatic answer, and the Allies play on.
    assert results[0].auto_reply is not None
    answer = demo.axis.seat().replay.history[before + 1]
    assert answer.author == "axis" and answer.actions[:2] == ("supply check", "reveal option"), answer.actions
    allied = demo.allied.seat().replay
    assert allied.pending().role == "allied" and allied.state.turn.active == "allied"
    assert allied.seq == demo.axis.seat().replay.seq


def test_without_forced_the_receive_leaves_every_step_to_the_player(tmp_path):
    demo = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    _deliver(demo, demo.allied, _send(demo, "axis", "supply check", "basic",
                                      "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento", "end movement"))
    _deliver(demo, demo.axis, _send(demo, "allied", "refuse-battle Sollum slowest 3"))
    _deliver(demo, demo.allied, _send(demo, "axis", "pursue Sollum with none"))
    _deliver(demo, demo.axis, _send(demo, "allied", "refuse-battle Sollum -> Sidi Barrani"), forced=False)
    assert demo.axis.seat().replay.pending().kind == "final-supply"


def test_every_publicly_forced_step_names_an_order_and_a_rule_and_a_step_of_the_sequence():
    from rules.ritd.steps import PROMPTS, STAGE_PROMPTS

    for kind, (order, rule) in PUBLICLY_FORCED.items():
        assert kind in PROMPTS or kind in STAGE_PROMPTS, kind
        assert order in (PROMPTS.get(kind) or STAGE_PROMPTS[kind]), (kind, order)
        assert rule.startswith("RB ")
    # Steps whose one order depends on hidden blocks never qualify (PLAN "Settled").
    for kind in ("refuse-pursuit", "retreat-pursuit", "rout-pursuit", "refuse-losses", "retreat-losses",
                 "rout-losses", "offensive-losses", "defensive-losses", "retreat-slowest", "rout-slowest"):
        assert kind not in PUBLICLY_FORCED


def test_the_contract_default_takes_nothing(tmp_path):
    from pbem.rulesapi import Rules

    assert Rules.forced_order(RITD, None, "axis", None) is None
    from rules.ritd_v4 import RULES as V4

    assert type(V4).forced_order is Rules.forced_order  # the frozen version keeps the default
