"""``pbem watch`` and emailed automatic answers (issue 21 points 5 and 6) against
real servers on 127.0.0.1: SMTP (aiosmtpd) out, IMAP (tests/imapserver.py) in.

The issue's "Done when": two players play a whole short game only through
email (each 'pbem send --smtp' out, 'pbem watch --once' fetching over IMAP
and answering automatically), ending with a clean, complete 'pbem audit' on
both sides. Two games: the race toy (tests/race), scenario "sprint", played
by ``script`` below to its end (committed secret speeds, dashes whose die
waits only for the opponent's entropy, answered automatically, attacks whose
hit the defender answers by hand), so that both players open everything and
the audit is complete; and RitD's demo scenario by its demo script
(rules/ritd/demo.py: deployment, the shared deck's automatic steps, combat),
which stops at Month 2 without an outcome, so its audit checks legality
with the secrets still closed. Each takes seconds.
"""

from __future__ import annotations

import email
import email.policy
import imaplib
import os
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pbem import session
from pbem.cli import cli
from pbem.deck import DECK
from pbem.identity import load_identity
from pbem.rulesapi import DICE
from pbem.store import GameDir
from tests.conftest import PASSPHRASE
from tests.imapserver import ImapServer
from tests.test_cli import ROOT, plugin_env
from tests.test_fetch import mail_of, red_events, with_addresses


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Player:
    role: str
    address: str
    home: Path
    key: Path
    gd: GameDir
    imap: ImapServer
    sent_by_hand: int = 0
    log: list[str] = field(default_factory=list)

    def pbem(self, *args, code: int = 0) -> str:
        result = CliRunner().invoke(cli, [str(a) for a in args], env={"PBEM_HOME": str(self.home)})
        assert result.exit_code == code, f"{self.role}: pbem {' '.join(map(str, args))}\n{result.output}"
        self.log.append(result.output)
        return result.output

    def seat(self) -> session.Seat:
        return session.load_seat(self.gd, load_identity(self.key, PASSPHRASE))


class Post:
    """One SMTP server that files each message into its recipient's IMAP mailbox."""

    def __init__(self) -> None:
        from aiosmtpd.controller import Controller

        self.boxes: dict[str, ImapServer] = {}
        self.delivered: list[tuple[str, str]] = []
        post = self

        class Handler:
            async def handle_DATA(self, server, smtp_session, envelope):
                for rcpt in envelope.rcpt_tos:
                    post.boxes[rcpt].deliver(envelope.original_content or envelope.content)
                    msg = email.message_from_bytes(envelope.original_content or envelope.content,
                                                   policy=email.policy.default)
                    post.delivered.append((rcpt, str(msg["Subject"])))
                return "250 OK"

        self.port = _free_port()
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)

    def config(self, home: Path) -> None:
        home.mkdir(parents=True, exist_ok=True)
        (home / "smtp.toml").write_text(f'[smtp]\nhost = "127.0.0.1"\nport = {self.port}\nsecurity = "none"\n')


def _player(tmp_path: Path, role: str, imap: ImapServer, post: Post) -> Player:
    home = tmp_path / f"{role}-home"
    post.config(home)
    imap.config(home / "imap.toml", password=imap.password)
    address = imap.user
    post.boxes[address] = imap
    player = Player(role, address, home, tmp_path / f"{role}.key", GameDir(tmp_path / role), imap)
    player.pbem("keygen", "-o", player.key)
    return player


def _save_invitation(imap: ImapServer, path: Path) -> None:
    """What a person does with the invitation: saves the message from the mailbox."""
    client = imaplib.IMAP4_SSL("127.0.0.1", imap.port, ssl_context=ssl.create_default_context(cafile=imap.cafile))
    client.login(imap.user, imap.password)
    client.select("INBOX")
    _, data = client.uid("SEARCH", "ALL")
    _, got = client.uid("FETCH", data[0].split()[-1].decode(), "(BODY.PEEK[])")
    path.write_bytes(got[0][1])
    client.logout()


def _my_turn(p: Player) -> bool:
    seat = p.seat()
    probe, _ = session.draft_replay(seat)
    decision = probe.pending()
    return probe.outcome() is None and decision is not None and decision.role == p.role \
        and decision.kind not in (DICE, DECK)


