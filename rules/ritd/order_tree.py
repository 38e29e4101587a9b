"""The orders a player may give now, in groups (``Rules.order_tree``, issue
21 point 7, issue 26 point 6): what ``pbem options`` shows and random
self-play samples level by level.

No rule is listed twice: the leaves are the orders of ``legal_orders``
(player_orders and the listing functions of each rule's module), sorted
into groups with a label, an example and a note naming the rule. Only the
Movement phase builds its own leaves, per unit and lazily, from the same
functions ``legal_orders`` joins (group_moves.group_movers and
unit_move_orders: one reachability search per unit, when its group is
opened). The contract suite checks that the leaves are ``legal_orders``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pbem.rulesapi import DICE, OrderGroup
from rules.ritd import base_entry, exits, group_moves, player_orders, steps
from rules.ritd.position import Block, Side
from rules.ritd.scenarios import AreaZone, HexZone, LineZone, Zone
from rules.ritd.state import State, all_scenarios, current_turn, game_map, known_units, scenario_of
from rules.ritd.turn import Turn

#: How many place names a deployment group's note shows ("112 hexes now, e.g. A, B, C, D").
AREA_NAMES = 4


def order_tree(state: State, role: Side, ctx: Any) -> tuple[OrderGroup, ...]:
    """The orders ``role`` may give now, in groups (empty when none)."""
    if state.phase == "deploy":
        return _deployment(state, role, ctx)
    decision = steps.pending(state)
    if decision is None or decision.role != role or decision.kind == DICE:
        return ()
    if state.phase == "turn":
        turn = current_turn(state)
        if turn.step == "movement":
            return _movement(state, role, turn, ctx)
    legal = player_orders.legal_orders(state, role, ctx)
    if state.phase == "turn" and current_turn(state).step in ("initial-supply", "final-supply"):
        return _supply(legal)
    return by_kind(legal)


# -- RB 18.0: deployment ------------------------------------------------------------------

def _deployment(state: State, role: Side, ctx: Any) -> tuple[OrderGroup, ...]:
    """One group per unit left to deploy (its orders, the hexes where it may
    deploy now as the note), then "End deployment"."""
    legal = player_orders.legal_orders(state, role, ctx)
    if not legal:
        return ()
    s = scenario_of(state)
    roster = all_scenarios().roster
    placed = known_units(state.position, role)
    areas: dict[str, list[tuple[str, str]]] = {}  # unit: (where, rule) of each set-up group it is in
    units = []
    for group in s.side(role).setup:
        for unit in group.select(roster, role):
            if unit.name in placed:
                continue
            if unit.name not in areas:
                units.append(unit)
            areas.setdefault(unit.name, []).append(("; ".join(_zone_words(z) for z in group.zones), group.rule))
    by_unit: dict[str, list[str]] = {u.name: [] for u in units}
    rest = []
    for order in legal:
        name, at, _ = order.removeprefix("deploy ").partition(" at ")
        if order.startswith("deploy ") and at and name in by_unit:
            by_unit[name].append(order)
        else:
            rest.append(order)
    groups = []
    for unit in units:
        orders = by_unit[unit.name]
        where = " or ".join(dict.fromkeys(f"{w} (RB {r})" for w, r in areas[unit.name]))
        places = [o.split(" at ", 1)[1] for o in orders]
        if not places:
            now = "no hex open now: the zones are full or the units left are needed where a minimum is stated"
        elif len(places) <= AREA_NAMES:
            now = f"now {', '.join(places)}"
        else:
            now = f"{len(places)} hexes now, e.g. {', '.join(places[:AREA_NAMES])}"
        groups.append(OrderGroup(label=f"{unit.name} (CV {unit.max_cv})", example=f"deploy {unit.name} at <place>",
                                 orders=tuple(orders), note=f"may deploy {where}: {now}; Supplied locations only (RB 18.0)"))
    return (*groups, *by_kind(rest))


def _zone_words(zone: Zone) -> str:
    """Where a deployment zone lies, in the scenario's words (RB 18.x)."""
    match zone:
        case AreaZone(areas=areas, except_=except_):
            return "in " + ", ".join(areas) + (f" except {', '.join(except_)}" if except_ else "")
        case HexZone(hexes=names):
            return "in " + ", ".join(names)
        case LineZone(text=text):
            return text
    return str(zone)


# -- RB 5.0-6.4: the Movement phase ----------------------------------------------------------

