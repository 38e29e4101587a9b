"""The Combat Round (RB 8.6, 9.0, 9.1, 9.21, 13.2): the choice of Active and
Assault Battles, who fires first, and the dice multipliers of Assault and
Fortress defense (double dice) and Minefield Double Defense (half-hits).

Pure functions over ``Position`` (rules.ritd.position). All arithmetic is in
integers: losses are counted in half-hits ("halves"), a full hit being two
halves (RB 9.52). Decisions: decisions/combat.md (CB-nn).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import msgspec

from pbem.rulesapi import Problem
from rules.ritd.position import Block, Position, Side, enemy_of
from rules.ritd.units import ArmsClass, Unit, load_units
from rules.ritd.wording import HexNamer

#: A full hit is two half-hits (RB 9.52); losses are counted in halves.
HALVES_PER_HIT = 2

#: ``units(name)`` -> the roster entry of a block's unit (default: the game's roster).
UnitLookup = Callable[[str], Unit]


def lookup_of(units: UnitLookup | None) -> UnitLookup:
    return units if units is not None else load_units().get


# ------------------------------------------------------------------ RB 8.6 Active Battles


class BattleSelection(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="battles"):
    """The active player's choice before combat (RB 8.6): the Active Battles
    and, in an Assault Turn, which of them are Assault Battles."""

    active: tuple[str, ...] = ()
    assault: tuple[str, ...] = ()


def mandatory_battles(
    pos: Position,
    side: Side,
    *,
    new_battles: Iterable[str],
    fortress_hexes: Iterable[str],
    blitz: bool = False,
    partial_retreats: Iterable[str] = (),
) -> tuple[str, ...]:
    """Battles ``side`` must fight in this Combat phase (RB 8.6, 13.2).

    New battles (started this Player-Turn and not yet fought) always; Fortress
    battles that ``side`` attacks, except in Blitz Combat. A battle the side
    Partially Retreated from this turn is never mandatory: no combat may be
    initiated there (RB 10.4, CB-03).
    """
    forts = set(fortress_hexes)
    barred = set(partial_retreats)
    new = set(new_battles)
    out = []
    for b in pos.battles:
        if b.hex in barred or not both_sides_fight(pos, b.hex):
            continue
        if b.hex in new or (b.hex in forts and b.attacker == side and not blitz):
            out.append(b.hex)
    return tuple(sorted(out))


def both_sides_fight(pos: Position, hex_: str) -> bool:
    """Both sides have Undisrupted units in the hex (RB 11.11: only they fight)."""
    sides = {b.side for b in pos.blocks_in(hex_) if not b.disrupted}
    return len(sides) == 2


def check_battle_selection(
    pos: Position,
    side: Side,
    selection: BattleSelection,
    *,
    new_battles: Iterable[str],
    fortress_hexes: Iterable[str],
    blitz: bool = False,
    assault_turn: bool | None = False,
    partial_retreats: Iterable[str] = (),
    place: HexNamer = str,
) -> list[Problem]:
    """Every problem with the active player's Active and Assault Battles
    (hexes named by ``place``, RB 1.1).

    ``assault_turn`` is None while the turn option is still secret: Assault
    Battles are then accepted, and ``needs_assault_turn`` tells the caller
    to check the option when it is revealed (RB 3.48).
    """
    probs: list[Problem] = []
    battles = {b.hex for b in pos.battles}
    barred = set(partial_retreats)
    seen: set[str] = set()
    for h in selection.active:
        if h in seen:
            probs.append(Problem("RB 8.6", f"battle {place(h)} is selected twice"))
        seen.add(h)
        if h not in battles:
            probs.append(Problem("RB 8.6", f"there is no battle in {place(h)}"))
        elif not both_sides_fight(pos, h):
            probs.append(Problem("RB 11.11", f"battle {place(h)} has Undisrupted units of one side only; "
                                             "Disrupted units take no part in combat"))
        if h in barred:
            probs.append(Problem("RB 10.4", f"combat may not be initiated in {place(h)}: a Partial Retreat "
                                            "was made from it this Player-Turn"))
    for h in mandatory_battles(pos, side, new_battles=new_battles, fortress_hexes=fortress_hexes,
                               blitz=blitz, partial_retreats=partial_retreats):
        if h not in seen:
            rule = "RB 13.2" if h not in set(new_battles) else "RB 8.6"
            why = "a new battle" if rule == "RB 8.6" else "a Fortress battle you attack"
            probs.append(Problem(rule, f"combat in {place(h)} is mandatory: it is {why}"))
    if selection.assault:
        if blitz:
            probs.append(Problem("RB 4.4", "Blitz Combat is a Basic Combat Round: no Assault Battles"))
        elif assault_turn is False:
            probs.append(Problem("RB 4.3", "Assault Battles need an Assault Turn"))
    for h in selection.assault:
        if h not in seen:
            probs.append(Problem("RB 8.6", f"Assault Battle {place(h)} must also be an Active Battle"))
    if len(set(selection.assault)) != len(selection.assault):
        probs.append(Problem("RB 8.6", "an Assault Battle is listed twice"))
    return probs


def needs_assault_turn(selection: BattleSelection) -> bool:
    """Whether this selection commits the player to an Assault Turn (RB 4.3)."""
    return bool(selection.assault)


# ------------------------------------------------------------------ the Combat Round


class CombatRound(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One Combat Round in the battle in ``hex`` during ``active``'s Player-Turn.

    ``probe``: Probe Combat provoked by the passive player against a Partial
    Retreat (RB 10.41): roles reversed, the active player's Rearguard fires
    first. ``fortress``: the hex is a Fortress (RB 13.2). ``minefield``: a
    revealed Minefield is in the hex; the battle's Defender holds it, so it is
    defended (RB 14.0 impartial, 14.2).
    """

    hex: str
    active: Side
    assault: bool = False
    probe: bool = False
    fortress: bool = False
    minefield: bool = False

    @property
    def passive(self) -> Side:
        return enemy_of(self.active)

    @property
    def defensive_side(self) -> Side:
        """Fires first (RB 9.1 step 1; RB 10.41 the Rearguard in a Probe)."""
        return self.active if self.probe else self.passive

    @property
    def offensive_side(self) -> Side:
        return enemy_of(self.defensive_side)

    @property
    def initiator(self) -> Side:
        """Who initiated this combat: the active player, or the prober (RB 10.41)."""
        return self.passive if self.probe else self.active


