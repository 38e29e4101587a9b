"""Battles and combat: Active Battles, fire, losses, Fortresses (RB 8.5-9.52, 13.2-13.5, 14.2).

Pure functions over ``Position`` (rules.ritd_v4.position). Dice come in as
arguments; nothing here rolls, reads files or touches crypto. A ``check_*``
function returns every problem at once, each naming its rule; the matching
``apply_*`` (or ``score``) never re-checks and never fails on a checked input
(STYLE 1, 2). All arithmetic is in integers: losses are counted in half-hits
("halves"), a full hit being two halves (RB 9.52).

A Combat Round in one Active Battle, as the state machine sequences it:

1. ``check_battle_selection`` (active player: Active and Assault Battles, RB 8.6).
2. For each Active Battle, in the order the active player chooses (RB 9.0),
   ``CombatRound`` describes it. Defensive Fire: the side
   ``rnd.defensive_side`` sends a ``FirePlan`` (``check_fire_plan``); the
   engine rolls ``dice_needed``; ``score`` gives a ``FireResult``; the other
   side sends a ``LossAllocation`` (``check_allocation``/``apply_allocation``).
3. Offensive Fire: the same with the sides swapped, on the position after
   the Defensive Fire losses (RB 9.1).
4. ``LossOutcome.unshielded`` lists Disrupted units left without a shield:
   they Rout at once (RB 11.11, rules.ritd_v4.routs), pursued only by enemy units
   that have not fired in this round (``FireResult.unfired``).

Pursuit Fire, Routs, Overruns and Retreat procedures are in rules.ritd_v4.routs.
Decisions on rulebook ambiguities: decisions/combat.md (CB-nn).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import msgspec

from pbem.rulesapi import Problem
from rules.ritd_v4.firetable import DIE_FACES, Fire, load_fire_table
from rules.ritd_v4.hexmap import HexMap
from rules.ritd_v4.position import Block, Position, Side, enemy_of
from rules.ritd_v4.units import ARMS_CLASSES, ArmsClass, Unit, load_units

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
) -> list[Problem]:
    """Every problem with the active player's Active and Assault Battles.

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
            probs.append(Problem("RB 8.6", f"battle {h} is selected twice"))
        seen.add(h)
        if h not in battles:
            probs.append(Problem("RB 8.6", f"there is no battle in {h}"))
        elif not both_sides_fight(pos, h):
            probs.append(Problem("RB 11.11", f"battle {h} has Undisrupted units of one side only; "
                                             "Disrupted units take no part in combat"))
        if h in barred:
            probs.append(Problem("RB 10.4", f"combat may not be initiated in {h}: a Partial Retreat "
                                            "was made from it this Player-Turn"))
    for h in mandatory_battles(pos, side, new_battles=new_battles, fortress_hexes=fortress_hexes,
                               blitz=blitz, partial_retreats=partial_retreats):
        if h not in seen:
            rule = "RB 13.2" if h not in set(new_battles) else "RB 8.6"
            why = "a new battle" if rule == "RB 8.6" else "a Fortress battle you attack"
            probs.append(Problem(rule, f"combat in {h} is mandatory: it is {why}"))
    if selection.assault:
        if blitz:
            probs.append(Problem("RB 4.4", "Blitz Combat is a Basic Combat Round: no Assault Battles"))
        elif assault_turn is False:
            probs.append(Problem("RB 4.3", "Assault Battles need an Assault Turn"))
    for h in selection.assault:
        if h not in seen:
            probs.append(Problem("RB 8.6", f"Assault Battle {h} must also be an Active Battle"))
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


# ------------------------------------------------------------------ targets (RB 9.3)


def firing_units(pos: Position, hex_: str, side: Side) -> tuple[Block, ...]:
    """Units of ``side`` that fire in ``hex_``: the Undisrupted ones (RB 11.1)."""
    return tuple(b for b in pos.blocks_in(hex_, side) if not b.disrupted)


def arms_of(block: Block, units: UnitLookup | None = None) -> ArmsClass:
    return lookup_of(units)(block.unit).arms_class