def script(state, role: str, ctx=None) -> list[str]:
    """The race: dash at every move (its die needs only the opponent's entropy: an
    automatic answer), then attack from an even square, else pass; block every hit."""
    me = state.runners[role]
    return {"move": ["dash"], "act": ["attack"] if me.pos % 2 == 0 else ["pass"],
            "defend": ["defend block"]}[state.phase]


Script = Callable[[Any, str, Any], "list[str] | None"]


def _play_turn(p: Player, orders_of: Script) -> bool:
    """The script's orders until the decision leaves ``p``, then 'pbem send --smtp';
    False (nothing sent) once the script is over."""
    while True:
        seat = p.seat()
        probe, _ = session.draft_replay(seat)
        decision = probe.pending()
        if decision is None or decision.role != p.role or decision.kind in (DICE, DECK):
            break
        orders = orders_of(probe.state, p.role, probe.ctx(p.role))
        if orders is None:
            return False
        p.pbem("do", "-g", p.gd.path, *orders)
    p.pbem("send", "-g", p.gd.path, "--smtp")
    p.sent_by_hand += 1
    return True


@pytest.fixture
def post():
    p = Post()
    p.controller.start()
    yield p
    p.controller.stop()


def play_by_email(tmp_path: Path, post: Post, *, rules: str, scenario: str, roles: tuple[str, str],
                  setup: tuple[list[str], list[str]], orders_of: Script, turns: int) -> tuple[Player, Player]:
    """Two players play ``rules`` only through email: 'pbem new', the invitation sent
    by SMTP and saved from the IMAP mailbox, 'pbem join', then each decision by
    ``orders_of`` and 'pbem send --smtp', and each side's 'pbem watch --once'
    (IMAP in, automatic answers out by SMTP), until the game or the script ends;
    then both open everything by email. Asserts a clean, complete audit on both sides."""
    (tmp_path / "h").mkdir()
    (tmp_path / "g").mkdir()
    host_box_user, guest_box_user = f"{roles[0]}@one.example", f"{roles[1]}@two.example"
    with ImapServer(tmp_path / "h", user=host_box_user) as host_box, \
            ImapServer(tmp_path / "g", user=guest_box_user) as guest_box:
        host, guest = _player(tmp_path, roles[0], host_box, post), _player(tmp_path, roles[1], guest_box, post)
        guest_key = (tmp_path / f"{roles[1]}.key.pub").read_text().strip()
        host.pbem("new", host.gd.path, "--rules", rules, "--scenario", scenario, "--role", roles[0], "--opponent",
                  guest_key, *[a for o in setup[0] for a in ("--order", o)], "--email", host.address,
                  "--opponent-email", guest.address, "-i", host.key)
        host.pbem("send", "-g", host.gd.path, "--since", "0", "--smtp")  # the invitation, by email
        _save_invitation(guest_box, tmp_path / "invitation.eml")
        guest.pbem("join", tmp_path / "invitation.eml", guest.gd.path, *[a for o in setup[1] for a in ("--order", o)],
                   "--email", guest.address, "--opponent-email", host.address, "-i", guest.key)
        guest.pbem("send", "-g", guest.gd.path, "--since", "1", "--smtp")
        players = (host, guest)
        automatic = 0
        over = False
        for _ in range(turns):
            if all(p.seat().replay.outcome() is not None for p in players):
                break
            acted = False
            for p in players:
                if _my_turn(p):
                    if not _play_turn(p, orders_of):
                        over = True
                        break
                    acted = True
            if over:
                break
            for p in players:
                before = len(post.delivered)
                out = p.pbem("watch", "--once")
                automatic += len(post.delivered) - before
                acted = acted or "received events" in out or "answered automatically" in out
            assert acted, "nobody could move: " + "\n".join(host.log[-3:] + guest.log[-3:])
        else:
            pytest.fail("the game did not end")
        assert automatic > 0  # automatic answers went out by email, nobody sent them by hand
        ended = host.seat().replay.outcome() is not None
        if ended:  # both open every commitment (by email) for the audit
            last = host.seat().replay.history[-1].author
            first, second = (guest, host) if last == host.role else (host, guest)
            first.pbem("send", "-g", first.gd.path, "--open-all", "--smtp")
            second.pbem("watch", "--once")
            second.pbem("send", "-g", second.gd.path, "--open-all", "--smtp")
            first.pbem("watch", "--once")
        for p in players:
            audit = p.pbem("audit", p.gd.path)
            # A game cut short by its script keeps its secrets: legal so far, not complete.
            assert "every action is legal" in audit and ("not yet opened" not in audit or not ended)
        assert host.gd.read_events() == guest.gd.read_events()
        # Every mail in both boxes was taken (the saved invitation too, once the game existed).
        for box in (host_box, guest_box):
            assert all("$PbemTaken" in m.flags for m in box.messages)
        by_hand = host.sent_by_hand + guest.sent_by_hand + (4 if ended else 2)  # + invitation, acceptance, openings
        print(f"\n{rules}: {len(post.delivered)} emails in all, {by_hand} sent by a person, {automatic} automatic "
              f"answers sent by 'pbem watch' (before issue 21 point 5, a person sent all {len(post.delivered)})")
        return host, guest


