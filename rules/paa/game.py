"""Panzerarmee Afrika on pbem's contract: the game state, the actions and the
sequence of play (Table 4, §7), built on the section modules.

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
"§n" in comments and messages cites the text's section. This module only
sequences the phases and keeps the state; every rule it applies lives in
its section's module (zoc, stacking, movement, overrun, supply, c2, malta,
combat, replacements, reinforcements, withdrawals, victory, control,
logistics), one rule in one place.

Open information: every counter is face up (§2.3), so a side's view is the
whole state and no secret hook is used. Dice are the engine's (both
players' entropy): the rules ask with a ``dice`` decision addressed to the
opponent of the player whose order made the roll necessary, and read the
values in ``resolve_dice``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Literal

import msgspec
from msgspec.structs import replace

from pbem.rulesapi import DICE, Ctx, Decision, Outcome, Problem, Spec
from rules.paa import oob
from rules.paa.c2 import C2_OPTION, c2_hexes, dice_needed, end_of_allied_turn, mark_out_of_c2, method_of
from rules.paa.c2 import out_of_c2 as c2_out
from rules.paa.combat import (
    Attacker,
    allocations,
    attack_column,
    cf_differential,
    combat_supply,
    counter_attack_column,
    counter_attack_factor,
    counter_defence_factor,
    crt,
    declaration_problems,
    is_ineffective,
    mas_problems,
    transport_return_turn,
    transports_eliminated,
)
from rules.paa.combat import Combat as Declared
from rules.paa.control import MARKED, after_passage
from rules.paa.dismount import dismount_problems, remount_problems
from rules.paa.logistics import SeaMove, carry_problems, rail_problems, sea_problems
from rules.paa.malta import MALTA_TURN, allied_good_order_in_libya, crossing_problems, invasion_result
from rules.paa.mapdata import PaaMap, load_map
from rules.paa.mapview import ALEXANDRIA, BARDIA, EL_AGHEILA, TOBRUK
from rules.paa.movement import fort_advance_problems, move_problems, mover_of, oos_movement_problems, path_cost, routes
from rules.paa.optional import (
    OPTIONS,
    REACTION_OPTION,
    RELIABILITY_OPTION,
    SURRENDER_OPTION,
    icf_after,
    is_supporting,
    italian_infantry,
    liable_to_surrender,
    may_attack,
    overrun_cost,
    reaction_mf,
    reaction_problems,
    reaction_succeeds,
    surrenders,
)
from rules.paa.overrun import captured, overrun_check
from rules.paa.reinforcements import (
    allied_option_problems,
    arrival_hexes,
    axis_option_problems,
    installation_arrives,
    m_arrival,
    reinforce_cost,
    reinforce_problems,
)
from rules.paa.replacements import Pool, end_of_phase, pool_of, rebuild_problems, receive, spend
from rules.paa.stacking import INSTALLATION_LIMIT, regular_limit, stacking_problems
from rules.paa.state import TABLE_4, month
from rules.paa.supply import Network, base_hexes, network, newly_oos, supply_states, unit_supply
from rules.paa.tables import OVERRUN_MF
from rules.paa.units import Faction, Piece, enemy_of, kind_of
from rules.paa.victory import LAST_TURN, NO_TOBRUK_OPTION, sudden_death, victory
from rules.paa.withdrawals import allies_lose_by_withdrawal, withdrawal_pool
from rules.paa.zoc import enemy_fort_zoc, enemy_zoc, occupied_forts, zoc_sources

ROLES: tuple[str, str] = ("allied", "axis")
CAMPAIGN = "campaign"
SPEC = Spec(
    id="paa", version="1", title="Panzerarmee Afrika (revised text, CC BY-SA 4.0)", roles=ROLES,
    scenarios=(CAMPAIGN,), options=(NO_TOBRUK_OPTION, *OPTIONS), option_groups=(C2_OPTION,),
    data_package="rules.paa.data", data_files=("map.toml", "units.toml", "oob.toml"),
)

Phase = Literal["setup", "supply", "c2", "movement", "attack_supply", "resolution", "reinforcement", "over"]


@functools.cache
def board() -> PaaMap:
    return load_map()


# --- actions (one tagged struct per order; strings and integers only: DESIGN 3) -------

class _A(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type"):
    pass


class Place(_A, frozen=True, tag="place"):
    """§6 set-up, §13 arrival: put a unit of the base in another base hex."""
    unit: str
    hex: str


class SetupDone(_A, frozen=True, tag="setup-done"):
    pass


class Move(_A, frozen=True, tag="move"):
    """§11.1: land movement to ``hex`` by the cheapest way (R-40)."""
    unit: str
    hex: str


class Overrun(_A, frozen=True, tag="overrun"):
    """§11.4: the stack ``units`` overruns the adjacent ``hex``."""
    units: tuple[str, ...]
    hex: str


class Ship(_A, frozen=True, tag="ship"):
    """§11.2: sea transport of a regular unit or installation from its port to ``hex``."""
    unit: str
    hex: str


class Dismount(_A, frozen=True, tag="dismount"):
    """§13.6 (R-31): ``units`` dismount and free a transport unit into ``hex``."""
    units: tuple[str, ...]
    hex: str


class Remount(_A, frozen=True, tag="remount"):
    """§13.6: dismounted ``units`` remount on the adjacent transport unit ``lorry``."""
    units: tuple[str, ...]
    lorry: str


class Haul(_A, frozen=True, tag="haul"):
    """§11.3: transport unit ``lorry`` carries ``depot`` (in its hex) to ``hex``."""
    lorry: str
    depot: str
    hex: str


class Rail(_A, frozen=True, tag="rail"):
    """§11.3.1: an Allied supply installation moves by the Egyptian railroad."""
    depot: str
    hex: str


class EndMovement(_A, frozen=True, tag="end-movement"):
    pass


class Attack(_A, frozen=True, tag="attack"):
    """§12.2: a combat declaration."""
    units: tuple[str, ...]
    hexes: tuple[str, ...]


class Sacrifice(_A, frozen=True, tag="mas"):
    """§12.3: sacrifice a supply installation for maximum attack supply."""
    depot: str


class Scrap(_A, frozen=True, tag="scrap"):
    """§12.3: eliminate a supply installation voluntarily."""
    depot: str


class EndDeclarations(_A, frozen=True, tag="end-declarations"):
    pass


class Resolve(_A, frozen=True, tag="resolve"):
    """§12.4: resolve declared combat number ``combat`` (1-based) next."""
    combat: int


class Cancel(_A, frozen=True, tag="cancel"):
    """§12.4: cancel a voluntary combat before its roll."""
    combat: int


class Lose(_A, frozen=True, tag="lose"):
    """§12.4.5: the loser's choice of units to eliminate."""
    units: tuple[str, ...]


class Advance(_A, frozen=True, tag="advance"):
    """§12.4.7: a surviving attacker advances into a vacated attacked hex."""
    unit: str
    hex: str


class EndAdvance(_A, frozen=True, tag="end-advance"):
    pass


class React(_A, frozen=True, tag="react"):
    """§15.1 (option ``reaction``): the defender tries to move ``unit`` into the attacked ``hex``."""
    unit: str
    hex: str


class EndReaction(_A, frozen=True, tag="end-reaction"):
    """§15.1: the defender tries no more reaction moves for this combat."""


class EndCombat(_A, frozen=True, tag="end-combat"):
    pass


class Malta(_A, frozen=True, tag="malta"):
    """§9: the Axis declares (invade 1) or forgoes (0) the invasion of Malta on turn 15."""
    invade: int


class Rebuild(_A, frozen=True, tag="rebuild"):
    """§13.3.2: rebuild a Cadre unit for RPs."""
    unit: str


class Reinforce(_A, frozen=True, tag="reinforce"):
    """§13.4: raise an Allied unit in the Alexandria base to ``cf``."""
    unit: str
    cf: int


class Withdraw(_A, frozen=True, tag="withdraw"):
    """§13.2.3: withdraw a unit the OOB demands (the Axis picks where the base falls short)."""
    unit: str


class Reinstate(_A, frozen=True, tag="reinstate"):
    """§13.2.4: reinstate a withdrawn or Cadre unit."""
    unit: str


class Exercise(_A, frozen=True, tag="option", omit_defaults=True):
    """§13.5: exercise optional reinforcement ``letter`` (D names the two
    Indian infantry brigades it withdraws, §13.5.1)."""
    letter: str
    withdraw: tuple[str, ...] = ()


class EndTurn(_A, frozen=True, tag="end-turn"):
    pass


Action = (Place | SetupDone | Move | Overrun | Ship | Dismount | Remount | Haul | Rail | EndMovement | Attack | Sacrifice | Scrap
          | EndDeclarations | Resolve | Cancel | Lose | Advance | EndAdvance | React | EndReaction | EndCombat | Malta | Rebuild
          | Reinforce | Withdraw | Reinstate | Exercise | EndTurn)


# --- state ---------------------------------------------------------------------------

class Fight(msgspec.Struct, frozen=True):
    """A declared combat (§12.2) and how far it is resolved (§12.4)."""

    attackers: tuple[str, ...]
    hexes: tuple[str, ...]
    supply: tuple[str, ...] = ()  # per attacker, set when declarations end (§12.3)
    status: str = "declared"  # declared | resolving | done | cancelled
    forced: bool = False  # §12.1.1: an attack on an enemy-occupied fort from its ZOC
    defenders: tuple[str, ...] = ()
    delta: str = ""  # ΔCF, exact (§12.4.2)
    column: int = -1
    die: int = 0
    loss: int = 0
    lost: tuple[str, ...] = ()  # defenders eliminated
    counter_column: int = -1
    counter_die: int = 0
    counter_loss: int = 0
    counter_lost: tuple[str, ...] = ()  # attackers eliminated
    advanced: tuple[str, ...] = ()
    tried: tuple[str, ...] = ()  # §15.1: units that tried a reaction move into this combat
    liable: tuple[str, ...] = ()  # §15.3: Italian infantry defenders that rolled for surrender
    surrendered: tuple[str, ...] = ()


class State(msgspec.Struct, frozen=True):
    turn: int
    faction: str  # the phasing faction (§7.1)
    phase: str
    pieces: tuple[Piece, ...]
    control: dict[str, str]  # §5, §6: El Agheila, Tobruk, Alexandria
    rp: dict[str, int]  # §13.3.1: oob.POOLS -> RPs
    c2_method: str = "single"
    tobruk_rule: bool = True
    stage: str = ""  # a step inside a phase: "", "losses", "counter-losses", "advance", "pick", "malta"
    roll: str = ""  # what the pending dice decide ("" none): c2, crt, counter, capture, overrun, malta
    roll_role: str = ""
    roll_hexes: tuple[str, ...] = ()
    purposes: tuple[str, ...] = ()
    cadre: tuple[str, ...] = ()  # §12.4.5
    withdrawn: tuple[str, ...] = ()  # §13.2.3
    waiting: tuple[str, ...] = ()  # arrivals the base could not take
    returns: tuple[tuple[str, int], ...] = ()  # §12.4.6: transport units back on the OOB for a turn
    options_taken: tuple[str, ...] = ()
    penalty: dict[str, int] = {}
    malta: str = "none"
    tobruk_holders: tuple[str, ...] = ()  # §14.1: Tobruk's controller at the end of every faction turn
    start_supply: tuple[str, ...] = ()  # units in supply at the start of the phasing turn (§8.4.2, §12.3)
    phase_start: dict[str, str] = {}  # unit -> hex at the start of the movement phase (§11.4)
    mf_used: dict[str, int] = {}
    stopped: tuple[str, ...] = ()  # §11.1.4-§11.1.5: entered enemy (fort) ZOC
    optional: tuple[str, ...] = ()  # §15: the optional rules in play (off unless named at the start)
    icf: int = 0  # §15.2: Italian infantry CF eliminated so far (never decreases)
    reacted: tuple[str, ...] = ()  # §15.1: units that made their one reaction move this combat phase
    fort_bound: dict[str, str] = {}  # §11.1.5: unit -> fort whose ZOC it advanced into, not yet attacked
    moved_depots: tuple[str, ...] = ()  # §8.5: installations moved this turn give no AS
    shipped: tuple[tuple[str, str, str], ...] = ()  # §11.2: (piece, from port, to port) this phase
    fights: tuple[Fight, ...] = ()
    current: int = -1  # index of the fight being resolved
    sacrificed: tuple[str, ...] = ()  # §12.3 MAS, removed at the end of the combat phase
    overrun: tuple[str, ...] = ()  # the stack of an overrun waiting for its counter-attack (§11.4)
    overrun_defenders: tuple[str, ...] = ()
    loss_due: int = 0
    loss_role: str = ""
    loss_from: tuple[str, ...] = ()
    arrived: tuple[str, ...] = ()  # §13: units that arrived this R&R phase (may be placed)
    withdraw_due: tuple[tuple[str, int, int], ...] = ()  # (category, count, from cadre 0/1) §13.2.3
    withdrawn_now: tuple[str, ...] = ()
    reinstate_due: tuple[tuple[str, int], ...] = ()  # §13.2.4
    reinstated_now: tuple[str, ...] = ()
    options_now: tuple[str, ...] = ()
    news: tuple[str, ...] = ()  # what the last order or roll did, in words
    winner: str = ""
    result: str = ""