def present_classes(pos: Position, hex_: str, side: Side, units: UnitLookup | None = None) -> frozenset[ArmsClass]:
    """Arms Classes of ``side``'s Undisrupted units in ``hex_``; Disrupted
    units are ignored for targeting (RB 9.3 sidebar)."""
    return frozenset(arms_of(b, units) for b in firing_units(pos, hex_, side))


def legal_targets(firer: ArmsClass, present: Iterable[ArmsClass]) -> tuple[ArmsClass, ...]:
    """Classes a ``firer`` may target when the enemy has ``present`` (RB 9.3).

    Armor must fire at armor and infantry at infantry if present. Only
    artillery targets artillery, unless no other class is present.
    """
    here = set(present)
    if firer in ("armor", "infantry") and firer in here:
        return (firer,)
    others = tuple(c for c in ARMS_CLASSES if c in here and c != "artillery")
    if "artillery" in here and (firer == "artillery" or not others):
        return others + ("artillery",)
    return others


def _targeting_reason(firer: ArmsClass, target: ArmsClass, present: frozenset[ArmsClass]) -> str:
    if target not in present:
        return f"no Undisrupted enemy {target} is present"
    if firer in ("armor", "infantry") and firer in present:
        return f"{firer} must fire at enemy {firer} while any is present"
    return "only artillery may target artillery while another enemy class is present"


def unit_firepower(firer: ArmsClass, target: ArmsClass, present: Iterable[ArmsClass]) -> Fire:
    """Fire effectiveness (RB 9.4), TF on unsupported artillery (RB 9.3 sidebar)."""
    unsupported = target == "artillery" and not any(c != "artillery" for c in present)
    return load_fire_table().firepower(firer, target, unsupported_artillery=unsupported)


# ------------------------------------------------------------------ fire plans (RB 9.2)


