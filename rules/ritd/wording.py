"""How problems and descriptions name units and hexes, with what this replay
knows: a block's unit where it is known (never a hidden one), a hex by its
name (RB 1.1).
"""

from __future__ import annotations

import re

from rules.ritd.state import State, game_map

_TOKENS = re.compile(r"\b[AL][0-9a-f]{8}\b")


def with_unit_names(state: State, text: str) -> str:
    """``text`` with the tokens of blocks this replay can identify shown as
    "Unit (token)"; other tokens stay as they are (nothing hidden leaks)."""
    pos = state.position

    def name(match: re.Match[str]) -> str:
        token = match.group()
        unit = pos.block(token).unit if pos.has_block(token) else ""
        return f"{unit} ({token})" if unit else token

    return _TOKENS.sub(name, text)


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


_HEX = re.compile(r"\b\d{4}\b")


def with_hex_names(text: str) -> str:
    """``text`` with hex numbers shown by their names."""
    m = game_map()
    return _HEX.sub(lambda x: m.name(x.group()) if x.group() in m.hexes else x.group(), text)
