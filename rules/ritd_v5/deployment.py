"""The scenario set-up (RB 18.0): Deploy checks and the Deploy orders
listed (only hexes of the deployment area that are Supplied locations, not
held by the enemy), the initial Fortress control (RB 13.0) and naming one's
own blocks in orders.
"""

from __future__ import annotations

import re

import msgspec

from pbem.rulesapi import Order, Problem
from rules.ritd_v5 import hidden, supply_checks
from rules.ritd_v5.actions import Deploy, EndDeployment, OrderError
from rules.ritd_v5.names import UnknownLocation
from rules.ritd_v5.position import SIDES, Position, Side
from rules.ritd_v5.scenarios import HexZone
from rules.ritd_v5.setup import (
    check_deployment_complete,
    check_hidden_placement,
    check_public_placement,
    group_hexes,
    zone_hexes,
)
from rules.ritd_v5.state import State, all_scenarios, game_map, identity_of, known_units, scenario_of
from rules.ritd_v5.units import UnknownUnit


def check_deploy(state: State, action: Deploy, side: Side, ctx) -> list[Problem]:
    if state.phase != "deploy":
        return [Problem("RB 18.0", "deployment is over")]
    m = game_map()
    problems = []
    if not hidden.is_token_of(action.token, side) or state.position.has_block(action.token):
        problems.append(Problem("RB 2.0", f"'{action.token}' is not a new {side} block token"))
    label = hidden.identity_label(action.token)
    if not ctx.committed(label):
        problems.append(Problem("RB 2.0", f"the block's identity must be committed as '{label}'"))
    if action.hex not in m.hexes or not m.is_playable(action.hex):
        return problems + [Problem("RB 1.0", f"'{action.hex}' is not a land hex of the map")]
    problems += check_public_placement(m, scenario_of(state), side, state.position, action.hex,
                                       state.placed.get(side, 0))
    if not problems:
        problems += check_supplied_location(state, side, action.hex)
    try:
        identity = identity_of(ctx, action.token)
    except ValueError as exc:
        return problems + [Problem("RB 2.0", str(exc))]
    if identity is not None:
        unit, cv = identity
        problems += check_hidden_placement(m, all_scenarios(), scenario_of(state), side, action.hex, unit, cv,
                                           known_units(state.position, side))
    return problems


def initial_fortress_control(state: State) -> Position:
    """RB 13.1: initial control follows the scenario deployment areas: a Fortress
    held by one side's blocks is that side's; an empty one belongs to the side
    whose deployment area alone includes it."""
    from rules.ritd_v5.setup import side_hexes
    m, s, pos = game_map(), scenario_of(state), state.position
    control = dict(pos.fortresses)
    basis = all_scenarios().get(s.special.control_as) if s.special.control_as else s
    areas = {side: side_hexes(m, basis, side) for side in SIDES}
    for place in m.places:
        if not place.is_fortress:
            continue
        holder = pos.controller(place.hex)
        if holder is None:
            owners = [side for side in SIDES if place.hex in areas[side]]
            holder = owners[0] if len(owners) == 1 else None
        if holder is not None:
            control[place.hex] = holder
    return msgspec.structs.replace(pos, fortresses=control)


def named_hexes(state: State, side: Side) -> frozenset[str]:
    """The hexes the scenario names for a set-up ("Tobruk: all T units",
    "up to 5 units in Tobruk", "El Agheila: ..."): placing there is the
    scenario's own deployment, not Free Deployment (D-17)."""
    m = game_map()
    return frozenset().union(*(zone_hexes(m, z) for g in scenario_of(state).side(side).setup
                               for z in g.zones if isinstance(z, HexZone)))


def supplied_hexes(state: State, side: Side, hexes: frozenset[str] | set[str]) -> frozenset[str]:
    """RB 18.0 "Free Deployment units may be placed in any Supplied
    location": of ``hexes``, those where one more ``side`` unit is Supplied
    now (supply_checks.supplied_locations, with the Fortress control of the
    set-up, RB 13.1), plus the hexes the scenario names (D-17)."""
    named = named_hexes(state, side)
    rest = frozenset(hexes) - named
    found = supply_checks.supplied_locations(game_map(), initial_fortress_control(state), side, rest) if rest else rest
    return found | (frozenset(hexes) & named)


