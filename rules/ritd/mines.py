"""Minefields (RB 14.0-14.2, 16.55) as hidden board facts (DESIGN 4).

Each side's Minefields are one Merkle set over every hex of the map, label
``mines.<side>.<n>`` for its n-th set: the value of a hex is ``b"0"`` (no
Minefield) or the number of the set that built it (``b"3"``: built with set
3; ``b"0"`` is never a build, scenario Minefields, RB 18.4, are tagged
``b"s"``). A new set is committed at every Buildup construction; only the
number of Minefields and the BP paid are public (RB 16.5 sidebar: "location
is not divulged").

When enemy units have entered hexes (RB 14.2), the owner opens those hexes
of its current set at the end of the Movement phase: a Minefield there is
revealed to both players, and "no Minefield" is proved, so a Minefield can
neither be hidden from an enemy that entered it nor invented later. The
opening also proves the Minefield was legal where it was built (in the
friendly Supply Network fixed at the start of that Buildup, not engaged),
from the public record of that build (``MineBuild``). The whole history of
sets (each set = the previous one plus the new Minefield, minus the two
dismantled for a free one) is checked when the sets are opened at the end of
the game or the audit.

No files, crypto or randomness here: the engine keeps the Merkle sets.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import cast

import msgspec

from pbem.rulesapi import Problem
from rules.ritd.buildup import MINEFIELDS_DISMANTLED_FOR_FREE, check_minefield_site
from rules.ritd.hexmap import HexMap
from rules.ritd.position import Side

NONE = b"0"
SCENARIO = b"s"
#: The tag of a scenario Minefield (RB 18.4 special rule 2: Tobruk).
SCENARIO_BUILD = 0


def set_label(side: Side, number: int) -> str:
    return f"mines.{side}.{number}"


def parse_label(label: str) -> tuple[Side, int] | None:
    """(side, set number) of a Minefield set label, else None."""
    parts = label.split(".")
    if len(parts) != 3 or parts[0] != "mines" or parts[1] not in ("axis", "allied") or not parts[2].isdigit():
        return None
    return parts[1], int(parts[2])  # type: ignore[return-value]


def encode(built: int | None) -> bytes:
    """A hex's leaf: no Minefield, a scenario one, or the number of the set that built it."""
    if built is None:
        return NONE
    return SCENARIO if built == SCENARIO_BUILD else str(built).encode("ascii")


def decode(value: bytes) -> int | None:
    """Inverse of encode; ValueError for anything else."""
    if value == NONE:
        return None
    if value == SCENARIO:
        return SCENARIO_BUILD
    if value.isdigit() and not value.startswith(b"0") and len(value) <= 4:
        return int(value)
    raise ValueError(f"not a Minefield leaf: {value!r}")


def leaves(m: HexMap, mines: Mapping[str, int]) -> dict[str, bytes]:
    """The whole set for ``mines`` (hex -> the set that built it): every hex of the map."""
    return {h: encode(mines.get(h)) for h in m.hexes}


