"""``pbem fetch`` against a real IMAP server on 127.0.0.1 (tests/imapserver.py)
over TLS (issue 21 point 6): turn mail in every form a mail client makes,
taken in log order, marked $PbemTaken and \\Seen, never deleted; a second run
takes nothing twice; a foreign game's mail is left unmarked with its error; a
connection dropped half-way leaves the game consistent and the next run
continues; a refused login says so."""

from __future__ import annotations

import email
import email.policy
import sys
from email.message import EmailMessage
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem import session
from pbem.cli import cli
from pbem.mail import build_message
from pbem.turnfile import format_turn
from tests.conftest import Table, new_table
from tests.imapserver import ImapServer

RED, BLUE = "red@axis.example", "blue@allies.example"


def pbem(*args, home: Path, code: int = 0, env: dict | None = None):
    result = CliRunner().invoke(cli, [str(a) for a in args], env={"PBEM_HOME": str(home), **(env or {})})
    assert result.exit_code == code, result.output
    return result


def with_addresses(t: Table) -> Table:
    for side, me, them in ((t.red, RED, BLUE), (t.blue, BLUE, RED)):
        local = side.gd.read_local()
        side.gd.write_local(type(local)(**{**{f: getattr(local, f) for f in local.__struct_fields__},
                                           "email": me, "opponent_email": them}))
    return t


def red_events(t: Table, *orders: str) -> list[int]:
    """Red signs one event per order (the decision stays red's until 'pass')."""
    seqs = []
    for order in orders:
        seat = t.red.seat()
        session.add_orders(seat, [order])
        seqs.append(session.send(seat).seqs[-1])
    return seqs


def turn_of(t: Table, seq: int) -> bytes:
    """A turn file holding event ``seq`` of red's log alone."""
    replay = session.load_public(t.red.gd)
    return format_turn(replay.game_hex, "race 1", [t.red.gd.read_event(seq)], ["red"], [seq])


def mail_of(t: Table, seq: int, form: str) -> bytes:
    """Event ``seq`` as a mail client would deliver it: ``base64`` (pbem's own
    email: the turn file attached, base64), ``plain`` (pasted as the text of the
    message) or ``forwarded`` (the whole email forwarded as an attachment)."""
    turn = turn_of(t, seq)
    game = session.load_public(t.red.gd).game_hex
    built = build_message(turn=turn, turn_name=f"{game[:8]}-{seq:06d}.pbem", game=game, title="Race sprint",
                          seqs=[seq], author="red", sender=RED, recipient=BLUE, summary=f"event {seq}\n",
                          reply_to_seq=None, host_seq0_sender=RED)
    if form == "base64":
        return built
    msg = EmailMessage(policy=email.policy.SMTP)
    msg["From"], msg["To"] = RED, BLUE
    if form == "plain":
        msg["Subject"] = f"my move, event {seq}"
        msg.set_content(turn.decode("ascii"))
        return msg.as_bytes()
    msg["Subject"] = f"Fwd: event {seq}"
    msg.set_content("forwarding the turn, see the attachment\n")
    msg.add_attachment(email.message_from_bytes(built, policy=email.policy.SMTP))
    return msg.as_bytes()


def unrelated_mail() -> bytes:
    return b"From: aunt@example.org\r\nTo: blue@allies.example\r\nSubject: lunch\r\n\r\nSunday?\r\n"


@pytest.fixture
def game(tmp_path) -> Table:
    return with_addresses(new_table(tmp_path / "game"))


@pytest.fixture
def imap(tmp_path):
    with ImapServer(tmp_path) as server:
        yield server


def fetch_args(t: Table, cfg: Path, *more) -> list:
    return ["fetch", t.blue.gd.path, "--imap-config", cfg, *more]


