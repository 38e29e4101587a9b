"""Hilltop: a small combat test game for happenings (issue 26 point 7,
issue 21 point 3). Not a real game: its "HT" rule numbers are its own.

The defender holds Hill 12 with a public garrison and digs in each round
with a hidden reserve (HT 2.1: a commitment, opened by the dice answer as a
sealed standing order). The attacker assaults with some of its companies
(HT 3.1); two dice decide (HT 4.1 the attack die, HT 4.3 the morale die, used
only on a tie); the Combat Results (HT 4.2) give losses, a retreat and an
advance (HT 5). Two rounds, or until one side has nothing left; the
attacker wins by eliminating the garrison.

Its ``happenings`` say each combat as a table and each loss, elimination
and reveal in a sentence with its rule, from the reader's view only: the
attacker learns the reserve when it is opened, never before.
"""

from __future__ import annotations

from typing import Any

import msgspec

from pbem.rulesapi import (
    ACTION,
    DICE,
    OPENINGS,
    ROLL,
    Combat,
    Ctx,
    Decision,
    Die,
    Happening,
    Order,
    Outcome,
    Problem,
    Rules,
    Spec,
    Step,
)

HILL = "Hill 12"
ROUNDS = 2
COMPANIES = ("A1", "A2", "A3", "A4")
GARRISON = 2
#: HT 4.2 Combat Results by final score (attack die + differential): the
#: highest row the score reaches.
RESULTS = ((7, "DE"), (5, "DR"), (4, "tie"), (-99, "AL"))
MEANING = {"DE": "defender eliminated", "DR": "defender retreats and loses a step", "AL": "attacker loses a company",
           "EX": "exchange: each side loses one"}


def reserve_label(rnd: int) -> str:
    return f"defender.reserve.{rnd}"


