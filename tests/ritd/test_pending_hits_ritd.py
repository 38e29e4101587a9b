"""Hits scored and not yet placed are shown (issue 21 point 3: pending
half-hits on 'pbem show', the report and the map; rules/ritd/pending_hits.py)."""

from __future__ import annotations

import msgspec
import pytest
from click.testing import CliRunner

from pbem import session
from pbem.cli import cli
from pbem.report import build, render
from rules.ritd import RULES as RITD
from rules.ritd import losses as ls
from tests.conftest import PASSPHRASE
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")

REGROUP = ["supply check", "basic", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento", "end movement"]


@pytest.fixture
def fired(tmp_path, monkeypatch):
    """The Demo's battle in Sollum, every die a 6: the Allies' Defensive Fire has
    scored four hits on the Axis infantry, which the Axis has yet to place."""
    monkeypatch.setattr("pbem.game.roll", lambda *args: (6,) * len(args[-1]))
    monkeypatch.setenv("PBEM_PASSPHRASE", PASSPHRASE)
    table = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    table.play("axis", *REGROUP)
    table.play("allied", "accept-battle Sollum", "reveal units")
    table.play("axis", "reveal units")
    table.play("axis", "battles Sollum")
    table.play("allied", "fire Sollum: 7/7 Tk at infantry")
    return table, tmp_path


def test_show_says_which_hits_wait_to_be_placed_and_by_whom(fired):
    table, tmp = fired
    out = CliRunner().invoke(cli, ["show", "-g", str(table.axis.gd.path), "-i", str(tmp / "axis.key")])
    assert out.exit_code == 0, out.output
    line = next(x for x in out.output.splitlines() if x.startswith("waiting: "))
    assert "allied fire in Sollum scored on axis units: infantry 4 hits; you place them (RB 9.5)" in line
    assert "two hits (RB 2.4)" in line and "wasted" in line


def test_half_hits_are_named_with_the_minefield_rule(fired):
    table, _ = fired
    probe, _ = session.draft_replay(table.axis.seat())
    state = probe.state
    result = msgspec.structs.replace(state.turn.fire_result, hits={"infantry": ls.ClassHits(hits=1, half_hits=3)})
    state = msgspec.structs.replace(state, turn=msgspec.structs.replace(state.turn, fire_result=result))
    (line,) = RITD.waiting(state, "allied")
    assert "infantry 1 hit and 3 half-hits; the axis player places them" in line
    assert "two half-hits make a hit (Minefield, RB 9.52)" in line


def test_nothing_waits_outside_a_loss_step_and_the_report_and_map_show_it(fired):
    table, tmp = fired
    allied = table.allied.seat()
    assert RITD.waiting(allied.replay.state, "allied") == []  # the dice are not rolled in its log yet
    axis = table.axis.seat()
    probe, _ = session.draft_replay(axis)
    report = build(probe, "axis", with_map=False)
    assert report.waiting and "infantry 4 hits" in report.waiting[0]
    assert "Waiting: allied fire in Sollum" in render(report, "text")
    assert "Waiting: allied fire in Sollum" in render(report, "html")


def test_report_and_map_commands_print_what_waits(fired, tmp_path):
    table, tmp = fired
    where = ["-g", str(table.axis.gd.path), "-i", str(tmp / "axis.key")]
    report = CliRunner().invoke(cli, ["report", "--format", "text", *where])
    assert report.exit_code == 0, report.output
    assert "Waiting: allied fire in Sollum scored on axis units: infantry 4 hits" in report.output
    svg = tmp_path / "map.svg"
    drawn = CliRunner().invoke(cli, ["map", *where, "-o", str(svg)])
    assert drawn.exit_code == 0, drawn.output
    assert "waiting: allied fire in Sollum scored on axis units" in svg.read_text()
