"""Known-answer test vectors of the protocol (docs/protocol.md, "Test vectors").

Every value here was computed once by pbem 0.1.0 (format version 1) and is
frozen as a literal: if any byte changes, a test fails, because every
existing game log and key file depends on these bytes. The same values are
published in docs/protocol.md so that an independent implementation can check
itself; keep the two in step. Never "update" a literal to make a test pass:
a changed value is a new format version.
"""

from __future__ import annotations

import hashlib

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pbem import codec, dice
from pbem import commit as C
from pbem import deck as D
from pbem import identity as I
from pbem.codec import Body, Commitment, Entropy

#: Inputs shared by the vectors (docs/protocol.md, "Test vectors").
ED_SEED = bytes(range(32))                  # 000102...1f
GAME = bytes(range(32))                     # game id / commitment domain
PUBLIC = "pbem-ed25519:03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8"


def _identity() -> I.Identity:
    return I.Identity(Ed25519PrivateKey.from_private_bytes(ED_SEED), "red")


# --- V1: key and fingerprint -------------------------------------------------------

def test_v1_public_key_and_fingerprint():
    ident = _identity()
    assert ident.public_text == PUBLIC
    assert ident.fingerprint == "4d59-5d5c-521b-2cde"
    assert I.fingerprint(PUBLIC) == "4d59-5d5c-521b-2cde"
    raw = bytes.fromhex(PUBLIC.split(":")[1])
    assert hashlib.sha256(b"pbem/v1/fingerprint\x00" + raw).hexdigest()[:16] == "4d595d5c521b2cde"


# --- V2: one event: canonical body, signature, stored bytes, hash ----------------------

EVENT_BODY = (
    b'{"v":1,"game":"1111111111111111111111111111111111111111111111111111111111111111","seq":1,'
    b'"prev":"2222222222222222222222222222222222222222222222222222222222222222","author":"red",'
    b'"entropy":{"commit":"8da96d806d6ca7868ac158ef282f7acf08e34cf1d8d70e40e54e3c9be0a22170"},'
    b'"actions":[{"steps":2,"type":"advance"}],'
    b'"commits":[{"label":"speed/red","digest":"3333333333333333333333333333333333333333333333333333333333333333"}],'
    b'"note":"Vorw\\u00e4rts \\ud83c\\udfc1"}'
)
EVENT_SIG = ("a1636837eb685125e464ed4636de6e9e21c062b96285a8c63f3c5a0508d3799d"
             "5d7901bac5819f1feca0041eaa3cea10f244fe3c83ed48208a1d82c0b1cdea06")
EVENT_HASH = "6a7bfe818f468c77814aa40f8312b15e51d9c98ae0688048a4b3e34c18eaf738"


def _event_body() -> Body:
    return Body(v=1, game="11" * 32, seq=1, prev="22" * 32, author="red",
                entropy=Entropy(commit=dice.entropy_commitment("red", bytes([0x42]) * 32).hex()),
                actions=[codec.raw({"type": "advance", "steps": 2})],
                commits=[Commitment(label="speed/red", digest="33" * 32)],
                note="Vorw\u00e4rts \U0001F3C1")


def test_v2_entropy_commitment():
    assert dice.entropy_commitment("red", bytes([0x42]) * 32).hex() == \
        "8da96d806d6ca7868ac158ef282f7acf08e34cf1d8d70e40e54e3c9be0a22170"


def test_v2_event_body_signature_stored_bytes_and_hash():
    body = codec.canonical(_event_body())
    assert body == EVENT_BODY
    signing = codec.signing_input(body)
    assert signing == b"pbem/v1/event\x00" + EVENT_BODY
    sig = _identity().sign(signing)
    assert sig.hex() == EVENT_SIG  # Ed25519 (RFC 8032) is deterministic
    stored = codec.wrap(body, sig)
    assert stored == b'{"body":' + EVENT_BODY + b',"sig":"' + EVENT_SIG.encode() + b'"}'
    assert codec.sha256(stored).hex() == EVENT_HASH
    # ... and it reads back: signature over the stored slice, body canonical.
    unwrapped = codec.unwrap(stored)
    assert I.verify_signature(I.parse_public(PUBLIC), unwrapped.sig, codec.signing_input(unwrapped.body))
    assert codec.decode_body(unwrapped.body) == _event_body()


