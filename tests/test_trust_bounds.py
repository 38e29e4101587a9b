"""Boundaries and refusals of the trust core's input checks (issue 29):
commitments and Merkle sets (pbem.commit), dice (pbem.dice), identities and
key files (pbem.identity). Each test sits on one side of one check, so that
a check removed or moved by one shifts a test from pass to fail."""

from __future__ import annotations

import importlib.util
import stat

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from pbem import commit as C
from pbem import dice
from pbem import identity as I
from pbem.errors import BadFile, KeyProblem, NotFound, UsageProblem

GAME = bytes(range(32))


# --- commitments ------------------------------------------------------------------------

def test_hash_parts_prefixes_each_part_with_its_8_byte_length():
    import hashlib
    assert C.hash_parts() == hashlib.sha256(b"").digest()
    assert C.hash_parts(b"") == hashlib.sha256(bytes(8)).digest()
    assert C.hash_parts(b"xyz") == hashlib.sha256(b"\x00" * 7 + b"\x03xyz").digest()


@pytest.mark.parametrize("size", [0, 16, 31, 33, 64])
def test_a_salt_other_than_32_bytes_is_refused(size):
    with pytest.raises(ValueError, match="salt must be 32 bytes"):
        C.commit(GAME, "x", b"v", salt=bytes(size))


def test_a_commitment_draws_a_fresh_32_byte_salt():
    d1, s1 = C.commit(GAME, "x", b"v")
    d2, s2 = C.commit(GAME, "x", b"v")
    assert len(s1) == len(s2) == 32 and s1 != s2 and d1 != d2
    assert C.opens(d1, GAME, "x", s1, b"v")


def test_an_opening_must_match_game_label_salt_and_value():
    digest, salt = C.commit(GAME, "speed/red", b"3", salt=bytes([0xAA]) * 32)
    assert C.opens(digest, GAME, "speed/red", salt, b"3")
    assert not C.opens(digest, bytes(32), "speed/red", salt, b"3")
    assert not C.opens(digest, GAME, "speed/blue", salt, b"3")
    assert not C.opens(digest, GAME, "speed/red", bytes(32), b"3")
    assert not C.opens(digest, GAME, "speed/red", salt, b"3 ")


@pytest.mark.parametrize("size", [0, 31, 33])
def test_a_set_seed_other_than_32_bytes_is_refused(size):
    with pytest.raises(ValueError, match="set seed must be 32 bytes"):
        C.set_from_seed({"a": b"1"}, bytes(size))


def test_an_empty_set_and_a_set_missing_salts_are_refused():
    with pytest.raises(ValueError, match="at least one leaf"):
        C.MerkleSet({})
    with pytest.raises(ValueError, match=r"no salt for keys \['b'\]"):
        C.MerkleSet({"a": b"1", "b": b"0"}, {"a": bytes(32)})


def test_a_random_salted_set_draws_32_byte_salts_per_leaf():
    s = C.MerkleSet({"a": b"1", "b": b"0"})
    assert sorted(s.salts) == ["a", "b"] and all(len(v) == 32 for v in s.salts.values())
    assert s.salts["a"] != s.salts["b"]
    assert C.verify_leaf(s.root, s.open("b"))


def test_a_leaf_proof_is_immutable_and_decodes_strictly():
    proof = C.set_from_seed({"a": b"1", "b": b"0"}, bytes(32)).open("a")
    with pytest.raises(AttributeError):
        proof.index = 1
    data = msgspec.json.encode(proof)
    assert msgspec.json.decode(data, type=C.LeafOpening) == proof
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        msgspec.json.decode(data[:-1] + b',"extra":1}', type=C.LeafOpening)


def test_a_key_outside_the_set_cannot_be_opened():
    s = C.set_from_seed({"a": b"1"}, bytes(32))
    with pytest.raises(KeyError):
        s.open("b")


