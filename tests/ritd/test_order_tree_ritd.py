"""``pbem options`` readable for Rommel in the Desert (issue 21 point 7): the
orders of ``legal_orders`` in groups (``Rules.order_tree``, rules/ritd/
order_tree.py), checked on scripted positions: the set-up (RB 18.0), a
Movement phase (RB 5.1), an Attacked Group (RB 8.4, 10.2), the Combat phase
(RB 8.6, 9.1, 9.5), a Supply Check with Fortress Supply to choose (RB 13.3)
and a Buildup (RB 16.4-16.6). In each the tree's leaves are exactly the
legal orders."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import msgspec
import pytest
from click.testing import CliRunner

from pbem import rulesapi, session
from pbem.cli import cli
from pbem.identity import Identity, save_identity
from pbem.rulesapi import OrderGroup
from pbem.store import GameDir
from rules.ritd import RULES as RITD
from rules.ritd import movement as mv
from rules.ritd.state import all_scenarios
from rules.ritd.turn import Turn
from tests.ritd.ritd_table import RitdTable, new_game
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

REGROUP = ["supply check", "basic", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento", "end movement"]

pytestmark = pytest.mark.usefixtures("registered_ritd")


def _ctx(author: str) -> SimpleNamespace:
    return SimpleNamespace(author=author, opened=lambda label: False, committed=lambda label: False)


def _tree(state, role: str, ctx) -> tuple[tuple[OrderGroup, ...], list[str]]:
    """The tree and the legal orders; the tree's leaves are the legal orders, each once."""
    tree = RITD.order_tree(state, role, ctx)
    legal = RITD.legal_orders(state, role, ctx)
    assert Counter(rulesapi.tree_leaves(tree)) == Counter(legal)
    return tree, legal


def _seat_tree(table: RitdTable, role: str) -> tuple[tuple[OrderGroup, ...], list[str]]:
    replay = table.side(role).seat().replay
    return _tree(replay.state, role, replay.ctx(role))


def _labels(tree) -> list[str]:
    return [g.label for g in tree]


@pytest.fixture
def demo(tmp_path):
    return new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())


# -- RB 18.0: deployment -----------------------------------------------------------------------

@pytest.mark.parametrize("scenario", ["crusader", "1940", "gazala"])
def test_rb_18_each_unit_left_to_deploy_is_one_group_with_its_area(scenario):
    state = RITD.initial_state(scenario, ())
    role = RITD.pending(state).role
    tree, legal = _tree(state, role, None)
    s = all_scenarios().get(scenario)
    roster = all_scenarios().roster
    units = list(dict.fromkeys(u.name for g in s.side(role).setup for u in g.select(roster, role)))
    assert _labels(tree) == [f"{u} (CV {roster.get(u).max_cv})" for u in units]
    rules = {g.rule for g in s.side(role).setup}
    for group, unit in zip(tree, units, strict=True):
        assert group.example == f"deploy {unit} at <place>"
        assert all(o.startswith(f"deploy {unit} at ") for o in group.leaf_orders()) and group.count() > 0
        assert group.note.startswith("may deploy ") and any(f"(RB {r}): " in group.note for r in rules)
        assert f": {group.count()} hexes now, e.g. " in group.note or group.count() <= 4
    assert len(legal) > 10 * len(tree)  # hundreds of orders, one group a unit


def test_rb_18_4_the_crusader_area_is_named_in_the_scenarios_words():
    state = RITD.initial_state("crusader", ())
    tree, _ = _tree(state, "axis", None)
    assert tree[0].note.startswith("may deploy in Libya, Sidi Omar, Sollum except Tobruk (RB 18.4): 57 hexes now, e.g. ")  # Supplied locations only (RB 18.0)


def test_rb_18_0_end_deployment_is_its_own_group_once_every_unit_is_placed(tmp_path: Path):
    """The Demo's Axis set-up drafted but not ended: only 'end deployment' is left."""
    seat, _ = _new_axis(tmp_path, "demo", DEMO_AXIS[:-1])
    draft, _ = session.draft_replay(seat)
    tree, legal = _tree(draft.state, "axis", draft.ctx("axis"))
    assert legal == ["end deployment"]
    assert [(g.label, g.ends_step, g.note) for g in tree] == [("End deployment", True,
                                                               "RB 18.0: every starting unit deployed")]


