"""Supply Cards in hand and the shared supply deck (RB 3.42, 16.6, 18.0; T-15).

The deck work the rules wait for (``deck_task``, ``on_deck``), the cards
dealt to a hand, the checks of cards named in an action against the hand,
and the initial hand (RB 18.0). The card model is rules.ritd.cards.
"""

from __future__ import annotations

import re
from typing import cast

import msgspec

from pbem.deck import Card, Carry, DeckTask
from pbem.rulesapi import Problem
from rules.ritd import cards as cd
from rules.ritd import checked
from rules.ritd.actions import OrderError
from rules.ritd.cards import Hand
from rules.ritd.position import Side, enemy_of
from rules.ritd.state import State, hand_of, scenario_of, supply_deck


def _sources(d: cd.Deck) -> tuple[Card | Carry, ...]:
    """The current round's input deck (RB 16.6) as the engine's records, read
    once per round (its texts are one object while the round lasts; a round's
    four steps and its deals each ask)."""
    texts = d.sources.get(d.round, ())
    return checked.once("deck-sources", (texts,), lambda: tuple(_source(s) for s in texts))


def _source(text: str) -> Card | Carry:
    kind, _, rest = text.partition(":")
    if kind == "card":
        return Card(label=rest)
    rnd, pos = cd.unref(rest)
    return Carry(round=rnd, pos=pos)


#: (deck, its task) lately asked for: ``pending`` asks at every action while
#: deck work waits, and the task is a function of the (frozen) deck alone.
_TASKS: list[tuple[cd.Deck, DeckTask | None]] = []


def deck_task(state: State) -> DeckTask | None:
    """pbem hook: the deck work the rules wait for now (pbem.deck.DeckTask)."""
    d = state.deck
    for known, task in _TASKS:
        if known is d:
            return task
    task = _deck_task(d)
    _TASKS.append((d, task))
    del _TASKS[:-4]
    return task


def _deck_task(d: cd.Deck) -> DeckTask | None:
    if not d.jobs:
        return None
    job = d.jobs[0]
    if job.kind == "shuffle":
        number = d.steps + 1
        author: Side = cast(Side, job.side) if number % 2 else enemy_of(cast(Side, job.side))
        deal: tuple[int, ...] = ()
        if number >= 3:
            deal = tuple(p for side, ps in job.deal if side == enemy_of(author) for p in ps)
        return DeckTask(role=author, kind="step", round=d.round, first=job.side, sources=_sources(d), deal=deal)
    if job.kind == "deal":
        return DeckTask(role=enemy_of(cast(Side, job.side)), kind="keys", round=d.round, deal=job.deal[0][1])
    return DeckTask(role=job.side, kind="keys", open=tuple(cd.unref(r) for r in job.refs))


def _give(state: State, side: Side, positions: tuple[int, ...], ctx) -> State:
    """RB 16.6: ``positions`` of the current round dealt to ``side``; the replays
    that can see them (the holder's, the audit's) learn how many are real."""
    d = state.deck
    refs = tuple(cd.ref(d.round, p) for p in positions)
    deck = msgspec.structs.replace(d, dealt=d.dealt + positions, held={**d.held, side: d.held.get(side, ()) + refs})
    hand = hand_of(state, side)
    real = cd.real_among(ctx.card, refs)
    hand = Hand(count=hand.count + len(refs),
                real=None if hand.real is None or real is None else hand.real + real)
    return msgspec.structs.replace(state, deck=deck, hands={**state.hands, side: hand})


def on_deck(state: State, ctx) -> tuple[State, list[Problem]]:
    """pbem hook: the deck work of ``deck_task`` arrived, checked by the engine."""
    d = state.deck
    job = d.jobs[0]
    rest = d.jobs[1:]
    if job.kind == "shuffle":
        number = d.steps + 1
        state = msgspec.structs.replace(state, deck=msgspec.structs.replace(
            d, steps=number, jobs=rest if number == 4 else d.jobs))
        if number == 4:  # both deals (keys of steps 3 and 4) open once the round is complete
            for drawer in (enemy_of(cast(Side, job.side)), job.side):
                state = _give(state, cast(Side, drawer), tuple(p for side, ps in job.deal if side == drawer for p in ps), ctx)
        return state, []
    if job.kind == "deal":
        state = msgspec.structs.replace(state, deck=msgspec.structs.replace(d, jobs=rest))
        return _give(state, cast(Side, job.side), job.deal[0][1], ctx), []
    seen = cd.faces(ctx.card, job.refs)
    problems = []
    who = f"event {ctx.seq} by {job.side}"
    if None in seen:
        problems.append(Problem("RB 3.48", f"{who}: cards shown that do not open to cards of the deck"))
    real = sum(cd.label_is_real(s) for s in seen if s)
    if job.why == "discard" and real:
        problems.append(Problem("RB 16.6", f"{who}: {real} real card(s) handed back as dummies"))
    elif job.why in ("play", "initiative"):
        committed = cd.parse_real(ctx.value(job.label), len(job.refs)) if job.label else None
        if committed is not None and committed != real:
            problems.append(Problem("RB 3.48" if job.why == "play" else "RB 3.3",
                                    f"{who}: the cards played hold {real} real card(s), but {committed} "
                                    "were committed"))
    # Cards played face down go back now; dummies handed back went back when discarded.
    was_played = d.played.get(job.side, ())
    played = tuple(r for r in was_played if r not in job.refs)
    returned = d.returned + tuple(r for r in job.refs if r in was_played and r not in d.returned)
    return msgspec.structs.replace(state, deck=msgspec.structs.replace(
        d, jobs=rest, played={**d.played, job.side: played}, returned=returned)), problems


