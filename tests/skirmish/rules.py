"""Skirmish: an open-information test game of movement on a hex map, for
the engine's order tree (issue 26 point 6). Not shipped.

Two sides, north and south, each with a force of counters on a 24 x 16
pointy-top map (pbem.hexgrid, CCRR ids from 0101). A game turn is north's
movement phase then south's; the game lasts a few game turns. No dice and
no secrets: everything is on the table.

Rule numbers for messages:

- SK 1 Orders: "move N07 0608" moves unit N07 to hex 0608; "end" ends the
  phase. Only the phasing side gives orders.
- SK 2 Movement: each unit moves at most once per phase, up to its movement
  points (infantry 4, motorised 6, armour 8); entering a clear hex costs 1,
  rough 2; lakes, hexes off the map and hexes holding an enemy unit cannot
  be entered. A move follows the cheapest way (the player names the end).
- SK 3 Zones of control: the six hexes around an enemy unit. A unit that
  enters one stops there; a unit that starts in one may leave it.
- SK 4 Stacking: a move may pass through friendly units but not end in a
  hex holding any unit.
- SK 5 Sequence: north's phase, then south's, for the scenario's game turns.
- SK 6 Victory: at the end, the side holding (a unit in) more of the four
  towns wins; an equal count is a draw.

Its flat ``legal_orders`` checks each candidate order as ``check`` does (one
cheapest-way search per order, like a game that lists by trying); its
``order_tree`` groups orders by unit and computes each unit's reach once,
lazily. The contract suite checks that both give the same orders.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from pbem import hexgrid
from pbem.hexgrid import Axial, DigitIds, Grid, Offset
from pbem.rulesapi import Ctx, Decision, Order, OrderGroup, Outcome, Problem, Rules, Spec

ROLES = ("north", "south")
GRID = Grid("pointy", "odd")
IDS = DigitIds(GRID)
COLS, ROWS = 24, 16
KINDS = ("infantry", "motorised", "armour")
MP = {"infantry": 4, "motorised": 6, "armour": 8}
#: Units per side and game turns of each scenario ("small" first: the
#: contract suite plays the first scenario).
FORCES = {"small": (8, 2), "standard": (40, 3)}
TOWNS = ("0608", "1007", "1409", "1908")
SPEC = Spec(id="skirmish", version="1", title="Skirmish (order tree test game)", roles=ROLES,
            scenarios=tuple(FORCES))


def _terrain(o: Offset) -> str:
    col, row = o
    if (col * 5 + row * 11) % 23 == 0 and f"{col:02d}{row:02d}" not in TOWNS:
        return "lake"
    return "rough" if (col * 7 + row * 3) % 5 == 0 else "clear"


MAP: dict[Axial, str] = {GRID.to_axial(Offset(c, r)): _terrain(Offset(c, r))
                         for c in range(1, COLS + 1) for r in range(1, ROWS + 1)}
COST = {"clear": 1, "rough": 2}
#: Each map hex's neighbours on the map, computed once.
NEIGHBOURS: dict[Axial, tuple[Axial, ...]] = {h: tuple(n for n in hexgrid.neighbours(h) if n in MAP) for h in MAP}


class Move(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type", tag="move"):
    unit: int  # the unit's number: 100 + n for north's Nn, 200 + n for south's Sn
    col: int
    row: int


class End(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type", tag="end"):
    pass


Action = Move | End


class Unit(msgspec.Struct, frozen=True):
    name: str
    side: str
    kind: str
    col: int
    row: int


class State(msgspec.Struct, frozen=True):
    units: tuple[Unit, ...]
    turns: int
    turn: int = 1
    phasing: str = "north"
    moved: tuple[int, ...] = ()
    over: bool = False


def _hex(u: Unit) -> Axial:
    return GRID.to_axial(Offset(u.col, u.row))


def _force(side: str, n: int) -> list[Unit]:
    """``n`` units of ``side`` in its two home rows (north at the top)."""
    rows = (1, 2) if side == "north" else (ROWS, ROWS - 1)
    spots = [(c, r) for r in rows for c in range(1, COLS + 1) if MAP[GRID.to_axial(Offset(c, r))] != "lake"]
    step = max(1, len(spots) // n)
    return [Unit(f"{side[0].upper()}{i + 1:02d}", side, KINDS[i % 3], *spots[(i * step) % len(spots)])
            for i in range(n)]


class _Board:
    """What moving needs, built once per listing: who stands where, and the
    zones of control (SK 3) of the side that does not move."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.at = {_hex(u): u for u in state.units}
        self.zoc = {n for u in state.units if u.side != state.phasing for n in hexgrid.neighbours(_hex(u))}

    def neighbours(self, h: Axial) -> tuple[Axial, ...]:
        return NEIGHBOURS[h]

    def step(self, a: Axial, b: Axial) -> int | None:
        """SK 2: the cost of entering b, None for a lake or an enemy unit."""
        terrain = MAP[b]
        if terrain == "lake":
            return None
        there = self.at.get(b)
        if there is not None and there.side != self.state.phasing:
            return None
        return COST[terrain]

    def reach(self, unit: Unit) -> hexgrid.Reach[Axial]:
        return hexgrid.reach(_hex(unit), self.neighbours, self.step, budget=MP[unit.kind],
                             stops=self.zoc.__contains__)

    def destinations(self, unit: Unit) -> list[str]:
        """Every hex ``unit`` may end its move in (SK 2-4), from one search."""
        start = _hex(unit)
        return [IDS.format(h) for h in sorted(self.reach(unit).cost, key=_order) if h != start and h not in self.at]


