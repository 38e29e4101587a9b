"""A game of open information that batches its dice (issue 18 points 2
and 5, issue 26 point 4): one request carries 200 dice, each with its
purpose, answered by one automatic event, the roll's result in words; and
the game overrides none of the contract's hooks about secrets, sets, secret
dice or the deck, and so commits nothing but the entropy every die needs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from pbem import codec, rulesapi
from pbem.rulesapi import DICE, Ctx, Decision, Order, Outcome, Problem, Rules, Spec
from pbem.table import LocalTable, RandomPolicy

BATCH = 200


class Barrage(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type", tag="barrage"):
    """The attacker fires every gun of the phase at once."""


class State(msgspec.Struct, frozen=True):
    phase: str = "fire"  # fire -> dice -> over
    hits: int = -1


class Volley(Rules[State, Barrage, State]):
    """Two players: 'gunner' fires a 200-gun barrage, each gun hits on a 6
    (an open, dice-heavy phase); 'target' only answers the dice."""

    SPEC = Spec(id="volley", version="1", title="Volley (dice batch test game)", roles=("gunner", "target"),
                scenarios=("standard",))

    @property
    def action_type(self) -> Any:
        return Barrage

    @property
    def state_type(self) -> type[State]:
        return State

    def initial_state(self, scenario: str, options: tuple[str, ...]) -> State:
        return State()

    def pending(self, state: State) -> Decision | None:
        if state.phase == "fire":
            return Decision(role="gunner", kind="fire", prompt="fire the barrage")
        if state.phase == "dice":
            return Decision(role="target", kind=DICE, dice=(6,) * BATCH,
                            purposes=tuple(f"gun {n} hits on a 6" for n in range(1, BATCH + 1)))
        return None

    def legal_actions(self, state: State, role: str, ctx: Ctx) -> list[Barrage]:
        return [Barrage()] if state.phase == "fire" and role == "gunner" else []

    def check(self, state: State, action: Barrage, ctx: Ctx) -> list[Problem]:
        return [] if state.phase == "fire" else [Problem("VOLLEY 1", "the barrage was fired already")]

    def apply(self, state: State, action: Barrage, ctx: Ctx) -> State:
        return msgspec.structs.replace(state, phase="dice")

    def resolve_dice(self, state: State, values: tuple[int | None, ...], ctx: Ctx) -> State:
        return msgspec.structs.replace(state, phase="over", hits=sum(1 for v in values if v == 6))

    def describe_roll(self, before: State, after: State, values: tuple[int | None, ...]) -> tuple[str, ...]:
        return (f"{after.hits} hits of {BATCH}" + (" (no gun was ready)" if before.phase != "dice" else ""),)

    def view(self, state: State, role: str | None) -> State:
        return state  # open information: every side sees the whole state

    def outcome(self, state: State) -> Outcome | None:
        if state.phase != "over":
            return None
        return Outcome(winner="gunner" if state.hits >= BATCH // 6 else "target", summary=f"{state.hits} hits")

    def parse_order(self, state: State, role: str, text: str, ctx: Any) -> Order:
        if text.strip() != "barrage":
            raise ValueError("VOLLEY 1: the only order is 'barrage'")
        return Order(action=Barrage())

    def format_action(self, action: Barrage) -> str:
        return "barrage"

    def render_text(self, view: State) -> str:
        return f"phase {view.phase}, hits {view.hits}"


@pytest.fixture
def volley():
    rulesapi.register(Volley())
    yield
    rulesapi.unregister("volley")


def test_a_200_die_batch_costs_one_answer_and_nothing_secret(volley: None, tmp_path: Path) -> None:
    table = LocalTable.create(tmp_path, "volley", "standard")
    result = table.play(RandomPolicy(1), 10)
    assert result.outcome is not None
    events = table.players[0].gd.read_events()
    # genesis (the barrage), the target's acceptance with its entropy, then
    # its one answer: 200 dice rolled by the next event, not 200 exchanges.
    bodies = [codec.decode_body(codec.unwrap(e).body) for e in events]
    rolls = [i.rolls for i in table.replay.history if i.rolls is not None]
    assert len(rolls) == 1 and len(rolls[0].values) == BATCH and rolls[0].rolled_seq == 1
    assert len(events) <= 4
    assert table.replay.state.hits == sum(1 for v in rolls[0].values if v == 6)
    # Dice with purposes: each die says what it decides, and the roll what it did.
    roll = rolls[0]
    assert roll.purposes[0] == "gun 1 hits on a 6" and len(roll.purposes) == BATCH
    assert roll.results == (f"{table.replay.state.hits} hits of {BATCH}",)
    from pbem import session

    words = session.dice_text(roll.values, roll.sides, table.rules, roll.purposes, roll.results)
    assert words.startswith(f"gun 1 hits on a 6: {roll.values[0]}; gun 2 hits on a 6: {roll.values[1]}")
    assert words.endswith(f"-> {table.replay.state.hits} hits of {BATCH}")
    # The email body of the answer and 'pbem log' say it too.
    assert f"-> {table.replay.state.hits} hits of {BATCH}" in session.turn_summary(table.replay, [1])
    from click.testing import CliRunner

    from pbem.cli import cli

    log = CliRunner().invoke(cli, ["log", "-g", str(table.players[0].gd.path)])
    assert log.exit_code == 0 and f"-> {table.replay.state.hits} hits of {BATCH}" in log.output, log.output
    # Open information pays nothing for secrets: no commitment, opening or leaf.
    assert all(not b.commits and not b.reveals and not b.leaves for b in bodies)
    assert len(table.verify()) == 2
