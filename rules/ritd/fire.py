"""Fire (RB 9.2-9.4): targeting, the fire order of one or more units, its
dice and its scoring. A Class's hits accumulate over the fire orders of one
side's Defensive or Offensive Fire; a Class whose hits can remove all its
units is wiped out at once, which changes later targeting and firepower
(RB 9.3, 9.5). The losses those hits cause are placed by their owner
(rules.ritd.losses). Decisions: decisions/combat.md (CB-05..CB-08, CB-19..).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import cast

import msgspec

from pbem.rulesapi import Problem
from rules.ritd.combat_round import CombatRound, UnitLookup, dice_multiplier, firing_units, lookup_of, scores_half_hits
from rules.ritd.firetable import DIE_FACES, Fire, load_fire_table
from rules.ritd.losses import ClassHits, absorber_of, best_use, class_capacity
from rules.ritd.position import Block, Position, Side, enemy_of
from rules.ritd.units import ARMS_CLASSES, ArmsClass
from rules.ritd.wording import HexNamer, UnitNamer, unit_labels

# ------------------------------------------------------------------ targets (RB 9.3)


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
    (RB 9.3 last paragraph; CB-05). Only a unit that fires after another one
    of the same order may declare fallbacks (CB-19)."""

    token: str
    target: ArmsClass
    fallback: tuple[ArmsClass, ...] = ()


class FirePlan(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="fire"):
    """One fire order of ``side`` in ``hex``, in its Defensive or Offensive
    Fire: the units listed fire in that order, each seeing the results of
    those before it (RB 9.2). One unit is step-by-step fire: its dice are
    rolled and their hits scored before the same player orders the next
    unit, choosing its target knowing them. Several units are a fire plan
    (one message for them all, targets fixed before any die is rolled, with
    fallbacks). The side's fire goes on, order by order, until every
    Undisrupted unit has fired or no enemy target is left (CB-08, CB-19)."""

    hex: str
    side: Side
    fires: tuple[UnitFire, ...]


def yet_to_fire(pos: Position, rnd: CombatRound, side: Side, prior: FireResult | None) -> tuple[Block, ...]:
    """``side``'s units that fire in this Combat Round and have not fired yet
    in its current Defensive or Offensive Fire (RB 9.0: each unit fires once)."""
    done = {s.token for s in prior.shots} if prior is not None else set()
    return tuple(b for b in firing_units(pos, rnd.hex, side) if b.token not in done)


def targets_left(pos: Position, rnd: CombatRound, side: Side, prior: FireResult | None, *,
                 units: UnitLookup | None = None) -> frozenset[ArmsClass]:
    """The enemy Classes ``side`` may still hit: present and Undisrupted, and
    not wiped out by its fire so far (RB 9.3, 9.5)."""
    wiped = set(prior.wiped_out) if prior is not None else set()
    return frozenset(c for c in present_classes(pos, rnd.hex, enemy_of(side), units) if c not in wiped)


def fire_complete(pos: Position, rnd: CombatRound, result: FireResult, *, units: UnitLookup | None = None) -> bool:
    """Whether ``result.side``'s fire is over: every unit has fired, or no
    enemy Class is left to fire at (RB 9.0, 9.3, 9.5)."""
    return not yet_to_fire(pos, rnd, result.side, result) or not targets_left(pos, rnd, result.side, result, units=units)


