"""Every signed action has one valid form (issue 27 point 6; rules.ritd.canonical).

A patched client signs an action carrying words the rules would ignore: an
Oasis entry for a hex that is no Oasis, Oasis Supply "given" to an enemy
block, an Oasis choice where none is needed, a unit listed twice, a Group Move
naming a destination, a loss of no hits, a fire plan naming a Class twice or
signed for the other side. Before, receive, verify and audit accepted some of
these (the rules ignored them), so one move could be signed in many forms.
Now `pbem receive`, `pbem verify` and `pbem audit` refuse each with exit 5,
naming the signer, the event, the action and the rule, and the receiver's
game directory is unchanged (``deliver_everywhere`` hashes it).

The honest logs published in examples/ and tests/data/ still verify and
audit to the same heads as before.
"""

from __future__ import annotations

import msgspec
import pytest

from pbem import codec, rulesapi, session
from pbem.game import Replay
from rules.ritd import canonical
from rules.ritd import fire as fr
from rules.ritd import game as ritd
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd.actions import SupplyCheck
from rules.ritd.state import game_map
from rules.ritd.turn_orders import check_turn
from tests.ritd.ritd_table import new_game
from tests.ritd.test_crafted_events import TO_MOVEMENT, crafted_event, deliver_everywhere
from tests.ritd.test_game_month import _Ctx
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied
from tests.test_time_control import HEADS, published_log

pytestmark = pytest.mark.usefixtures("registered_ritd")

SIWA = "1511"  # an Oasis (RB 15.1)


@pytest.fixture
def demo(tmp_path):
    """The 19.0 Demo after both set-ups: the Axis Initial Supply Check of Player-Turn 1 is due."""
    return new_game(tmp_path / "game", "demo", DEMO_AXIS, demo_allied())


def _token(table, side: str, unit: str | None = None) -> str:
    blocks = table.axis.seat().replay.state.position.blocks_of(side)
    return next(b.token for b in blocks if unit is None or b.unit == unit)


def _hex(name: str) -> str:
    return game_map().resolve(name)


def _refused(table, honest: list[str], action: object, tmp_path) -> list[str]:
    """The Axis signs ``honest`` then ``action``; the Allies' receive, verify and audit refuse it (exit 5)."""
    stored, seq = crafted_event(table.axis, honest, action)
    outs = deliver_everywhere(table.allied, stored, seq, "axis", tmp_path)
    for out in outs:
        assert f"action {len(honest) + 1}" in out and "one valid form per action" in out, out
    return outs


def _refused_hex(table, action: object, tmp_path) -> list[str]:
    """The Axis signs ``action`` alone; the Allies' receive, verify and audit refuse it (exit 5)."""
    stored, seq = crafted_event(table.axis, [], action)
    return deliver_everywhere(table.allied, stored, seq, "axis", tmp_path)


def test_oasis_supply_given_to_an_enemy_block_is_refused(demo, tmp_path):
    enemy = _token(demo, "allied")
    for out in _refused(demo, [], SupplyCheck(oasis={SIWA: enemy}), tmp_path):
        assert "RB 15.1: a Supply Check (RB 12.7): oasis: " in out and f"'{enemy}' is not an axis block" in out


def test_an_oasis_entry_for_a_hex_that_is_no_oasis_is_refused(demo, tmp_path):
    check = SupplyCheck(oasis={_hex("Tobruk"): _token(demo, "axis", "Pavia")})
    for out in _refused(demo, [], check, tmp_path):
        assert "RB 15.1" in out and f"'{_hex('Tobruk')}' is not an Oasis hex" in out


def test_an_oasis_entry_for_a_hex_that_does_not_exist_is_refused(demo, tmp_path):
    for out in _refused_hex(demo, SupplyCheck(oasis={"Z99": _token(demo, "axis", "Pavia")}), tmp_path):
        assert "RB 1.0" in out and "'Z99', which is not a hex of the map" in out


def test_an_oasis_choice_the_check_ignores_is_refused(demo, tmp_path):
    """RB 15.1: Pavia is nowhere near Siwa; the check has no Oasis choice to make there."""
    for out in _refused(demo, [], SupplyCheck(oasis={SIWA: _token(demo, "axis", "Pavia")}), tmp_path):
        assert "RB 15.1" in out and "oasis: the entry for Siwa is ignored by the check" in out


def test_rb_15_1_the_honest_oasis_choice_is_theone_valid_form(demo):
    """Two Allied units at Siwa beyond any Supply Line: the Oasis supplies one
    of them (RB 15.1), so the choice is part of the action and each honest
    order passes; the same choice with an entry the check ignores (Jalo,
    where no Allied unit needs Oasis Supply) or without the needed choice is
    refused, so the action has exactly one signed form per choice."""
    demo.play("axis", "supply check", "pass", "end movement", "supply check")
    state = demo.allied.seat().replay.state
    siwa, jalo = game_map().resolve("Siwa"), game_map().resolve("Jalo")
    movers = list(state.position.blocks_of("allied"))[:2]
    third = list(state.position.blocks_of("allied"))[2].token
    st = msgspec.structs.replace(state, position=state.position.replace_blocks(
        [msgspec.structs.replace(b, hex=siwa) for b in movers]))
    orders = ritd.legal_orders(st, "allied", None)
    assert len(orders) == 2
    for order in orders:
        action = ritd.parse_order(st, "allied", order, None).action
        assert canonical.problems(st, action, "allied") == []
        assert check_turn(st, st.turn, action, "allied", _Ctx({})) == []
        padded = SupplyCheck(fortress=action.fortress, oasis={**action.oasis, jalo: third})
        assert [(p.rule, p.message) for p in canonical.problems(st, padded, "allied")] == [
            ("RB 15.1", "a Supply Check (RB 12.7): oasis: the entry for Jalo is ignored by the check "
                        "(no choice of Oasis Supply is needed there) (one valid form per action)")]
    assert check_turn(st, st.turn, SupplyCheck(), "allied", _Ctx({})) != []