# --- V3: length-prefixed hashing and a commitment -------------------------------------

def test_v3_hash_parts_are_length_prefixed():
    assert C.hash_parts(b"a", b"bc").hex() == "3fafa1cf2f19a7c1129beb20cf0983f73a489a221fc0dd2f16d1be292d089205"
    assert C.hash_parts(b"ab", b"c").hex() == "601d5476e2ccfe2c87a2bba7a322659734a05749d5b5aa781f513e4912db0d5f"
    assert C.hash_parts(b"a", b"bc") == hashlib.sha256(
        (1).to_bytes(8, "big") + b"a" + (2).to_bytes(8, "big") + b"bc").digest()


def test_v3_commitment_with_fixed_salt():
    digest, salt = C.commit(GAME, "speed/red", b"3", salt=bytes([0xAA]) * 32)
    assert salt == bytes([0xAA]) * 32
    assert digest.hex() == "371c63ee3239faead1b027434c754ee5639c1068b864ce15d9c9d0deda1e59d3"
    assert C.opens(digest, GAME, "speed/red", salt, b"3")
    assert not C.opens(digest, GAME, "speed/red", salt, b"4")


# --- V4: a Merkle set and one opening ---------------------------------------------------

SET_LEAVES = {"1": b"0", "2": b"1", "3": b"0"}
SET_SEED = bytes([0x07]) * 32
SET_ROOT = "d093c3dda5d33c7e5321b98dbfd4ec8a85e9a45d47319d55c59cfc046b3d6ae2"
SET_OPENING_2 = C.LeafOpening(
    key="2", value="31", salt="f080f0507516561a3238f32ab1f23911633b703fa427d1406ab72673713c829b",
    index=1, size=3, path=[("b3fa0cd7991a5d123ee2cc221900a795f44052c270dfd7c0929218363c6948b6", False),
                           ("fd97e494cec7763b0700d1b8ddb4955e2347a705f45910b7f82df8c3af4d7b6f", True)])


def test_v4_merkle_set_root_encoding_and_opening():
    s = C.set_from_seed(SET_LEAVES, SET_SEED)
    assert s.root.hex() == SET_ROOT
    assert C.leaf_salt(SET_SEED, "3").hex() == "c0d316c8f7b1947eb57273b7fd9bfead4f9f98ba6494833104409884e42d14f9"
    assert C.encode_leaves(SET_LEAVES) == b'{"1":"30","2":"31","3":"30"}'
    assert s.open("2") == SET_OPENING_2
    assert C.verify_leaf(bytes.fromhex(SET_ROOT), SET_OPENING_2)
    assert C.set_opens(bytes.fromhex(SET_ROOT), SET_SEED, b'{"1":"30","2":"31","3":"30"}')


def test_v4_the_root_is_built_as_published():
    """The tree spelled out: leaves, one odd level duplicated, the count bound in the root."""
    leaf = [C.hash_parts(b"pbem/v1/leaf", C.leaf_salt(SET_SEED, k), k.encode(), v) for k, v in SET_LEAVES.items()]
    n01 = C.hash_parts(b"pbem/v1/node", leaf[0], leaf[1])
    n22 = C.hash_parts(b"pbem/v1/node", leaf[2], leaf[2])
    top = C.hash_parts(b"pbem/v1/node", n01, n22)
    assert C.hash_parts(b"pbem/v1/empty", (3).to_bytes(8, "big"), top).hex() == SET_ROOT
    assert SET_OPENING_2.path == [(leaf[0].hex(), False), (n22.hex(), True)]


# --- V5: dice ---------------------------------------------------------------------------

EH, XP, XQ = bytes([0x01]) * 32, bytes([0x02]) * 32, bytes([0x03]) * 32
DIGEST_ATTEMPT_0 = "37714a29d59b71fe302e81f940ad95eaa6b7dc71a745a4a8e83a9c4ecc5badf1"
DIGEST_ATTEMPT_1 = "f0722243b9fe303b72d7653a81c81457b7ee3a163a92a7b9b4ddf1a0e76cb7f1"


