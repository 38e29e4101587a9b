"""Rommel in the Desert (Columbia Games), rules and data.

"RB n.n" in comments and messages cites the rulebook section
(shared/seeds/rommel-in-the-desert.txt).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pbem.board import Picture


def map_picture() -> "Picture":
    """The empty game map as a picture for pbem's SVG renderer (``pbem map ritd``)."""
    from rules.ritd.picture import map_picture as build

    return build()


def data_check_report() -> tuple[list[str], bool]:
    """The roster check against every count RB states (``pbem rules check ritd``)."""
    from rules.ritd.roster import data_check_report as report

    return report()
