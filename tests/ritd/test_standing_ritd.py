"""Standing orders (issue 21 point 5; rules/ritd/standing.py, 'pbem standing'):
a routine choice the rules leave to a player (RB 9.5 "the owner" places the
hits; RB 10.5 Pursuit "may") settled in advance, so that pbem's automatic
answer gives it while the player is away. The order given is the step's
listed order, signed and sent as if typed; a step where it does not apply
waits for the player."""

from __future__ import annotations

import msgspec
import pytest
from click.testing import CliRunner

from pbem import session
from pbem.cli import cli
from rules.ritd import RULES as RITD
from rules.ritd.standing import SETTLES, STANDING
from rules.ritd.steps import PROMPTS
from tests.ritd.ritd_table import new_game
from tests.ritd.test_forced_ritd import _deliver, _send
from tests.ritd.test_game_combat import battle as battle  # noqa: F401  (fixture)
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")


def _set(side, *names: str) -> None:
    gd = side.gd
    gd.write_local(msgspec.structs.replace(gd.read_local(), standing=tuple(names)))


@pytest.fixture
def sollum(battle):
    """The Demo battle in Sollum (test_game_combat's fixture: every die a 6,
    both sides revealed), up to the Allies' Defensive Fire."""
    battle.play("axis", "battles Sollum")
    return battle


def test_rb_9_5_losses_auto_places_the_hits_in_the_automatic_answer(sollum):
    """The Axis' Offensive Fire in Sollum; the Allies' pbem answers the dice
    and, with 'losses-auto' set, places the hits as 'losses Sollum auto' in
    the same automatic answer: the Combat phase is over and the decision
    passes to the Axis (its Final Supply Check), so no Allied person is
    needed. RB 9.5: the owner places the hits; the listed 'auto' placement
    is one the owner may choose."""
    sollum.play("allied", "fire Sollum: 7/7 Tk at infantry")
    _set(sollum.allied, "losses-auto")
    before = sollum.allied.gd.event_count()
    results = _deliver(sollum, sollum.allied, _send(sollum, "axis", "losses Sollum: Brescia 2, Trento 2",
                                                    "fire Sollum: Brescia at armor, Savona at armor, Trento at armor"))
    assert results[0].auto_reply is not None
    said = "; ".join(results[0].auto_reply.said)
    assert said.startswith("the entropy for the dice; ") and "'losses Sollum auto' (your standing order)" in said
    answer = sollum.allied.seat().replay.history[before + 1]
    assert answer.author == "allied" and answer.actions[0] == "losses Sollum: 7/7 Tk 4", answer.actions
    # Both copies agree and the game went on without an Allied person.
    assert sollum.allied.seat().replay.head == sollum.axis.seat().replay.head
    assert sollum.axis.seat().replay.history[before + 1].actions == answer.actions


def test_a_standing_order_followed_by_a_persons_step_leaves_the_whole_event_to_the_person(sollum):
    """The Axis places the Defensive Fire hits and then orders its own
    Offensive Fire (a person's choice, RB 9.2): the decision stays with the
    Axis, so nothing is answered alone; the Axis sends the entropy, the
    losses and the fire in one event (fewer emails)."""
    _set(sollum.axis, "losses-auto")
    results = _deliver(sollum, sollum.axis, _send(sollum, "allied", "fire Sollum: 7/7 Tk at infantry"))
    assert results[0].auto_reply is None
    assert sollum.axis.seat().replay.pending().kind == "dice"


def test_without_a_standing_order_the_losses_wait_for_the_player(sollum):
    """The same Offensive Fire without 'losses-auto': the Allies' placement is
    a person's step, so the dice answer waits to travel with it; another
    standing order does not settle the step."""
    sollum.play("allied", "fire Sollum: 7/7 Tk at infantry")
    results = _deliver(sollum, sollum.allied, _send(sollum, "axis", "losses Sollum: Brescia 2, Trento 2",
                                                    "fire Sollum: Brescia at armor, Savona at armor, Trento at armor"))
    assert results[0].auto_reply is None
    allied = sollum.allied.seat()
    assert allied.replay.pending().kind == "dice"
    assert session.automatic_orders(allied.replay, "allied", allied.vault) is None
    assert session.automatic_orders(allied.replay, "allied", allied.vault, standing=frozenset({"pursue-all"})) is None
    assert session.automatic_orders(allied.replay, "allied", allied.vault,
                                    standing=frozenset({"losses-auto"})) is not None


