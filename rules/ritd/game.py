"""Rommel in the Desert as a pbem rules module (DESIGN 6).

State is one immutable Struct folded over the log. Each replaying side has
its own copy: its own blocks carry unit and CV, the opponent's carry them
only once opened (DESIGN 4). Checks that need a hidden value the replaying
side lacks become ``Obligation``s, decided in ``on_open`` or by the audit.

Implemented: the scenario set-up (RB 18.0: the Axis deploys first, then
the Allies, hidden identities committed block by block).
"""

from __future__ import annotations

import functools
import re
from typing import Literal

import msgspec

from pbem.rulesapi import Decision, Order, Outcome, Problem, Spec
from rules.ritd import hidden
from rules.ritd.datafiles import DATA_FILES
from rules.ritd.hexmap import HexMap, load_map
from rules.ritd.hidden import Obligation
from rules.ritd.names import UnknownLocation
from rules.ritd.position import SIDES, Block, Position, Side, enemy_of
from rules.ritd.scenarios import Scenario, Scenarios, load_scenarios
from rules.ritd.setup import check_deployment_complete, check_hidden_placement, check_public_placement
from rules.ritd.units import UnknownUnit


@functools.cache
def _scenarios() -> Scenarios:
    return load_scenarios()


@functools.cache
def _map() -> HexMap:
    return load_map()


SPEC = Spec(id="ritd", version="1", title="Rommel in the Desert", roles=SIDES,
            scenarios=_scenarios().ids, data_package="rules.ritd.data", data_files=DATA_FILES)


# -- actions ---------------------------------------------------------------------

