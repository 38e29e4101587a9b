"""Rommel in the Desert as a pbem rules module (DESIGN 6).

State is one immutable Struct folded over the log. Each replaying side has
its own copy: its own blocks carry unit and CV, the opponent's carry them
only once opened (DESIGN 4). Checks that need a hidden value the replaying
side lacks become ``Obligation``s, decided in ``on_open`` or by the audit.

Implemented: the scenario set-up (RB 18.0: the Axis deploys first, then
the Allies, hidden identities committed block by block; Gazala's pre-game
Buildup, RB 18.7), the initial hands and the one redraw; the Player-Turn
steps of rules.ritd_v3.turn: supply checks, Supply Cards played face down
(rules.ritd_v3.cards), Moves, Forced Marches with engine dice, Refusing Battle,
revealing battle units, the Combat phase, Blitz phases, Routs (RB 11.3,
T-12), Overruns (RB 11.4) and Final Supply Check Routs (RB 12.7, CB-11;
T-13); Retreats of the active player, Full (Pursuit Fire) and Partial (Probe
Combat with reversed roles), Pass-Turn Withdrawals out of battles included
(RB 10.0, 10.3-10.5; T-35..T-38); the Month (two Passes end it, RB 3.1), the Initiative (RB 3.3), the
Buildup (RB 16, rules.ritd_v3.buildup), Minefields (RB 14, 16.55, as Merkle
sets: rules.ritd_v3.mines, T-30..T-33) and victory (RB 17, rules.ritd_v3.victory).
The optional rule "Allied I-Tanks" (RB 17.0) with ``--option i-tanks``
(``OptionalITank``; decisions/combat.md CB-15..CB-18).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Literal

import msgspec

from pbem.deck import DECK, Card, Carry, DeckKeys, DeckStep, DeckTask
from pbem.rulesapi import DICE, ActingAs, Decision, Order, Outcome, Problem, Spec
from rules.ritd_v3 import buildup as bu
from rules.ritd_v3 import cards as cd
from rules.ritd_v3 import combat as cb
from rules.ritd_v3 import hidden, mines, routs
from rules.ritd_v3 import movement as mv
from rules.ritd_v3 import supply as sp
from rules.ritd_v3.cards import OPTION_COST, Hand
from rules.ritd_v3.datafiles import DATA_FILES
from rules.ritd_v3.hexmap import HexMap, load_map
from rules.ritd_v3.hidden import Obligation
from rules.ritd_v3.names import UnknownLocation
from rules.ritd_v3.position import SIDES, Block, Position, Side, enemy_of
from rules.ritd_v3.scenarios import Scenario, Scenarios, load_scenarios
from rules.ritd_v3.setup import (
    check_deployment_complete,
    check_hidden_placement,
    check_public_placement,
)
from rules.ritd_v3.turn import PendingRout, Turn, option_label
from rules.ritd_v3.units import OptionalITank, Roster, UnknownUnit
from rules.ritd_v3.victory import VictoryResult, strategic_victory
from rules.ritd_v3.victory import victory as judge_victory


@functools.cache
def _scenarios() -> Scenarios:
    return load_scenarios()


@functools.cache
def _map() -> HexMap:
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
SPEC = Spec(id="ritd", version="3", title="Rommel in the Desert", roles=SIDES,
            scenarios=_scenarios().ids, options=tuple(OPTIONS), data_package="rules.ritd_v3.data",
            data_files=DATA_FILES)


# -- actions ---------------------------------------------------------------------

class _A(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type"):
    pass


class Deploy(_A, tag="deploy"):
    """Place one block (RB 18.0); its identity is committed as ``<token>.id0``."""

    token: str
    hex: str


class EndDeployment(_A, tag="end-deployment"):
    """End of a side's set-up (RB 18.0); the initial hands are then dealt from
    the shared deck (rules.ritd_v3.cards, T-15). ``cards`` must stay empty (it
    held the seeds of the approximate draw of rules version 2)."""

    cards: tuple[str, ...] = ()


class KeepHand(_A, tag="keep-hand"):
    """RB 18.0: keep the initial hand."""


class Redraw(_A, tag="redraw"):
    """RB 18.0: hand back the whole initial hand and draw a new one (once);
    ``cards`` must stay empty (rules version 2's seeds)."""

    cards: tuple[str, ...] = ()


class Challenge(_A, tag="challenge"):
    """RB 3.3: the Allied Initiative challenge: one card face down, its
    real/dummy committed as ``label`` ("" : no challenge); ``card``: which
    card of the hand ("round:position" in the shared deck)."""

    label: str = ""
    card: str = ""


class Answer(_A, tag="answer"):
    """RB 3.3: the Axis answer: one card face down, committed and opened in
    the same event (the Allied card is already fixed); "" declines. ``card``:
    which card of the hand; it is shown in the same event."""

    label: str = ""
    card: str = ""


class OpenChallenge(_A, tag="open-challenge"):
    """RB 3.3: the Allied challenge card is turned face up (opened in this event)."""


class EarlyArrival(_A, tag="early-arrival"):
    """RB 16.41: one hidden slot per unit due next month, in the owner's
    order (each slot commits a unit name); one die per slot follows."""

    slots: tuple[str, ...]


class Reinforce(_A, tag="reinforce"):
    """RB 16.4, 16.41: the Reinforcements due this month, then the units whose
    slots rolled 1-2 (``early``, in the same order as the last tokens), enter
    Base as new blocks, each identity committed as ``<token>.id0``."""

    tokens: tuple[str, ...]
    early: tuple[str, ...] = ()


class CallMalta(_A, tag="call-malta"):
    """RB 18.6, 18.8: the Axis calls the Malta Group ("M" units) into Base,
    once, each identity committed as ``<token>.id0``."""

    tokens: tuple[str, ...]


class Rebuild(_A, tag="rebuild"):
    """RB 16.54: ``steps`` Replacement steps for ``token`` in Base costing
    ``bp`` (divulged, RB 16.5 sidebar); the new CV is committed as the
    identity version ``<token>.id<v+1>``."""

    token: str
    steps: int
    bp: int


class EndBuildup(_A, tag="end-buildup"):
    """RB 16.5, 16.6: end of spending (unspent BPs Saved up to 20), ``discard``
    dummies handed back (``cards``: which, shown in the same event), and the
    Resupply cards dealt from the shared deck (T-18)."""

    discard: int = 0
    cards: tuple[str, ...] = ()


class BuildMinefield(_A, tag="build-minefield"):
    """RB 16.55: a hidden Minefield, committed as the new Merkle set ``label``
    (rules.ritd_v3.mines); ``free``: two Minefields dismantled instead of 15 BP;
    ``dismantled_shown``: the revealed ones among them (public, T-31)."""

    label: str
    free: bool = False
    dismantled_shown: tuple[str, ...] = ()


class OpenMinefields(_A, tag="open-minefields"):
    """RB 14.2: the hexes entered by enemy units, opened in this event from the
    owner's Minefield set at the end of the Movement phase (T-30)."""

    hexes: tuple[str, ...]


class RevealAll(_A, tag="reveal-all"):
    """RB 17.0: at the end of the game every block is turned face up (all
    current identities opened in this event) to count the units in play."""


class SupplyCheck(_A, tag="supply-check"):
    """T1 Initial or T12 Final Supply Check with the owner's choices (RB 12.7, 13.3, 15.1)."""

    fortress: dict[str, tuple[str, ...]] = {}
    oasis: dict[str, str] = {}


class PlayCards(_A, tag="play-cards"):
    """T3: ``count`` cards face down (0: a Pass); the option is committed as
    ``label``; ``cards``: which cards of the hand (shown at Supply Revealed)."""

    count: int
    label: str = ""
    cards: tuple[str, ...] = ()


class ForcedMarches(_A, tag="forced-marches"):
    """RB 6.4: every Forced March attempt, announced after all Moves."""

    marches: tuple[mv.ForcedMarch, ...]


class EndMovement(_A, tag="end-movement"):
    pass


class AcceptBattle(_A, tag="accept-battle"):
    """RB 8.4: the passive player fights the battle in ``hex``."""

    hex: str


class RefuseBattle(_A, tag="refuse-battle"):
    """RB 10.2: the passive player Refuses Battle in ``hex``, announcing the
    slowest speed of the Undisrupted refusing units (RB 10.5)."""

    hex: str
    slowest: int


class PursuitLosses(_A, tag="pursuit-losses"):
    """RB 10.5, 9.5: Pursuit hits placed on the refusing units, in secret:
    ``eliminated`` leave the map (public); every survivor in ``recommit``
    gets a new identity version ``<token>.id<v+1>`` (unit and new CV)."""

    hex: str
    eliminated: tuple[str, ...] = ()
    recommit: tuple[str, ...] = ()


class Rout(_A, tag="rout"):
    """RB 11.3 (T-12): the owner of the Routed units in ``hex`` applies Rout
    Attrition in secret (``eliminated`` leave the map; every survivor in
    ``recommit`` gets a new identity version ``<token>.id<v+1>``, one step
    less) and announces the slowest speed of the survivors (0 if none)."""

    hex: str
    slowest: int = 0
    eliminated: tuple[str, ...] = ()
    recommit: tuple[str, ...] = ()


class MarchLosses(_A, tag="march-losses"):
    """RB 6.4 sidebar "Retreat Forced Marches" (T-39): each Retreating unit
    whose Forced March failed loses one step, applied in secret by its owner:
    ``eliminated`` (at their last step, RB 2.3) leave the map; every survivor
    in ``recommit`` gets a new identity version ``<token>.id<v+1>``, one step less."""

    eliminated: tuple[str, ...] = ()
    recommit: tuple[str, ...] = ()


class Probe(_A, tag="probe"):
    """RB 10.41: the passive player provokes a round of Probe Combat against
    the Partial Retreat from ``hex`` (``go``), or declines; a Probe opens, in
    this event, the identities of his units there not yet revealed (RB 8.5)."""

    hex: str
    go: bool


class RetreatSpeed(_A, tag="retreat-speed"):
    """RB 10.5: the active player announces the speed of the slowest unit
    Retreating from ``hex`` (RB 10.3 Full Retreat procedure, T-35)."""

    hex: str
    slowest: int


class Blitz(_A, tag="blitz"):
    """RB 3.45, 4.4: after the first Combat phase of a turn with three or more
    cards, the Blitz Movement and Combat phases (``go``) or not."""

    go: bool


class RevealUnits(_A, tag="reveal-units"):
    """RB 7.3, 8.5: my units in battles are revealed (their identities opened in this event)."""


class RevealOption(_A, tag="reveal-option"):
    """RB 3.48 Supply Revealed: the turn option is opened in this event."""


Action = (Deploy | EndDeployment | SupplyCheck | PlayCards | mv.Move | ForcedMarches | EndMovement
          | AcceptBattle | RefuseBattle | routs.PursuitFire | PursuitLosses | Rout | RevealUnits | RevealOption
          | cb.BattleSelection | cb.FirePlan | cb.LossAllocation | KeepHand | Redraw | Challenge | Answer
          | OpenChallenge | EarlyArrival | Reinforce | CallMalta | Rebuild | bu.Redeploy | bu.SeaRedeploy | bu.ReturnForRefit | bu.BuySupply
          | EndBuildup | RevealAll | Blitz | BuildMinefield | OpenMinefields | Probe | RetreatSpeed | MarchLosses
          | DeckStep | DeckKeys)


# -- state -------------------------------------------------------------------------

#: deploy: RB 18.0 set-up; cards: initial hands and redraws (RB 18.0);
#: turn: Player-Turns; initiative: RB 3.3; buildup: RB 16.0; final: the
#: blocks turned face up at the end (RB 17.0); over: the game has ended.
Phase = Literal["deploy", "cards", "turn", "initiative", "buildup", "final", "over"]
STEP_OWNER = {"initial-supply": "active", "option": "active", "blitz": "active", "movement": "active", "forced-march": "passive",
              "refuse": "passive", "refuse-pursuit": "active", "refuse-dice": "passive",
              "refuse-losses": "passive", "refuse-withdraw": "passive", "reveal-passive": "passive", "reveal-active": "active",
              "battles": "active", "defensive-fire": "passive", "defensive-dice": "active",
              "offensive-losses": "active", "offensive-fire": "active", "offensive-dice": "passive",
              "defensive-losses": "passive", "final-supply": "active", "supply-revealed": "active",
              "mines-passive": "passive", "mines-active": "active",
              "retreat-probe": "passive", "probe-reveal": "active", "retreat-slowest": "active",
              "retreat-pursuit": "passive", "retreat-dice": "active", "retreat-losses": "active",
              "march-losses": "active",
              # Rout steps belong to the Routing side or its enemy (T-12), see pending()
              "rout-slowest": "", "rout-pursuit": "", "rout-dice": "", "rout-losses": "", "rout-withdraw": ""}


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
    #: Supply Cards in hand (rules.ritd_v3.cards): counts public, real counts per replay.
    hands: dict[str, Hand] = {}
    #: The shared supply deck's public bookkeeping (rules.ritd_v3.cards.Deck, T-15).
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
    captures: cb.CaptureLedger | None = None
    #: Buildup (RB 16): BPs Saved per side, the ledgers of the Buildup under
    #: way, Player 1, the BP dice, the Supply Networks fixed at its start,
    #: units Returned for Refit (off-board until the next Buildup).
    saved: dict[str, int] = {}
    ledgers: dict[str, bu.Ledger] = {}
    player1: str = ""
    bp_dice: tuple[int, ...] = ()
    networks: dict[str, tuple[str, ...]] = {}
    refitting: dict[str, tuple[Block, ...]] = {}
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
    #: Minefields (RB 14, 16.55; rules.ritd_v3.mines): per side, and every construction.
    minefields: dict[str, mines.SideMines] = {}
    mine_builds: tuple[mines.MineBuild, ...] = ()
    #: RB 18.7: Gazala's pre-game Buildup under way (before the first cards).
    pregame: bool = False
    #: Bonus Supply Cards due at this Buildup's Resupply (RB 13.4).
    bonus: dict[str, int] = {}
    #: The end of the game (RB 17).
    result: VictoryResult | None = None
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
    s = _scenarios().get(scenario_id)
    gaps = []
    if s.special.pregame_buildup is not None:
        gaps.append(f"a pre-game Buildup of {s.special.pregame_buildup.bp} BP each, "
                    f"the {s.special.pregame_buildup.first} first (RB 18.7)")
    if s.axis.malta_group is not None:
        gaps.append(f"the Axis may call the Malta Group from Month {s.axis.malta_group.first_month} (RB 18.6)")
    first = "the Allies move first" if s.special.first_player == "allied" else "the Axis moves first"
    return (f"{s.name} ({s.rule}): {s.start_text} to {s.end_text}, {s.length} month"
            f"{'s' * (s.length != 1)}; {first}" + "".join(f"; {g}" for g in gaps))


def _scenario(state: State) -> Scenario:
    return _scenarios().get(state.scenario)


def initial_state(scenario: str, options: tuple[str, ...]) -> State:
    """The state before the set-up (RB 18.0). ValueError for an option not in
    ``OPTIONS`` (pbem refuses those first)."""
    unknown = [o for o in options if o not in OPTIONS]
    if unknown:
        raise ValueError(f"unknown optional rules {unknown} (offered: {', '.join(OPTIONS)})")
    s = _scenarios().get(scenario)
    placed: dict[str, list[str]] = {}
    for mine in s.special.minefields:  # RB 18.4 special rule 2: public from the start
        placed.setdefault(mine.side, []).append(_map().resolve(mine.hex))
    minefields = {side: mines.SideMines(count=len(hexes), known=tuple(sorted(hexes)), shown=tuple(sorted(hexes)))
                  for side, hexes in placed.items()}
    return State(scenario=scenario, month=s.start_month, phase="deploy", side="axis", minefields=minefields,
                 options=tuple(sorted(set(options))))


def _roster(state: State) -> Roster:
    """The roster under this game's optional rules: with "i-tanks" the four
    I-tanks are ``OptionalITank`` (speed 2, two hits per step; RB 17.0)."""
    return _option_roster(state.options)


@functools.cache
def _option_roster(options: tuple[str, ...]) -> Roster:
    roster = _scenarios().roster
    return roster.with_optional_i_tanks() if I_TANKS in options else roster


_PROMPTS = {
    "initial-supply": "Initial Supply Check (RB 12.7): 'supply check', with Fortress or Oasis choices if asked",
    "option": "play supply cards face down (RB 4.0): 'pass', 'basic', 'offensive' or 'assault'",
    "movement": "Moves (RB 5.0), then 'forced march ...' (RB 6.4), then 'end movement'",
    "refuse": "accept or Refuse Battle for each Attacked Group (RB 8.4)",
    "refuse-pursuit": "Pursuit Fire on the Group Refusing Battle (RB 10.2, 10.5): 'pursue <hex> with <units>' "
                      "or 'pursue <hex> with none'",
    "refuse-losses": "place the Pursuit hits (RB 10.5, 9.5): 'pursuit losses <unit> <hits>, ...' or "
                     "'pursuit losses auto'",
    "refuse-withdraw": "the Withdrawal Group Move of the Group Refusing Battle (RB 10.2): "
                       "'refuse-battle <hex> -> <destination>'",
    "retreat-probe": "Probe Combat against the Partial Retreat (RB 10.4, 10.41): 'probe <hex>' or "
                     "'no probe <hex>'",
    "probe-reveal": "reveal your Rearguard for the Probe Combat (RB 10.41, 8.5): 'reveal units'",
    "retreat-slowest": "the slowest speed of your Retreating units (RB 10.3, 10.5): 'retreat <hex> slowest <speed>'",
    "retreat-pursuit": "Pursuit Fire on the Retreating units (RB 10.3, 10.5): 'pursue <hex> with <units>' "
                       "or 'pursue <hex> with none'",
    "retreat-losses": "place the Pursuit hits on your Retreating units (RB 10.5, 9.5): 'pursuit losses <unit> "
                      "<hits>, ...' or 'pursuit losses auto'",
    "march-losses": "the step lost by each Retreating unit whose Forced March failed (RB 6.4 sidebar "
                    "\"Retreat Forced Marches\", 2.3): 'march losses auto'",
    "mines-passive": "open your Minefield hexes that enemy units entered (RB 14.2): 'open minefields'",
    "mines-active": "open your Minefield hexes that enemy units entered (RB 14.2): 'open minefields'",
    "reveal-passive": "reveal your units in battles (RB 7.3): 'reveal units'",
    "reveal-active": "reveal your units in battles (RB 7.3): 'reveal units'",
    "battles": "choose the Active Battles (RB 8.6): 'battles <hex>, ...' or 'battles none', "
               "with 'assault <hex>, ...' for Assault Battles (RB 4.3)",
    "defensive-fire": "Defensive Fire (RB 9.1-9.3): 'fire <hex>: <unit> at <class>, ...'",
    "offensive-fire": "Offensive Fire (RB 9.1-9.3): 'fire <hex>: <unit> at <class>, ...'",
    "offensive-losses": "place the Defensive Fire hits (RB 9.5): 'losses <hex>: <unit> <hits>, ...' or "
                        "'losses <hex> auto'",
    "defensive-losses": "place the Offensive Fire hits (RB 9.5): 'losses <hex>: <unit> <hits>, ...' or "
                        "'losses <hex> auto'",
    "rout-slowest": "Rout (RB 11.3): Rout Attrition and the slowest speed of the survivors: "
                    "'rout <hex> slowest <speed>'",
    "rout-pursuit": "Pursuit Fire on the Routed units (RB 11.3, 10.5): 'pursue <hex> with <units>' or "
                    "'pursue <hex> with none'",
    "rout-losses": "place the Pursuit hits on the Routed units (RB 10.5, 9.5): 'pursuit losses <unit> <hits>, "
                   "...' or 'pursuit losses auto'",
    "rout-withdraw": "the Rout Withdrawal Group Move (RB 11.3): 'rout <hex> -> <destination>'",
    "final-supply": "Final Supply Check (RB 12.7): 'supply check'",
    "blitz": "Blitz (RB 3.45, 4.4): 'blitz' for the Blitz Movement and Combat phases, or 'no blitz'",
    "supply-revealed": "Supply Revealed (RB 3.48): 'reveal option'",
}


def pending(state: State) -> Decision | None:
    if state.phase == "over":
        return None
    if state.deck.jobs:
        task = deck_task(state)
        return Decision(role=task.role, kind=DECK, prompt=f"the shared supply deck: {state.deck.jobs[0].kind} "
                                                             "(RB 16.6; sent automatically)")
    if state.phase == "deploy":
        return Decision(role=state.side, kind="deploy",
                        prompt=f"deploy the {state.side} starting forces (RB 18.0)")
    if state.phase in ("cards", "initiative", "buildup", "final"):
        if state.stage == "bp-dice":
            n = bu.bp_dice_count(_scenario(state))
            return Decision(role=state.side, kind=DICE, dice=(6,) * (2 * n),
                            prompt=f"Buildup Points dice, {n} each (RB 16.3)")
        if state.stage == "early-dice":
            return Decision(role=enemy_of(state.side), kind=DICE, dice=(6,) * len(state.early_slots),
                            prompt=f"Early Arrival dice for the {state.side} player's hidden slots (RB 16.41)")
        return Decision(role=state.side, kind=state.stage, prompt=_STAGE_PROMPTS[state.stage])
    turn = _current(state)
    if turn.step == "forced-march":
        # Rolled by the opponent of whoever acted last: the passive player after
        # "end movement", the active one after a Retreat the passive player ended (T-35).
        role = turn.active if state.actor == turn.passive else turn.passive
        return Decision(role=role, kind=DICE, dice=(6,) * len(turn.movement.marches),
                        prompt="Forced March dice (RB 6.4)")
    if turn.step == "refuse-dice":
        return Decision(role=turn.passive, kind=DICE, dice=routs.pursuit_dice_needed(turn.pursuit),
                        prompt="Pursuit Fire dice (RB 10.5)")
    if turn.step == "retreat-dice":
        return Decision(role=turn.active, kind=DICE, dice=routs.pursuit_dice_needed(turn.pursuit),
                        prompt=f"Pursuit Fire dice on the Retreat from {_map().name(turn.retreating)} (RB 10.5)")
    if turn.step.startswith("rout-"):
        r = turn.rout_queue[0]
        where = _map().name(r.hex)
        if turn.step == "rout-dice":
            return Decision(role=r.side, kind=DICE, dice=routs.pursuit_dice_needed(turn.rout_pursuit),
                            prompt=f"Pursuit Fire dice on the Rout in {where} (RB 10.5)")
        role = enemy_of(r.side) if turn.step == "rout-pursuit" else r.side
        return Decision(role=role, kind=turn.step, prompt=f"{_PROMPTS[turn.step]}: {where}")
    role = turn.active if STEP_OWNER[turn.step] == "active" else turn.passive
    if turn.probing and turn.step in _COMBAT_STEPS:
        role = enemy_of(role)  # RB 10.41: roles reversed in Probe Combat
    if turn.step in ("defensive-dice", "offensive-dice"):
        return Decision(role=role, kind=DICE, dice=cb.dice_needed(_combat_position(state, turn),
                                                                  _round(state, turn), turn.fire),
                        prompt=f"{turn.step.split('-')[0].capitalize()} Fire dice in "
                               f"{_map().name(turn.battles[0])} (RB 9.4)")
    prompt = _PROMPTS[turn.step]
    if turn.battles and turn.step != "battles":
        prompt += f": {_map().name(turn.battles[0])}"
    if turn.step == "refuse":
        prompt += ": " + ", ".join(_map().name(h) for h in turn.refusals)
    elif turn.refusing:
        prompt += f": {_map().name(turn.refusing)}"
    elif turn.retreating and not turn.battles:
        prompt += f": {_map().name(turn.retreating)}"
    if turn.probing:
        prompt = f"Probe Combat (RB 10.41): {prompt}"
    return Decision(role=role, kind=turn.step, prompt=prompt)


#: The Combat Round's steps, reused for Probe Combat with the roles reversed (RB 10.41).
_COMBAT_STEPS = ("defensive-fire", "defensive-dice", "offensive-losses", "offensive-fire", "offensive-dice",
                 "defensive-losses")


_STAGE_PROMPTS = {
    "redraw": "keep your initial hand or redraw it once (RB 18.0): 'keep hand' or 'redraw'",
    "challenge": "Initiative (RB 3.3): 'challenge' (one card face down, 'challenge with dummy' to bluff) "
                 "or 'no challenge'",
    "answer": "answer the Initiative challenge (RB 3.3): 'answer' (one card), 'answer with dummy' or 'decline'",
    "open-challenge": "turn the challenge card face up (RB 3.3): 'open challenge'",
    "buildup": "Buildup (RB 16.4-16.6): 'early arrival' and 'reinforce' first if units are due, then 'redeploy <unit> <hex> -> "
               "... -> <hex>', 'sea <unit> -> <port>', 'refit <unit> <hex> -> ... -> <base>', "
               "'rebuild <unit> [steps]', 'buy supply [n]', 'call malta group' (RB 18.6), and "
               "'end buildup [discard <n> dummies]'",
    "reveal-all": "the end of the game (RB 17.0): 'reveal all' turns every block face up",
}


def _deck():
    return _scenarios().supply_deck


def _hand(state: State, side: Side) -> Hand:
    return state.hands.get(side, Hand())


def _sources(d: cd.Deck) -> tuple[Card | Carry, ...]:
    out: list[Card | Carry] = []
    for s in d.sources.get(d.round, ()):
        kind, _, rest = s.partition(":")
        if kind == "card":
            out.append(Card(label=rest))
        else:
            rnd, pos = cd.unref(rest)
            out.append(Carry(round=rnd, pos=pos))
    return tuple(out)


def deck_task(state: State) -> DeckTask | None:
    """pbem hook: the deck work the rules wait for now (pbem.deck.DeckTask)."""
    d = state.deck
    if not d.jobs:
        return None
    job = d.jobs[0]
    if job.kind == "shuffle":
        number = d.steps + 1
        author = job.side if number % 2 else enemy_of(job.side)
        deal: tuple[int, ...] = ()
        if number >= 3:
            deal = tuple(p for side, ps in job.deal if side == enemy_of(author) for p in ps)
        return DeckTask(role=author, kind="step", round=d.round, first=job.side, sources=_sources(d), deal=deal)
    if job.kind == "deal":
        return DeckTask(role=enemy_of(job.side), kind="keys", round=d.round, deal=job.deal[0][1])
    return DeckTask(role=job.side, kind="keys", open=tuple(cd.unref(r) for r in job.refs))


def _give(state: State, side: Side, positions: tuple[int, ...], ctx) -> State:
    """RB 16.6: ``positions`` of the current round dealt to ``side``; the replays
    that can see them (the holder's, the audit's) learn how many are real."""
    d = state.deck
    refs = tuple(cd.ref(d.round, p) for p in positions)
    deck = msgspec.structs.replace(d, dealt=d.dealt + positions, held={**d.held, side: d.held.get(side, ()) + refs})
    hand = _hand(state, side)
    real = cd.real_among(ctx.card, refs)
    hand = Hand(count=hand.count + len(refs),
                real=None if hand.real is None or real is None else hand.real + real)
    return msgspec.structs.replace(state, deck=deck, hands={**state.hands, side: hand})


def on_deck(state: State, ctx) -> tuple[State, list[Problem]]:
    """pbem hook: the deck work of ``deck_task`` arrived, checked by the engine."""
    d = state.deck
    job = d.jobs[0]
    rest = d.jobs[1:]
    if job.kind == "shuffle":
        number = d.steps + 1
        state = msgspec.structs.replace(state, deck=msgspec.structs.replace(
            d, steps=number, jobs=rest if number == 4 else d.jobs))
        if number == 4:  # both deals (keys of steps 3 and 4) open once the round is complete
            for drawer in (enemy_of(job.side), job.side):
                state = _give(state, drawer, tuple(p for side, ps in job.deal if side == drawer for p in ps), ctx)
        return state, []
    if job.kind == "deal":
        state = msgspec.structs.replace(state, deck=msgspec.structs.replace(d, jobs=rest))
        return _give(state, job.side, job.deal[0][1], ctx), []
    seen = cd.faces(ctx.card, job.refs)
    problems = []
    who = f"event {ctx.seq} by {job.side}"
    if None in seen:
        problems.append(Problem("RB 3.48", f"{who}: cards shown that do not open to cards of the deck"))
    real = sum(cd.label_is_real(s) for s in seen if s)
    if job.why == "discard" and real:
        problems.append(Problem("RB 16.6", f"{who}: {real} real card(s) handed back as dummies"))
    elif job.why in ("play", "initiative"):
        committed = cd.parse_real(ctx.value(job.label), len(job.refs)) if job.label else None
        if committed is not None and committed != real:
            problems.append(Problem("RB 3.48" if job.why == "play" else "RB 3.3",
                                    f"{who}: the cards played hold {real} real card(s), but {committed} "
                                    "were committed"))
    # Cards played face down go back now; dummies handed back went back when discarded.
    was_played = d.played.get(job.side, ())
    played = tuple(r for r in was_played if r not in job.refs)
    returned = d.returned + tuple(r for r in job.refs if r in was_played and r not in d.returned)
    return msgspec.structs.replace(state, deck=msgspec.structs.replace(
        d, jobs=rest, played={**d.played, job.side: played}, returned=returned)), problems


def _card_checks(state: State, side: Side, refs: tuple[str, ...], count: int, real: int | None, rule: str,
                 ctx) -> list[Problem]:
    """The cards named are ``count`` of the hand; where this replay sees them
    (the owner's, the audit's), ``real`` of them are real (None: not committed)."""
    problems = cd.ref_problems(state.deck, side, refs, count, rule)
    if problems or real is None or real < 0:
        return problems
    seen = cd.real_among(ctx.card, refs)
    if seen is not None and seen != real:
        return [Problem(rule, f"the cards named hold {seen} real card(s), not the {real} committed")]
    return []


def _pick(state: State, role: Side, real: int, dummies: int, ctx, rule: str) -> tuple[str, ...]:
    refs = cd.pick(ctx.card, state.deck.held.get(role, ()), real, dummies)
    if refs is None:
        problems = cd.play_problems(_hand(state, role), real + dummies, real, rule)
        raise ValueError("; ".join(map(str, problems)) or f"{rule}: the hand does not hold {real} real "
                         f"card(s) and {dummies} dumm{'y' if dummies == 1 else 'ies'}")
    return refs


def _current(state: State) -> Turn:
    if state.turn is None:
        raise ValueError("no Player-Turn in progress")
    return state.turn


def outcome(state: State) -> Outcome | None:
    """RB 17: the level of victory, once the game has ended."""
    if state.phase != "over" or state.result is None:
        return None
    r = state.result
    head = (f"{r.winner.capitalize()} {r.level.capitalize()} Victory ({r.vp} VP, {r.rule})" if r.winner
            else "a draw: no level of victory (RB 17.0)")
    return Outcome(winner=r.winner, summary="; ".join((head, *r.explanation)))


# -- Minefields (RB 14, 16.55; rules.ritd_v3.mines, T-30..T-33) ---------------------------------

def _mines(state: State, side: Side) -> mines.SideMines:
    return state.minefields.get(side, mines.SideMines())


def _with_mines(state: State, side: Side, **changes) -> State:
    now = msgspec.structs.replace(_mines(state, side), **changes)
    return msgspec.structs.replace(state, minefields={**state.minefields, side: now})


def _mine_set(state: State, side: Side, number: int, ctx) -> dict[str, int] | None:
    """hex -> building set of ``side``'s Minefields in its set ``number`` (0: the
    scenario ones, public), if this replay knows the whole set."""
    if number == 0:
        return {h: mines.SCENARIO_BUILD for h in _scenario_mines(state, side)}
    label = mines.set_label(side, number)
    return mines.read_set(_map(), lambda h: ctx.leaf(label, h))


def _scenario_mines(state: State, side: Side) -> tuple[str, ...]:
    return tuple(_map().resolve(x.hex) for x in _scenario(state).special.minefields if x.side == side)


def _next_build(state: State, side: Side, action: BuildMinefield) -> mines.MineBuild:
    """The public record of the construction ``action`` (RB 16.55): the Network
    fixed at the start of this Buildup and the hexes enemy units hold now."""
    engaged = tuple(sorted({b.hex for b in state.position.blocks if b.side != side}))
    return mines.MineBuild(side=side, number=_mines(state, side).number + 1, month=state.month, free=action.free,
                           network=state.networks.get(side, ()), engaged=engaged,
                           shown=_mines(state, side).shown, dismantled_shown=tuple(action.dismantled_shown))


def _minefield_problems(state: State, side: Side, ledger: bu.Ledger, action: BuildMinefield, ctx) -> list[Problem]:
    """RB 16.55: what both players can check at once (the cost, the count, the
    label), and, where the set is known (its owner, the audit), the whole set."""
    own = _mines(state, side)
    build = _next_build(state, side, action)
    probs = []
    if action.label != mines.set_label(side, build.number) or not ctx.committed(action.label):
        probs.append(Problem("RB 16.55", f"the Minefields must be committed as the set "
                                         f"'{mines.set_label(side, build.number)}'"))
    if action.free:
        if own.count < bu.MINEFIELDS_DISMANTLED_FOR_FREE:
            probs.append(Problem("RB 16.55", f"a free Minefield dismantles two; the {side} player has {own.count}"))
    elif bu.MINEFIELD_BP > ledger.available:
        probs.append(Problem("RB 16.5", f"a Minefield costs {bu.MINEFIELD_BP} BP; {ledger.available} BP left"))
    shown = set(action.dismantled_shown)
    if not shown <= set(own.shown) or len(shown) != len(action.dismantled_shown) or \
            len(shown) > (bu.MINEFIELDS_DISMANTLED_FOR_FREE if action.free else 0):
        probs.append(Problem("RB 16.55", "only revealed Minefields of your own, two at most and only for a free "
                                         "one, are announced as dismantled"))
    if probs:
        return probs
    before = _mine_set(state, side, own.number, ctx)
    try:
        after = _mine_set(state, side, build.number, ctx)
    except ValueError as exc:
        return [Problem("RB 14.1", f"{action.label}: {exc}")]
    if before is None or after is None:
        return []  # the opponent: decided when the sets are opened (T-32)
    return mines.check_set(_map(), build, before, after)


def _apply_minefield(state: State, side: Side, action: BuildMinefield, ctx) -> State:
    own = _mines(state, side)
    build = _next_build(state, side, action)
    entry = bu.Entry("minefield", 0 if action.free else bu.MINEFIELD_BP, free=action.free,
                     text="Minefield (dismantled two)" if action.free else "Minefield")
    ledger = bu._add(state.ledgers[side], entry)
    after = _mine_set(state, side, build.number, ctx)
    gone = set(action.dismantled_shown)
    known = tuple(sorted(after)) if after is not None else tuple(h for h in own.known if h not in gone)
    count = own.count + 1 - (bu.MINEFIELDS_DISMANTLED_FOR_FREE if action.free else 0)
    # Hexes enemy units hold now cannot receive the new Minefield (RB 14.0), and
    # an older one there was opened when they entered: nothing to open for them.
    state = _with_mines(state, side, number=build.number, count=count, known=known,
                        shown=tuple(h for h in own.shown if h not in gone), opened=(), due=(), fresh=(),
                        watch=build.engaged)
    return msgspec.structs.replace(state, ledgers={**state.ledgers, side: ledger},
                                   mine_builds=state.mine_builds + (build,))


def on_open_leaf(state: State, label: str, key: str, value: bytes, ctx) -> tuple[State, list[Problem]]:
    """RB 14.2: one hex of a Minefield set opened (T-30): a Minefield there is
    revealed to both players; it must have been legal where it was built."""
    parsed = mines.parse_label(label)
    m = _map()
    if parsed is None or parsed[0] != ctx.author:
        return state, [Problem("RB 14.2", f"'{label}' is not a Minefield set of the {ctx.author} player")]
    side, number = parsed
    own = _mines(state, side)
    if number != own.number or key not in m.hexes:
        return state, [Problem("RB 14.2", f"only hexes of the current {side} Minefield set "
                                          f"({mines.set_label(side, own.number)}) are opened, not {label} at {key}")]
    probs = mines.check_leaf(m, side, key, value, number, state.mine_builds, _scenario_mines(state, side),
                             own.shown)
    if probs:
        return state, probs
    found = mines.decode(value) is not None
    add = (key,) if found else ()
    return _with_mines(state, side, opened=own.opened + (key,), fresh=own.fresh + (key,),
                       shown=tuple(sorted(set(own.shown) | set(add))),
                       known=tuple(sorted(set(own.known) | set(add)))), []


def _open_whole_set(state: State, label: str, value: bytes, ctx) -> list[Problem]:
    """A whole Minefield set opened (the end of the game, the audit; T-32):
    the construction it records, against the set before it."""
    side, number = mines.parse_label(label)
    build = next((b for b in state.mine_builds if b.side == side and b.number == number), None)
    if build is None:
        return [Problem("RB 16.55", f"{label} was committed without a Minefield construction")]
    try:
        after = _mine_set(state, side, number, ctx)
        before = _mine_set(state, side, number - 1, ctx)
    except ValueError as exc:
        return [Problem("RB 14.1", f"{label}: {exc}")]
    if after is None or before is None:
        return []
    return [Problem(p.rule, f"{side} Minefield construction in Month {build.month}: {p.message}")
            for p in mines.check_set(_map(), build, before, after)]


def _open_minefields_problems(state: State, turn: Turn, action: object, side: Side) -> list[Problem]:
    """RB 14.2 (T-30): the owner opens every hex enemy units entered, in this event."""
    own = _mines(state, side)
    if turn.step not in ("mines-passive", "mines-active") or not isinstance(action, OpenMinefields):
        return [Problem("RB 14.2", "Minefields are revealed at the end of the Movement phase, "
                                   "now: 'open minefields'" if own.due else "no Minefield hexes to open now")]
    names = ", ".join(_map().name(h) for h in own.due)
    if tuple(action.hexes) != own.due:
        return [Problem("RB 14.2", f"open exactly the hexes enemy units entered: {names}")]
    missing = [h for h in own.due if h not in own.opened]
    if missing:
        return [Problem("RB 14.2", f"the hexes {', '.join(_map().name(h) for h in missing)} of "
                                   f"{mines.set_label(side, own.number)} must be opened in this event")]
    return []


def _after_mines(state: State, turn: Turn) -> State:
    """The Minefield openings owed (T-30), passive player first, then the reveals (RB 7.3)."""
    for side, step in ((turn.passive, "mines-passive"), (turn.active, "mines-active")):
        if _mines(state, side).due:
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step))
    return _reveals(state, turn)


