"""The Combat Round under way in a Player-Turn, as the state holds it (RB 7.3,
8.6, 9.1-9.2, 10.41, 11.11, 13.2, 14.2): the position it is fought in, the
battles, the CombatRound of the first Active Battle, the fire so far and the
units to reveal. Queries only: the Combat phase's orders are rules.ritd.battle.
"""

from __future__ import annotations

from rules.ritd import combat_round as cr
from rules.ritd import fire as fr
from rules.ritd import fortresses as fo
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd.position import SIDES, Block, Position, Side
from rules.ritd.state import State, game_map, mines_of
from rules.ritd.turn import Turn


def combat_position(state: State, turn: Turn) -> Position:
    """The position a Combat Round is fought in. In Probe Combat the
    Disengaging units, upright in the hex, take no part: only the Rearguard
    fights the Probing units (RB 10.41)."""
    if not turn.probing:
        return state.position
    return ls.eliminate(state.position, [t for t in turn.retreaters if state.position.has_block(t)])


def battle_hexes(pos: Position) -> list[str]:
    """Battles with Undisrupted units of both sides (RB 11.11: only they fight)."""
    return [b.hex for b in pos.battles if cr.both_sides_fight(pos, b.hex)]


def new_battles(turn: Turn) -> tuple[str, ...]:
    """Battles created this Player-Turn (RB 8.6)."""
    mvt = turn.movement
    return tuple(h for h in mvt.attacked if h not in mvt.battles_at_start) if mvt is not None else ()


def combat_round(state: State, turn: Turn) -> cr.CombatRound:
    """The Combat Round under way, in the first of ``turn.battles`` (RB 9.1, 13.2);
    a revealed Minefield there is the Defender's, whoever built it (RB 14.0, 14.2).
    In Probe Combat the Rearguard fires first and keeps, as the battle's
    Defender, its Fortress and Minefield benefits (RB 10.41 sidebar)."""
    hex_ = turn.battles[0]
    return cr.CombatRound(hex=hex_, active=turn.active, assault=hex_ in turn.assault, probe=turn.probing,
                          fortress=hex_ in fo.fortress_hexes(game_map()),
                          minefield=any(hex_ in mines_of(state, s).shown for s in SIDES))


def fire_so_far(result: fr.FireResult) -> str:
    """The side's fire under way, for the prompt of its next order (RB 9.2):
    how many units fired, the hits per Class and the Classes wiped out."""
    hits = ", ".join(f"{h.hits} on {c}" + (f" (+{h.half_hits} half)" if h.half_hits else "")
                     for c, h in sorted(result.hits.items())) or "none"
    wiped = f"; wiped out: {', '.join(result.wiped_out)}" if result.wiped_out else ""
    n = len(result.shots)
    return f" (so far {n} unit{'s' * (n != 1)} fired, hits: {hits}{wiped})"


def to_reveal(state: State, side: Side) -> list[Block]:
    show = set(mv.units_to_reveal(state.position))
    return [b for b in state.position.blocks_of(side) if b.token in show]
