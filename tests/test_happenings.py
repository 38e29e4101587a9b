"""Reports that say what happened (issue 26 point 7, issue 21 point 3):
the rules' typed happenings (``Rules.happenings``: combats as tables,
losses, eliminations, reveals, each with its rule) recorded by each
reader's replay, printed by ``pbem report`` (text and HTML) and ``pbem
log``, in a Player-Turn summary that covers everything since the reader
last gave orders. Played with the Hilltop toy (tests/hilltop.py): the
defender's reserve is hidden until the dice answer opens it, so what the
attacker reads must not name it before then."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner

from pbem import report, rulesapi
from pbem.cli import cli
from pbem.game import EventInfo, Replay, Roll
from pbem.rulesapi import Combat, Die, Happening, Step
from pbem.table import THROWAWAY_PASSPHRASE, LocalTable, Turn
from tests import hilltop
from tests.test_contract_games import _known, happenings_by_reader
from tests.test_report import check_html

#: A hex run as long as a commitment token or longer (RitD's "Ae2d7fee8"
#: tokens are 8 hex digits after a letter; hashes are 64).
HEXRUN = re.compile(r"(?<![0-9A-Za-z])[A-Za-z]?[0-9a-f]{8,}(?![0-9A-Za-z])")


@pytest.fixture(autouse=True)
def _registered():
    rulesapi.register(hilltop.RULES)
    yield
    rulesapi.unregister("hilltop")


def scripted(**orders: list[list[str]]):
    """A policy giving each role its orders in turn; None (stop) when a role has none left."""
    queues = {role: list(batches) for role, batches in orders.items()}

    def policy(turn: Turn) -> list[str] | None:
        queue = queues.get(turn.role)
        return queue.pop(0) if queue else None

    return policy


def round_one(tmp_path: Path) -> LocalTable:
    """The defender digs in with a reserve of 2 (defence 2 + 2 + 1 for the
    hill: no die can eliminate the garrison, HT 4.2), the attacker assaults
    with all 4 companies, the defender's automatic answer rolls the dice and
    opens the reserve, and it digs in with 1 for round 2; the table stops
    at the attacker's second assault."""
    table = LocalTable.create(tmp_path, "hilltop", "hill")
    result = table.play(scripted(defender=[["dig in 2"], ["dig in 1"]], attacker=[["assault 4"]]), 20)
    assert result.stopped == "script" and result.outcome is None
    return table


def _env() -> dict[str, str]:
    return {"PBEM_PASSPHRASE": THROWAWAY_PASSPHRASE}


def test_each_reader_is_told_only_what_it_may_know(tmp_path: Path) -> None:
    table = round_one(tmp_path)
    said = {p.role: [[h.text for h in i.happenings] for i in p.seat.replay.history] for p in table.players}
    # HT 2.1: the defender reads its own reserve; the attacker learns it only from the opening.
    assert said["defender"][0] == ["The defender digs in on Hill 12 with a reserve of 2."]
    assert said["attacker"][0] == ["The defender digs in on Hill 12 with a hidden reserve."]
    answer = table.player("attacker").seat.replay.history[2]
    assert answer.author == "defender" and answer.rolls is not None and answer.actions
    texts = [h.text for h in answer.happenings]
    assert texts[0] == "The defender's reserve on Hill 12 is revealed: 2."
    assert texts[-1] == "The defender digs in on Hill 12 with a hidden reserve."  # round 2's, hidden again
    (combat,) = [h for h in answer.happenings if h.combat is not None]
    c = combat.combat
    assert combat.rule == "HT 4.2" and combat.kind == "combat"
    assert c.attackers == ("A1", "A2", "A3", "A4") and c.defenders == ("garrison 2", "reserve 2")
    assert c.odds == "4 - 5 = -1" and c.modifiers == ("+1 defender on a hill (HT 4.1)",)
    attack, morale = answer.rolls.values
    assert c.dice == (Die("attack die", attack), Die("morale die (on a tie)", morale, used=c.dice[1].used))
    # HT 4.2/4.3: with a differential of -1, the score is die - 1; a 4 is a tie settled by the morale die.
    score = attack - 1
    code = "AL" if score < 4 else ("DR" if score >= 5 or morale >= 4 else "EX")
    assert c.result.startswith(f"{code}: ") and f"score {score}" in c.result
    assert c.dice[1].used is (score == 4)
    # The turn labels: round 1 until the attacker's second assault.
    assert [i.turn for i in table.replay.history] == ["Round 1", "Round 1", "Round 1"]


