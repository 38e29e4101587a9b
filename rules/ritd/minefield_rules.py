"""Minefields (RB 14, 16.55; T-30..T-33) as the game plays them.

Building one in the Buildup (check, apply, order listing and parsing),
opening the hexes enemy units entered (RB 14.2), a whole set opened at the
audit. The Merkle-set model and the site rules are rules.ritd.mines.
"""

from __future__ import annotations

import re

import msgspec

from pbem.rulesapi import Order, Problem
from rules.ritd import buildup as bu
from rules.ritd import deployment, mines
from rules.ritd.actions import BuildMinefield, OpenMinefields, OrderError
from rules.ritd.position import SIDES, Side, enemy_of
from rules.ritd.state import State, game_map, mines_of, scenario_of
from rules.ritd.steps import TurnNext
from rules.ritd.turn import Turn


def with_mines(state: State, side: Side, **changes) -> State:
    now = msgspec.structs.replace(mines_of(state, side), **changes)
    return msgspec.structs.replace(state, minefields={**state.minefields, side: now})


def _mine_set(state: State, side: Side, number: int, ctx) -> dict[str, int] | None:
    """hex -> building set of ``side``'s Minefields in its set ``number`` (0: the
    scenario ones, public), if this replay knows the whole set."""
    if number == 0:
        return dict.fromkeys(_scenario_mines(state, side), mines.SCENARIO_BUILD)
    label = mines.set_label(side, number)
    m = game_map()
    return mines.read_set(m, ctx.leaves(label, m.hexes))


def _scenario_mines(state: State, side: Side) -> tuple[str, ...]:
    return tuple(game_map().resolve(x.hex) for x in scenario_of(state).special.minefields if x.side == side)


def _next_build(state: State, side: Side, action: BuildMinefield) -> mines.MineBuild:
    """The public record of the construction ``action`` (RB 16.55): the Network
    fixed at the start of this Buildup and the hexes enemy units hold now."""
    engaged = tuple(sorted({b.hex for b in state.position.blocks if b.side != side}))
    return mines.MineBuild(side=side, number=mines_of(state, side).number + 1, month=state.month, free=action.free,
                           network=state.networks.get(side, ()), engaged=engaged,
                           shown=mines_of(state, side).shown, dismantled_shown=tuple(action.dismantled_shown))


def minefield_problems(state: State, side: Side, ledger: bu.Ledger, action: BuildMinefield, ctx) -> list[Problem]:
    """RB 16.55: what both players can check at once (the cost, the count, the
    label), and, where the set is known (its owner, the audit), the whole set."""
    own = mines_of(state, side)
    build = _next_build(state, side, action)
    probs = []
    if action.label != mines.set_label(side, build.number) or not ctx.committed(action.label):
        probs.append(Problem("RB 16.55", f"the Minefields must be committed as the set "
                                         f"'{mines.set_label(side, build.number)}'"))
    if action.free:
        if own.count < bu.MINEFIELDS_DISMANTLED_FOR_FREE:
            probs.append(Problem("RB 16.55", f"a free Minefield dismantles two; the {side} player has {own.count}"))
    elif ledger.available < bu.MINEFIELD_BP:
        probs.append(Problem("RB 16.5", f"a Minefield costs {bu.MINEFIELD_BP} BP; {ledger.available} BP left"))
    shown = set(action.dismantled_shown)
    if not shown <= set(own.shown) or len(shown) != len(action.dismantled_shown) or \
            len(shown) > (bu.MINEFIELDS_DISMANTLED_FOR_FREE if action.free else 0):
        probs.append(Problem("RB 16.55", "only revealed Minefields of your own, two at most and only for a free "
                                         "one, are announced as dismantled"))
    if probs:
        return probs
    before = _mine_set(state, side, own.number, ctx)
    try:
        after = _mine_set(state, side, build.number, ctx)
    except ValueError as exc:
        return [Problem("RB 14.1", f"{action.label}: {exc}")]
    if before is None or after is None:
        return []  # the opponent: decided when the sets are opened (T-32)
    return mines.check_set(game_map(), build, before, after)