def _mine_checkpoint(state: State, turn: Turn) -> State:
    """RB 14.2 (T-30): at the end of a Movement phase each side owes the
    openings of its Minefield set in the hexes enemy units entered since the
    last one; both sides' occupied hexes are remembered for the next."""
    movement = turn.movement
    for owner in SIDES:
        enemy = enemy_of(owner)
        own = _mines(state, owner)
        occupied = tuple(sorted({b.hex for b in state.position.blocks_of(enemy)}))
        due: tuple[str, ...] = ()
        if own.number:
            paths = [u.path for u in movement.moved if u.phase == movement.phase] \
                if movement is not None and movement.side == enemy else []
            known = (set(own.opened) | set(own.shown)) - set(own.fresh)
            due = tuple(sorted(mines.entered(paths, occupied, own.watch) - known))
        state = _with_mines(state, owner, watch=occupied, due=due)
    return state


# -- hidden identities ------------------------------------------------------------------

def _decode(state: State, label: str, value: bytes) -> tuple[str, int]:
    """A committed identity as it stands now: its unit, and its CV unless hits
    placed in the open have changed it since (T-34). ValueError if ``value`` is
    not an identity."""
    unit, cv = hidden.decode_identity(value)
    return unit, state.public_cv.get(label, cv)


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
        case EndDeployment(cards=labels):
            if state.phase != "deploy":
                return [Problem("RB 18.0", "deployment is over")]
            return (check_deployment_complete(_map(), _scenario(state), side, state.position)
                    + _no_seeds(labels, "RB 18.0"))
    if state.phase == "deploy":
        return [Problem("RB 18.0", "the scenario set-up comes first")]
    if state.phase != "turn":
        return [Problem(p.rule, _named(state, p.message)) for p in _check_month(state, action, side, ctx)]
    return _check_turn(state, _current(state), action, side, ctx)


def _initial_cards(state: State, side: Side) -> int:
    """RB 18.0: the scenario's initial hand, within the hand limit (RB 16.6);
    with a pre-game Buildup (RB 18.7) it is drawn at the end of it, with the
    Extra Supply Cards bought there."""
    if _scenario(state).special.pregame_buildup is not None and state.phase == "deploy":
        return 0
    return min(_scenario(state).side(side).initial_supply, _deck().hand_limit)


def _no_seeds(labels: tuple[str, ...], rule: str) -> list[Problem]:
    """Cards come from the shared deck (T-15): no card seeds any more."""
    return [Problem(rule, "cards are dealt from the shared deck: no card seeds")] if labels else []


def _challenge_label(state: State, side: Side) -> str:
    return f"month{state.month}.initiative.{side}"


def _check_month(state: State, action: object, side: Side, ctx) -> list[Problem]:
    """Actions outside the Player-Turns: hands, Initiative, Buildup, the end."""
    stage = state.stage
    hand = _hand(state, side)
    match action:
        case KeepHand() | Redraw() if stage != "redraw":
            return [Problem("RB 18.0", "the initial hand is kept or redrawn once, before the first Player-Turn")]
        case KeepHand():
            return []
        case Redraw(cards=labels):
            return _no_seeds(labels, "RB 18.0")
        case Challenge() | Answer() | OpenChallenge() if state.phase != "initiative":
            return [Problem("RB 3.3", "the Initiative is settled after the Buildup, before the first Player-Turn")]
        case Challenge(label=label, card=card):
            if stage != "challenge":
                return [Problem("RB 3.3", "the Allied challenge comes first")]
            if not label:
                return [] if not card else [Problem("RB 3.3", "no challenge plays no card")]
            return _one_card_problems(state, side, label, ctx, opened=False) + _card_checks(
                state, side, (card,), 1, cd.parse_real(ctx.value(label), 1), "RB 3.3", ctx)
        case Answer(label=label, card=card):
            if stage != "answer":
                return [Problem("RB 3.3", "the Axis answers an Allied challenge")]
            if not label:
                return [] if not card else [Problem("RB 3.3", "declining plays no card")]
            return _one_card_problems(state, side, label, ctx, opened=True) + _card_checks(
                state, side, (card,), 1, cd.parse_real(ctx.value(label), 1), "RB 3.3", ctx)
        case OpenChallenge():
            if stage != "open-challenge":
                return [Problem("RB 3.3", "no challenge card is waiting to be turned up")]
            if not ctx.opened(state.challenge):
                return [Problem("RB 3.3", f"open the challenge card '{state.challenge}' in this event")]
            return []
        case RevealAll():
            if state.phase != "final":
                return [Problem("RB 17.0", "blocks are turned face up at the end of the game")]
            missing = [lbl for lbl in _final_labels(state, side) if not ctx.opened(lbl)]
            return [Problem("RB 17.0", f"open every block's identity: {', '.join(missing)} not opened")] if missing else []
    if state.phase != "buildup" or stage != "buildup":
        return [Problem("RB 3.0", f"not an action now ({_STAGE_PROMPTS.get(stage, stage)})")]
    return _check_buildup(state, action, side, hand, ctx)


def _bctx(state: State) -> bu.BuildupContext:
    return bu.BuildupContext(m=_map(), networks={k: frozenset(v) for k, v in state.networks.items()},
                             roster=_scenarios().roster)


def _due(state: State, side: Side) -> tuple:
    """RB 16.4: the Reinforcements due in this Buildup that did not arrive
    early, by name where this replay knows which did (see ``_due_count``)."""
    if side in state.reinforced:
        return ()
    return bu.on_schedule(_scenarios(), _scenario(state), side, state.month, state.early_units.get(side, ()))


def _due_count(state: State, side: Side) -> int:
    """How many blocks arrive in this Buildup: the schedule less the early
    arrivals of the last Buildup (a public count), plus this one's."""
    if side in state.reinforced:
        return 0
    scheduled = len(bu.on_schedule(_scenarios(), _scenario(state), side, state.month))
    return scheduled - state.early.get(side, 0) + len(state.early_arrived)


def _early_candidates(state: State, side: Side) -> tuple:
    """RB 16.41: next month's units, checked once per Buildup (BU-05)."""
    if side in state.early_done:
        return ()
    return bu.early_arrival_candidates(_scenarios(), _scenario(state), side, state.month)


def _early_labels(state: State, side: Side, n: int) -> tuple[str, ...]:
    return tuple(f"month{state.month}.early.{side}.{i}" for i in range(n))


def _resupply_cards(state: State, side: Side, discard: int) -> int:
    """RB 16.6: Monthly Resupply plus Extra (16.5) and Bonus (13.4) cards,
    within the hand limit after the discards (T-16)."""
    ledger = state.ledgers[side]
    if state.pregame:  # RB 18.7: the initial hand and the Extra Supply Cards bought
        n = _scenario(state).side(side).initial_supply + ledger.extra_cards
    else:
        n = (bu.monthly_resupply(_scenario(state), side, state.month, state.malta or None) + ledger.extra_cards
             + state.bonus.get(side, 0))
    after = Hand(count=_hand(state, side).count - discard)
    return min(n, cd.room(after, _deck()))


def _check_buildup(state: State, action: object, side: Side, hand: Hand, ctx) -> list[Problem]:
    pos, ledger = state.position, state.ledgers[side]
    candidates = _early_candidates(state, side)
    if candidates and not isinstance(action, EarlyArrival):
        return [Problem("RB 16.41", f"first the Early Arrival check of next month's {len(candidates)} "
                                    "Reinforcements: 'early arrival'")]
    count = _due_count(state, side)
    if count and not isinstance(action, (Reinforce, EarlyArrival)):
        return [Problem("RB 16.4", f"the {count} Reinforcements due now arrive first: 'reinforce'")]
    match action:
        case EarlyArrival(slots=slots):
            if not candidates:
                return [Problem("RB 16.41", "no Early Arrival check is due now (never in the first or last "
                                            "month, BU-05)")]
            want = _early_labels(state, side, len(candidates))
            if tuple(slots) != want or any(not ctx.committed(lbl) for lbl in slots):
                return [Problem("RB 16.41", f"commit one hidden slot per unit due next month: {', '.join(want)}")]
            values = [ctx.value(lbl) for lbl in slots]
            if any(v is None for v in values):
                return []
            return bu.check_early_arrival_order(candidates, [v.decode("utf-8", "replace") for v in values])
        case Reinforce(tokens=tokens, early=early):
            if not count:
                return [Problem("RB 16.4", "no Reinforcements are due now")]
            probs = []
            if len(tokens) != count or len(set(tokens)) != len(tokens):
                probs.append(Problem("RB 16.4", f"{count} Reinforcements arrive now, "
                                                f"{len(tokens)} blocks were placed"))
            if tuple(early) != state.early_arrived:
                probs.append(Problem("RB 16.41", "the early arrivals are the slots that rolled 1-2: "
                                                 f"{', '.join(state.early_arrived) or 'none'}"))
            if probs:
                return probs
            want = {(u.name, u.max_cv) for u in _due(state, side)}
            early_of = dict(zip(tokens[len(tokens) - len(early):], early))
            probs, idents = _new_block_problems(state, side, tokens, ctx)
            seen = set()
            for t, ident in idents.items():
                if t in early_of:
                    slot = ctx.value(early_of[t])
                    unit = slot.decode("utf-8", "replace") if slot is not None else ""
                    if slot is not None and ident != (unit, _max_cv(unit)):
                        probs.append(Problem("RB 16.41", f"the slot {early_of[t]} holds {unit}, not "
                                                         f"{ident[0]} at CV {ident[1]}"))
                elif _due_names_known(state, side) and (ident not in want or ident in seen):
                    probs.append(Problem("RB 16.4", f"{ident[0]} at CV {ident[1]} is not one of the "
                                                    "Reinforcements due this month at full strength (RB 18.0)"))
                seen.add(ident)
            return probs
        case bu.Redeploy() | bu.SeaRedeploy() | bu.ReturnForRefit() | bu.BuySupply():
            return bu.check_spend(_bctx(state), pos, ledger, action)
        case Rebuild(token=token, steps=steps, bp=bp):
            return _rebuild_problems(state, side, ledger, token, steps, bp, ctx)
        case BuildMinefield():
            return _minefield_problems(state, side, ledger, action, ctx)
        case CallMalta(tokens=tokens):
            s = _scenario(state)
            if side != "axis" or state.pregame:
                return [Problem("RB 18.6", "only the Axis calls the Malta Group, in a Buildup")]
            probs = bu.check_malta_group(s, state.month, state.malta or None)
            units = _scenarios().malta_group(s)
            if len(tokens) != len(units) or len(set(tokens)) != len(tokens):
                probs.append(Problem("RB 18.6", f"the Malta Group is {len(units)} blocks, not {len(tokens)}"))
            want = {(u.name, u.max_cv) for u in units}
            more, idents = _new_block_problems(state, side, tokens, ctx)
            probs += more
            probs += [Problem("RB 18.6", f"{ident[0]} at CV {ident[1]} is not a Malta Group unit at full strength")
                      for ident in idents.values() if ident not in want]
            return probs
        case EndBuildup(discard=discard, cards=refs):
            probs = []
            if discard < 0 or discard > hand.count:
                return [Problem("RB 16.6", f"{discard} dummies cannot be handed back from a hand of {hand.count}")]
            if hand.real is not None and discard > hand.count - hand.real:
                probs.append(Problem("RB 16.6", f"only dummies may be handed back: the hand holds "
                                                f"{hand.count - hand.real} dummies, not {discard}"))
            return probs + _card_checks(state, side, refs, discard, 0, "RB 16.6", ctx)
    return [Problem("RB 16.5", f"not a Buildup action: {format_action(action)}")]


def _new_block_problems(state: State, side: Side, tokens: tuple[str, ...],
                        ctx) -> tuple[list[Problem], dict[str, tuple[str, int]]]:
    """New blocks entering play (RB 16.4, 18.6): fresh tokens of ``side``, each
    identity committed as ``<token>.id0``; and the identities this replay sees."""
    probs: list[Problem] = []
    idents: dict[str, tuple[str, int]] = {}
    for t in tokens:
        if not hidden.is_token_of(t, side) or state.position.has_block(t) or t in state.versions:
            probs.append(Problem("RB 2.0", f"'{t}' is not a new {side} block token"))
        label = hidden.identity_label(t)
        if not ctx.committed(label):
            probs.append(Problem("RB 2.0", f"the block's identity must be committed as '{label}'"))
            continue
        try:
            ident = _identity(ctx, t)
        except ValueError as exc:
            probs.append(Problem("RB 2.0", str(exc)))
            continue
        if ident is not None:
            idents[t] = ident
    return probs, idents


def _new_blocks_order(role: Side, names: list[str], ctx) -> tuple[tuple[str, ...], dict[str, bytes]]:
    """Fresh tokens for ``names`` at full strength (RB 18.0), identities to commit."""
    tokens = tuple(hidden.new_token(role, ctx.fresh()) for _ in names)
    return tokens, {hidden.identity_label(t): hidden.encode_identity(n, _max_cv(n)) for t, n in zip(tokens, names)}


def _enter_base(state: State, side: Side, tokens: tuple[str, ...], ctx,
                obligation: Callable[[str, str], Obligation]) -> State:
    """New blocks into Base (RB 16.4; off-board next to an engaged Base, T-20);
    ``obligation(token, base)`` for each identity this replay cannot see."""
    m = _map()
    base = m.base(side)
    blocks, obligations = [], state.obligations
    for t in tokens:
        ident = _identity(ctx, t)
        unit, cv = ident if ident is not None else ("", 0)
        blocks.append(Block(token=t, side=side, hex=base, unit=unit, cv=cv))
        if ident is None:
            obligations += (obligation(t, base),)
    arrival = bu.arrive(m, state.position, side, blocks)
    refit = {**state.refitting, side: state.refitting.get(side, ()) + arrival.waiting} \
        if arrival.waiting else state.refitting
    return msgspec.structs.replace(state, position=arrival.pos, obligations=obligations, refitting=refit,
                                   versions={**state.versions, **{t: 0 for t in tokens}})


def _due_names_known(state: State, side: Side) -> bool:
    """Whether this replay knows which of this month's units arrived early."""
    return len(state.early_units.get(side, ())) == state.early.get(side, 0)


def _max_cv(unit: str) -> int:
    try:
        return _scenarios().roster.get(unit).max_cv
    except UnknownUnit:
        return -1


