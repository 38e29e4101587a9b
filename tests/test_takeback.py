"""An agreed takeback (docs/protocol.md decision 28, PLAN "What users expect",
issue 21): the asker signs a request outside the log, the opponent grants it
in its next event, and every replay (receive, the replay cache, verify and
audit on one or two cores) returns the game to what it was before the span.
Each refusal is tried through the command line with the victim's whole game
directory hashed before and after."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from pbem import codec, session, takeback
from pbem.cli import cli
from pbem.errors import ForeignGame, IllegalAction, VersionMismatch
from pbem.game import Replay
from pbem.identity import Identity
from pbem.vault import VaultData
from tests.conftest import Side, Table, new_table
from tests.test_foreign_game import second_game, tree_hash

REFUSED = IllegalAction.exit_code


def _cli(*args: object, input: str | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def _where(side: Side) -> list[object]:
    return ["-g", side.gd.path, "-i", side.key_path]


def _request(side: Side, first: int, *, head_seq: int | None = None, head: str | None = None,
             game: str | None = None, key: Identity | None = None, role: str | None = None) -> bytes:
    """A request file signed by hand (``key``: another signer), bypassing 'ask''s own checks."""
    replay = side.seat().replay
    request = codec.TakebackRequest(game=game or replay.game_hex, role=role or side.role, first=first,
                                    head_seq=replay.seq if head_seq is None else head_seq,
                                    head=head or replay.head.hex())
    sig = (key or side.identity).sign(codec.takeback_signing_input(request))
    return msgspec.json.encode(takeback.RequestFile(takeback.REQUEST_TYPE, 1, codec.Takeback(request, sig.hex())))


def _grant_refused(t: Table, data: bytes, tmp: Path, *, code: int = REFUSED) -> str:
    """blue's 'pbem takeback grant' of ``data``: refused with ``code``, blue's directory unchanged."""
    path = tmp / "request.json"
    path.write_bytes(data)
    before = tree_hash(t.blue.gd.path)
    out = _cli("takeback", "grant", path, *_where(t.blue))
    assert out.exit_code == code, out.output
    assert tree_hash(t.blue.gd.path) == before
    return out.output


def _public(side: Side) -> object:
    replay = session.load_public(side.gd)
    return replay.rules.view(replay.state, None)


# -- the happy path ---------------------------------------------------------------


