"""The scenarios of Rommel in the Desert (RB 18.1-18.8, 19.0) as validated data.

``data/scenarios.toml`` holds, per scenario: months (start, length, end), each
side's initial supply and resupply, starting forces (which blocks, how many,
where they deploy), reinforcements by month, the Malta Group and the special
rules; plus the supply deck (RB Introduction, 16.6), the month calendars and
the victory levels (RB 17.0).

Unit lists are selections over the roster: by Month of Appearance code, as RB
words them ("all S units"), or by name where RB's list is missing and the
list is authored. Every RB-stated count is stored with the group and checked
against the roster on load. Place names (areas, hexes, set-up lines) are kept
in structured fields so that the map can resolve them (``place_names``); the
loader itself does not read the map.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Literal, Protocol

import msgspec

from rules.ritd.datafiles import DataError, read_bytes
from rules.ritd.units import (
    LAST_MONTH,
    Appearance,
    Nationality,
    Roster,
    Side,
    Unit,
    UnknownUnit,
    decode_named,
    load_units,
)

if TYPE_CHECKING:
    from fractions import Fraction

FILE = "scenarios.toml"
SIDES: tuple[Side, ...] = ("axis", "allied")
MONTH_ABBR = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


class _Struct(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    pass


# --- file-level data ------------------------------------------------------


class SupplyDeck(_Struct, frozen=True):
    """The Supply Card deck shared by both players (RB Introduction, 16.6)."""

    real: int
    dummy: int
    hand_limit: int
    source: str

    @property
    def total(self) -> int:
        return self.real + self.dummy


class Calendar(_Struct, frozen=True):
    """Month numbering: Month 1 is ``month``/``year`` (e.g. Apr 1941)."""

    id: str
    year: int
    month: int
    source: str


class VictoryLevel(_Struct, frozen=True):
    """One level of victory (RB 17.1-17.4); a higher level overrules lower ones."""

    id: Literal["strategic", "decisive", "positional", "attrition"]
    vp: int
    rule: str
    text: str


class Victory(_Struct, frozen=True):
    """RB 17.0: the victory levels that apply to all scenarios, highest first."""

    levels: list[VictoryLevel]
    strategic_exit_units: int  # RB 17.1: exit the enemy map-end with 3+ Supplied units
    decisive_ratio: int  # RB 17.2: twice as many units
    german_unit_value_num: int  # RB 17.2, 17.4: German units count 1.5 (= 3/2)
    german_unit_value_den: int

    @property
    def german_unit_value(self) -> Fraction:
        from fractions import Fraction  # here: only the victory check (RB 17) needs it, not a cold show

        return Fraction(self.german_unit_value_num, self.german_unit_value_den)


# --- deployment zones -----------------------------------------------------


class AreaZone(_Struct, frozen=True, tag="area", tag_field="kind"):
    """Free Deployment in the named areas or hexes, minus ``except`` (RB 18.0)."""

    areas: list[str]
    except_: list[str] = msgspec.field(default_factory=list, name="except")
    min_units: int = 0
    max_units: int | None = None


class HexZone(_Struct, frozen=True, tag="hexes", tag_field="kind"):
    """Deployment in named hexes (e.g. "Tobruk", "El Agheila")."""

    hexes: list[str]
    min_units: int = 0
    max_units: int | None = None


class LineZone(_Struct, frozen=True, tag="line", tag_field="kind"):
    """Free Deployment on or to one ``side`` of a set-up line (RB 18.7).

    ``line`` lists the line's named places in order; ``text`` keeps RB's
    wording, which also names the roads between them. ``map_line`` is the
    map's name for the whole line, hex by hex, and ``seeds`` places on the
    deploying side: the zone is the line plus every hex on the side of any
    seed (``HexMap.side_of_line``), since the coast may cut that side in two.
    """

    line: list[str]
    side: Literal["east", "west"]
    map_line: str
    seeds: list[str]
    text: str
    min_units: int = 0
    max_units: int | None = None


Zone = AreaZone | HexZone | LineZone


PlaceKind = Literal["area", "hex", "line"]


def zone_places(zone: Zone) -> list[tuple[PlaceKind, str]]:
    """Every (kind, name) a zone refers to, in order: "area" names are
    countries or places (``HexMap.area_hexes``), "hex" names are locations
    (``HexMap.resolve``), "line" names are map set-up lines (``HexMap.line``).
    """
    if isinstance(zone, AreaZone):
        return [("area", name) for name in [*zone.areas, *zone.except_]]
    if isinstance(zone, HexZone):
        return [("hex", name) for name in zone.hexes]
    return [*(("hex", name) for name in zone.line), *(("hex", seed) for seed in zone.seeds), ("line", zone.map_line)]


# --- unit selections --------------------------------------------------------


def _select(
    roster: Roster,
    side: Side,
    appearance: Sequence[Appearance],
    units: Sequence[str],
    except_: Sequence[str],
) -> tuple[Unit, ...]:
    """Units of ``side`` with one of the ``appearance`` codes, plus ``units``
    by name, minus ``except_``; roster order, then listed order.

    Raises UnknownUnit for a name not in the roster.
    """
    chosen = list(roster.with_appearance(side, *appearance))
    for name in units:
        chosen.append(roster.get(name))
    dropped = {roster.get(name).name for name in except_}
    return tuple(u for u in chosen if u.name not in dropped)


class SetupGroup(_Struct, frozen=True):
    """Starting forces: which units, how many (RB), where they deploy."""

    id: str
    rule: str
    text: str  # RB's wording
    count: int  # the number of units RB states
    zones: list[Zone]
    appearance: list[Appearance] = msgspec.field(default_factory=list)
    units: list[str] = msgspec.field(default_factory=list)
    except_: list[str] = msgspec.field(default_factory=list, name="except")
    nationality: Nationality | None = None  # RB states every unit is of it
    source: str = ""  # basis of an authored unit list

    def select(self, roster: Roster, side: Side) -> tuple[Unit, ...]:
        """The units of this group. Raises UnknownUnit for an unknown name."""
        return _select(roster, side, self.appearance, self.units, self.except_)


class Reinforcement(_Struct, frozen=True):
    """Units due in the Buildup of ``month`` (RB 16.4)."""

    month: int
    appearance: list[Appearance] = msgspec.field(default_factory=list)
    units: list[str] = msgspec.field(default_factory=list)
    count: int | None = None  # only where RB states the number
    rule: str = ""
    source: str = ""

    def select(self, roster: Roster, side: Side) -> tuple[Unit, ...]:
        return _select(roster, side, self.appearance, self.units, ())


class MaltaGroup(_Struct, frozen=True):
    """Optional Axis reinforcements: may arrive in any Buildup from
    ``first_month``; from that Buildup on, Axis Resupply is ``resupply``
    (RB 18.6, 18.8)."""

    appearance: list[Appearance]
    first_month: int
    resupply: int
    rule: str
    text: str

    def select(self, roster: Roster, side: Side) -> tuple[Unit, ...]:
        return _select(roster, side, self.appearance, (), ())


class ResupplyChange(_Struct, frozen=True):
    """From the Buildup of ``month`` on, Resupply is ``cards`` per month."""

    month: int
    cards: int
    rule: str


class SideSetup(_Struct, frozen=True):
    """One side's part of a scenario."""

    initial_supply: int
    resupply: int
    setup: list[SetupGroup]
    reinforcements: list[Reinforcement] = msgspec.field(default_factory=list)
    reinforcements_total: int | None = None  # RB's stated total, Malta Group included
    reinforcements_rule: str = ""
    resupply_changes: list[ResupplyChange] = msgspec.field(default_factory=list)
    malta_group: MaltaGroup | None = None

    def resupply_in(self, month: int) -> int:
        """Cards dealt in the Buildup of ``month`` without the Malta Group."""
        cards = self.resupply
        for change in sorted(self.resupply_changes, key=lambda c: c.month):
            if month >= change.month:
                cards = change.cards
        return cards


