"""The unit roster of Rommel in the Desert: unit types, blocks, loader.

RB 2.2 fixes what a Unit Type is (an arms Class plus a Speed) and prints the
Unit Types Chart; that chart is code here (``UNIT_TYPES``) because the
rulebook states it. The per-block roster (designation, type, CV levels, elite
flag, Month of Appearance) is not public: it lives in ``data/units.toml``,
where every value the rulebook does not state carries an ``authored:`` source
so that an owner of the physical game can correct it without a code change.

Everything here is pure: the loader reads package data only, through
``rules.ritd.datafiles``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any, Literal, TypeVar

import msgspec

from rules.ritd.datafiles import DataError, from_twin, read_bytes
from rules.ritd.names import close_matches

FILE = "units.toml"

Side = Literal["axis", "allied"]
ArmsClass = Literal["armor", "infantry", "antitank", "artillery"]
UnitTypeId = Literal[
    "recon",
    "armor",
    "mech_inf",
    "mobile_at",
    "sp_artillery",
    "mot_inf",
    "mot_at",
    "infantry",
    "para",
    "artillery",
]
Nationality = Literal[
    "german",
    "italian",
    "british",
    "australian",
    "indian",
    "new_zealand",
    "south_african",
    "free_french",
    "polish",
]
#: Month of Appearance printed on a label (RB 2.0 label key): a month number,
#: "S" (starts the 1941 scenario or campaign), "T" (starts 1941 in Tobruk) or
#: "M" (Malta Group, 1942 scenario).
Appearance = int | Literal["S", "T", "M"]

AXIS_NATIONALITIES: frozenset[str] = frozenset({"german", "italian"})
ARMS_CLASSES: tuple[ArmsClass, ...] = ("armor", "infantry", "antitank", "artillery")
#: Highest month number of any scenario (RB 18.3: the campaign has 20 months).
LAST_MONTH = 20
#: A block has four edges, so a label shows at most four CV levels (RB 2.3).
MAX_STEPS = 4


class UnitType(msgspec.Struct, frozen=True):
    """One row of the RB Unit Types Chart (RB 2.2, 6.1) and its BP cost (16.54)."""

    id: UnitTypeId
    name: str
    arms_class: ArmsClass
    speed: int
    bp_per_cv: int  # RB 16.54 sidebar "BP costs per CV"; elite steps cost double


# RB 2.2 Unit Types Chart. Speeds: recon 4, mechanized 3, motorized 2,
# unmotorized 1. Recon is in the armor-class column (decisions/data.md D-02).
UNIT_TYPES: Mapping[str, UnitType] = MappingProxyType(
    {
        t.id: t
        for t in (
            UnitType("recon", "Recon", "armor", 4, 3),
            UnitType("armor", "Armor", "armor", 3, 3),
            UnitType("mech_inf", "Mechanized Infantry", "infantry", 3, 2),
            UnitType("mobile_at", "Mobile Anti-Tank", "antitank", 3, 3),
            UnitType("sp_artillery", "Self-Propelled Artillery", "artillery", 3, 3),
            UnitType("mot_inf", "Motorized Infantry", "infantry", 2, 2),
            UnitType("mot_at", "Motorized Anti-Tank", "antitank", 2, 3),
            UnitType("infantry", "Infantry", "infantry", 1, 1),
            UnitType("para", "Paratroopers", "infantry", 1, 1),
            UnitType("artillery", "Artillery", "artillery", 1, 3),
        )
    }
)

#: Optional rule "Allied I-Tanks" (RB 17.0 optional rules): I-tanks move at
#: speed 2 instead of 3 and become elite.
I_TANK_OPTIONAL_SPEED = 2
#: Hits that remove one step of an elite unit (RB 2.4, 9.5).
ELITE_HITS_PER_STEP = 2


class Unit(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One block of the roster, as its label describes it.

    ``max_cv`` and ``min_cv`` are the highest and lowest CV printed on the
    label; a step is 2 CV for elite units and 1 CV otherwise (RB 2.3, 2.4).
    """

    name: str
    nationality: Nationality
    type: UnitTypeId
    elite: bool
    max_cv: int
    min_cv: int
    appearance: Appearance
    source: str
    army_tank: bool = False  # one of the four I-tank blocks (RB 17.0 optional rule)
    note: str = ""

    @property
    def side(self) -> Side:
        return "axis" if self.nationality in AXIS_NATIONALITIES else "allied"

    @property
    def unit_type(self) -> UnitType:
        return UNIT_TYPES[self.type]

    @property
    def arms_class(self) -> ArmsClass:
        return UNIT_TYPES[self.type].arms_class

    @property
    def speed(self) -> int:
        """Unit Speed without the I-tank optional rule (RB 6.1)."""
        return UNIT_TYPES[self.type].speed

    @property
    def cv_per_step(self) -> int:
        """CV lost per step: 2 for elite units, 1 otherwise (RB 2.3, 2.4)."""
        return 2 if self.elite else 1

    @property
    def hits_per_step(self) -> int:
        """Hits needed to remove one step: 2 for elite units, 1 otherwise
        (RB 2.4, 9.5). Equal to ``cv_per_step`` except for an I-tank under
        the optional rule (``OptionalITank``)."""
        return ELITE_HITS_PER_STEP if self.elite else 1

    @property
    def steps(self) -> int:
        """Number of CV levels printed on the label."""
        return (self.max_cv - self.min_cv) // self.cv_per_step + 1

    @property
    def cv_levels(self) -> tuple[int, ...]:
        """The label's CV levels, strongest first (e.g. ``(6, 4, 2)``)."""
        return tuple(range(self.max_cv, self.min_cv - 1, -self.cv_per_step))

    @property
    def is_authored(self) -> bool:
        """True when some value of this block is not stated by RB."""
        return "authored" in self.source