View = State

POOL_OF: dict[str, Pool] = {
    "allied_infantry": ("CW", "infantry"), "allied_armour": ("CW", "armoured"),
    "de_infantry": ("DE", "infantry"), "de_armour": ("DE", "armoured"),
    "it_infantry": ("IT", "infantry"), "it_armour": ("IT", "armoured"),
}
NAME_OF_POOL = {v: k for k, v in POOL_OF.items()}
POOL_WORDS = {"allied_infantry": "Allied infantry", "allied_armour": "Allied armoured", "de_infantry": "German infantry",
              "de_armour": "German armoured", "it_infantry": "Italian infantry", "it_armour": "Italian armoured"}


@functools.lru_cache(maxsize=256)
def _supply_memo(pieces: tuple[Piece, ...], faction: Faction, control: tuple[tuple[str, Faction], ...],
                 moved: tuple[str, ...], icf: int | None) -> dict[str, Any]:
    return supply_states(board(), pieces, faction, dict(control), moved=moved, icf=icf)


def supplies(pieces: Sequence[Piece], faction: Faction, control: Mapping[str, Faction],
             moved: Sequence[str] = (), icf: int | None = None) -> dict[str, Any]:
    """``supply.supply_states`` (§8), remembered for the last positions asked
    (a listing asks the same question for every candidate order)."""
    return dict(_supply_memo(tuple(pieces), faction, tuple(sorted(control.items())), tuple(moved), icf))


def faction_of(s: State) -> Faction:
    return "axis" if s.faction == "axis" else "allied"


def as_faction(name: str) -> Faction:
    return "axis" if name == "axis" else "allied"


def control_of(s: State) -> dict[str, Faction]:
    return {h: as_faction(f) for h, f in s.control.items()}


def pools_of(s: State) -> dict[Pool, int]:
    return {POOL_OF[k]: v for k, v in s.rp.items()}


def pools_back(p: Mapping[Pool, int]) -> dict[str, int]:
    return {NAME_OF_POOL[k]: v for k, v in sorted(p.items(), key=lambda kv: NAME_OF_POOL[kv[0]])}


def piece_of(s: State, uid: str) -> Piece | None:
    return next((p for p in s.pieces if p.id == uid), None)


def new_piece(uid: str, hex_id: str) -> Piece:
    u = oob.unit(uid)
    return Piece(u.id, u.faction, u.nation, kind_of(u.kind), u.cf, u.mf, hex_id)


def _sorted(pieces: Iterable[Piece]) -> tuple[Piece, ...]:
    return tuple(sorted(pieces, key=lambda p: p.id))


def _base_hexes(faction: Faction) -> tuple[str, ...]:
    b = board()
    return tuple(sorted(base_hexes(b, b.base_centres[faction])))


def _room(pieces: Sequence[Piece], h: str, faction: Faction, kind: str) -> int:
    """§4: how many more counters of ``kind`` the faction may stack in ``h``."""
    if kind == "transport":
        return 99
    if kind == "installation":
        return INSTALLATION_LIMIT - sum(1 for p in pieces if p.hex == h and p.faction == faction and p.kind == kind)
    return regular_limit(h) - sum(1 for p in pieces if p.hex == h and p.faction == faction and p.is_regular)


def _place_in_base(pieces: list[Piece], uid: str, faction: Faction, hexes: Sequence[str] | None = None) -> Piece | None:
    """§6, R-28, R-43: a base unit goes to the base hex with the most room
    under the stacking limits (§4), the first such hex on a tie; None when
    the base is full (the unit waits on the OOB)."""
    hexes = tuple(hexes) if hexes is not None else _base_hexes(faction)
    kind = kind_of(oob.unit(uid).kind)
    free = [(-_room(pieces, h, faction, kind), h) for h in hexes if _room(pieces, h, faction, kind) > 0]
    return new_piece(uid, min(free)[1]) if free else None


def initial_state(scenario: str, options: tuple[str, ...]) -> State:
    if scenario != CAMPAIGN:
        raise ValueError(f"§7: Panzerarmee Afrika has one scenario, '{CAMPAIGN}', not {scenario!r}")
    method = "single"
    for o in options:
        name, _, value = o.partition("=")
        if name == "c2":
            method = method_of(value)
    sched = oob.schedule()
    pieces: list[Piece] = []
    names = {"El Agheila": "axis", "Alexandria": "allied"}
    for u in oob.units():
        if u.setup is None or u.kind not in ("infantry", "armour"):
            continue
        if u.setup in names:
            placed = _place_in_base(pieces, u.id, as_faction(names[u.setup]))
            if placed is None:
                raise ValueError(f"§6: the {names[u.setup]} base has no room for {u.id} (units.toml set-up)")
            pieces.append(placed)
        else:
            pieces.append(new_piece(u.id, u.setup))
    for faction, nation in (("axis", "DE"), ("allied", "BR")):
        f = as_faction(faction)
        for i, where in enumerate(sched.transports[faction], 1):
            uid = f"{nation} LORRY/{i}"
            placed = _place_in_base(pieces, uid, f) if where in names else new_piece(uid, where)
            assert placed is not None  # transport units always fit (§4)
            pieces.append(placed)
        for i, where in enumerate(sched.installations[faction], 1):
            pieces.append(new_piece(f"{nation} DEPOT/{i}", where))
    # §5, §6: the marked hexes and the ports (§11.2) whose control the rules read.
    control = {EL_AGHEILA: "axis", TOBRUK: "allied", ALEXANDRIA: "allied", BARDIA: "allied"}
    return State(turn=1, faction="allied", phase="setup", pieces=_sorted(pieces), control=control,
                 rp={k: int(v) for k, v in sched.start_rp.items()}, c2_method=method,
                 tobruk_rule=NO_TOBRUK_OPTION not in options, penalty={"allied": 0, "axis": 0},
                 optional=tuple(o for o in OPTIONS if o in options or (o == RELIABILITY_OPTION and SURRENDER_OPTION in options)),
                 news=("§6: the Allies set up first (R-30): base units may be placed in any base hex",))


# --- who decides -----------------------------------------------------------------------

def pending(s: State) -> Decision | None:
    if s.phase == "over":
        return None
    if s.roll:
        return Decision(role=s.roll_role, kind=DICE, dice=(6,) * len(s.purposes), purposes=s.purposes,
                        prompt=f"dice: {'; '.join(s.purposes)}")
    where = f"turn {s.turn} ({month(s.turn)}), {s.faction}"
    if s.phase == "setup":
        return Decision(role=s.faction, kind="setup", prompt=f"§6 set-up of the {s.faction} base units")
    if s.stage in ("losses", "counter-losses"):
        return Decision(role=s.loss_role, kind="losses",
                        prompt=f"§12.4.5: choose units to lose {s.loss_due} CF from {', '.join(s.loss_from)}")
    if s.stage == "pick":
        return Decision(role="axis", kind="withdrawal", prompt="§13.2.3: the Axis picks Allied units to withdraw")
    if s.stage == "malta":
        return Decision(role="axis", kind="malta", prompt=f"{where}: §9 invade Malta or not")
    if s.stage == "advance":
        return Decision(role=s.faction, kind="advance", prompt=f"{where}: §12.4.7 advance after combat")
    if s.stage == "reaction":
        return Decision(role=enemy_of(faction_of(s)), kind="reaction",
                        prompt=f"{where}: §15.1 reaction moves into combat {s.current + 1}")
    names = {"movement": "§11 movement", "attack_supply": "§12.2-§12.3 combat declarations",
             "resolution": "§12.4 combat resolution", "reinforcement": "§13 replacements & reinforcements"}
    return Decision(role=s.faction, kind=s.phase, prompt=f"{where}: {names.get(s.phase, s.phase)}")


def turn_label(s: State) -> str:
    if s.phase == "over":
        return "after the game"
    if s.phase == "setup":
        return "Set-up"
    return f"Turn {s.turn} ({month(s.turn)}), {s.faction} player turn"


def outcome(s: State) -> Outcome | None:
    if s.phase != "over":
        return None
    return Outcome(winner=s.winner or None, summary=s.result)


# --- the automatic phases (Table 4) ------------------------------------------------------

def _ask(s: State, author: str, what: str, purposes: Sequence[str], hexes: Sequence[str] = ()) -> State:
    """Ask the engine for dice: answered by the opponent of the order's author (decision 22)."""
    return replace(s, roll=what, roll_role=enemy_of(as_faction(author)), purposes=tuple(purposes),
                   roll_hexes=tuple(hexes))


def _supply_flags(s: State, faction: Faction) -> tuple[State, tuple[str, ...]]:
    """§8.4, §8.5: flip the faction's regular and transport units OOS or face
    up by the supply rules; returns the ids in supply."""
    states = supplies(s.pieces, faction, control_of(s), icf=icf_of(s))
    pieces = []
    for p in s.pieces:
        if p.id in states:
            p = replace(p, oos=p.dismounted or states[p.id].state == "OOS")
        pieces.append(p)
    ok = tuple(sorted(u for u, st in states.items() if st.state != "OOS"))
    return replace(s, pieces=tuple(pieces)), ok


def _enter(s: State, phase: Phase, author: str) -> State:
    """Enter ``phase`` of the phasing faction and run what is automatic in it."""
    f = faction_of(s)
    s = replace(s, phase=phase, stage="")
    if phase == "supply":
        s, ok = _supply_flags(s, f)
        s = replace(s, start_supply=ok, moved_depots=(), news=(*s.news, f"§8: {s.faction} supply phase: "
                    f"{sum(1 for p in s.pieces if p.faction == f and p.oos)} units OOS"))
        if f == "axis" and s.turn == MALTA_TURN:
            return replace(s, stage="malta")
        return _enter(s, "c2" if f == "allied" else "movement", author)
    if phase == "c2":
        hexes = c2_hexes(s.pieces)
        method = method_of(s.c2_method)
        n = dice_needed(method, s.pieces)
        if n == 0:
            return _enter(s, "movement", author)
        if method == "single":
            return _ask(s, author, "c2", ["§10.1 C² (Table 7, one die for the map)"])
        return _ask(s, author, "c2", [f"§10.2 C² of {h} (Table 7)" for h in hexes], hexes)
    if phase == "movement":
        s, _ = _supply_flags(s, enemy_of(f))  # the other faction's state as the movement phase starts
        return replace(s, phase_start={p.id: p.hex for p in s.pieces if p.faction == f}, mf_used={}, stopped=(),
                       shipped=())
    if phase == "attack_supply":
        return replace(s, fights=(), sacrificed=(), current=-1)
    if phase == "reinforcement":
        return _enter_rr(s)
    return s


