"""What a player sees (DESIGN 4): the View of the board from one side, the
public board, and the text rendering of a view.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from rules.ritd import buildup as bu
from rules.ritd import checked
from rules.ritd.position import SIDES, Block, Position, Side
from rules.ritd.state import OPTIONS, LastMove, State, all_scenarios, game_map, outcome
from rules.ritd.turn import Turn


class BlockView(msgspec.Struct, frozen=True):
    token: str
    side: str
    hex: str
    where: str
    unit: str
    cv: int
    disrupted: bool
    revealed: bool
    #: Public markers (RB 12.7, 13.3, 15.1): Unsupplied; supplied by a Fortress or an Oasis.
    unsupplied: bool = False
    supplied_by: str = ""


class MineView(msgspec.Struct, frozen=True):
    """A Minefield (RB 14) the viewer may see: its own, hidden from the enemy
    until revealed (``revealed`` False), or either side's once revealed."""

    hex: str
    where: str
    side: str
    revealed: bool


class View(msgspec.Struct, frozen=True):
    role: str
    scenario: str
    month: int
    phase: str
    side: str
    blocks: list[BlockView]
    step: str = ""
    turn: int = 0
    cards: int = 0
    option: str = ""
    battles: list[str] = []
    last_rolls: list[int] = []
    stage: str = ""
    #: Supply Cards: every hand's size; real cards only in the viewer's own hand.
    hand_counts: dict[str, int] = {}
    own_real: int | None = None
    #: Buildup: the BP dice, Player 1, each side's BPs (own ledger in full,
    #: the opponent's divulged figures, RB 16.5 sidebar), Saved BPs.
    bp_dice: list[int] = []
    player1: str = ""
    bp: dict[str, list[str]] = {}
    passes: int = 0
    outcome: list[str] = []
    #: Fortress control (public, RB 13.1, 13.4): place name -> side.
    fortresses: dict[str, str] = {}
    #: The last fire: each unit's dice and what they scored (public).
    last_fire: list[str] = []
    #: The routes of the latest Player-Turn's movement, both sides' (public).
    last_moves: list[LastMove] = []
    #: Minefields (RB 14): own and revealed ones; every side's count (public).
    mines: list[MineView] = []
    mine_counts: dict[str, int] = {}
    #: The public facts of the position: every block's hex, side and markers
    #: (no unit, no CV), the battles with their hexsides (RB 8.1), Fortress
    #: control. For what is computed from them only when asked (the Supply
    #: Network of the map's supply overlay, RB 12.6).
    board: Position = Position()
    #: The optional rules in use (RB 17.0), in words (``OPTIONS``).
    options: list[str] = []


def view(state: State, role: Side | None) -> View:
    """What ``role`` sees: own blocks in full, others only where opened (DESIGN 4)."""
    m = game_map()
    blocks = _block_views(state, role, state.position.blocks)
    turn = _turn(state)
    done = outcome(state)
    own = state.hands.get(role) if role in SIDES else None
    bp: dict[str, list[str]] = {}
    for side, ledger in state.ledgers.items():
        d = bu.divulge(ledger)
        bp[side] = [f"BPs: {ledger.received} new + {ledger.saved_before} Saved; {ledger.available} left",
                    (f"Redeployments: {d.redeployments} ({d.redeployment_bp} BP); steps rebuilt: "
                     f"{d.steps_rebuilt} ({d.replacement_bp} BP); Extra Supply: {d.extra_supply_bp} BP")]
        if side == role:
            bp[side] += [f"{e.text} ({e.bp} BP)" for e in ledger.entries if e.kind != "minefield"]
    return View(role=role or "", scenario=state.scenario, month=state.month, phase=state.phase,
                side=state.side, blocks=blocks, step=turn.step if turn else "", turn=turn.number if turn else 0,
                # the cards' real count is secret until Supply Revealed, except to their owner (RB 3.42)
                cards=turn.cards if turn else 0,
                option=turn.option if turn and (turn.active == role or turn.step == "supply-revealed"
                                                or turn.option) else "",
                battles=[m.name(b.hex) for b in state.position.battles], last_rolls=list(state.last_rolls),
                stage=state.stage, hand_counts={s: h.count for s, h in sorted(state.hands.items())},
                own_real=own.real if own is not None else None, bp_dice=list(state.bp_dice),
                player1=state.player1, bp=bp, passes=state.passes,
                fortresses={m.name(h): side for h, side in sorted(state.position.fortresses.items())},
                last_fire=list(state.last_fire), mines=_mine_views(state, role),
                mine_counts={s: mf.count for s, mf in sorted(state.minefields.items()) if mf.count},
                last_moves=list(state.last_moves), board=_public_board(state.position),
                options=[OPTIONS[o] for o in state.options],
                outcome=[done.summary.split("; ")[0], *(state.result.explanation if state.result else ())] if done else [])


def _turn(state: State) -> Turn | None:
    """The Player-Turn a view shows (its step, number, cards), if any."""
    return state.turn if state.phase in ("turn", "final", "over") else None


def turn_step(state: State) -> str:
    """The Player-Turn's step a view of ``state`` shows (``View.step``)."""
    turn = _turn(state)
    return turn.step if turn else ""