def test_a_move_taken_back_by_agreement_through_the_cli(tmp_path):
    t = new_table(tmp_path / "game")
    t.play("red", "advance 1", "pass")
    t.play("blue", "advance 1", "pass")
    red, blue = _where(t.red), _where(t.blue)
    # red mis-types its move and sends it
    assert _cli("do", "advance 1", "pass", *red).exit_code == 0
    sent = _cli("send", "-o", tmp_path / "mistake.pbem", *red)
    assert sent.exit_code == 0, sent.output
    assert _cli("receive", tmp_path / "mistake.pbem", *blue).exit_code == 0
    mistake = t.red.gd.event_count() - 1
    log_before = [t.blue.gd.read_event(s) for s in range(t.blue.gd.event_count())]
    # red asks (nothing enters either log), blue grants in its turn
    asked = _cli("takeback", "ask", "-o", tmp_path / "ask.json", *red)
    assert asked.exit_code == 0, asked.output
    assert f"events {mistake}..{mistake}" in asked.output and t.red.gd.event_count() == mistake + 1
    assert _cli("do", "advance 1", *blue).exit_code == 0  # blue had begun to answer the mistake
    granted = _cli("takeback", "grant", tmp_path / "ask.json", "-o", tmp_path / "grant.pbem", *blue)
    assert granted.exit_code == 0, granted.output
    said = f"event {mistake} by red was taken back by agreement (red asked, blue granted in event {mistake + 1})"
    assert said in granted.output and "your draft (1 order(s)) was dropped" in granted.output
    assert _cli("receive", tmp_path / "grant.pbem", *red).exit_code == 0
    # red decides again, differently
    assert _cli("do", "advance 2", "pass", *red).exit_code == 0
    assert _cli("send", "-o", tmp_path / "again.pbem", *red).exit_code == 0
    assert _cli("receive", tmp_path / "again.pbem", *blue).exit_code == 0

    # The log keeps everything: every earlier event byte for byte, the span and the grant.
    assert [t.blue.gd.read_event(s) for s in range(len(log_before))] == log_before
    grant = codec.decode_body(codec.unwrap(t.blue.gd.read_event(mistake + 1)).body)
    assert grant.takeback is not None and grant.takeback.request.first == mistake and not grant.actions
    heads = set()
    for side in (t.red, t.blue):
        v = _cli("verify", side.gd.path)
        a = _cli("audit", side.gd.path)
        assert v.exit_code == 0 and a.exit_code == 0, (v.output, a.output)
        heads.add(session.load_public(side.gd).head)
        for cmd in ("log", "show"):
            out = _cli(cmd, *_where(side)) if cmd == "show" else _cli(cmd, "-g", side.gd.path)
            assert out.exit_code == 0 and said in out.output, out.output
    # blue's turn report covers red's events since blue's last orders: the span, the grant, the new move.
    report = tmp_path / "blue-report.txt"
    assert _cli("report", "--format", "text", "-o", report, *_where(t.blue)).exit_code == 0
    text = " ".join(report.read_text().split())
    assert said[0].upper() + said[1:] + "." in text and f"Taken back by agreement in event {mistake + 1}." in text
    log = _cli("log", "-g", t.blue.gd.path).output
    assert f"(taken back in event {mistake + 1})" in log.splitlines()[mistake]
    assert said in session.turn_summary(session.load_public(t.red.gd), [mistake + 1])  # the email body
    assert len(heads) == 1

    # The state equals a game where red played the second move directly.
    direct = new_table(tmp_path / "direct")
    direct.play("red", "advance 1", "pass")
    direct.play("blue", "advance 1", "pass")
    direct.play("red", "advance 2", "pass")
    assert _public(t.red) == _public(t.blue) == _public(direct.red)
    for role in ("red", "blue"):
        mine, theirs = t.side(role).seat().replay, direct.side(role).seat().replay
        assert mine.rules.view(mine.state, role) == theirs.rules.view(theirs.state, role)
        assert mine.pending() == theirs.pending()


def test_a_later_event_of_the_span_with_from_and_the_rebuild_keeps_earlier_takebacks(table):
    table.play("red", "advance 1", "pass")
    table.play("blue", "advance 1", "pass")
    red = table.red.seat()
    session.add_orders(red, ["advance 1"])
    session.send(red)  # the decision is still red's (attack or pass): not delivered yet
    red = table.red.seat()
    session.add_orders(red, ["pass"])
    sent = session.send(red)
    table.deliver(table.blue, Path(sent.turn_file).read_bytes())
    head = table.red.gd.event_count() - 1
    # Only the last event back (--from): the advance stands, the pass is taken back.
    asked = takeback.ask(table.red.seat(), first=head)
    assert (asked.request.first, asked.request.head_seq) == (head, head)
    granted = takeback.grant(table.blue.seat(), asked.path.read_bytes(), "ask")
    table.deliver(table.red, Path(granted.turn_file).read_bytes())
    replay = table.red.seat().replay
    assert replay.pending().role == "red" and replay.pending().kind == "act"  # attack or pass, after the advance
    table.play("red", "pass")
    # A second takeback later in the game rebuilds through the first one.
    table.play("blue", "advance 1", "pass")
    asked = takeback.ask(table.blue.seat())
    granted = takeback.grant(table.red.seat(), asked.path.read_bytes(), "ask")
    table.deliver(table.blue, Path(granted.turn_file).read_bytes())
    table.play("blue", "advance 2", "pass")
    for side in (table.red, table.blue):
        assert session.load_public(side.gd).rules.view(session.load_public(side.gd).state, None) == _public(table.red)
    view = _public(table.red)
    assert [(r.role, r.pos) for r in view.runners] == [("red", 2), ("blue", 3)]
    audit = session.audit(table.red.gd.read_events(), table.red.seat().rules)
    assert audit.replay.head == session.load_public(table.blue.gd).head


