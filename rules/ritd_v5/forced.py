"""Steps of Rommel in the Desert that are forced in the public view (issue 21
point 5; ``pbem.rulesapi.Rules.forced_order``).

A step qualifies when its kind alone leaves exactly one legal order, whatever
either player holds hidden: the rules require that very act now, and who must
act, and on what, is decided by the public state (``pending`` is computed by
every replay, the public one included). pbem then signs that order in its
automatic answer, so it costs no one's attention and, when the decision then
passes to the opponent, no email of its own. A step that is forced only
because of the mover's hidden blocks (a Pursuit Fire with no unit fast
enough, RB 10.5; losses on a one-step Group) does not qualify: answering it at
once would show the opponent what the blocks are (PLAN "Settled").

The qualifying steps, each with its one order and rule (README lists them too):

- ``final-supply``   'supply check' (RB 12.7), when no Fortress or Oasis
  Supply choice is needed (RB 13.3, 15.1): whether one is needed follows from
  the block positions, the Supply Network and the Fortress capacities, all
  on the map; when one is, the step is a choice and a person makes it.
- ``supply-revealed`` 'reveal option' (RB 3.48): the option card(s) played
  face down are turned face up; nothing to choose.
- ``reveal-passive``, ``reveal-active`` 'reveal units' (RB 7.3) and
  ``probe-reveal`` 'reveal units' (the Rearguard, RB 10.41, 8.5): every
  block in a battle is stood up; nothing to choose.
- ``mines-passive``, ``mines-active`` 'open minefields' (RB 14.2): the hexes
  enemy units entered are opened, whatever they hold.
- ``march-losses`` 'march losses auto' (RB 6.4 "Retreat Forced Marches"):
  the rules place the step lost by each unit whose march failed.
- ``open-challenge`` 'open challenge' (RB 3.3): the challenge card is turned.
- ``reveal-all`` 'reveal all' (RB 17.0): the end of the game.

The engine gives the order only when ``legal_orders`` is exactly that one
order and it commits no new secret (pbem.session.automatic_orders), so a
step listed here that turns out to offer a choice waits for a person.
"""

from __future__ import annotations

from typing import Any

#: Step kind (``Decision.kind``) -> the one order it allows, and its rule.
PUBLICLY_FORCED: dict[str, tuple[str, str]] = {
    "final-supply": ("supply check", "RB 12.7"),
    "supply-revealed": ("reveal option", "RB 3.48"),
    "reveal-passive": ("reveal units", "RB 7.3"),
    "reveal-active": ("reveal units", "RB 7.3"),
    "probe-reveal": ("reveal units", "RB 10.41"),
    "mines-passive": ("open minefields", "RB 14.2"),
    "mines-active": ("open minefields", "RB 14.2"),
    "march-losses": ("march losses auto", "RB 6.4"),
    "open-challenge": ("open challenge", "RB 3.3"),
    "reveal-all": ("reveal all", "RB 17.0"),
}


def forced_order(rules: Any, state: Any, role: str, ctx: Any) -> str | None:
    """The one order of a publicly forced step that is ``role``'s now, else None.
    Only the step's kind is read (public): the engine checks the order against
    ``legal_orders`` itself before giving it."""
    decision = rules.pending(state)
    if decision is None or decision.role != role:
        return None
    entry = PUBLICLY_FORCED.get(decision.kind)
    return None if entry is None else entry[0]