def _next_phase(s: State, author: str) -> State:
    s = _fort_bonds_kept(s)
    phases = TABLE_4[faction_of(s)]
    i = phases.index(s.phase)  # type: ignore[arg-type]
    if i + 1 < len(phases):
        return _enter(s, phases[i + 1], author)
    return _end_player_turn(s, author)


def _end_player_turn(s: State, author: str) -> State:
    holders = (*s.tobruk_holders, s.control[TOBRUK])
    s = replace(s, tobruk_holders=holders, arrived=(), withdraw_due=(), withdrawn_now=(), reinstate_due=(),
                reinstated_now=(), options_now=(), mf_used={}, stopped=(), phase_start={}, fights=(), reacted=())
    if s.faction == "allied":
        s = replace(s, pieces=end_of_allied_turn(s.pieces), faction="axis")  # §10.3
        return _enter(s, "supply", author)
    if sudden_death(control_of(s)) or s.turn == LAST_TURN:
        return _game_over(s)
    return _enter(replace(s, turn=s.turn + 1, faction="allied"), "supply", author)


def _game_over(s: State, *, winner: str | None = None, why: str = "") -> State:
    if winner is not None:
        return replace(s, phase="over", stage="", winner=winner, result=why)
    ctl = control_of(s)
    ok = {f: supplies(s.pieces, f, ctl, icf=icf_of(s)) for f in ("allied", "axis")}
    supplied = [u for states in ok.values() for u, st in states.items() if st.state != "OOS"]
    from rules.paa.victory import cf_on_map

    allied = cf_on_map(s.pieces, "allied", supplied)
    axis = cf_on_map(s.pieces, "axis", supplied)
    holders: list[Faction | None] = [as_faction(h) for h in s.tobruk_holders]
    res = victory(allied_on_map=allied, axis_on_map=axis, allied_penalty=s.penalty.get("allied", 0),
                  axis_penalty=s.penalty.get("axis", 0), control=ctl, turn=s.turn, tobruk_holders=holders,
                  tobruk_modifier_on=s.tobruk_rule)
    why = ("§14 sudden death: the Axis controls Alexandria; " if sudden_death(ctl) else "§14.1 end of turn 20; ")
    pen = {f: s.penalty.get(f, 0) for f in ("allied", "axis")}
    why += f"{res} (Table 12: in-supply on-map CF Allied {allied}, Axis {axis}; option penalties (§13.5.3) " \
           f"Allied {pen['allied']}, Axis {pen['axis']}; Alexandria {ctl[ALEXANDRIA]}, El Agheila {ctl[EL_AGHEILA]}" \
           + ("; the Tobruk hold modifier applies (§14.1)" if s.tobruk_rule and s.turn == LAST_TURN else "") + ")"
    return replace(s, phase="over", stage="", winner=res.winner or "", result=why)


# --- §13 R&R phase entry ---------------------------------------------------------------------

def _enter_rr(s: State) -> State:
    f = faction_of(s)
    sched = oob.schedule().turn(s.turn)
    income = {POOL_OF[k]: v for k, v in sched.rp.items() if POOL_OF[k][0] in (("CW",) if f == "allied" else ("DE", "IT"))}
    rp = pools_back(receive(pools_of(s), income))
    news = [f"§13.3.1: {s.faction} RP income " + (", ".join(f"{POOL_WORDS[k]} +{v}" for k, v in sorted(sched.rp.items())
                                                             if v and POOL_OF[k] in income) or "none")]
    due = [w for w in s.waiting if oob.unit(w).faction == f] + list(sched.reinforcements.get(s.faction, ()))
    due += [uid for uid, t in s.returns if t <= s.turn and oob.unit(uid).faction == f]
    returns = tuple((u, t) for u, t in s.returns if not (t <= s.turn and oob.unit(u).faction == f))
    sch = oob.schedule()
    for opt in sch.options.values():
        scheduled = sch.m_arrival.get("none")
        # §13.5.2, Table 11: M arrives by the Malta outcome, not by choice.
        if opt.automatic and opt.faction == s.faction and scheduled is not None \
                and m_arrival(s.malta, scheduled) == s.turn:  # type: ignore[arg-type]
            due += list(opt.units)
    on_map = {p.id for p in s.pieces}
    # §13.2.1: the next installation of the OOB, one not already on the map,
    # waiting for room, coming back (§11.1.6) or due this turn: a
    # waiting DEPOT/8 was once also "the next one" and arrived twice.
    taken = on_map | set(due) | {u for u, _ in s.returns}
    depots = [u.id for u in oob.units() if u.faction == f and u.kind == "installation" and u.id not in taken]
    if installation_arrives(f, s.turn, s.malta, len(depots)):  # type: ignore[arg-type]
        due.append(depots[0])
    s = replace(s, rp=rp, returns=returns)
    s = _arrive(s, due, news)
    if f == "allied":
        s = replace(s, withdraw_due=tuple((w.kind if w.kind == "infantry" else "armoured", w.count, int(w.from_cadre))
                                          for w in sched.withdrawals),
                    reinstate_due=tuple((r.kind if r.kind == "infantry" else "armoured", r.count)
                                        for r in sched.reinstatements))
    return s


def _arrive(s: State, uids: Sequence[str], news: list[str]) -> State:
    """R-28: arrivals go into the faction's base, free of enemy units, while it holds the centre."""
    f = faction_of(s)
    hexes = sorted(arrival_hexes(board(), f, control_of(s), s.pieces))
    if not uids:
        return replace(s, news=(*s.news, *news))
    if not hexes:
        news.append(f"R-28: the enemy holds the {s.faction} base; {len(uids)} arrivals wait on the OOB")
        return replace(s, waiting=tuple(uids), news=(*s.news, *news))
    pieces = list(s.pieces)
    came, wait = [], []
    for uid in dict.fromkeys(uids):  # each counter once (§2.3: one counter per unit)
        if any(p.id == uid for p in pieces):
            continue
        placed = _place_in_base(pieces, uid, f, hexes)
        if placed is None:
            wait.append(uid)
        else:
            pieces.append(placed)
            came.append(uid)
    if came:
        news.append(f"§13: arrive in the base: {', '.join(came)}")
    if wait:
        news.append(f"§4, R-43: no room in the base under the stacking limits; waiting on the OOB: {', '.join(wait)}")
    return replace(s, pieces=_sorted(pieces), waiting=(*(w for w in s.waiting if w not in uids), *wait), arrived=(*s.arrived, *came), news=(*s.news, *news))


def _wrong_turn(s: State, author: str, phase: str, stage: str = "") -> list[Problem]:
    if s.phase == "over":
        return [Problem("§14", "the game is over")]
    if s.roll:
        return [Problem("§7.1", "the dice of the last order are not rolled yet")]
    d = pending(s)
    if d is None or d.role != author:
        return [Problem("§7.1", f"it is not the {author} faction's decision now")]
    if s.phase != phase or s.stage != stage:
        return [Problem("§7.1, Table 4", f"this order belongs to the {phase} phase, not to {s.phase}"
                        + (f" ({s.stage})" if s.stage else ""))]
    return []


def _own(s: State, uid: str, author: str, kinds: Sequence[str] | None = None) -> tuple[Piece | None, list[Problem]]:
    p = piece_of(s, uid)
    if p is None:
        return None, [Problem("§2.3", f"no counter {uid!r} on the map")]
    if p.faction != author:
        return None, [Problem("§7.1", f"{uid} is not a {author} counter")]
    if kinds is not None and p.kind not in kinds:
        return None, [Problem("§2.3", f"{uid} is a {p.kind} counter, not {' or '.join(kinds)}")]
    return p, []


class Ground(msgspec.Struct, frozen=True):
    """What a move of the phasing faction is judged against (§3, §11.1)."""

    ezoc: frozenset[str]
    fort_zoc: dict[str, str]
    blocked: frozenset[str]  # enemy regular and transport units (§11.1)
    depots: frozenset[str]  # hexes with enemy installations alone (§11.1.6)


def ground(s: State, faction: Faction | None = None) -> Ground:
    """The ground a move of ``faction`` (default: the phasing one) is judged on."""
    f = faction or faction_of(s)
    enemy = enemy_of(f)
    b = board()
    units = {p.hex for p in s.pieces if p.faction == enemy and p.kind != "installation"}
    depots = {p.hex for p in s.pieces if p.faction == enemy and p.kind == "installation"} - units
    return Ground(enemy_zoc(b, s.pieces, f, icf=icf_of(s)), enemy_fort_zoc(b, s.pieces, f), frozenset(units), frozenset(depots))


def mf_left(s: State, p: Piece) -> int:
    return max(0, p.mf - s.mf_used.get(p.id, 0))


def destinations(s: State, p: Piece, g: Ground) -> dict[str, tuple[tuple[str, ...], int]]:
    """§11.1: every hex ``p`` may reach now, with the way taken and its MF
    (R-40: the cheapest way; R-41: a hex with a lone enemy installation ends the move)."""
    mover = mover_of(p)
    return routes(board(), p.hex, mover=mover, mf=mf_left(s, p), ezoc=g.ezoc,
                  fort_zoc=frozenset(g.fort_zoc) | g.depots, blocked=g.blocked)


def _must_stay_in_supply(p: Piece) -> bool:
    """§11.1.1, §8.4.1-§8.4.2: Allied regular and transport units, Italian regular units."""
    return (p.faction == "allied" and (p.is_regular or p.kind == "transport")) or \
        (p.faction == "axis" and p.is_italian and p.is_regular)


def _cuts_off(s: State, p: Piece, moved: Sequence[Piece], g: Ground) -> list[str]:
    """§8.4.1: the Allied units a move would put OOS. Only leaving a hex in
    enemy ZOC where no other friendly unit stays can close a supply line (§8.2, R-18)."""
    if p.faction != "allied" or p.hex not in g.ezoc:
        return []
    if any(q.hex == p.hex and q.id != p.id and q.faction == p.faction and q.kind != "installation" for q in s.pieces):
        return []
    ctl = control_of(s)
    before = supplies(s.pieces, "allied", ctl, moved=s.moved_depots, icf=icf_of(s))
    after = supplies(moved, "allied", ctl, moved=s.moved_depots, icf=icf_of(s))
    return [u for u in newly_oos(before, after, "allied", moved) if u != p.id]


def moved_pieces(s: State, changes: Mapping[str, str]) -> tuple[Piece, ...]:
    return tuple(replace(p, hex=changes[p.id]) if p.id in changes else p for p in s.pieces)


def icf_of(s: State) -> int | None:
    """§15.2: the ICF when the reliability option is in play, else None (no effect)."""
    return s.icf if RELIABILITY_OPTION in s.optional else None


def _has_su(s: State, hex_id: str) -> bool:
    """§15.2: a supporting unit (German regular or Italian armoured) stands in ``hex_id``."""
    return any(q.hex == hex_id and is_supporting(q) for q in s.pieces)


