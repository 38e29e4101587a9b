"""The Supply Checks of the Player-Turn (RB 12.7): the Initial Supply Check
(with recovery from Disruption, RB 11.2) and the Final Supply Check (with its
Routs, RB 12.7, 11 sidebar; CB-11, T-13): check, apply, parsing and the
orders listed, with the Fortress and Oasis choices (RB 13.3, 15.1).
"""

from __future__ import annotations

import itertools
import re

import msgspec

from pbem.rulesapi import Order, Problem
from rules.ritd import canonical, deployment, group_moves, routs, supply_checks, wording
from rules.ritd import supply as sp
from rules.ritd.actions import OrderError, SupplyCheck
from rules.ritd.position import Side
from rules.ritd.state import State, game_map
from rules.ritd.steps import TurnNext
from rules.ritd.turn import PendingRout, Turn


def check_supply(state: State, turn: Turn, action: SupplyCheck, side: Side, ctx) -> list[Problem]:
    """RB 12.7: at the start and the end of the Player-Turn, with every choice the check needs."""
    step = turn.step
    if step not in ("initial-supply", "final-supply"):
        return [Problem("RB 12.7", "Supply Checks come at the start and the end of the Player-Turn")]
    _, report = supply_checks.supply_check(state, step, action, side)
    problems = list(report.problems)
    name = wording.unit_namer(state.position)
    problems += [Problem(n.rule, f"{n.message}: one of {wording.unit_labels(name, n.candidates)}") for n in report.needed]
    return problems


def apply_supply(state: State, turn: Turn, action: SupplyCheck, side: Side, ctx) -> TurnNext:
    if turn.step == "initial-supply":
        pos, _ = supply_checks.supply_check(state, turn.step, action, side)
        return TurnNext("supply_checked", group_moves.note_disruptions(state, pos, turn.number), turn)
    pos, report = supply_checks.supply_check(state, turn.step, action, side)
    # RB 12.7, 11 sidebar (CB-11, T-13): engaged units newly Disrupted
    # for lack of a Supply Line and unshielded are eliminated; the
    # Disrupted units they shielded Rout (T-12).
    final = routs.final_supply_routs(pos, report.rout)
    state = group_moves.note_disruptions(state, final.position, turn.number)
    turn = msgspec.structs.replace(turn, supply_eliminated=turn.supply_eliminated + final.eliminated)
    where = {pos.block(t).hex for t in final.eliminated}
    pending_routs = [PendingRout(hex=h, side=owner, tokens=tokens) for h, owner, tokens in final.rout
                     if owner == side and h in where]
    return TurnNext("supply_checked", state, turn, routs=tuple(pending_routs))


def parse_supply(state: State, role: Side, rest: str) -> SupplyCheck:
    """'supply check [fortress Tobruk: A, B] [oasis Siwa: C]'."""
    fortress: dict[str, tuple[str, ...]] = {}
    oasis: dict[str, str] = {}
    for kind, place, units in re.findall(r"(fortress|oasis)\s+([^:]+):\s*([^;]+)", rest, re.IGNORECASE):
        hex_ = deployment.place_name(place)
        tokens = tuple(deployment.own_token(state, role, u) for u in re.split(r"\s*,\s*", units.strip()) if u)
        if kind.lower() == "fortress":
            fortress[hex_] = tokens
        elif len(tokens) == 1:
            oasis[hex_] = tokens[0]
        else:
            raise OrderError("RB 15.1: one unit takes Oasis Supply")
    return SupplyCheck(fortress=fortress, oasis=oasis)


def supply_orders(state: State, role: Side, turn: Turn) -> list[str]:
    """'supply check', with the Fortress and Oasis choices the check needs
    (RB 13.3, 15.1): every choice for each, the others at their first."""
    m = game_map()
    if turn.step == "initial-supply":
        _, report = supply_checks.initial_supply_check(m, state.position, role, sp.SupplyChoices(),
                                                       recoverable=supply_checks.recoverable(state, role))
    else:
        _, report = supply_checks.final_supply_check(m, state.position, role, sp.SupplyChoices())
    if not report.needed:
        return ["supply check"]
    options = [list(itertools.islice(itertools.combinations(sorted(n.candidates), n.count), 12))
               for n in report.needed]
    orders = []
    for i, choices in enumerate(options):
        for pick in choices:
            parts = []
            for j, n in enumerate(report.needed):
                chosen = pick if j == i else options[j][0]
                names = ", ".join(group_moves.unit_name(state, t) for t in chosen)
                parts.append(f"{n.kind} {m.name(n.hex)}: {names}")
            order = one_valid_form(state, role, parts)
            if order not in orders:
                orders.append(order)
    return orders


def one_valid_form(state: State, role: Side, parts: list[str]) -> str:
    """The order of these choices in its one valid form (issue 27 point 6,
    rules/ritd/decisions/canonical.md): a choice that changes nothing once the
    others are made (a Fortress tie-break an Oasis pick settles) is left out,
    so that every listed order passes check. Choices this replay cannot read
    back stay as they are, for check to judge."""
    def valid(order: str) -> bool | None:
        try:
            action = parse_supply(state, role, order[len("supply check"):])
        except OrderError:
            return None
        return not canonical.problems(state, action, role)

    whole = "supply check " + "; ".join(parts)
    if valid(whole) is not False:
        return whole
    for size in range(len(parts) - 1, -1, -1):
        for subset in itertools.combinations(parts, size):
            order = "supply check " + "; ".join(subset) if subset else "supply check"
            if valid(order):
                return order
    return whole


# -- the orders listed (legal_orders) --------------------------------------------------

def listed_supply(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in steps "initial-supply", "final-supply"."""
    return supply_orders(state, role, turn)


# -- the actions in words (format_action) ---------------------------------------------------

def format_supply_check(action: SupplyCheck) -> str:
    """The action in words (format_action)."""
    return "supply check"


# -- orders read (parse_order) ---------------------------------------------------------------

def parse_supply_order(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'supply check [fortress <place>: <units>] [oasis <place>: <unit>]' (RB 12.7, 13.3, 15.1)."""
    return Order(action=parse_supply(state, role, words[len("supply check"):]))