def test_v5_dice_from_fixed_entropy():
    assert dice.roll(GAME, EH, XP, XQ, (6, 6, 6, 20, 2, 100, 65536)) == (5, 4, 5, 8, 2, 28, 58945)
    assert dice.roll_one(GAME, EH, 3, XP, XQ, 20) == 8
    # A secret die: the asker's seed in place of x_P.
    assert dice.roll_one(GAME, EH, 0, bytes([0x04]) * 32, XQ, 6) == \
        int.from_bytes(C.hash_parts(b"pbem/v1/dice", GAME, EH, bytes(4), bytes(4), bytes([0x04]) * 32,
                                    XQ)[:8], "big") % 6 + 1


def test_v5_dice_digests_of_attempts_0_and_1():
    def digest(attempt: int) -> bytes:
        return C.hash_parts(b"pbem/v1/dice", GAME, EH, (0).to_bytes(4, "big"), attempt.to_bytes(4, "big"), XP, XQ)
    assert digest(0).hex() == DIGEST_ATTEMPT_0
    assert digest(1).hex() == DIGEST_ATTEMPT_1
    assert int.from_bytes(digest(0)[:8], "big") % 6 + 1 == 5
    assert int.from_bytes(digest(1)[:8], "big") % 6 + 1 == 6


def test_v5_a_rejected_draw_moves_to_attempt_1(monkeypatch):
    """No real rejection can be found (for any die of at most 2^16 sides a draw
    is rejected with probability below 2^-47), so the attempt-0 digest is
    replaced by one whose draw lies in the rejected top block; the die must
    then be attempt 1's: 6 on a d6, and the d7's value from the same digest."""
    real = dice.hash_parts
    rejected = (2**64 - 1).to_bytes(8, "big") + bytes(24)  # 2^64 - 1 >= limit for any sides > 1 not a power of 2

    def forced(*parts: bytes) -> bytes:
        if parts[0] == b"pbem/v1/dice" and parts[4] == bytes(4):
            return rejected
        return real(*parts)

    monkeypatch.setattr(dice, "hash_parts", forced)
    assert dice.roll_one(GAME, EH, 0, XP, XQ, 6) == 6
    assert dice.roll_one(GAME, EH, 0, XP, XQ, 7) == int(DIGEST_ATTEMPT_1[:16], 16) % 7 + 1 == 3
    # A power of two has no rejected block: the top draw is accepted at attempt 0.
    assert dice.roll_one(GAME, EH, 0, XP, XQ, 8) == 8


# --- V6: cards encoded into the group of format versions 1-6 -------------------------------

def test_v6_card_encoding_in_the_ed25519_group():
    assert all(D.play_group(v) is D.ED25519 for v in range(1, codec.RISTRETTO_VERSION))
    assert D.elem_hex(D.ED25519, D.encode_card(D.ED25519, GAME, "real-00")) == \
        "294e4a108e57bcc545a554414dd273c027935e4f062936ee70108a64cadb7850"
    assert D.elem_hex(D.ED25519, D.encode_card(D.ED25519, GAME, "dummy-00")) == \
        "a7a0b01c4d20066886eb46762835c1cbb6990f5229653e86a7dc9d1bd6859554"


# --- V7: one full round: shuffle, deal, show ---------------------------------------------