def _rebuild_problems(state: State, side: Side, ledger: bu.Ledger, token: str, steps: int, bp: int,
                      ctx) -> list[Problem]:
    """RB 16.54: Replacements; a replay that does not know the unit checks
    the public part and keeps an obligation on the identities (T-21)."""
    pos, m = state.position, _map()
    if not pos.has_block(token) or pos.block(token).side != side:
        return [Problem("RB 16.54", f"no {side} block {token} on the map")]
    b = pos.block(token)
    probs = []
    if steps < 1 or bp < 1:
        probs.append(Problem("RB 16.54", "at least one Replacement step, paid in BPs"))
    if b.hex != m.base(side):
        probs.append(Problem("RB 16.54", f"Replacements are received in Base only ({token} is at {m.name(b.hex)})"))
    if bp > ledger.available:
        probs.append(Problem("RB 16.5", f"{bp} BP for Replacements; {ledger.available} BP left"))
    label = hidden.identity_label(token, state.versions.get(token, 0) + 1)
    if not ctx.committed(label):
        probs.append(Problem("RB 16.54", f"the rebuilt unit's new CV must be committed as '{label}'"))
    if probs or not b.unit:
        return probs
    probs += bu.check_replace(_bctx(state), pos, ledger, bu.Replace(token=token, steps=steps))
    return probs + _rebuild_identity_problems(b.unit, b.cv, steps, bp, _identity(ctx, token,
                                                                                 state.versions.get(token, 0) + 1))


def _rebuild_identity_problems(unit: str, cv: int, steps: int, bp: int, new) -> list[Problem]:
    try:
        u = _scenarios().roster.get(unit)
    except UnknownUnit:
        return [Problem("RB 2.0", f"{unit!r} is not a unit of the game")]
    probs = []
    cost = bu.replacement_cost(u, steps)
    if bp != cost:
        probs.append(Problem("RB 16.54", f"{steps} step(s) for {unit} cost {cost} BP, not {bp}"))
    grown = cv + steps * u.cv_per_step
    if grown > u.max_cv:
        probs.append(Problem("RB 16.54", f"{unit} at CV {cv} cannot take {steps} step(s): full strength is {u.max_cv}"))
    if new is not None and tuple(new) != (unit, grown):
        probs.append(Problem("RB 16.54", f"{unit} at CV {cv} + {steps} step(s) is {unit} at CV {grown}, "
                                         f"not {new[0]} at CV {new[1]}"))
    return probs


def _one_card_problems(state: State, side: Side, label: str, ctx, *, opened: bool) -> list[Problem]:
    if label != _challenge_label(state, side) or not ctx.committed(label):
        return [Problem("RB 3.3", f"the card must be committed as '{_challenge_label(state, side)}'")]
    if opened and not ctx.opened(label):
        return [Problem("RB 3.3", "the Axis answer is opened in the same event (the Allied card is already fixed)")]
    return cd.play_problems(_hand(state, side), 1, cd.parse_real(ctx.value(label), 1), "RB 3.3")


def _final_labels(state: State, side: Side) -> list[str]:
    blocks = list(state.position.blocks_of(side)) + list(state.refitting.get(side, ()))
    return [hidden.identity_label(b.token, state.versions.get(b.token, 0)) for b in blocks]


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
    state = msgspec.structs.replace(state, actor=side)
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
            pre = _scenario(state).special.pregame_buildup
            if pre is not None:  # RB 18.7 (BU-20): 30 BP each, no dice, before the first cards
                state = msgspec.structs.replace(state, position=_initial_fortress_control(state))
                networks = {s: tuple(sorted(n)) for s, n in bu.buildup_networks(_map(), state.position).items()}
                return msgspec.structs.replace(state, phase="buildup", stage="buildup", side=pre.first,
                                               player1=pre.first, pregame=True, networks=networks,
                                               ledgers={s: bu.open_ledger(s, pre.bp) for s in SIDES})
            # RB 18.0: the first shuffle of the shared deck deals both initial
            # hands (its first step rides on this event), then each may redraw
            # once, Axis first.
            dealt = msgspec.structs.replace(state, phase="cards", stage="redraw", side="axis",
                                            position=_initial_fortress_control(state))
            deals = [(s, _initial_cards(dealt, s)) for s in ("axis", "allied")]
            return msgspec.structs.replace(dealt, deck=cd.begin_round(dealt.deck, side, cd.deck_labels(_deck()),
                                                                      deals))
    if state.phase != "turn":
        return _apply_month(state, action, side, ctx)
    return _apply_turn(state, _current(state), action, side, ctx)


def _after_redraw(state: State, side: Side) -> State:
    if side == "axis":
        return msgspec.structs.replace(state, stage="redraw", side="allied")
    return _begin_month(state, _scenario(state).special.first_player)


def _begin_month(state: State, first: Side) -> State:
    """RB 3.1: the Player-Turns of the Month, the Initiative holder first."""
    state = msgspec.structs.replace(state, phase="turn", stage="", passes=0, challenge="", answer="",
                                    ledgers={}, networks={}, reinforced=(), bonus={},
                                    captures=cb.start_month_ledger(state.month, state.position.fortresses))
    return _begin_turn(state, first)


def _begin_initiative(state: State) -> State:
    """RB 3.3: the Allied player may challenge for the Initiative (never in
    the first Month: the Initiative follows a Buildup, which Month 1 lacks)."""
    return msgspec.structs.replace(state, phase="initiative", stage="challenge", side="allied")


def _begin_buildup(state: State) -> State:
    """RB 16.1-16.2: advance the Month; the Buildup Supply Check (its
    Fortress and Oasis choices made by rule, T-19); units back from Refit;
    both Supply Networks fixed; then the BP dice (RB 16.3)."""
    m = _map()
    month = state.month + 1
    bonus = cb.captured_supply(state.captures, cb.map_port_capacity(m)) if state.captures else {}
    pos, report = sp.buildup_supply_check(m, state.position)
    if report.needed:
        pos, report = sp.buildup_supply_check(m, state.position, _default_choices(report.needed))
    for side in SIDES:
        back = state.refitting.get(side, ())
        if back:
            pos = bu.arrive(m, pos, side, back).pos
    networks = {side: tuple(sorted(net)) for side, net in bu.buildup_networks(m, pos).items()}
    disrupted = {t: n for t, n in state.disrupted_in.items() if pos.has_block(t) and pos.block(t).disrupted}
    return msgspec.structs.replace(state, phase="buildup", stage="bp-dice", month=month, position=pos,
                                   networks=networks, refitting={}, bonus=bonus, disrupted_in=disrupted,
                                   side=enemy_of(state.actor), turn=None, reinforced=(), ledgers={},
                                   early=state.early_next, early_units=state.early_units_next, early_next={},
                                   early_units_next={}, early_done=(), early_arrived=())


def _default_choices(needed) -> dict[str, sp.SupplyChoices]:
    """T-19: Buildup Supply Check choices nobody is asked for: the first
    candidates in token order (both sides' choices would otherwise cost a
    round of messages for a rare case)."""
    out: dict[str, dict[str, dict]] = {}
    for n in needed:
        side = "axis" if hidden.is_token_of(n.candidates[0], "axis") else "allied"
        bucket = out.setdefault(side, {"fortress": {}, "oasis": {}})
        picked = tuple(sorted(n.candidates)[:n.count])
        if n.kind == "fortress":
            bucket["fortress"][n.hex] = picked
        else:
            bucket["oasis"][n.hex] = picked[0]
    return {side: sp.SupplyChoices(fortress=v["fortress"], oasis=v["oasis"]) for side, v in out.items()}


def _apply_month(state: State, action: object, side: Side, ctx) -> State:
    m, pos = _map(), state.position
    hand = _hand(state, side)
    match action:
        case KeepHand():
            return _after_redraw(state, side)
        case Redraw():
            # RB 18.0: the hand goes back (into the next reshuffle) and a new
            # one is dealt from the rest of the deck.
            deck = cd.take(state.deck, side, state.deck.held.get(side, ()), to_played=False)
            deck = cd.queue_deal(deck, side, _initial_cards(state, side))
            state = msgspec.structs.replace(state, hands={**state.hands, side: Hand()}, deck=deck)
            return _after_redraw(state, side)
        case Challenge(label=label, card=card):
            if not label:
                return _begin_month(state, "axis")
            real = cd.parse_real(ctx.value(label), 1)
            return msgspec.structs.replace(state, hands={**state.hands, side: cd.spend(hand, 1, real)},
                                           deck=cd.take(state.deck, side, (card,), to_played=True),
                                           challenge=label, stage="answer", side="axis")
        case Answer(label=label, card=card):
            if label:
                real = cd.parse_real(ctx.value(label), 1)
                deck = cd.take(state.deck, side, (card,), to_played=True)
                state = msgspec.structs.replace(state, hands={**state.hands, side: cd.spend(hand, 1, real)},
                                                answer=label,
                                                deck=cd.queue_show(deck, side, (card,), "initiative", label))
            return msgspec.structs.replace(state, stage="open-challenge", side="allied")
        case OpenChallenge():
            state = msgspec.structs.replace(state, deck=cd.queue_show(
                state.deck, side, state.deck.played.get(side, ()), "initiative", state.challenge))
            allied = ctx.value(state.challenge) == b"1"
            axis = (ctx.value(state.answer) == b"1") if state.answer else None
            return _begin_month(state, cd.initiative(allied, axis))
        case RevealAll():
            if not state.turned_up:  # the other side turns its blocks up next
                return msgspec.structs.replace(state, turned_up=(side,), side=enemy_of(side))
            off = {s: [b.unit for b in state.refitting.get(s, ())] for s in SIDES}
            result = judge_victory(m, pos, _scenario(state), _scenarios(), off_board=off)
            return msgspec.structs.replace(state, phase="over", stage="", result=result, turned_up=(*state.turned_up, side))
        case EarlyArrival(slots=slots):
            return msgspec.structs.replace(state, stage="early-dice", early_slots=tuple(slots),
                                           early_done=state.early_done + (side,))
        case Reinforce(tokens=tokens, early=early):
            early_of = dict(zip(tokens[len(tokens) - len(early):], early))

            def reinforcement(t: str, base: str) -> Obligation:
                if t in early_of:  # RB 16.41: the block is its slot's unit
                    return Obligation(token=t, seq=ctx.seq, kind="early", rule="RB 16.41",
                                      labels=(early_of[t], hidden.identity_label(t)), tokens=(t,),
                                      what=f"arrived early from slot {early_of[t]}")
                return Obligation(token=t, seq=ctx.seq, kind="arrival", hex=base, needed=state.month,
                                  rule="RB 16.4", what=f"arrived as a Reinforcement in Month {state.month}")

            state = _enter_base(state, side, tokens, ctx, reinforcement)
            return msgspec.structs.replace(state, reinforced=state.reinforced + (side,), early_arrived=())
        case bu.Redeploy() | bu.SeaRedeploy() | bu.ReturnForRefit() | bu.BuySupply():
            before = state.ledgers[side]
            spent = bu.apply_spend(_bctx(state), pos, before, action)
            refit = state.refitting
            if len(spent.ledger.refit) > len(before.refit):
                refit = {**refit, side: refit.get(side, ()) + spent.ledger.refit[len(before.refit):]}
            return msgspec.structs.replace(state, position=spent.pos, ledgers={**state.ledgers, side: spent.ledger},
                                           refitting=refit)
        case Rebuild(token=token, steps=steps, bp=bp):
            return _apply_rebuild(state, side, token, steps, bp, ctx)
        case BuildMinefield():
            return _apply_minefield(state, side, action, ctx)
        case CallMalta(tokens=tokens):
            state = _enter_base(state, side, tokens, ctx, lambda t, base: Obligation(
                token=t, seq=ctx.seq, kind="malta", hex=base, rule="RB 18.6",
                what=f"arrived with the Malta Group in Month {state.month}"))
            return msgspec.structs.replace(state, malta=state.month)
        case EndBuildup(discard=discard, cards=refs):
            n = _resupply_cards(state, side, discard)
            closing = bu.close_ledger(state.ledgers[side])
            # RB 16.6: the dummies handed back are shown at once and go back into the deck.
            deck = cd.queue_show(cd.take(state.deck, side, refs, to_played=False), side, refs, "discard")
            state = msgspec.structs.replace(state, saved={**state.saved, side: closing.saved}, deck=deck,
                                            hands={**state.hands, side: cd.discard_dummies(hand, discard)})
            if state.pregame:  # RB 18.7: the initial hands are dealt after both have spent
                if side == state.player1:
                    return msgspec.structs.replace(state, side=enemy_of(side), owed={**state.owed, side: n})
                deals = [(state.player1, state.owed.get(state.player1, 0)), (side, n)]
                return msgspec.structs.replace(
                    state, phase="cards", stage="redraw", side="axis", pregame=False, ledgers={}, networks={},
                    owed={}, deck=cd.begin_round(state.deck, side, cd.deck_labels(_deck()), deals))
            # T-18: Player 1's Resupply reshuffles the deck (RB 16.6: spent cards
            # and dummies handed back go in) and deals from it; Player 2 draws
            # from the same deck at the end of its own Buildup.
            if side == state.player1:
                deck = cd.begin_round(state.deck, side, (), [(side, n)])
                return msgspec.structs.replace(state, deck=deck, stage="buildup", side=enemy_of(side))
            return _begin_initiative(msgspec.structs.replace(state, deck=cd.queue_deal(state.deck, side, n)))
    raise ValueError(f"unchecked action {action!r}")


def _apply_rebuild(state: State, side: Side, token: str, steps: int, bp: int, ctx) -> State:
    b = state.position.block(token)
    old_v = state.versions.get(token, 0)
    ledger = state.ledgers[side]
    entry = bu.Entry("replacement", bp, count=steps, token=token,
                     text=f"{b.unit or token} +{steps} step(s)")
    ledger = msgspec.structs.replace(ledger, entries=ledger.entries + (entry,))
    # The new version is checked against the old one when both are known, also
    # for a unit the opponent knows (its new CV is public, the commitment is not).
    obligations = state.obligations + (Obligation(
        token=token, seq=ctx.seq, kind="rebuild", rule="RB 16.54", tokens=(token,),
        labels=(hidden.identity_label(token, old_v), hidden.identity_label(token, old_v + 1)),
        needed=steps, hits=bp, what=f"{steps} Replacement step(s) for {bp} BP"),)
    if b.unit:
        u = _scenarios().roster.get(b.unit)
        b = msgspec.structs.replace(b, cv=b.cv + steps * u.cv_per_step)
    return msgspec.structs.replace(state, position=state.position.replace_blocks([b]), obligations=obligations,
                                   versions={**state.versions, token: old_v + 1},
                                   ledgers={**state.ledgers, side: ledger})


def resolve_dice(state: State, values: tuple[int, ...], ctx) -> State:
    """RB 6.4: one die per announced Forced March, in the order announced;
    RB 10.5: the Pursuit Fire dice, in pursuer order; RB 9.4: the fire dice,
    in fire-plan order; RB 16.6: the cards drawn (secret dice, None where
    this replay cannot see them); RB 16.3: the BP dice, Axis first."""
    state = msgspec.structs.replace(state, actor=ctx.author)
    if state.phase == "buildup" and state.stage == "early-dice":
        side = state.side
        arrived = bu.early_arrivals(state.early_slots, values)
        names = [ctx.value(lbl) for lbl in arrived]
        known = tuple(v.decode("utf-8", "replace") for v in names if v is not None)
        obligation = Obligation(token="", seq=ctx.seq, kind="early-order", rule="RB 16.41",
                                labels=state.early_slots, needed=state.month, unit=side,
                                what=f"the Early Arrival slots of Month {state.month}")
        return msgspec.structs.replace(
            state, stage="buildup", early_slots=(), early_arrived=arrived, last_rolls=tuple(values),
            obligations=state.obligations + (obligation,),
            early_next={**state.early_next, side: len(arrived)},
            early_units_next={**state.early_units_next, side: known} if len(known) == len(arrived)
            else state.early_units_next)
    if state.phase == "buildup" and state.stage == "bp-dice":
        n = bu.bp_dice_count(_scenario(state))
        det = bu.determine_bp(_scenario(state), values[:n], values[n:])
        ledgers = {s: bu.open_ledger(s, det.bp, state.saved.get(s, 0)) for s in SIDES}
        return msgspec.structs.replace(state, stage="buildup", side=det.player1, player1=det.player1,
                                       bp_dice=tuple(values), ledgers=ledgers, last_rolls=tuple(values))
    turn = _current(state)
    if turn.step in ("defensive-dice", "offensive-dice"):
        result = cb.score(_combat_position(state, turn), _round(state, turn), turn.fire, values,
                          units=_roster(state).get)
        state = msgspec.structs.replace(state, last_rolls=tuple(values), last_fire=_fire_lines(state, result))
        turn = msgspec.structs.replace(turn, fire=None, fire_result=result,
                                       probe_fired=turn.probe_fired + result.fired if turn.probing else ())
        if result.hits:
            step = "offensive-losses" if turn.step == "defensive-dice" else "defensive-losses"
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step))
        return _after_losses(state, turn)
    if turn.step == "rout-dice":
        hits = routs.score_pursuit(turn.rout_pursuit, values)
        state = msgspec.structs.replace(state, last_rolls=tuple(values))
        return _rout_after_pursuit(state, turn, hits)
    if turn.step == "retreat-dice":
        hits = routs.score_pursuit(turn.pursuit, values)
        state = msgspec.structs.replace(state, last_rolls=tuple(values))
        return _after_retreat_pursuit(state, msgspec.structs.replace(turn, hits=hits))
    if turn.step == "refuse-dice":
        hits = routs.score_pursuit(turn.pursuit, values)
        state = msgspec.structs.replace(state, last_rolls=tuple(values))
        return _after_pursuit(state, msgspec.structs.replace(turn, hits=hits))
    movement = turn.movement
    pos = state.position
    disrupted = dict(state.disrupted_in)
    overruns: list[str] = []
    marched: list[tuple[str, tuple[str, ...]]] = []
    losers: list[str] = []
    for march, roll in zip(movement.marches, values):
        out = mv.apply_forced_march(_map(), pos, movement, march.token, roll)
        pos, movement = out.position, out.turn
        overruns += out.overruns
        if not out.succeeded:
            disrupted[march.token] = turn.number
            if out.step_loss:  # RB 6.4 sidebar: a failed Retreat Forced March also costs a step
                losers.append(march.token)
        else:
            marched.append((march.token, march.path if march.regroup else march.path[-2:]))
    state = _note_routes(state, state.position, marched, turn.number, forced=True)
    state = msgspec.structs.replace(state, position=pos, disrupted_in=disrupted, last_rolls=tuple(values))
    turn = msgspec.structs.replace(turn, movement=movement)
    if losers:
        # T-39: the owner applies those steps in secret first; the Overrun Routs wait.
        return msgspec.structs.replace(state, turn=msgspec.structs.replace(
            turn, step="march-losses", march_losses=tuple(losers), march_overruns=tuple(overruns)))
    # RB 11.4 (T-13): Overruns by Forced Marches Rout once all marches are made.
    return _start_routs(state, turn, _overrun_routs(state, turn, overruns), "forced-march")


def on_open(state: State, label: str, value: bytes, ctx) -> tuple[State, list[Problem]]:
    """An identity is opened: fill it in and decide the token's deferred checks."""
    state, problems = _decide_labelled(state, ctx)
    if mines.parse_label(label) is not None:
        return state, problems + _open_whole_set(state, label, value, ctx)
    parsed = hidden.token_of_label(label)
    if parsed is None or not state.position.has_block(parsed[0]):
        return state, problems
    token, version = parsed
    try:
        unit, cv = _decode(state, label, value)
    except ValueError as exc:
        return state, [Problem("RB 2.0", f"block {token}: {exc}")]
    block = state.position.block(token)
    keep = []
    others = _known_units(state.position, block.side) - {block.unit}
    for ob in state.obligations:
        if ob.token != token or ob.labels or (ob.kind in ("placement", "arrival", "malta") and version != 0):
            # a later identity version has lost CV since: arrival checks wait for version 0
            keep.append(ob)
            continue
        if ob.kind == "malta":  # RB 18.6: a Malta Group unit at full CV
            group = {(u.name, u.max_cv) for u in _scenarios().malta_group(_scenario(state))}
            if (unit, cv) not in group or unit in others:
                problems.append(Problem(ob.rule, f"event {ob.seq} by {block.side}: block {token} {ob.what}: "
                                                 f"{unit} at CV {cv} is not a Malta Group unit at full strength, "
                                                 "or it is already on the map"))
        elif ob.kind == "arrival":  # RB 16.4: one of this month's Reinforcements, at full CV
            due = {(u.name, u.max_cv) for u in bu.on_schedule(_scenarios(), _scenario(state), block.side, ob.needed)}
            if (unit, cv) not in due or unit in others:
                problems.append(Problem(ob.rule, f"event {ob.seq} by {block.side}: block {token} {ob.what}: "
                                                 f"{unit} at CV {cv} is not a Reinforcement due then at full "
                                                 "strength, or it is already on the map"))
        elif ob.kind == "placement":
            for p in check_hidden_placement(_map(), _scenarios(), _scenario(state), block.side, ob.hex, unit, cv,
                                            others):
                problems.append(Problem(p.rule, f"event {ob.seq} by {block.side}: block {token} {ob.what}: "
                                                f"{p.message}"))
        elif ob.kind in ("speed", "speed-range"):  # RB 6.1 / 10.5: at least, or within, a range
            try:
                speed = _speed_of(state, unit)
            except UnknownUnit:
                problems.append(Problem("RB 2.0", f"block {token} is {unit!r}, not a unit of the game"))
                continue
            top = ob.maximum if ob.kind == "speed-range" else speed
            if not ob.needed <= speed <= top:
                want = f"speed {ob.needed}" if ob.needed == top or ob.kind == "speed" else \
                    f"speed {ob.needed}-{ob.maximum}"
                problems.append(Problem(ob.rule, f"event {ob.seq} by {block.side}: block {token} {ob.what}: "
                                                 f"that needs {want}, but {unit} has speed {speed}"))
    current = version == state.versions.get(token, 0)
    position = state.position.replace_blocks([msgspec.structs.replace(block, unit=unit,
                                                                      cv=cv if current else block.cv)])
    disclosed = state.disclosed if token in state.disclosed or not current else state.disclosed + (token,)
    return msgspec.structs.replace(state, position=position, obligations=tuple(keep),
                                   disclosed=disclosed), problems


def reveal_die(state: State, label: str, value: int, ctx) -> tuple[State, list[Problem]]:
    """A card seed opened (at the audit): the replays that lacked it check
    the cards played with the audit's full knowledge instead (T-15)."""
    return state, []


def _decide_labelled(state: State, ctx) -> tuple[State, list[Problem]]:
    """Decide the obligations over several identity versions ("slowest",
    "losses") once every one of their values is known (T-10)."""
    problems: list[Problem] = []
    keep = []
    value = ctx.value
    for ob in state.obligations:
        # Most obligations wait on a hidden value: stop at the first unknown label.
        if not ob.labels or any(value(lbl) is None for lbl in ob.labels):
            keep.append(ob)
            continue
        values = [value(lbl) for lbl in ob.labels]
        if ob.kind == "early-order":  # RB 16.41, BU-06: every candidate once
            side = ob.unit
            cands = bu.early_arrival_candidates(_scenarios(), _scenario(state), side, ob.needed)
            names = [v.decode("utf-8", "replace") for v in values]
            problems += [Problem(p.rule, f"event {ob.seq} by {side}: {ob.what}: {p.message}")
                         for p in bu.check_early_arrival_order(cands, names)]
            continue
        if ob.kind == "early":  # RB 16.41: the early block is its slot's unit at full strength
            unit = values[0].decode("utf-8", "replace")
            try:
                ident = hidden.decode_identity(values[1])
            except ValueError as exc:
                problems.append(Problem("RB 2.0", f"event {ob.seq}: {exc}"))
                continue
            if ident != (unit, _max_cv(unit)):
                side = "axis" if hidden.is_token_of(ob.tokens[0], "axis") else "allied"
                problems.append(Problem(ob.rule, f"event {ob.seq} by {side}: block {ob.tokens[0]} {ob.what}: "
                                                 f"the slot holds {unit}, the block is {ident[0]} at CV {ident[1]}"))
            continue
        try:
            ids = {lbl: _decode(state, lbl, v) for lbl, v in zip(ob.labels, values)}
        except ValueError as exc:
            problems.append(Problem("RB 2.0", f"event {ob.seq}: {exc}"))
            continue
        side = "axis" if hidden.is_token_of(ob.tokens[0], "axis") else "allied"
        where = f"event {ob.seq} by {side}: {ob.what}"
        if ob.kind == "slowest":
            speeds = []
            for lbl in ob.labels:
                try:
                    speeds.append(_speed_of(state, ids[lbl][0]))
                except UnknownUnit:
                    speeds.append(0)
            if ob.needed not in speeds:
                problems.append(Problem(ob.rule, f"{where}: no refusing unit has speed {ob.needed} "
                                                 f"(their speeds are {', '.join(map(str, speeds))})"))
        elif ob.kind == "attrition":
            t = ob.tokens[0]
            old = (ob.unit, ob.cv) if ob.unit else ids[ob.labels[0]]
            new = {} if t in ob.eliminated else {t: ids[ob.labels[-1]]}
            problems += [Problem(p.rule, f"{where}: {p.message}")
                         for p in _attrition_problems(_roster(state), (t,), {t: old}, new, ob.eliminated)]
        elif ob.kind == "march-loss":  # RB 6.4 sidebar (T-39)
            t = ob.tokens[0]
            old = (ob.unit, ob.cv) if ob.unit else ids[ob.labels[0]]
            new = None if t in ob.eliminated else ids[ob.labels[-1]]
            problems += [Problem(p.rule, f"{where}: {p.message}")
                         for p in _step_loss_problems(_roster(state), t, old, new, t in ob.eliminated,
                                                      "RB 6.4", _MARCH_LOSS)]
        elif ob.kind == "rebuild":  # RB 16.54 (T-21)
            old_id, new_id = ids[ob.labels[0]], ids[ob.labels[1]]
            problems += [Problem(p.rule, f"{where}: {p.message}")
                         for p in _rebuild_identity_problems(old_id[0], old_id[1], ob.needed, ob.hits, new_id)]
        elif ob.kind == "losses":
            n = len(ob.tokens)  # the old versions first, then the survivors' new ones
            old = {hidden.token_of_label(lbl)[0]: ids[lbl] for lbl in ob.labels[:n]}
            new = {hidden.token_of_label(lbl)[0]: ids[lbl] for lbl in ob.labels[n:]}
            problems += [Problem(p.rule, f"{where}: {p.message}")
                         for p in _loss_problems(state, side, ob.hex, ob.tokens, old, new, ob.eliminated,
                                                 ob.hits)]
    return msgspec.structs.replace(state, obligations=tuple(keep)), problems


