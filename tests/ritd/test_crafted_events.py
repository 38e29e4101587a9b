"""Crafted signed events never crash the opponent's program (issue 27 point 5).

A patched client signs whatever it likes: an action naming a hex that is not
on the map ('Z99') in a Move, a combat loss placement, a Redeploy, a Sea
Redeploy or a Return for Refit; an action of another step of the Sequence of
Play; a mid-game event with another format version; an action the rules
module cannot judge at all. `pbem receive`, `pbem verify` and `pbem audit`
refuse each with exit 5 (never 1), naming the signer, the event, the action
and the rule, and the receiver's game directory is unchanged.

The crafted events are built the way the patched client would: the honest
orders of the turn composed by pbem, then the crafted action appended, the
whole signed with the player's own key (``session._body`` and ``_sign``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from pbem import codec, session
from pbem.cli import cli
from pbem.errors import IllegalAction
from pbem.turnfile import format_turn
from rules.ritd import buildup as bu
from rules.ritd import fire as fr
from rules.ritd import game as ritd
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd.state import all_scenarios, game_map
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied
from tests.test_foreign_game import tree_hash

pytestmark = pytest.mark.usefixtures("registered_ritd")

ILLEGAL = IllegalAction.exit_code


def crafted_event(side, honest: list[str], *actions, version: int | None = None) -> tuple[bytes, int]:
    """``side``'s next event: the ``honest`` orders as its pbem composes them,
    then ``actions`` (msgspec Structs) unchecked, signed with its key."""
    seat = side.seat()
    orders = session.parse_orders(seat.rules, seat.replay, seat.role, seat.vault, [], honest) if honest else []
    orders += [session.DraftOrder(text="crafted", action=codec.raw(a)) for a in actions]
    body = session._body(seat.replay, seat.role, session._with_secrets(seat.vault, orders), orders,
                         x_next=bytes(32))
    if version is not None:
        body = msgspec.structs.replace(body, v=version)
    return session._sign(seat.identity, body), body.seq


def deliver_everywhere(victim, stored: bytes, seq: int, author: str, tmp: Path) -> list[str]:
    """Deliver ``stored`` to ``victim`` with `pbem receive` (directory hashed before
    and after), then put it into a copy of the victim's log and run `pbem verify`
    and `pbem audit` on the copy. Every run must exit 5; returns their outputs."""
    turn = tmp / "crafted.pbem"
    turn.write_bytes(format_turn("", "ritd", [stored], [author], [seq]))
    before = tree_hash(victim.gd.path)
    runner = CliRunner()
    outputs = []
    result = runner.invoke(cli, ["receive", "--no-auto", "-g", str(victim.gd.path), str(turn)])
    assert tree_hash(victim.gd.path) == before, "the receiver's game directory changed"
    outputs.append(result)
    copy = tmp / "copy"
    shutil.copytree(victim.gd.path, copy)
    (copy / "events" / f"{seq:06d}.json").write_bytes(stored)
    for command in ("verify", "audit"):
        outputs.append(runner.invoke(cli, [command, str(copy)]))
    for result in outputs:
        assert result.exit_code == ILLEGAL, result.output
        assert result.output.startswith("pbem: ") and "internal error" not in result.output
        assert "Traceback" not in result.output
        assert f"event {seq} by {author}" in result.output, result.output
    return [r.output for r in outputs]


@pytest.fixture
def demo(tmp_path):
    """The 19.0 Demo after both set-ups: the Axis Player-Turn 1 is about to begin."""
    return new_game(tmp_path / "game", "demo", DEMO_AXIS, demo_allied())


TO_MOVEMENT = ["supply check", "basic"]  # the Axis turn up to its Movement phase


def _axis_token(demo, unit: str) -> str:
    return next(b.token for b in demo.axis.seat().replay.state.position.blocks_of("axis") if b.unit == unit)


def _hex(name: str) -> str:
    return game_map().resolve(name)


def test_a_move_through_an_unknown_hex_is_refused_with_the_rule(demo, tmp_path):
    pavia = _axis_token(demo, "Pavia")
    move = mv.Move(kind="group", origin=_hex("Ft. Capuzzo"), units=(mv.UnitMove(pavia, (_hex("Ft. Capuzzo"), "Z99")),))
    stored, seq = crafted_event(demo.axis, TO_MOVEMENT, move)
    for out in deliver_everywhere(demo.allied, stored, seq, "axis", tmp_path):
        assert "action 3" in out and "RB 1.0" in out and "'Z99', which is not a hex of the map" in out
        assert "a Move (RB 3.44)" in out


def test_a_move_from_an_unknown_origin_is_refused_with_the_rule(demo, tmp_path):
    pavia = _axis_token(demo, "Pavia")
    move = mv.Move(kind="group", origin="Z99", units=(mv.UnitMove(pavia, ("Z99", _hex("Bardia"))),))
    stored, seq = crafted_event(demo.axis, TO_MOVEMENT, move)
    for out in deliver_everywhere(demo.allied, stored, seq, "axis", tmp_path):
        assert "RB 1.0" in out and "'Z99'" in out


def test_a_combat_loss_in_an_unknown_hex_is_refused_with_the_rule(demo, tmp_path):
    loss = ls.LossAllocation(hex="Z99", losses=(ls.Loss(token=_axis_token(demo, "Pavia"), hits=1),))
    stored, seq = crafted_event(demo.axis, TO_MOVEMENT, loss)
    for out in deliver_everywhere(demo.allied, stored, seq, "axis", tmp_path):
        assert "placing combat losses (RB 9.5)" in out and "RB 1.0" in out and "'Z99'" in out


@pytest.mark.parametrize("make, words", [
    (lambda t: bu.Redeploy(token=t, path=(_hex("Ft. Capuzzo"), "Z99")), "a Redeploy (RB 16.51)"),
    (lambda t: bu.SeaRedeploy(token=t, to="Z99"), "a Sea Redeploy (RB 16.53)"),
    (lambda t: bu.ReturnForRefit(token=t, path=("Z99", _hex("Bardia"))), "a Return for Refit (RB 16.52)"),
], ids=["redeploy", "sea-redeploy", "refit"])
def test_buildup_actions_naming_an_unknown_hex_are_refused_with_the_rule(demo, tmp_path, make, words):
    stored, seq = crafted_event(demo.axis, TO_MOVEMENT, make(_axis_token(demo, "Pavia")))
    for out in deliver_everywhere(demo.allied, stored, seq, "axis", tmp_path):
        assert words in out and "RB 1.0" in out and "'Z99', which is not a hex of the map" in out


def test_a_redeploy_in_the_movement_phase_names_the_step_and_its_rule(demo, tmp_path):
    """A Buildup action (RB 16.51) signed during the Axis Movement phase: the
    refusal says which step the game is in and what that step allows (RB 5.0),
    instead of 'unknown action Redeploy(...)'."""
    pavia = _axis_token(demo, "Pavia")
    redeploy = bu.Redeploy(token=pavia, path=(_hex("Ft. Capuzzo"), _hex("Bardia")))
    stored, seq = crafted_event(demo.axis, TO_MOVEMENT, redeploy)
    for out in deliver_everywhere(demo.allied, stored, seq, "axis", tmp_path):
        assert "action 3" in out and "RB 3.0: a Redeploy (RB 16.51) is not allowed now" in out
        assert "axis Player-Turn 1, step 'movement'" in out and "Moves (RB 5.0)" in out
        assert "unknown action" not in out


def test_a_fire_plan_before_any_battle_names_the_step(demo, tmp_path):
    fire = fr.FirePlan(hex=_hex("Sollum"), side="axis", fires=())
    stored, seq = crafted_event(demo.axis, TO_MOVEMENT, fire)
    for out in deliver_everywhere(demo.allied, stored, seq, "axis", tmp_path):
        assert "RB 9.1" in out and "no fire is due now" in out


def test_a_buildup_action_before_the_turn_option_names_the_step(demo, tmp_path):
    """Wrong step of the Player-Turn: a Sea Redeploy where the Initial Supply Check is due."""
    stored, seq = crafted_event(demo.axis, [], bu.SeaRedeploy(token=_axis_token(demo, "Pavia"), to=_hex("Tobruk")))
    for out in deliver_everywhere(demo.allied, stored, seq, "axis", tmp_path):
        assert "RB 3.0: a Sea Redeploy (RB 16.53) is not allowed now" in out and "Initial Supply Check (RB 12.7)" in out


@pytest.mark.parametrize("version", [2, 9])
def test_a_mid_game_event_with_another_format_version_names_the_signer_and_version(demo, tmp_path, version):
    """Version 2 is one this pbem reads, 9 is not: inside a game whose genesis fixed
    the format, both are the signer's break of the game's protocol, not an old pbem."""
    stored, seq = crafted_event(demo.axis, TO_MOVEMENT, version=version)
    for out in deliver_everywhere(demo.allied, stored, seq, "axis", tmp_path):
        assert f"signed with event format version {version}" in out
        assert f"this game is played at format version {codec.RISTRETTO_VERSION}" in out
        assert "upgrade pbem" not in out


def test_an_action_the_rules_cannot_judge_is_refused_never_accepted(demo, tmp_path, monkeypatch):
    """The engine's guarantee: whatever a rules module raises while judging a
    signed event (here, any crafted input a check does not foresee, simulated
    by a check that raises), the event is refused with exit 5 naming its signer,
    its number and the action; it is never accepted and never exit 1."""
    pavia = _axis_token(demo, "Pavia")
    move = mv.Move(kind="group", origin=_hex("Ft. Capuzzo"), units=(mv.UnitMove(pavia, (_hex("Ft. Capuzzo"),
                                                                                       _hex("Bardia"))),))
    stored, seq = crafted_event(demo.axis, TO_MOVEMENT, move)
    honest = ritd.check

    def fragile(state, action, ctx):
        if isinstance(action, mv.Move):
            raise KeyError("a case the rules never foresaw")
        return honest(state, action, ctx)

    monkeypatch.setattr(ritd, "check", fragile)
    for out in deliver_everywhere(demo.allied, stored, seq, "axis", tmp_path):
        assert "action 3 (" in out and "refused: the ritd rules could not judge it (KeyError" in out
        assert "nothing of the event is accepted" in out


def test_an_unknown_token_in_a_move_is_refused_not_a_crash(demo, tmp_path):
    """Tokens are validated by the rules' own checks (full name validation at
    parse time comes with issue 19); whatever path they take, exit 5."""
    move = mv.Move(kind="group", origin=_hex("Ft. Capuzzo"), units=(mv.UnitMove("A99999999", (_hex("Ft. Capuzzo"),
                                                                                                _hex("Bardia"))),))
    stored, seq = crafted_event(demo.axis, TO_MOVEMENT, move)
    deliver_everywhere(demo.allied, stored, seq, "axis", tmp_path)


@pytest.fixture
def gazala(tmp_path):
    """Gazala (RB 18.7) after both set-ups: the pre-game Buildup, the Allies to spend first."""
    sc = all_scenarios()
    s = sc.get("gazala")
    axis_setup = [f"deploy {u.name} at El Agheila" for u in sc.starting_units(s, "axis")] + ["end deployment"]
    allied_setup = [f"deploy {u.name} at Alexandria" for u in sc.starting_units(s, "allied")] + ["end deployment"]
    table = new_game(tmp_path / "game", "gazala", axis_setup, allied_setup, keep_hands=False)
    assert table.pending().role == "allied" and table.pending().kind == "buildup"
    return table


def _allied_token(table) -> str:
    return next(b.token for b in table.allied.seat().replay.state.position.blocks_of("allied") if b.unit)


@pytest.mark.parametrize("make, words", [
    (lambda t: bu.Redeploy(token=t, path=(_hex("Alexandria"), "Z99")), "a Redeploy (RB 16.51)"),
    (lambda t: bu.SeaRedeploy(token=t, to="Z99"), "a Sea Redeploy (RB 16.53)"),
    (lambda t: bu.ReturnForRefit(token=t, path=("Z99",)), "a Return for Refit (RB 16.52)"),
], ids=["redeploy", "sea-redeploy", "refit"])
def test_in_the_buildup_actions_naming_an_unknown_hex_are_refused(gazala, tmp_path, make, words):
    stored, seq = crafted_event(gazala.allied, [], make(_allied_token(gazala)))
    for out in deliver_everywhere(gazala.axis, stored, seq, "allied", tmp_path):
        assert "action 1" in out and words in out and "RB 1.0" in out and "'Z99'" in out


def test_a_move_in_the_buildup_names_the_phase_and_what_it_allows(gazala, tmp_path):
    token = _allied_token(gazala)
    move = mv.Move(kind="group", origin=_hex("Alexandria"),
                   units=(mv.UnitMove(token, (_hex("Alexandria"), _hex("Alexandria W1"))),))
    stored, seq = crafted_event(gazala.allied, [], move)
    for out in deliver_everywhere(gazala.axis, stored, seq, "allied", tmp_path):
        assert "RB 3.0: a Move (RB 3.44) is not allowed now" in out and "Buildup (RB 16.4-16.6)" in out
