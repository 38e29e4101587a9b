"""The printable turn report (``pbem report``), for one player's side.

Everything about the game state comes from the rules' ``view(state, role)``
(DESIGN 4): the rules' own sections through the optional hook
``report_sections(view)`` and the map through ``map_picture(view)``. The
rest is public: the game's title and scenario, whose decision it is, and
the log's history (actions as the rules format them, dice and notes), which
both players hold alike. Nothing here knows a game.

``build`` gathers a ``Report``; ``render`` turns it into HTML (print CSS for
A4 and Letter, the map inline as SVG) or plain text (an email body) through
``templates/report.html.j2`` and ``templates/report.txt.j2``. Every string
that reaches the HTML is escaped by the template environment; notes and the
game title are player-supplied, so ``build`` escapes their control, format
and bidi characters (``pbem.text``) for both formats, the text report too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from pbem.game import EventInfo, takeback_text
from pbem.rulesapi import Combat, Happening, RulesModule
from pbem.text import escaped, shown

if TYPE_CHECKING:
    from pbem.board import Picture

Format = Literal["html", "text"]
FORMATS: tuple[str, ...] = ("html", "text")


class Said(msgspec.Struct, frozen=True):
    """One of the rules' happenings (``Rules.happenings``) ready to print:
    its sentence with the rule, and for a combat its table as (heading,
    value) rows; ``happening`` keeps the rules' own fields for a game's
    templates."""

    text: str
    rule: str
    kind: str
    rows: tuple[tuple[str, str], ...]
    happening: Happening

    @property
    def sentence(self) -> str:
        text = self.text if self.text.endswith((".", "!", "?")) else f"{self.text}."
        return f"{text} ({self.rule})" if self.rule else text


class Entry(msgspec.Struct, frozen=True):
    """One event of the log in words, from what the reader's replay knows:
    its actions (``describe_action``), the dice it rolled with their
    purposes and results, and what happened (``happenings``).
    ``heading``: the rules' turn label when this event begins a new turn
    of the summary ("" otherwise)."""

    seq: int
    author: str
    actions: tuple[str, ...]
    dice: str = ""
    dice_for: str = ""
    note: str = ""
    turn: str = ""
    heading: str = ""
    said: tuple[Said, ...] = ()
    #: How many commitments the event opened (what they were is the rules' to say).
    opens: int = 0
    #: The takeback the event granted, in words (decision 28), and the event
    #: that took this one back (-1: none).
    takeback: str = ""
    taken_back_in: int = -1

    @property
    def sentences(self) -> list[str]:
        out = [f"{a}." if not a.endswith(".") else a for a in self.actions]
        if self.takeback:
            out.append(f"{self.takeback[0].upper()}{self.takeback[1:]}.")
        if self.taken_back_in >= 0:
            out.append(f"Taken back by agreement in event {self.taken_back_in}.")
        if not out:
            out.append("No orders (an entropy answer)." if self.dice else
                       f"No orders; opens {self.opens} commitment(s)." if self.opens else "No orders.")
        if self.dice:
            out.append(f"Dice rolled for {self.dice_for}: {self.dice}.")
        return out


class Report(msgspec.Struct, frozen=True):
    rules_title: str
    game_title: str
    game_id: str
    scenario: str
    role: str
    seq: int
    pending: str
    my_turn: bool
    #: The reader's last event with orders (None: none yet); ``happenings``
    #: are the events after it, each an ``Entry``: the Player-Turn summary.
    since: int | None
    happenings: tuple[Entry, ...]
    sections: tuple[tuple[str, tuple[str, ...]], ...]
    svg: str = ""
    outcome: str = ""
    state_text: str = ""
    #: A map too large for a page at playing size: ``svg`` is its overview,
    #: these are the tiles where the reader's units stand.
    tiles: tuple[str, ...] = ()
    #: The game's own report templates (its ``report_templates``), if any.
    templates: str = ""
    #: What is under way and not yet settled (``Rules.waiting``), e.g. hits to place.
    waiting: tuple[str, ...] = ()


def combat_rows(combat: Combat) -> tuple[tuple[str, str], ...]:
    """A combat's table as (heading, value) rows, empty fields left out; a
    die reads "label value", "(unused)" when the roll did not need it and
    "?" when the reader cannot see it."""
    dice = "; ".join(f"{d.label} {'?' if d.value is None else d.value}" + ("" if d.used else " (unused)")
                     for d in combat.dice)
    rows = (("Where", combat.where), ("Attackers", ", ".join(combat.attackers)),
            ("Defenders", ", ".join(combat.defenders)), ("Modifiers", "; ".join(combat.modifiers)),
            ("Odds", combat.odds), ("Dice", dice), ("Result", combat.result), ("Losses", "; ".join(combat.losses)),
            ("Retreat", combat.retreat), ("Advance", combat.advance))
    return tuple((k, escaped(v)) for k, v in rows if v)


def said(happening: Happening) -> Said:
    """A happening ready to print (its strings escaped like every rules text)."""
    rows = combat_rows(happening.combat) if happening.combat is not None else ()
    return Said(escaped(happening.text), escaped(happening.rule), happening.kind, rows, happening)


def last_orders(history: Sequence[EventInfo], role: str) -> int | None:
    """The reader's last event with orders: where its summary starts. Its
    answers without orders (entropy for dice, the deck's automatic steps)
    are not "acting": what they rolled belongs to the opponent's turn."""
    mine = [i.seq for i in history if i.author == role and i.actions and not _automatic(i.actions)]
    return mine[-1] if mine else None


def _automatic(actions: Sequence[str]) -> bool:
    return all(a.startswith("deck: ") for a in actions)


def happenings(history: Sequence[EventInfo], role: str, rules: Any = None) -> tuple[int | None, tuple[Entry, ...]]:
    """The Player-Turn summary: the events after ``role`` last gave orders
    (all of them if it never has), in words, with a heading where the
    rules' turn label changes."""
    from pbem.session import dice_text

    since = last_orders(history, role)
    out: list[Entry] = []
    turn = None
    back = {seq: info.seq for info in history if info.takeback is not None
            for seq in range(info.takeback.first, info.takeback.last + 1)}
    for info in history:
        if since is not None and info.seq <= since:
            continue
        dice = dice_for = ""
        if info.rolls is not None:
            dice = dice_text(info.rolls.values, info.rolls.sides, rules, info.rolls.purposes, info.rolls.results)
            asked = history[info.rolls.asked_seq] if info.rolls.asked_seq < len(history) else None
            what = "; ".join(asked.actions) if asked is not None and asked.actions else ""
            dice_for = f"event {info.rolls.asked_seq} by {info.rolls.asker}" + (f" ({what})" if what else "")
        heading = escaped(info.turn) if info.turn and info.turn != turn else ""
        turn = info.turn
        # the note is the opponent's free text: every control character escaped (issue 27 point 7)
        out.append(Entry(info.seq, info.author, tuple(map(escaped, info.actions)), escaped(dice), escaped(dice_for),
                         escaped(info.note), escaped(info.turn), heading, tuple(map(said, info.happenings)),
                         len(info.reveals), escaped(takeback_text(info)), back.get(info.seq, -1)))
    return since, tuple(out)


def map_picture(rules: RulesModule, view: Any = None, overlays: Sequence[str] = ()) -> Picture:
    """The game's map with what ``view`` shows and the ``overlays`` named
    (e.g. "supply"). UsageProblem for an overlay the rules do not list in
    ``map_overlays`` or refuse (their ValueError); NotFound if the game
    draws no map."""
    from pbem.errors import NotFound, UsageProblem

    offered = rules.map_overlays
    missing = [o for o in overlays if o not in offered]
    if missing:
        known = ", ".join(offered) if offered else "none"
        raise UsageProblem(f"rules '{rules.SPEC.id}' draw no map overlay {', '.join(missing)} (they offer: {known})")
    try:
        picture = rules.map_picture(view, tuple(overlays))
    except ValueError as e:
        raise UsageProblem(str(e)) from None
    if picture is None:
        raise NotFound(f"rules '{rules.SPEC.id}' have no map")
    return picture


def build(replay: Any, role: str, *, with_map: bool = True, overlays: Sequence[str] = ()) -> Report:
    """The report of ``replay`` (a ``pbem.game.Replay`` of the signed log) for ``role``,
    its map with the ``overlays`` named (see ``map_picture``).

    The game state enters only through ``rules.view(replay.state, role)``.
    """
    from pbem.session import pending_text

    rules = replay.rules
    view = rules.view(replay.state, role)
    own = rules.report_sections(view)
    if own is not None:
        sections = tuple((title, tuple(lines)) for title, lines in own)
        state_text = ""
    else:
        sections = ()
        state_text = rules.render_text(view)
    svg = ""
    tiles: tuple[str, ...] = ()
    picture = None
    if with_map:
        picture = map_picture(rules, view, overlays) if overlays else rules.map_picture(view)
    if picture is not None:
        from pbem.board import render_pages

        first, *rest = render_pages(picture, focused=True)
        svg = inline_svg(first.svg)
        tiles = tuple(inline_svg(t.svg) for t in rest)
    decision = replay.pending()
    outcome = replay.outcome()
    since, events = happenings(replay.history, role, replay.rules)
    genesis = replay.genesis
    return Report(
        rules_title=rules.SPEC.title, game_title=shown(genesis.title), game_id=replay.game_hex[:16],
        scenario=genesis.scenario, role=role, seq=replay.seq, pending=pending_text(decision),
        my_turn=decision is not None and decision.role == role, since=since, happenings=events,
        sections=sections, svg=svg, outcome=outcome.summary if outcome is not None else "",
        state_text=state_text, tiles=tiles, templates=rules.report_templates or "",
        waiting=tuple(escaped(line) for line in rules.waiting(replay.state, role)),
    )


_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>\s*")


def inline_svg(svg: str) -> str:
    """A standalone SVG document made fit for embedding in HTML (no XML declaration)."""
    return _XML_DECL.sub("", svg, count=1)


def render(report: Report, fmt: Format = "html") -> str:
    """The report as an HTML document or as plain text. ValueError for another format."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r} (use one of {', '.join(FORMATS)})")
    from markupsafe import Markup

    from pbem.resources import template_env

    env = template_env(report.templates or None)
    if fmt == "html":
        # The SVG comes from pbem.board.render_svg, whose template escapes every string.
        return env.get_template("report.html.j2").render(
            r=report, svg=Markup(report.svg), tiles=[Markup(t) for t in report.tiles])
    return env.get_template("report.txt.j2").render(r=report)
