"""One valid form for every signed action (issue 27 point 6).

A patched client signs whatever it likes. If the rules ignored part of an
action (an Oasis entry for a hex that is no Oasis, Oasis Supply "given" to an
enemy block, a unit listed twice, a zero-hit loss), one move could be signed
in many forms, and a log would carry words that mean nothing. ``problems``
runs once in ``check`` (rules.ritd.game), after the RB 1.0 hex names and
before the rule checks, and refuses every such form with a Problem naming the
rule and the field; the engine turns it into exit 5 naming the signer, the
event and the action.

What is checked here is the form: names (hexes, block tokens, cards, labels)
against the game's data and the state, no duplicate, no entry the rules would
ignore. Whether the action is legal now stays with the rule modules. The
table of every field, its valid form and its rule is decisions/canonical.md.

Tuple order is not made canonical where an honest client keeps the order the
player typed (units of a Move, a Fortress Supply list): there duplicates are
refused and the order stays the player's (decisions/canonical.md). Supply Card
references are a set of the hand: listed in the order of the hand (T-41).
"""

from __future__ import annotations

from collections.abc import Iterable

from pbem.rulesapi import Problem
from rules.ritd import actions as ac
from rules.ritd import buildup as bu
from rules.ritd import cards as cd
from rules.ritd import combat_round as cr
from rules.ritd import fire as fr
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd import routs, supply_checks
from rules.ritd.hidden import is_token_of
from rules.ritd.position import Side
from rules.ritd.state import State, current_turn, game_map, quoted


def problems(state: State, action: object, side: Side) -> list[Problem]:
    """Every way ``action``, signed by ``side``, is not in its one valid form."""
    found = _problems(state, action, side)
    if not found:
        return []
    kind = ac.kind_of(action)
    return [Problem(p.rule, f"{kind}: {p.message} (one valid form per action)") for p in found[:5]]


