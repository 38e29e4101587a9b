"""A player's secrets for one game, encrypted at rest (DESIGN 2).

Holds the entropy secrets behind the player's ``entropy.commit`` values and
the value + salt of every commitment the player published. Encrypted with
ChaCha20-Poly1305 under a key derived (HKDF-SHA256) from the player's
identity seed, the game id and the role; the game id and role are also bound
as associated data, so a vault cannot be swapped between games or roles.
Written atomically; losing it means the player cannot open commitments.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from pbem.errors import BadFile, KeyProblem, NotFound
from pbem.fileio import make_dirs, read_regular, write_atomic
from pbem.identity import Identity

_MAGIC = b"PBEMVLT1"
#: Largest vault read (a whole campaign's secrets are a few MiB).
MAX_VAULT_BYTES = 256 << 20


class Secret(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """Opening of one of my commitments: value and salt (hex). ``kind`` "set":
    a Merkle set, value = its encoded leaves, salt = the seed of its leaf salts."""

    value: str
    salt: str
    kind: str = ""


class VaultData(msgspec.Struct, forbid_unknown_fields=True):
    game: str
    role: str
    #: x committed in my event with this seq (hex), key = str(seq).
    entropy: dict[str, str] = {}
    #: label -> opening of every commitment I published.
    secrets: dict[str, Secret] = {}

    def entropy_for(self, seq: int) -> bytes | None:
        x = self.entropy.get(str(seq))
        return None if x is None else bytes.fromhex(x)

    def known_values(self) -> dict[str, bytes]:
        return {label: bytes.fromhex(s.value) for label, s in self.secrets.items()}

    def known_salts(self) -> dict[str, bytes]:
        """label -> salt of each secret (``Replay.known_salts``: a value counts only
        for the commitment it opens, decision 28)."""
        return {label: bytes.fromhex(s.salt) for label, s in self.secrets.items()}


def _key(identity: Identity, game: str, role: str, purpose: bytes = b"vault") -> bytes:
    info = b"pbem/v1/" + purpose + b"\x00" + game.encode() + b"\x00" + role.encode()
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(identity.seed())


def _aad(magic: bytes, game: str, role: str, context: bytes) -> bytes:
    """The associated data a sealed file is bound to: its kind, game, role and ``context``."""
    return magic + game.encode() + b"\x00" + role.encode() + (b"\x00" + context if context else b"")


def seal_bytes(plain: bytes, identity: Identity, game: str, role: str, *, magic: bytes = _MAGIC,
               purpose: bytes = b"vault", context: bytes = b"") -> bytes:
    """Encrypt ``plain`` for this player, game and role (8-byte ``magic`` names the file kind;
    ``context``, if any, must be given again to unseal it: what binds two files together)."""
    nonce = os.urandom(12)
    return magic + nonce + ChaCha20Poly1305(_key(identity, game, role, purpose)).encrypt(
        nonce, plain, _aad(magic, game, role, context))


def unseal_bytes(blob: bytes, identity: Identity, game: str, role: str, *, magic: bytes = _MAGIC,
                 purpose: bytes = b"vault", context: bytes = b"") -> bytes:
    """Inverse of seal_bytes; BadFile if damaged, KeyProblem for another key, game, role or context."""
    if len(blob) < len(magic) + 12 + 16 or not blob.startswith(magic):
        raise BadFile(f"not a pbem {purpose.decode()} file (damaged or truncated)")
    nonce = blob[len(magic):len(magic) + 12]
    try:
        return ChaCha20Poly1305(_key(identity, game, role, purpose)).decrypt(nonce, blob[len(magic) + 12:],
                                                                            _aad(magic, game, role, context))
    except InvalidTag:
        raise KeyProblem(f"cannot open the {role} {purpose.decode()} of this game with this identity key "
                         "(wrong key, or the file is damaged)") from None


def seal(data: VaultData, identity: Identity) -> bytes:
    return seal_bytes(msgspec.json.encode(data), identity, data.game, data.role)


def unseal(blob: bytes, identity: Identity, game: str, role: str) -> VaultData:
    plain = unseal_bytes(blob, identity, game, role)
    data = msgspec.json.decode(plain, type=VaultData)
    if data.game != game or data.role != role:
        raise KeyProblem("vault belongs to another game or role")
    return data


def load(path: Path, identity: Identity, game: str, role: str) -> VaultData:
    try:
        blob = read_regular(path, MAX_VAULT_BYTES, "vault")
    except NotFound:
        raise NotFound(f"no vault at {path}: without it your commitments cannot be opened "
                       "(restore it from 'pbem vault backup')") from None
    return unseal(blob, identity, game, role)


def save(path: Path, data: VaultData, identity: Identity) -> None:
    make_dirs(path.parent)
    write_atomic(path, seal(data, identity), mode=0o600)
