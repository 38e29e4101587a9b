"""Rommel in the Desert (Columbia Games), rules and data.

"RB n.n" in comments and messages cites the rulebook section
(shared/seeds/rommel-in-the-desert.txt).

The rules module pbem plays is ``rules.ritd.game``; this package exposes
its interface lazily (PEP 562), so that ``pbem map ritd`` and ``pbem rules
check ritd`` do not load the whole game.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pbem.board import Picture

#: The names ``pbem`` looks up on a rules module (pbem.rulesapi REQUIRED and
#: OPTIONAL), all served by rules.ritd.game.
_GAME_NAMES = frozenset({
    "SPEC", "Action", "initial_state", "pending", "legal_actions", "check", "apply", "resolve_dice", "on_open",
    "view", "outcome", "parse_order", "format_action", "render_text", "legal_orders", "explain", "reveal_die",
    "report_sections", "scenario_info", "State", "View", "describe_action", "describe_dice", "on_open_leaf",
    "deck_task", "on_deck",
})
_DEMO_NAMES = frozenset({"DEMO_SCENARIO", "DEMO_OPTIONS", "demo_orders"})


def __getattr__(name: str) -> Any:
    if name in _GAME_NAMES:
        from rules.ritd import game as source
    elif name in _DEMO_NAMES:
        from rules.ritd import demo as source
    elif name == "MAP_OVERLAYS":
        # The overlays map_picture draws on request: "supply", the viewer's Supply Network (RB 12.6).
        from rules.ritd import picture

        return picture.OVERLAYS
    else:
        raise AttributeError(f"module 'rules.ritd' has no attribute {name!r}")
    value = getattr(source, name)
    # Bound on the package once loaded: the engine calls these hooks for every
    # replayed action, and a module attribute is found without __getattr__.
    globals()[name] = value
    return value


def map_picture(view: Any = None, overlays: Sequence[str] = ()) -> Picture:
    """The map as a picture for pbem's SVG renderer: empty (``pbem map
    ritd``), or with what a player's view shows (reports) and the
    ``overlays`` asked for (``MAP_OVERLAYS``, from rules.ritd.picture.OVERLAYS). ValueError for an unknown
    overlay, or an overlay without a view."""
    if view is not None or overlays:
        from rules.ritd.report import map_picture as with_pieces

        return with_pieces(view, overlays=overlays)
    from rules.ritd.picture import map_picture as build

    return build()


def data_check_report() -> tuple[list[str], bool]:
    """The roster check against every count RB states (``pbem rules check ritd``)."""
    from rules.ritd.roster import data_check_report as report

    return report()
