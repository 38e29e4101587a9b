"""The vocabulary of movement (RB 5.0-6.4, 10.1-10.4): the Move and Forced
March actions (their msgspec tags and fields are the log's encoding), the
Movement phase's bookkeeping (``MovementTurn``), the results of checks and
moves, and the RB 6 numbers (speeds, Road and Rommel Bonuses, Forced March).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import msgspec

from pbem.rulesapi import Problem
from rules.ritd_v5.hexmap import HexMap
from rules.ritd_v5.position import Block, Position, Side
from rules.ritd_v5.units import UNIT_TYPES

#: RB 6.1: speeds run 1-4; the fastest type bounds every hidden block.
MAX_SPEED: int = max(t.speed for t in UNIT_TYPES.values())
MIN_SPEED: int = min(t.speed for t in UNIT_TYPES.values())
#: RB 6.2 Road Bonuses.
ROAD_BONUS: Mapping[str, int] = {"highway": 4, "track": 2, "trail": 1}
#: RB 6.3 Rommel Bonus.
ROMMEL_BONUS = 1
#: RB 6.4: one hex past the normal maximum; a die of 4-6 succeeds.
FORCED_MARCH_HEXES = 1
FORCED_MARCH_SUCCESS = 4

MoveKind = Literal["group", "regroup"]
#: "" an ordinary Move (a Supply Card spent); "pass" the free Withdrawal of a
#: Pass Turn (RB 4.5); "refuse" the Passive Player Refusing Battle (RB 10.2);
#: "rout" a Routed group's Withdrawal (RB 11.3).
WithdrawalKind = Literal["", "pass", "refuse", "rout"]
RetreatKind = Literal["full", "partial"]

ROAD_RANK = {"highway": 0, "track": 1, "trail": 2, "off": 3}



# ------------------------------------------------------------------ actions


class UnitMove(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One unit's route: ``path`` runs from its current hex to its destination."""

    token: str
    path: tuple[str, ...]

    @property
    def destination(self) -> str:
        return self.path[-1]


class Move(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="move"):
    """A Group Move (RB 5.1) from ``origin`` or a Regroup Move (RB 5.2) with
    Command Point ``origin`` to ``destination``; ``withdrawal`` names the kind
    of Withdrawal Move (RB 5.3) it is, if any; ``rommel`` designates it the
    Rommel Move (RB 6.3)."""

    kind: MoveKind
    origin: str
    units: tuple[UnitMove, ...]
    destination: str = ""
    withdrawal: WithdrawalKind = ""
    rommel: bool = False