def test_fetch_takes_turn_mail_in_log_order_marks_it_and_never_deletes(game, imap, tmp_path):
    t = game
    assert red_events(t, "reveal", "advance 2", "pass") == [2, 3, 4]
    other = new_table(tmp_path / "other")  # a game that is not on blue's machine
    foreign = (b"From: red@axis.example\r\nTo: blue@allies.example\r\nSubject: wrong game\r\n\r\n"
               + (other.red.gd.outbox_dir / sorted(p.name for p in other.red.gd.outbox_dir.iterdir())[0])
               .read_bytes())
    uids = {"4": imap.deliver(mail_of(t, 4, "plain")), "2": imap.deliver(mail_of(t, 2, "forwarded")),
            "lunch": imap.deliver(unrelated_mail()), "foreign": imap.deliver(foreign),
            "3": imap.deliver(mail_of(t, 3, "base64"))}
    cfg = imap.config(tmp_path / "imap.toml", password=imap.password)
    first = pbem(*fetch_args(t, cfg), home=tmp_path / "blue-home", code=11)
    out = first.output
    # Log order, whatever the mailbox order: 2 (forwarded), 3 (base64), then 4 (plain).
    assert out.index("received events 2-2") < out.index("received events 3-3") < out.index("received events 4-4")
    assert "3 message(s) taken, 1 without a turn file left alone" in out
    assert f"message {uids['foreign']} ('wrong game') left unmarked" in out
    assert "not a game on this machine" in out and "(exit 11)" in out
    assert t.blue.gd.event_count() == 5
    for key in ("2", "3", "4"):
        assert imap.flags(uids[key]) == {"$PbemTaken", "\\Seen"}
    assert imap.flags(uids["lunch"]) == set() and imap.flags(uids["foreign"]) == set()
    # Idempotent: nothing taken twice, the taken messages not even downloaded again, nor the
    # other mail (remembered in $PBEM_HOME/imap-seen.json); the foreign game's is named again.
    imap.commands.clear()
    again = pbem(*fetch_args(t, cfg), home=tmp_path / "blue-home", code=11)
    assert "0 message(s) taken" in again.output and "received" not in again.output
    assert not any(f"FETCH {uids[k]} (BODY.PEEK[])" in c for c in imap.commands for k in ("2", "3", "4", "lunch"))
    assert f"message {uids['foreign']} ('wrong game') left unmarked" in again.output
    assert t.blue.gd.event_count() == 5
    # Never deleted, moved or expunged.
    assert not any(word in c.upper() for c in imap.commands for word in ("EXPUNGE", "DELETE", "MOVE", "COPY"))


def test_a_connection_dropped_half_way_leaves_the_game_consistent_and_the_next_run_continues(game, imap, tmp_path):
    t = game
    red_events(t, "reveal", "advance 2", "pass")
    uids = [imap.deliver(mail_of(t, seq, "base64")) for seq in (2, 3, 4)]
    cfg = imap.config(tmp_path / "imap.toml", password=imap.password)
    # FETCH 1 lists sizes, FETCH 2 and 3 download events 2 and 3; then the server drops the connection.
    imap.drop_after_fetches = 3
    dropped = pbem(*fetch_args(t, cfg), home=tmp_path / "h", code=14)
    assert "dropped the connection" in dropped.output and "run the command again" in dropped.output
    assert "received events 2-2" in dropped.output and "received events 3-3" in dropped.output
    assert t.blue.gd.event_count() == 4  # events 2 and 3 arrived whole; nothing half-written
    assert all(imap.flags(u) == set() for u in uids)  # nothing marked after the drop
    assert pbem("verify", t.blue.gd.path, home=tmp_path / "h").exit_code == 0
    again = pbem(*fetch_args(t, cfg), home=tmp_path / "h")
    assert "already held events 2-2" in again.output and "received events 4-4" in again.output
    assert all(imap.flags(u) == {"$PbemTaken", "\\Seen"} for u in uids)
    assert t.blue.gd.event_count() == 5


def test_a_refused_login_names_the_server_and_the_password_sources(game, imap, tmp_path):
    t = game
    red_events(t, "advance 2", "pass")
    uid = imap.deliver(mail_of(t, 2, "base64"))
    cfg = imap.config(tmp_path / "imap.toml", password="not the password")
    refused = pbem(*fetch_args(t, cfg), home=tmp_path / "h", code=2)
    assert f"the IMAP server 127.0.0.1:{imap.port} refused the login of '{imap.user}'" in refused.output
    assert "AUTHENTICATIONFAILED" in refused.output and "password_command" in refused.output
    assert t.blue.gd.event_count() == 2 and imap.flags(uid) == set() and imap.logins == 0