SEED_FIRST, SEED_SECOND = bytes([0xA1]) * 32, bytes([0xB2]) * 32
ROUND_STEPS = [
    b'{"round":"r1","step":1,"cards":["d799acd9fb9ae3e3e3a13fb77d56eba872697f62929cec84e844405ab4b5f857",'
    b'"2ec64e48f8feb067849ab97b3800aa1a399191a8589da010ce72b9894941cac9",'
    b'"8fb188bc771590c5e0504c467e9f1bfd1639eb537426dcae66b4fd50af2a6c7e"],'
    b'"commits":["4018c751e3e6de4056af08b739397af3535c526a5aa78920ca0991c891cc1e64"],'
    b'"sources":[{"type":"card","label":"real-00"},{"type":"card","label":"real-01"},'
    b'{"type":"card","label":"dummy-00"}]}',
    b'{"round":"r1","step":2,"cards":["dba6754169ee483572f304f19401f493c16f99b04fc72279fce16541abc60bdf",'
    b'"a4ef2b73807a8031591877a1142127478737f6d0a1c68345016c7d956deb69be",'
    b'"258634e099abd5d76db1cb71319a603eef6d6ce50c828141d2064298fc951da5"],'
    b'"commits":["ad235ebd8ae6fbd1bb74f950965deec975444694e7c8850e9cd118001e3f5cb4"]}',
    b'{"round":"r1","step":3,"cards":["dde4cc77a2a2ffdad24488dbef063744488a1b95543d5e5a0bf78f5e265d38c9",'
    b'"49b8450f8712074ae94cc048a8118c432317bb7a8d7b54bf59151b9697f4dd28",'
    b'"7d5138921b8ff68162a9158f2167c3f1b59995f785ee08866db0172d283c2779"],'
    b'"commits":["aa9bc26a4326a1281122aef6d9be7d22ce092300da01a7ae07cc182a9cd0338e",'
    b'"f18290266ab778d72cb260b76ae26be5c53fee7db40efb37e1c27baa48390d2f",'
    b'"c6dba81ec3f2882f4f6a06cfe9fc741fac5880f7fe6ddc45147d5591a1217bd8"]}',
    b'{"round":"r1","step":4,"cards":["0209ae99ce87c6e7eb35d9f165eff5a71bf1474bacdcaed34cd2c2681467ae27",'
    b'"d0ed3962812caf9ea9c8317c097cb3dbb8cbeb929cf8c145ccb5526714fe8f1e",'
    b'"091518316d0281334efed0f39bcf6e63607c23e2a196c52254b227fbd5b5ad07"],'
    b'"commits":["c97efa9d3699f71e0c0b0de11d5b0caa0f8f5500d315aafab74752864c3c96fc",'
    b'"3134d7a40bc2c1182ea6e7575703ab79229f8e600319eea219f057c5db5aba5c",'
    b'"8bfa5ef4c6ea559eb0f0f3bd498fcfd136a95b73f07538bb9961232afde01288"]}',
]
KEY_FIRST_GLOBAL = (b'{"round":"r1","step":1,"index":0,'
                    b'"key":"0e468f10a8db24f2bc944468aa9aa1bb26542ce04d0a1306517573432bd757f5",'
                    b'"salt":"ca9df110b1d67e6a04c2e87baf368230ba7091d497a1fb30f9dceccba85d8b16"}')
KEY_SECOND_GLOBAL = (b'{"round":"r1","step":2,"index":0,'
                     b'"key":"06b87c0aa11b08d4579e003cb928ceda2a4a4a2adc0feb37d5085bf086c88d1c",'
                     b'"salt":"08a2d32f58ed227183430b8abf10f379e9c06166b914860fc803eb61d602d963"}')
DEAL_0_TO_FIRST = (b'{"round":"r1","step":4,"index":0,'
                   b'"key":"099561d662aeb659cd5fa471b7808a2eb628220ec18255c2bafcecc47cf65d3f",'
                   b'"salt":"6a7d165cc71a3cc15fb19d1745fb7b79f09084042f28390128619226e5ab03fa"}')
SHOW_0_BY_FIRST = (b'{"round":"r1","step":3,"index":0,'
                   b'"key":"01a2ddde398f56a93118e9f28efee6a5808fc0df8470ea8fc8dddd34ea2e2aae",'
                   b'"salt":"65aa10d7954910d90fd016c9db8c30359c4821c763208e7b290b2e9715900e9b"}')
SOURCES = [D.Card(label=lb) for lb in ("real-00", "real-01", "dummy-00")]


@pytest.fixture(scope="module")
def vector_round():
    done: list[D.Step] = []
    resolve = D.history_resolver(D.ED25519, {})
    for i in range(4):
        step = D.make_step(D.ED25519, GAME, "r1", SOURCES, done, SEED_FIRST if i % 2 == 0 else SEED_SECOND, resolve)
        D.check_step(D.ED25519, SOURCES, done, step)
        done.append(step)
    return {"r1": D.DeckRound(steps=done)}


def test_v7_the_four_shuffle_steps(vector_round):
    assert [codec.canonical(s) for s in vector_round["r1"].steps] == ROUND_STEPS


