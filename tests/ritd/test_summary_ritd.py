"""The Player-Turn summary names the cards shown, and 'pbem log --json' keeps
the tokens of the blocks lost (issue 21 point 3: never tokens in anything a
person reads; tokens stay in --json)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from pbem.cli import cli
from pbem.report import build, render
from tests.ritd.test_pending_hits_ritd import fired  # noqa: F401  (the fixture)

pytestmark = pytest.mark.usefixtures("registered_ritd")


def test_the_tokens_of_blocks_lost_are_in_log_json_never_in_its_text(fired):  # noqa: F811
    table, _ = fired
    table.play("axis", "losses Sollum: Brescia 2, Trento 2")
    table.play("axis", "fire Sollum: Brescia at armor, Savona at armor, Trento at armor")
    table.play("allied", "losses Sollum auto")  # the 7/7 Tk is eliminated (RB 9.5)
    for side in (table.axis, table.allied):
        text = CliRunner().invoke(cli, ["log", "-g", str(side.gd.path)]).output
        assert not re.search(r"\b[AL][0-9a-f]{8}\b", text)  # no token a person reads
        items = json.loads(CliRunner().invoke(cli, ["log", "-g", str(side.gd.path), "--json"]).output)
        said = [h for item in items for h in item["happenings"]]
        eliminated = [h for h in said if h["kind"] == "elimination"]
        losses = [h for h in said if h["kind"] == "loss"]
        assert eliminated and all(re.fullmatch(r"L[0-9a-f]{8}", t) for h in eliminated for t in h["tokens"])
        assert any(h["tokens"] for h in eliminated)
        assert losses and all(len(h["tokens"]) == 1 and h["tokens"][0].startswith("A") for h in losses), losses
        assert all(not re.search(r"\b[AL][0-9a-f]{8}\b", h["text"]) for h in said)


def test_the_summary_names_the_cards_shown(tmp_path, monkeypatch):
    from tests.conftest import PASSPHRASE
    from tests.ritd.ritd_table import new_game
    from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

    monkeypatch.setenv("PBEM_PASSPHRASE", PASSPHRASE)
    demo = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    demo.play("axis", "supply check", "basic", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento",
              "end movement")
    demo.play("allied", "refuse-battle Sollum slowest 3")
    demo.play("axis", "pursue Sollum with none")
    demo.play("allied", "refuse-battle Sollum -> Sidi Barrani")
    demo.play("axis", "supply check", "reveal option")  # Supply Revealed: the Basic card turns up (RB 3.48)
    allied = demo.allied.seat()
    text = render(build(allied.replay, "allied", with_map=False), "text")
    assert re.search(r"- deck: showing 1 card\(s\): real-\d\d\.", text), text
