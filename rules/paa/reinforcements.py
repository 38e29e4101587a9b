"""§13.2.1 supply installation reinforcements, §13.4 reinforced units
(Allied), §13.5 optional reinforcements (Table 11) and their cost (§13.5.3).

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from pbem.rulesapi import Problem
from rules.paa.mapview import MapView
from rules.paa.supply import base_hexes
from rules.paa.tables import ALLIED_OPTIONS, AXIS_OPTIONS, TABLE_11, MaltaStatus
from rules.paa.units import Category, Faction, Piece, enemy_of

# --- §13.1 arrival ------------------------------------------------------------------


def arrival_hexes(board: MapView, faction: Faction, control: Mapping[str, Faction], pieces: Iterable[Piece]) -> frozenset[str]:
    """§13.1 (lost; R-28): reinforcements, replacements and returning
    transport units arrive in any hex of the faction's own base free of enemy
    units, while the faction controls the base's centre (§5.1); otherwise
    none can arrive and they wait on the OOB."""
    centre = board.base_centres[faction]
    if control.get(centre) != faction:
        return frozenset()
    enemy = enemy_of(faction)
    held = {p.hex for p in pieces if p.faction == enemy and p.kind != "installation"}
    return frozenset(base_hexes(board, centre) - held)

# --- §13.4 reinforced units ---------------------------------------------------------


def reinforce_cap(category: Category, turn: int) -> int | None:
    """§13.4 (R-21): the highest CF a unit of ``category`` may be reinforced
    to on ``turn``: infantry 3 from turn 10; armoured 4 from turn 7 and 5
    from turn 13; None before (no reinforcing)."""
    if category == "infantry":
        return 3 if turn >= 10 else None
    if turn >= 13:
        return 5
    return 4 if turn >= 7 else None


def reinforce_problems(unit: Piece, new_cf: int, turn: int, *, in_alexandria_base: bool) -> list[Problem]:
    """§13.4: an Allied regular unit in the Alexandria base at the start of
    the R&R phase (or arriving there) gains +1 CF per RP of its category, up
    to the turn's cap. OOS and OOC² units may be reinforced."""
    if unit.faction != "allied" or not unit.is_regular:
        return [Problem("§13.4", f"{unit.id}: only Allied regular units are reinforced")]
    out: list[Problem] = []
    if not in_alexandria_base:
        out.append(Problem("§13.4", f"{unit.id} is not in the Alexandria base"))
    if new_cf <= unit.cf:
        out.append(Problem("§13.4", f"reinforcing {unit.id} raises its CF above {unit.cf}"))
    category: Category = "infantry" if unit.kind == "infantry" else "armoured"
    cap = reinforce_cap(category, turn)
    if cap is None:
        out.append(Problem("§13.4", f"{category} units cannot be reinforced on turn {turn}"))
    elif new_cf > cap:
        out.append(Problem("§13.4", f"on turn {turn} {category} units are reinforced up to {cap} CF, not {new_cf}"))
    return out


def reinforce_cost(unit: Piece, new_cf: int) -> int:
    """§13.4: one RP of the unit's category per CF gained."""
    return max(0, new_cf - unit.cf)


# --- §13.2.1 supply installation reinforcements -------------------------------------


def installation_arrives(faction: Faction, turn: int, malta: MaltaStatus, available: int) -> bool:
    """§13.2.1, Table 11: one supply installation per turn while the OOB has
    one; none for the Axis on turns 15 and 16 after a failed Malta invasion."""
    if available <= 0:
        return False
    cut = faction == "axis" and turn in (15, 16) and not TABLE_11[malta].installations_turns_15_16
    return not cut


# --- §13.5 optional reinforcements --------------------------------------------------


def allied_option_problems(option: str, turn: int, exercised: Collection[str], *, indian_brigades_in_base: int = 0) -> list[Problem]:
    """§13.5.1: A on turn 8 only; B on turn 13 or 15; C on turn 15 only; D
    from turn 14, withdrawing two Indian infantry brigades that must be in
    the Alexandria base; E on turn 17 only; B, C and D exclude each other."""
    if option not in ALLIED_OPTIONS:
        return [Problem("§13.5.1", f"the Allied options are A-E, not {option!r}")]
    if option in exercised:
        return [Problem("§13.5", f"option {option} was already exercised")]
    turns = {"A": {8}, "B": {13, 15}, "C": {15}, "E": {17}}
    out: list[Problem] = []
    if option in turns and turn not in turns[option]:
        out.append(Problem("§13.5.1", f"option {option} can be exercised on turn {' or '.join(map(str, sorted(turns[option])))} only"))
    if option == "D":
        if turn < 14:
            out.append(Problem("§13.5.1", "option D can be exercised from turn 14"))
        if indian_brigades_in_base < 2:
            out.append(Problem("§13.5.1, §13.2.3", "option D needs two Indian infantry brigades in the Alexandria base to withdraw"))
    if option in "BCD" and (taken := sorted(set(exercised) & set("BCD"))):
        out.append(Problem("§13.5.1", f"options B, C and D are mutually exclusive; {', '.join(taken)} was exercised"))
    return out


def axis_option_problems(option: str, turn: int, malta: MaltaStatus, exercised: Collection[str],
                         this_turn: Collection[str] = ()) -> list[Problem]:
    """§13.5.2, Table 11: F-L not before turn 16, at most two in one turn,
    and only those the Malta outcome allows (R-07)."""
    if option == "M":
        return [Problem("§13.5.2", "M is not an option: it arrives by the Malta outcome (Table 11)")]
    if option not in AXIS_OPTIONS:
        return [Problem("§13.5.2", f"the Axis options are F, G, H, J, K and L, not {option!r}")]
    if option in exercised or option in this_turn:
        return [Problem("§13.5", f"option {option} was already exercised")]
    out: list[Problem] = []
    if turn < 16:
        out.append(Problem("§13.5.2", "options F-L may not be exercised until turn 16"))
    if len(set(this_turn)) >= 2:
        out.append(Problem("§13.5.2", "at most two options may be exercised in a single turn"))
    rule = TABLE_11[malta]
    taken = set(exercised) | set(this_turn)
    group = next(((g, n) for g, n in rule.groups if option in g), None)
    if group is None:
        out.append(Problem("§13.5.2, Table 11", f"option {option} is not available after Malta status '{malta}'"))
    else:
        letters, pick = group
        if len(taken & letters) >= pick:
            others = ", ".join(sorted(letters))
            out.append(Problem("§13.5.2, Table 11", f"only {pick} of {others} may be exercised after Malta status '{malta}'; {', '.join(sorted(taken & letters))} taken"))
    return out


def m_arrival(malta: MaltaStatus, scheduled_turn: int) -> int | None:
    """§13.5.2, Table 11: M arrives as scheduled without an attempt, on turn
    18 after a success (R-22: never earlier than scheduled), never after a failure."""
    arrival = TABLE_11[malta].m_arrival
    if arrival == "never":
        return None
    if arrival == "turn 18":
        return max(18, scheduled_turn)
    return scheduled_turn


def option_penalty(cfs: Iterable[int]) -> int:
    """§13.5.3: CF_penalty,X = Σ CF of the units option X brought."""
    return sum(cfs)


def penalty_deduction(total_penalty: int) -> int:
    """§14.1: ⌈3/2 × CF_penalty⌉ is deducted from the on-map CF."""
    if total_penalty < 0:
        raise ValueError("§13.5.3: a penalty is not negative")
    return -(-3 * total_penalty // 2)
