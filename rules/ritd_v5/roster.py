"""The roster check: every unit count the rulebook gives, against the data.

The rulebook prints no unit roster, but it does state how many blocks carry
each Month of Appearance code and how many units each scenario deploys and
receives. Those numbers are kept here, each with its rule, as the reference;
the actual numbers are always computed from ``units.toml`` (and, for
scenarios, from ``scenarios.toml`` selections over it). ``pbem`` prints the
report and exits non-zero when any line fails.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from rules.ritd_v5.datafiles import DataError, read_bytes
from rules.ritd_v5.scenarios import FILE as SCENARIOS_FILE
from rules.ritd_v5.scenarios import Scenarios, check_places, load_scenarios_bytes, place_names
from rules.ritd_v5.units import FILE as UNITS_FILE
from rules.ritd_v5.units import Appearance, Roster, Side, load_units_bytes

MAP_FILE = "map.toml"


class CountCheck(msgspec.Struct, frozen=True):
    """One count: what RB says (``expected``) against the data (``actual``)."""

    rule: str
    what: str
    expected: int
    actual: int

    @property
    def ok(self) -> bool:
        return self.expected == self.actual

    def line(self) -> str:
        status = "ok  " if self.ok else "FAIL"
        return f"{status} RB {self.rule}: {self.what}: RB {self.expected}, data {self.actual}"


class _CodeCount(msgspec.Struct, frozen=True):
    rule: str
    side: Side
    codes: tuple[Appearance, ...]
    expected: int
    what: str


# Block counts per Month of Appearance code (public-facts 3.2). "derived"
# rules are arithmetic over stated counts, shown in the text.
CODE_COUNTS: tuple[_CodeCount, ...] = (
    _CodeCount("18.2", "axis", ("S",), 10, 'Axis "S" units (El Agheila, "10 total")'),
    _CodeCount("16.41", "axis", (3,), 4, "Axis Month 3 Reinforcements (Early Arrival Example)"),
    _CodeCount("18.5", "axis", (5, 7), 8, "Axis Months 5 and 7 Reinforcements"),
    _CodeCount("18.2", "axis", (3, 5, 7), 12, "Axis Months 3, 5, 7 Reinforcements"),
    _CodeCount("18.4", "axis", ("S", 3, 5, 7), 22, 'Axis "S" plus Month 3, 5, 7 units'),
    _CodeCount("18.6/18.8", "axis", (17, 19, "M"), 8, 'Axis Months 17, 19 and "M" units'),
    _CodeCount("18.2", "allied", ("S",), 6, 'Allied "S" units'),
    _CodeCount("18.2", "allied", ("T",), 6, 'Allied "T" units (Tobruk)'),
    _CodeCount("16.41", "allied", (2,), 4, "Allied Month 2 Reinforcements (Early Arrival Example)"),
    _CodeCount(
        "derived 18.2-18.5-18.4", "allied", (4,), 4, "Allied Month 4 units (24 - 16 - 4)"
    ),
    _CodeCount(
        "derived 18.5-18.4", "allied", (6, 8), 12, "Allied Months 6 and 8 units (16 - 4)"
    ),
    _CodeCount("18.4", "allied", (10,), 4, "Allied Month 10 Reinforcements"),
    _CodeCount("18.5", "allied", (6, 8, 10), 16, "Allied Months 6, 8, 10 Reinforcements"),
    _CodeCount("18.2", "allied", (2, 4, 6, 8, 10), 24, "Allied Months 2-10 Reinforcements"),
    _CodeCount(
        "derived 18.6-18.8", "allied", (12, 14), 8, "Allied Months 12 and 14 units (24 - 16)"
    ),
    _CodeCount("18.8", "allied", (16, 18, 20), 16, "Allied Months 16, 18, 20 Reinforcements"),
    _CodeCount("18.6", "allied", (12, 14, 16, 18, 20), 24, "Allied Months 12-20 Reinforcements"),
)

# RB 17.0 optional rule "Allied I-Tanks": "all four I-tanks in the game".
I_TANKS = 4


class _GroupCount(msgspec.Struct, frozen=True):
    rule: str
    scenario: str
    side: Side
    group: str
    expected: int


# Starting forces per scenario and group (group ids as in scenarios.toml).
GROUP_COUNTS: tuple[_GroupCount, ...] = (
    _GroupCount("18.1", "1940", "axis", "start", 8),
    _GroupCount("18.1", "1940", "allied", "start", 4),
    _GroupCount("18.2", "1941", "axis", "start", 10),
    _GroupCount("18.2", "1941", "allied", "start", 6),
    _GroupCount("18.2", "1941", "allied", "tobruk", 6),
    _GroupCount("18.3", "1941-42", "axis", "start", 10),
    _GroupCount("18.3", "1941-42", "allied", "start", 6),
    _GroupCount("18.3", "1941-42", "allied", "tobruk", 6),
    _GroupCount("18.4", "crusader", "axis", "start", 22),
    _GroupCount("18.4", "crusader", "allied", "start", 28),
    _GroupCount("18.5", "battleaxe", "axis", "start", 14),
    _GroupCount("18.5", "battleaxe", "allied", "start", 18),
    _GroupCount("18.6", "1942", "axis", "start", 24),
    _GroupCount("18.6", "1942", "allied", "free", 10),
    _GroupCount("18.6", "1942", "allied", "tobruk", 10),
    _GroupCount("18.6", "1942", "allied", "alexandria", 8),
    _GroupCount("18.7", "gazala", "axis", "start", 24),
    _GroupCount("18.7", "gazala", "allied", "line", 20),
    _GroupCount("18.7", "gazala", "allied", "alexandria", 16),
    _GroupCount("18.8", "pursuit", "axis", "start", 22),
    _GroupCount("18.8", "pursuit", "allied", "egypt", 16),
    _GroupCount("18.8", "pursuit", "allied", "alexandria", 12),
    _GroupCount("19.0", "demo", "axis", "bardia", 1),
    _GroupCount("19.0", "demo", "axis", "capuzzo", 4),
    _GroupCount("19.0", "demo", "axis", "sidi-omar", 3),
    _GroupCount("19.0", "demo", "allied", "sollum", 1),
    _GroupCount("19.0", "demo", "allied", "buq-buq", 2),
    _GroupCount("19.0", "demo", "allied", "sofafi", 1),
)


class _ZoneLimit(msgspec.Struct, frozen=True):
    rule: str
    scenario: str
    side: Side
    group: str
    hex: str
    min_units: int
    max_units: int


# Limits on how many units of a group a named hex takes.
ZONE_LIMITS: tuple[_ZoneLimit, ...] = (
    _ZoneLimit("18.4", "crusader", "allied", "start", "Tobruk", 0, 5),
    _ZoneLimit("18.5", "battleaxe", "allied", "start", "Tobruk", 0, 5),
    _ZoneLimit("18.6", "1942", "axis", "start", "El Agheila", 14, 14),
    _ZoneLimit("18.6", "1942", "axis", "start", "Mersa Brega", 10, 10),
)


class _ArrivalCount(msgspec.Struct, frozen=True):
    rule: str
    scenario: str
    side: Side
    months: tuple[int, ...] | None  # None: every month, Malta Group included
    expected: int


# Reinforcements per scenario: totals, and single months RB counts.
ARRIVAL_COUNTS: tuple[_ArrivalCount, ...] = (
    _ArrivalCount("19.0", "1940", "allied", (2,), 2),
    _ArrivalCount("18.2", "1941", "axis", None, 12),
    _ArrivalCount("16.41", "1941", "axis", (3,), 4),
    _ArrivalCount("18.2", "1941", "allied", None, 24),
    _ArrivalCount("16.41", "1941", "allied", (2,), 4),
    _ArrivalCount("18.4", "1941", "allied", (10,), 4),
    _ArrivalCount("18.4", "crusader", "axis", None, 0),
    _ArrivalCount("18.4", "crusader", "allied", None, 4),
    _ArrivalCount("18.5", "battleaxe", "axis", None, 8),
    _ArrivalCount("18.5", "battleaxe", "allied", None, 16),
    _ArrivalCount("18.6", "1942", "axis", None, 8),
    _ArrivalCount("18.6", "1942", "allied", None, 24),
    _ArrivalCount("18.7", "gazala", "axis", None, 0),
    _ArrivalCount("18.7", "gazala", "allied", None, 0),
    _ArrivalCount("18.8", "pursuit", "axis", None, 8),
    _ArrivalCount("18.8", "pursuit", "allied", None, 16),
    _ArrivalCount("19.0", "demo", "allied", (2,), 2),
)


def unit_count_checks(roster: Roster) -> list[CountCheck]:
    """Counts per Month of Appearance code and of I-tanks, from the roster."""
    checks = [
        CountCheck(c.rule, c.what, c.expected, len(roster.with_appearance(c.side, *c.codes)))
        for c in CODE_COUNTS
    ]
    checks.append(
        CountCheck(
            "17.0 optional rule", "Allied I-tanks (1AT, 32AT)", I_TANKS, len(roster.i_tanks())
        )
    )
    return checks


def _zone_bound(scenarios: Scenarios, limit: _ZoneLimit) -> tuple[int, int]:
    scenario = scenarios.get(limit.scenario)
    for group in scenario.side(limit.side).setup:
        if group.id != limit.group:
            continue
        for zone in group.zones:
            if limit.hex in getattr(zone, "hexes", ()):
                top = group.count if zone.max_units is None else zone.max_units
                return zone.min_units, top
    return 0, 0  # no such zone: RB's limit cannot be met


def scenario_count_checks(scenarios: Scenarios) -> list[CountCheck]:
    """Counts per scenario, from scenario selections over the roster."""
    checks: list[CountCheck] = []
    for g in GROUP_COUNTS:
        scenario = scenarios.get(g.scenario)
        what = f"{scenario.name}: {g.side.capitalize()} starting forces, group {g.group!r}"
        try:
            actual = len(scenarios.setup_units(scenario, g.side, g.group))
        except KeyError:
            actual = 0
        checks.append(CountCheck(g.rule, what, g.expected, actual))
    for z in ZONE_LIMITS:
        scenario = scenarios.get(z.scenario)
        low, high = _zone_bound(scenarios, z)
        base = f"{scenario.name}: {z.side.capitalize()} units deployed in {z.hex}"
        if z.min_units:
            checks.append(CountCheck(z.rule, base + " (at least)", z.min_units, low))
        checks.append(CountCheck(z.rule, base + " (at most)", z.max_units, high))
    for a in ARRIVAL_COUNTS:
        scenario = scenarios.get(a.scenario)
        side = scenario.side(a.side)
        if a.months is None:
            months: Sequence[int] = sorted({r.month for r in side.reinforcements})
            label = "all Reinforcements" + (" incl. Malta Group" if side.malta_group else "")
            actual = sum(len(scenarios.reinforcements(scenario, a.side, m)) for m in months)
            if a.side == "axis":
                actual += len(scenarios.malta_group(scenario))
        else:
            label = "Reinforcements in Month " + ", ".join(str(m) for m in a.months)
            actual = sum(len(scenarios.reinforcements(scenario, a.side, m)) for m in a.months)
        what = f"{scenario.name}: {a.side.capitalize()} {label}"
        checks.append(CountCheck(a.rule, what, a.expected, actual))
    return checks


def place_lines(scenarios: Scenarios, map_data: bytes) -> list[str]:
    """One line per scenario place name the map rejects, or one "ok" line."""
    from rules.ritd_v5.hexmap import load_map_bytes  # the map is optional for the counts

    try:
        hexmap = load_map_bytes(map_data)
    except DataError as exc:
        return [f"FAIL {exc}"]
    bad = check_places(scenarios, hexmap)
    if bad:
        return [f"FAIL scenarios.toml: {problem}" for problem in bad]
    total = sum(len(place_names(s)) for s in scenarios)
    return [f"ok   RB 18.0: every scenario place name ({total} references) is on the map"]


def report_for(
    units_data: bytes, scenarios_data: bytes, map_data: bytes | None = None
) -> tuple[list[str], bool]:
    """The roster check over the given file bytes; see ``data_check_report``.

    With ``map_data``, also checks that every scenario place name resolves on
    that map.
    """
    lines: list[str] = []
    try:
        roster = load_units_bytes(units_data)
    except DataError as exc:
        return [f"FAIL {exc}"], False
    checks = unit_count_checks(roster)
    try:
        scenarios = load_scenarios_bytes(scenarios_data, roster)
    except DataError as exc:
        lines.append(f"FAIL {exc}")
    else:
        checks += scenario_count_checks(scenarios)
        if map_data is not None:
            lines += place_lines(scenarios, map_data)
    lines = [c.line() for c in checks] + lines
    return lines, all(c.ok for c in checks) and not any(x.startswith("FAIL") for x in lines)


def data_check_report() -> tuple[list[str], bool]:
    """Every RB unit count against the packaged data, one line each.

    Returns the lines (each starting "ok" or "FAIL" and citing its rule) and
    True when every count matches, both files load and every scenario place
    name resolves on the packaged map. A file that fails to load gives one
    FAIL line with the loader's message.
    """
    return report_for(read_bytes(UNITS_FILE), read_bytes(SCENARIOS_FILE), read_bytes(MAP_FILE))