@pytest.mark.parametrize("security", ["ssl", "starttls", "none"])
def test_each_security_mode_against_a_real_server(game, tmp_path, security):
    """Implicit TLS (993's way), STARTTLS, and plain text on loopback; the
    server's certificate is checked against cafile (a self-signed one here)."""
    t = game
    red_events(t, "advance 2", "pass")
    with ImapServer(tmp_path, security=security) as server:
        uid = server.deliver(mail_of(t, 2, "base64"))
        cfg = server.config(tmp_path / "imap.toml", password=server.password)
        out = pbem(*fetch_args(t, cfg), home=tmp_path / "h").output
        assert "received events 2-2" in out and server.flags(uid) == {"$PbemTaken", "\\Seen"}
        if security == "starttls":
            assert any(c.endswith("STARTTLS") for c in server.commands)


def test_an_unknown_certificate_is_refused(game, imap, tmp_path):
    cfg = imap.config(tmp_path / "imap.toml", password=imap.password)
    cfg.write_text(cfg.read_text().replace(f'cafile = "{imap.cafile}"\n', ""))
    refused = pbem(*fetch_args(game, cfg), home=tmp_path / "h", code=14)
    assert "could not connect to the IMAP server" in refused.output and "CERTIFICATE_VERIFY_FAILED" in refused.output


def test_plain_text_only_for_a_loopback_host(game, tmp_path):
    cfg = tmp_path / "imap.toml"
    cfg.write_text('[imap]\nhost = "mail.example.org"\nsecurity = "none"\nusername = "me"\n')
    refused = pbem(*fetch_args(game, cfg), home=tmp_path / "h", code=3)
    assert "accepted only for a loopback host" in refused.output


def test_password_sources_a_command_the_environment_and_a_literal(game, tmp_path):
    """The one credentials module: password_command, then $PBEM_IMAP_PASSWORD
    with a warning; a password outside ASCII travels as an IMAP literal."""
    t = game
    red_events(t, "advance 2", "pass")
    secret = "Kübelwagen \"41\""
    with ImapServer(tmp_path, password=secret) as server:
        server.deliver(mail_of(t, 2, "base64"))
        cfg = server.config(tmp_path / "imap.toml", password=None)
        none = pbem(*fetch_args(t, cfg), home=tmp_path / "h", code=2)
        assert "no IMAP password" in none.output and "PBEM_IMAP_PASSWORD" in none.output
        by_env = pbem(*fetch_args(t, cfg), home=tmp_path / "h", env={"PBEM_IMAP_PASSWORD": secret})
        assert "warning: the mail password comes from $PBEM_IMAP_PASSWORD" in by_env.output
        assert "received events 2-2" in by_env.output
        assert any("LOGIN" in c and c.endswith("{literal}") for c in server.commands)  # the literal was used
        script = tmp_path / "pw.py"
        script.write_text(f"print({secret!r})\n")
        cfg.write_text(cfg.read_text() + f"password_command = '{sys.executable} {script}'\n")
        by_command = pbem(*fetch_args(t, cfg), home=tmp_path / "h")
        assert "warning" not in by_command.output and "0 message(s) taken" in by_command.output
        assert server.logins == 2