# --- special rules ----------------------------------------------------------


class Minefield(_Struct, frozen=True):
    side: Side
    hex: str
    rule: str


class PregameBuildup(_Struct, frozen=True):
    """RB 18.7: a Buildup before initial deployment with fixed BPs, no dice."""

    bp: int
    first: Side
    rule: str
    text: str


class Note(_Struct, frozen=True):
    rule: str
    text: str


class Special(_Struct, frozen=True):
    """Scenario special rules; defaults are the general rules (RB 18.0)."""

    first_player: Side = "axis"  # RB 18.0; Crusader: the Allies (18.4 rule 1)
    rommel_bonus: bool = True  # RB 6.3; not in 1940 (18.1 rule 1)
    bp_dice: int = 2  # RB 16.3; one die each in 1940 (18.1 rule 2)
    appearance_codes_apply: bool = True  # not in 1940 (18.1)
    minefields: list[Minefield] = msgspec.field(default_factory=list)
    pregame_buildup: PregameBuildup | None = None
    notes: list[Note] = msgspec.field(default_factory=list)
    #: RB 13.1: initial Fortress control follows the deployment areas of this
    #: scenario instead (the Demo is the 1940 scenario with a fixed deployment).
    control_as: str = ""


class Scenario(_Struct, frozen=True):
    id: str
    rule: str
    name: str
    calendar: str
    start_month: int
    length: int
    end_month: int
    start_text: str  # RB's wording, e.g. "Nov. 1941"
    end_text: str
    time: str
    axis: SideSetup
    allied: SideSetup
    special: Special = msgspec.field(default_factory=Special)
    victory: Literal["standard"] = "standard"  # RB 17.0 applies to all scenarios

    def side(self, side: Side) -> SideSetup:
        return self.axis if side == "axis" else self.allied


