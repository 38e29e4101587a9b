"""What the rules read from the map: the structural view of h22d's ``PaaMap``.

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
The rules modules take any object with these members, so they run on the
authored map (``rules.paa.mapdata.load_map()``) and on small map fragments in
tests alike. The named hexes below are the ones the text prints (§2.1.1,
§5.1, §11.2); everything else about the map is data.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, TypeVar

Terrain = Literal["clear", "rough", "swamp", "sea"]

#: Hexes the text names (§2.1.1, §5.1, §8.3, §11.2, §14).
EL_AGHEILA = "0702"
ALEXANDRIA = "1351"
TOBRUK = "1925"
BARDIA = "1730"


class SideView(Protocol):
    """The features of the hexside between two adjacent hexes (Table 1)."""

    @property
    def escarpment(self) -> bool: ...
    @property
    def prohibited(self) -> bool: ...
    @property
    def border(self) -> bool: ...
    @property
    def road(self) -> bool: ...
    @property
    def track(self) -> bool: ...
    @property
    def rail(self) -> bool: ...


class MapView(Protocol):
    """The map members the rules use (docs: briefs/paa-interface.md)."""

    def hexes(self) -> tuple[str, ...]: ...
    def terrain(self, hex_id: str) -> str: ...
    def neighbours(self, hex_id: str) -> tuple[str, ...]: ...
    def side(self, a: str, b: str) -> SideView: ...
    def road_track_connected(self, hex_id: str) -> bool: ...

    @property
    def ports(self) -> frozenset[str]: ...
    @property
    def bases(self) -> Mapping[str, frozenset[str]]: ...
    @property
    def base_centres(self) -> Mapping[str, str]: ...
    @property
    def forts(self) -> Mapping[str, int]: ...
    @property
    def fort_zoc(self) -> Mapping[str, frozenset[str]]: ...
    @property
    def libya(self) -> frozenset[str]: ...
    @property
    def sea_lines(self) -> tuple[tuple[str, str], ...]: ...


def last_digit(hex_id: str) -> int:
    """§2.1: the last digit of the printed coordinate (used by C², §10)."""
    if len(hex_id) != 4 or not hex_id.isdigit():
        raise ValueError(f"§2.1: hex id {hex_id!r} is not four digits (RRCC)")
    return int(hex_id[-1])


_F = TypeVar("_F", bound=Callable[..., Any])


def per_board(size: int) -> Callable[[_F], _F]:
    """Keep the latest ``size`` results of ``fn(board, *args)`` (a fact of the
    map, or of the map and hashable ``args``), by the board's identity: the
    small boards of tests are unhashable. Each entry holds its board, so that
    its id stays unique while kept. Results are shared: callers only read
    them. Not working state: ``cache_clear()`` changes no result."""
    def wrap(fn: _F) -> _F:
        memo: dict[tuple[Any, ...], tuple[MapView, Any]] = {}

        @functools.wraps(fn)
        def cached(board: MapView, *args: Any) -> Any:
            key = (id(board), *args)
            hit = memo.get(key)
            if hit is not None and hit[0] is board:
                return hit[1]
            value = fn(board, *args)
            memo[key] = (board, value)
            while len(memo) > size:
                del memo[next(iter(memo))]  # the oldest entry
            return value

        cached.cache_clear = memo.clear  # type: ignore[attr-defined]
        return cached  # type: ignore[return-value]
    return wrap