def _new_axis(tmp_path: Path, scenario: str, orders: list[str]) -> tuple[session.Seat, list[str]]:
    """A new game of ``scenario`` with the Axis set-up ``orders`` in its draft: the
    Axis seat and the arguments of 'pbem options' for it."""
    axis, allied = Identity.generate(), Identity.generate()
    save_identity(axis, tmp_path / "axis.key", "a passphrase of the test")
    (tmp_path / "pass").write_text("a passphrase of the test")
    session.new_game(tmp_path / "axis", "ritd", scenario, "axis", axis, tmp_path / "axis.key",
                     allied.public_text, orders=[])
    seat = session.load_seat(GameDir(tmp_path / "axis"), axis)
    if orders:
        session.add_orders(seat, orders)
    return seat, ["options", "-g", str(tmp_path / "axis"), "-i", str(tmp_path / "axis.key"),
                  "--passphrase-file", str(tmp_path / "pass")]


def test_pbem_options_shows_a_crusader_deployment_in_a_few_lines_naming_each_unit_once(tmp_path: Path):
    _, args = _new_axis(tmp_path, "crusader", [])
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) < 80
    assert lines[0].startswith("1254 orders in 22 groups")  # 57 Supplied locations (RB 18.0)
    s = all_scenarios().get("crusader")
    units = {u.name for g in s.axis.setup for u in g.select(all_scenarios().roster, "axis")}
    assert len(units) == 22
    for unit in units:
        assert sum(line.startswith(f"{unit} (CV ") for line in lines) == 1, unit
    assert "may deploy in Libya, Sidi Omar, Sollum except Tobruk (RB 18.4)" in lines[1]
    one = CliRunner().invoke(cli, [*args, "--group", "Trieste"])
    assert one.exit_code == 0 and len(one.output.splitlines()) == 58  # the group line and its 57 orders
    assert all(line.strip().startswith("deploy Trieste at ") for line in one.output.splitlines()[1:])


# -- RB 5.1: the Movement phase ----------------------------------------------------------------

def test_rb_5_1_moves_are_grouped_by_hex_then_unit_and_found_when_opened(demo):
    demo.play("axis", "supply check", "basic")
    tree, legal = _seat_tree(demo, "axis")
    assert _labels(tree) == ["Moves from Bardia: Savona", "Moves from Ft Capuzzo: Bologna, Brescia, Pavia, Sabratha",
                             "Moves from Sidi Omar: GGFF, Trento, Trieste", "End movement"]
    assert tree[-1].ends_step and tree[-1].leaf_orders() == ("end movement",)
    assert all("RB 5.1" in g.note for g in tree[:-1])
    # Nothing is searched before a group is opened (the tree is built for each choice of self-play).
    fresh = RITD.order_tree(*_replay_args(demo, "axis"))
    assert all("children" not in g._made and "orders" not in g._made for g in fresh)
    capuzzo = fresh[1].groups()
    assert [g.label for g in capuzzo] == ["Bologna (speed 1, at Ft Capuzzo)", "Brescia (speed 1, at Ft Capuzzo)",
                                          "Pavia (speed 1, at Ft Capuzzo)", "Sabratha (speed 1, at Ft Capuzzo)"]
    assert all("orders" not in g._made for g in capuzzo)
    brescia = next(g for g in capuzzo if g.label.startswith("Brescia"))
    assert brescia.example == "group Ft Capuzzo -> <hex> Brescia"
    assert brescia.leaf_orders() and all(o.startswith("group Ft Capuzzo -> ") and o.endswith(" Brescia")
                                         for o in brescia.leaf_orders())
    assert sum(g.count() for g in tree) == len(legal)
    # The hex group's example form moves several of its units in one order (RB 5.1).
    omar = {g.label.split(" (")[0]: {o.split(" -> ")[1].rsplit(" ", 1)[0] for o in g.leaf_orders()}
            for g in fresh[2].groups()}
    dest = sorted(omar["Trento"] & omar["Trieste"])[0]
    state, role, ctx = _replay_args(demo, "axis")
    action = RITD.parse_order(state, role, f"group Sidi Omar -> {dest} Trento, Trieste", ctx).action
    assert RITD.check(state, action, ctx) == [] and len(action.units) == 2


def _replay_args(table: RitdTable, role: str):
    replay = table.side(role).seat().replay
    return replay.state, role, replay.ctx(role)


