"""Player identities: Ed25519 key pairs, passphrase-encrypted private keys.

Public key text form (one line, for email): ``pbem-ed25519:<64 hex>``.
Fingerprint: the first 16 hex digits of SHA-256("pbem/v1/fingerprint" + key),
grouped in fours, read aloud over the phone to check a key out of band.

Private key file (JSON, mode 0600): the 32-byte Ed25519 seed sealed with
ChaCha20-Poly1305 under a key from scrypt(passphrase); the public key text is
bound as associated data so the two halves cannot be mixed up.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import msgspec
from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from pbem.errors import BadFile, KeyProblem, NotFound, UsageProblem
from pbem.fileio import make_dirs, read_regular, write_atomic

PUBLIC_PREFIX = "pbem-ed25519:"
_FP_DOMAIN = b"pbem/v1/fingerprint\x00"
#: scrypt cost: about 0.1 s and 32 MiB on a laptop, per RFC 7914 guidance.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 1 << 15, 8, 1
MIN_PASSPHRASE = 8
#: Largest key file read (one is under 1 KiB).
MAX_KEY_FILE = 64 << 10


class KeyFile(msgspec.Struct, forbid_unknown_fields=True):
    type: str
    v: int
    public: str
    kdf: str
    n: int
    r: int
    p: int
    salt: str
    nonce: str
    ciphertext: str
    name: str = ""


# The raw 32-byte forms are read with public_bytes_raw and private_bytes_raw
# (cryptography >= 40), the same bytes as public_bytes(Encoding.Raw,
# PublicFormat.Raw): importing cryptography's serialization module for those
# enums loaded its SSH, RSA, DSA and EC code into every command (issue 20).


def public_text(key: Ed25519PublicKey) -> str:
    return PUBLIC_PREFIX + key.public_bytes_raw().hex()


def parse_public(text: str) -> Ed25519PublicKey:
    """Parse the one-line public key form; raises UsageProblem if malformed."""
    text = text.strip()
    if not text.startswith(PUBLIC_PREFIX):
        raise UsageProblem(f"not a pbem public key (expected '{PUBLIC_PREFIX}<64 hex digits>'): {text[:40]!r}")
    hexpart = text[len(PUBLIC_PREFIX):]
    try:
        raw = bytes.fromhex(hexpart)
    except ValueError:
        raw = b""
    if len(raw) != 32 or hexpart != hexpart.lower():
        raise UsageProblem("public key must be 64 lowercase hex digits after the prefix")
    return Ed25519PublicKey.from_public_bytes(raw)


def fingerprint(public: str | Ed25519PublicKey) -> str:
    key = parse_public(public) if isinstance(public, str) else public
    digest = hashlib.sha256(_FP_DOMAIN + key.public_bytes_raw()).hexdigest()
    return "-".join(digest[i:i + 4] for i in range(0, 16, 4))


def verify_signature(key: Ed25519PublicKey, sig: bytes, data: bytes) -> bool:
    try:
        key.verify(sig, data)
    except InvalidSignature:
        return False
    return True


class Identity:
    """An unlocked private key. Holds the seed in memory only."""

    def __init__(self, private: Ed25519PrivateKey, name: str = "") -> None:
        self.private = private
        self.public = private.public_key()
        self.name = name

    @classmethod
    def generate(cls, name: str = "") -> Identity:
        return cls(Ed25519PrivateKey.generate(), name)

    @property
    def public_text(self) -> str:
        return public_text(self.public)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public)

    def seed(self) -> bytes:
        return self.private.private_bytes_raw()

    def sign(self, data: bytes) -> bytes:
        return self.private.sign(data)

    def to_file_bytes(self, passphrase: str) -> bytes:
        salt = os.urandom(16)
        nonce = os.urandom(12)
        key = _kdf(passphrase, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
        sealed = ChaCha20Poly1305(key).encrypt(nonce, self.seed(), self.public_text.encode())
        doc = KeyFile(type="pbem-identity", v=1, public=self.public_text, kdf="scrypt",
                      n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, salt=salt.hex(), nonce=nonce.hex(),
                      ciphertext=sealed.hex(), name=self.name)
        return msgspec.json.format(msgspec.json.encode(doc)) + b"\n"


def _kdf(passphrase: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return Scrypt(salt=salt, length=32, n=n, r=r, p=p).derive(passphrase.encode("utf-8"))


def read_key_file(path: Path) -> KeyFile:
    try:
        data = read_regular(path, MAX_KEY_FILE, "identity key file")
    except NotFound:
        raise NotFound(f"no identity key at {path} (create one with 'pbem keygen')") from None
    try:
        doc = msgspec.json.decode(data, type=KeyFile)
    except msgspec.DecodeError as exc:
        raise BadFile(f"{path} is not a pbem identity key file: {exc}") from None
    if doc.type != "pbem-identity" or doc.v != 1 or doc.kdf != "scrypt":
        raise BadFile(f"{path} is not a version-1 pbem identity key file")
    return doc


def load_identity(path: Path, passphrase: str) -> Identity:
    """Unlock the key file at ``path``; KeyProblem on a wrong passphrase."""
    doc = read_key_file(path)
    # Bound the work an attacker-supplied file can make us do.
    if not (1 << 10 <= doc.n <= 1 << 20 and 1 <= doc.r <= 32 and 1 <= doc.p <= 16):
        raise BadFile(f"{path}: scrypt parameters out of range")
    try:
        key = _kdf(passphrase, bytes.fromhex(doc.salt), doc.n, doc.r, doc.p)
        seed = ChaCha20Poly1305(key).decrypt(bytes.fromhex(doc.nonce), bytes.fromhex(doc.ciphertext),
                                             doc.public.encode())
    except InvalidTag:
        raise KeyProblem(f"wrong passphrase for {path} (or the file is damaged)") from None
    except ValueError as exc:
        raise BadFile(f"{path}: damaged key file: {exc}") from None
    identity = Identity(Ed25519PrivateKey.from_private_bytes(seed), doc.name)
    if identity.public_text != doc.public:
        raise KeyProblem(f"{path}: private key does not match its public key")
    return identity


def save_identity(identity: Identity, path: Path, passphrase: str, *, force: bool = False) -> Path:
    """Write the encrypted private key (mode 0600) and ``<path>.pub``; returns the .pub path."""
    if len(passphrase) < MIN_PASSPHRASE:
        raise UsageProblem(f"passphrase too short: use at least {MIN_PASSPHRASE} characters")
    if path.exists() and not force:
        raise UsageProblem(f"{path} already exists; refusing to overwrite an identity (use --force)")
    make_dirs(path.parent)
    write_atomic(path, identity.to_file_bytes(passphrase), mode=0o600)
    pub = path.with_name(path.name + ".pub")
    write_atomic(pub, (identity.public_text + "\n").encode(), mode=0o644)
    return pub
