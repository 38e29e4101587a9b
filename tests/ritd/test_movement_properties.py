"""Invariants of movement on random positions (STYLE 9): no move goes
farther than speed and bonuses allow; ``reachable`` and ``check_move``
agree in both directions."""

from __future__ import annotations

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules.ritd import movement as mv
from rules.ritd import reachability
from rules.ritd.position import Battle, Block, Position, Side
from tests.ritd.movement_support import MAP

# The frontier and the Egyptian coast: roads of all three kinds, gaps, a ridge.
AREA = sorted(h for h in MAP.playable_hexes() if 10 <= MAP.hex(h).col <= 18 and MAP.hex(h).row <= 9)
SIDES: tuple[Side, Side] = ("axis", "allied")


@st.composite
def situations(draw: st.DrawFn) -> tuple[Position, mv.MovementTurn, str, int, bool, tuple[str, ...]]:
    n = draw(st.integers(min_value=1, max_value=9))
    blocks = []
    for i in range(n):
        side = draw(st.sampled_from(SIDES))
        blocks.append(Block(token=f"b{i}", side=side, hex=draw(st.sampled_from(AREA)),
                            disrupted=draw(st.booleans()) and i > 0))
    mover = Block(token="m", side="axis", hex=draw(st.sampled_from(AREA)))
    blocks.append(mover)
    pos = Position(blocks=tuple(blocks))
    battles = []
    engagements = []
    for h in sorted({b.hex for b in blocks}):
        if {b.side for b in pos.blocks_in(h)} == {"axis", "allied"}:
            attacker = draw(st.sampled_from(SIDES))
            nbrs = [n for _, n in MAP.neighbours(h) if MAP.is_passable(h, n)]
            claimed = draw(st.lists(st.sampled_from(nbrs), max_size=3, unique=True)) if nbrs else []
            battles.append(Battle(h, attacker, {c: draw(st.sampled_from(SIDES)) for c in claimed}))
            for c in claimed:
                for k in range(draw(st.integers(min_value=0, max_value=2))):
                    engagements.append(mv.Engagement(f"old{h}{c}{k}", c, h))
    pos = pos.with_battles(battles)
    turn = mv.start_movement(pos, "axis", rommel_bonus=True)
    turn = msgspec.structs.replace(turn, engagements=tuple(engagements))
    speed = draw(st.integers(min_value=1, max_value=4))
    rommel = draw(st.booleans())
    # A random walk over passable hexsides, 1-10 steps.
    path = [mover.hex]
    for _ in range(draw(st.integers(min_value=1, max_value=10))):
        options = [n for n in MAP.passable_neighbours(path[-1]) if n not in path]
        if not options:
            break
        path.append(draw(st.sampled_from(sorted(options))))
    return pos, turn, "m", speed, rommel, tuple(path)


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(situations())
def test_a_unit_never_ends_farther_than_its_speed_and_bonuses_allow(sit) -> None:  # type: ignore[no-untyped-def]
    pos, turn, token, speed, rommel, path = sit
    if len(path) < 2:
        return
    move = mv.Move("group", path[0], (mv.UnitMove(token, path),), rommel=rommel)
    if not mv.check_move(MAP, pos, turn, move, {token: speed}).ok:
        return
    bonus = mv.road_bonus(MAP, path, retreat=bool(pos.blocks_in(path[0], "allied")))
    assert len(path) - 1 <= speed + bonus + (1 if rommel else 0)
    assert MAP.distance(path[0], path[-1]) <= speed + 4 + (1 if rommel else 0)
    if MAP.worst_road(path) is None:
        assert len(path) - 1 <= speed + (1 if rommel else 0)


@SETTINGS
@given(situations())
def test_every_destination_check_accepts_is_reachable(sit) -> None:  # type: ignore[no-untyped-def]
    pos, turn, token, speed, rommel, path = sit
    if len(path) < 2:
        return
    move = mv.Move("group", path[0], (mv.UnitMove(token, path),), rommel=rommel)
    if mv.check_move(MAP, pos, turn, move, {token: speed}).ok:
        assert path[-1] in reachability.reachable(MAP, pos, turn, token, speed, rommel=rommel).paths


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(situations())
def test_every_destination_reachable_lists_passes_the_check(sit) -> None:  # type: ignore[no-untyped-def]
    pos, turn, token, speed, rommel, _ = sit
    reach = reachability.reachable(MAP, pos, turn, token, speed, rommel=rommel)
    for dest, path in reach.paths.items():
        assert path[-1] == dest
        move = mv.Move("group", path[0], (mv.UnitMove(token, path),), rommel=rommel)
        check = mv.check_move(MAP, pos, turn, move, {token: speed})
        assert check.ok, [str(p) for p in check.problems]


@SETTINGS
@given(situations())
def test_unknown_speed_check_agrees_with_the_fastest_and_gives_the_minimum(sit) -> None:  # type: ignore[no-untyped-def]
    pos, turn, token, speed, rommel, path = sit
    if len(path) < 2:
        return
    move = mv.Move("group", path[0], (mv.UnitMove(token, path),), rommel=rommel)
    hidden = mv.check_move(MAP, pos, turn, move, {token: None})
    assert hidden.ok == mv.check_move(MAP, pos, turn, move, {token: mv.MAX_SPEED}).ok
    if hidden.ok:
        need = max([o.min_speed for o in hidden.obligations], default=mv.MIN_SPEED)
        assert mv.check_move(MAP, pos, turn, move, {token: need}).ok
        if need > mv.MIN_SPEED:
            assert not mv.check_move(MAP, pos, turn, move, {token: need - 1}).ok
