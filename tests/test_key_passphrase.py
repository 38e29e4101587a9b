"""`pbem key --change-passphrase` (PLAN.md, users' expectations: a
passphrase change): the key and its fingerprint stay; the old passphrase stops
working; any refusal leaves the key file byte for byte as it was."""

from __future__ import annotations

import json

from click.testing import CliRunner

from pbem.cli import cli
from pbem.identity import load_identity
from tests.conftest import PASSPHRASE

NEW = "a brand new passphrase"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _key(tmp_path):
    key = tmp_path / "me.key"
    assert run("keygen", "-o", key).exit_code == 0
    return key


def _file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text + "\n", encoding="utf-8")
    return path


def test_a_new_passphrase_unlocks_the_same_key_and_the_old_one_no_longer_does(tmp_path):
    key = _key(tmp_path)
    before = json.loads(run("key", key, "--json").output)["fingerprint"]
    result = run("key", key, "--change-passphrase", "--new-passphrase-file", _file(tmp_path, "new", NEW), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["fingerprint"] == before
    assert load_identity(key, NEW).fingerprint == before
    assert (key.stat().st_mode & 0o777) == 0o600
    wrong = run("key", key, "--change-passphrase", "--new-passphrase-file", _file(tmp_path, "x", "whatever else"))
    assert wrong.exit_code == 8 and "wrong passphrase" in wrong.output      # PBEM_PASSPHRASE is the old one now


def test_a_wrong_old_passphrase_or_a_short_new_one_changes_nothing(tmp_path):
    key = _key(tmp_path)
    original = key.read_bytes()
    wrong = run("key", key, "--change-passphrase", "--passphrase-file", _file(tmp_path, "old", "not the passphrase"),
                "--new-passphrase-file", _file(tmp_path, "new", NEW))
    assert wrong.exit_code == 8 and "wrong passphrase" in wrong.output
    short = run("key", key, "--change-passphrase", "--new-passphrase-file", _file(tmp_path, "short", "abc"))
    assert short.exit_code == 2 and "too short" in short.output
    (tmp_path / "empty").write_bytes(b"")
    empty = run("key", key, "--change-passphrase", "--new-passphrase-file", tmp_path / "empty")
    assert empty.exit_code == 2 and "is empty" in empty.output
    assert key.read_bytes() == original
    assert load_identity(key, PASSPHRASE)


def test_passphrase_options_without_the_change_flag_are_refused(tmp_path):
    key = _key(tmp_path)
    result = run("key", key, "--new-passphrase-file", _file(tmp_path, "new", NEW))
    assert result.exit_code == 2 and "--change-passphrase" in result.output
