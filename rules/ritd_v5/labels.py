"""Who may commit under which label (issue 27 point 2; pbem.rulesapi.Rules.label_owner).

Every commitment RitD makes lives in one of these namespaces, each owned by
one side, so that no player can take a label the other will need later (a
squatted ``turn3.option`` would stop the victim ever playing Supply Cards):

    <token>.id<version>          a block's identity (RB 2.0): the side whose
                                 token it is ("A..." Axis, "L..." Allies)
    turn<N>.option               the cards played face down in Player-Turn N
                                 (RB 3.42): its active player, once turn N
                                 has begun
    month<M>.initiative.<side>   the Initiative challenge card (RB 3.3): <side>
    month<M>.early.<side>.<i>    an Early Arrival slot (RB 16.41): <side>
    mines.<side>.<n>             a Minefield set (RB 14.1, 16.55): <side>

Any other label is outside RitD's namespaces: nobody's. The shared deck's
seeds (``deck/...``) are the engine's and checked by it.
"""

from __future__ import annotations

import re

from pbem.rulesapi import NOBODY
from rules.ritd_v5.hidden import token_of_label
from rules.ritd_v5.state import State

SIDES = ("axis", "allied")
_LETTER = {"A": "axis", "L": "allied"}
_OPTION = re.compile(r"^turn(?P<n>[1-9][0-9]{0,5})\.option$")
_MONTHLY = re.compile(r"^month[1-9][0-9]{0,3}\.(?:initiative\.(?P<challenger>axis|allied)"
                      r"|early\.(?P<early>axis|allied)\.(?:0|[1-9][0-9]{0,3}))$")
_MINES = re.compile(r"^mines\.(?P<side>axis|allied)\.(?:0|[1-9][0-9]{0,5})$")


def label_owner(state: State, label: str) -> str:
    """The side that may commit under ``label`` in ``state``, or NOBODY."""
    parsed = token_of_label(label)
    if parsed is not None:
        return _LETTER.get(parsed[0][:1], NOBODY)
    option = _OPTION.match(label)
    if option is not None:
        # RB 3.42: only the active player of Player-Turn N plays its cards; asked
        # after the event (which may begin turn N), so a turn not yet begun is
        # nobody's (its player is not known before the Initiative, RB 3.3).
        number = int(option.group("n"))
        return state.turns[number - 1] if number <= len(state.turns) else NOBODY
    monthly = _MONTHLY.match(label)
    if monthly is not None:
        return monthly.group("challenger") or monthly.group("early")
    mines = _MINES.match(label)
    if mines is not None:
        return mines.group("side")
    return NOBODY
