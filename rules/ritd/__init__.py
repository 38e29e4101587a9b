"""Rommel in the Desert (Columbia Games), rules and data.

"RB n.n" in comments and messages cites the rulebook section
(shared/seeds/rommel-in-the-desert.txt).

``RULES`` is the game pbem plays (the ``pbem.rules`` entry point
``ritd = rules.ritd:RULES``): an instance of the engine's contract
(pbem.rulesapi.Rules) whose hooks are the functions of ``rules.ritd.game``
and its sibling modules. They are imported when first called, so that
``pbem map ritd`` and ``pbem rules check ritd`` do not load the whole game.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pbem.rulesapi import ComposeCtx, Ctx, Decision, Demo, Order, Outcome, Problem, Rules, Spec

if TYPE_CHECKING:
    from pbem.board import Picture
    from pbem.deck import DeckTask
    from rules.ritd.game import State, View


class RitdRules(Rules["State", Any, "View"]):
    """Rommel in the Desert on pbem's contract: every hook, with hidden
    blocks, secret dice, Merkle-set Minefields and the shared supply deck."""

    @property
    def SPEC(self) -> Spec:  # noqa: N802
        from rules.ritd.game import SPEC

        return SPEC

    @property
    def action_type(self) -> Any:
        from rules.ritd.game import Action

        return Action

    @property
    def state_type(self) -> type[State]:
        from rules.ritd.game import State

        return State

    def initial_state(self, scenario: str, options: tuple[str, ...]) -> State:
        from rules.ritd import game

        return game.initial_state(scenario, options)

    def pending(self, state: State) -> Decision | None:
        from rules.ritd import game

        return game.pending(state)

    def legal_actions(self, state: State, role: str, ctx: Ctx) -> list[Any]:
        from rules.ritd import game

        return game.legal_actions(state, role, ctx)  # type: ignore[arg-type]

    def check(self, state: State, action: Any, ctx: Ctx) -> list[Problem]:
        from rules.ritd import game

        return game.check(state, action, ctx)

    def apply(self, state: State, action: Any, ctx: Ctx) -> State:
        from rules.ritd import game

        return game.apply(state, action, ctx)

    def view(self, state: State, role: str | None) -> View:
        from rules.ritd import game

        return game.view(state, role)  # type: ignore[arg-type]

    def outcome(self, state: State) -> Outcome | None:
        from rules.ritd import game

        return game.outcome(state)

    def parse_order(self, state: State, role: str, text: str, ctx: ComposeCtx) -> Order:
        from rules.ritd import game

        return game.parse_order(state, role, text, ctx)  # type: ignore[arg-type]

    def format_action(self, action: Any) -> str:
        from rules.ritd import game

        return game.format_action(action)

    def render_text(self, view: View) -> str:
        from rules.ritd import game

        return game.render_text(view)

    # -- optional hooks ---------------------------------------------------------------

    @property
    def map_overlays(self) -> tuple[str, ...]:
        from rules.ritd.picture import OVERLAYS

        return OVERLAYS

    @property
    def explain_topics(self) -> tuple[str, ...]:
        from rules.ritd.game import EXPLAIN_TOPICS

        return EXPLAIN_TOPICS

    @property
    def secret_dice(self) -> bool:
        # Early Arrival rolls and the Initiative challenge are secret dice (RB 16.4, 3.3).
        return True

    @property
    def demo(self) -> Demo | None:
        from rules.ritd.demo import DEMO_OPTIONS, DEMO_SCENARIO

        return Demo(DEMO_SCENARIO, DEMO_OPTIONS)

    def resolve_dice(self, state: State, values: tuple[int | None, ...], ctx: Ctx) -> State:
        from rules.ritd import game

        return game.resolve_dice(state, values, ctx)  # type: ignore[arg-type]

    def on_open(self, state: State, label: str, value: bytes, ctx: Ctx) -> tuple[State, list[Problem]]:
        from rules.ritd import game

        return game.on_open(state, label, value, ctx)

    def on_open_leaf(self, state: State, label: str, key: str, value: bytes,
                     ctx: Ctx) -> tuple[State, list[Problem]]:
        from rules.ritd import game

        return game.on_open_leaf(state, label, key, value, ctx)

    def reveal_die(self, state: State, label: str, value: int, ctx: Ctx) -> tuple[State, list[Problem]]:
        from rules.ritd import game

        return game.reveal_die(state, label, value, ctx)

    def legal_orders(self, state: State, role: str, ctx: Ctx) -> list[str]:
        from rules.ritd import game

        return game.legal_orders(state, role, ctx)  # type: ignore[arg-type]

    def explain(self, state: State, role: str, topic: str, subject: str, ctx: Ctx) -> list[str]:
        from rules.ritd import game

        return game.explain(state, role, topic, subject, ctx)  # type: ignore[arg-type]

    def report_sections(self, view: View) -> list[tuple[str, list[str]]] | None:
        from rules.ritd.report import report_sections

        return report_sections(view)

    def map_picture(self, view: View | None = None, overlays: tuple[str, ...] = ()) -> Picture | None:
        """The map: empty (``pbem map ritd``), or with what a player's view
        shows (reports) and the ``overlays`` asked for (``map_overlays``).
        ValueError for an unknown overlay, or an overlay without a view."""
        if view is not None or overlays:
            from rules.ritd.report import map_picture as with_pieces

            return with_pieces(view, overlays=overlays)
        from rules.ritd.picture import map_picture as build

        return build()

    def describe_action(self, state: State, action: Any, role: str | None) -> str:
        from rules.ritd import game

        return game.describe_action(state, action, role)

    def describe_dice(self, sides: tuple[int, ...], values: tuple[int | None, ...]) -> str | None:
        from rules.ritd import game

        return game.describe_dice(sides, values)

    def scenario_info(self, scenario: str) -> str:
        from rules.ritd import game

        return game.scenario_info(scenario)

    def demo_orders(self, state: State, role: str, ctx: Ctx) -> list[str] | None:
        from rules.ritd.demo import demo_orders

        return demo_orders(state, role, ctx)  # type: ignore[arg-type]

    def deck_task(self, state: State) -> DeckTask | None:
        from rules.ritd import game

        return game.deck_task(state)

    def on_deck(self, state: State, ctx: Ctx) -> tuple[State, list[Problem]]:
        from rules.ritd import game

        return game.on_deck(state, ctx)

    def data_check_report(self) -> tuple[list[str], bool] | None:
        """The roster check against every count RB states (``pbem rules check ritd``)."""
        from rules.ritd.roster import data_check_report as report

        return report()


RULES = RitdRules()