def test_new_and_join_list_the_game_for_fetch(tmp_path, monkeypatch):
    """Without GAMES, fetch takes every game 'pbem new' or 'pbem join' made on this machine."""
    home = tmp_path / "home"
    monkeypatch.setenv("PBEM_HOME", str(home))
    assert pbem("keygen", "-o", tmp_path / "red.key", home=home).exit_code == 0
    assert pbem("keygen", "-o", tmp_path / "blue.key", home=home).exit_code == 0
    blue_pub = (tmp_path / "blue.key.pub").read_text().strip()
    pbem("new", tmp_path / "g", "--rules", "race", "--scenario", "sprint", "--role", "red", "--opponent", blue_pub,
         "--order", "setup speed 2", "-i", tmp_path / "red.key", home=home)
    assert (home / "games").read_text().splitlines() == [str((tmp_path / "g").absolute())]
    cfg = tmp_path / "imap.toml"
    cfg.write_text('[imap]\nhost = "127.0.0.1"\nport = 1\nsecurity = "none"\nusername = "me"\npassword = "x"\n')
    cfg.chmod(0o600)
    # The listed game is found (its key unlocked) and only then the closed port is met.
    out = pbem("fetch", "--imap-config", cfg, home=home, code=14).output
    assert "could not connect to the IMAP server 127.0.0.1:1" in out


def test_a_server_that_keeps_no_keywords_gets_seen_alone_and_duplicates_are_recognised(game, tmp_path):
    """RFC 3501 allows a server without \\* in PERMANENTFLAGS: pbem then marks \\Seen
    only, looks at every message each run, and what it holds is 'already held'."""
    t = game
    red_events(t, "advance 2", "pass")
    with ImapServer(tmp_path, keywords=False) as server:
        uid = server.deliver(mail_of(t, 2, "base64"))
        cfg = server.config(tmp_path / "imap.toml", password=server.password)
        assert "received events 2-2" in pbem(*fetch_args(t, cfg), home=tmp_path / "h").output
        assert server.flags(uid) == {"\\Seen"}
        again = pbem(*fetch_args(t, cfg), home=tmp_path / "h").output
        assert "already held events 2-2" in again and t.blue.gd.event_count() == 3
        assert not any("$PbemTaken" in c for c in server.commands)


def test_a_damaged_or_out_of_order_message_fails_alone_and_the_others_are_taken(game, imap, tmp_path):
    t = game
    red_events(t, "reveal", "advance 2", "pass")
    game_id = session.load_public(t.red.gd).game_hex
    damaged = imap.deliver(b"From: red@axis.example\r\nSubject: garbled\r\n\r\npbem-turn v1\r\ngame: "
                           + game_id.encode() + b"\r\n---\r\n{\"not\": \"an event\"}\r\n")
    late = imap.deliver(mail_of(t, 4, "base64"))  # event 4 without event 3 before it
    first = imap.deliver(mail_of(t, 2, "base64"))
    cfg = imap.config(tmp_path / "imap.toml", password=imap.password)
    out = pbem(*fetch_args(t, cfg), home=tmp_path / "h", code=3).output
    assert "received events 2-2" in out and "1 message(s) taken" in out
    assert f"message {damaged} ('garbled') left unmarked" in out and "(exit 3)" in out
    assert f"message {late} (" in out and t.blue.gd.event_count() == 3
    assert imap.flags(first) == {"$PbemTaken", "\\Seen"} and imap.flags(late) == set() == imap.flags(damaged)
    # Event 3 arrives: the next run takes it and then the message that was out of order.
    imap.deliver(mail_of(t, 3, "plain"))
    again = pbem(*fetch_args(t, cfg), home=tmp_path / "h", code=3).output
    assert again.index("received events 3-3") < again.index("received events 4-4")
    assert imap.flags(late) == {"$PbemTaken", "\\Seen"} and t.blue.gd.event_count() == 5


def test_settings_errors_name_the_file_or_the_mailbox(game, imap, tmp_path):
    missing = pbem(*fetch_args(game, tmp_path / "none.toml"), home=tmp_path / "h", code=9)
    assert "no IMAP configuration at" in missing.output and "README" in missing.output
    cfg = imap.config(tmp_path / "imap.toml", password=imap.password, extra='colour = "blue"\n')
    unknown = pbem(*fetch_args(game, cfg), home=tmp_path / "h", code=3)
    assert str(cfg) in unknown.output and "colour" in unknown.output
    cfg = imap.config(tmp_path / "imap.toml", password=imap.password, mailbox="Turns")
    nobox = pbem(*fetch_args(game, cfg), home=tmp_path / "h", code=2)
    assert "has no mailbox 'Turns'" in nobox.output