def test_a_secret_committed_again_after_a_takeback_the_new_commitment_wins(table):
    # red lays traps at square 2 (a Merkle set under 'red.traps', RACE 7), takes it back
    # and lays them at square 3 under the same label.
    table.play("red", "traps 2", "advance 1", "pass")
    asked = takeback.ask(table.red.seat())
    granted = takeback.grant(table.blue.seat(), asked.path.read_bytes(), "ask")
    table.deliver(table.red, Path(granted.turn_file).read_bytes())
    span = asked.request.first
    table.play("red", "traps 3", "advance 1", "pass")
    table.play("blue", "advance 3")  # onto square 3: red opens its trap there
    table.play("red", "open trap 3")
    table.play("blue", "pass")
    view = _public(table.blue)
    assert [(r.role, r.pos) for r in view.runners] == [("red", 1), ("blue", 2)]  # one step back (RACE 7)
    # The vault keeps the new secret only; a replay from red's side that has not seen the grant
    # yet does not take it for the taken-back commitment of the same label.
    red = table.red.seat()
    fresh = Replay(red.rules, role="red", known=red.vault.known_values(), known_salts=red.vault.known_salts())
    for seq in range(span + 1):
        fresh.apply_stored(table.red.gd.read_event(seq))
    assert fresh.value("red.traps") is None
    assert red.replay.value("red.traps") == red.vault.known_values()["red.traps"]
    assert red.replay.leaf("red.traps", "3") == b"1" and red.replay.leaf("red.traps", "2") == b"0"
    # Without a cache, the whole log replays to the same state from red's side.
    (table.red.gd.path / "cache" / "red.bin").unlink()
    again = table.red.seat().replay
    assert again.state == red.replay.state and again.head == red.replay.head
    # The audit knows the new set once red has opened everything (the old audit, which took a
    # label's first commitment, would have found the opening wrong and called it unopened).
    table.play("red", open_all=True)
    audit = session.audit(table.red.gd.read_events(), red.rules)
    assert audit.unopened == {"blue": ["blue.speed"]}
    assert audit.replay.leaf("red.traps", "3") == b"1"


# -- refusals -----------------------------------------------------------------------


def test_a_span_holding_the_opponents_event_is_refused(table, tmp_path):
    table.play("red", "advance 1", "pass")
    first = table.red.gd.event_count() - 1
    table.play("blue", "advance 1", "pass")
    table.play("red", "advance 1", "pass")
    out = _cli("takeback", "ask", "--from", first, *_where(table.red))
    assert out.exit_code == REFUSED and "your events since your opponent's last one" in out.output
    text = _grant_refused(table, _request(table.red, first), tmp_path)
    assert f"event {first + 3} by blue: grants red's takeback" in text and f"event {first + 1} is blue's" in text


def test_a_span_answering_dice_is_refused(table, tmp_path):
    # blue attacks; red's answer to the dice is red's first event after blue's.
    table.play("red", "advance 1", "pass")
    table.play("blue", "advance 1", "attack")
    for _ in range(4):
        red = table.red.seat()
        decision = red.replay.pending()
        if decision.role != "red":
            break
        kind = session.draft_replay(red)[0].pending().kind  # after red's answer to the dice, if owed
        table.play("red", *({"defend": ["defend block"], "move": ["advance 1", "pass"]}[kind]))
    first = next(i.seq for i in table.red.seat().replay.history if i.rolls is not None and i.author == "red")
    out = _cli("takeback", "ask", *_where(table.red))
    assert out.exit_code == REFUSED, out.output
    assert f"event {first} answers the dice" in out.output and "cannot be taken back" in out.output
    text = _grant_refused(table, _request(table.red, first), tmp_path)
    assert f"event {first} answers the dice" in text


def test_a_span_asking_for_dice_is_refused(table, tmp_path):
    red = table.red.seat()
    session.add_orders(red, ["advance 1", "attack"])
    sent = session.send(red)
    session.receive(table.blue.seat(), [("t", Path(sent.turn_file).read_bytes())], auto_reply=False)
    head = table.red.gd.event_count() - 1
    out = _cli("takeback", "ask", *_where(table.red))
    assert out.exit_code == REFUSED and f"event {head} asks for dice whose roll blue can already compute" \
        in out.output, out.output
    text = _grant_refused(table, _request(table.red, head), tmp_path)
    assert f"event {head + 1} by blue: grants red's takeback" in text and "asks for dice" in text


def test_a_span_opening_a_secret_is_refused(table, tmp_path):
    table.play("red", "reveal", "advance 1", "pass")
    head = table.red.gd.event_count() - 1
    out = _cli("takeback", "ask", *_where(table.red))
    assert out.exit_code == REFUSED and f"event {head} opens 'red.speed' (it was shown)" in out.output
    _grant_refused(table, _request(table.red, head), tmp_path)