class DigIn(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type", tag="dig"):
    """HT 2.1: the defender digs in with a hidden reserve (committed as ``label``)."""

    label: str


class Assault(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type", tag="assault"):
    """HT 3.1: the attacker assaults the hill with ``companies`` of its companies."""

    companies: int


class State(msgspec.Struct, frozen=True):
    round: int = 1
    phase: str = "dig"  # dig -> assault -> dice -> dig ... -> over
    attackers: tuple[str, ...] = COMPANIES
    garrison: int = GARRISON
    #: The reserve of this round if this replay knows it (the defender's own,
    #: or opened), else None; ``revealed`` once opened.
    reserve: int | None = None
    revealed: bool = False
    committed: int = 0
    holder: str = "defender"
    last: str = ""


class View(msgspec.Struct, frozen=True):
    round: int
    phase: str
    attackers: tuple[str, ...]
    garrison: int
    reserve: int | None
    committed: int
    holder: str
    last: str


class Hilltop(Rules[State, Any, View]):
    SPEC = Spec(id="hilltop", version="1", title="Hilltop (combat report test game)",
                roles=("defender", "attacker"), scenarios=("hill",))

    @property
    def action_type(self) -> Any:
        return DigIn | Assault

    @property
    def state_type(self) -> type[State]:
        return State

    def initial_state(self, scenario: str, options: tuple[str, ...]) -> State:
        return State()

    def pending(self, state: State) -> Decision | None:
        if state.phase == "dig":
            return Decision(role="defender", kind="dig", prompt="dig in with a hidden reserve of 0-2")
        if state.phase == "assault":
            return Decision(role="attacker", kind="assault", prompt=f"assault {HILL} with 1-{len(state.attackers)}")
        if state.phase == "dice":
            return Decision(role="defender", kind=DICE, dice=(6, 6),
                            purposes=(f"attack die, assault on {HILL} (HT 4.1)", "morale die, used on a tie (HT 4.3)"),
                            openings=(reserve_label(state.round),))
        return None

    def legal_orders(self, state: State, role: str, ctx: Ctx) -> list[str]:
        if state.phase == "dig" and role == "defender":
            return [f"dig in {n}" for n in range(3)]
        if state.phase == "assault" and role == "attacker":
            return [f"assault {k}" for k in range(1, len(state.attackers) + 1)]
        return []

    def legal_actions(self, state: State, role: str, ctx: Ctx) -> list[Any]:
        if state.phase == "dig" and role == "defender":
            return [DigIn(reserve_label(state.round))]
        if state.phase == "assault" and role == "attacker":
            return [Assault(k) for k in range(1, len(state.attackers) + 1)]
        return []

    def check(self, state: State, action: Any, ctx: Ctx) -> list[Problem]:
        if isinstance(action, DigIn):
            if state.phase != "dig":
                return [Problem("HT 2.1", "the defender digs in only at the start of a round")]
            if action.label != reserve_label(state.round) or not ctx.committed(action.label):
                return [Problem("HT 2.1", f"the reserve must be committed as {reserve_label(state.round)!r}")]
            return []
        if isinstance(action, Assault):
            if state.phase != "assault":
                return [Problem("HT 3.1", "no assault now")]
            if not 1 <= action.companies <= len(state.attackers):
                return [Problem("HT 3.1", f"assault with 1 to {len(state.attackers)} companies")]
            return []
        return [Problem("HT 1", "unknown action")]

    def apply(self, state: State, action: Any, ctx: Ctx) -> State:
        if isinstance(action, DigIn):
            known = ctx.value(action.label)
            return msgspec.structs.replace(state, phase="assault", reserve=None if known is None else int(known),
                                           revealed=False, committed=0)
        return msgspec.structs.replace(state, phase="dice", committed=action.companies)

    def on_open(self, state: State, label: str, value: bytes, ctx: Ctx) -> tuple[State, list[Problem]]:
        if label != reserve_label(state.round) or value not in (b"0", b"1", b"2"):
            return state, [Problem("HT 2.1", f"a reserve is 0, 1 or 2, not {value!r}")]
        return msgspec.structs.replace(state, reserve=int(value), revealed=True), []

    # -- HT 4: the combat ---------------------------------------------------

    @staticmethod
    def defence(state: State | View) -> int:
        """HT 4.1: the garrison, the reserve and +1 for the hill."""
        return state.garrison + (state.reserve or 0) + 1

    @staticmethod
    def result(state: State | View, values: tuple[int | None, ...]) -> tuple[str, int, bool]:
        """HT 4.2: the result, the score (attack die + differential) and
        whether it was a tie, settled by the morale die (HT 4.3: 4-6 the
        defender retreats, else an exchange)."""
        score = (values[0] or 0) + state.committed - Hilltop.defence(state)
        code = next(c for floor, c in RESULTS if score >= floor)
        if code == "tie":
            return ("DR" if (values[1] or 0) >= 4 else "EX"), score, True
        return code, score, False

    @staticmethod
    def lose_one(state: State) -> tuple[str, ...]:
        """HT 5.3: the attacker's loss is the last company that assaulted."""
        n = state.committed
        return state.attackers[:n - 1] + state.attackers[n:]

    def resolve_dice(self, state: State, values: tuple[int | None, ...], ctx: Ctx) -> State:
        code, _, _ = self.result(state, values)
        attackers, garrison, holder = state.attackers, state.garrison, state.holder
        if code == "DE":
            garrison = 0
        elif code == "DR":
            garrison = max(garrison - 1, 0)
        elif code == "AL":
            attackers = self.lose_one(state)
        else:
            attackers, garrison = self.lose_one(state), max(garrison - 1, 0)
        holder = "attacker" if garrison == 0 else holder
        over = state.round >= ROUNDS or garrison == 0 or not attackers
        return msgspec.structs.replace(state, round=state.round + (0 if over else 1), phase="over" if over else "dig",
                                       attackers=attackers, garrison=garrison, holder=holder, last=MEANING[code],
                                       reserve=state.reserve if over else None, revealed=state.revealed and over)

    def describe_roll(self, before: State, after: State, values: tuple[int | None, ...]) -> tuple[str, ...]:
        return (f"{after.last}",)

    # -- what each side sees -------------------------------------------------

    def view(self, state: State, role: str | None) -> View:
        shows = state.revealed or role in ("defender", "*")
        return View(state.round, state.phase, state.attackers, state.garrison,
                    state.reserve if shows else None, state.committed, state.holder, state.last)

    def happenings(self, before: State, after: State, step: Step, role: str | None) -> tuple[Happening, ...]:
        was, now = self.view(before, role), self.view(after, role)
        if step.kind == ACTION and isinstance(step.action, DigIn):
            how = "a hidden reserve" if now.reserve is None else f"a reserve of {now.reserve}"
            return (Happening(f"The defender digs in on {HILL} with {how}.", "HT 2.1"),)
        if step.kind == OPENINGS and was.reserve is None and now.reserve is not None:
            return (Happening(f"The defender's reserve on {HILL} is revealed: {now.reserve}.", "HT 2.1", "reveal"),)
        if step.kind != ROLL:
            return ()
        code, score, tie = self.result(was, step.values)
        defence = self.defence(was)
        lost = [c for c in was.attackers if c not in now.attackers]
        losses = [f"attacker: {c}" for c in lost] + (
            [f"defender: {was.garrison - now.garrison} garrison step(s)"] if now.garrison < was.garrison else [])
        table = Combat(
            where=HILL,
            attackers=tuple(f"{c}" for c in was.attackers[:was.committed]),
            defenders=(f"garrison {was.garrison}", f"reserve {was.reserve}"),
            modifiers=("+1 defender on a hill (HT 4.1)",),
            odds=f"{was.committed} - {defence} = {was.committed - defence:+d}",
            dice=(Die("attack die", step.values[0]), Die("morale die (on a tie)", step.values[1], used=tie)),
            result=f"{code}: {MEANING[code]} (score {score}, HT 4.2)",
            losses=tuple(losses),
            retreat=f"the garrison falls back to the crest of {HILL} (HT 5.1)" if code == "DR" and now.garrison else "",
            advance=f"the attackers take {HILL} (HT 5.2)" if now.holder == "attacker" else "")
        said = [Happening(f"Assault on {HILL}: {MEANING[code]}.", "HT 4.2", "combat", table)]
        said += [Happening(f"Company {c} is eliminated.", "HT 5.3", "elimination") for c in lost]
        if now.garrison == 0 and was.garrison:
            said.append(Happening(f"The garrison of {HILL} is eliminated.", "HT 5.3", "elimination"))
        return tuple(said)

    def map_picture(self, view: View | None = None, overlays: tuple[str, ...] = ()) -> Any:
        """A 6 x 4 hex field around the hill (hex 1202), with the garrison and
        the attacking companies where ``view`` shows them."""
        from pbem.board import HexCell, Picture, Piece, Style

        if overlays:
            raise ValueError("Hilltop draws no overlays")
        # offset rows of pointy hexes (odd rows shifted right) in axial coordinates
        hexes = tuple(HexCell(f"{10 + col:02d}{row + 1:02d}", col - (row - (row & 1)) // 2, row,
                              "hill" if (col, row) == (2, 1) else "clear", HILL if (col, row) == (2, 1) else "")
                      for col in range(6) for row in range(4))
        pieces: tuple[Piece, ...] = ()
        if view is not None:
            pieces = (Piece("1202", view.holder, f"G{view.garrison}"),) + tuple(
                Piece("1302" if view.holder == "defender" else "1202", "attacker", c) for c in view.attackers)
        styles = {"clear": Style(fill="#f4ecd8", stroke="#8a7a5a"), "hill": Style(fill="#d9b98c", stroke="#8a7a5a"),
                  "defender": Style(fill="#3b5b92", stroke="#111"), "attacker": Style(fill="#b03a2e", stroke="#111")}
        return Picture(title=f"Hilltop: {HILL}", hexes=hexes, styles=styles, pieces=pieces)

    def outcome(self, state: State) -> Outcome | None:
        if state.phase != "over":
            return None
        winner = "attacker" if state.holder == "attacker" else "defender"
        return Outcome(winner=winner, summary=f"{HILL} held by the {state.holder}")

    def turn_label(self, state: State) -> str:
        return f"Round {state.round}"

    def parse_order(self, state: State, role: str, text: str, ctx: Any) -> Order:
        words = text.split()
        if words[:2] == ["dig", "in"] and words[2:] in (["0"], ["1"], ["2"]):
            label = reserve_label(state.round)
            return Order(action=DigIn(label), secrets={label: words[2].encode()})
        if words[:1] == ["assault"] and len(words) == 2 and words[1].isdigit():
            return Order(action=Assault(int(words[1])))
        raise ValueError("HT 2.1/3.1: 'dig in 0-2' or 'assault N'")

    def format_action(self, action: Any) -> str:
        if isinstance(action, DigIn):
            return "dig in (a hidden reserve)"
        return f"assault {action.companies}"

    def describe_action(self, state: State, action: Any, role: str | None) -> str:
        if isinstance(action, DigIn):
            return f"the defender digs in on {HILL}"
        return f"{action.companies} companies ({', '.join(state.attackers[:action.companies])}) assault {HILL}"

    def render_text(self, view: View) -> str:
        reserve = "hidden" if view.reserve is None else str(view.reserve)
        return (f"Round {view.round}, {view.phase}: {HILL} held by the {view.holder}, garrison {view.garrison}, "
                f"reserve {reserve}; attackers {', '.join(view.attackers) or 'none'}")


RULES = Hilltop()