class _ScenariosFile(_Struct, frozen=True):
    supply_deck: SupplyDeck
    calendar: list[Calendar]
    victory: Victory
    scenario: list[Scenario]


class Scenarios:
    """All validated scenarios, with the roster they were checked against."""

    def __init__(self, file: _ScenariosFile, roster: Roster) -> None:
        self._file = file
        self._roster = roster
        self._by_id = {s.id: s for s in file.scenario}
        self._calendars = {c.id: c for c in file.calendar}

    def __iter__(self) -> Iterator[Scenario]:
        return iter(self._file.scenario)

    def __len__(self) -> int:
        return len(self._file.scenario)

    @property
    def roster(self) -> Roster:
        return self._roster

    @property
    def supply_deck(self) -> SupplyDeck:
        return self._file.supply_deck

    @property
    def victory(self) -> Victory:
        return self._file.victory

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._by_id)

    def get(self, scenario_id: str) -> Scenario:
        """The scenario with this id. Raises KeyError listing the known ids."""
        try:
            return self._by_id[scenario_id]
        except KeyError:
            raise KeyError(
                f"unknown scenario {scenario_id!r}; known: {', '.join(self._by_id)}"
            ) from None

    def calendar(self, scenario: Scenario) -> Calendar:
        return self._calendars[scenario.calendar]

    def month_label(self, scenario: Scenario, month: int) -> str:
        """The calendar name of ``month`` in ``scenario``, e.g. "Nov 1942"."""
        return month_label(self.calendar(scenario), month)

    def setup_units(self, scenario: Scenario, side: Side, group_id: str) -> tuple[Unit, ...]:
        """The units of starting-forces group ``group_id``. Raises KeyError."""
        for group in scenario.side(side).setup:
            if group.id == group_id:
                return group.select(self._roster, side)
        raise KeyError(f"scenario {scenario.id!r} has no {side} group {group_id!r}")

    def starting_units(self, scenario: Scenario, side: Side) -> tuple[Unit, ...]:
        """Every starting unit of ``side``, group by group."""
        return tuple(
            u for g in scenario.side(side).setup for u in g.select(self._roster, side)
        )

    def reinforcements(self, scenario: Scenario, side: Side, month: int) -> tuple[Unit, ...]:
        """The units scheduled to arrive in the Buildup of ``month`` (RB 16.4)."""
        return tuple(
            u
            for r in scenario.side(side).reinforcements
            if r.month == month
            for u in r.select(self._roster, side)
        )

    def malta_group(self, scenario: Scenario) -> tuple[Unit, ...]:
        group = scenario.axis.malta_group
        return group.select(self._roster, "axis") if group else ()


def month_label(calendar: Calendar, month: int) -> str:
    """The calendar name of game month ``month``, e.g. "Apr 1941" for 1."""
    index = calendar.month - 1 + month - 1
    return f"{MONTH_ABBR[index % 12]} {calendar.year + index // 12}"


class PlaceRef(msgspec.Struct, frozen=True):
    """One place name a scenario uses: where, what kind, the name."""

    where: str
    kind: PlaceKind
    name: str


class PlaceResolver(Protocol):
    """What ``check_places`` needs of the map (``rules.ritd.hexmap.HexMap``)."""

    def resolve(self, text: str) -> str: ...

    def area_hexes(self, text: str) -> frozenset[str]: ...

    def line(self, name: str) -> object: ...


def place_names(scenario: Scenario) -> list[PlaceRef]:
    """Every place name the scenario refers to, for map validation."""
    found: list[PlaceRef] = []
    for side in SIDES:
        for group in scenario.side(side).setup:
            for zone in group.zones:
                for kind, name in zone_places(zone):
                    where = f"scenario {scenario.id!r} {side} group {group.id!r}"
                    found.append(PlaceRef(where, kind, name))
    for mine in scenario.special.minefields:
        found.append(PlaceRef(f"scenario {scenario.id!r} minefield", "hex", mine.hex))
    return found


