"""Battles and combat (RB 8.5-9.52, 11.11, 13): an index of the modules that
hold each rule, and their public names for callers that say ``cb.<name>``.
Each rule is defined once, in its module:

- rules.ritd_v5.combat_round: the Active and Assault Battles (RB 8.6), the
  Combat Round and who fires first (RB 9.0, 9.1, 10.41), double dice
  (RB 9.21, 13.2) and Minefield half-hits (RB 9.52, 14.2);
- rules.ritd_v5.fire: targeting (RB 9.3), fire orders, one unit at a time or a
  plan with fallbacks (RB 9.2), their dice and scoring (RB 9.4);
- rules.ritd_v5.losses: placing hits (RB 9.5, 9.52), eliminations (RB 2.3) and
  Shielding (RB 11.11);
- rules.ritd_v5.fortresses: Fortress hexes, Pass Turns, capture, Captured
  Supply, Port Capacity, sieges (RB 13).

A Combat Round in one Active Battle, as the state machine (rules.ritd_v5.sequence)
sequences it: the Defensive Fire of ``CombatRound.defensive_side``, fire
order by fire order (``check_fire_plan``, ``dice_needed``, ``score``) until
every unit has fired or no target is left; the owner places the hits
(``check_allocation``, ``apply_allocation``); then the Offensive Fire the
same way on the position after those losses (RB 9.1). ``LossOutcome.unshielded``
lists Disrupted units left without a shield: they Rout at once (RB 11.11,
rules.ritd_v5.routs), pursued only by enemy units that have not fired.
Decisions on rulebook ambiguities: decisions/combat.md (CB-nn).
"""

from __future__ import annotations

from rules.ritd_v5.combat_round import (
    HALVES_PER_HIT,
    BattleSelection,
    CombatRound,
    UnitLookup,
    both_sides_fight,
    check_battle_selection,
    defender_benefits,
    dice_multiplier,
    firing_units,
    lookup_of,
    mandatory_battles,
    needs_assault_turn,
    scores_half_hits,
)
from rules.ritd_v5.fire import (
    FirePlan,
    FireResult,
    Shot,
    UnitFire,
    arms_of,
    check_fire_plan,
    dice_counts,
    dice_needed,
    fire_complete,
    legal_targets,
    present_classes,
    score,
    targets_left,
    unit_firepower,
    yet_to_fire,
)
from rules.ritd_v5.fortresses import (
    Capture,
    CaptureLedger,
    apply_captures,
    captured_supply,
    fortress_captures,
    fortress_hexes,
    is_besieged,
    map_port_capacity,
    pass_turn_fortress_battles,
    pass_turn_fortress_routs,
    record_captures,
    start_month_ledger,
)
from rules.ritd_v5.losses import (
    ClassHits,
    Loss,
    LossAllocation,
    LossOutcome,
    absorber_of,
    all_unshielded,
    apply_allocation,
    apply_losses,
    best_use,
    check_allocation,
    class_capacity,
    default_allocation,
    eliminate,
    greedy_placement,
    group_problems,
    is_shielded,
    lose_step,
    unshielded_disrupted,
    used_cv,
)

__all__ = [
    "fire_complete",
    "targets_left",
    "yet_to_fire",
    "HALVES_PER_HIT",
    "UnitLookup",
    "lookup_of",
    "BattleSelection",
    "mandatory_battles",
    "both_sides_fight",
    "check_battle_selection",
    "needs_assault_turn",
    "CombatRound",
    "defender_benefits",
    "dice_multiplier",
    "scores_half_hits",
    "firing_units",
    "arms_of",
    "present_classes",
    "legal_targets",
    "unit_firepower",
    "UnitFire",
    "FirePlan",
    "check_fire_plan",
    "dice_counts",
    "dice_needed",
    "Shot",
    "FireResult",
    "score",
    "ClassHits",
    "absorber_of",
    "best_use",
    "class_capacity",
    "Loss",
    "LossAllocation",
    "LossOutcome",
    "group_problems",
    "used_cv",
    "check_allocation",
    "apply_losses",
    "apply_allocation",
    "eliminate",
    "lose_step",
    "is_shielded",
    "unshielded_disrupted",
    "all_unshielded",
    "greedy_placement",
    "default_allocation",
    "fortress_hexes",
    "pass_turn_fortress_battles",
    "pass_turn_fortress_routs",
    "fortress_captures",
    "apply_captures",
    "Capture",
    "CaptureLedger",
    "start_month_ledger",
    "record_captures",
    "captured_supply",
    "map_port_capacity",
    "is_besieged",
]
