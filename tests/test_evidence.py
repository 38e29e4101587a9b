"""Showing and clearing equivocation evidence (issue 21 point 1; PLAN: only by a
signed consent from each player, the record stays). Red restores an old copy
of its directory and signs event 2 again; blue's pbem stops the game. Both
agree it was a mistake: each signs a consent; one side alone never lifts the
stop, a forged or foreign consent is refused, and nothing is deleted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem import evidence as evidencemod
from pbem import session
from pbem.cli import cli
from pbem.errors import Equivocation
from pbem.game import Replay
from tests.test_foreign_game import tree_hash, turn_of


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def stopped(table, tmp_path):
    """Blue holds red's event 2, then receives red's second, different event 2: stopped."""
    seat = table.red.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    first = Path(session.send(seat).turn_file).read_bytes()
    session.receive(table.blue.seat(), [("t", first)])
    seat = table.red.seat()
    rewound = Replay(seat.rules, role="red", known=seat.vault.known_values())
    for stored in table.blue.gd.read_events()[:2]:
        rewound.apply_stored(stored)
    seat.replay = rewound
    orders = session.parse_orders(seat.rules, rewound, "red", seat.vault, [], ["advance 2", "pass"])
    other = session._compose(seat, orders).stored
    with pytest.raises(Equivocation):
        session.receive(table.blue.seat(), [("t2", turn_of(other))])
    assert table.blue.gd.stopped_reason()
    return table, other


def test_pbem_evidence_shows_the_record_and_how_to_clear_it(stopped):
    t, _ = stopped
    result = run("evidence", "-g", t.blue.gd.path)
    assert result.exit_code == 0, result.output
    assert "GAME STOPPED: equivocation by red at event 2" in result.output
    assert "red signed two different events for seq 2" in result.output and "consents so far: none" in result.output
    assert "pbem evidence clear" in result.output
    rows = json.loads(run("evidence", "-g", t.blue.gd.path, "--json").output)["records"]
    assert [(r["author"], r["seq"], r["valid"], r["cleared"]) for r in rows] == [("red", 2, True, False)]


def _consent_file(output: str) -> Path:
    return Path(next(line.split("send ", 1)[1].split(" to your opponent")[0] for line in output.splitlines()
                     if line.strip().startswith("send ")))


def test_both_consents_lift_the_stop_and_the_evidence_stays(stopped):
    t, other = stopped
    blue = run("evidence", "clear", "-g", t.blue.gd.path)
    assert blue.exit_code == 0, blue.output
    assert "waiting for your opponent's consent" in blue.output and "still stopped" in blue.output
    assert t.blue.gd.stopped_reason()  # one side alone never lifts it
    again = run("evidence", "clear", "-g", t.blue.gd.path)
    assert again.exit_code == 0 and t.blue.gd.stopped_reason()  # nor by consenting twice
    blue_file = _consent_file(blue.output)

    red = run("evidence", "clear", "-g", t.red.gd.path, blue_file)  # red checks what it agrees to
    assert red.exit_code == 0, red.output
    assert "consents of blue, red; cleared by both players" in red.output
    red_file = _consent_file(red.output)

    done = run("evidence", "clear", "-g", t.blue.gd.path, red_file)
    assert done.exit_code == 0, done.output
    assert "cleared by both players" in done.output and "the game is not stopped" in done.output
    gd = t.blue.gd
    assert gd.stopped_reason() is None
    kept = sorted(p.name for p in gd.evidence_dir.iterdir())
    assert kept == ["CLEARED", "equivocation-000002-red-a.json", "equivocation-000002-red-b.json",
                    "equivocation-000002-red-consent-blue.json", "equivocation-000002-red-consent-red.json"]
    assert "equivocation by red at event 2" in (gd.evidence_dir / "CLEARED").read_text()
    verify = run("verify", "-g", gd.path)
    assert verify.exit_code == 0, verify.output
    assert "cleared: both players signed that it was a mistake" in verify.output
    # The set-aside version cannot stop the game again, and play goes on.
    path = gd.path.parent / "again.pbem"
    path.write_bytes(turn_of(other))
    before = tree_hash(gd.path)
    refused = run("receive", "-g", gd.path, path)
    assert refused.exit_code == 4 and "set aside" in refused.output and tree_hash(gd.path) == before
    t.play("blue", "advance 1", "pass")
    assert t.red.gd.event_count() == 4


def test_a_consent_signed_with_the_wrong_key_is_refused(stopped, tmp_path):
    """Blue tries to clear alone by writing red's consent itself (signed with blue's key)."""
    t, _ = stopped
    blue = run("evidence", "clear", "-g", t.blue.gd.path)
    data = json.loads(_consent_file(blue.output).read_text())
    forged = dict(data["consents"][0])
    forged["consent"] = {**forged["consent"], "role": "red"}
    data["consents"].append(forged)
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(data))
    before = tree_hash(t.blue.gd.path)
    result = run("evidence", "clear", "-g", t.blue.gd.path, path)
    assert result.exit_code == 4 and "its signature is not valid for red's key" in result.output, result.output
    assert tree_hash(t.blue.gd.path) == before and t.blue.gd.stopped_reason()


def test_a_consent_for_other_events_is_refused(stopped, tmp_path):
    """A consent cannot be moved to another record: it names both events' hashes."""
    t, _ = stopped
    blue = run("evidence", "clear", "-g", t.blue.gd.path)
    red = run("evidence", "clear", "-g", t.red.gd.path, _consent_file(blue.output))
    data = json.loads(_consent_file(red.output).read_text())
    data["consents"][1]["consent"]["other"] = "0" * 64
    path = tmp_path / "moved.json"
    path.write_text(json.dumps(data))
    result = run("evidence", "clear", "-g", t.blue.gd.path, path)
    assert result.exit_code == 4 and "names other events than this record" in result.output, result.output
    assert t.blue.gd.stopped_reason()


def test_the_player_without_evidence_cannot_clear_anything_alone(stopped):
    t, _ = stopped
    result = run("evidence", "clear", "-g", t.red.gd.path)
    assert result.exit_code == 9 and "holds no equivocation evidence" in result.output


def test_a_record_is_cleared_only_when_the_consents_verify(stopped):
    t, _ = stopped
    gd = t.blue.gd
    replay = session.load_public(gd)
    [record] = evidencemod.records(gd)
    assert not evidencemod.is_cleared(replay, record)
    seat = t.blue.seat()
    evidencemod.clear(gd, seat.replay, seat.identity, "blue", [])
    [record] = evidencemod.records(gd)
    assert evidencemod.cleared_by(replay, record) == ["blue"] and not evidencemod.is_cleared(replay, record)
    assert [e.accuses for e in session.evidence_records(gd, replay)] == [True]


def test_the_game_given_to_the_group_is_the_one_cleared(stopped):
    t, _ = stopped
    result = run("evidence", "-g", t.blue.gd.path, "clear")
    assert result.exit_code == 0 and "waiting for your opponent's consent" in result.output, result.output


def test_pbem_show_of_a_stopped_game_points_to_pbem_evidence(stopped):
    t, _ = stopped
    result = run("show", "-g", t.blue.gd.path)
    assert result.exit_code == 0 and "GAME STOPPED" in result.output and "'pbem evidence'" in result.output
