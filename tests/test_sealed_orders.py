"""Sealed standing orders (issue 26 point 5): a dice request names the
commitments the answering event must open (the defender's policy for the
phase, committed before the attack); pbem's automatic answer opens them
from the vault, so the policy settles the defender's choice without another
message, and an answer that lacks an opening is refused before any die is
resolved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from pbem import rulesapi, session
from pbem.errors import IllegalAction
from pbem.game import Replay
from pbem.rulesapi import DICE, Ctx, Decision, Order, Outcome, Problem, Rules, Spec
from pbem.table import LocalTable, RandomPolicy

POLICY = "target.policy"


class _A(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type"):
    pass


class Seal(_A, tag="seal"):
    """The target seals its policy under fire: hold or retreat."""

    label: str


class Attack(_A, tag="attack"):
    pass


class React(_A, tag="react"):
    """After the roll, the target (who answered the dice) decides: counter or stay."""

    counter: bool


class State(msgspec.Struct, frozen=True):
    phase: str = "seal"  # seal -> attack -> dice -> react -> over
    result: str = ""


class Ambush(Rules[State, Any, State]):
    """The target seals how it will take a hit; the gunner attacks (two
    players deciding in turn inside one ambush); one die decides, the sealed
    policy, opened with the answer, settles hold or retreat, and then the
    target, who answered the dice, decides whether to counter-attack."""

    SPEC = Spec(id="ambush", version="1", title="Ambush (sealed policy test game)", roles=("target", "gunner"),
                scenarios=("standard",))

    @property
    def action_type(self) -> Any:
        return Seal | Attack | React

    @property
    def state_type(self) -> type[State]:
        return State

    def initial_state(self, scenario: str, options: tuple[str, ...]) -> State:
        return State()

    def pending(self, state: State) -> Decision | None:
        if state.phase == "seal":
            return Decision(role="target", kind="seal")
        if state.phase == "attack":
            return Decision(role="gunner", kind="attack")
        if state.phase == "dice":
            return Decision(role="target", kind=DICE, dice=(6,), purposes=("the attack hits on 4-6",),
                            openings=(POLICY,))
        if state.phase == "react":
            return Decision(role="target", kind="react", prompt="counter or stay")
        return None

    def legal_actions(self, state: State, role: str, ctx: Ctx) -> list[Any]:
        return {"seal": [Seal(POLICY)], "attack": [Attack()],
                "react": [React(True), React(False)]}.get(state.phase, [])

    def legal_orders(self, state: State, role: str, ctx: Ctx) -> list[str]:
        return {"seal": ["seal hold", "seal retreat"], "attack": ["attack"],
                "react": ["counter", "stay"]}.get(state.phase, [])

    def check(self, state: State, action: Any, ctx: Ctx) -> list[Problem]:
        if isinstance(action, Seal) and state.phase == "seal" and action.label == POLICY \
                and ctx.committed(POLICY):
            return []
        if isinstance(action, Attack) and state.phase == "attack":
            return []
        if isinstance(action, React) and state.phase == "react":
            return []
        return [Problem("AMBUSH 1", "not now")]

    def apply(self, state: State, action: Any, ctx: Ctx) -> State:
        if isinstance(action, React):
            return State(phase="over", result=state.result + ("; counters" if action.counter else "; stays"))
        return State(phase="attack" if isinstance(action, Seal) else "dice")

    def resolve_dice(self, state: State, values: tuple[int | None, ...], ctx: Ctx) -> State:
        policy = ctx.value(POLICY)
        hit = (values[0] or 0) >= 4
        result = ("hit, " + ("retreats" if policy == b"retreat" else "holds and loses a step")) if hit else "missed"
        return State(phase="react", result=result)

    def view(self, state: State, role: str | None) -> State:
        return state

    def outcome(self, state: State) -> Outcome | None:
        return Outcome(winner=None, summary=state.result) if state.phase == "over" else None

    def parse_order(self, state: State, role: str, text: str, ctx: Any) -> Order:
        words = text.split()
        if words[:1] == ["seal"] and words[1:] in (["hold"], ["retreat"]):
            return Order(action=Seal(POLICY), secrets={POLICY: words[1].encode()})
        if words == ["attack"]:
            return Order(action=Attack())
        if words in (["counter"], ["stay"]):
            return Order(action=React(words == ["counter"]))
        raise ValueError("AMBUSH 1: 'seal hold', 'seal retreat', 'attack', 'counter' or 'stay'")

    def format_action(self, action: Any) -> str:
        if isinstance(action, React):
            return "counter" if action.counter else "stay"
        return "seal (a sealed policy)" if isinstance(action, Seal) else "attack"

    def render_text(self, view: State) -> str:
        return f"{view.phase} {view.result}"


@pytest.fixture
def ambush():
    rulesapi.register(Ambush())
    yield
    rulesapi.unregister("ambush")


def test_the_automatic_answer_opens_the_sealed_policy_and_the_dice_apply_it(ambush: None, tmp_path: Path) -> None:
    table = LocalTable.create(tmp_path, "ambush", "standard")
    result = table.play(RandomPolicy(5), 10)
    assert result.outcome is not None and result.outcome.summary
    history = table.replay.history
    answer = next(i for i in history if i.rolls is not None)
    assert answer.author == "target" and POLICY in answer.reveals  # opened with the answer itself
    # The answerer's own decision followed the roll: its answer carries it (no automatic event).
    assert answer.actions in (("counter",), ("stay",))
    assert answer.rolls is not None and answer.rolls.purposes == ("the attack hits on 4-6",)
    assert len(table.verify()) == 2


def test_an_answer_without_the_sealed_opening_is_refused_before_the_dice(ambush: None, tmp_path: Path) -> None:
    table = LocalTable.create(tmp_path, "ambush", "standard")
    table.play(RandomPolicy(5), 10)
    target = table.player("target")
    assert target.seat is not None
    vault = target.seat.vault
    # The log up to the attack (the seal in the genesis, then the attack): the dice wait for the target.
    replay = Replay(table.rules, role="target", known=vault.known_values())
    for stored in target.gd.read_events()[:2]:
        replay.apply_stored(stored)
    decision = replay.pending()
    assert decision is not None and decision.kind == DICE and decision.role == "target"
    assert replay.sealed_due("target") == (POLICY,)
    # pbem's answer opens it; a tampered client answers with its entropy only.
    honest = session._body(replay, "target", vault, [], x_next=bytes(32))
    assert [o.label for o in honest.reveals] == [POLICY]
    replay.fork().apply_stored(session._sign(target.identity, honest))
    forged = msgspec.structs.replace(honest, reveals=[])
    with pytest.raises(IllegalAction, match="without opening 'target.policy'.*refused before any die"):
        replay.fork().apply_stored(session._sign(target.identity, forged))