def test_rb_10_5_pursue_all_answers_at_once_even_when_no_unit_is_able(tmp_path):
    """The Allies Refuse Battle in Sollum (RB 8.4, 10.2): no Axis unit there is
    fast enough to Pursue (RB 10.5), which only the Axis' hidden blocks show.
    Without a standing order the step waits for the Axis player (PLAN: answering
    at once would tell); with 'pursue-all' pbem answers 'pursue Sollum with
    none' at once, as it would answer 'with all', so the speed of the answer
    tells nothing."""
    demo = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    _deliver(demo, demo.allied, _send(demo, "axis", "supply check", "basic",
                                      "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento", "end movement"))
    _set(demo.axis, "pursue-all")
    before = demo.axis.gd.event_count()
    results = _deliver(demo, demo.axis, _send(demo, "allied", "refuse-battle Sollum slowest 3"))
    assert results[0].auto_reply is not None
    assert results[0].auto_reply.said == ["'pursue Sollum with none' (your standing order)"]
    answer = demo.axis.seat().replay.history[before + 1]
    assert answer.author == "axis" and answer.actions == ("pursue Sollum with none",)
    assert demo.allied.seat().replay.pending().kind == "refuse-withdraw"


def test_pbem_standing_sets_shows_and_clears_and_refuses_an_unknown_name(sollum):
    game = str(sollum.axis.gd.path)
    run = CliRunner().invoke
    out = run(cli, ["standing", "--game", game])
    assert out.exit_code == 0 and "off  losses-auto" in out.output and "RB 9.5" in out.output
    out = run(cli, ["standing", "losses-auto", "pursue-all", "--game", game])
    assert out.exit_code == 0 and "on   losses-auto" in out.output and "on   pursue-all" in out.output
    assert sollum.axis.gd.read_local().standing == ("losses-auto", "pursue-all")
    out = run(cli, ["standing", "--off", "pursue-all", "--game", game])
    assert sollum.axis.gd.read_local().standing == ("losses-auto",)
    out = run(cli, ["standing", "retreat-always", "--game", game])
    assert out.exit_code == 2 and "no standing order 'retreat-always'" in out.output and "losses-auto" in out.output
    assert sollum.axis.gd.read_local().standing == ("losses-auto",)
    out = run(cli, ["standing", "--clear", "--game", game])
    assert out.exit_code == 0 and sollum.axis.gd.read_local().standing == ()


def test_every_settled_step_is_a_step_of_the_sequence_and_every_order_is_offered():
    assert set(SETTLES.values()) == set(STANDING) == set(RITD.standing_orders())
    for kind in SETTLES:
        assert kind in PROMPTS, kind
    for words in STANDING.values():
        assert "RB " in words


def test_a_lost_turn_file_of_a_standing_answer_is_written_again_by_the_next_receive(sollum):
    """A 'pbem receive' that stored its automatic answer (entropy and a standing
    order) but died before writing its turn file: the next receive of the same
    file recognises the stored event as the answer ``automatic_orders`` composes
    from the log with the player's standing orders, and writes that event's own
    signed bytes, never a second signature (as for forced steps)."""
    sollum.play("allied", "fire Sollum: 7/7 Tk at infantry")
    _set(sollum.allied, "losses-auto")
    data = _send(sollum, "axis", "losses Sollum: Brescia 2, Trento 2",
                 "fire Sollum: Brescia at armor, Savona at armor, Trento at armor")
    result = session.receive(sollum.allied.seat(), [("turn", data)], forced=True)
    assert result.auto_reply is not None and "your standing order" in "; ".join(result.auto_reply.said)
    turn = result.auto_reply.turn_file
    seq = result.auto_reply.seqs[-1]
    stored = sollum.allied.gd.read_event(seq)
    turn.unlink()  # the crash: the event is stored, its turn file never written
    again = session.receive(sollum.allied.seat(), [("turn", data)], forced=True)
    assert again.auto_reply is not None and again.auto_reply.turn_file == turn
    assert session.parse_turn(turn.read_bytes()).events == [stored]
    assert sollum.allied.gd.event_count() == seq + 1 and sollum.allied.gd.read_event(seq) == stored