def test_the_leak_check_catches_a_happening_that_reads_the_state(tmp_path: Path) -> None:
    """The contract suite's check fails a game whose happenings read a
    hidden value from the state instead of the reader's view."""

    class Leaky(hilltop.Hilltop):
        def happenings(self, before: Any, after: Any, step: Step, role: str | None) -> tuple[Happening, ...]:
            if step.kind == "action" and isinstance(step.action, hilltop.DigIn) and after.reserve is not None:
                return (Happening(f"The defender digs in with a reserve of {after.reserve}.", "HT 2.1"),)
            return ()

    table = round_one(tmp_path)
    events = table.players[0].gd.read_events()
    honest = happenings_by_reader(hilltop.RULES, events, _known(table))
    assert all(own == audit for _, own, audit in honest)
    leaky = {reader: (own, audit) for reader, own, audit in happenings_by_reader(Leaky(), events, _known(table))}
    assert leaky["defender"][0] == leaky["defender"][1]  # the defender knows its reserve
    for reader in ("attacker", None):
        own, audit = leaky[reader]
        assert own != audit, reader  # the audit's fold would tell the attacker and the public the reserve


def test_the_text_report_is_a_player_turn_summary_without_tokens(tmp_path: Path) -> None:
    table = round_one(tmp_path)
    g = str(table.player("attacker").gd.path)
    out = CliRunner(env=_env()).invoke(cli, ["report", "-g", g, "--format", "text"])
    assert out.exit_code == 0, out.output
    text = out.output
    summary = text.split("SINCE YOUR LAST ORDERS (event 1)\n", 1)[1].split("\nSITUATION", 1)[0]
    assert summary.startswith("== Round 1 ==\nEvent 2, defender:\n")
    assert "  - the defender digs in on Hill 12." in summary
    assert "Dice rolled for event 1 by attacker (4 companies (A1, A2, A3, A4) assault Hill 12): " \
           "attack die, assault on Hill 12 (HT 4.1): " in summary
    assert "  * The defender's reserve on Hill 12 is revealed: 2. (HT 2.1)" in summary
    assert re.search(r"  \* Assault on Hill 12: [a-z ,:]+\. \(HT 4\.2\)\n      Where      Hill 12\n"
                     r"      Attackers  A1, A2, A3, A4\n      Defenders  garrison 2, reserve 2\n"
                     r"      Modifiers  \+1 defender on a hill \(HT 4\.1\)\n      Odds       4 - 5 = -1\n"
                     r"      Dice       attack die \d; morale die \(on a tie\) \d( \(unused\))?\n"
                     r"      Result     (AL|DR|EX): ", summary), summary
    assert "  * The defender digs in on Hill 12 with a hidden reserve. (HT 2.1)" in summary
    # Never a token or a hash in what a person reads: only the game id, once, as its name.
    game_id = table.replay.game_hex[:16]
    assert [m.group(0) for m in HEXRUN.finditer(text)] == [game_id]
    # The defender gave orders last (its answer dug in for round 2): nothing since, its reserve in its view.
    mine = CliRunner(env=_env()).invoke(cli, ["report", "-g", str(table.player("defender").gd.path),
                                              "--format", "text"])
    assert "Nothing yet: your opponent has not answered your event 2." in mine.output
    assert re.search(r"garrison [12], reserve 1; attackers", mine.output), mine.output