@pytest.mark.parametrize("n", range(1, 10))
def test_every_leaf_of_every_small_set_opens_and_no_proof_passes_for_another_place(n):
    leaves = {f"k{i}": bytes([i]) for i in range(n)}
    s = C.set_from_seed(leaves, bytes([n]) * 32)
    depth = (n - 1).bit_length()
    for key in leaves:
        proof = s.open(key)
        assert len(proof.path) == depth and proof.size == n
        assert C.verify_leaf(s.root, proof)
        others = [
            msgspec.structs.replace(proof, index=proof.index ^ 1),
            msgspec.structs.replace(proof, index=n),
            msgspec.structs.replace(proof, index=-1),
            msgspec.structs.replace(proof, size=n + 1),
            msgspec.structs.replace(proof, value=(proof.value or "00") + "00"),
            msgspec.structs.replace(proof, path=proof.path + [("00" * 32, True)]),
        ]
        if proof.path:
            others.append(msgspec.structs.replace(proof, path=proof.path[:-1]))
            flipped = [(h, not right) for h, right in proof.path[:1]] + proof.path[1:]
            others.append(msgspec.structs.replace(proof, path=flipped))
        for forged in others:
            assert C.verify_leaf(s.root, forged) is False, (n, key, forged)


def test_the_last_leaf_of_an_odd_level_pairs_with_itself_and_says_so():
    s = C.set_from_seed({"a": b"1", "b": b"0", "c": b"1"}, bytes(32))
    proof = s.open("c")
    assert proof.index == 2 and proof.path[0][1] is True  # its own copy, on the right
    assert proof.path[0][0] == s._levels[0][2].hex()
    assert C.verify_leaf(s.root, proof)
    # Claiming the duplicate sits on the left is refused.
    bad = msgspec.structs.replace(proof, path=[(proof.path[0][0], False)] + proof.path[1:])
    assert not C.verify_leaf(s.root, bad)


def test_a_proof_with_malformed_hex_is_refused_not_raised():
    s = C.set_from_seed({"a": b"1", "b": b"0"}, bytes(32))
    proof = s.open("a")
    for change in ({"salt": "zz"}, {"value": "0"}, {"path": [("xyz", True)]}):
        assert C.verify_leaf(s.root, msgspec.structs.replace(proof, **change)) is False


def test_the_root_binds_the_leaf_count_and_every_value():
    one = C.set_from_seed({"a": b"1"}, bytes(32))
    assert one.root == C.hash_parts(b"pbem/v1/empty", (1).to_bytes(8, "big"), one._levels[0][0])
    assert C.set_from_seed({"a": b"0"}, bytes(32)).root != one.root
    assert C.set_from_seed({"a": b"1"}, bytes([1]) * 32).root != one.root


@pytest.mark.parametrize("data", [
    b'{"1":"30","2":"31"}',
])
def test_the_canonical_encoding_of_a_whole_set_opens(data):
    s = C.set_from_seed(C.decode_leaves(data), bytes(32))
    assert C.set_opens(s.root, bytes(32), data)


@pytest.mark.parametrize("data", [
    b'{"2":"31","1":"30"}',          # keys not sorted
    b'{"1": "30","2":"31"}',         # whitespace
    b'{"1":"30","2":"31"}\n',        # trailing newline
    b'{"1":"3A","2":"31"}',          # uppercase hex
    b'{}',                           # empty
    b'{"1":"3","2":"31"}',           # odd hex
    b'["1","30"]',                   # not a map
    b'{"1":"30","2":"31"',           # truncated
])
def test_a_non_canonical_set_opening_is_refused(data):
    with pytest.raises(ValueError, match="not an encoded set of leaves"):
        C.decode_leaves(data)
    root = C.set_from_seed({"1": b"0", "2": b"1"}, bytes(32)).root
    assert C.set_opens(root, bytes(32), data) is False


def test_a_whole_set_opening_with_another_seed_or_value_is_refused():
    data = b'{"1":"30","2":"31"}'
    root = C.set_from_seed(C.decode_leaves(data), bytes(32)).root
    assert C.set_opens(root, bytes(32), data)
    assert not C.set_opens(root, bytes([1]) * 32, data)
    assert not C.set_opens(root, bytes(31), data)  # a short seed is no seed
    assert not C.set_opens(root, bytes(32), b'{"1":"30","2":"30"}')


# --- dice ---------------------------------------------------------------------------------

ARGS = (b"g" * 32, b"e" * 32, b"p" * 32, b"q" * 32)


def test_dice_limits_are_the_published_ones():
    assert (dice.MAX_SIDES, dice.MAX_ROLLS, dice.ENTROPY_BYTES) == (65536, 4096, 32)
    secret = dice.new_secret()
    assert len(secret) == 32 and secret != dice.new_secret()