def apply_minefield(state: State, side: Side, action: BuildMinefield, ctx) -> State:
    own = mines_of(state, side)
    build = _next_build(state, side, action)
    ledger = bu.add_entry(state.ledgers[side], bu.minefield_entry(action.free))
    after = _mine_set(state, side, build.number, ctx)
    gone = set(action.dismantled_shown)
    known = tuple(sorted(after)) if after is not None else tuple(h for h in own.known if h not in gone)
    count = own.count + 1 - (bu.MINEFIELDS_DISMANTLED_FOR_FREE if action.free else 0)
    # Hexes enemy units hold now cannot receive the new Minefield (RB 14.0), and
    # an older one there was opened when they entered: nothing to open for them.
    state = with_mines(state, side, number=build.number, count=count, known=known,
                        shown=tuple(h for h in own.shown if h not in gone), opened=(), due=(), fresh=(),
                        watch=build.engaged)
    return msgspec.structs.replace(state, ledgers={**state.ledgers, side: ledger},
                                   mine_builds=state.mine_builds + (build,))


def on_open_leaf(state: State, label: str, key: str, value: bytes, ctx) -> tuple[State, list[Problem]]:
    """RB 14.2: one hex of a Minefield set opened (T-30): a Minefield there is
    revealed to both players; it must have been legal where it was built."""
    parsed = mines.parse_label(label)
    m = game_map()
    if parsed is None or parsed[0] != ctx.author:
        return state, [Problem("RB 14.2", f"'{label}' is not a Minefield set of the {ctx.author} player")]
    side, number = parsed
    own = mines_of(state, side)
    if number != own.number or key not in m.hexes:
        return state, [Problem("RB 14.2", f"only hexes of the current {side} Minefield set "
                                          f"({mines.set_label(side, own.number)}) are opened, not {label} at {key}")]
    probs = mines.check_leaf(m, side, key, value, number, state.mine_builds, _scenario_mines(state, side),
                             own.shown)
    if probs:
        return state, probs
    found = mines.decode(value) is not None
    add = (key,) if found else ()
    return with_mines(state, side, opened=own.opened + (key,), fresh=own.fresh + (key,),
                       shown=tuple(sorted(set(own.shown) | set(add))),
                       known=tuple(sorted(set(own.known) | set(add)))), []


def open_whole_set(state: State, label: str, value: bytes, ctx) -> list[Problem]:
    """A whole Minefield set opened (the end of the game, the audit; T-32):
    the construction it records, against the set before it."""
    parsed = mines.parse_label(label)
    assert parsed is not None  # on_open passes Minefield set labels only
    side, number = parsed
    build = next((b for b in state.mine_builds if b.side == side and b.number == number), None)
    if build is None:
        return [Problem("RB 16.55", f"{label} was committed without a Minefield construction")]
    try:
        after = _mine_set(state, side, number, ctx)
        before = _mine_set(state, side, number - 1, ctx)
    except ValueError as exc:
        return [Problem("RB 14.1", f"{label}: {exc}")]
    if after is None or before is None:
        return []
    return [Problem(p.rule, f"{side} Minefield construction in Month {build.month}: {p.message}")
            for p in mines.check_set(game_map(), build, before, after)]


def open_minefields_problems(state: State, turn: Turn, action: object, side: Side) -> list[Problem]:
    """RB 14.2 (T-30): the owner opens every hex enemy units entered, in this event."""
    own = mines_of(state, side)
    if turn.step not in ("mines-passive", "mines-active") or not isinstance(action, OpenMinefields):
        return [Problem("RB 14.2", "Minefields are revealed at the end of the Movement phase, "
                                   "now: 'open minefields'" if own.due else "no Minefield hexes to open now")]
    names = ", ".join(game_map().name(h) for h in own.due)
    if tuple(action.hexes) != own.due:
        return [Problem("RB 14.2", f"open exactly the hexes enemy units entered: {names}")]
    missing = [h for h in own.due if h not in own.opened]
    if missing:
        return [Problem("RB 14.2", f"the hexes {', '.join(game_map().name(h) for h in missing)} of "
                                   f"{mines.set_label(side, own.number)} must be opened in this event")]
    return []


def mine_checkpoint(state: State, turn: Turn) -> State:
    """RB 14.2 (T-30): at the end of a Movement phase each side owes the
    openings of its Minefield set in the hexes enemy units entered since the
    last one; both sides' occupied hexes are remembered for the next."""
    movement = turn.movement
    for owner in SIDES:
        enemy = enemy_of(owner)
        own = mines_of(state, owner)
        occupied = tuple(sorted({b.hex for b in state.position.blocks_of(enemy)}))
        due: tuple[str, ...] = ()
        if own.number:
            paths = [u.path for u in movement.moved if u.phase == movement.phase] \
                if movement is not None and movement.side == enemy else []
            known = (set(own.opened) | set(own.shown)) - set(own.fresh)
            due = tuple(sorted(mines.entered(paths, occupied, own.watch) - known))
        state = with_mines(state, owner, watch=occupied, due=due)
    return state


