"""Resignation and draws: signed terminal events (docs/protocol.md decision 26,
issue 21 point 8, PLAN "Settled": --open-all is a terminal event)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem import codec, session
from pbem.errors import IllegalAction, VerifyError
from pbem.game import Replay
from pbem.identity import Identity
from tests.conftest import Table


def _mid_game(table: Table) -> None:
    table.play("red", "advance 1", "pass")
    table.play("blue", "advance 1", "pass")


def _send_end(table: Table, role: str, end: str, **kw) -> bytes:
    me, other = table.side(role), table.blue if role == "red" else table.red
    seat = me.seat()
    if end == codec.RESIGN:
        sent = session.resign(seat, **kw)
    elif end == codec.DRAW_ACCEPT:
        sent = session.accept_draw(seat, **kw)
    else:
        sent = session.send(seat, end=end, **kw)
    data = Path(sent.turn_file).read_bytes()
    table.deliver(other, data)
    return data


def test_a_new_game_is_played_at_the_format_version_with_terminal_events(table):
    genesis = codec.decode_body(codec.unwrap(table.red.gd.read_event(0)).body)
    # Since decision 28 'pbem new' writes version 5: version 3 with takebacks, still with ends.
    assert codec.TERMINAL_VERSION == 3 and genesis.v == codec.RISTRETTO_VERSION == 7 and codec.has_ends(genesis.v)


def test_resign_mid_game_ends_it_with_the_opponent_as_winner_and_opens_every_secret(table):
    _mid_game(table)
    _send_end(table, "red", codec.RESIGN, note="well played")
    for side in (table.red, table.blue):
        replay = side.seat().replay
        outcome = replay.outcome()
        assert outcome is not None and outcome.winner == "blue" and "red resigned" in outcome.summary
        assert replay.pending() is None
        assert replay.unopened("red") == []
        assert replay.history[-1].end == codec.RESIGN
    # The winner's audit is complete from its side; after blue's openings, for anyone.
    blue = table.blue.seat()
    assert session.audit(blue.gd.read_events(), blue.rules).unopened.keys() == {"blue"}
    table.play("blue", open_all=True)
    audit = session.audit(table.red.gd.read_events(), table.red.seat().rules)
    assert audit.unopened == {} and audit.replay.outcome().winner == "blue"
    # The public verification reaches the same end.
    public = session.load_public(table.red.gd)
    assert public.outcome() == audit.replay.outcome()


def test_nothing_but_openings_follows_a_terminal_event(table):
    _mid_game(table)
    _send_end(table, "red", codec.RESIGN)
    blue = table.blue.seat()
    with pytest.raises(IllegalAction, match="game is over"):
        session.add_orders(blue, ["advance 1"])
    for end in (codec.RESIGN, codec.DRAW_OFFER):
        with pytest.raises(IllegalAction, match="game is over"):
            session._require_ends(blue.replay, end)
    # A forged-by-hand event after the end: an action, or another end, is refused (exit 5).
    for end, actions in ((codec.DRAW_OFFER, []), ("", [codec.raw({"type": "pass"})])):
        body = session._body(blue.replay, "blue", blue.vault, [], x_next=bytes(32), end=end)
        body = codec.Body(**{**{f: getattr(body, f) for f in body.__struct_fields__}, "actions": actions})
        stored = session._sign(blue.identity, body)
        with pytest.raises(IllegalAction, match="game is over") as exc:
            blue.replay.fork().apply_stored(stored)
        assert exc.value.exit_code == 5


def test_a_resignation_out_of_turn_or_by_another_key_is_refused(table):
    _mid_game(table)
    blue = table.blue.seat()  # red's decision now
    with pytest.raises(IllegalAction, match="decision is yours"):
        session.resign(blue)
    # Signed by hand out of turn: refused by the receiver, exit 5, naming the signer.
    body = session._body(blue.replay, "blue", blue.vault, [], x_next=bytes(32), end=codec.RESIGN,
                         extra_reveals=blue.replay.unopened("blue"))
    stored = session._sign(blue.identity, body)
    with pytest.raises(IllegalAction, match=r"event \d+ by blue: out of turn"):
        table.red.seat().replay.fork().apply_stored(stored)
    # red's resignation signed with another key (blue's, or a stranger's): refused, exit 4.
    red = table.red.seat()
    body = session._body(red.replay, "red", red.vault, [], x_next=bytes(32), end=codec.RESIGN,
                         extra_reveals=red.replay.unopened("red"))
    for key in (blue.identity, Identity.generate("mallory")):
        with pytest.raises(VerifyError, match="signature is not valid for red's key") as exc:
            blue.replay.fork().apply_stored(session._sign(key, body))
        assert exc.value.exit_code == 4


def test_a_resignation_must_open_every_commitment_of_its_author(table):
    _mid_game(table)
    red = table.red.seat()
    body = session._body(red.replay, "red", red.vault, [], x_next=bytes(32), end=codec.RESIGN)
    with pytest.raises(IllegalAction, match="resigns without opening 1 of its commitments"):
        table.blue.seat().replay.fork().apply_stored(session._sign(red.identity, body))


def test_a_draw_offered_and_accepted_ends_the_game_drawn_with_both_signatures(table):
    table.play("red", "advance 1", "pass")
    blue = table.blue.seat()
    session.add_orders(blue, ["advance 1", "pass"])
    _send_end(table, "blue", codec.DRAW_OFFER)  # the offer rides on blue's move
    red = table.red.seat()
    assert red.replay.standing_offer() == ("blue", red.replay.seq)
    assert red.replay.outcome() is None
    _send_end(table, "red", codec.DRAW_ACCEPT)
    for side in (table.red, table.blue):
        outcome = side.seat().replay.outcome()
        assert outcome is not None and outcome.winner is None and "drawn by agreement" in outcome.summary
    table.play("blue", open_all=True)
    assert session.audit(table.red.gd.read_events(), red.rules).unopened == {}


def test_a_draw_declined_or_played_on_lapses(table):
    table.play("red", "advance 1", "pass")
    session.add_orders(table.blue.seat(), ["advance 1", "pass"])
    _send_end(table, "blue", codec.DRAW_OFFER)
    red = table.red.seat()
    with pytest.raises(IllegalAction, match="accept or decline it"):
        session._require_ends(red.replay, codec.DRAW_OFFER)
    _send_end(table, "red", codec.DRAW_DECLINE)
    assert table.blue.seat().replay.standing_offer() is None
    with pytest.raises(IllegalAction, match="no draw offer of your opponent stands"):
        session._require_ends(table.red.seat().replay, codec.DRAW_ACCEPT)
    # Offered again; red plays on (a move declines it, as in chess).
    table.play("red", "advance 1", "pass")
    session.add_orders(table.blue.seat(), ["advance 1", "pass"])
    _send_end(table, "blue", codec.DRAW_OFFER)
    assert table.red.seat().replay.standing_offer() is not None
    table.play("red", "advance 1", "pass")
    assert table.red.seat().replay.standing_offer() is None


def test_open_all_is_refused_while_the_game_goes_on(table):
    _mid_game(table)
    with pytest.raises(IllegalAction, match="only when the game is over"):
        session.require_game_over_for_open_all(table.red.seat().replay)
    out = _cli("send", "-g", str(table.red.gd.path), "-i", str(table.red.key_path), "--open-all")
    assert out.exit_code == 5 and "only when the game is over" in out.output
    assert table.red.gd.event_count() == table.red.seat().replay.seq + 1 == 4  # nothing signed


def test_an_older_pbem_says_which_format_version_a_new_game_needs(table, monkeypatch):
    from pbem.errors import VersionMismatch

    rules = table.red.seat().rules
    monkeypatch.setattr(codec, "FORMAT_VERSIONS", (1, 2))  # what pbem before decision 26 reads
    # A new game is at version 7 since decision 29 (3 with takebacks and the Ristretto255 deck).
    with pytest.raises(VersionMismatch, match=r"format version 7 is not supported .*upgrade pbem") as exc:
        Replay(rules).apply_stored(table.red.gd.read_event(0))
    assert exc.value.exit_code == 10
    with pytest.raises(VersionMismatch, match=r"format version 7 is not supported .*upgrade pbem"):
        table.red.seat()


def test_a_resignation_survives_the_replay_cache(table):
    _mid_game(table)
    _send_end(table, "red", codec.RESIGN)
    first = table.blue.seat().replay  # from the cache written at receive
    again = session.load_public(table.blue.gd)
    assert first.outcome() == again.outcome() and first.ended is not None


def _cli(*args: str, input: str | None = None):
    from click.testing import CliRunner

    from pbem.cli import cli

    return CliRunner().invoke(cli, list(args), input=input)


def test_pbem_resign_asks_first_and_says_the_game_is_over(table):
    _mid_game(table)
    red = table.red
    where = ["-g", str(red.gd.path), "-i", str(red.key_path)]
    no = _cli("resign", *where, input="n\n")
    assert no.exit_code == 1 and "Resign this game?" in no.output
    assert red.seat().replay.outcome() is None
    blue_out = _cli("resign", "-g", str(table.blue.gd.path), "-i", str(table.blue.key_path), "--yes")
    assert blue_out.exit_code == 5 and "decision is yours" in blue_out.output  # not blue's turn
    ok = _cli("resign", *where, "--yes")
    assert ok.exit_code == 0, ok.output
    assert "game over: red resigned" in ok.output
    again = _cli("resign", *where, "--yes")  # a retry writes the same turn file, signs nothing new
    assert again.exit_code == 0 and "already signed" in again.output
    assert red.gd.event_count() == red.seat().replay.seq + 1
    after = _cli("draw", "offer", *where)
    assert after.exit_code == 5 and "game is over" in after.output
    mid = _cli("send", *where, "--open-all")
    assert mid.exit_code == 0, mid.output  # after the end --open-all is allowed (nothing left to open)


def test_pbem_draw_offer_accept_through_the_command_line(table):
    table.play("red", "advance 1", "pass")
    blue = ["-g", str(table.blue.gd.path), "-i", str(table.blue.key_path)]
    red = ["-g", str(table.red.gd.path), "-i", str(table.red.key_path)]
    assert _cli("do", *blue, "advance 1", "pass").exit_code == 0
    offered = _cli("draw", "offer", *blue)
    assert offered.exit_code == 0, offered.output
    early = _cli("send", *red, "--open-all")
    table.deliver(table.red, Path(offered.output.split("turn file ")[1].split(" (events")[0]).read_bytes())
    assert early.exit_code == 5 and "only when the game is over" in early.output
    accepted = _cli("draw", "accept", *red, "--yes")
    assert accepted.exit_code == 0, accepted.output
    assert "drawn by agreement" in accepted.output


def test_show_log_verify_and_audit_say_how_the_game_ended(table):
    table.play("red", "advance 1", "pass")
    blue = ["-g", str(table.blue.gd.path), "-i", str(table.blue.key_path)]
    red = ["-g", str(table.red.gd.path), "-i", str(table.red.key_path)]
    session.add_orders(table.blue.seat(), ["advance 1", "pass"])
    _send_end(table, "blue", codec.DRAW_OFFER)
    shown = _cli("show", *red)
    assert "blue offers a draw (event" in shown.output and "pbem draw accept" in shown.output
    _send_end(table, "red", codec.RESIGN)
    shown = _cli("show", *blue)
    assert "game over: red resigned in event" in shown.output and "blue wins" in shown.output
    log = _cli("log", "-g", str(table.blue.gd.path))
    assert "[offers a draw]" in log.output and "[resigns the game]" in log.output
    import json

    items = json.loads(_cli("log", "-g", str(table.blue.gd.path), "--json").output)
    assert [i.get("end") for i in items if "end" in i] == [codec.DRAW_OFFER, codec.RESIGN]
    verified = _cli("verify", str(table.blue.gd.path))
    assert verified.exit_code == 0 and "game over: red resigned" in verified.output
    audit = _cli("audit", str(table.blue.gd.path))
    assert audit.exit_code == 0 and "not yet opened" in audit.output and "blue" in audit.output
    session.send(table.blue.seat(), open_all=True)
    audit = _cli("audit", str(table.blue.gd.path))
    assert audit.exit_code == 0 and "not yet opened" not in audit.output, audit.output


def test_a_game_of_an_older_format_says_it_has_no_signed_resignation(table):
    from pbem.errors import VersionMismatch

    replay = table.red.seat().replay
    replay.version = codec.FORMAT_VERSION  # a game created before decision 26
    with pytest.raises(VersionMismatch, match="format version 1, fixed by its genesis, which has no signed "
                                              "resignation") as exc:
        session._require_ends(replay, codec.RESIGN)
    assert exc.value.exit_code == 10


def test_the_codec_reads_end_only_at_the_terminal_versions():
    body = codec.Body(v=1, game="11" * 32, seq=1, prev="22" * 32, author="red",
                      entropy=codec.Entropy(commit="33" * 32), end=codec.RESIGN)
    with pytest.raises(codec.CodecError, match="version 1 has no resignations or draws"):
        codec.decode_body(codec.canonical(body))
    ok = codec.decode_body(codec.canonical(codec.Body(**{**{f: getattr(body, f) for f in body.__struct_fields__},
                                                         "v": 3})))
    assert ok.end == codec.RESIGN
    timed = codec.Body(**{**{f: getattr(body, f) for f in body.__struct_fields__}, "v": 4})
    with pytest.raises(codec.CodecError, match="needs a signed time"):
        codec.decode_body(codec.canonical(timed))


def test_receive_refuses_an_action_after_the_end_and_stores_nothing(table):
    _mid_game(table)
    _send_end(table, "red", codec.RESIGN)
    blue = table.blue.seat()
    body = session._body(blue.replay, "blue", blue.vault, [], x_next=bytes(32))
    body = codec.Body(**{**{f: getattr(body, f) for f in body.__struct_fields__},
                         "actions": [codec.raw({"type": "pass"})]})
    stored = session._sign(blue.identity, body)
    from pbem.turnfile import format_turn

    turn = format_turn(blue.replay.game_hex, "race 1", [stored], ["blue"], [body.seq])
    before = table.red.gd.event_count()
    with pytest.raises(IllegalAction, match="game is over; only openings") as exc:
        session.receive(table.red.seat(), [("late", turn)])
    assert exc.value.exit_code == 5 and table.red.gd.event_count() == before


def test_sending_orders_declines_a_standing_offer_and_says_so(table):
    table.play("red", "advance 1", "pass")
    session.add_orders(table.blue.seat(), ["advance 1", "pass"])
    _send_end(table, "blue", codec.DRAW_OFFER)
    red = ["-g", str(table.red.gd.path), "-i", str(table.red.key_path)]
    assert _cli("do", *red, "advance 1", "pass").exit_code == 0
    out = _cli("send", *red)
    assert out.exit_code == 0, out.output
    assert "blue's draw offer of event" in out.output and "declined" in out.output


def test_pbem_draw_decline_through_the_command_line(table):
    table.play("red", "advance 1", "pass")
    session.add_orders(table.blue.seat(), ["advance 1", "pass"])
    _send_end(table, "blue", codec.DRAW_OFFER)
    red = ["-g", str(table.red.gd.path), "-i", str(table.red.key_path)]
    early = _cli("draw", "accept", "-g", str(table.blue.gd.path), "-i", str(table.blue.key_path), "--yes")
    assert early.exit_code == 5  # not blue's decision, and the offer is blue's own
    out = _cli("draw", "decline", *red)
    assert out.exit_code == 0, out.output
    assert table.red.seat().replay.standing_offer() is None
    assert table.red.seat().replay.history[-1].end == codec.DRAW_DECLINE
    assert table.red.seat().replay.outcome() is None