def check_fire_plan(pos: Position, rnd: CombatRound, plan: FirePlan, *, prior: FireResult | None = None,
                    units: UnitLookup | None = None, place: HexNamer = str,
                    name: UnitNamer = str) -> list[Problem]:
    """Every problem with a fire order (RB 9.0-9.3, 11.1), given the side's
    fire so far (``prior``: the orders already scored in this Defensive or
    Offensive Fire, None before the first); blocks named by ``name``, hexes
    by ``place`` (RB 1.1)."""
    look = lookup_of(units)
    probs: list[Problem] = []
    if plan.hex != rnd.hex:
        probs.append(Problem("RB 9.0", f"this Combat Round is in {place(rnd.hex)}, not {place(plan.hex)}"))
        return probs
    if pos.battle(rnd.hex) is None:
        return [Problem("RB 8.0", f"there is no battle in {place(rnd.hex)}")]
    if not plan.fires:
        return [Problem("RB 9.2", "name the unit firing and its target Class: 'fire <hex>: <unit> at <class>'")]
    present = targets_left(pos, rnd, plan.side, prior, units=look)
    fired = {s.token for s in prior.shots} if prior is not None else set()
    waiting = {b.token: b for b in yet_to_fire(pos, rnd, plan.side, prior)}
    artillery_left = {t for t, b in waiting.items() if look(b.unit).arms_class == "artillery"} \
        if all(b.unit for b in waiting.values()) else set()
    seen: set[str] = set()
    for i, f in enumerate(plan.fires):
        who = name(f.token)
        if f.token in seen:
            probs.append(Problem("RB 9.2", f"{who} fires twice; each unit fires once per Combat Round"))
            continue
        seen.add(f.token)
        if f.token in fired:
            probs.append(Problem("RB 9.0", f"{who} has already fired in this Combat Round; each unit fires once"))
            continue
        if not pos.has_block(f.token):
            probs.append(Problem("RB 9.2", f"there is no unit {who}"))
            continue
        b = pos.block(f.token)
        if b.side != plan.side or b.hex != rnd.hex:
            probs.append(Problem("RB 9.2", f"{who} is not a {plan.side} unit in the battle in {place(rnd.hex)}"))
            continue
        if b.disrupted:
            probs.append(Problem("RB 11.1", f"{who} is Disrupted and cannot fire"))
            continue
        if not b.unit or b.cv <= 0:
            probs.append(Problem("RB 8.5", f"{who} is not revealed: its unit and CV must be known to fire"))
            continue
        arms = look(b.unit).arms_class
        if arms == "artillery":
            artillery_left.discard(f.token)
        elif artillery_left:
            probs.append(Problem("RB 9.2", f"{who} fires before artillery: artillery must fire first "
                                           f"({unit_labels(name, sorted(artillery_left))} not fired yet)"))
            artillery_left = set()
        legal = legal_targets(arms, present)
        if f.target not in legal:
            probs.append(Problem("RB 9.3", f"{who} ({arms}) may not target {f.target}: "
                                           f"{_targeting_reason(arms, f.target, present)}"))
        order = (f.target,) + f.fallback
        if len(set(order)) != len(order):
            probs.append(Problem("RB 9.3", f"{who} lists a target class twice"))
        if f.fallback and i == 0:
            probs.append(Problem("RB 9.3", f"{who} fires first in this order, at a target legal now: "
                                           "its fallbacks could never be used (CB-19)"))
        gone = [c for c in f.fallback if c not in present]
        if gone and i:
            probs.append(Problem("RB 9.3", f"{who}: fallback {', '.join(gone)} is no enemy Class left "
                                           "in the battle: it could never be used (CB-19)"))
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

class Shot(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How one unit fired: ``target`` None means it did not fire (no target
    left). ``declared``: the target and fallbacks its order announced, in
    order; those after ``target`` were not used (CB-19)."""

    token: str
    target: ArmsClass | None
    fire: Fire | None
    dice: tuple[int, ...]
    hits: int
    half: bool = False
    declared: tuple[ArmsClass, ...] = ()

    @property
    def unused(self) -> tuple[ArmsClass, ...]:
        """The declared classes this unit did not fire at: the fallbacks after
        its target, or all of them when it fired at none of them (CB-05)."""
        if self.target in self.declared:
            return self.declared[self.declared.index(self.target) + 1:]
        return self.declared


class FireResult(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Scored fire of ``side`` in ``hex``: the shots in order, hits per target
    Class, and the Classes wiped out during the fire (RB 9.5)."""

    hex: str
    side: Side
    shots: tuple[Shot, ...]
    hits: dict[str, ClassHits]
    wiped_out: tuple[str, ...] = ()

    @property
    def yet_to_fire(self) -> tuple[str, ...]:
        """Units that did not fire: they may still Pursue a Rout (RB 11 sidebar)."""
        return tuple(s.token for s in self.shots if s.target is None)

    @property
    def fired(self) -> tuple[str, ...]:
        return tuple(s.token for s in self.shots if s.target is not None)


def score(pos: Position, rnd: CombatRound, plan: FirePlan, dice: Sequence[int], *,
          prior: FireResult | None = None, units: UnitLookup | None = None) -> FireResult:
    """Resolve a checked fire order with ``dice`` (as many as ``dice_needed``),
    after the side's fire so far (``prior``): the result of the whole fire up
    to this order, ``prior``'s shots first.

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
    shots: list[Shot] = []
    if prior is not None:
        for c, h in prior.hits.items():
            totals[cast(ArmsClass, c)] = [h.hits, h.half_hits]
        wiped = [cast(ArmsClass, c) for c in prior.wiped_out]
        shots = list(prior.shots)
    i = 0
    table = load_fire_table()
    for f, n in zip(plan.fires, counts):
        rolled = tuple(dice[i:i + n])
        i += n
        b = pos.block(f.token)
        arms = look(b.unit).arms_class
        present = frozenset(c for c in absorbers if c not in wiped)
        legal = legal_targets(arms, present)
        declared = (f.target,) + f.fallback
        if not legal:
            shots.append(Shot(f.token, None, None, rolled, 0, declared=declared))
            continue
        target = next((c for c in declared if c in legal), legal[0])
        fire = unit_firepower(arms, target, present)
        hits = sum(1 for r in rolled if table.is_hit(fire, r))
        half = scores_half_hits(pos, rnd, enemy, arms)
        totals[target][1 if half else 0] += hits
        if best_use(totals[target][0], totals[target][1], absorbers[target]) >= class_capacity(absorbers[target]):
            wiped.append(target)
        shots.append(Shot(f.token, target, fire, rolled, hits, half, declared=declared))
    return FireResult(rnd.hex, plan.side, tuple(shots),
                      {c: ClassHits(h, hh) for c, (h, hh) in totals.items() if h or hh},
                      tuple(dict.fromkeys(wiped)))
