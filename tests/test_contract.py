"""Invariants every rules module and the engine keep together (STYLE 9, 10),
checked on the race test game by random legal self-play."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbem import rulesapi
from pbem.game import AUDIT, Replay
from tests.race import rules as race
from tests.selfplay import SelfPlay


def _no_floats(t) -> bool:
    info = msgspec.inspect.type_info(t)
    seen: list = []

    def walk(node) -> bool:
        if id(node) in seen:
            return True
        seen.append(id(node))
        if isinstance(node, msgspec.inspect.FloatType):
            return False
        for attr in ("types", "fields", "item_type", "key_type", "value_type", "item_types"):
            child = getattr(node, attr, None)
            if child is None:
                continue
            children = child if isinstance(child, (list, tuple)) else [child]
            for c in children:
                c = getattr(c, "type", c)
                if not walk(c):
                    return False
        if isinstance(node, msgspec.inspect.StructType):
            return all(walk(f.type) for f in node.fields)
        return True

    return walk(info)


@pytest.mark.parametrize("rules_id", ["race"])
def test_rules_module_provides_the_interface_and_integer_only_actions(rules_id):
    module = rulesapi.load(rules_id)
    assert rulesapi.missing_parts(module) == []
    assert len(module.SPEC.roles) == 2 and module.SPEC.scenarios
    assert _no_floats(module.action_type), "DESIGN 3: integers only, no floats anywhere in the log"


@given(st.integers(0, 2**32))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_legal_self_play_never_fails_and_always_ends(seed):
    game = SelfPlay("sprint", seed)
    for _ in range(400):
        if game.replay.outcome() is not None:
            break
        game.step()
    assert game.replay.outcome() is not None
    # every side's replay, the public one and the audit agree on the public facts
    public = Replay(race.RULES)
    for stored in game.events:
        public.apply_stored(stored)
    for role in ("red", "blue"):
        mine = game.owner_view(role)
        assert mine.head == public.head
        assert [r.pos for r in mine.state.runners.values()] == [r.pos for r in public.state.runners.values()]
    audit = Replay(race.RULES, role=AUDIT, known={**game.vaults["red"].known_values(),
                                           **game.vaults["blue"].known_values()})
    for stored in game.events:
        audit.apply_stored(stored)
    assert audit.outcome() == public.outcome()


@given(st.integers(0, 2**32))
@settings(max_examples=10, deadline=None)
def test_everything_legal_actions_lists_passes_check(seed):
    game = SelfPlay("standard", seed)
    for _ in range(30):
        if game.replay.outcome() is not None:
            break
        decision = game.replay.pending()
        if decision.kind not in (race.DICE, "setup"):
            mine = game.owner_view(decision.role)
            ctx = mine.ctx(decision.role)
            for action in race.legal_actions(mine.state, decision.role, ctx):
                if not isinstance(action, (race.Setup, race.Reveal)):
                    assert race.check(mine.state, action, ctx) == []
        game.step()
