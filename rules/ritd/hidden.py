"""Hidden block identities (DESIGN 4; RB 2.0, 7.3, 8.5).

Every block is a public token ("A" + 8 hex digits for the Axis, "L" + 8 for
the Allies, drawn at random when it is deployed so that the token says
nothing about the unit). Its unit and current CV are committed under the
label ``<token>.id<version>``; a new version is committed whenever the CV
changes in secret (hits on hidden units, rebuilding in Buildup).

What the opponent cannot check at once is kept as an ``Obligation`` on the
token and decided when the identity is opened (a battle, or the audit).
"""

from __future__ import annotations

import re

import msgspec

from rules.ritd.position import Side

_TOKEN = re.compile(r"^[AL][0-9a-f]{8}$")


def side_letter(side: Side) -> str:
    return "A" if side == "axis" else "L"


def new_token(side: Side, fresh: bytes) -> str:
    """A token for a newly deployed block of ``side`` from composer randomness."""
    return side_letter(side) + fresh[:4].hex()


def is_token_of(token: str, side: Side) -> bool:
    return bool(_TOKEN.match(token)) and token[0] == side_letter(side)


def identity_label(token: str, version: int = 0) -> str:
    return f"{token}.id{version}"


def token_of_label(label: str) -> tuple[str, int] | None:
    token, sep, version = label.partition(".id")
    if not sep or not _TOKEN.match(token) or not version.isdigit():
        return None
    return token, int(version)


def encode_identity(unit: str, cv: int) -> bytes:
    """The committed value: unit name and CV, e.g. b"21Pz/5|4"."""
    return f"{unit}|{cv}".encode()


def decode_identity(value: bytes) -> tuple[str, int]:
    """Inverse of encode_identity; ValueError if the bytes are not one."""
    try:
        unit, sep, cv = value.decode("utf-8").rpartition("|")
    except UnicodeDecodeError:
        raise ValueError("identity is not UTF-8") from None
    if not sep or not unit or not cv.isdigit() or len(cv) > 2:
        raise ValueError(f"not a block identity: {value!r}")
    return unit, int(cv)


class Obligation(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """A deferred check on a hidden block, made in event ``seq`` (DESIGN 4).

    ``kind`` "placement": the unit may deploy in ``hex`` at full CV;
    ``kind`` "speed": the unit's speed (with the bonuses the move used) is at
    least ``needed``; ``kind`` "speed-range": the unit's speed lies in
    ``needed``..``maximum`` (RB 10.5 Pursuit); ``kind`` "slowest": one of
    ``tokens`` has speed exactly ``needed``; ``kind`` "losses": the identity
    versions ``labels`` (old and new of the refusing ``tokens``) show a legal
    placement of ``hits`` Pursuit hits in ``hex``, ``eliminated`` gone;
    ``kind`` "attrition": ``token`` lost one step of Rout Attrition (RB 11.3):
    ``labels`` are its old version (unless ``unit``/``cv`` give the old
    identity, known publicly) and its new one (unless ``eliminated``).
    ``kind`` "march-loss": the same for the step lost by a failed Retreat
    Forced March (RB 6.4 sidebar, T-39).
    Obligations with ``labels`` are decided when every label's value is
    known; the others when ``token``'s identity is opened. ``rule`` and
    ``what`` word the problem if it fails. Its JSON (the replay cache's)
    leaves out the fields at their defaults, as ``Block``'s does.
    """

    token: str
    seq: int
    kind: str
    rule: str
    what: str
    hex: str = ""
    needed: int = 0
    maximum: int = 0
    tokens: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    eliminated: tuple[str, ...] = ()
    hits: int = 0
    unit: str = ""
    cv: int = 0