def _block_views(state: State, role: Side | None, blocks: Iterable[Block]) -> list[BlockView]:
    """``role``'s BlockViews of ``blocks`` (blocks of ``state``), in the order of
    ``View.blocks``: by side, hex and token. Own blocks in full, others' unit and
    CV only where opened to both (DESIGN 4)."""
    m = game_map()
    disclosed = frozenset(state.disclosed)
    out = []
    for b in sorted(blocks, key=lambda b: (b.side, b.hex, b.token)):
        shown = b.side == role or b.token in disclosed
        by = b.fortress_supply or b.oasis_supply
        out.append(BlockView(token=b.token, side=b.side, hex=b.hex, where=m.name(b.hex),
                             unit=b.unit if shown else "", cv=b.cv if shown else 0,
                             disrupted=b.disrupted, revealed=b.revealed, unsupplied=b.unsupplied,
                             supplied_by=m.name(by) if by else ""))
    return out


class Glance(msgspec.Struct, frozen=True):
    """What the words of a step (rules.ritd.happenings, rules.ritd.lost_tokens)
    read of ``role``'s View of a state: its phase, active side and Player-Turn
    step, as ``View`` has them, and the BlockViews of some of its blocks."""

    phase: str
    side: str
    step: str
    blocks: list[BlockView]


def glances(before: State, after: State, role: Side | None, *, every: bool) -> tuple[Glance, Glance]:
    """``role``'s Glances at the states before and after one step: at every
    block if ``every``, else only at the blocks the step changed (gone, new, or
    with any of their fields changed), in the order of ``View.blocks``.

    A block the step left as it was has the same hex, CV and markers in both
    views (only its disclosure can have changed, which shows a unit and CV
    that are then the same before and after): nothing happened to it, so the
    words of eliminations, losses, Withdrawals and supply markers need only
    the others. The words of fire and Pursuit Fire name the units firing,
    changed or not: they ask for every block. Kept for the latest pairs
    (rules.ritd.checked): both modules ask for the same pair, but at the dice
    of a fire."""
    return checked.once("glances", (before, after, role, every), lambda: _glances(before, after, role, every))


def _glances(before: State, after: State, role: Side | None, every: bool) -> tuple[Glance, Glance]:
    was: Iterable[Block] = before.position.blocks
    now: Iterable[Block] = after.position.blocks
    if not every:
        old = {b.token: b for b in before.position.blocks}
        new = {b.token: b for b in after.position.blocks}
        was = [b for b in before.position.blocks if new.get(b.token) != b]
        now = [b for b in after.position.blocks if old.get(b.token) != b]

    def glance(state: State, blocks: Iterable[Block]) -> Glance:
        return Glance(phase=state.phase, side=state.side, step=turn_step(state),
                      blocks=_block_views(state, role, blocks))
    return glance(before, was), glance(after, now)


def _mine_views(state: State, role: Side | None) -> list[MineView]:
    """Own Minefields in full, the others only where revealed (RB 14.2, DESIGN 4)."""
    m = game_map()
    out = []
    for side, mf in sorted(state.minefields.items()):
        hexes = mf.known if side == role else mf.shown
        out += [MineView(hex=h, where=m.name(h), side=side, revealed=h in mf.shown) for h in sorted(hexes)]
    return out


def _public_board(pos: Position) -> Position:
    """``pos`` without any unit or CV: what both players see on the table,
    the blocks in the order of ``View.blocks`` (side, hex, token)."""
    blocks = sorted(pos.blocks, key=lambda b: (b.side, b.hex, b.token))
    return msgspec.structs.replace(pos, blocks=tuple(msgspec.structs.replace(b, unit="", cv=0) for b in blocks))


def render_text(v: View) -> str:
    s = all_scenarios().get(v.scenario)
    where = f"Player-Turn {v.turn} ({v.side}), {v.step}" if v.turn else f"{v.phase}: {v.side} to act"
    lines = [f"{s.name} ({s.rule}), {all_scenarios().month_label(s, v.month)} (Month {v.month}); {where}"]
    lines += [f"optional rule: {o}" for o in v.options]
    if v.outcome:
        lines += ["GAME OVER: " + v.outcome[0], *(f"  {line}" for line in v.outcome[1:])]
    elif v.phase != "turn":
        lines.append(f"{v.phase}: {v.stage}, {v.side} to act")
    if v.turn and v.step not in ("initial-supply", "option"):
        lines.append(f"cards played: {v.cards}" + (f" ({v.option})" if v.option else ""))
    if v.hand_counts:
        counts = ", ".join(f"{side} {n}" + (f" ({v.own_real} real)" if side == v.role and v.own_real is not None
                                            else "") for side, n in v.hand_counts.items())
        lines.append(f"Supply Cards in hand: {counts} (dealt from the shared 42-card deck)")
    if v.bp_dice:
        lines.append(f"Buildup: BP dice {v.bp_dice}; Player 1: {v.player1}")
    for side, rows in v.bp.items():
        lines += [f"{side} {row}" for row in rows]
    if v.battles:
        lines.append("battles: " + ", ".join(v.battles))
    if v.mine_counts:
        lines.append("Minefields: " + ", ".join(f"{side} {n}" for side, n in v.mine_counts.items())
                     + "".join(f"; {x.side} at {x.where}" + ("" if x.revealed else " (hidden)") for x in v.mines))
    if v.last_rolls:
        lines.append(f"last dice: {v.last_rolls}")
    for side in SIDES:
        mine = [b for b in v.blocks if b.side == side]
        lines.append(f"{side}: {len(mine)} blocks")
        by_hex: dict[str, list[BlockView]] = {}
        for b in mine:
            by_hex.setdefault(b.where, []).append(b)
        for where, bs in sorted(by_hex.items()):
            names = ", ".join((f"{b.unit} {b.cv}" if b.unit else f"block {b.token}")
                              + (" (disrupted)" if b.disrupted else "") for b in bs)
            lines.append(f"  {where}: {names}")
    return "\n".join(lines)
