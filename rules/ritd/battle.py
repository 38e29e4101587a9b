"""The Combat phase (RB 8.6, 9.1-9.5; T9): the Combat Round, the choice of
Active Battles, Fire plans and losses: check, parsing, order listing and the
fire described for reports. The fire model is in rules.ritd.combat_round,
fire, losses and fortresses (decisions/combat.md names each one's sections).
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import cast

import msgspec

from pbem.rulesapi import Order, Problem
from rules.ritd import combat_round as cr
from rules.ritd import deployment, hidden, retreats, steps, wording
from rules.ritd import fire as fr
from rules.ritd import fortresses as fo
from rules.ritd import losses as ls
from rules.ritd.actions import OrderError, RevealUnits
from rules.ritd.cards import OPTION_COST
from rules.ritd.combat_state import battle_hexes, combat_position, combat_round, new_battles, to_reveal
from rules.ritd.position import Side
from rules.ritd.state import State, all_scenarios, game_map, roster_of
from rules.ritd.steps import TurnNext
from rules.ritd.turn import PendingRout, Turn
from rules.ritd.units import ARMS_CLASSES, ArmsClass


def check_combat(state: State, turn: Turn, action: object, side: Side) -> list[Problem]:
    """The Combat phase's orders (RB 8.6, 9.1-9.5); problems name hexes (RB 1.1)
    and the units this replay knows."""
    pos = combat_position(state, turn)
    place, name = functools.partial(wording.hex_label, game_map()), wording.unit_namer(state.position)
    match action:
        case cr.BattleSelection():
            if turn.step != "battles":
                return [Problem("RB 8.6", "the Active Battles are chosen at the start of the Combat phase")]
            made = turn.movement.moves_made if turn.movement else 0
            # RB 4.3: two real cards and at most one Move (None: the cards are secret to this replay)
            assault_turn = None if turn.real < 0 else (turn.real >= OPTION_COST["assault"] and made <= 1)
            return cr.check_battle_selection(pos, side, action, new_battles=new_battles(turn),
                                             fortress_hexes=fo.fortress_hexes(game_map()), assault_turn=assault_turn,
                                             blitz=turn.blitz, partial_retreats=turn.partial, place=place)
        case fr.FirePlan(hex=hex_, side=firer):
            if turn.step not in ("defensive-fire", "offensive-fire"):
                return [Problem("RB 9.1", "no fire is due now")]
            rnd = combat_round(state, turn)
            due = rnd.defensive_side if turn.step == "defensive-fire" else rnd.offensive_side
            if hex_ != rnd.hex or firer != due:
                return [Problem("RB 9.1", f"now {due} fires in {place(rnd.hex)} ({turn.step.split('-')[0]} fire)")]
            return fr.check_fire_plan(pos, rnd, action, prior=turn.fire_result, units=roster_of(state).get,
                                      place=place, name=name)
        case ls.LossAllocation(hex=hex_):
            if turn.step not in ("offensive-losses", "defensive-losses") or turn.fire_result is None:
                return [Problem("RB 9.5", "no hits are waiting to be placed")]
            return ls.check_allocation(pos, turn.fire_result, action, units=roster_of(state).get, place=place,
                                       name=name)
    return steps.not_now(state, action)


def parse_battles(text: str) -> cr.BattleSelection:
    """'battles Sollum, Buq Buq' / 'battles none' / 'battles Sollum assault Sollum' (RB 8.6)."""
    body = text.split(None, 1)[1] if " " in text.strip() else ""
    m = re.match(r"^(?P<active>.*?)(?:(?:^|\s+)assault\s+(?P<assault>.+))?$", body.strip(), re.IGNORECASE)
    assert m is not None  # the pattern matches any text
    active, assault = m.group("active"), m.group("assault") or ""
    def places(part: str) -> tuple[str, ...]:
        part = part.strip()
        if part.lower() in ("", "none"):
            return ()
        return tuple(deployment.place_name(p) for p in re.split(r"\s*,\s*", part) if p.strip())
    return cr.BattleSelection(active=places(active), assault=places(assault))


_CLASS_WORDS = {"armor": "armor", "armour": "armor", "infantry": "infantry", "artillery": "artillery",
                "antitank": "antitank", "anti-tank": "antitank"}


def parse_fire(state: State, role: Side, text: str) -> fr.FirePlan:
    """'fire Sollum: 21Pz/5 at armor' (one unit: step-by-step fire, RB 9.2) or
    a plan 'fire Sollum: 21Pz/5 at armor, 15Pz/8 at infantry else armor'
    (in firing order, artillery first; 'else' names the fallback classes of
    a later unit, used if its target is gone when it fires: RB 9.3, CB-19)."""
    m = re.match(r"^fire\s+(?P<where>[^:]+):\s*(?P<fires>.+)$", text.strip(), re.IGNORECASE)
    if not m:
        raise OrderError("RB 9.2: write 'fire <hex>: <unit> at <class>' (one unit) or "
                         "'fire <hex>: <unit> at <class> [else <class> ...], ...' (a plan)")
    hex_ = deployment.place_name(m.group("where"))
    fires: list[fr.UnitFire] = []
    for part in re.split(r"\s*,\s*", m.group("fires").strip()):
        name, sep, targets = part.rpartition(" at ")
        classes = [_CLASS_WORDS.get(t.strip().lower()) for t in re.split(r"\s+else\s+", targets.strip(),
                                                                           flags=re.IGNORECASE)]
        if not sep or any(c is None for c in classes):
            raise OrderError(f"RB 9.3: '{part}': write '<unit> at armor|infantry|antitank|artillery "
                             "[else <class> ...]'")
        fires.append(fr.UnitFire(token=deployment.own_token(state, role, name),
                                 target=cast(ArmsClass, classes[0]),
                                 fallback=tuple(cast(ArmsClass, c) for c in classes[1:])))
    return fr.FirePlan(hex=hex_, side=role, fires=tuple(fires))


def parse_combat_losses(state: State, role: Side, turn: Turn, text: str) -> ls.LossAllocation:
    """'losses Sollum: 7/7 Tk 2, Matilda 1' (hits per unit) or 'losses Sollum auto' (RB 9.5)."""
    m = re.match(r"^losses\s+(?P<where>[^:]+?)(?:\s+(?P<auto>auto)|:\s*(?P<units>.*))$", text.strip(),
                 re.IGNORECASE)
    if not m:
        raise OrderError("RB 9.5: write 'losses <hex>: <unit> <hits>, ...' or 'losses <hex> auto'")
    hex_ = deployment.place_name(m.group("where"))
    if m.group("auto"):
        if turn.fire_result is None or turn.fire_result.hex != hex_:
            raise OrderError("RB 9.5: no hits are waiting to be placed there")
        return ls.default_allocation(combat_position(state, turn), turn.fire_result, units=roster_of(state).get)
    losses = []
    for part in re.split(r"\s*,\s*", (m.group("units") or "").strip()):
        if not part:
            continue
        name, _, n = part.rpartition(" ")
        if not name or not n.isdigit():
            raise OrderError("RB 9.5: write 'losses <hex>: <unit> <hits>, ...' or 'losses <hex> auto'")
        losses.append(ls.Loss(deployment.own_token(state, role, name), hits=int(n)))
    return ls.LossAllocation(hex=hex_, losses=tuple(losses))


def fire_orders(state: State, role: Side, turn: Turn) -> list[str]:
    """The fire orders listed (RB 9.2, 9.3): step-by-step fire, one order per
    unit that may fire next (artillery first) and legal target; then one fire
    plan per target Class for all the units still to fire: each at that Class
    where it may, else at its first legal target, the later units with the
    other Classes left as fallbacks (CB-19). Any other legal order may be
    written."""
    m, pos = game_map(), combat_position(state, turn)
    rnd = combat_round(state, turn)
    roster = all_scenarios().roster
    prior = turn.fire_result
    present = fr.targets_left(pos, rnd, role, prior, units=roster.get)
    shooters = sorted(fr.yet_to_fire(pos, rnd, role, prior),
                      key=lambda b: (roster.get(b.unit).arms_class != "artillery", b.unit))
    if not present or not shooters:
        return []
    where = m.name(rnd.hex)
    artillery_first = any(roster.get(b.unit).arms_class == "artillery" for b in shooters)
    out = [f"fire {where}: {b.unit} at {cls}" for b in shooters
           if not artillery_first or roster.get(b.unit).arms_class == "artillery"
           for cls in fr.legal_targets(roster.get(b.unit).arms_class, present)]
    if len(shooters) < 2:
        return out
    for cls in [c for c in ARMS_CLASSES if c in present]:
        fires: list[str] = []
        for i, b in enumerate(shooters):
            legal = fr.legal_targets(roster.get(b.unit).arms_class, present)
            target = cls if cls in legal else legal[0]
            rest = [c for c in ARMS_CLASSES if c in present and c != target] if i else []
            fires.append(f"{b.unit} at {' else '.join([target, *rest])}")
        order = f"fire {where}: " + ", ".join(fires)
        if order not in out:
            out.append(order)
    return out


def fire_lines(state: State, result: fr.FireResult, since: int = 0) -> tuple[str, ...]:
    """RB 9.2-9.4: each firing unit from shot ``since`` on (named where this
    replay knows it: fire happens face up, RB 8.5), its target class, fire
    rating, dice and hits, and the declared fallbacks it did not use (CB-19)."""
    where = game_map().name(result.hex)
    lines = []
    for shot in result.shots[since:]:
        who = wording.unit_label(state.position, shot.token)
        unused = f"; {' and '.join(shot.unused)} unused" if shot.unused and shot.target is not None else ""
        if shot.target is None:
            lines.append(f"{where}: {who} does not fire: no target left ({' '.join(map(str, shot.dice))} unused)")
            continue
        hits = f"{shot.hits} hit{'s' * (shot.hits != 1)}" + (" (halved: Minefield)" if shot.half else "")
        lines.append(f"{where}: {who} at {shot.target} ({shot.fire}): {' '.join(map(str, shot.dice))} -> {hits}{unused}")
    return tuple(lines)


def score_fire_dice(state: State, turn: Turn, values: tuple[int, ...]) -> tuple[State, Turn, bool]:
    """RB 9.2-9.5: the dice of a fire order, in its order, scored after the
    side's fire so far: the state and turn with the result, and whether the
    side's fire is complete (no unit left to fire, or no target left; the
    sequence decides what follows, sequence.fire_rolled)."""
    fire = turn.fire
    assert fire is not None  # RB 9.4: the dice of an announced fire
    pos, rnd, roster = combat_position(state, turn), combat_round(state, turn), roster_of(state)
    prior = turn.fire_result
    result = fr.score(pos, rnd, fire, values, prior=prior, units=roster.get)
    since = len(prior.shots) if prior is not None else 0
    state = msgspec.structs.replace(state, last_rolls=tuple(values), last_fire=fire_lines(state, result))
    new_fired = tuple(s.token for s in result.shots[since:] if s.target is not None)
    turn = msgspec.structs.replace(turn, fire=None, fire_result=result,
                                   probe_fired=turn.probe_fired + new_fired if turn.probing else ())
    return state, turn, fr.fire_complete(pos, rnd, result, units=roster.get)


#: What ``pbem explain fire`` says of the two forms of a fire order (RB 9.2).
FIRE_FORMS = (
    "RB 9.0-9.1: each Active Battle in the order the active player chose; in each, the passive player's "
    "Defensive Fire, its losses placed, then the active player's Offensive Fire, its losses placed "
    "(in a Probe, RB 10.41, the Rearguard fires first). Each Undisrupted unit fires once; artillery first (RB 9.2).",
    "Step by step (the rule, RB 9.2): 'fire <hex>: <unit> at <class>' names one unit and its target Class; its "
    "dice are rolled at once (the opponent's pbem answers automatically) and you see the hits before you "
    "order the next unit, choosing its target knowing them. Cost: 2 messages a unit.",
    "Fire plan (one message): 'fire <hex>: <unit> at <class>, <unit> at <class> else <class>, ...' fires the "
    "units in that order, targets set before any die is rolled; 'else' gives a later unit fallbacks used if "
    "its target Class is wiped out before it fires (RB 9.3; unused ones are recorded as unused; with none "
    "left it fires at the first legal Class, CB-05). A plan may name some of the units and the rest follow "
    "step by step.",
    "Hits accumulate over the whole Defensive or Offensive Fire; a Class whose hits can remove all its units "
    "is wiped out at once and can no longer be targeted (RB 9.5); the owner places the hits when the fire "
    "is complete (RB 9.5).",
)


def explain_fire(state: State, role: Side, where: str = "") -> list[str]:
    """``pbem explain fire <battle>``: the two forms of a fire order (RB 9.2),
    and the fire under way in that battle ("now": wherever it is): who
    fires, the shots so far with their hits, the Classes wiped out, the units
    still to fire and the targets each may take. ValueError for a place that
    is not on the map."""
    lines = list(FIRE_FORMS)
    turn = state.turn
    asked = "" if where.strip().lower() in ("", "now") else deployment.place_name(where)
    if turn is None or turn.step not in ("defensive-fire", "defensive-dice", "offensive-fire", "offensive-dice") \
            or not turn.battles or asked not in ("", turn.battles[0]):
        return lines + [f"No fire is under way{' in ' + game_map().name(asked) if asked else ''} now."]
    pos, rnd, roster = combat_position(state, turn), combat_round(state, turn), roster_of(state)
    side = rnd.defensive_side if turn.step.startswith("defensive") else rnd.offensive_side
    where = game_map().name(rnd.hex)
    who = "you" if side == role else f"the {side} player"
    lines.append(f"Now: {turn.step.split('-')[0].capitalize()} Fire in {where} by {who} ({side}).")
    prior = turn.fire_result
    if prior is not None:
        lines += ["Fired so far: " + line.split(": ", 1)[1] for line in fire_lines(state, prior)]
        hits = [f"{h.hits} hits" + (f" and {h.half_hits} half-hits" if h.half_hits else "") + f" on {c}"
                for c, h in sorted(prior.hits.items())]
        lines.append("Hits so far: " + (", ".join(hits) or "none")
                     + (f"; wiped out: {', '.join(prior.wiped_out)}" if prior.wiped_out else ""))
    present = fr.targets_left(pos, rnd, side, prior, units=roster.get)
    waiting = fr.yet_to_fire(pos, rnd, side, prior)
    artillery = [b for b in waiting if b.unit and roster.get(b.unit).arms_class == "artillery"]
    for b in waiting:
        if not b.unit:
            lines.append(f"To fire: {wording.unit_label(state.position, b.token)} (hidden)")
            continue
        arms = roster.get(b.unit).arms_class
        legal = fr.legal_targets(arms, present)
        first = " (artillery fires first)" if artillery and arms == "artillery" else \
            " (after the artillery)" if artillery else ""
        lines.append(f"To fire: {wording.unit_label(state.position, b.token)} ({arms}, {b.cv} CV "
                     f"x{cr.dice_multiplier(pos, rnd, side, arms)} dice) at "
                     f"{' or '.join(legal) or 'nothing: no target left'}{first}")
    return lines


# -- RB 7.3: units in battles revealed -----------------------------------------------------

def check_reveal_units(state: State, turn: Turn, action: RevealUnits, side: Side, ctx) -> list[Problem]:
    if turn.step not in ("reveal-passive", "reveal-active"):
        return [Problem("RB 7.3", "units in battles are revealed when all Movement is complete")]
    missing = [b.token for b in to_reveal(state, side)
               if not ctx.opened(hidden.identity_label(b.token, state.versions.get(b.token, 0)))]
    if missing:
        return [Problem("RB 7.3", f"open the identity of every unit of yours in a battle: "
                                  f"{wording.unit_labels(wording.unit_namer(state.position), missing)} not opened")]
    return []


def apply_reveal_units(state: State, turn: Turn, action: RevealUnits, side: Side, ctx) -> TurnNext:
    pos = state.position
    show = {b.token for b in to_reveal(state, side)}
    pos = pos.replace_blocks([msgspec.structs.replace(b, revealed=True) for b in pos.blocks if b.token in show])
    return TurnNext("units_revealed", msgspec.structs.replace(state, position=pos), turn)


# -- RB 8.6, 9.1-9.5: the Combat phase's orders ----------------------------------------------

def check_combat_action(state: State, turn: Turn, action: object, side: Side, ctx) -> list[Problem]:
    return check_combat(state, turn, action, side)


def apply_battle_selection(state: State, turn: Turn, action: cr.BattleSelection, side: Side, ctx) -> TurnNext:
    return TurnNext("battles_chosen", state, msgspec.structs.replace(turn, battles=tuple(action.active),
                                                                     assault=tuple(action.assault),
                                                                     fought=turn.fought or bool(action.active)))


def apply_fire_plan(state: State, turn: Turn, action: fr.FirePlan, side: Side, ctx) -> TurnNext:
    return TurnNext("fire_ordered", state, msgspec.structs.replace(turn, fire=action))


def apply_loss_allocation(state: State, turn: Turn, action: ls.LossAllocation, side: Side, ctx) -> TurnNext:
    pos = state.position
    fighting = combat_position(state, turn)
    fire_result = turn.fire_result
    assert fire_result is not None  # RB 9.5: losses follow a scored fire
    out = ls.apply_allocation(fighting, fire_result, action, units=roster_of(state).get)
    # T-34: the new CVs are public; they stand for the committed ones from now on.
    hit = {hidden.identity_label(b.token, state.versions.get(b.token, 0)): b.cv
           for b in out.position.blocks if pos.has_block(b.token) and pos.block(b.token).cv != b.cv}
    after = retreats.with_retreaters(pos, out.position, turn.retreaters) if turn.probing else out.position
    state = msgspec.structs.replace(state, position=after, public_cv={**state.public_cv, **hit})
    # T-11, T-12: unshielded Disrupted units Rout at once (RB 11.3); only
    # enemy units that have not fired in this Combat Round Pursue.
    by_hex: dict[tuple[str, Side], list[str]] = {}
    for t in out.unshielded:
        b = out.position.block(t)
        by_hex.setdefault((b.hex, b.side), []).append(t)
    # In a Probe the Disengaging units still shield their side until
    # they leave; what is left behind Routs after them (RB 10.3 step 4).
    # Nor do the Disengaging units Pursue (T-37).
    fired = fire_result.fired + (turn.retreaters if turn.probing else ())
    pending_routs = [PendingRout(hex=h, side=owner, tokens=tuple(ts), fired=fired)
                     for (h, owner), ts in by_hex.items() if not (turn.probing and owner == turn.active)]
    return TurnNext("losses_placed", state, turn, routs=tuple(pending_routs))


# -- the orders listed (legal_orders) --------------------------------------------------

def listed_reveals(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in steps "reveal-passive", "reveal-active"."""
    return ["reveal units"]


