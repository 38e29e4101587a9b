"""Commitments and Merkle set commitments (DESIGN 4)."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.commit import LeafOpening, MerkleSet, commit, opens, verify_leaf

GAME = b"g" * 32


def test_commitment_opens_only_with_its_value_salt_label_and_game():
    digest, salt = commit(GAME, "axis.block.7", b"21Pz/5:4")
    assert opens(digest, GAME, "axis.block.7", salt, b"21Pz/5:4")
    assert not opens(digest, GAME, "axis.block.7", salt, b"21Pz/5:3")
    assert not opens(digest, GAME, "axis.block.8", salt, b"21Pz/5:4")
    assert not opens(digest, b"h" * 32, "axis.block.7", salt, b"21Pz/5:4")
    assert not opens(digest, GAME, "axis.block.7", bytes(32), b"21Pz/5:4")


def test_commitments_are_hiding_fresh_salt_each_time():
    assert commit(GAME, "x", b"1")[0] != commit(GAME, "x", b"1")[0]


def test_length_prefixing_prevents_boundary_shifts():
    salt = bytes(32)
    assert commit(GAME, "ab", b"c", salt)[0] != commit(GAME, "a", b"bc", salt)[0]


MAP = {f"hex{i:03d}": (b"1" if i in (3, 17, 40) else b"0") for i in range(57)}


def test_merkle_presence_and_absence_proofs():
    tree = MerkleSet(MAP)
    present = tree.open("hex017")
    absent = tree.open("hex018")
    assert verify_leaf(tree.root, present) and present.value == b"1".hex()
    assert verify_leaf(tree.root, absent) and absent.value == b"0".hex()


def test_merkle_proof_cannot_be_bent():
    tree = MerkleSet(MAP)
    proof = tree.open("hex017")
    assert not verify_leaf(tree.root, msgspec.structs.replace(proof, value=b"0".hex()))
    assert not verify_leaf(tree.root, msgspec.structs.replace(proof, key="hex018"))
    assert not verify_leaf(tree.root, msgspec.structs.replace(proof, index=proof.index + 1))
    assert not verify_leaf(tree.root, msgspec.structs.replace(proof, size=proof.size + 1))
    other = MerkleSet({**MAP, "hex017": b"0"})
    assert not verify_leaf(other.root, proof)
    with pytest.raises(KeyError):
        tree.open("nowhere")


@given(st.dictionaries(st.text(min_size=1, max_size=6), st.sampled_from([b"0", b"1"]), min_size=1, max_size=40),
       st.data())
@settings(max_examples=60)
def test_every_leaf_of_any_set_opens_and_no_forged_value_does(leaves, data):
    tree = MerkleSet(leaves)
    key = data.draw(st.sampled_from(sorted(leaves)))
    proof = tree.open(key)
    assert verify_leaf(tree.root, proof)
    flipped = b"1" if leaves[key] == b"0" else b"0"
    assert not verify_leaf(tree.root, LeafOpening(key=proof.key, value=flipped.hex(), salt=proof.salt,
                                                  index=proof.index, size=proof.size, path=proof.path))


@settings(max_examples=200, deadline=None)
@given(salt=st.binary(min_size=0, max_size=40), key=st.text(max_size=20), value=st.binary(max_size=70),
       left=st.binary(min_size=0, max_size=40), right=st.binary(min_size=0, max_size=40))
def test_the_written_out_set_hashes_are_hash_parts(salt, key, value, left, right):
    """Issue 20: a whole-set opening hashes a map's every hex, so the leaf, node
    and leaf-salt hashes are written out without hash_parts' loop; they must
    stay the very bytes of the published definition (DESIGN 4, tests/test_vectors.py)."""
    from pbem import commit as c

    assert c._leaf(salt, key, value) == c.hash_parts(c._LEAF, salt, key.encode("utf-8"), value)
    assert c._node(left, right) == c.hash_parts(c._NODE, left, right)
    assert c._node(left.ljust(32, b"x")[:32], right.ljust(32, b"y")[:32]) == \
        c.hash_parts(c._NODE, left.ljust(32, b"x")[:32], right.ljust(32, b"y")[:32])
    assert c.leaf_salt(salt, key) == c.hash_parts(c._LEAF_SALT, salt, key.encode("utf-8"))
