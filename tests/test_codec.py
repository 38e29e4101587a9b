"""Canonical codec and envelope (DESIGN 3)."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem import codec
from pbem.codec import Body, CodecError, Commitment, Entropy, Opening

hex32 = st.binary(min_size=32, max_size=32).map(bytes.hex)
labels = st.from_regex(r"[A-Za-z0-9_.:/+-]{1,20}", fullmatch=True)
notes = st.text(max_size=60)


@st.composite
def bodies(draw) -> Body:
    seq = draw(st.integers(0, 10**6))
    return Body(
        v=1, game=draw(hex32), seq=seq, prev=draw(hex32), author=draw(st.sampled_from(["red", "blue"])),
        entropy=Entropy(commit=draw(hex32), reveal=draw(st.one_of(st.just(""), hex32))),
        actions=[codec.raw({"type": "advance", "steps": draw(st.integers(-5, 5))})
                 for _ in range(draw(st.integers(0, 3)))],
        commits=[Commitment(label=draw(labels), digest=draw(hex32)) for _ in range(draw(st.integers(0, 2)))],
        reveals=[Opening(label=draw(labels), salt=draw(hex32), value=draw(st.binary(max_size=8)).hex())
                 for _ in range(draw(st.integers(0, 2)))],
        note=draw(notes),
    )


@given(bodies())
@settings(max_examples=200)
def test_encode_decode_encode_is_byte_identical(body):
    data = codec.canonical(body)
    assert data.isascii()
    again = codec.decode_body(data)
    assert codec.canonical(again) == data
    stored = codec.wrap(data, bytes(range(64)))
    assert codec.unwrap(stored).body == data


def test_non_ascii_note_is_escaped_and_round_trips():
    body = Body(v=1, game="", seq=0, prev="", author="red", entropy=Entropy(commit="0" * 64),
                note="Rommel’s 🐪 at Tobruk")
    data = codec.canonical(body)
    assert data.isascii() and b"\\u2019" in data and b"\\ud83d\\udc2a" in data
    assert codec.decode_body(data).note == "Rommel’s 🐪 at Tobruk"


def _body_bytes(**changes) -> bytes:
    body = Body(v=1, game="", seq=0, prev="", author="red", entropy=Entropy(commit="0" * 64))
    doc = msgspec.to_builtins(body)
    doc.update(changes)
    return msgspec.json.encode(doc, order="deterministic")


def test_unknown_field_is_rejected():
    with pytest.raises(CodecError, match="unknown field"):
        codec.decode_body(_body_bytes(extra=1))


def test_float_is_rejected():
    with pytest.raises(CodecError):
        codec.decode_body(_body_bytes(seq=1.0))


def test_non_canonical_encoding_is_rejected():
    spaced = _body_bytes().replace(b',"', b', "')
    with pytest.raises(CodecError, match="canonical"):
        codec.decode_body(spaced)


def test_other_format_version_is_named():
    # Version 2 (a game under a time control, issue 27 point 4), 3, 4 (terminal events,
    # docs/protocol.md decision 26), 5, 6 (takebacks, decision 28) and 7, 8 (the
    # Ristretto255 deck, decision 29) are read; 9 is not.
    with pytest.raises(codec.UnsupportedVersion, match=r"format version 9 is not supported .*versions 1, 2, 3, 4, 5, "
                                                       r"6, 7, 8\); upgrade"):
        codec.decode_body(_body_bytes(v=9))
    # A later version may add fields: its body is named by its version, not called malformed.
    with pytest.raises(codec.UnsupportedVersion, match="format version 9 is not supported"):
        codec.decode_body(_body_bytes(v=9, extra=1))
    with pytest.raises(CodecError, match=r"malformed event body: Expected `int`, got `str` - at `\$.v`") as bad:
        codec.decode_body(_body_bytes(v="9", extra=1))
    assert not isinstance(bad.value, codec.UnsupportedVersion)


def test_wrapper_must_be_exact():
    stored = codec.wrap(_body_bytes(), bytes(64))
    with pytest.raises(CodecError):
        codec.unwrap(stored.replace(b'"sig"', b' "sig"'))
    with pytest.raises(CodecError, match="over the limit"):
        codec.unwrap(b"x" * (codec.MAX_EVENT_BYTES + 1))
    with pytest.raises(CodecError, match="not a pbem event"):
        codec.unwrap(stored[:-5])


#: The wire language of an opening's value and a leaf's value, as the decode
#: refused it before its pattern was split into a faster one and
#: ``codec.whole_bytes`` (issue 20): whole bytes of lowercase hex.
_WHOLE_BYTES = {"opening": r"([0-9a-f]{2}){0,4096}", "leaf": r"([0-9a-f]{2}){0,64}"}


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(alphabet="0123456789abcdefABz -", max_size=12),
                      st.integers(0, 8200).map(lambda n: "ab" * (n // 2) + "c" * (n % 2)),
                      st.integers(120, 136).map(lambda n: "0" * n),
                      st.text(alphabet="0123456789abcdef", min_size=8185, max_size=8200)),
       which=st.sampled_from(sorted(_WHOLE_BYTES)))
def test_the_wire_refuses_exactly_a_value_that_is_not_whole_bytes_of_lowercase_hex(text, which):
    import re

    if which == "opening":
        value: object = Opening(label="a", salt="00" * 32, value="ab")
    else:
        value = codec.LeafOpening(label="a", key="k", value="ab", salt="00" * 32, index=0, size=1, path=[])
    raw = msgspec.json.encode(value).replace(b'"ab"', msgspec.json.encode(text))
    if re.fullmatch(_WHOLE_BYTES[which], text):
        assert msgspec.json.decode(raw, type=type(value)) is not None
    else:
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(raw, type=type(value))


@given(bodies(), st.binary(min_size=64, max_size=64))
@settings(max_examples=200)
def test_a_vouched_unwrap_reads_what_unwrap_reads(body, sig):
    """``unwrap_vouched`` (pbem.logcheck: bytes its second process unwrapped)
    gives exactly ``unwrap``'s result for every event ``unwrap`` accepts."""
    stored = codec.wrap(codec.canonical(body), sig)
    assert codec.unwrap_vouched(stored) == codec.unwrap(stored)