def _problems(state: State, action: object, side: Side) -> list[Problem]:
    match action:
        case ac.Deploy(token=token):
            return _new_tokens(state, side, (token,), "token")
        case ac.Reinforce(tokens=tokens, early=early):
            return (_twice(tokens, "RB 16.4", "tokens") + _twice(early, "RB 16.41", "early")
                    + _new_tokens(state, side, tokens, "tokens"))
        case ac.CallMalta(tokens=tokens):
            return _twice(tokens, "RB 18.6", "tokens") + _new_tokens(state, side, tokens, "tokens")
        case ac.EarlyArrival(slots=slots):
            return _twice(slots, "RB 16.41", "slots")
        case ac.Rebuild(token=token, steps=steps, bp=bp):
            return (_own(state, side, (token,), "RB 16.54", "token")
                    + ([] if steps >= 1 else [Problem("RB 16.54", f"steps: {steps}; a Rebuild adds 1 step or more")])
                    + ([] if bp >= 0 else [Problem("RB 16.54", f"bp: {bp}; a cost is never negative")]))
        case bu.Redeploy(token=token) | bu.SeaRedeploy(token=token) | bu.ReturnForRefit(token=token):
            return _own(state, side, (token,), "RB 16.5", "token")
        case bu.BuySupply(cards=n):
            return [] if n >= 1 else [Problem("RB 16.5", f"cards: {n}; buy 1 Supply Card or more")]
        case ac.BuildMinefield(free=free, dismantled_shown=shown):
            return (_twice(shown, "RB 16.55", "dismantled_shown")
                    + ([] if free or not shown else
                       [Problem("RB 16.55", "dismantled_shown: only a free Minefield dismantles two others")]))
        case ac.OpenMinefields(hexes=hexes):
            return _twice(hexes, "RB 14.2", "hexes")
        case ac.SupplyCheck():
            return _supply_check(state, action, side)
        case mv.Move(kind=kind, destination=destination, units=units):
            out = _own(state, side, [u.token for u in units], "RB 5.0", "units", any_side=True)
            out += [Problem("RB 5.1", f"units: {quoted(u.token)} has an empty path") for u in units if not u.path]
            if kind == "group" and destination:
                out.append(Problem("RB 5.1", "destination: a Group Move's units each end where their path "
                                             "ends; only a Regroup Move (RB 5.2) names a destination"))
            return out
        case ac.ForcedMarches(marches=marches):
            named = [f.token for f in marches]
            return (_twice(named, "RB 6.4", "marches") + _own(state, side, named, "RB 6.4", "marches")
                    + [Problem("RB 6.4", f"marches: {quoted(f.token)} has an empty path") for f in marches if not f.path])
        case routs.PursuitFire(pursuers=pursuers):
            named = [p.token for p in pursuers]
            return (_twice(named, "RB 10.5", "pursuers") + _own(state, side, named, "RB 10.5", "pursuers")
                    + [Problem("RB 10.5", f"pursuers: {quoted(p.token)} rolls {p.dice} dice; a pursuer rolls 1 or 2")
                       for p in pursuers if p.dice not in (1, 2)])
        case ac.PursuitLosses(eliminated=gone, recommit=kept) | ac.Rout(eliminated=gone, recommit=kept) \
                | ac.MarchLosses(eliminated=gone, recommit=kept):
            rule = {"pursuit-losses": "RB 10.5", "rout": "RB 11.3", "march-losses": "RB 6.4"}[_tag(action)]
            out = (_twice(tuple(gone) + tuple(kept), rule, "eliminated and recommit")
                   + _own(state, side, tuple(gone) + tuple(kept), rule, "eliminated and recommit"))
            if isinstance(action, ac.Rout) and action.slowest < 0:
                out.append(Problem("RB 11.3", f"slowest: {action.slowest}; a speed is never negative"))
            return out
        case cr.BattleSelection(active=active, assault=assault):
            return (_twice(active, "RB 8.6", "active") + _twice(assault, "RB 8.6", "assault")
                    + [Problem("RB 8.6", f"assault: {game_map().name(h)} is not one of the Active Battles")
                       for h in assault if h not in active])
        case fr.FirePlan(side=fire_side, fires=fires):
            out = [] if fire_side == side else [Problem("RB 9.1", f"side: {fire_side}; the plan is signed by {side}")]
            named = [f.token for f in fires]
            out += _twice(named, "RB 9.2", "fires") + _own(state, side, named, "RB 9.2", "fires")
            for f in fires:
                classes = (f.target, *f.fallback)
                if len(set(classes)) != len(classes):
                    out.append(Problem("RB 9.3", f"fires: {quoted(f.token)} names a target Class twice "
                                                 "(its target and fallbacks are distinct)"))
            return out
        case ls.LossAllocation(losses=losses):
            named = [x.token for x in losses]
            out = _twice(named, "RB 9.5", "losses") + _own(state, side, named, "RB 9.5", "losses")
            for x in losses:
                if x.hits < 0 or x.half_hits < 0:
                    out.append(Problem("RB 9.5", f"losses: {quoted(x.token)} takes a negative number of hits"))
                elif not (x.hits or x.half_hits):
                    out.append(Problem("RB 9.5", f"losses: {quoted(x.token)} is listed with no hits"))
            return out
        case ac.PlayCards(cards=cards):
            return _hand_order(state, side, cards, "RB 3.42")
        case ac.EndBuildup(cards=cards):
            return _hand_order(state, side, cards, "RB 16.6")
        case ac.RefuseBattle(slowest=speed) | ac.RetreatSpeed(slowest=speed):
            return [] if speed >= 0 else [Problem("RB 10.5", f"slowest: {speed}; a speed is never negative")]
    return []


def _tag(action: object) -> str:
    return str(getattr(getattr(type(action), "__struct_config__", None), "tag", ""))


def _twice(values: Iterable[str], rule: str, field: str) -> list[Problem]:
    seen: set[str] = set()
    twice = []
    for v in values:
        if v in seen and v not in twice:
            twice.append(v)
        seen.add(v)
    return [Problem(rule, f"{field}: {quoted(v)} is listed twice") for v in twice]


