"""Standing orders of Rommel in the Desert (issue 21 point 5;
``pbem.rulesapi.Rules.standing_orders``; ``pbem standing``).

A standing order settles, in advance, a routine choice the rules leave to
a player, so that pbem's automatic answer ('pbem receive', 'pbem watch')
makes it while the player is away. It gives one of the orders the step
lists (the listed order is the one valid form, decisions/canonical.md), so
it never orders anything a person could not; pbem gives it only when it is
legal then and commits no new secret (a Pursuit loss on face-down blocks
draws new identities: that step waits for the player, who alone knows the
blocks).

- ``losses-auto`` (RB 9.5, 10.5): place the hits of an enemy Fire as
  'losses <hex> auto' does (every hit that can remove CV does, full hits
  first, on units in the order of the battle), and Pursuit hits on
  revealed units as 'pursuit losses auto'.
- ``pursue-all`` (RB 10.5, 11.3): Pursuit Fire with every unit able to pursue
  ('pursue <hex> with all'); where none is able, 'pursue <hex> with none'
  at once too, so the speed of the answer says nothing about the blocks.

The choice a standing order makes is the owner's as the rulebook gives it
(RB 9.5: "the owner"; RB 10.5: "may"); the order is set locally and never
signed as such: the opponent sees only the orders given, as if typed.
"""

from __future__ import annotations

from typing import Any

#: Name -> what it orders, with its rule (``pbem standing`` prints these).
STANDING: dict[str, str] = {
    "losses-auto": "place the hits of enemy Fire as 'losses <hex> auto' does, and Pursuit hits on revealed "
                   "units as 'pursuit losses auto' (RB 9.5, 10.5)",
    "pursue-all": "Pursuit Fire with every unit able to pursue ('pursue <hex> with all'; 'with none' when no "
                  "unit is able) (RB 10.5, 11.3)",
}

#: Step kind (``Decision.kind``) -> the standing order that settles it.
SETTLES: dict[str, str] = {
    "offensive-losses": "losses-auto",
    "defensive-losses": "losses-auto",
    "refuse-losses": "losses-auto",
    "retreat-losses": "losses-auto",
    "rout-losses": "losses-auto",
    "refuse-pursuit": "pursue-all",
    "retreat-pursuit": "pursue-all",
    "rout-pursuit": "pursue-all",
}


def standing_order(rules: Any, state: Any, role: str, ctx: Any, names: frozenset[str]) -> str | None:
    """The listed order that ``role``'s standing orders ``names`` give at
    the pending step, or None when none of them settles it."""
    decision = rules.pending(state)
    if decision is None or decision.role != role or SETTLES.get(decision.kind) not in names:
        return None
    listed = list(rules.legal_orders(state, role, ctx))
    if SETTLES[decision.kind] == "losses-auto":
        wanted = [o for o in listed if o.endswith(" auto") and "losses" in o]
    else:
        wanted = [o for o in listed if o.endswith(" with all")] or \
            [o for o in listed if o.endswith(" with none")]
    return wanted[0] if len(wanted) == 1 else None