def test_a_whole_game_only_through_email_with_watch_answering(tmp_path, post):
    """Issue 21, Done when: SMTP out, IMAP in, 'pbem watch --once' answering automatically, a clean audit."""
    red, blue = play_by_email(tmp_path, post, rules="race", scenario="sprint", roles=("red", "blue"),
                              setup=(["setup speed 2"], ["setup speed 3"]), orders_of=script, turns=60)
    for p in (red, blue):
        assert "game over" in p.pbem("verify", p.gd.path)


def test_the_ritd_demo_only_through_email(tmp_path, post):
    """The same with Rommel in the Desert's demo script (deployment, the shared
    deck's automatic steps, combat) until the script ends at Month 2 (no
    outcome, so the audit checks legality without every secret opened);
    about 11 s."""
    from rules.ritd import demo

    play_by_email(tmp_path, post, rules="ritd", scenario="demo", roles=("axis", "allied"),
                  setup=([*demo.AXIS_SETUP, "end deployment"], [*demo._allied_setup(), "end deployment"]),
                  orders_of=demo.demo_orders, turns=200)


def test_an_automatic_answer_goes_out_by_email_from_pbem_receive(tmp_path, post):
    """Issue 21 point 5: 'pbem receive' answering the dice also emails the answer
    (the game's addresses and $PBEM_HOME/smtp.toml), and queues it when the
    server is down; 'pbem watch' sends the queue."""
    from tests.conftest import new_table

    t = with_addresses(new_table(tmp_path / "g"))
    red_events(t, "dash")  # red's dash asks for a die that waits only for blue's entropy
    home = tmp_path / "blue-home"
    turn = t.red.gd.outbox_dir / sorted(p.name for p in t.red.gd.outbox_dir.glob("*.pbem"))[-1]
    with ImapServer(tmp_path) as box:
        post.boxes["red@axis.example"] = box
        # No SMTP settings: the .eml is written beside the turn file, to send by hand.
        out = CliRunner().invoke(cli, ["receive", "-g", str(t.blue.gd.path), str(turn)], env={"PBEM_HOME": str(home)})
        assert out.exit_code == 0, out.output
        assert "answered automatically" in out.output and "email message" in out.output
        assert list(t.blue.gd.outbox_dir.glob("*-000003.eml"))
    post.config(home)
    t2 = with_addresses(new_table(tmp_path / "g2"))
    red_events(t2, "dash")
    turn2 = t2.red.gd.outbox_dir / sorted(p.name for p in t2.red.gd.outbox_dir.glob("*.pbem"))[-1]
    with ImapServer(tmp_path / "g2") as box:
        post.boxes["red@axis.example"] = box
        out = CliRunner().invoke(cli, ["receive", "-g", str(t2.blue.gd.path), str(turn2)],
                                 env={"PBEM_HOME": str(home)})
        assert out.exit_code == 0, out.output
        assert "automatic answer (event 3) sent by email to red@axis.example" in out.output
        (message,) = box.messages
        assert b"events 3 by blue" in message.data
    # The server is down: the answer is queued, not lost, and watch sends it later.
    t3 = with_addresses(new_table(tmp_path / "g3"))
    red_events(t3, "dash")
    turn3 = t3.red.gd.outbox_dir / sorted(p.name for p in t3.red.gd.outbox_dir.glob("*.pbem"))[-1]
    down = tmp_path / "down-home"
    down.mkdir()
    (down / "smtp.toml").write_text(f'[smtp]\nhost = "127.0.0.1"\nport = {_free_port()}\nsecurity = "none"\n'
                                    'timeout = 5\n')
    out = CliRunner().invoke(cli, ["receive", "-g", str(t3.blue.gd.path), str(turn3)], env={"PBEM_HOME": str(down)})
    assert out.exit_code == 0, out.output
    assert "not sent" in out.output and "queued in" in out.output
    assert len(list((t3.blue.gd.outbox_dir / "mailq").glob("*.eml"))) == 1
    with ImapServer(tmp_path / "g3") as box:
        post.boxes["red@axis.example"] = box
        box.config(down / "imap.toml", password=box.password)
        post.config(down)
        watched = CliRunner().invoke(cli, ["watch", "--once", str(t3.blue.gd.path)], env={"PBEM_HOME": str(down)})
        assert watched.exit_code == 0, watched.output
        assert "sent queued email" in watched.output
        assert not list((t3.blue.gd.outbox_dir / "mailq").glob("*.eml"))
        assert len(box.messages) == 1