def unreliable_attackers(s: State, units: Sequence[str], hexes: Sequence[str], *, without: str = "") -> list[Problem]:
    """§15.2: at ICF >= 10 Italian infantry attacks only in AS or MAS (§12.3)
    or stacked with a supporting unit. ``without``: an installation about to
    be eliminated (§12.3 scrap). A forced fort attack (§12.1.1) is exempt (R-50)."""
    icf = icf_of(s)
    if icf is None or icf < 10:
        return []
    forts = fort_zoc_of_phasing(s)
    pieces = tuple(q for q in s.pieces if q.id != without)
    net: Network | None = None
    out = []
    for u in units:
        p = piece_of(s, u)
        if p is None or not italian_infantry(p) or forts.get(p.hex) in hexes:
            continue
        if net is None:
            net = network(board(), pieces, p.faction, control_of(s), icf=icf_of(s))
        attack_supplied = bool(unit_supply(board(), pieces, p, net, moved=s.moved_depots, icf=icf_of(s)).attack)
        if not may_attack(p, icf, attack_supplied=attack_supplied, stacked_with_su=_has_su(s, p.hex)):
            out.append(Problem("§15.2", f"ICF is {icf}: {p.id} (Italian infantry) may attack only in AS or MAS "
                                        "(an unmoved installation within 8 MF, §12.3) or stacked with a German "
                                        "regular or Italian armoured unit"))
    return out


def bound_fort(s: State, p: Piece) -> str | None:
    """§11.1.5: the enemy-occupied fort ``p`` advanced next to and has not attacked yet (None: none)."""
    fort = s.fort_bound.get(p.id)
    if fort is None or fort not in occupied_forts(board(), s.pieces, enemy_of(p.faction)):
        return None
    return fort


def fort_leaving_problems(s: State, p: Piece, path: Sequence[str]) -> list[Problem]:
    """§11.1.5 (movement.fort_advance_problems) for ``p`` following ``path``."""
    fort = bound_fort(s, p)
    return fort_advance_problems(p, path, fort, board().fort_zoc.get(fort, frozenset()) if fort else frozenset())


def _fort_bonds_kept(s: State) -> State:
    """§11.1.5: a bond ends once its unit is gone, out of the fort's ZOC
    (a retreat) or the fort is no longer enemy-occupied (R-49)."""
    keep = {u: fort for u, fort in s.fort_bound.items()
            if (p := piece_of(s, u)) is not None and bound_fort(s, p) == fort
            and p.hex in board().fort_zoc.get(fort, frozenset())}
    return s if keep == s.fort_bound else replace(s, fort_bound=keep)


def end_problems(s: State, p: Piece, path: Sequence[str], g: Ground, net: Network | None = None) -> list[Problem]:
    """The checks of a move that depend on where it ends: staying in supply
    (§11.1.1; R-41: judged at the end of each move order), not cutting other
    Allied units off (§8.4.1), the Malta crossing ban (§9), leaving a fort's
    ZOC entered by advance (§11.1.5)."""
    out = crossing_problems(board(), s.turn, s.malta, p, path)  # type: ignore[arg-type]
    out += fort_leaving_problems(s, p, path)
    if not _must_stay_in_supply(p) and p.faction != "allied":
        return out
    moved = moved_pieces(s, {p.id: path[-1]})
    if _must_stay_in_supply(p):
        if net is None or p.hex in g.ezoc or path[-1] in g.ezoc:
            # §8.2: the network changes only where a friendly unit leaves or enters enemy ZOC.
            net = network(board(), moved, p.faction, control_of(s), icf=icf_of(s))
        here = next(q for q in moved if q.id == p.id)
        ok = unit_supply(board(), moved, here, net, moved=s.moved_depots, icf=icf_of(s)).state != "OOS"
        out += oos_movement_problems(p, started_in_supply=not p.oos, supplied_after_steps=[ok])
    cut = _cuts_off(s, p, moved, g)
    if cut:
        out.append(Problem("§8.4.1", f"moving {p.id} out of {p.hex} would put {', '.join(cut)} out of supply"))
    return out


def _move_problems(s: State, a: Move, author: str) -> list[Problem]:
    out = _wrong_turn(s, author, "movement")
    p, bad = _own(s, a.unit, author, ("infantry", "armoured", "transport"))
    if out or p is None:
        return out + bad
    if p.id in s.stopped:
        return [Problem("§11.1.4, §11.1.5", f"{p.id} entered enemy ZOC this phase and cannot move further")]
    flags = unable_to_move(p)
    if flags:
        return flags
    g = ground(s)
    if a.hex not in board():
        return [Problem("§2.1", f"{a.hex} is not a hex of the map")]
    way = destinations(s, p, g).get(a.hex)
    if way is None:
        return [Problem("§11.1", f"{p.id} in {p.hex} cannot reach {a.hex} with {mf_left(s, p)} MF left "
                                 "(Table 1 costs; enemy units block; entering enemy ZOC stops, §11.1.4)")]
    return end_problems(s, p, way[0], g)


def unable_to_move(p: Piece) -> list[Problem]:
    """§11 (OOS, dismounted) and §10.3 (OOC²): what keeps ``p`` from moving at all (movement.move_problems)."""
    return [q for q in move_problems(board(), p, (p.hex,)) if q.rule in ("§11", "§10.3")]


def _stack_of(s: State, uids: Sequence[str], author: str) -> tuple[list[Piece], list[Problem]]:
    out: list[Problem] = []
    stack = []
    for u in uids:
        p, bad = _own(s, u, author, ("infantry", "armoured"))
        out += bad
        if p is not None:
            stack.append(p)
    if len(set(uids)) != len(uids):
        out.append(Problem("§11.4", "a unit is named twice"))
    return stack, out


def overrun_plan(s: State, a: Overrun, author: str) -> tuple[list[Problem], Any]:
    """§11.4 via ``overrun.overrun_check``, with the attackers' supply as they enter (AS or GS)."""
    stack, out = _stack_of(s, a.units, author)
    if out or not stack:
        return out or [Problem("§11.4", "name the overrunning stack")], None
    b = board()
    f = faction_of(s)
    from_hex = stack[0].hex
    starts = {s.phase_start.get(p.id) for p in stack}
    together = len(starts) == 1 and all(p.hex == from_hex for p in stack)
    # §11.4: every unit of the stack that started together with it takes part.
    net = network(b, s.pieces, f, control_of(s), icf=icf_of(s))
    attackers = []
    for p in stack:
        st = unit_supply(b, s.pieces, p, net, moved=s.moved_depots, icf=icf_of(s)).state
        attackers.append(Attacker(p, "AS" if st == "AS" else "GS" if st == "GS" else "OOS"))
    defenders = [p for p in s.pieces if p.hex == a.hex and p.faction == enemy_of(f)]
    sources = zoc_sources(b, s.pieces, enemy_of(f), icf=icf_of(s)).get(from_hex, frozenset())
    check = overrun_check(b, attackers, from_hex, a.hex, defenders, started_together=together,
                          ezoc_sources=sources, mf_left={p.id: mf_left(s, p) for p in stack},
                          overrun_mf=_overrun_mf(s, defenders))
    return list(check.problems), check


def _overrun_mf(s: State, defenders: Sequence[Piece]) -> int:
    """§11.4: +10 MF; §15.2 (R-37): +5 against Italian infantry alone at ICF >= 25."""
    icf = icf_of(s)
    return OVERRUN_MF if icf is None else overrun_cost(defenders, icf)


def _overrun_problems(s: State, a: Overrun, author: str) -> list[Problem]:
    out = _wrong_turn(s, author, "movement")
    if out:
        return out
    if a.hex not in board():
        return [Problem("§2.1", f"{a.hex} is not a hex of the map")]
    problems, _ = overrun_plan(s, a, author)
    for u in a.units:
        if not problems and (p := piece_of(s, u)) is not None:
            problems += fort_leaving_problems(s, p, (p.hex, a.hex))
    return problems


def _haul_problems(s: State, a: Haul, author: str) -> list[Problem]:
    out = _wrong_turn(s, author, "movement")
    lorry, bad = _own(s, a.lorry, author, ("transport",))
    depot, bad2 = _own(s, a.depot, author, ("installation",))
    if out or lorry is None or depot is None:
        return out + bad + bad2
    if lorry.id in s.stopped:
        return [Problem("§11.1.4", f"{lorry.id} entered enemy ZOC this phase and cannot move further")]
    if depot.hex != lorry.hex:
        return [Problem("§11.3", f"{lorry.id} loads {depot.id} in its hex {depot.hex}: move it there first")]
    flags = unable_to_move(lorry)
    if flags:
        return flags
    g = ground(s)
    way = destinations(s, lorry, g).get(a.hex)
    if way is None:
        return [Problem("§11.1.3", f"{lorry.id} cannot reach {a.hex} with {mf_left(s, lorry)} MF "
                                 "(transport units move along roads and tracks only)")]
    return carry_problems(lorry, depot, way[0]) + end_problems(s, lorry, way[0], g) \
        + _depot_cuts_off(s, {lorry.id: a.hex, depot.id: a.hex}, depot.id)


def _depot_cuts_off(s: State, changes: Mapping[str, str], depot: str) -> list[Problem]:
    """§8.4.1: moving an Allied supply installation is a voluntary act that may
    not put Allied regular or transport units OOS."""
    if faction_of(s) != "allied":
        return []
    ctl = control_of(s)
    moved = moved_pieces(s, changes)
    before = supplies(s.pieces, "allied", ctl, moved=s.moved_depots, icf=icf_of(s))
    after = supplies(moved, "allied", ctl, moved=s.moved_depots, icf=icf_of(s))
    cut = [u for u in newly_oos(before, after, "allied", moved) if u not in changes]
    return [Problem("§8.4.1", f"moving {depot} would put {', '.join(cut)} out of supply")] if cut else []


def _ship_problems(s: State, a: Ship, author: str) -> list[Problem]:
    out = _wrong_turn(s, author, "movement")
    p, bad = _own(s, a.unit, author, ("infantry", "armoured", "transport", "installation"))
    if out or p is None:
        return out + bad
    if s.phase_start.get(p.id) != p.hex or p.id in s.mf_used or p.id in s.stopped or p.id in s.moved_depots:
        return [Problem("§11.2", f"{p.id} did not start the movement phase in {p.hex} or made another manoeuvre")]
    moves = [SeaMove(u, o, d) for u, o, d in s.shipped] + [SeaMove(p.id, p.hex, a.hex)]
    allied_ok = [q.id for q in s.pieces if q.faction == "allied" and q.kind != "installation" and not q.oos]
    # Judged as a whole (port capacities): the earlier shipments from where they began.
    before = moved_pieces(s, {u: o for u, o, _ in s.shipped})
    return fort_leaving_problems(s, p, (p.hex, a.hex)) or \
        sea_problems(board(), before, moves, control_of(s), allied_in_supply=allied_ok)


def _dismount_problems(s: State, a: Dismount, author: str) -> list[Problem]:
    out = _wrong_turn(s, author, "movement")
    units, bad = _stack_of(s, a.units, author)
    if out or bad:
        return out + bad
    return out + dismount_problems(board(), units, a.hex, lorries_on_oob=len(spare_lorries(s, faction_of(s))))


def spare_lorries(s: State, faction: Faction) -> list[str]:
    """§2.3.2, §13.6: the faction's transport units on its OOB, not waiting to return (§12.4.6)."""
    on_map = {p.id for p in s.pieces} | {u for u, _ in s.returns} | set(s.waiting)
    return [u.id for u in oob.units() if u.faction == faction and u.kind == "transport" and u.id not in on_map]


def _remount_problems(s: State, a: Remount, author: str) -> list[Problem]:
    out = _rr_check(s, author)
    lorry, bad = _own(s, a.lorry, author, ("transport",))
    units, bad2 = _stack_of(s, a.units, author)
    if out or lorry is None or bad2:
        return out + bad + bad2
    return remount_problems(board(), units, lorry, lorry_in_supply=not lorry.oos)


