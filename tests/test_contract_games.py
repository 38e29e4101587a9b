"""The contract suite (issue 18 point 6, STYLE 10): every registered game
passes the same checks. A game installed under the ``pbem.rules`` entry
point joins automatically; the race test game is registered here.

Each game is played through the real engine (LocalTable: signed turn files
between two game directories), by its demo script where it has one, else
by random legal orders, for a bounded number of events; then:

- replay determinism: two public replays end at the same head and state;
- views leak nothing: what a side's view shows is the same whether the
  state was folded with that side's secrets only or with every secret (the
  audit), and the public view the same from the public replay and the audit;
- happenings leak nothing: what the rules say happened for a reader (a side
  or the public) at each action, roll and opening is the same from that
  reader's own fold and from the audit's, so it never says a hidden value;
- check-then-apply: every legal order listed at a decision goes through
  the engine's draft path (parse, its commitments and openings, ``check``,
  ``apply``) as ``pbem do`` takes it;
- parse/format: an order the rules list parses to an action that survives
  the wire's canonical encoding, and a formatted action that parses again
  gives the same action;
- every scenario initialises, shows its views, and lists orders at its
  first decision that parse;
- the replay cache restores the state a full replay builds;
- order trees (issue 26 point 6): where a game lists its orders as a tree
  of its own, the tree's leaves are exactly its ``legal_orders``, at the
  first decision of every scenario and where the played game stopped.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from pbem import codec, rulesapi, session
from pbem.deck import DECK
from pbem.game import AUDIT, Replay
from pbem.rulesapi import DICE, Rules
from pbem.table import LocalTable, RandomPolicy, demo_policy, expand_order_templates
from tests import hilltop
from tests.race import rules as race
from tests.skirmish import rules as skirmish
from tests.test_dice_batch import Volley
from tests.test_sealed_orders import Ambush

#: The engine's test games: the race (hidden speeds, secret dice, a Merkle
#: set), Volley (open information, a 200-die batch with purposes) and Ambush
#: (a sealed policy opened by the dice answer, players deciding in turn
#: inside one phase, the answerer's own decision after the roll) and
#: Skirmish (open information, 40 units a side on a hex map, its orders
#: listed as a tree of unit groups).
TOYS = (race.RULES, Volley(), Ambush(), skirmish.RULES)


def _register_toys() -> None:
    for toy in TOYS:
        rulesapi.register(toy)  # other tests' fixtures may have unregistered one


#: And Hilltop (combats as tables, a hidden reserve revealed by the dice
#: answer: the happenings of issue 26 point 7).
TOYS += (hilltop.RULES,)
_register_toys()
GAMES = sorted(set(rulesapi.available()) | {t.SPEC.id for t in TOYS})
#: Events each game plays here (a RitD event can cost a second of rules work).
EVENTS = {"race": 40, "ritd": 14, "ritd@3": 14, "ritd@4": 14, "ritd@5": 14, "skirmish": 3, "paa": 9}  # skirmish: stops with north to move
SAMPLE = 40


def _encode(value: Any) -> bytes:
    return msgspec.msgpack.encode(value)


class _Blind:
    """A Ctx that knows nothing but who acts: what any player could check
    before a single secret exists."""

    def __init__(self, role: str) -> None:
        self.role, self.author, self.seq = role, role, 1

    def value(self, label: str) -> bytes | None:
        return None

    def committed(self, label: str) -> bool:
        return False

    def opened(self, label: str) -> bool:
        return False

    def leaf(self, label: str, key: str) -> bytes | None:
        return None

    def leaves(self, label: str, keys: Iterable[str]) -> list[bytes | None]:
        return [None for _ in keys]

    def card(self, rnd: str, pos: int) -> str | None:
        return None

    def fresh(self) -> bytes:
        return bytes(16)


@pytest.fixture(scope="module", params=GAMES)
def played(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> LocalTable:
    rules_id = request.param
    _register_toys()
    rules = rulesapi.load(rules_id)
    demo = rules.demo
    scenario = demo.scenario if demo is not None else rules.SPEC.scenarios[0]
    table = LocalTable.create(tmp_path_factory.mktemp(rules_id), rules_id, scenario,
                              demo.options if demo is not None else ())
    policy = demo_policy(rules) if demo is not None else RandomPolicy(1)
    table.play(policy, EVENTS.get(rules_id, 20))
    return table


def _events(table: LocalTable) -> list[bytes]:
    return table.players[0].gd.read_events()


def _known(table: LocalTable) -> dict[str, dict[str, bytes]]:
    out = {}
    for p in table.players:
        assert p.seat is not None
        out[p.role] = dict(p.seat.vault.known_values())
    return out


def _fold(rules: Rules[Any, Any, Any], events: list[bytes], role: str | None = None,
          known: dict[str, bytes] | None = None) -> Replay:
    r = Replay(rules, role=role, known=known or {})
    for stored in events:
        r.apply_stored(stored)
    return r


def test_the_game_is_an_instance_of_the_contract(played: LocalTable) -> None:
    rules = played.rules
    assert isinstance(rules, Rules)
    assert rulesapi.missing_parts(rules) == []
    assert len(rules.SPEC.roles) == 2 and rules.SPEC.scenarios
    # The engine's deck messages travel beside the game's actions: no tag clash.
    from pbem.game import _action_decoder

    _action_decoder(rules.action_type)


def test_replay_is_deterministic(played: LocalTable) -> None:
    events = _events(played)
    assert len(events) >= 2
    a, b = _fold(played.rules, events), _fold(played.rules, events)
    assert a.head == b.head and _encode(a.state) == _encode(b.state)
    assert [i.actions for i in a.history] == [i.actions for i in b.history]


def test_views_leak_nothing(played: LocalTable) -> None:
    """A side's view depends only on what that side knows: folding with
    every secret (the audit) shows it nothing more, at every prefix."""
    rules, events, known = played.rules, _events(played), _known(played)
    everything = {k: v for side in known.values() for k, v in side.items()}
    public = Replay(rules)
    audit = Replay(rules, role=AUDIT, known=everything)
    sides = {role: Replay(rules, role=role, known=known[role]) for role in known}
    for stored in events:
        for r in (public, audit, *sides.values()):
            r.apply_stored(stored)
        assert _encode(rules.view(audit.state, None)) == _encode(rules.view(public.state, None)), public.seq
        for role, mine in sides.items():
            assert _encode(rules.view(audit.state, role)) == _encode(rules.view(mine.state, role)), (role, mine.seq)
            # What is public is the same in every fold: a side's own secrets
            # change neither the public view nor who decides next (else the
            # two players' replays could disagree on what is legal).
            assert _encode(rules.view(mine.state, None)) == _encode(rules.view(public.state, None)), (role, mine.seq)
            assert rules.pending(mine.state) == rules.pending(public.state), (role, mine.seq)


class _Said:
    """A copy of ``rules`` whose ``happenings`` hook also records, at every
    step of a fold, what the rules say for each reader (every role and the
    public) from that fold's states: ``said[reader]`` lists them in order."""

    def __init__(self, rules: Rules[Any, Any, Any]) -> None:
        self.rules = copy.copy(rules)
        self.said: dict[str | None, list[Any]] = {r: [] for r in (*rules.SPEC.roles, None)}
        hook = rules.happenings

        def happenings(before: Any, after: Any, step: Any, role: str | None) -> tuple[Any, ...]:
            for reader, out in self.said.items():
                out.append((step.kind, _encode(hook(before, after, step, reader))))
            return hook(before, after, step, role)

        self.rules.happenings = happenings  # type: ignore[method-assign]