def test_the_html_report_has_combat_tables_and_no_tokens(tmp_path: Path) -> None:
    table = round_one(tmp_path)
    out = tmp_path / "attacker.html"
    res = CliRunner(env=_env()).invoke(cli, ["report", "-g", str(table.player("attacker").gd.path), "-o", str(out)])
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    check_html(html)
    assert '<h3 class="turn">Round 1</h3>' in html
    assert re.search(r'<table class="combat">\n<caption>Assault on Hill 12: [a-z ,:]+\. \(HT 4\.2\)</caption>\n'
                     r'<tr><th scope="row">Where</th><td>Hill 12</td></tr>\n'
                     r'<tr><th scope="row">Attackers</th><td>A1, A2, A3, A4</td></tr>', html), html
    assert '<p class="said reveal">The defender&#39;s reserve on Hill 12 is revealed: 2. (HT 2.1)</p>' in html
    assert "@media print" in html
    body = html.split("<body>", 1)[1]
    assert [m.group(0) for m in HEXRUN.finditer(body)] == [table.replay.game_hex[:16]]


def test_pbem_log_prints_the_public_happenings_and_json_keeps_them(tmp_path: Path) -> None:
    table = round_one(tmp_path)
    g = str(table.player("attacker").gd.path)
    out = CliRunner().invoke(cli, ["log", "-g", g])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0] == "== Round 1 =="
    assert "* The defender digs in on Hill 12 with a hidden reserve. (HT 2.1)" in lines[2]
    assert any(re.fullmatch(r" +\* Assault on Hill 12: [a-z ,:]+\. \(HT 4\.2\)", line) for line in lines), lines
    assert any(re.fullmatch(r" +Defenders +garrison 2, reserve 2", line) for line in lines)
    # the public never reads the reserve of round 2, not yet opened
    assert "reserve of 1" not in out.output and "reserve 1" not in out.output
    assert not HEXRUN.search(out.output)
    data = msgspec.json.decode(CliRunner().invoke(cli, ["log", "-g", g, "--json"]).output)
    combat = next(h for item in data for h in item["happenings"] if "combat" in h)
    assert combat["rule"] == "HT 4.2" and combat["combat"]["where"] == "Hill 12"
    assert data[0]["turn"] == "Round 1" and len(data[0]["hash"]) == 64  # the hash stays in --json


def _info(seq: int, author: str, actions: tuple[str, ...] = (), rolls: Roll | None = None,
          turn: str = "", happenings: tuple[Happening, ...] = ()) -> EventInfo:
    return EventInfo(seq, author, bytes(32), actions, 0, (), "", rolls, turn, happenings)


def test_the_summary_starts_after_the_reader_last_gave_orders() -> None:
    """Issue 21 point 3: an automatic answer (entropy for dice, the deck's
    steps) is not the reader acting; the opponent's whole Player-Turn
    around it is summarised, with a heading per turn label."""
    roll = Roll(2, 3, "red", (6,), (5,), ("attack die",), ("hit",))
    history = [
        _info(0, "red", ("set up",), turn="Set-up"),
        _info(1, "blue", ("move 1",), turn="Turn 1 (red)"),
        _info(2, "red", ("attack",), turn="Turn 1 (red)"),
        _info(3, "blue", (), roll, turn="Turn 1 (red)",
              happenings=(Happening("Blue's company is eliminated", "X 5", "elimination"),)),
        _info(4, "red", ("advance",), turn="Turn 1 (red)"),
        _info(5, "blue", ("deck: shuffle step 1 of round 1",), turn="Turn 2 (blue)"),
        _info(6, "red", ("fire",), turn="Turn 2 (blue)"),
    ]
    since, entries = report.happenings(history, "blue")
    assert since == 1 and [e.seq for e in entries] == [2, 3, 4, 5, 6]
    assert [e.heading for e in entries] == ["Turn 1 (red)", "", "", "Turn 2 (blue)", ""]
    assert entries[1].sentences == ["No orders (an entropy answer).",
                                    "Dice rolled for event 2 by red (attack): attack die: 5 -> hit."]
    assert [s.sentence for s in entries[1].said] == ["Blue's company is eliminated. (X 5)"]
    assert report.happenings(history, "red")[0] == 6
    assert report.happenings(history[:2], "red")[0] == 0
    never, everything = report.happenings(history[:4], "green")
    assert never is None and [e.seq for e in everything] == [0, 1, 2, 3]


