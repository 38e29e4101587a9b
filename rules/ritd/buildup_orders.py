"""The Buildup step's orders (RB 16.4-16.6, 18.6): Early Arrival,
Reinforcements, Rebuilds, the hidden blocks entering at a Base, and the
Redeploy paths. The BP ledger and costs are rules.ritd.buildup.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import cast

import msgspec

from pbem.rulesapi import Order, Problem
from rules.ritd import buildup as bu
from rules.ritd import cards as cd
from rules.ritd import deployment, group_moves, hidden, minefield_rules, supplycards, wording
from rules.ritd import reinforcements as rf
from rules.ritd.actions import BuildMinefield, CallMalta, EarlyArrival, EndBuildup, OrderError, Rebuild, Reinforce
from rules.ritd.cards import Hand
from rules.ritd.hidden import Obligation
from rules.ritd.position import Block, Side, enemy_of
from rules.ritd.state import State, all_scenarios, game_map, hand_of, identity_of, scenario_of, supply_deck
from rules.ritd.steps import MonthNext, not_now
from rules.ritd.units import UnknownUnit


def buildup_ctx(state: State) -> bu.BuildupContext:
    """The Buildup's fixed context (RB 16.2), its problems naming the blocks this replay knows."""
    return bu.BuildupContext(m=game_map(), networks={cast(Side, k): frozenset(v) for k, v in state.networks.items()},
                             roster=all_scenarios().roster, name=wording.unit_namer(state.position))


def due_units(state: State, side: Side) -> tuple:
    """RB 16.4: the Reinforcements due in this Buildup that did not arrive
    early, by name where this replay knows which did (see ``_due_count``)."""
    if side in state.reinforced:
        return ()
    return rf.on_schedule(all_scenarios(), scenario_of(state), side, state.month, state.early_units.get(side, ()))


def due_count(state: State, side: Side) -> int:
    """How many blocks arrive in this Buildup: the schedule less the early
    arrivals of the last Buildup (a public count), plus this one's."""
    if side in state.reinforced:
        return 0
    scheduled = len(rf.on_schedule(all_scenarios(), scenario_of(state), side, state.month))
    return scheduled - state.early.get(side, 0) + len(state.early_arrived)


def early_candidates(state: State, side: Side) -> tuple:
    """RB 16.41: next month's units, checked once per Buildup (BU-05)."""
    if side in state.early_done:
        return ()
    return rf.early_arrival_candidates(all_scenarios(), scenario_of(state), side, state.month)


def early_labels(state: State, side: Side, n: int) -> tuple[str, ...]:
    return tuple(f"month{state.month}.early.{side}.{i}" for i in range(n))


def resupply_cards(state: State, side: Side, discard: int) -> int:
    """RB 16.6: Monthly Resupply plus Extra (16.5) and Bonus (13.4) cards,
    within the hand limit after the discards (T-16)."""
    ledger = state.ledgers[side]
    if state.pregame:  # RB 18.7: the initial hand and the Extra Supply Cards bought
        n = scenario_of(state).side(side).initial_supply + ledger.extra_cards
    else:
        n = (rf.monthly_resupply(scenario_of(state), side, state.month, state.malta or None) + ledger.extra_cards
             + state.bonus.get(side, 0))
    after = Hand(count=hand_of(state, side).count - discard)
    return min(n, cd.room(after, supply_deck()))