def _rail_problems(s: State, a: Rail, author: str) -> list[Problem]:
    out = _wrong_turn(s, author, "movement")
    depot, bad = _own(s, a.depot, author, ("installation",))
    if out or depot is None:
        return out + bad
    if a.hex == depot.hex:
        return [Problem("§11.3.1", f"{depot.id} is in {a.hex} already")]
    return rail_problems(board(), s.pieces, depot, a.hex, icf=icf_of(s)) or _depot_cuts_off(s, {depot.id: a.hex}, depot.id)


def _end_movement_problems(s: State, author: str) -> list[Problem]:
    out = _wrong_turn(s, author, "movement")
    if out:
        return out
    return [q for q in stacking_problems(s.pieces) if f" {s.faction} " in q.message]


def fort_zoc_of_phasing(s: State) -> dict[str, str]:
    return enemy_fort_zoc(board(), s.pieces, faction_of(s))


def _declared(s: State) -> list[Declared]:
    return [Declared(f.attackers, f.hexes) for f in s.fights]


def _attack_problems(s: State, a: Attack, author: str) -> list[Problem]:
    out = _wrong_turn(s, author, "attack_supply")
    if out:
        return out
    if len(set(a.hexes)) != len(a.hexes) or len(set(a.units)) != len(a.units):
        return [Problem("§12.2", "a unit or hex is named twice")]
    return [q for q in declaration_problems(board(), s.pieces, faction_of(s), s.turn, [*_declared(s), Declared(a.units, a.hexes)],
                                            fort_zoc=fort_zoc_of_phasing(s)) if q.rule != "§12.1.1"] \
        or unreliable_attackers(s, a.units, a.hexes)


def _depot_problems(s: State, depot: str, author: str) -> list[Problem]:
    out = _wrong_turn(s, author, "attack_supply")
    p, bad = _own(s, depot, author, ("installation",))
    if out or p is None:
        return out + bad
    if p.id in s.sacrificed:
        return [Problem("§12.3", f"{p.id} is already sacrificed for MAS")]
    leaves = False
    if p.faction == "allied":
        ctl = control_of(s)
        before = supplies(s.pieces, "allied", ctl, icf=icf_of(s))
        rest = tuple(q for q in s.pieces if q.id != p.id)
        leaves = bool(newly_oos(before, supplies(rest, "allied", ctl, icf=icf_of(s)), "allied", rest))
    return mas_problems(faction_of(s), s.turn, p, leaves_allied_oos=leaves)


def _end_declarations_problems(s: State, author: str) -> list[Problem]:
    out = _wrong_turn(s, author, "attack_supply")
    if out:
        return out
    return [q for q in declaration_problems(board(), s.pieces, faction_of(s), s.turn, _declared(s),
                                            fort_zoc=fort_zoc_of_phasing(s)) if q.rule == "§12.1.1"]


def fight_odds(s: State, fight: Fight) -> tuple[Fraction, list[Attacker], list[Piece]]:
    """§12.4.2: ΔCF of a declared combat now, its attackers with their combat supply and the defenders."""
    attackers = [Attacker(p, st) for u, st in zip(fight.attackers, fight.supply, strict=True)  # type: ignore[arg-type]
                 if (p := piece_of(s, u)) is not None]
    defenders = [p for p in s.pieces if p.hex in fight.hexes and p.faction == enemy_of(faction_of(s))
                 and p.kind != "installation"]
    return cf_differential(board(), attackers, defenders), attackers, defenders


def _resolve_problems(s: State, a: Resolve | Cancel, author: str) -> list[Problem]:
    out = _wrong_turn(s, author, "resolution")
    if out:
        return out
    if not 1 <= a.combat <= len(s.fights) or s.fights[a.combat - 1].status != "declared":
        return [Problem("§12.4", f"no unresolved combat number {a.combat}")]
    fight = s.fights[a.combat - 1]
    if isinstance(a, Cancel):
        return [Problem("§12.1.1", "an attack on an enemy-occupied fort from its ZOC cannot be cancelled")] \
            if fight.forced else []
    delta, attackers, defenders = fight_odds(s, fight)
    if not defenders:
        return [Problem("§12", f"{', '.join(fight.hexes)} holds no enemy units any more; cancel the combat")]
    if delta < 0 and not fight.forced:
        return [Problem("§12.4.3 (R-10)", f"ΔCF {delta} is below 0, not a permissible attack (Figure 8); cancel it")]
    return []


def _lose_problems(s: State, a: Lose, author: str) -> list[Problem]:
    if s.stage not in ("losses", "counter-losses") or s.roll or author != s.loss_role:
        return [Problem("§12.4.5", "no loss is due from this faction now")]
    cands = {u: _loss_cf(s, u) for u in s.loss_from}
    from rules.paa.combat import loss_problems

    return loss_problems(cands, a.units, s.loss_due)


def _advance_problems(s: State, a: Advance, author: str) -> list[Problem]:
    out = _wrong_turn(s, author, "resolution", "advance")
    if out:
        return out
    from rules.paa.combat import advance_problems

    fight = s.fights[s.current]
    survivors = [u for u in fight.attackers if u not in fight.counter_lost and piece_of(s, u) is not None]
    if a.unit in fight.advanced:
        return [Problem("§12.4.7", f"{a.unit} has advanced already")]
    return advance_problems(s.pieces, Declared(fight.attackers, fight.hexes), survivors, {a.unit: a.hex})


def _malta_problems(s: State, a: Malta, author: str) -> list[Problem]:
    out = _wrong_turn(s, author, "supply", "malta")
    if out:
        return out
    return [] if a.invade in (0, 1) else [Problem("§9", "invade is 1 or 0")]


def _rr_check(s: State, author: str) -> list[Problem]:
    return _wrong_turn(s, author, "reinforcement")


def _rebuild_problems(s: State, a: Rebuild, author: str) -> list[Problem]:
    out = _rr_check(s, author)
    if out:
        return out
    try:
        u = oob.unit(a.unit)
    except KeyError as e:
        return [Problem("§13.3.2", str(e).strip("'\""))]
    if u.faction != author:
        return [Problem("§13.3.2", f"{a.unit} is not a {author} unit")]
    room = [h for h in arrival_hexes(board(), faction_of(s), control_of(s), s.pieces)
            if _room(s.pieces, h, faction_of(s), "infantry") > 0]
    return rebuild_problems(pools_of(s), new_piece(u.id, ""), in_cadre=u.id in s.cadre) + \
        ([] if room else [Problem("§13.1 (R-28), §4", "no base hex can take a rebuilt unit now")])


def in_alexandria_base(p: Piece) -> bool:
    return p.hex in base_hexes(board(), ALEXANDRIA)


def _reinforce_problems(s: State, a: Reinforce, author: str) -> list[Problem]:
    out = _rr_check(s, author)
    p, bad = _own(s, a.unit, author, ("infantry", "armoured"))
    if out or p is None:
        return out + bad
    out = reinforce_problems(p, a.cf, s.turn, in_alexandria_base=in_alexandria_base(p))
    if not out:
        pool = pool_of(p)
        cost = reinforce_cost(p, a.cf)
        if pools_of(s).get(pool, 0) < cost:
            out.append(Problem("§13.4", f"raising {p.id} to {a.cf} CF costs {cost} {pool[1]} RP; "
                                        f"only {pools_of(s).get(pool, 0)} left"))
    return out


def _cat(uid: str) -> str:
    return "infantry" if oob.unit(uid).kind == "infantry" else "armoured"


def _withdraw_due(s: State) -> list[tuple[str, int, bool, list[str]]]:
    """§13.2.3: per category due: (category, count, from the Cadre too, chosen so far)."""
    return [(cat, count, bool(cadre), [u for u in s.withdrawn_now if _cat(u) == cat])
            for cat, count, cadre in s.withdraw_due]


def _cadre_pieces(s: State, faction: str) -> list[Piece]:
    return [new_piece(u, "") for u in s.cadre if oob.unit(u).faction == faction]