def _movement(state: State, role: Side, turn: Turn, ctx: Any) -> tuple[OrderGroup, ...]:
    """One group per hex with units that may still move, holding one group
    per unit (its destinations found when opened), then the other orders
    of the step (Forced Marches, end movement) by kind."""
    m = game_map()
    by_hex: dict[str, list[Block]] = {}
    for b in group_moves.group_movers(state, role, turn):
        by_hex.setdefault(b.hex, []).append(b)

    def unit_group(b: Block) -> OrderGroup:
        name = b.unit or b.token
        speed = group_moves.block_speed(state, b)
        return OrderGroup(label=f"{name} (speed {speed}, at {m.name(b.hex)})",
                          example=f"group {m.name(b.hex)} -> <hex> {name}",
                          orders=lambda: group_moves.unit_move_orders(state, role, turn, b))

    def hex_group(hex_: str, blocks: list[Block]) -> OrderGroup:
        names = ", ".join(b.unit or b.token for b in blocks)
        return OrderGroup(label=f"Moves from {m.name(hex_)}: {names}", example=f"group {m.name(hex_)} -> <hex> {names}",
                          children=lambda: [unit_group(b) for b in blocks],
                          note="RB 5.1: units of a hex may move together in one order; "
                               "'pbem explain move UNIT' shows a unit's reach")

    moves = [hex_group(h, bs) for h, bs in by_hex.items()]
    # The rest of the movement orders listed (player_orders): Forced Marches, then the end of movement.
    rest = base_entry.enter_base_orders(state, role, turn) + exits.exit_orders(state, role, turn) + \
        group_moves.forced_march_orders(state, role, turn, ctx) + ["end movement"]
    return (*moves, *by_kind(rest))


# -- RB 12.7, 13.3, 15.1: the Supply Checks ----------------------------------------------------

#: The choices a Supply Check may ask for: (the word in the order, what it is, its rule).
SUPPLY_CHOICES = {"fortress": ("Fortress Supply", "RB 13.3"), "oasis": ("Oasis Supply", "RB 15.1")}


def _supply(orders: Sequence[str]) -> tuple[OrderGroup, ...]:
    """A bare 'supply check', or (when more units could draw Fortress or
    Oasis Supply than it gives) one group per choice: the orders that vary
    it, the other choices at their first (supply_steps.supply_orders)."""
    if not orders:
        return ()
    if list(orders) == ["supply check"]:
        return (OrderGroup(label="Supply check", orders=("supply check",),
                           note="RB 12.7; Fortress Supply (RB 13.3) and Oasis Supply (RB 15.1) are assigned "
                                "by pbem unless more units could draw it than it gives: then they are "
                                "chosen here ('supply check fortress <place>: <unit>, ...')"),)
    first = _choices(orders[0])
    by_choice: dict[int, list[str]] = {}
    for order in orders:
        parts = _choices(order)
        differs = [i for i, (a, b) in enumerate(zip(parts, first, strict=False)) if a != b]
        by_choice.setdefault(differs[0] if differs and len(parts) == len(first) else 0, []).append(order)
    groups = []
    for i, listed in by_choice.items():
        head = first[i].split(":", 1)[0] if i < len(first) else "supply check"
        kind, _, place = head.partition(" ")
        what, rule = SUPPLY_CHOICES.get(kind.lower(), ("Supply", "RB 12.7"))
        groups.append(OrderGroup(label=f"{what} from {place}" if place else what, orders=tuple(listed),
                                 example=f"supply check {kind} {place}: <unit>, ..." if place else "",
                                 note=f"{rule}: choose the units that receive it; "
                                      "each order names every choice, the others at their first"))
    return tuple(groups)


def _choices(order: str) -> list[str]:
    """The choices of a 'supply check' order ("fortress Tobruk: a, b", ...)."""
    body = order[len("supply check"):].strip()
    return [p.strip() for p in body.split(";")] if body else []


# -- every other step: the orders by kind -----------------------------------------------------

#: RB 9.2: the two forms of a fire order, as ``pbem options`` shows them.
FIRE_STEP_NOTE = ("RB 9.2: the unit's dice are rolled (one automatic exchange) and you see its hits before "
                  "you order the next unit, choosing its target knowing them; artillery first. Costs 2 messages "
                  "a unit ('pbem explain fire <battle>')")
FIRE_PLAN_NOTE = ("RB 9.2, 9.3: every unit still to fire in one order, targets set before any die is rolled; "
                  "'else <class>' gives a later unit fallbacks used if its target is gone when it fires "
                  "(unused ones are recorded as unused). One message for the whole fire; one plan per "
                  "target Class is listed, any legal plan may be written")
