"""§13.3 Replacements: replacement points (§13.3.1) and replacement units (§13.3.2).

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
RPs come in Infantry and Armoured kinds that never mix; the Axis keeps
German and Italian RPs apart; the Allies have one Commonwealth set (§2.3.3).
"""

from __future__ import annotations

from collections.abc import Mapping

from pbem.rulesapi import Problem
from rules.paa.units import Category, Faction, Piece

#: §2.1.4, §13.3.1: at most 10 RP of any kind at the end of the R&R phase.
RP_CAP = 10

Pool = tuple[str, Category]  # (set, category): set is "DE", "IT" or "CW" (Commonwealth)


def pools(faction: Faction) -> tuple[Pool, ...]:
    """§2.3.3, §13.3.1: the RP kinds of a faction."""
    if faction == "axis":
        return (("DE", "infantry"), ("DE", "armoured"), ("IT", "infantry"), ("IT", "armoured"))
    return (("CW", "infantry"), ("CW", "armoured"))


def pool_of(piece: Piece) -> Pool:
    """§13.3.2: the RP kind that rebuilds or reinforces ``piece``: its
    category, and for the Axis its nationality."""
    if piece.kind not in ("infantry", "armoured"):
        raise ValueError(f"§13.3.2: {piece.id} is not a regular unit")
    category: Category = "infantry" if piece.kind == "infantry" else "armoured"
    if piece.faction == "allied":
        return ("CW", category)
    if piece.nation not in ("DE", "IT"):
        raise ValueError(f"§13.3.1: Axis RPs are German or Italian, not {piece.nation}")
    return (piece.nation, category)


def receive(rps: Mapping[Pool, int], income: Mapping[Pool, int]) -> dict[Pool, int]:
    """§13.3.1: RPs arrive at the start of the R&R phase as the OOB says."""
    out = dict(rps)
    for pool, n in income.items():
        if n < 0:
            raise ValueError(f"§13.3.1: RP income is not negative ({pool}: {n})")
        out[pool] = out.get(pool, 0) + n
    return out


def end_of_phase(rps: Mapping[Pool, int]) -> tuple[dict[Pool, int], dict[Pool, int]]:
    """§13.3.1: at the end of the R&R phase each kind keeps at most 10; the
    excess is lost. Returns (kept, lost)."""
    kept = {p: min(n, RP_CAP) for p, n in rps.items()}
    lost = {p: n - RP_CAP for p, n in rps.items() if n > RP_CAP}
    return kept, lost


def rebuild_problems(rps: Mapping[Pool, int], unit: Piece, *, in_cadre: bool) -> list[Problem]:
    """§13.3.2: a unit in the Cadre box is rebuilt for as many RPs of its
    own kind (and, for the Axis, nationality) as its CF (the un-reinforced
    counter, §12.4.5)."""
    if not in_cadre:
        return [Problem("§13.3.2", f"{unit.id} is not in the Cadre box")]
    try:
        pool = pool_of(unit)
    except ValueError as e:
        return [Problem("§13.3.2", str(e))]
    have = rps.get(pool, 0)
    if have < unit.cf:
        name = f"{pool[0]} {pool[1]}" if unit.faction == "axis" else pool[1]
        return [Problem("§13.3.2", f"rebuilding {unit.id} costs {unit.cf} {name} RP; only {have} left")]
    return []


def spend(rps: Mapping[Pool, int], pool: Pool, n: int) -> dict[Pool, int]:
    """§13.3: spend ``n`` RPs of one kind. Raises ValueError if there are too few."""
    if n < 0 or rps.get(pool, 0) < n:
        raise ValueError(f"§13.3: cannot spend {n} {pool} RP out of {rps.get(pool, 0)}")
    out = dict(rps)
    out[pool] = out.get(pool, 0) - n
    return out