def check_supplied_location(state: State, side: Side, hex_: str) -> list[Problem]:
    """RB 18.0: a Free Deployment unit goes to a Supplied location only."""
    if hex_ in supplied_hexes(state, side, {hex_}):
        return []
    return [Problem("RB 18.0", f"{game_map().name(hex_)} is not a Supplied location for a {side} unit now: "
                               f"Free Deployment units may be placed in any Supplied location only (RB 12.2 "
                               f"Supply Lines from the units already deployed, 13.3, 15.1)")]


def listed_deployment(state: State, role: Side) -> list[str]:
    """RB 18.0: every Deploy order ``role`` may give now, and 'end
    deployment' once the set-up is complete. A hex is offered when it is in
    the unit's set-up group, not held by the enemy, a Supplied location, and
    not in a zone already full; once the units left are needed to fill the
    stated minimums, only hexes of those zones."""
    if state.side != role:
        return []
    m = game_map()
    s = scenario_of(state)
    roster = all_scenarios().roster
    placed = known_units(state.position, role)
    mine = list(state.position.blocks_of(role))
    left = sum(1 for g in s.side(role).setup for u in g.select(roster, role) if u.name not in placed)
    full: set[str] = set()
    short: set[str] = set()
    need = 0
    for group in s.side(role).setup:
        for zone in group.zones:
            zh = zone_hexes(m, zone)
            count = sum(1 for b in mine if b.hex in zh)
            if zone.max_units is not None and count >= zone.max_units:
                full |= zh
            if count < zone.min_units:
                short |= zh
                need += zone.min_units - count
    open_: dict[int, list[str]] = {}
    for i, group in enumerate(s.side(role).setup):
        open_[i] = [h for h in group_hexes(m, group)
                    if state.position.control(h, role) in ("friendly", "empty") and h not in full
                    and (need < left or h in short)]
    supplied = supplied_hexes(state, role, {h for hexes in open_.values() for h in hexes})
    orders = []
    for i, group in enumerate(s.side(role).setup):
        hexes = sorted(h for h in open_[i] if h in supplied)
        for unit in group.select(roster, role):
            if unit.name not in placed:
                orders += [f"deploy {unit.name} at {m.name(h)}" for h in hexes]
    if not check_deployment_complete(m, s, role, state.position):
        orders.append("end deployment")
    return orders


DEPLOY = re.compile(r"^deploy\s+(?P<unit>.+?)\s+(?:at|in)\s+(?P<where>.+)$", re.IGNORECASE)


def place_name(text: str) -> str:
    try:
        return game_map().resolve(text.strip())
    except UnknownLocation as exc:
        raise OrderError(f"RB 1.1: {exc}") from None


def own_token(state: State, role: Side, name: str) -> str:
    """The token of my unit called ``name`` (or a token of mine given as such)."""
    name = name.strip()
    pos = state.position
    if pos.has_block(name) and pos.block(name).side == role:
        return name
    try:
        unit = all_scenarios().roster.get(name)
    except UnknownUnit as exc:
        raise OrderError(f"RB 2.0: {exc}") from None
    for b in pos.blocks_of(role):
        if b.unit == unit.name:
            return b.token
    raise OrderError(f"RB 2.0: {unit.name} is not on the map")


# -- the actions in words (format_action) ---------------------------------------------------

def format_deploy(action: Deploy) -> str:
    """The action in words (format_action)."""
    m = game_map()
    token = action.token
    hex_ = action.hex
    return f"deploy block {token} at {m.name(hex_)}"


def format_end_deployment(action: EndDeployment) -> str:
    """The action in words (format_action)."""
    cards = action.cards
    return "end deployment" + (f", {len(cards)} cards drawn" if cards else "")


# -- orders read (parse_order) ---------------------------------------------------------------

def parse_deploy_order(state: State, role: Side, text: str, words: str, low: str, ctx) -> Order:
    """RB 18.0: 'deploy <unit> at <place>' (a new hidden block, its identity committed) or 'end deployment'."""
    if low in ("end deployment", "deployment done", "done"):
        return Order(action=EndDeployment())
    m = DEPLOY.match(words)
    if m:
        try:
            unit = all_scenarios().roster.get(m.group("unit"))
        except UnknownUnit as exc:
            raise OrderError(f"RB 2.0: {exc}") from None
        where = place_name(m.group("where"))
        token = hidden.new_token(role, ctx.fresh())
        return Order(action=Deploy(token=token, hex=where),
                     secrets={hidden.identity_label(token): hidden.encode_identity(unit.name, unit.max_cv)})
    raise OrderError(f"not an order now: '{text}' (while deploying: 'deploy <unit> at <place>', "
                     "'end deployment')")