def test_v7_permutations_and_global_keys():
    assert D._permutation(D.ED25519, GAME, "r1", SEED_SECOND, 3) == [2, 1, 0]  # step 2
    assert D._permutation(D.ED25519, GAME, "r1", SEED_FIRST, 3) == [1, 0, 2]   # step 3
    assert codec.canonical(D.open_key(D.ED25519, GAME, "r1", SEED_FIRST, 1, 0)) == KEY_FIRST_GLOBAL
    assert codec.canonical(D.open_key(D.ED25519, GAME, "r1", SEED_SECOND, 2, 0)) == KEY_SECOND_GLOBAL


def test_v7_deal_and_show_position_0(vector_round):
    deal = D.deal_key(D.ED25519, GAME, "r1", SEED_SECOND, D.FIRST, 0)
    assert codec.canonical(deal) == DEAL_0_TO_FIRST
    assert D.draw_card(D.ED25519, GAME, vector_round, "r1", 0, D.FIRST, SEED_FIRST, deal) == "real-01"
    own = D.own_key(D.ED25519, GAME, "r1", SEED_FIRST, D.FIRST, 0)
    assert codec.canonical(own) == SHOW_0_BY_FIRST
    assert D.verify_open(D.ED25519, GAME, vector_round, "r1", 0, own, deal) == "real-01"


def test_v7_the_audit_of_the_round(vector_round):
    openings = D.open_all(D.ED25519, GAME, "r1", SEED_FIRST, D.FIRST, 3) + \
        D.open_all(D.ED25519, GAME, "r1", SEED_SECOND, D.SECOND, 3)
    dealt = D.audit_deck(D.ED25519, GAME, [vector_round["r1"]], openings,
                         [D.Draw(round="r1", pos=0, to="axis")], ("axis", "allied"))
    assert dealt == [D.Dealt(round="r1", labels=["real-01", "dummy-00", "real-00"],
                             holders=["axis", "", ""], carried_to=["", "", ""])]


# --- V9: Ristretto255, the group of format versions 7 and 8 (docs/protocol.md decision 29) ---

#: RFC 9496 appendix A.1: the encodings of the generator B and of 2B.
RISTRETTO_B = "e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76"
RISTRETTO_2B = "6a493210f7499cd17fecb510ae0cea23a110e8d5b901f8acadd3095c73a3b919"


def test_v9_the_ristretto255_library_meets_rfc_9496():
    """The library under the group (rbcl's libsodium) against the RFC's own
    values: 2 x B, B x (l + 1), and the scalar used as given (not clamped: a
    clamped 2 would be 2^254, whose product is not 2B)."""
    g = D.RISTRETTO255
    b_ = int(RISTRETTO_B, 16)
    assert D.elem_hex(g, g.exp(b_, 2)) == RISTRETTO_2B
    assert g.exp(b_, g.q + 1) == b_ and g.is_element(b_)
    assert D.elem_hex(g, g.exp(g.exp(b_, 7), pow(7, -1, g.q))) == RISTRETTO_B


def test_v9_card_encoding_in_the_ristretto255_group():
    assert D.play_group(codec.RISTRETTO_VERSION) is D.play_group(codec.RISTRETTO_CLOCK_VERSION) is D.RISTRETTO255
    assert D.PLAY is D.RISTRETTO255 and codec.new_game_version(False) == codec.RISTRETTO_VERSION
    assert D.elem_hex(D.RISTRETTO255, D.encode_card(D.RISTRETTO255, GAME, "real-00")) == \
        "b82960a28a5e6512449afae4c6a978545a641ba51c5eb90cce0a1e919dbbad4a"
    assert D.elem_hex(D.RISTRETTO255, D.encode_card(D.RISTRETTO255, GAME, "dummy-00")) == \
        "b0552f339c9bc570d93754b16324753983d4d68e489efb0851c3a0497e5bb63f"


# --- V10: V7's round in Ristretto255 -----------------------------------------------------