def _pools(s: State, cat: str, cadre: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """§13.2.3 via ``withdrawals.withdrawal_pool``: (the Allies' own pool, every Allied unit of the type on the board)."""
    base = base_hexes(board(), ALEXANDRIA)
    return withdrawal_pool(s.pieces, _cadre_pieces(s, "allied"), cat, base, from_cadre=cadre)  # type: ignore[arg-type]


def _withdraw_problems(s: State, a: Withdraw, author: str) -> list[Problem]:
    picking = s.stage == "pick"
    out = _wrong_turn(s, author, "reinforcement", "pick" if picking else "")
    if out:
        return out
    try:
        cat = _cat(a.unit)
    except KeyError:
        return [Problem("§13.2.3", f"no unit {a.unit!r}")]
    row = next((r for r in _withdraw_due(s) if r[0] == cat), None)
    if row is None:
        return [Problem("§13.2.3", f"the OOB demands no {cat} withdrawal this turn")]
    _, count, cadre, chosen = row
    if len(chosen) >= count:
        return [Problem("§13.2.3", f"the {count} {cat} withdrawals due are made")]
    first, on_board = _pools(s, cat, cadre)
    if not picking and a.unit not in first:
        return [Problem("§13.2.3", f"{a.unit} is not an Allied {cat} unit in the Alexandria base"
                                   + (" or the Cadre" if cadre else ""))]
    if picking and a.unit not in on_board:
        return [Problem("§13.2.3 (R-39)", f"{a.unit} is not an Allied {cat} unit on the board")]
    return []


def _withdrawals_short(s: State, picking: bool) -> list[Problem]:
    out = []
    for cat, count, cadre, chosen in _withdraw_due(s):
        first, on_board = _pools(s, cat, cadre)
        left = on_board if picking else first
        if len(chosen) < count and left:
            who = "the Axis picks" if picking else "the Allies withdraw"
            out.append(Problem("§13.2.3", f"{who} {count - len(chosen)} more {cat} units ({', '.join(left[:4])}...)"))
    return out


def _reinstate_problems(s: State, a: Reinstate, author: str) -> list[Problem]:
    out = _rr_check(s, author)
    if out:
        return out
    pool = [u for u in (*s.withdrawn, *s.cadre) if oob.unit(u).faction == "allied"]
    try:
        u = oob.unit(a.unit)
    except KeyError:
        return [Problem("§13.2.4", f"no unit {a.unit!r}")]
    cat = "infantry" if u.kind == "infantry" else "armoured"
    row = next(((c, n) for c, n in s.reinstate_due if c == cat), None)
    if row is None:
        return [Problem("§13.2.4", f"the OOB reinstates no {cat} unit this turn")]
    done = [x for x in s.reinstated_now if ("infantry" if oob.unit(x).kind == "infantry" else "armoured") == cat]
    if len(done) >= row[1]:
        return [Problem("§13.2.4", f"the {row[1]} {cat} units due are reinstated")]
    if a.unit not in pool:
        return [Problem("§13.2.4", f"{a.unit} is not a withdrawn or Cadre Allied unit")]
    return []


def _option_problems(s: State, a: Exercise, author: str) -> list[Problem]:
    out = _rr_check(s, author)
    if out:
        return out
    opts = oob.schedule().options
    if a.letter not in opts or opts[a.letter].faction != author:
        return [Problem("§13.5", f"{a.letter!r} is not a {author} optional reinforcement")]
    if author == "allied":
        base = base_hexes(board(), ALEXANDRIA)
        indian = [p.id for p in s.pieces if p.faction == "allied" and p.nation == "IN" and p.kind == "infantry"
                  and p.hex in base]
        out = allied_option_problems(a.letter, s.turn, s.options_taken, indian_brigades_in_base=len(indian))
        if a.letter == "D" and not out and (len(set(a.withdraw)) != 2 or any(u not in indian for u in a.withdraw)):
            out.append(Problem("§13.5.1", "option D names the two Indian infantry brigades of the Alexandria base "
                                          f"it withdraws (of {', '.join(indian)})"))
        if a.letter != "D" and a.withdraw:
            out.append(Problem("§13.5.1", f"option {a.letter} withdraws nothing"))
        return out
    if a.withdraw:
        return [Problem("§13.5.2", f"option {a.letter} withdraws nothing")]
    return axis_option_problems(a.letter, s.turn, s.malta, [x for x in s.options_taken if x not in s.options_now],  # type: ignore[arg-type]
                                s.options_now)


def _place_problems(s: State, a: Place, author: str) -> list[Problem]:
    if s.phase == "setup":
        out = _wrong_turn(s, author, "setup")
        names = {"axis": "El Agheila", "allied": "Alexandria"}
        movable = {u.id for u in oob.units() if u.setup == names.get(author)}
        movable |= {p.id for p in s.pieces if p.faction == author and p.kind == "transport"
                    and p.hex in _base_hexes(as_faction(author))}
    else:
        out = _rr_check(s, author)
        movable = set(s.arrived)
    if out:
        return out
    if a.unit not in movable:
        return [Problem("§6, §13 (R-28)", f"{a.unit} is not a unit placed in the base now")]
    if a.hex not in _base_hexes(as_faction(author)):
        return [Problem("§6, §5.1", f"{a.hex} is not a hex of the {author} base ({', '.join(_base_hexes(as_faction(author)))})")]
    p = piece_of(s, a.unit)
    if p is None:
        return [Problem("§6, §13", f"{a.unit} is not on the map")]
    if p.hex == a.hex:
        return [Problem("§6", f"{a.unit} is in {a.hex} already")]
    if any(q.hex == a.hex and q.faction != author and q.kind != "installation" for q in s.pieces):
        return [Problem("§13.1 (R-28)", f"{a.hex} holds enemy units")]
    if _room(s.pieces, a.hex, as_faction(author), p.kind) <= 0:
        return [Problem("§4 (R-43)", f"{a.hex} has no room for {a.unit} under the stacking limits")]
    return []


def _end_turn_problems(s: State, author: str) -> list[Problem]:
    out = _rr_check(s, author)
    if out:
        return out
    out = [q for q in stacking_problems(s.pieces) if f" {s.faction} " in q.message]
    out += _withdrawals_short(s, False)
    for cat, count in s.reinstate_due:
        pool = [u for u in (*s.withdrawn, *s.cadre) if oob.unit(u).faction == "allied" and _cat(u) == cat]
        done = [x for x in s.reinstated_now if _cat(x) == cat]
        if len(done) < min(count, len(done) + len(pool)):
            out.append(Problem("§13.2.4", f"the OOB reinstates {count} {cat} units; {len(done)} made"))
    return out


def check(s: State, a: Any, ctx: Ctx) -> list[Problem]:
    author = ctx.author
    if isinstance(a, Place):
        return _place_problems(s, a, author)
    if isinstance(a, SetupDone):
        return _wrong_turn(s, author, "setup")
    if isinstance(a, Move):
        return _move_problems(s, a, author)
    if isinstance(a, Overrun):
        return _overrun_problems(s, a, author)
    if isinstance(a, Haul):
        return _haul_problems(s, a, author)
    if isinstance(a, Ship):
        return _ship_problems(s, a, author)
    if isinstance(a, Dismount):
        return _dismount_problems(s, a, author)
    if isinstance(a, Remount):
        return _remount_problems(s, a, author)
    if isinstance(a, Rail):
        return _rail_problems(s, a, author)
    if isinstance(a, EndMovement):
        return _end_movement_problems(s, author)
    if isinstance(a, Attack):
        return _attack_problems(s, a, author)
    if isinstance(a, Sacrifice):
        return _depot_problems(s, a.depot, author)
    if isinstance(a, Scrap):
        return _depot_problems(s, a.depot, author) or [
            replace(q, message=f"{q.message}; eliminating {a.depot} would take that away from combat {i}")
            for i, f in enumerate(s.fights, 1) for q in unreliable_attackers(s, f.attackers, f.hexes, without=a.depot)]
    if isinstance(a, EndDeclarations):
        return _end_declarations_problems(s, author)
    if isinstance(a, (Resolve, Cancel)):
        return _resolve_problems(s, a, author)
    if isinstance(a, Lose):
        return _lose_problems(s, a, author)
    if isinstance(a, Advance):
        return _advance_problems(s, a, author)
    if isinstance(a, EndAdvance):
        return _wrong_turn(s, author, "resolution", "advance")
    if isinstance(a, React):
        return _react_problems(s, a, author)
    if isinstance(a, EndReaction):
        ok = s.stage == "reaction" and not s.roll and author == enemy_of(faction_of(s))
        return [] if ok else [Problem("§15.1", "no reaction moves are being made now")]
    if isinstance(a, EndCombat):
        out = _wrong_turn(s, author, "resolution")
        left = [str(i) for i, f in enumerate(s.fights, 1) if f.status == "declared" and f.forced]
        return out or ([Problem("§12.1.1", f"the fort attacks {', '.join(left)} must be resolved")] if left else [])
    if isinstance(a, Malta):
        return _malta_problems(s, a, author)
    if isinstance(a, Rebuild):
        return _rebuild_problems(s, a, author)
    if isinstance(a, Reinforce):
        return _reinforce_problems(s, a, author)
    if isinstance(a, Withdraw):
        return _withdraw_problems(s, a, author)
    if isinstance(a, Reinstate):
        return _reinstate_problems(s, a, author)
    if isinstance(a, Exercise):
        return _option_problems(s, a, author)
    if isinstance(a, EndTurn):
        return _end_turn_problems(s, author) if s.stage != "pick" else _wrong_turn(s, author, "reinforcement", "pick") \
            + _pick_end_problems(s)
    return [Problem("", f"unknown action {type(a).__name__}")]


def _pick_end_problems(s: State) -> list[Problem]:
    return _withdrawals_short(s, True)


# --- apply ---------------------------------------------------------------------------------

def _loss_cf(s: State, uid: str) -> int:
    """§12.4.5: the nominal CF a unit's elimination counts; a lone transport 1 (§12.4.2)."""
    p = piece_of(s, uid)
    if p is None:
        return 0
    return p.cf if p.is_regular else 1


def _eliminate(s: State, uids: Iterable[str], news: list[str], why: str) -> State:
    """§12.4.5: regular units to the Cadre (stripped of reinforcements), transport
    units back on the OOB two turns ahead (§12.4.6), installations to the OOB (§11.1.6)."""
    gone = set(uids)
    if not gone:
        return s
    cadre = list(s.cadre)
    returns = list(s.returns)
    for p in s.pieces:
        if p.id not in gone:
            continue
        if p.is_regular:
            cadre.append(p.id)
        elif p.kind == "transport":
            back = transport_return_turn(s.turn)
            if back is not None:
                returns.append((p.id, back))
    news.append(f"{why}: eliminated {', '.join(sorted(gone))}")
    if RELIABILITY_OPTION in s.optional:
        icf = icf_after(s.icf, [p for p in s.pieces if p.id in gone])
        if icf != s.icf:
            news.append(f"§15.2: ICF {s.icf} → {icf}")
            s = replace(s, icf=icf)
    return replace(s, pieces=tuple(p for p in s.pieces if p.id not in gone), cadre=tuple(sorted(cadre)),
                   returns=tuple(returns), stopped=tuple(u for u in s.stopped if u not in gone))


def _move_to(s: State, uid: str, path: Sequence[str]) -> State:
    p = piece_of(s, uid)
    assert p is not None
    ctl = after_passage(control_of(s), p, path)
    control = {h: ctl[h] for h in (*MARKED, BARDIA)}
    return replace(s, pieces=tuple(replace(q, hex=path[-1]) if q.id == uid else q for q in s.pieces),
                   control=dict(control))


def apply(s: State, a: Any, ctx: Ctx) -> State:
    s = replace(s, news=())
    author = ctx.author
    f = faction_of(s)
    news: list[str] = []
    if isinstance(a, Place):
        s = _move_to(s, a.unit, (a.hex,))
        return replace(s, news=(f"{'§6' if s.phase == 'setup' else '§13 (R-28)'}: {a.unit} placed in {a.hex}",))
    if isinstance(a, SetupDone):
        if s.faction == "allied":
            return replace(s, faction="axis", news=("§6: the Axis sets up (R-30)",))
        return _enter(replace(s, faction="allied", news=("§6: set-up complete; turn 1 begins (§7.1)",)), "supply", author)
    if isinstance(a, Move):
        p = piece_of(s, a.unit)
        assert p is not None
        g = ground(s)
        path, cost = destinations(s, p, g)[a.hex]
        s = _move_to(s, p.id, path)
        stop = a.hex in g.ezoc or a.hex in g.fort_zoc or a.hex in g.depots
        s = replace(s, mf_used={**s.mf_used, p.id: s.mf_used.get(p.id, 0) + cost},
                    stopped=(*s.stopped, p.id) if stop else s.stopped,
                    news=(f"§11.1: {p.id} {p.hex}→{a.hex} ({cost} MF)",))
        return _captures(s, a.hex, author)
    if isinstance(a, Overrun):
        _, chk = overrun_plan(s, a, author)
        stack = [piece_of(s, u) for u in a.units]
        from_hex = stack[0].hex if stack[0] else a.hex
        defenders = [p for p in s.pieces if p.hex == a.hex and p.faction == enemy_of(f) and p.kind != "installation"]
        s = _eliminate(s, [p.id for p in defenders], news, f"§11.4 overrun of {a.hex} (ΔCF {chk.delta})")
        cost = (path_cost(board(), (from_hex, a.hex), mover="regular") or 0) + _overrun_mf(s, defenders)
        for u in a.units:
            s = _move_to(s, u, (from_hex, a.hex))
        s = replace(s, mf_used={**s.mf_used, **{u: s.mf_used.get(u, 0) + cost for u in a.units}},
                    overrun=a.units, overrun_defenders=tuple(p.id for p in defenders))
        depots = [p for p in s.pieces if p.hex == a.hex and p.faction == enemy_of(f) and p.kind == "installation"]
        purposes = ["§11.4 counter-attack after the overrun (Table 9, ΔCF 0)"]
        purposes += [f"Table 8 capture of {p.id} in {a.hex}" for p in depots]
        s = replace(s, news=tuple(news))
        return _ask(s, author, "overrun", purposes, [a.hex])
    if isinstance(a, Haul):
        lorry = piece_of(s, a.lorry)
        assert lorry is not None
        g = ground(s)
        path, cost = destinations(s, lorry, g)[a.hex]
        s = _move_to(s, a.lorry, path)
        s = _move_to(s, a.depot, (a.hex,))
        stop = a.hex in g.ezoc or a.hex in g.fort_zoc or a.hex in g.depots
        return replace(s, mf_used={**s.mf_used, a.lorry: s.mf_used.get(a.lorry, 0) + cost},
                       stopped=(*s.stopped, a.lorry) if stop else s.stopped,
                       moved_depots=tuple(sorted({*s.moved_depots, a.depot})),
                       news=(f"§11.3: {a.lorry} carries {a.depot} to {a.hex} ({cost} MF)",))
    if isinstance(a, Ship):
        p = piece_of(s, a.unit)
        assert p is not None
        s = _move_to(s, a.unit, (a.hex,))
        s = replace(s, shipped=(*s.shipped, (a.unit, p.hex, a.hex)), stopped=(*s.stopped, a.unit),
                    mf_used={**s.mf_used, a.unit: p.mf},
                    moved_depots=tuple(sorted({*s.moved_depots, a.unit})) if p.kind == "installation" else s.moved_depots)
        return replace(s, news=(f"§11.2: {a.unit} shipped from {p.hex} to {a.hex}",))
    if isinstance(a, Dismount):
        freed = spare_lorries(s, f)[0]
        pieces = [replace(p, dismounted=True, oos=True) if p.id in a.units else p for p in s.pieces]
        pieces.append(new_piece(freed, a.hex))
        return replace(s, pieces=_sorted(pieces), news=(f"§13.6: {', '.join(a.units)} dismount; {freed} enters {a.hex}",))
    if isinstance(a, Remount):
        s = replace(s, pieces=tuple(replace(p, dismounted=False) if p.id in a.units else p
                                    for p in s.pieces if p.id != a.lorry))
        s, _ = _supply_flags(s, f)  # §13.6: face up again if in supply
        return replace(s, news=(f"§13.6: {', '.join(a.units)} remount; {a.lorry} goes back to the OOB",))
    if isinstance(a, Rail):
        s = _move_to(s, a.depot, (a.hex,))
        return replace(s, moved_depots=tuple(sorted({*s.moved_depots, a.depot})),
                       news=(f"§11.3.1: {a.depot} by rail to {a.hex}",))
    if isinstance(a, EndMovement):
        return _next_phase(replace(s, news=(f"§11: the {s.faction} movement phase ends",)), author)
    if isinstance(a, Attack):
        forts = fort_zoc_of_phasing(s)
        here = [p.hex for u in a.units if (p := piece_of(s, u)) is not None]
        forced = any(forts.get(h) in a.hexes for h in here)
        fight = Fight(a.units, a.hexes, forced=forced)
        # §11.1.5: attacking the fort (forced, never cancelled: §12.1.1) ends the bond.
        bound = {u: fort for u, fort in s.fort_bound.items() if not (u in a.units and fort in a.hexes)}
        return replace(s, fights=(*s.fights, fight), fort_bound=bound,
                       news=(f"§12.2: combat {len(s.fights) + 1}: {', '.join(a.units)} attack {', '.join(a.hexes)}",))
    if isinstance(a, Sacrifice):
        return replace(s, sacrificed=(*s.sacrificed, a.depot), news=(f"§12.3: {a.depot} is sacrificed for MAS",))
    if isinstance(a, Scrap):
        s = _eliminate(s, [a.depot], news, "§12.3 voluntary elimination")
        return replace(s, news=tuple(news))
    if isinstance(a, EndDeclarations):
        return _supply_for_combat(s, author)
    if isinstance(a, Cancel):
        fights = list(s.fights)
        fights[a.combat - 1] = replace(fights[a.combat - 1], status="cancelled")
        return replace(s, fights=tuple(fights), news=(f"§12.4: combat {a.combat} is cancelled",))
    if isinstance(a, Resolve):
        return _start_fight(s, a.combat - 1, author)
    if isinstance(a, Lose):
        return _take_losses(s, a.units, author)
    if isinstance(a, Advance):
        fight = s.fights[s.current]
        p = piece_of(s, a.unit)
        assert p is not None
        s = _move_to(s, a.unit, (p.hex, a.hex))
        fights = list(s.fights)
        fights[s.current] = replace(fight, advanced=(*fight.advanced, a.unit))
        fort = enemy_fort_zoc(board(), s.pieces, f).get(a.hex)
        bound = {**s.fort_bound, a.unit: fort} if fort else s.fort_bound
        then = f"; it must attack the fort {fort} before leaving its ZOC (§11.1.5)" if fort else ""
        return replace(s, fights=tuple(fights), fort_bound=bound,
                       news=(f"§12.4.7: {a.unit} advances into {a.hex}{then}",))
    if isinstance(a, EndAdvance):
        return _fight_done(s)
    if isinstance(a, React):
        fight = s.fights[s.current]
        s = _set_fight(s, replace(fight, tried=(*fight.tried, a.unit)))
        return _ask(s, author, "reaction",
                    [f"§15.1 reaction move of {a.unit} into {a.hex} ({'3-6' if f == 'axis' else '2-6'} succeeds)"],
                    (a.unit, a.hex))
    if isinstance(a, EndReaction):
        return _after_reaction(s, s.current, enemy_of(as_faction(author)))
    if isinstance(a, EndCombat):
        s = _eliminate(s, [d for d in s.sacrificed if piece_of(s, d) is not None], news, "§12.3 MAS installations")
        s = replace(s, sacrificed=(), news=(*news, f"§12: the {s.faction} combat phase ends"))
        return _next_phase(s, author)
    if isinstance(a, Malta):
        if not a.invade:
            return _enter(replace(s, stage="", news=("§9: the Axis does not invade Malta",)), "movement", author)
        return _ask(replace(s, news=("§9: the Axis invades Malta",)), author, "malta", ["§9 invasion of Malta (Table 6)"])
    if isinstance(a, Rebuild):
        unit = new_piece(a.unit, "")
        rp = pools_back(spend(pools_of(s), pool_of(unit), unit.cf))
        s = replace(s, rp=rp, cadre=tuple(x for x in s.cadre if x != a.unit))
        return _arrive(s, [a.unit], [f"§13.3.2: {a.unit} rebuilt for {unit.cf} RP"])
    if isinstance(a, Reinforce):
        p = piece_of(s, a.unit)
        assert p is not None
        rp = pools_back(spend(pools_of(s), pool_of(p), reinforce_cost(p, a.cf)))
        return replace(s, rp=rp, pieces=tuple(replace(q, cf=a.cf) if q.id == a.unit else q for q in s.pieces),
                       news=(f"§13.4: {a.unit} reinforced to {a.cf} CF",))
    if isinstance(a, Withdraw):
        s = replace(s, pieces=tuple(p for p in s.pieces if p.id != a.unit),
                    cadre=tuple(u for u in s.cadre if u != a.unit),
                    withdrawn=(*s.withdrawn, a.unit), withdrawn_now=(*s.withdrawn_now, a.unit),
                    news=(f"§13.2.3: {a.unit} is withdrawn" + (" (Axis pick)" if s.stage == "pick" else ""),))
        return s
    if isinstance(a, Reinstate):
        s = replace(s, withdrawn=tuple(u for u in s.withdrawn if u != a.unit), cadre=tuple(u for u in s.cadre if u != a.unit),
                    reinstated_now=(*s.reinstated_now, a.unit))
        return _arrive(s, [a.unit], [f"§13.2.4: {a.unit} is reinstated"])
    if isinstance(a, Exercise):
        opt = oob.schedule().options[a.letter]
        if a.withdraw:  # §13.5.1 option D
            s = replace(s, pieces=tuple(p for p in s.pieces if p.id not in a.withdraw),
                        withdrawn=(*s.withdrawn, *a.withdraw))
        s = replace(s, options_taken=(*s.options_taken, a.letter), options_now=(*s.options_now, a.letter),
                    penalty={**s.penalty, s.faction: s.penalty.get(s.faction, 0) + opt.cf})
        return _arrive(s, list(opt.units), [f"§13.5: option {a.letter} exercised (CF penalty {opt.cf}, §13.5.3)"])
    if isinstance(a, EndTurn):
        return _end_rr(s, author)
    raise AssertionError(f"unchecked action {a!r}")


def _end_rr(s: State, author: str) -> State:
    if s.faction == "allied":
        for cat, count, cadre, chosen in _withdraw_due(s):
            if len(chosen) >= count:
                continue
            if allies_lose_by_withdrawal(s.pieces, _cadre_pieces(s, "allied"), cat, count - len(chosen),  # type: ignore[arg-type]
                                         base_hexes(board(), ALEXANDRIA), from_cadre=cadre):
                return _game_over(s, winner="axis", why=f"§13.2.3: the Allies cannot withdraw the {count} {cat} "
                                                        "units the OOB demands and lose")
            if s.stage != "pick":
                return replace(s, stage="pick", news=(*s.news, f"§13.2.3 (R-39): the Axis picks {count - len(chosen)} "
                                                               f"more Allied {cat} units to withdraw"))
    kept, lost = end_of_phase(pools_of(s))
    news = [f"§13.3.1: {POOL_WORDS[NAME_OF_POOL[k]]} loses {v} RP above 10" for k, v in lost.items()]
    s = replace(s, rp=pools_back(kept), stage="", news=(*s.news, *news, f"§13: the {s.faction} turn ends"))
    return _end_player_turn(s, author)


def _captures(s: State, hex_id: str, author: str) -> State:
    """§11.1.6: a regular or transport unit entering a lone enemy installation rolls on Table 8."""
    f = faction_of(s)
    depots = [p for p in s.pieces if p.hex == hex_id and p.faction == enemy_of(f) and p.kind == "installation"]
    if not depots:
        return s
    return _ask(s, author, "capture", [f"Table 8 capture of {p.id} in {hex_id}" for p in depots], [hex_id])


def _capture_results(s: State, hex_id: str, dice: Sequence[int], news: list[str]) -> State:
    f = faction_of(s)
    depots = [p for p in s.pieces if p.hex == hex_id and p.faction == enemy_of(f) and p.kind == "installation"]
    for p, die in zip(depots, dice, strict=False):
        s = _eliminate(s, [p.id], news, f"§11.1.6 Table 8 die {die}")
        if captured(die, capturer=f, turn=s.turn):
            on_map = {q.id for q in s.pieces}
            mine = [u.id for u in oob.units() if u.faction == f and u.kind == "installation" and u.id not in on_map]
            if mine:
                s = replace(s, pieces=_sorted((*s.pieces, new_piece(mine[0], hex_id))))
                news.append(f"§11.1.6: captured: {mine[0]} placed in {hex_id}")
            else:
                news.append("§11.1.6: captured, but no installation is left on the OOB")
        else:
            news.append(f"§11.1.6: {p.id} is not captured")
    return s


def _supply_for_combat(s: State, author: str) -> State:
    """§12.3: every attacker's combat supply (GS at the start of the turn, AS, MAS)."""
    f = faction_of(s)
    net = network(board(), s.pieces, f, control_of(s), icf=icf_of(s))
    fights = []
    for fight in s.fights:
        supply = []
        for u in fight.attackers:
            p = piece_of(s, u)
            assert p is not None
            us = unit_supply(board(), s.pieces, p, net, moved=s.moved_depots, icf=icf_of(s))
            supply.append(combat_supply(u in s.start_supply, us.attack, s.sacrificed))
        fights.append(replace(fight, supply=tuple(supply)))
    words = [f"combat {i}: " + ", ".join(f"{u} {st}" for u, st in zip(x.attackers, x.supply, strict=True))
             for i, x in enumerate(fights, 1)]
    s = replace(s, fights=tuple(fights), phase="resolution", stage="", news=(*s.news, *(f"§12.3 {w}" for w in words)))
    if not fights:
        return _no_combats(s, author)
    return s


def _no_combats(s: State, author: str) -> State:
    return _next_phase(replace(s, news=(*s.news, f"§12: no combats; the {s.faction} combat phase ends")), author)


def liable_defenders(s: State, fight: Fight) -> list[str]:
    """§15.2-§15.3 (option ``surrender``): the attacked Italian infantry units that must roll for surrender."""
    icf = icf_of(s)
    if SURRENDER_OPTION not in s.optional or icf is None:
        return []
    b = board()
    out = []
    for p in s.pieces:
        if p.hex in fight.hexes and p.faction == enemy_of(faction_of(s)) and p.kind != "installation":
            near = set(b.neighbours(p.hex))
            if liable_to_surrender(p, icf, stacked_with_su=_has_su(s, p.hex),
                                   adjacent_su=any(q.hex in near and q.faction == p.faction and is_supporting(q)
                                                   for q in s.pieces)):
                out.append(p.id)
    return out


def reaction_way(s: State, p: Piece, fight: Fight) -> dict[str, int]:
    """§15.1: the attacked hexes of ``fight`` ``p`` could reach within its reaction MF, with their cost."""
    limit = reaction_mf(p)
    if limit == 0:
        return {}
    g = ground(s, p.faction)
    try:
        mover = mover_of(p)
    except ValueError:
        return {}
    reach = routes(board(), p.hex, mover=mover, mf=limit, ezoc=g.ezoc, fort_zoc=frozenset(g.fort_zoc) | g.depots,
                   blocked=g.blocked - set(fight.hexes))
    return {h: reach[h][1] for h in fight.hexes if h in reach}


def _react_problems(s: State, a: React, author: str) -> list[Problem]:
    if s.stage != "reaction" or s.roll or author != enemy_of(faction_of(s)):
        return [Problem("§15.1", "no reaction move may be tried now")]
    p, bad = _own(s, a.unit, author, ("infantry", "armoured"))
    if p is None:
        return bad
    fight = s.fights[s.current]
    if a.hex not in fight.hexes:
        return [Problem("§15.1", f"{a.hex} is not attacked in combat {s.current + 1} ({', '.join(fight.hexes)})")]
    if p.id in fight.tried:
        return [Problem("§15.1", f"{p.id} already tried to reach this combat")]
    attacked = {h for x in s.fights if x.status != "cancelled" for h in x.hexes}
    stack = [replace(q, hex=a.hex) if q.id == p.id else q for q in s.pieces]
    return reaction_problems(p, in_ezoc=p.hex in ground(s, p.faction).ezoc, attacked=p.hex in attacked,
                             reacted=p.id in s.reacted, cost=reaction_way(s, p, fight).get(a.hex),
                             stacking_ok=not [q for q in stacking_problems(stack) if a.hex in q.message])


def reactors(s: State, fight: Fight) -> list[str]:
    """§15.1: every ``react UNIT HEX`` the defender may try now."""
    out = []
    for p in s.pieces:
        if p.faction == enemy_of(faction_of(s)) and p.is_regular:
            for h in reaction_way(s, p, fight):
                if not _react_problems(replace(s, stage="reaction"), React(p.id, h), p.faction):
                    out.append(f"react {p.id} {h}")
    return out


def _start_fight(s: State, i: int, author: str) -> State:
    f = faction_of(s)
    s, _ = _supply_flags(s, enemy_of(f))  # §12.4.1: defenders' supply when the combat is resolved
    if REACTION_OPTION in s.optional:
        s = replace(s, current=i)
        s = _set_fight(s, replace(s.fights[i], status="resolving"))
        if reactors(s, s.fights[i]):
            return replace(s, stage="reaction")
    return _after_reaction(s, i, author)


def _after_reaction(s: State, i: int, author: str) -> State:
    """§15.3 surrender (after any §15.1 reaction), then the odds (§12.4.2)."""
    s = replace(s, stage="")
    liable = liable_defenders(s, s.fights[i])
    if liable:
        s = replace(s, current=i)
        s = _set_fight(s, replace(s.fights[i], status="resolving", liable=tuple(liable)))
        return _ask(s, author, "surrender", [f"§15.3 surrender of {u} (ICF {s.icf}; 1-3 surrenders)" for u in liable])
    return _fight_odds_roll(s, i, author)


def _fight_odds_roll(s: State, i: int, author: str) -> State:
    """§12.4.2-§12.4.3: the odds of combat ``i`` and its CRT die (or the counter-attack of an ineffective attack)."""
    fight = s.fights[i]
    delta, attackers, defenders = fight_odds(s, fight)
    fight = replace(fight, status="resolving", defenders=tuple(p.id for p in defenders), delta=str(delta))
    fights = list(s.fights)
    fights[i] = fight
    s = replace(s, fights=tuple(fights), current=i)
    where = ", ".join(fight.hexes)
    if is_ineffective(attackers, delta):
        news = [f"§12.1.1: combat {i + 1} on {where} is an ineffective attack (ΔCF {delta})"]
        return _ask(replace(s, news=(*s.news, *news)), author, "counter", [f"§12.4.4 counter-attack by {where}"])
    col = attack_column(delta)
    s = replace(s, fights=tuple(replace(x, column=col) if j == i else x for j, x in enumerate(s.fights)))
    return _ask(s, author, "crt", [f"§12.4.3 attack on {where}, ΔCF {delta} (column {col})"])


def _set_fight(s: State, fight: Fight) -> State:
    return replace(s, fights=tuple(fight if j == s.current else x for j, x in enumerate(s.fights)))


def _loss_step(s: State, loser: str, units: Sequence[str], due: int, stage: str, author: str) -> State:
    """§12.4.5: apply a loss at once when only one choice of units meets it, else ask the loser."""
    cands = {u: _loss_cf(s, u) for u in units if piece_of(s, u) is not None}
    options = allocations(cands, due) if cands else (frozenset(),)
    if len(options) == 1:
        return _take_losses(replace(s, stage=stage, loss_role=loser, loss_due=due, loss_from=tuple(sorted(cands))),
                            tuple(sorted(options[0])), author)
    return replace(s, stage=stage, loss_role=loser, loss_due=due, loss_from=tuple(sorted(cands)))


def _take_losses(s: State, units: Sequence[str], author: str) -> State:
    news = list(s.news)
    stage = s.stage
    losers = [p for p in s.pieces if p.id in s.loss_from]
    gone = list(units)
    if s.overrun and stage == "counter-losses" and s.current < 0:
        # §11.4: after an overrun's counter-attack the movement phase goes on.
        gone += transports_eliminated(losers, gone, s.pieces)
        s = _eliminate(s, gone, news, f"§12.4.5 counter-attack loss of {s.loss_due} CF") if gone else s
        return replace(s, stage="", overrun=(), overrun_defenders=(), loss_due=0, loss_from=(), loss_role="",
                       news=tuple(news))
    fight = s.fights[s.current]
    gone += transports_eliminated(losers, gone, s.pieces)  # §12.4.6
    if gone:
        s = _eliminate(s, gone, news, f"§12.4.5 loss of {s.loss_due} CF")
    elif s.loss_due:
        news.append(f"§12.4.5: no whole unit fits the loss of {s.loss_due} CF")
    s = replace(s, loss_due=0, loss_from=(), loss_role="", news=tuple(news))
    if stage == "losses":
        s = _set_fight(s, replace(fight, lost=tuple(units)))
        where = ", ".join(fight.hexes)
        return _ask(replace(s, stage=""), author, "counter", [f"§12.4.4 counter-attack from {where}"])
    s = _set_fight(s, replace(fight, counter_lost=tuple(units)))
    return _after_counter(replace(s, stage=""))


def _after_counter(s: State) -> State:
    fight = s.fights[s.current]
    survivors = [u for u in fight.attackers if piece_of(s, u) is not None]
    f = faction_of(s)
    vacated = [h for h in fight.hexes
               if not any(p.hex == h and p.faction == enemy_of(f) and p.kind != "installation" for p in s.pieces)]
    if survivors and vacated:
        return replace(s, stage="advance")
    return _fight_done(s)


def _fight_done(s: State) -> State:
    fight = s.fights[s.current]
    return replace(_set_fight(s, replace(fight, status="done")), current=-1, stage="")


def resolve_dice(s: State, values: tuple[int | None, ...], ctx: Ctx) -> State:
    dice = [int(v or 0) for v in values]
    what, hexes = s.roll, s.roll_hexes
    s = replace(s, roll="", roll_role="", purposes=(), roll_hexes=(), news=())
    author = ctx.author
    news: list[str] = []
    f = faction_of(s)
    if what == "c2":
        method = method_of(s.c2_method)
        out = c2_out(method, s.pieces, dice[0] if method == "single" else dict(zip(hexes, dice, strict=True)))
        s = replace(s, pieces=mark_out_of_c2(s.pieces, out),
                    news=(f"§10 C²: {'die ' + str(dice[0]) if method == 'single' else 'dice ' + ' '.join(map(str, dice))}: "
                          + (f"out of C² in {', '.join(sorted(out))}" if out else "every Allied hex in C²"),))
        return _enter(s, "movement", author)
    if what == "malta":
        ok = {u for u, st in supplies(s.pieces, "allied", control_of(s), icf=icf_of(s)).items() if st.state != "OOS"}
        res = invasion_result(dice[0], allied_in_libya=allied_good_order_in_libya(board(), s.pieces, ok))
        s = replace(s, malta=res, stage="", news=(f"§9 Table 6: die {dice[0]}: the invasion of Malta is a {res}",))
        return _enter(s, "movement", author)
    if what == "capture":
        s = _capture_results(s, hexes[0], dice, news)
        return replace(s, news=tuple(news))
    if what == "overrun":
        s = _capture_results(s, hexes[0], dice[1:], news)
        loss = crt(0, dice[0])
        news.append(f"§11.4 counter-attack, ΔCF 0, die {dice[0]}: the overrunning stack loses up to {loss} CF")
        s = replace(s, news=tuple(news))
        return _loss_step(s, s.faction, s.overrun, loss, "counter-losses", author)
    fight = s.fights[s.current]
    where = ", ".join(fight.hexes)
    if what == "reaction":
        uid, hex_id = hexes
        p = piece_of(s, uid)
        assert p is not None
        joined = reaction_succeeds(p.faction, dice[0])
        if joined:
            s = _move_to(s, uid, (p.hex, hex_id))
            s = replace(s, reacted=(*s.reacted, uid))
        then = f"joins the defenders in {hex_id}" if joined else f"fails to reach {hex_id}"
        s = replace(s, news=(f"§15.1: die {dice[0]}: {uid} {then}",))
        if reactors(s, s.fights[s.current]):
            return replace(s, stage="reaction")
        return _after_reaction(s, s.current, s.faction)
    if what == "surrender":
        gone = [u for u, d in zip(fight.liable, dice, strict=True) if surrenders(d)]
        news.append(f"§15.3 surrender dice {' '.join(map(str, dice))}: "
                    + (f"{', '.join(gone)} surrender{'s' if len(gone) == 1 else ''}" if gone else "none surrenders"))
        s = _eliminate(s, gone, news, "§15.3 surrender (to the Axis Cadre)")
        s = replace(_set_fight(s, replace(fight, surrendered=tuple(gone))), news=tuple(news))
        if not fight_odds(s, fight)[2]:
            # §15.3: every attacked unit surrendered: no CRT, no counter-attack; the attackers may advance.
            return _after_counter(s)
        return _fight_odds_roll(s, s.current, s.faction)  # the attacker's resolve goes on: the defender answers
    if what == "crt":
        loss = crt(fight.column, dice[0])
        s = _set_fight(s, replace(fight, die=dice[0], loss=loss))
        s = replace(s, news=(f"§12.4.3 attack on {where}: ΔCF {fight.delta}, die {dice[0]}: the defender loses up to {loss} CF",))
        return _loss_step(s, enemy_of(f), fight.defenders, loss, "losses", author)
    # the counter-attack (§12.4.4)
    survivors = [p for p in s.pieces if p.id in fight.defenders]
    attackers = [p for p in s.pieces if p.id in fight.attackers]
    col = counter_attack_column(counter_attack_factor(survivors), counter_defence_factor(attackers))
    loss = crt(col, dice[0])
    s = _set_fight(s, replace(fight, counter_column=col, counter_die=dice[0], counter_loss=loss))
    s = replace(s, news=(f"§12.4.4 counter-attack from {where}: column {col}, die {dice[0]}: the attacker loses up to {loss} CF",))
    return _loss_step(s, s.faction, fight.attackers, loss, "counter-losses", author)


def loss_choices(s: State) -> tuple[frozenset[str], ...]:
    cands = {u: _loss_cf(s, u) for u in s.loss_from}
    return allocations(cands, s.loss_due)
