"""`pbem report`: the turn report from one side's view, as HTML for print and
as plain text; golden files (``PBEM_REGENERATE_GOLDEN=1`` rewrites them),
escaping of player-supplied notes, well-formed HTML and SVG, CLI exit codes."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem import report
from pbem.cli import cli
from pbem.errors import EXIT_CODES

GOLDEN = Path(__file__).resolve().parent / "golden"
REGENERATE = os.environ.get("PBEM_REGENERATE_GOLDEN") == "1"
SCRIPT_NOTE = 'Ha! <script>alert("x")</script> & <b>bold</b>'


def normalise(text: str, game_id: str) -> str:
    """What varies between two plays of the same game: the game id (from the
    random genesis nonce) and the random block tokens of hidden units."""
    text = text.replace(game_id[:16], "GAMEID")
    return re.sub(r"\b([AL])[0-9a-f]{8}\b", r"\1-token", text)


def assert_golden(name: str, text: str) -> None:
    """Compare with tests/golden/NAME; PBEM_REGENERATE_GOLDEN=1 rewrites it."""
    path = GOLDEN / name
    if REGENERATE or not path.exists():
        if not REGENERATE:
            pytest.fail(f"no golden file {path}: run with PBEM_REGENERATE_GOLDEN=1 to create it")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file (see the diff)"


class _Checker(HTMLParser):
    """Fails on unbalanced tags (void elements aside) and on a <script> element."""

    VOID = {"meta", "br", "hr", "img", "input", "link"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.scripts = 0
        self.svg_depth = 0

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.scripts += 1
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag == "script":
            self.scripts += 1

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()


def check_html(html: str) -> _Checker:
    checker = _Checker()
    checker.feed(html)
    checker.close()
    assert checker.stack == [], f"unclosed tags: {checker.stack}"
    assert checker.scripts == 0
    return checker


def _race_game(table):
    table.play("red", "advance 2", "pass", note="first")
    table.play("blue", "advance 1", "pass", note="line one\nline two")
    table.play("red", "advance 1", "pass", note=SCRIPT_NOTE)
    return table


def test_race_report_golden_files_and_escaping(table):
    _race_game(table)
    seat = table.blue.seat()
    built = report.build(seat.replay, "blue")
    assert built.since == 3 and [h.seq for h in built.happenings] == [4]
    html = report.render(built, "html")
    text = report.render(built, "text")
    gid = seat.replay.game_hex
    assert_golden("race-blue.html", normalise(html, gid))
    assert_golden("race-blue.txt", normalise(text, gid))
    check_html(html)
    # The race rules have neither hook: their render_text is the situation, and there is no map.
    assert "<svg" not in html and "Race to 5" in text


def test_a_note_with_markup_is_escaped_in_html_and_verbatim_in_text(table):
    table.play("red", "advance 2", "pass", note=SCRIPT_NOTE)
    built = report.build(table.blue.seat().replay, "blue")
    html, text = report.render(built, "html"), report.render(built, "text")
    assert "<script>" not in html and "<b>bold</b>" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in html
    assert SCRIPT_NOTE in text  # plain text is not markup: the note is shown as written
    check_html(html)


def test_the_game_title_is_escaped_too(tmp_path):
    from pbem import session
    from tests.conftest import make_side

    red, blue = make_side(tmp_path, "red"), make_side(tmp_path, "blue")
    session.new_game(red.gd.path, "race", "sprint", "red", red.identity, red.key_path,
                     blue.identity.public_text, orders=["setup speed 2"], title="<i>Cup</i> & \"final\"")
    html = report.render(report.build(red.seat().replay, "red"), "html")
    assert "<i>Cup</i>" not in html and "&lt;i&gt;Cup&lt;/i&gt; &amp; &#34;final&#34;" in html
    check_html(html)


def test_nothing_since_my_last_event_is_said_so(table):
    table.play("red", "advance 2", "pass")
    built = report.build(table.red.seat().replay, "red")
    assert built.happenings == () and built.my_turn is False
    assert "Nothing yet: your opponent has not answered your event 2." in report.render(built, "text")


def test_dice_are_shown_with_the_event_that_asked_for_them(table):
    table.play("red", "dash")  # blue's entropy answers at once and rolls the die
    seat = table.red.seat()
    info = seat.replay.history[-1]
    assert info.author == "blue" and info.rolls is not None
    built = report.build(seat.replay, "red")
    (h,) = built.happenings
    assert h.sentences[0] == "No orders (an entropy answer)."
    text = report.render(built, "text")
    assert f"Dice rolled for event {info.rolls.asked_seq} by red (dash): [{info.rolls.values[0]}]." in text


def test_an_unknown_format_is_refused():
    with pytest.raises(ValueError, match="unknown report format"):
        report.render(None, "pdf")  # type: ignore[arg-type]


def test_inline_svg_drops_the_xml_declaration():
    assert report.inline_svg('<?xml version="1.0"?>\n<svg/>') == "<svg/>"


CODE = {meaning.split(":")[0]: code for code, meaning in EXIT_CODES}


def test_cli_report_writes_html_and_text_and_has_exit_codes(table, tmp_path):
    table.play("red", "advance 2", "pass", note=SCRIPT_NOTE)
    runner = CliRunner()
    g = str(table.blue.gd.path)
    out = tmp_path / "r.html"
    ok = runner.invoke(cli, ["report", "-g", g, "-o", str(out)])
    assert ok.exit_code == 0, ok.output
    check_html(out.read_text(encoding="utf-8"))
    txt = runner.invoke(cli, ["report", "-g", g, "--format", "text"])
    assert txt.exit_code == 0 and "SINCE YOUR LAST ORDERS" in txt.output and SCRIPT_NOTE in txt.output
    assert runner.invoke(cli, ["report", "-g", g, "--format", "pdf"]).exit_code == 2
    missing = runner.invoke(cli, ["report", "-g", str(tmp_path / "nowhere")])
    assert missing.exit_code not in (0, 1) and "pbem:" in missing.output


def test_cli_map_needs_rules_or_a_game_and_race_has_no_map(table):
    runner = CliRunner()
    assert runner.invoke(cli, ["map"]).exit_code == 2
    assert runner.invoke(cli, ["map", "race", "-g", str(table.red.gd.path)]).exit_code == 2
    no_map = runner.invoke(cli, ["map", "-g", str(table.red.gd.path)])
    assert no_map.exit_code not in (0, 1) and "have no map" in no_map.output


def test_svg_from_render_svg_parses_as_xml_when_inlined():
    from pbem.board import HexCell, Picture, Piece, Style, render_svg

    pic = Picture(title="<t> & co", hexes=(HexCell("a", 0, 0, "x"),),
                  styles={"x": Style(fill="#fff"), "p": Style(fill="#000")},
                  pieces=(Piece("a", "p", "<3>"),))
    svg = report.inline_svg(render_svg(pic))
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg") and "&lt;3&gt;" in svg


def test_map_overlays_reach_only_rules_that_offer_them():
    """An overlay the rules do not list in ``map_overlays``, or refuse, is a
    usage problem (exit 2); a game without a map (the contract's default
    ``map_picture``) is NotFound."""
    from pbem.errors import NotFound, UsageProblem
    from pbem.rulesapi import Rules, Spec

    spec = Spec(id="toy", version="1", title="Toy", roles=("a", "b"), scenarios=("s",))

    class Plain(Rules):
        SPEC = spec

        def map_picture(self, view=None, overlays=()):
            return ("picture", view, overlays)

    assert report.map_picture(Plain(), "v") == ("picture", "v", ())
    with pytest.raises(UsageProblem, match="draw no map overlay supply .they offer: none."):
        report.map_picture(Plain(), "v", ("supply",))

    class Layered(Plain):
        @property
        def map_overlays(self):
            return ("supply", "fog")

        def map_picture(self, view=None, overlays=()):
            if "fog" in overlays:
                raise ValueError("fog needs a view")
            return ("picture", view, overlays)

    assert report.map_picture(Layered(), "v") == ("picture", "v", ())
    assert report.map_picture(Layered(), "v", ["supply"]) == ("picture", "v", ("supply",))
    with pytest.raises(UsageProblem, match="fog needs a view"):
        report.map_picture(Layered(), "v", ("fog",))
    with pytest.raises(UsageProblem, match="no map overlay roads .they offer: supply, fog."):
        report.map_picture(Layered(), "v", ("roads",))

    class Mapless(Rules):
        SPEC = spec

    with pytest.raises(NotFound, match="have no map"):
        report.map_picture(Mapless(), "v")
    assert UsageProblem.exit_code == 2


def test_a_game_s_own_report_template_replaces_the_engine_s(table):
    """Issue 18 point 4: report templates are chosen per game (the contract's
    ``report_templates``), with the engine's as the default."""
    from pbem.game import Replay
    from tests.race import rules as race

    class OwnReports(race.RaceRules):
        @property
        def report_templates(self):
            return "tests.race.templates"

    _race_game(table)
    events = table.red.gd.read_events()
    replay = Replay(OwnReports(), role="red", known=table.red.seat().vault.known_values())
    for stored in events:
        replay.apply_stored(stored)
    built = report.build(replay, "red")
    text = report.render(built, "text")
    assert text.startswith("RACE REPORT for red after event") and "Race to 5" in text
    # Its HTML has no template of its own: the engine's serves.
    assert "<!DOCTYPE html>" in report.render(built, "html")
    plain = Replay(race.RULES, role="red", known=table.red.seat().vault.known_values())
    for stored in events:
        plain.apply_stored(stored)
    assert not report.render(report.build(plain, "red"), "text").startswith("RACE REPORT")
