"""Retreats, Pursuit Fire, Routs and Overruns (RB 10.0-10.5, 11.0-11.4, 13.2 sidebar).

Pure functions the state machine calls between player decisions; moves
themselves (Withdrawal Group Moves, Retreats by Group or Regroup Move) are
rules.ritd.movement's. Dice come in as arguments. Every ``check_*`` returns
all problems at once with their rule; ``apply_*`` never fails on a checked
input.

Hidden values (DESIGN 4): Retreating and Pursuing units are not revealed
(RB 10.2 sidebar). Speeds come in a ``speeds`` mapping token -> speed where
None (or a missing token) means unknown to the replaying side; what cannot be
checked now is returned as ``PursuitSpeedObligation``s, discharged when the
unit is revealed. Loss placement on hidden units is checked only by their
owner (and at the audit), who knows them.

Procedures, each step a decision of the player named:

Refuse Battle (RB 10.2 sidebar, EX-26): passive announces (movement's
  ``refusal_problems``) -> passive announces ``SlowestSpeed`` of the
  Undisrupted refusers (``refusal_split``) -> active ``PursuitFire`` with any
  of ``pursuit_eligible`` (may hold units back) -> dice -> passive
  ``LossAllocation`` (``check_pursuit_losses``) -> passive Withdrawal Group
  Move -> the Disrupted units left are Routed (below), pursued by units that
  have not fired.
Full Retreat (RB 10.3): active moves, ``SlowestSpeed`` -> passive
  ``PursuitFire`` -> dice -> active losses -> left-behind Disrupted units Rout.
Partial Retreat (RB 10.4, 10.41): passive chooses Probe or not; a Probe is a
  ``combat.CombatRound`` from ``probe_round`` (Rearguard fires first); if the
  Rearguard is wiped out (``rearguard_eliminated``), it is a Full Retreat and
  the probers that did not fire Pursue.
Rout (RB 11.3) and Overrun (RB 11.4): ``rout_attrition`` -> ``SlowestSpeed``
  by the owner -> enemy ``PursuitFire`` -> dice -> owner's losses -> owner's
  Withdrawal Group Move (movement, withdrawal="rout"), or
  ``eliminate_unable`` -> ``disrupt_again``.

Decisions: decisions/combat.md (CB-nn).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

import msgspec

from pbem.rulesapi import Problem
from rules.ritd import combat_round as cr
from rules.ritd import fire as fr
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd.firetable import DIE_FACES
from rules.ritd.hexmap import HexMap
from rules.ritd.position import Position, Side, enemy_of
from rules.ritd.wording import UnitNamer, unit_labels

#: RB 10.5: a Pursuit die scores a hit on 4, 5 or 6.
PURSUIT_HITS_FROM = 4


# ------------------------------------------------------------------ Pursuit Fire (RB 10.5)


def pursuit_dice_for(slowest: int, speed: int) -> int:
    """Dice a pursuer of ``speed`` rolls against a group whose slowest unit
    has ``slowest``: 2 if faster, 1 if as fast, 0 if slower (RB 10.5)."""
    return 2 if speed > slowest else 1 if speed == slowest else 0


class SlowestSpeed(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="slowest-speed"):
    """The retreating player's announcement: the speed of his slowest
    Retreating unit (RB 10.5)."""

    hex: str
    speed: int


class Pursuer(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    token: str
    dice: int  # 1 as fast as the slowest Retreating unit, 2 faster


class PursuitFire(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="pursuit"):
    """The pursuing player's fire: the units that fire and their dice. Units
    not listed hold their fire (RB 10.3 sidebar "Pursuit Deception")."""

    hex: str
    pursuers: tuple[Pursuer, ...] = ()


class PursuitSpeedObligation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A deferred check (DESIGN 4): hidden ``token``'s speed must lie in
    ``min_speed``..``max_speed``; for ``slowest`` obligations at least one of
    ``tokens`` must have exactly ``min_speed``."""

    tokens: tuple[str, ...]
    min_speed: int
    max_speed: int
    slowest: bool = False
    rule: str = "RB 10.5"


