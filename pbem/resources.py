"""Package data shipped with pbem: Jinja templates.

Templates live in the repository's top-level ``templates/`` directory and are
installed as the ``pbem.templates`` package (see pyproject.toml), so they load
the same way from an editable and from a plain install.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2


@functools.cache
def template_env() -> "jinja2.Environment":
    """The shared Jinja environment: autoescaping on for HTML, SVG and XML.

    Imported lazily so that CLI start-up does not pay for Jinja.
    """
    import importlib.resources

    import jinja2

    root = importlib.resources.files("pbem.templates")
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(root)),
        autoescape=jinja2.select_autoescape(["html", "svg", "xml", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