def check_buildup(state: State, action: object, side: Side, hand: Hand, ctx) -> list[Problem]:
    pos, ledger = state.position, state.ledgers[side]
    candidates = early_candidates(state, side)
    if candidates and not isinstance(action, EarlyArrival):
        return [Problem("RB 16.41", f"first the Early Arrival check of next month's {len(candidates)} "
                                    "Reinforcements: 'early arrival'")]
    count = due_count(state, side)
    if count and not isinstance(action, (Reinforce, EarlyArrival)):
        return [Problem("RB 16.4", f"the {count} Reinforcements due now arrive first: 'reinforce'")]
    match action:
        case EarlyArrival(slots=slots):
            if not candidates:
                return [Problem("RB 16.41", "no Early Arrival check is due now (never in the first or last "
                                            "month, BU-05)")]
            want = early_labels(state, side, len(candidates))
            if tuple(slots) != want or any(not ctx.committed(lbl) for lbl in slots):
                return [Problem("RB 16.41", f"commit one hidden slot per unit due next month: {', '.join(want)}")]
            values = [ctx.value(lbl) for lbl in slots]
            if any(v is None for v in values):
                return []
            return rf.check_early_arrival_order(candidates, [v.decode("utf-8", "replace") for v in values])
        case Reinforce(tokens=tokens, early=early):
            if not count:
                return [Problem("RB 16.4", "no Reinforcements are due now")]
            probs = []
            if len(tokens) != count or len(set(tokens)) != len(tokens):
                probs.append(Problem("RB 16.4", f"{count} Reinforcements arrive now, "
                                                f"{len(tokens)} blocks were placed"))
            if tuple(early) != state.early_arrived:
                probs.append(Problem("RB 16.41", "the early arrivals are the slots that rolled 1-2: "
                                                 f"{', '.join(state.early_arrived) or 'none'}"))
            if probs:
                return probs
            due_ids = {(u.name, u.max_cv) for u in due_units(state, side)}
            early_of = dict(zip(tokens[len(tokens) - len(early):], early))
            probs, idents = _new_block_problems(state, side, tokens, ctx)
            seen = set()
            for t, ident in idents.items():
                if t in early_of:
                    slot = ctx.value(early_of[t])
                    unit = slot.decode("utf-8", "replace") if slot is not None else ""
                    if slot is not None and ident != (unit, max_cv(unit)):
                        probs.append(Problem("RB 16.41", f"the slot {early_of[t]} holds {unit}, not "
                                                         f"{ident[0]} at CV {ident[1]}"))
                elif _due_names_known(state, side) and (ident not in due_ids or ident in seen):
                    probs.append(Problem("RB 16.4", f"{ident[0]} at CV {ident[1]} is not one of the "
                                                    "Reinforcements due this month at full strength (RB 18.0)"))
                seen.add(ident)
            return probs
        case bu.Redeploy() | bu.SeaRedeploy() | bu.ReturnForRefit() | bu.BuySupply():
            return bu.check_spend(buildup_ctx(state), pos, ledger, action)
        case Rebuild(token=token, steps=steps, bp=bp):
            return _rebuild_problems(state, side, ledger, token, steps, bp, ctx)
        case BuildMinefield():
            return minefield_rules.minefield_problems(state, side, ledger, action, ctx)
        case CallMalta(tokens=tokens):
            s = scenario_of(state)
            if side != "axis" or state.pregame:
                return [Problem("RB 18.6", "only the Axis calls the Malta Group, in a Buildup")]
            probs = rf.check_malta_group(s, state.month, state.malta or None)
            units = all_scenarios().malta_group(s)
            if len(tokens) != len(units) or len(set(tokens)) != len(tokens):
                probs.append(Problem("RB 18.6", f"the Malta Group is {len(units)} blocks, not {len(tokens)}"))
            malta_ids = {(u.name, u.max_cv) for u in units}
            more, idents = _new_block_problems(state, side, tokens, ctx)
            probs += more
            probs += [Problem("RB 18.6", f"{ident[0]} at CV {ident[1]} is not a Malta Group unit at full strength")
                      for ident in idents.values() if ident not in malta_ids]
            return probs
        case EndBuildup(discard=discard, cards=refs):
            probs = []
            if discard < 0 or discard > hand.count:
                return [Problem("RB 16.6", f"{discard} dummies cannot be handed back from a hand of {hand.count}")]
            if hand.real is not None and discard > hand.count - hand.real:
                probs.append(Problem("RB 16.6", f"only dummies may be handed back: the hand holds "
                                                f"{hand.count - hand.real} dummies, not {discard}"))
            return probs + supplycards.card_checks(state, side, refs, discard, 0, "RB 16.6", ctx)
    return not_now(state, action)


def _new_block_problems(state: State, side: Side, tokens: tuple[str, ...],
                        ctx) -> tuple[list[Problem], dict[str, tuple[str, int]]]:
    """New blocks entering play (RB 16.4, 18.6): fresh tokens of ``side``, each
    identity committed as ``<token>.id0``; and the identities this replay sees."""
    probs: list[Problem] = []
    idents: dict[str, tuple[str, int]] = {}
    for t in tokens:
        if not hidden.is_token_of(t, side) or state.position.has_block(t) or t in state.versions:
            probs.append(Problem("RB 2.0", f"'{wording.unit_label(state.position, t)}' is not a new {side} block token"))
        label = hidden.identity_label(t)
        if not ctx.committed(label):
            probs.append(Problem("RB 2.0", f"the block's identity must be committed as '{label}'"))
            continue
        try:
            ident = identity_of(ctx, t)
        except ValueError as exc:
            probs.append(Problem("RB 2.0", str(exc)))
            continue
        if ident is not None:
            idents[t] = ident
    return probs, idents


