"""Buildup (RB 16.0-16.55, 18.6-18.8 special Buildup rules).

Pure functions over ``Position`` (rules.ritd.position), the map and the
scenario data: no files, no randomness (dice come in as arguments),
integers only. As in movement.py, every ``check_*`` returns all problems at
once, each naming its rule, and the matching ``apply_*`` never re-checks and
never fails on a checked action (STYLE 1, 2).

The sequence of play (rules/ritd/sequence.py, month_phase.py) runs ``BUILDUP_SEQUENCE`` in order.
Per-Buildup bookkeeping that the board does not show (BPs, what they were
spent on, Port Capacity used, units sent to Refit) lives in a ``Ledger``,
the Game Record Sheet of RB 16.5; ``divulge`` is the part of it a player
must tell the opponent on request (16.5 sidebar).

Supply Networks are fixed at the start of Buildup (RB 16.2) by
``buildup_networks`` and passed to every check unchanged: redeploying never
extends them in the same Buildup (16.51 sidebar).

Card handling (the hand, the deck, drawing) is not here: ``BuySupply`` only
counts the Extra Supply Cards bought (16.5, 16.6).

Decisions on rulebook ambiguities: decisions/buildup.md (BU-nn).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Literal

import msgspec

from pbem.rulesapi import Problem
from rules.ritd.firetable import DIE_FACES
from rules.ritd.fortresses import is_besieged
from rules.ritd.hexmap import HexMap
from rules.ritd.movement import road_bonus
from rules.ritd.position import SIDES, Block, Position, Side, enemy_of
from rules.ritd.scenarios import Scenario
from rules.ritd.units import Roster, Unit
from rules.ritd.wording import UnitNamer

#: RB 16.5: at most 20 BPs may be Saved for later Months.
SAVE_LIMIT = 20
#: RB 16.51: one Redeployment is two hexes plus Road Bonuses, for 1 BP.
REDEPLOY_HEXES = 2
REDEPLOY_BP = 1
#: RB 16.53: Sea Redeployment, 1 BP; 4 BP for the Allies if a Port is besieged.
SEA_BP = 1
SEA_BP_BESIEGED_ALLIED = 4
#: RB 16.55 / 14.1: a Minefield costs 15 BP, or two dismantled ones.
MINEFIELD_BP = 15
MINEFIELDS_DISMANTLED_FOR_FREE = 2
#: RB 16.5: an Extra Supply Card costs 10 BP.
SUPPLY_CARD_BP = 10


# ------------------------------------------------------------ step order


Actor = Literal["auto", "dice", "player1", "player2", "each"]


class Step(msgspec.Struct, frozen=True):
    """One step of the Buildup (RB 16.0 sequence chart)."""

    id: str
    rule: str
    actor: Actor  # "each": both players, Player 1 first
    text: str
    calls: str  # the functions of this module (or supply.py) the step uses


#: RB 16.0: the Buildup, in the order the state machine runs it. Steps with
#: actor "player1"/"player2" are that player's decisions; "dice" needs the
#: engine's dice; "auto" needs nobody. Steps 4-8 are the "First Player
#: Buildup", repeated for Player 2 as steps 9-13 (RB 16.0 "repeat player 1
#: procedure"). Not in Month 1 (RB 3.2); the Gazala pre-game Buildup
#: (RB 18.7) is ``PREGAME_SEQUENCE``.
BUILDUP_SEQUENCE: tuple[Step, ...] = (
    Step("advance_month", "RB 16.1", "auto", "Advance the month marker.", ""),
    Step("supply_check", "RB 16.2", "auto",
         "Buildup Supply Check: eliminate Unsupplied units, recover Supplied unengaged Disrupted "
         "units; fix both Supply Networks for the whole Buildup. Then units that Returned for "
         "Refit last Buildup recover into Base, or wait off-board if it is engaged (RB 16.52).",
         "supply_checks.buildup_supply_check, buildup_networks, arrive"),
    Step("bp_determination", "RB 16.3", "dice",
         "Each player rolls 2d6 (1d6 in 1940); each receives the total of all dice; the lower "
         "roll is Player 1, the Allies on a tie; Total BPs = new + Saved.",
         "bp_dice_count, determine_bp, open_ledger"),
    *(
        step
        for player in ("player1", "player2")
        for step in (
            Step(f"{player}_reinforcements", "RB 16.4, 16.41", "auto",
                 "Reinforcements due this month that did not arrive early arrive in Base "
                 "(off-board if it is engaged); the Malta Group may be called (RB 18.6, 18.8).",
                 "on_schedule, arrive, check_malta_group"),
            Step(f"{player}_early_arrival", "RB 16.41", "dice",
                 f"{player} commits an order of hidden slots for next month's Reinforcements; one "
                 "die per slot, 1-2 arrives now (in Base, identity hidden).",
                 "early_arrival_candidates, check_early_arrival_order, early_arrivals, arrive"),
            Step(f"{player}_spending", "RB 16.5-16.55", player,  # type: ignore[arg-type]
                 "Spend BPs in any order: Redeployments (land, sea), Return for Refit, "
                 "Replacements, Minefields, Extra Supply Cards; then end spending (save at most 20).",
                 "check_spend, apply_spend, close_ledger"),
            Step(f"{player}_resupply", "RB 16.6", "auto",
                 "Monthly Resupply, Extra Supply bought above, Bonus Supply (cards: not this module).",
                 "monthly_resupply, Ledger.extra_cards"),
        )
    ),
)

#: RB 18.7: Gazala's pre-game Buildup: 30 BP each, no dice, the Allies first;
#: only BP spending (no Reinforcements, no Resupply).
PREGAME_SEQUENCE: tuple[Step, ...] = (
    Step("pregame_first", "RB 18.7", "player1",
         "The first player (the Allies) spends 30 BP.", "pregame_order, open_ledger, check_spend, apply_spend, close_ledger"),
    Step("pregame_second", "RB 18.7", "player2",
         "The second player (the Axis) spends 30 BP.", "open_ledger, check_spend, apply_spend, close_ledger"),
)


# ------------------------------------------------------------ RB 16.2 networks


def buildup_networks(m: HexMap, pos: Position) -> dict[Side, frozenset[str]]:
    """RB 16.2: both Supply Networks, taken after the Buildup Supply Check and
    kept unchanged for the whole Buildup (16.51 sidebar)."""
    from rules.ritd import supply  # here, not at the top: State (rules.ritd.state) needs only the Ledger

    return {side: supply.network(m, pos, side) for side in SIDES}


# ------------------------------------------------------------ RB 16.3 BPs


class BPDetermination(msgspec.Struct, frozen=True):
    """RB 16.3: both players' rolls, the BPs each receives and Player 1."""

    axis_dice: tuple[int, ...]
    allied_dice: tuple[int, ...]
    bp: int  # received by EACH player: the total of all dice rolled
    player1: Side

    @property
    def player2(self) -> Side:
        return enemy_of(self.player1)

    def roll(self, side: Side) -> int:
        return sum(self.axis_dice if side == "axis" else self.allied_dice)


