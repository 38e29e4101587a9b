"""Orders as a tree of groups (issue 26 point 6, issue 21 point 7): the
optional ``Rules.order_tree`` hook, random self-play sampling it level by
level with a bias to end phases, and ``pbem options`` listing it by group.

The test game is Skirmish (tests/skirmish): 40 units a side on a hex map,
SK 2 movement points, SK 3 zones of control."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import pbem.table as table_module
from pbem import rulesapi
from pbem.cli import cli
from pbem.rulesapi import OrderGroup
from pbem.table import LocalTable, RandomPolicy, Turn, expand_order_templates
from tests.race import rules as race
from tests.skirmish import rules as skirmish

NORTH = skirmish._Author("north")


@pytest.fixture
def toys() -> Iterator[None]:
    rulesapi.register(skirmish.RULES)
    rulesapi.register(race.RULES)
    yield
    rulesapi.unregister("skirmish")


# -- the hook's types ----------------------------------------------------------------

def test_a_group_makes_its_orders_and_children_once_and_only_when_asked() -> None:
    made: list[str] = []

    def orders() -> list[str]:
        made.append("orders")
        return ["move a 1", "move a 2"]

    def children() -> list[OrderGroup]:
        made.append("children")
        return [OrderGroup("Attack", orders=("attack x",)), OrderGroup("Nothing")]

    group = OrderGroup("Unit a", orders=orders, children=children)
    assert made == []  # built, nothing listed yet
    assert group.count() == 3 and group.count() == 3
    assert list(group.leaves()) == ["move a 1", "move a 2", "attack x"]
    assert group.first() == "move a 1" and OrderGroup("Nothing").first() == ""
    assert made == ["orders", "children"]  # each produced once
    assert rulesapi.tree_leaves([group, OrderGroup("End", orders=("end",))])[-1] == "end"


def test_the_default_tree_is_one_group_of_the_legal_orders() -> None:
    state = race.RULES.initial_state("standard", ())
    ctx = skirmish._Author("red")
    tree = race.RULES.order_tree(state, "red", ctx)
    assert len(tree) == 1 and list(tree[0].leaves()) == race.RULES.legal_orders(state, "red", ctx)
    assert not rulesapi.provides_order_tree(race.RULES) and rulesapi.provides_order_tree(skirmish.RULES)


def test_reachability_is_computed_once_per_unit_and_only_for_the_units_opened(monkeypatch: Any) -> None:
    """SK 2-3: a unit group's destinations come from one search, run when
    the group is opened; listing the groups searches nothing."""
    searched: list[str] = []
    real = skirmish._Board.reach

    def counting(self: Any, unit: Any) -> Any:
        searched.append(unit.name)
        return real(self, unit)

    monkeypatch.setattr(skirmish._Board, "reach", counting)
    state = skirmish.RULES.initial_state("standard", ())
    tree = skirmish.RULES.order_tree(state, "north", NORTH)
    assert len(tree) == 41 and tree[-1].label == "End movement" and tree[-1].ends_step
    assert searched == []
    assert tree[2].label == "Move N03 (armour, 8 MP, at 0301)" and tree[2].count() > 0
    assert searched == ["N03"]
    rulesapi.tree_leaves(tree)
    assert sorted(searched) == sorted(u.name for u in state.units if u.side == "north")


def test_zones_of_control_stop_a_move_in_the_tree_and_in_check() -> None:
    """SK 3: south's line of units on row 08 (every other hex) puts all of
    rows 07-09 in its zones of control: N01 may enter row 07 but not pass."""
    wall = tuple(skirmish.Unit(f"S{i:02d}", "south", "infantry", col, 8) for i, col in enumerate(range(1, 25, 2), 1))
    state = skirmish.State(units=(skirmish.Unit("N01", "north", "armour", 5, 5), *wall), turns=1)
    dests = {o.split()[2] for o in rulesapi.tree_leaves(skirmish.RULES.order_tree(state, "north", NORTH))
             if o != "end"}
    assert "0507" in dests and "0407" in dests  # into a zone of control
    assert not [d for d in dests if int(d[2:]) >= 8]  # never past it
    problems = skirmish.RULES.check(state, skirmish.Move(101, 5, 10), NORTH)
    assert [p.rule for p in problems] == ["SK 2"] and "zone of control" in problems[0].message
    assert dests == {o.split()[2] for o in skirmish.RULES.legal_orders(state, "north", NORTH) if o != "end"}


# -- self-play ---------------------------------------------------------------------------

class _UniformTwin:
    """The self-play policy as it was before order trees (a uniform choice
    among every legal order from random.Random(seed)), run beside the
    current one on the same decisions: both must choose the same order."""

    def __init__(self, seed: int) -> None:
        self.now, self.before = RandomPolicy(seed), random.Random(seed)
        self.turns = 0

    def __call__(self, turn: Turn) -> list[str] | None:
        chosen = self.now(turn)
        assert chosen == [self.before.choice(expand_order_templates(turn.legal()))]
        self.turns += 1
        return chosen


@pytest.mark.parametrize(("rules_id", "scenario", "events"), [("race", "standard", 40), ("ritd@3", None, 6)])
def test_games_without_a_tree_play_the_same_self_play_as_before(toys: None, tmp_path: Path, rules_id: str,
                                                                 scenario: str | None, events: int) -> None:
    """A game with no order tree of its own (the frozen RitD version 3) gets exactly the
    choices the uniform policy made before trees existed, seed for seed,
    so self-play logs kept as a baseline stay the same."""
    assert rules_id in rulesapi.available(), f"rules {rules_id} are part of this package (entry point)"
    rules = rulesapi.load(rules_id)
    assert not rulesapi.provides_order_tree(rules)
    twin = _UniformTwin(11)
    table = LocalTable.create(tmp_path, rules_id, scenario or rules.SPEC.scenarios[0])
    table.play(twin, events)
    assert twin.turns >= 3 and twin.now.choices


def _orders_per_phase(table: LocalTable) -> list[int]:
    """Orders of each movement phase as the table's log shows them."""
    out = []
    for line in table.log:
        _, _, rest = line.partition(": ")
        orders = rest.split("; ")
        if orders[-1] == "end":
            out.append(len(orders) - 1)
    return out


