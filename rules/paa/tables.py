"""The Tables of Panzerarmee Afrika as data.

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0):
Tables 1, 5, 6, 7, 8, 9, 11, 12 and the player aid's Counter-attack
Multiplier (the presumed Table 10), transcribed from the text. Cells the
extraction lost (icons, blank cells) are decided in decisions/rules.md; each
entry below names its decision (R-nn).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

import msgspec

from rules.paa.mapview import BARDIA, TOBRUK
from rules.paa.units import Faction

# --- Table 1: terrain and features -------------------------------------------------

#: Table 1 / §11.1.2: MF a regular unit pays to enter a hex of this terrain
#: (no road or track). A full sea hex cannot be entered (§3 "full sea hexes").
TERRAIN_MF: dict[str, int] = {"clear": 3, "rough": 10, "swamp": 10}
#: Table 1 / §11.1.2: escarpment hexside, in addition to the terrain cost.
ESCARPMENT_MF = 10
#: Table 1 / §11.1.2-§11.1.3: road and track movement, per mover ("regular", "transport").
ROAD_MF: dict[str, int] = {"regular": 1, "transport": 1}
TRACK_MF: dict[str, int] = {"regular": 2, "transport": 8}
#: Table 1 "Change" / §11.1.2: leaving by a road or track not connected to the one entered by.
CHANGE_MF = 2
#: Table 1 "Overrun" / §11.4: in addition to the normal cost.
OVERRUN_MF = 10
#: §15.2: overrunning Italian infantry once ICF >= 25.
OVERRUN_MF_ICF25 = 5

#: Table 1 / §12.4.2: DF multipliers of hex terrain. Swamp counts for Axis defenders only.
TERRAIN_DF: dict[str, int] = {"rough": 2, "swamp": 2}
SWAMP_DF_FACTIONS: frozenset[Faction] = frozenset({"axis"})
#: Table 1 / §12.4.2: fortified hexes (R-01: Tobruk 5, not the formula's 4).
FORT_DF: dict[str, int] = {TOBRUK: 5, BARDIA: 2}
#: Table 1 / §12.4.2: an attacker attacking solely across escarpment hexsides.
ESCARPMENT_AF = Fraction(1, 2)

# --- Table 5: supply states ---------------------------------------------------------

SupplyState = Literal["OOS", "GS", "AS", "MAS"]

#: §8.2, §8.5: the longest supply segment, and the reach of attack supply.
GS_RANGE = 20
AS_RANGE = 8


class SupplyRow(msgspec.Struct, frozen=True):
    """One row of Table 5: the MF multiplier, the attacker's AF and the defender's DF factors."""

    state: SupplyState
    mf: Fraction
    af: Fraction
    df: Fraction


#: Table 5 (R-02: the two copies' 0 cells are both read as true: no move, no attack).
SUPPLY_TABLE: dict[SupplyState, SupplyRow] = {
    "OOS": SupplyRow("OOS", mf=Fraction(0), af=Fraction(0), df=Fraction(1, 2)),
    "GS": SupplyRow("GS", mf=Fraction(1), af=Fraction(1, 2), df=Fraction(1)),
    "AS": SupplyRow("AS", mf=Fraction(1), af=Fraction(1), df=Fraction(1)),
    "MAS": SupplyRow("MAS", mf=Fraction(1), af=Fraction(2), df=Fraction(1)),
}

# --- Table 6: Malta -----------------------------------------------------------------

#: Table 6 as §9's prose gives it (R-03): success rolls, keyed by whether
#: there are any in-supply Allied regular units in Libya.
MALTA_SUCCESS: dict[bool, frozenset[int]] = {
    False: frozenset({1, 2, 3, 4}),
    True: frozenset({1, 2}),
}

# --- Table 7: C² --------------------------------------------------------------------

#: Table 7, second column (§10.1, one roll for the map): last digits out of C².
C2_SINGLE: dict[int, frozenset[int]] = {
    1: frozenset({1, 3, 7}),
    2: frozenset({2, 4, 8}),
    3: frozenset({3, 5, 9}),
    4: frozenset({4, 6, 0}),
    5: frozenset({5, 7, 1}),
    6: frozenset({6, 0, 2}),
}
#: Table 7, third column (§10.2, one roll per hex): last digits out of C².
C2_PER_HEX: dict[int, frozenset[int]] = {
    1: frozenset({1, 7}),
    2: frozenset({2, 8}),
    3: frozenset({3, 9}),
    4: frozenset({4, 0}),
    5: frozenset({5}),
    6: frozenset({6}),
}

# --- Table 8: capture of supply installations ---------------------------------------

#: Table 8 and its caption (R-04): rolls on which an enemy installation is
#: captured (else eliminated). Turn 1 applies to the Axis capturing Allied
#: installations only; Axis installations are captured on 1-2 in every turn.
CAPTURE_TURN_1_BY_AXIS = frozenset({1, 2, 3, 4})
CAPTURE_OTHERWISE = frozenset({1, 2})

# --- Table 9: Combat Resolution Table -----------------------------------------------

#: Table 9 columns: ΔCF 0..9, then ">9" (index 10). Blank cells are 0 (R-05).
CRT_COLUMNS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", ">9")
CRT: dict[int, tuple[int, ...]] = {
    1: (2, 2, 3, 4, 4, 6, 6, 6, 8, 10, 10),
    2: (0, 0, 3, 3, 4, 4, 6, 6, 8, 8, 10),
    3: (0, 0, 2, 3, 3, 4, 4, 6, 6, 8, 8),
    4: (0, 0, 2, 2, 3, 3, 4, 6, 6, 8, 8),
    5: (0, 0, 0, 2, 3, 3, 4, 6, 6, 6, 8),
    6: (0, 0, 0, 2, 3, 3, 4, 4, 6, 6, 6),
}

# --- Counter-attack multiplier (the presumed Table 10) ------------------------------

#: Player aid "Counter-attack Multiplier" (R-06): the counter-attacking
#: (former defending) unit's CF is multiplied by 4 if German, else by 2.
COUNTER_ATTACK_GERMAN = 4
COUNTER_ATTACK_OTHER = 2

# --- Table 11: Axis optional reinforcements ----------------------------------------

MaltaStatus = Literal["none", "success", "failure"]

AXIS_OPTIONS = ("F", "G", "H", "J", "K", "L")
ALLIED_OPTIONS = ("A", "B", "C", "D", "E")


class AxisOptionRule(msgspec.Struct, frozen=True):
    """One row of Table 11: which choices of F-L are allowed (as groups: at
    most ``pick`` letters from each group), what becomes of M, and whether
    supply installations arrive on turns 15 and 16."""

    groups: tuple[tuple[frozenset[str], int], ...]
    m_arrival: Literal["as scheduled", "turn 18", "never"]
    installations_turns_15_16: bool


#: Table 11 and §13.5.2 (R-07: on success L is not available, as the table says).
TABLE_11: dict[MaltaStatus, AxisOptionRule] = {
    "none": AxisOptionRule(
        groups=((frozenset("FG"), 1), (frozenset("HJKL"), 1)),
        m_arrival="as scheduled",
        installations_turns_15_16=True,
    ),
    "success": AxisOptionRule(
        groups=((frozenset("FGHJK"), 5),),
        m_arrival="turn 18",
        installations_turns_15_16=True,
    ),
    "failure": AxisOptionRule(
        groups=((frozenset("FGK"), 1),),
        m_arrival="never",
        installations_turns_15_16=False,
    ),
}

# --- Table 12: victory --------------------------------------------------------------

Level = Literal["D", "S", "M"]
Condition = Literal["allied_alexandria", "allied_both", "axis_either", "axis_both"]


class VictoryRow(msgspec.Struct, frozen=True):
    """One CF_ratio band of Table 12: ``low < ratio`` (or ``<=`` when
    ``low_inclusive``) and ``ratio < high`` (or ``<=``); ``None`` = unbounded.
    ``outcomes``: the first control condition met gives winner and level."""

    low: Fraction | None
    low_inclusive: bool
    high: Fraction | None
    high_inclusive: bool
    outcomes: tuple[tuple[Condition, Faction, Level], ...]


#: Table 12 with its lost winner column and control icons decided (R-08).
TABLE_12: tuple[VictoryRow, ...] = (
    VictoryRow(Fraction(5), True, None, False, (("allied_alexandria", "allied", "D"),)),
    VictoryRow(Fraction(3), True, Fraction(5), False,
               (("allied_both", "allied", "D"), ("allied_alexandria", "allied", "S"))),
    VictoryRow(Fraction(2), False, Fraction(3), False,
               (("allied_both", "allied", "S"), ("allied_alexandria", "allied", "M"))),
    VictoryRow(Fraction(1), False, Fraction(2), True, (("axis_either", "axis", "M"),)),
    VictoryRow(None, False, Fraction(1), True,
               (("axis_both", "axis", "D"), ("axis_either", "axis", "S"))),
)
#: §14.1: the Tobruk modifier's consecutive faction turns (R-09: "at least 21").
TOBRUK_HOLD_TURNS = 21