def bp_dice_count(scenario: Scenario) -> int:
    """RB 16.3: dice each player rolls (2; 1 in the 1940 scenario, 18.1 rule 2)."""
    return scenario.special.bp_dice


def determine_bp(scenario: Scenario, axis_dice: Sequence[int], allied_dice: Sequence[int]) -> BPDetermination:
    """RB 16.3: each player receives the total of ALL dice rolled by both;
    the player who rolled the lower total is Player 1, the Allies on a tie.

    Raises ValueError if the dice are not ``bp_dice_count`` values 1-6 each
    (engine dice, never player input).
    """
    n = bp_dice_count(scenario)
    for side, dice in (("axis", axis_dice), ("allied", allied_dice)):
        if len(dice) != n or any(not 1 <= d <= DIE_FACES for d in dice):
            raise ValueError(f"RB 16.3: {side} must roll {n} dice of 1-{DIE_FACES}, got {list(dice)}")
    axis, allied = sum(axis_dice), sum(allied_dice)
    return BPDetermination(
        axis_dice=tuple(axis_dice),
        allied_dice=tuple(allied_dice),
        bp=axis + allied,
        player1="axis" if axis < allied else "allied",
    )


def pregame_order(scenario: Scenario) -> tuple[Side, Side] | None:
    """RB 18.7: the sides of the pre-game Buildup in order, or None if the
    scenario has none."""
    pre = scenario.special.pregame_buildup
    return None if pre is None else (pre.first, enemy_of(pre.first))


