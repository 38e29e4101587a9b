"""The command line: exit codes (Click's CliRunner and a real subprocess),
bad turn files rejected with one message and no change on disk (DESIGN 7, 8)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem import codec
from pbem.cli import cli
from pbem.errors import EXIT_CODES
from tests.conftest import PASSPHRASE, new_table

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file() and p.name != "lock"}


def test_keygen_show_key_and_a_game_through_the_cli(tmp_path):
    assert run("keygen", "-o", tmp_path / "red.key").exit_code == 0
    assert run("keygen", "-o", tmp_path / "blue.key").exit_code == 0
    key = run("key", tmp_path / "blue.key", "--json")
    blue_pub = json.loads(key.output)["public_key"]
    new = run("new", tmp_path / "r", "--rules", "race", "--scenario", "sprint", "--role", "red",
              "--opponent", blue_pub, "-i", tmp_path / "red.key", "--order", "setup speed 2",
              "-o", tmp_path / "t0.pbem")
    assert new.exit_code == 0, new.output
    join = run("join", tmp_path / "t0.pbem", tmp_path / "b", "-i", tmp_path / "blue.key",
               "--order", "setup speed 1", "-o", tmp_path / "t1.pbem")
    assert join.exit_code == 0, join.output
    assert run("receive", "-g", tmp_path / "r", tmp_path / "t1.pbem").exit_code == 0
    opts = run("options", "-g", tmp_path / "r", "--json")
    assert "advance 2" in json.loads(opts.output)["orders"]
    assert run("do", "-g", tmp_path / "r", "advance 2", "pass").exit_code == 0
    assert run("undo", "-g", tmp_path / "r").output.strip() == "removed: pass"
    assert run("do", "-g", tmp_path / "r", "pass").exit_code == 0
    assert run("send", "-g", tmp_path / "r", "-o", tmp_path / "t2.pbem", "--note", "<b>hi</b>").exit_code == 0
    assert run("receive", "-g", tmp_path / "b", tmp_path / "t2.pbem").exit_code == 0
    shown = json.loads(run("show", "-g", tmp_path / "b", "--json").output)
    assert shown["view"]["runners"][0]["pos"] == 2 and shown["pending"]["role"] == "blue"
    log = json.loads(run("log", tmp_path / "b", "--json").output)
    assert [e["author"] for e in log] == ["red", "blue", "red"] and log[2]["note"] == "<b>hi</b>"
    verify = json.loads(run("verify", tmp_path / "b", "--json").output)
    assert verify["ok"] and verify["events"] == 3
    assert run("audit", tmp_path / "b").exit_code == 0


@pytest.fixture
def game(tmp_path):
    """Blue's directory after red's setup; red's next turn file; a foreign game's file."""
    t = new_table(tmp_path / "a")
    from pbem import session
    seat = t.red.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    turn = Path(session.send(seat).turn_file).read_bytes()
    other = new_table(tmp_path / "b")
    seat = other.red.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    foreign = Path(session.send(seat).turn_file).read_bytes()
    return t, turn, foreign


def _events(turn: bytes) -> list[bytes]:
    return [line for line in turn.split(b"\n")[5:] if line]


def _file(*events: bytes) -> bytes:
    return b"pbem-turn v1\n---\n" + b"\n".join(events) + b"\n"


BAD_FILES = {
    "corrupt": (lambda turn, foreign, t: turn.replace(b'"steps":1', b'"steps":7'), 4, "signature"),
    "truncated": (lambda turn, foreign, t: turn[:len(turn) // 2], 3, "not a pbem event"),
    "no events": (lambda turn, foreign, t: turn.split(b"---")[0], 3, "truncated"),
    "oversized": (lambda turn, foreign, t: turn + b" " * (16 << 20), 3, "over the limit"),
    "binary": (lambda turn, foreign, t: b"\x00\xff" * 40, 3, "not a pbem turn file"),
    "not a turn file": (lambda turn, foreign, t: b"hello\n", 3, "not a pbem turn file"),
    "foreign game": (lambda turn, foreign, t: foreign, 11, "belongs to another game"),
    # a genesis other than this game's creates another game (issue 27 point 1)
    "replayed genesis": (lambda turn, foreign, t: _file(t.blue.gd.event_path(0).read_bytes().replace(
        b'"scenario":"sprint"', b'"scenario":"standard"')), 11, "is the genesis of another game"),
    "out of order": (lambda turn, foreign, t: _file(_reseq(turn, t)), 4, "out of order"),
    "wrong signer": (lambda turn, foreign, t: _file(_resign(turn, t)), 4, "signature is not valid"),
    "out of turn": (lambda turn, foreign, t: _file(_blue_event(t)), 5, "out of turn"),
}


def _reseq(turn: bytes, t) -> bytes:
    """Red's event re-signed by red with seq 3 (one missing)."""
    body = codec.decode_body(codec.unwrap(_events(turn)[0]).body)
    body = body.__class__(**{**{f: getattr(body, f) for f in body.__struct_fields__}, "seq": 3})
    data = codec.canonical(body)
    return codec.wrap(data, t.red.identity.sign(codec.signing_input(data)))


