"""`pbem rules check ritd` and `pbem map ritd` end to end through the CLI."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from click.testing import CliRunner

import rules.ritd
from pbem.cli import cli


def test_rules_check_prints_every_count_and_passes():
    result = CliRunner().invoke(cli, ["rules", "check", "ritd"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) > 50 and all(line.startswith("ok ") for line in lines)
    assert any("RB 18.3" in line for line in lines)


def test_rules_check_fails_on_a_mismatch(monkeypatch):
    monkeypatch.setattr(rules.ritd.RitdRules, "data_check_report",
                        lambda self: (["FAIL RB 18.3: Axis S: RB 10, data 9"], False))
    result = CliRunner().invoke(cli, ["rules", "check", "ritd"])
    assert result.exit_code == 3 and "FAIL RB 18.3" in result.output and "does not match" in result.output


def test_map_command_writes_a_printable_svg(tmp_path):
    out = tmp_path / "map.svg"
    result = CliRunner().invoke(cli, ["map", "ritd", "-o", str(out)])
    assert result.exit_code == 0, result.output
    root = ET.fromstring(out.read_bytes())
    assert root.get("width") == "297mm" and root.get("height") == "210mm"
    text = "".join(root.itertext())
    for place in ("Tobruk", "El Agheila", "Alexandria", "Siwa", "Jarabub", "Jalo", "Sollum"):
        assert place in text


def test_rommel_in_the_desert_is_offered_for_hosting(tmp_path):
    """The whole Month is adjudicated, so RitD is a playable rules module: hosting
    gets past the rules check to the host's key."""
    from pbem import rulesapi

    assert rulesapi.missing_parts(rulesapi.load_any("ritd")) == []
    result = CliRunner().invoke(cli, ["new", str(tmp_path / "g"), "--rules", "ritd", "--scenario", "1941",
                                      "--role", "axis", "--opponent", "pbem-ed25519:" + "11" * 32,
                                      "-i", str(tmp_path / "nokey")])
    assert "cannot host games yet" not in result.output and "no identity key" in result.output


def test_the_installed_package_serves_every_engine_hook_the_game_defines():
    """pbem loads the entry point ``rules.ritd:RULES`` (lazy); a hook of the
    contract that rules.ritd.game defines but RULES does not override would
    silently fall back to the contract's default."""
    from pbem.rulesapi import Rules
    from rules.ritd import RitdRules, game

    hooks = [name for name in vars(Rules) if not name.startswith("_")]
    assert "check" in hooks and "on_open_leaf" in hooks
    for name in hooks:
        if callable(vars(game).get(name)):
            assert name in vars(RitdRules), name


def test_rb_17_optional_i_tanks_through_the_cli_new_join_show_and_report(tmp_path):
    """``pbem new ... --option i-tanks``: the genesis carries the optional rule,
    the joining player is told, ``pbem show`` and the report name it."""
    from tests.ritd.test_game_i_tanks import setups

    def run(*args):
        return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)

    axis, allied = setups()
    (tmp_path / "axis.txt").write_text("\n".join(axis) + "\n")
    (tmp_path / "allied.txt").write_text("\n".join(allied) + "\n")
    for role in ("axis", "allied"):
        assert run("keygen", "-o", tmp_path / f"{role}.key").exit_code == 0
    listing = run("new", tmp_path / "x", "--rules", "ritd")
    assert "options (--option NAME, repeatable): i-tanks" in listing.output
    common = ["--rules", "ritd", "--scenario", "1941", "--role", "axis", "--opponent", tmp_path / "allied.key.pub",
              "-i", tmp_path / "axis.key", "-f", tmp_path / "axis.txt"]
    bad = CliRunner().invoke(cli, [str(a) for a in ("new", tmp_path / "bad", *common, "--option", "itanks")])
    assert bad.exit_code != 0 and "unknown option 'itanks' (offered: i-tanks)" in bad.output
    new = run("new", tmp_path / "a", *common, "--option", "i-tanks", "-o", tmp_path / "t0.pbem")
    assert new.exit_code == 0, new.output
    join = run("join", tmp_path / "t0.pbem", tmp_path / "b", "-i", tmp_path / "allied.key",
               "-f", tmp_path / "allied.txt", "-o", tmp_path / "t1.pbem")
    assert join.exit_code == 0, join.output
    assert "optional rules of this game (the host chose them; 'pbem show' describes them): i-tanks" in join.output
    shown = run("show", "-g", tmp_path / "b")
    assert "optional rule: Allied I-Tanks (RB 17.0 optional rule)" in shown.output
    report = run("report", "-g", tmp_path / "b", "--format", "text")
    assert "Optional rule: Allied I-Tanks (RB 17.0 optional rule)" in report.output