def pregame_bp(scenario: Scenario) -> int:
    """RB 18.7: the fixed BPs each player receives (no dice). Raises
    ValueError for a scenario without a pre-game Buildup."""
    pre = scenario.special.pregame_buildup
    if pre is None:
        raise ValueError(f"scenario {scenario.id!r} has no pre-game Buildup (RB 18.7)")
    return pre.bp


# ------------------------------------------------------------ RB 16.5 ledger


EntryKind = Literal["redeploy", "sea", "refit", "replacement", "minefield", "supply"]


class Entry(msgspec.Struct, frozen=True):
    """One line of the Game Record Sheet (RB 16.5 note).

    ``count``: Redeployments, CV steps, Minefields or cards; ``ports``:
    the Fortresses whose Port Capacity this used (RB 16.53). A Minefield
    entry never holds its hex (RB 16.55: noted secretly).
    """

    kind: EntryKind
    bp: int
    count: int = 1
    token: str = ""
    ports: tuple[str, ...] = ()
    free: bool = False  # a Minefield built by dismantling two (RB 16.55)
    text: str = ""


class Ledger(msgspec.Struct, frozen=True):
    """A player's BPs for one Buildup (RB 16.3, 16.5).

    ``refit`` keeps the blocks Returned for Refit this Buildup, off-board
    until the next Buildup (RB 16.52); the caller hands them to ``arrive``
    then.
    """

    side: Side
    received: int  # new BPs this Buildup (RB 16.3; 30 in the Gazala pre-game Buildup)
    saved_before: int = 0  # Saved from earlier Months (RB 16.3 "plus those previously Saved")
    entries: tuple[Entry, ...] = ()
    refit: tuple[Block, ...] = ()

    @property
    def total(self) -> int:
        """RB 16.3: Total BPs available at the start of spending."""
        return self.received + self.saved_before

    @property
    def spent(self) -> int:
        return sum(e.bp for e in self.entries)

    @property
    def available(self) -> int:
        return self.total - self.spent

    def _of(self, *kinds: EntryKind) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.kind in kinds)

    def port_use(self, fortress: str) -> int:
        """Embarkations plus debarkations at ``fortress`` so far (RB 16.53)."""
        return sum(e.ports.count(fortress) for e in self.entries)

    @property
    def extra_cards(self) -> int:
        """Extra Supply Cards bought (RB 16.5), dealt at Resupply (RB 16.6)."""
        return sum(e.count for e in self._of("supply"))


def open_ledger(side: Side, received: int, saved_before: int = 0) -> Ledger:
    """RB 16.3: a player's ledger: new BPs plus those Saved (at most 20,
    RB 16.5). Raises ValueError on a negative amount or a saving over 20."""
    if received < 0 or not 0 <= saved_before <= SAVE_LIMIT:
        raise ValueError(f"RB 16.3, 16.5: received {received}, saved {saved_before} (0-{SAVE_LIMIT})")
    return Ledger(side=side, received=received, saved_before=saved_before)


class Closing(msgspec.Struct, frozen=True):
    """RB 16.5: what is Saved for the next Buildup and what is lost."""

    saved: int
    lost: int


def close_ledger(ledger: Ledger) -> Closing:
    """RB 16.5: Save at most 20 BPs; excess unspent BPs are lost."""
    saved = min(ledger.available, SAVE_LIMIT)
    return Closing(saved=saved, lost=ledger.available - saved)


class Divulged(msgspec.Struct, frozen=True):
    """RB 16.5 sidebar "Divulging BP Expenditures": what a player must tell
    the opponent on request. Minefield locations are never divulged."""

    side: Side
    saved_before: int
    redeployments: int  # land and sea Redeployments
    redeployment_bp: int
    steps_rebuilt: int
    replacement_bp: int
    extra_supply_bp: int
    minefield_bp: int
    minefields_built: int


def divulge(ledger: Ledger) -> Divulged:
    """RB 16.5 sidebar: the summary of expenditures given on request."""
    redeploy = ledger._of("redeploy", "sea")
    replace = ledger._of("replacement")
    return Divulged(
        side=ledger.side,
        saved_before=ledger.saved_before,
        redeployments=sum(e.count for e in redeploy),
        redeployment_bp=sum(e.bp for e in redeploy),
        steps_rebuilt=sum(e.count for e in replace),
        replacement_bp=sum(e.bp for e in replace),
        extra_supply_bp=sum(e.bp for e in ledger._of("supply")),
        minefield_bp=sum(e.bp for e in ledger._of("minefield")),
        minefields_built=sum(e.count for e in ledger._of("minefield")),
    )


