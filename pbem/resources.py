"""Package data shipped with pbem: Jinja templates.

Templates live in the repository's top-level ``templates/`` directory and are
installed as the ``pbem.templates`` package (see pyproject.toml), so they load
the same way from an editable and from a plain install. Code imported straight
from a source checkout (pytest at the repository root) has no such package and
reads ``templates/`` beside ``pbem/``.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2


def templates_root() -> Path:
    """Directory holding the Jinja templates."""
    import importlib.resources

    try:
        return Path(str(importlib.resources.files("pbem.templates")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / "templates"


@functools.cache
def template_env(game_templates: str | None = None) -> jinja2.Environment:
    """The shared Jinja environment: autoescaping on for HTML, SVG and XML.
    With ``game_templates`` (a game's ``report_templates`` package), a
    template of that package replaces the engine's of the same name; the
    others stay the engine's.

    Imported lazily so that CLI start-up does not pay for Jinja.
    """
    import importlib.resources

    import jinja2

    loader: jinja2.BaseLoader = jinja2.FileSystemLoader(str(templates_root()))
    if game_templates:
        own = jinja2.FileSystemLoader(str(importlib.resources.files(game_templates)))
        loader = jinja2.ChoiceLoader([own, loader])
    return jinja2.Environment(
        loader=loader,
        autoescape=jinja2.select_autoescape(["html", "svg", "xml", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