class OptionalITank(Unit, frozen=True):
    """An I-tank under the optional rule "Allied I-Tanks" (RB 17.0 optional
    rules): Unit Speed 2 instead of 3, and elite in combat: two hits to
    reduce it one step. Its label is unchanged (four 1-CV steps), so a step
    is still 1 CV, and its Replacements cost as for 1 CV (RB 16.54;
    decisions/combat.md CB-15, CB-17). Built by ``Roster.with_optional_i_tanks``,
    never read from the data."""

    @property
    def speed(self) -> int:
        return I_TANK_OPTIONAL_SPEED

    @property
    def hits_per_step(self) -> int:
        return ELITE_HITS_PER_STEP


class _UnitsFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    unit: list[Unit]


class UnknownUnit(KeyError):
    """A unit name that is not in the roster; carries close matches."""

    def __init__(self, name: str, suggestions: list[str]) -> None:
        self.name = name
        self.suggestions = suggestions
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(f"unknown unit {name!r}{hint}")

    def __str__(self) -> str:
        return str(self.args[0])


def normalize_name(name: str) -> str:
    """The lookup key of a unit name: case and spacing do not matter.

    ``"7/7 Tk"``, ``"7/7Tk"`` and ``"7/7 tk"`` all name the same block.
    """
    return re.sub(r"\s+", "", name).casefold()


class Roster:
    """All blocks of the game, in file order, with lookups by name and label.

    Immutable after construction. Names are unique even after normalization
    (``normalize_name``), so players may type them loosely.
    """

    def __init__(self, units: tuple[Unit, ...]) -> None:
        self._units = units
        self._by_key = MappingProxyType({normalize_name(u.name): u for u in units})
        #: (side, label code) -> the places in the roster of its units (``with_appearance``).
        self._by_appearance: dict[tuple[Side, Appearance], tuple[int, ...]] | None = None

    def __iter__(self) -> Iterator[Unit]:
        return iter(self._units)

    def __len__(self) -> int:
        return len(self._units)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and normalize_name(name) in self._by_key

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._units

    def get(self, name: str) -> Unit:
        """The unit called ``name`` (case and spacing ignored).

        Raises UnknownUnit, with close matches, if there is none.
        """
        unit = self._by_key.get(normalize_name(name))
        if unit is None:
            raise UnknownUnit(name, [u.name for u in close_matches(normalize_name(name), self._by_key, 3)])
        return unit

    def side(self, side: Side) -> tuple[Unit, ...]:
        return tuple(u for u in self._units if u.side == side)

    def with_appearance(self, side: Side, *codes: Appearance) -> tuple[Unit, ...]:
        """The ``side``'s blocks whose label carries one of ``codes``, in roster
        order. From an index by side and code built on first use: the scenario
        checks select by code about 200 times, at every start."""
        index = self._by_appearance
        if index is None:
            found: dict[tuple[Side, Appearance], list[int]] = {}
            for place, u in enumerate(self._units):
                found.setdefault((u.side, u.appearance), []).append(place)
            index = self._by_appearance = {key: tuple(places) for key, places in found.items()}
        places = sorted({place for code in set(codes) for place in index.get((side, code), ())})
        return tuple(self._units[place] for place in places)

    def i_tanks(self) -> tuple[Unit, ...]:
        """The Army Tank (I-tank) blocks (RB 17.0 optional rule "Allied I-Tanks")."""
        return tuple(u for u in self._units if u.army_tank)

    def with_optional_i_tanks(self) -> Roster:
        """The roster under the optional rule "Allied I-Tanks" (RB 17.0): the
        four I-tanks become ``OptionalITank``; every other unit is unchanged."""
        return Roster(tuple(OptionalITank(**msgspec.structs.asdict(u)) if u.army_tank else u
                            for u in self._units))


S = TypeVar("S")