def _attrition_problems(roster: Roster, tokens, old: dict[str, tuple[str, int]], new: dict[str, tuple[str, int]],
                        eliminated) -> list[Problem]:
    """Did each Routed unit lose exactly one step of Rout Attrition (RB 11.3, 2.3)? (T-12)"""
    return [p for t in tokens
            for p in _step_loss_problems(roster, t, old[t], new.get(t), t in eliminated, "RB 11.3", "Rout Attrition")]


#: What a failed Retreat Forced March costs, in the words of the problems (RB 6.4 sidebar, T-39).
_MARCH_LOSS = "the step lost by its failed Retreat Forced March"


def _step_loss_problems(roster: Roster, t: str, old: tuple[str, int], new: tuple[str, int] | None,
                        eliminated: bool, rule: str, what: str) -> list[Problem]:
    """Did unit ``t``, ``old`` (unit, CV) before, lose exactly one step by
    ``what`` (RB 2.3: eliminated at its last step)? ``new``: its new identity,
    None where this replay cannot see it (only the elimination is checked)."""
    unit, cv = old
    try:
        u = roster.get(unit)
    except UnknownUnit:
        return [Problem("RB 2.0", f"block {t} is {unit!r}, not a unit of the game")]
    after = cv - u.cv_per_step
    if eliminated:
        if after >= u.min_cv:
            return [Problem(rule, f"{unit} ({t}) at CV {cv} survives {what} at CV {after}, but was eliminated")]
        return []
    if after < u.min_cv:
        return [Problem(rule, f"{unit} ({t}) at CV {cv} is eliminated by {what} (RB 2.3)")]
    if new is not None and new != (unit, after):
        return [Problem(rule, f"{unit} ({t}) at CV {cv} must be {unit} at CV {after} after {what}, "
                              f"not {new[0]} at CV {new[1]}")]
    return []


def _loss_problems(state: State, side: Side, hex_: str, refusers: tuple[str, ...],
                   old: dict[str, tuple[str, int]], new: dict[str, tuple[str, int]], eliminated: tuple[str, ...],
                   hits: int) -> list[Problem]:
    """Is the placement that the old and new identity versions imply a legal
    one of ``hits`` Pursuit hits (RB 10.5, 9.5, 2.3)? A lost step took
    ``hits_per_step`` hits (CB-15). (T-10)"""
    roster = _roster(state)
    probs: list[Problem] = []
    losses = []
    blocks = []
    for t in refusers:
        unit, cv = old[t]
        try:
            u = roster.get(unit)
        except UnknownUnit:
            probs.append(Problem("RB 2.0", f"block {t} is {unit!r}, not a unit of the game"))
            continue
        blocks.append(Block(token=t, side=side, hex=hex_, unit=unit, cv=cv))
        if t in eliminated:
            losses.append(cb.Loss(t, hits=((cv - u.min_cv) // u.cv_per_step + 1) * u.hits_per_step))
            continue
        nunit, ncv = new[t]
        if nunit != unit:
            probs.append(Problem("RB 2.0", f"block {t} was {unit} and is now committed as {nunit}"))
            continue
        if ncv > cv or (cv - ncv) % u.cv_per_step or ncv < u.min_cv:
            probs.append(Problem("RB 2.3", f"{unit} ({t}) cannot go from CV {cv} to CV {ncv} by losing steps"))
            continue
        if ncv < cv:
            losses.append(cb.Loss(t, hits=(cv - ncv) // u.cv_per_step * u.hits_per_step))
    if probs:
        return probs
    pos = Position(blocks=tuple(blocks))
    return routs.check_pursuit_losses(pos, refusers, hits, cb.LossAllocation(hex_, tuple(losses)),
                                      units=roster.get)


# -- the Player-Turn ---------------------------------------------------------------------------

def _initial_fortress_control(state: State) -> Position:
    """RB 13.1: initial control follows the scenario deployment areas: a Fortress
    held by one side's blocks is that side's; an empty one belongs to the side
    whose deployment area alone includes it."""
    from rules.ritd_v3.setup import side_hexes
    m, s, pos = _map(), _scenario(state), state.position
    control = dict(pos.fortresses)
    basis = _scenarios().get(s.special.control_as) if s.special.control_as else s
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


def _begin_turn(state: State, active: Side) -> State:
    number = len(state.turns) + 1
    return msgspec.structs.replace(state, side=active, turn=Turn(number=number, active=active),
                                   turns=state.turns + (active,))


def _recoverable(state: State, side: Side) -> tuple[str, ...]:
    """RB 11.2: Disrupted units that have spent a complete enemy Player-Turn Disrupted."""
    now = len(state.turns)
    out = []
    for b in state.position.blocks_of(side):
        since = state.disrupted_in.get(b.token)
        if b.disrupted and since is not None and any(
                state.turns[t - 1] != side for t in range(since + 1, now)):
            out.append(b.token)
    return tuple(out)


def _speed(state: State, block: Block) -> int | None:
    """A block's speed in this game when this replay knows its unit (RB 6.1,
    17.0 optional rules), else None."""
    if not block.unit:
        return None
    return _speed_of(state, block.unit)


def _unit_speed(unit: str) -> int:
    """The printed speed of ``unit`` (RB 6.1); UnknownUnit if it is none."""
    return _scenarios().roster.get(unit).speed


def _speed_of(state: State, unit: str) -> int:
    """``unit``'s Unit Speed in this game: 2 for an I-tank under the optional
    rule "Allied I-Tanks" (RB 17.0), else its printed speed (RB 6.1).
    UnknownUnit if it is none."""
    u = _roster(state).get(unit)
    return u.speed if isinstance(u, OptionalITank) else _unit_speed(unit)


def _speeds(state: State, pos: Position, tokens) -> dict[str, int | None]:
    return {t: _speed(state, pos.block(t)) for t in tokens if pos.has_block(t)}


def _speed_obligations(result: mv.MoveCheck, seq: int, what: str) -> tuple[Obligation, ...]:
    return tuple(Obligation(token=o.token, seq=seq, kind="speed", rule=o.rule, needed=o.min_speed, what=what)
                 for o in result.obligations)


_TOKENS = re.compile(r"\b[AL][0-9a-f]{8}\b")


def _named(state: State, text: str) -> str:
    """``text`` with the tokens of blocks this replay can identify shown as
    "Unit (token)"; other tokens stay as they are (nothing hidden leaks)."""
    pos = state.position

    def name(match: re.Match[str]) -> str:
        token = match.group()
        unit = pos.block(token).unit if pos.has_block(token) else ""
        return f"{unit} ({token})" if unit else token

    return _TOKENS.sub(name, text)


def _check_turn(state: State, turn: Turn, action: object, side: Side, ctx) -> list[Problem]:
    return [Problem(p.rule, _named(state, p.message)) for p in _check_turn_raw(state, turn, action, side, ctx)]


def _check_turn_raw(state: State, turn: Turn, action: object, side: Side, ctx) -> list[Problem]:
    m, pos = _map(), state.position
    step = turn.step
    if step.startswith("rout-"):
        return _check_rout(state, turn, action, side, ctx)
    if step in ("mines-passive", "mines-active") or isinstance(action, OpenMinefields):
        return _open_minefields_problems(state, turn, action, side)
    if step in _RETREAT_STEPS or isinstance(action, (Probe, RetreatSpeed)):
        return _check_retreat(state, turn, action, side, ctx)
    if step == "march-losses" or isinstance(action, MarchLosses):
        return _check_march_losses(state, turn, action, side, ctx)
    match action:
        case SupplyCheck(fortress=fortress, oasis=oasis):
            if step not in ("initial-supply", "final-supply"):
                return [Problem("RB 12.7", "Supply Checks come at the start and the end of the Player-Turn")]
            choices = sp.SupplyChoices(fortress=dict(fortress), oasis=dict(oasis))
            check = sp.initial_supply_check if step == "initial-supply" else sp.final_supply_check
            kwargs = {"recoverable": _recoverable(state, side)} if step == "initial-supply" else {}
            _, report = check(m, pos, side, choices, **kwargs)
            problems = list(report.problems)
            problems += [Problem(n.rule, f"{n.message}: one of {', '.join(n.candidates)}") for n in report.needed]
            return problems
        case PlayCards(count=count, label=label) if count == 0 and action.cards:
            return [Problem("RB 4.5", "a Pass plays no cards")]
        case PlayCards(count=count, label=label):
            if step != "option":
                return [Problem("RB 3.42", "supply cards for the turn option are played after the Initial "
                                           "Supply Check, before movement")]
            if count == 0:
                return [] if not label else [Problem("RB 4.5", "a Pass plays no cards and commits nothing")]
            if count < 0:
                return [Problem("RB 3.42", "a number of cards, 0 or more")]
            if label != option_label(turn.number) or not ctx.committed(label):
                return [Problem("RB 3.42", f"how many of the cards are real must be committed as "
                                           f"'{option_label(turn.number)}'")]
            real = cd.parse_real(ctx.value(label), count)
            return cd.play_problems(_hand(state, side), count, real, "RB 3.42") or _card_checks(
                state, side, action.cards, count, real, "RB 3.42", ctx)
        case mv.Move():
            if step == "refuse-withdraw":
                if action.withdrawal != "refuse" or action.origin != turn.refusing:
                    return [Problem("RB 10.2", f"now the Group Refusing Battle in {m.name(turn.refusing)} "
                                               "makes its Withdrawal Group Move")]
                problems = mv.refusal_problems(m, pos, turn.movement, action.origin)
            elif step == "movement":
                problems = []
            else:
                return [Problem("RB 3.44", "Moves are made in the Movement phase")]
            tokens = [u.token for u in action.units]
            result = mv.check_move(m, pos, turn.movement, action, _speeds(state, pos, tokens),
                                   network=_refusal_network(pos, action))
            return problems + list(result.problems)
        case ForcedMarches(marches=marches):
            if step != "movement":
                return [Problem("RB 6.4", "Forced Marches are announced at the end of the Movement phase")]
            if turn.movement.marches_announced:
                return [Problem("RB 6.4", "Forced Marches are announced once, after all Moves")]
            result = mv.check_forced_marches(m, pos, turn.movement, marches,
                                             _speeds(state, pos, [f.token for f in marches]))
            return list(result.problems)
        case EndMovement():
            return [] if step == "movement" else [Problem("RB 3.44", "the Movement phase is not under way")]
        case RefuseBattle() | routs.PursuitFire() | PursuitLosses() | Rout():
            return _check_refusal(state, turn, action, side, ctx)
        case AcceptBattle(hex=hex_):
            if step != "refuse" or hex_ not in turn.refusals:
                return [Problem("RB 8.4", f"there is no Attacked Group awaiting a decision in "
                                          f"{m.name(hex_) if hex_ in m.hexes else hex_}")]
            return []
        case RevealUnits():
            if step not in ("reveal-passive", "reveal-active"):
                return [Problem("RB 7.3", "units in battles are revealed when all Movement is complete")]
            missing = [b.token for b in _to_reveal(state, side)
                       if not ctx.opened(hidden.identity_label(b.token, state.versions.get(b.token, 0)))]
            if missing:
                return [Problem("RB 7.3", f"open the identity of every unit of yours in a battle: "
                                          f"{', '.join(missing)} not opened")]
            return []
        case cb.BattleSelection() | cb.FirePlan() | cb.LossAllocation():
            return _check_combat(state, turn, action, side)
        case Blitz(go=go):
            if step != "blitz":
                return [Problem("RB 3.45", "the Blitz phases follow the first Combat phase of a turn with three "
                                           "or more cards")]
            if not go:
                return []
            probs = []
            made = turn.movement.moves_made if turn.movement else 0
            if made > 1:
                probs.append(Problem("RB 4.4", f"a Blitz Turn is two Basic Turns: {made} Moves were made in the "
                                               "first Movement phase, which allows one"))
            if turn.assault:
                probs.append(Problem("RB 4.4", "a Blitz Turn is two Basic Turns: no Assault Battles"))
            if 0 <= turn.real < OPTION_COST["blitz"]:
                probs.append(Problem("RB 4.4", f"a Blitz Turn needs 3 real cards; {turn.real} of the "
                                               f"{turn.cards} played are real"))
            return probs
        case RevealOption():
            if step != "supply-revealed":
                return [Problem("RB 3.48", "the supply cards are revealed at the end of the Player-Turn")]
            if turn.cards == 0:
                return [Problem("RB 3.48", "a Pass played no cards")]
            if not ctx.opened(turn.option_label):
                return [Problem("RB 3.48", f"open the cards played '{turn.option_label}' in this event")]
            return _option_problems(state, turn, ctx.value(turn.option_label))
    return [Problem("", f"unknown action {action!r}")]


def _check_refusal(state: State, turn: Turn, action: object, side: Side, ctx) -> list[Problem]:
    """RB 10.2 Refusing Battle: the announcement, the Pursuit Fire, the losses."""
    m, pos = _map(), state.position
    match action:
        case RefuseBattle(hex=hex_, slowest=slowest):
            if turn.step != "refuse" or hex_ not in turn.refusals:
                return [Problem("RB 8.4", f"there is no Attacked Group awaiting a decision in "
                                          f"{m.name(hex_) if hex_ in m.hexes else hex_}")]
            problems = mv.refusal_problems(m, pos, turn.movement, hex_)
            refusers, _ = routs.refusal_split(pos, hex_, side)  # Disrupted units left behind Rout (T-12)
            speeds = _speeds(state, pos, refusers)
            problems += routs.check_slowest_speed(refusers, routs.SlowestSpeed(hex_, slowest), speeds).problems
            return problems
        case routs.PursuitFire(hex=hex_):
            if turn.step != "refuse-pursuit" or hex_ != turn.refusing:
                return [Problem("RB 10.5", "Pursuit Fire follows the refusing player's announcement of the "
                                           "slowest speed")]
            eligible = routs.pursuit_eligible(pos, hex_, side)
            speeds = _speeds(state, pos, [p.token for p in action.pursuers])
            return list(routs.check_pursuit(pos, action, turn.slowest, eligible=eligible, speeds=speeds).problems)
        case PursuitLosses(hex=hex_):
            if turn.step != "refuse-losses" or hex_ != turn.refusing:
                return [Problem("RB 10.5", "Pursuit hits are placed after the Pursuit dice")]
            return _pursuit_losses_problems(state, turn.refusers, turn.hits, action, side, ctx)
    return [Problem("RB 3.0", "not an order for now")]


def _pursuit_losses_problems(state: State, tokens: tuple[str, ...], hits: int, action: PursuitLosses,
                             side: Side, ctx) -> list[Problem]:
    """Pursuit hits placed in secret on ``tokens`` (T-10): each named once, new
    versions committed, the implied placement legal where this replay knows it."""
    eliminated, recommit = action.eliminated, action.recommit
    problems = []
    strange = [t for t in eliminated if t not in tokens] + [t for t in recommit if t in eliminated]
    if strange or sorted(set(eliminated) | set(recommit)) != sorted(tokens) \
            or len(set(recommit)) != len(recommit):
        problems.append(Problem("RB 10.5", "name each pursued unit once: eliminated, or with a new "
                                           "identity version (T-10)"))
        return problems
    for t in recommit:
        label = hidden.identity_label(t, state.versions.get(t, 0) + 1)
        if not ctx.committed(label):
            problems.append(Problem("RB 10.5", f"the new identity of {t} must be committed as '{label}'"))
    if problems:
        return problems
    old, new = _loss_identities(state, tokens, recommit, ctx)
    if old is not None and new is not None:
        problems += _loss_problems(state, side, action.hex, tokens, old, new, eliminated, hits)
    return problems


def _loss_labels(state: State, tokens: tuple[str, ...], recommit: tuple[str, ...]) -> tuple[str, ...]:
    """The old identity versions of the pursued units, then the survivors' new ones."""
    v = state.versions
    return tuple(hidden.identity_label(t, v.get(t, 0)) for t in tokens) + \
        tuple(hidden.identity_label(t, v.get(t, 0) + 1) for t in recommit)


def _loss_identities(state: State, tokens: tuple[str, ...], recommit: tuple[str, ...], ctx):
    """(old, new) identities by token when this replay knows them all, else (None, None)."""
    labels = _loss_labels(state, tokens, recommit)
    values = [ctx.value(lbl) for lbl in labels]
    if any(v is None for v in values):
        return None, None
    try:
        ids = [_decode(state, lbl, v) for lbl, v in zip(labels, values)]
    except ValueError:
        return None, None
    n = len(tokens)
    return dict(zip(tokens, ids[:n])), dict(zip(recommit, ids[n:]))


def _option_problems(state: State, turn: Turn, value: bytes | None) -> list[Problem]:
    """RB 3.48, 4.0-4.3: the cards turned up must pay for what the player did
    (the "Two Supply Cards Committed" sidebar: two Moves make an Offensive
    Turn, otherwise two cards are an Assault Turn)."""
    real = cd.parse_real(value, turn.cards)
    if real is None or real < 0:
        return [Problem("RB 3.48", f"the cards committed must say how many of the {turn.cards} are real")]
    made = turn.movement.moves_made if turn.movement else 0
    problems = []
    if made >= 2 and turn.assault:
        problems.append(Problem("RB 4.3", f"{made} Moves were made and Assault Battles fought in "
                                          f"{', '.join(map(_map().name, turn.assault))}: an Assault Turn allows "
                                          "one Move, an Offensive Turn no Assault"))
    needed, rule, what = cd.turn_cost(made, turn.fought, bool(turn.assault), turn.blitz)
    if real < needed:
        problems.append(Problem(rule, f"{what} needs {needed} real card{'s' if needed > 1 else ''}, but only "
                                      f"{real} of the {turn.cards} cards played {'is' if real == 1 else 'are'} real: "
                                      "an illegal Player-Turn"))
    return problems


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _to_reveal(state: State, side: Side) -> list[Block]:
    show = set(mv.units_to_reveal(state.position))
    return [b for b in state.position.blocks_of(side) if b.token in show]


def _apply_turn(state: State, turn: Turn, action: object, side: Side, ctx) -> State:
    m, pos = _map(), state.position
    if turn.step.startswith("rout-"):
        return _apply_rout(state, turn, action, side, ctx)
    if turn.step in _RETREAT_STEPS:
        return _apply_retreat(state, turn, action, side, ctx)
    if turn.step == "march-losses":
        return _apply_march_losses(state, turn, action, ctx)
    match action:
        case SupplyCheck(fortress=fortress, oasis=oasis):
            choices = sp.SupplyChoices(fortress=dict(fortress), oasis=dict(oasis))
            if turn.step == "initial-supply":
                recovered = _recoverable(state, side)
                pos, _ = sp.initial_supply_check(m, pos, side, choices, recoverable=recovered)
                state = _note_disruptions(state, pos, turn.number)
                return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="option"))
            pos, report = sp.final_supply_check(m, pos, side, choices)
            # RB 12.7, 11 sidebar (CB-11, T-13): engaged units newly Disrupted
            # for lack of a Supply Line and unshielded are eliminated; the
            # Disrupted units they shielded Rout (T-12).
            final = routs.final_supply_routs(pos, report.rout)
            state = _note_disruptions(state, final.position, turn.number)
            turn = msgspec.structs.replace(turn, supply_eliminated=turn.supply_eliminated + final.eliminated)
            where = {pos.block(t).hex for t in final.eliminated}
            pending_routs = [PendingRout(hex=h, side=owner, tokens=tokens) for h, owner, tokens in final.rout
                             if owner == side and h in where]
            return _start_routs(state, turn, pending_routs, "supply-revealed")
        case PlayCards(count=count, label=label):
            real = 0 if count == 0 else cd.parse_real(ctx.value(label), count)
            # RB 4.0-4.2: one Move, two with two real cards; a replay that cannot
            # see the cards allows what the count could pay for (checked at 3.48).
            allowed = 1 if count == 0 else min(count if real is None else real, 2)
            movement = mv.start_movement(pos, side, moves_allowed=allowed, withdrawal_only=count == 0,
                                         rommel_bonus=_scenario(state).special.rommel_bonus)
            hands = {**state.hands, side: cd.spend(_hand(state, side), count, real)}
            deck = cd.take(state.deck, side, action.cards, to_played=True)
            # A new Movement begins: the previous Player-Turn's arrows go.
            return msgspec.structs.replace(state, hands=hands, deck=deck, last_moves=(), turn=msgspec.structs.replace(
                turn, step="movement", cards=count, option_label=label, real=-1 if real is None else real,
                option="pass" if count == 0 else "", movement=movement))
        case mv.Move():
            tokens = [u.token for u in action.units]
            result = mv.check_move(m, pos, turn.movement, action, _speeds(state, pos, tokens))
            what = f"moved in event {ctx.seq} ({format_action(action)})"
            out = mv.apply_move(m, pos, turn.movement, action, defer_retreats=True)
            state = msgspec.structs.replace(state, position=out.position,
                                            obligations=state.obligations + _speed_obligations(result, ctx.seq, what))
            # Retreating units' routes are drawn when they are taken (T-35).
            state = _note_routes(state, pos, [(u.token, u.path) for u in action.units
                                              if out.turn.pending_retreat(u.token) is None], turn.number,
                                 withdrawal=action.withdrawal)
            state = _note_disruptions(state, out.position, turn.number)
            turn = msgspec.structs.replace(turn, movement=out.turn)
            if turn.step == "refuse-withdraw":
                return _after_refusal(state, turn, action.origin)
            # RB 11.4 (T-13): an Overrun interrupts movement for the Rout.
            return _start_routs(state, turn, _overrun_routs(state, turn, out.overruns), "movement")
        case ForcedMarches(marches=marches):
            result = mv.check_forced_marches(m, pos, turn.movement, marches,
                                             _speeds(state, pos, [f.token for f in marches]))
            movement = mv.announce_forced_marches(m, pos, turn.movement, marches)
            obligations = _speed_obligations(result, ctx.seq, f"forced march announced in event {ctx.seq}")
            return msgspec.structs.replace(state, obligations=state.obligations + obligations,
                                           turn=msgspec.structs.replace(turn, movement=movement))
        case EndMovement():
            return _next_retreat(state, turn)
        case AcceptBattle(hex=hex_):
            return _decided(state, turn, hex_)
        case RefuseBattle(hex=hex_, slowest=slowest):
            refusers, _ = routs.refusal_split(pos, hex_, side)
            result = routs.check_slowest_speed(refusers, routs.SlowestSpeed(hex_, slowest),
                                               _speeds(state, pos, refusers))
            what = f"Refused Battle in event {ctx.seq} announcing slowest speed {slowest}"
            obligations = _slowest_obligations(state, result, hex_, refusers, ctx.seq, what)
            turn = msgspec.structs.replace(turn, step="refuse-pursuit", refusing=hex_, refusers=refusers,
                                           slowest=slowest, pursuit=None, hits=0)
            return msgspec.structs.replace(state, turn=turn, obligations=state.obligations + tuple(obligations))
        case routs.PursuitFire(pursuers=pursuers):
            state = _with_pursuit_obligations(state, action, turn.slowest, ctx.seq)
            if not pursuers:  # fire withheld (RB 10.2 sidebar)
                return _after_pursuit(state, msgspec.structs.replace(turn, pursuit=action, hits=0))
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="refuse-dice",
                                                                               pursuit=action))
        case PursuitLosses(hex=hex_, recommit=recommit):
            state = _apply_pursuit_losses(state, turn.refusers, turn.hits, action, ctx)
            if not recommit:
                return _after_refusal(state, turn, hex_)
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="refuse-withdraw"))
        case OpenMinefields():
            return _after_mines(_with_mines(state, side, due=(), fresh=()), turn)
        case RevealUnits():
            show = {b.token for b in _to_reveal(state, side)}
            pos = pos.replace_blocks([msgspec.structs.replace(b, revealed=True) for b in pos.blocks
                                      if b.token in show])
            state = msgspec.structs.replace(state, position=pos)
            if turn.step == "reveal-passive" and _to_reveal(state, turn.active):
                return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="reveal-active"))
            return _to_combat(state, turn)
        case cb.BattleSelection(active=active, assault=assault):
            return _next_battle(state, msgspec.structs.replace(turn, battles=tuple(active), assault=tuple(assault),
                                                               fought=turn.fought or bool(active)))
        case cb.FirePlan():
            step = "defensive-dice" if turn.step == "defensive-fire" else "offensive-dice"
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step, fire=action))
        case cb.LossAllocation():
            fighting = _combat_position(state, turn)
            out = cb.apply_allocation(fighting, turn.fire_result, action, units=_roster(state).get)
            # T-34: the new CVs are public; they stand for the committed ones from now on.
            hit = {hidden.identity_label(b.token, state.versions.get(b.token, 0)): b.cv
                   for b in out.position.blocks if pos.has_block(b.token) and pos.block(b.token).cv != b.cv}
            after = _with_retreaters(pos, out.position, turn.retreaters) if turn.probing else out.position
            state = msgspec.structs.replace(state, position=after, public_cv={**state.public_cv, **hit})
            # T-11, T-12: unshielded Disrupted units Rout at once (RB 11.3); only
            # enemy units that have not fired in this Combat Round Pursue.
            by_hex: dict[tuple[str, Side], list[str]] = {}
            for t in out.unshielded:
                b = out.position.block(t)
                by_hex.setdefault((b.hex, b.side), []).append(t)
            # In a Probe the Disengaging units still shield their side until
            # they leave; what is left behind Routs after them (RB 10.3 step 4).
            # Nor do the Disengaging units Pursue (T-37).
            fired = turn.fire_result.fired + (turn.retreaters if turn.probing else ())
            pending_routs = [PendingRout(hex=h, side=owner, tokens=tuple(ts), fired=fired)
                             for (h, owner), ts in by_hex.items() if not (turn.probing and owner == turn.active)]
            return _start_routs(state, turn, pending_routs, turn.step)
        case Blitz(go=go):
            if not go:
                return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="final-supply"))
            movement = mv.start_blitz_movement(pos, turn.movement)
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(
                turn, step="movement", blitz=True, movement=movement, battles=(), assault=()))
        case RevealOption():
            real = cd.parse_real(ctx.value(turn.option_label), turn.cards) or 0
            made = turn.movement.moves_made if turn.movement else 0
            # RB 3.48: the cards played are shown (their keys opened in this event).
            state = msgspec.structs.replace(state, deck=cd.queue_show(
                state.deck, side, state.deck.played.get(side, ()), "play", turn.option_label))
            return _end_turn(state, msgspec.structs.replace(turn, real=real, option=cd.option_name(
                real, made, bool(turn.assault), turn.blitz)))
    raise ValueError(f"unchecked action {action!r}")