def new_blocks_order(role: Side, names: list[str], ctx) -> tuple[tuple[str, ...], dict[str, bytes]]:
    """Fresh tokens for ``names`` at full strength (RB 18.0), identities to commit."""
    tokens = tuple(hidden.new_token(role, ctx.fresh()) for _ in names)
    return tokens, {hidden.identity_label(t): hidden.encode_identity(n, max_cv(n)) for t, n in zip(tokens, names)}


def enter_base(state: State, side: Side, tokens: tuple[str, ...], ctx,
                obligation: Callable[[str, str], Obligation]) -> State:
    """New blocks into Base (RB 16.4; off-board next to an engaged Base, T-20);
    ``obligation(token, base)`` for each identity this replay cannot see."""
    m = game_map()
    base = m.base(side)
    blocks, obligations = [], state.obligations
    for t in tokens:
        ident = identity_of(ctx, t)
        unit, cv = ident if ident is not None else ("", 0)
        blocks.append(Block(token=t, side=side, hex=base, unit=unit, cv=cv))
        if ident is None:
            obligations += (obligation(t, base),)
    arrival = rf.arrive(m, state.position, side, blocks)
    return msgspec.structs.replace(state, position=arrival.pos, obligations=obligations,
                                   waiting=rf.held_off_board(state.waiting, side, arrival.waiting),
                                   versions={**state.versions, **dict.fromkeys(tokens, 0)})


def _due_names_known(state: State, side: Side) -> bool:
    """Whether this replay knows which of this month's units arrived early."""
    return len(state.early_units.get(side, ())) == state.early.get(side, 0)


def max_cv(unit: str) -> int:
    try:
        return all_scenarios().roster.get(unit).max_cv
    except UnknownUnit:
        return -1


def _rebuild_problems(state: State, side: Side, ledger: bu.Ledger, token: str, steps: int, bp: int,
                      ctx) -> list[Problem]:
    """RB 16.54: Replacements; a replay that does not know the unit checks
    the public part and keeps an obligation on the identities (T-21)."""
    pos, m = state.position, game_map()
    who = wording.unit_label(pos, token)
    if not pos.has_block(token) or pos.block(token).side != side:
        return [Problem("RB 16.54", f"no {side} block {who} on the map")]
    b = pos.block(token)
    probs = []
    if steps < 1 or bp < 1:
        probs.append(Problem("RB 16.54", "at least one Replacement step, paid in BPs"))
    if b.hex != m.base(side):
        probs.append(Problem("RB 16.54", f"Replacements are received in Base only ({who} is at {m.name(b.hex)})"))
    if bp > ledger.available:
        probs.append(Problem("RB 16.5", f"{bp} BP for Replacements; {ledger.available} BP left"))
    label = hidden.identity_label(token, state.versions.get(token, 0) + 1)
    if not ctx.committed(label):
        probs.append(Problem("RB 16.54", f"the rebuilt unit's new CV must be committed as '{label}'"))
    if probs or not b.unit:
        return probs
    probs += bu.check_replace(buildup_ctx(state), pos, ledger, bu.Replace(token=token, steps=steps))
    return probs + rebuild_identity_problems(b.unit, b.cv, steps, bp, identity_of(ctx, token,
                                                                                 state.versions.get(token, 0) + 1))


def rebuild_identity_problems(unit: str, cv: int, steps: int, bp: int, new) -> list[Problem]:
    try:
        u = all_scenarios().roster.get(unit)
    except UnknownUnit:
        return [Problem("RB 2.0", f"{unit!r} is not a unit of the game")]
    probs = []
    cost = bu.replacement_cost(u, steps)
    if bp != cost:
        probs.append(Problem("RB 16.54", f"{steps} step(s) for {unit} cost {cost} BP, not {bp}"))
    grown = cv + steps * u.cv_per_step
    if grown > u.max_cv:
        probs.append(Problem("RB 16.54", f"{unit} at CV {cv} cannot take {steps} step(s): full strength is {u.max_cv}"))
    if new is not None and tuple(new) != (unit, grown):
        probs.append(Problem("RB 16.54", f"{unit} at CV {cv} + {steps} step(s) is {unit} at CV {grown}, "
                                         f"not {new[0]} at CV {new[1]}"))
    return probs


