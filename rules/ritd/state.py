"""The game's State and what every rule reads from it (DESIGN 6).

The scenario and map data (RB 1.0, 18.0), the optional rules (RB 17.0
optional rules), the rules version (SPEC), ``State`` (one immutable Struct
folded over the log), the initial state before the set-up, the hidden
identities as a replay knows them (DESIGN 4; T-34), and the outcome (RB 17).
"""

from __future__ import annotations

import functools
from typing import Literal

import msgspec

from pbem.rulesapi import Outcome, Spec
from rules.ritd import buildup as bu
from rules.ritd import cards as cd
from rules.ritd import fortresses as fo
from rules.ritd import hidden, mines
from rules.ritd.cards import Hand
from rules.ritd.datafiles import DATA_FILES
from rules.ritd.hexmap import HexMap, load_map
from rules.ritd.hidden import Obligation
from rules.ritd.position import SIDES, Block, Position, Side
from rules.ritd.scenarios import Scenario, Scenarios, load_scenarios
from rules.ritd.turn import Turn
from rules.ritd.units import Roster
from rules.ritd.victory import VictoryResult


@functools.cache
def all_scenarios() -> Scenarios:
    return load_scenarios()


@functools.cache
def game_map() -> HexMap:
    return load_map()


#: Optional rule "Allied I-Tanks" (RB 17.0 optional rules), ``pbem new --option i-tanks``.
I_TANKS = "i-tanks"


#: The optional rules offered, by ``--option`` name, in words. A game without
#: options replays as before they were offered, so the version stays.
OPTIONS = {I_TANKS: "Allied I-Tanks (RB 17.0 optional rule): the four I-tanks of 1AT and 32AT are elite, "
                    "2 hits per 1-CV step, with Unit Speed 2"}


#: The version goes up whenever a log of the previous one would replay
#: differently (actions, commitments, steps); pbem refuses a game made with
#: another version (exit code 10). 2: the Month (cards, Buildup, victory). 3: the shared
#: deck, the active player's Retreats and Probes, Retreat Forced March step losses.
#: 4: no Forced March by a unit that Overran (RB 11.4, MV-08); no hex in the Withdrawal
#: network for a unit without a Supply Line (MV-06). 5: decisions/versions.md. 6: one form of a
#: loss placement where full hits and half-hits both land (RB 9.52, issue 27 point 6).
SPEC = Spec(id="ritd", version="6", title="Rommel in the Desert", roles=SIDES,
            scenarios=all_scenarios().ids, options=tuple(OPTIONS), data_package="rules.ritd.data",
            data_files=DATA_FILES)


#: deploy: RB 18.0 set-up; cards: initial hands and redraws (RB 18.0);
#: turn: Player-Turns; initiative: RB 3.3; buildup: RB 16.0; final: the
#: blocks turned face up at the end (RB 17.0); over: the game has ended.
Phase = Literal["deploy", "cards", "turn", "initiative", "buildup", "final", "over"]


