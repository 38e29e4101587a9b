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
    monkeypatch.setattr(rules.ritd, "data_check_report",
                        lambda: (["FAIL RB 18.3: Axis S: RB 10, data 9"], False))
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
    """pbem loads the entry point ``rules.ritd`` (lazy); a hook defined in
    rules.ritd.game but not served there would silently be missing."""
    import rules.ritd
    from pbem.rulesapi import OPTIONAL, REQUIRED
    from rules.ritd import game

    for name in (*REQUIRED, *OPTIONAL):
        if hasattr(game, name):
            assert getattr(rules.ritd, name) is not None, name
