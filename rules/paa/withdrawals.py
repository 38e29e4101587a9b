"""§13.2.3 Allied withdrawals and §13.2.4 Allied reinstatement.

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal

from pbem.rulesapi import Problem
from rules.paa.units import Category, Piece

Chooser = Literal["allied", "axis"]


def category_of(p: Piece) -> Category | None:
    if p.kind == "infantry":
        return "infantry"
    if p.kind == "armoured":
        return "armoured"
    return None


def withdrawal_pool(
    pieces: Sequence[Piece],
    cadre: Sequence[Piece],
    category: Category,
    base: Collection[str],
    *,
    from_cadre: bool,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """§13.2.3: (the units the Allies may choose from: of the type, in the
    Alexandria base at the start of the R&R phase, or in the Cadre where the
    OOB allows it; every Allied unit of the type on the board, from which the
    Axis picks when the first set is too small)."""
    first = [p.id for p in pieces if p.faction == "allied" and category_of(p) == category and p.hex in base]
    if from_cadre:
        first += [p.id for p in cadre if p.faction == "allied" and category_of(p) == category]
    board = [p.id for p in pieces if p.faction == "allied" and category_of(p) == category]
    return tuple(sorted(first)), tuple(sorted(board))


def withdrawal_problems(
    pieces: Sequence[Piece],
    cadre: Sequence[Piece],
    category: Category,
    count: int,
    base: Collection[str],
    chosen: Sequence[str],
    chooser: Chooser,
    *,
    from_cadre: bool,
) -> list[Problem]:
    """§13.2.3: the Allies withdraw ``count`` units of ``category`` from their
    pool; if it holds too few, they withdraw all of it and the Axis picks the
    rest among Allied units of the type anywhere on the board. ``chosen``:
    the picks of ``chooser``. Withdrawn units may be OOS or OOC²."""
    first, board = withdrawal_pool(pieces, cadre, category, base, from_cadre=from_cadre)
    if len(set(chosen)) != len(chosen):
        return [Problem("§13.2.3", "a unit is withdrawn twice")]
    if chooser == "allied":
        need = min(count, len(first))
        bad = [u for u in chosen if u not in first]
        if bad:
            return [Problem("§13.2.3", f"{', '.join(bad)} is not a {category} unit in the Alexandria base{' or Cadre' if from_cadre else ''}")]
        if len(chosen) != need:
            return [Problem("§13.2.3", f"the Allies withdraw {need} {category} units here, not {len(chosen)}")]
        return []
    rest = [u for u in board if u not in first]
    need = max(0, count - len(first))
    bad = [u for u in chosen if u not in rest]
    if bad:
        return [Problem("§13.2.3", f"{', '.join(bad)} is not an Allied {category} unit on the board outside the base")]
    if len(chosen) != min(need, len(rest)):
        return [Problem("§13.2.3", f"the Axis picks {min(need, len(rest))} Allied {category} units to withdraw, not {len(chosen)}")]
    return []


def allies_lose_by_withdrawal(pieces: Sequence[Piece], cadre: Sequence[Piece], category: Category, count: int,
                              base: Collection[str], *, from_cadre: bool) -> bool:
    """§13.2.3: if not enough units of the type can be withdrawn at all, the Allied faction loses at once."""
    first, board = withdrawal_pool(pieces, cadre, category, base, from_cadre=from_cadre)
    return len(set(first) | set(board)) < count


def reinstate_problems(withdrawn: Sequence[Piece], cadre: Sequence[Piece], category: Category, count: int,
                       chosen: Sequence[str]) -> list[Problem]:
    """§13.2.4 (R-29): the Allies reinstate ``count`` units of ``category``
    from the withdrawn units or the Allied Cadre, as many as there are."""
    pool = {p.id for p in (*withdrawn, *cadre) if p.faction == "allied" and category_of(p) == category}
    bad = [u for u in chosen if u not in pool]
    if bad:
        return [Problem("§13.2.4", f"{', '.join(bad)} is not a withdrawn or Cadre Allied {category} unit")]
    need = min(count, len(pool))
    if len(set(chosen)) != need or len(chosen) != need:
        return [Problem("§13.2.4", f"{need} {category} units are reinstated, not {len(chosen)}")]
    return []