def listed_battles(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in step "battles": every choice of Active Battles
    (RB 8.6): the mandatory ones (new battles, Fortress battles attacked,
    RB 13.2) with each subset of the others when a real card was played
    (RB 4.1), none where a Partial Retreat was made (RB 10.4); in an
    Assault Turn each with each non-empty subset of its battles as Assault
    Battles (RB 4.3), while there are at most ``ASSAULT_LISTED`` battles
    (beyond: all of them or one)."""
    m, pos = game_map(), state.position
    must = cr.mandatory_battles(pos, role, new_battles=new_battles(turn),
                                fortress_hexes=fo.fortress_hexes(m), blitz=turn.blitz,
                                partial_retreats=turn.partial)
    # A Combat Round needs a real card (RB 4.1): with none played, no battle beyond the mandatory ones.
    others = sorted(h for h in set(battle_hexes(pos)) - set(must) - set(turn.partial)) \
        if turn.real >= OPTION_COST["basic"] else []
    assault_turn = turn.real >= OPTION_COST["assault"] and not turn.blitz \
        and (turn.movement.moves_made if turn.movement else 0) <= 1
    orders = []
    for chosen in _subsets(others):
        active = tuple(sorted((*must, *chosen)))
        names = ", ".join(m.name(h) for h in active) or "none"
        orders.append(f"battles {names}")
        if not assault_turn:
            continue
        assaults = _subsets(active)[1:] if len(active) <= ASSAULT_LISTED else \
            [active] + [(h,) for h in active]
        orders += [f"battles {names} assault {', '.join(m.name(h) for h in a)}" for a in assaults]
    return orders


#: Up to how many Active Battles every subset of them is listed as Assault Battles.
ASSAULT_LISTED = 5


def _subsets(hexes: list[str] | tuple[str, ...]) -> list[tuple[str, ...]]:
    """Every subset of ``hexes``, the empty one first, by size, in their order."""
    out: list[tuple[str, ...]] = [()]
    for size in range(1, len(hexes) + 1):
        out += list(itertools.combinations(hexes, size))
    return out


def listed_fire(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in steps "defensive-fire", "offensive-fire"."""
    return fire_orders(state, role, turn)


def listed_losses(state: State, role: Side, turn: Turn, ctx) -> list[str]:
    """The orders listed in steps "offensive-losses", "defensive-losses"."""
    m = game_map()
    return [f"losses {m.name(turn.battles[0])} auto"]


# -- the actions in words (format_action) ---------------------------------------------------

def format_reveal_units(action: RevealUnits) -> str:
    """The action in words (format_action)."""
    return "reveal units"


def format_battle_selection(action: cr.BattleSelection) -> str:
    """The action in words (format_action)."""
    m = game_map()
    active = action.active
    assault = action.assault
    return "battles " + (", ".join(m.name(h) for h in active) or "none") + \
        (" assault " + ", ".join(m.name(h) for h in assault) if assault else "")


def format_fire_plan(action: fr.FirePlan) -> str:
    """The action in words (format_action)."""
    m = game_map()
    return f"fire {m.name(action.hex)}: " + ", ".join(
        f"{f.token} at {' else '.join((f.target, *f.fallback))}" for f in action.fires)


def format_loss_allocation(action: ls.LossAllocation) -> str:
    """The action in words (format_action)."""
    m = game_map()
    hex_ = action.hex
    losses = action.losses
    return f"losses {m.name(hex_)}: " + (", ".join(
        f"{x.token} {x.hits}" + (f" (+{x.half_hits} half)" if x.half_hits else "") for x in losses)
        or "none")


# -- orders read (parse_order) ---------------------------------------------------------------

def parse_reveal_units(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'reveal units' (RB 7.3; the Rearguard in a Probe, RB 10.41): identities
    opened in an earlier battle stay opened (RB 8.5)."""
    shown = retreats.rearguard_to_reveal(state, turn) if turn.step == "probe-reveal" else to_reveal(state, role)
    labels = [hidden.identity_label(b.token, state.versions.get(b.token, 0)) for b in shown]
    return Order(action=RevealUnits(), reveal=tuple(lbl for lbl in labels if not ctx.opened(lbl)))


def parse_battles_order(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'battles <hex>, ... [assault <hex>, ...]' or 'battles none' (RB 8.6, 4.3)."""
    return Order(action=parse_battles(words))


def parse_fire_order(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'fire <hex>: <unit> at <class>' or a plan 'fire <hex>: <unit> at <class> [else <class>], ...' (RB 9.1-9.3)."""
    return Order(action=parse_fire(state, role, words))


def parse_losses_order(state: State, role: Side, turn: Turn, words: str, low: str, ctx) -> Order:
    """'losses <hex>: <unit> <hits>, ...' or 'losses <hex> auto' (RB 9.5)."""
    return Order(action=parse_combat_losses(state, role, turn, words))
