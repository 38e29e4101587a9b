"""How problems and descriptions name units and hexes, with what this replay
knows: a block's unit where it is known (never a hidden one), a hex by its
name (RB 1.1). Each message names them where it is written (``unit_label``,
``unit_namer``, ``hex_label``); ``in_words`` turns the words of an action
into words for people (issue 21).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from rules.ritd.hexmap import HexMap
from rules.ritd.position import Position

if TYPE_CHECKING:
    from rules.ritd.state import State

#: How a message names a hex (RB 1.1): ``hex_label`` bound to the map, or the
#: hex id as it is for a caller with no map (a pure rule called directly).
HexNamer = Callable[[str], str]
#: How a message names a block: ``unit_namer`` of the reader's Position, or
#: the token as it is for a caller with no reader (a pure rule called directly).
UnitNamer = Callable[[str], str]


def unit_label(pos: Position, token: str) -> str:
    """A block as a message names it: "Unit (token)" where ``pos`` knows the
    block's unit (face up, or this side's own), else the token alone (nothing
    hidden leaks)."""
    unit = pos.block(token).unit if pos.has_block(token) else ""
    return f"{unit} ({token})" if unit else token


def unit_namer(pos: Position) -> UnitNamer:
    """``unit_label`` as the reader of ``pos`` names blocks."""
    return functools.partial(unit_label, pos)


def unit_labels(name: UnitNamer, tokens: Iterable[str]) -> str:
    """Blocks named by ``name``, comma separated."""
    return ", ".join(map(name, tokens))


def hex_label(m: HexMap, hex_: str) -> str:
    """A hex as a message names it: its name on the map (RB 1.1), else the
    text as given (a hex id the player wrote that is not on the map)."""
    return m.name(hex_) if hex_ in m.hexes else hex_


#: A block token in the words of an action (``in_words``).
_TOKENS = re.compile(r"\b[AL][0-9a-f]{8}\b")
_SIDE_OF_TOKEN = {"A": "Axis", "L": "Allied"}
_UNSEEN_RUN = re.compile(r"\ban (Axis|Allied) block(?:,? an \1 block)+")


def in_words(state: State, text: str) -> str:
    """``text`` for people, with no block token in it (issue 21 point 3): a
    block this replay can identify by its unit's name, any other by its side
    ("an Axis block"), a run of those counted ("3 Allied blocks"). The tokens
    stay in the actions themselves (``format_action``, ``pbem log --json``'s
    events) for whoever needs to trace a block."""
    pos = state.position

    def name(match: re.Match[str]) -> str:
        token = match.group()
        unit = pos.block(token).unit if pos.has_block(token) else ""
        return unit or f"an {_SIDE_OF_TOKEN[token[0]]} block"

    def count(match: re.Match[str]) -> str:
        return f"{match.group(0).count(' block')} {match.group(1)} blocks"

    return _UNSEEN_RUN.sub(count, _TOKENS.sub(name, text))