R_ROUND_STEPS = [
    b'{"round":"r1","step":1,"cards":["8853ef22a9002fe9794aaa9c1ed561680dd3705e760e089101b2aeb1a620463a",'
    b'"0ef2a209d35f4e69eb8f53431be49e6e65c39ba72930a79e77f226043d96db4a",'
    b'"ec68216b248160e66e273637fa55991d591993b8d8a80fc2c0a4f7e77c56e22f"],'
    b'"commits":["b5866cc2d6902f742f9c9cab3b87a00f7f81e5ac61cd4fdad5ca8470b09fc1c7"],'
    b'"sources":[{"type":"card","label":"real-00"},{"type":"card","label":"real-01"},'
    b'{"type":"card","label":"dummy-00"}]}',
    b'{"round":"r1","step":2,"cards":["5c391e25c2e5f69fa8a61c8b07e00d40443be0215cf6bcc951e38f5d2921a856",'
    b'"2eb16fb54b7229dc86fb358518f5a30a03729b535cf3f04240d6c6a88f4ba04c",'
    b'"101ddcaefbf33a7700b4c67f61ab2e64f16ef755b2281920a203d125173b2232"],'
    b'"commits":["3b3d591173f4b62f2f62c31a6b5ee39dfbeceeeb2e6b6ab9ceafb81c6f2cea79"]}',
    b'{"round":"r1","step":3,"cards":["6e75ab1931876f48a0fb1d15826e09cc942d282d51a86a0ae00e29c4bf735a54",'
    b'"2c0b8c8e0e061e51d3619b4d9298e6c3e763ea381092e8c8aff3afb213fdd04f",'
    b'"b0213fc53c6930e9072eeeea4d18a5867cc30bc38faaf7899ecc4e1413feee2d"],'
    b'"commits":["fa87c2d1b95ebb2ed1f1db9e752deb46260abb60474c190e982dbe498220176c",'
    b'"dac534a254942d31d63a9d075d4db408437ef806eb8fdd36d64cf53cd8d8a4e0",'
    b'"01dfb309463301761f9a88de9658cc57f7fa1646a90fad8425fd0c2d2024c815"]}',
    b'{"round":"r1","step":4,"cards":["fc79a79c16f0d0f65573de0ea5e791ff96cb6a3639bebc9b631fa91128fbf01f",'
    b'"d8bb05fdf12f5e6de3cc0a7410b62ed0fb3d0ad189d7d90d901529a8d9a1ce7d",'
    b'"4ef912b78cf0970f56b5d7fcca429b0fe514c251fb5d1855ff11f7d4ddf8273a"],'
    b'"commits":["a2145b26daf0f11d1afcece8b6b735f15b7c287b6f8e5ec30760af69ac086a35",'
    b'"2032f47b8187ff8bd82dd22b103965dc1839365d0d64aad83b2186064d66d3d2",'
    b'"97f8a0413d56c0350bba1be1ea94e848b4e3add80d9394ebea14c40ed7263c98"]}',
]
R_KEY_FIRST_GLOBAL = (b'{"round":"r1","step":1,"index":0,'
                      b'"key":"085cda8bf8e838404a6e254757d36ca1201d04a4f3979c04bdfe35b719dac7e9",'
                      b'"salt":"71ab3ae7a0ad04e7f2ee4a20e90602bd7d365b29188e3d08c5c547d1055cb304"}')
R_KEY_SECOND_GLOBAL = (b'{"round":"r1","step":2,"index":0,'
                       b'"key":"0ff88629a1eccfc2c4bd4ff3fb07461f8d9dea0d85bfc28ce2cfda7b59dedc3a",'
                       b'"salt":"3092b5e7fb8c5e93afc87fd30063bbcee851332537f7749c8bdcc6ae4a2b84bc"}')
R_DEAL_0_TO_FIRST = (b'{"round":"r1","step":4,"index":0,'
                     b'"key":"0f0986374254d8301f8a71affbb7cecb417e7f49d3e6aced38eaf2b0b86f6ddc",'
                     b'"salt":"22f4d26a5e96778f432b766a09b221565a522a1ff37fa910bd5bee3627062592"}')
R_SHOW_0_BY_FIRST = (b'{"round":"r1","step":3,"index":0,'
                     b'"key":"041d0f87aa86e3c7c91c450488ca55a092e377585435bf4a0c6a98163b1f0301",'
                     b'"salt":"15490a683fb92e67ad5bc88f337ad2ad55aa0ea1071361435e743e773753cbcb"}')


