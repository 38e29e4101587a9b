"""What happened, in words (``Rules.happenings``; issue 21 points 2 and 3):
every elimination, step loss, Rout and Withdrawal with its rule, and each
battle's fire as a combat table.

Said only from what the reader may know: the reader's view of the
state before and after the step (units present, their CVs where the view
shows them, their hexes; ``rules.ritd.view.glances``: of the blocks the
step changed, or of every block for the dice of a fire), the public step
(the fire dice are public, RB 9.4) and the fire the game scores from them
in every replay (units in a battle fight face up, RB 8.5). A block the reader cannot identify is
counted ("2 Axis blocks"), never named; no block token is ever printed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pbem.rulesapi import ROLL, Combat, Die, Happening, Step
from rules.ritd import combat_round as cr
from rules.ritd import combat_state, routs
from rules.ritd import fire as fr
from rules.ritd.firetable import DIE_FACES, load_fire_table
from rules.ritd.position import enemy_of
from rules.ritd.state import State, game_map, roster_of
from rules.ritd.units import Roster
from rules.ritd.view import BlockView, Glance, glances, turn_step

SIDE_NAMES = {"axis": "Axis", "allied": "Allied"}
#: A side as the subject of a sentence ("the Allies place the hits").
SIDE_PLAYERS = {"axis": "the Axis", "allied": "the Allies"}

#: The Buildup Supply Check, made as the Buildup begins (RB 16.2): its key in ``CAUSES``.
BUILDUP_CHECK = "buildup-supply"
#: The Supply Checks (RB 12.7, 16.2): their eliminations are said for the whole map.
SUPPLY_CHECKS = ("initial-supply", "final-supply", BUILDUP_CHECK)

#: Why a block was lost in a step (the step the state was in before it,
#: ``View.step``): the words after "is eliminated" / "loses a step" ("{by}"
#: reads "by" after the one, "to" after the other), the rule.
CAUSES: dict[str, tuple[str, str]] = {
    "initial-supply": ("at the Initial Supply Check", "RB 12.7"),
    "final-supply": ("at the Final Supply Check", "RB 12.7"),
    # T10: the Offensive player places the hits of the Defensive Fire, and back (RB 9.1, 9.5)
    "offensive-losses": ("{by} Defensive Fire{at}", "RB 9.5"),
    "defensive-losses": ("{by} Offensive Fire{at}", "RB 9.5"),
    "rout-slowest": ("{by} Rout Attrition{at}", "RB 11.3"),
    "rout-pursuit": ("in a Rout{at}", "RB 11.3"),
    "rout-dice": ("{by} Pursuit Fire in a Rout{at}", "RB 11.3, 10.5"),
    "rout-losses": ("{by} Pursuit Fire in a Rout{at}", "RB 11.3, 10.5"),
    "rout-withdraw": ("in a Rout{at} with no way out", "RB 11.3"),
    "retreat-slowest": ("in a Retreat{at}", "RB 10.3"),
    "retreat-dice": ("{by} Pursuit Fire in a Retreat{at}", "RB 10.5"),
    "retreat-losses": ("{by} Pursuit Fire in a Retreat{at}", "RB 10.5"),
    "refuse-dice": ("{by} Pursuit Fire after refusing battle{at}", "RB 8.4, 10.5"),
    "refuse-losses": ("{by} Pursuit Fire after refusing battle{at}", "RB 8.4, 10.5"),
    "march-losses": ("by a failed Forced March", "RB 6.4"),
    # the step that ends a Month begins the Buildup with its Supply Check (RB 16.1, 16.2)
    BUILDUP_CHECK: ("at the Buildup Supply Check", "RB 16.2, 12.7"),
    "forced-march": ("in an Overrun", "RB 11.4"),
    "movement": ("in an Overrun", "RB 11.4"),
}

#: Steps whose moves are Withdrawals the reader is told of: Routs (RB 11.3),
#: Retreats (RB 10.3) and Refused battles (RB 8.4, 10.3).
WITHDRAWALS: dict[str, tuple[str, str]] = {"rout": ("Routed", "RB 11.3"), "retreat": ("Retreat", "RB 10.3"),
                                           "refuse": ("Battle refused", "RB 8.4, 10.3")}

#: Rule-book steps of the fire (T9, RB 9.1): who fires in each dice step.
FIRE_STEPS = {"defensive-dice": "Defensive Fire", "offensive-dice": "Offensive Fire"}

#: The dice steps of Pursuit Fire (RB 10.5): what is pursued.
PURSUITS = {"rout-dice": "the Routing units (RB 11.3)", "retreat-dice": "the Retreating units (RB 10.3)",
            "refuse-dice": "the units refusing battle (RB 8.4)"}

_TOKEN = re.compile(r"\b[AL][0-9a-f]{8}\b")


def happenings(before: State, after: State, step: Step, role: str | None) -> tuple[Happening, ...]:
    at = turn_step(before)
    dice = step.kind == ROLL and (at in FIRE_STEPS or at in PURSUITS)
    was, now = glances(before, after, role, every=dice)  # type: ignore[arg-type]
    said: list[Happening] = []
    if step.kind == ROLL and was.step in FIRE_STEPS:
        said += _fire(before, was, now, step)
    if step.kind == ROLL and was.step in PURSUITS:
        said += _pursuit_fire(before, was, step)
    said += _withdrawals(was, now)
    said += _losses(was, now)
    said += _eliminations(was, now)
    said += _supply(was, now)
    return tuple(said)


# -- names: only what the reader may name ---------------------------------------------------

def side_name(side: str) -> str:
    return SIDE_NAMES.get(side, side)


def _count(n: int, side: str) -> str:
    return f"{n} {side_name(side)} block{'s' * (n != 1)}"


def _join(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def group(blocks: Iterable[BlockView]) -> str:
    """The blocks as the reader may say them: the units it can identify by
    name, the others counted per side ("21 Pz, 15 Pz and 2 Allied blocks")."""
    blocks = list(blocks)
    named = sorted(b.unit for b in blocks if b.unit)
    hidden: dict[str, int] = {}
    for b in blocks:
        if not b.unit:
            hidden[b.side] = hidden.get(b.side, 0) + 1
    return _join(named + [_count(n, side) for side, n in sorted(hidden.items())])


def _plural(blocks: Sequence[BlockView]) -> bool:
    return len(blocks) > 1


def without_tokens(text: str, names: dict[str, BlockView]) -> str:
    """A line of the game's own words with every block token taken out: a
    named unit stays named, an unnamed block is said by its side."""
    for token, b in names.items():  # "Unit (token)", as wording.unit_label writes it
        if b.unit:
            text = text.replace(f"{b.unit} ({token})", b.unit)

    def bare(m: re.Match[str]) -> str:
        b = names.get(m.group())
        return (b.unit or f"an {side_name(b.side)} block") if b is not None else "a block"
    return _TOKEN.sub(bare, text)


def _step_key(was: Glance, now: Glance) -> str:
    """The step ``CAUSES`` knows the view before was in: the Player-Turn's
    step, or the Buildup Supply Check when the step began the Buildup."""
    if now.phase == "buildup" and was.phase != "buildup":
        return BUILDUP_CHECK
    return was.step if was.phase == "turn" else ""


def _cause(was: Glance, now: Glance, where: str, by: str) -> tuple[str, str]:
    words, rule = CAUSES.get(_step_key(was, now), ("", ""))
    return words.format(at=f" in {where}" if where else "", by=by), rule


# -- what was lost ---------------------------------------------------------------------------

def _eliminations(was: Glance, now: Glance) -> list[Happening]:
    """Blocks of the view before that the view after no longer has (RB 9.5,
    10.5, 11.3, 11.4, 12.7: all of them are eliminations)."""
    present = {b.token for b in now.blocks}
    gone: dict[tuple[str, str], list[BlockView]] = {}
    for b in was.blocks:
        if b.token not in present:
            gone.setdefault((b.side, b.where), []).append(b)
    out = []
    by_cause: dict[tuple[str, str, str], list[BlockView]] = {}
    for (side, where), blocks in gone.items():
        if _step_key(was, now) == "movement" and side == was.side:
            # The mover's own blocks leave the map in its Movement phase only by exiting (RB 17.1 sidebar).
            verb = "exit" if _plural(blocks) else "exits"
            out.append(Happening(f"{group(blocks)} {verb} the map off the enemy map-end from {where}",
                                 "RB 17.1", "exit"))
            continue
        at = where if _step_key(was, now) not in SUPPLY_CHECKS else ""
        words, rule = _cause(was, now, at, "by")
        by_cause.setdefault((side, words, rule), []).extend(blocks)
    for (_side, words, rule), blocks in sorted(by_cause.items()):
        if not words:  # outside a Player-Turn and its checks blocks leave the map without a fight (RB 16)
            verb = "leave" if _plural(blocks) else "leaves"
            out.append(Happening(f"{group(blocks)} {verb} the map in the {was.phase} phase",
                                 "RB 16.0" if was.phase == "buildup" else "", "removal"))
            continue
        verb = "are" if _plural(blocks) else "is"
        out.append(Happening(f"{group(blocks)} {verb} eliminated {words}".rstrip(), rule, "elimination"))
    return out


def _losses(was: Glance, now: Glance) -> list[Happening]:
    """Steps lost by blocks still on the map, where the reader sees their CV."""
    after = {b.token: b for b in now.blocks}
    out = []
    for b in was.blocks:
        a = after.get(b.token)
        if a is None or not b.cv or not a.cv or a.cv >= b.cv:
            continue
        name = a.unit or b.unit or f"an {side_name(b.side)} block"
        lost = b.cv - a.cv
        words, rule = _cause(was, now, b.where, "to")
        steps = "a step" if lost == 1 else f"{lost} steps"
        out.append(Happening(f"{name} loses {steps} {words}".rstrip() + f", CV {b.cv} to {a.cv}", rule, "loss"))
    return out


def _withdrawals(was: Glance, now: Glance) -> list[Happening]:
    """Blocks that left their hex in a Rout, Retreat or Refusal step, or that
    Routed at once after losses (RB 11.3), grouped by side, origin and
    destination: "Routed: 3 Allied blocks from Sollum withdraw to Bardia"."""
    kind = was.step.split("-")[0]
    if was.step in ("offensive-losses", "defensive-losses"):
        kind = "rout"
    if kind not in WITHDRAWALS:
        return []
    after = {b.token: b for b in now.blocks}
    moved: dict[tuple[str, str, str], list[BlockView]] = {}
    for b in was.blocks:
        a = after.get(b.token)
        if a is not None and a.hex != b.hex:
            moved.setdefault((b.side, b.where, a.where), []).append(a)
    title, rule = WITHDRAWALS[kind]
    out = []
    for (_side, origin, dest), blocks in sorted(moved.items()):
        verb = "withdraw" if _plural(blocks) else "withdraws"
        out.append(Happening(f"{title}: {group(blocks)} from {origin} {verb} to {dest}", rule, kind))
    return out


#: Supply markers changed by a Supply Check (RB 12.7, 16.2): (before, after) of
#: a block's (unsupplied, disrupted) -> the words, the rule.
MARKERS = (("unsupplied", False, True, "marked Unsupplied", "RB 12.7"),
           ("unsupplied", True, False, "Supplied again: Unsupplied marker removed", "RB 12.7"),
           ("disrupted", False, True, "Disrupted: still Unsupplied at the Final Supply Check", "RB 12.1, 12.7"),
           ("disrupted", True, False, "recovered from Disruption", "RB 11.2"))


def _supply(was: Glance, now: Glance) -> list[Happening]:
    """What a Supply Check changed on the blocks the reader sees (markers
    are public, RB 12.7): Unsupplied marked and removed, Disruption by
    supply and recovery, Fortress and Oasis Supply (RB 13.3, 15.1)."""
    key = _step_key(was, now)
    if key not in SUPPLY_CHECKS:
        return []
    after = {b.token: b for b in now.blocks}
    where = {"initial-supply": "the Initial Supply Check", "final-supply": "the Final Supply Check",
             BUILDUP_CHECK: "the Buildup Supply Check"}[key]
    out = []
    for field, old, new, words, rule in MARKERS:
        if field == "disrupted" and new and key != "final-supply":
            continue  # only the Final Supply Check Disrupts by supply (RB 12.1)
        hit = [after[b.token] for b in was.blocks if b.token in after
               and getattr(b, field) == old and getattr(after[b.token], field) == new]
        for side in sorted({b.side for b in hit}):
            mine = [b for b in hit if b.side == side]
            places = _join(sorted({b.where for b in mine}))
            out.append(Happening(f"At {where}, {group(mine)} in {places}: {words}", rule, "supply"))
    supplied: dict[tuple[str, str], list[BlockView]] = {}
    for b in was.blocks:
        a = after.get(b.token)
        if a is not None and a.supplied_by and a.supplied_by != b.supplied_by:
            supplied.setdefault((a.side, a.supplied_by), []).append(a)
    for (_side, source), blocks in sorted(supplied.items()):
        verb = "are" if _plural(blocks) else "is"
        out.append(Happening(f"{group(blocks)} {verb} supplied by {source} (Fortress or Oasis Supply)",
                             "RB 13.3, 15.1", "supply"))
    return out


# -- the fire (RB 9.1-9.5) ---------------------------------------------------------------------

def _fire(before: State, was: Glance, now: Glance, step: Step) -> list[Happening]:
    """The fire order the dice of ``step`` resolved, as a combat table: scored
    as ``resolve_dice`` scores it (public: the order, the side's fire so far,
    dice and the face-up units of the battle), worded with the game's own
    fire lines: each shot's dice and hits, and the side's hits so far when
    the fire is made step by step (RB 9.2, CB-19)."""
    turn = before.turn
    if turn is None or turn.fire is None or any(v is None for v in step.values):
        return []
    values = tuple(v for v in step.values if v is not None)
    pos, rnd = combat_state.combat_position(before, turn), combat_state.combat_round(before, turn)
    prior = turn.fire_result
    result = fr.score(pos, rnd, turn.fire, values, prior=prior, units=roster_of(before).get)
    since = len(prior.shots) if prior is not None else 0
    shots = result.shots[since:]
    names = {b.token: b for b in was.blocks}
    where = game_map().name(result.hex)
    roster = roster_of(before)

    def name(token: str) -> str:
        b = names.get(token)
        return (b.unit or f"an {side_name(b.side)} block") if b is not None else "a block"

    def arms(token: str) -> str:
        b = names.get(token)
        return f" ({roster.get(b.unit).arms_class})" if b is not None and b.unit else ""

    def hits_words(by_class: dict[str, tuple[int, int]]) -> list[str]:
        return [f"{h} hit{'s' * (h != 1)}" + (f" and {hh} half-hit{'s' * (hh != 1)}" if hh else "") + f" on {cls}"
                for cls, (h, hh) in sorted(by_class.items()) if h or hh]

    firer, target = result.side, enemy_of(result.side)
    dice: list[Die] = []
    mine: dict[str, tuple[int, int]] = {}
    for shot in shots:
        label = name(shot.token) + (f" at {shot.target} ({shot.fire})" if shot.target else " (no target left)")
        dice += [Die(label, v, used=shot.target is not None) for v in shot.dice]
        if shot.target is not None:
            h, hh = mine.get(shot.target, (0, 0))
            mine[shot.target] = (h, hh + shot.hits) if shot.half else (h + shot.hits, hh)
    hits = hits_words(mine)
    modifiers = [f"{side_name(firer)} {FIRE_STEPS[was.step]} (RB 9.1)"]
    if len(turn.fire.fires) > 1:
        modifiers.append(f"a fire plan of {len(turn.fire.fires)} units, targets set before rolling (RB 9.2)")
    if rnd.assault:
        modifiers.append("Assault (RB 9.1)")
    if any(s.half for s in shots):
        modifiers.append("Minefield: non-artillery hits on the Defender are half-hits (RB 9.52, 14.2)")
    if rnd.fortress:
        modifiers.append("Fortress hex (RB 13.2)")
    result_text = _join(hits) if hits else "no hits"
    if prior is not None:
        total = hits_words({c: (h.hits, h.half_hits) for c, h in result.hits.items()})
        result_text += f" (so far in this fire: {_join(total) if total else 'no hits'})"
    wiped = [c for c in result.wiped_out if prior is None or c not in prior.wiped_out]
    outcome = result_text + (f"; {_join(wiped)} wiped out (RB 9.5)" if wiped else "")
    unused = [f"{name(s.token)}: {' and '.join(s.unused)}" for s in shots if s.unused and s.target is not None]
    if unused:
        outcome += f"; fallbacks unused: {'; '.join(unused)}"
    table = Combat(
        where=where,
        attackers=tuple(f"{name(s.token)}{arms(s.token)}" for s in shots),
        defenders=tuple(f"{name(b.token)}{arms(b.token)}" for b in cr.firing_units(pos, result.hex, target)),
        modifiers=tuple(modifiers),
        odds=fire_table_words(shots, roster_of(before), names),
        dice=tuple(dice),
        result=outcome,
        losses=(f"{SIDE_PLAYERS[target]} {'places' if target == 'axis' else 'place'} the hits (RB 9.5)",)
        if result.hits and fr.fire_complete(pos, rnd, result, units=roster.get) else ())
    text = f"{FIRE_STEPS[was.step]} by {SIDE_PLAYERS[firer]} in {where}: {result_text}"
    return [Happening(text, "RB 9.2-9.4", "combat", table)]


def fire_table_words(shots: Sequence[fr.Shot], roster: Roster, names: dict[str, BlockView]) -> str:
    """The Fire Table lines the shots used (RB 9.4): firer Class on target
    Class, its fire and the faces that hit, once each ("armor on infantry DF
    (hits on 5-6)"); what a ratio is in other games' tables."""
    table = load_fire_table()
    out: list[str] = []
    for s in shots:
        b = names.get(s.token)
        if s.target is None or s.fire is None or b is None or not b.unit:
            continue
        low = table.hits_from(s.fire)
        faces = f"{low}-{DIE_FACES}" if low < DIE_FACES else f"{DIE_FACES}"
        words = f"{roster.get(b.unit).arms_class} on {s.target} {s.fire} (hits on {faces})"
        if words not in out:
            out.append(words)
    return "; ".join(out)


def _pursuit_fire(before: State, was: Glance, step: Step) -> list[Happening]:
    """The Pursuit Fire the dice of ``step`` resolved (RB 10.5): the
    pursuers (named where the reader may), their dice, a hit on each 4-6."""
    turn = before.turn
    fire = None if turn is None else turn.rout_pursuit if was.step == "rout-dice" else turn.pursuit
    if fire is None:
        return []
    names = {b.token: b for b in was.blocks}

    def name(token: str) -> str:
        b = names.get(token)
        return (b.unit or f"an {side_name(b.side)} block") if b is not None else "a block"

    values = list(step.values)
    dice: list[Die] = []
    for p in fire.pursuers:
        dice += [Die(f"{name(p.token)} pursuing", values.pop(0) if values else None) for _ in range(p.dice)]
    seen = [d.value for d in dice if d.value is not None]
    hits = sum(1 for v in seen if v >= routs.PURSUIT_HITS_FROM)
    result = (f"{hits} hit{'s' * (hits != 1)}" if len(seen) == len(dice) else "hits hidden") + \
        f" (a hit on each {routs.PURSUIT_HITS_FROM}-{routs.DIE_FACES}, RB 10.5)"
    pursuers = [names[p.token] for p in fire.pursuers if p.token in names]
    side = pursuers[0].side if pursuers else ""
    pursued = [b for b in was.blocks if b.hex == fire.hex and b.side != side]
    where = game_map().name(fire.hex)
    table = Combat(where=where, attackers=tuple(name(p.token) for p in fire.pursuers),
                   defenders=(group(pursued),) if pursued else (), dice=tuple(dice), result=result)
    text = f"Pursuit Fire in {where} on {PURSUITS[was.step].split(' (')[0]}: {result.split(' (')[0]}"
    return [Happening(text, "RB 10.5", "combat", table)]
