"""Identities and vaults (DESIGN 2)."""

from __future__ import annotations

import stat

import pytest

from pbem import vault
from pbem.errors import BadFile, KeyProblem, UsageProblem
from pbem.identity import Identity, fingerprint, load_identity, parse_public, save_identity


def test_key_file_is_encrypted_mode_0600_and_unlocks_with_the_passphrase(tmp_path):
    ident = Identity.generate("Erwin")
    path = tmp_path / "id.key"
    pub = save_identity(ident, path, "a long passphrase")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert ident.seed().hex() not in path.read_text()
    assert pub.read_text().strip() == ident.public_text
    assert load_identity(path, "a long passphrase").public_text == ident.public_text
    with pytest.raises(KeyProblem, match="wrong passphrase"):
        load_identity(path, "another passphrase")


def test_short_passphrase_and_overwrite_are_refused(tmp_path):
    with pytest.raises(UsageProblem, match="too short"):
        save_identity(Identity.generate(), tmp_path / "k", "short")
    save_identity(Identity.generate(), tmp_path / "k", "long enough")
    with pytest.raises(UsageProblem, match="already exists"):
        save_identity(Identity.generate(), tmp_path / "k", "long enough")


def test_public_key_text_form_and_fingerprint():
    ident = Identity.generate()
    assert parse_public(ident.public_text).public_bytes_raw() == ident.public.public_bytes_raw()
    fp = fingerprint(ident.public_text)
    assert len(fp) == 19 and fp.count("-") == 3
    for bad in ("ed25519:00", "pbem-ed25519:xyz", "pbem-ed25519:" + "A" * 64):
        with pytest.raises(UsageProblem):
            parse_public(bad)


def test_vault_round_trip_and_wrong_key(tmp_path):
    me, other = Identity.generate(), Identity.generate()
    data = vault.VaultData(game="ab" * 32, role="axis", entropy={"3": "00" * 32},
                           secrets={"axis.block.1": vault.Secret(value="3231", salt="11" * 32)})
    path = tmp_path / "vault" / "axis.bin"
    vault.save(path, data, me)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert vault.load(path, me, "ab" * 32, "axis") == data
    with pytest.raises(KeyProblem):
        vault.load(path, other, "ab" * 32, "axis")
    with pytest.raises(KeyProblem):
        vault.load(path, me, "cd" * 32, "axis")
    with pytest.raises(KeyProblem):
        vault.load(path, me, "ab" * 32, "allied")
    path.write_bytes(path.read_bytes()[:20])
    with pytest.raises(BadFile):
        vault.load(path, me, "ab" * 32, "axis")