def _slowest_obligations(state: State, result: routs.PursuitCheck, hex_: str, tokens: tuple[str, ...], seq: int,
                         what: str) -> tuple[Obligation, ...]:
    """The deferred checks of a slowest-speed announcement (RB 10.5): a speed
    range per hidden unit, and "slowest" over the current identity versions."""
    obligations = []
    for ob in result.obligations:
        obligations += [Obligation(token=t, seq=seq, kind="speed-range", rule=ob.rule, what=what,
                                   hex=hex_, needed=ob.min_speed, maximum=ob.max_speed) for t in ob.tokens]
        if ob.slowest:
            labels = tuple(hidden.identity_label(t, state.versions.get(t, 0)) for t in tokens)
            obligations.append(Obligation(token=tokens[0], seq=seq, kind="slowest", rule=ob.rule,
                                          what=what, hex=hex_, needed=ob.min_speed, tokens=tokens,
                                          labels=labels))
    return tuple(obligations)


def _with_pursuit_obligations(state: State, fire: routs.PursuitFire, slowest: int, seq: int) -> State:
    """RB 10.5: each pursuer rolls dice for its speed against the announced
    ``slowest``; what this replay cannot see of a hidden pursuer's speed is
    kept as a "speed-range" obligation (Refusals, Retreats and Routs alike)."""
    tokens = [p.token for p in fire.pursuers]
    result = routs.check_pursuit(state.position, fire, slowest, eligible=tokens,
                                 speeds=_speeds(state, state.position, tokens))
    obligations = tuple(Obligation(token=t, seq=seq, kind="speed-range", rule=ob.rule,
                                   what=f"pursued in event {seq} against slowest speed {slowest}",
                                   hex=fire.hex, needed=ob.min_speed, maximum=ob.max_speed)
                        for ob in result.obligations for t in ob.tokens)
    return msgspec.structs.replace(state, obligations=state.obligations + obligations)


def _apply_pursuit_losses(state: State, tokens: tuple[str, ...], hits: int, action: PursuitLosses, ctx) -> State:
    """T-10: survivors get new identity versions, the eliminated leave; what this
    replay cannot check becomes a "losses" obligation."""
    pos, hex_, eliminated, recommit = state.position, action.hex, action.eliminated, action.recommit
    _, new = _loss_identities(state, tokens, recommit, ctx)
    obligations = state.obligations
    if new is None:
        obligations += (Obligation(token=tokens[0], seq=ctx.seq, kind="losses", rule="RB 10.5",
                                   what=f"Pursuit losses placed in event {ctx.seq} ({hits} hits)",
                                   hex=hex_, tokens=tokens, labels=_loss_labels(state, tokens, recommit),
                                   eliminated=eliminated, hits=hits),)
    versions = {**state.versions, **{t: state.versions.get(t, 0) + 1 for t in recommit}}
    changed = []
    for t in recommit:
        b = pos.block(t)
        ident = ctx.value(hidden.identity_label(t, versions[t]))
        if ident is not None:
            unit, cv = hidden.decode_identity(ident)
            changed.append(msgspec.structs.replace(b, unit=unit, cv=cv))
        elif b.unit:
            # The hits went on upright blocks (RB 10.5, 7.3): a unit this replay
            # knew now has a CV it cannot see. Its face is forgotten rather than
            # kept stale; its new identity is checked when opened (T-10, T-40).
            changed.append(msgspec.structs.replace(b, unit="", cv=0, revealed=False))
    pos = cb.eliminate(pos.replace_blocks(changed), eliminated)
    return msgspec.structs.replace(state, position=pos, versions=versions, obligations=obligations)


def _refusal_network(pos: Position, move: mv.Move):
    """RB 5.3 condition 3 for a refusing Group that leaves Disrupted units behind
    (EX-26): they Rout out of the hex at once, so the Supply Network is judged
    without them (T-12)."""
    if move.withdrawal != "refuse":
        return None
    side = next((pos.block(u.token).side for u in move.units if pos.has_block(u.token)), None)
    left = [b.token for b in pos.blocks_in(move.origin, side)] if side else []
    left = [t for t in left if pos.block(t).disrupted]
    if not left:
        return None
    return lambda mm, pp, ss: mv._default_network(mm, cb.eliminate(pp, [t for t in left if pp.has_block(t)]), ss)


def _after_refusal(state: State, turn: Turn, hex_: str) -> State:
    """The refusing Group has withdrawn (or was wiped out): Disrupted units left
    behind Rout, pursued by units that have not fired (EX-26, T-12)."""
    left = tuple(b.token for b in state.position.blocks_in(hex_, turn.passive) if b.disrupted)
    if not left or not state.position.blocks_in(hex_, turn.active):
        return _decided(state, turn, hex_)
    fired = tuple(p.token for p in turn.pursuit.pursuers) if turn.pursuit is not None else ()
    return _start_routs(state, turn, [PendingRout(hex=hex_, side=turn.passive, tokens=left, fired=fired)], "refuse")


# -- Retreats and Probes of the active player (RB 10.3, 10.4, 10.41; T-35..T-38) -----------------

#: The steps of a Retreat; a Probe's Combat Round runs in the combat steps (``turn.probing``).
_RETREAT_STEPS = ("retreat-probe", "probe-reveal", "retreat-slowest", "retreat-pursuit", "retreat-losses")


def _combat_position(state: State, turn: Turn) -> Position:
    """The position a Combat Round is fought in. In Probe Combat the
    Disengaging units, upright in the hex, take no part: only the Rearguard
    fights the Probing units (RB 10.41)."""
    if not turn.probing:
        return state.position
    return cb.eliminate(state.position, [t for t in turn.retreaters if state.position.has_block(t)])


def _with_retreaters(before: Position, fought: Position, retreaters: tuple[str, ...]) -> Position:
    """The position after a Probe's losses (``fought``: ``_combat_position``
    with the hits applied): the Disengaging units and the battle put back."""
    now = {b.token: b for b in fought.blocks}
    blocks = tuple(now.get(b.token, b) for b in before.blocks if b.token in now or b.token in retreaters)
    return mv._prune_battles(msgspec.structs.replace(fought, blocks=blocks, battles=before.battles))


def _next_retreat(state: State, turn: Turn) -> State:
    """After all other Moves (RB 10.3, 10.4 procedures, T-35): each battle hex
    the active player announced Disengagements from, in hex order, then the
    Forced March dice, then the Refusals (RB 8.4)."""
    turn = msgspec.structs.replace(turn, retreating="", retreaters=(), rearguard=(), probing=False, probe_fired=(),
                                   slowest=0, pursuit=None, hits=0, battles=(), fire=None, fire_result=None)
    pos = state.position
    pending_retreats = mv.pending_retreats(pos, turn.movement)
    if not pending_retreats:
        if turn.movement.marches:
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="forced-march"))
        return _after_movement(state, turn)
    r = pending_retreats[0]
    turn = msgspec.structs.replace(turn, retreating=r.hex, retreaters=r.units, rearguard=r.rearguard)
    pursuers = routs.pursuit_eligible(pos, r.hex, turn.passive)
    if r.kind == "partial":
        # RB 10.4: no combat in that battle this Player-Turn (CB-03), Probe or not.
        turn = msgspec.structs.replace(turn, partial=turn.partial + (r.hex,))
        step = "retreat-probe"
    else:
        step = "retreat-slowest"
    if not pursuers:  # nobody to Probe or Pursue: the units just leave
        return _complete_retreat(state, turn)
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step))


def _probers_to_reveal(state: State, turn: Turn) -> list[Block]:
    """The Probing units not yet revealed (RB 8.5: combat is fought face up)."""
    return [b for b in state.position.blocks_in(turn.retreating, turn.passive) if not b.disrupted and not b.revealed]


def _rearguard_to_reveal(state: State, turn: Turn) -> list[Block]:
    return [b for b in map(state.position.block, turn.rearguard) if not b.revealed]


def _turn_up(state: State, blocks: list[Block]) -> State:
    return msgspec.structs.replace(state, position=state.position.replace_blocks(
        [msgspec.structs.replace(b, revealed=True) for b in blocks]))


def _unopened(state: State, blocks: list[Block], ctx) -> list[str]:
    return [b.token for b in blocks if not ctx.opened(hidden.identity_label(b.token, state.versions.get(b.token, 0)))]


def _start_probe(state: State, turn: Turn) -> State:
    """RB 10.41: one Combat Round in the Retreat hex, the Rearguard firing first."""
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(
        turn, probing=True, battles=(turn.retreating,), step="defensive-fire", fire=None, fire_result=None,
        probe_fired=()))


def _after_probe(state: State, turn: Turn) -> State:
    """RB 10.41: a Rearguard wiped out makes the Partial Retreat a Full one,
    pursued by the Probing units that did not fire; otherwise the Disengaging
    units leave without Pursuit Fire."""
    turn = msgspec.structs.replace(turn, probing=False, battles=(), fire=None, fire_result=None)
    pos = state.position
    if any(pos.has_block(t) for t in turn.rearguard) \
            or not routs.pursuit_eligible(pos, turn.retreating, turn.passive, turn.probe_fired):
        return _complete_retreat(state, turn)
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="retreat-slowest"))


def _after_retreat_pursuit(state: State, turn: Turn) -> State:
    """RB 10.5: hits to place, else straight to the announced Moves."""
    if turn.hits:
        return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="retreat-losses"))
    return _complete_retreat(state, turn)


def _complete_retreat(state: State, turn: Turn) -> State:
    """Step 3 of the Retreat procedures (RB 10.3): the surviving Retreating
    units make their announced Moves and are Disrupted (RB 7.2); step 4: the
    Disrupted units left in the hex unshielded Rout, pursued by units that
    have not fired (T-12, T-36). Then the next Retreat."""
    m, hex_ = _map(), turn.retreating
    pos, movement = state.position, turn.movement
    for r in [x for x in movement.retreating if x.hex == hex_]:
        pos, movement = mv.complete_retreat(m, pos, movement, r.token)
        if pos.has_block(r.token) and pos.block(r.token).hex != hex_:
            state = _note_routes(state, state.position, [(r.token, r.path)], turn.number, withdrawal=r.withdrawal)
    state = _note_disruptions(msgspec.structs.replace(state, position=pos), pos, turn.number)
    turn = msgspec.structs.replace(turn, movement=movement)
    left = cb.unshielded_disrupted(pos, hex_, turn.active)
    fired = tuple(p.token for p in turn.pursuit.pursuers) if turn.pursuit is not None else ()
    pending_routs = [PendingRout(hex=hex_, side=turn.active, tokens=left, fired=fired + turn.probe_fired)] \
        if left else []
    return _start_routs(state, turn, pending_routs, "retreat-losses")


def _check_retreat(state: State, turn: Turn, action: object, side: Side, ctx) -> list[Problem]:
    """A Retreat of the active player (RB 10.3, 10.4, 10.41): the Probe, the
    slowest speed, the Pursuit Fire, the losses, the Rearguard revealed."""
    m, pos = _map(), state.position
    hex_, step = turn.retreating, turn.step
    where = m.name(hex_) if hex_ in m.hexes else "no hex"
    match action:
        case Probe(hex=h, go=go):
            if step != "retreat-probe" or h != hex_:
                return [Problem("RB 10.41", "Probe Combat is provoked against a Partial Retreat, after all other "
                                            f"movement (now: {_PROMPTS.get(step, step)})")]
            missing = _unopened(state, _probers_to_reveal(state, turn), ctx) if go else []
            if missing:
                return [Problem("RB 8.5", f"open the identity of every Probing unit: {', '.join(missing)} not opened")]
            return []
        case RetreatSpeed(hex=h, slowest=slowest):
            if step != "retreat-slowest" or h != hex_:
                return [Problem("RB 10.5", "the slowest speed is announced when a Retreat is pursued "
                                           f"(now: {_PROMPTS.get(step, step)})")]
            return list(routs.check_slowest_speed(turn.retreaters, routs.SlowestSpeed(h, slowest),
                                                  _speeds(state, pos, turn.retreaters)).problems)
        case routs.PursuitFire(hex=h):
            if step != "retreat-pursuit" or h != hex_:
                return [Problem("RB 10.5", "Pursuit Fire follows the Retreating player's announcement of the "
                                           "slowest speed")]
            eligible = routs.pursuit_eligible(pos, h, side, turn.probe_fired)
            speeds = _speeds(state, pos, [p.token for p in action.pursuers])
            return list(routs.check_pursuit(pos, action, turn.slowest, eligible=eligible, speeds=speeds).problems)
        case PursuitLosses(hex=h):
            if step != "retreat-losses" or h != hex_:
                return [Problem("RB 10.5", "Pursuit hits are placed after the Pursuit dice")]
            return _pursuit_losses_problems(state, turn.retreaters, turn.hits, action, side, ctx)
        case RevealUnits():
            if step != "probe-reveal":
                return [Problem("RB 7.3", "units in battles are revealed when all Movement is complete")]
            missing = _unopened(state, _rearguard_to_reveal(state, turn), ctx)
            if missing:
                return [Problem("RB 8.5", f"open the identity of every Rearguard unit: {', '.join(missing)} not "
                                          "opened")]
            return []
    return [Problem("RB 10.3", f"the Retreat from {where} is under way: {_PROMPTS.get(step, step)}")]


def _apply_retreat(state: State, turn: Turn, action: object, side: Side, ctx) -> State:
    pos = state.position
    match action:
        case Probe(go=False):  # RB 10.41: no Probe, no Pursuit Fire
            return _complete_retreat(state, turn)
        case Probe():
            state = _turn_up(state, _probers_to_reveal(state, turn))
            if _rearguard_to_reveal(state, turn):
                return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="probe-reveal"))
            return _start_probe(state, turn)
        case RevealUnits():
            return _start_probe(_turn_up(state, _rearguard_to_reveal(state, turn)), turn)
        case RetreatSpeed(hex=hex_, slowest=slowest):
            result = routs.check_slowest_speed(turn.retreaters, routs.SlowestSpeed(hex_, slowest),
                                               _speeds(state, pos, turn.retreaters))
            what = f"Retreated in event {ctx.seq} announcing slowest speed {slowest}"
            obligations = _slowest_obligations(state, result, hex_, turn.retreaters, ctx.seq, what)
            turn = msgspec.structs.replace(turn, step="retreat-pursuit", slowest=slowest, pursuit=None, hits=0)
            return msgspec.structs.replace(state, turn=turn, obligations=state.obligations + obligations)
        case routs.PursuitFire(pursuers=pursuers):
            state = _with_pursuit_obligations(state, action, turn.slowest, ctx.seq)
            turn = msgspec.structs.replace(turn, pursuit=action, hits=0)
            if not pursuers:  # fire withheld (RB 10.3 sidebar "Pursuit Deception")
                return _complete_retreat(state, turn)
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="retreat-dice"))
        case PursuitLosses(recommit=recommit):
            state = _apply_pursuit_losses(state, turn.retreaters, turn.hits, action, ctx)
            return _complete_retreat(state, msgspec.structs.replace(turn, retreaters=tuple(recommit)))
    raise ValueError(f"unchecked action {action!r}")


# -- Retreat Forced Marches (RB 6.4 sidebar, T-39) -------------------------------------------------

def _version_identity(state: State, token: str, ctx, version: int | None = None) -> tuple[str, int] | None:
    """(unit, CV) of ``token``'s identity ``version`` (default: the current
    one) where this replay can read that commitment, else None. Unlike
    ``_known_identity`` it never trusts a block's face that a secret new
    version may have outdated (Pursuit losses, T-10)."""
    if version is None:
        version = state.versions.get(token, 0)
    label = hidden.identity_label(token, version)
    value = ctx.value(label)
    if value is None:
        return None
    try:
        return _decode(state, label, value)
    except ValueError:
        return None


def _check_march_losses(state: State, turn: Turn, action: object, side: Side, ctx) -> list[Problem]:
    """RB 6.4 sidebar "Retreat Forced Marches" (T-39): each failed Retreating
    unit named once, its new identity committed one step less (RB 2.3:
    eliminated at its last step), checked where this replay can see it."""
    if turn.step != "march-losses" or not isinstance(action, MarchLosses):
        if isinstance(action, MarchLosses):
            return [Problem("RB 6.4", "only a Retreating unit whose Forced March has just failed loses a step "
                                      "(RB 6.4 sidebar \"Retreat Forced Marches\")")]
        return [Problem("RB 6.4", f"first {_PROMPTS['march-losses']}")]
    eliminated, recommit = action.eliminated, action.recommit
    named = list(eliminated) + list(recommit)
    if sorted(named) != sorted(turn.march_losses) or len(set(named)) != len(named):
        return [Problem("RB 6.4", "name each Retreating unit whose Forced March failed once: eliminated at its "
                                  "last step (RB 2.3), or with a new identity version one step less (T-39)")]
    problems = []
    for t in recommit:
        label = hidden.identity_label(t, state.versions.get(t, 0) + 1)
        if not ctx.committed(label):
            problems.append(Problem("RB 6.4", f"the new identity of {t} must be committed as '{label}'"))
    if problems:
        return problems
    roster = _roster(state)
    for t in turn.march_losses:
        old = _version_identity(state, t, ctx)
        if old is None:
            continue  # an obligation decides it when the identity opens (T-39)
        new = None
        if t in recommit:
            value = ctx.value(hidden.identity_label(t, state.versions.get(t, 0) + 1))
            if value is not None:
                try:
                    new = hidden.decode_identity(value)
                except ValueError as exc:
                    problems.append(Problem("RB 2.0", f"block {t}: {exc}"))
                    continue
        problems += _step_loss_problems(roster, t, old, new, t in eliminated, "RB 6.4", _MARCH_LOSS)
    return problems


def _apply_march_losses(state: State, turn: Turn, action: MarchLosses, ctx) -> State:
    """T-39: the new identity versions; a unit the opponent knows loses its step
    in the open (its new CV public, the commitment checked when opened); what
    this replay cannot check becomes a "march-loss" obligation. Then the
    Overrun Routs of the same dice, and movement ends as before (T-13, T-35)."""
    pos, roster = state.position, _roster(state)
    eliminated, recommit = action.eliminated, action.recommit
    what = f"{_MARCH_LOSS} in event {ctx.seq} ({format_action(action)})"
    versions = {**state.versions, **{t: state.versions.get(t, 0) + 1 for t in recommit}}
    obligations = list(state.obligations)
    changed = []
    for t in turn.march_losses:
        b = pos.block(t)
        old_label = hidden.identity_label(t, state.versions.get(t, 0))
        new_label = hidden.identity_label(t, versions[t]) if t in recommit else ""
        value = ctx.value(new_label) if new_label else None
        if value is not None:
            unit, cv = hidden.decode_identity(value)
            changed.append(msgspec.structs.replace(b, unit=unit, cv=cv))
        elif b.unit and t in recommit:  # a unit this replay knows: one step off its public CV
            try:
                step = roster.get(b.unit).cv_per_step
            except UnknownUnit:
                step = 0
            changed.append(msgspec.structs.replace(b, cv=b.cv - step))
        old = _version_identity(state, t, ctx)
        if old is not None and (value is not None or t in eliminated):
            continue  # checked at once (_check_march_losses)
        labels = (() if old is not None else (old_label,)) + ((new_label,) if new_label else ())
        obligations.append(Obligation(token=t, seq=ctx.seq, kind="march-loss", rule="RB 6.4", what=what,
                                      hex=b.hex, tokens=(t,), labels=labels, unit=old[0] if old else "",
                                      cv=old[1] if old else 0, eliminated=(t,) if t in eliminated else ()))
    pos = cb.eliminate(pos.replace_blocks(changed), eliminated)
    state = msgspec.structs.replace(state, position=pos, versions=versions, obligations=tuple(obligations))
    overruns = turn.march_overruns
    turn = msgspec.structs.replace(turn, march_losses=(), march_overruns=())
    return _start_routs(state, turn, _overrun_routs(state, turn, overruns), "forced-march")


# -- Routs (RB 11.3, T-12) ------------------------------------------------------------------------

def _start_routs(state: State, turn: Turn, pending_routs, resume: str) -> State:
    """Queue Routs; they interrupt play and then ``resume`` goes on."""
    if not pending_routs:
        return _resume(state, msgspec.structs.replace(turn, step=resume))
    queue = turn.rout_queue + tuple(pending_routs)
    turn = msgspec.structs.replace(turn, rout_queue=queue, rout_resume=turn.rout_resume or resume)
    if turn.step.startswith("rout-"):  # already routing: the new ones follow
        return msgspec.structs.replace(state, turn=turn)
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="rout-slowest"))


def _resume(state: State, turn: Turn) -> State:
    """Back to where the turn was when the Routs began."""
    if turn.step == "refuse":
        return _decided(state, turn, turn.refusing)
    if turn.step == "movement":  # after an Overrun (RB 11.4): the active player moves on
        return msgspec.structs.replace(state, turn=turn)
    if turn.step == "forced-march":
        return _after_movement(state, turn)
    if turn.step == "retreat-losses":  # after the Routs a Retreat left behind (RB 10.3 step 4)
        return _next_retreat(state, turn)
    if turn.step == "supply-revealed":  # after the Final Supply Check (RB 12.7)
        return _end_turn(state, turn) if turn.cards == 0 else msgspec.structs.replace(state, turn=turn)
    return _after_losses(state, turn)


def _overrun_routs(state: State, turn: Turn, hexes) -> list[PendingRout]:
    """RB 11.4 Overruns (T-13): the Disrupted enemy units in each Overrun hex
    Rout; only the Overrunning units (of both Moves of an Offensive Turn, RB 11
    sidebar) may Pursue, so every other active unit there counts as fired."""
    pos, out = state.position, []
    for h in dict.fromkeys(hexes):
        if not routs.is_overrun(pos, h, turn.active):
            continue
        pursuers = set(routs.overrun_pursuers(pos, turn.movement, h))
        fired = tuple(b.token for b in pos.blocks_in(h, turn.active) if b.token not in pursuers)
        tokens = tuple(b.token for b in pos.blocks_in(h, turn.passive))
        out.append(PendingRout(hex=h, side=turn.passive, tokens=tokens, fired=fired))
    return out


def _rout_done(state: State, turn: Turn) -> State:
    r = turn.rout_queue[0]
    pos = state.position
    if pos.battle(r.hex) is not None and len({b.side for b in pos.blocks_in(r.hex)}) < 2:
        state = msgspec.structs.replace(state, position=pos.with_battles(
            [b for b in pos.battles if b.hex != r.hex]))
    turn = msgspec.structs.replace(turn, rout_queue=turn.rout_queue[1:], routers=(), rout_slowest=0,
                                   rout_pursuit=None, rout_hits=0)
    if turn.rout_queue:
        return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="rout-slowest"))
    resume = turn.rout_resume
    return _resume(state, msgspec.structs.replace(turn, step=resume, rout_resume=""))


def _rout_after_pursuit(state: State, turn: Turn, hits: int) -> State:
    turn = msgspec.structs.replace(turn, rout_hits=hits)
    if hits:
        return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="rout-losses"))
    return _rout_withdraw_or_eliminate(state, turn)


def _rout_withdraw_or_eliminate(state: State, turn: Turn) -> State:
    """RB 11.3: the survivors Withdraw by Group Move; those unable are eliminated."""
    routers = tuple(t for t in turn.routers if state.position.has_block(t))
    pos, gone = routs.eliminate_unable(_map(), state.position, routers)
    routers = tuple(t for t in routers if t not in gone)
    state = msgspec.structs.replace(state, position=pos)
    turn = msgspec.structs.replace(turn, routers=routers)
    if routers:
        return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="rout-withdraw"))
    return _rout_done(state, turn)


def _known_identity(state: State, token: str, ctx) -> tuple[str, int] | None:
    """The current identity of ``token`` as this replay knows it: from the
    position (its own units, opened or revealed ones), else the committed value."""
    b = state.position.block(token)
    if b.unit:
        return b.unit, b.cv
    label = hidden.identity_label(token, state.versions.get(token, 0))
    value = ctx.value(label)
    try:
        return _decode(state, label, value) if value is not None else None
    except ValueError:
        return None


def _check_rout(state: State, turn: Turn, action: object, side: Side, ctx) -> list[Problem]:
    m, pos = _map(), state.position
    r = turn.rout_queue[0]
    where = m.name(r.hex)
    match action:
        case Rout(hex=hex_, slowest=slowest, eliminated=eliminated, recommit=recommit):
            if turn.step != "rout-slowest" or hex_ != r.hex:
                return [Problem("RB 11.3", f"now the Rout in {where} begins: 'rout {where} slowest <speed>'")]
            if sorted(set(eliminated) | set(recommit)) != sorted(r.tokens) or set(eliminated) & set(recommit) \
                    or len(set(recommit)) != len(recommit) or len(set(eliminated)) != len(eliminated):
                return [Problem("RB 11.3", "name each Routed unit once: eliminated by Rout Attrition, or with "
                                           "a new identity version (T-12)")]
            problems = []
            for t in recommit:
                label = hidden.identity_label(t, state.versions.get(t, 0) + 1)
                if not ctx.committed(label):
                    problems.append(Problem("RB 11.3", f"the new identity of {t} must be committed as '{label}'"))
            if problems:
                return problems
            old = {t: _known_identity(state, t, ctx) for t in r.tokens}
            new = {}
            for t in recommit:
                value = ctx.value(hidden.identity_label(t, state.versions.get(t, 0) + 1))
                new[t] = hidden.decode_identity(value) if value is not None else None
            if None not in old.values() and None not in new.values():
                problems += _attrition_problems(_roster(state), r.tokens, old, new, eliminated)
            if not recommit:
                if slowest:
                    problems.append(Problem("RB 11.3", "no Routed unit survives: announce no slowest speed"))
                return problems
            problems += routs.check_slowest_speed(recommit, routs.SlowestSpeed(hex_, slowest),
                                                  _speeds(state, pos, recommit)).problems
            return problems
        case routs.PursuitFire(hex=hex_):
            if turn.step != "rout-pursuit" or hex_ != r.hex:
                return [Problem("RB 10.5", f"Pursuit Fire on the Rout in {where} follows the announcement of "
                                           "the slowest speed")]
            eligible = routs.pursuit_eligible(pos, hex_, side, r.fired)
            speeds = _speeds(state, pos, [p.token for p in action.pursuers])
            return list(routs.check_pursuit(pos, action, turn.rout_slowest, eligible=eligible,
                                            speeds=speeds).problems)
        case PursuitLosses(hex=hex_):
            if turn.step != "rout-losses" or hex_ != r.hex:
                return [Problem("RB 10.5", "Pursuit hits are placed after the Pursuit dice")]
            return _pursuit_losses_problems(state, turn.routers, turn.rout_hits, action, side, ctx)
        case mv.Move():
            if turn.step != "rout-withdraw" or action.withdrawal != "rout" or action.origin != r.hex \
                    or sorted(u.token for u in action.units) != sorted(turn.routers):
                return [Problem("RB 11.3", f"now the Routed units in {where} make their Withdrawal Group Move: "
                                           f"'rout {where} -> <destination>'")]
            tokens = [u.token for u in action.units]
            result = mv.check_move(m, pos, turn.movement, action, _speeds(state, pos, tokens))
            return list(result.problems)
    return [Problem("RB 11.3", f"a Rout in {where} is under way ({_PROMPTS[turn.step]})")]


