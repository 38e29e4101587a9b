"""The types a RitD game's log and state are made of (issue 29: mutation
score): every Struct an action or the state holds is immutable, and every
Struct an action holds is decoded strictly.

DESIGN ("initial_state ... -> State (frozen Structs)", STYLE 3): the state is
folded over the log by pure transitions, so no part of it may be changed in
place. docs/protocol.md ("decoded strictly (unknown fields rejected)"): an
event's actions have exactly one valid encoding, so each action type, and
every Struct inside one, refuses unknown fields."""

from __future__ import annotations

import msgspec
import msgspec.inspect as mi
import pytest

from rules.ritd import game as ritd
from rules.ritd import mines
from rules.ritd.movement import Move, UnitMove


def _structs(*roots: object) -> dict[type, mi.StructType]:
    seen: dict[type, mi.StructType] = {}

    def walk(t: mi.Type) -> None:
        if isinstance(t, mi.StructType):
            if t.cls in seen:
                return
            seen[t.cls] = t
            for f in t.fields:
                walk(f.type)
        for attr in ("item_type", "key_type", "value_type"):
            if hasattr(t, attr):
                walk(getattr(t, attr))
        for attr in ("item_types", "types"):
            for sub in getattr(t, attr, ()):
                walk(sub)

    for info in mi.multi_type_info(roots):
        walk(info)
    return seen


STATE_TYPES = _structs(ritd.State)
ACTION_TYPES = _structs(ritd.Action)


def test_the_walk_reaches_the_types_of_every_rules_module() -> None:
    modules = {c.__module__ for c in {**STATE_TYPES, **ACTION_TYPES}}
    for name in ("state", "actions", "position", "turn", "movement_types", "routs", "combat_round", "fire", "losses", "fortresses", "cards", "buildup", "mines",
                 "victory", "hidden"):
        assert f"rules.ritd.{name}" in modules, name


@pytest.mark.parametrize("cls", sorted({**STATE_TYPES, **ACTION_TYPES}, key=lambda c: f"{c.__module__}.{c.__name__}"),
                         ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_every_struct_in_the_state_or_an_action_is_frozen(cls: type) -> None:
    assert cls.__struct_config__.frozen, f"{cls.__module__}.{cls.__name__} can be changed in place"


@pytest.mark.parametrize("cls", sorted(ACTION_TYPES, key=lambda c: f"{c.__module__}.{c.__name__}"),
                         ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_every_struct_in_an_action_refuses_unknown_fields(cls: type) -> None:
    assert cls.__struct_config__.forbid_unknown_fields, f"{cls.__module__}.{cls.__name__} accepts unknown fields"


def test_an_action_with_an_unknown_field_is_refused_when_decoded() -> None:
    """The same, seen from the wire: a Move (RB 5.1) with a field no version
    defines does not decode."""
    move = Move("group", "1505", (UnitMove("d", ("1505", "1605")),))
    good = msgspec.json.encode(move)
    assert msgspec.json.decode(good, type=ritd.Action) == move
    bad = good[:-1] + b',"zz":1}'
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        msgspec.json.decode(bad, type=ritd.Action)


def test_a_minefield_record_is_immutable_and_hashable() -> None:
    build = mines.MineBuild(side="axis", number=1, month=3, free=False, network=(), engaged=())
    with pytest.raises(AttributeError):
        build.number = 2  # type: ignore[misc]
    assert build in {build}
