"""Random self-play of Rommel in the Desert through real turn files (issue
9): two bots choose uniformly among the legal orders, every event verified
by the receiving side; the game reaches its level of victory and passes
'pbem verify' and 'pbem audit'. Cards come from the real shuffles of the
shared deck (pbem.deck), audited round by round."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from pbem.cli import cli


def _selfplay(tmp_path, scenario: str, seed: int, max_events: int):
    out = tmp_path / scenario
    result = CliRunner().invoke(cli, ["selfplay", "--rules", "ritd", "--scenario", scenario, "--seed", str(seed),
                                      "--out", str(out), "--max-events", str(max_events)])
    assert result.exit_code == 0, result.output
    return out, result.output


@pytest.mark.random_cards
def test_the_demo_scenario_is_played_to_its_last_month_by_random_bots(tmp_path):
    out, output = _selfplay(tmp_path, "demo", 7, 600)
    assert "game over" in output and "RB 17" in output
    for role in ("axis", "allied"):
        assert CliRunner().invoke(cli, ["verify", "-g", str(out / role)]).exit_code == 0
    audit = CliRunner().invoke(cli, ["audit", "-g", str(out / "axis")])
    assert audit.exit_code == 0, audit.output
    assert "shared deck:" in audit.output and "each a permutation of the one deck of 42 cards" in audit.output


@pytest.mark.slow
@pytest.mark.random_cards
@pytest.mark.parametrize("scenario", ["1940", "1941", "1941-42", "crusader", "battleaxe", "1942", "gazala",
                                      "pursuit"])
def test_every_scenario_reaches_its_end_in_random_self_play(tmp_path, scenario):
    """RB 18.1-18.8 (issue 6): every scenario sets up and reaches the end of its
    last Month (or a Strategic Victory) without an illegal state."""
    out, output = _selfplay(tmp_path, scenario, 11, 5000)
    assert "game over" in output
    assert CliRunner().invoke(cli, ["audit", "-g", str(out / "axis")]).exit_code == 0