def card_checks(state: State, side: Side, refs: tuple[str, ...], count: int, real: int | None, rule: str,
                 ctx) -> list[Problem]:
    """The cards named are ``count`` of the hand; where this replay sees them
    (the owner's, the audit's), ``real`` of them are real (None: not committed)."""
    problems = cd.ref_problems(state.deck, side, refs, count, rule)
    if problems or real is None or real < 0:
        return problems
    seen = cd.real_among(ctx.card, refs)
    if seen is not None and seen != real:
        return [Problem(rule, f"the cards named hold {seen} real card(s), not the {real} committed")]
    return []


#: A card order's optional last words naming the cards (issue 27, T-41): "cards s1:3, s2:7".
NAMED = re.compile(r"^(?P<order>.*?)\s+cards?\s+(?P<refs>s\d+:\d+(?:\s*,?\s*s\d+:\d+)*)$")


def named_cards(low: str) -> tuple[str, tuple[str, ...] | None]:
    """A card order's text without its "cards s1:3, s2:7" ending, and the cards
    it names (None: none named, the engine chooses: ``pick_cards``)."""
    m = NAMED.match(low)
    if m is None:
        return low, None
    return m.group("order"), tuple(re.findall(r"s\d+:\d+", m.group("refs")))


def pick_cards(state: State, role: Side, real: int, dummies: int, ctx, rule: str,
               named: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """Which cards of ``role``'s hand are played or handed back: ``real`` real
    ones and ``dummies`` dummies, listed in the order of the hand (the one
    valid form, canonical.py). The player names them (``named``), or they
    are chosen uniformly at random among the held cards of each kind from
    the player's private stream (ComposeCtx.private_sample), never by their
    place in the hand: places are public, and a choice by place would tell
    the opponent the cards still held once these are shown (issue 27, T-41)."""
    held = state.deck.held.get(role, ())
    if named is not None:
        return _named(held, named, real, dummies, ctx, rule)
    refs = cd.pick(ctx.card, held, real, dummies,
                   lambda kind, n, k: ctx.private_sample(f"{rule} {kind} cards", n, k))
    if refs is None:
        problems = cd.play_problems(hand_of(state, role), real + dummies, real, rule)
        raise OrderError("; ".join(map(str, problems)) or f"{rule}: the hand does not hold {real} real "
                         f"card(s) and {dummies} dumm{'y' if dummies == 1 else 'ies'}")
    return refs


def _named(held: tuple[str, ...], named: tuple[str, ...], real: int, dummies: int, ctx,
           rule: str) -> tuple[str, ...]:
    """The cards the player named, checked against its hand as it sees it."""
    count = real + dummies
    problems = [f"{rule}: name {count} card(s), one each, not {len(named)}"] \
        if len(named) != count or len(set(named)) != len(named) else []
    problems += [f"{rule}: card {r} is not in your hand" for r in dict.fromkeys(named) if r not in held]
    if not problems:
        faces = cd.faces(ctx.card, named)
        seen_real = sum(cd.label_is_real(f) for f in faces if f)
        if None not in faces and seen_real != real:
            problems.append(f"{rule}: the cards named hold {seen_real} real card(s) and {count - seen_real} "
                            f"dumm{'y' if count - seen_real == 1 else 'ies'}; the order needs {real} real and "
                            f"{dummies}")
    if problems:
        raise OrderError("; ".join(problems))
    return tuple(r for r in held if r in set(named))


def explain_cards(state: State, role: Side, who: str, ctx) -> list[str]:
    """``pbem explain cards hand|axis|allied``: the Supply Cards each hand
    holds, by their places in the shared deck (public, RB 16.6 sidebar: the
    count is public), with the faces of the reader's own; and how to name
    cards in an order (T-41). ValueError for another subject."""
    sides = {"hand": (role,), "mine": (role,), "both": ("axis", "allied"), "axis": ("axis",),
             "allied": ("allied",)}.get(who)
    if sides is None:
        raise ValueError(f"'cards {who}': name hand, axis, allied or both")
    lines = []
    for side in sides:
        held = state.deck.held.get(side, ())
        if side == role:
            faces = cd.faces(ctx.card, held)
            shown = [f"{r} {'?' if f is None else 'real' if cd.label_is_real(f) else 'dummy'}"
                     for r, f in zip(held, faces, strict=True)]
            lines.append(f"your hand ({side}), {len(held)} Supply Cards in the order of the hand (RB 16.6): "
                         + (", ".join(shown) or "none"))
        else:
            lines.append(f"the {side} hand: {len(held)} Supply Cards at " + (", ".join(held) or "no place")
                         + " (faces hidden)")
    if role in sides:
        lines.append("T-41: name the cards at the end of an order that plays or hands them back "
                     "('basic + 1 dummy cards s1:3, s1:7', 'challenge cards s1:3', 'end buildup cards s1:7'); "
                     "without names pbem chooses them at random within each kind, so their places tell "
                     "the opponent nothing about the cards still held")
    return lines


def initial_cards(state: State, side: Side) -> int:
    """RB 18.0: the scenario's initial hand, within the hand limit (RB 16.6);
    with a pre-game Buildup (RB 18.7) it is drawn at the end of it, with the
    Extra Supply Cards bought there."""
    if scenario_of(state).special.pregame_buildup is not None and state.phase == "deploy":
        return 0
    return min(scenario_of(state).side(side).initial_supply, supply_deck().hand_limit)


def no_seeds(labels: tuple[str, ...], rule: str) -> list[Problem]:
    """Cards come from the shared deck (T-15): no card seeds any more."""
    return [Problem(rule, "cards are dealt from the shared deck: no card seeds")] if labels else []