@pytest.fixture(scope="module")
def ristretto_round():
    g, done = D.RISTRETTO255, []
    resolve = D.history_resolver(g, {})
    for i in range(4):
        step = D.make_step(g, GAME, "r1", SOURCES, done, SEED_FIRST if i % 2 == 0 else SEED_SECOND, resolve)
        D.check_step(g, SOURCES, done, step)
        done.append(step)
    return {"r1": D.DeckRound(steps=done)}


def test_v10_the_four_shuffle_steps(ristretto_round):
    assert [codec.canonical(s) for s in ristretto_round["r1"].steps] == R_ROUND_STEPS


def test_v10_permutations_and_global_keys():
    g = D.RISTRETTO255
    assert D._permutation(g, GAME, "r1", SEED_SECOND, 3) == [2, 1, 0]  # step 2
    assert D._permutation(g, GAME, "r1", SEED_FIRST, 3) == [1, 2, 0]   # step 3
    assert codec.canonical(D.open_key(g, GAME, "r1", SEED_FIRST, 1, 0)) == R_KEY_FIRST_GLOBAL
    assert codec.canonical(D.open_key(g, GAME, "r1", SEED_SECOND, 2, 0)) == R_KEY_SECOND_GLOBAL


def test_v10_deal_show_and_audit(ristretto_round):
    g = D.RISTRETTO255
    deal = D.deal_key(g, GAME, "r1", SEED_SECOND, D.FIRST, 0)
    assert codec.canonical(deal) == R_DEAL_0_TO_FIRST
    assert D.draw_card(g, GAME, ristretto_round, "r1", 0, D.FIRST, SEED_FIRST, deal) == "real-01"
    own = D.own_key(g, GAME, "r1", SEED_FIRST, D.FIRST, 0)
    assert codec.canonical(own) == R_SHOW_0_BY_FIRST
    assert D.verify_open(g, GAME, ristretto_round, "r1", 0, own, deal) == "real-01"
    openings = D.open_all(g, GAME, "r1", SEED_FIRST, D.FIRST, 3) + D.open_all(g, GAME, "r1", SEED_SECOND, D.SECOND, 3)
    dealt = D.audit_deck(g, GAME, [ristretto_round["r1"]], openings,
                         [D.Draw(round="r1", pos=0, to="axis")], ("axis", "allied"))
    assert dealt == [D.Dealt(round="r1", labels=["real-01", "real-00", "dummy-00"],
                             holders=["axis", "", ""], carried_to=["", "", ""])]


# --- V8: an identity key file -------------------------------------------------------------

KEY_FILE = b"""{
  "type": "pbem-identity",
  "v": 1,
  "public": "pbem-ed25519:03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8",
  "kdf": "scrypt",
  "n": 32768,
  "r": 8,
  "p": 1,
  "salt": "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a",
  "nonce": "c3c3c3c3c3c3c3c3c3c3c3c3",
  "ciphertext": "05f1d0a50bcdf4551fc0a53edac4baf2374ffe267bd4c821c9c9dc5478103d3bb43995432206ffa6e112b575c6b98a95",
  "name": "red"
}
"""


def test_v8_scrypt_key_of_the_key_file():
    assert I._kdf("correct horse battery", bytes([0x5A]) * 16, 1 << 15, 8, 1).hex() == \
        "0a5fc6318de8f5095c6b8ccc61edd61cef6dd4b8d52d285e9126c4af00f7993c"


def test_v8_a_key_file_with_the_default_parameters_unlocks(tmp_path):
    path = tmp_path / "red.key"
    path.write_bytes(KEY_FILE)
    ident = I.load_identity(path, "correct horse battery")
    assert ident.seed() == ED_SEED and ident.name == "red" and ident.public_text == PUBLIC
    doc = msgspec.json.decode(KEY_FILE, type=I.KeyFile)
    assert (doc.n, doc.r, doc.p) == (1 << 15, 8, 1)


def test_v8_the_key_file_is_written_byte_for_byte(monkeypatch):
    """With the salt and nonce of V8 and the default parameters (the suite's
    cheap-scrypt patch undone), the writer produces exactly the published file."""
    monkeypatch.setattr(I, "SCRYPT_N", 1 << 15)
    draws = iter([bytes([0x5A]) * 16, bytes([0xC3]) * 12])
    monkeypatch.setattr(I.os, "urandom", lambda n: next(draws))
    assert _identity().to_file_bytes("correct horse battery") == KEY_FILE
