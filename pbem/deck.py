"""Exact shared deck without a dealer: mental poker with per-card keys (DESIGN 4).

Commutative (SRA / Pohlig-Hellman) encryption ``x -> x^k`` in a group of
prime order ``q``, three of them behind the same functions (each takes the
group first): the subgroup of quadratic residues of the RFC 3526 2048-bit
MODP group (group 14; ``p = 2q + 1`` a safe prime), the prime-order
subgroup of Ed25519 through libsodium (PyNaCl; the deck of games of format
versions 1-6), and Ristretto255 through libsodium (rbcl; ``PLAY``, the deck
of every game ``pbem new`` creates, format versions 7 and 8:
``play_group``). docs/deck.md "Choice of group" gives the numbers. Every key
``k`` in ``[1, q-1]`` is invertible mod ``q`` and permutes the group, and
encryptions commute. Cards are hashed onto elements (their discrete
logarithms are unknown to everyone), so no card's ciphertext says anything
about another's; every received element is checked (a residue, a point of
the prime-order subgroup, or a canonical Ristretto255 encoding).

A *round* shuffles one deck between two fixed roles, ``first`` and
``second``, in four steps (each one message, alternating first, second,
first, second):

1. first: blind every input card with a global key ``a`` (and strip its own
   old per-card key from cards carried over from an earlier round); no
   permutation. Commits to ``a``.
2. second: apply a global key ``b`` (stripping its own old per-card key from
   carried cards) and permute. Commits to ``b``.
3. first: remove ``a``, apply a per-card key ``a_k`` to each card and
   permute. Commits to every ``a_k``.
4. second: remove ``b`` and apply a per-card key ``b_k``; no permutation.
   Commits to every ``b_k``.

Position ``k`` of the final deck holds ``card^(a_k * b_k)``. Dealing ``k`` to
one player = the other publishes its per-card key for ``k`` (a
``KeyOpening`` checked against its commitment); the drawer removes its own key
privately. Playing the card publicly = the drawer publishes its own key too.
Every secret of a player for a round derives from one 32-byte seed, so a
player's vault keeps one seed per round. ``audit_deck`` takes the transcript
and every key opening and names the first bad step and its author.

Everything here is pure: randomness comes in as seeds (``new_seed`` draws one).
In a game the messages travel as the actions ``DeckStep`` and ``DeckKeys``,
asked for by the rules with ``DeckTask`` (pbem.game checks them at receipt,
pbem.session computes them). See ``docs/deck.md`` for the message flow and
the security argument.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Annotated, Any, NamedTuple

import msgspec

from .codec import Hex32, Label, has_ristretto_deck, whole_bytes
from .commit import commitment_digest, hash_parts

_ENCODE = b"pbem/v1/deck/card"
_DERIVE = b"pbem/v1/deck/derive"
FIRST, SECOND = 0, 1
STEPS = 4

#: RFC 3526 section 3, the 2048-bit MODP group (id 14); generator 2.
MODP2048_P = int(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD1"
    "29024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245"
    "E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3D"
    "C2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F"
    "83655D23DCA3AD961C62F356208552BB9ED529077096966D"
    "670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B"
    "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9"
    "DE2BCBF6955817183995497CEA956AE515D2261898FA0510"
    "15728E5A8AACAA68FFFFFFFFFFFFFFFF",
    16,
)


class DeckError(ValueError):
    """A deck message, key opening or transcript is wrong.

    ``round``, ``step`` (1-4, 0 for the round's sources or a draw record) and
    ``author`` (a role name, or "" when nobody signed the fault) say where.
    """

    def __init__(self, message: str, round: str = "", step: int = 0, author: str = "") -> None:
        where = f"deck round {round!r} step {step}" if round else "deck"
        by = f" (signed by {author})" if author else ""
        super().__init__(f"{where}{by}: {message}")
        self.reason = message
        self.round = round
        self.step = step
        self.author = author


class Group(msgspec.Struct, frozen=True):
    """The quadratic residues mod a safe prime ``p = 2q + 1`` (order ``q``, prime).

    Elements are ints in ``(1, p-1)``; ``exp`` is ``pow`` mod ``p``."""

    p: int

    name = "modp"

    @property
    def q(self) -> int:
        return (self.p - 1) // 2

    @property
    def size(self) -> int:
        """Bytes of an element or key on the wire (hex is twice this)."""
        return (self.p.bit_length() + 7) // 8

    @property
    def hash_size(self) -> int:
        """Bytes of hash a card's element is made from (``from_hash``)."""
        return self.size + 16

    #: What ``parse_elem`` says of a value that is not an element.
    not_element = "value is not a quadratic residue in (1, p-1)"

    @property
    def tag(self) -> bytes:
        """The group's identity in every hash (encoding, key derivation, commitments)."""
        return self.p.to_bytes(self.size, "big")

    def exp(self, x: int, k: int) -> int:
        return pow(x, k, self.p)

    def is_element(self, x: int) -> bool:
        """A quadratic residue other than 1 (the only element of order < q)."""
        return 1 < x < self.p - 1 and jacobi(x, self.p) == 1

    def from_hash(self, h: int) -> int | None:
        """An element from ``size + 16`` uniform bytes (None: try the next counter)."""
        h %= self.p
        x = h * h % self.p
        return x if self.is_element(x) else None


#: The order of Ed25519's prime-order subgroup (RFC 8032 ``L``).
ED25519_L = 2**252 + 27742317777372353535851937790883648493


class _OrderL(msgspec.Struct, frozen=True):
    """What the two groups of play share: Ed25519's prime order ``l`` (the
    same group, encoded two ways) and elements and keys of 32 bytes."""

    q = ED25519_L
    size = 32


def _sodium_exp(group: Ed25519Group | Ristretto255Group, mult: Callable[[bytes, bytes], bytes], x: int,
                k: int) -> int:
    """``x`` times ``k`` by libsodium's ``mult`` (scalar little-endian, element as
    its bytes), in either group of play: a refusal (a RuntimeError; PyNaCl's is
    one too) is a DeckError saying what the group's check says."""
    try:
        point = mult((k % group.q).to_bytes(32, "little"), x.to_bytes(32, "big"))
    except RuntimeError:
        raise DeckError(group.not_element) from None
    return int.from_bytes(point, "big")


class Ed25519Group(_OrderL, frozen=True):
    """The prime-order subgroup of Ed25519 through libsodium (PyNaCl).

    An element is the int of a canonical 32-byte point encoding read
    big-endian (so ``elem_hex`` writes the point's bytes); a key is a
    scalar in ``[1, l-1]``; ``exp`` is ``crypto_scalarmult_ed25519_noclamp``.
    ``is_element`` is ``crypto_core_ed25519_is_valid_point``: canonical, on
    the curve, in the prime-order subgroup, not of small order (the
    counterpart of the residue check). Cards are
    ``crypto_core_ed25519_from_uniform`` of a hash (Elligator 2 with the
    cofactor cleared), so nobody knows their discrete logarithms.
    """

    name = "ed25519"
    hash_size = 48
    not_element = "value is not a point of the prime-order subgroup"
    tag = b"pbem/v1/deck/ed25519-prime-order-subgroup"

    def exp(self, x: int, k: int) -> int:
        """``x`` times ``k``. libsodium refuses (DeckError here) an ``x`` that is not
        canonical, is of small order or lies outside the prime-order subgroup
        (``ge25519_is_on_main_subgroup``), and a result that is the identity: the
        checks of ``is_element`` come with every multiplication (docs/deck.md,
        "Checks computed once")."""
        from nacl.bindings import crypto_scalarmult_ed25519_noclamp
        return _sodium_exp(self, crypto_scalarmult_ed25519_noclamp, x, k)

    def is_element(self, x: int) -> bool:
        from nacl.bindings import crypto_core_ed25519_is_valid_point
        return 0 <= x < 1 << 256 and crypto_core_ed25519_is_valid_point(x.to_bytes(32, "big"))

    def from_hash(self, h: int) -> int | None:
        from nacl.bindings import crypto_core_ed25519_from_uniform
        x = int.from_bytes(crypto_core_ed25519_from_uniform((h % (1 << 256)).to_bytes(32, "big")), "big")
        return x if self.is_element(x) else None


@functools.cache
def _rbcl() -> Any:
    """rbcl, imported once per process (about 0.1 s: it loads its own libsodium).
    rbcl 1.1.2 writes the libsodium it bundles to a new temporary file at every
    import and never removes it (``rbcl/_sodium.py``: ``delete=False``), about
    2.7 MB in the temporary directory per process. Once loaded the file is not
    needed (the mapping stays), so it is removed here; where that fails (a
    loaded library cannot be removed on Windows) it stays, as rbcl leaves it."""
    import sys

    import rbcl
    path = getattr(sys.modules.get("rbcl._sodium"), "lib_path", None)
    if isinstance(path, str):
        with contextlib.suppress(OSError):
            os.unlink(path)
    return rbcl


class Ristretto255Group(_OrderL, frozen=True):
    """Ristretto255 (RFC 9496) through libsodium, as the rbcl wheel bundles it.

    The same prime order ``l`` as Ed25519's subgroup, with an encoding of the
    group itself: decoding a canonical 32-byte encoding is its whole check
    (``crypto_core_ristretto255_is_valid_point``), with no cofactor and no
    second multiplication (Ed25519Group's subgroup check). An element is the
    int of the encoding read big-endian; a key is a scalar in ``[1, l-1]``;
    ``exp`` is ``crypto_scalarmult_ristretto255`` (the scalar is used as
    given, reduced mod ``l``: not clamped); cards are
    ``crypto_core_ristretto255_from_hash`` of 64 hash bytes (RFC 9496's
    one-way map), so nobody knows their discrete logarithms.
    """

    name = "ristretto255"
    hash_size = 64
    not_element = "value is not the canonical encoding of a Ristretto255 element other than the identity"
    tag = b"pbem/v2/deck/ristretto255"

    def exp(self, x: int, k: int) -> int:
        """``x`` times ``k``. libsodium refuses (DeckError here) an ``x`` that is not a
        canonical encoding and a result that is the identity."""
        return _sodium_exp(self, _rbcl().crypto_scalarmult_ristretto255, x, k)

    def is_element(self, x: int) -> bool:
        return 0 < x < 1 << 256 and bool(_rbcl().crypto_core_ristretto255_is_valid_point(x.to_bytes(32, "big")))

    def from_hash(self, h: int) -> int | None:
        x = int.from_bytes(_rbcl().crypto_core_ristretto255_from_hash((h % (1 << 512)).to_bytes(64, "big")), "big")
        return x if self.is_element(x) else None


AnyGroup = Group | Ed25519Group | Ristretto255Group

MODP2048 = Group(MODP2048_P)
#: The group of games of format versions 1-6 (docs/deck.md "Choice of group":
#: about 200 times faster than MODP2048), and of every game since (decision 29).
ED25519 = Ed25519Group()
RISTRETTO255 = Ristretto255Group()


def jacobi(a: int, n: int) -> int:
    """Jacobi symbol (a/n) for odd n > 0; the Legendre symbol when n is prime."""
    if n <= 0 or n % 2 == 0:
        raise ValueError("n must be odd and positive")
    a %= n
    result = 1
    while a:
        while a % 2 == 0:
            a //= 2
            if n % 8 in (3, 5):
                result = -result
        a, n = n, a
        if a % 4 == 3 and n % 4 == 3:
            result = -result
        a %= n
    return result if n == 1 else 0


def is_element(group: AnyGroup, x: int) -> bool:
    """True for a valid element: a residue other than 1, or a point of the prime-order subgroup."""
    return group.is_element(x)


# --- wire types ---------------------------------------------------------------

#: A wire element or key: lowercase hex digits, 2 to 1,024 of them, an even
#: number (``codec.whole_bytes``: the pattern of whole bytes,
#: ``^([0-9a-f]{2}){1,512}$``, cost a regular-expression group per byte, a
#: third of a deck step's decode).
HexElem = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{2,1024}$")]


class _Strict(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    pass


class Card(_Strict, frozen=True, tag="card"):
    """A card entering the round face known: its label is encoded afresh."""

    label: Label


class Carry(_Strict, frozen=True, tag="carry"):
    """A card carried over still encrypted: position ``pos`` of earlier round ``round``."""

    round: Label
    pos: int


Source = Card | Carry


class Step(_Strict, frozen=True):
    """One shuffle message. ``cards``: the step's output, fixed-width hex elements.

    ``commits``: step 1 and 2 one digest (the global key), steps 3 and 4 one
    per position (the per-card keys). ``sources``: only in step 1, the round's
    input deck in order.
    """

    round: Label
    step: int
    cards: list[HexElem]
    commits: list[Hex32]
    sources: list[Source] = []

    def __post_init__(self) -> None:
        whole_bytes(self.cards, "a card")


class KeyOpening(_Strict, frozen=True):
    """Opening of the key committed at (round, step, index): key and salt as hex."""

    round: Label
    step: int
    index: int
    key: HexElem
    salt: Hex32

    def __post_init__(self) -> None:
        whole_bytes((self.key,), "a key")


class Draw(_Strict, frozen=True):
    """Public record: position ``pos`` of ``round`` was dealt to role ``to``."""

    round: Label
    pos: int
    to: str


class DeckRound(_Strict, frozen=True):
    """The four steps of one round, in order."""

    steps: list[Step]


class Dealt(msgspec.Struct, frozen=True):
    """Audit result for one round, per final position: the card's label, the role it
    was dealt to ('' = never dealt) and the later round it was carried into ('' = none)."""

    round: str
    labels: list[str]
    holders: list[str]
    carried_to: list[str]


# --- encoding -------------------------------------------------------------------

def _expand(parts: Sequence[bytes], nbytes: int) -> int:
    return _stretch(lambda counter: hash_parts(*parts, counter), nbytes)


def _stretch(block: Callable[[bytes], bytes], nbytes: int) -> int:
    """The first ``nbytes`` of ``block(0) || block(1) || ...`` (the counter as 4
    bytes, big-endian), as an int."""
    out = b""
    counter = 0
    while len(out) < nbytes:
        out += block(counter.to_bytes(4, "big"))
        counter += 1
    return int.from_bytes(out[:nbytes], "big")


@functools.lru_cache(maxsize=4096)
def encode_card(group: AnyGroup, game: bytes, label: str) -> int:
    """The residue of a card: a domain-separated hash of (p, game, label), squared mod p.

    The hash has 128 more bits than p, so its value mod p is uniform up to
    2^-128; squaring maps it onto the residues. Nobody knows its discrete log.
    """
    counter = 0
    while True:
        h = _expand((_ENCODE, group.tag, game, label.encode("utf-8"),
                     counter.to_bytes(4, "big")), group.hash_size)
        x = group.from_hash(h)
        if x is not None:
            return x
        counter += 1  # h was 0 or +-1: probability about 3/p


def encode_deck(group: AnyGroup, game: bytes, labels: Sequence[str]) -> list[int]:
    """Elements of distinct labels (ValueError on a repeated label or a collision)."""
    if len(set(labels)) != len(labels):
        raise ValueError("deck labels must be distinct")
    elems = [encode_card(group, game, label) for label in labels]
    if len(set(elems)) != len(elems):
        raise ValueError("two labels encode to one element; the group is too small")
    return elems


def card_table(group: AnyGroup, game: bytes, labels: Iterable[str]) -> dict[int, str]:
    """Each label by its encoding (the first listed, should two share one)."""
    table: dict[int, str] = {}
    for label in labels:
        table.setdefault(encode_card(group, game, label), label)
    return table


def decode_card(group: AnyGroup, game: bytes, labels: Sequence[str], element: int) -> str | None:
    """The label among ``labels`` whose encoding is ``element``, or None."""
    return card_table(group, game, labels).get(element)


@functools.lru_cache(maxsize=8192)
def _valid(group: AnyGroup, text: str) -> int | None:
    """The element of ``text`` if it is one (memoised: an audit meets every
    step's elements again, and one subgroup check costs a scalar multiplication)."""
    x = int(text, 16)
    return x if is_element(group, x) else None


def elem_hex(group: AnyGroup, x: int) -> str:
    return x.to_bytes(group.size, "big").hex()


#: Elements read without their group check, to be checked before anything read
#: with them is trusted (``parse_elem``'s ``unchecked``; pbem.logcheck).
Unchecked = set[str]


def parse_elem(group: AnyGroup, text: str, unchecked: Unchecked | None = None) -> int:
    """A wire element: exact width, a residue other than 1 or a point of the
    prime-order subgroup (DeckError otherwise).

    With ``unchecked`` (a set) the group check is left to the caller: the text
    is added to it and its int returned after the width check only. Whoever
    passes the set must check every element in it (or multiply it, which
    checks it: ``Ed25519Group.exp``) before trusting any result."""
    if len(text) != 2 * group.size:
        raise DeckError(f"group element has {len(text)} hex digits, not {2 * group.size}")
    if unchecked is not None:
        try:
            x_ = int(text, 16)
        except ValueError:
            raise DeckError("group element is not hex") from None
        unchecked.add(text)
        return x_
    x = _valid(group, text)
    if x is None:
        raise DeckError(group.not_element)
    return x


# --- secrets derived from one seed per player and round ---------------------------

def new_seed() -> bytes:
    """32 random bytes: everything a player needs for one round (keep it in the vault).
    The operating system's generator, as ``secrets.token_bytes`` is (without
    loading ``secrets``, and ``random`` with it, at every start)."""
    return os.urandom(32)


class _Seeded:
    """What one seed derives in one round: keys, salts and shuffles, each
    ``_expand`` of the length-prefixed (domain, group, game, round, seed, what,
    numbers). Their common prefix is hashed once and the hash state copied
    (issue 20: an audit derives every key of every round, some 1,700 on a
    campaign); the bytes hashed are ``hash_parts``'s exactly
    (tests/test_deck.py compares them, tests/test_vectors.py pins the keys)."""

    __slots__ = ("_base", "_group")

    def __init__(self, group: AnyGroup, game: bytes, rnd: str, seed: bytes) -> None:
        if len(seed) != 32:
            raise ValueError("a deck seed is 32 bytes")
        self._group = group
        self._base = hashlib.sha256(b"".join(len(part).to_bytes(8, "big") + part
                                             for part in (_DERIVE, group.tag, game, rnd.encode("utf-8"), seed)))

    def number(self, what: bytes, *ints: int, nbytes: int) -> int:
        tail = b"".join([len(what).to_bytes(8, "big"), what, *(_LEN8 + i.to_bytes(8, "big") for i in ints), _LEN4])

        def block(counter: bytes) -> bytes:
            h = self._base.copy()
            h.update(tail + counter)
            return h.digest()
        return _stretch(block, nbytes)

    def key(self, step: int, index: int) -> int:
        return 1 + self.number(b"key", step, index, nbytes=self._group.size + 16) % (self._group.q - 1)

    def salt(self, step: int, index: int) -> bytes:
        return self.number(b"salt", step, index, nbytes=32).to_bytes(32, "big")


_LEN8 = (8).to_bytes(8, "big")
_LEN4 = (4).to_bytes(8, "big")


def round_key(group: AnyGroup, game: bytes, rnd: str, seed: bytes, step: int, index: int) -> int:
    """The key a player uses at ``step`` (global: index 0; per-card: the position), in [1, q-1]."""
    return _Seeded(group, game, rnd, seed).key(step, index)


def _salt(group: AnyGroup, game: bytes, rnd: str, seed: bytes, step: int, index: int) -> bytes:
    return _Seeded(group, game, rnd, seed).salt(step, index)


def _permutation(group: AnyGroup, game: bytes, rnd: str, seed: bytes, n: int) -> list[int]:
    """Fisher-Yates from the seed; each choice reads 128 bits more than it needs (bias < 2^-120)."""
    derive = _Seeded(group, game, rnd, seed)
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = derive.number(b"perm", i, nbytes=24) % (i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def _label(rnd: str, step: int, index: int) -> str:
    return f"deck/{rnd}/{step}/{index}"


def _key_digest(group: AnyGroup, game: bytes, rnd: str, step: int, index: int, key: int, salt: bytes) -> bytes:
    return commitment_digest(game, _label(rnd, step, index), salt, key.to_bytes(group.size, "big"))


def open_key(group: AnyGroup, game: bytes, rnd: str, seed: bytes, step: int, index: int) -> KeyOpening:
    """A player's opening of its key at (round, step, index), from its seed."""
    return _opening(group, _Seeded(group, game, rnd, seed), rnd, step, index)


def _opening(group: AnyGroup, derive: _Seeded, rnd: str, step: int, index: int) -> KeyOpening:
    return KeyOpening(round=rnd, step=step, index=index, key=elem_hex(group, derive.key(step, index)),
                      salt=derive.salt(step, index).hex())


def open_all(group: AnyGroup, game: bytes, rnd: str, seed: bytes, role: int, n: int) -> list[KeyOpening]:
    """Every key a role used in a round of ``n`` cards (for the audit)."""
    glob, per_card = (1, 3) if role == FIRST else (2, 4)
    derive = _Seeded(group, game, rnd, seed)
    return [_opening(group, derive, rnd, glob, 0)] + [_opening(group, derive, rnd, per_card, k) for k in range(n)]


def check_key(group: AnyGroup, game: bytes, rnd: DeckRound, opening: KeyOpening) -> int:
    """The key of a valid opening of a commitment in ``rnd``; DeckError otherwise.

    The commitment label binds round, step and position, so an opening for
    one position never passes for another. Compared in constant time.
    """
    steps = rnd.steps
    if not steps or opening.round != steps[0].round:
        raise DeckError("key opening for another round", opening.round, opening.step)
    if not 1 <= opening.step <= len(steps):
        raise DeckError("key opening for a step that was not taken", opening.round, opening.step)
    commits = steps[opening.step - 1].commits
    if not 0 <= opening.index < len(commits):
        raise DeckError(f"key opening for index {opening.index}, out of range",
                        opening.round, opening.step)
    if len(opening.key) != 2 * group.size:
        raise DeckError("key has the wrong width", opening.round, opening.step)
    key = int(opening.key, 16)
    digest = _key_digest(group, game, opening.round, opening.step, opening.index, key,
                         bytes.fromhex(opening.salt))
    if not hmac.compare_digest(digest, bytes.fromhex(commits[opening.index])):
        raise DeckError(f"key for index {opening.index} does not open its commitment",
                        opening.round, opening.step)
    if not 1 <= key < group.q:
        raise DeckError("committed key is not in [1, q-1]", opening.round, opening.step)
    return key


# --- the four steps ----------------------------------------------------------------

#: Resolves a carried card: (round, pos) -> that round's final element at pos.
Resolver = Callable[[str, int], int]


def history_resolver(group: AnyGroup, history: Mapping[str, DeckRound], unchecked: Unchecked | None = None) -> Resolver:
    """A resolver over completed earlier rounds, keyed by round label (``unchecked``: see ``parse_elem``)."""
    def resolve(rnd: str, pos: int) -> int:
        done = history.get(rnd)
        if done is None or len(done.steps) != STEPS:
            raise DeckError(f"carried card from round {rnd!r}, which is not a completed round")
        cards = done.steps[-1].cards
        if not 0 <= pos < len(cards):
            raise DeckError(f"carried position {pos} is outside round {rnd!r}")
        return parse_elem(group, cards[pos], unchecked)
    return resolve


def input_elements(group: AnyGroup, game: bytes, sources: Sequence[Source], resolve: Resolver) -> list[int]:
    """The round's input deck: fresh encodings and carried ciphertexts, checked distinct."""
    seen_labels: set[str] = set()
    seen_pos: set[tuple[str, int]] = set()
    out = []
    for src in sources:
        if isinstance(src, Card):
            if src.label in seen_labels:
                raise DeckError(f"card {src.label!r} enters the round twice")
            seen_labels.add(src.label)
            out.append(encode_card(group, game, src.label))
        else:
            if (src.round, src.pos) in seen_pos:
                raise DeckError(f"position {src.pos} of round {src.round!r} is carried twice")
            seen_pos.add((src.round, src.pos))
            out.append(resolve(src.round, src.pos))
    if len(set(out)) != len(out):
        raise DeckError("two input cards are the same element")
    return out


def _elems(group: AnyGroup, step: Step, unchecked: Unchecked | None = None) -> list[int]:
    return [parse_elem(group, c, unchecked) for c in step.cards]


def check_step(group: AnyGroup, sources: Sequence[Source], done: Sequence[Step], step: Step,
               unchecked: Unchecked | None = None) -> None:
    """Everything a receiver can check at once about the next ``step`` of a round.

    Round label and step number, size, every element a residue of full width,
    all elements distinct (so no card is visibly duplicated), one commitment
    per key. That each step used its committed keys and permuted honestly is
    checked by ``audit_deck`` once the keys are opened.
    """
    rnd = done[0].round if done else step.round
    number = len(done) + 1
    if step.round != rnd or step.step != number:
        raise DeckError(f"expected step {number} of round {rnd!r}", step.round, step.step)
    n = len(sources)
    if n == 0:
        raise DeckError("a round needs at least one card", step.round, step.step)
    if number == 1 and list(step.sources) != list(sources):
        raise DeckError("step 1 does not carry the agreed input deck", step.round, 1)
    if number > 1 and step.sources:
        raise DeckError("only step 1 carries the input deck", step.round, number)
    if len(step.cards) != n:
        raise DeckError(f"{len(step.cards)} cards, the round has {n}", step.round, number)
    elems = [_parse_at(group, c, step, unchecked) for c in step.cards]
    if len(set(elems)) != n:
        raise DeckError("two cards are the same element", step.round, number)
    want = 1 if number <= 2 else n
    if len(step.commits) != want:
        raise DeckError(f"{len(step.commits)} key commitments, expected {want}", step.round, number)


def _parse_at(group: AnyGroup, text: str, step: Step, unchecked: Unchecked | None = None) -> int:
    try:
        return parse_elem(group, text, unchecked)
    except DeckError as exc:
        raise DeckError(exc.reason, step.round, step.step) from None


def inverses(values: Sequence[int], q: int) -> list[int]:
    """``[pow(v, -1, q) for v in values]`` with one modular inversion
    (Montgomery's trick: prefix products, one inverse, then back): an
    inversion costs about 24 us in Python, a product under 1 us, and an
    audit inverts some 1,900 keys. ``q`` prime; ValueError, as ``pow``
    gives, if a value is 0 mod ``q`` (keys are checked to be in [1, q-1])."""
    prefix, acc = [], 1
    for v in values:
        prefix.append(acc)
        acc = acc * v % q
    inv = pow(acc, -1, q)
    out = [0] * len(values)
    for i in range(len(values) - 1, -1, -1):
        out[i] = inv * prefix[i] % q
        inv = inv * values[i] % q
    return out


def make_step(group: AnyGroup, game: bytes, rnd: str, sources: Sequence[Source], done: Sequence[Step],
              seed: bytes, resolve: Resolver, old_seeds: Mapping[str, bytes] | None = None,
              old_steps: Mapping[str, int] | None = None) -> Step:
    """The next step of round ``rnd`` by the role whose turn it is (steps 1, 3: first; 2, 4: second).

    ``seed``: this player's seed for the round. ``old_seeds``: its seeds of
    earlier rounds, needed in steps 1 and 2 to strip its old per-card key from
    carried cards; ``old_steps``: the step of that key in each earlier round
    (3 where the player was first, 4 where second; by default the same role
    as now). ``done``: the steps so far (already checked).
    """
    number = len(done) + 1
    if not 1 <= number <= STEPS:
        raise ValueError("the round is complete")
    n = len(sources)
    key = (round_key(group, game, rnd, seed, number, 0) if number <= 2 else 0)
    q = group.q
    if number <= 2:
        prev = (input_elements(group, game, sources, resolve) if number == 1 else _elems(group, done[0]))
        olds = []
        for src in sources:
            if isinstance(src, Carry):
                if old_seeds is None or src.round not in old_seeds:
                    raise ValueError(f"need this player's seed of round {src.round!r}")
                old_step = (old_steps or {}).get(src.round, number + 2)
                olds.append(round_key(group, game, src.round, old_seeds[src.round], old_step, src.pos))
            else:
                olds.append(1)
        exps = [key * inv % q for inv in inverses(olds, q)]
        out = [group.exp(x, e) for x, e in zip(prev, exps, strict=True)]
        if number == 2:
            perm = _permutation(group, game, rnd, seed, n)
            out = [out[perm[k]] for k in range(n)]
        commits = [_key_digest(group, game, rnd, number, 0, key, _salt(group, game, rnd, seed, number, 0))]
    else:
        prev = _elems(group, done[number - 2])
        glob_inv = pow(round_key(group, game, rnd, seed, number - 2, 0), -1, q)
        card_keys = [round_key(group, game, rnd, seed, number, k) for k in range(n)]
        if number == 3:
            perm = _permutation(group, game, rnd, seed, n)
            prev = [prev[perm[k]] for k in range(n)]
        out = [group.exp(x, glob_inv * ck % q) for x, ck in zip(prev, card_keys, strict=True)]
        commits = [_key_digest(group, game, rnd, number, k, ck, _salt(group, game, rnd, seed, number, k))
                   for k, ck in enumerate(card_keys)]
    return Step(round=rnd, step=number, cards=[elem_hex(group, x) for x in out],
                commits=[c.hex() for c in commits], sources=list(sources) if number == 1 else [])


# --- drawing and opening -------------------------------------------------------------

def deal_key(group: AnyGroup, game: bytes, rnd: str, seed: bytes, drawer: int, pos: int) -> KeyOpening:
    """What the drawer's opponent publishes to deal position ``pos`` to ``drawer``."""
    return open_key(group, game, rnd, seed, 4 if drawer == FIRST else 3, pos)


def own_key(group: AnyGroup, game: bytes, rnd: str, seed: bytes, role: int, pos: int) -> KeyOpening:
    """A player's own per-card key for ``pos``: published to play the card openly."""
    return open_key(group, game, rnd, seed, 3 if role == FIRST else 4, pos)


#: The latest (first steps of the rounds, group, game) -> {encoding: label} of
#: ``_decoder``: the key holds the (immutable) steps, so an identity is never reused.
_DECODERS: list[tuple[tuple[object, ...], dict[int, str]]] = []


def _decoder(group: AnyGroup, game: bytes, history: Mapping[str, DeckRound]) -> dict[int, str]:
    """``card_table`` of every card that entered a round of the deck's history,
    built once per history: ``unlock`` tells the card an unlocked element is."""
    key = (group, game, *(done.steps[0] for done in history.values()))
    for k, kept in reversed(_DECODERS):
        if len(k) == len(key) and k[0] == group and k[1] == game and all(a is b for a, b in zip(k[2:], key[2:])):
            return kept
    table = card_table(group, game, (src.label for done in history.values() for src in done.steps[0].sources
                                     if isinstance(src, Card)))
    _DECODERS.append((key, table))
    del _DECODERS[:-4]
    return table


#: Step-4 points unlocked ahead by pbem.logcheck's second process (same code,
#: same bytes), keyed by (the point's hex, the ``key_product`` of its two
#: per-card keys): a hint is the value ``unlock`` computes from the pair, one
#: that is missing is computed here. Keyed by the product, not the exponent,
#: so that a hint saves the modular inverse too.
ExpHints = Mapping[tuple[str, int], int]


def key_product(group: AnyGroup, k_first: int, k_second: int) -> int:
    """The two per-card keys of a step-4 point, multiplied (mod the group's order)."""
    return k_first * k_second % group.q


def unlock_exponent(group: AnyGroup, product: int) -> int:
    """What a step-4 point is raised to, to remove both per-card keys (their ``key_product``)."""
    return pow(product, -1, group.q)


def unlock_point(group: AnyGroup, point: int, product: int) -> int:
    """A step-4 point with both per-card keys removed (``product``, their
    ``key_product``): the card's encoding. pbem.logcheck's hints are its values."""
    return group.exp(point, unlock_exponent(group, product))


def unlock(group: AnyGroup, game: bytes, history: Mapping[str, DeckRound], rnd: str, pos: int,
           k_first: int, k_second: int, unchecked: Unchecked | None = None, hints: ExpHints | None = None) -> str:
    """The card at ``pos`` of the completed round ``rnd`` under both players'
    per-card keys for it (already checked by the caller); DeckError if it
    opens to no card of the deck."""
    done = history.get(rnd)
    if done is None or len(done.steps) != STEPS:
        raise DeckError("no such completed round", rnd)
    cards = done.steps[-1].cards
    if not 0 <= pos < len(cards):
        raise DeckError(f"position {pos} is outside the deck", rnd)
    product = key_product(group, k_first, k_second)
    point = parse_elem(group, cards[pos], unchecked)
    x = hints.get((cards[pos], product)) if hints else None
    if x is None:
        x = unlock_point(group, point, product)
    label = _decoder(group, game, history).get(x)
    if label is None:
        raise DeckError(f"position {pos} does not open to a card of the deck", rnd)
    return label


def draw_card(group: AnyGroup, game: bytes, history: Mapping[str, DeckRound], rnd: str, pos: int,
              role: int, seed: bytes, dealt: KeyOpening) -> str:
    """The drawer's private view: its card at ``pos``, from the opponent's published key.

    ``history``: every completed round (so labels of carried cards resolve).
    """
    theirs = check_key(group, game, history[rnd], dealt)
    want = 4 if role == FIRST else 3
    if dealt.step != want or dealt.index != pos:
        raise DeckError(f"the dealt key is for step {dealt.step} index {dealt.index}, "
                        f"not step {want} index {pos}", rnd)
    mine = round_key(group, game, rnd, seed, 3 if role == FIRST else 4, pos)
    k1, k2 = (mine, theirs) if role == FIRST else (theirs, mine)
    return unlock(group, game, history, rnd, pos, k1, k2)


def verify_open(group: AnyGroup, game: bytes, history: Mapping[str, DeckRound], rnd: str, pos: int,
                first_key: KeyOpening, second_key: KeyOpening) -> str:
    """Anyone's check of a card played openly: both per-card keys of ``pos`` open
    their commitments and remove to a card of the deck; returns its label."""
    done = history.get(rnd)
    if done is None:
        raise DeckError("no such round", rnd)
    for opening, step in ((first_key, 3), (second_key, 4)):
        if opening.step != step or opening.index != pos or opening.round != rnd:
            raise DeckError(f"expected the step {step} key of position {pos}", opening.round, opening.step)
    k1 = check_key(group, game, done, first_key)
    k2 = check_key(group, game, done, second_key)
    return unlock(group, game, history, rnd, pos, k1, k2)


# --- audit ---------------------------------------------------------------------------

def audit_deck(group: AnyGroup, game: bytes, rounds: Sequence[DeckRound], openings: Sequence[KeyOpening],
               draws: Sequence[Draw], authors: tuple[str, str] | Mapping[str, tuple[str, str]],
               unchecked: Unchecked | None = None) -> list[Dealt]:
    """Replay every round with every key opened; return the full deal or raise DeckError.

    ``rounds`` in play order; ``openings``: all keys (any order; duplicates
    must agree); ``draws``: the public deal records in order; ``authors``:
    the names of the first and second role. Checks, round by round and step by
    step: well-formed messages, that each step's output is exactly its input
    transformed with the author's committed keys (steps 2 and 3 up to a
    permutation), every published key against its commitment, and that no
    position was dealt twice or carried twice; the error names the first bad
    step and its author.

    ``unchecked`` (a set, Ed25519 only): the steps' elements are read without
    their subgroup check (``parse_elem``). Every one of them is then either
    multiplied (``exp`` refuses what ``is_element`` refuses) or compared equal
    to the result of a multiplication, so a call that returns checked them
    all; a call that raises may name another fault first than the checked
    call would (pbem.logcheck then runs the checked one).
    """
    return deal(audit_rounds(group, game, rounds, openings, authors, unchecked), draws)


#: The two permutations a round's audit finds: step 2's (position -> step-1
#: position) and step 3's (position -> step-2 position).
Perms = tuple[list[int], list[int]]


def audit_rounds(group: AnyGroup, game: bytes, rounds: Sequence[DeckRound], openings: Sequence[KeyOpening],
                 authors: tuple[str, str] | Mapping[str, tuple[str, str]],
                 unchecked: Unchecked | None = None, perms: Mapping[str, Perms] | None = None) -> list[Dealt]:
    """``audit_deck`` without the draws: every round checked, nobody holding a card yet.

    ``perms`` gives the permutations of rounds whose arithmetic (the scalar
    multiplications, ``RoundJob.arith``) was done on exactly this input, and
    passed, elsewhere (pbem.logcheck's second process); the rest is done here."""
    audit = RoundsAudit(group, game, openings, authors)
    return audit.result(audit.jobs(rounds, unchecked), perms or {})


class RoundJob(NamedTuple):
    """One round of a deck audit, its structure checked (``RoundsAudit.jobs``):
    ``arith`` does its scalar multiplications and returns its permutations.
    The arithmetic of a round reads only the audit's input (the rounds' steps
    and keys), never another round's result, so the rounds can be done in
    any order, in either of two processes (pbem.logcheck)."""

    name: str
    sources: Sequence[Source]
    arith: Callable[[], Perms]
    fail: Callable[[int, str], DeckError]


class RoundsAudit:
    """``audit_rounds`` in its two parts: ``jobs`` checks each round's structure
    in play order and yields the round's arithmetic; ``result`` takes each
    round's permutations (computed by a job, or given) and reads the deck's
    labels from them. The keys: ``openings`` (any order; duplicates must
    agree), by (round, step, index)."""

    def __init__(self, group: AnyGroup, game: bytes, openings: Sequence[KeyOpening],
                 authors: tuple[str, str] | Mapping[str, tuple[str, str]]) -> None:
        self.group, self.game, self.openings = group, game, openings
        self._per_round = authors if isinstance(authors, Mapping) else None
        self._authors = authors
        self.by_key: dict[tuple[str, int, int], KeyOpening] = {}
        for o in openings:
            old = self.by_key.setdefault((o.round, o.step, o.index), o)
            if old != o:
                who = self.authors_of(o.round)[FIRST if o.step % 2 else SECOND]
                raise DeckError(f"two different openings of key {o.index}", o.round, o.step, who)

    def authors_of(self, name: str) -> tuple[str, str]:
        if self._per_round is None:
            return self._authors  # type: ignore[return-value]
        return self._per_round.get(name, ("", ""))

    def jobs(self, rounds: Sequence[DeckRound], unchecked: Unchecked | None = None) -> Iterator[RoundJob]:
        """Each round's structure checked, in play order (DeckError names the round,
        step and author of the first fault), then its job; lazily, so that a
        caller that takes a job's arithmetic before the next round is checked
        meets the faults in the log's order."""
        group, game = self.group, self.game
        history: dict[str, DeckRound] = {}
        carried: set[tuple[str, int]] = set()
        for rnd in rounds:
            if not rnd.steps:
                raise DeckError("round without steps")
            name = rnd.steps[0].round
            authors = self.authors_of(name)
            if name in history:
                raise DeckError("round label used twice", name, 1, authors[FIRST])
            if len(rnd.steps) != STEPS:
                who = authors[FIRST if len(rnd.steps) % 2 == 0 else SECOND]
                raise DeckError(f"round has {len(rnd.steps)} steps, not {STEPS}", name, len(rnd.steps) + 1, who)
            sources = rnd.steps[0].sources
            resolve = history_resolver(group, history, unchecked)
            for src in sources:
                if isinstance(src, Carry) and (src.round, src.pos) in carried:
                    raise DeckError(f"position {src.pos} of {src.round!r} was carried before", name, 1,
                                    authors[FIRST])
            try:
                inputs = input_elements(group, game, sources, resolve)
            except DeckError as exc:
                raise DeckError(exc.reason, name, 1, authors[FIRST]) from None
            for i, step in enumerate(rnd.steps):
                try:
                    check_step(group, sources, rnd.steps[:i], step, unchecked)
                except DeckError as exc:
                    raise DeckError(exc.reason, name, i + 1, authors[i % 2]) from None
            x = [_elems(group, s, unchecked) for s in rnd.steps]

            def fail(step: int, msg: str, rname: str = name, pair: tuple[str, str] = authors) -> DeckError:
                return DeckError(msg, rname, step, pair[FIRST if step % 2 else SECOND])

            yield RoundJob(name, sources, functools.partial(self._arith, history, rnd, authors, inputs, x, fail),
                           fail)
            for src in sources:
                if isinstance(src, Carry):
                    carried.add((src.round, src.pos))
            history[name] = rnd

    def _arith(self, history: Mapping[str, DeckRound], rnd: DeckRound, authors: tuple[str, str],
               inputs: Sequence[int], x: Sequence[Sequence[int]], fail: Callable[[int, str], DeckError]) -> Perms:
        group, game, by_key, name = self.group, self.game, self.by_key, rnd.steps[0].round

        def key(step: int, index: int) -> int:
            who = authors[FIRST if step % 2 else SECOND]
            o = by_key.get((name, step, index))
            if o is None:
                raise DeckError(f"key {index} was never opened", name, step, who)
            try:
                return check_key(group, game, rnd, o)
            except DeckError as exc:
                raise DeckError(exc.reason, name, step, who) from None

        return _arith(group, game, by_key, history, self.authors_of, authors, rnd.steps[0].sources, inputs, x,
                      key, fail)

    def result(self, jobs: Iterable[RoundJob], perms: Mapping[str, Perms]) -> list[Dealt]:
        """The deck of every round: each job's permutations (given in ``perms``, or
        its arithmetic done here), read into labels; DeckError on the first fault."""
        finals: dict[str, list[str]] = {}
        result = []
        by_name: dict[str, Dealt] = {}
        for job in jobs:
            name, sources, n = job.name, job.sources, len(job.sources)
            given = perms.get(name)
            pi, sigma = given if given is not None else job.arith()
            labels = []
            for k in range(n):
                src = sources[pi[sigma[k]]]
                labels.append(src.label if isinstance(src, Card) else finals[src.round][src.pos])
            for src in sources:
                if isinstance(src, Carry):
                    by_name[src.round].carried_to[src.pos] = name
            if len(set(labels)) != n:
                raise job.fail(1, "the round holds one card twice")
            finals[name] = labels
            by_name[name] = Dealt(round=name, labels=labels, holders=[""] * n, carried_to=[""] * n)
            result.append(by_name[name])
        for o in self.openings:
            if o.round not in by_name:
                raise DeckError("opening of a key of an unknown round", o.round, o.step)
        return result


def _arith(group: AnyGroup, game: bytes, by_key: Mapping[tuple[str, int, int], KeyOpening],
           history: Mapping[str, DeckRound], authors_of: Callable[[str], tuple[str, str]], authors: tuple[str, str],
           sources: Sequence[Source], inputs: Sequence[int], x: Sequence[Sequence[int]],
           key: Callable[[int, int], int], fail: Callable[[int, str], DeckError]) -> Perms:
    """The scalar multiplications of one round's audit: each step is its input under
    the committed keys (steps 2 and 3 up to a permutation); returns (pi, sigma)."""
    q = group.q
    n = len(sources)
    # step 1: position j is input j under a (old per-card key of first stripped)
    a = key(1, 0)
    # step 2 applies b (old per-card key of second stripped) then permutes
    b = key(2, 0)
    old1, old2 = [], []
    for src in sources:
        if isinstance(src, Carry):
            # each player strips its own per-card key of the old round: step 3
            # where it was first there, step 4 where it was second
            was = authors_of(src.round)
            s1, s2 = (3, 4) if was == authors else (4, 3)
            old1.append(_old(group, game, by_key, history, src, s1, was))
            old2.append(_old(group, game, by_key, history, src, s2, was))
        else:
            old1.append(1)
            old2.append(1)
    strip1, strip2 = inverses(old1, q), inverses(old2, q)
    for j in range(n):
        if group.exp(inputs[j], a * strip1[j] % q) != x[0][j]:
            raise fail(1, f"card {j} is not the input card under the committed key")
    where2 = {group.exp(x[0][j], b * strip2[j] % q): j for j in range(n)}
    pi = _match(x[1], where2, lambda m: fail(2, m))
    # step 3: removing a_k and restoring a gives a step-2 card, each once
    ak = [key(3, k) for k in range(n)]
    where3 = {v: j for j, v in enumerate(x[1])}
    sigma = _match([group.exp(x[2][k], ak_inv * a % q) for k, ak_inv in enumerate(inverses(ak, q))], where3,
                   lambda m: fail(3, m))
    bk = [key(4, k) for k in range(n)]
    binv = pow(b, -1, q)
    for k in range(n):
        if group.exp(x[2][k], binv * bk[k] % q) != x[3][k]:
            raise fail(4, f"card {k} is not the step-3 card under the committed keys")
    return pi, sigma


def deal(result: list[Dealt], draws: Sequence[Draw]) -> list[Dealt]:
    """``audit_rounds``' result with the public draw records applied in order (each
    position dealt at most once); the same list, its holders filled in."""
    by_round = {d.round: d for d in result}
    for d in draws:
        dealt = by_round.get(d.round)
        if dealt is None or not 0 <= d.pos < len(dealt.labels):
            raise DeckError(f"draw of position {d.pos}, which does not exist", d.round)
        if dealt.holders[d.pos]:
            raise DeckError(f"position {d.pos} dealt twice (to {dealt.holders[d.pos]} and {d.to})", d.round)
        dealt.holders[d.pos] = d.to
    return result


def _old(group: AnyGroup, game: bytes, by_key: Mapping[tuple[str, int, int], KeyOpening],
         history: Mapping[str, DeckRound], src: Carry, step: int, authors: tuple[str, str]) -> int:
    """The opened per-card key of an earlier round (checked against its commitment)."""
    who = authors[FIRST if step % 2 else SECOND]
    o = by_key.get((src.round, step, src.pos))
    if o is None:
        raise DeckError(f"key {src.pos} was never opened", src.round, step, who)
    try:
        return check_key(group, game, history[src.round], o)
    except DeckError as exc:
        raise DeckError(exc.reason, src.round, step, who) from None


def _match(values: Sequence[int], where: Mapping[int, int], fail: Callable[[str], DeckError]) -> list[int]:
    """Index map k -> j with values[k] == source j, insisting on a bijection."""
    out = []
    used: set[int] = set()
    for k, v in enumerate(values):
        j = where.get(v)
        if j is None:
            raise fail(f"card {k} is not any input card under the committed key")
        if j in used:
            raise fail(f"card {k} repeats input card {j} (not a permutation)")
        used.add(j)
        out.append(j)
    if len(where) != len(values):
        raise fail("input cards collide under the committed key")
    return out


# --- the deck in a game: actions, tasks and the seed of each round ------------------------

#: The group a new game plays in (format versions 7 and 8; docs/deck.md "Choice of group").
PLAY = RISTRETTO255


def play_group(version: int) -> AnyGroup:
    """The group of the shared deck of a game of format ``version`` (fixed by its
    genesis): Ristretto255 from version 7 on, Ed25519's prime-order subgroup
    before (docs/protocol.md decision 29)."""
    return RISTRETTO255 if has_ristretto_deck(version) else ED25519


#: Decision kind: the rules wait for ``role``'s deck work (a shuffle step or
#: key openings), which pbem computes without asking the player.
DECK = "deck"


class _DeckAction(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True, tag_field="type"):
    pass


class DeckStep(_DeckAction, frozen=True, tag="deck-step"):
    """A shuffle step; with step 3 or 4 the author's keys dealing positions to the opponent."""

    step: Step
    deal: list[KeyOpening] = []


class DeckKeys(_DeckAction, frozen=True, tag="deck-keys"):
    """Key openings: ``deal`` deals positions to the opponent (the author's key
    for a position the opponent draws); ``open`` shows the author's own cards
    (its own key for positions dealt to it)."""

    deal: list[KeyOpening] = []
    open: list[KeyOpening] = []


DeckAction = DeckStep | DeckKeys


class DeckTask(msgspec.Struct, frozen=True):
    """What the rules wait for from ``role`` (``rules.deck_task(state)``).

    ``kind == "step"``: the next step of round ``round`` whose input deck is
    ``sources`` and whose first role is ``first``; with step 3 or 4 the
    author deals ``deal`` (positions of ``round``, to the opponent).
    ``kind == "keys"``: deal ``deal`` (positions of ``round`` to the
    opponent) and open ``open`` ((round, position) of the author's own cards).
    """

    role: str
    kind: str
    round: str = ""
    first: str = ""
    sources: tuple[Source, ...] = ()
    deal: tuple[int, ...] = ()
    open: tuple[tuple[str, int], ...] = ()


def seed_label(rnd: str, role: str) -> str:
    """The commitment label of ``role``'s seed for round ``rnd`` (opened at the audit)."""
    return f"deck/{rnd}/seed/{role}"

