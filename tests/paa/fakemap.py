"""Small Panzerarmee Afrika map fragments for rules tests.

Same members as ``rules.paa.mapdata.PaaMap`` (briefs/paa-interface.md); the
geometry is pbem.hexgrid's RRCC grid, rows up, even rows a half hex east
(tests/test_hexgrid.py, the Figure 7 golden test).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pbem.hexgrid import DigitIds, Grid, neighbours

IDS = DigitIds(Grid("pointy", "even", "up"), "RRCC")


@dataclass(frozen=True)
class Side:
    escarpment: bool = False
    prohibited: bool = False
    border: bool = False
    road: bool = False
    track: bool = False
    rail: bool = False


@dataclass
class FakeMap:
    cells: frozenset[str]
    terrains: dict[str, str] = field(default_factory=dict)
    sides: dict[frozenset[str], Side] = field(default_factory=dict)
    connected: frozenset[str] = frozenset()
    ports: frozenset[str] = frozenset()
    bases: Mapping[str, frozenset[str]] = field(default_factory=dict)
    base_centres: Mapping[str, str] = field(default_factory=dict)
    forts: Mapping[str, int] = field(default_factory=dict)
    fort_zoc: Mapping[str, frozenset[str]] = field(default_factory=dict)
    libya: frozenset[str] = frozenset()
    sea_lines: tuple[tuple[str, str], ...] = ()
    places: Mapping[str, str] = field(default_factory=dict)

    def hexes(self) -> tuple[str, ...]:
        return tuple(sorted(self.cells))

    def terrain(self, hex_id: str) -> str:
        if hex_id not in self.cells:
            raise KeyError(hex_id)
        return self.terrains.get(hex_id, "clear")

    def neighbours(self, hex_id: str) -> tuple[str, ...]:
        return tuple(n for n in (IDS.format(x) for x in neighbours(IDS.parse(hex_id))) if n in self.cells)

    def side(self, a: str, b: str) -> Side:
        if b not in self.neighbours(a):
            raise ValueError(f"{a} and {b} are not adjacent")
        return self.sides.get(frozenset((a, b)), Side())

    def road_track_connected(self, hex_id: str) -> bool:
        return hex_id in self.connected


def block(rows: Iterable[int], cols: Iterable[int]) -> frozenset[str]:
    """Every hex RRCC in the given rows and columns."""
    cs = tuple(cols)
    return frozenset(f"{r:02d}{c:02d}" for r in rows for c in cs)


def along(path: Iterable[str], **features: bool) -> dict[frozenset[str], Side]:
    """Hexside features along a path of adjacent hexes (a road, a track)."""
    p = tuple(path)
    return {frozenset((a, b)): Side(**features) for a, b in zip(p, p[1:], strict=False)}
