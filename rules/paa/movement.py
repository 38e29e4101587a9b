"""§11.1 Land movement: MF costs by terrain (Table 1), road, track and the
change between them (Figure 6), enemy ZOC (§11.1.4) and fort ZOC (§11.1.5),
the OOS limitations (§11.1.1) and transport units (§11.1.3).

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).

The cost of entering a hex depends on how the mover entered the hex it
leaves (the +2 "Change" of Table 1), so searches run over (hex, line) states:
``line`` is "road" or "track" when the hex was entered along that line, None
otherwise.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Literal

from pbem.hexgrid import Reach, reach
from pbem.rulesapi import Problem
from rules.paa.mapview import MapView
from rules.paa.tables import CHANGE_MF, ESCARPMENT_MF, ROAD_MF, TERRAIN_MF, TRACK_MF
from rules.paa.units import Piece

Line = Literal["road", "track"] | None
Mover = Literal["regular", "transport"]
State = tuple[str, Line]


def mover_of(piece: Piece) -> Mover:
    """§11.1: regular units and transport units move; installations do not (§11.3)."""
    if piece.is_regular:
        return "regular"
    if piece.kind == "transport":
        return "transport"
    raise ValueError(f"§11.3: supply installation {piece.id} cannot move by itself")


#: step_options of immutable maps (the authored map), remembered: a supply trace
#: or a movement search asks for the same steps thousands of times.
_STEPS: dict[tuple[int, str, str, Mover, Line], tuple[tuple[int, Line], ...]] = {}


def step_options(board: MapView, a: str, b: str, *, mover: Mover, entered_by: Line = None) -> tuple[tuple[int, Line], ...]:
    """Every way to enter ``b`` from adjacent ``a`` (see ``_step_options``)."""
    if not getattr(board, "immutable", False):
        return _step_options(board, a, b, mover=mover, entered_by=entered_by)
    key = (id(board), a, b, mover, entered_by)
    hit = _STEPS.get(key)
    if hit is None:
        hit = _STEPS[key] = _step_options(board, a, b, mover=mover, entered_by=entered_by)
    return hit


def _step_options(board: MapView, a: str, b: str, *, mover: Mover, entered_by: Line = None) -> tuple[tuple[int, Line], ...]:
    """Every way to enter ``b`` from adjacent ``a`` as (MF, line used).

    §11.1.2 (regular units): road 1 MF and track 2 MF across a hexside the
    road or track crosses, negating all other costs (escarpment included);
    otherwise the target hex's terrain (clear 3, rough 10, swamp 10) plus 10
    across an escarpment. Leaving by a road or track not connected to the
    one the mover entered ``a`` by costs +2 (Figure 6).
    §11.1.3 (transport units): road 1 MF, track 8 MF, nothing else, and no
    change where road and track are not connected. Prohibited hexsides and
    full sea hexes cannot be entered by anyone (Table 1, §3).
    """
    if board.terrain(b) == "sea":
        return ()
    side = board.side(a, b)
    if side.prohibited:
        return ()
    options: list[tuple[int, Line]] = []
    lines: tuple[tuple[Line, bool, dict[str, int]], ...] = (("road", side.road, ROAD_MF), ("track", side.track, TRACK_MF))
    for line, present, table in lines:
        if not present:
            continue
        cost = table[mover]
        if entered_by is not None and entered_by != line and not board.road_track_connected(a):
            if mover == "transport":
                continue  # §11.1.3: may not change where not connected
            cost += CHANGE_MF  # §11.1.2 Change of road or track
        options.append((cost, line))
    if mover == "regular":
        terrain = board.terrain(b)
        if terrain not in TERRAIN_MF:
            raise ValueError(f"Table 1: hex {b} has unknown terrain {terrain!r}")
        options.append((TERRAIN_MF[terrain] + (ESCARPMENT_MF if side.escarpment else 0), None))
    return tuple(options)


def path_cost(board: MapView, path: Sequence[str], *, mover: Mover) -> int | None:
    """The least MF to follow ``path`` hex by hex (§11.1.2-§11.1.3), choosing
    road or track where a hexside has both; None if a step cannot be made.
    A path of one hex costs nothing."""
    states: dict[Line, int] = {None: 0}
    for a, b in zip(path, path[1:], strict=False):
        if b not in board.neighbours(a):
            return None
        nxt: dict[Line, int] = {}
        for line_in, c in states.items():
            for cost, line_out in step_options(board, a, b, mover=mover, entered_by=line_in):
                if line_out not in nxt or c + cost < nxt[line_out]:
                    nxt[line_out] = c + cost
        if not nxt:
            return None
        states = nxt
    return min(states.values())


def move_problems(
    board: MapView,
    piece: Piece,
    path: Sequence[str],
    *,
    ezoc: Collection[str] = frozenset(),
    fort_zoc: Collection[str] = frozenset(),
    blocked: Collection[str] = frozenset(),
    mf: int | None = None,
) -> list[Problem]:
    """Every reason ``piece`` may not follow ``path`` (its own hex first) by land.

    ``ezoc``: hexes in enemy ZOC (§3); ``fort_zoc``: hexes in the ZOC of an
    enemy-occupied fort; ``blocked``: hexes holding enemy regular or
    transport units, entered only by overrun (§11.1, §11.4); ``mf``: MF left
    (default the piece's MF).
    """
    out: list[Problem] = []
    if piece.oos or piece.dismounted:
        out.append(Problem("§11", f"{piece.id} is OOS{' (dismounted)' if piece.dismounted else ''} and may not move"))
    if piece.ooc2:
        out.append(Problem("§10.3", f"{piece.id} is out of C² and may not move"))
    try:
        mover = mover_of(piece)
    except ValueError as e:
        return [*out, Problem("§11.3", str(e))]
    if len(path) < 2 or path[0] != piece.hex:
        return [*out, Problem("§11.1", f"a move of {piece.id} starts in its hex {piece.hex} and enters at least one hex")]
    for a, b in zip(path, path[1:], strict=False):
        if b not in board.neighbours(a):
            out.append(Problem("§11.1", f"{b} is not adjacent to {a}"))
            return out
    for h in path[1:]:
        if h in blocked:
            out.append(Problem("§11.1", f"{piece.id} may not enter {h}, held by enemy units, except by overrun (§11.4)"))
    if path[0] in ezoc and path[1] in ezoc:
        out.append(Problem("§11.1.4", f"{piece.id} starts in enemy ZOC and must first enter a hex not in enemy ZOC, not {path[1]}"))
    for h in path[1:-1]:
        if h in ezoc:
            out.append(Problem("§11.1.4", f"{piece.id} must stop on entering enemy ZOC in {h}"))
        elif h in fort_zoc:
            out.append(Problem("§11.1.5", f"{piece.id} must stop on entering enemy fort ZOC in {h}"))
    cost = path_cost(board, path, mover=mover)
    budget = piece.mf if mf is None else mf
    if cost is None:
        why = "only along roads and tracks, never changing where they are not connected (§11.1.3)" if mover == "transport" \
            else "not across prohibited hexsides nor into full sea hexes (Table 1)"
        out.append(Problem("§11.1", f"{piece.id} cannot follow {'-'.join(path)}: it moves {why}"))
    elif cost > budget:
        out.append(Problem("§11.1", f"{piece.id} needs {cost} MF for {'-'.join(path)} but has {budget}"))
    return out


def oos_movement_problems(piece: Piece, *, started_in_supply: bool, supplied_after_steps: Sequence[bool]) -> list[Problem]:
    """§11.1.1, §8.4.1-§8.4.2: Allied regular and transport units and Italian
    regular units must stay in supply after every step of a move; German
    units that started the phase in supply may move on into OOS.
    ``supplied_after_steps[i]``: whether the piece traces supply after step i."""
    if not started_in_supply:
        return [Problem("§11", f"{piece.id} started the movement phase OOS and may not move")]
    must_stay = (piece.faction == "allied" and (piece.is_regular or piece.kind == "transport")) or \
        (piece.faction == "axis" and piece.is_italian and piece.is_regular)
    if must_stay:
        for i, ok in enumerate(supplied_after_steps):
            if not ok:
                rule = "§11.1.1, §8.4.1" if piece.faction == "allied" else "§11.1.1, §8.4.2"
                return [Problem(rule, f"{piece.id} would be OOS after step {i + 1} of its move, which it may never be")]
    return []


def _reach(
    board: MapView,
    start: str,
    *,
    mover: Mover,
    mf: int,
    ezoc: Collection[str] = frozenset(),
    fort_zoc: Collection[str] = frozenset(),
    blocked: Collection[str] = frozenset(),
) -> Reach[State]:
    """The search behind ``reachable`` and ``route``: over (hex, line) states."""
    starting_in_ezoc = start in ezoc

    nbrs = board.neighbours

    def neighbours_of(s: State) -> Iterable[State]:
        h, line = s
        for n in nbrs(h):
            if n in blocked:
                continue
            if starting_in_ezoc and h == start and n in ezoc:
                continue
            for _, out_line in step_options(board, h, n, mover=mover, entered_by=line):
                yield (n, out_line)

    def step_cost(s: State, t: State) -> int | None:
        costs = [c for c, ln in step_options(board, s[0], t[0], mover=mover, entered_by=s[1]) if ln == t[1]]
        return min(costs) if costs else None

    def stops(s: State) -> bool:
        return s[0] in ezoc or s[0] in fort_zoc

    origin: State = (start, None)
    return reach(origin, neighbours_of, step_cost, budget=mf, stops=stops)


def reachable(
    board: MapView,
    start: str,
    *,
    mover: Mover,
    mf: int,
    ezoc: Collection[str] = frozenset(),
    fort_zoc: Collection[str] = frozenset(),
    blocked: Collection[str] = frozenset(),
) -> dict[str, int]:
    """Every hex a mover in ``start`` can reach with ``mf`` MF, with its least
    cost (§11.1), stopping on entering enemy ZOC or enemy fort ZOC (§11.1.4,
    §11.1.5); a mover that starts in enemy ZOC must first leave it."""
    r = _reach(board, start, mover=mover, mf=mf, ezoc=ezoc, fort_zoc=fort_zoc, blocked=blocked)
    best: dict[str, int] = {}
    for (h, _), c in r.cost.items():
        if h not in best or c < best[h]:
            best[h] = c
    return best


def routes(
    board: MapView,
    start: str,
    *,
    mover: Mover,
    mf: int,
    ezoc: Collection[str] = frozenset(),
    fort_zoc: Collection[str] = frozenset(),
    blocked: Collection[str] = frozenset(),
) -> dict[str, tuple[tuple[str, ...], int]]:
    """Every hex a mover in ``start`` can reach under the rules of
    ``reachable`` (§11.1), each with one cheapest way there (its own hex
    first) and that way's MF. A move order names its end hex; the
    adjudicator follows this way (R-40: ties broken by the search's order)."""
    r = _reach(board, start, mover=mover, mf=mf, ezoc=ezoc, fort_zoc=fort_zoc, blocked=blocked)
    best: dict[str, tuple[int, State]] = {}
    for s, c in r.cost.items():
        if s[0] != start and (s[0] not in best or c < best[s[0]][0]):
            best[s[0]] = (c, s)
    return {h: (tuple(x for x, _ in r.path_to(s)), c) for h, (c, s) in best.items()}


def fort_advance_problems(piece: Piece, path: Sequence[str], fort: str | None,
                          fort_zoc: Collection[str]) -> list[Problem]:
    """§11.1.5: a unit that entered the ZOC of an enemy-occupied fort by an
    advance after combat (§12.4.7) must attack the fort at least once before
    leaving that ZOC. ``fort``: the fort ``piece`` is held by (None: none);
    ``fort_zoc``: the fort's ZOC hexes. ``path``: the hexes the piece would
    pass through and end in (a land move, an overrun or a sea move)."""
    if fort is None:
        return []
    outside = [h for h in path if h != piece.hex and h not in fort_zoc]
    if not outside:
        return []
    return [Problem("§11.1.5", f"{piece.id} advanced into the ZOC of the enemy-occupied fort {fort} (§12.4.7) "
                               f"and must attack it at least once before leaving that ZOC (not into {outside[0]})")]
