"""Rommel in the Desert (Columbia Games), rules and data.

"RB n.n" in comments and messages cites the rulebook section
(shared/seeds/rommel-in-the-desert.txt).

``RULES`` is the game pbem plays (the ``pbem.rules`` entry point
``ritd = rules.ritd:RULES``): an instance of the engine's contract
(pbem.rulesapi.Rules) whose hooks are the functions of ``rules.ritd.game``
and its sibling modules. They are imported when first called, so that
``pbem map ritd`` and ``pbem rules check ritd`` do not load the whole game,
and a cold ``pbem show`` loads no order rule (``CurrentRitdRules``).
A released older version stays playable as a frozen package served by the
same class (``rules.ritd_v3:RULES``, entry point ``ritd@3``).
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
    from pbem.deck import DeckTask
    from rules.ritd.game import State, View


class RitdRules(Rules["State", Any, "View"]):
    """Rommel in the Desert on pbem's contract: every hook, with hidden
    blocks, secret dice, Merkle-set Minefields and the shared supply deck.

    ``package`` holds the rules' modules: ``rules.ritd`` for the current
    version, or a frozen package of a released older version (e.g.
    ``rules.ritd_v3``) that games started under it keep playing with.
    """

    def __init__(self, package: str = "rules.ritd") -> None:
        self._package = package
        self._modules: dict[str, Any] = {}

    def _module(self, name: str) -> Any:
        """``package.name``, imported when first needed."""
        hit = self._modules.get(name)
        if hit is None:
            hit = self._modules[name] = importlib.import_module(f"{self._package}.{name}")
        return hit

    @property
    def SPEC(self) -> Spec:  # noqa: N802
        return self._module("game").SPEC

    @property
    def action_type(self) -> Any:
        return self._module("game").Action

    @property
    def state_type(self) -> type[State]:
        return self._module("game").State

    def initial_state(self, scenario: str, options: tuple[str, ...]) -> State:
        return self._module("game").initial_state(scenario, options)

    def pending(self, state: State) -> Decision | None:
        return self._module("game").pending(state)

    def legal_actions(self, state: State, role: str, ctx: Ctx) -> list[Any]:
        return self._module("game").legal_actions(state, role, ctx)  # type: ignore[arg-type]

    def check(self, state: State, action: Any, ctx: Ctx) -> list[Problem]:
        return self._module("game").check(state, action, ctx)

    def apply(self, state: State, action: Any, ctx: Ctx) -> State:
        return self._module("game").apply(state, action, ctx)

    def view(self, state: State, role: str | None) -> View:
        return self._module("game").view(state, role)  # type: ignore[arg-type]

    def outcome(self, state: State) -> Outcome | None:
        return self._module("game").outcome(state)

    def parse_order(self, state: State, role: str, text: str, ctx: ComposeCtx) -> Order:
        return self._module("game").parse_order(state, role, text, ctx)  # type: ignore[arg-type]

    def format_action(self, action: Any) -> str:
        return self._module("game").format_action(action)

    def render_text(self, view: View) -> str:
        return self._module("game").render_text(view)

    # -- optional hooks ---------------------------------------------------------------

    @property
    def map_overlays(self) -> tuple[str, ...]:
        return self._module("picture").OVERLAYS

    @property
    def explain_topics(self) -> tuple[str, ...]:
        return self._module("game").EXPLAIN_TOPICS

    @property
    def secret_dice(self) -> bool:
        # Early Arrival rolls and the Initiative challenge are secret dice (RB 16.4, 3.3).
        return True

    @property
    def demo(self) -> Demo | None:
        demo = self._module("demo")
        return Demo(demo.DEMO_SCENARIO, demo.DEMO_OPTIONS)

    def resolve_dice(self, state: State, values: tuple[int | None, ...], ctx: Ctx) -> State:
        return self._module("game").resolve_dice(state, values, ctx)  # type: ignore[arg-type]

    def on_open(self, state: State, label: str, value: bytes, ctx: Ctx) -> tuple[State, list[Problem]]:
        return self._module("game").on_open(state, label, value, ctx)

    def on_open_leaf(self, state: State, label: str, key: str, value: bytes,
                     ctx: Ctx) -> tuple[State, list[Problem]]:
        return self._module("game").on_open_leaf(state, label, key, value, ctx)

    def reveal_die(self, state: State, label: str, value: int, ctx: Ctx) -> tuple[State, list[Problem]]:
        return self._module("game").reveal_die(state, label, value, ctx)

    def legal_orders(self, state: State, role: str, ctx: Ctx) -> list[str]:
        return self._module("game").legal_orders(state, role, ctx)  # type: ignore[arg-type]

    def explain(self, state: State, role: str, topic: str, subject: str, ctx: Ctx) -> list[str]:
        return self._module("game").explain(state, role, topic, subject, ctx)  # type: ignore[arg-type]

    def report_sections(self, view: View) -> list[tuple[str, list[str]]] | None:
        return self._module("report").report_sections(view)

    def map_picture(self, view: View | None = None, overlays: tuple[str, ...] = ()) -> Picture | None:
        """The map: empty (``pbem map ritd``), or with what a player's view
        shows (reports) and the ``overlays`` asked for (``map_overlays``).
        ValueError for an unknown overlay, or an overlay without a view."""
        if view is not None or overlays:
            return self._module("report").map_picture(view, overlays=overlays)
        return self._module("picture").map_picture()

    def describe_action(self, state: State, action: Any, role: str | None) -> str:
        return self._module("game").describe_action(state, action, role)

    def describe_dice(self, sides: tuple[int, ...], values: tuple[int | None, ...]) -> str | None:
        # Version 4 deals Supply Cards from the shared deck and rolls only
        # six-sided dice: nothing to word. A frozen version may word its own.
        own = getattr(self._module("game"), "describe_dice", None)
        return None if own is None else own(sides, values)

    def turn_label(self, state: State) -> str:
        """The stretch of play players count by (RB 3.0): the Player-Turn in
        progress, or the Month's other steps (set-up, Initiative, Buildup).
        Read from State fields every released version has."""
        where = f"Month {state.month}"
        if state.turn is not None:
            return f"{where}, Player-Turn {state.turn.number} ({state.turn.active})"
        return f"{where}, {state.phase}"

    def scenario_info(self, scenario: str) -> str:
        return self._module("game").scenario_info(scenario)

    def demo_orders(self, state: State, role: str, ctx: Ctx) -> list[str] | None:
        return self._module("demo").demo_orders(state, role, ctx)  # type: ignore[arg-type]

    def deck_task(self, state: State) -> DeckTask | None:
        return self._module("game").deck_task(state)

    def on_deck(self, state: State, ctx: Ctx) -> tuple[State, list[Problem]]:
        return self._module("game").on_deck(state, ctx)

    def data_check_report(self) -> tuple[list[str], bool] | None:
        """The roster check against every count RB states (``pbem rules check ritd``)."""
        return self._module("roster").data_check_report()


class CurrentRitdRules(RitdRules):
    """The current version's hooks that frozen versions (``rules.ritd_v3``)
    predate, so they keep the defaults they were released with: orders in
    groups (issue 21 point 7; a frozen version's self-play chooses as before),
    what happened in words (issue 21 point 2) and label owners (issue 27
    point 2; a frozen version checks only the engine's labels)."""

    def happenings(self, before: State, after: State, step: Step, role: str | None) -> tuple[Happening, ...]:
        """Eliminations, losses, Routs and Withdrawals with their rules, and each
        fire as a combat table, from ``role``'s views (rules.ritd.happenings),
        with the tokens of the blocks lost for --json (rules.ritd.lost_tokens)."""
        said = self._module("happenings").happenings(before, after, step, role)
        return self._module("lost_tokens").with_tokens(before, after, role, said)  # type: ignore[no-any-return]

    def label_owner(self, state: State, label: str) -> str | None:
        """Who may commit under ``label`` (rules.ritd.labels)."""
        return self._module("labels").label_owner(state, label)

    def order_tree(self, state: State, role: str, ctx: Ctx) -> tuple[OrderGroup, ...]:
        # The orders of legal_orders in groups, per unit and by kind (issue 21 point 7).
        return self._module("order_tree").order_tree(state, role, ctx)  # type: ignore[no-any-return]

    def forced_order(self, state: State, role: str, ctx: Ctx) -> str | None:  # issue 21 point 5
        return self._module("forced").forced_order(self, state, role, ctx)  # type: ignore[no-any-return]

    def not_now(self, state: State, role: str, text: str = "") -> list[Problem]:  # issue 21 point 7
        return self._module("not_now").not_now(self, state, role, text)  # type: ignore[no-any-return]

    def standing_orders(self) -> dict[str, str]:  # issue 21 point 5: rules.ritd.standing
        return dict(self._module("standing").STANDING)

    def standing_order(self, state: State, role: str, ctx: Ctx, names: frozenset[str]) -> str | None:
        return self._module("standing").standing_order(self, state, role, ctx, names)  # type: ignore[no-any-return]

    def waiting(self, state: State, role: str | None) -> list[str]:  # issue 21 point 3: pending (half-)hits
        return self._module("pending_hits").waiting(state, role)  # type: ignore[no-any-return]

    # The hooks a cold 'pbem show' calls, from the module of their rule, which
    # rules.ritd.game re-exports: show then imports no order rule (issue 20).
    # Here, not in RitdRules: a frozen package it serves (rules.ritd_v3) has
    # its own layout.

    @property
    def SPEC(self) -> Spec:  # noqa: N802
        return self._module("state").SPEC  # type: ignore[no-any-return]

    @property
    def state_type(self) -> type[State]:
        return self._module("state").State  # type: ignore[no-any-return]

    def pending(self, state: State) -> Decision | None:
        return self._module("steps").pending(state)  # type: ignore[no-any-return]

    def view(self, state: State, role: str | None) -> View:
        return self._module("view").view(state, role)  # type: ignore[no-any-return]

    def outcome(self, state: State) -> Outcome | None:
        return self._module("state").outcome(state)  # type: ignore[no-any-return]

    def render_text(self, view: View) -> str:
        return self._module("view").render_text(view)  # type: ignore[no-any-return]


RULES = CurrentRitdRules()