class MineBuild(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The public record of one Minefield construction (RB 16.55): set
    ``number`` of ``side`` in Month ``month``; ``free``: two Minefields were
    dismantled for it; ``network``: the friendly Supply Network fixed at the
    start of that Buildup; ``engaged``: the hexes then holding enemy units;
    ``shown``: the builder's revealed Minefields then standing;
    ``dismantled_shown``: those of them it dismantled (public, since both
    players saw them, T-31)."""

    side: Side
    number: int
    month: int
    free: bool
    network: tuple[str, ...]
    engaged: tuple[str, ...]
    shown: tuple[str, ...] = ()
    dismantled_shown: tuple[str, ...] = ()


class SideMines(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One side's Minefields as a replay knows them.

    ``number``: the current set (0: none committed yet; scenario Minefields
    only); ``count``: Minefields on the map (public); ``known``: hexes this
    replay knows to hold one (the owner's all, else the revealed ones);
    ``shown``: revealed to both players (RB 14.2), public; ``opened``: hexes of
    the current set opened so far (public); ``watch``: hexes the enemy
    occupied at the last end of a Movement phase; ``due``: hexes the owner
    must open now; ``fresh``: hexes opened since the owner's last
    ``open minefields`` (an event opens its leaves before its actions, so
    the openings may precede the end of the Movement phase that asks for
    them)."""

    number: int = 0
    count: int = 0
    known: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()
    opened: tuple[str, ...] = ()
    watch: tuple[str, ...] = ()
    due: tuple[str, ...] = ()
    fresh: tuple[str, ...] = ()


def read_set(m: HexMap, values: Sequence[bytes | None]) -> dict[str, int] | None:
    """hex -> building set of every Minefield of a set this replay knows whole
    (``values``: the leaves of ``m.hexes`` in their order, as ``ctx.leaves``
    gives them), None if a leaf is unknown; ValueError for a value that is not
    a Minefield leaf."""
    if len(values) != len(m.hexes):
        raise ValueError(f"{len(values)} leaves for the {len(m.hexes)} hexes of the map")
    # Read in the map's order up to the first unknown leaf, decoding only the
    # hexes that hold something: most hold no Minefield (``NONE``).
    end = values.index(None) if None in values else len(values)
    known = cast(Sequence[bytes], values[:end])
    mines = {h: built for h, value in zip(m.hexes, known) if value != NONE if (built := decode(value)) is not None}
    return mines if end == len(values) else None


def check_leaf(m: HexMap, side: Side, hex_: str, value: bytes, number: int, builds: Collection[MineBuild],
               scenario: Collection[str], shown: Collection[str]) -> list[Problem]:
    """RB 14.1, 14.2, 16.55: one opened leaf of ``side``'s set ``number``.

    A Minefield there must have been built legally by a set up to ``number``
    (or be a scenario Minefield); a revealed Minefield cannot vanish unless
    publicly dismantled (``shown`` are the revealed ones still standing)."""
    name = m.name(hex_) if hex_ in m.hexes else hex_
    try:
        built = decode(value)
    except ValueError as exc:
        return [Problem("RB 14.1", f"{side} Minefield set {number} at {name}: {exc}")]
    if built is None:
        if hex_ in shown:
            return [Problem("RB 14.2", f"the revealed {side} Minefield at {name} is missing from set {number} "
                                       "though it was never publicly dismantled")]
        return []
    if built == SCENARIO_BUILD:
        return [] if hex_ in scenario else [Problem("RB 18.0", f"{name} holds no {side} scenario Minefield")]
    build = next((b for b in builds if b.side == side and b.number == built), None)
    if build is None or built > number:
        return [Problem("RB 16.55", f"the {side} Minefield at {name} claims set {built}, which never built one")]
    return [Problem(p.rule, f"{side} Minefield at {name} built in Month {build.month}: {p.message}")
            for p in check_minefield_site(m, side, build.network, build.engaged, hex_, (), frozenset())]


def check_set(m: HexMap, build: MineBuild, before: Mapping[str, int], after: Mapping[str, int]) -> list[Problem]:
    """RB 16.55: set ``build.number`` is the one before it plus one new
    Minefield in a legal hex, minus two dismantled ones within the friendly
    Supply Network for a free one; revealed Minefields only go when publicly
    dismantled. ``before``/``after``: hex -> building set."""
    side, rule = build.side, "RB 16.55"
    new = [h for h, n in after.items() if n == build.number]
    kept = {h: n for h, n in after.items() if n != build.number}
    gone = sorted(set(before) - set(kept))
    probs = []
    changed = sorted(h for h, n in kept.items() if before.get(h) != n)
    if changed:
        probs.append(Problem(rule, f"{side} Minefield set {build.number} changes or adds older Minefields at "
                                   f"{', '.join(m.name(h) for h in changed)}"))
    if len(new) != 1:
        return probs + [Problem(rule, f"{side} Minefield set {build.number} must add exactly one Minefield, "
                                      f"not {len(new)}")]
    want_gone = MINEFIELDS_DISMANTLED_FOR_FREE if build.free else 0
    if len(gone) != want_gone:
        probs.append(Problem(rule, f"{side} Minefield set {build.number} dismantles {len(gone)} Minefields; "
                                   + ("a free one dismantles exactly two" if build.free else "a paid one none")))
    probs += check_minefield_site(m, side, build.network, build.engaged, new[0], tuple(gone), frozenset(before))
    vanished = [h for h in build.shown if h not in after and h not in build.dismantled_shown]
    if vanished:
        probs.append(Problem("RB 14.2", f"the revealed {side} Minefields at "
                                        f"{', '.join(m.name(h) for h in vanished)} vanished without being "
                                        "publicly dismantled"))
    lied = [h for h in build.dismantled_shown if h in after]
    if lied:
        probs.append(Problem(rule, f"{', '.join(m.name(h) for h in lied)} was announced dismantled but is "
                                   "still in the set"))
    return probs


def entered(moved_paths: Collection[tuple[str, ...]], occupied: Collection[str], watch: Collection[str]
            ) -> set[str]:
    """RB 14.2 (T-30): the hexes one side's units entered since the last end of a
    Movement phase: every hex on their Moves' paths after the start, and every
    hex they occupy now that they did not occupy then (Withdrawals, Routs)."""
    hexes = {h for path in moved_paths for h in path[1:]}
    return hexes | (set(occupied) - set(watch))