# ------------------------------------------------------------ spending actions


class _Spend(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type"):
    pass


class Redeploy(_Spend, tag="redeploy", frozen=True):
    """RB 16.51: move one unit along ``path`` (its hex first). The path is
    cut into as few 1-BP Redeployments (2 hexes plus Road Bonus) as possible."""

    token: str
    path: tuple[str, ...]


class SeaRedeploy(_Spend, tag="sea-redeploy", frozen=True):
    """RB 16.53: ship one unit from the Port it is in to ``to``."""

    token: str
    to: str


class ReturnForRefit(_Spend, tag="refit", frozen=True):
    """RB 16.52: send one undisrupted unit along ``path`` (overland, its hex
    first, ending in the Base) to Refit off-board, free."""

    token: str
    path: tuple[str, ...]


class Replace(_Spend, tag="replace", frozen=True):
    """RB 16.54: ``steps`` Replacement steps (1 CV; 2 CV for elite units)."""

    token: str
    steps: int = 1


class BuySupply(_Spend, tag="buy-supply", frozen=True):
    """RB 16.5: Extra Supply Cards, 10 BP each."""

    cards: int = 1


SpendAction = Redeploy | SeaRedeploy | ReturnForRefit | Replace | BuySupply


class BuildupContext(msgspec.Struct, frozen=True):
    """What stays fixed during a Buildup: the map, both Supply Networks as
    fixed by RB 16.2 (``buildup_networks``) and the roster; and how the
    problems name a block (``name``: the token as it is by default)."""

    m: HexMap
    networks: Mapping[Side, frozenset[str]]
    roster: Roster
    name: UnitNamer = str


class Spent(msgspec.Struct, frozen=True):
    """The result of one checked spending action."""

    pos: Position
    ledger: Ledger


# ------------------------------------------------------------ RB 16.51 Redeployment


def redeployment_legs(m: HexMap, path: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """RB 16.51: ``path`` cut into the fewest Redeployments of two hexes plus
    the Road Bonus of that leg (RB 6.2; BU-01: the bonus applies, no Rommel
    Bonus). Each leg ends where the next starts. Greedy longest legs are
    optimal: any part of a valid leg is a valid leg."""
    legs: list[tuple[str, ...]] = []
    i = 0
    while i < len(path) - 1:
        j = i + 1
        while j + 1 < len(path) and leg_ok(m, path[i:j + 2]):
            j += 1
        legs.append(tuple(path[i:j + 1]))
        i = j
    return tuple(legs)


def leg_ok(m: HexMap, leg: Sequence[str]) -> bool:
    return len(leg) - 1 <= REDEPLOY_HEXES + road_bonus(m, leg)


def redeployment_cost(m: HexMap, path: Sequence[str]) -> int:
    """RB 16.51: BPs to Redeploy along ``path`` (1 BP per Redeployment)."""
    return REDEPLOY_BP * len(redeployment_legs(m, path))


def _owned_block(pos: Position, side: Side, token: str, rule: str,
                 name: UnitNamer) -> tuple[Block | None, list[Problem]]:
    if not pos.has_block(token):
        return None, [Problem(rule, f"no such block on the map: {name(token)}")]
    b = pos.block(token)
    if b.side != side:
        return None, [Problem(rule, f"{name(token)} is not a {side} unit")]
    return b, []


def _leaving_problems(pos: Position, b: Block, rule: str, what: str, name: UnitNamer) -> list[Problem]:
    """RB 11.1: Disrupted units cannot Redeploy or Return to Base; RB 16.51:
    out of a battle only if a friendly unit stays behind."""
    probs = []
    if b.disrupted:
        probs.append(Problem("RB 11.1", f"{name(b.token)} is Disrupted and cannot {what} during Buildup"))
    if pos.battle(b.hex) is not None and len(pos.blocks_in(b.hex, b.side)) < 2:
        probs.append(Problem(rule, f"{name(b.token)} may leave the battle at {b.hex} only if a friendly unit "
                                   f"stays behind (RB 16.51)"))
    return probs


def _entry_problems(ctx: BuildupContext, pos: Position, side: Side, hex_: str, rule: str) -> list[Problem]:
    """RB 16.51: a hex a Redeploying unit enters: inside the friendly Supply
    Network as fixed at the start of Buildup, outside the enemy one, and no
    battle or enemy hex (entering one would start a battle)."""
    probs = []
    name = ctx.m.name(hex_)
    if hex_ not in ctx.networks[side]:
        probs.append(Problem(rule, f"{name} is outside the {side} Supply Network fixed at the start of "
                                   f"Buildup (RB 16.51, 16.2)"))
    elif hex_ in ctx.networks[enemy_of(side)]:
        probs.append(Problem(rule, f"{name} is in the enemy Supply Network where the Networks overlap "
                                   f"(RB 16.51)"))
    if pos.battle(hex_) is not None:
        probs.append(Problem(rule, f"{name} is a Battle Hex: units may never Redeploy into or through "
                                   f"one (RB 16.51)"))
    elif pos.blocks_in(hex_, enemy_of(side)):
        probs.append(Problem(rule, f"{name} holds enemy units: Redeploying there would start a battle "
                                   f"(RB 16.51)"))
    return probs


def _path_problems(ctx: BuildupContext, pos: Position, b: Block, path: Sequence[str], rule: str) -> list[Problem]:
    m = ctx.m
    if len(path) < 2 or path[0] != b.hex:
        return [Problem(rule, f"the route must start at {ctx.name(b.token)}'s hex {m.name(b.hex)} and enter at "
                              f"least one hex")]
    probs: list[Problem] = []
    unknown = [h for h in path if h not in m.hexes]
    if unknown:
        return [Problem(rule, f"no such hex: {', '.join(unknown)}")]
    if len(set(path)) != len(path):
        probs.append(Problem(rule, "the route enters a hex twice"))
    for a, c in zip(path, path[1:]):
        if not m.is_adjacent(a, c) or not m.is_passable(a, c):
            probs.append(Problem(rule, f"no passable hexside from {m.name(a)} to {m.name(c)} (RB 1.4)"))
    for h in path[1:]:
        probs += _entry_problems(ctx, pos, b.side, h, rule)
    return probs


def check_redeploy(ctx: BuildupContext, pos: Position, ledger: Ledger, action: Redeploy) -> list[Problem]:
    """RB 16.51: every problem with a land Redeployment."""
    rule = "RB 16.51"
    b, probs = _owned_block(pos, ledger.side, action.token, rule, ctx.name)
    if b is None:
        return probs
    probs = _leaving_problems(pos, b, rule, "Redeploy", ctx.name) + _path_problems(ctx, pos, b, action.path, rule)
    if not probs:
        cost = redeployment_cost(ctx.m, action.path)
        if cost > ledger.available:
            probs.append(Problem("RB 16.5", f"the route needs {cost} Redeployments ({cost} BP); "
                                            f"{ledger.available} BP left"))
    return probs


def apply_redeploy(ctx: BuildupContext, pos: Position, ledger: Ledger, action: Redeploy) -> tuple[Position, Ledger]:
    legs = len(redeployment_legs(ctx.m, action.path))
    b = pos.block(action.token)
    entry = Entry("redeploy", REDEPLOY_BP * legs, count=legs, token=b.token,
                  text=f"{ctx.m.name(b.hex)} -> {ctx.m.name(action.path[-1])}")
    moved = msgspec.structs.replace(b, hex=action.path[-1])
    return pos.replace_blocks([moved]), add_entry(ledger, entry)


def add_entry(ledger: Ledger, entry: Entry) -> Ledger:
    return msgspec.structs.replace(ledger, entries=ledger.entries + (entry,))


# ------------------------------------------------------------ RB 16.53 Sea Redeployment


def is_port(m: HexMap, hex_: str) -> bool:
    """RB 16.53: Fortresses and Bases are Ports."""
    return m.fortress(hex_) is not None or m.base_side(hex_) is not None


def controls_port(m: HexMap, pos: Position, side: Side, hex_: str) -> bool:
    """RB 13.1, 16.53: a Fortress ``side`` controls, or its own Base (the
    enemy Base is never a friendly Port: controlling it ends the game, 17.1)."""
    if m.fortress(hex_) is not None:
        return pos.controller(hex_) == side
    return m.base_side(hex_) == side and pos.controller(hex_) in (side, None)


def port_capacity(m: HexMap, hex_: str, side: Side) -> int | None:
    """RB 13.3, 16.53: a Fortress's Port Capacity for ``side``; None for a
    Base (unlimited)."""
    f = m.fortress(hex_)
    if f is None:
        return None
    cap = f.port_axis if side == "axis" else f.port_allied
    return cap or 0


def sea_cost(m: HexMap, pos: Position, side: Side, from_: str, to: str) -> int | None:
    """RB 16.53: BPs per unit, or None where Sea Redeployment is not allowed
    (the Axis with a besieged Port, anyone between two besieged Ports)."""
    besieged = [is_besieged(m, pos, p, side) for p in (from_, to)]
    if all(besieged):
        return None
    if any(besieged):
        return SEA_BP_BESIEGED_ALLIED if side == "allied" else None
    return SEA_BP


def check_sea_redeploy(ctx: BuildupContext, pos: Position, ledger: Ledger, action: SeaRedeploy) -> list[Problem]:
    """RB 16.53: every problem with one unit's Sea Redeployment."""
    rule = "RB 16.53"
    m, side = ctx.m, ledger.side
    b, probs = _owned_block(pos, side, action.token, rule, ctx.name)
    if b is None:
        return probs
    if action.to not in m.hexes:
        return [Problem(rule, f"no such hex: {action.to}")]
    probs = _leaving_problems(pos, b, rule, "Redeploy", ctx.name)
    for h, what in ((b.hex, "departure"), (action.to, "arrival")):
        if not is_port(m, h):
            probs.append(Problem(rule, f"{m.name(h)} is not a Port (only Fortresses and Bases are)"))
        elif not controls_port(m, pos, side, h):
            probs.append(Problem(rule, f"the {what} Port {m.name(h)} is not controlled by the {side} "
                                       f"player (RB 13.1)"))
    if action.to == b.hex:
        probs.append(Problem(rule, "the arrival Port must differ from the departure Port"))
    if probs:
        return probs
    probs += _entry_problems(ctx, pos, side, action.to, rule)
    cost = sea_cost(m, pos, side, b.hex, action.to)
    besieged = [m.name(p) for p in (b.hex, action.to) if is_besieged(m, pos, p, side)]
    if cost is None:
        if len(besieged) == 2:
            probs.append(Problem(rule, f"Sea Redeployment between two besieged Ports "
                                       f"({' and '.join(besieged)}) is never allowed"))
        else:
            probs.append(Problem(rule, f"{besieged[0]} is besieged (RB 13.5): Sea Redeployment is "
                                       f"prohibited for the Axis"))
    for p in dict.fromkeys((b.hex, action.to)):
        cap = port_capacity(m, p, side)
        if cap is not None and ledger.port_use(p) + 1 > cap:
            probs.append(Problem(rule, f"{m.name(p)}'s {side} Port Capacity ({cap}) is used up this "
                                       f"Buildup ({ledger.port_use(p)} embarkations/debarkations)"))
    if cost is not None and cost > ledger.available:
        probs.append(Problem("RB 16.5", f"Sea Redeployment costs {cost} BP; {ledger.available} BP left"))
    return probs


def apply_sea_redeploy(ctx: BuildupContext, pos: Position, ledger: Ledger, action: SeaRedeploy
                       ) -> tuple[Position, Ledger]:
    m = ctx.m
    b = pos.block(action.token)
    cost = sea_cost(m, pos, ledger.side, b.hex, action.to)
    if cost is None:
        raise ValueError(f"RB 16.53: unchecked Sea Redeployment of {b.token}")
    ports = tuple(p for p in (b.hex, action.to) if m.fortress(p) is not None)
    entry = Entry("sea", cost, token=b.token, ports=ports, text=f"{m.name(b.hex)} -> {m.name(action.to)} by sea")
    return pos.replace_blocks([msgspec.structs.replace(b, hex=action.to)]), add_entry(ledger, entry)


# ------------------------------------------------------------ RB 16.52 Return for Refit


def check_refit(ctx: BuildupContext, pos: Position, ledger: Ledger, action: ReturnForRefit) -> list[Problem]:
    """RB 16.52: every problem with a Return for Refit."""
    rule = "RB 16.52"
    b, probs = _owned_block(pos, ledger.side, action.token, rule, ctx.name)
    if b is None:
        return probs
    probs = _leaving_problems(pos, b, rule, "Return to Base", ctx.name) + _path_problems(ctx, pos, b, action.path, rule)
    base = ctx.m.base(ledger.side)
    if action.path and action.path[-1] != base:
        probs.append(Problem(rule, f"a Return for Refit follows an overland route ending in the Base "
                                   f"({ctx.m.name(base)})"))
    return probs


def apply_refit(ctx: BuildupContext, pos: Position, ledger: Ledger, action: ReturnForRefit
                ) -> tuple[Position, Ledger]:
    """The block leaves the map for ``ledger.refit`` (off-board near Base,
    face-down, keeping its CV) until the next Buildup (RB 16.52)."""
    b = pos.block(action.token)
    kept = tuple(x for x in pos.blocks if x.token != b.token)
    gone = msgspec.structs.replace(pos, blocks=kept)
    gone = gone.with_battles(bt for bt in pos.battles if {x.side for x in gone.blocks_in(bt.hex)} == set(SIDES))
    entry = Entry("refit", 0, token=b.token, text=f"{ctx.m.name(b.hex)} -> Refit")
    off = msgspec.structs.replace(b, hex=ctx.m.base(ledger.side))
    return gone, msgspec.structs.replace(add_entry(ledger, entry), refit=ledger.refit + (off,))


# ------------------------------------------------------------ RB 16.54 Replacements


def replacement_cost(unit: Unit, steps: int) -> int:
    """RB 16.54 sidebar: BP per CV by unit type; an elite step is 2 CV, so it
    costs twice the per-CV amount."""
    return steps * unit.cv_per_step * unit.unit_type.bp_per_cv


def check_replace(ctx: BuildupContext, pos: Position, ledger: Ledger, action: Replace) -> list[Problem]:
    """RB 16.54: every problem with Replacements for one unit. Needs the
    unit's identity and CV (the owner's view, or the audit)."""
    rule = "RB 16.54"
    b, probs = _owned_block(pos, ledger.side, action.token, rule, ctx.name)
    if b is None:
        return probs
    m = ctx.m
    if action.steps < 1:
        probs.append(Problem(rule, "at least one Replacement step"))
    if b.hex != m.base(ledger.side):
        probs.append(Problem(rule, f"Replacements are received in Base only ({ctx.name(b.token)} is at {m.name(b.hex)})"))
    if not b.unit:
        return probs + [Problem(rule, f"{ctx.name(b.token)}'s unit is not known to this side")]
    unit = ctx.roster.get(b.unit)
    new_cv = b.cv + action.steps * unit.cv_per_step
    if action.steps >= 1 and new_cv > unit.max_cv:
        probs.append(Problem(rule, f"{unit.name} has CV {b.cv}; {action.steps} step(s) would give {new_cv}, "
                                   f"above its full strength {unit.max_cv} (BU-08)"))
    cost = replacement_cost(unit, max(action.steps, 0))
    if cost > ledger.available:
        probs.append(Problem("RB 16.5", f"{action.steps} step(s) for {unit.name} cost {cost} BP; "
                                        f"{ledger.available} BP left"))
    return probs


def apply_replace(ctx: BuildupContext, pos: Position, ledger: Ledger, action: Replace) -> tuple[Position, Ledger]:
    b = pos.block(action.token)
    unit = ctx.roster.get(b.unit)
    entry = Entry("replacement", replacement_cost(unit, action.steps), count=action.steps, token=b.token,
                  text=f"{unit.name} +{action.steps * unit.cv_per_step} CV")
    grown = msgspec.structs.replace(b, cv=b.cv + action.steps * unit.cv_per_step)
    return pos.replace_blocks([grown]), add_entry(ledger, entry)


# ------------------------------------------------------------ RB 16.55 Minefields


def check_minefield_site(m: HexMap, side: Side, network: Collection[str], engaged: Collection[str], hex_: str,
                         dismantle: Sequence[str], minefields: Collection[str]) -> list[Problem]:
    """RB 16.55, 14.0: where a Minefield may be built and which two may be
    dismantled for it: ``network`` is the friendly Supply Network fixed at the
    start of the Buildup, ``engaged`` the hexes holding enemy units,
    ``minefields`` the builder's Minefields before (hidden, DESIGN 4)."""
    rule = "RB 16.55"
    if hex_ not in m.hexes:
        return [Problem(rule, f"no such hex: {hex_}")]
    probs: list[Problem] = []
    name = m.name(hex_)
    if hex_ not in network:
        probs.append(Problem(rule, f"{name} is outside the {side} Supply Network fixed at the start of Buildup"))
    if hex_ in engaged:
        probs.append(Problem(rule, f"{name} is engaged (a battle or enemy hex): Minefields are built in "
                                   f"unengaged hexes only (RB 14.0)"))
    dismantled = set(dismantle)
    if hex_ in minefields and hex_ not in dismantled:
        probs.append(Problem(rule, f"{name} already has a {side} Minefield"))
    if dismantle:
        if len(dismantled) != MINEFIELDS_DISMANTLED_FOR_FREE or len(dismantle) != len(dismantled):
            probs.append(Problem(rule, "a free Minefield needs exactly two different Minefields dismantled"))
        for h in dismantle:
            if h not in minefields:
                probs.append(Problem(rule, f"there is no {side} Minefield at {m.name(h) if h in m.hexes else h} "
                                           f"to dismantle"))
            elif h not in network:
                probs.append(Problem(rule, f"the Minefield at {m.name(h)} is outside the friendly Supply "
                                           f"Network and cannot be dismantled"))
    return probs


def minefield_entry(free: bool) -> Entry:
    """RB 16.55: the ledger entry of one Minefield built: 15 BP, or free by
    dismantling two (its hex is never in the ledger, RB 16.5 sidebar)."""
    return Entry("minefield", 0 if free else MINEFIELD_BP, free=free,
                 text="Minefield (dismantled two)" if free else "Minefield")


# ------------------------------------------------------------ RB 16.5 Extra Supply


def check_buy_supply(ledger: Ledger, action: BuySupply) -> list[Problem]:
    """RB 16.5: Extra Supply Cards at 10 BP each."""
    probs = []
    if action.cards < 1:
        probs.append(Problem("RB 16.5", "buy at least one Extra Supply Card"))
    elif action.cards * SUPPLY_CARD_BP > ledger.available:
        probs.append(Problem("RB 16.5", f"{action.cards} Extra Supply Card(s) cost {action.cards * SUPPLY_CARD_BP} "
                                        f"BP; {ledger.available} BP left"))
    return probs


def apply_buy_supply(ledger: Ledger, action: BuySupply) -> Ledger:
    return add_entry(ledger, Entry("supply", action.cards * SUPPLY_CARD_BP, count=action.cards,
                              text=f"{action.cards} Extra Supply Card(s)"))


# ------------------------------------------------------------ dispatch


def check_spend(ctx: BuildupContext, pos: Position, ledger: Ledger, action: SpendAction) -> list[Problem]:
    """RB 16.5: every problem with one spending action of ``ledger.side``."""
    if isinstance(action, Redeploy):
        return check_redeploy(ctx, pos, ledger, action)
    if isinstance(action, SeaRedeploy):
        return check_sea_redeploy(ctx, pos, ledger, action)
    if isinstance(action, ReturnForRefit):
        return check_refit(ctx, pos, ledger, action)
    if isinstance(action, Replace):
        return check_replace(ctx, pos, ledger, action)
    return check_buy_supply(ledger, action)


def apply_spend(ctx: BuildupContext, pos: Position, ledger: Ledger, action: SpendAction) -> Spent:
    """Apply one action that ``check_spend`` accepted; never fails then."""
    if isinstance(action, Redeploy):
        return Spent(*apply_redeploy(ctx, pos, ledger, action))
    if isinstance(action, SeaRedeploy):
        return Spent(*apply_sea_redeploy(ctx, pos, ledger, action))
    if isinstance(action, ReturnForRefit):
        return Spent(*apply_refit(ctx, pos, ledger, action))
    if isinstance(action, Replace):
        return Spent(*apply_replace(ctx, pos, ledger, action))
    return Spent(pos, apply_buy_supply(ledger, action))