class PursuitCheck(msgspec.Struct, frozen=True):
    problems: tuple[Problem, ...] = ()
    obligations: tuple[PursuitSpeedObligation, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def check_slowest_speed(retreating: Sequence[str], announced: SlowestSpeed,
                        speeds: Mapping[str, int | None], name: UnitNamer = str) -> PursuitCheck:
    """Check the announced slowest speed against the speeds known (RB 10.5);
    ``name``: how the problems name a block (the token as it is by default)."""
    probs: list[Problem] = []
    if not mv.MIN_SPEED <= announced.speed <= mv.MAX_SPEED:
        probs.append(Problem("RB 6.1", f"unit speeds are {mv.MIN_SPEED}-{mv.MAX_SPEED}, not {announced.speed}"))
        return PursuitCheck(tuple(probs))
    known = {t: speeds.get(t) for t in retreating}
    slower = [t for t, s in known.items() if s is not None and s < announced.speed]
    if slower:
        probs.append(Problem("RB 10.5", f"{unit_labels(name, slower)} is slower than the announced {announced.speed}"))
    unknown = tuple(t for t, s in known.items() if s is None)
    if not unknown:
        if not probs and all(s != announced.speed for s in known.values()):
            probs.append(Problem("RB 10.5", f"no Retreating unit has speed {announced.speed}"))
        return PursuitCheck(tuple(probs))
    exact = any(s == announced.speed for s in known.values())
    ob = PursuitSpeedObligation(unknown, announced.speed, mv.MAX_SPEED, slowest=not exact)
    return PursuitCheck(tuple(probs), (ob,))


def pursuit_eligible(pos: Position, hex_: str, side: Side, fired: Collection[str] = ()) -> tuple[str, ...]:
    """``side``'s units that may Pursue from ``hex_``: Undisrupted (RB 11.1)
    and not yet fired in this Combat Round or procedure (RB 10.5 sidebars)."""
    return tuple(b.token for b in pos.blocks_in(hex_, side) if not b.disrupted and b.token not in fired)


def check_pursuit(pos: Position, fire: PursuitFire, slowest: int, *, eligible: Collection[str],
                  speeds: Mapping[str, int | None], name: UnitNamer = str) -> PursuitCheck:
    """Every problem with a Pursuit Fire order (RB 10.5): eligible units,
    each once, rolling exactly the dice its speed gives (CB-08); ``name``:
    how the problems name a block (the token as it is by default)."""
    probs: list[Problem] = []
    obs: list[PursuitSpeedObligation] = []
    seen: set[str] = set()
    for p in fire.pursuers:
        if p.token in seen:
            probs.append(Problem("RB 10.5", f"{name(p.token)} pursues twice; each unit fires once"))
            continue
        seen.add(p.token)
        if p.token not in eligible:
            probs.append(Problem("RB 10.5", f"{name(p.token)} may not pursue: it is not an Undisrupted unit in "
                                            f"{fire.hex} that has not yet fired"))
            continue
        if p.dice not in (1, 2):
            probs.append(Problem("RB 10.5", f"{name(p.token)}: a pursuer rolls 1 die (as fast) or 2 (faster), "
                                            f"not {p.dice}"))
            continue
        speed = speeds.get(p.token)
        if speed is None:
            lo, hi = (slowest, slowest) if p.dice == 1 else (slowest + 1, mv.MAX_SPEED)
            if lo > hi:
                probs.append(Problem("RB 10.5", f"{name(p.token)}: no unit is faster than speed {slowest}"))
            else:
                obs.append(PursuitSpeedObligation((p.token,), lo, hi))
            continue
        want = pursuit_dice_for(slowest, speed)
        if want == 0:
            probs.append(Problem("RB 10.5", f"{name(p.token)} (speed {speed}) is slower than the Retreating "
                                            f"group (speed {slowest}) and cannot pursue"))
        elif want != p.dice:
            probs.append(Problem("RB 10.5", f"{name(p.token)} (speed {speed}) rolls {want} dice against speed "
                                            f"{slowest}, not {p.dice}"))
    return PursuitCheck(tuple(probs), tuple(obs))


def pursuit_dice_needed(fire: PursuitFire) -> tuple[int, ...]:
    """One entry per die (its faces), in pursuer order."""
    return (DIE_FACES,) * sum(p.dice for p in fire.pursuers)


def score_pursuit(fire: PursuitFire, dice: Sequence[int]) -> int:
    """Hits of a checked Pursuit Fire: each 4-6 (RB 10.5). Raises
    ValueError for a wrong number of dice or a roll outside 1-6."""
    need = sum(p.dice for p in fire.pursuers)
    if len(dice) != need:
        raise ValueError(f"this Pursuit Fire needs {need} dice, not {len(dice)}")
    if any(not 1 <= d <= DIE_FACES for d in dice):
        raise ValueError(f"a die roll is 1..{DIE_FACES}")
    return sum(1 for d in dice if d >= PURSUIT_HITS_FROM)


def _retreat_groups(pos: Position, retreating: Sequence[str], hits: int
                    ) -> tuple[Side, dict[str, tuple[ls.ClassHits, tuple]]]:
    blocks = tuple(pos.block(t) for t in retreating if pos.has_block(t))
    side = blocks[0].side if blocks else "axis"
    return side, {"Retreating units": (ls.ClassHits(hits=hits), blocks)}


def check_pursuit_losses(pos: Position, retreating: Sequence[str], hits: int,
                         allocation: ls.LossAllocation, *, units: cr.UnitLookup | None = None,
                         name: UnitNamer = str) -> list[Problem]:
    """The retreating player's placement of Pursuit hits on any Retreating
    units, under RB 9.5 (elite two hits per step, waste only without an
    alternative). Needs the units' identities (the owner's view). ``name``:
    how the problems name a block (the token as it is by default)."""
    look = cr.lookup_of(units)
    side, groups = _retreat_groups(pos, retreating, hits)
    members = set(retreating)
    return ls.group_problems(pos, side, groups, allocation.losses, look,
                              lambda b: "Retreating units" if b.token in members else "", "RB 10.5", name=name)


def apply_pursuit_losses(pos: Position, retreating: Sequence[str], hits: int,
                         allocation: ls.LossAllocation, *, units: cr.UnitLookup | None = None) -> ls.LossOutcome:
    side, _ = _retreat_groups(pos, retreating, hits)
    return ls.apply_losses(pos, allocation.losses, cr.HALVES_PER_HIT * hits, allocation.hex, side, units=units)


# ------------------------------------------------------------------ Retreats (RB 10.1-10.4)


def refusal_split(pos: Position, hex_: str, side: Side) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A Group Refusing Battle: (Undisrupted units that take Pursuit Fire and
    Withdraw, Disrupted units left behind that then Rout) (RB 8 sidebar)."""
    mine = pos.blocks_in(hex_, side)
    return (tuple(b.token for b in mine if not b.disrupted), tuple(b.token for b in mine if b.disrupted))


def probe_round(retreat: mv.Retreat, *, fortress: bool = False, minefield: bool = False) -> cr.CombatRound:
    """The Combat Round of a Probe against a Partial Retreat (RB 10.41): the
    Rearguard (active player) fires first; the battle's Defender keeps its
    Fortress and Minefield benefits unless it is the prober (sidebar)."""
    return cr.CombatRound(hex=retreat.hex, active=retreat.side, probe=True, fortress=fortress, minefield=minefield)


def rearguard_eliminated(pos: Position, retreat: mv.Retreat) -> bool:
    """After a Probe: no Rearguard unit is left, so the Partial Retreat is a
    Full Retreat and the Disengaging units face Pursuit (RB 10.41)."""
    return not any(pos.has_block(t) for t in retreat.rearguard)


def probe_pursuers(pos: Position, retreat: mv.Retreat, probe_fire: fr.FireResult) -> tuple[str, ...]:
    """Probing units that did not fire and may Pursue the Disengaging units (RB 10.41)."""
    return pursuit_eligible(pos, retreat.hex, enemy_of(retreat.side), probe_fire.fired)


def eliminate_unable(m: HexMap, pos: Position, tokens: Iterable[str], *,
                     lines: mv.SupplyLines | None = None) -> tuple[Position, tuple[str, ...]]:
    """Units forced to Disengage that have no Supply Line they may Withdraw
    along are eliminated (RB 10.1, 11.3, 5.3). Returns the position and the
    eliminated tokens; a unit with a valid route must still make its
    Withdrawal Move, checked by movement."""
    gone = tuple(t for t in tokens
                 if pos.has_block(t) and not any(r.valid for r in mv.withdrawal_routes(m, pos, t, lines=lines)))
    return ls.eliminate(pos, gone), gone


# ------------------------------------------------------------------ Routs (RB 11.3, 11.4)


class RoutAttrition(msgspec.Struct, frozen=True):
    position: Position
    survivors: tuple[str, ...]
    eliminated: tuple[str, ...]


def rout_attrition(pos: Position, tokens: Iterable[str], *, units: cr.UnitLookup | None = None) -> RoutAttrition:
    """Each Routed unit loses one step (RB 11.3 Rout Attrition); a unit at its
    lowest CV is eliminated (RB 2.3)."""
    gone: list[str] = []
    kept: list[str] = []
    for t in tokens:
        pos, dead = ls.lose_step(pos, t, units=units)
        (gone if dead else kept).append(t)
    return RoutAttrition(pos, tuple(kept), tuple(gone))


def disrupt_again(pos: Position, tokens: Iterable[str]) -> Position:
    """Routed units become Disrupted again after their Withdrawal (RB 11.3):
    face-down, no longer revealed."""
    wanted = set(tokens)
    return pos.replace_blocks([msgspec.structs.replace(b, disrupted=True, revealed=False)
                               for b in pos.blocks if b.token in wanted])


def overrun_pursuers(pos: Position, turn: mv.MovementTurn, hex_: str) -> tuple[str, ...]:
    """Units that entered ``hex_`` this phase and Overrun it: they stop there
    and may Pursue the Rout (RB 11.4). Both Moves of an Offensive Turn share
    one Movement phase, so all of them count (RB 11 sidebar "Overruns")."""
    entered = {e.token for e in turn.engagements if e.hex == hex_}
    return tuple(b.token for b in pos.blocks_in(hex_, turn.side) if b.token in entered and not b.disrupted)


def is_overrun(pos: Position, hex_: str, side: Side) -> bool:
    """``side``'s units in ``hex_`` face only enemy Disrupted units: an Overrun (RB 11.4)."""
    enemy = pos.blocks_in(hex_, enemy_of(side))
    return bool(enemy) and bool(pos.blocks_in(hex_, side)) and all(b.disrupted for b in enemy)


class FinalRouts(msgspec.Struct, frozen=True):
    """Final Supply Check Routs (RB 12.7, 11 sidebar): ``eliminated`` newly
    Disrupted engaged units with no shield (they have no Supply Line, so
    cannot Withdraw); ``rout``: other Disrupted units they shielded, now
    Routing as usual."""

    position: Position
    eliminated: tuple[str, ...] = ()
    rout: tuple[tuple[str, Side, tuple[str, ...]], ...] = ()


def final_supply_routs(pos: Position, newly_disrupted: Iterable[str]) -> FinalRouts:
    """Resolve the Routs a Final Supply Check causes (supply.py's ``report.rout``)."""
    new = [t for t in newly_disrupted if pos.has_block(t)]
    doomed = [t for t in new if pos.battle(pos.block(t).hex) is not None and not ls.is_shielded(pos, t)]
    pos = ls.eliminate(pos, doomed)
    return FinalRouts(pos, tuple(doomed), ls.all_unshielded(pos))


def default_pursuit_allocation(pos: Position, retreating: Sequence[str], hits: int, hex_: str, *,
                               units: cr.UnitLookup | None = None) -> ls.LossAllocation:
    """One legal placement of Pursuit hits (``check_pursuit_losses`` accepts it)."""
    look = cr.lookup_of(units)
    _, groups = _retreat_groups(pos, retreating, hits)
    h, blocks = groups["Retreating units"]
    return ls.LossAllocation(hex_, tuple(ls.greedy_placement(h, blocks, look)))
