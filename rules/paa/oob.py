"""Panzerarmee Afrika counters and Orders of Battle, read from
``rules/paa/data/units.toml`` and ``rules/paa/data/oob.toml``.

The text has neither (§2.2, §2.3; §13.1-13.2 are lost): both files are
authored, every group and schedule with its source or reasoning, and this
module checks them and serves them to the rules: the units (§2.3.1) with
their nominal CF and MF, set-up or arrival turn or option letter, the Allied
reinforcement counters (§13.4), the transports and supply installations
(§2.3.2), and the per-turn schedule: reinforcements, withdrawals (§13.2.3),
reinstatements (§13.2.4), RP income (§13.3.1), reinforcement caps (§13.4),
optional reinforcements (§13.5, Table 11).

It reads package data only (importlib.resources), never a game file.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
import tomllib
from collections.abc import Mapping
from typing import Any, Literal

import msgspec

Faction = Literal["axis", "allied"]
Kind = Literal["infantry", "armour", "transport", "installation"]

#: Table 2 nations (the examples write BR for Table 2's UK).
NATIONS: dict[str, Faction] = {
    "DE": "axis", "IT": "axis",
    "BR": "allied", "UK": "allied", "IN": "allied", "US": "allied", "AU": "allied", "NZ": "allied",
    "SA": "allied", "FR": "allied", "PL": "allied", "GK": "allied", "BE": "allied",
}
#: Type codes of unit ids -> (NATO type, §2.3.1 category). Table 3: infantry,
#: motorised and airborne are Infantry; mechanised, reconnaissance and armoured are Armoured.
TYPE_CODES: dict[str, tuple[str, Kind]] = {
    "I": ("infantry", "infantry"),
    "MI": ("motorised", "infantry"),
    "P": ("airborne", "infantry"),
    "AI": ("mechanised", "armour"),
    "AREC": ("recon", "armour"),
    "A": ("armour", "armour"),
}
ECHELONS = ("BN", "REGT", "BDE")
POOLS = ("allied_infantry", "allied_armour", "de_infantry", "de_armour", "it_infantry", "it_armour")
ALLIED_OPTIONS = ("A", "B", "C", "D", "E")
AXIS_OPTIONS = ("F", "G", "H", "J", "K", "L", "M")
MaltaResult = Literal["none", "success", "failure"]

_ID = re.compile(r"^([A-Z]{2}) ([A-Z0-9]+(?:/[A-Z0-9]+)*)$")


class OobDataError(ValueError):
    """units.toml or oob.toml is malformed; the message names the entry."""

    def __init__(self, file: str, where: str, problem: str) -> None:
        super().__init__(f"{file}: {where}: {problem}")


class Unit(msgspec.Struct, frozen=True):
    """One unit (or logistics counter) of the game."""

    id: str  # as the text names it, e.g. "DE 104/IREGT"
    nation: str  # Table 2
    faction: Faction
    kind: Kind  # §2.3.1 category (infantry / armour) or §2.3.2 logistics
    echelon: str  # "BN", "REGT", "BDE"; "" for logistics
    cf: int  # front (nominal) CF; the back shows half (§12.4.5)
    mf: int
    setup: str | None  # set-up hex or base name ("El Agheila", "Alexandria")
    arrival: int | None  # turn of arrival as a scheduled reinforcement
    option: str | None  # optional-reinforcement letter (§13.5)
    note: str  # source / reasoning
    type: str = ""  # NATO type (Table 3): infantry, motorised, airborne, mechanised, recon, armour
    parent: str = ""  # parent formation as the id writes it
    counters: tuple[int, ...] = ()  # CF of every counter of the unit (Allied reinforcement counters, §13.4)

    @property
    def back_cf(self) -> float:
        """The back side's CF: half the nominal CF (§12.4.5)."""
        return self.cf / 2


class Withdrawal(msgspec.Struct, frozen=True):
    turn: int
    kind: Literal["infantry", "armour"]
    count: int
    from_cadre: bool
    note: str


class Reinstatement(msgspec.Struct, frozen=True):
    turn: int
    kind: Literal["infantry", "armour"]
    count: int
    note: str


class Option(msgspec.Struct, frozen=True):
    letter: str
    faction: Faction
    turns: tuple[int, ...]
    units: tuple[str, ...]
    cf: int  # CF_penalty of §13.5.3: the sum of the option's units' CF
    exclusive: tuple[str, ...] = ()
    withdraw: Mapping[str, Any] | None = None
    automatic: bool = False
    note: str = ""


