"""Reinforcements (RB 16.4-16.41, 16.6 Resupply, 18.6 the Malta Group).

When units arrive (the scenario's schedule, RB 16.4), which may arrive a
Month early (RB 16.41: a hidden slot each, a die of 1-2), where they enter
(the Base, held off the board while it is engaged), and the monthly
Resupply with the Malta Group (RB 16.6, 18.6). Pure functions over the
scenario data and ``Position``; the Buildup steps that call them are in
buildup_orders.py, the order of the steps in month_phase.py and sequence.py.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import msgspec

from pbem.rulesapi import Problem
from rules.ritd.firetable import DIE_FACES
from rules.ritd.hexmap import HexMap
from rules.ritd.position import Block, Position, Side, enemy_of
from rules.ritd.scenarios import Scenario, Scenarios
from rules.ritd.units import Unit

#: RB 16.41: a die of 1-2 brings a unit one month early.
EARLY_ARRIVAL_MAX = 2


def on_schedule(
    scenarios: Scenarios, scenario: Scenario, side: Side, month: int, arrived_early: Collection[str] = ()
) -> tuple[Unit, ...]:
    """RB 16.41: Reinforcements due in ``month`` that did not arrive early
    (``arrived_early``: unit names); they arrive in this Buildup."""
    return tuple(u for u in scenarios.reinforcements(scenario, side, month) if u.name not in arrived_early)


def early_arrival_candidates(scenarios: Scenarios, scenario: Scenario, side: Side, month: int) -> tuple[Unit, ...]:
    """RB 16.41: the units checked for Early Arrival in the Buildup of
    ``month``: those due next month. None in the first Month (no Buildup,
    RB 3.2) nor in the Buildup of the last Month (16.41 sidebar: that would
    change the Victory unit counts; BU-05)."""
    if month <= scenario.start_month or month >= scenario.end_month:
        return ()
    return scenarios.reinforcements(scenario, side, month + 1)


def check_early_arrival_order(candidates: Sequence[Unit], order: Sequence[str]) -> list[Problem]:
    """RB 16.41 "one die for each such unit in turn": the owner's committed
    order (unit names, one per slot) must list every candidate exactly once.
    Checked by the owner and at the audit, when the order is opened."""
    want = sorted(u.name for u in candidates)
    if sorted(order) != want:
        return [Problem("RB 16.41", f"the Early Arrival order must list each of next month's "
                                    f"{len(want)} Reinforcements once, got {list(order)}")]
    return []


def early_arrivals(slots: Sequence[str], dice: Sequence[int]) -> tuple[str, ...]:
    """RB 16.41: one die per hidden slot, in the committed order; the slots
    rolling 1-2 arrive now (their identities stay hidden until opened).

    Raises ValueError unless there is one die (1-6) per slot.
    """
    if len(dice) != len(slots) or any(not 1 <= d <= DIE_FACES for d in dice):
        raise ValueError(f"RB 16.41: one die of 1-{DIE_FACES} per slot: {len(slots)} slots, dice {list(dice)}")
    return tuple(s for s, d in zip(slots, dice) if d <= EARLY_ARRIVAL_MAX)


def is_base_engaged(m: HexMap, pos: Position, side: Side) -> bool:
    """RB 16.4 sidebar: enemy units are in the friendly Base."""
    return bool(pos.blocks_in(m.base(side), enemy_of(side)))


class Arrival(msgspec.Struct, frozen=True):
    """Blocks placed in Base, and those waiting off-board next to an engaged
    Base (RB 16.4 sidebar): one Group, entering by a normal Group Move."""

    pos: Position
    placed: tuple[str, ...] = ()
    waiting: tuple[Block, ...] = ()


def arrive(m: HexMap, pos: Position, side: Side, blocks: Sequence[Block]) -> Arrival:
    """RB 16.4, 16.41, 16.52: Reinforcements (on schedule or early) and
    Refitted units (upright) go into the Base; if the Base is engaged they
    wait off-board (returned in ``waiting``, not in the position)."""
    placed = tuple(msgspec.structs.replace(b, side=side, hex=m.base(side), disrupted=False) for b in blocks)
    if is_base_engaged(m, pos, side):
        return Arrival(pos=pos, waiting=placed)
    out = msgspec.structs.replace(pos, blocks=pos.blocks + placed)
    return Arrival(pos=out, placed=tuple(b.token for b in placed))


def held_off_board(waiting: Mapping[str, tuple[Block, ...]], side: Side,
                   blocks: Sequence[Block]) -> dict[str, tuple[Block, ...]]:
    """RB 16.4 sidebar "Reinforcements to an Engaged Base": ``blocks`` that
    could not arrive (``Arrival.waiting``) join ``side``'s units waiting off
    board near its Base, one Group that enters by Group Move in a later
    Player-Turn (rules.ritd.base_entry)."""
    if not blocks:
        return dict(waiting)
    return {**waiting, side: tuple(waiting.get(side, ())) + tuple(blocks)}


def check_malta_group(scenario: Scenario, month: int, called_in: int | None) -> list[Problem]:
    """RB 18.6, 18.8 (and 18.3 from Month 11): the Axis may call the "M"
    units as optional Reinforcements in any Buildup, once."""
    group = scenario.axis.malta_group
    if group is None:
        return [Problem("RB 18.6", f"the {scenario.name} has no Malta Group")]
    probs = []
    if called_in is not None:
        probs.append(Problem(group.rule, f"the Malta Group already arrived in Month {called_in}"))
    if month < group.first_month:
        probs.append(Problem(group.rule, f"the Malta Group is available from Month {group.first_month} "
                                         f"(this is Month {month})"))
    return probs


def monthly_resupply(scenario: Scenario, side: Side, month: int, malta_called_in: int | None = None) -> int:
    """RB 16.6 Monthly Resupply cards in the Buildup of ``month``: the
    scenario's allotment (RB 18.3: Axis 3 from Month 11 of the campaign);
    from the Buildup the Malta Group arrives on, the Axis gets 2 (RB 18.6,
    18.8 "immediately ... beginning that Buildup")."""
    group = scenario.axis.malta_group
    if side == "axis" and group is not None and malta_called_in is not None and month >= malta_called_in:
        return group.resupply
    return scenario.side(side).resupply_in(month)