def apply_rebuild(state: State, side: Side, token: str, steps: int, bp: int, ctx) -> State:
    b = state.position.block(token)
    old_v = state.versions.get(token, 0)
    ledger = state.ledgers[side]
    entry = bu.Entry("replacement", bp, count=steps, token=token,
                     text=f"{b.unit or token} +{steps} step(s)")
    ledger = msgspec.structs.replace(ledger, entries=ledger.entries + (entry,))
    # The new version is checked against the old one when both are known, also
    # for a unit the opponent knows (its new CV is public, the commitment is not).
    obligations = state.obligations + (Obligation(
        token=token, seq=ctx.seq, kind="rebuild", rule="RB 16.54", tokens=(token,),
        labels=(hidden.identity_label(token, old_v), hidden.identity_label(token, old_v + 1)),
        needed=steps, hits=bp, what=f"{steps} Replacement step(s) for {bp} BP"),)
    if b.unit:
        u = all_scenarios().roster.get(b.unit)
        b = msgspec.structs.replace(b, cv=b.cv + steps * u.cv_per_step)
    return msgspec.structs.replace(state, position=state.position.replace_blocks([b]), obligations=obligations,
                                   versions={**state.versions, token: old_v + 1},
                                   ledgers={**state.ledgers, side: ledger})


def spending_orders(state: State, role: Side, ledger: bu.Ledger) -> list[str]:
    """The BP spending orders of the units ``role`` can name (RB 16.5):
    one Replacement step in Base (RB 16.54), a Redeployment to each hex next
    to the unit (RB 16.51; a longer route is written 'redeploy <unit> -> A ->
    B'), a Sea Redeployment to each Port it may sail to (RB 16.53) and the
    Return for Refit along the cheapest route to Base (RB 16.52), each one
    offered only where ``bu.check_spend`` accepts it."""
    m, pos, bctx = game_map(), state.position, buildup_ctx(state)
    base = m.base(role)
    ports = sorted({p.hex for p in m.places if p.is_fortress} | {base})
    orders: list[str] = []
    for b in pos.blocks_of(role):
        if not b.unit:
            continue
        u = all_scenarios().roster.get(b.unit)
        if b.hex == base and b.cv < u.max_cv and bu.replacement_cost(u, 1) <= ledger.available:
            orders.append(f"rebuild {b.unit} 1")
        for n in m.passable_neighbours(b.hex):
            if not bu.check_spend(bctx, pos, ledger, bu.Redeploy(token=b.token, path=(b.hex, n))):
                orders.append(f"redeploy {b.unit} -> {m.name(n)}")
        if bu.is_port(m, b.hex):
            orders += [f"sea {b.unit} -> {m.name(p)}" for p in ports
                       if p != b.hex and not bu.check_spend(bctx, pos, ledger, bu.SeaRedeploy(token=b.token, to=p))]
        if b.hex != base:
            try:
                path = buildup_path(state, role, b.hex, [base])
            except OrderError:
                continue
            if not bu.check_spend(bctx, pos, ledger, bu.ReturnForRefit(token=b.token, path=path)):
                orders.append(f"refit {b.unit}")
    return orders


def buildup_path(state: State, side: Side, start: str, points: list[str]) -> tuple[str, ...]:
    """The Redeployment route through ``points``: between them the cheapest
    route inside the Network fixed for the Buildup, roads preferred (RB 16.51)."""
    m, pos = game_map(), state.position
    mine, theirs = set(state.networks.get(side, ())), set(state.networks.get(enemy_of(side), ()))
    allowed = {h for h in mine - theirs
               if pos.battle(h) is None and not pos.blocks_in(h, enemy_of(side))}
    weight = {"highway": 1, "track": 2, "trail": 3}
    path = [start]
    for goal in points:
        here = path[-1]
        if goal == here:
            continue
        if goal not in allowed:
            raise OrderError(f"RB 16.51: {m.name(goal)} is not a hex a unit may Redeploy to now (outside the "
                             f"{side} Supply Network fixed for the Buildup, in the enemy one, or a battle or "
                             "enemy hex)")
        import heapq
        dist, back, heap = {here: 0}, {}, [(0, here)]
        while heap:
            d, h = heapq.heappop(heap)
            if h == goal or d > dist[h]:
                continue
            for n in m.passable_neighbours(h):
                if n not in allowed:
                    continue
                nd = d + weight.get(m.road(h, n) or "", 6)
                if nd < dist.get(n, 1 << 30):
                    dist[n], back[n] = nd, h
                    heapq.heappush(heap, (nd, n))
        if goal not in dist:
            raise OrderError(f"RB 16.51: no route from {m.name(here)} to {m.name(goal)} inside the {side} "
                             "Supply Network fixed for the Buildup")
        leg = [goal]
        while leg[-1] != here:
            leg.append(back[leg[-1]])
        path += list(reversed(leg))[1:]
    return tuple(path)


