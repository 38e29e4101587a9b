"""Helpers shared by the movement tests (no tests of its own)."""

from __future__ import annotations

from collections.abc import Iterable

from pbem.rulesapi import Problem
from rules.ritd import movement as mv
from rules.ritd.hexmap import HexMap, load_map
from rules.ritd.position import Block, Position, Side

MAP: HexMap = load_map()


def at(text: str) -> str:
    return MAP.resolve(text)


def block(token: str, side: Side, where: str, **kw: object) -> Block:
    return Block(token=token, side=side, hex=at(where), **kw)  # type: ignore[arg-type]


def position(*blocks: Block, fortresses: dict[str, Side] | None = None) -> Position:
    return Position(blocks=tuple(blocks), fortresses={at(k): v for k, v in (fortresses or {}).items()})


def route(*names: str) -> tuple[str, ...]:
    return tuple(at(n) for n in names)


def rules_of(problems: Iterable[Problem]) -> list[str]:
    return [p.rule for p in problems]


def group(origin: str, *moves: tuple[str, tuple[str, ...]], **kw: object) -> mv.Move:
    return mv.Move("group", at(origin), tuple(mv.UnitMove(t, p) for t, p in moves), **kw)  # type: ignore[arg-type]


def regroup(cp: str, dest: str, *moves: tuple[str, tuple[str, ...]], **kw: object) -> mv.Move:
    return mv.Move("regroup", at(cp), tuple(mv.UnitMove(t, p) for t, p in moves),  # type: ignore[arg-type]
                   destination=at(dest), **kw)


def step(pos: Position, turn: mv.MovementTurn, move: mv.Move, speeds: dict[str, int | None]
         ) -> mv.MoveOutcome:
    """Check then apply; fail loudly on any problem."""
    check = mv.check_move(MAP, pos, turn, move, speeds)
    assert check.problems == (), [str(p) for p in check.problems]
    return mv.apply_move(MAP, pos, turn, move)