def test_a_span_with_an_end_is_refused(table, tmp_path):
    red = table.red.seat()
    session.add_orders(red, ["advance 1", "pass"])
    sent = session.send(red, end=codec.DRAW_OFFER)
    table.deliver(table.blue, Path(sent.turn_file).read_bytes())
    head = table.red.gd.event_count() - 1
    out = _cli("takeback", "ask", *_where(table.red))
    assert out.exit_code == REFUSED and f"event {head} offers a draw" in out.output, out.output
    _grant_refused(table, _request(table.red, head), tmp_path)


def test_a_span_working_the_shared_deck_is_refused(table, monkeypatch):
    # The race game has no deck: the rebuilt game's deck ledger is made to differ, as
    # it does when the span holds a deck message (pbem.ledger records every one).
    table.play("red", "advance 1", "pass")
    from pbem.ledger import DeckData

    real = Replay._rebuilt

    class Worked:  # the ledger of the game before the span, without the span's deck work
        unchecked = None

        def data(self) -> DeckData:
            return DeckData(first={"r1": "red"})

    def rebuilt(self, first):
        r = real(self, first)
        r.ledger = Worked()
        return r

    monkeypatch.setattr(Replay, "_rebuilt", rebuilt)
    with pytest.raises(IllegalAction, match=r"events \d+\.\.\d+ work the shared deck: that cannot be taken back"):
        takeback.ask(table.red.seat())


def test_a_request_of_another_game_is_refused_as_a_foreign_file(table, tmp_path):
    table.play("red", "advance 1", "pass")
    other = second_game(table, tmp_path / "B")
    other.play("red", "advance 1", "pass")
    text = _grant_refused(table, _request(other.red, other.red.gd.event_count() - 1), tmp_path,
                          code=ForeignGame.exit_code)
    assert "takeback request of another game" in text
    refuse = _cli("takeback", "refuse", tmp_path / "request.json", "-g", table.blue.gd.path)
    assert refuse.exit_code == ForeignGame.exit_code


def test_a_request_not_signed_by_the_asker_is_refused(table, tmp_path):
    table.play("red", "advance 1", "pass")
    head = table.red.gd.event_count() - 1
    for key in (table.blue.identity, Identity.generate("mallory")):
        text = _grant_refused(table, _request(table.red, head, key=key), tmp_path)
        assert "the request is not signed by red's key from the genesis" in text
    # A player grants only the opponent's request (blue's own, signed by blue).
    text = _grant_refused(table, _request(table.red, head, key=table.blue.identity, role="blue"), tmp_path)
    assert "a player grants only the opponent's request" in text


def test_a_forged_grant_event_is_refused_by_the_receiver(table, tmp_path):
    """blue signs a grant carrying a request red never signed: red's receive refuses it."""
    table.play("red", "advance 1", "pass")
    head = table.red.gd.event_count() - 1
    blue = table.blue.seat()
    forged = msgspec.json.decode(_request(table.red, head, key=table.blue.identity), type=takeback.RequestFile)
    body = takeback._grant_body(blue.replay, "blue", forged.takeback, x_next=bytes(32),
                                reveal=session._my_reveal("blue", blue.replay, blue.vault))
    stored = session._sign(blue.identity, body)
    turn = tmp_path / "forged.pbem"
    turn.write_bytes(b"pbem-turn v1\n---\n" + stored + b"\n")
    before = tree_hash(table.red.gd.path)
    out = _cli("receive", turn, *_where(table.red))
    assert out.exit_code == REFUSED, out.output
    assert f"event {head + 1} by blue: grants red's takeback" in out.output and "not signed by red's key" in out.output
    assert tree_hash(table.red.gd.path) == before


def test_a_stale_request_is_refused(table, tmp_path):
    table.play("red", "advance 1", "pass")
    asked = takeback.ask(table.red.seat())
    table.play("blue", "advance 1", "pass")  # blue played on: the request is stale
    table.play("red", "advance 1", "pass")
    text = _grant_refused(table, asked.path.read_bytes(), tmp_path)
    assert "the request is stale" in text


