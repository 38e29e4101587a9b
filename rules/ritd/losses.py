"""Applying losses (RB 9.5, 9.52, 2.3) and Shielding (RB 11.11): the owner's
placement of the hits of one enemy fire on units of the hit Class, hits
wasted only when no placement could use them, elite two-hit steps and
Minefield half-hits, units eliminated below their last step, and the
Disrupted units left unshielded, who Rout (rules.ritd.routs).
Decisions: decisions/combat.md (CB-01, CB-07, CB-09, CB-15, CB-16).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import msgspec

from pbem.rulesapi import Problem
from rules.ritd.combat_round import HALVES_PER_HIT, UnitLookup, firing_units, lookup_of
from rules.ritd.position import Block, Position, Side, enemy_of
from rules.ritd.units import Unit
from rules.ritd.wording import HexNamer, UnitNamer

if TYPE_CHECKING:
    from rules.ritd.fire import FireResult


class ClassHits(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Hits scored on one arms Class: ``hits`` full, ``half_hits`` half (RB 9.52)."""

    hits: int = 0
    half_hits: int = 0

    @property
    def halves(self) -> int:
        return HALVES_PER_HIT * self.hits + self.half_hits


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


def class_capacity(absorbers: Sequence[tuple[int, int]]) -> int:
    """Hits that eliminate every unit given as (steps, hits_per_step)."""
    return sum(s * h for s, h in absorbers)


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
                    rule: str, *, name: UnitNamer = str) -> list[Problem]:
    """Every problem with ``losses`` placed on ``owner``'s ``groups`` (RB 9.5,
    9.52), each block named by ``name`` (the token as it is by default)."""
    probs: list[Problem] = []
    placed: dict[str, list[Loss]] = {}
    unusable_hits: dict[str, list[Problem]] = {}  # per group: hits placed where they cannot be used
    refused: set[str] = set()  # groups already refused as a whole
    seen: set[str] = set()
    for loss in losses:
        if loss.token in seen:
            probs.append(Problem(rule, f"{name(loss.token)} is listed twice"))
            continue
        seen.add(loss.token)
        if loss.hits < 0 or loss.half_hits < 0:
            probs.append(Problem(rule, f"{name(loss.token)}: hits cannot be negative"))
            continue
        if not pos.has_block(loss.token):
            probs.append(Problem(rule, f"there is no unit {name(loss.token)}"))
            continue
        b = pos.block(loss.token)
        g = group_of(b) if b.side == owner else ""
        if g not in groups or b not in groups[g][1]:
            probs.append(Problem(rule, f"{name(loss.token)} cannot take these hits (not an eligible {owner} unit)"))
            continue
        placed.setdefault(g, []).append(loss)
        if b.unit:  # known here: revealed in battle (RB 8.5), or the owner's own replay
            waste = unusable(loss, absorber_of(b, look(b.unit)))
            if waste:
                unusable_hits.setdefault(g, []).append(
                    Problem("RB 9.5", f"{name(loss.token)} ({b.unit} at CV {b.cv}): {waste}"))
    for g, ls in placed.items():
        scored = groups[g][0]
        h = sum(x.hits for x in ls)
        hh = sum(x.half_hits for x in ls)
        if h > scored.hits or hh > scored.half_hits:
            refused.add(g)
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
            refused.add(g)
            probs.append(Problem("RB 9.5", f"{g}: this placement {text}; hits may be wasted only if there is "
                                           "no alternative"))
    # Issue 27 point 6: a placement otherwise right that puts on a unit hits it
    # cannot use is a second form of the one leaving them unplaced.
    probs += [p for g, ps in unusable_hits.items() if g not in refused for p in ps]
    for g, ls in placed.items():
        if g not in refused and g not in unusable_hits:
            probs += split_problems(ls, groups[g][0].hits, name=name)
    return probs