class _A(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type"):
    pass


class Deploy(_A, tag="deploy"):
    """Place one block (RB 18.0); its identity is committed as ``<token>.id0``."""

    token: str
    hex: str


class EndDeployment(_A, tag="end-deployment"):
    pass


Action = Deploy | EndDeployment


# -- state -------------------------------------------------------------------------

Phase = Literal["deploy", "turn"]


class State(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    scenario: str
    month: int
    phase: Phase
    side: Side  # whose decision while deploying; the active player in a turn
    position: Position = Position()
    #: Blocks placed per side (public).
    placed: dict[str, int] = {}
    #: Tokens whose current identity has been opened to both players.
    disclosed: tuple[str, ...] = ()
    #: Current identity commitment version per token.
    versions: dict[str, int] = {}
    obligations: tuple[Obligation, ...] = ()


def _scenario(state: State) -> Scenario:
    return _scenarios().get(state.scenario)


def initial_state(scenario: str, options: tuple[str, ...]) -> State:
    s = _scenarios().get(scenario)
    return State(scenario=scenario, month=s.start_month, phase="deploy", side="axis")


def pending(state: State) -> Decision | None:
    if state.phase == "deploy":
        return Decision(role=state.side, kind="deploy",
                        prompt=f"deploy the {state.side} starting forces (RB 18.0)")
    return Decision(role=state.side, kind="turn", prompt="player-turn")


def outcome(state: State) -> Outcome | None:
    return None


# -- hidden identities ------------------------------------------------------------------

def _identity(ctx, token: str, version: int = 0) -> tuple[str, int] | None:
    value = ctx.value(hidden.identity_label(token, version))
    if value is None:
        return None
    return hidden.decode_identity(value)


def _known_units(position: Position, side: Side) -> set[str]:
    return {b.unit for b in position.blocks_of(side) if b.unit}


# -- check --------------------------------------------------------------------------------

def check(state: State, action: object, ctx) -> list[Problem]:
    side: Side = ctx.author
    decision = pending(state)
    if decision is None or decision.role != side:
        return [Problem("RB 3.0", "it is not your decision")]
    match action:
        case Deploy():
            return _check_deploy(state, action, side, ctx)
        case EndDeployment():
            if state.phase != "deploy":
                return [Problem("RB 18.0", "deployment is over")]
            return check_deployment_complete(_map(), _scenario(state), side, state.position)
    return [Problem("", f"unknown action {action!r}")]


def _check_deploy(state: State, action: Deploy, side: Side, ctx) -> list[Problem]:
    if state.phase != "deploy":
        return [Problem("RB 18.0", "deployment is over")]
    m = _map()
    problems = []
    if not hidden.is_token_of(action.token, side) or state.position.has_block(action.token):
        problems.append(Problem("RB 2.0", f"'{action.token}' is not a new {side} block token"))
    label = hidden.identity_label(action.token)
    if not ctx.committed(label):
        problems.append(Problem("RB 2.0", f"the block's identity must be committed as '{label}'"))
    if action.hex not in m.hexes or not m.is_playable(action.hex):
        return problems + [Problem("RB 1.0", f"'{action.hex}' is not a land hex of the map")]
    problems += check_public_placement(m, _scenario(state), side, state.position, action.hex,
                                       state.placed.get(side, 0))
    try:
        identity = _identity(ctx, action.token)
    except ValueError as exc:
        return problems + [Problem("RB 2.0", str(exc))]
    if identity is not None:
        unit, cv = identity
        problems += check_hidden_placement(m, _scenarios(), _scenario(state), side, action.hex, unit, cv,
                                           _known_units(state.position, side))
    return problems


# -- apply ------------------------------------------------------------------------------------

def apply(state: State, action: object, ctx) -> State:
    side: Side = ctx.author
    match action:
        case Deploy(token=token, hex=hex_):
            identity = _identity(ctx, token)
            unit, cv = identity if identity is not None else ("", 0)
            block = Block(token=token, side=side, hex=hex_, unit=unit, cv=cv)
            obligations = state.obligations
            if identity is None:
                obligations += (Obligation(token=token, seq=ctx.seq, kind="placement", hex=hex_,
                                           rule=f"RB {_scenario(state).rule}",
                                           what=f"deployed in {_map().name(hex_)}"),)
            position = msgspec.structs.replace(state.position, blocks=state.position.blocks + (block,))
            return msgspec.structs.replace(state, position=position, obligations=obligations,
                                           placed={**state.placed, side: state.placed.get(side, 0) + 1},
                                           versions={**state.versions, token: 0})
        case EndDeployment():
            if side == "axis":  # RB 18.0: the Axis deploys first, then the Allies
                return msgspec.structs.replace(state, side="allied")
            first = _scenario(state).special.first_player
            return msgspec.structs.replace(state, phase="turn", side=first)
    raise ValueError(f"unchecked action {action!r}")


def resolve_dice(state: State, values: tuple[int, ...], ctx) -> State:
    raise ValueError("Rommel in the Desert asked for no dice in this phase")


def on_open(state: State, label: str, value: bytes, ctx) -> tuple[State, list[Problem]]:
    """An identity is opened: fill it in and decide the token's deferred checks."""
    parsed = hidden.token_of_label(label)
    if parsed is None or not state.position.has_block(parsed[0]):
        return state, []
    token, version = parsed
    try:
        unit, cv = hidden.decode_identity(value)
    except ValueError as exc:
        return state, [Problem("RB 2.0", f"block {token}: {exc}")]
    block = state.position.block(token)
    problems: list[Problem] = []
    keep = []
    others = _known_units(state.position, block.side) - {block.unit}
    for ob in state.obligations:
        if ob.token != token:
            keep.append(ob)
            continue
        if ob.kind == "placement":
            for p in check_hidden_placement(_map(), _scenarios(), _scenario(state), block.side, ob.hex, unit, cv,
                                            others):
                problems.append(Problem(p.rule, f"event {ob.seq} by {block.side}: block {token} {ob.what}: "
                                                f"{p.message}"))
    position = state.position.replace_blocks([msgspec.structs.replace(block, unit=unit, cv=cv)])
    disclosed = state.disclosed if token in state.disclosed else state.disclosed + (token,)
    return msgspec.structs.replace(state, position=position, obligations=tuple(keep),
                                   disclosed=disclosed), problems


# -- orders -------------------------------------------------------------------------------------

_DEPLOY = re.compile(r"^deploy\s+(?P<unit>.+?)\s+(?:at|in)\s+(?P<where>.+)$", re.IGNORECASE)


def parse_order(state: State, role: Side, text: str, ctx) -> Order:
    words = text.strip()
    low = words.lower()
    if low in ("end deployment", "deployment done", "done"):
        return Order(action=EndDeployment())
    m = _DEPLOY.match(words)
    if m:
        try:
            unit = _scenarios().roster.get(m.group("unit"))
        except UnknownUnit as exc:
            raise ValueError(f"RB 2.0: {exc}") from None
        try:
            where = _map().resolve(m.group("where"))
        except UnknownLocation as exc:
            raise ValueError(f"RB 1.1: {exc}") from None
        token = hidden.new_token(role, ctx.fresh())
        return Order(action=Deploy(token=token, hex=where),
                     secrets={hidden.identity_label(token): hidden.encode_identity(unit.name, unit.max_cv)})
    raise ValueError(f"not an order now: '{text}' (while deploying: 'deploy <unit> at <place>', "
                     "'end deployment')")


def legal_orders(state: State, role: Side, ctx) -> list[str]:
    if state.phase != "deploy" or state.side != role:
        return []
    s = _scenario(state)
    m = _map()
    placed = _known_units(state.position, role)
    orders = []
    from rules.ritd.setup import group_hexes
    for group in s.side(role).setup:
        hexes = sorted(h for h in group_hexes(m, group) if state.position.control(h, role) in ("friendly", "empty"))
        for unit in group.select(_scenarios().roster, role):
            if unit.name not in placed:
                orders += [f"deploy {unit.name} at {m.name(h)}" for h in hexes]
    if not check_deployment_complete(m, s, role, state.position):
        orders.append("end deployment")
    return orders


def legal_actions(state: State, role: Side, ctx) -> list[object]:
    """Actions that carry no new secret (deployments do: see ``legal_orders``)."""
    if state.phase == "deploy" and state.side == role and \
            not check_deployment_complete(_map(), _scenario(state), role, state.position):
        return [EndDeployment()]
    return []


def format_action(action: object) -> str:
    match action:
        case Deploy(token=token, hex=hex_):
            return f"deploy block {token} at {_map().name(hex_)}"
        case EndDeployment():
            return "end deployment"
    return type(action).__name__


# -- views ------------------------------------------------------------------------------------------

class BlockView(msgspec.Struct, frozen=True):
    token: str
    side: str
    hex: str
    where: str
    unit: str
    cv: int
    disrupted: bool
    revealed: bool


class View(msgspec.Struct, frozen=True):
    role: str
    scenario: str
    month: int
    phase: str
    side: str
    blocks: list[BlockView]


def view(state: State, role: Side | None) -> View:
    """What ``role`` sees: own blocks in full, others only where opened (DESIGN 4)."""
    m = _map()
    blocks = []
    for b in sorted(state.position.blocks, key=lambda b: (b.side, b.hex, b.token)):
        shown = b.side == role or b.token in state.disclosed
        blocks.append(BlockView(token=b.token, side=b.side, hex=b.hex, where=m.name(b.hex),
                                unit=b.unit if shown else "", cv=b.cv if shown else 0,
                                disrupted=b.disrupted, revealed=b.revealed))
    return View(role=role or "", scenario=state.scenario, month=state.month, phase=state.phase,
                side=state.side, blocks=blocks)


def render_text(v: View) -> str:
    s = _scenarios().get(v.scenario)
    lines = [f"{s.name} ({s.rule}), {_scenarios().month_label(s, v.month)} (Month {v.month}); "
             f"{v.phase}: {v.side} to act"]
    for side in SIDES:
        mine = [b for b in v.blocks if b.side == side]
        lines.append(f"{side}: {len(mine)} blocks")
        by_hex: dict[str, list[BlockView]] = {}
        for b in mine:
            by_hex.setdefault(b.where, []).append(b)
        for where, bs in sorted(by_hex.items()):
            names = ", ".join(f"{b.unit} {b.cv}" if b.unit else f"block {b.token}" for b in bs)
            lines.append(f"  {where}: {names}")
    return "\n".join(lines)


__all__ = ["SPEC", "Action", "State", "initial_state", "pending", "legal_actions", "legal_orders", "check",
           "apply", "resolve_dice", "on_open", "view", "outcome", "parse_order", "format_action",
           "render_text", "enemy_of"]