def test_a_grant_out_of_turn_and_a_grant_granted_before_are_refused(table, tmp_path):
    table.play("red", "advance 1", "pass")
    asked = takeback.ask(table.red.seat())
    data = asked.path.read_bytes()
    granted = takeback.grant(table.blue.seat(), data, "ask")
    table.deliver(table.red, Path(granted.turn_file).read_bytes())
    text = _grant_refused(table, data, tmp_path)  # the decision is red's now
    assert "out of turn: the next decision is red (move)'s" in text
    table.play("red", "advance 2", "pass")
    text = _grant_refused(table, data, tmp_path)  # blue's turn again: the same request once more
    assert f"that request was granted already in event {granted.seqs[-1]}" in text


def test_ask_while_the_decision_is_still_mine_or_with_nothing_to_take_back(table):
    red = table.red.seat()
    with pytest.raises(IllegalAction, match="nothing to take back"):
        takeback.ask(red)  # the last event is blue's (its join)
    session.add_orders(red, ["advance 1"])
    session.send(red)
    with pytest.raises(IllegalAction, match="the next decision is still yours"):
        takeback.ask(table.red.seat())


def test_refuse_signs_nothing_and_says_how_to_tell_the_asker(table, tmp_path):
    table.play("red", "advance 1", "pass")
    takeback.ask(table.red.seat(), out=tmp_path / "ask.json")
    before = tree_hash(table.blue.gd.path)
    out = _cli("takeback", "refuse", tmp_path / "ask.json", "-g", table.blue.gd.path)
    assert out.exit_code == 0 and "not granted" in out.output and "pbem send --note" in out.output
    assert tree_hash(table.blue.gd.path) == before
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"type": "pbem-claim"}')
    assert _cli("takeback", "grant", bad, *_where(table.blue)).exit_code == 3


# -- format versions --------------------------------------------------------------------


