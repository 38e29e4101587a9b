"""Why a familiar Rommel in the Desert order is not legal at this step, with
its rule (issue 21 point 7; ``pbem.rulesapi.Rules.not_now``).

The parser refuses an order of another step of the Sequence of Play (RB 3.0)
as "not an order now", naming the step the game is in; this module adds when
that kind of order is given, with its rule, for ``pbem do`` and for the "not
now:" lines of ``pbem options``. Read from the step (``pending``) alone.
"""

from __future__ import annotations

from typing import Any

from pbem.rulesapi import Problem

#: (example, the words an order of the kind starts with, the steps it belongs
#: to (``Decision.kind``), its rule, when it is given).
FAMILIAR: tuple[tuple[str, tuple[str, ...], frozenset[str], str, str], ...] = (
    ("keep hand | redraw", ("keep hand", "redraw"), frozenset({"redraw"}), "RB 18.0",
     "once, after both deployments: keep the initial hand or redraw it"),
    ("challenge | no challenge", ("challenge", "no challenge"), frozenset({"challenge"}), "RB 3.3",
     "at the start of a Month, to challenge for the Initiative"),
    ("answer | decline", ("answer", "decline"), frozenset({"answer"}), "RB 3.3",
     "to answer an Initiative challenge"),
    ("supply check", ("supply check",), frozenset({"initial-supply", "final-supply"}), "RB 12.7",
     "at the start (Initial) and the end (Final) of your Player-Turn"),
    ("pass | basic | offensive | assault", ("pass", "basic", "offensive", "assault"), frozenset({"option"}),
     "RB 3.42", "after your Initial Supply Check, before movement (the turn option, cards face down)"),
    ("group <hex> -> <hex> <units> | regroup ... | forced march ... | end movement",
     ("group", "regroup", "forced march", "end movement"), frozenset({"movement"}), "RB 5.0, 6.4",
     "in the Movement phase of your Player-Turn"),
    ("refuse-battle <hex> ... | accept-battle <hex>", ("refuse-battle", "accept-battle"), frozenset({"refuse"}),
     "RB 8.4", "when enemy units have attacked one of your Groups, after their Movement"),
    ("battles <hex>, ... | battles none", ("battles",), frozenset({"battles"}), "RB 8.6",
     "at the start of your Combat phase"),
    ("fire <hex>: <unit> at <class>, ...", ("fire",), frozenset({"defensive-fire", "offensive-fire"}), "RB 9.1",
     "in a battle, when your units fire"),
    ("losses <hex> auto", ("losses",), frozenset({"offensive-losses", "defensive-losses"}), "RB 9.5",
     "when hits on your units wait to be placed"),
    ("pursue <hex> with <units> | pursue <hex> with none", ("pursue",),
     frozenset({"refuse-pursuit", "retreat-pursuit", "rout-pursuit"}), "RB 10.5",
     "after the enemy announces the slowest speed of a Refusal, Retreat or Rout"),
    ("reveal units", ("reveal units",), frozenset({"reveal-passive", "reveal-active", "probe-reveal"}), "RB 7.3",
     "when all Movement is complete, for your units in battles"),
    ("open minefields", ("open minefields",), frozenset({"mines-passive", "mines-active"}), "RB 14.2",
     "after Movement, when enemy units entered your Minefield hexes"),
    ("blitz", ("blitz",), frozenset({"blitz", "option"}), "RB 3.45, 4.4",
     "as the turn option after your Initial Supply Check (3 real cards face down), then again after the "
     "first Combat phase of that Player-Turn, before its Final Supply Check, to play the Blitz phases"),
    ("no blitz", ("no blitz",), frozenset({"blitz"}), "RB 3.45, 4.4",
     "after the first Combat phase of a Player-Turn played with 3 or more cards, before its Final Supply Check"),
    ("reveal option", ("reveal option",), frozenset({"supply-revealed"}), "RB 3.48",
     "at Supply Revealed, the end of your Player-Turn"),
    ("rebuild <unit> | early arrival | reinforce | redeploy ... | buy supply | end buildup",
     ("rebuild", "early arrival", "reinforce", "redeploy", "refit", "sea ", "buy supply", "call malta", "end buildup"),
     frozenset({"buildup"}), "RB 16.0", "in the Buildup at the end of each Month"),
)


def _kind_of(text: str) -> tuple[str, tuple[str, ...], frozenset[str], str, str] | None:
    low = " ".join(text.lower().split())
    best = None
    for entry in FAMILIAR:
        for words in (w.strip() for w in entry[1]):
            if (low == words or low.startswith(words + " ")) and (best is None or len(words) > best[0]):
                best = (len(words), entry)
    return None if best is None else best[1]


def not_now(rules: Any, state: Any, role: str, text: str = "") -> list[Problem]:
    """See ``Rules.not_now``: with ``text``, why that familiar order is not
    given at this step ([] if it is of this step, or not a familiar order);
    without, every familiar kind not given at this step."""
    decision = rules.pending(state)
    step = decision.kind if decision is not None and decision.role == role else ""
    prompt = decision.prompt if decision is not None and decision.role == role else "nothing of yours"
    if text:
        entry = _kind_of(text)
        if entry is None or step in entry[2]:
            return []
        example, _, _, rule, when = entry
        return [Problem(rule, f"'{example}' is given {when}; now: {prompt}")]
    if getattr(state, "phase", "") == "deploy":
        return []  # deployment lists its units and areas alone (issue 21 point 7)
    return [Problem(rule, f"{example}: {when}") for example, _, steps, rule, when in FAMILIAR if step not in steps]
