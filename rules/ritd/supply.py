"""Supply Lines and the Supply Network (RB 12.0-12.6), from the Base or a Fortress (RB 13.1).

Pure functions over a ``Position``: no files, no randomness, integers only.
Supply is public information (it depends on where blocks are, whether they
are Disrupted and on battle hexsides, never on hidden identities), so both
players compute the same answers.

The model (decisions/supply.md, S-01..S-20):

* A hex is *open* for ``side``'s Supply Lines (RB 12.2) if it is empty,
  friendly, holds only Disrupted enemy units (RB 11.1) or is a battle whose
  Defender is ``side``; *terminal* if it is a battle ``side`` attacked (its
  units may trace out of it, nothing traces through it, RB 12.5); otherwise
  *blocked*. Every battle hexside a line crosses must be friendly to
  ``side`` (RB 8.1, 12.5).
* From a Source (the Base, or a Fortress for Fortress Supply) the highway is
  supplied hex by hex along unblocked highway (RB 12.3). A Supply Chain link
  (RB 12.4) joins a *target* (the Source, a Supplied Highway hex or a hex
  holding an undisrupted friendly unit that is itself supplied) to a hex with
  friendly units: along roads within the Supply Range of the worst road used
  (track 3, trail 2), or to an adjacent hex across a passable hexside. A
  chain member standing on the highway supplies the highway from there
  (RB 12.7 Supply Examples A and B). Disrupted units receive supply but are
  never targets (RB 11.1, 12.4 sidebars).
* The checks run one Dijkstra search per Source over this graph, so the
  check never enumerates paths; ``supply_lines`` enumerates the distinct
  lines of one unit (for RB 5.3 Withdrawals and ``pbem explain supply``).
* The Supply Network (RB 12.6) is ``network``: the union of every unit's
  current lines, the one Network that Withdrawals, Redeployments and
  Minefields use (S-09).

The Supply Checks themselves (RB 12.7, 13.3, 15.1, 16.2) are rules.ritd.supply_checks.
"""

from __future__ import annotations

import functools
import heapq
from typing import Literal, NamedTuple

import msgspec

from pbem.rulesapi import Problem
from rules.ritd.hexmap import HexMap
from rules.ritd.position import Block, Position, Side

#: RB 12.4 Supply Range along roads; no road: adjacent hexes only (range 1).
SUPPLY_RANGE: dict[str, int] = {"highway": 3, "track": 3, "trail": 2}
_MAX_RANGE = 3
_RANK = {"highway": 0, "track": 1, "trail": 2}

LinkKind = Literal["highway", "track", "trail", "adjacent"]
SourceKind = Literal["base", "fortress", "oasis"]
CheckKind = Literal["initial", "final", "buildup"]
ChangeKind = Literal[
    "unsupplied",
    "resupplied",
    "fortress_supply",
    "oasis_supply",
    "disrupted",
    "recovered",
    "eliminated",
    "raider_cleared",
]

HEX_OPEN, HEX_TERMINAL, HEX_BLOCKED = 0, 1, 2


# ------------------------------------------------------------ public records


class Leg(msgspec.Struct, frozen=True):
    """One stretch of a Supply Line: ``kind`` is how it is traced (highway
    supply, a chain link along track/trail, or "adjacent" across a passable
    hexside with no road) and ``hexes`` runs from its first to last hex."""

    kind: LinkKind
    hexes: tuple[str, ...]


class SupplyLine(msgspec.Struct, frozen=True):
    """A Supply Line (RB 12.2) from a unit's hex to a Source.

    ``chain`` names its stops: the unit's hex, each Supply Chain member it
    passes, and the hex where it joins the Supplied Highway or the Source
    (RB 5.3 example: Mechili, Msus, Agedabia). ``legs`` give it hex by hex,
    ending at ``source_hex``.
    """

    source: SourceKind
    source_hex: str
    chain: tuple[str, ...]
    legs: tuple[Leg, ...]

    @property
    def hexes(self) -> tuple[str, ...]:
        out = [self.chain[0]]
        for leg in self.legs:
            out.extend(leg.hexes[1:])
        return tuple(out)

    @property
    def length(self) -> int:
        """Hexes from the unit to the Source."""
        return len(self.hexes) - 1


