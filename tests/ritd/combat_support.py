"""Helpers shared by the combat tests (no tests of its own).

A small test roster: the 1940 Demo's Italian and British units are not in
units.toml (G-46), so the tests name their own labels.
"""

from __future__ import annotations

from rules.ritd.position import Battle, Block, Position, Side
from rules.ritd.units import Unit

_UNITS = {
    u.name: u
    for u in (
        Unit("Ger Arm 6", "german", "armor", True, 6, 2, "S", "test"),
        Unit("Ger Arm 4", "german", "armor", True, 4, 2, "S", "test"),
        Unit("Ger Inf 4", "german", "infantry", True, 4, 2, "S", "test"),
        Unit("Ger Art 4", "german", "artillery", True, 4, 2, "S", "test"),
        Unit("It Inf 4", "italian", "infantry", False, 4, 1, "S", "test"),
        Unit("It Mot Inf 4", "italian", "mot_inf", False, 4, 1, "S", "test"),
        Unit("It Art 4", "italian", "artillery", False, 4, 1, "S", "test"),
        Unit("It Arm 4", "italian", "armor", False, 4, 1, "S", "test"),
        Unit("It Recon 2", "italian", "recon", False, 2, 1, "S", "test"),
        Unit("Br Arm 6", "british", "armor", False, 6, 1, "S", "test"),
        Unit("Br Arm 4", "british", "armor", False, 4, 1, "S", "test"),
        Unit("Br Arm 1", "british", "armor", False, 4, 1, "S", "test"),
        Unit("Br Mech Inf 3", "british", "mech_inf", False, 3, 1, "S", "test"),
        Unit("Br Mot Inf 4", "british", "mot_inf", False, 4, 1, "S", "test"),
        Unit("Br Inf 3", "british", "infantry", False, 3, 1, "S", "test"),
        Unit("Br Art 4", "british", "artillery", False, 4, 1, "S", "test"),
        Unit("Br AT 3", "british", "mobile_at", False, 3, 1, "S", "test"),
        Unit("Br Elite Arm 4", "british", "armor", True, 4, 2, "S", "test"),
    )
}

UNIT_NAMES = tuple(_UNITS)
HEX = "1010"


def units(name: str) -> Unit:
    return _UNITS[name]


def blk(token: str, side: Side, unit: str, cv: int | None = None, hex_: str = HEX, **kw: object) -> Block:
    return Block(token=token, side=side, hex=hex_, unit=unit,  # type: ignore[arg-type]
                 cv=_UNITS[unit].max_cv if cv is None else cv, revealed=True, **kw)


def battle_pos(*blocks: Block, attacker: Side = "axis", hex_: str = HEX) -> Position:
    return Position(blocks=tuple(blocks), battles=(Battle(hex=hex_, attacker=attacker),))


def cv(pos: Position, token: str) -> int | None:
    return pos.block(token).cv if pos.has_block(token) else None
