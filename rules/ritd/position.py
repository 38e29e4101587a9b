"""The position on the map: blocks, battles and Fortress control (RB 1.2, 8, 13.1).

This is the shared, immutable model that movement (movement.py), supply
(supply.py) and the turn sequence build on. It holds what one replaying
side knows: a block's unit and CV are "" / 0 when that side cannot see
them (DESIGN 4); everything else here is public at the table.

Hex ids are the map's "CCRR" strings (rules.ritd.hexmap).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import Literal

import msgspec

Side = Literal["axis", "allied"]
SIDES: tuple[Side, Side] = ("axis", "allied")

#: RB 1.2 hex control, seen from one side.
Control = Literal["friendly", "enemy", "empty", "battle"]


def enemy_of(side: Side) -> Side:
    return "allied" if side == "axis" else "axis"


class Block(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """One block on the map (RB 2.0). ``token`` is its public, stable id.

    ``unit`` (roster name) and ``cv`` are known only to the owner until the
    block is revealed (RB 7.3, 8.5); otherwise "" and 0. Its JSON (the
    replay cache's) leaves out the fields at their defaults: most markers
    are off most of the time, and a late campaign's cache was half defaults.
    """

    token: str
    side: Side
    hex: str
    unit: str = ""
    cv: int = 0
    disrupted: bool = False          # face-down (RB 11.0)
    revealed: bool = False           # face-up in a battle array (RB 8.5)
    unsupplied: bool = False         # Unsupplied marker (RB 12.7)
    fortress_supply: str = ""        # hex of the Fortress supplying it this turn (RB 13.3)
    oasis_supply: str = ""           # hex of the Oasis supplying it this turn (RB 15.1)
    raider: bool = False             # Raider marker (RB 12.5)


class Battle(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A battle hex (RB 8.0). ``attacker`` started it and keeps that role (RB 8.3).

    ``hexsides`` maps a neighbouring hex to the side that last engaged across
    the hexside shared with it (RB 8.1); a hexside nobody crossed belongs to
    the defender and is not listed.
    """

    hex: str
    attacker: Side
    hexsides: dict[str, Side] = {}

    @property
    def defender(self) -> Side:
        return enemy_of(self.attacker)

    def hexside_owner(self, neighbour: str) -> Side:
        """Who controls the battle hexside towards ``neighbour`` (RB 8.1)."""
        return self.hexsides.get(neighbour, self.defender)


class Position(msgspec.Struct, frozen=True, forbid_unknown_fields=True, dict=True):
    """Invariant: every hex holding blocks of both sides has a ``Battle``
    (supply tracing and battle hexside control depend on it)."""

    blocks: tuple[Block, ...] = ()
    battles: tuple[Battle, ...] = ()
    #: Fortress hex -> side controlling it (RB 13.1: last occupant).
    fortresses: dict[str, Side] = {}

    # -- lookups ------------------------------------------------------------

    @functools.cached_property
    def _by_hex(self) -> dict[str, tuple[Block, ...]]:
        """Hex -> its blocks in position order (hexes in no set order)."""
        grouped: dict[str, list[Block]] = {}
        for b in self.blocks:
            grouped.setdefault(b.hex, []).append(b)
        return {h: tuple(bs) for h, bs in grouped.items()}

    @functools.cached_property
    def _by_token(self) -> dict[str, Block]:
        return {b.token: b for b in self.blocks}

    @functools.cached_property
    def _index(self) -> dict[str, int]:
        return {b.token: i for i, b in enumerate(self.blocks)}

    @functools.cached_property
    def _battle_at(self) -> dict[str, Battle]:
        return {b.hex: b for b in self.battles}

    def block(self, token: str) -> Block:
        return self._by_token[token]

    def has_block(self, token: str) -> bool:
        return token in self._by_token

    @functools.cached_property
    def _by_hex_side(self) -> dict[tuple[str, Side], tuple[Block, ...]]:
        """``blocks_in(hex, side)`` as asked so far (at most one entry per
        occupied hex and side: bounded by the position it belongs to)."""
        return {}

    def blocks_in(self, hex_: str, side: Side | None = None) -> tuple[Block, ...]:
        if side is None:
            return self._by_hex.get(hex_, ())
        memo = self._by_hex_side
        key = (hex_, side)
        found = memo.get(key)
        if found is None:
            found = memo[key] = tuple(b for b in self._by_hex.get(hex_, ()) if b.side == side)
        return found

    @functools.cached_property
    def _by_side(self) -> dict[str, tuple[Block, ...]]:
        """Side -> its blocks in position order."""
        return {side: tuple(b for b in self.blocks if b.side == side) for side in SIDES}

    def blocks_of(self, side: Side) -> Iterator[Block]:
        """``side``'s blocks in position order."""
        return iter(self._by_side.get(side, ()))

    def occupied_hexes(self) -> Iterable[str]:
        """Every hex holding a block, in no set order."""
        return self._by_hex.keys()

    def hex_groups(self) -> Iterable[tuple[str, tuple[Block, ...]]]:
        """(hex, its blocks in position order) for every occupied hex, in no set order."""
        return self._by_hex.items()

    def battle(self, hex_: str) -> Battle | None:
        return self._battle_at.get(hex_)

    # -- RB 1.2 hex control ----------------------------------------------------

    def control(self, hex_: str, side: Side) -> Control:
        """RB 1.2: friendly, enemy, empty or battle, as seen by ``side``.

        A hex holding only Disrupted units of one side is still that side's
        (RB 12.4's "counts as empty" is a supply-chain rule, applied there).
        """
        sides = {b.side for b in self.blocks_in(hex_)}
        if len(sides) == 2:
            return "battle"
        if not sides:
            return "empty"
        return "friendly" if side in sides else "enemy"

    def controller(self, hex_: str) -> Side | None:
        """The side controlling a hex: its sole occupant, a battle's defender
        (RB 8.3), an empty Fortress's last owner (RB 13.1), else None."""
        sides = {b.side for b in self.blocks_in(hex_)}
        if len(sides) == 1:
            return next(iter(sides))
        if len(sides) == 2:
            battle = self.battle(hex_)
            return battle.defender if battle is not None else None
        return self.fortresses.get(hex_)

    # -- changes ---------------------------------------------------------------

    def replace_blocks(self, changed: Iterable[Block]) -> Position:
        """A position with the given blocks (matched by token) replaced; this
        very position when that changes nothing.

        The new position's lookups are derived from this one's (the tokens
        and their order stay; only the hexes of replaced blocks regroup), so
        a Move of one block does not re-index a hundred."""
        new = {b.token: b for b in changed}
        index = self._index
        if len(index) != len(self.blocks):  # a token twice: no index to trust
            blocks = tuple([new.get(b.token, b) for b in self.blocks])
            if all(a is b for a, b in zip(blocks, self.blocks)):
                return self
            return msgspec.structs.replace(self, blocks=blocks)
        old = self.blocks
        hits = [(i, b) for t, b in new.items() if (i := index.get(t)) is not None and old[i] is not b]
        if not hits:
            return self  # nothing changed: the same (immutable) position
        if len(hits) == 1:
            ((i, b),) = hits
            blocks = old[:i] + (b,) + old[i + 1:]
        else:
            listed = list(old)
            for i, b in hits:
                listed[i] = b
            blocks = tuple(listed)
        out = msgspec.structs.replace(self, blocks=blocks)
        mine, theirs = self.__dict__, out.__dict__
        theirs["_index"] = index  # same tokens in the same order
        if "_by_token" in mine:
            by_token = dict(mine["_by_token"])
            for _, b in hits:
                by_token[b.token] = b
            theirs["_by_token"] = by_token
        if "_by_hex" in mine:
            by_hex = dict(mine["_by_hex"])
            moved = {b.token for _, b in hits}
            for h in {old[i].hex for i, _ in hits} | {b.hex for _, b in hits}:
                group = [x for x in by_hex.get(h, ()) if x.token not in moved] + [b for _, b in hits if b.hex == h]
                if group:
                    group.sort(key=lambda x: index[x.token])
                    by_hex[h] = tuple(group)
                else:
                    by_hex.pop(h, None)
            theirs["_by_hex"] = by_hex
        return out

    def with_battles(self, battles: Iterable[Battle]) -> Position:
        return msgspec.structs.replace(self, battles=tuple(sorted(battles, key=lambda b: b.hex)))
