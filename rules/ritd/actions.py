"""The actions of Rommel in the Desert: the msgspec tagged union a log holds.

Their tags and fields are the log's encoding: never change one in a
released version. Also what an action is called in a refusal, and the
RB 1.0 check that every hex an action names is a hex of the map.
"""

from __future__ import annotations

import re

import msgspec

from pbem.rulesapi import Problem
from rules.ritd import buildup as bu
from rules.ritd import combat_round as cr
from rules.ritd import fire as fr
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd import routs
from rules.ritd.state import game_map, quoted


class OrderError(ValueError):
    """An order's text that cannot be read: what ``parse_order`` raises (the
    engine's contract asks for a ValueError naming the expected syntax or the
    rule). ``str()`` is the message shown to the player; ``rule`` is the
    rulebook section it cites ("RB 10.2"), "" if none."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        found = re.match(r"RB \d+(?:\.\d+)*", message)
        self.rule = found.group() if found else ""


class _A(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type"):
    pass


class Deploy(_A, tag="deploy", frozen=True):
    """Place one block (RB 18.0); its identity is committed as ``<token>.id0``."""

    token: str
    hex: str


class EndDeployment(_A, tag="end-deployment", frozen=True):
    """End of a side's set-up (RB 18.0); the initial hands are then dealt from
    the shared deck (rules.ritd.cards, T-15). ``cards`` must stay empty (it
    held the seeds of the approximate draw of rules version 2)."""

    cards: tuple[str, ...] = ()


class KeepHand(_A, tag="keep-hand", frozen=True):
    """RB 18.0: keep the initial hand."""


class Redraw(_A, tag="redraw", frozen=True):
    """RB 18.0: hand back the whole initial hand and draw a new one (once);
    ``cards`` must stay empty (rules version 2's seeds)."""

    cards: tuple[str, ...] = ()


class Challenge(_A, tag="challenge", frozen=True):
    """RB 3.3: the Allied Initiative challenge: one card face down, its
    real/dummy committed as ``label`` ("" : no challenge); ``card``: which
    card of the hand ("round:position" in the shared deck)."""

    label: str = ""
    card: str = ""


class Answer(_A, tag="answer", frozen=True):
    """RB 3.3: the Axis answer: one card face down, committed and opened in
    the same event (the Allied card is already fixed); "" declines. ``card``:
    which card of the hand; it is shown in the same event."""

    label: str = ""
    card: str = ""


class OpenChallenge(_A, tag="open-challenge", frozen=True):
    """RB 3.3: the Allied challenge card is turned face up (opened in this event)."""


class EarlyArrival(_A, tag="early-arrival", frozen=True):
    """RB 16.41: one hidden slot per unit due next month, in the owner's
    order (each slot commits a unit name); one die per slot follows."""

    slots: tuple[str, ...]


class Reinforce(_A, tag="reinforce", frozen=True):
    """RB 16.4, 16.41: the Reinforcements due this month, then the units whose
    slots rolled 1-2 (``early``, in the same order as the last tokens), enter
    Base as new blocks, each identity committed as ``<token>.id0``."""

    tokens: tuple[str, ...]
    early: tuple[str, ...] = ()


class CallMalta(_A, tag="call-malta", frozen=True):
    """RB 18.6, 18.8: the Axis calls the Malta Group ("M" units) into Base,
    once, each identity committed as ``<token>.id0``."""

    tokens: tuple[str, ...]


class Rebuild(_A, tag="rebuild", frozen=True):
    """RB 16.54: ``steps`` Replacement steps for ``token`` in Base costing
    ``bp`` (divulged, RB 16.5 sidebar); the new CV is committed as the
    identity version ``<token>.id<v+1>``."""

    token: str
    steps: int
    bp: int


class EndBuildup(_A, tag="end-buildup", frozen=True):
    """RB 16.5, 16.6: end of spending (unspent BPs Saved up to 20), ``discard``
    dummies handed back (``cards``: which, shown in the same event), and the
    Resupply cards dealt from the shared deck (T-18)."""

    discard: int = 0
    cards: tuple[str, ...] = ()


class BuildMinefield(_A, tag="build-minefield", frozen=True):
    """RB 16.55: a hidden Minefield, committed as the new Merkle set ``label``
    (rules.ritd.mines); ``free``: two Minefields dismantled instead of 15 BP;
    ``dismantled_shown``: the revealed ones among them (public, T-31)."""

    label: str
    free: bool = False
    dismantled_shown: tuple[str, ...] = ()


class OpenMinefields(_A, tag="open-minefields", frozen=True):
    """RB 14.2: the hexes entered by enemy units, opened in this event from the
    owner's Minefield set at the end of the Movement phase (T-30)."""

    hexes: tuple[str, ...]


class RevealAll(_A, tag="reveal-all", frozen=True):
    """RB 17.0: at the end of the game every block is turned face up (all
    current identities opened in this event) to count the units in play."""


class SupplyCheck(_A, tag="supply-check", frozen=True):
    """T1 Initial or T12 Final Supply Check with the owner's choices (RB 12.7, 13.3, 15.1)."""

    fortress: dict[str, tuple[str, ...]] = {}
    oasis: dict[str, str] = {}


class PlayCards(_A, tag="play-cards", frozen=True):
    """T3: ``count`` cards face down (0: a Pass); the option is committed as
    ``label``; ``cards``: which cards of the hand (shown at Supply Revealed)."""

    count: int
    label: str = ""
    cards: tuple[str, ...] = ()


class ForcedMarches(_A, tag="forced-marches", frozen=True):
    """RB 6.4: every Forced March attempt, announced after all Moves."""

    marches: tuple[mv.ForcedMarch, ...]


class EndMovement(_A, tag="end-movement", frozen=True):
    pass


class AcceptBattle(_A, tag="accept-battle", frozen=True):
    """RB 8.4: the passive player fights the battle in ``hex``."""

    hex: str


class RefuseBattle(_A, tag="refuse-battle", frozen=True):
    """RB 10.2: the passive player Refuses Battle in ``hex``, announcing the
    slowest speed of the Undisrupted refusing units (RB 10.5)."""

    hex: str
    slowest: int


class PursuitLosses(_A, tag="pursuit-losses", frozen=True):
    """RB 10.5, 9.5: Pursuit hits placed on the refusing units, in secret:
    ``eliminated`` leave the map (public); every survivor in ``recommit``
    gets a new identity version ``<token>.id<v+1>`` (unit and new CV)."""

    hex: str
    eliminated: tuple[str, ...] = ()
    recommit: tuple[str, ...] = ()


class Rout(_A, tag="rout", frozen=True):
    """RB 11.3 (T-12): the owner of the Routed units in ``hex`` applies Rout
    Attrition in secret (``eliminated`` leave the map; every survivor in
    ``recommit`` gets a new identity version ``<token>.id<v+1>``, one step
    less) and announces the slowest speed of the survivors (0 if none)."""

    hex: str
    slowest: int = 0
    eliminated: tuple[str, ...] = ()
    recommit: tuple[str, ...] = ()


class MarchLosses(_A, tag="march-losses", frozen=True):
    """RB 6.4 sidebar "Retreat Forced Marches" (T-39): each Retreating unit
    whose Forced March failed loses one step, applied in secret by its owner:
    ``eliminated`` (at their last step, RB 2.3) leave the map; every survivor
    in ``recommit`` gets a new identity version ``<token>.id<v+1>``, one step less."""

    eliminated: tuple[str, ...] = ()
    recommit: tuple[str, ...] = ()


class Probe(_A, tag="probe", frozen=True):
    """RB 10.41: the passive player provokes a round of Probe Combat against
    the Partial Retreat from ``hex`` (``go``), or declines; a Probe opens, in
    this event, the identities of his units there not yet revealed (RB 8.5)."""

    hex: str
    go: bool


class RetreatSpeed(_A, tag="retreat-speed", frozen=True):
    """RB 10.5: the active player announces the speed of the slowest unit
    Retreating from ``hex`` (RB 10.3 Full Retreat procedure, T-35)."""

    hex: str
    slowest: int


class Blitz(_A, tag="blitz", frozen=True):
    """RB 3.45, 4.4: after the first Combat phase of a turn with three or more
    cards, the Blitz Movement and Combat phases (``go``) or not."""

    go: bool


class RevealUnits(_A, tag="reveal-units", frozen=True):
    """RB 7.3, 8.5: my units in battles are revealed (their identities opened in this event)."""


class RevealOption(_A, tag="reveal-option", frozen=True):
    """RB 3.48 Supply Revealed: the turn option is opened in this event."""


class ExitMap(_A, tag="exit", frozen=True):
    """RB 17.1 and its sidebar "Exiting Units": a Group Move (RB 5.1) from
    ``origin`` whose units each move along ``path`` (from ``origin`` to a hex
    of the enemy map-end; just ``(origin,)`` for a unit already there) and on
    off the board, never to return. ``rommel``: it is the Rommel Move (RB 6.3).
    Rules: rules.ritd.exits."""

    origin: str
    units: tuple[mv.UnitMove, ...]
    rommel: bool = False


class EnterBase(_A, tag="enter-base", frozen=True):
    """RB 16.4 sidebar "Reinforcements to an Engaged Base": a Group Move of
    units waiting off board near the mover's Base into it; each unit's
    ``path`` begins in the Base (the step onto the map is one hex of
    movement, with no Hexside Limit). ``rommel``: the Rommel Move (RB 6.3).
    Rules: rules.ritd.base_entry."""

    units: tuple[mv.UnitMove, ...]
    rommel: bool = False


Action = (Deploy | EndDeployment | SupplyCheck | PlayCards | mv.Move | ExitMap | EnterBase | ForcedMarches
          | EndMovement
          | AcceptBattle | RefuseBattle | routs.PursuitFire | PursuitLosses | Rout | RevealUnits | RevealOption
          | cr.BattleSelection | fr.FirePlan | ls.LossAllocation | KeepHand | Redraw | Challenge | Answer
          | OpenChallenge | EarlyArrival | Reinforce | CallMalta | Rebuild | bu.Redeploy | bu.SeaRedeploy | bu.ReturnForRefit | bu.BuySupply
          | EndBuildup | RevealAll | Blitz | BuildMinefield | OpenMinefields | Probe | RetreatSpeed | MarchLosses)


def _hexes_named(action: object) -> list[str]:
    """Every hex id an action names (the fields that hold hexes, by action type)."""
    match action:
        case (Deploy(hex=h) | AcceptBattle(hex=h) | RefuseBattle(hex=h) | routs.PursuitFire(hex=h)
              | PursuitLosses(hex=h) | Rout(hex=h) | fr.FirePlan(hex=h) | ls.LossAllocation(hex=h) | Probe(hex=h)
              | RetreatSpeed(hex=h)):
            return [h]
        case mv.Move(origin=origin, destination=destination, units=units):
            return [origin] + ([destination] if destination else []) + [h for u in units for h in u.path]
        case ExitMap(origin=origin, units=units):
            return [origin] + [h for u in units for h in u.path]
        case EnterBase(units=units):
            return [h for u in units for h in u.path]
        case ForcedMarches(marches=marches):
            return [h for f in marches for h in f.path]
        case bu.Redeploy(path=path) | bu.ReturnForRefit(path=path):
            return list(path)
        case bu.SeaRedeploy(to=to):
            return [to]
        case OpenMinefields(hexes=hexes):
            return list(hexes)
        case cr.BattleSelection(active=active, assault=assault):
            return list(active) + list(assault)
        case SupplyCheck(fortress=fortress, oasis=oasis):
            return list(fortress) + list(oasis)
    return []


def unknown_hexes(action: object) -> list[Problem]:
    """RB 1.0: every hex an action names is a hex of the map. A signed action
    naming another ('Z99') is refused here, before any rule looks it up.
    (Full name validation at parse time comes with issue 19's parser.)"""
    hexes = game_map().hexes
    bad = [h for h in _hexes_named(action) if h not in hexes]
    if not bad:
        return []
    bad = list(dict.fromkeys(bad))
    return [Problem("RB 1.0", f"{kind_of(action)} names {quoted(h)}, which is not a hex of the map")
            for h in bad[:5]]


#: What an action is called in a refusal, with the rule that says when it is made.
_ACTION_NAMES = {
    "deploy": ("a set-up Deploy", "RB 18.0"), "end-deployment": ("the end of deployment", "RB 18.0"),
    "keep-hand": ("keeping the initial hand", "RB 18.0"), "redraw": ("a redraw of the initial hand", "RB 18.0"),
    "challenge": ("an Initiative challenge", "RB 3.3"), "answer": ("an answer to the Initiative challenge", "RB 3.3"),
    "open-challenge": ("turning up the challenge card", "RB 3.3"),
    "early-arrival": ("an Early Arrival check", "RB 16.41"), "reinforce": ("Reinforcements", "RB 16.4"),
    "call-malta": ("calling the Malta Group", "RB 18.6"), "rebuild": ("a Rebuild", "RB 16.54"),
    "end-buildup": ("the end of the Buildup", "RB 16.0"), "redeploy": ("a Redeploy", "RB 16.51"),
    "sea-redeploy": ("a Sea Redeploy", "RB 16.53"), "refit": ("a Return for Refit", "RB 16.52"),
    "buy-supply": ("buying Supply Cards", "RB 16.5"), "build-minefield": ("building a Minefield", "RB 16.55"),
    "open-minefields": ("opening Minefields", "RB 14.2"), "reveal-all": ("turning every block face up", "RB 17.0"),
    "supply-check": ("a Supply Check", "RB 12.7"), "play-cards": ("playing Supply Cards", "RB 3.42"),
    "move": ("a Move", "RB 3.44"), "exit": ("exiting the map", "RB 17.1"),
    "enter-base": ("entering the Base from off board", "RB 16.4"), "forced-marches": ("Forced Marches", "RB 6.4"),
    "end-movement": ("the end of movement", "RB 3.44"), "accept-battle": ("accepting battle", "RB 8.4"),
    "refuse-battle": ("Refusing Battle", "RB 10.2"), "pursuit": ("Pursuit Fire", "RB 10.5"),
    "pursuit-losses": ("Pursuit losses", "RB 10.5"), "rout": ("a Rout", "RB 11.1"),
    "march-losses": ("Forced March losses", "RB 6.4"), "probe": ("a Probe", "RB 10.41"),
    "retreat-speed": ("a Retreat's slowest speed", "RB 10.3"), "blitz": ("the Blitz choice", "RB 3.45"),
    "reveal-units": ("revealing units in battles", "RB 7.3"), "reveal-option": ("Supply Revealed", "RB 3.48"),
    "battles": ("choosing the Active Battles", "RB 8.6"), "fire": ("a Fire plan", "RB 9.1"),
    "losses": ("placing combat losses", "RB 9.5"),
}


def kind_of(action: object) -> str:
    tag = getattr(getattr(type(action), "__struct_config__", None), "tag", None)
    name, rule = _ACTION_NAMES.get(str(tag), (f"the action '{tag}'", ""))
    return f"{name} ({rule})" if rule else name
