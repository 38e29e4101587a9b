"""Two local players at one table: 'pbem demo', 'pbem selfplay' (pbem.table)
and the scenario listing of 'pbem new', with the race test game."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem import game, rulesapi
from pbem.cli import cli
from pbem.table import (
    THROWAWAY_PASSPHRASE,
    LocalTable,
    RandomPolicy,
    TableError,
    demo_policy,
    demo_rules_ids,
    expand_order_templates,
)
from tests.race import rules as race


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def fixed_dice(monkeypatch):
    """Every die shows 4 (a hit in the race): games depend on the policy alone."""
    monkeypatch.setattr(game, "roll", lambda g, h, xp, xq, sides: tuple(min(4, s) for s in sides))


# -- pbem demo ----------------------------------------------------------------------

def test_demo_plays_the_race_writes_both_reports_and_both_logs_verify(tmp_path):
    d = tmp_path / "demo"
    result = run("demo", "--rules", "race", "--dir", d)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "0 red: setup speed 2" in lines and "1 blue: setup speed 3" in lines
    assert any(line.startswith("2 red: reveal; advance 2; attack") for line in lines)
    assert any(line.startswith("game over: ") for line in lines)
    reports = [d / f"{role}-report.{ext}" for role in ("red", "blue") for ext in ("html", "txt")]
    for path in reports:
        assert f"report: {path.resolve()}" in lines
        assert path.stat().st_size > 0
    assert all(d.joinpath(f"{role}-report.html").read_text().lstrip().lower().startswith("<!doctype html")
               for role in ("red", "blue"))
    assert "Race" in (d / "blue-report.txt").read_text()
    for role in ("red", "blue"):
        verified = run("verify", d / role, "--json")
        assert verified.exit_code == 0, verified.output
        assert json.loads(verified.stdout)["outcome"]
        audit = run("audit", d / role, "--json")
        assert audit.exit_code == 0 and json.loads(audit.stdout)["complete"]
    # throwaway private keys are deleted unless --keep; the public halves stay
    assert not (d / "red.key").exists() and (d / "red.key.pub").exists()


def test_demo_keep_keeps_the_throwaway_keys_to_go_on_with_the_game(tmp_path, monkeypatch):
    d = tmp_path / "demo"
    result = run("demo", "--rules", "race", "--dir", d, "--keep", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["outcome"] and data["stopped"] == "outcome" and len(data["reports"]) == 4
    assert data["turns"][0] == "0 red: setup speed 2"
    monkeypatch.setenv("PBEM_PASSPHRASE", THROWAWAY_PASSPHRASE)
    shown = run("show", "-g", d / "blue", "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["view"]["winner"]


def test_demo_refuses_a_directory_that_already_holds_a_demo(tmp_path):
    assert run("demo", "--rules", "race", "--dir", tmp_path).exit_code == 0
    again = run("demo", "--rules", "race", "--dir", tmp_path)
    assert again.exit_code == 2 and "already holds" in again.output


def test_demo_without_rules_picks_a_rules_module_that_offers_one(tmp_path, monkeypatch):
    monkeypatch.setattr(rulesapi, "available", lambda: ["race"])
    result = run("demo", "--dir", tmp_path)
    assert result.exit_code == 0, result.output
    assert "Race (pbem test game), scenario standard" in result.stdout


def test_demo_with_no_demo_capable_rules_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.setattr(rulesapi, "available", lambda: ["race"])
    monkeypatch.setattr(race.RaceRules, "demo", property(lambda self: None))
    result = run("demo", "--dir", tmp_path)
    assert result.exit_code == 2
    assert "no installed rules module offers a demo" in result.output and "demo_orders" in result.output
    named = run("demo", "--rules", "race", "--dir", tmp_path)
    assert named.exit_code == 2 and "rules 'race' offer no demo" in named.output
    assert run("demo", "--rules", "nosuch").exit_code == 9
    assert not any(tmp_path.iterdir())


def test_ritd_is_preferred_for_the_demo_when_it_offers_one(monkeypatch):
    class Fake(race.RaceRules):
        SPEC = rulesapi.Spec(id="ritd", version="0", title="fake", roles=race.ROLES, scenarios=("standard",))

    monkeypatch.setattr(rulesapi, "available", lambda: ["race", "ritd"])
    rulesapi.register(Fake())
    try:
        assert demo_rules_ids() == ["ritd", "race"]
    finally:
        rulesapi.unregister("ritd")


def test_a_demo_script_order_the_rules_reject_is_reported_as_a_bug(tmp_path, monkeypatch):
    monkeypatch.setattr(race, "demo_orders", lambda state, role, ctx: ["advance 9"] if state.phase == "move"
                        else [f"setup speed {1 if role == 'red' else 2}"])
    result = run("demo", "--rules", "race", "--dir", tmp_path)
    assert result.exit_code == 1
    assert "red's orders ['advance 9']" in result.output and "RACE 2" in result.output


def test_a_script_that_stops_ends_the_demo_early(tmp_path):
    seen = []

    def policy(turn):
        seen.append((turn.role, turn.state.phase))
        return None if len(seen) > 3 else race.demo_orders(turn.state, turn.role, turn.ctx())

    table = LocalTable.create(tmp_path, "race", "standard")
    result = table.play(policy, 100)
    # red's 'reveal; advance 2' at its move is dropped unsent when the script stops at its act
    assert result.stopped == "script" and result.outcome is None and result.events == 2
    assert seen == [("red", "setup"), ("blue", "setup"), ("red", "move"), ("red", "act")]
    assert not any((tmp_path / "red" / "drafts").iterdir())
    assert len(table.verify()) == 2


# -- pbem selfplay -----------------------------------------------------------------------

def test_selfplay_reaches_an_outcome_and_the_log_verifies_and_audits(tmp_path):
    d = tmp_path / "self"
    result = run("selfplay", "--rules", "race", "--scenario", "standard", "--seed", 3, "--out", d)
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert "game over: " in first or "--max-events" in first
    for role in ("red", "blue"):
        assert run("verify", d / role).exit_code == 0
        audit = run("audit", d / role, "--json")
        assert audit.exit_code == 0, audit.output
        if "game over" in first:
            assert json.loads(audit.stdout)["complete"]
        assert f"report: {(d / f'{role}-report.html').resolve()}" in result.stdout


def test_selfplay_same_seed_same_orders(tmp_path, fixed_dice):
    def turns(seed: int, out: Path) -> list[str]:
        result = run("selfplay", "--rules", "race", "--scenario", "sprint", "--seed", seed, "--out", out,
                     "--max-events", 60, "--json")
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["turns"]

    first = turns(3, tmp_path / "a")
    assert first == turns(3, tmp_path / "b")
    assert first != turns(4, tmp_path / "c")
    assert any("defend" in line for line in first)  # fixed dice hit: the defender decides too


def test_selfplay_stops_at_max_events(tmp_path):
    result = run("selfplay", "--rules", "race", "--scenario", "marathon", "--seed", 1, "--out", tmp_path,
                 "--max-events", 12, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["stopped"] == "max-events" and data["outcome"] is None and data["events"] == 12
    assert run("audit", tmp_path / "red").exit_code == 0


def test_selfplay_names_a_stuck_decision_as_a_rules_bug(tmp_path, monkeypatch):
    real = race.legal_actions
    monkeypatch.setattr(race, "legal_actions",
                        lambda state, role, ctx: [] if state.phase == "act" else real(state, role, ctx))
    result = run("selfplay", "--rules", "race", "--scenario", "standard", "--seed", 2, "--out", tmp_path)
    assert result.exit_code == 1
    assert "stuck" in result.output and "(act)" in result.output and "rules bug" in result.output


def test_selfplay_checks_scenario_and_options(tmp_path):
    bad = run("selfplay", "--rules", "race", "--scenario", "nope", "--seed", 1, "--out", tmp_path)
    assert bad.exit_code == 2 and "standard" in bad.output
    opt = run("selfplay", "--rules", "race", "--scenario", "sprint", "--seed", 1, "--out", tmp_path / "o",
              "--option", "short-dodge", "--max-events", 8)
    assert opt.exit_code == 0, opt.output


def test_random_policy_is_determined_by_its_seed():
    legal = [["advance 1", "advance 2", "dash"], ["attack", "pass"], ["defend dodge", "defend block"]] * 5
    a, b = RandomPolicy(7), RandomPolicy(7)
    assert [a.choose(x) for x in legal] == [b.choose(x) for x in legal] == a.choices


def test_order_templates_expand_into_every_number():
    assert expand_order_templates(["setup speed <1-3>", "pass"]) == \
        ["setup speed 1", "setup speed 2", "setup speed 3", "pass"]
    assert expand_order_templates(["a <1-2> b <5-6>"]) == ["a 1 b 5", "a 1 b 6", "a 2 b 5", "a 2 b 6"]


def test_local_table_api_with_the_demo_policy(tmp_path):
    lines: list[str] = []
    table = LocalTable.create(tmp_path, "race", "sprint", echo=lines.append)
    result = table.play(demo_policy(race.RULES), 200)
    assert result.outcome is not None and result.stopped == "outcome"
    assert lines == table.log and lines[-1].endswith("(opens all its commitments for the audit)")
    paths = table.reports(tmp_path / "reports")
    assert [p.name for p in paths] == ["red-report.html", "red-report.txt", "blue-report.html", "blue-report.txt"]
    with pytest.raises(TableError):
        RandomPolicy(1)(types.SimpleNamespace(legal=list, role="red", decision=None,
                                               replay=table.replay, situation=lambda: "x"))


# -- pbem new without a scenario -----------------------------------------------------------

def test_new_without_scenario_lists_the_scenarios_and_options(tmp_path, monkeypatch):
    monkeypatch.setattr(race.RaceRules, "scenario_info", lambda self, sid: f"first to {race.GOALS[sid]} wins")
    result = run("new", tmp_path / "g", "--rules", "race")
    assert result.exit_code == 2
    for line in ("  standard: first to 10 wins", "  sprint: first to 5 wins", "short-dodge",
                 "usage: pbem new DIRECTORY --rules race --scenario SCENARIO --role red|blue"):
        assert line in result.output
    unknown = run("new", tmp_path / "g", "--rules", "race", "--scenario", "nope", "--role", "red")
    assert unknown.exit_code == 2 and "unknown scenario 'nope'" in unknown.output
    assert "  marathon" in unknown.output
    assert not (tmp_path / "g").exists()


def test_new_still_requires_role_and_opponent(tmp_path):
    result = run("new", tmp_path / "g", "--rules", "race", "--scenario", "sprint", "--opponent", "x")
    assert result.exit_code == 2 and "Missing option '--role'" in result.output
    result = run("new", tmp_path / "g", "--rules", "race", "--scenario", "sprint", "--role", "red")
    assert result.exit_code == 2 and "Missing option '--opponent'" in result.output
