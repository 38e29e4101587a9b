"""Options with values (issue 26 point 3): a game declares option groups
(choices, required, default, scenarios); the genesis stores name=value;
`pbem new` refuses an unknown value, a missing required option or one of
another scenario with the list of choices; games stored with bare option
names still verify."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from pbem import rulesapi
from pbem.cli import cli
from pbem.rulesapi import OptionGroup, option_problems, option_value
from tests.race import rules as race

C2 = OptionGroup("c2", ("single-roll", "per-hex"), text="Table 7: one Allied C2 roll, or one per hex",
                 required=True)
TRACK = OptionGroup("track", ("short", "long"), default="short", scenarios=("standard",))


def spec() -> rulesapi.Spec:
    return msgspec.structs.replace(race.SPEC, option_groups=(C2, TRACK))


def test_values_are_checked_against_the_groups() -> None:
    s = spec()
    assert option_problems(s, "standard", ["c2=per-hex"]) == []
    assert option_problems(s, "standard", ["c2=per-hex", "track=long", "short-dodge"]) == []
    assert option_problems(s, "standard", ["c2=per-hexes"]) == [
        "option 'c2' takes one of: single-roll, per-hex (as c2=VALUE)"]
    assert option_problems(s, "standard", ["c2"]) == ["option 'c2' takes one of: single-roll, per-hex (as c2=VALUE)"]
    assert option_problems(s, "standard", []) == [
        "option 'c2' is required: --option c2=VALUE with VALUE one of single-roll, per-hex"]
    assert option_problems(s, "sprint", ["c2=per-hex", "track=long"]) == [
        "option 'track' is offered only in the scenarios standard"]
    assert "unknown option 'fog=thick'" in option_problems(s, "standard", ["c2=per-hex", "fog=thick"])[0]
    assert "short-dodge, c2=single-roll|per-hex, track=short|long" in option_problems(s, "standard", ["x"])[0]
    assert option_problems(s, "standard", ["c2=per-hex", "c2=single-roll"])[0] == "option 'c2' is given twice"
    # An option without values, as genesis files have always stored it.
    assert option_problems(race.SPEC, "standard", ["short-dodge"]) == []
    assert "unknown option 'short-dodge=yes'" in option_problems(race.SPEC, "standard", ["short-dodge=yes"])[0]


def test_option_value_reads_the_genesis_or_the_default() -> None:
    s = spec()
    assert option_value(s, ("c2=per-hex",), "c2") == "per-hex"
    assert option_value(s, ("c2=per-hex",), "track") == "short"
    assert option_value(s, ("short-dodge",), "short-dodge") == "on"
    assert option_value(s, (), "short-dodge") is None


@pytest.fixture
def valued(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(race, "SPEC", spec())
    rulesapi.register(race.RULES)


def test_pbem_new_refuses_a_bad_value_with_the_choices(valued: None, tmp_path: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(cli, ["rules", "show", "race"])
    assert "--option c2=single-roll|per-hex (required): Table 7" in shown.output
    assert "--option track=short|long (default short; scenarios standard)" in shown.output
    for given, why in ((["--option", "c2=both"], "option 'c2' takes one of: single-roll, per-hex"),
                       ([], "option 'c2' is required")):
        r = runner.invoke(cli, ["new", str(tmp_path / "g"), "--rules", "race", "--scenario", "standard",
                                "--role", "red", "--opponent", "k.pub", *given])
        assert r.exit_code == 2 and why in r.output, r.output
        assert not (tmp_path / "g").exists()


def test_a_valued_option_is_stored_in_the_genesis_and_verifies(valued: None, tmp_path: Path) -> None:
    from pbem.table import LocalTable, RandomPolicy

    table = LocalTable.create(tmp_path, "race", "standard", ("c2=per-hex", "track=long"))
    table.play(RandomPolicy(3), 6)
    assert table.replay.genesis is not None and table.replay.genesis.options == ["c2=per-hex", "track=long"]
    assert len(table.verify()) == 2
    with pytest.raises(Exception, match="option 'c2' takes one of"):
        LocalTable.create(tmp_path / "other", "race", "standard", ("c2=maybe",))
