"""§11.4 Overrun (with §11.1.6 capture of lone enemy supply installations).

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
An overrun needs no die: the ΔCF must guarantee the elimination of the whole
defending stack of regular units (Table 9's column minimum); the defender may
then counter-attack at ΔCF 0.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import msgspec

from pbem.rulesapi import Problem
from rules.paa.combat import Attacker, attack_column, cf_differential, column_minimum
from rules.paa.mapview import MapView
from rules.paa.movement import path_cost
from rules.paa.tables import CAPTURE_OTHERWISE, CAPTURE_TURN_1_BY_AXIS, FORT_DF, OVERRUN_MF
from rules.paa.units import Faction, Piece


class OverrunCheck(msgspec.Struct, frozen=True):
    """The outcome an overrun would have: ``problems`` (empty when legal),
    the ΔCF, the loss it guarantees, the loss needed, and the defending
    regular and transport units eliminated."""

    problems: tuple[Problem, ...]
    delta: str
    guaranteed: int
    required: int
    eliminated: tuple[str, ...]


def required_loss(defenders: Sequence[Piece]) -> int:
    """§11.4, §12.4.5: the nominal CF of the defending regular units; a lone
    transport unit defends with CF 1. Transport units stacked with regular
    units are eliminated automatically and not counted."""
    regular = [p for p in defenders if p.is_regular]
    if regular:
        return sum(p.cf for p in regular)
    return 1 if any(p.kind == "transport" for p in defenders) else 0


def overrun_check(
    board: MapView,
    stack: Sequence[Attacker],
    from_hex: str,
    target: str,
    defenders: Sequence[Piece],
    *,
    started_together: bool,
    ezoc_sources: Collection[str],
    mf_left: dict[str, int] | None = None,
    overrun_mf: int = OVERRUN_MF,
) -> OverrunCheck:
    """§11.4: whether ``stack`` (units with their supply state as they enter
    the hex) may overrun ``target`` from the adjacent ``from_hex``.
    ``defenders``: the enemy pieces in ``target`` with their supply state as at
    the start of the movement phase; ``started_together``: every unit of the
    stack began the movement phase in one stack; ``ezoc_sources``: the enemy
    hexes whose ZOC covers ``from_hex``; ``mf_left``: MF each unit has left
    (checks the normal cost + 10)."""
    out: list[Problem] = []
    if not stack:
        out.append(Problem("§11.4", "an overrun needs a stack of regular units"))
    if not started_together:
        out.append(Problem("§11.4", "only units that started the movement phase together as a stack may overrun; other stacks may not join or assist"))
    for a in stack:
        p = a.piece
        if p.hex != from_hex:
            out.append(Problem("§11.4", f"{p.id} is not in {from_hex} with the overrunning stack"))
        if not p.is_regular:
            out.append(Problem("§11.4", f"{p.id} is not a regular unit"))
        if p.oos or p.dismounted or a.supply == "OOS":
            out.append(Problem("§11.4", f"{p.id} is not in supply; only in-supply units overrun"))
        if p.ooc2:
            out.append(Problem("§10.3", f"{p.id} is out of C² and may not move"))
        if a.supply == "MAS":
            out.append(Problem("§11.4", "maximum attack supply may not be used in an overrun"))
    if target in FORT_DF or target in board.forts:
        out.append(Problem("§11.4", f"units in the fortified hex {target} cannot be overrun"))
    if target not in board.neighbours(from_hex):
        out.append(Problem("§11.4", f"{target} is not adjacent to {from_hex}"))
    elif board.side(from_hex, target).prohibited:
        out.append(Problem("Table 1", f"no movement across the prohibited hexside {from_hex}-{target}"))
    if len(set(ezoc_sources)) > 1:
        out.append(Problem("§11.4", f"{from_hex} is in enemy ZOC from {len(set(ezoc_sources))} hexes ({', '.join(sorted(ezoc_sources))}); no overrun from there"))
    if mf_left is not None and target in board.neighbours(from_hex):
        for a in stack:
            base = path_cost(board, (from_hex, target), mover="regular")
            need = None if base is None else base + overrun_mf
            have = mf_left.get(a.piece.id, 0)
            if need is not None and need > have:
                out.append(Problem("§11.4", f"{a.piece.id} needs {need} MF to overrun {target} (+{overrun_mf}) but has {have}"))
    enemy_units = [p for p in defenders if p.kind in ("infantry", "armoured", "transport")]
    if not enemy_units:
        out.append(Problem("§11.4", f"{target} holds no enemy regular or transport units to overrun (a lone installation is captured, §11.1.6)"))
    required = required_loss(defenders)
    regular = [p for p in defenders if p.is_regular]
    delta = cf_differential(board, stack, regular or enemy_units) if stack and enemy_units else None
    guaranteed = 0
    if delta is not None:
        if delta < 0:
            out.append(Problem("§11.4", f"ΔCF {delta} cannot guarantee any loss"))
        else:
            guaranteed = column_minimum(attack_column(delta))
            if guaranteed < required:
                out.append(Problem("§11.4", f"ΔCF {delta} guarantees a loss of {guaranteed} CF, less than the {required} CF of the defending stack"))
    return OverrunCheck(
        problems=tuple(out),
        delta=str(delta) if delta is not None else "",
        guaranteed=guaranteed,
        required=required,
        eliminated=tuple(sorted(p.id for p in enemy_units)),
    )


def overrun_counter_attack_column() -> int:
    """§11.4: the defending stack can counter-attack with ΔCF = 0."""
    return 0


def captured(die: int, *, capturer: Faction, turn: int) -> bool:
    """§11.1.6, Table 8 (R-04): whether a lone enemy installation entered (or
    one in an overrun hex) is captured (else eliminated). In every case the
    enemy installation goes back to its OOB."""
    if not 1 <= die <= 6:
        raise ValueError(f"Table 8: a die shows 1-6, not {die}")
    table = CAPTURE_TURN_1_BY_AXIS if (turn == 1 and capturer == "axis") else CAPTURE_OTHERWISE
    return die in table