# -- the Buildup's actions applied (RB 16.4-16.6, 18.6, 18.7) ------------------------------------

def apply_buildup_action(state: State, action: object, side: Side, ctx) -> State | MonthNext:
    """A checked Buildup action (``check_buildup``) applied; the Early
    Arrival slots and 'end buildup' hand over to the sequence."""
    pos = state.position
    hand = hand_of(state, side)
    match action:
        case EarlyArrival(slots=slots):
            return MonthNext("early_arrival_announced", msgspec.structs.replace(
                state, early_slots=tuple(slots), early_done=state.early_done + (side,)))
        case Reinforce(tokens=tokens, early=early):
            early_of = dict(zip(tokens[len(tokens) - len(early):], early))

            def reinforcement(t: str, base: str) -> Obligation:
                if t in early_of:  # RB 16.41: the block is its slot's unit
                    return Obligation(token=t, seq=ctx.seq, kind="early", rule="RB 16.41",
                                      labels=(early_of[t], hidden.identity_label(t)), tokens=(t,),
                                      what=f"arrived early from slot {early_of[t]}")
                return Obligation(token=t, seq=ctx.seq, kind="arrival", hex=base, needed=state.month,
                                  rule="RB 16.4", what=f"arrived as a Reinforcement in Month {state.month}")

            state = enter_base(state, side, tokens, ctx, reinforcement)
            return msgspec.structs.replace(state, reinforced=state.reinforced + (side,), early_arrived=())
        case bu.Redeploy() | bu.SeaRedeploy() | bu.ReturnForRefit() | bu.BuySupply():
            before = state.ledgers[side]
            spent = bu.apply_spend(buildup_ctx(state), pos, before, action)
            refit = state.refitting
            if len(spent.ledger.refit) > len(before.refit):
                refit = {**refit, side: refit.get(side, ()) + spent.ledger.refit[len(before.refit):]}
            return msgspec.structs.replace(state, position=spent.pos, ledgers={**state.ledgers, side: spent.ledger},
                                           refitting=refit)
        case Rebuild(token=token, steps=steps, bp=bp):
            return apply_rebuild(state, side, token, steps, bp, ctx)
        case CallMalta(tokens=tokens):
            state = enter_base(state, side, tokens, ctx, lambda t, base: Obligation(
                token=t, seq=ctx.seq, kind="malta", hex=base, rule="RB 18.6",
                what=f"arrived with the Malta Group in Month {state.month}"))
            return msgspec.structs.replace(state, malta=state.month)
        case EndBuildup(discard=discard, cards=refs):
            n = resupply_cards(state, side, discard)
            closing = bu.close_ledger(state.ledgers[side])
            # RB 16.6: the dummies handed back are shown at once and go back into the deck.
            deck = cd.queue_show(cd.take(state.deck, side, refs, to_played=False), side, refs, "discard")
            state = msgspec.structs.replace(state, saved={**state.saved, side: closing.saved}, deck=deck,
                                            hands={**state.hands, side: cd.discard_dummies(hand, discard)})
            if state.pregame:  # RB 18.7: the initial hands are dealt after both have spent
                if side == state.player1:
                    state = msgspec.structs.replace(state, owed={**state.owed, side: n})
                else:
                    deals = [(state.player1, state.owed.get(state.player1, 0)), (side, n)]
                    state = msgspec.structs.replace(state, deck=cd.begin_round(
                        state.deck, side, cd.deck_labels(supply_deck()), deals))
            # T-18: Player 1's Resupply reshuffles the deck (RB 16.6: spent cards
            # and dummies handed back go in) and deals from it; Player 2 draws
            # from the same deck at the end of its own Buildup.
            elif side == state.player1:
                state = msgspec.structs.replace(state, deck=cd.begin_round(state.deck, side, (), [(side, n)]))
            else:
                state = msgspec.structs.replace(state, deck=cd.queue_deal(state.deck, side, n))
            return MonthNext("buildup_ended", state, side)
    raise ValueError(f"unchecked action {action!r}")