def _hand_order(state: State, side: Side, cards: tuple[str, ...], rule: str) -> list[Problem]:
    """Supply Cards named in the order of the hand (issue 27, T-41): which cards
    are played is a set, so one order only; whether they are in the hand is
    the rule check's (supplycards.card_checks)."""
    held = state.deck.held.get(side, ())
    if cd.in_hand_order(held, cards):
        return []
    return [Problem(rule, f"cards: {', '.join(cards)} are not listed in the order of the hand "
                          f"({', '.join(r for r in held if r in cards)})")]


def _new_tokens(state: State, side: Side, tokens: Iterable[str], field: str) -> list[Problem]:
    """RB 2.0: a new block's token is ``side``'s letter and eight hex digits, and not yet in play."""
    return [Problem("RB 2.0", f"{field}: {quoted(t)} is not a new {side} block token") for t in tokens
            if not is_token_of(t, side) or state.position.has_block(t)]


def _own(state: State, side: Side, tokens: Iterable[str], rule: str, field: str, *,
         any_side: bool = False) -> list[Problem]:
    """Every token names a block on the map, of ``side`` (or of either side
    where the rule decides whose units may act, as a Move's)."""
    out = []
    pos = state.position
    for t in dict.fromkeys(tokens):
        if not pos.has_block(t):
            out.append(Problem(rule, f"{field}: {quoted(t)} is not a block in play"))
        elif not any_side and pos.block(t).side != side:
            out.append(Problem(rule, f"{field}: {quoted(t)} is not an {side} block"))
    return out


def _supply_check(state: State, action: ac.SupplyCheck, side: Side) -> list[Problem]:
    """RB 13.3, 15.1: the Fortress and Oasis choices name an Isolated Fortress
    or Oasis hex and blocks of the checking side, each once, and carry only
    what the check uses: an entry whose removal changes nothing is refused."""
    m = game_map()
    out: list[Problem] = []
    for hex_, tokens in action.fortress.items():
        if m.fortress(hex_) is None:
            out.append(Problem("RB 13.3", f"fortress: {quoted(hex_)} is not a Fortress hex"))
        if not tokens:
            out.append(Problem("RB 13.3", f"fortress: {m.name(hex_)} is given no unit"))
    for hex_ in action.oasis:
        if m.oasis(hex_) is None:
            out.append(Problem("RB 15.1", f"oasis: {quoted(hex_)} is not an Oasis hex"))
    chosen = [t for tokens in action.fortress.values() for t in tokens] + list(action.oasis.values())
    out += _twice(chosen, "RB 12.7", "fortress and oasis")
    out += _own(state, side, [t for tokens in action.fortress.values() for t in tokens], "RB 13.3", "fortress")
    out += _own(state, side, action.oasis.values(), "RB 15.1", "oasis")
    if out or not chosen or state.phase != "turn":
        return out
    step = current_turn(state).step
    if step not in ("initial-supply", "final-supply"):
        return out  # the rule check names the step (RB 12.7)
    result = supply_checks.supply_check(state, step, action, side)

    def same_without(fortress: dict[str, tuple[str, ...]], oasis: dict[str, str]) -> bool:
        return supply_checks.supply_check(state, step, ac.SupplyCheck(fortress=fortress, oasis=oasis), side) == result

    for hex_ in action.oasis:
        if same_without(action.fortress, {h: t for h, t in action.oasis.items() if h != hex_}):
            out.append(Problem("RB 15.1", f"oasis: the entry for {m.name(hex_)} is ignored by the check "
                                          "(no choice of Oasis Supply is needed there)"))
    for hex_, tokens in action.fortress.items():
        for t in tokens:
            fewer = {**action.fortress, hex_: tuple(x for x in tokens if x != t)}
            if same_without({h: ts for h, ts in fewer.items() if ts}, action.oasis):
                out.append(Problem("RB 13.3", f"fortress: {quoted(t)} for {m.name(hex_)} is ignored by the check "
                                              "(no choice of Fortress Supply is needed for it)"))
    return out