def _order(h: Axial) -> tuple[int, int]:
    col, row = GRID.to_offset(h)
    return col, row


def _code(name: str) -> int:
    return (100 if name[0] == "N" else 200) + int(name[1:])


def _name(code: int) -> str:
    return f"{'N' if code < 200 else 'S'}{code % 100:02d}"


def _unit_index(state: State, code: int) -> int | None:
    return next((i for i, u in enumerate(state.units) if _code(u.name) == code), None)


class Skirmish(Rules[State, Any, State]):
    """The rules of Skirmish (see the module's text)."""

    SPEC = SPEC

    @property
    def action_type(self) -> Any:
        return Action

    @property
    def state_type(self) -> type[State]:
        return State

    def initial_state(self, scenario: str, options: tuple[str, ...]) -> State:
        n, turns = FORCES[scenario]
        return State(units=tuple(_force("north", n) + _force("south", n)), turns=turns)

    def pending(self, state: State) -> Decision | None:
        if state.over:
            return None
        return Decision(role=state.phasing, kind="move",
                        prompt=f"game turn {state.turn} of {state.turns}: {state.phasing}'s movement (SK 5)")

    def turn_label(self, state: State) -> str:
        return "after the game" if state.over else f"Game turn {state.turn}, Player-Turn ({state.phasing})"

    # -- orders --

    def check(self, state: State, action: Any, ctx: Ctx) -> list[Problem]:
        if state.over:
            return [Problem("SK 5", "the game is over")]
        if ctx.author != state.phasing:
            return [Problem("SK 1", f"it is {state.phasing}'s movement phase")]
        if isinstance(action, End):
            return []
        return self._move_problems(_Board(state), action)

    def _move_problems(self, board: _Board, action: Move) -> list[Problem]:
        state = board.state
        index = _unit_index(state, action.unit)
        if index is None:
            return [Problem("SK 1", f"no unit number {action.unit}")]
        unit = state.units[index]
        to = Offset(action.col, action.row)
        where = f"{to.col:02d}{to.row:02d}"
        problems = []
        if unit.side != state.phasing:
            problems.append(Problem("SK 1", f"{unit.name} is not {state.phasing}'s"))
        if index in state.moved:
            problems.append(Problem("SK 2", f"{unit.name} has moved this phase already"))
        goal = GRID.to_axial(to)
        if goal not in MAP:
            problems.append(Problem("SK 2", f"{where} is off the map"))
        elif goal in board.at:
            problems.append(Problem("SK 4", f"{where} holds {board.at[goal].name}"))
        elif goal == _hex(unit):
            problems.append(Problem("SK 2", f"{unit.name} is at {where} already"))
        elif hexgrid.shortest_path(_hex(unit), goal, board.neighbours, board.step, budget=MP[unit.kind],
                                   stops=board.zoc.__contains__) is None:
            problems.append(Problem("SK 2", f"{where} is beyond the {MP[unit.kind]} MP of {unit.name} "
                                            "(lakes and enemy units block; SK 3: entering a zone of control stops)"))
        return problems

    def apply(self, state: State, action: Any, ctx: Ctx) -> State:
        if isinstance(action, End):
            if state.phasing == "north":
                return msgspec.structs.replace(state, phasing="south", moved=())
            return msgspec.structs.replace(state, phasing="north", moved=(), turn=state.turn + 1,
                                           over=state.turn >= state.turns)
        index = _unit_index(state, action.unit)
        assert index is not None  # checked
        units = list(state.units)
        units[index] = msgspec.structs.replace(units[index], col=action.col, row=action.row)
        return msgspec.structs.replace(state, units=tuple(units), moved=(*state.moved, index))

    def legal_actions(self, state: State, role: str, ctx: Ctx) -> list[Any]:
        return [self.parse_order(state, role, text, ctx).action for text in self.legal_orders(state, role, ctx)]

    def _movers(self, state: State, role: str) -> list[Unit]:
        if state.over or role != state.phasing:
            return []
        return [u for i, u in enumerate(state.units) if u.side == role and i not in state.moved]

    def legal_orders(self, state: State, role: str, ctx: Ctx) -> list[str]:
        """Flat: every hex within each unit's MP tried as ``check`` tries an
        order (one cheapest-way search each, SK 2-4)."""
        if state.over or role != state.phasing:
            return []
        out = []
        board = _Board(state)
        for i, unit in enumerate(state.units):
            if unit.side != role or i in state.moved:
                continue
            start = _hex(unit)
            for h in sorted(MAP, key=_order):
                if hexgrid.distance(start, h) > MP[unit.kind]:
                    continue
                col, row = GRID.to_offset(h)
                if not self._move_problems(board, Move(_code(unit.name), col, row)):
                    out.append(f"move {unit.name} {col:02d}{row:02d}")
        return [*out, "end"]

    def order_tree(self, state: State, role: str, ctx: Ctx) -> tuple[OrderGroup, ...]:
        """One group per unit that may still move (its destinations found by
        one search, when the group is opened), and "End movement"."""
        if state.over or role != state.phasing:
            return ()
        board = _Board(state)

        def unit_group(unit: Unit) -> OrderGroup:
            where = f"{unit.col:02d}{unit.row:02d}"
            return OrderGroup(label=f"Move {unit.name} ({unit.kind}, {MP[unit.kind]} MP, at {where})",
                              example=f"move {unit.name} <hex>",
                              orders=lambda: [f"move {unit.name} {d}" for d in board.destinations(unit)])

        groups = [unit_group(u) for u in self._movers(state, role)]
        return (*groups, OrderGroup(label="End movement", orders=("end",), ends_step=True,
                                    note=f"ends {role}'s movement phase (SK 5)"))

    def parse_order(self, state: State, role: str, text: str, ctx: Any) -> Order:
        words = text.split()
        if [w.lower() for w in words] == ["end"]:
            return Order(action=End())
        if len(words) != 3 or words[0].lower() != "move":
            raise ValueError(f"SK 1: expected 'move UNIT HEX' or 'end', not {text[:60]!r}")
        name = words[1].upper()
        if len(name) != 3 or name[0] not in "NS" or not name[1:].isdigit() \
                or _unit_index(state, _code(name)) is None:
            raise ValueError(f"SK 1: no unit {words[1][:20]!r} (units are named N01, S01, ...)")
        try:
            col, row = GRID.to_offset(IDS.parse(words[2]))
        except hexgrid.HexIdError as exc:
            raise ValueError(f"SK 1: {exc}") from None
        return Order(action=Move(_code(name), col, row))

    def format_action(self, action: Any) -> str:
        if isinstance(action, End):
            return "end"
        return f"move {_name(action.unit)} {action.col:02d}{action.row:02d}"

    # -- what players see --

    def view(self, state: State, role: str | None) -> State:
        return state  # open information

    def outcome(self, state: State) -> Outcome | None:
        if not state.over:
            return None
        held = {side: sum(1 for u in state.units if u.side == side and f"{u.col:02d}{u.row:02d}" in TOWNS)
                for side in ROLES}
        if held["north"] == held["south"]:
            return Outcome(winner=None, summary=f"a draw: each side holds {held['north']} towns (SK 6)")
        winner = max(ROLES, key=held.__getitem__)
        return Outcome(winner=winner, summary=f"{winner} holds {held[winner]} towns of {len(TOWNS)} (SK 6)")

    def render_text(self, view: State) -> str:
        lines = [f"game turn {view.turn} of {view.turns}, {view.phasing} moving"
                 + (" (over)" if view.over else "")]
        for side in ROLES:
            lines.append(f"{side}: " + ", ".join(f"{u.name} {u.kind[:3]} {u.col:02d}{u.row:02d}"
                                                  for u in view.units if u.side == side))
        return "\n".join(lines)


class _Author:
    """A Ctx that says only who acts: all ``check`` reads of it."""

    def __init__(self, role: str) -> None:
        self.role = self.author = role
        self.seq = 0

    def value(self, label: str) -> bytes | None:
        return None

    def committed(self, label: str) -> bool:
        return False

    def opened(self, label: str) -> bool:
        return False

    def leaf(self, label: str, key: str) -> bytes | None:
        return None

    def leaves(self, label: str, keys: Iterable[str]) -> list[bytes | None]:
        return [None for _ in keys]

    def card(self, rnd: str, pos: int) -> str | None:
        return None


RULES = Skirmish()