def test_watch_exits_6_when_a_game_stops(tmp_path):
    """Blue holds red's event 2; a second, different event 2 signed by red comes by
    mail: the game stops (equivocation evidence) and watch says so and exits 6."""
    from pbem.game import Replay
    from tests.conftest import new_table

    t = with_addresses(new_table(tmp_path / "g"))
    red_events(t, "advance 1", "pass")
    with ImapServer(tmp_path) as box:
        box.deliver(mail_of(t, 2, "base64"))
        home = tmp_path / "home"
        home.mkdir()
        box.config(home / "imap.toml", password=box.password)
        first = CliRunner().invoke(cli, ["watch", "--once", str(t.blue.gd.path)], env={"PBEM_HOME": str(home)})
        assert first.exit_code == 0 and "received events 2-2" in first.output, first.output
        seat = t.red.seat()
        rewound = Replay(seat.rules, role="red", known=seat.vault.known_values())
        for stored in t.red.gd.read_events()[:2]:
            rewound.apply_stored(stored)
        seat.replay = rewound
        orders = session.parse_orders(seat.rules, rewound, "red", seat.vault, [], ["advance 2", "pass"])
        other = session._compose(seat, orders).stored
        from pbem.turnfile import format_turn

        game = rewound.game_hex
        box.deliver(b"From: red@axis.example\r\nSubject: again\r\n\r\n" + format_turn(game, "race 1", [other],
                                                                                      ["red"], [2]))
        stopped = CliRunner().invoke(cli, ["watch", "--once", str(t.blue.gd.path)], env={"PBEM_HOME": str(home)})
        assert stopped.exit_code == 6, stopped.output
        assert "signed two different events for seq 2" in stopped.output and "GAME STOPPED" in stopped.output


def test_watch_runs_until_sigterm_and_stops_cleanly(tmp_path):
    """A real process: passes every --interval, the passphrase from a command read
    once at start, and SIGTERM ends it after the step under way (exit 0)."""
    from tests.conftest import new_table

    t = with_addresses(new_table(tmp_path / "g"))
    red_events(t, "advance 2", "pass")
    env = plugin_env(tmp_path)
    env.pop("PBEM_PASSPHRASE", None)
    home = tmp_path / "home"
    home.mkdir()
    script = tmp_path / "passphrase.py"
    script.write_text(f"import pathlib\npathlib.Path({str(tmp_path / 'asked')!r}).open('a').write('x')\n"
                      f"print({PASSPHRASE!r})\n")
    env.update(PBEM_HOME=str(home), PBEM_PASSPHRASE_COMMAND=f"{sys.executable} {script}")
    with ImapServer(tmp_path) as box:
        box.config(home / "imap.toml", password=box.password)
        proc = subprocess.Popen([sys.executable, "-m", "pbem", "watch", "--interval", "1", str(t.blue.gd.path)],
                                env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while box.logins < 2 and time.monotonic() < deadline:  # two passes, nothing to take yet
                time.sleep(0.1)
            box.deliver(mail_of(t, 2, "base64"))
            while not any("$PbemTaken" in m.flags for m in box.messages) and time.monotonic() < deadline:
                time.sleep(0.1)
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err
    assert "received events 2-2" in out and "stopped by a signal" in out
    assert (tmp_path / "asked").read_text() == "x"  # the passphrase command ran once for the whole run
    assert t.blue.gd.event_count() == 3

