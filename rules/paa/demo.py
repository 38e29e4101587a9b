"""A scripted opening of the campaign for ``pbem demo --rules paa``: the
set-up and the first two game turns (April-May 1941), with Rommel's first
blow at Mersa Brega as Figure 7 draws it (the Italians of 0906 against
BR SG/2/IBDE in 1006), here fought as a combat with German armour beside
them, its dice real (both players' entropy).

Each decision is answered with the script's first order that is legal in
the position reached (the dice decide the rest): where the script has no
legal order left, the phase ends (losses: the first choice the rules list;
advance: the first listed advance, then none). The script is over (None)
when turn 3 begins.
"""

from __future__ import annotations

from typing import Any

from rules.paa import game as g
from rules.paa import orders as o

DEMO_SCENARIO = "campaign"
DEMO_OPTIONS: tuple[str, ...] = ()
LAST_TURN = 2

#: (turn, faction, phase) -> the orders tried in this order, each at most once.
SCRIPT: dict[tuple[int, str, str], tuple[str, ...]] = {
    (1, "axis", "setup"): ("place IT 132/AREGT 0602", "place IT BERS/8/AIREGT 0602"),
    (1, "allied", "movement"): ("move BR KDG/ARECBN 1206", "move BR 3/ABDE 1207"),
    (1, "axis", "movement"): ("move IT 132/AREGT 0906", "move IT BERS/8/AIREGT 0906", "move DE 5/2/ABN 0906",
                              "move DE 5/1/ABN 0907", "move DE 3/ARECBN 0905"),
    (1, "axis", "attack_supply"): ("attack DE 5/1/ABN, DE 5/2/ABN, IT 132/AREGT, IT BERS/8/AIREGT on 1006",),
    (2, "allied", "movement"): ("move BR 3/ABDE 1307", "move BR KDG/ARECBN 1308"),
    (2, "axis", "movement"): ("move DE 3/ARECBN 1108", "move DE 5/1/ABN 1106", "move DE 2/MIBN 0805",
                              "move DE 8/MIBN 0804"),
}
#: What ends each kind of decision when the script has nothing (more) to say.
CLOSE = {"setup": "setup done", "movement": "end movement", "attack_supply": "end declarations",
         "resolution": "end combat", "reinforcement": "end turn"}


def demo_orders(state: g.State, role: str, ctx: Any) -> list[str] | None:
    if state.phase == "over" or state.turn > LAST_TURN:
        return None
    legal = o.legal_orders(state, role, ctx)
    if not legal:
        return []
    if state.stage in ("losses", "counter-losses", "pick", "malta"):
        return [legal[0]]
    if state.stage == "advance":
        moves = [x for x in legal if x.startswith("advance ")]
        fight = state.fights[state.current]
        return [moves[0]] if moves and not fight.advanced else ["end advance"]
    phase = "setup" if state.phase == "setup" else state.phase
    for order in SCRIPT.get((state.turn, state.faction, phase), ()):
        if order in legal and not _done(state, order):
            return [order]
    if state.phase == "resolution":
        resolve = [x for x in legal if x.startswith("resolve ")]
        if resolve:
            return [resolve[0]]
        cancel = [x for x in legal if x.startswith("cancel ")]
        return [cancel[0] if cancel else "end combat"]
    close = CLOSE.get(phase)
    if close in legal:
        return [close]
    return [legal[-1]]


def _done(state: g.State, order: str) -> bool:
    """Whether a scripted order has been carried out already (the unit stands there, the combat is declared)."""
    a = o.parse_action(order)
    if isinstance(a, (g.Move, g.Place)):
        p = g.piece_of(state, a.unit)
        return p is not None and (p.hex == a.hex or a.unit in state.mf_used)
    if isinstance(a, g.Attack):
        return any(f.hexes == a.hexes for f in state.fights)
    return False