def test_rb_6_4_forced_marches_are_a_group_after_the_moves(demo):
    """A Basic Turn's one Group Move made (RB 4.1): Forced Marches one hex on
    (RB 6.4) and the end of movement are what is left, a group each."""
    demo.play("axis", "supply check", "basic")
    moves, _ = _seat_tree(demo, "axis")
    savona = moves[0].groups()[0]
    demo.play("axis", savona.leaf_orders()[0])
    tree, legal = _seat_tree(demo, "axis")
    marches = [o for o in legal if o.startswith("forced-march Savona -> ")]
    assert marches and _labels(tree) == ["Forced Marches", "End movement"]
    assert tree[0].leaf_orders() == tuple(marches) and tree[0].note.startswith("RB 6.4")


# -- RB 8.4, 10.2: an Attacked Group accepts or Refuses Battle ----------------------------------

def test_rb_8_4_and_10_2_accept_and_refuse_battle_are_each_a_group(demo):
    demo.play("axis", *REGROUP)
    tree, legal = _seat_tree(demo, "allied")
    assert [(g.label, g.leaf_orders()) for g in tree] == [
        ("Accept battle", ("accept-battle Sollum",)), ("Refuse battle", ("refuse-battle Sollum slowest 3",))]
    assert tree[0].note == "RB 8.4" and tree[1].note.startswith("RB 10.2: 'refuse-battle <hex> slowest <speed>'")
    assert "'refuse-battle <hex> -> <hex>'" in tree[1].note


# -- RB 8.6, 9.1, 9.5: the Combat phase ----------------------------------------------------------

@pytest.fixture
def battle(demo, monkeypatch):
    """The Demo: the Axis regroups into Sollum, the Allies accept, both reveal; every die a 6."""
    monkeypatch.setattr("pbem.game.roll", lambda *args: (6,) * len(args[-1]))
    demo.play("axis", *REGROUP)
    demo.play("allied", "accept-battle Sollum", "reveal units")
    demo.play("axis", "reveal units")
    return demo


def test_rb_8_6_the_battles_step_fire_and_losses_are_groups(battle):
    tree, legal = _seat_tree(battle, "axis")
    assert [(g.label, g.leaf_orders()) for g in tree] == [("Active Battles", ("battles Sollum",))]
    assert "RB 8.6" in tree[0].note
    battle.play("axis", "battles Sollum")
    tree, legal = _seat_tree(battle, "allied")
    # One Allied unit fires: step-by-step fire only (a plan needs two units, RB 9.2).
    assert _labels(tree) == ["Fire one unit (step by step)"] and legal == ["fire Sollum: 7/7 Tk at infantry"]
    assert tree[0].note.startswith("RB 9.2") and tree[0].example == "fire <hex>: <unit> at <class>"


def test_rb_8_6_every_choice_of_battles_is_listed_and_checks(demo):
    """An Assault Turn (RB 4.3) with one new battle: it is mandatory and may be
    an Assault Battle; both orders are listed, grouped, and accepted."""
    demo.play("axis", "supply check", "assault", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento",
              "end movement")
    demo.play("allied", "accept-battle Sollum", "reveal units")
    demo.play("axis", "reveal units")
    tree, legal = _seat_tree(demo, "axis")
    assert legal == ["battles Sollum", "battles Sollum assault Sollum"]
    assert [(g.label, g.leaf_orders()) for g in tree] == [
        ("Active Battles", ("battles Sollum",)), ("Battles with Assault Battles", ("battles Sollum assault Sollum",))]
    seat = demo.axis.seat()
    for order in legal:
        action = RITD.parse_order(seat.replay.state, "axis", order, seat.replay.ctx("axis")).action
        assert RITD.check(seat.replay.state, action, seat.replay.ctx("axis")) == []


def test_rb_8_6_an_older_battle_may_be_fought_or_not():
    """A battle that is neither new nor a Fortress battle is optional (RB 8.6):
    'battles none' and 'battles <it>' are both listed and both check."""
    from tests.ritd.test_mutation_guards_game import _at_step

    state = _at_step("battles", real=1)
    tree, legal = _tree(state, "axis", _ctx("axis"))
    assert legal == ["battles none", "battles Buq Buq"]
    assert [(g.label, g.count()) for g in tree] == [("Active Battles", 2)]
    for order in legal:
        assert RITD.check(state, RITD.parse_order(state, "axis", order, _ctx("axis")).action, _ctx("axis")) == []


def test_rb_4_1_without_a_real_card_no_optional_battle_is_listed():
    """A Pass Turn or a bluff (no real card) has no Combat Round (RB 4.1): the
    older battle is not offered, since the revealed cards would make the
    Player-Turn illegal (found by random self-play)."""
    from tests.ritd.test_mutation_guards_game import _at_step

    for real in (0, 1):
        state = _at_step("battles", real=real, cards=1)
        _, legal = _tree(state, "axis", _ctx("axis"))
        assert legal == (["battles none"] if real == 0 else ["battles none", "battles Buq Buq"])