class LastMove(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One block's route in the latest Player-Turn's movement, for the map's
    arrows. Public: it repeats the public Move (or Forced March) it comes from."""

    token: str
    side: str
    #: Hex ids from the start hex to where the block went.
    path: tuple[str, ...]
    #: The Player-Turn it was made in.
    turn: int
    #: The Move's Withdrawal kind (RB 5.3): "", "pass", "refuse" or "rout".
    withdrawal: str = ""
    #: Its last hex was a Forced March (RB 6.4).
    forced: bool = False


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
    turn: Turn | None = None
    #: Side of every Player-Turn played so far, in order (for RB 11.2 recovery).
    turns: tuple[str, ...] = ()
    #: token -> number of the Player-Turn in which it was Disrupted (RB 11.2).
    disrupted_in: dict[str, int] = {}
    #: The last Forced March dice and what they decided (for reports).
    last_rolls: tuple[int, ...] = ()
    #: The last fire in words: each unit's dice and what they scored (RB 9.2-9.4), for reports.
    last_fire: tuple[str, ...] = ()
    #: Supply Cards in hand (rules.ritd.cards): counts public, real counts per replay.
    hands: dict[str, Hand] = {}
    #: The shared supply deck's public bookkeeping (rules.ritd.cards.Deck, T-15).
    deck: cd.Deck = cd.Deck()
    #: Cards owed to each side, dealt at the end of Gazala's pre-game Buildup (RB 18.7).
    owed: dict[str, int] = {}
    #: The author of the action or dice being applied (whose entropy a new
    #: dice request must not wait for, DESIGN 5).
    actor: str = ""
    #: Step within the cards, initiative, buildup and final phases.
    stage: str = ""
    #: Consecutive Passes this Month (RB 3.1: two end it).
    passes: int = 0
    #: Fortress captures this Month (RB 13.4, Bonus Supply).
    captures: fo.CaptureLedger | None = None
    #: Buildup (RB 16): BPs Saved per side, the ledgers of the Buildup under
    #: way, Player 1, the BP dice, the Supply Networks fixed at its start,
    #: units Returned for Refit (off-board until the next Buildup).
    saved: dict[str, int] = {}
    ledgers: dict[str, bu.Ledger] = {}
    player1: str = ""
    bp_dice: tuple[int, ...] = ()
    networks: dict[str, tuple[str, ...]] = {}
    refitting: dict[str, tuple[Block, ...]] = {}
    #: Reinforcements (and Refitted units) that could not arrive at the engaged
    #: friendly Base: one Group off board next to it, entering by Group Move
    #: (RB 16.4 sidebar "Reinforcements to an Engaged Base"; rules.ritd.base_entry).
    waiting: dict[str, tuple[Block, ...]] = {}
    #: Initiative (RB 3.3): the commitment labels of the challenge and answer cards.
    challenge: str = ""
    answer: str = ""
    #: Sides whose Reinforcements arrived in this Buildup.
    reinforced: tuple[str, ...] = ()
    #: Sides that turned their blocks up at the end of the game (RB 17.0).
    turned_up: tuple[str, ...] = ()
    #: Early Arrival (RB 16.41): slots awaiting their dice, slots that rolled
    #: 1-2 awaiting placement, sides that rolled this Buildup; per side the
    #: units (count, and names where known) that arrived early for this
    #: Month's schedule and for next Month's.
    early_slots: tuple[str, ...] = ()
    early_arrived: tuple[str, ...] = ()
    early_done: tuple[str, ...] = ()
    early: dict[str, int] = {}
    early_units: dict[str, tuple[str, ...]] = {}
    early_next: dict[str, int] = {}
    early_units_next: dict[str, tuple[str, ...]] = {}
    #: RB 18.6, 18.8: the Month the Malta Group was called in (0: not yet).
    malta: int = 0
    #: Identity label -> the CV the unit has had since hits placed in the open
    #: (RB 8.5, 9.5: units in battles are revealed, their losses public, T-34);
    #: it replaces the CV committed in that identity version.
    public_cv: dict[str, int] = {}
    #: Minefields (RB 14, 16.55; rules.ritd.mines): per side, and every construction.
    minefields: dict[str, mines.SideMines] = {}
    mine_builds: tuple[mines.MineBuild, ...] = ()
    #: RB 18.7: Gazala's pre-game Buildup under way (before the first cards).
    pregame: bool = False
    #: Bonus Supply Cards due at this Buildup's Resupply (RB 13.4).
    bonus: dict[str, int] = {}
    #: The end of the game (RB 17).
    result: VictoryResult | None = None
    #: Supplied units each side has exited off the enemy map-end so far (RB 17.1
    #: and its sidebar "Exiting Units"; cumulative, BU-11).
    exited: dict[str, int] = {}
    #: Every route of the latest Player-Turn whose Movement has begun (both
    #: sides: Moves, Forced Marches, Withdrawals), kept until the next
    #: Player-Turn's Movement begins; for the map's arrows (decisions M-24).
    last_moves: tuple[LastMove, ...] = ()
    #: The optional rules both players agreed to (RB 17.0 optional rules), by
    #: ``OPTIONS`` name, sorted; fixed by the genesis.
    options: tuple[str, ...] = ()


def scenario_info(scenario_id: str) -> str:
    """One line for ``pbem new``: the scenario, its Months, who starts, and
    what this version does not adjudicate yet."""
    s = all_scenarios().get(scenario_id)
    gaps = []
    if s.special.pregame_buildup is not None:
        gaps.append(f"a pre-game Buildup of {s.special.pregame_buildup.bp} BP each, "
                    f"the {s.special.pregame_buildup.first} first (RB 18.7)")
    if s.axis.malta_group is not None:
        gaps.append(f"the Axis may call the Malta Group from Month {s.axis.malta_group.first_month} (RB 18.6)")
    first = "the Allies move first" if s.special.first_player == "allied" else "the Axis moves first"
    return (f"{s.name} ({s.rule}): {s.start_text} to {s.end_text}, {s.length} month"
            f"{'s' * (s.length != 1)}; {first}" + "".join(f"; {g}" for g in gaps))


def scenario_of(state: State) -> Scenario:
    return all_scenarios().get(state.scenario)


def initial_state(scenario: str, options: tuple[str, ...]) -> State:
    """The state before the set-up (RB 18.0). ValueError for an option not in
    ``OPTIONS`` (pbem refuses those first)."""
    unknown = [o for o in options if o not in OPTIONS]
    if unknown:
        raise ValueError(f"unknown optional rules {unknown} (offered: {', '.join(OPTIONS)})")
    s = all_scenarios().get(scenario)
    placed: dict[str, list[str]] = {}
    for mine in s.special.minefields:  # RB 18.4 special rule 2: public from the start
        placed.setdefault(mine.side, []).append(game_map().resolve(mine.hex))
    minefields = {side: mines.SideMines(count=len(hexes), known=tuple(sorted(hexes)), shown=tuple(sorted(hexes)))
                  for side, hexes in placed.items()}
    return State(scenario=scenario, month=s.start_month, phase="deploy", side="axis", minefields=minefields,
                 options=tuple(sorted(set(options))))


def roster_of(state: State) -> Roster:
    """The roster under this game's optional rules: with "i-tanks" the four
    I-tanks are ``OptionalITank`` (speed 2, two hits per step; RB 17.0)."""
    return option_roster(state.options)


@functools.cache
def option_roster(options: tuple[str, ...]) -> Roster:
    roster = all_scenarios().roster
    return roster.with_optional_i_tanks() if I_TANKS in options else roster


def supply_deck():
    return all_scenarios().supply_deck


def hand_of(state: State, side: Side) -> Hand:
    return state.hands.get(side, Hand())


def mines_of(state: State, side: Side) -> mines.SideMines:
    """``side``'s Minefields (RB 14.0; the model is rules.ritd.mines)."""
    return state.minefields.get(side, mines.SideMines())


def current_turn(state: State) -> Turn:
    if state.turn is None:
        raise ValueError("no Player-Turn in progress")
    return state.turn


def outcome(state: State) -> Outcome | None:
    """RB 17: the level of victory, once the game has ended."""
    if state.phase != "over" or state.result is None:
        return None
    r = state.result
    head = (f"{r.winner.capitalize()} {(r.level or '').capitalize()} Victory ({r.vp} VP, {r.rule})" if r.winner
            else "a draw: no level of victory (RB 17.0)")
    return Outcome(winner=r.winner, summary="; ".join((head, *r.explanation)))


def decode_identity(state: State, label: str, value: bytes) -> tuple[str, int]:
    """A committed identity as it stands now: its unit, and its CV unless hits
    placed in the open have changed it since (T-34). ValueError if ``value`` is
    not an identity."""
    unit, cv = hidden.decode_identity(value)
    return unit, state.public_cv.get(label, cv)


def identity_of(ctx, token: str, version: int = 0) -> tuple[str, int] | None:
    value = ctx.value(hidden.identity_label(token, version))
    if value is None:
        return None
    return hidden.decode_identity(value)


def known_units(position: Position, side: Side) -> set[str]:
    return {b.unit for b in position.blocks_of(side) if b.unit}


def quoted(text: str, limit: int = 40) -> str:
    """Input text in a problem: quoted, escaped, cut (the engine escapes again)."""
    return repr(text[:limit]) + ("..." if len(text) > limit else "")


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def current_identity(state: State, token: str, ctx) -> tuple[str, int] | None:
    """(unit, CV) of ``token``'s current identity as this replay knows it, else
    None: the committed value of its current version where this replay can
    read it (with any CV changed in the open since, T-34), else the block's
    face where it shows a unit (the replay's own units, and units whose step
    losses the public could deduce, T-12, T-39). A face a secret new version
    outdates is never kept (Pursuit losses forget it, T-10), so the face and
    the commitment never disagree."""
    label = hidden.identity_label(token, state.versions.get(token, 0))
    value = ctx.value(label)
    if value is not None:
        try:
            return decode_identity(state, label, value)
        except ValueError:
            return None
    b = state.position.block(token)
    return (b.unit, b.cv) if b.unit else None
