"""Turn files by email: .eml out with threading, SMTP through a real server on
127.0.0.1 (aiosmtpd), and receipt from .eml, mbox and Maildir (issue 8 point 2)."""

from __future__ import annotations

import email
import email.policy
import mailbox
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem.cli import cli
from tests.conftest import new_table


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def mailing(tmp_path):
    t = new_table(tmp_path)
    for side, me, them in ((t.red, "red@axis.example", "blue@allies.example"),
                           (t.blue, "blue@allies.example", "red@axis.example")):
        local = side.gd.read_local()
        side.gd.write_local(type(local)(**{**{f: getattr(local, f) for f in local.__struct_fields__},
                                           "email": me, "opponent_email": them}))
    return t


def _parse(path: Path) -> email.message.EmailMessage:
    return email.message_from_bytes(path.read_bytes(), policy=email.policy.default)


def _turn_of(msg) -> bytes:
    (part,) = list(msg.iter_attachments())
    return part.get_content()


def test_send_eml_writes_a_threaded_message_with_the_turn_attached(mailing):
    t = mailing
    run("do", "-g", t.red.gd.path, "advance 2", "pass")
    run("send", "-g", t.red.gd.path, "--eml", "--note", "Tobruk <falls>")
    (eml,) = sorted(t.red.gd.outbox_dir.glob("*-000002.eml"))
    msg = _parse(eml)
    game = t.red.seat().replay.game_hex
    assert msg["Subject"] == f"[pbem {game[:8]}] Race (pbem test game) sprint: events 2 by red"
    assert msg["From"] == "red@axis.example" and msg["To"] == "blue@allies.example"
    assert msg["Message-ID"] == f"<pbem.{game[:16]}.2@axis.example>"
    assert msg["In-Reply-To"] == f"<pbem.{game[:16]}.1@allies.example>"
    assert f"<pbem.{game[:16]}.0@axis.example>" in msg["References"]
    body = msg.get_body(("plain",)).get_content()
    assert "Event 2 by red: advance 2; pass" in body and "note: Tobruk <falls>" in body
    assert _turn_of(msg) == eml.with_suffix(".pbem").read_bytes()
    # The opponent receives the whole message; the reply threads under it.
    assert "received events 2-2" in run("receive", "-g", t.blue.gd.path, eml).output
    run("do", "-g", t.blue.gd.path, "advance 1", "pass")
    run("send", "-g", t.blue.gd.path, "--eml")
    (reply,) = sorted(t.blue.gd.outbox_dir.glob("*-000003.eml"))
    assert _parse(reply)["In-Reply-To"] == msg["Message-ID"]


def test_email_needs_addresses(tmp_path):
    t = new_table(tmp_path)
    run("do", "-g", t.red.gd.path, "advance 1", "pass")
    result = CliRunner().invoke(cli, ["send", "-g", str(t.red.gd.path), "--eml"])
    assert result.exit_code == 2 and "--from and --to" in result.output


def _turns(t, rounds: int) -> list[Path]:
    """Play ``rounds`` exchanges by email messages; returns every .eml sent, in order."""
    emls = []
    for _ in range(rounds):
        for me, them in ((t.red, t.blue), (t.blue, t.red)):
            run("do", "-g", me.gd.path, "advance 1", "pass")
            run("send", "-g", me.gd.path, "--eml")
            emls.append(max(me.gd.outbox_dir.glob("*.eml")))
            run("receive", "-g", them.gd.path, emls[-1])
    return emls


@pytest.mark.parametrize("kind", ["mbox", "maildir"])
def test_receive_from_a_mailbox_takes_this_games_messages_in_order_and_skips_duplicates(tmp_path, kind):
    t = new_table(tmp_path / "a")
    other = new_table(tmp_path / "b")
    for game in (t, other):
        for side, me, them in ((game.red, "red@x.example", "blue@y.example"),
                               (game.blue, "blue@y.example", "red@x.example")):
            local = side.gd.read_local()
            side.gd.write_local(type(local)(**{**{f: getattr(local, f) for f in local.__struct_fields__},
                                               "email": me, "opponent_email": them}))
    emls = _turns(t, 2)  # events 2 (red), 3 (blue), 4 (red), 5 (blue)
    run("do", "-g", other.red.gd.path, "advance 1", "pass")
    run("send", "-g", other.red.gd.path, "--eml")
    foreign = max(other.red.gd.outbox_dir.glob("*.eml"))
    # A fresh copy of blue's game that has seen nothing after the join.
    late = new_copy(t, tmp_path / "late")
    box_path = tmp_path / ("box.mbox" if kind == "mbox" else "Maildir")
    box = mailbox.mbox(box_path) if kind == "mbox" else mailbox.Maildir(box_path)
    # both directions (a mailbox with the sent folder), out of order, a foreign game, a duplicate
    for path in (emls[2], foreign, emls[0], emls[3], emls[1], emls[2]):
        box.add(mailbox.Message(path.read_bytes()))
    box.flush()
    box.close()
    before = late.read_events()
    result = run("receive", "-g", late.path, box_path)
    assert "skipped 1 turn file(s) of other games" in result.output
    assert "received events 2-5" in result.output and "already held" not in result.output
    assert late.read_events() == t.blue.gd.read_events() and late.read_events()[:2] == before


