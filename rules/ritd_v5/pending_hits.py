"""Hits scored and not yet placed, in words (issue 21 point 3: pending
half-hits on ``pbem show``, the report and the map; ``Rules.waiting``).

Between a fire and its loss step (``offensive-losses``, ``defensive-losses``)
the scored fire waits in ``Turn.fire_result``: hits per target arms Class,
half-hits where Minefield Defenders were hit (RB 9.52). The target's owner
places them (RB 9.5): one hit takes a step of a normal unit, two hits (or
four half-hits' worth: two half-hits make a hit) a step of an elite unit
(RB 2.4; the single hit on an elite unit is the one the rulebook marks by
rotating the block 45 degrees), and what is left over at the end of the
Combat Round is wasted. All of it is public: the fire was rolled in the open
and the units in a battle stand revealed (RB 7.3).
"""

from __future__ import annotations

from rules.ritd_v5.state import State, game_map

_STEPS = ("offensive-losses", "defensive-losses")


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' * (n != 1)}"


def waiting(state: State, role: str | None) -> list[str]:
    """The hits waiting to be placed, one line (empty when none wait)."""
    turn = state.turn
    result = turn.fire_result if turn is not None and turn.step in _STEPS else None
    if result is None or not result.hits:
        return []
    parts = []
    for cls in sorted(result.hits):
        scored = result.hits[cls]
        said = [_count(scored.hits, "hit")] if scored.hits else []
        said += [_count(scored.half_hits, "half-hit")] if scored.half_hits else []
        if said:
            parts.append(f"{cls} {' and '.join(said)}")
    if not parts:
        return []
    target = "allied" if result.side == "axis" else "axis"
    who = "you place" if role == target else f"the {target} player places"
    halves = any(h.half_hits for h in result.hits.values())
    return [f"{result.side} fire in {game_map().name(result.hex)} scored on {target} units: {', '.join(parts)}; "
            f"{who} them (RB 9.5): a step of an elite unit takes two hits (RB 2.4)"
            + (", two half-hits make a hit (Minefield, RB 9.52)" if halves else "")
            + "; hits left over at the end of the Combat Round are wasted"]