class ForcedMarch(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A Forced March attempt (RB 6.4). ``path`` is the unit's whole route
    this turn, from the hex it started the Move in to the hex it tries to
    reach: its Group Move path plus one hex, or the path to the destination
    of a Regroup Move made this phase."""

    token: str
    path: tuple[str, ...]


# ------------------------------------------------------------ bookkeeping


class Engagement(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A unit Engaged ``hex`` across the hexside from ``from_hex`` (RB 7.0, 7.1)."""

    token: str
    from_hex: str
    hex: str


class Disengagement(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A unit left the battle in ``hex`` (RB 7.2)."""

    token: str
    side: Side
    hex: str


class PendingRetreat(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A Disengaging unit of the Active Player whose Move is announced but not
    yet made: it waits upright in the battle ``hex`` until its Retreat is
    resolved after all other movement (RB 10.3, 10.4 procedures, T-35)."""

    token: str
    hex: str
    path: tuple[str, ...]
    withdrawal: WithdrawalKind = ""
    regroup: bool = False
    rommel: bool = False


class MovedUnit(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A unit that has moved this Player-Turn (RB 6.0) and the route it took."""

    token: str
    path: tuple[str, ...]
    phase: int
    regroup: bool = False
    rommel: bool = False
    retreat: bool = False  # it Disengaged (RB 7.2: units Disengage, groups Retreat)


class RegroupRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    command_point: str
    destination: str
    rommel: bool = False


class InterruptedMove(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A Move of the Active Player that an Overrun interrupted (RB 11.4): after
    the Rout, its units not yet moved may complete their movement, by further
    Moves of the same kind from the same hex (to the same destination for a
    Regroup) that count as this one (Overrun Procedure step 5, MV-19)."""

    kind: MoveKind
    origin: str
    destination: str = ""
    withdrawal: WithdrawalKind = ""
    rommel: bool = False

    def continued_by(self, move: Move) -> bool:
        """Whether ``move`` completes this Move rather than starting a new one."""
        return (move.kind, move.origin, move.withdrawal, move.rommel) == \
            (self.kind, self.origin, self.withdrawal, self.rommel) \
            and (move.kind == "group" or move.destination == self.destination)


class PendingMarch(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An announced Forced March waiting for its die (RB 6.4)."""

    token: str
    path: tuple[str, ...]
    regroup: bool
    retreat: bool


class MovementTurn(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What movement must remember through one Player-Turn of ``side``.

    Fields marked "this phase" are reset for Blitz Movement (RB 4.4, 7.1).
    """

    side: Side
    #: Moves allowed this phase (RB 4.0: 2 in an Offensive Turn, else 1).
    moves_allowed: int = 1
    #: Pass Turn: one free Withdrawal Move only (RB 4.5).
    withdrawal_only: bool = False
    #: Axis, not 1940 (RB 6.3, 18.1).
    rommel_available: bool = False
    rommel_used: bool = False
    phase: int = 1  # 1 Movement, 2 Blitz Movement
    moves_made: int = 0  # this phase
    moved: tuple[MovedUnit, ...] = ()  # this Player-Turn
    disengaged: tuple[Disengagement, ...] = ()  # this Player-Turn, both sides
    engagements: tuple[Engagement, ...] = ()  # this phase
    battles_at_start: tuple[str, ...] = ()  # this phase (RB 8.4)
    attacked: tuple[str, ...] = ()  # hexes Attacked this phase (RB 8.2)
    regroups: tuple[RegroupRecord, ...] = ()  # this phase
    marches: tuple[PendingMarch, ...] = ()  # announced this phase, unrolled
    marches_announced: bool = False  # this phase
    refused: tuple[str, ...] = ()  # hexes whose Group Refused Battle this phase
    #: Disengaging units waiting in their battle hex for the Retreat procedure (T-35).
    retreating: tuple[PendingRetreat, ...] = ()
    #: Moves an Overrun interrupted this phase, which their unmoved units may complete (RB 11.4).
    interrupted: tuple[InterruptedMove, ...] = ()

    def continuing(self, move: Move) -> InterruptedMove | None:
        """The interrupted Move that ``move`` completes (RB 11.4 step 5), if any."""
        return next((i for i in self.interrupted if i.continued_by(move)), None)

    def has_moved(self, token: str) -> bool:
        return any(u.token == token for u in self.moved)

    def moved_unit(self, token: str) -> MovedUnit | None:
        for u in self.moved:
            if u.token == token:
                return u
        return None

    def has_disengaged(self, token: str) -> bool:
        return any(d.token == token for d in self.disengaged)

    def pending_retreat(self, token: str) -> PendingRetreat | None:
        return next((r for r in self.retreating if r.token == token), None)


class SpeedObligation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A deferred check (DESIGN 4): the hidden block ``token`` must have a
    speed of at least ``min_speed`` (RB 6.1) once it is revealed."""

    token: str
    min_speed: int
    rule: str = "RB 6.1"


class MoveCheck(msgspec.Struct, frozen=True):
    problems: tuple[Problem, ...] = ()
    obligations: tuple[SpeedObligation, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


class MoveOutcome(msgspec.Struct, frozen=True):
    """The result of an applied Move or Forced March.

    ``attacked``: hexes Attacked by it (RB 8.2; new battles). ``overruns``:
    hexes where it Engaged only Disrupted enemy units, whose Rout (RB 11.4)
    the caller resolves before movement continues.
    """

    position: Position
    turn: MovementTurn
    attacked: tuple[str, ...] = ()
    overruns: tuple[str, ...] = ()


class MarchOutcome(msgspec.Struct, frozen=True):
    """A resolved Forced March (RB 6.4). ``step_loss``: the march was part
    of a Retreat and failed, so the unit also loses one step, which the
    caller applies under the loss rules (RB 6.4 sidebar, 9.5)."""

    position: Position
    turn: MovementTurn
    succeeded: bool
    step_loss: bool = False
    attacked: tuple[str, ...] = ()
    overruns: tuple[str, ...] = ()


class Retreat(msgspec.Struct, frozen=True):
    """A Retreat from the battle in ``hex`` (RB 7.2, 10.3, 10.4)."""

    hex: str
    side: Side
    kind: RetreatKind
    units: tuple[str, ...]  # the Disengaging units
    rearguard: tuple[str, ...] = ()  # Undisrupted units remaining (RB 10.4)


class Reach(msgspec.Struct, frozen=True):
    """Where a unit can go in one move: destination -> a legal path."""

    token: str
    paths: dict[str, tuple[str, ...]]


#: A Supply Line as this module needs it: the hexes from the unit (first)
#: to its Supply Source (last), and the kind of source.
class SupplyRoute(msgspec.Struct, frozen=True):
    hexes: tuple[str, ...]
    source: str
    fortress: bool = False


#: ``lines(m, pos, block)`` -> every Supply Line of the block now (RB 12.2).
SupplyLines = Callable[[HexMap, Position, Block], Sequence[SupplyRoute]]
#: ``network(m, pos, side)`` -> the hexes of the Supply Network (RB 12.6).
SupplyNetwork = Callable[[HexMap, Position, Side], frozenset[str]]