def _resign(turn: bytes, t) -> bytes:
    """Red's event signed by blue's key."""
    event = codec.unwrap(_events(turn)[0])
    return codec.wrap(event.body, t.blue.identity.sign(codec.signing_input(event.body)))


def _blue_event(t) -> bytes:
    """An event by blue at seq 2, when red is to move, signed by blue."""
    from pbem import session
    seat = t.blue.seat()
    orders = [session.DraftOrder(text="pass", action=codec.raw({"type": "pass"}))]
    return session._sign(seat.identity, session._body(seat.replay, "blue", seat.vault, orders,
                                                      x_next=bytes(32)))


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_a_bad_turn_file_is_rejected_with_one_message_and_nothing_changes(game, tmp_path, kind):
    t, turn, foreign = game
    make, code, message = BAD_FILES[kind]
    bad = tmp_path / "bad.pbem"
    bad.write_bytes(make(turn, foreign, t))
    before = snapshot(t.blue.gd.path)
    result = CliRunner().invoke(cli, ["receive", "-g", str(t.blue.gd.path), str(bad)])
    assert result.exit_code == code, result.output
    assert message in result.output and "Traceback" not in result.output
    assert result.output.startswith("pbem: ") and result.output.count("\n") == 1
    assert snapshot(t.blue.gd.path) == before


def test_the_good_file_is_accepted_after_the_bad_ones(game, tmp_path):
    t, turn, _ = game
    (tmp_path / "good.pbem").write_bytes(turn)
    assert run("receive", "-g", t.blue.gd.path, tmp_path / "good.pbem").exit_code == 0
    again = run("receive", "-g", t.blue.gd.path, tmp_path / "good.pbem")
    assert again.exit_code == 0 and "already held" in again.output


def test_usage_errors_and_missing_things_have_their_codes(tmp_path):
    assert run("verify", tmp_path).exit_code == 9
    assert CliRunner().invoke(cli, ["frobnicate"]).exit_code == 2
    assert CliRunner().invoke(cli, ["new"]).exit_code == 2
    assert run("key", tmp_path / "nokey").exit_code == 9
    codes = run("exit-codes").output
    assert all(f"{code:>3}" in codes for code, _ in EXIT_CODES)


def test_wrong_passphrase_is_exit_8(tmp_path, monkeypatch):
    assert run("keygen", "-o", tmp_path / "k").exit_code == 0
    monkeypatch.setenv("PBEM_PASSPHRASE", "not the passphrase")
    result = CliRunner().invoke(cli, ["new", str(tmp_path / "g"), "--rules", "race", "--scenario", "sprint",
                                      "--role", "red", "--opponent", "pbem-ed25519:" + "11" * 32,
                                      "-i", str(tmp_path / "k")])
    assert result.exit_code == 8 and "wrong passphrase" in result.output
    assert not (tmp_path / "g").exists()