def check_places(scenarios: Scenarios, map_: PlaceResolver) -> list[str]:
    """Every place reference the map rejects, as "where: error" messages.

    Areas are resolved with ``map_.area_hexes``, hexes with ``map_.resolve``
    and set-up lines with ``map_.line``; any exception counts as a rejection.
    """
    lookups: dict[str, Callable[[str], object]] = {
        "area": map_.area_hexes,
        "hex": map_.resolve,
        "line": map_.line,
    }
    bad: list[str] = []
    for scenario in scenarios:
        for ref in place_names(scenario):
            try:
                lookups[ref.kind](ref.name)
            except Exception as exc:  # the map's own error types are its business
                bad.append(f"{ref.where}: {ref.kind} {ref.name!r}: {exc}")
    return bad


# --- validation -------------------------------------------------------------


def _fail(where: str, problem: str) -> DataError:
    return DataError(FILE, where, problem)


def _check_months(s: Scenario, where: str) -> None:
    if not 1 <= s.start_month <= LAST_MONTH:
        raise _fail(where, f"start_month {s.start_month} is outside 1..{LAST_MONTH}")
    if s.length < 1:
        raise _fail(where, f"length {s.length} must be at least 1 month")
    if s.end_month != s.start_month + s.length - 1:
        raise _fail(
            where,
            f"end_month {s.end_month} does not follow from start_month "
            f"{s.start_month} and length {s.length}",
        )
    if s.end_month > LAST_MONTH:
        raise _fail(where, f"end_month {s.end_month} is after Month {LAST_MONTH}")


def _in_play(s: Scenario, month: int) -> bool:
    """Months with a Buildup: every month after the first (RB 16.0)."""
    return s.start_month < month <= s.end_month


def _selection(where: str, select: Callable[[], tuple[Unit, ...]]) -> tuple[Unit, ...]:
    try:
        return select()
    except UnknownUnit as exc:
        raise _fail(where, str(exc)) from None


def _check_side(roster: Roster, s: Scenario, side: Side) -> None:
    data = s.side(side)
    base = f"scenario {s.id!r} {side}"
    if data.initial_supply < 0 or data.resupply < 0:
        raise _fail(base, "supply card numbers must not be negative")
    placed: dict[str, str] = {}

    def claim(units: tuple[Unit, ...], where: str) -> None:
        for u in units:
            if u.side != side:
                raise _fail(where, f'unit "{u.name}" is {u.side}, not {side}')
            if u.name in placed:
                raise _fail(where, f'unit "{u.name}" is already in {placed[u.name]}')
            placed[u.name] = where.removeprefix(base + " ")

    def check_codes(codes: Sequence[Appearance], where: str) -> None:
        for code in codes:
            if not roster.with_appearance(side, code):
                raise _fail(where, f"no {side} unit carries appearance {code!r}")

    group_ids: set[str] = set()
    for group in data.setup:
        where = f"{base} group {group.id!r}"
        if group.id in group_ids:
            raise _fail(where, "duplicate group id")
        group_ids.add(group.id)
        check_codes(group.appearance, where)
        units = _selection(where, functools.partial(group.select, roster, side))
        by_code = {u.name for u in roster.with_appearance(side, *group.appearance)}
        for name in group.except_:
            if roster.get(name).name not in by_code:
                raise _fail(
                    where, f'except lists "{name}", which the appearance codes do not select'
                )
        if len(units) != group.count:
            raise _fail(
                where,
                f"selects {len(units)} units but RB {group.rule} gives {group.count}",
            )
        if s.special.appearance_codes_apply:
            for u in units:
                if isinstance(u.appearance, int) and u.appearance > s.start_month:
                    raise _fail(
                        where,
                        f'unit "{u.name}" carries Month {u.appearance} on its label, '
                        f"after the start (Month {s.start_month})",
                    )
        if group.nationality is not None:
            for u in units:
                if u.nationality != group.nationality:
                    raise _fail(
                        where, f'unit "{u.name}" is {u.nationality}, not {group.nationality}'
                    )
        if not group.zones:
            raise _fail(where, "no deployment zone")
        bounded = True
        total_min = total_max = 0
        for zone in group.zones:
            primary = (
                zone.areas
                if isinstance(zone, AreaZone)
                else zone.hexes
                if isinstance(zone, HexZone)
                else zone.line
            )
            if not primary:
                raise _fail(where, f"a {type(zone).__name__} names no place")
            top = zone.max_units
            if zone.min_units < 0 or (top is not None and top < zone.min_units):
                raise _fail(where, "zone min_units/max_units are inconsistent")
            total_min += zone.min_units
            if zone.max_units is None:
                bounded = False
            else:
                total_max += zone.max_units
        if total_min > group.count or (bounded and total_max < group.count):
            raise _fail(where, f"the zones cannot hold exactly {group.count} units")
        claim(units, where)

    arriving = 0
    for r in data.reinforcements:
        where = f"{base} reinforcements month {r.month}"
        if not _in_play(s, r.month):
            raise _fail(
                where,
                f"month {r.month} has no Buildup in Months {s.start_month}-{s.end_month} "
                "(none in the first month, RB 16.0)",
            )
        check_codes(r.appearance, where)
        units = _selection(where, functools.partial(r.select, roster, side))
        if not units:
            raise _fail(where, "selects no units")
        if r.count is not None and len(units) != r.count:
            raise _fail(where, f"selects {len(units)} units but RB {r.rule} gives {r.count}")
        if s.special.appearance_codes_apply:
            for u in units:
                if isinstance(u.appearance, int) and u.appearance != r.month:
                    raise _fail(
                        where, f'unit "{u.name}" carries Month {u.appearance} on its label'
                    )
        claim(units, where)
        arriving += len(units)

    if data.malta_group is not None:
        where = f"{base} malta_group"
        if side != "axis":
            raise _fail(where, "the Malta Group is Axis (RB 18.6)")
        if not _in_play(s, data.malta_group.first_month):
            raise _fail(where, f"first_month {data.malta_group.first_month} has no Buildup")
        check_codes(data.malta_group.appearance, where)
        units = data.malta_group.select(roster, side)
        claim(units, where)
        arriving += len(units)

    if data.reinforcements_total is not None and arriving != data.reinforcements_total:
        raise _fail(
            f"{base} reinforcements",
            f"{arriving} units arrive but RB {data.reinforcements_rule} gives "
            f"{data.reinforcements_total}",
        )
    for change in data.resupply_changes:
        if not _in_play(s, change.month):
            raise _fail(f"{base} resupply_changes", f"month {change.month} has no Buildup")