def split_problems(losses: Sequence[Loss], full_hits: int, *, name: UnitNamer = str) -> list[Problem]:
    """The one form of a placement where full hits and half-hits both landed
    (RB 9.52; rules version 6, issue 27 point 6): two half-hits count as one
    hit, so a unit taking one hit or two half-hits ends the same, and the
    placement would have two signed forms. The form: the full hits go first,
    in the order the units are listed; a unit takes half-hits only for what
    no full hit is left for. Each block is named by ``name`` (the token as
    it is by default)."""
    left = full_hits
    probs: list[Problem] = []
    for loss in losses:
        halves = HALVES_PER_HIT * loss.hits + loss.half_hits
        hits = min(left, halves // HALVES_PER_HIT)
        left -= hits
        if hits != loss.hits:
            want = Loss(loss.token, hits, halves - HALVES_PER_HIT * hits)
            probs.append(Problem("RB 9.52", f"{name(loss.token)}: {_halves_text(halves)} placed as {_split_text(loss)}; "
                                            f"the one valid form is {_split_text(want)}: two half-hits count as "
                                            "one hit, so full hits are placed first, in the order the units "
                                            "are listed, and half-hits only where no full hit is left"))
    return probs


def _split_text(loss: Loss) -> str:
    parts = [f"{loss.hits} hit{'s' if loss.hits != 1 else ''}"] if loss.hits else []
    parts += [f"{loss.half_hits} half-hit{'s' if loss.half_hits != 1 else ''}"] if loss.half_hits else []
    return " and ".join(parts) or "nothing"


def _used_steps(loss: Loss | None, a: _Absorber) -> int:
    """Whole steps ``loss`` removes: ``hits_per_step`` hits each, two
    half-hits making a hit (RB 9.5, 9.52); the rest is wasted."""
    if loss is None:
        return 0
    halves = HALVES_PER_HIT * loss.hits + loss.half_hits
    return min(a.steps, halves // (HALVES_PER_HIT * a.hits_per_step))


def unusable(loss: Loss, a: _Absorber) -> str:
    """Why ``loss`` puts on the unit hits it cannot use, or "" (RB 9.5, 9.52;
    issue 27 point 6): hits beyond its remaining steps, or a part of a step
    (one hit on an elite step that takes two, an odd half-hit) would be
    wasted, and a placement carrying them is a second form of the one
    without them. The one check for ``losses`` and the Pursuit losses."""
    halves = HALVES_PER_HIT * loss.hits + loss.half_hits
    per_step = HALVES_PER_HIT * a.hits_per_step
    if halves % per_step == 0 and halves // per_step <= a.steps:
        return ""
    usable = _used_steps(loss, a) * per_step
    step = "one hit" if a.hits_per_step == 1 else f"{a.hits_per_step} hits"
    return (f"{_halves_text(halves)} placed but it can use only {_halves_text(usable)} ({a.steps} step"
            f"{'s' if a.steps != 1 else ''} left, {step} a step); hits a unit cannot use are not placed, "
            "they stay unplaced and are wasted")


def _halves_text(halves: int) -> str:
    hits, half = divmod(halves, HALVES_PER_HIT)
    text = f"{hits} hit{'s' if hits != 1 else ''}" if hits or not half else ""
    return text + (" and " if text and half else "") + ("a half-hit" if half else "") if text or half else "no hits"


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
                     units: UnitLookup | None = None, place: HexNamer = str,
                     name: UnitNamer = str) -> list[Problem]:
    """Every problem with the owner's placement of ``result``'s hits (RB 9.5,
    9.52): only units of the hit Class, no more hits than scored, and every
    hit that can remove CV does. Blocks named by ``name``, hexes by
    ``place`` (RB 1.1)."""
    look = lookup_of(units)
    if allocation.hex != result.hex:
        return [Problem("RB 9.5", f"these hits were scored in {place(result.hex)}, not {place(allocation.hex)}")]
    groups = _class_groups(pos, result, look)
    return group_problems(pos, enemy_of(result.side), groups, allocation.losses, look,
                           lambda b: look(b.unit).arms_class, "RB 9.5", name=name)


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
