"""A familiar order that is not legal now says why, with its rule (issue 21
point 7): 'pbem do' passes the rules' reason through (rules/ritd/not_now.py,
and the rules' check when the engine would refuse first), and 'pbem options'
ends with "not now" lines."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from pbem import session
from pbem.cli import cli
from pbem.errors import IllegalAction
from tests.conftest import PASSPHRASE
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")


@pytest.fixture
def refusing(tmp_path):
    """The 19.0 Demo with the Allies to accept or refuse battle in Sollum (RB 8.4)."""
    demo = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    demo.play("axis", "supply check", "basic", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento",
              "end movement")
    return demo


def _refusal(side, text: str) -> str:
    with pytest.raises(IllegalAction) as err:
        session.add_orders(side.seat(), [text])
    return str(err.value)


@pytest.mark.parametrize(("text", "rule", "words"), [
    ("keep hand", "RB 18.0", "after both deployments"),
    ("challenge", "RB 3.3", "Initiative"),
    ("end buildup", "RB 16.0", "Buildup"),
    ("rebuild 21Pz", "RB 16.0", "Buildup"),
    ("no blitz", "RB 3.45, 4.4", "after the first Combat phase"),
    ("blitz", "RB 3.45, 4.4", "before its Final Supply Check"),
    ("forced march Sollum", "RB 5.0, 6.4", "Movement phase"),
    ("early arrival", "RB 16.0", "Buildup"),
])
def test_an_order_of_another_step_says_when_it_is_given_with_its_rule(refusing, text, rule, words):
    message = _refusal(refusing.allied, text)
    assert f"'{text}': {rule}: " in message and words in message, message
    assert "now: accept or Refuse Battle" in message


@pytest.mark.parametrize(("text", "rule"), [("reveal option", "RB 3.48"), ("basic", "RB 3.42")])
def test_the_rules_reason_comes_before_the_engines_vault_or_label_refusal(refusing, text, rule):
    message = _refusal(refusing.allied, text)
    assert f"'{text}': {rule}:" in message, message
    assert "not in your vault" not in message and "already in use" not in message


def test_an_order_when_the_decision_is_the_opponents_says_to_wait_and_receive(refusing):
    message = _refusal(refusing.axis, "supply check")
    assert "allied decides (accept or Refuse Battle" in message and "wait for their turn file" in message


def test_options_ends_with_not_now_lines_each_with_its_rule(refusing, tmp_path, monkeypatch):
    monkeypatch.setenv("PBEM_PASSPHRASE", PASSPHRASE)
    out = CliRunner().invoke(cli, ["options", "-g", str(refusing.allied.gd.path), "-i",
                                   str(tmp_path / "allied.key")])
    assert out.exit_code == 0, out.output
    head, _, tail = out.output.partition("not now (each with its rule):")
    assert "refuse-battle Sollum" in head
    assert "  supply check: at the start (Initial) and the end (Final) of your Player-Turn (RB 12.7)" in tail
    assert "RB 12.7" in tail and "RB 16.0" in tail and "refuse-battle" not in tail


@pytest.mark.parametrize(("text", "short"), [
    ("blitz", "RB 3.42: 3 real cards played, but the hand holds 2 real cards"),
    ("blitz + 1 dummy", "RB 3.42: 4 cards played, but the hand holds 3"),
])
def test_blitz_at_the_option_step_says_the_blitz_turn_rule_and_when_blitz_is_ordered(tmp_path, text, short):
    """At the turn option (RB 3.42) 'blitz' plays 3 real cards for a Blitz Turn (RB 4.4);
    the Blitz phases themselves are ordered after the first Combat phase of a turn with
    3 or more cards (RB 3.45). A hand that cannot pay hears both, not only a card count."""
    demo = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    demo.play("axis", "supply check", "pass", "end movement", "supply check")
    demo.play("allied", "supply check")  # the Allied hand holds 2 real cards and 1 dummy
    message = _refusal(demo.allied, text)
    assert f"RB 4.4: a Blitz Turn is played with 3 real cards face down, which your hand cannot pay ({short})" \
        in message, message
    assert "the Blitz itself, 'blitz' or 'no blitz', is ordered after the first Combat phase of a Player-Turn " \
           "played with 3 or more cards (RB 3.45, 4.4)" in message, message
    # The hand pays for what it holds: the option step goes on.
    session.add_orders(demo.allied.seat(), ["offensive"])
