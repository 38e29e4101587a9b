"""Text from files and emails is escaped and bounded wherever a person sees it
(issue 27 point 7): terminal output, error lines, reports (text and HTML) and
the email body. An event whose author is an OSC escape sequence is never
echoed raw, before or after the signature check; a 100 KB name gives an
error line of bounded length (PLAN: at most 300 characters of input text)."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from pbem import session
from pbem.cli import cli
from pbem.store import GameDir
from pbem.text import LIMIT, escaped, shown
from tests.conftest import Table, make_side
from tests.test_foreign_game import tree_hash

EVIL = "\x1b]0;PWNED\x07"
#: Anything a terminal or a bidi-aware viewer would act on: C0 (but the line
#: breaks of multi-line output), DEL, C1, bidi embeddings, overrides and isolates.
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def test_shown_escapes_every_control_and_bidi_character_and_cuts_long_text():
    assert shown(EVIL + "red") == "\\x1b]0;PWNED\\x07red"
    assert shown("a\u202eb\u2066c\x85d\ne\u2028f") == "a\\u202eb\\u2066c\\x85d\\x0ae\\u2028f"
    assert shown("Gazala, 1942 — Rommel’s “Theseus” ✓") == "Gazala, 1942 — Rommel’s “Theseus” ✓"
    cut = shown("x" * 100_000)
    assert cut.startswith("x" * LIMIT) and cut.endswith(f"... [{100_000 - LIMIT} more characters]")
    assert len(cut) < LIMIT + 40
    assert not RAW_CONTROL.search(shown("".join(map(chr, range(0x2070)))))
    assert escaped("plain text") == "plain text"


def _forged_author_event(t: Table, author: str) -> bytes:
    """Red's next event of this game with ``author`` in place of 'red', signed with red's key."""
    seat = t.red.seat()
    orders = session.parse_orders(seat.rules, seat.replay, "red", seat.vault, [], ["advance 1", "pass"])
    body = session._body(seat.replay, "red", session._with_secrets(seat.vault, orders), orders, x_next=bytes(32))
    body = msgspec.structs.replace(body, author=author)
    return session._sign(seat.identity, body)


def _receive(t: Table, events: list[bytes], tmp: Path):
    path = tmp / "turn.pbem"
    path.write_bytes(b"pbem-turn v1\n---\n" + b"\n".join(events) + b"\n")
    before = tree_hash(t.blue.gd.path)
    result = CliRunner().invoke(cli, ["receive", "-g", str(t.blue.gd.path), str(path)])
    assert tree_hash(t.blue.gd.path) == before
    return result


def test_an_author_with_a_terminal_escape_is_never_echoed_raw(table, tmp_path):
    """Before the signature is checked, the author is only a claim: the refusal
    names it, escaped."""
    result = _receive(table, [_forged_author_event(table, EVIL + "red")], tmp_path)
    assert result.exit_code == 4, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "author '\\x1b]0;PWNED\\x07red' is not a player" in result.output


def test_a_100_kb_author_gives_one_bounded_error_line(table, tmp_path):
    result = _receive(table, [_forged_author_event(table, EVIL + "r" * 100_000)], tmp_path)
    assert result.exit_code == 4
    assert result.output.count("\n") == 1 and len(result.output) < LIMIT + 300, len(result.output)
    assert "more characters]" in result.output and not RAW_CONTROL.search(result.output)


def test_a_100_kb_field_name_in_the_wrapper_gives_one_bounded_error_line(table, tmp_path):
    """msgspec names an unknown field in its message: that name is input too."""
    seat = table.red.seat()
    orders = session.parse_orders(seat.rules, seat.replay, "red", seat.vault, [], ["advance 1", "pass"])
    good = session._sign(seat.identity, session._body(seat.replay, "red", seat.vault, orders, x_next=bytes(32)))
    bad = good[:-1] + b',"\\u001b]0;PWNED\\u0007' + b"x" * 100_000 + b'":1}'
    result = _receive(table, [bad], tmp_path)
    assert result.exit_code == 3, result.output
    assert result.output.count("\n") == 1 and len(result.output) < LIMIT + 300, len(result.output)
    assert "\x1b" not in result.output and "\\x1b]0;PWNED\\x07" in result.output


def test_an_attachment_name_with_escapes_is_shown_escaped(table, tmp_path):
    path = tmp_path / f"turn{EVIL}.pbem"
    path.write_bytes(b"pbem-turn v1\n---\n")
    result = CliRunner().invoke(cli, ["receive", "-g", str(table.blue.gd.path), str(path)])
    assert result.exit_code == 3 and "\x1b" not in result.output and "turn\\x1b]0;PWNED" in result.output


NOTE = f"gg {EVIL}\x9b31m\u202eevil\u2066 and\r\nan injected line"
TITLE = f"Crusader {EVIL}\u202e1941"


@pytest.fixture
def titled(tmp_path) -> Table:
    """A race game whose host chose a hostile title; red then sends a hostile note."""
    red, blue = make_side(tmp_path, "red"), make_side(tmp_path, "blue")
    sent = session.new_game(red.gd.path, "race", "sprint", "red", red.identity, red.key_path,
                            blue.identity.public_text, orders=["setup speed 2"], title=TITLE)
    joined, _ = session.join_game(blue.gd.path, Path(sent.turn_file).read_bytes(), blue.identity, blue.key_path,
                                  orders=["setup speed 3"])
    session.receive(red.seat(), [("join", Path(joined.turn_file).read_bytes())])
    t = Table(red, blue, tmp_path)
    t.play("red", "advance 1", "pass", note=NOTE)
    return t


def _without_line_breaks(text: str) -> str:
    return text.replace("\r\n", "").replace("\n", "")


def test_a_signed_note_and_title_never_reach_a_person_raw(titled, tmp_path):
    """After the signature checks: the note and the title are signed by a player,
    but still player-supplied. The log, both reports and the email body show
    them escaped."""
    g = str(titled.blue.gd.path)
    runner = CliRunner()
    outputs = {
        "log": runner.invoke(cli, ["log", "-g", g]).output,
        "report text": runner.invoke(cli, ["report", "--format", "text", "-g", g]).output,
        "report html": runner.invoke(cli, ["report", "-g", g]).output,
        "show": runner.invoke(cli, ["show", "-g", g]).output,
    }
    seat = titled.blue.seat()
    sent = session.Sent(turn_file=titled.red.gd.outbox_dir / sorted(p.name for p in titled.red.gd.outbox_dir.iterdir())[-1],
                        seqs=[2])
    outputs["email"] = session.email_for(titled.red.gd, sent, sender="r@example.org",
                                         recipient="b@example.org").decode("utf-8", "replace")
    outputs["summary"] = session.turn_summary(seat.replay, [2])
    for where, text in outputs.items():
        assert not RAW_CONTROL.search(_without_line_breaks(text)), (where, RAW_CONTROL.search(text))
        assert "injected line" not in text.split("\n")[0] or where == "email"
    assert "\\x1b]0;PWNED\\x07" in outputs["report text"] and "\\u202eevil" in outputs["report text"]
    assert "\\x0d\\x0aan injected line" in outputs["report text"]
    assert "\\x1b]0;PWNED" in outputs["summary"] and "Crusader \\x1b]0;PWNED" in outputs["summary"]
    for line in outputs["report text"].splitlines():
        assert not line.lstrip().startswith("an injected line")


def test_a_hostile_title_does_not_stop_the_invitees_email(titled):
    """The title goes into the Subject: a raw line break there would make the
    joiner's 'pbem send --eml' fail (or inject a header)."""
    blue = titled.blue.seat()
    session.add_orders(blue, ["advance 1", "pass"])
    sent = session.send(blue)
    message = session.email_for(titled.blue.gd, sent, sender="b@example.org", recipient="r@example.org")
    head = message.split(b"\n\n", 1)[0].decode()
    assert "\x1b" not in head and "PWNED" in head


def test_the_game_directory_on_disk_is_not_used_to_echo_input(tmp_path):
    """A game directory name is the user's own, but a damaged local.json is input."""
    gd = GameDir(tmp_path / "g")
    (gd.path / "events").mkdir(parents=True)
    (gd.path / "events" / "000000.json").write_bytes(b"{}")
    (gd.path / "local.json").write_bytes(b'{"role":"\x1b]0;PWNED\x07"}')
    result = CliRunner().invoke(cli, ["show", "-g", str(gd.path)])
    assert result.exit_code != 0 and "\x1b" not in result.output