class TurnSchedule(msgspec.Struct, frozen=True):
    """What the OOB says for one turn."""

    turn: int
    month: str
    reinforcements: Mapping[str, tuple[str, ...]]  # faction -> unit ids arriving (not options)
    withdrawals: tuple[Withdrawal, ...]
    reinstatements: tuple[Reinstatement, ...]
    rp: Mapping[str, int]  # pool -> RPs received at the start of the R&R phase
    caps: Mapping[str, int | None]  # "infantry"/"armour" -> max CF a reinforced Allied unit may reach
    options: tuple[str, ...]  # option letters that may be exercised this turn (before Malta filtering)


class Schedule(msgspec.Struct, frozen=True):
    turns: tuple[TurnSchedule, ...]
    start_rp: Mapping[str, int]
    options: Mapping[str, Option]
    malta_groups: Mapping[str, tuple[tuple[str, ...], ...]]  # result -> groups (at most one letter each)
    m_arrival: Mapping[str, int | None]  # Malta result -> turn M arrives (None: never)
    malta_turn: int
    axis_options_first_turn: int
    axis_options_per_turn: int
    no_installation_after_failure: tuple[int, ...]
    installations_per_turn: int
    transports: Mapping[str, tuple[str, ...]]  # faction -> set-up places of its transports
    installations: Mapping[str, tuple[str, ...]]  # faction -> set-up hexes of its installations
    installations_total: Mapping[str, int]
    notes: Mapping[str, str]

    def turn(self, n: int) -> TurnSchedule:
        if not 1 <= n <= len(self.turns):
            raise ValueError(f"turn {n} is outside 1..{len(self.turns)} (§7)")
        return self.turns[n - 1]

    def cap(self, turn: int, kind: str) -> int | None:
        return self.turn(turn).caps[kind]

    def available_options(self, result: MaltaResult) -> tuple[tuple[str, ...], ...]:
        """Table 11: the Axis option groups open after this Malta result."""
        return self.malta_groups[result]

    def authored(self, what: str) -> str:
        if what in self.notes:
            return self.notes[what]
        raise KeyError(f"oob.toml has no note for {what!r}: one of {', '.join(sorted(self.notes))}")