def new_copy(t, path: Path):
    """Blue's game directory as it stood right after joining (events 0-1, its vault)."""
    import shutil

    from pbem.store import GameDir
    shutil.copytree(t.blue.gd.path, path)
    gd = GameDir(path)
    for event in sorted(gd.events_dir.glob("*.json"))[2:]:
        event.unlink()
    shutil.rmtree(path / "cache")  # it had seen the later events: it did not exist then
    return gd


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_send_through_a_real_smtp_server_on_loopback(mailing, tmp_path):
    from aiosmtpd.controller import Controller

    received: list[bytes] = []

    class Handler:
        async def handle_DATA(self, server, session, envelope):
            received.append(envelope.original_content or envelope.content)
            return "250 OK"

    port = _free_port()
    controller = Controller(Handler(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        config = tmp_path / "smtp.toml"
        config.write_text(f'[smtp]\nhost = "127.0.0.1"\nport = {port}\nsecurity = "none"\n')
        t = mailing
        run("do", "-g", t.red.gd.path, "advance 1", "pass")
        result = run("send", "-g", t.red.gd.path, "--smtp", "--smtp-config", config)
        assert f"127.0.0.1:{port}" in result.output
    finally:
        controller.stop()
    (message,) = received
    eml = tmp_path / "arrived.eml"
    eml.write_bytes(message)
    msg = _parse(eml)
    assert msg["To"] == "blue@allies.example" and _turn_of(msg).startswith(b"pbem-turn v1")
    assert "received events 2-2" in run("receive", "-g", t.blue.gd.path, eml).output
    assert not any("smtp" in p.name for p in t.red.gd.path.rglob("*"))  # nothing about SMTP kept in the game


def test_a_refused_smtp_connection_is_a_clear_error(mailing, tmp_path):
    config = tmp_path / "smtp.toml"
    config.write_text(f'[smtp]\nhost = "127.0.0.1"\nport = {_free_port()}\nsecurity = "none"\ntimeout = 5\n')
    run("do", "-g", mailing.red.gd.path, "advance 1", "pass")
    result = CliRunner().invoke(cli, ["send", "-g", str(mailing.red.gd.path), "--smtp", "--smtp-config", str(config)])
    # Issue 21: the event is signed and kept; the message says the same command resends it.
    assert result.exit_code == 13 and "could not send through 127.0.0.1" in result.output
    assert "event 2 signed and stored, but not delivered" in result.output
    assert "the same command resends it" in result.output
    before = mailing.red.gd.read_events()
    again = CliRunner().invoke(cli, ["send", "-g", str(mailing.red.gd.path), "--smtp", "--smtp-config", str(config)])
    assert again.exit_code == 13 and "nothing new to sign" in again.output
    assert mailing.red.gd.read_events() == before  # the retry signed nothing new


def test_send_checks_addresses_and_smtp_settings_before_it_signs(mailing, tmp_path):
    """Issue 21 point 4: nothing is signed that cannot be delivered."""
    red = mailing.red.gd
    run("do", "-g", red.path, "advance 1", "pass")
    before = red.read_events()
    missing = CliRunner().invoke(cli, ["send", "-g", str(red.path), "--smtp", "--smtp-config",
                                       str(tmp_path / "none.toml")])
    assert missing.exit_code == 9 and "no SMTP configuration" in missing.output
    bad = CliRunner().invoke(cli, ["send", "-g", str(red.path), "--eml", "--to", "nobody"])
    assert bad.exit_code == 2 and "--to: not an email address" in bad.output
    assert red.read_events() == before


def test_send_refuses_an_empty_or_unfinished_draft_while_the_decision_is_mine(mailing):
    """Issue 21 point 4: an empty draft while the decision is the sender's is
    refused; a draft after which the decision is still the sender's needs --force."""
    red = mailing.red.gd
    before = red.read_events()
    empty = CliRunner().invoke(cli, ["send", "-g", str(red.path)])
    assert empty.exit_code == 2 and "your draft is empty and the decision is yours" in empty.output
    run("do", "-g", red.path, "advance 1")  # the race asks attack or pass next, still red's decision
    half = CliRunner().invoke(cli, ["send", "-g", str(red.path)])
    assert half.exit_code == 2 and "after your draft the decision is still yours" in half.output
    assert red.read_events() == before
    forced = CliRunner().invoke(cli, ["send", "-g", str(red.path), "--force"])
    assert forced.exit_code == 0, forced.output
    assert len(red.read_events()) == len(before) + 1


def test_addresses_can_be_set_after_new_and_join(tmp_path):
    """Issue 21 point 8: 'pbem address' sets the game's addresses later;
    send --eml then uses them."""
    from tests.conftest import new_table

    t = new_table(tmp_path)
    red = t.red.gd
    assert "you: (not set)" in run("address", "-g", red.path).output
    bad = CliRunner().invoke(cli, ["address", "-g", str(red.path), "--email", "not-an-address"])
    assert bad.exit_code == 2 and "--email: not an email address" in bad.output
    run("address", "-g", red.path, "--email", "red@axis.example", "--opponent-email", "blue@allies.example")
    assert red.read_local().email == "red@axis.example"
    run("do", "-g", red.path, "advance 1", "pass")
    sent = run("send", "-g", red.path, "--eml")
    assert "email message" in sent.output


def test_an_email_needs_both_addresses(mailing):
    """One address alone is not enough: the message is refused naming both options."""
    from pbem import session

    red = mailing.red
    sent = session.export_turn(red.gd, 0, None)
    local = red.gd.read_local()
    red.gd.write_local(type(local)(**{**{f: getattr(local, f) for f in local.__struct_fields__},
                                      "opponent_email": ""}))
    with pytest.raises(Exception, match="email needs --from and --to"):
        session.email_for(red.gd, sent)
    assert session.email_for(red.gd, sent, recipient="blue@allies.example")
