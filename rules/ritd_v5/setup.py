"""Scenario set-up: where each side's starting forces may deploy (RB 18.0, 18.x).

Pure checks over the scenario data and the map. A placement is checked in
two parts, as DESIGN 4 asks: what everybody sees (the hex is inside the
side's deployment area, not occupied by the enemy, the number of blocks) and
what only the owner knows until the block is revealed (the unit belongs to
a group that may deploy in that hex, it is deployed once, at full CV). The
second part is returned separately so the opponent can keep it as a
deferred check.
"""

from __future__ import annotations

from pbem.rulesapi import Problem
from rules.ritd_v5.hexmap import HexMap
from rules.ritd_v5.position import Position, Side
from rules.ritd_v5.scenarios import AreaZone, HexZone, LineZone, Scenario, Scenarios, SetupGroup, Zone
from rules.ritd_v5.units import Unit


def zone_hexes(m: HexMap, zone: Zone) -> frozenset[str]:
    """The hexes a deployment zone covers (RB 18.x wording, resolved on the map)."""
    match zone:
        case AreaZone(areas=areas, except_=except_):
            hexes: frozenset[str] = frozenset().union(*(m.area_hexes(a) for a in areas))
            return hexes - frozenset().union(*(m.area_hexes(e) for e in except_)) if except_ else hexes
        case HexZone(hexes=names):
            return frozenset(m.resolve(n) for n in names)
        case LineZone(map_line=line, seeds=seeds):
            return frozenset().union(*(m.side_of_line(line, m.resolve(s)) for s in seeds))
    raise ValueError(f"unknown zone {zone!r}")


def group_hexes(m: HexMap, group: SetupGroup) -> frozenset[str]:
    """Every hex where units of ``group`` may deploy."""
    return frozenset().union(*(zone_hexes(m, z) for z in group.zones))


def side_hexes(m: HexMap, scenario: Scenario, side: Side) -> frozenset[str]:
    """Every hex where some starting unit of ``side`` may deploy (public)."""
    return frozenset().union(*(group_hexes(m, g) for g in scenario.side(side).setup))


def starting_count(scenario: Scenario, side: Side) -> int:
    """How many blocks ``side`` deploys (public: RB states the counts)."""
    return sum(g.count for g in scenario.side(side).setup)


def groups_of(scenarios: Scenarios, scenario: Scenario, side: Side, unit: Unit) -> list[SetupGroup]:
    return [g for g in scenario.side(side).setup
            if any(u.name == unit.name for u in g.select(scenarios.roster, side))]


def check_public_placement(m: HexMap, scenario: Scenario, side: Side, pos: Position, hex_: str,
                           placed: int) -> list[Problem]:
    """What the opponent can check of one placement (RB 18.0)."""
    rule = f"RB {scenario.rule}"
    problems = []
    if hex_ not in side_hexes(m, scenario, side):
        problems.append(Problem(rule, f"{m.name(hex_)} is not in the {side} deployment area of "
                                      f"{scenario.name}"))
    if pos.control(hex_, side) in ("enemy", "battle"):
        problems.append(Problem("RB 18.0", f"{m.name(hex_)} is occupied by the enemy"))
    total = starting_count(scenario, side)
    if placed >= total:
        problems.append(Problem(rule, f"{side} deploys {total} blocks in {scenario.name}; all are placed"))
    return problems


def check_hidden_placement(m: HexMap, scenarios: Scenarios, scenario: Scenario, side: Side, hex_: str,
                           unit_name: str, cv: int, already: set[str]) -> list[Problem]:
    """What only the owner knows until the block is revealed (RB 18.0, 18.x)."""
    rule = f"RB {scenario.rule}"
    try:
        unit = scenarios.roster.get(unit_name)
    except KeyError:
        return [Problem(rule, f"{unit_name!r} is not a unit of the game")]
    if unit.side != side:
        return [Problem(rule, f"{unit.name} is not on the {side} side")]
    groups = groups_of(scenarios, scenario, side, unit)
    problems = []
    if not groups:
        problems.append(Problem(rule, f"{unit.name} is not among the {side} starting forces of {scenario.name}"))
    elif not any(hex_ in group_hexes(m, g) for g in groups):
        problems.append(Problem(rule, f"{unit.name} may not deploy in {m.name(hex_)} "
                                      f"({'; '.join(g.text for g in groups)})"))
    if unit.name in already:
        problems.append(Problem(rule, f"{unit.name} is deployed twice"))
    if cv != unit.max_cv:
        problems.append(Problem("RB 18.0", f"{unit.name} must begin at its maximum CV {unit.max_cv}, not {cv}"))
    return problems


def check_deployment_complete(m: HexMap, scenario: Scenario, side: Side, pos: Position) -> list[Problem]:
    """Public checks when a side declares its deployment done: every block
    placed, and each zone's stated limits respected (e.g. "up to 5 units in
    Tobruk", RB 18.4)."""
    rule = f"RB {scenario.rule}"
    blocks = list(pos.blocks_of(side))
    problems = []
    total = starting_count(scenario, side)
    if len(blocks) != total:
        problems.append(Problem(rule, f"{side} must deploy {total} blocks in {scenario.name}, "
                                      f"not {len(blocks)}"))
    for group in scenario.side(side).setup:
        for zone in group.zones:
            if zone.max_units is None and not zone.min_units:
                continue
            hexes = zone_hexes(m, zone)
            count = sum(1 for b in blocks if b.hex in hexes)
            if zone.max_units is not None and count > zone.max_units:
                problems.append(Problem(rule, f"at most {zone.max_units} units in {_zone_text(zone)} "
                                              f"({group.text}), not {count}"))
            if count < zone.min_units:
                problems.append(Problem(rule, f"at least {zone.min_units} units in {_zone_text(zone)} "
                                              f"({group.text}), not {count}"))
    return problems


def _zone_text(zone: Zone) -> str:
    match zone:
        case AreaZone(areas=areas):
            return " and ".join(areas)
        case HexZone(hexes=hexes):
            return " and ".join(hexes)
        case LineZone(text=text):
            return text
    return str(zone)