# -- the orders read (parse_order) and listed (legal_orders) ------------------------------------

#: RB 16.6: 'end buildup', handing back dummies with 'discard <n> dummies'.
END_BUILDUP = re.compile(r"^end buildup(?:\s+discard\s+(?P<n>\d+)(?:\s+dumm(?:y|ies))?)?$")

#: RB 16.5: 'buy supply [n]' (Extra Supply Cards).
BUY_SUPPLY = re.compile(r"^buy supply(?:\s+(?P<n>\d+))?$")


def parse_reinforce(state: State, role: Side, words: str, low: str, named, ctx) -> Order:
    """'reinforce' (RB 16.4, 16.41): the Reinforcements due and the Early
    Arrivals, each a new block committed."""
    names = [u.name for u in due_units(state, role)]
    names += [(ctx.value(lbl) or b"").decode("utf-8", "replace") for lbl in state.early_arrived]
    tokens, secrets = new_blocks_order(role, names, ctx)
    return Order(action=Reinforce(tokens=tokens, early=state.early_arrived), secrets=secrets)


def parse_call_malta(state: State, role: Side, words: str, low: str, named, ctx) -> Order:
    """'call malta group' (RB 18.6): the Malta Group's units as new blocks."""
    tokens, secrets = new_blocks_order(role, [u.name for u in all_scenarios().malta_group(scenario_of(state))], ctx)
    return Order(action=CallMalta(tokens=tokens), secrets=secrets)


def parse_early_arrival(state: State, role: Side, words: str, low: str, named, ctx) -> Order:
    """'early arrival [unit, ...]' (RB 16.41): the candidates in the order
    given (all, in their order, by default), each in a secret slot."""
    cands = [u.name for u in early_candidates(state, role)]
    rest = words.strip()[len("early arrival"):].strip(" :")
    order = [all_scenarios().roster.get(n.strip()).name for n in rest.split(",")] if rest else cands
    labels = early_labels(state, role, len(order))
    return Order(action=EarlyArrival(slots=labels), secrets={lbl: name.encode() for lbl, name in zip(labels, order)})


def parse_end_buildup(state: State, role: Side, words: str, low: str, named, ctx) -> Order:
    """'end buildup [discard <n> dummies]' (RB 16.6), or the dummies named (T-41)."""
    m = END_BUILDUP.match(low)
    assert m is not None  # the form was matched by the dispatcher (month_phase)
    discard = int(m.group("n") or (len(named) if named else 0))
    return Order(action=EndBuildup(discard=discard, cards=supplycards.pick_cards(state, role, 0, discard, ctx,
                                                                                "RB 16.6", named)))


def parse_buy_supply(state: State, role: Side, words: str, low: str, named, ctx) -> Order:
    """'buy supply [n]' (RB 16.5)."""
    m = BUY_SUPPLY.match(low)
    assert m is not None  # the form was matched by the dispatcher (month_phase)
    return Order(action=bu.BuySupply(cards=int(m.group("n") or 1)))


def parse_rebuild(state: State, role: Side, words: str, low: str, named, ctx) -> Order:
    """'rebuild <unit> [steps]' (RB 16.54): the new identity committed."""
    rest = words.strip().partition(" ")[2]
    m = re.match(r"^(?P<unit>.+?)(?:\s+(?P<n>\d+)(?:\s+steps?)?)?$", rest.strip())
    if not m:
        raise OrderError("RB 16.54: write 'rebuild <unit> [steps]'")
    token = deployment.own_token(state, role, m.group("unit"))
    b = state.position.block(token)
    u = all_scenarios().roster.get(b.unit)
    steps = int(m.group("n") or 1)
    label = hidden.identity_label(token, state.versions.get(token, 0) + 1)
    return Order(action=Rebuild(token=token, steps=steps, bp=bu.replacement_cost(u, steps)),
                 secrets={label: hidden.encode_identity(u.name, b.cv + steps * u.cv_per_step)})


