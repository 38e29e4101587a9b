"""Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0):
rules and data.

"§n" in comments and messages cites the text's section
(shared/seeds/panzerarmee-afrika.md); "R-nn" a decision of
``decisions/rules.md``, "D-nn" one of ``decisions/data.md``.

``RULES`` is the game pbem plays (the ``pbem.rules`` entry point
``paa = rules.paa:RULES``): an instance of the engine's contract
(pbem.rulesapi.Rules) whose hooks are the functions of ``rules.paa.game``
(state, actions, sequence of play), ``rules.paa.orders`` (order text and
the orders a faction may give) and ``rules.paa.present`` (text, map,
explain). They are imported when first called, so that loading the entry
point costs nothing. Open information: no secret, card or deck hook.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pbem.rulesapi import (
    ComposeCtx,
    Ctx,
    Decision,
    Demo,
    Happening,
    Order,
    OrderGroup,
    Outcome,
    Problem,
    Rules,
    Spec,
    Step,
)

if TYPE_CHECKING:
    from pbem.board import Picture
    from rules.paa.game import State


class PaaRules(Rules["State", Any, "State"]):
    """Panzerarmee Afrika on pbem's contract."""

    def __init__(self) -> None:
        self._modules: dict[str, Any] = {}

    def _module(self, name: str) -> Any:
        hit = self._modules.get(name)
        if hit is None:
            hit = self._modules[name] = importlib.import_module(f"rules.paa.{name}")
        return hit

    @property
    def SPEC(self) -> Spec:  # noqa: N802
        return self._module("game").SPEC  # type: ignore[no-any-return]

    @property
    def action_type(self) -> Any:
        return self._module("game").Action

    @property
    def state_type(self) -> type[State]:
        return self._module("game").State  # type: ignore[no-any-return]

    def initial_state(self, scenario: str, options: tuple[str, ...]) -> State:
        return self._module("game").initial_state(scenario, options)  # type: ignore[no-any-return]

    def pending(self, state: State) -> Decision | None:
        return self._module("game").pending(state)  # type: ignore[no-any-return]

    def legal_actions(self, state: State, role: str, ctx: Ctx) -> list[Any]:
        orders = self._module("orders")
        return [orders.parse_action(t) for t in orders.legal_orders(state, role, ctx)]

    def check(self, state: State, action: Any, ctx: Ctx) -> list[Problem]:
        return self._module("game").check(state, action, ctx)  # type: ignore[no-any-return]

    def apply(self, state: State, action: Any, ctx: Ctx) -> State:
        return self._module("game").apply(state, action, ctx)  # type: ignore[no-any-return]

    def resolve_dice(self, state: State, values: tuple[int | None, ...], ctx: Ctx) -> State:
        return self._module("game").resolve_dice(state, values, ctx)  # type: ignore[no-any-return]

    def view(self, state: State, role: str | None) -> State:
        return state  # open information (§2.3): both sides and the public see every counter

    def outcome(self, state: State) -> Outcome | None:
        return self._module("game").outcome(state)  # type: ignore[no-any-return]

    def parse_order(self, state: State, role: str, text: str, ctx: ComposeCtx) -> Order:
        return self._module("orders").parse_order(state, role, text, ctx)  # type: ignore[no-any-return]

    def format_action(self, action: Any) -> str:
        return self._module("orders").format_action(action)  # type: ignore[no-any-return]

    def legal_orders(self, state: State, role: str, ctx: Ctx) -> list[str]:
        return self._module("orders").legal_orders(state, role, ctx)  # type: ignore[no-any-return]

    def order_tree(self, state: State, role: str, ctx: Ctx) -> tuple[OrderGroup, ...]:
        return self._module("orders").order_tree(state, role, ctx)  # type: ignore[no-any-return]

    def render_text(self, view: State) -> str:
        return self._module("present").render_text(view)  # type: ignore[no-any-return]

    def report_sections(self, view: State) -> list[tuple[str, list[str]]] | None:
        return self._module("present").report_sections(view)  # type: ignore[no-any-return]

    @property
    def map_overlays(self) -> tuple[str, ...]:
        return self._module("present").OVERLAYS  # type: ignore[no-any-return]

    @property
    def explain_topics(self) -> tuple[str, ...]:
        return self._module("present").TOPICS  # type: ignore[no-any-return]

    def explain(self, state: State, role: str, topic: str, subject: str, ctx: Ctx) -> list[str]:
        return self._module("present").explain(state, role, topic, subject)  # type: ignore[no-any-return]

    def map_picture(self, view: State | None = None, overlays: tuple[str, ...] = ()) -> Picture | None:
        return self._module("present").map_picture(view, overlays)  # type: ignore[no-any-return]

    def describe_roll(self, before: State, after: State, values: tuple[int | None, ...]) -> tuple[str, ...]:
        return self._module("present").describe_roll(before, after, values)  # type: ignore[no-any-return]

    def happenings(self, before: State, after: State, step: Step, role: str | None) -> tuple[Happening, ...]:
        return self._module("present").happenings(before, after, step, role)  # type: ignore[no-any-return]

    def turn_label(self, state: State) -> str:
        return self._module("game").turn_label(state)  # type: ignore[no-any-return]

    def scenario_info(self, scenario: str) -> str:
        return "the 20-turn campaign, April 1941 - November 1942; the Allies move first (§7.1)"

    @property
    def demo(self) -> Demo | None:
        demo = self._module("demo")
        return Demo(demo.DEMO_SCENARIO, demo.DEMO_OPTIONS)

    def demo_orders(self, state: State, role: str, ctx: Ctx) -> list[str] | None:
        return self._module("demo").demo_orders(state, role, ctx)  # type: ignore[no-any-return]


RULES = PaaRules()