def _read(name: str) -> dict[str, Any]:
    data = importlib.resources.files("rules.paa.data").joinpath(name).read_bytes()
    try:
        return tomllib.loads(data.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise OobDataError(name, "syntax", str(exc)) from exc


def parse_id(uid: str) -> tuple[str, str, str, str]:
    """(nation, parent, type code, echelon) of a unit id such as "IT BERS/8/AIREGT"."""
    m = _ID.match(uid)
    if not m:
        raise ValueError(f"unit id {uid[:60]!r} is not 'NATION IDENT[/PARENT]/TYPE+ECHELON'")
    nation, body = m.groups()
    parts = body.split("/")
    if len(parts) < 2:
        raise ValueError(f"unit id {uid!r} lacks the type and echelon part")
    last = parts[-1]
    for ech in ECHELONS:
        if last.endswith(ech) and last[: -len(ech)] in TYPE_CODES:
            return nation, "/".join(parts[:-1]), last[: -len(ech)], ech
    raise ValueError(f"unit id {uid!r}: {last!r} is no type code ({', '.join(TYPE_CODES)}) "
                     f"followed by an echelon ({', '.join(ECHELONS)})")


def build_units(raw: Mapping[str, Any], turns: int = 20) -> tuple[tuple[Unit, ...], dict[str, str]]:
    f = "units.toml"
    mf_table = raw["movement"]
    caps = raw["reinforcement_caps"]
    out: list[Unit] = []
    seen: set[str] = set()
    for group in raw["group"]:
        gname, gnote = str(group["name"]), str(group["note"])
        for entry in group["units"]:
            uid = str(entry["id"])
            where = f"{gname}: {uid}"
            try:
                nation, parent, code, echelon = parse_id(uid)
            except ValueError as exc:
                raise OobDataError(f, where, str(exc)) from exc
            if nation not in NATIONS:
                raise OobDataError(f, where, f"nation {nation} is not in Table 2")
            if uid in seen:
                raise OobDataError(f, where, "listed twice")
            seen.add(uid)
            faction = NATIONS[nation]
            nato, kind = TYPE_CODES[code]
            cf = int(entry["cf"])
            if cf < 1:
                raise OobDataError(f, where, "CF must be at least 1")
            default_mf = int(mf_table[faction][nato])
            if nation == "IT" and nato in ("armour", "infantry"):
                default_mf -= int(mf_table["italian_less"])
            mf = int(entry.get("mf", default_mf))
            setup = entry.get("setup")
            arrival = entry.get("arrival")
            option = entry.get("option")
            given = [k for k in ("setup", "arrival", "option") if entry.get(k) is not None]
            if len(given) != 1:
                raise OobDataError(f, where, "needs exactly one of setup, arrival, option (§2.3.1)")
            if arrival is not None and not 1 <= int(arrival) <= turns:
                raise OobDataError(f, where, f"arrival turn {arrival} outside 1..{turns}")
            if option is not None:
                letters = ALLIED_OPTIONS if faction == "allied" else AXIS_OPTIONS
                if option not in letters:
                    raise OobDataError(f, where, f"option {option!r} is not a {faction} letter ({', '.join(letters)})")
            if faction == "allied":
                cap = int(caps[kind])
                if cf > cap:
                    raise OobDataError(f, where, f"CF {cf} above the §13.4 {kind} cap {cap}")
                counters = tuple(range(cf, cap + 1))
            else:
                counters = (cf,)
            note = gnote + (f" Unit: {entry['note']}." if "note" in entry else "")
            out.append(Unit(uid, nation, faction, kind, echelon, cf, mf,
                            None if setup is None else str(setup),
                            None if arrival is None else int(arrival),
                            None if option is None else str(option), note,
                            type=nato, parent=parent, counters=counters))
    aliases = {str(k): str(v) for k, v in raw["aliases"].items() if k != "note"}
    for alias, target in aliases.items():
        if target not in seen:
            raise OobDataError(f, f"aliases: {alias}", f"names no unit ({target})")
    log = raw["logistics"]
    for faction, nation in (("axis", "DE"), ("allied", "BR")):
        tmf = int(mf_table[faction]["transport"])
        for i in range(1, int(log["transports"]) + 1):
            out.append(Unit(f"{nation} LORRY/{i}", nation, faction, "transport", "", 1, tmf, None, None, None,
                            str(log["note"]), type="transport"))
        for i in range(1, int(log[f"{faction}_installations"]) + 1):
            out.append(Unit(f"{nation} DEPOT/{i}", nation, faction, "installation", "", 0, 0, None, None, None,
                            str(log["note"]), type="supply"))
    return tuple(out), aliases


def build_schedule(raw: Mapping[str, Any], all_units: tuple[Unit, ...], units_raw: Mapping[str, Any]) -> Schedule:
    f = "oob.toml"
    n = int(raw["turns"]["count"])
    months = [str(m) for m in raw["turns"]["months"]]
    if len(months) != n:
        raise OobDataError(f, "turns", f"{len(months)} months for {n} turns")
    rp = raw["rp"]
    for pool in POOLS:
        values = rp[pool]
        if len(values) != n or any(not 0 <= int(v) <= 10 for v in values):
            raise OobDataError(f, f"rp.{pool}", f"needs {n} values in 0..10 (§2.1.4)")
    withdrawals = [Withdrawal(int(w["turn"]), w["kind"], int(w["count"]), bool(w["from_cadre"]), str(w["note"]))
                   for w in raw["withdrawal"]]
    reinstatements = [Reinstatement(int(r["turn"]), r["kind"], int(r["count"]), str(r["note"]))
                      for r in raw["reinstatement"]]
    checks: list[tuple[int, str, int]] = [(w.turn, w.kind, w.count) for w in withdrawals]
    checks += [(r.turn, r.kind, r.count) for r in reinstatements]
    for turn, kind, count in checks:
        if not 1 <= turn <= n or kind not in ("infantry", "armour") or count < 1:
            raise OobDataError(f, f"withdrawal/reinstatement turn {turn}", "turn, kind or count out of range")

    def cap_at(kind: str, turn: int) -> int | None:
        best: int | None = None
        for step in raw["caps"][kind]:
            if turn >= int(step["from"]):
                best = int(step["cf"])
        return best

    options: dict[str, Option] = {}
    for letter, spec in raw["options"].items():
        members = tuple(u.id for u in all_units if u.option == letter)
        if not members:
            raise OobDataError(f, f"options.{letter}", "no unit in units.toml carries this letter")
        turns_ok = tuple(int(t) for t in spec["turns"])
        if any(not 1 <= t <= n for t in turns_ok):
            raise OobDataError(f, f"options.{letter}", f"turns outside 1..{n}")
        cf = sum(u.cf for u in all_units if u.option == letter)
        options[letter] = Option(letter, spec["faction"], turns_ok, members, cf,
                                 tuple(str(x) for x in spec.get("exclusive", ())),
                                 spec.get("withdraw"), bool(spec.get("automatic", False)), str(spec["note"]))
    for u in all_units:
        if u.option is not None and u.option not in options:
            raise OobDataError("units.toml", u.id, f"option {u.option} has no entry in oob.toml [options]")

    malta = raw["malta"]
    groups = {res: tuple(tuple(str(x) for x in g) for g in malta[res]) for res in ("none", "success", "failure")}
    m_arrival: dict[str, int | None] = {"none": None, "success": None, "failure": None}
    for res, t in malta["m_arrival"].items():
        m_arrival[str(res)] = int(t)

    turns: list[TurnSchedule] = []
    for t in range(1, n + 1):
        arriving = {fac: tuple(u.id for u in all_units if u.faction == fac and u.arrival == t)
                    for fac in ("axis", "allied")}
        turns.append(TurnSchedule(
            t, months[t - 1], arriving,
            tuple(w for w in withdrawals if w.turn == t),
            tuple(r for r in reinstatements if r.turn == t),
            {pool: int(rp[pool][t - 1]) for pool in POOLS},
            {"infantry": cap_at("infantry", t), "armour": cap_at("armour", t)},
            tuple(sorted(letter for letter, o in options.items() if t in o.turns)),
        ))
    log = raw["logistics"]
    ulog = units_raw["logistics"]
    notes = {
        "turns": str(raw["turns"]["note"]), "rp": str(rp["note"]), "caps": str(raw["caps"]["note"]),
        "logistics": str(log["note"]), "malta": str(malta["note"]),
        "withdrawals": " ".join(f"Turn {w.turn}: {w.note}" for w in withdrawals),
        "reinstatements": " ".join(f"Turn {r.turn}: {r.note}" for r in reinstatements),
        "movement": str(units_raw["movement"]["note"]),
        "reinforcement_caps": str(units_raw["reinforcement_caps"]["note"]),
        "counters": str(ulog["note"]), "aliases": str(units_raw["aliases"]["note"]),
    }
    for letter, o in options.items():
        notes[f"option:{letter}"] = o.note
    return Schedule(
        tuple(turns), {p: int(rp["start"][p]) for p in POOLS}, options, groups, m_arrival,
        int(malta["turn"]), int(malta["first_turn"]), int(malta["per_turn"]),
        tuple(int(x) for x in malta["failure_no_installation_turns"]), int(log["installations_per_turn"]),
        {"axis": tuple(str(x) for x in log["axis_transports"]),
         "allied": tuple(str(x) for x in log["allied_transports"])},
        {"axis": tuple(str(x) for x in log["axis_installations"]),
         "allied": tuple(str(x) for x in log["allied_installations"])},
        {"axis": int(ulog["axis_installations"]), "allied": int(ulog["allied_installations"])},
        notes,
    )


class _Oob(msgspec.Struct, frozen=True):
    units: tuple[Unit, ...]
    by_id: Mapping[str, Unit]
    aliases: Mapping[str, str]
    schedule: Schedule


@functools.cache
def _load() -> _Oob:
    units_raw = _read("units.toml")
    oob_raw = _read("oob.toml")
    try:
        all_units, aliases = build_units(units_raw, int(oob_raw["turns"]["count"]))
        sched = build_schedule(oob_raw, all_units, units_raw)
    except OobDataError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise OobDataError("units.toml/oob.toml", "structure", f"{type(exc).__name__}: {exc}") from exc
    return _Oob(all_units, {u.id: u for u in all_units}, aliases, sched)


def units() -> tuple[Unit, ...]:
    """Every unit and logistics counter, in file order (transports and installations last)."""
    return _load().units


def unit(uid: str) -> Unit:
    """The unit with this id (or a recorded misprint of it, e.g. Figure 8's "BR SQ/2/IBDE")."""
    data = _load()
    key = data.aliases.get(uid, uid)
    if key not in data.by_id:
        raise KeyError(f"no unit {uid[:60]!r} in units.toml")
    return data.by_id[key]


def aliases() -> Mapping[str, str]:
    return dict(_load().aliases)


def schedule() -> Schedule:
    """The per-turn Orders of Battle schedule (oob.toml)."""
    return _load().schedule


def counter_totals() -> dict[str, int]:
    """Counters per faction: every counter of every regular unit (Allied
    reinforcement counters included), transports and installations (§2: 162
    Allied, 71 Axis)."""
    totals = {"axis": 0, "allied": 0}
    for u in units():
        totals[u.faction] += len(u.counters) if u.kind in ("infantry", "armour") else 1
    return totals