def parse_redeploy(state: State, role: Side, words: str, low: str, named, ctx) -> Order:
    """'redeploy <unit> -> <hex> [-> ...]' (RB 16.51), 'sea <unit> -> <port>'
    (RB 16.53), 'refit <unit> [-> ...] -> <base>' (RB 16.52)."""
    verb, _, rest = words.strip().partition(" ")
    verb = verb.lower()
    unit, *points = group_moves.ARROW.split(rest.strip())
    token = deployment.own_token(state, role, unit)
    start = state.position.block(token).hex
    places = [deployment.place_name(p) for p in points if p.strip()]
    if verb == "sea":
        if len(places) != 1:
            raise OrderError("RB 16.53: write 'sea <unit> -> <port>'")
        return Order(action=bu.SeaRedeploy(token=token, to=places[0]))
    if verb == "refit":
        base = game_map().base(role)
        if not places or places[-1] != base:
            places.append(base)
        return Order(action=bu.ReturnForRefit(token=token, path=buildup_path(state, role, start, places)))
    if not places:
        raise OrderError("RB 16.51: write 'redeploy <unit> -> <hex> [-> <hex> ...]'")
    return Order(action=bu.Redeploy(token=token, path=buildup_path(state, role, start, places)))


def listed_buildup(state: State, role: Side, ctx) -> list[str]:
    """The orders listed in stage "buildup": the Early Arrival slots (RB
    16.41) and the Reinforcements (RB 16.4) first, then the end of the
    Buildup (RB 16.6), the Malta Group (RB 18.6), Extra Supply (RB 16.5),
    Minefields (RB 16.55) and the other expenditures."""
    if early_candidates(state, role):
        return ["early arrival"]
    if due_count(state, role):
        return ["reinforce"]
    hand = hand_of(state, role)
    ledger = state.ledgers[role]
    orders = ["end buildup"]
    s = scenario_of(state)
    if role == "axis" and not state.pregame and s.axis.malta_group is not None \
            and not rf.check_malta_group(s, state.month, state.malta or None):
        orders.append("call malta group")
    if hand.dummy:
        orders += [f"end buildup discard {n} dummies" for n in range(1, hand.dummy + 1)]
    if ledger.available >= bu.SUPPLY_CARD_BP:
        orders.append("buy supply 1")
    orders += minefield_rules.minefield_orders(state, role, ledger)
    return orders + spending_orders(state, role, ledger)


# -- the actions in words (format_action) ---------------------------------------------------

def format_early_arrival(action: EarlyArrival) -> str:
    """The action in words (format_action)."""
    slots = action.slots
    return f"early arrival: {len(slots)} hidden slots"


def format_reinforce(action: Reinforce) -> str:
    """The action in words (format_action)."""
    tokens = action.tokens
    early = action.early
    return f"reinforce: {len(tokens)} blocks in Base ({', '.join(tokens)})" + \
        (f", {len(early)} of them early" if early else "")


def format_rebuild(action: Rebuild) -> str:
    """The action in words (format_action)."""
    token = action.token
    steps = action.steps
    bp = action.bp
    return f"rebuild {token} {steps} step{'s' if steps > 1 else ''} ({bp} BP)"


def format_call_malta(action: CallMalta) -> str:
    """The action in words (format_action)."""
    tokens = action.tokens
    return f"call the Malta Group: {len(tokens)} blocks in Base ({', '.join(tokens)})"


def format_redeploy(action: bu.Redeploy) -> str:
    """The action in words (format_action)."""
    m = game_map()
    token = action.token
    path = action.path
    return f"redeploy {token} {m.name(path[0])} -> {m.name(path[-1])} ({bu.redeployment_cost(m, path)} BP)"


def format_sea_redeploy(action: bu.SeaRedeploy) -> str:
    """The action in words (format_action)."""
    m = game_map()
    token = action.token
    to = action.to
    return f"sea {token} -> {m.name(to)}"


def format_return_for_refit(action: bu.ReturnForRefit) -> str:
    """The action in words (format_action)."""
    m = game_map()
    token = action.token
    path = action.path
    return f"refit {token} {m.name(path[0])} -> {m.name(path[-1])}"


def format_buy_supply(action: bu.BuySupply) -> str:
    """The action in words (format_action)."""
    n = action.cards
    return f"buy supply {n} ({n * bu.SUPPLY_CARD_BP} BP)"


def format_end_buildup(action: EndBuildup) -> str:
    """The action in words (format_action)."""
    discard = action.discard
    cards = action.cards
    return "end buildup" + (f", {discard} dummies handed back" if discard else "") + \
        (f", {len(cards)} cards drawn" if cards else "")