def _apply_rout(state: State, turn: Turn, action: object, side: Side, ctx) -> State:
    m, pos = _map(), state.position
    r = turn.rout_queue[0]
    match action:
        case Rout(hex=hex_, slowest=slowest, eliminated=eliminated, recommit=recommit):
            # RB 11.3 Rout Attrition, in secret: new identity versions (T-12).
            roster = _roster(state)
            what = f"Rout Attrition in event {ctx.seq} ({format_action(action)})"
            versions = {**state.versions, **{t: state.versions.get(t, 0) + 1 for t in recommit}}
            obligations = list(state.obligations)
            changed = []
            for t in r.tokens:
                b = pos.block(t)
                old_label = hidden.identity_label(t, state.versions.get(t, 0))
                new_label = hidden.identity_label(t, versions[t]) if t in recommit else ""
                value = ctx.value(new_label) if new_label else None
                if value is not None:
                    unit, cv = hidden.decode_identity(value)
                    changed.append(msgspec.structs.replace(b, unit=unit, cv=cv))
                elif b.unit and t in recommit:  # a known unit: its new CV is public
                    changed.append(msgspec.structs.replace(b, cv=b.cv - roster.get(b.unit).cv_per_step))
                old_known = _known_identity(state, t, ctx)
                if old_known is not None and (value is not None or t in eliminated):
                    continue  # checked at once
                labels = (() if b.unit else (old_label,)) + ((new_label,) if new_label else ())
                obligations.append(Obligation(token=t, seq=ctx.seq, kind="attrition", rule="RB 11.3", what=what,
                                              hex=hex_, tokens=(t,), labels=labels, unit=b.unit,
                                              cv=b.cv if b.unit else 0,
                                              eliminated=(t,) if t in eliminated else ()))
            pos = cb.eliminate(pos.replace_blocks(changed), eliminated)
            state = msgspec.structs.replace(state, position=pos, versions=versions, obligations=tuple(obligations))
            if recommit:
                result = routs.check_slowest_speed(recommit, routs.SlowestSpeed(hex_, slowest),
                                                   _speeds(state, pos, recommit))
                what = f"Routed in event {ctx.seq} announcing slowest speed {slowest}"
                state = msgspec.structs.replace(state, obligations=state.obligations + _slowest_obligations(
                    state, result, hex_, tuple(recommit), ctx.seq, what))
            turn = msgspec.structs.replace(turn, routers=tuple(recommit), rout_slowest=slowest, rout_pursuit=None,
                                           rout_hits=0)
            if not recommit:
                return _rout_done(state, turn)
            if not routs.pursuit_eligible(pos, hex_, enemy_of(r.side), r.fired):
                return _rout_after_pursuit(state, turn, 0)
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="rout-pursuit"))
        case routs.PursuitFire(pursuers=pursuers):
            state = _with_pursuit_obligations(state, action, turn.rout_slowest, ctx.seq)
            turn = msgspec.structs.replace(turn, rout_pursuit=action)
            if not pursuers:
                return _rout_after_pursuit(state, turn, 0)
            return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="rout-dice"))
        case PursuitLosses(recommit=recommit):
            state = _apply_pursuit_losses(state, turn.routers, turn.rout_hits, action, ctx)
            return _rout_withdraw_or_eliminate(state, msgspec.structs.replace(turn, routers=tuple(recommit)))
        case mv.Move():
            tokens = [u.token for u in action.units]
            result = mv.check_move(m, pos, turn.movement, action, _speeds(state, pos, tokens))
            what = f"moved in event {ctx.seq} ({format_action(action)})"
            out = mv.apply_move(m, pos, turn.movement, action)
            state = _note_routes(state, pos, [(u.token, u.path) for u in action.units], turn.number,
                                 withdrawal=action.withdrawal)
            pos = routs.disrupt_again(out.position, tokens)  # RB 11.3: Disrupted again
            state = msgspec.structs.replace(state, position=pos, obligations=state.obligations
                                            + _speed_obligations(result, ctx.seq, what),
                                            disrupted_in={**state.disrupted_in, **{t: turn.number for t in tokens}})
            state = _note_disruptions(state, pos, turn.number)
            return _rout_done(state, msgspec.structs.replace(turn, movement=out.turn))
    raise ValueError(f"unchecked action {action!r}")


def _note_disruptions(state: State, pos: Position, number: int) -> State:
    """Record when units became Disrupted (RB 11.2) and forget recovered ones."""
    since = {t: n for t, n in state.disrupted_in.items() if pos.has_block(t) and pos.block(t).disrupted}
    for b in pos.blocks:
        if b.disrupted and b.token not in since:
            since[b.token] = number
    return msgspec.structs.replace(state, position=pos, disrupted_in=since)


def _note_routes(state: State, pos: Position, routes: list[tuple[str, tuple[str, ...]]], number: int, *,
                 withdrawal: str = "", forced: bool = False) -> State:
    """Add the routes (token, hexes) just moved along, in Player-Turn
    ``number``, to ``last_moves`` (``pos``: the position before they moved).
    A route going on from where the block's last one ended (a Forced March
    after its Move) extends it: one arrow per block's journey."""
    moves = list(state.last_moves)
    for token, path in routes:
        if len(path) < 2:
            continue
        last = next((i for i in reversed(range(len(moves))) if moves[i].token == token), None)
        if last is not None and moves[last].turn == number and moves[last].path[-1] == path[0]:
            moves[last] = msgspec.structs.replace(moves[last], path=moves[last].path + tuple(path[1:]), forced=forced)
        else:
            moves.append(LastMove(token=token, side=pos.block(token).side, path=tuple(path), turn=number,
                                  withdrawal=withdrawal, forced=forced))
    return msgspec.structs.replace(state, last_moves=tuple(moves))


def _after_movement(state: State, turn: Turn) -> State:
    """All Moves and Forced Marches done: the passive player decides on the
    Attacked Groups that may Refuse Battle (RB 8.4); the others fight."""
    refusals = mv.refusable_groups(_map(), state.position, turn.movement)
    if refusals:
        return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="refuse", refusals=refusals))
    return _to_reveals(state, turn)


def _after_pursuit(state: State, turn: Turn) -> State:
    """RB 10.5: hits to place, else straight to the Withdrawal Group Move."""
    step = "refuse-losses" if turn.hits else "refuse-withdraw"
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step))


def _decided(state: State, turn: Turn, hex_: str) -> State:
    rest = tuple(h for h in turn.refusals if h != hex_)
    turn = msgspec.structs.replace(turn, refusals=rest, step="refuse", refusing="", refusers=(), slowest=0,
                                   pursuit=None, hits=0)
    if rest:
        return msgspec.structs.replace(state, turn=turn)
    return _to_reveals(state, turn)


def _to_reveals(state: State, turn: Turn) -> State:
    """All Movement is complete: Minefields entered by enemy units are opened
    (RB 14.2, T-30), then the units in battles are revealed (RB 7.3)."""
    return _after_mines(_mine_checkpoint(state, turn), turn)


def _reveals(state: State, turn: Turn) -> State:
    """RB 7.3: when all Movement is complete, both players reveal their units in
    battles, the passive player first (his decisions came last)."""
    if _to_reveal(state, turn.passive):
        step = "reveal-passive"
    elif _to_reveal(state, turn.active):
        step = "reveal-active"
    else:
        return _to_combat(state, turn)
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step))


# -- the Combat phase (T9, RB 8.6, 9.1-9.5) ---------------------------------------------------

def _fighting(pos: Position) -> list[str]:
    """Battles with Undisrupted units of both sides (RB 11.11: only they fight)."""
    return [b.hex for b in pos.battles if cb._both_sides_fight(pos, b.hex)]


def _new_battles(turn: Turn) -> tuple[str, ...]:
    """Battles created this Player-Turn (RB 8.6)."""
    mvt = turn.movement
    return tuple(h for h in mvt.attacked if h not in mvt.battles_at_start) if mvt is not None else ()


def _round(state: State, turn: Turn) -> cb.CombatRound:
    """The Combat Round under way, in the first of ``turn.battles`` (RB 9.1, 13.2);
    a revealed Minefield there is the Defender's, whoever built it (RB 14.0, 14.2).
    In Probe Combat the Rearguard fires first and keeps, as the battle's
    Defender, its Fortress and Minefield benefits (RB 10.41 sidebar)."""
    hex_ = turn.battles[0]
    return cb.CombatRound(hex=hex_, active=turn.active, assault=hex_ in turn.assault, probe=turn.probing,
                          fortress=hex_ in cb.fortress_hexes(_map()),
                          minefield=any(hex_ in _mines(state, s).shown for s in SIDES))


def _to_combat(state: State, turn: Turn) -> State:
    """T9: the active player chooses the Active Battles, unless this is a Pass
    Turn or no battle can be fought; else on to the Final Supply Check."""
    step = "battles" if turn.cards and _fighting(state.position) else _after_combat(turn)
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=step))


def _after_combat(turn: Turn) -> str:
    """RB 3.45: three or more cards played may pay for the Blitz phases, which
    the active player takes or not (public: only the card count decides that
    the question is asked); otherwise the Final Supply Check."""
    return "blitz" if turn.cards >= OPTION_COST["blitz"] and not turn.blitz else "final-supply"


def _next_battle(state: State, turn: Turn) -> State:
    """The next Active Battle's Combat Round begins with Defensive Fire (RB 9.1),
    or the Combat phase ends: the battles one side has left are gone (RB 8.0)."""
    pos = state.position
    battles = tuple(h for h in turn.battles if cb._both_sides_fight(pos, h))
    turn = msgspec.structs.replace(turn, battles=battles, fire=None, fire_result=None)
    if battles:
        return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="defensive-fire"))
    keep = [b for b in pos.battles if len({x.side for x in pos.blocks_in(b.hex)}) == 2]
    if len(keep) != len(pos.battles):
        state = msgspec.structs.replace(state, position=pos.with_battles(keep))
    return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step=_after_combat(turn)))


def _after_losses(state: State, turn: Turn) -> State:
    """After the Defensive Fire losses, Offensive Fire if both sides can still
    fire; after the Offensive Fire losses, the next Active Battle (RB 9.1)."""
    turn = msgspec.structs.replace(turn, fire=None, fire_result=None)
    if turn.step in ("defensive-dice", "offensive-losses") \
            and cb._both_sides_fight(_combat_position(state, turn), turn.battles[0]):
        return msgspec.structs.replace(state, turn=msgspec.structs.replace(turn, step="offensive-fire"))
    if turn.probing:
        return _after_probe(state, turn)
    return _next_battle(state, msgspec.structs.replace(turn, battles=turn.battles[1:]))


_HEX = re.compile(r"\b\d{4}\b")


def _placed(text: str) -> str:
    """``text`` with hex numbers shown by their names."""
    m = _map()
    return _HEX.sub(lambda x: m.name(x.group()) if x.group() in m.hexes else x.group(), text)


def _check_combat(state: State, turn: Turn, action: object, side: Side) -> list[Problem]:
    return [Problem(p.rule, _placed(p.message)) for p in _check_combat_raw(state, turn, action, side)]


def _check_combat_raw(state: State, turn: Turn, action: object, side: Side) -> list[Problem]:
    pos = _combat_position(state, turn)
    match action:
        case cb.BattleSelection():
            if turn.step != "battles":
                return [Problem("RB 8.6", "the Active Battles are chosen at the start of the Combat phase")]
            made = turn.movement.moves_made if turn.movement else 0
            # RB 4.3: two real cards and at most one Move (None: the cards are secret to this replay)
            assault_turn = None if turn.real < 0 else (turn.real >= OPTION_COST["assault"] and made <= 1)
            return cb.check_battle_selection(pos, side, action, new_battles=_new_battles(turn),
                                             fortress_hexes=cb.fortress_hexes(_map()), assault_turn=assault_turn,
                                             blitz=turn.blitz, partial_retreats=turn.partial)
        case cb.FirePlan(hex=hex_, side=firer):
            if turn.step not in ("defensive-fire", "offensive-fire"):
                return [Problem("RB 9.1", "no fire is due now")]
            rnd = _round(state, turn)
            due = rnd.defensive_side if turn.step == "defensive-fire" else rnd.offensive_side
            if hex_ != rnd.hex or firer != due:
                return [Problem("RB 9.1", f"now {due} fires in {rnd.hex} ({turn.step.split('-')[0]} fire)")]
            return cb.check_fire_plan(pos, rnd, action)
        case cb.LossAllocation(hex=hex_):
            if turn.step not in ("offensive-losses", "defensive-losses") or turn.fire_result is None:
                return [Problem("RB 9.5", "no hits are waiting to be placed")]
            return cb.check_allocation(pos, turn.fire_result, action, units=_roster(state).get)
    return [Problem("", f"unknown action {action!r}")]


def _end_turn(state: State, turn: Turn) -> State:
    """End of the Player-Turn: Fortress capture (RB 13.4, combat.fortress_captures),
    then the other side's turn. A Fortress nobody controlled yet goes to its
    sole occupants the same way (T-03)."""
    pos = state.position
    forts = cb.fortress_hexes(_map())
    captures = cb.fortress_captures(pos, forts)
    for h in forts:
        here = pos.blocks_in(h)
        sides = {b.side for b in here}
        if h not in pos.fortresses and len(sides) == 1 and any(not b.disrupted for b in here):
            captures[h] = next(iter(sides))
    ledger = cb.record_captures(state.captures, captures) if state.captures is not None else None
    state = msgspec.structs.replace(state, position=cb.apply_captures(pos, captures), captures=ledger)
    sudden = strategic_victory(_map(), state.position, _scenarios().victory)
    if sudden is not None:  # RB 17.1: the game ends at once
        return msgspec.structs.replace(state, phase="over", result=sudden)
    # RB 3.1, 4.5: two Passes in succession end the Month (a Pass plays no card, T-14).
    passes = state.passes + 1 if turn.cards == 0 else 0
    if passes < 2:
        return _begin_turn(msgspec.structs.replace(state, passes=passes), turn.passive)
    if state.month >= _scenario(state).end_month:  # RB 17.0: the last Month is over
        return msgspec.structs.replace(state, phase="final", stage="reveal-all", side=turn.passive, passes=passes)
    return _begin_buildup(msgspec.structs.replace(state, passes=0))


# -- orders -------------------------------------------------------------------------------------

_DEPLOY = re.compile(r"^deploy\s+(?P<unit>.+?)\s+(?:at|in)\s+(?P<where>.+)$", re.IGNORECASE)
_ARROW = re.compile(r"\s*->\s*")


def _place(text: str) -> str:
    try:
        return _map().resolve(text.strip())
    except UnknownLocation as exc:
        raise ValueError(f"RB 1.1: {exc}") from None


def _own_token(state: State, role: Side, name: str) -> str:
    """The token of my unit called ``name`` (or a token of mine given as such)."""
    name = name.strip()
    pos = state.position
    if pos.has_block(name) and pos.block(name).side == role:
        return name
    try:
        unit = _scenarios().roster.get(name)
    except UnknownUnit as exc:
        raise ValueError(f"RB 2.0: {exc}") from None
    for b in pos.blocks_of(role):
        if b.unit == unit.name:
            return b.token
    raise ValueError(f"RB 2.0: {unit.name} is not on the map")


def _units(state: State, role: Side, text: str, origin: str) -> list[str]:
    """My units named in ``text`` ("21Pz/5 7/4 Armd", commas optional; "all":
    every undisrupted unit in ``origin``). Names may hold spaces, so each is
    the longest run of words that names a unit of mine or a token."""
    text = text.strip()
    if text.lower() in ("", "all"):
        return [b.token for b in state.position.blocks_in(origin, role) if not b.disrupted]
    tokens = []
    for part in re.split(r"\s*,\s*", text):
        words = part.split()
        while words:
            for n in range(len(words), 0, -1):
                try:
                    tokens.append(_own_token(state, role, " ".join(words[:n])))
                except ValueError:
                    if n == 1:
                        _own_token(state, role, " ".join(words))  # raises, naming what was not understood
                    continue
                words = words[n:]
                break
    return tokens