#: An order's kind: (its text starts with, label, note, ends the step). The
#: first match counts; an order matching none is its own kind (its first word).
KINDS: tuple[tuple[str, str, str, bool], ...] = (
    ("end deployment", "End deployment", "RB 18.0: every starting unit deployed", True),
    ("keep hand", "Keep hand", "RB 18.0", False),
    ("redraw", "Redraw", "RB 18.0", False),
    ("no challenge", "No challenge", "RB 3.3", False),
    ("challenge", "Challenge for the Initiative", "RB 3.3", False),
    ("decline", "Decline the challenge", "RB 3.3", False),
    ("answer", "Answer the challenge", "RB 3.3", False),
    ("open challenge", "Open the challenge", "RB 3.3", False),
    ("reveal all", "Reveal all", "RB 17.0", False),
    ("early arrival", "Early Arrival", "RB 16.41", False),
    ("reinforce", "Reinforcements", "RB 16.4", False),
    ("end buildup", "End buildup", "RB 16.6: with 'discard N dummies' to drop dummy cards", True),
    ("call malta group", "Call the Malta Group", "RB 18.6", False),
    ("buy supply", "Buy a Supply Card", "RB 16.5", False),
    ("minefield", "Minefields", "RB 16.55: 15 BP, or free by dismantling two", False),
    ("rebuild", "Rebuild", "RB 16.54: one step at the Base", False),
    ("redeploy", "Redeployment", "RB 16.51", False),
    ("sea", "Sea Redeployment", "RB 16.53: between controlled Ports", False),
    ("refit", "Return for Refit", "RB 16.52: free, overland to Base, off-board until next Buildup", False),
    ("supply check", "Supply check", "RB 12.7, 13.3, 15.1", False),
    ("pass", "Turn option: pass", "RB 3.42", False),
    ("bluff", "Turn option: bluff", "RB 3.42: dummy cards only", False),
    ("basic", "Turn option: basic", "RB 3.42: one real card; '+ N dummies' hides the count", False),
    ("offensive", "Turn option: offensive", "RB 3.42: two real cards", False),
    ("assault", "Turn option: assault", "RB 3.42: two real cards", False),
    ("blitz", "Blitz", "RB 3.42, 3.45, 4.4", False),
    ("no blitz", "No Blitz", "RB 3.45, 4.4", False),
    ("forced-march", "Forced Marches", "RB 6.4: one unit an order, after the Moves", False),
    ("enter", "Enter the Base", "RB 16.4 sidebar: the units waiting off board near the engaged Base, by "
                                "Group Move", False),
    ("exit", "Exit the map", "RB 17.1 sidebar: a Move off the enemy map-end; exited units never return, "
                             "three Supplied ones win at once", False),
    ("end movement", "End movement", "RB 3.44: ends the Movement phase", True),
    ("accept-battle", "Accept battle", "RB 8.4", False),
    ("refuse-battle", "Refuse battle", "RB 10.2: 'refuse-battle <hex> slowest <speed>' (the true slowest "
                                       "speed), then its Withdrawal 'refuse-battle <hex> -> <hex>'", False),
    ("pursue", "Pursuit Fire", "RB 10.5", False),
    ("pursuit losses", "Pursuit losses", "RB 10.5, 9.5", False),
    ("march losses", "Forced March losses", "RB 6.4 sidebar", False),
    ("no probe", "No Probe", "RB 10.41", False),
    ("probe", "Probe", "RB 10.41", False),
    ("retreat", "Retreat", "RB 10.3, 10.5", False),
    ("rout", "Rout", "RB 11.3", False),
    ("reveal units", "Reveal units", "RB 7.3", False),
    ("reveal option", "Reveal the turn option", "RB 3.48", False),
    ("open minefields", "Open Minefields", "RB 14.2", False),
    ("battles", "Active Battles", "RB 8.6: the mandatory ones (new, Fortress attacked, RB 13.2) "
                                  "with any of the others", False),
    ("fire", "Fire one unit (step by step)", FIRE_STEP_NOTE, False),
    ("losses", "Losses", "RB 9.5: 'auto', or 'losses <hex>: <unit> <hits>, ...'", False),
)


#: Examples shown with a group of that label.
EXAMPLES = {"Fire one unit (step by step)": "fire <hex>: <unit> at <class>",
            "Fire plan (one message, with fallbacks)": "fire <hex>: <unit> at <class>, <unit> at <class> else <class>"}


def _kind(order: str) -> tuple[str, str, bool]:
    low = order.lower()
    if low.startswith("fire ") and "," in low:
        return "Fire plan (one message, with fallbacks)", FIRE_PLAN_NOTE, True
    if low.startswith("battles ") and " assault " in low:
        return "Battles with Assault Battles", "RB 4.3, 8.6: Assault Battles are some of the Active Battles", False
    for start, label, note, ends in KINDS:
        if low == start or low.startswith(start + " "):
            return label, note, ends
    first = low.split(None, 1)[0] if low else ""
    return first.capitalize(), "", False


def by_kind(orders: Sequence[str]) -> tuple[OrderGroup, ...]:
    """The orders in groups by kind, in the order each kind first appears."""
    groups: dict[str, list[str]] = {}
    about: dict[str, tuple[str, bool]] = {}
    for order in orders:
        label, note, ends = _kind(order)
        groups.setdefault(label, []).append(order)
        about[label] = (note, ends)
    return tuple(OrderGroup(label=label, orders=tuple(listed), note=about[label][0], ends_step=about[label][1],
                            example=EXAMPLES.get(label, ""))
                 for label, listed in groups.items())
