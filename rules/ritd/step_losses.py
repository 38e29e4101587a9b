"""Step losses placed on hidden units (RB 9.5, 2.3): Rout Attrition (RB 11.3)
and the steps lost by failed Retreat Forced Marches (RB 6.4 sidebar), checked
against the identities each replay knows.
"""

from __future__ import annotations

import msgspec

from pbem.rulesapi import Problem
from rules.ritd import hidden, routs
from rules.ritd import losses as ls
from rules.ritd.hidden import Obligation
from rules.ritd.position import Block, Position, Side
from rules.ritd.state import State, current_identity, roster_of
from rules.ritd.units import Roster, UnknownUnit
from rules.ritd.wording import UnitNamer


def attrition_problems(roster: Roster, tokens, old: dict[str, tuple[str, int]], new: dict[str, tuple[str, int]],
                        eliminated, *, name: UnitNamer = str) -> list[Problem]:
    """Did each Routed unit lose exactly one step of Rout Attrition (RB 11.3, 2.3)? (T-12)"""
    return [p for t in tokens
            for p in step_loss_problems(roster, t, old[t], new.get(t), t in eliminated, "RB 11.3", "Rout Attrition",
                                        name)]


#: What a failed Retreat Forced March costs, in the words of the problems (RB 6.4 sidebar, T-39).
MARCH_LOSS = "the step lost by its failed Retreat Forced March"


def step_loss_problems(roster: Roster, t: str, old: tuple[str, int], new: tuple[str, int] | None,
                        eliminated: bool, rule: str, what: str, name: UnitNamer = str) -> list[Problem]:
    """Did unit ``t``, ``old`` (unit, CV) before, lose exactly one step by
    ``what`` (RB 2.3: eliminated at its last step)? ``new``: its new identity,
    None where this replay cannot see it (only the elimination is checked).
    ``name``: how a block not named by its identity is named (the token as
    it is by default)."""
    unit, cv = old
    try:
        u = roster.get(unit)
    except UnknownUnit:
        return [Problem("RB 2.0", f"block {name(t)} is {unit!r}, not a unit of the game")]
    after = cv - u.cv_per_step
    if eliminated:
        if after >= u.min_cv:
            return [Problem(rule, f"{unit} ({t}) at CV {cv} survives {what} at CV {after}, but was eliminated")]
        return []
    if after < u.min_cv:
        return [Problem(rule, f"{unit} ({t}) at CV {cv} is eliminated by {what} (RB 2.3)")]
    if new is not None and new != (unit, after):
        return [Problem(rule, f"{unit} ({t}) at CV {cv} must be {unit} at CV {after} after {what}, "
                              f"not {new[0]} at CV {new[1]}")]
    return []


def loss_problems(state: State, side: Side, hex_: str, refusers: tuple[str, ...],
                   old: dict[str, tuple[str, int]], new: dict[str, tuple[str, int]], eliminated: tuple[str, ...],
                   hits: int, name: UnitNamer = str) -> list[Problem]:
    """Is the placement that the old and new identity versions imply a legal
    one of ``hits`` Pursuit hits (RB 10.5, 9.5, 2.3)? A lost step took
    ``hits_per_step`` hits (CB-15). (T-10) ``name``: how a block not named by
    its identity is named (the token as it is by default)."""
    roster = roster_of(state)
    probs: list[Problem] = []
    losses = []
    blocks = []
    for t in refusers:
        unit, cv = old[t]
        try:
            u = roster.get(unit)
        except UnknownUnit:
            probs.append(Problem("RB 2.0", f"block {name(t)} is {unit!r}, not a unit of the game"))
            continue
        blocks.append(Block(token=t, side=side, hex=hex_, unit=unit, cv=cv))
        if t in eliminated:
            losses.append(ls.Loss(t, hits=((cv - u.min_cv) // u.cv_per_step + 1) * u.hits_per_step))
            continue
        nunit, ncv = new[t]
        if nunit != unit:
            probs.append(Problem("RB 2.0", f"block {name(t)} was {unit} and is now committed as {nunit}"))
            continue
        if ncv > cv or (cv - ncv) % u.cv_per_step or ncv < u.min_cv:
            probs.append(Problem("RB 2.3", f"{unit} ({t}) cannot go from CV {cv} to CV {ncv} by losing steps"))
            continue
        if ncv < cv:
            losses.append(ls.Loss(t, hits=(cv - ncv) // u.cv_per_step * u.hits_per_step))
    if probs:
        return probs
    pos = Position(blocks=tuple(blocks))
    return routs.check_pursuit_losses(pos, refusers, hits, ls.LossAllocation(hex_, tuple(losses)),
                                      units=roster.get, name=name)


def apply_secret_step_losses(state: State, tokens: tuple[str, ...], eliminated: tuple[str, ...],
                             recommit: tuple[str, ...], ctx, *, kind: str, rule: str, what: str,
                             hex_: str | None = None) -> State:
    """One step lost in secret by each of ``tokens`` (Rout Attrition RB 11.3,
    T-12; a failed Retreat Forced March RB 6.4 sidebar, T-39; RB 2.3): the
    ``eliminated`` leave the map, the ``recommit`` get their new identity
    version. A unit this replay knows loses its step in the open (its new CV
    is deduced from its face); what this replay cannot check at once (the old
    or the new identity unreadable) becomes an obligation of ``kind`` on the
    labels to open, citing ``rule`` and ``what``. ``hex_``: the hex the
    obligation names (default: each unit's). The one implementation for both
    (issue 19)."""
    pos, roster = state.position, roster_of(state)
    versions = {**state.versions, **{t: state.versions.get(t, 0) + 1 for t in recommit}}
    obligations = list(state.obligations)
    changed = []
    for t in tokens:
        b = pos.block(t)
        old_label = hidden.identity_label(t, state.versions.get(t, 0))
        new_label = hidden.identity_label(t, versions[t]) if t in recommit else ""
        value = ctx.value(new_label) if new_label else None
        if value is not None:
            unit, cv = hidden.decode_identity(value)
            changed.append(msgspec.structs.replace(b, unit=unit, cv=cv))
        elif b.unit and t in recommit:  # a unit this replay knows: one step off its public CV
            try:
                step = roster.get(b.unit).cv_per_step
            except UnknownUnit:
                step = 0
            changed.append(msgspec.structs.replace(b, cv=b.cv - step))
        old = current_identity(state, t, ctx)
        if old is not None and (value is not None or t in eliminated):
            continue  # checked at once
        labels = (() if old is not None else (old_label,)) + ((new_label,) if new_label else ())
        obligations.append(Obligation(token=t, seq=ctx.seq, kind=kind, rule=rule, what=what,
                                      hex=b.hex if hex_ is None else hex_, tokens=(t,), labels=labels,
                                      unit=old[0] if old else "", cv=old[1] if old else 0,
                                      eliminated=(t,) if t in eliminated else ()))
    pos = ls.eliminate(pos.replace_blocks(changed), eliminated)
    return msgspec.structs.replace(state, position=pos, versions=versions, obligations=tuple(obligations))