def happenings_by_reader(rules: Rules[Any, Any, Any], events: list[bytes],
                         known: dict[str, dict[str, bytes]]) -> list[tuple[str | None, list[Any], list[Any]]]:
    """For each reader (every role, and None for the public): what the rules
    say happened at each step when folded with that reader's own knowledge,
    and what they say for that reader from the audit's fold (every secret)."""
    everything = {k: v for side in known.values() for k, v in side.items()}
    audit = _Said(rules)
    _fold(audit.rules, events, AUDIT, everything)
    out = []
    for reader in (*rules.SPEC.roles, None):
        own = _Said(rules)
        _fold(own.rules, events, reader, known.get(reader or "", {}))
        out.append((reader, own.said[reader], audit.said[reader]))
    return out


def test_happenings_leak_nothing(played: LocalTable) -> None:
    """A happening for a reader never says what that reader's view hides:
    from the audit's fold (every secret known) the rules say, for each
    reader, exactly what they say from that reader's own fold, step by step."""
    rules = played.rules
    for reader, own, from_audit in happenings_by_reader(rules, _events(played), _known(played)):
        assert len(own) == len(from_audit)
        for n, (mine, everything) in enumerate(zip(own, from_audit, strict=True)):
            assert mine == everything, (reader, n, mine, everything)


def test_everything_listed_passes_check_and_apply(played: LocalTable) -> None:
    rules = played.rules
    for player in played.players:
        assert player.seat is not None
        replay = player.seat.replay
        decision = replay.pending()
        if decision is None or decision.role != player.role or decision.kind in (DICE, DECK):
            continue
        ctx = replay.ctx(player.role)
        orders = rules.legal_orders(replay.state, player.role, ctx)
        assert orders, "a decision with no legal order"
        # Each listed order goes through the engine's draft path (parse, the
        # openings it makes, check, apply) as 'pbem do' takes it.
        orders = expand_order_templates(orders)
        for text in random.Random(0).sample(orders, min(SAMPLE, len(orders))):
            session.parse_orders(rules, replay, player.role, player.seat.vault, [], [text])