def _check_scenario(roster: Roster, s: Scenario, calendars: set[str]) -> None:
    where = f"scenario {s.id!r}"
    if s.calendar not in calendars:
        raise _fail(where, f"unknown calendar {s.calendar!r}")
    _check_months(s, where)
    if s.special.bp_dice not in (1, 2):
        raise _fail(where, f"bp_dice {s.special.bp_dice} is not 1 or 2 (RB 16.3)")
    for side in SIDES:
        _check_side(roster, s, side)
    if s.special.pregame_buildup is not None and s.special.pregame_buildup.bp < 0:
        raise _fail(where, "pregame_buildup bp must not be negative")


def load_scenarios_bytes(data: bytes, roster: Roster | None = None) -> Scenarios:
    """Parse and validate a scenarios file's bytes against ``roster``.

    ``roster`` defaults to the packaged roster. Raises DataError naming the
    scenario, side and group of the first problem, e.g.
    ``scenarios.toml: scenario 'crusader' allied group 'start': selects 29
    units but RB 18.4 gives 28``.
    """
    roster = load_units() if roster is None else roster
    decoded = decode_named(FILE, data, _ScenariosFile, "scenario", ("id",))
    deck = decoded.supply_deck
    if deck.real < 1 or deck.dummy < 0 or deck.real != 2 * deck.dummy:
        raise _fail(
            "supply_deck",
            f"{deck.real} real and {deck.dummy} dummy cards: RB (Introduction) says "
            "two-thirds of the cards are real",
        )
    if deck.hand_limit < 1:
        raise _fail("supply_deck", "hand_limit must be positive (RB 16.6)")
    calendars: set[str] = set()
    for cal in decoded.calendar:
        if cal.id in calendars:
            raise _fail(f"calendar {cal.id!r}", "duplicate calendar id")
        if not 1 <= cal.month <= 12:
            raise _fail(f"calendar {cal.id!r}", f"month {cal.month} is not 1..12")
        calendars.add(cal.id)
    levels = [lv.id for lv in decoded.victory.levels]
    if len(set(levels)) != len(levels):
        raise _fail("victory", "a victory level is listed twice")
    if decoded.victory.german_unit_value_den < 1:
        raise _fail("victory", "german_unit_value_den must be positive")
    ids: set[str] = set()
    for s in decoded.scenario:
        if s.id in ids:
            raise _fail(f"scenario {s.id!r}", "duplicate scenario id")
        ids.add(s.id)
        _check_scenario(roster, s, calendars)
    return Scenarios(decoded, roster)


@functools.cache
def load_scenarios() -> Scenarios:
    """The game's scenarios, from the packaged ``scenarios.toml`` (cached)."""
    return load_scenarios_bytes(read_bytes(FILE), load_units())
