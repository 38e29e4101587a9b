"""§12 Combat: eligibility (§12, §12.1), declarations (§12.2), combat supply
and MAS (§12.3), the CF differential (§12.4.2), the CRT (Table 9, §12.4.3),
counter-attack (§12.4.4), elimination and loss allocation (§12.4.5),
elimination of transport units (§12.4.6) and advance (§12.4.7).

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
All factors are exact fractions (§12.4.2 "All fractions are kept").
Dice values are inputs.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from fractions import Fraction

import msgspec

from pbem.rulesapi import Problem
from rules.paa.mapview import MapView
from rules.paa.stacking import regular_limit
from rules.paa.tables import (
    COUNTER_ATTACK_GERMAN,
    COUNTER_ATTACK_OTHER,
    CRT,
    CRT_COLUMNS,
    ESCARPMENT_AF,
    FORT_DF,
    SUPPLY_TABLE,
    SWAMP_DF_FACTIONS,
    TERRAIN_DF,
    SupplyState,
)
from rules.paa.units import Faction, Piece, current_cf, enemy_of

# --- CRT (Table 9) ------------------------------------------------------------------


def crt(column: int, die: int) -> int:
    """Table 9: the CF the loser must lose, for a column (0..10, 10 = ">9") and a die."""
    if die not in CRT:
        raise ValueError(f"Table 9: a die shows 1-6, not {die}")
    if not 0 <= column < len(CRT_COLUMNS):
        raise ValueError(f"Table 9: no column {column}")
    return CRT[die][column]


def column_minimum(column: int) -> int:
    """§11.4: the loss a column guarantees whatever the die (Table 9's column minimum)."""
    return min(CRT[d][column] for d in CRT)


def attack_column(delta: Fraction) -> int:
    """§12.4.3 (R-10): an attack needs ΔCF >= 0 (Figure 8: −½ "is not a
    permissible attack"); its column is ΔCF with fractions dropped, ">9" from 10."""
    if delta < 0:
        raise ValueError(f"§12.4.3: ΔCF {delta} is below 0, not a permissible attack (Figure 8)")
    return min(math.floor(delta), len(CRT_COLUMNS) - 1)


def counter_attack_column(af: Fraction, df: Fraction) -> int:
    """§12.4.4: ΔCF = max(0, ⌈AF − DF⌉), ">9" from 10."""
    return min(max(0, math.ceil(af - df)), len(CRT_COLUMNS) - 1)


# --- CF differential (§12.4.2) ------------------------------------------------------


def defence_multiplier(board: MapView, piece: Piece) -> int:
    """§12.4.2, Table 1: Tobruk 5, Bardia 2 (R-01), rough 2, swamp 2 for the
    Axis only, otherwise 1; escarpment, road, track, railroad and border have
    no effect. One factor applies, the largest (R-11: the text's formula is
    a choice of cases, not a product)."""
    factors = [1, FORT_DF.get(piece.hex, 1)]
    terrain = board.terrain(piece.hex)
    if terrain == "rough" or (terrain == "swamp" and piece.faction in SWAMP_DF_FACTIONS):
        factors.append(TERRAIN_DF[terrain])
    return max(factors)


def defence_factor(board: MapView, defenders: Sequence[Piece]) -> Fraction:
    """§12.4.2: DF = Σ max(1, current CF × terrain factor) over the defending
    regular units (an OOS unit shows half its CF, Table 5). A transport unit
    alone in its hex defends with CF 1; stacked with regular units it adds
    nothing. Installations never defend."""
    total = Fraction(0)
    for h in sorted({p.hex for p in defenders}):
        here = [p for p in defenders if p.hex == h]
        regular = [p for p in here if p.is_regular]
        if regular:
            for p in regular:
                total += max(Fraction(1), current_cf(p) * defence_multiplier(board, p))
        elif any(p.kind == "transport" for p in here):
            transport = next(p for p in here if p.kind == "transport")
            total += max(Fraction(1), Fraction(1) * defence_multiplier(board, transport))
    return total


class Attacker(msgspec.Struct, frozen=True):
    """An attacking regular unit and its combat supply state (§12.3)."""

    piece: Piece
    supply: SupplyState


def solely_across_escarpment(board: MapView, attacker_hex: str, defender_hexes: Collection[str]) -> bool:
    """§12.4.2: whether every hexside between the attacker and the attacked hexes is an escarpment."""
    return all(board.side(attacker_hex, d).escarpment for d in defender_hexes)


def attack_factor(board: MapView, attackers: Sequence[Attacker], defender_hexes: Collection[str]) -> Fraction:
    """§12.4.2, §12.3, Table 5: AF = Σ max(1, CF × supply factor × ½ if the
    unit attacks solely across escarpment hexsides). GS ×½, AS ×1, MAS ×2;
    an OOS unit has AF 0 (it can only make an ineffective attack, §12.1.1)."""
    total = Fraction(0)
    for a in attackers:
        factor = SUPPLY_TABLE[a.supply].af
        if factor == 0:
            continue
        if solely_across_escarpment(board, a.piece.hex, defender_hexes):
            factor *= ESCARPMENT_AF
        total += max(Fraction(1), a.piece.cf * factor)
    return total


def cf_differential(board: MapView, attackers: Sequence[Attacker], defenders: Sequence[Piece]) -> Fraction:
    """§12.4.2: ΔCF = AF − DF, fractions kept."""
    hexes = {p.hex for p in defenders}
    return attack_factor(board, attackers, hexes) - defence_factor(board, defenders)


def is_ineffective(attackers: Sequence[Attacker], delta: Fraction) -> bool:
    """§12.1.1: an attack on a fort with ΔCF < 0, or by OOS or OOC² units, is ineffective (no CRT roll)."""
    return delta < 0 or any(a.supply == "OOS" or a.piece.ooc2 or a.piece.oos for a in attackers)


# --- Counter-attack (§12.4.4) -------------------------------------------------------


def counter_attack_factor(survivors: Sequence[Piece]) -> Fraction:
    """§12.4.4, Counter-attack Multiplier: each surviving defending regular
    unit's full (nominal) CF, even OOS or OOC², × 4 if German, else × 2,
    without terrain. A transport unit that defended alone counter-attacks with
    CF 1 (R-13: multiplied like any CF). No survivors: AF 0."""
    regular = [p for p in survivors if p.is_regular]
    units = regular if regular else [p for p in survivors if p.kind == "transport"][:1]
    total = Fraction(0)
    for p in units:
        cf = p.cf if p.is_regular else 1
        total += cf * (COUNTER_ATTACK_GERMAN if p.is_german else COUNTER_ATTACK_OTHER)
    return total


def counter_defence_factor(attackers: Sequence[Piece]) -> Fraction:
    """§12.4.4 (R-14): the surviving attacking regular units' nominal CF,
    without terrain or supply factors (Figure 10: 3 + 4 = 7); stacked
    transport units add nothing."""
    return Fraction(sum(p.cf for p in attackers if p.is_regular))


# --- Elimination (§12.4.5) ----------------------------------------------------------


def best_loss(cfs: Sequence[int], required: int) -> int:
    """§12.4.5: the largest total of whole units' nominal CFs not above ``required``."""
    if required < 0 or any(c < 0 for c in cfs):
        raise ValueError("§12.4.5: losses and CFs are not negative")
    sums = {0}
    for c in cfs:
        sums |= {s + c for s in sums if s + c <= required}
    return max(sums)


def loss_problems(candidates: Mapping[str, int], chosen: Collection[str], required: int) -> list[Problem]:
    """§12.4.5: the loser must lose as many CF as possible, up to and
    including ``required``, with whole units (nominal CF): ``chosen`` must
    come exactly to ``best_loss``. ``candidates``: unit id -> nominal CF."""
    out = [Problem("§12.4.5", f"{u} is not among the units that must take this loss") for u in chosen if u not in candidates]
    if out:
        return out
    if len(set(chosen)) != len(chosen):
        return [Problem("§12.4.5", "a unit is named twice")]
    best = best_loss(tuple(candidates.values()), required)
    got = sum(candidates[u] for u in chosen)
    if got > required:
        out.append(Problem("§12.4.5", f"eliminating {', '.join(chosen)} loses {got} CF, more than the required {required}"))
    elif got != best:
        out.append(Problem("§12.4.5", f"eliminating {', '.join(chosen) or 'nothing'} loses {got} CF, but {best} of the required {required} can be lost; the closest must be taken"))
    return out


def allocations(candidates: Mapping[str, int], required: int) -> tuple[frozenset[str], ...]:
    """§12.4.5: every set of units the loser may eliminate (all come to ``best_loss``)."""
    ids = sorted(candidates)
    best = best_loss(tuple(candidates.values()), required)
    out: list[frozenset[str]] = []

    def walk(i: int, chosen: tuple[str, ...], total: int) -> None:
        if total > best:
            return
        if i == len(ids):
            if total == best:
                out.append(frozenset(chosen))
            return
        walk(i + 1, (*chosen, ids[i]), total + candidates[ids[i]])
        walk(i + 1, chosen, total)

    walk(0, (), 0)
    return tuple(out)


# --- Transport units (§12.4.6) ------------------------------------------------------


def transports_eliminated(losers: Sequence[Piece], eliminated: Collection[str], pieces: Iterable[Piece]) -> tuple[str, ...]:
    """§12.4.6: when every losing regular unit of the combat is eliminated,
    every transport unit stacked with them is eliminated too."""
    if not losers or any(p.id not in eliminated for p in losers if p.is_regular):
        return ()
    hexes = {p.hex for p in losers}
    faction = losers[0].faction
    return tuple(sorted(p.id for p in pieces if p.kind == "transport" and p.faction == faction and p.hex in hexes))


def transport_return_turn(turn: int, *, last_turn: int = 20) -> int | None:
    """§12.4.6: an eliminated transport unit goes on the OOB two turns ahead
    and arrives then as a reinforcement; None if that is after the last turn."""
    back = turn + 2
    return back if back <= last_turn else None


# --- Declarations (§12, §12.1, §12.2) -----------------------------------------------


class Combat(msgspec.Struct, frozen=True):
    """One declared combat: the attacking units and the attacked hexes (§12.2)."""

    attackers: tuple[str, ...]
    hexes: tuple[str, ...]


def declaration_problems(
    board: MapView,
    pieces: Sequence[Piece],
    faction: Faction,
    turn: int,
    combats: Sequence[Combat],
    *,
    fort_zoc: Mapping[str, str] | None = None,
) -> list[Problem]:
    """§12, §12.1.1, §12.2: every reason the declared combats are illegal.
    ``fort_zoc``: hex -> enemy-occupied fort whose ZOC it is (zoc.enemy_fort_zoc)."""
    fort_zoc = fort_zoc or {}
    by_id = {p.id: p for p in pieces}
    enemy = enemy_of(faction)
    out: list[Problem] = []
    if faction == "allied" and turn == 1 and combats:
        out.append(Problem("§12", "the Allied faction may not attack at all on turn 1 (April 1941)"))
    seen_attackers: set[str] = set()
    seen_hexes: set[str] = set()
    for c in combats:
        if not c.attackers or not c.hexes:
            out.append(Problem("§12.2", "a combat names attacking units and attacked hexes"))
            continue
        for h in c.hexes:
            if h in seen_hexes:
                out.append(Problem("§12.2", f"{h} is attacked twice; defending units can only be attacked once (R-35)"))
            seen_hexes.add(h)
            if not any(p.hex == h and p.faction == enemy and p.kind in ("infantry", "armoured", "transport") for p in pieces):
                out.append(Problem("§12", f"{h} holds no {enemy} units to attack"))
        for a in c.attackers:
            p = by_id.get(a)
            if p is None or p.faction != faction or not p.is_regular:
                out.append(Problem("§12", f"{a} is not a {faction} regular unit on the map"))
                continue
            if a in seen_attackers:
                out.append(Problem("§12.2", f"{a} is in two combats"))
            seen_attackers.add(a)
            for h in c.hexes:
                if h not in board.neighbours(p.hex):
                    out.append(Problem("§12.2", f"{a} in {p.hex} is not adjacent to {h}; every attacker must be adjacent to all defenders"))
                elif board.side(p.hex, h).prohibited:
                    out.append(Problem("Table 1", f"{a} may not attack {h} across a prohibited hexside"))
            unable = p.oos or p.dismounted or (p.faction == "allied" and p.ooc2)
            forced = p.hex in fort_zoc and fort_zoc[p.hex] in c.hexes
            if unable and not forced:
                state = "OOS" if (p.oos or p.dismounted) else "out of C²"
                out.append(Problem("§12", f"{a} is {state} and may not initiate combat (only an ineffective fort attack, §12.1.1)"))
    for p in pieces:
        if p.faction == faction and p.is_regular and p.hex in fort_zoc:
            fort = fort_zoc[p.hex]
            if not any(p.id in c.attackers and fort in c.hexes for c in combats):
                out.append(Problem("§12.1.1", f"{p.id} is in the ZOC of the enemy-occupied fort {fort} and must attack it"))
    return out


# --- Combat supply (§12.3) ----------------------------------------------------------


def mas_problems(faction: Faction, turn: int, installation: Piece, *, leaves_allied_oos: bool) -> list[Problem]:
    """§12.3.1: what forbids sacrificing ``installation`` for MAS (or
    eliminating it voluntarily): Allied on turn 1 (R-12), Allied OOC²
    installations, and Allied eliminations that would leave Allied regular
    or transport units OOS."""
    out: list[Problem] = []
    if installation.kind != "installation" or installation.faction != faction:
        return [Problem("§12.3", f"{installation.id} is not a {faction} supply installation")]
    if faction == "allied":
        if turn == 1:
            out.append(Problem("§12.3.1", "on turn 1 the Allied faction may not voluntarily eliminate supply installations"))
        if installation.ooc2:
            out.append(Problem("§12.3.1, §10.3", f"{installation.id} is out of C² and cannot form MAS"))
        if leaves_allied_oos:
            out.append(Problem("§12.3.1, §8.4.1", f"eliminating {installation.id} would leave Allied units OOS"))
    return out


def combat_supply(gs_at_start: bool, within_as_of: Collection[str], sacrificed: Collection[str]) -> SupplyState:
    """§12.3: an attacker's combat supply state. ``within_as_of``: the
    unmoved connected installations within 8 MF now (supply.attack_supply_sources);
    MAS if one of them is sacrificed; AS if any; GS if it was in general
    supply at the start of the turn; else OOS."""
    if any(i in sacrificed for i in within_as_of):
        return "MAS"
    if within_as_of:
        return "AS"
    return "GS" if gs_at_start else "OOS"


# --- Advance (§12.4.7) --------------------------------------------------------------


def advance_problems(
    pieces: Sequence[Piece],
    combat: Combat,
    survivors: Collection[str],
    moves: Mapping[str, str],
) -> list[Problem]:
    """§12.4.7 (R-15): after the counter-attack, surviving attackers of this
    combat may advance into attacked hexes left without enemy regular and
    transport units (installations may remain), within the stacking limit (§4)."""
    by_id = {p.id: p for p in pieces}
    out: list[Problem] = []
    for uid, h in moves.items():
        if uid not in combat.attackers or uid not in survivors:
            out.append(Problem("§12.4.7", f"{uid} did not survive as an attacker of this combat and cannot advance"))
        if h not in combat.hexes:
            out.append(Problem("§12.4.7", f"{uid} may only advance into a hex it attacked, not {h}"))
        elif any(p.hex == h and p.kind in ("infantry", "armoured", "transport") and uid in by_id and p.faction != by_id[uid].faction
                 for p in pieces):
            out.append(Problem("§12.4.7", f"{h} still holds defending units; no advance into it"))
    faction = next((by_id[u].faction for u in moves if u in by_id), None)
    for h in sorted(set(moves.values())) if faction is not None else ():
        count = sum(1 for p in pieces if p.hex == h and p.is_regular and p.faction == faction and p.id not in moves)
        count += sum(1 for t in moves.values() if t == h)
        if count > regular_limit(h):
            out.append(Problem("§4, §12.4.7", f"advancing into {h} would stack {count} regular units; at most {regular_limit(h)}"))
    return out
