"""The Player-Turn sequence (RB 3.4x chart), as far as movement and supply go.

Steps, each a decision of one player (the engine hands control over):

    initial-supply  active   T1 Initial Supply Check and T2 Disruption Recovery (RB 12.7, 11.2)
    option          active   T3 cards played face down; the option stays secret (RB 3.42, 4.0)
    movement        active   T4 Moves, then the Forced March announcements (RB 5, 6, 7)
    forced-march    passive  dice for the announced Forced Marches (RB 6.4): the engine rolls
    refuse          passive  T7 accept or Refuse Battle, group by group (RB 8.4, 10.2): a
                             refusal announces the slowest speed of the refusing units
    refuse-pursuit  active   Pursuit Fire on the refusing Group, or fire withheld (RB 10.2, 10.5)
    refuse-dice     passive  the Pursuit dice: the engine rolls (RB 10.5)
    refuse-losses   passive  Pursuit hits placed; new identity versions committed (RB 9.5, 10.5)
    refuse-withdraw passive  the refusing Group's Withdrawal Group Move (RB 10.2)
    retreat-probe   passive  after all other Moves, each Partial Retreat (RB 10.4, 10.41, T-35):
                             Probe Combat (one Combat Round, roles reversed, in the combat
                             steps below with the Rearguard firing first) or not
    probe-reveal    active   the Rearguard's units are revealed for the Probe (RB 8.5)
    retreat-slowest active   each Full Retreat (RB 10.3), or a Partial one whose Rearguard the
                             Probe eliminated: the slowest speed of the Retreating units
    retreat-pursuit passive  Pursuit Fire, or fire withheld (RB 10.3 sidebar, 10.5)
    retreat-dice    active   the Pursuit dice: the engine rolls
    retreat-losses  active   Pursuit hits placed; new identity versions committed; then the
                             survivors complete their announced Moves, Disrupted, and the
                             Disrupted units left in the hex Rout (RB 10.3 step 4)
    march-losses    active   after the Forced March dice: each Retreating unit whose Forced
                             March failed loses one step, in secret (new identity version;
                             eliminated at its last step); RB 6.4 sidebar, T-39
    mines-passive   passive  the end of the Movement phase: open the hexes of the Minefield set
                             that enemy units entered (RB 14.2, T-30)
    mines-active    active   the same for the active player (hexes entered by Withdrawals)
    reveal-passive  passive  T8 open the identities of units in battles (RB 7.3, 8.5)
    reveal-active   active   T8 the same for the active player
    battles         active   T9 the Active (and Assault) Battles (RB 8.6); skipped in a Pass
                             Turn and when no battle has Undisrupted units of both sides
    defensive-fire  passive  one Combat Round per Active Battle, in the order chosen (RB 9.1):
                             the defensive side's fire plan (RB 9.2, 9.3)
    defensive-dice  active   its dice: the engine rolls (RB 9.4)
    offensive-losses active  the hits placed by their owner (RB 9.5)
    offensive-fire  active   the offensive side's fire plan
    offensive-dice  passive  its dice
    defensive-losses passive the hits placed; then the next Active Battle
    rout-slowest    owner    a Rout (RB 11.3, T-12) of Disrupted units left unshielded by
                             combat losses or a Refusal: Rout Attrition (new identity
                             versions) and the slowest speed of the survivors
    rout-pursuit    enemy    Pursuit Fire by units that have not fired (skipped if none may)
    rout-dice       owner    the Pursuit dice: the engine rolls
    rout-losses     owner    Pursuit hits placed; new identity versions committed
    rout-withdraw   owner    the Rout Withdrawal Group Move (units with no route are
                             eliminated); the survivors are Disrupted again
                             (an Overrun, RB 11.4, T-13, Routs the same way in the
                             middle of movement, pursued by the Overrunning units)
    blitz           active   after the first Combat phase of a turn with 3 or more cards:
                             the Blitz Movement and Combat phases, or not (RB 3.45, 4.4);
                             they run as the first ones (one Move, units that moved
                             may not move again, hexside limits reset, Blitz Combat
                             with no Assault and no mandatory Fortress combat)
    final-supply    active   T12 Final Supply Check (RB 12.7)
    supply-revealed active   T13 open the turn option and check it paid for the turn (RB 3.48)

then the other side's Player-Turn begins. Routs interrupt the turn and then
return to where it was (the refusal, the combat, the movement after an
Overrun, or the end of the Final Supply Check; T-12, T-13). Final Supply
Check Routs eliminate the unshielded engaged units newly Disrupted (CB-11);
Disrupted units they shielded Rout. The Forced March dice are rolled after
the Retreats (T-35). The month around the Player-Turns (cards, Initiative, Buildup,
victory) is in rules.ritd.game (decisions T-14..T-23).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from rules.ritd import fire as fr
from rules.ritd import movement as mv
from rules.ritd import routs
from rules.ritd.position import Side

Step = Literal["initial-supply", "option", "blitz", "movement", "forced-march", "refuse", "refuse-pursuit",
               "refuse-dice", "refuse-losses", "refuse-withdraw", "reveal-passive", "reveal-active",
               "battles", "defensive-fire", "defensive-dice", "offensive-losses", "offensive-fire",
               "offensive-dice", "defensive-losses", "final-supply", "supply-revealed", "rout-slowest",
               "rout-pursuit", "rout-dice", "rout-losses", "rout-withdraw", "mines-passive", "mines-active",
               "retreat-probe", "probe-reveal", "retreat-slowest", "retreat-pursuit", "retreat-dice",
               "retreat-losses", "march-losses"]



class PendingRout(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A Rout waiting to be resolved (RB 11.3, T-12): ``side``'s Disrupted
    ``tokens`` in ``hex``; ``fired``: enemy units that may not Pursue."""

    hex: str
    side: Side
    tokens: tuple[str, ...]
    fired: tuple[str, ...] = ()