def parse_minefield(state: State, role: Side, text: str, ctx) -> Order:
    """RB 14.1, 16.55: 'minefield <place>' (15 BP) or 'minefield <place> dismantle
    <place>, <place>' (free): the new set is the current one with the change."""
    parts = re.split(r"\s+dismantle\s+", text.strip(), maxsplit=1, flags=re.IGNORECASE)
    hex_ = deployment.place_name(parts[0])
    dismantle = [deployment.place_name(p) for p in re.split(r"\s*,\s*|\s+and\s+", parts[1]) if p.strip()] \
        if len(parts) > 1 else []
    own = mines_of(state, role)
    current = _mine_set(state, role, own.number, ctx)
    if current is None:
        raise OrderError("RB 16.55: your Minefield set is not in your vault")
    number = own.number + 1
    after = {h: n for h, n in current.items() if h not in dismantle}
    after[hex_] = number
    label = mines.set_label(role, number)
    shown = tuple(h for h in dismantle if h in own.shown)
    return Order(action=BuildMinefield(label=label, free=bool(dismantle), dismantled_shown=shown),
                 sets={label: mines.leaves(game_map(), after)})


def parse_minefield_order(state: State, role: Side, words: str, low: str, named, ctx) -> Order:
    """'minefield <place> [dismantle <place>, <place>]' (RB 14.1, 16.55): ``parse_minefield``."""
    return parse_minefield(state, role, words.strip()[len("minefield "):], ctx)


def minefield_orders(state: State, role: Side, ledger: bu.Ledger) -> list[str]:
    """RB 16.55 "a hidden Minefield in any hex within the friendly Supply
    Network (not in battle hexes)", RB 14.0 "in unengaged hexes": every such
    hex of the Network fixed for this Buildup (15 BP) without one already,
    or free by dismantling two known ones in the Network (one example pair)."""
    own = mines_of(state, role)
    network = set(state.networks.get(role, ()))
    enemy = {b.hex for b in state.position.blocks_of(enemy_of(role))}
    known = [h for h in own.known if h in network]
    sites = sorted(network - enemy - set(own.known))
    m = game_map()
    orders = [f"minefield {m.name(h)}" for h in sites] if ledger.available >= bu.MINEFIELD_BP else []
    if len(known) >= bu.MINEFIELDS_DISMANTLED_FOR_FREE and sites:
        orders.append(f"minefield {m.name(sites[0])} dismantle {m.name(known[0])}, {m.name(known[1])}")
    return orders


def apply_open_minefields(state: State, turn: Turn, action: OpenMinefields, side: Side, ctx) -> TurnNext:
    return TurnNext("mines_opened", with_mines(state, side, due=(), fresh=()), turn)


# -- the orders listed (legal_orders) --------------------------------------------------

def listed_mine_openings(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in steps "mines-passive", "mines-active"."""
    return ["open minefields"]


def apply_minefield_action(state: State, action: BuildMinefield, side: Side, ctx) -> State:
    return apply_minefield(state, side, action, ctx)


# -- the actions in words (format_action) ---------------------------------------------------

def format_build_minefield(action: BuildMinefield) -> str:
    """The action in words (format_action)."""
    m = game_map()
    free = action.free
    shown = action.dismantled_shown
    return ("build a hidden Minefield" + (" by dismantling two" if free else f" ({bu.MINEFIELD_BP} BP)")
            + (f", the revealed one at {', '.join(m.name(h) for h in shown)} dismantled" if shown else ""))


def format_open_minefields(action: OpenMinefields) -> str:
    """The action in words (format_action)."""
    m = game_map()
    hexes = action.hexes
    return "open minefields " + ", ".join(m.name(h) for h in hexes)


# -- orders read (parse_order) ---------------------------------------------------------------

def parse_open_minefields(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'open minefields' (RB 14.2): the hexes enemy units entered, opened as leaves of the set."""
    own = mines_of(state, role)
    return Order(action=OpenMinefields(hexes=own.due),
                 open_leaves=tuple((mines.set_label(role, own.number), h) for h in own.due if h not in own.opened))