def test_combat_rows_leave_out_empty_fields_and_mark_dice() -> None:
    c = Combat("1509", attackers=("21 Pz",), dice=(Die("attack", 4), Die("morale", None), Die("spare", 2, used=False)),
               result="DR")
    assert report.combat_rows(c) == (("Where", "1509"), ("Attackers", "21 Pz"),
                                     ("Dice", "attack 4; morale ?; spare 2 (unused)"), ("Result", "DR"))
    s = report.said(Happening("Attack on 1509\x1b[2J", "RB 8.3", "combat", c))
    assert s.sentence == "Attack on 1509\\x1b[2J. (RB 8.3)"  # rules text is escaped like actions


def test_a_game_s_own_happenings_template_replaces_the_engine_s(tmp_path: Path) -> None:
    """Per-game templates win over the engine's (``report_templates``), down
    to the summary's partial; the rest stays the engine's."""
    table = round_one(tmp_path)
    seat = table.player("attacker").seat
    built = report.build(seat.replay, "attacker")
    own = msgspec.structs.replace(built, templates="tests.hilltop_templates")
    text = report.render(own, "text")
    assert "SKIRMISH SAYS: Assault on Hill 12" in text and "SINCE YOUR LAST ORDERS" in text
    assert "Where      Hill 12" not in text
    assert "Where      Hill 12" in report.render(built, "text")


def test_a_game_s_own_style_sheet_replaces_the_engine_s(tmp_path: Path) -> None:
    table = round_one(tmp_path)
    built = report.build(table.player("attacker").seat.replay, "attacker")
    own = report.render(msgspec.structs.replace(built, templates="tests.hilltop_templates"), "html")
    assert "Hilltop's own style sheet" in own and "@media print" not in own
    assert '<table class="combat">' in own  # its summary partial for HTML is the engine's
    check_html(own)


def test_the_replay_cache_keeps_the_happenings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay cache (pbem.snapshot) stores each reader's happenings and
    turn labels: a restored replay reports what a full replay reports."""
    from pbem import session, snapshot
    from pbem.game import Replay

    table = round_one(tmp_path)
    player = table.player("attacker")
    seat = player.seat
    assert seat is not None and any(i.happenings for i in seat.replay.history)
    applied: list[int] = []
    real = Replay.apply_stored

    def counted(self: Replay, stored: bytes, **kw: Any) -> EventInfo:
        applied.append(1)
        return real(self, stored, **kw)

    with player.gd.lock(exclusive=True):
        snapshot.save(player.gd, seat.replay, seat.identity)
        monkeypatch.setattr(Replay, "apply_stored", counted)
        restored = session.load_seat(player.gd, seat.identity)
    assert applied == []  # nothing replayed: the history is the cache's
    assert restored.replay.history == seat.replay.history
    assert report.render(report.build(restored.replay, "attacker"), "text") == \
        report.render(report.build(seat.replay, "attacker"), "text")


def test_a_draft_s_happenings_are_those_of_its_own_actions(tmp_path: Path) -> None:
    """A composed event (``Replay.open_event``) grows one action at a time
    from the same base; what each draft says happened is its own, never a
    sibling's (each OpenEvent holds its own list)."""
    from pbem import codec, session

    class Loud(hilltop.Hilltop):
        def happenings(self, before: Any, after: Any, step: Step, role: str | None) -> tuple[Happening, ...]:
            if step.kind == "action" and isinstance(step.action, hilltop.Assault):
                return (Happening(f"{step.action.companies} companies go in.", "HT 3.1"),)
            return super().happenings(before, after, step, role)

    table = round_one(tmp_path)
    attacker = table.player("attacker")
    assert attacker.seat is not None
    replay = Replay(Loud(), role="attacker", known=attacker.seat.vault.known_values())
    for stored in attacker.gd.read_events():
        replay.apply_stored(stored)
    body = session._body(replay, "attacker", attacker.seat.vault, [], x_next=bytes(32))
    opened = replay.open_event(body)
    drafts = {n: opened.add(codec.raw(hilltop.Assault(n))) for n in (1, 2, 3)}
    for n, draft in drafts.items():
        (last,) = draft.close().history[-1:]
        assert [h.text for h in last.happenings] == [f"{n} companies go in."], n