class Turn(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One Player-Turn in progress."""

    number: int  # Player-Turns played in the game so far, this one included
    active: Side
    step: Step = "initial-supply"
    #: Cards played face down at T3 (public); 0 is a Pass.
    cards: int = 0
    #: Commitment label of the secret turn option ("" in a Pass).
    option_label: str = ""
    #: The option, once known ("pass", or named at Supply Revealed, RB 3.48).
    option: str = ""
    #: Real cards among those played, when this replay knows it (-1: secret).
    real: int = -1
    #: Whether Active Battles were fought (a Combat Round needs a real card, RB 4.1).
    fought: bool = False
    #: Whether the Blitz Movement and Combat phases are under way or done (RB 3.45, 4.4).
    blitz: bool = False
    movement: mv.MovementTurn | None = None
    #: Attacked hexes still awaiting the passive player's decision (RB 8.4).
    refusals: tuple[str, ...] = ()
    #: The Refuse Battle under way (RB 10.2): its hex, the Undisrupted refusing
    #: units, the announced slowest speed, the Pursuit Fire and its hits.
    refusing: str = ""
    refusers: tuple[str, ...] = ()
    slowest: int = 0
    pursuit: routs.PursuitFire | None = None
    hits: int = 0
    #: The Retreat of the active player under way (RB 10.3, 10.4, T-35): its
    #: hex, the Disengaging units waiting there, the Rearguard of a Partial
    #: Retreat; whether its Probe Combat round is under way (RB 10.41, then
    #: ``battles`` holds the hex) and the Probing units that fired in it. A
    #: Retreat uses ``slowest``, ``pursuit`` and ``hits`` as a refusal does.
    retreating: str = ""
    retreaters: tuple[str, ...] = ()
    rearguard: tuple[str, ...] = ()
    probing: bool = False
    probe_fired: tuple[str, ...] = ()
    #: Battles Partially Retreated from this Player-Turn: no combat there (RB 10.4, CB-03).
    partial: tuple[str, ...] = ()
    #: The Combat phase (RB 8.6, 9.1): the Active Battles still to fight, in
    #: order (the first is under way), the Assault Battles chosen, the fire
    #: plan awaiting its dice and the scored fire awaiting its loss allocation.
    battles: tuple[str, ...] = ()
    assault: tuple[str, ...] = ()
    fire: fr.FirePlan | None = None
    fire_result: fr.FireResult | None = None
    #: Routs (RB 11.3, T-12): the queue (the first is under way), the step to
    #: resume when it is empty, the routed survivors of the one under way,
    #: their announced slowest speed, its Pursuit Fire and hits.
    rout_queue: tuple[PendingRout, ...] = ()
    rout_resume: str = ""
    routers: tuple[str, ...] = ()
    rout_slowest: int = 0
    rout_pursuit: routs.PursuitFire | None = None
    rout_hits: int = 0
    #: Units eliminated at this turn's Final Supply Check: engaged, newly
    #: Disrupted for lack of a Supply Line, unshielded (RB 12.7, 11 sidebar; CB-11, T-13).
    supply_eliminated: tuple[str, ...] = ()
    #: Retreating units whose Forced March failed, each to lose one step by
    #: its owner's decision (RB 6.4 sidebar "Retreat Forced Marches", T-39),
    #: and the Overrun hexes of the same dice, whose Routs follow (T-13).
    march_losses: tuple[str, ...] = ()
    march_overruns: tuple[str, ...] = ()

    @property
    def passive(self) -> Side:
        return "allied" if self.active == "axis" else "axis"


def option_label(turn_number: int) -> str:
    return f"turn{turn_number}.option"


def movement_of(turn: Turn) -> mv.MovementTurn:
    """The Movement phase record of ``turn`` (RB 3.44): every step from the
    Movement phase on has one; asking for it earlier is a rules bug."""
    if turn.movement is None:
        raise ValueError(f"Player-Turn {turn.number} has no Movement under way (step {turn.step!r})")
    return turn.movement