def test_a_unit_chosen_twice_for_supply_is_refused(demo, tmp_path):
    pavia = _token(demo, "axis", "Pavia")
    for out in _refused(demo, [], SupplyCheck(fortress={_hex("Bardia"): (pavia, pavia)}), tmp_path):
        assert "RB 12.7" in out and f"'{pavia}' is listed twice" in out


def test_a_fortress_entry_with_no_unit_is_refused(demo, tmp_path):
    for out in _refused(demo, [], SupplyCheck(fortress={_hex("Bardia"): ()}), tmp_path):
        assert "RB 13.3" in out and "fortress: Bardia is given no unit" in out


def test_a_group_move_naming_a_destination_is_refused(demo, tmp_path):
    """RB 5.1: a Group Move's units end where their paths end; the same Move
    with ``destination`` set would be a second signed form of it."""
    pavia = _token(demo, "axis", "Pavia")
    move = mv.Move(kind="group", origin=_hex("Ft. Capuzzo"), destination=_hex("Bardia"),
                   units=(mv.UnitMove(pavia, (_hex("Ft. Capuzzo"), _hex("Bardia"))),))
    for out in _refused(demo, TO_MOVEMENT, move, tmp_path):
        assert "a Move (RB 3.44)" in out and "RB 5.1" in out and "only a Regroup Move (RB 5.2) names a destination" in out


def test_a_loss_of_no_hits_is_refused(demo, tmp_path):
    pavia = _token(demo, "axis", "Pavia")
    loss = ls.LossAllocation(hex=_hex("Ft. Capuzzo"), losses=(ls.Loss(token=pavia),))
    for out in _refused(demo, TO_MOVEMENT, loss, tmp_path):
        assert "placing combat losses (RB 9.5)" in out and f"'{pavia}' is listed with no hits" in out


def test_a_fire_plan_naming_a_class_twice_or_for_the_other_side_is_refused(demo, tmp_path):
    pavia = _token(demo, "axis", "Pavia")
    plan = fr.FirePlan(hex=_hex("Ft. Capuzzo"), side="allied",
                       fires=(fr.UnitFire(token=pavia, target="armor", fallback=("infantry", "armor")),))
    for out in _refused(demo, TO_MOVEMENT, plan, tmp_path):
        assert "a Fire plan (RB 9.1)" in out and "RB 9.1" in out and "side: allied; the plan is signed by axis" in out
        assert "RB 9.3" in out and "names a target Class twice" in out


def test_a_block_token_that_is_not_in_play_is_refused_by_name(demo, tmp_path):
    move = mv.Move(kind="group", origin=_hex("Ft. Capuzzo"),
                   units=(mv.UnitMove("A99999999", (_hex("Ft. Capuzzo"), _hex("Bardia"))),))
    for out in _refused(demo, TO_MOVEMENT, move, tmp_path):
        assert "RB 5.0" in out and "'A99999999' is not a block in play" in out


@pytest.mark.random_cards  # the published logs were dealt by the real deck, not the tests' fixed one
@pytest.mark.parametrize("folder", sorted(HEADS))
def test_the_published_logs_verify_and_audit_to_the_same_heads(folder):
    """Honest games keep verifying: every log under examples/ and tests/data/
    replays (verify) and audits, with canonical forms checked, to the head it had."""
    events = published_log(folder)
    genesis = codec.decode_body(codec.unwrap(events[0]).body).genesis
    assert genesis is not None
    rules = rulesapi.load_version(genesis.rules, genesis.rules_version)
    replay = Replay(rules)
    for stored in events:
        replay.apply_stored(stored)
    assert (replay.seq + 1, replay.head.hex()) == HEADS[folder]
    audited = session.audit(events, rules)
    assert (audited.replay.seq + 1, audited.replay.head.hex()) == HEADS[folder]


def test_a_listed_supply_check_leaves_out_a_choice_the_check_ignores(demo):
    """supply_steps lists each Fortress or Oasis choice with the others at their
    first; a combination carrying an entry the check ignores is listed in its one
    valid form, without that entry (RB 15.1; decisions/canonical.md), so every
    listed order passes check."""
    from rules.ritd import group_moves, supply_steps

    demo.play("axis", "supply check", "pass", "end movement", "supply check")
    state = demo.allied.seat().replay.state
    siwa = game_map().resolve("Siwa")
    blocks = list(state.position.blocks_of("allied"))
    st = msgspec.structs.replace(state, position=state.position.replace_blocks(
        [msgspec.structs.replace(b, hex=siwa) for b in blocks[:2]]))
    first, third = (group_moves.unit_name(st, b.token) for b in (blocks[0], blocks[2]))
    parts = [f"oasis Siwa: {first}", f"oasis Jalo: {third}"]
    assert supply_steps.one_valid_form(st, "allied", parts) == f"supply check oasis Siwa: {first}"
    for order in ritd.legal_orders(st, "allied", None):
        assert canonical.problems(st, ritd.parse_order(st, "allied", order, None).action, "allied") == []
