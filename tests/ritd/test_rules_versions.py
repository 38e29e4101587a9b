"""Rules versions (issue 18 point 7, PLAN "Old rules vs one rule in one
place"): a game started under a released older version verifies, audits
and plays on to its end with that version, kept as a frozen package
(rules/ritd_v3, entry point ``ritd@3``); a new game always takes the
current version.

The log is the rulebook's 19.0 Demo as examples/game held it when rules
version 3 was current (commit 0d6e09d): 40 turn files of both players.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem import rulesapi
from pbem.cli import cli
from pbem.errors import VersionMismatch
from pbem.game import Replay
from pbem.table import LocalTable, demo_policy
from pbem.turnfile import parse_turn

V3_DEMO = Path(__file__).resolve().parent.parent / "data" / "ritd-v3-demo"


def v3_events() -> list[bytes]:
    return events_of(sorted(V3_DEMO.glob("*.pbem")))


def events_of(turn_files: list[Path]) -> list[bytes]:
    """The log the turn files of both players carry, in event order."""
    by_seq: dict[int, bytes] = {}
    for path in turn_files:
        for stored in parse_turn(path.read_bytes(), path.name).events:
            from pbem import codec

            by_seq.setdefault(codec.unwrap(stored).seq, stored)
    assert sorted(by_seq) == list(range(len(by_seq)))
    return [by_seq[s] for s in sorted(by_seq)]


def test_a_version_3_log_verifies_with_the_frozen_version_3() -> None:
    events = v3_events()
    assert len(events) >= 30
    with pytest.raises(VersionMismatch, match="needs rules ritd version 3; this pbem has version 6"):
        Replay(rulesapi.load("ritd")).apply_stored(events[0])
    rules = rulesapi.load_version("ritd", "3")
    assert rules.SPEC.version == "3" and rules is not rulesapi.load("ritd")
    replay = Replay(rules)
    for stored in events:
        replay.apply_stored(stored)
    assert replay.seq == len(events) - 1


def test_pbem_verify_of_a_version_3_game_directory(tmp_path: Path) -> None:
    events_dir = tmp_path / "game" / "events"
    events_dir.mkdir(parents=True)
    for seq, stored in enumerate(v3_events()):
        (events_dir / f"{seq:06d}.json").write_bytes(stored)
    result = CliRunner().invoke(cli, ["verify", "-g", str(tmp_path / "game")])
    assert result.exit_code == 0, result.output
    assert f"verified {len(v3_events())} events" in result.output


@pytest.mark.random_cards  # the published logs were dealt by the real deck, not the tests' fixed one
@pytest.mark.parametrize("game", ["examples/game", "examples/complete-game", "tests/data/ritd-v4-examples/game",
                                  "tests/data/ritd-v4-examples/complete-game"])
def test_the_logs_in_examples_verify(game: str) -> None:
    """Contract point 6: the games published in examples/ (and those it
    published under version 4) replay, with the rules their genesis names,
    to the end their transcript states."""
    root = Path(__file__).resolve().parent.parent.parent / game
    events = events_of(sorted(root.glob("*-outbox/*.pbem")))
    from pbem import codec

    genesis = codec.decode_body(codec.unwrap(events[0]).body).genesis
    assert genesis is not None
    replay = Replay(rulesapi.load_version(genesis.rules, genesis.rules_version))
    for stored in events:
        replay.apply_stored(stored)
    assert replay.seq == len(events) - 1
    assert f"{replay.seq + 1} events" in (root / "transcript.txt").read_text()


def test_an_unknown_old_version_is_refused_naming_the_versions_kept() -> None:
    with pytest.raises(VersionMismatch, match="version 2; this pbem has version 6 and the frozen versions 3, 4, 5"):
        rulesapi.load_version("ritd", "2")


@pytest.mark.parametrize("version", ["3", "4", "5"])
def test_a_frozen_version_game_plays_on_to_the_end_of_its_script_and_both_logs_verify(
        tmp_path: Path, version: str) -> None:
    """Two players whose game says version 3 (4, 5) play the Demo script
    through the real engine (turn files, automatic answers, the shared deck),
    with the frozen rules picked from their genesis; then both logs verify."""
    table = LocalTable.create(tmp_path, f"ritd@{version}", "demo")
    result = table.play(demo_policy(table.rules), 200)
    assert result.stopped in ("script", "outcome") and result.events >= 30
    for player in table.players:
        assert player.seat is not None and player.seat.rules.SPEC.version == version
        assert player.seat.rules is rulesapi.load_version("ritd", version)
    assert len(table.verify()) == 2


def test_new_games_take_the_current_version_only(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["new", str(tmp_path / "g"), "--rules", "ritd@3", "--scenario", "demo"])
    assert result.exit_code == 2 and "frozen older version" in result.output
    assert not (tmp_path / "g").exists()
    listing = CliRunner().invoke(cli, ["rules", "list"]).output
    assert "ritd@3" in listing and "frozen" in listing