def plugin_env(tmp_path: Path) -> dict[str, str]:
    """An environment where the race test game is installed as a third-party plugin
    (a dist-info with a pbem.rules entry point), for real subprocesses."""
    site = tmp_path / "site"
    info = site / "pbem_race_test-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pbem-race-test\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pbem.rules]\nrace = tests.race.rules:RULES\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]), PBEM_PASSPHRASE=PASSPHRASE)
    env.pop("PBEM_TRACEBACK", None)
    return env


def test_exit_codes_through_a_real_subprocess_and_rules_from_an_entry_point(tmp_path):
    env = plugin_env(tmp_path)

    def pbem(*args, code=0):
        proc = subprocess.run([sys.executable, "-m", "pbem", *map(str, args)], env=env, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == code, proc.stderr
        return proc

    assert "race" in pbem("rules", "list").stdout
    pbem("keygen", "-o", tmp_path / "red.key")
    pbem("keygen", "-o", tmp_path / "blue.key")
    pbem("new", tmp_path / "r", "--rules", "race", "--scenario", "sprint", "--role", "red",
         "--opponent", tmp_path / "blue.key.pub", "-i", tmp_path / "red.key", "--order", "setup speed 2",
         "-o", tmp_path / "t0.pbem")
    pbem("join", tmp_path / "t0.pbem", tmp_path / "b", "-i", tmp_path / "blue.key", "--order",
         "setup speed 2", "-o", tmp_path / "t1.pbem")
    proc = pbem("receive", "-g", tmp_path / "b", tmp_path / "t0.pbem")
    assert "already held" in proc.stdout
    proc = pbem("do", "-g", tmp_path / "b", "advance 1", code=5)
    assert proc.stderr.startswith("pbem: ") and "Traceback" not in proc.stderr
    proc = pbem("--traceback", "do", "-g", tmp_path / "b", "advance 1", code=5)
    assert "Traceback" in proc.stderr
    (tmp_path / "junk.pbem").write_text("pbem-turn v1\n---\n{\"body\":1}\n")
    proc = pbem("receive", "-g", tmp_path / "r", tmp_path / "junk.pbem", code=3)
    assert proc.stderr.count("\n") == 1


def test_rules_show_lists_scenarios_and_roles():
    result = run("rules", "show", "race", "--json")
    data = json.loads(result.output)
    assert data["scenarios"] == ["standard", "sprint", "marathon"] and data["roles"] == ["red", "blue"]
    assert data["playable"]
    ritd = run("rules", "show", "ritd", "--json")
    assert ritd.exit_code == 0 and "demo" in json.loads(ritd.output)["scenarios"]


def test_shell_completion_offers_rules_scenarios_and_roles(monkeypatch):
    """Click's shell completion (eval "$(_PBEM_COMPLETE=bash_source pbem)")."""
    from click.shell_completion import ShellComplete

    def complete(args, incomplete):
        return [c.value for c in ShellComplete(cli, {}, "pbem", "_PBEM_COMPLETE").get_completions(args, incomplete)]

    assert "receive" in complete([], "rec")
    assert "race" in complete(["new", "g", "--rules"], "ra")
    assert complete(["new", "g", "--rules", "race", "--scenario"], "s") == ["standard", "sprint"]
    assert complete(["new", "g", "--rules", "race", "--role"], "") == ["red", "blue"]


def test_shell_completion_offers_the_legal_orders_of_the_game(tmp_path, monkeypatch):
    """`pbem do <TAB>` completes what `pbem options` lists, for the game of -g."""
    from click.shell_completion import ShellComplete

    table = new_table(tmp_path)  # red to move, PBEM_PASSPHRASE set by the fixture

    def complete(args, incomplete):
        return [c.value for c in ShellComplete(cli, {}, "pbem", "_PBEM_COMPLETE").get_completions(args, incomplete)]

    game = str(table.red.gd.path)
    assert complete(["do", "-g", game], "adv") == ["advance 1", "advance 2"]
    assert complete(["do", "-g", game], '"da') == ["dash"]
    assert "advance 1" in complete(["do", "-g", game], "")
    # Nothing without a passphrase available, and nothing for a directory that is no game.
    monkeypatch.delenv("PBEM_PASSPHRASE")
    assert complete(["do", "-g", game], "adv") == []
    monkeypatch.setenv("PBEM_PASSPHRASE", PASSPHRASE)
    assert complete(["do", "-g", str(tmp_path / "nowhere")], "adv") == []


def test_the_games_pbem_ships_are_found_in_its_own_distribution_first():
    """Every command loads its game: pbem's own entry points are read before
    every installed distribution's (a plugin's game is found by the full scan,
    as in the subprocess test above)."""
    from pbem import rulesapi

    ep = rulesapi._own_entry_point("ritd")
    assert ep is not None and ep.value == "rules.ritd:RULES"
    assert rulesapi._own_entry_point("race") is None
    assert rulesapi.load_any("ritd") is ep.load()


def test_a_lost_game_key_is_named_by_its_fingerprint_not_replaced(table):
    """Issue 21 point 8: the advice for a game whose key file is gone names
    the key the game needs; a new key from 'pbem keygen' cannot continue it."""
    table.red.key_path.unlink()
    result = CliRunner().invoke(cli, ["show", "-g", str(table.red.gd.path)])
    assert result.exit_code == 9
    assert f"played as red with the key of fingerprint {table.red.identity.fingerprint}" in result.output
    assert "cannot continue this game" in result.output and "-i KEYFILE" in result.output


def test_join_reads_the_invitation_email_which_says_how_to_join(tmp_path):
    """Issue 21 point 8: the invitation email names the command to run and
    the host's fingerprint; 'pbem join' takes the email, or a mailbox
    holding it, as well as the bare turn file."""
    import mailbox

    assert run("keygen", "-o", tmp_path / "red.key").exit_code == 0
    assert run("keygen", "-o", tmp_path / "blue.key").exit_code == 0
    blue_pub = json.loads(run("key", tmp_path / "blue.key", "--json").output)["public_key"]
    red_fp = json.loads(run("key", tmp_path / "red.key", "--json").output)["fingerprint"]
    assert run("new", tmp_path / "r", "--rules", "race", "--scenario", "sprint", "--role", "red",
               "--opponent", blue_pub, "-i", tmp_path / "red.key", "--order", "setup speed 2",
               "--email", "red@axis.example", "--opponent-email", "blue@allies.example",
               "-o", tmp_path / "t0.pbem").exit_code == 0
    sent = run("send", "-g", tmp_path / "r", "--since", "0", "--eml", "-o", tmp_path / "invite.pbem")
    assert sent.exit_code == 0, sent.output
    eml = tmp_path / "invite.eml"
    body = eml.read_text()
    assert "This is an invitation. To join as blue" in body and f"--host-fingerprint {red_fp}" in body
    box = mailbox.mbox(tmp_path / "box.mbox")
    box.add(mailbox.Message(eml.read_bytes()))
    box.flush()
    box.close()
    for source, where in ((eml, "b1"), (tmp_path / "box.mbox", "b2")):
        joined = run("join", source, tmp_path / where, "-i", tmp_path / "blue.key", "--order", "setup speed 1",
                     "--host-fingerprint", red_fp, "-o", tmp_path / f"{where}.pbem")
        assert joined.exit_code == 0, joined.output
    plain = CliRunner().invoke(cli, ["join", str(tmp_path / "r" / "events"), str(tmp_path / "b3"),
                                     "-i", str(tmp_path / "blue.key")])
    assert plain.exit_code == 3 and "not a Maildir" in plain.output