# -- RB 13.3: a Supply Check with Fortress Supply to choose --------------------------------------

def test_rb_13_3_fortress_supply_to_choose_is_a_group_with_its_rule():
    from tests.ritd.test_mutation_guards_game import _at_step
    from tests.ritd.test_supply import tobruk_position

    pos = tobruk_position({}, inside=6)
    # Named like real blocks (a player's own blocks always are), so that the orders read back.
    names = ["7/7 Tk", "4 Ind/5", "4 Ind/11", "7/4 Armd", "7/7 Mot", "Pol"]
    pos = pos.replace_blocks([msgspec.structs.replace(pos.block(f"in{i}"), unit=n) for i, n in enumerate(names)])
    state = msgspec.structs.replace(_at_step("initial-supply"), position=pos, side="allied",
                                    turn=Turn(number=2, active="allied", step="initial-supply",
                                              movement=mv.start_movement(pos, "allied")))
    tree, legal = _tree(state, "allied", _ctx("allied"))
    assert [(g.label, g.count()) for g in tree] == [("Fortress Supply from Tobruk", 6)]
    assert tree[0].example == "supply check fortress Tobruk: <unit>, ..."
    assert tree[0].note.startswith("RB 13.3: choose the units that receive it")
    for order in legal:  # each listed assignment is accepted
        action = RITD.parse_order(state, "allied", order, _ctx("allied")).action
        assert RITD.check(state, action, _ctx("allied")) == [], order


def test_rb_12_7_a_plain_supply_check_says_how_fortress_supply_is_chosen(demo):
    tree, legal = _seat_tree(demo, "axis")
    assert legal == ["supply check"]
    assert [g.label for g in tree] == ["Supply check"]
    assert "Fortress Supply (RB 13.3)" in tree[0].note and "'supply check fortress <place>: <unit>, ...'" in tree[0].note


# -- RB 16.4-16.6: a Buildup ----------------------------------------------------------------------

def test_rb_16_buildup_orders_are_grouped_by_kind(demo):
    demo.play("axis", "supply check", "pass", "end movement", "supply check")
    demo.play("allied", "supply check", "pass", "end movement", "supply check")
    draft, _ = session.draft_replay(demo.axis.seat())
    first = draft.pending().role
    replay = session.draft_replay(demo.side(first).seat())[0]
    tree, legal = _tree(replay.state, first, replay.ctx(first))
    assert legal and tree
    labels = _labels(tree)
    assert labels[0] in ("Early Arrival", "Reinforcements")
    # Reinforcements first (RB 16.4): then the rest of the Buildup by kind.
    demo.play(first, *(["early arrival"] if labels[0] == "Early Arrival" else []))
    replay = session.draft_replay(demo.side(first).seat())[0]
    if replay.pending().role == first and "reinforce" in RITD.legal_orders(replay.state, first, replay.ctx(first)):
        demo.play(first, "reinforce")
        replay = session.draft_replay(demo.side(first).seat())[0]
    tree, legal = _tree(replay.state, first, replay.ctx(first))
    groups = {g.label: g for g in tree}
    assert groups["End buildup"].ends_step and "RB 16.6" in groups["End buildup"].note
    assert groups["Redeployment"].note == "RB 16.51"
    assert all(o.startswith("redeploy ") for o in groups["Redeployment"].leaf_orders())
    assert set(groups) <= {"End buildup", "Redeployment", "Rebuild", "Minefields", "Buy a Supply Card",
                           "Call the Malta Group", "Sea Redeployment", "Return for Refit"}
    assert all(o.startswith("refit ") for o in groups["Return for Refit"].leaf_orders())


def test_every_buildup_order_form_has_its_kind() -> None:
    """Each Buildup order form the listing writes lands in its named group
    (a Sea Redeployment once fell into a group called 'Sea')."""
    from rules.ritd.order_tree import by_kind

    orders = ["sea 7/7 Tk -> Tobruk", "refit 7/7 Tk", "redeploy 7/7 Tk -> Sollum", "rebuild 7/7 Tk",
              "minefield Sollum", "buy supply", "end buildup"]
    assert [g.label for g in by_kind(orders)] == ["Sea Redeployment", "Return for Refit", "Redeployment",
                                                   "Rebuild", "Minefields", "Buy a Supply Card", "End buildup"]
