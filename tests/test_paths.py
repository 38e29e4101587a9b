"""Path safety (issue 9, robustness): names that arrive in turn files and emails
(turn file headers, attachment file names, Content-Type names, mailbox
messages, roles in a genesis) never make 'pbem receive' or 'pbem join' write
outside the game directory, and are never used as file names inside it."""

from __future__ import annotations

import email.policy
import mailbox
import re
from email.message import EmailMessage
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem import codec, session
from pbem.cli import cli
from tests.conftest import new_table

#: Every file pbem itself may create in the receiving game directory.
OWN_NAMES = re.compile(r"^(events/\d{6}\.json|cache/(red|blue)\.bin|outbox/[0-9a-f]{8}-\d{6}\.pbem|lock)$")


@pytest.fixture
def arena(tmp_path, monkeypatch):
    """Blue's game after the join; red's next turn file; a working directory two levels
    below tmp_path, so that '../../evil.pbem' from it or from the game lands in tmp_path."""
    t = new_table(tmp_path / "players")
    seat = t.red.seat()
    session.add_orders(seat, ["dash"])  # blue will answer the die: receive writes a turn file too
    turn = Path(session.send(seat).turn_file).read_bytes()
    cwd = tmp_path / "cwd" / "deep"
    cwd.mkdir(parents=True)
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("PBEM_HOME", str(tmp_path / "home"))
    (tmp_path / "mail").mkdir()
    return t, turn, tmp_path


def _evil_names(tmp: Path) -> list[str]:
    return ["../../evil.pbem", "../../../evil.pbem", str(tmp / "outside" / "evil.pbem"), "/evil.pbem",
            "..\\..\\evil.pbem", "outbox/../../evil.pbem", "events/000003.json", "../vault/blue.bin"]


def _tree(root: Path, skip: Path) -> dict[str, bytes]:
    """Every file under ``root`` except those in ``skip`` (the game directory)."""
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and skip not in p.parents}


def _files_in(game: Path) -> set[str]:
    return {str(p.relative_to(game)) for p in game.rglob("*") if p.is_file()}


def _receive_and_check(t, tmp: Path, source: Path) -> str:
    """Receive ``source`` into blue's game: only pbem's own files appear, all inside it."""
    game = t.blue.gd.path
    outside, inside = _tree(tmp, game), _files_in(game)
    top = sorted(p.name for p in tmp.parent.iterdir())
    result = CliRunner().invoke(cli, ["receive", "-g", str(game), str(source)])
    assert result.exit_code == 0, result.output
    assert "received events 2-2" in result.output and "answered automatically" in result.output
    assert _tree(tmp, game) == outside, "receive wrote outside the game directory"
    assert sorted(p.name for p in tmp.parent.iterdir()) == top
    assert not Path("/evil.pbem").exists() and not (tmp / "outside").exists()
    new = _files_in(game) - inside
    assert new and all(OWN_NAMES.match(name) for name in new), new
    assert not any("evil" in name for name in _files_in(game))
    assert t.blue.gd.read_events() == t.red.gd.read_events() + [t.blue.gd.event_path(3).read_bytes()]
    return result.output


def _message(turn: bytes, filename: str, tmp: Path) -> EmailMessage:
    msg = EmailMessage(policy=email.policy.SMTP)
    msg["From"] = "red@example.org"
    msg["To"] = "blue@example.org"
    msg["Subject"] = f"[pbem] turn {filename}"
    msg["Message-ID"] = "<../../evil.pbem@example.org>"
    msg.set_content(f"save me as {filename}\n")
    msg.add_attachment(turn, maintype="application", subtype="octet-stream", filename=filename,
                       params={"name": filename})
    return msg


def test_a_turn_file_whose_header_names_paths_is_received_inside_the_game_only(arena):
    t, turn, tmp = arena
    head, sep, events = turn.partition(b"---\n")
    evil = tmp / "outside" / "evil.pbem"
    header = head.replace(b"rules: race 1", b"rules: ../../evil")
    header = header.replace(b"events: 2 by red", f"events: {evil}".encode())
    assert header.count(b"evil") == 2
    header += b"file: ../../evil.pbem\nout: " + str(evil).encode() + b"\noutbox: /evil.pbem\n"
    source = tmp / "mail" / "turn.pbem"
    source.write_bytes(header + sep + events)
    _receive_and_check(t, tmp, source)


@pytest.mark.parametrize("index", range(8))
def test_an_eml_attachment_named_like_a_path_is_received_inside_the_game_only(arena, index):
    t, turn, tmp = arena
    name = _evil_names(tmp)[index]
    source = tmp / "mail" / "message.eml"
    source.write_bytes(_message(turn, name, tmp).as_bytes())
    _receive_and_check(t, tmp, source)


@pytest.mark.parametrize("kind", ["mbox", "maildir"])
def test_mailbox_messages_with_path_names_are_received_inside_the_game_only(arena, kind):
    t, turn, tmp = arena
    path = tmp / "mail" / ("inbox.mbox" if kind == "mbox" else "Maildir")
    box = mailbox.mbox(path) if kind == "mbox" else mailbox.Maildir(path)
    for name in _evil_names(tmp):
        box.add(mailbox.Message(_message(turn, name, tmp).as_bytes()))
    box.flush()
    box.close()
    output = _receive_and_check(t, tmp, path)
    assert "already held" not in output  # eight copies of one event: appended once


def test_an_invitation_giving_a_role_that_is_a_path_is_refused_and_writes_nothing(tmp_path, monkeypatch):
    """The guest's vault, draft and cache are named after its role, taken from the host's
    genesis: a role like '../../evil' (validly signed by the host) must be refused before
    anything is written. The codec only accepts roles matching [a-z][a-z0-9_-]*."""
    t = new_table(tmp_path / "players")
    genesis = codec.decode_body(codec.unwrap(t.red.gd.event_path(0).read_bytes()).body)
    players = [codec.Player(role="../../evil" if p.role == "blue" else p.role, key=p.key)
               for p in genesis.genesis.players]
    forged = genesis.__class__(**{**{f: getattr(genesis, f) for f in genesis.__struct_fields__},
                                  "genesis": genesis.genesis.__class__(**{
                                      **{f: getattr(genesis.genesis, f) for f in genesis.genesis.__struct_fields__},
                                      "players": players})})
    data = codec.canonical(forged)
    stored = codec.wrap(data, t.red.identity.sign(codec.signing_input(data)))
    invitation = tmp_path / "invitation.pbem"
    invitation.write_bytes(b"pbem-turn v1\n---\n" + stored + b"\n")
    cwd = tmp_path / "cwd" / "deep"
    cwd.mkdir(parents=True)
    monkeypatch.chdir(cwd)
    before = _tree(tmp_path, tmp_path / "none")
    result = CliRunner().invoke(cli, ["join", str(invitation), "guest", "-i", str(t.blue.key_path)])
    assert result.exit_code == 3 and "genesis.players" in result.output and "role" in result.output, \
        result.output
    assert _tree(tmp_path, tmp_path / "none") == before
    assert not (cwd / "guest").exists() and not (tmp_path / "evil.bin").exists()
