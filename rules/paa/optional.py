"""§15 Optional rules: reaction movement (§15.1), Italian infantry
reliability (§15.2) and surrender (§15.3).

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
The factions choose them before the game (§6): options ``reaction``,
``reliability`` and ``surrender`` (surrender needs reliability's ICF count).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from pbem.rulesapi import Problem
from rules.paa.tables import OVERRUN_MF, OVERRUN_MF_ICF25
from rules.paa.units import Faction, Piece

RELIABILITY_OPTION = "reliability"
#: §15.3 surrender; it needs the ICF of §15.2, so it brings reliability with it (R-51).
SURRENDER_OPTION = "surrender"
REACTION_OPTION = "reaction"
#: The §15 options the game plays (``pbem new --option reliability`` ...).
OPTIONS = (REACTION_OPTION, RELIABILITY_OPTION, SURRENDER_OPTION)

#: §15.1: the rolls on which a reaction move succeeds.
REACTION_SUCCESS: dict[Faction, frozenset[int]] = {"axis": frozenset({2, 3, 4, 5, 6}), "allied": frozenset({3, 4, 5, 6})}
#: §15.3: the rolls on which a liable Italian infantry unit surrenders.
SURRENDER_ROLLS = frozenset({1, 2, 3})


def reaction_mf(piece: Piece) -> int:
    """§15.1: armoured units (not Italian) spend at most 6 MF; infantry and
    Italian armour 3; Italian infantry may not react (0)."""
    if piece.is_italian and piece.kind == "infantry":
        return 0
    if piece.kind == "armoured" and not piece.is_italian:
        return 6
    return 3


def reaction_problems(piece: Piece, *, in_ezoc: bool, attacked: bool, reacted: bool, cost: int | None,
                      stacking_ok: bool) -> list[Problem]:
    """§15.1: whether ``piece`` may try to join an attacked hex: not OOS nor
    OOC², not in enemy ZOC, not attacked itself, at most one reaction per
    enemy combat phase, within its MF limit (``cost``: MF to the attacked
    hex, None if it cannot get there) and the stacking limit."""
    out: list[Problem] = []
    if not piece.is_regular:
        return [Problem("§15.1", f"{piece.id} is not a regular unit")]
    limit = reaction_mf(piece)
    if limit == 0:
        out.append(Problem("§15.1", "Italian infantry may not perform reaction movement"))
    if piece.oos or piece.dismounted or piece.ooc2:
        out.append(Problem("§15.1", f"{piece.id} is OOS or out of C²"))
    if in_ezoc:
        out.append(Problem("§15.1", f"{piece.id} is in enemy ZOC"))
    if attacked:
        out.append(Problem("§15.1", f"{piece.id} has been attacked itself"))
    if reacted:
        out.append(Problem("§15.1", f"{piece.id} already made its one reaction move this combat phase"))
    if limit and (cost is None or cost > limit):
        out.append(Problem("§15.1", f"{piece.id} may spend at most {limit} MF to reach the attacked hex"))
    if not stacking_ok:
        out.append(Problem("§15.1, §4", f"{piece.id} would break the stacking limit"))
    return out


def reaction_succeeds(faction: Faction, die: int) -> bool:
    """§15.1: Axis units succeed on 2-6, Allied units on 3-6."""
    if not 1 <= die <= 6:
        raise ValueError(f"§15.1: a die shows 1-6, not {die}")
    return die in REACTION_SUCCESS[faction]


def is_supporting(piece: Piece) -> bool:
    """§15.2: a supporting unit (SU) is a German regular unit or an Italian armoured unit."""
    return piece.is_regular and (piece.is_german or (piece.is_italian and piece.kind == "armoured"))


def italian_infantry(piece: Piece) -> bool:
    return piece.is_italian and piece.kind == "infantry"


def may_attack(piece: Piece, icf: int, *, attack_supplied: bool, stacked_with_su: bool) -> bool:
    """§15.2: at ICF >= 10 Italian infantry attacks only in AS or MAS, or stacked with an SU."""
    if not italian_infantry(piece) or icf < 10:
        return True
    return attack_supplied or stacked_with_su


def liable_to_surrender(piece: Piece, icf: int, *, stacked_with_su: bool, adjacent_su: bool) -> bool:
    """§15.2: at ICF >= 20 attacked Italian infantry may surrender unless
    stacked with or adjacent to an SU; at ICF >= 25 unless stacked with one."""
    if not italian_infantry(piece) or icf < 20:
        return False
    if icf >= 25:
        return not stacked_with_su
    return not (stacked_with_su or adjacent_su)


def surrenders(die: int) -> bool:
    """§15.3 (R-32: the Axis rolls): 1-3 surrenders, to the Axis Cadre box."""
    if not 1 <= die <= 6:
        raise ValueError(f"§15.3: a die shows 1-6, not {die}")
    return die in SURRENDER_ROLLS


def icf_after(icf: int, eliminated: Iterable[Piece]) -> int:
    """§15.2: ICF counts the Italian infantry CF eliminated; it never decreases."""
    return icf + sum(p.cf for p in eliminated if italian_infantry(p))


def overrun_cost(defenders: Collection[Piece], icf: int) -> int:
    """§15.2, Table 1: overrunning costs +10 MF, +5 when every defender is
    Italian infantry without an SU in the hex and ICF >= 25 (R-37)."""
    ds = [p for p in defenders if p.is_regular]
    if icf >= 25 and ds and all(italian_infantry(p) for p in ds):
        return OVERRUN_MF_ICF25
    return OVERRUN_MF
