"""The Fire Table of Rommel in the Desert (RB 9.4) as validated data.

The table is printed on the map, not in the rulebook. ``data/fire_table.toml``
holds every firer-class x target-class cell with a ``confirmed`` flag: true
when the rulebook proves the value in every case play uses it (its source
starts "RB": three cells from RB examples, three cells only ever used on
unsupported artillery, and the RB 9.3 unsupported-artillery rule), false
for the ten authored cells (source "authored: ..."); the file's header says
which example proves what and why the rest is authored.

Hit numbers (RB 9.4): SF hits on 6, DF on 5-6, TF on 4-6. Artillery that is
unsupported by any other arms Class is fired on at TF by every class except
artillery (RB 9.3 sidebar "Targeting Artillery"). Which classes a unit may
target at all (RB 9.3) is a rules question, not a table lookup, and is not
checked here.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

import msgspec

from rules.ritd_v5.datafiles import DataError, read_bytes
from rules.ritd_v5.units import ARMS_CLASSES, ArmsClass, decode_named

FILE = "fire_table.toml"

Fire = Literal["SF", "DF", "TF"]
FIRES: tuple[Fire, ...] = ("SF", "DF", "TF")
DIE_FACES = 6


class FireCell(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One cell: ``firer`` class firing on ``target`` class fires at ``fire``."""

    firer: ArmsClass
    target: ArmsClass
    fire: Fire
    confirmed: bool
    source: str


class HitsFrom(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The lowest die roll that scores a hit, per fire effectiveness (RB 9.4)."""

    SF: int
    DF: int
    TF: int


class UnsupportedArtillery(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """RB 9.3: fire on artillery unsupported by any other friendly arms Class."""

    fire: Fire
    firers: list[ArmsClass]
    confirmed: bool
    source: str


class _FireTableFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    hits_from: HitsFrom
    unsupported_artillery: UnsupportedArtillery
    cell: list[FireCell]


class FireTable:
    """The validated Fire Table: a complete 4 x 4 grid plus the 9.3 exception."""

    def __init__(
        self,
        cells: Mapping[tuple[ArmsClass, ArmsClass], FireCell],
        hits_from: HitsFrom,
        unsupported_artillery: UnsupportedArtillery,
    ) -> None:
        self._cells = MappingProxyType(dict(cells))
        self._hits_from = hits_from
        self._unsupported = unsupported_artillery

    @property
    def cells(self) -> Mapping[tuple[ArmsClass, ArmsClass], FireCell]:
        return self._cells

    @property
    def unsupported_artillery(self) -> UnsupportedArtillery:
        return self._unsupported

    def cell(self, firer: ArmsClass, target: ArmsClass) -> FireCell:
        """The printed-table cell for ``firer`` on ``target``.

        Raises KeyError for a name that is not an arms Class.
        """
        try:
            return self._cells[(firer, target)]
        except KeyError:
            raise KeyError(f"no Fire Table cell for {firer!r} firing on {target!r}") from None

    def firepower(
        self, firer: ArmsClass, target: ArmsClass, *, unsupported_artillery: bool = False
    ) -> Fire:
        """Fire effectiveness of ``firer`` on ``target`` (RB 9.4).

        ``unsupported_artillery`` says that the target class is artillery with
        no other undisrupted friendly arms Class in the battle (RB 9.3); then
        every class listed in the data (all but artillery) fires at TF.
        Raises KeyError for an unknown class and ValueError if
        ``unsupported_artillery`` is set for a target that is not artillery.
        """
        cell = self.cell(firer, target)
        if unsupported_artillery:
            if target != "artillery":
                raise ValueError(f"only artillery can be unsupported artillery, not {target!r}")
            if firer in self._unsupported.firers:
                return self._unsupported.fire
        return cell.fire

    def is_confirmed(
        self, firer: ArmsClass, target: ArmsClass, *, unsupported_artillery: bool = False
    ) -> bool:
        """True when the rulebook proves the value ``firepower`` gives, in every
        case play asks for it (see the data file's header)."""
        cell = self.cell(firer, target)
        if unsupported_artillery and target == "artillery" and firer in self._unsupported.firers:
            return self._unsupported.confirmed
        return cell.confirmed

    def hits_from(self, fire: Fire) -> int:
        """The lowest die roll that scores a hit at ``fire`` (RB 9.4)."""
        return int(getattr(self._hits_from, fire))

    def hit_faces(self, fire: Fire) -> int:
        """How many of the six die faces score a hit (SF 1, DF 2, TF 3)."""
        return DIE_FACES + 1 - self.hits_from(fire)

    def is_hit(self, fire: Fire, roll: int) -> bool:
        """Whether die ``roll`` (1-6) scores a hit at ``fire``.

        Raises ValueError for a roll outside 1..6.
        """
        if not 1 <= roll <= DIE_FACES:
            raise ValueError(f"a die roll is 1..{DIE_FACES}, not {roll}")
        return roll >= self.hits_from(fire)


def load_fire_table_bytes(data: bytes) -> FireTable:
    """Parse and validate a Fire Table file's bytes.

    Raises DataError naming the cell (e.g. ``cell "armor -> infantry"``) for a
    duplicate or missing cell, and the problem for bad hit numbers.
    """
    decoded = decode_named(FILE, data, _FireTableFile, "cell", ("firer", "target"))
    h = decoded.hits_from
    for fire in FIRES:
        value = getattr(h, fire)
        if not 1 <= value <= DIE_FACES:
            raise DataError(FILE, f"hits_from.{fire}", f"{value} is not a die roll 1..6")
    if not h.SF > h.DF > h.TF:
        raise DataError(
            FILE, "hits_from", "SF must need a higher roll than DF, and DF than TF (RB 9.4)"
        )
    cells: dict[tuple[ArmsClass, ArmsClass], FireCell] = {}
    for cell in decoded.cell:
        key = (cell.firer, cell.target)
        where = f'cell "{cell.firer} -> {cell.target}"'
        if key in cells:
            raise DataError(FILE, where, "duplicate cell")
        if not cell.source.strip():
            raise DataError(FILE, where, "source must name the basis of the value")
        basis = "RB " if cell.confirmed else "authored"
        if not cell.source.startswith(basis):
            raise DataError(FILE, where, f"a {'confirmed' if cell.confirmed else 'unconfirmed'} cell's source "
                                         f"starts with {basis.strip()!r}: the rule that proves it, or why it is authored")
        cells[key] = cell
    missing = [
        f"{f} -> {t}" for f in ARMS_CLASSES for t in ARMS_CLASSES if (f, t) not in cells
    ]
    if missing:
        raise DataError(FILE, "cell", f"missing cells: {', '.join(missing)}")
    ua = decoded.unsupported_artillery
    if len(set(ua.firers)) != len(ua.firers):
        raise DataError(FILE, "unsupported_artillery", "firers lists a class twice")
    return FireTable(cells, h, ua)


@functools.cache
def load_fire_table() -> FireTable:
    """The game's Fire Table, from the packaged ``fire_table.toml`` (cached)."""
    return load_fire_table_bytes(read_bytes(FILE))


def firepower(
    attacker_class: ArmsClass, target_class: ArmsClass, *, unsupported_artillery: bool = False
) -> Fire:
    """``load_fire_table().firepower(...)``: "SF", "DF" or "TF" (RB 9.3, 9.4)."""
    return load_fire_table().firepower(
        attacker_class, target_class, unsupported_artillery=unsupported_artillery
    )


def hits_from(fire: Fire) -> int:
    """The lowest die roll that scores a hit at ``fire`` (RB 9.4)."""
    return load_fire_table().hits_from(fire)