def test_at_most_max_rolls_dice_per_request():
    assert len(dice.roll(*ARGS, (2,) * dice.MAX_ROLLS)) == dice.MAX_ROLLS
    with pytest.raises(ValueError, match="at most 4096 dice"):
        dice.roll(*ARGS, (2,) * (dice.MAX_ROLLS + 1))
    assert dice.roll(*ARGS, ()) == ()


@pytest.mark.parametrize("sides", [-1, 0, 1, dice.MAX_SIDES + 1, 1 << 20])
def test_a_die_outside_2_to_max_sides_is_refused(sides):
    with pytest.raises(ValueError, match="a die needs 2..65536 sides"):
        dice.roll_one(*ARGS[:2], 0, *ARGS[2:], sides)
    with pytest.raises(ValueError):
        dice.roll(*ARGS, (6, sides))


def test_d2_and_the_largest_die_are_rolled():
    d2 = dice.roll(*ARGS, (2,) * 64)
    assert set(d2) == {1, 2}
    big = dice.roll(*ARGS, (dice.MAX_SIDES,) * 8)
    assert all(1 <= v <= dice.MAX_SIDES for v in big) and len(set(big)) == 8


@pytest.mark.parametrize("sides", [2, 3, 6, 7, 20, 100, 1000, 65535, 65536])
def test_the_rejected_block_starts_at_the_largest_multiple_of_the_sides(monkeypatch, sides):
    """Draws are forced at the edge (real digests never land there): the last
    accepted draw is limit - 1, the first rejected one is limit, which moves
    the die to attempt 1."""
    real = dice.hash_parts
    limit = (1 << 64) - (1 << 64) % sides
    at_attempt_1 = int.from_bytes(real(b"pbem/v1/dice", *ARGS[:2], bytes(4), (1).to_bytes(4, "big"),
                                       *ARGS[2:])[:8], "big") % sides + 1
    for draw in (limit - 1, limit):
        def forced(*parts, draw=draw):
            if parts[0] == b"pbem/v1/dice" and parts[4] == bytes(4):
                return draw.to_bytes(8, "big") + bytes(24) if draw < 1 << 64 else bytes(32)
            return real(*parts)
        monkeypatch.setattr(dice, "hash_parts", forced)
        got = dice.roll_one(*ARGS[:2], 0, *ARGS[2:], sides)
        if draw < limit:
            assert got == (limit - 1) % sides + 1 == sides
        elif limit < 1 << 64:
            assert got == at_attempt_1
    if sides & (sides - 1) == 0:
        assert limit == 1 << 64  # a power of two rejects nothing


def test_every_die_of_a_request_has_its_own_index():
    values = dice.roll(*ARGS, (6,) * 40)
    assert values == tuple(dice.roll_one(*ARGS[:2], i, *ARGS[2:], 6) for i in range(40))
    assert len(set(values)) > 1


def test_entropy_commitments_bind_role_and_secret():
    x = bytes([0x42]) * 32
    assert dice.entropy_commitment("red", x) == C.hash_parts(b"pbem/v1/entropy", b"red", x)
    assert dice.entropy_commitment("blue", x) != dice.entropy_commitment("red", x)


# --- identities and key files ----------------------------------------------------------------

