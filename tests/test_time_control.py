"""Time controls (issue 27 point 4; docs/protocol.md decision 23): a genesis
made with ``--reply-days`` records the agreed reply time and leave, the game
is played at format version 2 (4 since terminal events, decision 26; 6 since
takebacks, decision 28) and every event carries a signed time; a genesis
without it (every game before, examples/, tests/data/) stays at format
version 1 (5 for a new game) and verifies exactly as before. ``pbem show`` says who owes
what since when and how much time is left."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from pbem import codec, rulesapi, session
from pbem.claims import SKEW
from pbem.cli import cli
from pbem.codec import Clock
from pbem.errors import BadFile, IllegalAction, VersionMismatch
from pbem.game import DAY, Replay
from pbem.turnfile import parse_turn
from tests.conftest import Side, Table, make_side
from tests.race import rules as race
from tests.test_foreign_game import tree_hash

T0 = 1_736_928_000  # 2025-01-15 08:00 UTC
ROOT = Path(__file__).resolve().parent.parent


def timed_table(tmp: Path, monkeypatch, reply_days: int = 3, leave_days: int = 2) -> Table:
    """A race game under a time control: red hosts at T0, blue joins an hour later."""
    monkeypatch.setenv("PBEM_NOW", str(T0))
    red, blue = make_side(tmp, "red"), make_side(tmp, "blue")
    sent = session.new_game(red.gd.path, "race", "sprint", "red", red.identity, red.key_path,
                            blue.identity.public_text, orders=["setup speed 2"],
                            clock=Clock(reply_days=reply_days, leave_days=leave_days))
    monkeypatch.setenv("PBEM_NOW", str(T0 + 3600))
    joined, _ = session.join_game(blue.gd.path, Path(sent.turn_file).read_bytes(), blue.identity, blue.key_path,
                                  orders=["setup speed 3"])
    session.receive(red.seat(), [("join", Path(joined.turn_file).read_bytes())])
    return Table(red, blue, tmp)


def body_of(side: Side, seq: int) -> codec.Body:
    return codec.decode_body(codec.unwrap(side.gd.read_event(seq)).body)


def test_a_timed_genesis_records_the_clock_and_every_event_a_signed_time(tmp_path, monkeypatch):
    t = timed_table(tmp_path, monkeypatch)
    monkeypatch.setenv("PBEM_NOW", str(T0 + DAY))
    t.play("red", "advance 1", "pass")
    genesis = body_of(t.red, 0)
    assert codec.TERMINAL_CLOCK_VERSION == 4  # version 2 with terminal events (decision 26)
    assert genesis.v == codec.RISTRETTO_CLOCK_VERSION == 8  # 'pbem new' since decision 29: 6 with the Ristretto255 deck
    assert genesis.genesis is not None and genesis.genesis.clock == Clock(reply_days=3, leave_days=2)
    times = [body_of(t.red, s).time for s in range(t.red.gd.event_count())]
    assert times[:2] == [T0, T0 + 3600] and all(x >= T0 + DAY for x in times[2:]), times
    assert all(body_of(t.red, s).v == 8 for s in range(t.red.gd.event_count()))


def test_a_game_without_a_time_control_has_no_times(table):
    # Format version 5 (since decision 28; 3 before): version 1 with terminal events
    # (decision 26) and takebacks, still without times.
    table.play("red", "advance 1", "pass")
    for seq in range(table.red.gd.event_count()):
        raw = table.red.gd.read_event(seq)
        assert b'"time"' not in raw and b'"clock"' not in raw and b'"v":7' in raw


#: Heads of the published logs, computed by pbem before time controls existed.
HEADS = {
    "tests/data/ritd-v4-examples/game": (40, "c488e52c050bb057431188ec08a8ebbbb01d8b4a563d7bcc374a2bb6a70200fb"),
    "tests/data/ritd-v4-examples/complete-game": (67, "bc588db92b5fa10c89b259af69a036ee9212ba8bcb582ead52d4c480762887b5"),
    "tests/data/ritd-v3-demo": (40, "12b22fd9eb6c31807c52dddaba5a9cdcef15f3c08c50e22f9e4f98f5ac3ff4fe"),
}


def published_log(folder: str) -> list[bytes]:
    """The log the turn files under ``folder`` carry (both players'), in event order."""
    by_seq: dict[int, bytes] = {}
    for path in sorted((ROOT / folder).rglob("*.pbem")):
        for stored in parse_turn(path.read_bytes(), path.name).events:
            by_seq.setdefault(codec.unwrap(stored).seq, stored)
    return [by_seq[s] for s in range(len(by_seq))]


@pytest.mark.parametrize("folder", sorted(HEADS))
def test_existing_logs_verify_exactly_as_before(folder):
    """No genesis there has a clock: each log verifies at format version 1, to
    the same head as before, with nobody's time running."""
    events = published_log(folder)
    assert all(b'"clock"' not in e and b'"time"' not in e for e in events)
    genesis = codec.decode_body(codec.unwrap(events[0]).body).genesis
    assert genesis is not None and genesis.clock is None
    replay = Replay(rulesapi.load_version(genesis.rules, genesis.rules_version))
    for stored in events:
        replay.apply_stored(stored)
    assert (replay.seq + 1, replay.head.hex()) == HEADS[folder]
    assert replay.version == 1 and replay.leave_used == {}
    assert replay.owed is None or replay.owed.time == 0


def test_show_says_who_owes_what_since_when_and_the_time_left(tmp_path, monkeypatch):
    t = timed_table(tmp_path, monkeypatch)
    monkeypatch.setenv("PBEM_NOW", str(T0 + DAY))
    me = t.red.seat()
    session.add_orders(me, ["advance 1", "attack"])  # RACE 4: a die, rolled with blue's entropy
    sent = session.send(me)
    seq = sent.seqs[-1]
    session.receive(t.blue.seat(), [("turn", Path(sent.turn_file).read_bytes())], auto_reply=False)
    monkeypatch.setenv("PBEM_NOW", str(T0 + 2 * DAY))
    out = CliRunner().invoke(cli, ["show", "-g", str(t.red.gd.path)])
    assert out.exit_code == 0, out.output
    assert "owed: blue (entropy for 1 dice)" in out.output and f"since event {seq} by red, signed 2025-01-16 08:00 UTC" in out.output
    assert "3 days per reply, 2 days of leave per player; blue has 2 days of leave left" in out.output
    assert "blue's reply is due by 2025-01-21 08:00 UTC (4 days left)" in out.output
    monkeypatch.setenv("PBEM_NOW", str(T0 + 7 * DAY))
    out = CliRunner().invoke(cli, ["show", "--json", "-g", str(t.blue.gd.path)])
    owed = msgspec.json.decode(out.stdout)["owed"]
    assert owed == {"role": "blue", "since_seq": seq, "since_time": T0 + DAY, "deadline": T0 + 6 * DAY,
                    "leave_left": 2 * DAY}
    out = CliRunner().invoke(cli, ["show", "-g", str(t.blue.gd.path)])
    assert "overdue by 1 day ('pbem claim' resends and then claims)" in out.output


def test_show_without_a_time_control_says_since_when_only(table):
    out = CliRunner().invoke(cli, ["show", "-g", str(table.red.gd.path)])
    assert out.exit_code == 0, out.output
    assert "owed: red" in out.output and "time control: none" in out.output


def test_a_late_reply_uses_leave_and_leave_used_moves_the_deadline(tmp_path, monkeypatch):
    t = timed_table(tmp_path, monkeypatch, reply_days=3, leave_days=2)
    monkeypatch.setenv("PBEM_NOW", str(T0 + DAY))
    t.play("red", "advance 1", "pass")  # blue's entropy answers at once (same time)
    monkeypatch.setenv("PBEM_NOW", str(T0 + 5 * DAY))  # blue replies 4 days after red: 1 day late
    t.play("blue", "advance 1", "pass")
    r = t.red.seat().replay
    assert r.leave_used == {"blue": DAY}
    monkeypatch.setenv("PBEM_NOW", str(T0 + 6 * DAY))
    t.play("red", "advance 1", "pass")
    from pbem.claims import clock_status
    status = clock_status(t.red.seat().replay)
    assert status is not None and status.role == "blue" and status.leave_left == DAY
    assert status.deadline == T0 + 6 * DAY + 3 * DAY + DAY


def _crafted(side: Side, time: int, orders: list[str]) -> bytes:
    """An event of ``side`` signed as the patched client would, with ``time``."""
    seat = side.seat()
    session.add_orders(seat, orders)
    draft = session.live_draft(seat)
    body = session._body(seat.replay, seat.role, session._with_secrets(seat.vault, draft.orders), draft.orders,
                         x_next=bytes(32))
    body = msgspec.structs.replace(body, time=time)
    session.clear_draft(seat.gd, seat.role)
    return session._sign(seat.identity, body)


def test_a_signed_time_before_the_previous_event_is_refused_naming_the_signer(tmp_path, monkeypatch):
    t = timed_table(tmp_path, monkeypatch)
    stored = _crafted(t.red, T0, ["advance 1", "pass"])  # before blue's join (T0 + 1 hour)
    before = tree_hash(t.blue.gd.path)
    path = tmp_path / "back.pbem"
    path.write_bytes(b"pbem-turn v1\n---\n" + stored + b"\n")
    out = CliRunner().invoke(cli, ["receive", "-g", str(t.blue.gd.path), str(path)])
    assert out.exit_code == IllegalAction.exit_code, out.output
    assert "by red: signed time 2025-01-15 08:00 UTC is before the signed time of event 1" in out.output
    assert tree_hash(t.blue.gd.path) == before


def test_a_signed_time_in_the_future_is_refused_on_receipt(tmp_path, monkeypatch):
    """A time far ahead would push every later time (they never go back) past
    any deadline, so that the signer could never be claimed against."""
    t = timed_table(tmp_path, monkeypatch)
    stored = _crafted(t.red, T0 + 3600 + SKEW + 3600 + 365 * DAY, ["advance 1", "pass"])
    path = tmp_path / "future.pbem"
    path.write_bytes(b"pbem-turn v1\n---\n" + stored + b"\n")
    before = tree_hash(t.blue.gd.path)
    out = CliRunner().invoke(cli, ["receive", "-g", str(t.blue.gd.path), str(path)])
    assert out.exit_code == IllegalAction.exit_code, out.output
    assert "event 2 by red: signed time 2026-01-16 10:00 UTC" in out.output and "ahead of this machine's clock" in out.output
    assert tree_hash(t.blue.gd.path) == before


def test_an_older_pbem_meeting_a_timed_game_says_which_version_it_needs(tmp_path, monkeypatch):
    t = timed_table(tmp_path, monkeypatch)
    genesis = t.red.gd.read_event(0)
    monkeypatch.setattr(codec, "FORMAT_VERSIONS", (1,))  # what pbem before version 2 reads
    with pytest.raises(VersionMismatch, match=r"format version 8 is not supported \(this pbem reads versions 1\); "
                                              "upgrade pbem"):
        Replay(race.RULES).apply_stored(genesis)


def test_a_version_1_event_with_a_time_and_a_version_2_event_without_are_malformed(table, tmp_path, monkeypatch):
    with pytest.raises(BadFile, match="has no signed time"):
        Replay(race.RULES).apply_stored(_resigned_genesis(table, time=T0))
    with pytest.raises(BadFile, match="needs a signed time"):
        Replay(race.RULES).apply_stored(_resigned_genesis(table, v=2, clock=Clock(reply_days=1)))
    with pytest.raises(BadFile, match="needs a time control"):
        Replay(race.RULES).apply_stored(_resigned_genesis(table, v=2, time=T0))


def _resigned_genesis(table: Table, **change) -> bytes:
    body = body_of(table.red, 0)
    clock = change.pop("clock", None)
    assert body.genesis is not None
    genesis = msgspec.structs.replace(body.genesis, clock=clock)
    return session._sign(table.red.identity, msgspec.structs.replace(body, genesis=genesis, **change))


def test_new_takes_reply_and_leave_days_and_join_plays_at_version_2(tmp_path, monkeypatch):
    monkeypatch.setenv("PBEM_NOW", str(T0))
    red, blue = make_side(tmp_path, "red"), make_side(tmp_path, "blue")
    out = CliRunner().invoke(cli, ["new", str(red.gd.path), "--rules", "race", "--scenario", "sprint", "--role",
                                   "red", "--opponent", blue.identity.public_text, "-i", str(red.key_path),
                                   "--order", "setup speed 2", "--reply-days", "5", "--leave-days", "30"])
    assert out.exit_code == 0, out.output
    g = body_of(red, 0)
    assert g.v == 8 and g.genesis is not None and g.genesis.clock == Clock(reply_days=5, leave_days=30)
    bad = CliRunner().invoke(cli, ["new", str(tmp_path / "x"), "--rules", "race", "--scenario", "sprint",
                                   "--role", "red", "--opponent", blue.identity.public_text, "--leave-days", "3"])
    assert bad.exit_code == 2 and "--leave-days needs --reply-days" in bad.output