def test_skirmish_self_play_samples_by_level_and_ends(toys: None, tmp_path: Path) -> None:
    """SK 5: three game turns of 40 units a side; level sampling with the
    default bias ends every phase and the game, every order listed."""
    table = LocalTable.create(tmp_path / "a", "skirmish", "standard")
    policy = RandomPolicy(2)
    result = table.play(policy, 60)
    assert result.stopped == "outcome" and result.outcome is not None
    phases = _orders_per_phase(table)
    assert len(phases) == 6 and sum(phases) == len(policy.choices) - 6
    assert len(table.verify()) == 2
    # With bias 1 every phase ends at its first order; without bias the
    # phases last longer (a uniform pick of "end" among 41 groups).
    eager = LocalTable.create(tmp_path / "b", "skirmish", "standard")
    assert eager.play(RandomPolicy(2, end_bias=1.0), 60).stopped == "outcome"
    assert _orders_per_phase(eager) == [0] * 6
    slow = LocalTable.create(tmp_path / "c", "skirmish", "small")
    slow.play(RandomPolicy(2, end_bias=0.0), 60)
    assert sum(_orders_per_phase(slow)) / 4 > sum(phases) / 6


def test_level_sampling_picks_a_group_first() -> None:
    """Two groups, one of 1,000 orders: a uniform pick of an order would
    almost never take the small group; level by level takes it half the time."""
    tree = (OrderGroup("Big", orders=tuple(f"big {i}" for i in range(1000))), OrderGroup("Small", orders=("small",)),
            OrderGroup("Empty"))
    policy = RandomPolicy(5, end_bias=0.0)
    picks = [policy.choose_in_tree(tree) for _ in range(400)]
    assert 150 < picks.count("small") < 250 and all(p is not None for p in picks)
    assert policy.choose_in_tree((OrderGroup("Empty"),)) is None
    nested = (OrderGroup("Units", children=(OrderGroup("A", orders=("move a <1-2>",)),)),
              OrderGroup("End", orders=("end",), ends_step=True))
    ending = RandomPolicy(5, end_bias=1.0)
    assert {ending.choose_in_tree(nested) for _ in range(20)} == {"end"}
    assert RandomPolicy(5, end_bias=0.0).choose_in_tree(nested[:1]) in {"move a 1", "move a 2"}
    with pytest.raises(Exception, match="between 0 and 1"):
        RandomPolicy(1, end_bias=1.5)


