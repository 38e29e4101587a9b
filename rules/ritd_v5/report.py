"""Rommel in the Desert's parts of ``pbem report``: the rules' sections of the
turn report and the map with pieces, both computed from a ``View`` alone
(DESIGN 4), so nothing the viewing side may not see can reach them.

Not in the view yet, so not reported: supply status (the view carries no
supply lines), supply cards in hand, the BP record and the victory
standing (RB 3.1-3.3, 16-17 are not written).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rules.ritd_v5.happenings import without_tokens
from rules.ritd_v5.picture import OVERLAYS

if TYPE_CHECKING:
    from pbem.board import Picture
    from rules.ritd_v5.view import BlockView, View

#: What each step of the Player-Turn is, in the chart's words (RB 3.4x).
STEP_TEXT = {
    "initial-supply": "T1 Initial Supply Check and Disruption Recovery (RB 12.7, 11.2)",
    "option": "T3 supply cards for the turn option, face down (RB 3.42, 4.0)",
    "movement": "T4 Movement (RB 5-7)",
    "forced-march": "T4 Forced March dice (RB 6.4)",
    "retreat-probe": "T4 the passive player may Probe a Partial Retreat (RB 10.4, 10.41)",
    "probe-reveal": "T4 the Rearguard is revealed for the Probe Combat (RB 10.41, 8.5)",
    "retreat-slowest": "T4 Retreat: the slowest speed of the Retreating units (RB 10.3, 10.5)",
    "retreat-pursuit": "T4 Retreat: Pursuit Fire by the passive player (RB 10.3, 10.5)",
    "retreat-dice": "T4 Retreat: the Pursuit Fire dice (RB 10.5)",
    "retreat-losses": "T4 Retreat: the Pursuit hits placed (RB 10.5, 9.5)",
    "march-losses": "T4 Retreat Forced Marches: a step lost by each unit whose Forced March failed "
                    "(RB 6.4 sidebar)",
    "refuse": "T7 the attacked player accepts or refuses battle (RB 8.4)",
    "reveal-passive": "T8 battle units revealed, passive player (RB 8.5)",
    "reveal-active": "T8 battle units revealed, active player (RB 8.5)",
    "final-supply": "T12 Final Supply Check (RB 12.7)",
    "supply-revealed": "T13 Supply Revealed: the turn option is opened (RB 3.48)",
}


def _other(side: str) -> str:
    return "allied" if side == "axis" else "axis"


def side_name(side: str) -> str:
    return {"axis": "Axis", "allied": "Allied"}.get(side, side)


def situation(v: View) -> list[str]:
    """Scenario, optional rules in use (RB 17.0), month, Player-Turn and step, in words."""
    from rules.ritd_v5.state import all_scenarios

    sc = all_scenarios()
    s = sc.get(v.scenario)
    lines = [f"Scenario: {s.name} ({s.rule})", *(f"Optional rule: {o}" for o in v.options),
             f"Month {v.month}: {sc.month_label(s, v.month)}"]
    if v.turn:
        lines.append(f"Player-Turn {v.turn}: {side_name(v.side)}")
        lines.append(f"Step: {STEP_TEXT.get(v.step, v.step)}")
        if v.step not in ("initial-supply", "option"):
            cards = "a Pass (no card)" if v.cards == 0 else f"{v.cards} supply card{'s' * (v.cards > 1)}"
            mine = f", option {v.option}" if v.option else ""
            lines.append(f"Turn option: {cards} played face down{mine}")
    else:
        lines.append(f"Phase: {PHASE_TEXT.get(v.phase, v.phase)}" + (f", {side_name(v.side)} to act"
                                                                     if v.phase != "over" else ""))
    return lines


PHASE_TEXT = {
    "cards": "initial Supply Cards and the one redraw (RB 18.0)",
    "initiative": "Initiative (RB 3.3)",
    "buildup": "Buildup (RB 16.0)",
    "final": "end of the game: blocks turned face up (RB 17.0)",
    "over": "the game is over (RB 17.0)",
}


def cards(v: View) -> list[str]:
    """Supply Cards (RB 16.6 sidebar: every hand's size is public; the
    real/dummy split only in one's own hand)."""
    lines = []
    for side, n in v.hand_counts.items():
        text = f"{side_name(side)}: {n} card{'s' * (n != 1)}"
        if side == v.role and v.own_real is not None:
            text += f" ({v.own_real} real, {n - v.own_real} dummy)"
        lines.append(text)
    if lines:
        lines.append("Note: cards are dealt from the one shared deck of 42 (28 real, 14 dummy) by "
                     "mental poker, reshuffled at every Resupply (RB 16.6)")
    return lines


def buildup(v: View) -> list[str]:
    """BP record (RB 16.3, 16.5)."""
    lines = []
    if v.bp_dice:
        lines.append(f"BP dice (RB 16.3): {', '.join(map(str, v.bp_dice))}; Player 1: {side_name(v.player1)}")
    for side, rows in v.bp.items():
        lines += [f"{side_name(side)} {row}" for row in rows]
    return lines


def _block_text(b: BlockView) -> str:
    status = []
    if b.disrupted:
        status.append("disrupted")
    if b.revealed:
        status.append("revealed")
    return f"{b.unit} CV {b.cv}" + (f" ({', '.join(status)})" if status else "")


def _by_place(blocks: list[BlockView]) -> dict[str, list[BlockView]]:
    out: dict[str, list[BlockView]] = {}
    for b in sorted(blocks, key=lambda b: (b.where, b.unit, b.cv, b.disrupted)):
        out.setdefault(b.where, []).append(b)
    return out


def own_units(v: View) -> list[str]:
    """My blocks by place: unit, CV and status (RB 2.3, 7.2)."""
    mine = [b for b in v.blocks if b.side == v.role]
    lines = []
    for where, bs in sorted(_by_place(mine).items()):
        lines.append(f"{where}: " + "; ".join(_block_text(b) for b in bs) + f". Total CV {sum(b.cv for b in bs)}")
    total = sum(b.cv for b in mine)
    lines.append(f"{len(mine)} blocks, total CV {total}, {sum(b.disrupted for b in mine)} disrupted")
    return lines


def victory_standing(v: View) -> list[str]:
    """Where the game stands against RB 17 while it goes on, from the public
    facts: Fortress control (RB 17.3 needs Tobruk held and not besieged) and
    blocks in play (RB 17.2, 17.4 count units at the end, Germans 1.5; the
    enemy's nationalities stay hidden until then)."""
    from rules.ritd_v5.state import all_scenarios

    s = all_scenarios().get(v.scenario)
    counts = {side: sum(1 for b in v.blocks if b.side == side) for side in ("axis", "allied")}
    lines = [f"The game ends after Month {s.end_month} ({s.end_text}); this is Month {v.month}",
             (f"Blocks on the map: Axis {counts['axis']}, Allied {counts['allied']} (at the end German units "
              "count 1.5, RB 17.2)")]
    tobruk = v.fortresses.get("Tobruk")
    battle = "Tobruk" in v.battles
    lines.append("Tobruk (RB 17.3): " + (f"held by the {side_name(tobruk)} player" if tobruk else "held by nobody")
                 + (", under attack" if battle else ""))
    others = [f"{where}: {side_name(side)}" for where, side in v.fortresses.items() if where != "Tobruk"]
    if others:
        lines.append("Other Fortresses: " + ", ".join(others))
    return lines


def supply_status(v: View) -> list[str]:
    """Supply markers (public, RB 12.7, 13.3, 15.1) and what they put at risk."""
    lines = []
    mine = [b for b in v.blocks if b.side == v.role]
    for b in mine:
        if b.unsupplied:
            lines.append(f"{b.where}: {b.unit or 'block ' + b.token} CV {b.cv} is Unsupplied, at risk: Disrupted at "
                         "your Final Supply Check if still cut off (RB 12.7), eliminated if Unsupplied at the "
                         "Buildup Supply Check (RB 16.2)")
    for b in mine:
        if b.supplied_by:
            lines.append(f"{b.where}: {b.unit or 'block ' + b.token} supplied by {b.supplied_by} "
                         "(RB 13.3, 15.1)")
    enemy: dict[str, int] = {}
    for b in v.blocks:
        if b.side != v.role and b.unsupplied:
            enemy[b.where] = enemy.get(b.where, 0) + 1
    if enemy:
        lines.append("Enemy Unsupplied blocks: " + ", ".join(f"{where} {n}" for where, n in sorted(enemy.items())))
    return lines or ["all your units are Supplied; no Unsupplied markers on the map"]


def enemy_blocks(v: View) -> list[str]:
    """Enemy blocks per place as counts; identities only where the view shows them."""
    theirs = [b for b in v.blocks if b.side != v.role]
    lines = []
    for where, bs in sorted(_by_place(theirs).items()):
        n = len(bs)
        text = f"{where}: {n} block{'s' * (n != 1)}"
        down = sum(b.disrupted for b in bs)
        if down:
            text += f", {down} disrupted"
        known = [b for b in bs if b.unit]
        if known:
            text += " (seen: " + "; ".join(_block_text(b) for b in known) + ")"
        lines.append(text)
    lines.append(f"{len(theirs)} blocks in all")
    return lines


def battles(v: View) -> list[str]:
    """Battles on the map: the active player is the attacker (RB 8.1)."""
    return [f"{where}: {side_name(v.side)} attacking, {side_name(_other(v.side))} defending" for where in v.battles]


def minefields(v: View) -> list[str]:
    """RB 14: own Minefields (hidden until enemy units enter them) and the
    revealed ones; how many each side has is public (RB 16.5 sidebar)."""
    lines = []
    for side, count in v.mine_counts.items():
        known = [x for x in v.mines if x.side == side]
        if side == v.role:
            places = "; ".join(f"{x.where} ({'revealed' if x.revealed else 'hidden'})" for x in known)
            lines.append(f"Yours: {count}" + (f": {places}" if places else ""))
        else:
            places = ", ".join(x.where for x in known)
            lines.append(f"{side_name(side)}: {count}" + (f"; revealed: {places}" if places else "; none revealed"))
    return lines


def report_sections(v: View) -> list[tuple[str, list[str]]]:
    """The rules' sections of the turn report (the ``report_sections`` hook)."""
    sections: list[tuple[str, list[str]]] = [
        ("Situation", situation(v)),
        (f"Your units ({side_name(v.role)})", own_units(v)),
        (f"Enemy blocks ({side_name(_other(v.role))})", enemy_blocks(v)),
        ("Battles", battles(v) or ["none"]),
        ("Supply", supply_status(v)),
    ]
    if v.outcome:
        sections.insert(0, ("Victory (RB 17)", v.outcome))
    elif v.phase not in ("deploy",):
        sections.append(("Victory standing (RB 17)", victory_standing(v)))
    if v.hand_counts:
        sections.append(("Supply Cards", cards(v)))
    if v.bp:
        sections.append(("Buildup Points", buildup(v)))
    if v.mine_counts:
        sections.append(("Minefields (RB 14)", minefields(v)))
    if v.last_fire:
        # Never a block token in what a person reads (issue 21 point 3).
        names = {b.token: b for b in v.blocks}
        sections.append(("Last fire (RB 9.2-9.4)", [without_tokens(line, names) for line in v.last_fire]))
    if v.last_rolls:
        sections.append(("Last dice", [f"Last dice: {', '.join(map(str, v.last_rolls))}"]))
    return sections


#: The overlays the ``map_picture`` hook draws on request (pbem's MAP_OVERLAYS).
MAP_OVERLAYS: tuple[str, ...] = OVERLAYS


def map_picture(v: View | None = None, overlays: Sequence[str] = ()) -> Picture:
    """The map with what ``v`` shows and the ``overlays`` asked for (the
    ``map_picture`` hook; ``rules.ritd_v5.picture.OVERLAYS``); the empty map
    without a view. ValueError for an unknown overlay."""
    from rules.ritd_v5.picture import map_picture as build

    return build(view=v, overlays=overlays)