def _route(state: State, turn: Turn, token: str, dest: str, *, withdrawal: str = "", rommel: bool = False,
           via: list[str] | None = None, together: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The unit's path: the explicit hexes given, or the shortest legal one
    (``together``: the other units of the Move, which do not stay behind)."""
    start = state.position.block(token).hex
    if via:
        return (start, *via, dest) if via[0] != start else (*via, dest)
    network = _refusal_network(state.position, mv.Move(kind="group", origin=start, withdrawal=withdrawal,
                                                       units=(mv.UnitMove(token, (start,)),)))
    reach = mv.reachable(_map(), state.position, turn.movement, token, _speed(state, state.position.block(token)),
                         withdrawal=withdrawal, rommel=rommel, network=network, together=together)
    path = reach.paths.get(dest)
    if path is None:
        explanation = mv.explain_move(_map(), state.position, turn.movement, token,
                                      _speed(state, state.position.block(token)), withdrawal=withdrawal, rommel=rommel)
        why = next((line.strip() for line in explanation if line.strip().startswith(_map().name(dest) + ":")), "")
        raise ValueError(f"{_unit_name(state, token)} cannot reach {_map().name(dest)} this move"
                         + (f" ({why})" if why else "") + " (see 'pbem explain move')")
    return path


def _unit_name(state: State, token: str) -> str:
    b = state.position.block(token)
    return b.unit or f"block {token}"


def _parse_move(state: State, role: Side, turn: Turn, text: str, kind: str) -> mv.Move:
    """'group Msus -> Mechili 21Pz/5 3Rec [; -> Charruba 8Pz]' and the like."""
    if turn.movement is None:
        raise ValueError(f"not an order now: '{text}' (now: {_PROMPTS.get(turn.step, turn.step)})")
    rommel = bool(re.search(r"\s+rommel$", text, re.IGNORECASE))
    text = re.sub(r"\s+rommel$", "", text, flags=re.IGNORECASE)
    withdrawal = {"withdraw": "pass", "refuse-battle": "refuse", "rout": "rout"}.get(kind, "")
    body = text.split(None, 1)[1] if " " in text else ""
    if kind == "withdraw" and re.match(r"^regroup\s", body, re.IGNORECASE):  # a Regroup Withdrawal (RB 4.5, 5.3)
        kind, body = "regroup", body.split(None, 1)[1]
    if kind == "regroup":
        body = re.sub(r"^cp\s+", "", body, flags=re.IGNORECASE)
    parts = [p for p in body.split(";") if p.strip()]
    if not parts:
        raise ValueError(f"write '{kind} <from> -> <to> <units>'")
    origin = _place(_ARROW.split(parts[0], 1)[0])
    legs = []
    for i, part in enumerate(parts):
        pieces = _ARROW.split(part.strip())
        if i == 0:
            pieces = pieces[1:]
        elif pieces and not pieces[0]:
            pieces = pieces[1:]
        if not pieces:
            raise ValueError("RB 5.1: name a destination after '->'")
        *via, last = pieces
        dest, units = _split_destination(last)
        legs.append(([_place(v) for v in via], dest, units))
    moves = []
    if kind == "regroup":
        (via, dest, units), = legs if len(legs) == 1 else (None,) * 2
        tokens = _units(state, role, units, origin) if units.strip().lower() not in ("", "all") else \
            [b.token for b in state.position.blocks_of(role) if not b.disrupted and not turn.movement.has_moved(b.token)
             and (b.hex == origin or _map().is_adjacent(b.hex, origin))]
        for t in tokens:
            moves.append(mv.UnitMove(t, _route(state, turn, t, dest, rommel=rommel, via=via or None,
                                               withdrawal=withdrawal, together=tuple(tokens))))
        return mv.Move(kind="regroup", origin=origin, destination=dest, units=tuple(moves), rommel=rommel,
                       withdrawal=withdrawal)
    chosen_by_leg = []
    for via, dest, units in legs:
        if kind == "rout" and units.strip().lower() in ("", "all"):
            chosen_by_leg.append(list(turn.routers))  # the Routed units (RB 11.3)
        else:
            chosen_by_leg.append(_units(state, role, units, origin))
    group = tuple(t for chosen in chosen_by_leg for t in chosen)
    for (via, dest, _), chosen in zip(legs, chosen_by_leg):
        for t in chosen:
            moves.append(mv.UnitMove(t, _route(state, turn, t, dest, withdrawal=withdrawal, rommel=rommel,
                                               via=via or None, together=group)))
    return mv.Move(kind="group", origin=origin, units=tuple(moves), withdrawal=withdrawal, rommel=rommel)


def _split_destination(text: str) -> tuple[str, str]:
    """'Mechili 21Pz/5 3Rec' -> (hex of Mechili, '21Pz/5 3Rec'): the longest
    leading words that name a place."""
    words = text.split()
    for n in range(len(words), 0, -1):
        try:
            return _map().resolve(" ".join(words[:n])), " ".join(words[n:])
        except UnknownLocation:
            continue
    return _place(text), ""


def parse_order(state: State, role: Side, text: str, ctx) -> Order:
    words = text.strip()
    low = words.lower()
    if state.phase == "deploy":
        if low in ("end deployment", "deployment done", "done"):
            return Order(action=EndDeployment())
        m = _DEPLOY.match(words)
        if m:
            try:
                unit = _scenarios().roster.get(m.group("unit"))
            except UnknownUnit as exc:
                raise ValueError(f"RB 2.0: {exc}") from None
            where = _place(m.group("where"))
            token = hidden.new_token(role, ctx.fresh())
            return Order(action=Deploy(token=token, hex=where),
                         secrets={hidden.identity_label(token): hidden.encode_identity(unit.name, unit.max_cv)})
        raise ValueError(f"not an order now: '{text}' (while deploying: 'deploy <unit> at <place>', "
                         "'end deployment')")
    if state.phase != "turn":
        return _parse_month_order(state, role, words, ctx)
    turn = _current(state)
    verb = low.split(None, 1)[0] if low else ""
    if low.startswith("supply check"):
        return Order(action=_parse_supply(state, role, words[len("supply check"):]))
    cards = _OPTION.match(low)
    if low in ("blitz", "no blitz") and turn.step == "blitz":
        return Order(action=Blitz(go=low == "blitz"))
    if cards:
        if low == "pass":
            return Order(action=PlayCards(count=0))
        real = OPTION_COST.get(cards.group("option") or "", 0)
        count = real + int(cards.group("dummies") or cards.group("bluff") or 0)
        label = option_label(turn.number)
        refs = _pick(state, role, real, count - real, ctx, "RB 3.42")
        return Order(action=PlayCards(count=count, label=label, cards=refs), secrets={label: str(real).encode()})
    if verb == "refuse-battle" and "->" not in words:
        m = re.match(r"^refuse-battle\s+(?P<where>.+?)\s+slowest\s+(?P<n>\d+)$", words, re.IGNORECASE)
        if not m:
            raise ValueError("RB 10.2: write 'refuse-battle <hex> slowest <speed>'")
        return Order(action=RefuseBattle(hex=_place(m.group("where")), slowest=int(m.group("n"))))
    if verb == "rout" and "->" not in words:
        return _parse_rout(state, role, turn, words)
    if verb == "retreat":
        m = re.match(r"^retreat\s+(?P<where>.+?)\s+slowest\s+(?P<n>\d+)$", words, re.IGNORECASE)
        if not m:
            raise ValueError("RB 10.5: write 'retreat <hex> slowest <speed>'")
        return Order(action=RetreatSpeed(hex=_place(m.group("where")), slowest=int(m.group("n"))))
    if verb == "probe" or low.startswith("no probe "):
        go = verb == "probe"
        hex_ = _place(words.split(None, 1 if go else 2)[-1])
        probe = msgspec.structs.replace(turn, retreating=hex_)
        labels = [hidden.identity_label(b.token, state.versions.get(b.token, 0))
                  for b in _probers_to_reveal(state, probe)] if go else []
        return Order(action=Probe(hex=hex_, go=go), reveal=tuple(lbl for lbl in labels if not ctx.opened(lbl)))
    if verb == "pursue":
        return Order(action=_parse_pursuit(state, role, turn, words))
    if low.startswith("pursuit losses"):
        return _parse_losses(state, role, turn, words[len("pursuit losses"):])
    if low.startswith("march losses"):
        return _parse_march_losses(state, role, turn, words[len("march losses"):])
    if verb in ("group", "regroup", "withdraw", "refuse-battle", "rout"):
        return Order(action=_parse_move(state, role, turn, words, verb))
    if verb == "forced-march":
        return Order(action=ForcedMarches(marches=tuple(_parse_march(state, role, turn, part)
                                                          for part in words.split(None, 1)[1].split(";"))))
    if low == "end movement":
        return Order(action=EndMovement())
    if verb == "accept-battle":
        return Order(action=AcceptBattle(hex=_place(words.split(None, 1)[1])))
    if low == "open minefields":
        own = _mines(state, role)
        return Order(action=OpenMinefields(hexes=own.due),
                     open_leaves=tuple((mines.set_label(role, own.number), h) for h in own.due if h not in own.opened))
    if low == "reveal units":  # identities opened in an earlier battle stay opened (RB 8.5)
        shown = _rearguard_to_reveal(state, turn) if turn.step == "probe-reveal" else _to_reveal(state, role)
        labels = [hidden.identity_label(b.token, state.versions.get(b.token, 0)) for b in shown]
        return Order(action=RevealUnits(), reveal=tuple(lbl for lbl in labels if not ctx.opened(lbl)))
    if low == "reveal option":
        return Order(action=RevealOption(), reveal=(turn.option_label,) if turn.option_label else ())
    if verb == "battles":
        return Order(action=_parse_battles(words))
    if verb == "fire":
        return Order(action=_parse_fire(state, role, words))
    if verb == "losses":
        return Order(action=_parse_combat_losses(state, role, turn, words))
    raise ValueError(f"not an order now: '{text}' (now: {_PROMPTS.get(turn.step, turn.step)})")


#: RB 3.42: "basic", "offensive", "assault", "blitz", each "+ N dummies"; "bluff N"; "pass".
_OPTION = re.compile(r"^(?:pass|(?P<option>basic|offensive|assault|blitz)"
                     r"(?:\s*\+\s*(?P<dummies>\d+)\s+dumm(?:y|ies))?|bluff\s+(?P<bluff>\d+))$")
_END_BUILDUP = re.compile(r"^end buildup(?:\s+discard\s+(?P<n>\d+)(?:\s+dumm(?:y|ies))?)?$")


def _parse_month_order(state: State, role: Side, words: str, ctx) -> Order:
    """Orders outside the Player-Turns: hands, Initiative, Buildup, the end."""
    low = " ".join(words.lower().split())
    if low in ("keep hand", "keep"):
        return Order(action=KeepHand())
    if low == "redraw":
        return Order(action=Redraw())
    if low in ("challenge", "challenge with real", "challenge with dummy", "answer", "answer with real",
               "answer with dummy"):
        label = _challenge_label(state, role)
        value = b"0" if low.endswith("dummy") else b"1"
        card = _pick(state, role, int(value == b"1"), int(value == b"0"), ctx, "RB 3.3")[0]
        if low.startswith("challenge"):
            return Order(action=Challenge(label=label, card=card), secrets={label: value})
        return Order(action=Answer(label=label, card=card), secrets={label: value}, reveal=(label,))
    if low == "no challenge":
        return Order(action=Challenge())
    if low == "decline":
        return Order(action=Answer())
    if low == "open challenge":
        return Order(action=OpenChallenge(), reveal=(state.challenge,) if state.challenge else ())
    if low == "reveal all":
        return Order(action=RevealAll(), reveal=tuple(lbl for lbl in _final_labels(state, role)
                                                      if not ctx.opened(lbl)))
    if low == "reinforce":
        names = [u.name for u in _due(state, role)]
        names += [(ctx.value(lbl) or b"").decode("utf-8", "replace") for lbl in state.early_arrived]
        tokens, secrets = _new_blocks_order(role, names, ctx)
        return Order(action=Reinforce(tokens=tokens, early=state.early_arrived), secrets=secrets)
    if low in ("call malta group", "call malta", "malta group"):
        tokens, secrets = _new_blocks_order(role, [u.name for u in _scenarios().malta_group(_scenario(state))], ctx)
        return Order(action=CallMalta(tokens=tokens), secrets=secrets)
    if low.startswith("early arrival"):
        cands = [u.name for u in _early_candidates(state, role)]
        rest = words.strip()[len("early arrival"):].strip(" :")
        order = [_scenarios().roster.get(n.strip()).name for n in rest.split(",")] if rest else cands
        labels = _early_labels(state, role, len(order))
        return Order(action=EarlyArrival(slots=labels),
                     secrets={lbl: name.encode() for lbl, name in zip(labels, order)})
    m = _END_BUILDUP.match(low)
    if m:
        discard = int(m.group("n") or 0)
        return Order(action=EndBuildup(discard=discard, cards=_pick(state, role, 0, discard, ctx, "RB 16.6")))
    m = re.match(r"^buy supply(?:\s+(?P<n>\d+))?$", low)
    if m:
        return Order(action=bu.BuySupply(cards=int(m.group("n") or 1)))
    if low.startswith("minefield "):
        return _parse_minefield(state, role, words.strip()[len("minefield "):], ctx)
    verb, _, rest = words.strip().partition(" ")
    verb = verb.lower()
    if verb == "rebuild":
        m = re.match(r"^(?P<unit>.+?)(?:\s+(?P<n>\d+)(?:\s+steps?)?)?$", rest.strip())
        if not m:
            raise ValueError("RB 16.54: write 'rebuild <unit> [steps]'")
        token = _own_token(state, role, m.group("unit"))
        b = state.position.block(token)
        u = _scenarios().roster.get(b.unit)
        steps = int(m.group("n") or 1)
        label = hidden.identity_label(token, state.versions.get(token, 0) + 1)
        return Order(action=Rebuild(token=token, steps=steps, bp=bu.replacement_cost(u, steps)),
                     secrets={label: hidden.encode_identity(u.name, b.cv + steps * u.cv_per_step)})
    if verb in ("redeploy", "refit", "sea"):
        unit, *points = _ARROW.split(rest.strip())
        token = _own_token(state, role, unit)
        start = state.position.block(token).hex
        places = [_place(p) for p in points if p.strip()]
        if verb == "sea":
            if len(places) != 1:
                raise ValueError("RB 16.53: write 'sea <unit> -> <port>'")
            return Order(action=bu.SeaRedeploy(token=token, to=places[0]))
        if verb == "refit":
            base = _map().base(role)
            if not places or places[-1] != base:
                places.append(base)
            return Order(action=bu.ReturnForRefit(token=token, path=_buildup_path(state, role, start, places)))
        if not places:
            raise ValueError("RB 16.51: write 'redeploy <unit> -> <hex> [-> <hex> ...]'")
        return Order(action=bu.Redeploy(token=token, path=_buildup_path(state, role, start, places)))
    raise ValueError(f"not an order now: '{words}' ({_STAGE_PROMPTS.get(state.stage, state.stage)})")


def _parse_minefield(state: State, role: Side, text: str, ctx) -> Order:
    """RB 14.1, 16.55: 'minefield <place>' (15 BP) or 'minefield <place> dismantle
    <place>, <place>' (free): the new set is the current one with the change."""
    parts = re.split(r"\s+dismantle\s+", text.strip(), maxsplit=1, flags=re.IGNORECASE)
    hex_ = _place(parts[0])
    dismantle = [_place(p) for p in re.split(r"\s*,\s*|\s+and\s+", parts[1]) if p.strip()] \
        if len(parts) > 1 else []
    own = _mines(state, role)
    current = _mine_set(state, role, own.number, ctx)
    if current is None:
        raise ValueError("RB 16.55: your Minefield set is not in your vault")
    number = own.number + 1
    after = {h: n for h, n in current.items() if h not in dismantle}
    after[hex_] = number
    label = mines.set_label(role, number)
    shown = tuple(h for h in dismantle if h in own.shown)
    return Order(action=BuildMinefield(label=label, free=bool(dismantle), dismantled_shown=shown),
                 sets={label: mines.leaves(_map(), after)})


def _buildup_path(state: State, side: Side, start: str, points: list[str]) -> tuple[str, ...]:
    """The Redeployment route through ``points``: between them the cheapest
    route inside the Network fixed for the Buildup, roads preferred (RB 16.51)."""
    m, pos = _map(), state.position
    mine, theirs = set(state.networks.get(side, ())), set(state.networks.get(enemy_of(side), ()))
    allowed = {h for h in mine - theirs
               if pos.battle(h) is None and not pos.blocks_in(h, enemy_of(side))}
    weight = {"highway": 1, "track": 2, "trail": 3}
    path = [start]
    for goal in points:
        here = path[-1]
        if goal == here:
            continue
        if goal not in allowed:
            raise ValueError(f"RB 16.51: {m.name(goal)} is not a hex a unit may Redeploy to now (outside the "
                             f"{side} Supply Network fixed for the Buildup, in the enemy one, or a battle or "
                             "enemy hex)")
        import heapq
        dist, back, heap = {here: 0}, {}, [(0, here)]
        while heap:
            d, h = heapq.heappop(heap)
            if h == goal or d > dist[h]:
                continue
            for n in m.passable_neighbours(h):
                if n not in allowed:
                    continue
                nd = d + weight.get(m.road(h, n) or "", 6)
                if nd < dist.get(n, 1 << 30):
                    dist[n], back[n] = nd, h
                    heapq.heappush(heap, (nd, n))
        if goal not in dist:
            raise ValueError(f"RB 16.51: no route from {m.name(here)} to {m.name(goal)} inside the {side} "
                             "Supply Network fixed for the Buildup")
        leg = [goal]
        while leg[-1] != here:
            leg.append(back[leg[-1]])
        path += list(reversed(leg))[1:]
    return tuple(path)


def _parse_battles(text: str) -> cb.BattleSelection:
    """'battles Sollum, Buq Buq' / 'battles none' / 'battles Sollum assault Sollum' (RB 8.6)."""
    body = text.split(None, 1)[1] if " " in text.strip() else ""
    m = re.match(r"^(?P<active>.*?)(?:(?:^|\s+)assault\s+(?P<assault>.+))?$", body.strip(), re.IGNORECASE)
    active, assault = m.group("active"), m.group("assault") or ""
    def places(part: str) -> tuple[str, ...]:
        part = part.strip()
        if part.lower() in ("", "none"):
            return ()
        return tuple(_place(p) for p in re.split(r"\s*,\s*", part) if p.strip())
    return cb.BattleSelection(active=places(active), assault=places(assault))


_CLASS_WORDS = {"armor": "armor", "armour": "armor", "infantry": "infantry", "artillery": "artillery",
                "antitank": "antitank", "anti-tank": "antitank"}


def _parse_fire(state: State, role: Side, text: str) -> cb.FirePlan:
    """'fire Sollum: 21Pz/5 at armor, 15Pz/8 at infantry' (RB 9.2: artillery first)."""
    m = re.match(r"^fire\s+(?P<where>[^:]+):\s*(?P<fires>.+)$", text.strip(), re.IGNORECASE)
    if not m:
        raise ValueError("RB 9.2: write 'fire <hex>: <unit> at <class>, ...'")
    hex_ = _place(m.group("where"))
    fires = []
    for part in re.split(r"\s*,\s*", m.group("fires").strip()):
        name, sep, target = part.rpartition(" at ")
        cls = _CLASS_WORDS.get(target.strip().lower())
        if not sep or cls is None:
            raise ValueError(f"RB 9.3: '{part}': write '<unit> at armor|infantry|antitank|artillery'")
        fires.append(cb.UnitFire(token=_own_token(state, role, name), target=cls))
    return cb.FirePlan(hex=hex_, side=role, fires=tuple(fires))


def _parse_combat_losses(state: State, role: Side, turn: Turn, text: str) -> cb.LossAllocation:
    """'losses Sollum: 7/7 Tk 2, Matilda 1' (hits per unit) or 'losses Sollum auto' (RB 9.5)."""
    m = re.match(r"^losses\s+(?P<where>[^:]+?)(?:\s+(?P<auto>auto)|:\s*(?P<units>.*))$", text.strip(),
                 re.IGNORECASE)
    if not m:
        raise ValueError("RB 9.5: write 'losses <hex>: <unit> <hits>, ...' or 'losses <hex> auto'")
    hex_ = _place(m.group("where"))
    if m.group("auto"):
        if turn.fire_result is None or turn.fire_result.hex != hex_:
            raise ValueError("RB 9.5: no hits are waiting to be placed there")
        return cb.default_allocation(_combat_position(state, turn), turn.fire_result, units=_roster(state).get)
    losses = []
    for part in re.split(r"\s*,\s*", (m.group("units") or "").strip()):
        if not part:
            continue
        name, _, n = part.rpartition(" ")
        if not name or not n.isdigit():
            raise ValueError("RB 9.5: write 'losses <hex>: <unit> <hits>, ...' or 'losses <hex> auto'")
        losses.append(cb.Loss(_own_token(state, role, name), hits=int(n)))
    return cb.LossAllocation(hex=hex_, losses=tuple(losses))


def _fire_orders(state: State, role: Side, turn: Turn) -> list[str]:
    """One fire plan per target Class: every unit at that Class where it may,
    else at its first legal target; artillery first (RB 9.2, 9.3)."""
    m, pos = _map(), _combat_position(state, turn)
    hex_ = turn.battles[0]
    roster = _scenarios().roster
    present = cb.present_classes(pos, hex_, enemy_of(role), roster.get)
    shooters = sorted(cb.firing_units(pos, hex_, role),
                      key=lambda b: (roster.get(b.unit).arms_class != "artillery", b.unit))
    out = []
    for cls in [c for c in ("armor", "infantry", "antitank", "artillery") if c in present]:
        fires = []
        for b in shooters:
            legal = cb.legal_targets(roster.get(b.unit).arms_class, present)
            if not legal:
                fires = []
                break
            fires.append(f"{b.unit} at {cls if cls in legal else legal[0]}")
        order = f"fire {m.name(hex_)}: " + ", ".join(fires)
        if fires and order not in out:
            out.append(order)
    return out


def _parse_pursuit(state: State, role: Side, turn: Turn, text: str) -> routs.PursuitFire:
    """'pursue Sollum with Trento, GGFF' / 'pursue Sollum with none' / '... with all' (RB 10.5)."""
    m = re.match(r"^pursue\s+(?P<where>.+?)\s+with\s+(?P<units>.+)$", text, re.IGNORECASE)
    if not m:
        raise ValueError("RB 10.5: write 'pursue <hex> with <units>' or 'pursue <hex> with none'")
    hex_ = _place(m.group("where"))
    units = m.group("units").strip().lower()
    pos = state.position
    routing = turn.step == "rout-pursuit"
    slowest = turn.rout_slowest if routing else turn.slowest
    fired = turn.rout_queue[0].fired if routing else turn.probe_fired
    if units == "none":
        return routs.PursuitFire(hex=hex_)
    if units == "all":
        tokens = [t for t in routs.pursuit_eligible(pos, hex_, role, fired)
                  if routs.pursuit_dice_for(slowest, _speed(state, pos.block(t)) or 0)]
    else:
        tokens = _units(state, role, m.group("units"), hex_)
    pursuers = []
    for t in tokens:
        dice = routs.pursuit_dice_for(slowest, _speed(state, pos.block(t)) or 0)
        if not dice:
            raise ValueError(f"RB 10.5: {_unit_name(state, t)} is slower than the "
                             f"{'Routed units' if routing else 'Retreating units' if turn.retreating else 'refusing Group'} "
                             f"(speed {slowest}) and cannot pursue")
        pursuers.append(routs.Pursuer(t, dice))
    return routs.PursuitFire(hex=hex_, pursuers=tuple(pursuers))


def _parse_losses(state: State, role: Side, turn: Turn, rest: str) -> Order:
    """'pursuit losses 21Pz/5 1, 15Pz/8 1' (hits per unit) or 'pursuit losses auto':
    the new CVs, committed as new identity versions of every surviving refuser (T-10)."""
    pos = state.position
    if turn.step == "rout-losses":
        hex_, group, hits = turn.rout_queue[0].hex, turn.routers, turn.rout_hits
    elif turn.step == "retreat-losses":
        hex_, group, hits = turn.retreating, turn.retreaters, turn.hits
    else:
        hex_, group, hits = turn.refusing, turn.refusers, turn.hits
    rest = rest.strip()
    if rest.lower() in ("auto", ""):
        allocation = routs.default_pursuit_allocation(pos, group, hits, hex_, units=_roster(state).get)
    else:
        losses = []
        for part in re.split(r"\s*,\s*", rest):
            name, _, n = part.strip().rpartition(" ")
            if not name or not n.isdigit():
                raise ValueError("RB 10.5: write 'pursuit losses <unit> <hits>, ...' or 'pursuit losses auto'")
            losses.append(cb.Loss(_own_token(state, role, name), hits=int(n)))
        allocation = cb.LossAllocation(hex_, tuple(losses))
    roster = _roster(state)
    by_token = {x.token: x for x in allocation.losses}
    eliminated, recommit, secrets = [], [], {}
    for t in group:
        b = pos.block(t)
        u = roster.get(b.unit)
        cv = b.cv - cb._used_cv(by_token.get(t), cb._absorber(b, u))
        if cv < u.min_cv:
            eliminated.append(t)
            continue
        recommit.append(t)
        secrets[hidden.identity_label(t, state.versions.get(t, 0) + 1)] = hidden.encode_identity(b.unit, cv)
    return Order(action=PursuitLosses(hex=hex_, eliminated=tuple(eliminated), recommit=tuple(recommit)),
                 secrets=secrets)


def _parse_march_losses(state: State, role: Side, turn: Turn, rest: str) -> Order:
    """'march losses auto' (or naming the units: 'march losses 7/7 Tk, ...'):
    each Retreating unit whose Forced March failed loses one step, committed
    as a new identity version; one at its last step is eliminated (RB 6.4
    sidebar "Retreat Forced Marches", RB 2.3; T-39)."""
    group = turn.march_losses if turn.step == "march-losses" else ()
    if not group:
        raise ValueError("RB 6.4: only a Retreating unit whose Forced March has just failed loses a step "
                         f"(now: {_PROMPTS.get(turn.step, turn.step)})")
    rest = rest.strip()
    if rest.lower() not in ("", "auto"):
        named = [_own_token(state, role, name) for name in re.split(r"\s*,\s*", rest)]
        if sorted(named) != sorted(group):
            raise ValueError("RB 6.4: the units whose Retreat Forced March failed are "
                             f"{', '.join(_unit_name(state, t) for t in group)}: name them all, or write "
                             "'march losses auto'")
    pos, roster = state.position, _roster(state)
    eliminated, recommit, secrets = [], [], {}
    for t in group:
        b = pos.block(t)
        u = roster.get(b.unit)
        cv = b.cv - u.cv_per_step
        if cv < u.min_cv:
            eliminated.append(t)
            continue
        recommit.append(t)
        secrets[hidden.identity_label(t, state.versions.get(t, 0) + 1)] = hidden.encode_identity(b.unit, cv)
    return Order(action=MarchLosses(eliminated=tuple(eliminated), recommit=tuple(recommit)), secrets=secrets)


def _parse_rout(state: State, role: Side, turn: Turn, text: str) -> Order:
    """'rout Sollum slowest 3' (or 'rout Sollum': the true slowest speed): Rout
    Attrition as new identity versions, and the survivors' slowest speed (T-12)."""
    m = re.match(r"^rout\s+(?P<where>.+?)(?:\s+slowest\s+(?P<n>\d+))?$", text.strip(), re.IGNORECASE)
    if not m or not turn.rout_queue:
        raise ValueError("RB 11.3: write 'rout <hex> slowest <speed>' when a Rout begins")
    hex_, r = _place(m.group("where")), turn.rout_queue[0]
    pos, roster = state.position, _scenarios().roster
    eliminated, recommit, secrets, speeds = [], [], {}, []
    for t in r.tokens:
        b = pos.block(t)
        u = roster.get(b.unit)
        cv = b.cv - u.cv_per_step
        if cv < u.min_cv:
            eliminated.append(t)
            continue
        recommit.append(t)
        speeds.append(_speed_of(state, b.unit))
        secrets[hidden.identity_label(t, state.versions.get(t, 0) + 1)] = hidden.encode_identity(b.unit, cv)
    slowest = int(m.group("n")) if m.group("n") else min(speeds, default=0)
    return Order(action=Rout(hex=hex_, slowest=slowest, eliminated=tuple(eliminated), recommit=tuple(recommit)),
                 secrets=secrets)


def _parse_supply(state: State, role: Side, rest: str) -> SupplyCheck:
    """'supply check [fortress Tobruk: A, B] [oasis Siwa: C]'."""
    fortress: dict[str, tuple[str, ...]] = {}
    oasis: dict[str, str] = {}
    for kind, place, units in re.findall(r"(fortress|oasis)\s+([^:]+):\s*([^;]+)", rest, re.IGNORECASE):
        hex_ = _place(place)
        tokens = tuple(_own_token(state, role, u) for u in re.split(r"\s*,\s*", units.strip()) if u)
        if kind.lower() == "fortress":
            fortress[hex_] = tokens
        elif len(tokens) == 1:
            oasis[hex_] = tokens[0]
        else:
            raise ValueError("RB 15.1: one unit takes Oasis Supply")
    return SupplyCheck(fortress=fortress, oasis=oasis)


def _parse_march(state: State, role: Side, turn: Turn, text: str) -> mv.ForcedMarch:
    """'21Pz/5 -> Sofafi': the unit's route this turn plus the extra hex (RB 6.4)."""
    pieces = _ARROW.split(text.strip())
    if len(pieces) != 2:
        raise ValueError("RB 6.4: write 'forced-march <unit> -> <hex>'")
    token = _own_token(state, role, pieces[0])
    dest = _place(pieces[1])
    moved = turn.movement.moved_unit(token)
    if moved is not None and not moved.regroup:
        return mv.ForcedMarch(token=token, path=moved.path + (dest,))
    reach = mv.reachable(_map(), state.position, turn.movement, token, _speed(state, state.position.block(token)),
                         forced=True)
    path = reach.paths.get(dest)
    if path is None:
        raise ValueError(f"RB 6.4: {_unit_name(state, token)} cannot reach {_map().name(dest)} even by "
                         "Forced March")
    return mv.ForcedMarch(token=token, path=path)


def legal_orders(state: State, role: Side, ctx) -> list[str]:
    """Every order ``role`` may give now, in the syntax of parse_order."""
    m = _map()
    if state.phase == "deploy":
        if state.side != role:
            return []
        s = _scenario(state)
        placed = _known_units(state.position, role)
        orders = []
        from rules.ritd_v3.setup import group_hexes, zone_hexes
        # Zones with stated limits (e.g. "14 units in El Agheila"): no hex of a
        # full zone, and only unfilled minimums once the units left are needed there.
        mine = list(state.position.blocks_of(role))
        left = sum(1 for g in s.side(role).setup for u in g.select(_scenarios().roster, role)
                   if u.name not in placed)
        full, short, need = set(), set(), 0
        for group in s.side(role).setup:
            for zone in group.zones:
                zh = zone_hexes(m, zone)
                count = sum(1 for b in mine if b.hex in zh)
                if zone.max_units is not None and count >= zone.max_units:
                    full |= zh
                if count < zone.min_units:
                    short |= zh
                    need += zone.min_units - count
        for group in s.side(role).setup:
            hexes = sorted(h for h in group_hexes(m, group)
                           if state.position.control(h, role) in ("friendly", "empty") and h not in full
                           and (need < left or h in short))
            for unit in group.select(_scenarios().roster, role):
                if unit.name not in placed:
                    orders += [f"deploy {unit.name} at {m.name(h)}" for h in hexes]
        if not check_deployment_complete(m, s, role, state.position):
            orders.append("end deployment")
        return orders
    decision = pending(state)
    if decision is None or decision.role != role or decision.kind == DICE:
        return []
    if state.phase != "turn":
        return _month_orders(state, role, ctx)
    turn = _current(state)
    match turn.step:
        case "initial-supply" | "final-supply":
            return _supply_orders(state, role, turn)
        case "option":
            return _option_orders(_hand(state, role))
        case "movement":
            return _movement_orders(state, role, turn) + ["end movement"]
        case "refuse":
            return [order for h in turn.refusals for order in
                    [f"accept-battle {m.name(h)}"] + _refuse_battle_orders(state, role, turn, h)]
        case "refuse-pursuit":
            name = m.name(turn.refusing)
            able = [t for t in routs.pursuit_eligible(state.position, turn.refusing, role)
                    if routs.pursuit_dice_for(turn.slowest, _speed(state, state.position.block(t)) or 0)]
            return [f"pursue {name} with none"] + ([f"pursue {name} with all"] if able else []) + \
                [f"pursue {name} with {_unit_name(state, t)}" for t in able]
        case "refuse-losses" | "retreat-losses":
            return ["pursuit losses auto"]
        case "march-losses":
            return ["march losses auto"]
        case "retreat-probe":
            name = m.name(turn.retreating)
            return [f"no probe {name}", f"probe {name}"]
        case "probe-reveal":
            return ["reveal units"]
        case "retreat-slowest":
            speeds = [_speed(state, state.position.block(t)) for t in turn.retreaters]
            return [f"retreat {m.name(turn.retreating)} slowest {min(speeds)}"] if None not in speeds else []
        case "retreat-pursuit":
            name = m.name(turn.retreating)
            able = [t for t in routs.pursuit_eligible(state.position, turn.retreating, role, turn.probe_fired)
                    if routs.pursuit_dice_for(turn.slowest, _speed(state, state.position.block(t)) or 0)]
            return [f"pursue {name} with none"] + ([f"pursue {name} with all"] if able else []) + \
                [f"pursue {name} with {_unit_name(state, t)}" for t in able]
        case "refuse-withdraw":
            return _refusal_orders(state, role, turn, turn.refusing)
        case "reveal-passive" | "reveal-active":
            return ["reveal units"]
        case "battles":
            must = cb.mandatory_battles(state.position, role, new_battles=_new_battles(turn),
                                        fortress_hexes=cb.fortress_hexes(m), blitz=turn.blitz,
                                        partial_retreats=turn.partial)
            names = ", ".join(m.name(h) for h in must) or "none"
            orders = [f"battles {names}"]
            if turn.real >= OPTION_COST["assault"] and not turn.blitz and (turn.movement.moves_made if turn.movement else 0) <= 1 \
                    and must:
                orders.append(f"battles {names} assault {names}")
            return orders
        case "defensive-fire" | "offensive-fire":
            return _fire_orders(state, role, turn)
        case "offensive-losses" | "defensive-losses":
            return [f"losses {m.name(turn.battles[0])} auto"]
        case "supply-revealed":
            return ["reveal option"]
        case "mines-passive" | "mines-active":
            return ["open minefields"]
        case "blitz":
            made = turn.movement.moves_made if turn.movement else 0
            able = made <= 1 and not turn.assault and turn.real >= OPTION_COST["blitz"]
            return ["no blitz"] + (["blitz"] if able else [])
        case "rout-slowest":
            r = turn.rout_queue[0]
            roster = _scenarios().roster
            speeds = [_speed_of(state, b.unit) for b in map(state.position.block, r.tokens)
                      if b.cv - roster.get(b.unit).cv_per_step >= roster.get(b.unit).min_cv]
            return [f"rout {m.name(r.hex)} slowest {min(speeds)}" if speeds else f"rout {m.name(r.hex)}"]
        case "rout-pursuit":
            r = turn.rout_queue[0]
            name = m.name(r.hex)
            able = [t for t in routs.pursuit_eligible(state.position, r.hex, role, r.fired)
                    if routs.pursuit_dice_for(turn.rout_slowest, _speed(state, state.position.block(t)) or 0)]
            return [f"pursue {name} with none"] + ([f"pursue {name} with all"] if able else []) + \
                [f"pursue {name} with {_unit_name(state, t)}" for t in able]
        case "rout-losses":
            return ["pursuit losses auto"]
        case "rout-withdraw":
            r = turn.rout_queue[0]
            pos = state.position
            common: set[str] | None = None
            for t in turn.routers:
                b = pos.block(t)
                dests = set(mv.reachable(m, pos, turn.movement, t, _speed(state, b), withdrawal="rout").paths)
                common = dests if common is None else common & dests
            return [f"rout {m.name(r.hex)} -> {m.name(d)}" for d in sorted(common or (), key=m.name) if d != r.hex]
    return []


def _supply_orders(state: State, role: Side, turn: Turn) -> list[str]:
    """'supply check', with the Fortress and Oasis choices the check needs
    (RB 13.3, 15.1): every choice for each, the others at their first."""
    import itertools

    m = _map()
    check = sp.initial_supply_check if turn.step == "initial-supply" else sp.final_supply_check
    kwargs = {"recoverable": _recoverable(state, role)} if turn.step == "initial-supply" else {}
    _, report = check(m, state.position, role, sp.SupplyChoices(), **kwargs)
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
                names = ", ".join(_unit_name(state, t) for t in chosen)
                parts.append(f"{n.kind} {m.name(n.hex)}: {names}")
            order = "supply check " + "; ".join(parts)
            if order not in orders:
                orders.append(order)
    return orders


def _option_orders(hand: Hand) -> list[str]:
    """RB 3.42: the options the hand pays for (with up to two dummies added)."""
    real = hand.real if hand.real is not None else hand.count
    dummies = hand.dummy if hand.dummy is not None else hand.count
    orders = ["pass"]
    for option, cost in OPTION_COST.items():
        if cost == 0 or cost > real:
            continue
        orders.append(option)
        orders += [f"{option} + {n} dumm{'y' if n == 1 else 'ies'}" for n in (1, 2) if n <= dummies]
    orders += [f"bluff {n}" for n in (1, 2) if n <= dummies]
    return orders


def _month_orders(state: State, role: Side, ctx) -> list[str]:
    hand = _hand(state, role)
    stage = state.stage
    if stage == "redraw":
        return ["keep hand", "redraw"]
    if stage in ("challenge", "answer"):
        verb = "challenge" if stage == "challenge" else "answer"
        orders = ["no challenge" if stage == "challenge" else "decline"]
        if hand.count and (hand.real is None or hand.real):
            orders.append(verb)
        if hand.count and (hand.dummy is None or hand.dummy):
            orders.append(f"{verb} with dummy")
        return orders
    if stage == "open-challenge":
        return ["open challenge"]
    if stage == "reveal-all":
        return ["reveal all"]
    if stage != "buildup":
        return []
    if _early_candidates(state, role):
        return ["early arrival"]
    if _due_count(state, role):
        return ["reinforce"]
    ledger = state.ledgers[role]
    orders = ["end buildup"]
    s = _scenario(state)
    if role == "axis" and not state.pregame and s.axis.malta_group is not None \
            and not bu.check_malta_group(s, state.month, state.malta or None):
        orders.append("call malta group")
    if hand.dummy:
        orders += [f"end buildup discard {n} dummies" for n in range(1, hand.dummy + 1)]
    if ledger.available >= bu.SUPPLY_CARD_BP:
        orders.append("buy supply 1")
    m, pos, bctx = _map(), state.position, _bctx(state)
    orders += _minefield_orders(state, role, ledger)
    for b in pos.blocks_of(role):
        if not b.unit:
            continue
        u = _scenarios().roster.get(b.unit)
        if b.hex == m.base(role) and b.cv < u.max_cv and bu.replacement_cost(u, 1) <= ledger.available:
            orders.append(f"rebuild {b.unit} 1")
        for n in m.passable_neighbours(b.hex):
            action = bu.Redeploy(token=b.token, path=(b.hex, n))
            if not bu.check_spend(bctx, pos, ledger, action):
                orders.append(f"redeploy {b.unit} -> {m.name(n)}")
    return orders


def _minefield_orders(state: State, role: Side, ledger: bu.Ledger) -> list[str]:
    """RB 16.55: a Minefield under each own unengaged stack in the Network fixed
    for this Buildup (15 BP), or free by dismantling two known ones there."""
    own = _mines(state, role)
    network = set(state.networks.get(role, ()))
    enemy = {b.hex for b in state.position.blocks_of(enemy_of(role))}
    known = [h for h in own.known if h in network]
    sites = sorted({b.hex for b in state.position.blocks_of(role)} & network - enemy - set(own.known))
    m = _map()
    orders = [f"minefield {m.name(h)}" for h in sites] if ledger.available >= bu.MINEFIELD_BP else []
    if len(known) >= bu.MINEFIELDS_DISMANTLED_FOR_FREE and sites:
        orders.append(f"minefield {m.name(sites[0])} dismantle {m.name(known[0])}, {m.name(known[1])}")
    return orders


def _movement_orders(state: State, role: Side, turn: Turn) -> list[str]:
    """Each unit alone to each hex it can reach in a Group Move (RB 5.1)."""
    m, pos, movement = _map(), state.position, turn.movement
    verb = "withdraw" if movement.withdrawal_only else "group"
    out = []
    if movement.moves_made < movement.moves_allowed and not movement.marches_announced:
        for b in sorted(pos.blocks_of(role), key=lambda b: (b.hex, b.unit)):
            if b.disrupted or movement.has_moved(b.token):
                continue
            reach = mv.reachable(m, pos, movement, b.token, _speed(state, b),
                                 withdrawal="pass" if movement.withdrawal_only else "")
            for dest in sorted(reach.paths, key=m.name):
                if dest != b.hex:
                    out.append(f"{verb} {m.name(b.hex)} -> {m.name(dest)} {b.unit or b.token}")
    return out


def _refuse_battle_orders(state: State, role: Side, turn: Turn, hex_: str) -> list[str]:
    """'refuse-battle <hex> slowest <speed>' with the true slowest speed, when
    the refusal is legal and something can withdraw."""
    m, pos = _map(), state.position
    refusers, _ = routs.refusal_split(pos, hex_, role)
    speeds = [_speed(state, pos.block(t)) for t in refusers]
    if not refusers or None in speeds or mv.refusal_problems(m, pos, turn.movement, hex_) \
            or not _refusal_orders(state, role, turn, hex_):
        return []
    return [f"refuse-battle {m.name(hex_)} slowest {min(speeds)}"]


def _refusal_orders(state: State, role: Side, turn: Turn, hex_: str) -> list[str]:
    m, pos = _map(), state.position
    group = [b for b in pos.blocks_in(hex_, role) if not b.disrupted]
    network = _refusal_network(pos, mv.Move(kind="group", origin=hex_, withdrawal="refuse",
                                            units=tuple(mv.UnitMove(b.token, (hex_,)) for b in group)))
    common: set[str] | None = None
    for b in group:
        dests = set(mv.reachable(m, pos, turn.movement, b.token, _speed(state, b), withdrawal="refuse",
                                 network=network).paths)
        common = dests if common is None else common & dests
    return [f"refuse-battle {m.name(hex_)} -> {m.name(d)}" for d in sorted(common or (), key=m.name)
            if d != hex_]


def legal_actions(state: State, role: Side, ctx) -> list[object]:
    """Actions that carry no new secret and need no route choice; Moves and
    secret-bearing orders are listed by ``legal_orders``."""
    decision = pending(state)
    if decision is None or decision.role != role or decision.kind == DICE:
        return []
    if state.phase == "deploy":
        if not check_deployment_complete(_map(), _scenario(state), role, state.position):
            return [EndDeployment()]
        return []
    turn = _current(state)
    candidates: list[object] = {
        "initial-supply": [SupplyCheck()], "final-supply": [SupplyCheck()], "option": [PlayCards(count=0)],
        "movement": [EndMovement()], "refuse": [AcceptBattle(hex=h) for h in turn.refusals],
        "retreat-probe": [Probe(hex=turn.retreating, go=False)],
        "retreat-pursuit": [routs.PursuitFire(hex=turn.retreating)],
    }.get(turn.step, [])
    if turn.step == "retreat-slowest":
        speeds = [_speed(state, state.position.block(t)) for t in turn.retreaters]
        if None not in speeds:
            candidates.append(RetreatSpeed(hex=turn.retreating, slowest=min(speeds)))
    if turn.step == "march-losses":  # secret-free only when every unit is at its last step (T-39)
        candidates.append(MarchLosses(eliminated=turn.march_losses))
    return [a for a in candidates if not check(state, a, ActingAs(ctx, role))]


def _fire_lines(state: State, result: cb.FireResult) -> tuple[str, ...]:
    """RB 9.2-9.4: each firing unit (named where this replay knows it: fire
    happens face up, RB 8.5), its target class, fire rating, dice and hits."""
    where = _map().name(result.hex)
    lines = []
    for shot in result.shots:
        if shot.target is None:
            continue
        hits = f"{shot.hits} hit{'s' * (shot.hits != 1)}" + (" (halved: Minefield)" if shot.half else "")
        lines.append(_named(state, f"{where}: {shot.token} at {shot.target} ({shot.fire}): "
                                   f"{' '.join(map(str, shot.dice))} -> {hits}"))
    return tuple(lines)


def describe_dice(sides: tuple[int, ...], values: tuple[int | None, ...]) -> str | None:
    """Supply Cards drawn as dice (rules.ritd_v3.cards) in words: how many real
    and dummy where this replay sees them; other dice as numbers (None)."""
    deck = _deck()
    if not sides or any(n != deck.total for n in sides):
        return None
    n = len(values)
    cards = f"{n} Supply Card{'s' * (n != 1)} drawn"
    seen = [v for v in values if v is not None]
    if not seen:
        return f"{cards} face down"
    real = sum(cd.is_real(v, deck) for v in seen)
    return f"{cards}: {real} real, {len(seen) - real} dummy" + (" (the rest unseen)" if len(seen) < n else "")


def describe_action(state: State, action: object, role: str | None) -> str:
    """``format_action`` with the blocks this replay can identify named
    ("Unit (token)"): a player's own units, and enemy units once revealed;
    nothing hidden from ``role`` is shown (the state holds only what it knows)."""
    return _named(state, format_action(action))


def format_action(action: object) -> str:
    m = _map()
    match action:
        case Deploy(token=token, hex=hex_):
            return f"deploy block {token} at {m.name(hex_)}"
        case EndDeployment(cards=cards):
            return "end deployment" + (f", {len(cards)} cards drawn" if cards else "")
        case KeepHand():
            return "keep hand"
        case Redraw(cards=cards):
            return f"redraw: {len(cards)} new cards"
        case Challenge(label=label):
            return "challenge (one card face down)" if label else "no challenge"
        case Answer(label=label):
            return "answer (one card)" if label else "decline"
        case OpenChallenge():
            return "open challenge"
        case EarlyArrival(slots=slots):
            return f"early arrival: {len(slots)} hidden slots"
        case Reinforce(tokens=tokens, early=early):
            return f"reinforce: {len(tokens)} blocks in Base ({', '.join(tokens)})" + \
                (f", {len(early)} of them early" if early else "")
        case Rebuild(token=token, steps=steps, bp=bp):
            return f"rebuild {token} {steps} step{'s' if steps > 1 else ''} ({bp} BP)"
        case CallMalta(tokens=tokens):
            return f"call the Malta Group: {len(tokens)} blocks in Base ({', '.join(tokens)})"
        case bu.Redeploy(token=token, path=path):
            return f"redeploy {token} {m.name(path[0])} -> {m.name(path[-1])} ({bu.redeployment_cost(m, path)} BP)"
        case bu.SeaRedeploy(token=token, to=to):
            return f"sea {token} -> {m.name(to)}"
        case bu.ReturnForRefit(token=token, path=path):
            return f"refit {token} {m.name(path[0])} -> {m.name(path[-1])}"
        case bu.BuySupply(cards=n):
            return f"buy supply {n} ({n * bu.SUPPLY_CARD_BP} BP)"
        case EndBuildup(discard=discard, cards=cards):
            return "end buildup" + (f", {discard} dummies handed back" if discard else "") + \
                (f", {len(cards)} cards drawn" if cards else "")
        case RevealAll():
            return "reveal all"
        case BuildMinefield(free=free, dismantled_shown=shown):
            return ("build a hidden Minefield" + (" by dismantling two" if free else f" ({bu.MINEFIELD_BP} BP)")
                    + (f", the revealed one at {', '.join(m.name(h) for h in shown)} dismantled" if shown else ""))
        case OpenMinefields(hexes=hexes):
            return "open minefields " + ", ".join(m.name(h) for h in hexes)
        case Blitz(go=go):
            return "blitz" if go else "no blitz"
        case SupplyCheck():
            return "supply check"
        case PlayCards(count=count):
            return "pass" if count == 0 else f"play {count} card{'s' if count > 1 else ''} face down"
        case mv.Move(kind=kind, origin=origin, units=units, destination=dest, withdrawal=w, rommel=rommel):
            verb = {"pass": "withdraw", "refuse": "refuse-battle", "rout": "rout"}.get(w, kind)
            legs = {}
            for u in units:
                legs.setdefault(u.destination, []).append(u.token)
            text = f"{verb} {m.name(origin)}" + "".join(f" -> {m.name(d)} {' '.join(ts)}" for d, ts in legs.items())
            if kind == "regroup" and dest and not units:
                text += f" -> {m.name(dest)}"
            return text + (" rommel" if rommel else "")
        case ForcedMarches(marches=marches):
            return "forced-march " + "; ".join(f"{f.token} -> {m.name(f.path[-1])}" for f in marches)
        case EndMovement():
            return "end movement"
        case AcceptBattle(hex=hex_):
            return f"accept-battle {m.name(hex_)}"
        case RefuseBattle(hex=hex_, slowest=slowest):
            return f"refuse-battle {m.name(hex_)} slowest {slowest}"
        case RetreatSpeed(hex=hex_, slowest=slowest):
            return f"retreat {m.name(hex_)} slowest {slowest}"
        case Probe(hex=hex_, go=go):
            return f"{'probe' if go else 'no probe'} {m.name(hex_)}"
        case routs.PursuitFire(hex=hex_, pursuers=pursuers):
            return f"pursue {m.name(hex_)} with " + (", ".join(f"{p.token} ({p.dice} dice)" for p in pursuers)
                                                     or "none")
        case Rout(hex=hex_, slowest=slowest, eliminated=eliminated, recommit=recommit):
            return (f"rout {m.name(hex_)} slowest {slowest}: eliminated by Rout Attrition "
                    f"{', '.join(eliminated) or 'none'}; new identities for {', '.join(recommit) or 'none'}")
        case PursuitLosses(hex=hex_, eliminated=eliminated, recommit=recommit):
            return (f"pursuit losses in {m.name(hex_)}: eliminated {', '.join(eliminated) or 'none'}; "
                    f"new identities for {', '.join(recommit) or 'none'}")
        case MarchLosses(eliminated=eliminated, recommit=recommit):
            return (f"march losses (failed Retreat Forced Marches): eliminated {', '.join(eliminated) or 'none'}; "
                    f"new identities for {', '.join(recommit) or 'none'}")
        case RevealUnits():
            return "reveal units"
        case RevealOption():
            return "reveal option"
        case cb.BattleSelection(active=active, assault=assault):
            return "battles " + (", ".join(m.name(h) for h in active) or "none") + \
                (" assault " + ", ".join(m.name(h) for h in assault) if assault else "")
        case cb.FirePlan(hex=hex_, fires=fires):
            return f"fire {m.name(hex_)}: " + ", ".join(f"{f.token} at {f.target}" for f in fires)
        case cb.LossAllocation(hex=hex_, losses=losses):
            return f"losses {m.name(hex_)}: " + (", ".join(
                f"{x.token} {x.hits}" + (f" (+{x.half_hits} half)" if x.half_hits else "") for x in losses)
                or "none")
    return type(action).__name__


def explain(state: State, role: Side, topic: str, args: str, ctx) -> list[str]:
    """``pbem explain supply <hex or unit>`` / ``pbem explain move <unit>`` /
    ``pbem explain bp [axis|allied]`` (RB 16.5 sidebar)."""
    m, pos = _map(), state.position
    if topic == "supply":
        try:
            target = _own_token(state, role, args)
        except ValueError:
            target = _place(args)
        return [_named(state, line) for line in sp.explain_supply(m, pos, target)]
    if topic == "move":
        token = _own_token(state, role, args)
        turn = state.turn
        movement = turn.movement if turn is not None and turn.movement is not None and turn.active == role \
            else mv.start_movement(pos, role, moves_allowed=2, rommel_bonus=_scenario(state).special.rommel_bonus)
        return [_named(state, line)
                for line in mv.explain_move(m, pos, movement, token, _speed(state, pos.block(token)))]
    if topic in ("bp", "buildup"):
        return _divulged(state, role, args.strip().lower())
    raise ValueError(f"nothing to explain about '{topic}' (topics: supply, move, bp)")


def _divulged(state: State, role: Side, who: str) -> list[str]:
    """RB 16.5 sidebar "Divulging BP Expenditures": what a player must tell
    the opponent on request, for the Buildup under way or just ended (``who``:
    axis, allied or both; T-21: pbem answers from the log, where every
    expenditure is public except Minefield locations)."""
    sides = [s for s in SIDES if who in ("", "both", s)]
    if not sides:
        raise ValueError(f"'bp {who}': name axis, allied or both")
    if not state.ledgers and not state.saved:
        return ["no Buildup yet: BPs are determined in the Buildup (RB 16.3), not in Month 1"]
    lines = []
    for side in sides:
        ledger = state.ledgers.get(side)
        if ledger is None:
            lines.append(f"{side}: {state.saved.get(side, 0)} BP Saved (RB 16.5)")
            continue
        d = bu.divulge(ledger)
        lines += [f"{side} (RB 16.5 sidebar):", f"  BP Saved from earlier Months: {d.saved_before}",
                  f"  Redeployments: {d.redeployments}, {d.redeployment_bp} BP",
                  f"  steps rebuilt: {d.steps_rebuilt}, {d.replacement_bp} BP",
                  f"  Extra Supply: {d.extra_supply_bp} BP", f"  Minefields: {d.minefield_bp} BP",
                  f"  left to spend now: {ledger.available} BP"]
        if side == role:
            lines += [f"  {e.text}: {e.bp} BP" for e in ledger.entries]
    return lines


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
    #: Public markers (RB 12.7, 13.3, 15.1): Unsupplied; supplied by a Fortress or an Oasis.
    unsupplied: bool = False
    supplied_by: str = ""


class MineView(msgspec.Struct, frozen=True):
    """A Minefield (RB 14) the viewer may see: its own, hidden from the enemy
    until revealed (``revealed`` False), or either side's once revealed."""

    hex: str
    where: str
    side: str
    revealed: bool


class View(msgspec.Struct, frozen=True):
    role: str
    scenario: str
    month: int
    phase: str
    side: str
    blocks: list[BlockView]
    step: str = ""
    turn: int = 0
    cards: int = 0
    option: str = ""
    battles: list[str] = []
    last_rolls: list[int] = []
    stage: str = ""
    #: Supply Cards: every hand's size; real cards only in the viewer's own hand.
    hand_counts: dict[str, int] = {}
    own_real: int | None = None
    #: Buildup: the BP dice, Player 1, each side's BPs (own ledger in full,
    #: the opponent's divulged figures, RB 16.5 sidebar), Saved BPs.
    bp_dice: list[int] = []
    player1: str = ""
    bp: dict[str, list[str]] = {}
    passes: int = 0
    outcome: list[str] = []
    #: Fortress control (public, RB 13.1, 13.4): place name -> side.
    fortresses: dict[str, str] = {}
    #: The last fire: each unit's dice and what they scored (public).
    last_fire: list[str] = []
    #: The routes of the latest Player-Turn's movement, both sides' (public).
    last_moves: list[LastMove] = []
    #: Minefields (RB 14): own and revealed ones; every side's count (public).
    mines: list[MineView] = []
    mine_counts: dict[str, int] = {}
    #: The public facts of the position: every block's hex, side and markers
    #: (no unit, no CV), the battles with their hexsides (RB 8.1), Fortress
    #: control. For what is computed from them only when asked (the Supply
    #: Network of the map's supply overlay, RB 12.6).
    board: Position = Position()
    #: The optional rules in use (RB 17.0), in words (``OPTIONS``).
    options: list[str] = []


def view(state: State, role: Side | None) -> View:
    """What ``role`` sees: own blocks in full, others only where opened (DESIGN 4)."""
    m = _map()
    blocks = []
    for b in sorted(state.position.blocks, key=lambda b: (b.side, b.hex, b.token)):
        shown = b.side == role or b.token in state.disclosed
        by = b.fortress_supply or b.oasis_supply
        blocks.append(BlockView(token=b.token, side=b.side, hex=b.hex, where=m.name(b.hex),
                                unit=b.unit if shown else "", cv=b.cv if shown else 0,
                                disrupted=b.disrupted, revealed=b.revealed, unsupplied=b.unsupplied,
                                supplied_by=m.name(by) if by else ""))
    turn = state.turn if state.phase in ("turn", "final", "over") else None
    done = outcome(state)
    own = state.hands.get(role) if role in SIDES else None
    bp: dict[str, list[str]] = {}
    for side, ledger in state.ledgers.items():
        d = bu.divulge(ledger)
        bp[side] = [f"BPs: {ledger.received} new + {ledger.saved_before} Saved; {ledger.available} left",
                    (f"Redeployments: {d.redeployments} ({d.redeployment_bp} BP); steps rebuilt: "
                     f"{d.steps_rebuilt} ({d.replacement_bp} BP); Extra Supply: {d.extra_supply_bp} BP")]
        if side == role:
            bp[side] += [f"{e.text} ({e.bp} BP)" for e in ledger.entries if e.kind != "minefield"]
    return View(role=role or "", scenario=state.scenario, month=state.month, phase=state.phase,
                side=state.side, blocks=blocks, step=turn.step if turn else "", turn=turn.number if turn else 0,
                # the cards' real count is secret until Supply Revealed, except to their owner (RB 3.42)
                cards=turn.cards if turn else 0,
                option=turn.option if turn and (turn.active == role or turn.step == "supply-revealed"
                                                or turn.option) else "",
                battles=[m.name(b.hex) for b in state.position.battles], last_rolls=list(state.last_rolls),
                stage=state.stage, hand_counts={s: h.count for s, h in sorted(state.hands.items())},
                own_real=own.real if own is not None else None, bp_dice=list(state.bp_dice),
                player1=state.player1, bp=bp, passes=state.passes,
                fortresses={m.name(h): side for h, side in sorted(state.position.fortresses.items())},
                last_fire=list(state.last_fire), mines=_mine_views(state, role),
                mine_counts={s: mf.count for s, mf in sorted(state.minefields.items()) if mf.count},
                last_moves=list(state.last_moves), board=_public_board(state.position),
                options=[OPTIONS[o] for o in state.options],
                outcome=[done.summary.split("; ")[0], *state.result.explanation] if done else [])


def _mine_views(state: State, role: Side | None) -> list[MineView]:
    """Own Minefields in full, the others only where revealed (RB 14.2, DESIGN 4)."""
    m = _map()
    out = []
    for side, mf in sorted(state.minefields.items()):
        hexes = mf.known if side == role else mf.shown
        out += [MineView(hex=h, where=m.name(h), side=side, revealed=h in mf.shown) for h in sorted(hexes)]
    return out


def _public_board(pos: Position) -> Position:
    """``pos`` without any unit or CV: what both players see on the table,
    the blocks in the order of ``View.blocks`` (side, hex, token)."""
    blocks = sorted(pos.blocks, key=lambda b: (b.side, b.hex, b.token))
    return msgspec.structs.replace(pos, blocks=tuple(msgspec.structs.replace(b, unit="", cv=0) for b in blocks))


def render_text(v: View) -> str:
    s = _scenarios().get(v.scenario)
    where = f"Player-Turn {v.turn} ({v.side}), {v.step}" if v.turn else f"{v.phase}: {v.side} to act"
    lines = [f"{s.name} ({s.rule}), {_scenarios().month_label(s, v.month)} (Month {v.month}); {where}"]
    lines += [f"optional rule: {o}" for o in v.options]
    if v.outcome:
        lines += ["GAME OVER: " + v.outcome[0], *(f"  {line}" for line in v.outcome[1:])]
    elif v.phase != "turn":
        lines.append(f"{v.phase}: {v.stage}, {v.side} to act")
    if v.turn and v.step not in ("initial-supply", "option"):
        lines.append(f"cards played: {v.cards}" + (f" ({v.option})" if v.option else ""))
    if v.hand_counts:
        counts = ", ".join(f"{side} {n}" + (f" ({v.own_real} real)" if side == v.role and v.own_real is not None
                                            else "") for side, n in v.hand_counts.items())
        lines.append(f"Supply Cards in hand: {counts} (dealt from the shared 42-card deck)")
    if v.bp_dice:
        lines.append(f"Buildup: BP dice {v.bp_dice}; Player 1: {v.player1}")
    for side, rows in v.bp.items():
        lines += [f"{side} {row}" for row in rows]
    if v.battles:
        lines.append("battles: " + ", ".join(v.battles))
    if v.mine_counts:
        lines.append("Minefields: " + ", ".join(f"{side} {n}" for side, n in v.mine_counts.items())
                     + "".join(f"; {x.side} at {x.where}" + ("" if x.revealed else " (hidden)") for x in v.mines))
    if v.last_rolls:
        lines.append(f"last dice: {v.last_rolls}")
    for side in SIDES:
        mine = [b for b in v.blocks if b.side == side]
        lines.append(f"{side}: {len(mine)} blocks")
        by_hex: dict[str, list[BlockView]] = {}
        for b in mine:
            by_hex.setdefault(b.where, []).append(b)
        for where, bs in sorted(by_hex.items()):
            names = ", ".join((f"{b.unit} {b.cv}" if b.unit else f"block {b.token}")
                              + (" (disrupted)" if b.disrupted else "") for b in bs)
            lines.append(f"  {where}: {names}")
    return "\n".join(lines)


from rules.ritd_v3.report import MAP_OVERLAYS, map_picture, report_sections  # noqa: E402  (optional pbem hooks)

__all__ = ["SPEC", "Action", "State", "initial_state", "pending", "legal_actions", "legal_orders", "check",
           "apply", "resolve_dice", "on_open", "view", "outcome", "parse_order", "format_action",
           "render_text", "explain", "report_sections", "map_picture", "MAP_OVERLAYS", "reveal_die", "scenario_info",
           "deck_task", "on_deck",
           "describe_action", "describe_dice", "on_open_leaf"]