class _Wanderer:
    """A policy that ends every step at once, except in event ``at`` (0: the
    genesis), where it never ends a step while another order is left, the
    first ``attempts`` times it plays it."""

    def __init__(self, attempts: int, at: int) -> None:
        self.attempts, self.at, self.made, self.starts = attempts, at, 0, 0

    def __call__(self, turn: Turn) -> list[str] | None:
        wander = False
        if turn.replay.seq == self.at:
            self.starts += self.made % table_module.MAX_TURN_ORDERS == 0
            self.made += 1
            wander = self.starts <= self.attempts
        for group in (g for g in turn.order_tree() if g.ends_step != wander):
            leaves = list(group.leaves())
            if leaves:
                return [leaves[0]]
        return []


@pytest.mark.parametrize("at", [0, 2])
def test_a_turn_that_never_ends_is_taken_back_and_played_again(toys: None, tmp_path: Path, at: int,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A random player can wander without end (a PAA movement phase
    overstacked with free rail moves left, §4, §11.3.1): at MAX_TURN_ORDERS
    orders the table takes the whole turn back and the player plays it again
    (the genesis, and a later turn); after TURN_RETRIES retries it stops and
    says so."""
    monkeypatch.setattr(table_module, "MAX_TURN_ORDERS", 3)
    table = LocalTable.create(tmp_path / "a", "skirmish", "standard")
    wanderer = _Wanderer(attempts=2, at=at)
    table.play(wanderer, 5)
    assert [line.split(": ", 1)[1] for line in table.log[:5]] == ["end"] * 5
    assert wanderer.starts == 3 and wanderer.made == 7  # two turns of 3 moves taken back, then "end"
    assert len(table.verify()) == 2
    monkeypatch.setattr(table_module, "TURN_RETRIES", 2)
    stuck = LocalTable.create(tmp_path / "b", "skirmish", "standard")
    with pytest.raises(table_module.TableError, match=f"played event {at} 3 times, 3 orders each without ending"):
        stuck.play(_Wanderer(attempts=10, at=at), 5)


def test_selfplay_help_states_the_turn_limit() -> None:
    """``pbem selfplay --help`` gives the limit and the retries the table uses."""
    shown = " ".join(CliRunner().invoke(cli, ["selfplay", "--help"]).output.split())
    assert f"reaches {table_module.MAX_TURN_ORDERS} orders is taken back" in shown
    assert f"after {table_module.TURN_RETRIES} such tries" in shown


def test_selfplay_command_takes_the_end_bias(toys: None, tmp_path: Path) -> None:
    run = CliRunner().invoke(cli, ["selfplay", "--rules", "skirmish", "--scenario", "small", "--seed", "4",
                                   "--out", str(tmp_path / "g"), "--end-bias", "1", "--json"])
    assert run.exit_code == 0, run.output
    data = json.loads(run.output)
    assert data["outcome"] and data["end_bias"] == 1.0
    assert [t.split(": ", 1)[1] for t in data["turns"][:4]] == ["end"] * 4


# -- pbem options ------------------------------------------------------------------------

def _seated(tmp_path: Path, rules_id: str, scenario: str, events: int) -> tuple[LocalTable, list[str]]:
    """A game played to ``events`` events, and the arguments of 'pbem options' for who decides now."""
    table = LocalTable.create(tmp_path, rules_id, scenario)
    table.play(RandomPolicy(1, end_bias=1.0), events)
    role = table.replay.pending().role
    secret = tmp_path / "passphrase"
    from pbem.table import THROWAWAY_PASSPHRASE

    secret.write_text(THROWAWAY_PASSPHRASE)
    return table, ["options", "-g", str(tmp_path / role), "-i", str(tmp_path / f"{role}.key"),
                   "--passphrase-file", str(secret)]


def _options(args: list[str], *extra: str, code: int = 0) -> list[str]:
    result = CliRunner().invoke(cli, [*args, *extra])
    assert result.exit_code == code, result.output
    return result.output.splitlines()


def test_options_lists_a_40_unit_phase_by_group(toys: None, tmp_path: Path) -> None:
    table, args = _seated(tmp_path, "skirmish", "standard", 1)
    assert table.replay.pending().role == "north"  # game turn 2: every phase so far ended at once
    replay = table.player("north").seat.replay
    legal = skirmish.RULES.legal_orders(replay.state, "north", replay.ctx("north"))
    summary = _options(args)
    # One line per unit group and "End movement", under a header naming the count.
    assert summary[0].startswith(f"{len(legal)} orders in 41 groups") and len(summary) == 42
    assert summary[1].startswith("Move N01 (infantry, 4 MP, at 0101)") and "e.g. move N01 <hex>" in summary[1]
    assert summary[-1].split() == ["End", "movement", "1", "order", "end", "(ends", "north's", "movement",
                                   "phase", "(SK", "5))"]
    one = _options(args, "--group", "n03")
    assert one[0].startswith("Move N03 (armour, 8 MP") and all(line.strip().startswith("move N03 ") for line in one[1:])
    assert len(one) - 1 == int(one[0].split()[-6])
    every = _options(args, "--all")
    assert sorted(line.strip() for line in every if line.startswith("    ")) == sorted(legal)
    assert sorted(_options(args, "--flat")) == sorted(legal)
    data = json.loads("\n".join(_options(args, "--json")))
    assert sorted(data["orders"]) == sorted(legal) and len(data["groups"]) == 41
    assert data["groups"][-1] == {"label": "End movement", "count": 1, "example": "end", "ends_step": True,
                                  "note": "ends north's movement phase (SK 5)", "orders": ["end"], "groups": []}
    unknown = CliRunner().invoke(cli, [*args, "--group", "Z99"])
    assert unknown.exit_code == 2 and "no group of orders is labelled 'Z99'" in unknown.output


def test_options_of_rules_without_a_tree_are_unchanged_when_short(toys: None, tmp_path: Path) -> None:
    table, args = _seated(tmp_path, "race", "standard", 2)
    seat = table.player(table.replay.pending().role).seat
    from pbem import session

    legal = session.legal_orders(seat)
    assert 0 < len(legal) <= 40
    assert _options(args) == legal == _options(args, "--flat")


def test_a_long_flat_list_is_shown_by_kind_of_order() -> None:
    """Rules without a tree of their own (RitD's 888 deployment orders) are
    summarised by the orders' first words, never dumped whole."""
    from pbem.cli import _group_lines, _kinds

    deploy = [f"deploy {unit} at {place}" for unit in ("Brescia", "Pavia", "Ariete")
              for place in ("Mersa Brega", "El Agheila", "Tobruk")]
    assert [g.label for g in _kinds(deploy)] == ["deploy Brescia", "deploy Pavia", "deploy Ariete"]
    mixed = _kinds(["move a 1", "move b 2", "attack c", "end"])
    assert [(g.label, g.count()) for g in mixed] == [("move", 2), ("attack", 1), ("end", 1)]
    lines = _group_lines(mixed, expand=False)
    assert lines == ["move      2 orders  e.g. move a 1", "attack     1 order  attack c", "end        1 order  end"]
    assert [g.label for g in _kinds(["pass", "pass"])] == ["Orders"]
