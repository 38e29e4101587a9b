"""What Panzerarmee Afrika players read: the situation as text (``pbem
show``), the map with the counters face up (``pbem map``, reports), the
answers of ``pbem explain`` and the words for rolls and happenings.

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
Open information (§2.3): everything is shown to both sides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from msgspec.structs import replace

from pbem.rulesapi import Combat, Die, Happening, Step
from rules.paa import game as g
from rules.paa import oob
from rules.paa.game import State
from rules.paa.movement import move_problems, mover_of
from rules.paa.orders import Author
from rules.paa.state import PHASE_NAMES, month
from rules.paa.supply import network, unit_supply
from rules.paa.units import Piece, current_cf
from rules.paa.zoc import zoc

TOPICS = ("supply", "move", "unit", "combat")
#: Map overlays (``pbem map --overlay``): §3 zones of control of both factions.
OVERLAYS = ("zoc",)
POOL_WORDS = g.POOL_WORDS


def _flags(p: Piece) -> str:
    out = []
    if p.oos:
        out.append("OOS")
    if p.ooc2:
        out.append("OOC²")
    if p.dismounted:
        out.append("dismounted")
    return f" [{', '.join(out)}]" if out else ""


def piece_line(p: Piece) -> str:
    if p.kind == "installation":
        return f"{p.id} (supply installation){_flags(p)}"
    if p.kind == "transport":
        return f"{p.id} (transport, MF {p.mf}){_flags(p)}"
    shown = current_cf(p)
    cf = f"{p.cf}" if shown == p.cf else f"{shown} of {p.cf}"
    return f"{p.id} {p.kind} CF {cf} MF {p.mf}{_flags(p)}"


def phase_line(s: State) -> str:
    if s.phase == "over":
        return f"Game over: {s.result}"
    if s.phase == "setup":
        return f"Set-up (§6): the {s.faction} faction places its base units"
    name = PHASE_NAMES.get(s.phase, s.phase)  # type: ignore[call-overload]
    return f"Turn {s.turn} of 20 ({month(s.turn)}), {s.faction} player turn: {name}" + (f", {s.stage}" if s.stage else "")


def render_text(s: State) -> str:
    lines = [phase_line(s)]
    d = g.pending(s)
    if d is not None:
        lines.append(f"Waiting for: {d.role} ({d.prompt})")
    lines.append("Control (§5): " + ", ".join(f"{h} {f}" for h, f in sorted(s.control.items())))
    lines.append("RP (§13.3): " + ", ".join(f"{POOL_WORDS.get(k, k)} {v}" for k, v in sorted(s.rp.items())))
    if s.malta != "none":
        lines.append(f"Malta (§9): {s.malta}")
    icf = g.icf_of(s)
    if icf is not None:
        lines.append(f"Italian infantry reliability (§15.2): ICF {icf}"
                     + ("; at 10+ it attacks only in AS/MAS or with a German or Italian armoured unit" if icf >= 10 else "")
                     + ("; at 20+ alone it exerts no ZOC" if icf >= 20 else "")
                     + ("; at 25+ overrunning it costs +5 MF" if icf >= 25 else ""))
    for f in g.ROLES:
        lines.append(f"{f.capitalize()} counters on the map:")
        by_hex: dict[str, list[Piece]] = {}
        for p in s.pieces:
            if p.faction == f:
                by_hex.setdefault(p.hex, []).append(p)
        for h in sorted(by_hex):
            lines.append(f"  {h}: " + "; ".join(piece_line(p) for p in by_hex[h]))
        cadre = [u for u in s.cadre if oob.unit(u).faction == f]
        if cadre:
            lines.append(f"  Cadre (§12.4.5): {', '.join(cadre)}")
    if s.withdrawn:
        lines.append(f"Withdrawn (§13.2.3): {', '.join(s.withdrawn)}")
    for i, fight in enumerate(s.fights, 1):
        lines.append("Combat " + fight_line(i, fight))
    if s.news:
        lines.append("Last: " + " / ".join(s.news))
    return "\n".join(lines)


def fight_line(i: int, fight: g.Fight) -> str:
    supply = f" ({', '.join(fight.supply)})" if fight.supply else ""
    out = f"{i} [{fight.status}{', fort, must attack (§12.1.1)' if fight.forced else ''}]: " \
          f"{', '.join(fight.attackers)}{supply} on {', '.join(fight.hexes)}"
    if fight.liable:
        out += f"; §15.3 surrender rolled by {', '.join(fight.liable)}: " + (', '.join(fight.surrendered) or "none") + " surrendered"
    if fight.delta:
        out += f"; ΔCF {fight.delta}"
    if fight.die:
        out += f", die {fight.die}: defender loses up to {fight.loss}"
    if fight.counter_die:
        out += f"; counter-attack column {fight.counter_column}, die {fight.counter_die}: attacker loses up to {fight.counter_loss}"
    return out


def report_sections(s: State) -> list[tuple[str, list[str]]]:
    text = render_text(s).splitlines()
    return [("Situation", text)]


# --- explain ---------------------------------------------------------------------------------

def explain(s: State, role: str, topic: str, subject: str) -> list[str]:
    if topic not in TOPICS:
        raise ValueError(f"unknown topic {topic!r}: one of {', '.join(TOPICS)}")
    if topic == "combat":
        if not s.fights:
            return ["No combats are declared this phase (§12.2)."]
        return [fight_line(i, f) for i, f in enumerate(s.fights, 1)]
    words = subject.split()
    if topic == "move":
        if len(words) < 2:
            raise ValueError("explain move 'UNIT HEX': why the unit can or cannot move there")
        unit, where = " ".join(words[:-1]), words[-1]
    else:
        unit, where = subject, ""
    try:
        uid = oob.unit(" ".join(unit.split()).upper()).id
    except KeyError:
        raise ValueError(f"no counter {unit[:40]!r}") from None
    p = g.piece_of(s, uid)
    if p is None:
        place = "the Cadre (§12.4.5)" if uid in s.cadre else "withdrawn (§13.2.3)" if uid in s.withdrawn \
            else "off the map (on the OOB)"
        return [f"{uid} is {place}."]
    if topic == "unit":
        out = [piece_line(p), f"in {p.hex} ({g.board().terrain(p.hex)}), MF left {g.mf_left(s, p)}"]
        fort = g.bound_fort(s, p)
        if fort:
            out.append(f"It advanced into the ZOC of the enemy-occupied fort {fort} and must attack it at least once "
                       "before leaving that ZOC (§11.1.5).")
        return out
    if topic == "supply":
        return _explain_supply(s, p)
    return _explain_move(s, p, where)


def _explain_supply(s: State, p: Piece) -> list[str]:
    if p.kind == "installation":
        net = network(g.board(), s.pieces, p.faction, g.control_of(s), icf=g.icf_of(s))
        linked = p.id in net.linked
        return [f"{p.id} is a supply installation; it is {'linked to' if linked else 'cut off from'} a supply terminal "
                f"(§8.2-§8.3: segments of at most 20 MF, not through enemy units or unoccupied enemy ZOC).",
                f"Terminals of the {p.faction} faction: {', '.join(sorted(net.terminals)) or 'none'}."]
    net = network(g.board(), s.pieces, p.faction, g.control_of(s), icf=g.icf_of(s))
    us = unit_supply(g.board(), s.pieces, p, net, moved=s.moved_depots, icf=g.icf_of(s))
    out = [f"{p.id} in {p.hex}: {us.state} now (§8.4-§8.5); counter shows {'OOS' if p.oos else 'in supply'}"
           f" (set in the supply phase, §8.4)."]
    if p.dismounted:
        out.append("Dismounted units are always OOS (§13.6).")
    out.append(f"Linked installations within 20 MF (general supply): {', '.join(us.general) or 'none'}.")
    out.append(f"Unmoved ones within 8 MF (attack supply): {', '.join(us.attack) or 'none'}.")
    if net.cut_off:
        out.append(f"Installations cut off from every terminal: {', '.join(net.cut_off)} (§8.2).")
    if us.state == "OOS":
        out.append("No valid supply line: no linked installation within 20 MF by regular-unit movement costs "
                   "(Table 1), avoiding enemy units and enemy ZOC without a friendly unit (§8.1-§8.2, R-18).")
    return out


def _explain_move(s: State, p: Piece, where: str) -> list[str]:
    try:
        mover_of(p)
    except ValueError as e:
        return [str(e)]
    problems = g.check(s, g.Move(p.id, where), Author(p.faction))
    ground = g.ground(s, p.faction)
    reach = g.destinations(s, p, ground)
    out = [f"{p.id} in {p.hex}: {g.mf_left(s, p)} MF left; reaches {len(reach)} hexes this phase (§11.1)."]
    if where in reach:
        path, cost = reach[where]
        out.append(f"Cheapest way to {where}: {'-'.join(path)} for {cost} MF (Table 1).")
    extra = move_problems(g.board(), p, (p.hex, where), ezoc=ground.ezoc, blocked=ground.blocked) \
        if where in g.board().neighbours(p.hex) else []
    for q in [*problems, *(x for x in extra if x not in problems)]:
        out.append(f"Not allowed: {q}")
    if not problems:
        out.append(f"move {p.id} {where} is legal now.")
    return out




# --- words for rolls and happenings ----------------------------------------------------------

def describe_roll(before: State, after: State, values: tuple[int | None, ...]) -> tuple[str, ...]:
    return after.news


def _combat_table(before: State, after: State, step: Step) -> Happening | None:
    """A CRT or counter-attack roll as a combat table (§12.4), read from the open states."""
    if step.kind != "roll" or before.roll not in ("crt", "counter") or before.current < 0:
        return None
    i = before.current
    fight = after.fights[i] if i < len(after.fights) else before.fights[i]
    value = step.values[0] if step.values else None
    if before.roll == "crt":
        return Happening(
            text=f"Combat {i + 1} on {', '.join(fight.hexes)}: ΔCF {fight.delta}, die {value}: "
                 f"the defender loses up to {fight.loss} CF", rule="§12.4.3", kind="combat",
            combat=Combat(where=", ".join(fight.hexes),
                          attackers=tuple(f"{u} ({st})" for u, st in zip(fight.attackers, fight.supply, strict=False)),
                          defenders=fight.defenders, modifiers=("§12.3 combat supply: GS ×½, AS ×1, MAS ×2",),
                          odds=f"ΔCF {fight.delta} (column {fight.column})", dice=(Die("CRT (Table 9)", value),),
                          result=f"defender loses up to {fight.loss} CF", losses=fight.lost))
    return Happening(
        text=f"Counter-attack from {', '.join(fight.hexes)}: column {fight.counter_column}, die {value}: "
             f"the attacker loses up to {fight.counter_loss} CF", rule="§12.4.4", kind="combat",
        combat=Combat(where=", ".join(fight.hexes), attackers=tuple(u for u in fight.defenders if u not in fight.lost),
                      defenders=fight.attackers, modifiers=("§12.4.4 counter-attack: German CF ×4, others ×2, no terrain",),
                      odds=f"column {fight.counter_column}", dice=(Die("CRT (Table 9)", value),),
                      result=f"attacker loses up to {fight.counter_loss} CF", losses=fight.counter_lost))


def happenings(before: State, after: State, step: Step, role: str | None) -> tuple[Happening, ...]:
    """What the last order or roll did (``State.news``), each line with its rule; a CRT or
    counter-attack roll also as a combat table. Open information: the same for every reader."""
    table = _combat_table(before, after, step)
    out = [table] if table is not None else []
    for line in after.news:
        token = line.split(" ", 1)[0].rstrip(":")
        rule = token if token.startswith(("§", "Table", "R-")) else ""
        text = line[len(token):].lstrip(": ") if rule else line
        if table is not None and rule == table.rule:
            continue  # said by the table
        kind = "combat" if rule.startswith(("§12", "§11.4")) else "elimination" if "eliminated" in text else ""
        out.append(Happening(text=text[:1].upper() + text[1:], rule=rule, kind=kind))
    return tuple(out)


def _echelon(uid: str) -> Any:
    u = oob.unit(uid)
    return {"BN": "battalion", "REGT": "regiment", "BDE": "brigade"}.get(u.echelon, "")


_TYPES = {"infantry": "infantry", "motorised": "motorised", "airborne": "airborne", "mechanised": "mechanised",
          "recon": "recon", "armour": "armour", "transport": "transport", "supply": "supply"}


def map_picture(view: State | None = None, overlays: Sequence[str] = ()) -> Any:
    """The authored map (mapdata.map_picture) with every counter face up:
    id, NATO type, echelon, CF-MF, flipped (hatched) when OOS, OOC² or
    dismounted (§2.3.1)."""
    from pbem.board import Counter, Shade, Style
    from rules.paa.mapdata import map_picture as empty

    unknown = [x for x in overlays if x not in OVERLAYS]
    if unknown:
        raise ValueError(f"the paa map has no overlay {', '.join(unknown)} (offered: {', '.join(OVERLAYS)})")
    pic = empty()
    if view is None:
        return pic
    styles = dict(pic.styles)
    shades = []
    if "zoc" in overlays:
        # §3: the hexes each faction's regular units exert ZOC into.
        styles["zoc_axis"] = Style(fill="#5e6454", opacity=0.25)
        styles["zoc_allied"] = Style(fill="#b5651d", opacity=0.25)
        for f in g.ROLES:
            shades += [Shade(h, f"zoc_{f}") for h in sorted(zoc(g.board(), view.pieces, g.as_faction(f), icf=g.icf_of(view)))]
    styles["axis_de"] = Style(fill="#5e6454", stroke="#222222", width=0.25, halo="#ffffff")
    styles["axis_it"] = Style(fill="#4f7a45", stroke="#222222", width=0.25, halo="#ffffff")
    styles["allied"] = Style(fill="#d8b67a", stroke="#222222", width=0.25, halo="#111111")
    counters = []
    # The last counter of a hex is drawn on top: combat units over lorries over installations.
    for p in sorted(view.pieces, key=lambda q: (q.hex, ("installation", "transport").index(q.kind) - 2 if not q.is_regular else 0, q.id)):
        u = oob.unit(p.id)
        kind = "allied" if p.faction == "allied" else "axis_it" if p.is_italian else "axis_de"
        figures = "" if p.kind == "installation" else f"{p.cf}-{p.mf}" if p.is_regular else f"1-{p.mf}"
        back = ",".join(x for x, on in (("OOS", p.oos), ("OOC²", p.ooc2), ("dism.", p.dismounted)) if on)
        counters.append(Counter(hex=p.hex, kind=kind, id=p.id.split(" ", 1)[1], type=_TYPES.get(u.type, "none"),  # type: ignore[arg-type]
                                echelon=_echelon(p.id), figures=figures, flipped=bool(back), back=back))
    return replace(pic, styles=styles, counters=tuple(counters), shades=tuple(shades), subtitle=phase_line(view))