def decode_named(
    file: str, data: bytes, type_: type[S], list_key: str, name_keys: tuple[str, ...]
) -> S:
    """Decode TOML ``data`` into ``type_``, naming the entry in any error.

    Like ``datafiles.decode`` (the file's decoded twin when it was made from
    exactly these bytes), but when msgspec reports a path such as
    ``$.unit[12].max_cv`` the DataError also names that entry, e.g.
    ``unit "21Pz/5"``, from its ``name_keys`` fields (joined by " -> ").
    """
    fast = from_twin(file, data, type_)  # the same values, without parsing TOML (datafiles)
    if fast is not None:
        return fast
    try:
        return msgspec.toml.decode(data, type=type_)
    except msgspec.DecodeError as exc:
        if not isinstance(exc, msgspec.ValidationError):
            raise DataError(file, "", f"not valid TOML: {exc}") from None
        message = str(exc)
        where = ""
        match = re.search(rf"\$\.{re.escape(list_key)}\[(\d+)\]", message)
        if match:
            where = f"{list_key} #{int(match.group(1)) + 1}"
            try:
                raw: Any = msgspec.toml.decode(data)
                entry = raw[list_key][int(match.group(1))]
                names = [entry.get(k) for k in name_keys] if isinstance(entry, dict) else []
                if names and all(isinstance(n, str) for n in names):
                    where = f'{list_key} "{" -> ".join(str(n) for n in names)}"'
            except (msgspec.DecodeError, LookupError, TypeError):
                pass
        raise DataError(file, where, f"invalid entry: {message}") from None


def _check_unit(unit: Unit) -> list[str]:
    """Every problem with one unit's own values, as phrases."""
    problems: list[str] = []
    if not unit.name.strip() or unit.name != unit.name.strip():
        problems.append("name must be non-empty without leading or trailing spaces")
    cv_step = unit.cv_per_step
    if unit.min_cv < 1:
        problems.append(f"min_cv {unit.min_cv} must be at least 1")
    if unit.max_cv < unit.min_cv:
        problems.append(f"max_cv {unit.max_cv} is below min_cv {unit.min_cv}")
    elif (unit.max_cv - unit.min_cv) % cv_step:
        problems.append(
            f"max_cv {unit.max_cv} and min_cv {unit.min_cv} differ by a part step "
            f"(a step is {cv_step} CV for {'elite' if unit.elite else 'normal'} units, RB 2.3)"
        )
    elif unit.steps > MAX_STEPS:
        problems.append(
            f"max_cv {unit.max_cv} exceeds {MAX_STEPS} steps from min_cv {unit.min_cv} "
            f"({unit.steps} CV levels; a label has {MAX_STEPS} edges, RB 2.3)"
        )
    if unit.nationality == "german" and not unit.elite:
        problems.append("German units are all elite (RB 2.4)")
    if unit.nationality == "italian" and unit.elite:
        problems.append("Italian units are never elite (RB 2.4)")
    if unit.side == "allied" and unit.elite and unit.type != "armor":
        problems.append(f"only Allied tank units may be elite (RB 2.4), not type {unit.type!r}")
    if unit.army_tank:
        if unit.side != "allied" or unit.type != "armor":
            problems.append("army_tank (I-tank) units are Allied armor (RB 17.0 optional rule)")
        if unit.elite:
            problems.append("I-tanks are elite only under the optional rule (RB 17.0)")
    if isinstance(unit.appearance, int):
        if not 1 <= unit.appearance <= LAST_MONTH:
            problems.append(f"appearance month {unit.appearance} is outside 1..{LAST_MONTH}")
    elif unit.appearance == "T" and unit.side != "allied":
        problems.append('appearance "T" (starts in Tobruk) is an Allied code (RB 2.0)')
    elif unit.appearance == "M" and unit.side != "axis":
        problems.append('appearance "M" (Malta Group) is an Axis code (RB 18.6)')
    if not (unit.source.startswith("RB ") or unit.source.startswith("authored:")):
        problems.append('source must start with "RB " or "authored:" and give the basis')
    return problems


def load_units_bytes(data: bytes) -> Roster:
    """Parse and validate a units file's bytes.

    Raises DataError naming the unit and the first problem found with it
    (e.g. ``units.toml: unit "21Pz/5": max_cv 10 exceeds 4 steps ...``).
    """
    decoded = decode_named(FILE, data, _UnitsFile, "unit", ("name",))
    if not decoded.unit:
        raise DataError(FILE, "", "the roster has no units")
    seen: dict[str, str] = {}
    for unit in decoded.unit:
        problems = _check_unit(unit)
        if problems:
            raise DataError(FILE, f'unit "{unit.name}"', "; ".join(problems))
        key = normalize_name(unit.name)
        if key in seen:
            raise DataError(
                FILE,
                f'unit "{unit.name}"',
                f'duplicate name (same as unit "{seen[key]}" ignoring case and spaces)',
            )
        seen[key] = unit.name
    return Roster(tuple(decoded.unit))


@functools.cache
def load_units() -> Roster:
    """The game's roster, from the packaged ``units.toml`` (cached)."""
    return load_units_bytes(read_bytes(FILE))
