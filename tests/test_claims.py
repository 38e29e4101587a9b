"""Claims (issue 27 point 4, "see the roll, then stall"; docs/protocol.md
decision 23). The player who owes the entropy answer computes the roll from
its own vault and never answers when it is bad. Cryptography cannot stop an
abort after preview; the time control makes it a default anyone can check:
the victim resends, waits out the deadline, and signs a claim that
``pbem claim --check`` confirms against the log, premature claims are
refused, and an answer arriving after the claim makes it hold (signed late)
or contested (signed in time, yet absent after a resend)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem import session
from pbem.claims import RESEND_GRACE, check_claim_file
from pbem.cli import cli
from pbem.errors import IllegalAction, UsageProblem, VerifyError
from pbem.game import DAY
from tests.conftest import Table
from tests.test_foreign_game import tree_hash
from tests.test_time_control import T0, timed_table

REPLY = 3 * DAY
LEAVE = 2 * DAY


def run(*args: str, now: int | None = None):
    env = {"PBEM_NOW": str(now)} if now is not None else {}
    return CliRunner().invoke(cli, list(args), env=env)


@pytest.fixture
def stalled(tmp_path, monkeypatch) -> tuple[Table, int, int]:
    """Red attacks at T0 + 1 day (RACE 4: a die rolled with blue's entropy);
    blue receives it without the automatic answer (it could now compute the
    roll from its own vault) and stalls. Returns the table, the attack's seq
    and the deadline (reply time plus blue's whole leave)."""
    t = timed_table(tmp_path, monkeypatch, reply_days=3, leave_days=2)
    monkeypatch.setenv("PBEM_NOW", str(T0 + DAY))
    seat = t.red.seat()
    session.add_orders(seat, ["advance 1", "attack"])
    sent = session.send(seat)
    session.receive(t.blue.seat(), [("attack", Path(sent.turn_file).read_bytes())], auto_reply=False)
    pending = t.blue.seat().replay.pending()
    assert pending is not None and (pending.role, pending.kind) == ("blue", "dice")
    monkeypatch.delenv("PBEM_NOW")
    return t, sent.seqs[-1], T0 + DAY + REPLY + LEAVE


def test_see_the_roll_then_stall_is_claimed_and_the_claim_checks(stalled, tmp_path):
    t, seq, deadline = stalled
    red = str(t.red.gd.path)
    shown = run("show", "-g", red, now=deadline + 3 * DAY)
    assert "owed: blue (entropy for 1 dice) since event" in shown.output and "overdue by 3 days" in shown.output
    first = run("claim", "-g", red, now=deadline + DAY)
    assert first.exit_code == 0, first.output
    assert f"resent events {seq}-{seq}" in first.output and f"pbem send --since {seq}" in first.output
    resend = sorted((t.red.gd.path / "outbox").glob("*.pbem"))[-1]
    assert resend.read_bytes() == t.red.gd.path.joinpath("outbox", resend.name).read_bytes()
    early = run("claim", "-g", red, now=deadline + DAY + RESEND_GRACE - 60)
    assert early.exit_code == IllegalAction.exit_code and "premature claim refused: your resend" in early.output
    claimed = run("claim", "-g", red, now=deadline + DAY + RESEND_GRACE)
    assert claimed.exit_code == 0, claimed.output
    claim_file = t.red.gd.path / "claims" / f"claim-{seq:06d}.json"
    assert "the claim holds: red claims that blue has owed the decision 'dice' since event" in claimed.output
    # anyone holding the claim file alone (it carries the log) checks it
    alone = tmp_path / "elsewhere"
    alone.mkdir()
    (alone / "claim.json").write_bytes(claim_file.read_bytes())
    checked = run("claim", "--check", str(alone / "claim.json"), "-g", str(alone / "nothing"))
    assert checked.exit_code == 9, checked.output  # a named game directory must exist
    checked = CliRunner().invoke(cli, ["claim", "--check", str(alone / "claim.json")],
                                 env={"PBEM_GAME": ""}, catch_exceptions=False)
    assert checked.exit_code == 0, checked.output
    assert "the claim holds" in checked.output and "The log holds no answer" in checked.output
    # and against either player's log
    for side in (t.red, t.blue):
        out = run("claim", "--check", str(claim_file), "-g", str(side.gd.path))
        assert out.exit_code == 0 and "the claim holds" in out.output, out.output


def test_a_premature_claim_is_refused_before_the_deadline(stalled):
    t, seq, deadline = stalled
    red = str(t.red.gd.path)
    assert run("claim", "-g", red, now=T0 + 2 * DAY).exit_code == 0  # the resend may come at any time
    before = tree_hash(t.red.gd.path)
    out = run("claim", "-g", red, now=deadline)
    assert out.exit_code == IllegalAction.exit_code, out.output
    assert "premature claim refused: blue's reply is due by 2025-01-21 08:00 UTC" in out.output
    assert tree_hash(t.red.gd.path) == before


def test_no_claim_once_the_answer_is_in_the_log(stalled, monkeypatch):
    t, seq, deadline = stalled
    monkeypatch.setenv("PBEM_NOW", str(deadline + 10 * DAY))
    sent = session.send(t.blue.seat())  # the entropy answer, at last
    t.deliver(t.red, Path(sent.turn_file).read_bytes())
    while (pending := t.red.seat().replay.pending()).role == "blue":  # RACE 4: blue defends a hit, then moves
        t.play("blue", *(["defend dodge"] if pending.kind == "defend" else ["advance 1", "pass"]))
    out = run("claim", "-g", str(t.red.gd.path), now=deadline + 20 * DAY)
    assert out.exit_code == IllegalAction.exit_code and "no claim: the next decision is yours" in out.output


def test_a_game_without_a_time_control_has_nothing_to_claim(table):
    out = run("claim", "-g", str(table.blue.gd.path))
    assert out.exit_code == UsageProblem.exit_code and "has no time control" in out.output


def _claim(t: Table, deadline: int) -> Path:
    red = str(t.red.gd.path)
    assert run("claim", "-g", red, now=deadline + 1).exit_code == 0
    out = run("claim", "-g", red, now=deadline + 1 + RESEND_GRACE)
    assert out.exit_code == 0, out.output
    return next((t.red.gd.path / "claims").glob("claim-*.json"))


def test_an_answer_signed_after_the_deadline_leaves_the_claim_holding(stalled, monkeypatch):
    """The opponent's answer arriving after a claim is received like any event
    (the game goes on unless the players or an arbiter settle it); its own
    signed time admits it came late, so the claim still holds."""
    t, seq, deadline = stalled
    claim = _claim(t, deadline)
    monkeypatch.setenv("PBEM_NOW", str(deadline + 5 * DAY))
    sent = session.send(t.blue.seat())
    received = session.receive(t.red.seat(), [("late", Path(sent.turn_file).read_bytes())])
    assert received.appended == [seq + 1]
    out = run("claim", "--check", str(claim), "-g", str(t.red.gd.path))
    assert out.exit_code == 0, out.output
    assert f"event {seq + 1} by blue is itself signed 2025-01-26 08:00 UTC, 5 days after the deadline" in out.output


def test_an_answer_backdated_into_the_time_makes_the_claim_contested(stalled, monkeypatch):
    """Blue signs its late answer with a time inside the deadline (mail lost,
    it says). The log cannot tell a lost mail from a backdated answer: the
    check says so and does not call the claim proven."""
    t, seq, deadline = stalled
    claim = _claim(t, deadline)
    monkeypatch.setenv("PBEM_NOW", str(deadline - DAY))
    sent = session.send(t.blue.seat())
    monkeypatch.setenv("PBEM_NOW", str(deadline + 5 * DAY))
    session.receive(t.red.seat(), [("late", Path(sent.turn_file).read_bytes())])
    out = run("claim", "--check", str(claim), "-g", str(t.red.gd.path))
    assert out.exit_code == VerifyError.exit_code, out.output
    assert "the claim is contested" in out.output and "an arbiter must judge" in out.output


def test_a_forged_or_altered_claim_is_refused(stalled, tmp_path):
    t, seq, deadline = stalled
    claim = _claim(t, deadline)
    doc = json.loads(claim.read_text())
    doc["claim"]["deadline"] -= DAY  # a deadline a day earlier than the time control gives
    bad = tmp_path / "altered.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(VerifyError, match="signature is not valid for red's key"):
        check_claim_file(bad.read_bytes(), "altered.json")
    out = run("claim", "--check", str(bad), "-g", str(t.red.gd.path))
    assert out.exit_code == VerifyError.exit_code
    doc = json.loads(claim.read_text())
    doc["events"] = doc["events"][:-1]  # the claim's log cut short of its head
    bad.write_text(json.dumps(doc))
    with pytest.raises(VerifyError, match="another game or log head"):
        check_claim_file(bad.read_bytes(), "cut.json")


def test_a_claim_of_a_log_that_differs_from_this_game_is_refused(stalled, tmp_path, monkeypatch):
    t, seq, deadline = stalled
    claim = _claim(t, deadline)
    other = timed_table(tmp_path / "other", monkeypatch)
    out = run("claim", "--check", str(claim), "-g", str(other.red.gd.path))
    assert out.exit_code == VerifyError.exit_code and "differs from this game's log at event 0" in out.output