class SupplyChoices(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The active player's choices where RB leaves one (RB 13.3, 15.1).

    ``fortress``: Fortress hex -> tokens, in preference order, to receive
    Fortress Supply among equally near candidates when capacity runs out.
    ``oasis``: Oasis hex -> the token to receive Oasis Supply when several
    units there need it.
    """

    fortress: dict[str, tuple[str, ...]] = {}
    oasis: dict[str, str] = {}


class ChoiceNeeded(msgspec.Struct, frozen=True):
    """A choice the check cannot make: pick ``count`` of ``candidates`` for
    the Fortress or Oasis in ``hex`` (answer through ``SupplyChoices``)."""

    rule: str
    kind: Literal["fortress", "oasis"]
    hex: str
    candidates: tuple[str, ...]
    count: int
    message: str


class SupplyChange(msgspec.Struct, frozen=True):
    token: str
    hex: str
    change: ChangeKind
    rule: str
    reason: str


class SupplyReport(msgspec.Struct, frozen=True):
    """What a Supply Check found and changed.

    If ``needed`` or ``problems`` is not empty the check was not applied
    (the returned Position is the input); ask the player and run it again.
    ``rout`` lists units newly Disrupted in battle hexes with no undisrupted
    friendly unit left to shield them (RB 12.7, 11.3): the caller resolves
    the Rout. ``isolated`` lists the side's Isolated Fortresses (RB 13.3).
    """

    check: CheckKind
    side: Side | None
    supplied: tuple[str, ...] = ()
    unsupplied: tuple[str, ...] = ()
    changes: tuple[SupplyChange, ...] = ()
    rout: tuple[str, ...] = ()
    eliminated: tuple[str, ...] = ()
    isolated: tuple[str, ...] = ()
    needed: tuple[ChoiceNeeded, ...] = ()
    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.needed and not self.problems


# ------------------------------------------------------ per-map tables


class _Link(NamedTuple):
    end: str
    path: tuple[str, ...]  # both ends included
    kind: LinkKind


class _Tables(NamedTuple):
    highway: frozenset[str]
    hw_nbrs: dict[str, tuple[str, ...]]
    links: dict[str, tuple[_Link, ...]]
    #: ``links`` without the highway ones (the highway step covers them, RB 12.3),
    #: each with the hex it ends in first (``_trace`` reads no field per link).
    chain_links: dict[str, tuple[tuple[str, _Link], ...]]


@functools.cache
def _tables(m: HexMap) -> _Tables:
    """Every possible Supply Chain link from every hex (RB 12.4), computed
    once per map: adjacent passable hexes, and simple road paths no longer
    than the Supply Range of their worst road."""
    highway = m.highway_hexes()
    hw_nbrs = {h: m.road_neighbours(h, ("highway",)) for h in m.playable_hexes()}
    links: dict[str, tuple[_Link, ...]] = {}
    for start in m.playable_hexes():
        found: list[_Link] = []
        for n in m.passable_neighbours(start):
            kind = m.road(start, n)
            found.append(_Link(n, (start, n), kind if kind is not None else "adjacent"))

        def walk(path: tuple[str, ...], worst: str, found: list[_Link] = found) -> None:
            for n in m.road_neighbours(path[-1]):
                if n in path:
                    continue
                kind = m.road(path[-1], n) or "trail"  # road_neighbours only yields roads
                w = kind if _RANK[kind] > _RANK[worst] else worst
                if len(path) > SUPPLY_RANGE[w]:
                    continue
                new = path + (n,)
                if len(new) > 2:
                    found.append(_Link(n, new, "highway" if w == "highway" else w))  # type: ignore[arg-type]
                if len(new) <= _MAX_RANGE:
                    walk(new, w)

        walk((start,), "highway")
        found.sort(key=lambda link: (len(link.path), link.path))
        links[start] = tuple(found)
    chain_links = {h: tuple((link.end, link) for link in found if link.kind != "highway")
                   for h, found in links.items()}
    return _Tables(highway, hw_nbrs, links, chain_links)


# ------------------------------------------------- position, seen by a side


class _View:
    """One side's reading of a Position for Supply Lines (RB 12.2, 12.5)."""

    def __init__(self, m: HexMap, pos: Position, side: Side) -> None:
        self.m = m
        self.pos = pos
        self.side = side
        self.tables = _tables(m)
        kinds: dict[str, int] = {}
        members: set[str] = set()
        receivers: set[str] = set()
        raiders: set[str] = set()
        for h, here in sorted(pos.hex_groups()):
            mine = [b for b in here if b.side == side]
            theirs = [b for b in here if b.side != side] if len(mine) != len(here) else []
            if mine and theirs:
                battle = pos.battle(h)
                if battle is None:
                    raise ValueError(f"{m.name(h)} holds units of both sides but no Battle record (RB 8.0)")
                kinds[h] = HEX_OPEN if battle.defender == side else HEX_TERMINAL
            elif theirs:
                # RB 11.1: Disrupted units cannot block enemy Supply Lines.
                kinds[h] = HEX_BLOCKED if any(not b.disrupted for b in theirs) else HEX_OPEN
            else:
                kinds[h] = HEX_OPEN
            if mine:
                receivers.add(h)
                if theirs:
                    for b in mine:
                        if b.raider:
                            raiders.add(b.token)
                # RB 12.4: undisrupted units form chains, engaged ones too,
                # but not through a battle this side attacked (RB 12.5) and
                # not Raiders, who are cut off (RB 12.5).
                if kinds[h] == HEX_OPEN and any(not b.disrupted and b.token not in raiders for b in mine):
                    members.add(h)
        for f, owner in pos.fortresses.items():
            if owner == side and kinds.get(f, HEX_OPEN) != HEX_BLOCKED:
                receivers.add(f)
        self.kinds = kinds
        #: Battle hexes whose hexsides a line must check (RB 12.5): not blocked.
        self.fences = {h: bt for h, k in kinds.items() if k != HEX_BLOCKED and (bt := pos.battle(h)) is not None}
        self.members = frozenset(members)
        self.receivers = frozenset(receivers)
        self.raiders = frozenset(raiders)

    def kind(self, h: str) -> int:
        return self.kinds.get(h, HEX_OPEN)

    def crossing_ok(self, a: str, b: str) -> bool:
        """RB 12.5: a line crosses a battle hexside only if it is friendly."""
        fences, side = self.fences, self.side
        return not ((a in fences and fences[a].hexside_owner(b) != side)
                    or (b in fences and fences[b].hexside_owner(a) != side))

    def link_ok(self, link: _Link) -> bool:
        path, kinds = link.path, self.kinds
        for h in path[1:-1]:
            if h in kinds and kinds[h] != HEX_OPEN:
                return False
        if self.fences:
            for a, b in zip(path, path[1:]):
                if not self.crossing_ok(a, b):
                    return False
        return True

    def is_friendly_oasis(self, h: str) -> bool:
        """RB 15.1: a friendly Oasis hex; in a battle only the Defender's."""
        if self.m.oasis(h) is None:
            return False
        here = self.pos.blocks_in(h)
        return any(b.side == self.side for b in here) and self.kind(h) == HEX_OPEN


State = tuple[str, bool]  # (hex, on Supplied Highway / Source)


class Trace:
    """A finished search from ``source``: the shortest line length to each
    reached state and its predecessor. Never changed once made, so the
    hexes reached and the lines back (``_canonical``) are kept on it when
    first asked (bounded by its own states, gone with it)."""

    __slots__ = ("source", "dist", "pred", "_hexes", "_lines")

    def __init__(self, source: str, dist: dict[State, int], pred: dict[State, tuple[State, _Link | None]]) -> None:
        self.source = source
        self.dist = dist
        self.pred = pred
        self._hexes: frozenset[str] | None = None
        self._lines: dict[State, tuple[Leg, ...]] = {}

    def reached(self, h: str) -> bool:
        hexes = self._hexes
        if hexes is None:
            hexes = self._hexes = frozenset(x for x, _ in self.dist)
        return h in hexes

    def distance(self, h: str) -> int | None:
        a, b = self.dist.get((h, True)), self.dist.get((h, False))
        if a is None:
            return b
        return a if b is None else min(a, b)


def _trace(view: _View, source: str) -> Trace:
    """Every hex with a Supply Line to ``source`` and its shortest line length."""
    dist: dict[State, int] = {}
    pred: dict[State, tuple[State, _Link | None]] = {}
    kinds = view.kinds
    if kinds.get(source, HEX_OPEN) != HEX_OPEN:
        return Trace(source, dist, pred)
    t = view.tables
    highway, hw_nbrs, links = t.highway, t.hw_nbrs, t.chain_links
    members, receivers, fences = view.members, view.receivers, view.fences
    crossing_ok, link_ok = view.crossing_ok, view.link_ok
    heappop, heappush, dist_get = heapq.heappop, heapq.heappush, dist.get
    far = 1 << 30
    start: State = (source, True)
    dist[start] = 0
    heap: list[tuple[int, str, bool]] = [(0, source, True)]
    while heap:
        d, h, hw = heappop(heap)
        here: State = (h, hw)
        if dist_get(here) != d:
            continue
        if kinds.get(h, HEX_OPEN) != HEX_OPEN:
            continue  # terminal: its units trace into it, nothing beyond (RB 12.5)
        if not (hw or h in members):
            continue  # chains do not project from Disrupted units or empty hexes (RB 12.4)
        if hw and h in highway:
            # RB 12.3: unblocked highway carries supply on.
            nd = d + 1
            for n in hw_nbrs[h]:
                if kinds.get(n, HEX_OPEN) == HEX_BLOCKED or (fences and not crossing_ok(h, n)):
                    continue
                key: State = (n, True)
                known = dist_get(key, far)
                if nd < known:
                    dist[key] = nd
                    pred[key] = (here, None)
                    heappush(heap, (nd, n, True))
                elif nd == known and pred[key][1] is not None:
                    # RB 12.3, S-08: a hex the open highway reaches is on the
                    # Supplied Highway, even where a chain link of the same
                    # length was found first (Ghemines - Benghazi E1 - Er
                    # Regima by trail, beside the highway through Benghazi).
                    pred[key] = (here, None)
        for u, link in links[h]:  # not the highway links: the highway step above covers them (RB 12.3)
            if u not in receivers or kinds.get(u, HEX_OPEN) == HEX_BLOCKED:
                continue
            if not link_ok(link):
                continue
            # A chain member on the highway supplies the highway from there
            # (RB 12.7 Examples A, B).
            key = (u, u in highway and u in members)
            nd = d + len(link.path) - 1
            if nd < dist_get(key, far):
                dist[key] = nd
                pred[key] = (here, link)
                heappush(heap, (nd, u, key[1]))
    return Trace(source, dist, pred)


# ----------------------------------------------------------- supply state


class SideSupply:
    """One side's supply on one position: its view, the trace from its Base,
    its Isolated Fortresses (RB 13.3), and traces from other Sources made
    when first asked (``trace``, ``fortress_trace``)."""

    __slots__ = ("view", "base", "isolated", "_fortresses", "_traces")

    def __init__(self, view: _View, base_hex: str, fortresses: list[str]) -> None:
        self.view = view
        self.base = _trace(view, base_hex)
        self._traces = {base_hex: self.base}
        self._fortresses = frozenset(fortresses)  # Fortresses controlled by the side
        # RB 13.3 (S-09): Isolated = the Fortress hex has no land line to Base.
        self.isolated = tuple(f for f in fortresses if not self.base.reached(f))

    def trace(self, source: str) -> Trace:
        """Every hex with a Supply Line to ``source`` (traced once)."""
        found = self._traces.get(source)
        if found is None:
            found = self._traces[source] = _trace(self.view, source)
        return found

    def fortress_trace(self, fortress: str) -> Trace | None:
        """The trace to a Fortress the side controls, else None."""
        return self.trace(fortress) if fortress in self._fortresses else None


def _fortresses_of(m: HexMap, pos: Position, side: Side) -> list[str]:
    return sorted(f for f, owner in pos.fortresses.items() if owner == side and m.fortress(f) is not None)


def supply_key(pos: Position) -> tuple:
    """Everything of ``pos`` that supply depends on: each block's token, side,
    hex, Disrupted and Raider markers and Fortress/Oasis assignment (not its
    unit, CV or other markers), the battles with their hexsides, and Fortress
    control."""
    return (
        frozenset((b.token, b.side, b.hex, b.disrupted, b.raider, b.fortress_supply, b.oasis_supply) for b in pos.blocks),
        tuple((bt.hex, bt.attacker, tuple(sorted(bt.hexsides.items()))) for bt in pos.battles),
        tuple(sorted(pos.fortresses.items())),
    )


#: A bounded memo of the whole-side computations (``side_supply`` and
#: ``network``), keyed by the map, the side and
#: ``supply_key`` of the position: each result is a function of its key
#: alone, so a hit returns what the computation would. The state machine
#: checks and then applies one action on the same position, and most actions
#: (dice, cards, reveals, losses) change nothing supply depends on. Callers
#: never mutate results (a ``SideSupply`` only fills in its own lazy
#: traces). ``_KEYS`` keeps the keys of the last few Position objects (held,
#: so identities stay unique) to save recomputing them. Not working state:
#: clearing both changes no result (tests/ritd/test_supply_memo.py).
_MEMO: dict[tuple, object] = {}
_MEMO_SIZE = 64
_KEYS: list[tuple[Position, tuple]] = []
_KEYS_SIZE = 8


def _memo(m: HexMap, pos: Position, side: str, what: str, make):
    key = None
    for p, k in reversed(_KEYS):
        if p is pos:
            key = k
            break
    if key is None:
        key = supply_key(pos)
        _KEYS.append((pos, key))
        del _KEYS[:-_KEYS_SIZE]
    full = (m, side, what, key)
    value = _MEMO.get(full, _MISSING)
    if value is _MISSING:
        value = make()
        if _MEMO_SIZE:
            _MEMO[full] = value
            while len(_MEMO) > _MEMO_SIZE:
                del _MEMO[next(iter(_MEMO))]  # the oldest entry
    return value


_MISSING = object()


def side_supply(m: HexMap, pos: Position, side: Side) -> SideSupply:
    return _memo(m, pos, side, "side-supply", lambda: _side_supply_now(m, pos, side))


def _side_supply_now(m: HexMap, pos: Position, side: Side) -> SideSupply:
    return SideSupply(_View(m, pos, side), m.base(side), _fortresses_of(m, pos, side))


def fortress_capacity(m: HexMap, fortress: str, side: Side) -> int:
    place = m.fortress(fortress)
    if place is None:
        return 0
    cap = place.port_axis if side == "axis" else place.port_allied
    return cap or 0


def has_base_line(s: SideSupply, b: Block) -> bool:
    return b.token not in s.view.raiders and s.base.reached(b.hex)


def has_fortress_line(s: SideSupply, b: Block, fortress: str) -> bool:
    trace = s.fortress_trace(fortress)
    return trace is not None and b.token not in s.view.raiders and trace.reached(b.hex)


def block_status(s: SideSupply, b: Block) -> SourceKind | None:
    """How a block is supplied under its recorded Fortress/Oasis assignment."""
    if has_base_line(s, b):
        return "base"
    if b.fortress_supply and has_fortress_line(s, b, b.fortress_supply):
        return "fortress"
    if b.oasis_supply == b.hex and b.token not in s.view.raiders and s.view.is_friendly_oasis(b.hex):
        return "oasis"
    return None


def supplied_tokens(m: HexMap, pos: Position, side: Side) -> frozenset[str]:
    """Tokens of ``side`` that have a Supply Line now (RB 12.2): to the Base,
    to the Fortress recorded in ``Block.fortress_supply`` (RB 13.3), or by the
    Oasis Supply recorded in ``Block.oasis_supply`` (RB 15.1). Makes no new
    assignment. Raises ValueError for a battle hex without a Battle record."""
    s = side_supply(m, pos, side)
    return frozenset(b.token for b in pos.blocks_of(side) if block_status(s, b) is not None)


def is_supplied(m: HexMap, pos: Position, token: str) -> bool:
    """Whether the block ``token`` has a Supply Line now (see ``supplied_tokens``)."""
    b = pos.block(token)
    return block_status(side_supply(m, pos, b.side), b) is not None


def isolated_fortresses(m: HexMap, pos: Position, side: Side) -> tuple[str, ...]:
    """Fortresses ``side`` controls that have no land Supply Line to its Base (RB 13.3)."""
    return side_supply(m, pos, side).isolated


def reach(m: HexMap, pos: Position, side: Side, source: str) -> frozenset[str]:
    """The hexes where one more ``side`` unit, placed alone among the units
    already on the map, would have a Supply Line to ``source`` (RB 12.2):
    the hexes ``_trace`` reaches when every open or terminal hex may hold
    the end of a line. The new unit chains nothing on (it is the end of its
    own line), so one search answers for every hex. For deployment in a
    Supplied location (RB 18.0)."""
    view = side_supply(m, pos, side).view
    probe = object.__new__(_View)
    probe.__dict__.update(view.__dict__)
    probe.receivers = frozenset(h for h in m.playable_hexes() if view.kind(h) != HEX_BLOCKED)
    return frozenset(h for h, _ in _trace(probe, source).dist)


# ------------------------------------------------------------ Supply Lines


def _canonical(trace: Trace, state: State) -> list[Leg]:
    """The shortest line from a reached state back to the trace's Source."""
    known = trace._lines.get(state)
    if known is None:
        known = trace._lines[state] = tuple(_canonical_now(trace, state))
    return list(known)


def _canonical_now(trace: Trace, state: State) -> list[Leg]:
    legs: list[Leg] = []
    cur = state
    while cur in trace.pred:
        prev, link = trace.pred[cur]
        if link is None:
            seg = Leg("highway", (cur[0], prev[0]))
            if legs and legs[-1].kind == "highway":
                legs[-1] = Leg("highway", legs[-1].hexes + (prev[0],))
            else:
                legs.append(seg)
        else:
            legs.append(Leg(link.kind, tuple(reversed(link.path))))
        cur = prev
    return legs


def lines_to(view: _View, trace: Trace, start: str, source: SourceKind) -> list[SupplyLine]:
    if not trace.reached(start):
        return []
    src = trace.source
    if start == src:
        return [SupplyLine(source, src, (start,), ())]
    if (start, True) in trace.dist and trace.pred[(start, True)][1] is None:
        # On the Supplied Highway: the highway itself is the line (RB 12.3).
        return [SupplyLine(source, src, (start,), tuple(_canonical(trace, (start, True))))]
    links = view.tables.links
    out: list[SupplyLine] = []

    def dfs(cur: str, visited: frozenset[str], legs: tuple[Leg, ...], chain: tuple[str, ...]) -> None:
        for link in links[cur]:
            x = link.end
            if x in visited:
                continue
            inner = link.path[1:-1]
            # A path through another member or the Supplied Highway is a
            # different (shorter) line, found on its own.
            if any(
                h in visited or h in view.members or (h, True) in trace.dist or h == src for h in inner
            ):
                continue
            if not view.link_ok(link) or view.kind(x) != HEX_OPEN:
                continue
            leg = Leg(link.kind, link.path)
            if x == src or (x, True) in trace.dist:
                rest = _canonical(trace, (x, True))
                used = set(visited) | set(link.path)
                tail = [h for r in rest for h in r.hexes[1:]]
                if any(h in used for h in tail):
                    continue  # no loops back through the line (RB 12.4 sidebar)
                out.append(SupplyLine(source, src, chain + (x,), legs + (leg,) + tuple(rest)))
            elif x in view.members and trace.reached(x):
                dfs(x, visited | set(link.path), legs + (leg,), chain + (x,))

    dfs(start, frozenset({start}), (), (start,))
    out.sort(key=lambda line: (line.length, line.chain, line.hexes))
    return out


def base_network_part(view: _View, trace: Trace, start: str) -> set[str]:
    """The hexes that the Base lines of a unit in ``start`` add to the union
    of every unit's Base lines, without listing the lines (there can be
    hundreds: one per chain of friendly units, RB 12.2).

    A line through the chain member ``x`` continues as one of ``x``'s own
    lines (the rest of a valid line is valid from ``x``, whose own search
    starts with fewer hexes visited), and every chain member holds units whose
    lines are in the union too. So ``start`` adds only its lines' first legs:
    to the Source or the Supplied Highway (with the route on from there), or
    to a chain member from where at least one line goes on. Equal to the
    union of ``lines_to(view, trace, start, ...)`` (tested against it)."""
    if not trace.reached(start):
        return set()
    src = trace.source
    if start == src:
        return {start}
    if (start, True) in trace.dist and trace.pred[(start, True)][1] is None:
        return {start} | {h for leg in _canonical(trace, (start, True)) for h in leg.hexes}
    links = view.tables.links

    def steps(cur: str, visited: frozenset[str]):
        """(link, tail or None) for every usable link out of ``cur``: the
        tail when it ends the line, None when it goes on to a chain member."""
        for link in links[cur]:
            x = link.end
            if x in visited:
                continue
            inner = link.path[1:-1]
            if any(h in visited or h in view.members or (h, True) in trace.dist or h == src for h in inner):
                continue
            if not view.link_ok(link) or view.kind(x) != HEX_OPEN:
                continue
            if x == src or (x, True) in trace.dist:
                rest = _canonical(trace, (x, True))
                used = visited | set(link.path)
                tail = [h for r in rest for h in r.hexes[1:]]
                if not any(h in used for h in tail):
                    yield link, rest
            elif x in view.members and trace.reached(x):
                yield link, None

    def goes_on(cur: str, visited: frozenset[str]) -> bool:
        for link, rest in steps(cur, visited):
            if rest is not None or goes_on(link.end, visited | set(link.path)):
                return True
        return False

    out: set[str] = set()  # every first leg starts in ``start``; no line, no hex (as lines_to)
    begun = frozenset({start})
    for link, rest in steps(start, begun):
        if rest is not None:
            out.update(link.path)
            out.update(h for leg in rest for h in leg.hexes)
        elif goes_on(link.end, begun | set(link.path)):
            out.update(link.path)
    return out


def supply_lines(
    m: HexMap, pos: Position, side: Side, hex_: str, *, source: str | None = None
) -> tuple[SupplyLine, ...]:
    """Every distinct Supply Line (RB 12.2) a ``side`` unit in ``hex_`` has now.

    Lines differ by their chain (the unit's hex, the chain members used and
    the hex where the line joins the Supplied Highway or the Source) and by
    the road paths between them; from there each follows the shortest route
    to the Source. A unit already on the Supplied Highway has the one line
    along it. ``source``: None = the Base, plus the Fortress a unit there is
    assigned to (``Block.fortress_supply``, RB 13.3) and its Oasis (RB 15.1)
    if one is recorded for the units in ``hex_``; "base" = Base lines only;
    a Fortress hex = lines to that Fortress (assigned or not: RB 5.3 and
    13.3 forbid using them for unassigned units, the caller decides).
    Sorted shortest first. Raises ValueError for an unknown source.
    """
    s = side_supply(m, pos, side)
    view = s.view
    here = pos.blocks_in(hex_, side)
    if here and all(b.token in view.raiders for b in here):
        return ()  # RB 12.5: Raiders are isolated from friendly Supply
    lines: list[SupplyLine] = []
    if source in (None, "base"):
        lines += lines_to(view, s.base, hex_, "base")
    if source is None:
        forts = sorted({b.fortress_supply for b in here if b.fortress_supply})
        for f in forts:
            if pos.fortresses.get(f) == side:
                lines += lines_to(view, s.trace(f), hex_, "fortress")
        if any(b.oasis_supply == hex_ for b in here) and view.is_friendly_oasis(hex_):
            lines.append(SupplyLine("oasis", hex_, (hex_,), ()))
    elif source != "base":
        if m.fortress(source) is None:
            raise ValueError(f"{source!r} is neither 'base' nor a Fortress hex")
        if pos.fortresses.get(source) == side:
            lines += lines_to(view, s.trace(source), hex_, "fortress")
    return tuple(lines)


def network(m: HexMap, pos: Position, side: Side) -> frozenset[str]:
    """The Supply Network (RB 12.6 "The sum of all current friendly Supply
    Lines is termed the Supply Network. When a unit has several valid Supply
    Lines, all of them contribute"): every hex of every current Supply Line
    of every ``side`` unit, i.e. the union of ``supply_lines(m, pos, side,
    h)`` over the hexes of its units, tracing each Source once. Lines to the
    Base, to the Fortress a unit is assigned to (RB 13.3) and the Oasis hex
    of a unit with Oasis Supply (RB 15.1). A unit with no line adds nothing,
    not even its own hex; a stretch of open highway no unit traces along is
    no part of it (S-09). The one Network of the rules: Withdrawal condition
    3 (RB 5.3, MV-06), Redeployment by land and by sea (RB 16.51, 16.53),
    Return for Refit (RB 16.52) and Minefields (RB 14.0, 16.55)."""
    return _memo(m, pos, side, "network", lambda: _network_now(m, pos, side))


def _network_now(m: HexMap, pos: Position, side: Side) -> frozenset[str]:
    s = side_supply(m, pos, side)
    view, trace = s.view, s.trace
    out: set[str] = set()
    for h in sorted({b.hex for b in pos.blocks_of(side)}):
        here = pos.blocks_in(h, side)
        if here and all(b.token in view.raiders for b in here):
            continue  # RB 12.5: Raiders are isolated from friendly Supply
        out.update(base_network_part(view, trace(m.base(side)), h))
        lines = []
        for f in sorted({b.fortress_supply for b in here if b.fortress_supply}):
            if pos.fortresses.get(f) == side:
                lines += lines_to(view, trace(f), h, "fortress")
        for line in lines:
            out.update(line.hexes)
        if any(b.oasis_supply == h for b in here) and view.is_friendly_oasis(h):
            out.add(h)
    return frozenset(out)