class UnitFire(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One unit's fire: its announced target Class (RB 9.2), and the classes it
    fires at instead, in order, should that class be gone when its turn comes
    (RB 9.3 last paragraph; CB-05)."""

    token: str
    target: ArmsClass
    fallback: tuple[ArmsClass, ...] = ()


class FirePlan(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="fire"):
    """Defensive or Offensive Fire of ``side`` in ``hex``: units fire in the
    order listed, artillery first (RB 9.2)."""

    hex: str
    side: Side
    fires: tuple[UnitFire, ...]


def check_fire_plan(pos: Position, rnd: CombatRound, plan: FirePlan, *,
                    units: UnitLookup | None = None) -> list[Problem]:
    """Every problem with a fire plan (RB 9.0-9.3, 11.1)."""
    look = lookup_of(units)
    probs: list[Problem] = []
    if plan.hex != rnd.hex:
        probs.append(Problem("RB 9.0", f"this Combat Round is in {rnd.hex}, not {plan.hex}"))
        return probs
    if pos.battle(rnd.hex) is None:
        return [Problem("RB 8.0", f"there is no battle in {rnd.hex}")]
    enemy = enemy_of(plan.side)
    present = present_classes(pos, rnd.hex, enemy, look)
    shooters = {b.token: b for b in firing_units(pos, rnd.hex, plan.side)}
    seen: set[str] = set()
    artillery_done = False
    for f in plan.fires:
        if f.token in seen:
            probs.append(Problem("RB 9.2", f"{f.token} fires twice; each unit fires once per Combat Round"))
            continue
        seen.add(f.token)
        if not pos.has_block(f.token):
            probs.append(Problem("RB 9.2", f"there is no unit {f.token}"))
            continue
        b = pos.block(f.token)
        if b.side != plan.side or b.hex != rnd.hex:
            probs.append(Problem("RB 9.2", f"{f.token} is not a {plan.side} unit in the battle in {rnd.hex}"))
            continue
        if b.disrupted:
            probs.append(Problem("RB 11.1", f"{f.token} is Disrupted and cannot fire"))
            continue
        if not b.unit or b.cv <= 0:
            probs.append(Problem("RB 8.5", f"{f.token} is not revealed: its unit and CV must be known to fire"))
            continue
        arms = look(b.unit).arms_class
        if arms == "artillery" and artillery_done:
            probs.append(Problem("RB 9.2", f"{f.token} is artillery and must fire before the other classes"))
        if arms != "artillery":
            artillery_done = True
        legal = legal_targets(arms, present)
        if f.target not in legal:
            probs.append(Problem("RB 9.3", f"{f.token} ({arms}) may not target {f.target}: "
                                           f"{_targeting_reason(arms, f.target, present)}"))
        order = (f.target,) + f.fallback
        if len(set(order)) != len(order):
            probs.append(Problem("RB 9.3", f"{f.token} lists a target class twice"))
    missing = sorted(set(shooters) - seen)
    if missing:
        probs.append(Problem("RB 9.0", f"every Undisrupted unit fires once per Combat Round; "
                                       f"missing: {', '.join(missing)}"))
    return probs


def dice_counts(pos: Position, rnd: CombatRound, plan: FirePlan, *,
                units: UnitLookup | None = None) -> tuple[int, ...]:
    """Dice each unit of a checked plan rolls, in plan order: one per CV
    (RB 9.2) times the multiplier (RB 9.21, 13.2)."""
    look = lookup_of(units)
    out = []
    for f in plan.fires:
        b = pos.block(f.token)
        out.append(b.cv * dice_multiplier(pos, rnd, plan.side, look(b.unit).arms_class))
    return tuple(out)


def dice_needed(pos: Position, rnd: CombatRound, plan: FirePlan, *,
                units: UnitLookup | None = None) -> tuple[int, ...]:
    """The dice a checked plan needs as one batch: one entry per die, its
    number of faces (the engine's ``Decision.dice`` form). Every unit's dice
    are rolled even if its target is gone by its turn (CB-06)."""
    return (DIE_FACES,) * sum(dice_counts(pos, rnd, plan, units=units))


# ------------------------------------------------------------------ scoring


class ClassHits(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Hits scored on one arms Class: ``hits`` full, ``half_hits`` half (RB 9.52)."""

    hits: int = 0
    half_hits: int = 0

    @property
    def halves(self) -> int:
        return HALVES_PER_HIT * self.hits + self.half_hits


class Shot(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How one unit fired: ``target`` None means it did not fire (no target left)."""

    token: str
    target: ArmsClass | None
    fire: Fire | None
    dice: tuple[int, ...]
    hits: int
    half: bool = False


class FireResult(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Scored fire of ``side`` in ``hex``: the shots in order, hits per target
    Class, and the Classes wiped out during the fire (RB 9.5)."""

    hex: str
    side: Side
    shots: tuple[Shot, ...]
    hits: dict[str, ClassHits]
    wiped_out: tuple[str, ...] = ()

    @property
    def unfired(self) -> tuple[str, ...]:
        """Units that did not fire: they may still Pursue a Rout (RB 11 sidebar)."""
        return tuple(s.token for s in self.shots if s.target is None)

    @property
    def fired(self) -> tuple[str, ...]:
        return tuple(s.token for s in self.shots if s.target is not None)


class _Absorber(msgspec.Struct, frozen=True):
    steps: int          # steps the unit can still lose (the last one eliminates it)
    cv_per_step: int    # CV a step removes: 1 normal, 2 elite (RB 2.3)
    hits_per_step: int  # hits a step takes: 1 normal, 2 elite or optional I-tank (RB 2.4, 17.0; CB-15)

    @property
    def hits(self) -> tuple[int, int]:
        """(steps, hits_per_step): the form ``best_use`` takes."""
        return self.steps, self.hits_per_step


def absorber_of(block: Block, unit: Unit) -> _Absorber:
    steps = (block.cv - unit.min_cv) // unit.cv_per_step + 1 if block.cv >= unit.min_cv else 0
    return _Absorber(max(steps, 0), unit.cv_per_step, unit.hits_per_step)


def best_use(hits: int, half_hits: int, absorbers: Sequence[tuple[int, int]]) -> int:
    """The most hits that can be applied to units given as (steps,
    hits_per_step) (RB 9.5, 9.52): two half-hits count as one hit, a step
    takes ``hits_per_step`` hits (1 or 2) and partial steps are wasted. For
    normal and elite units this is also the CV removed; an optional-rule
    I-tank takes 2 hits for 1 CV (CB-15, CB-16)."""
    pairs = hits + half_hits // HALVES_PER_HIT
    normal = sum(s for s, h in absorbers if h == 1)
    elite = sum(s for s, h in absorbers if h == 2)
    best = 0
    for n in range(min(normal, pairs) + 1):
        best = max(best, n + 2 * min(elite, (pairs - n) // 2))
    return best


def _class_capacity(absorbers: Sequence[tuple[int, int]]) -> int:
    """Hits that eliminate every unit given as (steps, hits_per_step)."""
    return sum(s * h for s, h in absorbers)


def score(pos: Position, rnd: CombatRound, plan: FirePlan, dice: Sequence[int], *,
          units: UnitLookup | None = None) -> FireResult:
    """Resolve a checked plan with ``dice`` (as many as ``dice_needed``).

    Units fire in order; each takes its dice from the batch in turn. A unit
    fires at the first of its target and fallbacks that is legal when it
    fires; if none is, at the first legal class in armor, infantry,
    anti-tank, artillery order (CB-05); with no enemy class left it does not
    fire. A Class is wiped out once its hits can remove all its units, which
    changes later targeting and firepower (RB 9.3, 9.5). Deterministic in
    ``dice``. Raises ValueError if the number of dice is wrong.
    """
    look = lookup_of(units)
    counts = dice_counts(pos, rnd, plan, units=look)
    if len(dice) != sum(counts):
        raise ValueError(f"the plan needs {sum(counts)} dice, not {len(dice)}")
    enemy = enemy_of(plan.side)
    absorbers: dict[ArmsClass, list[tuple[int, int]]] = {}
    for b in firing_units(pos, rnd.hex, enemy):
        u = look(b.unit)
        a = absorber_of(b, u)
        absorbers.setdefault(u.arms_class, []).append(a.hits)
    totals: dict[ArmsClass, list[int]] = {c: [0, 0] for c in absorbers}
    wiped: list[ArmsClass] = []
    shots = []
    i = 0
    table = load_fire_table()
    for f, n in zip(plan.fires, counts):
        rolled = tuple(dice[i:i + n])
        i += n
        b = pos.block(f.token)
        arms = look(b.unit).arms_class
        present = frozenset(c for c in absorbers if c not in wiped)
        legal = legal_targets(arms, present)
        if not legal:
            shots.append(Shot(f.token, None, None, rolled, 0))
            continue
        target = next((c for c in (f.target,) + f.fallback if c in legal), legal[0])
        fire = unit_firepower(arms, target, present)
        hits = sum(1 for r in rolled if table.is_hit(fire, r))
        half = scores_half_hits(pos, rnd, enemy, arms)
        totals[target][1 if half else 0] += hits
        if best_use(totals[target][0], totals[target][1], absorbers[target]) >= _class_capacity(absorbers[target]):
            wiped.append(target)
        shots.append(Shot(f.token, target, fire, rolled, hits, half))
    return FireResult(rnd.hex, plan.side, tuple(shots),
                      {c: ClassHits(h, hh) for c, (h, hh) in totals.items() if h or hh},
                      tuple(wiped))


# ------------------------------------------------------------------ losses (RB 9.5)


class Loss(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Hits and half-hits the owner places on one unit."""

    token: str
    hits: int = 0
    half_hits: int = 0


class LossAllocation(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="losses"):
    """The owner's final placement of the hits of one enemy fire (RB 9.5):
    provisional while the enemy fires, final when it is complete. Hits not
    placed are wasted, which is legal only when no placement could use them."""

    hex: str
    losses: tuple[Loss, ...] = ()


class LossOutcome(msgspec.Struct, frozen=True):
    """An applied allocation. ``reduced``: (token, old CV, new CV) of the
    survivors that lost CV; ``eliminated``: units removed (RB 2.3);
    ``unshielded``: the owner's Disrupted units left with no Undisrupted
    friendly unit in the hex, which Rout at once (RB 11.11); ``battle_over``:
    one side has no units left in the hex (RB 8.0)."""

    position: Position
    eliminated: tuple[str, ...] = ()
    reduced: tuple[tuple[str, int, int], ...] = ()
    wasted_halves: int = 0
    unshielded: tuple[str, ...] = ()
    battle_over: bool = False


def group_problems(pos: Position, owner: Side, groups: Mapping[str, tuple[ClassHits, tuple[Block, ...]]],
                    losses: Sequence[Loss], look: UnitLookup, group_of: Callable[[Block], str],
                    rule: str) -> list[Problem]:
    probs: list[Problem] = []
    placed: dict[str, list[Loss]] = {}
    seen: set[str] = set()
    for loss in losses:
        if loss.token in seen:
            probs.append(Problem(rule, f"{loss.token} is listed twice"))
            continue
        seen.add(loss.token)
        if loss.hits < 0 or loss.half_hits < 0:
            probs.append(Problem(rule, f"{loss.token}: hits cannot be negative"))
            continue
        if not pos.has_block(loss.token):
            probs.append(Problem(rule, f"there is no unit {loss.token}"))
            continue
        b = pos.block(loss.token)
        g = group_of(b) if b.side == owner else ""
        if g not in groups or b not in groups[g][1]:
            probs.append(Problem(rule, f"{loss.token} cannot take these hits (not an eligible {owner} unit)"))
            continue
        placed.setdefault(g, []).append(loss)
    for g, ls in placed.items():
        scored = groups[g][0]
        h = sum(x.hits for x in ls)
        hh = sum(x.half_hits for x in ls)
        if h > scored.hits or hh > scored.half_hits:
            probs.append(Problem(rule, f"{g}: {h} hits and {hh} half-hits placed, but only {scored.hits} hits "
                                       f"and {scored.half_hits} half-hits were scored"))
    for g, (scored, blocks) in groups.items():
        if not scored.hits and not scored.half_hits:
            continue
        if any(not b.unit for b in blocks):
            # Hidden units (DESIGN 4): only their owner, or the audit, can
            # judge the placement; the public parts are checked above.
            continue
        absorbers = [absorber_of(b, look(b.unit)) for b in blocks]
        best = best_use(scored.hits, scored.half_hits, [a.hits for a in absorbers])
        by_token = {x.token: x for x in placed.get(g, [])}
        used = sum(_used_hits(by_token.get(b.token), a) for b, a in zip(blocks, absorbers))
        if used < best:
            if all(a.hits_per_step == a.cv_per_step for a in absorbers):
                text = f"removes {used} CV but the hits can remove {best}"
            else:  # an optional-rule I-tank: hits and CV differ (CB-16)
                text = f"applies {used} hits but {best} can be applied"
            probs.append(Problem("RB 9.5", f"{g}: this placement {text}; hits may be wasted only if there is "
                                           "no alternative"))
    return probs


def _used_steps(loss: Loss | None, a: _Absorber) -> int:
    """Whole steps ``loss`` removes: ``hits_per_step`` hits each, two
    half-hits making a hit (RB 9.5, 9.52); the rest is wasted."""
    if loss is None:
        return 0
    halves = HALVES_PER_HIT * loss.hits + loss.half_hits
    return min(a.steps, halves // (HALVES_PER_HIT * a.hits_per_step))


def used_cv(loss: Loss | None, a: _Absorber) -> int:
    """CV that ``loss`` removes from the unit (RB 2.3)."""
    return _used_steps(loss, a) * a.cv_per_step


def _used_hits(loss: Loss | None, a: _Absorber) -> int:
    """Hits (two half-hits counting one) that ``loss`` applies (RB 9.5)."""
    return _used_steps(loss, a) * a.hits_per_step


def _class_groups(pos: Position, result: FireResult, look: UnitLookup
                  ) -> dict[str, tuple[ClassHits, tuple[Block, ...]]]:
    owner = enemy_of(result.side)
    targets = firing_units(pos, result.hex, owner)
    return {c: (h, tuple(b for b in targets if look(b.unit).arms_class == c)) for c, h in result.hits.items()}


def check_allocation(pos: Position, result: FireResult, allocation: LossAllocation, *,
                     units: UnitLookup | None = None) -> list[Problem]:
    """Every problem with the owner's placement of ``result``'s hits (RB 9.5,
    9.52): only units of the hit Class, no more hits than scored, and every
    hit that can remove CV does."""
    look = lookup_of(units)
    if allocation.hex != result.hex:
        return [Problem("RB 9.5", f"these hits were scored in {result.hex}, not {allocation.hex}")]
    groups = _class_groups(pos, result, look)
    return group_problems(pos, enemy_of(result.side), groups, allocation.losses, look,
                           lambda b: look(b.unit).arms_class, "RB 9.5")


def apply_losses(pos: Position, losses: Iterable[Loss], scored_halves: int, hex_: str, owner: Side, *,
                 units: UnitLookup | None = None) -> LossOutcome:
    """Reduce units by checked losses; a unit taken below its lowest CV is
    eliminated (RB 2.3); partial steps are wasted (RB 9.5)."""
    look = lookup_of(units)
    changed: list[Block] = []
    gone: list[str] = []
    reduced: list[tuple[str, int, int]] = []
    used = 0
    for loss in losses:
        b = pos.block(loss.token)
        u = look(b.unit)
        a = absorber_of(b, u)
        cv = used_cv(loss, a)
        if not cv:
            continue
        used += HALVES_PER_HIT * _used_hits(loss, a)
        new = b.cv - cv
        if new < u.min_cv:
            gone.append(b.token)
        else:
            changed.append(msgspec.structs.replace(b, cv=new))
            reduced.append((b.token, b.cv, new))
    pos = eliminate(pos.replace_blocks(changed), gone)
    left = pos.blocks_in(hex_, owner)
    unshielded = tuple(b.token for b in left if b.disrupted) if left and all(b.disrupted for b in left) \
        and pos.blocks_in(hex_, enemy_of(owner)) else ()
    over = len({b.side for b in pos.blocks_in(hex_)}) < 2
    return LossOutcome(pos, tuple(gone), tuple(reduced), scored_halves - used, unshielded, over)


def apply_allocation(pos: Position, result: FireResult, allocation: LossAllocation, *,
                     units: UnitLookup | None = None) -> LossOutcome:
    """Apply a checked allocation at the end of the enemy's fire (RB 9.1, 9.5)."""
    scored = sum(h.halves for h in result.hits.values())
    return apply_losses(pos, allocation.losses, scored, result.hex, enemy_of(result.side), units=units)


def eliminate(pos: Position, tokens: Iterable[str]) -> Position:
    """The position without these units; a battle one side has left ends (RB 8.0)."""
    gone = set(tokens)
    if not gone:
        return pos
    pos = msgspec.structs.replace(pos, blocks=tuple(b for b in pos.blocks if b.token not in gone))
    keep = [bt for bt in pos.battles if len({b.side for b in pos.blocks_in(bt.hex)}) == 2]
    return pos.with_battles(keep) if len(keep) != len(pos.battles) else pos


def lose_step(pos: Position, token: str, *, units: UnitLookup | None = None) -> tuple[Position, bool]:
    """One step off ``token`` (Rout Attrition RB 11.3, failed Retreat Forced
    March RB 6.4): returns the position and whether the unit was eliminated
    (a unit at its lowest CV that loses a step is, RB 2.3)."""
    b = pos.block(token)
    u = lookup_of(units)(b.unit)
    new = b.cv - u.cv_per_step
    if new < u.min_cv:
        return eliminate(pos, [token]), True
    return pos.replace_blocks([msgspec.structs.replace(b, cv=new)]), False


# ------------------------------------------------------------------ shielding (RB 11.11)


def is_shielded(pos: Position, token: str) -> bool:
    """A Disrupted unit is Shielded by an Undisrupted friendly unit in its hex (RB 11.11)."""
    b = pos.block(token)
    return any(not x.disrupted for x in pos.blocks_in(b.hex, b.side))


def unshielded_disrupted(pos: Position, hex_: str, side: Side) -> tuple[str, ...]:
    """``side``'s Disrupted units in ``hex_`` that Rout now: enemy units are
    there and no Undisrupted friendly unit shields them (RB 11.3, 11.11)."""
    mine = pos.blocks_in(hex_, side)
    if not mine or any(not b.disrupted for b in mine) or not pos.blocks_in(hex_, enemy_of(side)):
        return ()
    return tuple(b.token for b in mine)


def all_unshielded(pos: Position) -> tuple[tuple[str, Side, tuple[str, ...]], ...]:
    """Every (hex, side, tokens) that must Rout now (RB 11.3)."""
    out = []
    for bt in pos.battles:
        for side in (bt.attacker, bt.defender):
            tokens = unshielded_disrupted(pos, bt.hex, side)
            if tokens:
                out.append((bt.hex, side, tokens))
    return tuple(out)


# ------------------------------------------------------------------ Fortresses (RB 13)


#: (map, its Fortress hexes) for the maps asked about (one in play): a map never changes.
_FORTRESS_HEXES: list[tuple[HexMap, tuple[str, ...]]] = []


def fortress_hexes(m: HexMap) -> tuple[str, ...]:
    """Every Fortress hex of the map (RB 1.7, 13), sorted."""
    for known, hexes in _FORTRESS_HEXES:
        if known is m:
            return hexes
    hexes = tuple(sorted(h for h in m.playable_hexes() if m.fortress(h) is not None))
    _FORTRESS_HEXES.append((m, hexes))
    del _FORTRESS_HEXES[:-4]
    return hexes


def pass_turn_fortress_battles(pos: Position, side: Side, fortresses: Iterable[str]) -> tuple[str, ...]:
    """Fortress battles ``side`` attacks: in a Pass Turn it must Withdraw from
    them, as no combat is allowed (RB 13.2 sidebar, 8 sidebar)."""
    forts = set(fortresses)
    return tuple(sorted(b.hex for b in pos.battles if b.hex in forts and b.attacker == side))


def pass_turn_fortress_routs(pos: Position, side: Side, fortresses: Iterable[str]) -> tuple[str, ...]:
    """At the end of a Pass Turn's movement, ``side``'s units still in a
    Fortress battle it attacks are Routed (RB 13.2 sidebar; CB-12)."""
    return tuple(b.token for h in pass_turn_fortress_battles(pos, side, fortresses)
                 for b in pos.blocks_in(h, side))


def fortress_captures(pos: Position, fortresses: Iterable[str]) -> dict[str, Side]:
    """Fortresses that change hands at the end of a Player-Turn: a side's
    Undisrupted units are the sole occupants of one the other side controls
    (RB 13.4; CB-13). Fortress -> new owner."""
    out: dict[str, Side] = {}
    for h in fortresses:
        here = pos.blocks_in(h)
        sides = {b.side for b in here}
        if len(sides) != 1 or not any(not b.disrupted for b in here):
            continue
        side = next(iter(sides))
        if pos.fortresses.get(h) not in (None, side):
            out[h] = side
    return dict(sorted(out.items()))


def apply_captures(pos: Position, captures: Mapping[str, Side]) -> Position:
    return msgspec.structs.replace(pos, fortresses={**pos.fortresses, **captures})


class Capture(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    fortress: str
    side: Side  # the new owner


class CaptureLedger(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Fortress captures in the current Month (RB 13.4): who owned each
    Fortress when the Month began, and the captures since, in order."""

    month: int
    owners_at_start: dict[str, Side] = {}
    captures: tuple[Capture, ...] = ()


def start_month_ledger(month: int, fortresses: Mapping[str, Side]) -> CaptureLedger:
    return CaptureLedger(month, dict(fortresses))


def record_captures(ledger: CaptureLedger, captures: Mapping[str, Side]) -> CaptureLedger:
    return msgspec.structs.replace(
        ledger, captures=ledger.captures + tuple(Capture(h, s) for h, s in sorted(captures.items())))


def captured_supply(ledger: CaptureLedger, port_capacity: Callable[[str, Side], int]) -> dict[Side, int]:
    """Bonus Supply Cards for the next Buildup (RB 13.4): for each Fortress
    captured this Month and not back with its owner at the Month's start, the
    last captor gets the enemy's Port Capacity there, once (RB 13 sidebar
    "Captured Supply"). ``port_capacity(fortress, side)`` is ``side``'s
    capacity (RB 13.3)."""
    bonus: dict[Side, int] = {"axis": 0, "allied": 0}
    final: dict[str, Side] = {}
    for c in ledger.captures:
        final[c.fortress] = c.side
    for h, side in sorted(final.items()):
        if ledger.owners_at_start.get(h) == side:
            continue
        bonus[side] += port_capacity(h, enemy_of(side))
    return bonus


def map_port_capacity(m: HexMap) -> Callable[[str, Side], int]:
    """``port_capacity`` for ``captured_supply`` from the map's Fortresses (RB 13.3)."""
    def cap(hex_: str, side: Side) -> int:
        f = m.fortress(hex_)
        if f is None:
            return 0
        value = f.port_axis if side == "axis" else f.port_allied
        return value or 0
    return cap


def is_besieged(m: HexMap, pos: Position, fortress: str, side: Side) -> bool:
    """RB 13.5: a ``side`` Fortress is besieged if any adjacent hex holds
    enemy units (an enemy or battle hex). Bases are never besieged (BU-07).
    The one definition: Sea Redeployment (RB 16.53) and Tobruk's Positional
    Victory (RB 17.3) ask it."""
    if m.fortress(fortress) is None:
        return False
    return any(pos.blocks_in(n, enemy_of(side)) for _, n in m.neighbours(fortress))


# ------------------------------------------------------------------ a legal placement


def greedy_placement(hits: ClassHits, blocks: Sequence[Block], look: UnitLookup) -> list[Loss]:
    """A placement applying ``best_use`` hits: the best number of hits on
    units taking one hit per step, the rest in whole two-hit steps (elite
    units, optional-rule I-tanks); unusable hits stay unplaced."""
    absorbers = [(b, absorber_of(b, look(b.unit))) for b in blocks]
    pairs = hits.hits + hits.half_hits // HALVES_PER_HIT
    normal_cap = sum(a.steps for _, a in absorbers if a.hits_per_step == 1)
    elite_cap = sum(a.steps for _, a in absorbers if a.hits_per_step == 2)
    n_best = max(range(min(normal_cap, pairs) + 1), key=lambda n: (n + 2 * min(elite_cap, (pairs - n) // 2), -n))
    # Pairs in order: full hits first, then two half-hits each.
    units_of_pairs = [(1, 0)] * hits.hits + [(0, 2)] * (hits.half_hits // HALVES_PER_HIT)
    plan: dict[str, list[int]] = {}
    take = iter(units_of_pairs)

    def give(token: str, count: int) -> None:
        for _ in range(count):
            h, hh = next(take)
            acc = plan.setdefault(token, [0, 0])
            acc[0] += h
            acc[1] += hh

    left = n_best
    for b, a in absorbers:
        if a.hits_per_step == 1 and left:
            k = min(a.steps, left)
            give(b.token, k)
            left -= k
    elite_steps = min(elite_cap, (pairs - n_best) // 2)
    for b, a in absorbers:
        if a.hits_per_step == 2 and elite_steps:
            k = min(a.steps, elite_steps)
            give(b.token, 2 * k)
            elite_steps -= k
    return [Loss(t, h, hh) for t, (h, hh) in plan.items()]


def default_allocation(pos: Position, result: FireResult, *, units: UnitLookup | None = None) -> LossAllocation:
    """One legal placement of ``result``'s hits (``check_allocation`` accepts
    it): for an owner with no real choice, or as a front end's suggestion."""
    look = lookup_of(units)
    losses: list[Loss] = []
    for _cls, (h, blocks) in sorted(_class_groups(pos, result, look).items()):
        losses += greedy_placement(h, blocks, look)
    return LossAllocation(result.hex, tuple(losses))