def defender_benefits(pos: Position, rnd: CombatRound) -> bool:
    """Whether the battle's Defender keeps its Fortress and Minefield benefits
    this round: lost when the Defender initiates the combat (RB 13.2, 14.2,
    RB 10.41 sidebar; CB-02)."""
    battle = pos.battle(rnd.hex)
    return battle is not None and battle.defender != rnd.initiator


def dice_multiplier(pos: Position, rnd: CombatRound, side: Side, arms: ArmsClass) -> int:
    """Dice per CV for a ``side`` unit of class ``arms`` (RB 9.21, 13.2).

    Assault: x2 for both sides. Fortress Defensive Fire by the Defender: x2,
    not for armor; both together: x4, armor x2 (RB 13 sidebar).
    """
    mult = 2 if rnd.assault and not rnd.probe else 1
    battle = pos.battle(rnd.hex)
    if (rnd.fortress and battle is not None and side == battle.defender and side == rnd.defensive_side
            and defender_benefits(pos, rnd) and arms != "armor"):
        mult *= 2
    return mult


def scores_half_hits(pos: Position, rnd: CombatRound, target_side: Side, firer: ArmsClass) -> bool:
    """RB 9.52, 14.2: non-artillery hits on Minefield Defenders are half-hits."""
    battle = pos.battle(rnd.hex)
    return (rnd.minefield and battle is not None and target_side == battle.defender
            and defender_benefits(pos, rnd) and firer != "artillery")


def firing_units(pos: Position, hex_: str, side: Side) -> tuple[Block, ...]:
    """Units of ``side`` that fire in ``hex_``: the Undisrupted ones (RB 11.1)."""
    return tuple(b for b in pos.blocks_in(hex_, side) if not b.disrupted)
