"""Random self-play of the Panzerarmee Afrika campaign through real turn
files (issue 22 point 3): two bots choose among the legal orders (the rules'
order tree, leaning to the orders that end a phase so that 20 game turns
fit the slow suite's budget), every event verified by the receiving side;
the campaign reaches its end (§14: sudden death, or Table 12 after turn 20)
and both logs pass 'pbem verify' and 'pbem audit'."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem.cli import cli


@pytest.mark.slow
def test_the_campaign_is_played_to_its_end_by_random_bots_s14(tmp_path: Path) -> None:
    out = tmp_path / "campaign"
    result = CliRunner().invoke(cli, ["selfplay", "--rules", "paa", "--scenario", "campaign", "--seed", "5",
                                      "--out", str(out), "--max-events", "400", "--end-bias", "0.5"])
    assert result.exit_code == 0, result.output
    assert "game over" in result.output and "§14" in result.output, result.output[-2000:]
    for role in ("allied", "axis"):
        verified = CliRunner().invoke(cli, ["verify", "-g", str(out / role)])
        assert verified.exit_code == 0, verified.output
    audit = CliRunner().invoke(cli, ["audit", "-g", str(out / "axis")])
    assert audit.exit_code == 0, audit.output