def test_a_game_of_an_older_format_has_no_takeback(tmp_path, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(codec, "new_game_version", lambda clock: codec.TERMINAL_VERSION)  # pbem of decision 26
        t = new_table(tmp_path)
    t.play("red", "advance 1", "pass")
    assert codec.decode_body(codec.unwrap(t.red.gd.read_event(0)).body).v == 3
    out = _cli("takeback", "ask", *_where(t.red))
    assert out.exit_code == VersionMismatch.exit_code == 10, out.output
    assert "format version 3" in out.output and "no agreed takeback" in out.output
    # A grant event in such a game is malformed for every pbem (decision 9b: the version is the game's).
    red = t.red.seat()
    request = msgspec.json.decode(_request(t.red, red.replay.seq), type=takeback.RequestFile).takeback
    blue = t.blue.seat()
    body = takeback._grant_body(blue.replay, "blue", request, x_next=bytes(32),
                                reveal=session._my_reveal("blue", blue.replay, blue.vault))
    with pytest.raises(Exception, match="has no takebacks"):
        blue.replay.fork().apply_stored(session._sign(blue.identity, body))


def test_an_older_pbem_says_upgrade_for_a_log_with_a_grant(table, monkeypatch):
    table.play("red", "advance 1", "pass")
    asked = takeback.ask(table.red.seat())
    takeback.grant(table.blue.seat(), asked.path.read_bytes(), "ask")
    events = table.blue.gd.read_events()
    rules = session.rules_for(table.blue.gd)
    monkeypatch.setattr(codec, "FORMAT_VERSIONS", (1, 2, 3, 4))  # what pbem of decision 26 reads
    with pytest.raises(VersionMismatch, match=r"format version 7 is not supported .*upgrade pbem") as exc:
        r = Replay(rules)
        for stored in events:
            r.apply_stored(stored)
    assert exc.value.exit_code == 10


# -- the replay cache and the two-core path ----------------------------------------------


def test_a_long_log_with_a_grant_checks_the_same_on_one_and_two_cores(tmp_path, monkeypatch):
    t = new_table(tmp_path, scenario="marathon")
    for _ in range(18):
        t.play("red", "advance 1", "pass")
        t.play("blue", "advance 1", "pass")
    t.play("red", "traps 2", "advance 2", "pass")
    asked = takeback.ask(t.red.seat())
    granted = takeback.grant(t.blue.seat(), asked.path.read_bytes(), "ask")
    t.deliver(t.red, Path(granted.turn_file).read_bytes())
    t.play("red", "traps 3", "advance 1", "pass")
    for _ in range(14):
        t.play("blue", "advance 1", "pass")
        t.play("red", "advance 1", "pass")
    events = t.red.gd.read_events()
    assert len(events) >= 64 and events == t.blue.gd.read_events()
    rules = session.rules_for(t.red.gd)
    plain = Replay(rules)
    for stored in events:
        plain.apply_stored(stored)
    from pbem import logcheck

    results, paths = {}, []
    for name in ("_plain", "_deferred", "_fast"):  # which path checked the log (none falls back here)
        real = getattr(logcheck, name)
        monkeypatch.setattr(logcheck, name, lambda *a, _real=real, _name=name: paths.append(_name) or _real(*a))
    for cores in ("0", "1"):
        monkeypatch.setenv("PBEM_SECOND_CORE", cores)
        del paths[:]
        verified = session.load_public(t.red.gd, describe=False)
        audited = session.audit(events, rules).replay
        results[cores] = (verified.head, verified.state, audited.head, audited.state, audited.pending())
        assert verified.state == plain.state and verified.head == plain.head
        assert paths == (["_deferred", "_plain"] if cores == "0" else ["_fast"] * 2)
    assert results["0"] == results["1"]
    # Each player's replay cache (written at each send and receive) equals a replay of the whole log.
    for side in (t.red, t.blue):
        cached = side.seat().replay
        (side.gd.path / "cache" / f"{side.role}.bin").unlink()
        whole = side.seat().replay
        assert (cached.state, cached.head, cached.commitments, cached.opened, cached.history) == \
            (whole.state, whole.head, whole.commitments, whole.opened, whole.history)
        assert cached.value("red.traps") == whole.value("red.traps")


def test_vault_salts_are_the_vaults_own(table):
    """``VaultData.known_salts`` gives each secret's salt, which ``Replay.value`` checks."""
    data = table.red.seat().vault
    assert set(data.known_salts()) == set(data.secrets)
    assert VaultData(game="", role="red").known_salts() == {}


def test_the_request_travels_by_email_and_is_granted_from_the_message(table, tmp_path):
    table.play("red", "advance 1", "pass")
    out = _cli("takeback", "ask", "--eml", "--from-address", "red@example.org", "--to", "blue@example.org",
               "-o", tmp_path / "ask.json", *_where(table.red))
    assert out.exit_code == 0, out.output
    message = (tmp_path / "ask.eml").read_bytes()
    assert b"takeback request: events 2..2 by red" in message and b"pbem takeback grant" in message
    granted = _cli("takeback", "grant", tmp_path / "ask.eml", "-o", tmp_path / "grant.pbem", *_where(table.blue))
    assert granted.exit_code == 0, granted.output
    assert "event 2 by red was taken back by agreement (red asked, blue granted in event 3)" in granted.output
    # No address anywhere: refused before anything is signed or written.
    bare = _cli("takeback", "ask", "--eml", *_where(table.blue))
    assert bare.exit_code == 2 and "email needs --from and --to" in bare.output


def test_under_a_time_control_the_grant_is_a_signed_reply_and_the_asker_owes_since_it(tmp_path, monkeypatch):
    from pbem.claims import clock_status
    from pbem.game import DAY
    from tests.test_time_control import T0, body_of, timed_table

    t = timed_table(tmp_path, monkeypatch, reply_days=3, leave_days=2)
    monkeypatch.setenv("PBEM_NOW", str(T0 + DAY))
    t.play("red", "advance 1", "pass")
    asked = takeback.ask(t.red.seat())
    monkeypatch.setenv("PBEM_NOW", str(T0 + 5 * DAY))  # blue grants a day late: one day of its leave
    granted = takeback.grant(t.blue.seat(), asked.path.read_bytes(), "ask")
    t.deliver(t.red, Path(granted.turn_file).read_bytes())
    grant = body_of(t.red, granted.seqs[-1])
    assert grant.v == codec.RISTRETTO_CLOCK_VERSION == 8 and grant.time == T0 + 5 * DAY
    replay = t.red.seat().replay
    status = clock_status(replay)
    assert status is not None and (status.role, status.seq, status.since) == ("red", granted.seqs[-1], T0 + 5 * DAY)
    assert replay.leave_used == {"blue": DAY}
