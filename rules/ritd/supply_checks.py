"""The Supply Checks (RB 12.7): Initial, Final and Buildup (RB 16.2), with the
Fortress Supply (RB 13.1, 13.3) and Oasis Supply (RB 15.1) assignments they
make, and ``explain_supply`` (why a unit is or is not supplied). Pure
functions over a ``Position``; the Supply Lines and Network they read are
rules.ritd.supply (decisions/supply.md, S-01..S-20). At the end, the
Player-Turn's check of one side over the State (``supply_check``, kept for
``apply``), which rules.ritd.supply_steps and rules.ritd.canonical read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

import msgspec

from pbem.rulesapi import Problem
from rules.ritd import checked, supply, wording
from rules.ritd.actions import SupplyCheck
from rules.ritd.hexmap import HexMap
from rules.ritd.position import SIDES, Block, Position, Side
from rules.ritd.state import State, game_map
from rules.ritd.supply import (
    HEX_BLOCKED,
    HEX_OPEN,
    HEX_TERMINAL,
    CheckKind,
    ChoiceNeeded,
    SideSupply,
    SupplyChange,
    SupplyChoices,
    SupplyLine,
    SupplyReport,
    Trace,
    block_status,
    fortress_capacity,
    has_base_line,
    has_fortress_line,
    side_supply,
    supply_lines,
)
from rules.ritd.wording import UnitNamer

# ----------------------------------------------------- Fortress, Oasis Supply


class _Assignment(NamedTuple):
    fortress: dict[str, str]  # token -> Fortress hex
    oasis: dict[str, str]  # token -> Oasis hex
    changes: list[SupplyChange]
    needed: list[ChoiceNeeded]
    problems: list[Problem]


def _assign_oases(
    m: HexMap, s: SideSupply, blocks: list[Block], choices: SupplyChoices, check: CheckKind, out: _Assignment,
    name: UnitNamer = str,
) -> None:
    """RB 15.1: one unit in each friendly Oasis is Supplied by it; units in
    the Oasis at the Initial check come first; the assignment persists."""
    view = s.view
    for o in sorted(p.hex for p in m.places if p.is_oasis):
        if not view.is_friendly_oasis(o):
            continue
        here = [b for b in blocks if b.hex == o and b.token not in view.raiders]
        if check == "final" and any(b.oasis_supply == o for b in blocks):
            continue  # kept from the Initial check, even if the unit has left (RB 15.1, S-17)
        # S-12: only units with no line to Base need it.
        needy = sorted((b for b in here if not has_base_line(s, b)), key=lambda b: b.token)
        if not needy:
            continue
        chosen = choices.oasis.get(o)
        if len(needy) == 1:
            pick = needy[0].token
            if chosen is not None and chosen != pick:
                out.problems.append(
                    Problem("RB 15.1", f"{name(chosen)} cannot take Oasis Supply at {m.name(o)}: {name(pick)} is the unit there "
                            "that needs it")
                )
        elif chosen in {b.token for b in needy}:
            pick = chosen
        else:
            if chosen is not None:
                out.problems.append(Problem("RB 15.1", f"{name(chosen)} is not a unit in {m.name(o)} needing Oasis Supply"))
            out.needed.append(
                ChoiceNeeded(
                    "RB 15.1",
                    "oasis",
                    o,
                    tuple(b.token for b in needy),
                    1,
                    f"choose which unit in {m.name(o)} receives Oasis Supply (RB 15.1)",
                )
            )
            continue
        out.oasis[pick] = o
        out.changes.append(SupplyChange(pick, o, "oasis_supply", "RB 15.1", f"Oasis Supply from {m.name(o)}"))


def _assign_fortresses(
    m: HexMap, s: SideSupply, blocks: list[Block], choices: SupplyChoices, check: CheckKind, out: _Assignment,
    name: UnitNamer = str,
) -> None:
    """RB 13.3: an Isolated Fortress supplies up to its Port Capacity; units
    inside first, then the others that can trace to it, nearest first."""
    side = s.view.side
    for f in s.isolated:
        trace = s.fortress_trace(f)
        assert trace is not None  # Isolated Fortresses are controlled ones
        if not trace.dist:
            continue
        kept = [b for b in blocks if b.fortress_supply == f] if check == "final" else []
        remaining = fortress_capacity(m, f, side) - len(kept)
        candidates = [
            b
            for b in blocks
            if not b.fortress_supply
            and b.token not in out.fortress
            and b.token not in out.oasis
            and not has_base_line(s, b)
            and has_fortress_line(s, b, f)
        ]

        def priority(b: Block, trace: Trace = trace, f: str = f) -> tuple[int, int]:
            d = trace.distance(b.hex)
            return (0 if b.hex == f else 1, d if d is not None else 1 << 30)

        groups: dict[tuple[int, int], list[Block]] = {}
        for b in sorted(candidates, key=lambda b: (priority(b), b.token)):
            groups.setdefault(priority(b), []).append(b)
        listed = choices.fortress.get(f, ())
        tie: list[str] = []
        for key in sorted(groups):
            if remaining <= 0:
                break
            group = groups[key]
            if len(group) <= remaining:
                picks = [b.token for b in group]
            else:
                tokens = [b.token for b in group]
                tie = tokens
                picks = [t for t in listed if t in tokens][:remaining]
                if len(picks) < remaining:
                    where = "inside" if key[0] == 0 else f"{key[1]} hexes from"
                    out.needed.append(
                        ChoiceNeeded(
                            "RB 13.3",
                            "fortress",
                            f,
                            tuple(tokens),
                            remaining,
                            f"choose {remaining} of {len(tokens)} units {where} {m.name(f)} "
                            f"to receive its last Fortress Supply (RB 13.3)",
                        )
                    )
                    remaining = 0
                    break
            for t in picks:
                b = next(x for x in group if x.token == t)
                out.fortress[t] = f
                d = trace.distance(b.hex)
                out.changes.append(
                    SupplyChange(
                        t,
                        b.hex,
                        "fortress_supply",
                        "RB 13.3",
                        f"Fortress Supply from Isolated {m.name(f)}"
                        + (" (inside the Fortress)" if b.hex == f else f" ({d} hexes away)"),
                    )
                )
            remaining -= len(picks)
        for t in listed:
            if out.fortress.get(t) != f and t not in tie:
                out.problems.append(
                    Problem(
                        "RB 13.3",
                        f"{name(t)} cannot be chosen for Fortress Supply from {m.name(f)}: "
                        "units inside the Fortress, then the nearest units, have priority",
                    )
                )


# ------------------------------------------------------------ the checks


def _in_order(changes: list[SupplyChange]) -> tuple[SupplyChange, ...]:
    """Changes by token (stable), so reports never depend on block order."""
    return tuple(sorted(changes, key=lambda c: c.token))


def _replace(b: Block, **changes: object) -> Block:
    """``b`` with ``changes``; ``b`` itself when they change nothing (an
    equal Block: blocks are frozen, so sharing it changes no result)."""
    if all(getattr(b, k) == v for k, v in changes.items()):
        return b
    return msgspec.structs.replace(b, **changes)


def _engaged(pos: Position, b: Block) -> bool:
    return any(x.side != b.side for x in pos.blocks_in(b.hex))


def _assign(
    m: HexMap, pos: Position, side: Side, s: SideSupply, choices: SupplyChoices | None, check: CheckKind,
    name: UnitNamer = str,
) -> tuple[list[Block], _Assignment]:
    choices = choices or SupplyChoices()
    blocks = list(pos.blocks_of(side))
    if check != "final":
        # A new assignment at each Initial check (RB 13.3, 15.1).
        blocks = [_replace(b, fortress_supply="", oasis_supply="") if b.fortress_supply or b.oasis_supply else b
                  for b in blocks]
    out = _Assignment({}, {}, [], [], [])
    for f, _ in choices.fortress.items():
        if f not in s.isolated:
            out.problems.append(Problem("RB 13.3", f"{m.name(f) if f in m.hexes else f} is not an Isolated {side} Fortress"))
    _assign_oases(m, s, blocks, choices, check, out, name)
    _assign_fortresses(m, s, blocks, choices, check, out, name)
    if out.fortress or out.oasis:
        blocks = [
            _replace(
                b,
                fortress_supply=out.fortress.get(b.token, b.fortress_supply),
                oasis_supply=out.oasis.get(b.token, b.oasis_supply),
            )
            for b in blocks
        ]
    return blocks, out


def initial_supply_check(
    m: HexMap,
    pos: Position,
    side: Side,
    choices: SupplyChoices | None = None,
    recoverable: Iterable[str] = (),
    *,
    name: UnitNamer = str,
) -> tuple[Position, SupplyReport]:
    """RB 12.7 Initial Supply Check of ``side`` (its problems naming blocks
    by ``name``, the token as it is by default).

    Assigns Fortress (RB 13.3) and Oasis (RB 15.1) Supply afresh, marks
    Unsupplied units and unmarks Supplied ones, and recovers the Disrupted
    units in ``recoverable`` (the caller's list of units that have spent a
    complete enemy Player-Turn Disrupted) that are Supplied and not in a
    battle hex (RB 11.2). Supply is judged on the position as the check
    begins; recovery does not change it (S-15). If a choice is needed or
    ``choices`` is wrong, returns ``pos`` unchanged with ``needed`` or
    ``problems`` set.
    """
    s = side_supply(m, pos, side)
    blocks, asg = _assign(m, pos, side, s, choices, "initial", name)
    report_base = {"check": "initial", "side": side, "isolated": s.isolated}
    if asg.needed or asg.problems:
        return pos, SupplyReport(**report_base, needed=tuple(asg.needed), problems=tuple(asg.problems))  # type: ignore[arg-type]
    can_recover = set(recoverable)
    changes = list(asg.changes)
    new: list[Block] = []
    supplied, unsupplied = [], []
    for b in blocks:
        how = block_status(s, b)
        if how is None:
            unsupplied.append(b.token)
            if not b.unsupplied:
                changes.append(SupplyChange(b.token, b.hex, "unsupplied", "RB 12.7", _why_short(m, s, b)))
            b = _replace(b, unsupplied=True)
        else:
            supplied.append(b.token)
            if b.unsupplied:
                changes.append(SupplyChange(b.token, b.hex, "resupplied", "RB 12.7", f"Supplied from its {how}"))
            b = _replace(b, unsupplied=False)
            if b.disrupted and b.token in can_recover and not _engaged(pos, b):
                changes.append(
                    SupplyChange(b.token, b.hex, "recovered", "RB 11.2", "Supplied, unengaged, a full enemy Player-Turn Disrupted")
                )
                b = _replace(b, disrupted=False)
        new.append(b)
    return pos.replace_blocks(new), SupplyReport(
        **report_base,  # type: ignore[arg-type]
        supplied=tuple(sorted(supplied)),
        unsupplied=tuple(sorted(unsupplied)),
        changes=_in_order(changes),
    )


def final_supply_check(
    m: HexMap, pos: Position, side: Side, choices: SupplyChoices | None = None, *, name: UnitNamer = str
) -> tuple[Position, SupplyReport]:
    """RB 12.7 Final Supply Check of ``side`` (its problems naming blocks by
    ``name``, the token as it is by default).

    Fortress and Oasis assignments of the Initial check stand; capacity left
    over is assigned now (RB 13.3, 15.1). Units now Supplied lose their
    Unsupplied marker; units marked Unsupplied that still have no Supply Line
    are Disrupted (RB 12.1, 11.0). Raider markers are removed: a Raider still
    cut off is Disrupted with the others (RB 12.5). Newly Disrupted units in
    battle hexes with no undisrupted friendly unit left are listed in
    ``rout`` for the caller (RB 12.7, 11.3). Needed choices and problems as
    for ``initial_supply_check``.
    """
    s = side_supply(m, pos, side)
    blocks, asg = _assign(m, pos, side, s, choices, "final", name)
    report_base = {"check": "final", "side": side, "isolated": s.isolated}
    if asg.needed or asg.problems:
        return pos, SupplyReport(**report_base, needed=tuple(asg.needed), problems=tuple(asg.problems))  # type: ignore[arg-type]
    changes = list(asg.changes)
    new: list[Block] = []
    supplied, unsupplied, newly = [], [], []
    for b in blocks:
        how = block_status(s, b)
        if how is None:
            unsupplied.append(b.token)
            if b.unsupplied and not b.disrupted:
                newly.append(b.token)
                changes.append(
                    SupplyChange(b.token, b.hex, "disrupted", "RB 12.1", "Unsupplied at the Initial and the Final Supply Check")
                )
                b = _replace(b, disrupted=True)
        else:
            supplied.append(b.token)
            if b.unsupplied:
                changes.append(SupplyChange(b.token, b.hex, "resupplied", "RB 12.7", f"Supplied from its {how}"))
                b = _replace(b, unsupplied=False)
        if b.raider:
            changes.append(SupplyChange(b.token, b.hex, "raider_cleared", "RB 12.5", "Raider marker removed at the Final Supply Check"))
            b = _replace(b, raider=False)
        new.append(b)
    out = pos.replace_blocks(new)
    rout = tuple(
        sorted(
            t
            for t in newly
            if _engaged(out, out.block(t))
            and not any(x.side == side and not x.disrupted for x in out.blocks_in(out.block(t).hex))
        )
    )
    return out, SupplyReport(
        **report_base,  # type: ignore[arg-type]
        supplied=tuple(sorted(supplied)),
        unsupplied=tuple(sorted(unsupplied)),
        changes=_in_order(changes),
        rout=rout,
    )


def buildup_supply_check(
    m: HexMap, pos: Position, choices: Mapping[Side, SupplyChoices] | None = None
) -> tuple[Position, SupplyReport]:
    """RB 12.7 / 16.2 Buildup Supply Check of both sides.

    Supply of every unit is judged on the position as the check begins, with
    Fortress and Oasis Supply assigned as at an Initial check (S-14). Then
    Unsupplied units are eliminated (listed in ``eliminated``), markers are
    removed from Supplied units, battles left with one side are dropped, and
    Supplied Disrupted units that are not in a battle hex recover. The Supply
    Networks to keep for the Buildup come from ``network``.
    """
    choices = choices or {}
    supplies = {side: side_supply(m, pos, side) for side in SIDES}
    assigned: dict[str, Block] = {}
    changes: list[SupplyChange] = []
    needed: list[ChoiceNeeded] = []
    problems: list[Problem] = []
    for side in SIDES:
        blocks, asg = _assign(m, pos, side, supplies[side], choices.get(side), "buildup")
        needed += asg.needed
        problems += asg.problems
        changes += asg.changes
        assigned.update((b.token, b) for b in blocks)
    isolated = tuple(f for side in SIDES for f in supplies[side].isolated)
    if needed or problems:
        return pos, SupplyReport("buildup", None, isolated=isolated, needed=tuple(needed), problems=tuple(problems))
    kept: list[Block] = []
    supplied, eliminated = [], []
    for b0 in pos.blocks:
        b = assigned[b0.token]
        how = block_status(supplies[b.side], b)
        if how is None:
            eliminated.append(b.token)
            changes.append(SupplyChange(b.token, b.hex, "eliminated", "RB 16.2", "Unsupplied at the Buildup Supply Check"))
            continue
        supplied.append(b.token)
        if b.unsupplied:
            changes.append(SupplyChange(b.token, b.hex, "resupplied", "RB 16.2", f"Supplied from its {how}"))
        kept.append(_replace(b, unsupplied=False, raider=False))
    out = msgspec.structs.replace(pos, blocks=tuple(kept))
    out = out.with_battles(bt for bt in pos.battles if {x.side for x in out.blocks_in(bt.hex)} == set(SIDES))
    final: list[Block] = []
    for b in out.blocks:
        if b.disrupted and not _engaged(out, b):
            changes.append(SupplyChange(b.token, b.hex, "recovered", "RB 16.2", "Supplied and unengaged at the Buildup Supply Check"))
            b = _replace(b, disrupted=False)
        final.append(b)
    out = msgspec.structs.replace(out, blocks=tuple(final))
    return out, SupplyReport(
        "buildup",
        None,
        supplied=tuple(sorted(supplied)),
        unsupplied=tuple(sorted(eliminated)),
        changes=_in_order(changes),
        eliminated=tuple(sorted(eliminated)),
        isolated=isolated,
    )


# ------------------------------------------------- Supplied locations (RB 18.0)

#: The token of the unit ``supplied_locations`` tries in a hex: never a real one.
PROBE = "?probe"


def supplied_count(m: HexMap, pos: Position, side: Side) -> int:
    """How many ``side`` units an Initial Supply Check would find Supplied:
    those with a line to the Base plus the Fortress (RB 13.3) and Oasis
    (RB 15.1) Supply it would assign afresh. Where the owner must choose
    among equals, the count is the same whichever units are chosen."""
    s = side_supply(m, pos, side)
    blocks, asg = _assign(m, pos, side, s, None, "initial")
    based = sum(1 for b in blocks if has_base_line(s, b))
    return based + len(asg.fortress) + len(asg.oasis) + sum(n.count for n in asg.needed)


def supplied_locations(m: HexMap, pos: Position, side: Side, hexes: Iterable[str]) -> frozenset[str]:
    """RB 18.0 "Free Deployment units may be placed in any Supplied location":
    the hexes of ``hexes`` where one more ``side`` unit would be Supplied at
    the first Initial Supply Check without leaving another ``side`` unit
    Unsupplied (D-17): with a line to the Base, or by Fortress or Oasis
    Supply capacity still free for it (a unit that would take the place of
    one already deployed adds no Supplied unit). ``pos`` carries the
    Fortress control the set-up gives (RB 13.1)."""
    wanted = set(hexes)
    base = supply.reach(m, pos, side, m.base(side))
    out = {h for h in wanted if h in base}
    rest = wanted - out
    if not rest:
        return frozenset(out)
    s = side_supply(m, pos, side)
    fortress_reach: set[str] = set()
    for f in s.isolated:
        fortress_reach |= supply.reach(m, pos, side, f)
    oases = {p.hex for p in m.places if p.is_oasis}
    maybe = sorted(h for h in rest if h in fortress_reach or h in oases)
    if maybe:
        now = supplied_count(m, pos, side)
        for h in maybe:
            more = msgspec.structs.replace(pos, blocks=pos.blocks + (Block(PROBE, side, h),))
            if supplied_count(m, more, side) > now:
                out.add(h)
    return frozenset(out)


# ------------------------------------------------------------- explanation


def _why_short(m: HexMap, s: SideSupply, b: Block) -> str:
    reasons = _why_not(m, s, b)
    return reasons[0] if reasons else "no Supply Line (RB 12.2)"


def _why_not(m: HexMap, s: SideSupply, b: Block) -> list[str]:
    """Why a block has no Supply Line: the raider rule, or each way out of its
    hex that fails and the hex or hexside that blocks it."""
    view, base = s.view, s.base
    if b.token in view.raiders:
        return ["a Raider: cut off from friendly Supply until the battle is won (RB 12.5)"]
    out: list[str] = []
    h = b.hex
    if view.kind(h) == HEX_BLOCKED:
        return [f"{m.name(h)} is held by the enemy (RB 12.2)"]
    for _, n in m.neighbours(h):
        if not m.is_playable(n):
            continue
        if not m.is_passable(h, n):
            if (n, True) in base.dist or n in view.members:
                out.append(f"the {m.hexside(h, n)} hexside {m.hexside_name(h, n)} is impassable (RB 1.4, 12.2)")
            continue
        if view.kind(n) == HEX_BLOCKED:
            out.append(f"{m.name(n)} is an enemy hex or enemy battle (RB 12.2)")
        elif view.kind(n) == HEX_TERMINAL:
            out.append(f"{m.name(n)} is a battle we attacked: lines go only into it (RB 12.5)")
        elif not view.crossing_ok(h, n):
            out.append(f"the battle hexside {m.hexside_name(h, n)} is enemy (RB 12.5)")
    for link in view.tables.links[h]:
        u = link.end
        if u in view.members and not base.reached(u):
            out.append(f"the chain member at {m.name(u)} is itself unsupplied (RB 12.4)")
        elif not view.link_ok(link) and ((u, True) in base.dist or u in view.members):
            blocked = [x for x in link.path[1:-1] if view.kind(x) != HEX_OPEN]
            if blocked:
                out.append(f"the {link.kind} to {m.name(u)} passes {m.name(blocked[0])}, which blocks it (RB 12.2)")
    near = [x for (x, hw) in base.dist if hw]
    if near:
        d, x = min((m.distance(h, x), x) for x in near)
        out.append(
            f"nearest Supplied Highway: {m.name(x)}, {d} hex{'es' if d != 1 else ''} away; no friendly unit or road "
            f"brings it within Supply Range (track 3, trail 2, else adjacent; RB 12.4)"
        )
    else:
        out.append("no Supplied Highway at all: the Base is cut off (RB 12.3)")
    return list(dict.fromkeys(out))


def _format_line(m: HexMap, line: SupplyLine) -> str:
    parts = [m.name(line.chain[0])]
    for leg in line.legs:
        parts.append(f"-[{leg.kind}]-> " + " > ".join(m.name(x) for x in leg.hexes[1:]))
    what = {"base": "Base", "fortress": "Fortress", "oasis": "Oasis"}[line.source]
    via = " - ".join(m.name(x) for x in line.chain)
    return f"{via} ({line.length} hexes to the {what} {m.name(line.source_hex)}): " + " ".join(parts)


def explain_supply(m: HexMap, pos: Position, token_or_hex: str, *, name: UnitNamer = str) -> list[str]:
    """Lines of text for ``pbem explain supply <hex or unit>``: each unit's
    (named by ``name``, the token as it is by default) Supply status and
    every Supply Line hex by hex, or why it has none.

    Raises UnknownLocation (from ``HexMap.resolve``) for text that is neither
    a token in ``pos`` nor a location.
    """
    if pos.has_block(token_or_hex):
        blocks = [pos.block(token_or_hex)]
        where = blocks[0].hex
    else:
        where = m.resolve(token_or_hex)
        blocks = sorted(pos.blocks_in(where), key=lambda b: (b.side, b.token))
    out: list[str] = []
    if not blocks:
        return [f"{m.name(where)}: no units"]
    cache: dict[Side, SideSupply] = {}
    for b in blocks:
        s = cache.get(b.side) or cache.setdefault(b.side, side_supply(m, pos, b.side))
        how = block_status(s, b)
        marks = [x for x, on in (("Disrupted", b.disrupted), ("Unsupplied marker", b.unsupplied), ("Raider", b.raider)) if on]
        tag = f" [{', '.join(marks)}]" if marks else ""
        if how is None:
            out.append(f"{name(b.token)} ({b.side}) at {m.name(b.hex)}{tag}: no Supply Line (RB 12.2)")
            out.extend(f"  - {r}" for r in _why_not(m, s, b))
            if s.isolated:
                for f in s.isolated:
                    if has_fortress_line(s, b, f) and b.fortress_supply != f:
                        out.append(f"  - could trace to Isolated {m.name(f)}, but is not assigned its Fortress Supply (RB 13.3)")
            continue
        if how == "base":
            label = "Supplied from the Base"
        elif how == "fortress":
            label = f"Fortress Supplied by {m.name(b.fortress_supply)}"
        else:
            label = "Oasis Supplied"
        lines = supply_lines(m, pos, b.side, b.hex)
        out.append(f"{name(b.token)} ({b.side}) at {m.name(b.hex)}{tag}: {label} (RB 12.2); "
                   f"{len(lines)} Supply Line(s):")
        out.extend(f"  {i}) {_format_line(m, line)}" for i, line in enumerate(lines, 1))
    return out


# -- the Player-Turn's Supply Checks over the State (RB 12.7, 11.2) ---------------------------

def recoverable(state: State, side: Side) -> tuple[str, ...]:
    """RB 11.2: Disrupted units that have spent a complete enemy Player-Turn Disrupted."""
    now = len(state.turns)
    out = []
    for b in state.position.blocks_of(side):
        since = state.disrupted_in.get(b.token)
        if b.disrupted and since is not None and any(
                state.turns[t - 1] != side for t in range(since + 1, now)):
            out.append(b.token)
    return tuple(out)


def supply_check(state: State, step: str, action: SupplyCheck, side: Side) -> tuple[Position, SupplyReport]:
    """The Initial or Final Supply Check (RB 12.7) of ``side`` with the
    Fortress and Oasis choices of ``action``, kept for ``apply`` (rules.ritd.checked)."""
    def compute() -> tuple[Position, SupplyReport]:
        m, pos = game_map(), state.position
        choices = SupplyChoices(fortress=dict(action.fortress), oasis=dict(action.oasis))
        if step == "initial-supply":
            return initial_supply_check(m, pos, side, choices, recoverable=recoverable(state, side),
                                        name=wording.unit_namer(pos))
        return final_supply_check(m, pos, side, choices, name=wording.unit_namer(pos))

    return checked.once("supply", (state.position, action, step, side, state.turns, state.disrupted_in), compute)


__all__ = ["buildup_supply_check", "explain_supply", "final_supply_check", "initial_supply_check", "recoverable",
           "supply_check"]