def _fresh_identity_module():
    """pbem.identity as written, without the test suite's cheap-scrypt patch."""
    spec = importlib.util.spec_from_file_location("pbem_identity_unpatched", I.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_scrypt_defaults_are_the_published_ones_unpatched():
    fresh = _fresh_identity_module()
    assert (fresh.SCRYPT_N, fresh.SCRYPT_R, fresh.SCRYPT_P) == (1 << 15, 8, 1)
    assert fresh.MIN_PASSPHRASE == 8


def test_a_key_file_records_the_parameters_it_was_sealed_with(monkeypatch):
    monkeypatch.setattr(I, "SCRYPT_N", 1 << 11)
    doc = msgspec.json.decode(I.Identity.generate("x").to_file_bytes("a long passphrase"), type=I.KeyFile)
    assert (doc.type, doc.v, doc.kdf, doc.n, doc.r, doc.p, doc.name) == \
        ("pbem-identity", 1, "scrypt", 1 << 11, 8, 1, "x")
    assert len(bytes.fromhex(doc.salt)) == 16 and len(bytes.fromhex(doc.nonce)) == 12


def test_passphrase_length_boundary(tmp_path):
    with pytest.raises(UsageProblem, match="at least 8 characters"):
        I.save_identity(I.Identity.generate(), tmp_path / "seven", "7 chars")
    assert not (tmp_path / "seven").exists()
    ident = I.Identity.generate()
    pub = I.save_identity(ident, tmp_path / "eight", "8 chars!")
    assert I.load_identity(tmp_path / "eight", "8 chars!").public_text == ident.public_text
    assert stat.S_IMODE(pub.stat().st_mode) == 0o644 and pub.name == "eight.pub"
    # Characters, not bytes: seven two-byte letters are still too short.
    with pytest.raises(UsageProblem, match="too short"):
        I.save_identity(I.Identity.generate(), tmp_path / "u", "\u00e4" * 7)


def test_force_overwrites_an_identity(tmp_path):
    path = tmp_path / "two" / "levels" / "k"
    first = I.Identity.generate()
    pub = I.save_identity(first, path, "long enough")
    assert pub.read_bytes() == first.public_text.encode() + b"\n"
    other = I.Identity.generate()
    I.save_identity(other, path, "long enough", force=True)
    assert I.load_identity(path, "long enough").public_text == other.public_text


def _key_file(tmp_path, **change) -> object:
    ident = I.Identity.generate("k")
    path = tmp_path / "id.key"
    I.save_identity(ident, path, "long enough")
    if change:
        doc = msgspec.json.decode(path.read_bytes(), type=dict)
        doc.update(change)
        path.write_bytes(msgspec.json.encode(doc))
    return path


@pytest.mark.parametrize("change", [
    {"v": 2}, {"v": 0}, {"type": "pbem-vault"}, {"kdf": "argon2id"}, {"kdf": ""},
])
def test_a_key_file_of_another_version_type_or_kdf_is_refused(tmp_path, change):
    path = _key_file(tmp_path, **change)
    with pytest.raises(BadFile, match="not a version-1 pbem identity key file"):
        I.load_identity(path, "long enough")


@pytest.mark.parametrize("change", [
    {"n": 1 << 9}, {"n": 1 << 21}, {"n": (1 << 20) + 1}, {"r": 0}, {"r": 33}, {"p": 0}, {"p": 17},
])
def test_scrypt_parameters_out_of_range_are_refused_before_any_work(tmp_path, monkeypatch, change):
    path = _key_file(tmp_path, **change)
    monkeypatch.setattr(I, "_kdf", lambda *a: pytest.fail("scrypt ran on an out-of-range file"))
    with pytest.raises(BadFile, match="scrypt parameters out of range"):
        I.load_identity(path, "long enough")


@pytest.mark.parametrize("change", [
    {"n": 1 << 10}, {"n": 1 << 20}, {"r": 1}, {"r": 32}, {"p": 1}, {"p": 16},
])
def test_scrypt_parameters_at_the_bounds_are_accepted(tmp_path, monkeypatch, change):
    """At each bound the file passes the range check and reaches the KDF (here
    a stand-in: the real one would cost up to 1 GiB), which then fails to
    unlock: a wrong passphrase, not a refused file."""
    path = _key_file(tmp_path, **change)
    seen = []
    monkeypatch.setattr(I, "_kdf", lambda pw, salt, n, r, p: seen.append((n, r, p)) or bytes(32))
    with pytest.raises(KeyProblem, match="wrong passphrase"):
        I.load_identity(path, "long enough")
    ((n, r, p),) = seen
    assert {"n": n, "r": r, "p": p}[next(iter(change))] == next(iter(change.values()))


@pytest.mark.parametrize("content", [
    b"", b"\x00\xff garbage", b"not json", b"[]", b'{"type":"pbem-identity"}', b"null",
    b'{"type":"pbem-identity","v":"1"}',
])
def test_a_garbage_key_file_is_refused_cleanly(tmp_path, content):
    path = tmp_path / "id.key"
    path.write_bytes(content)
    with pytest.raises(BadFile, match="is not a pbem identity key file"):
        I.load_identity(path, "long enough")


@pytest.mark.parametrize("field", ["salt", "nonce", "ciphertext"])
def test_a_key_file_with_damaged_hex_is_refused_cleanly(tmp_path, field):
    path = _key_file(tmp_path, **{field: "zz"})
    with pytest.raises(BadFile, match="damaged key file"):
        I.load_identity(path, "long enough")


def test_a_key_file_with_an_unknown_field_is_refused(tmp_path):
    path = _key_file(tmp_path, extra="x")
    with pytest.raises(BadFile, match="not a pbem identity key file"):
        I.load_identity(path, "long enough")


def test_a_missing_key_file_is_not_found(tmp_path):
    with pytest.raises(NotFound, match="pbem keygen"):
        I.load_identity(tmp_path / "nothing.key", "long enough")


def test_a_tampered_ciphertext_or_public_line_is_a_key_problem(tmp_path):
    path = _key_file(tmp_path)
    doc = msgspec.json.decode(path.read_bytes(), type=dict)
    ct = bytearray(bytes.fromhex(doc["ciphertext"]))
    ct[0] ^= 1
    path.write_bytes(msgspec.json.encode({**doc, "ciphertext": ct.hex()}))
    with pytest.raises(KeyProblem, match="wrong passphrase"):
        I.load_identity(path, "long enough")
    other = I.Identity.generate().public_text  # the public line is associated data
    path.write_bytes(msgspec.json.encode({**doc, "public": other}))
    with pytest.raises(KeyProblem):
        I.load_identity(path, "long enough")


def test_a_key_file_sealing_another_key_than_its_public_line_is_refused(tmp_path):
    """Sealed consistently (the public line is the associated data) but the seed
    is of another key: the pair is refused, not silently used."""
    seed, salt, nonce = bytes(range(32)), bytes(16), bytes(12)
    liar = I.Identity.generate().public_text
    key = I._kdf("long enough", salt, 1 << 10, 8, 1)
    ct = ChaCha20Poly1305(key).encrypt(nonce, seed, liar.encode())
    doc = I.KeyFile(type="pbem-identity", v=1, public=liar, kdf="scrypt", n=1 << 10, r=8, p=1,
                    salt=salt.hex(), nonce=nonce.hex(), ciphertext=ct.hex())
    path = tmp_path / "id.key"
    path.write_bytes(msgspec.json.encode(doc))
    with pytest.raises(KeyProblem, match="does not match its public key"):
        I.load_identity(path, "long enough")


def test_public_key_lines_must_be_exactly_64_lowercase_hex_digits():
    ident = I.Identity(Ed25519PrivateKey.from_private_bytes(bytes(range(32))))
    text = ident.public_text
    assert I.parse_public("  " + text + "\n").public_bytes_raw() == ident.public.public_bytes_raw()
    hexpart = text.split(":")[1]
    for bad in (text[:-2], text + "00", I.PUBLIC_PREFIX + hexpart.upper(), I.PUBLIC_PREFIX,
                I.PUBLIC_PREFIX + hexpart[:-1] + "g"):
        with pytest.raises(UsageProblem, match="public key must be 64 lowercase hex digits after the prefix"):
            I.parse_public(bad)
    for bad in ("PBEM-ED25519:" + hexpart, hexpart, ""):
        with pytest.raises(UsageProblem, match="not a pbem public key"):
            I.parse_public(bad)


def test_fingerprints_are_four_groups_of_four_hex_digits_and_differ_per_key():
    keys = [I.Identity.generate() for _ in range(4)]
    prints = [k.fingerprint for k in keys]
    assert len(set(prints)) == 4
    for fp in prints:
        groups = fp.split("-")
        assert [len(g) for g in groups] == [4, 4, 4, 4] and all(c in "0123456789abcdef" for c in "".join(groups))
    assert I.fingerprint(keys[0].public) == I.fingerprint(keys[0].public_text) == prints[0]


def test_signatures_verify_only_with_their_key_and_data():
    a, b = I.Identity.generate(), I.Identity.generate()
    sig = a.sign(b"data")
    assert I.verify_signature(a.public, sig, b"data") is True
    assert I.verify_signature(a.public, sig, b"date") is False
    assert I.verify_signature(b.public, sig, b"data") is False
    assert a.seed() != b.seed() and len(a.seed()) == 32

