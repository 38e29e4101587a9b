"""Fire (RB 9.2-9.4): targeting, the fire order of one or more units, its
dice and its scoring. A Class's hits accumulate over the fire orders of one
side's Defensive or Offensive Fire; a Class whose hits can remove all its
units is wiped out at once, which changes later targeting and firepower
(RB 9.3, 9.5). The losses those hits cause are placed by their owner
(rules.ritd.losses). Decisions: decisions/combat.md (CB-05..CB-08, CB-19..).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from pbem.rulesapi import Problem
from rules.ritd.combat_round import CombatRound, UnitLookup, dice_multiplier, firing_units, lookup_of, scores_half_hits
from rules.ritd.firetable import DIE_FACES, Fire, load_fire_table
from rules.ritd.losses import ClassHits, absorber_of, best_use, class_capacity
from rules.ritd.position import Block, Position, Side, enemy_of
from rules.ritd.units import ARMS_CLASSES, ArmsClass

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
        if best_use(totals[target][0], totals[target][1], absorbers[target]) >= class_capacity(absorbers[target]):
            wiped.append(target)
        shots.append(Shot(f.token, target, fire, rolled, hits, half))
    return FireResult(rnd.hex, plan.side, tuple(shots),
                      {c: ClassHits(h, hh) for c, (h, hh) in totals.items() if h or hh},
                      tuple(wiped))