def test_orders_parse_to_canonical_actions_and_formats_parse_back(played: LocalTable) -> None:
    rules = played.rules
    checked = 0
    for player in played.players:
        assert player.seat is not None
        replay = player.seat.replay
        decision = replay.pending()
        if decision is None or decision.role != player.role or decision.kind in (DICE, DECK):
            continue
        ctx = replay.ctx(player.role)
        compose = session._ComposeCtx(ctx)
        orders = expand_order_templates(rules.legal_orders(replay.state, player.role, ctx))
        for text in random.Random(0).sample(orders, min(SAMPLE, len(orders))):
            action = rules.parse_order(replay.state, player.role, text, compose).action
            wire = codec.canonical(action)
            assert msgspec.json.decode(wire, type=rules.action_type) == action
            shown = rules.format_action(action)
            assert shown
            try:
                again = rules.parse_order(replay.state, player.role, shown, compose).action
            except ValueError:
                continue  # a public form that names hidden things by token is not an order
            assert again == action, (text, shown)
            checked += 1
    assert checked or played.replay.outcome() is not None or played.replay.pending() is None \
        or played.replay.pending().kind in (DICE, DECK)


@pytest.mark.parametrize("rules_id", GAMES)
def test_every_scenario_initialises_and_lists_its_first_orders(rules_id: str) -> None:
    _register_toys()
    rules = rulesapi.load(rules_id)
    for scenario in rules.SPEC.scenarios:
        state = rules.initial_state(scenario, ())
        decision = rules.pending(state)
        assert decision is not None and decision.role in rules.SPEC.roles, scenario
        rules.view(state, None)
        for role in rules.SPEC.roles:
            rules.render_text(rules.view(state, role))
        if decision.kind in (DICE, DECK):
            continue
        orders = expand_order_templates(rules.legal_orders(state, decision.role, _Blind(decision.role)))
        assert orders, scenario
        for text in random.Random(1).sample(orders, min(10, len(orders))):
            rules.parse_order(state, decision.role, text, _Blind(decision.role))
        _check_tree(rules, state, decision.role, _Blind(decision.role))


def _check_tree(rules: Rules[Any, Any, Any], state: Any, role: str, ctx: Any) -> None:
    """A game's own order tree holds exactly its legal orders, each once, in
    groups with a label; a group's example is one of its orders or a
    format (it has a "<"). Games without a tree of their own are left out:
    the default tree is ``legal_orders`` itself."""
    if not rulesapi.provides_order_tree(rules):
        return
    tree = rules.order_tree(state, role, ctx)
    leaves = rulesapi.tree_leaves(tree)
    legal = rules.legal_orders(state, role, ctx)
    assert Counter(leaves) == Counter(legal), (sorted(set(leaves) ^ set(legal))[:10])
    stack = list(tree)
    while stack:
        group = stack.pop()
        assert group.label
        assert not group.example or "<" in group.example or group.example in set(group.leaves()), group.example
        assert group.count() == len(list(group.leaves()))
        stack += group.groups()


def test_the_order_tree_holds_the_legal_orders_where_play_stopped(played: LocalTable) -> None:
    for player in played.players:
        assert player.seat is not None
        replay = player.seat.replay
        decision = replay.pending()
        if decision is None or decision.role != player.role or decision.kind in (DICE, DECK):
            continue
        _check_tree(played.rules, replay.state, player.role, replay.ctx(player.role))


def test_the_replay_cache_restores_the_full_replay(played: LocalTable, tmp_path: Path) -> None:
    from pbem import snapshot

    player = played.players[0]
    assert player.seat is not None
    seat = player.seat
    full = _fold(played.rules, _events(played), seat.role, dict(seat.vault.known_values()))
    with player.gd.lock(exclusive=True):
        snapshot.save(player.gd, full, seat.identity)
        restored = session.load_seat(player.gd, seat.identity)
    assert restored.replay.head == full.head
    assert _encode(restored.replay.state) == _encode(full.state)


def test_a_game_under_construction_names_what_it_lacks() -> None:
    """A registered game that does not yet provide every required hook is
    refused by ``load`` with the list, and calling a missing hook is a
    RulesError naming it (never a silent default)."""
    from pbem.errors import NotFound
    from pbem.rulesapi import RulesError, Spec

    class Sketch(Rules):
        SPEC = Spec(id="sketch", version="0", title="Sketch", roles=("a", "b"), scenarios=("s",))

        def initial_state(self, scenario: str, options: tuple[str, ...]) -> Any:
            return {}

    rulesapi.register(Sketch())
    try:
        assert "check" in rulesapi.missing_parts(Sketch()) and "initial_state" not in rulesapi.missing_parts(Sketch())
        with pytest.raises(NotFound, match="cannot host games yet: it does not provide action_type, state_type"):
            rulesapi.load("sketch")
        with pytest.raises(RulesError, match="rules Sketch do not provide check, a required hook"):
            Sketch().check({}, None, _Blind("a"))
    finally:
        rulesapi.unregister("sketch")
