"""Reading and validating the data files of Rommel in the Desert.

Data files live in ``rules/ritd/data/`` (package ``rules.ritd.data``) and are
read through the package's loader (``pbem.rulesapi.package_data``, as
importlib.resources reads them) so that a plain install works. The engine hashes
exactly these bytes into genesis (DESIGN section 3), so both players provably
adjudicate with the same map, roster and tables.

This module reads package data only; it never touches the game directory or
any other file.

Parsing TOML (tomllib, pure Python) is most of what loading the map and the
scenarios costs, and every command that shows the game does it. So those
files have a decoded twin in the package (``map.decoded.json``: what tomllib
reads from the file, as JSON, with the length and CRC-32 of the exact bytes it
was made from; msgspec decodes JSON in C). The fingerprint only tells an
edited file from the one its twin was made from: the package is trusted code,
and what binds the players to the data is pbem's hash of the TOML bytes in
the genesis (a rules package does no cryptography). A twin is used only for the bytes it names,
and gives the same values as parsing them (a test checks that for every
twin); other bytes (an edited file before ``PBEM_REGENERATE_GOLDEN=1 pytest
tests/test_coldstart.py`` remade its twin, or a test's altered copy), a
missing twin or a twin that does not decode are parsed from TOML as before.
"""

from __future__ import annotations

import math
import zlib
from typing import Any, TypeVar

import msgspec

from pbem.rulesapi import package_data

T = TypeVar("T")

#: Every data file of the game, in the order they are hashed into genesis.
DATA_FILES: tuple[str, ...] = (
    "map.toml",
    "units.toml",
    "fire_table.toml",
    "scenarios.toml",
)


class DataError(ValueError):
    """A data file is malformed. The message names the file and the entry."""

    def __init__(self, file: str, where: str, problem: str) -> None:
        self.file = file
        self.where = where
        self.problem = problem
        super().__init__(f"{file}: {where}: {problem}" if where else f"{file}: {problem}")


def read_bytes(name: str) -> bytes:
    """The exact bytes of data file ``name`` (e.g. ``"map.toml"``)."""
    return package_data("rules.ritd.data", name)


#: The data files with a decoded twin: those read at every start (the map for
#: any view, the scenarios for SPEC and ``render_text``, the units they name).
TWINNED: tuple[str, ...] = ("map.toml", "scenarios.toml", "units.toml")


class _Twin(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    source: str
    size: int
    crc32: int
    data: msgspec.Raw


def twin_name(name: str) -> str:
    """The package file holding the decoded twin of data file ``name``."""
    return name.removesuffix(".toml") + ".decoded.json"


def from_twin(name: str, data: bytes, type_: type[T]) -> T | None:
    """``data``, the bytes of data file ``name``, decoded into ``type_`` from the
    file's decoded twin; None when the twin is missing, made from other bytes,
    or does not decode into ``type_`` (the caller then parses the TOML, which
    names any problem)."""
    if name not in TWINNED:
        return None
    try:
        twin = msgspec.json.decode(read_bytes(twin_name(name)), type=_Twin)
    except (OSError, msgspec.DecodeError):  # e.g. an install without the twins: parse the TOML
        return None
    if twin.source != name or twin.size != len(data) or twin.crc32 != zlib.crc32(data):
        return None
    try:
        return msgspec.json.decode(twin.data, type=type_)
    except msgspec.DecodeError:
        return None


def _plain(value: Any) -> bool:
    """Only what JSON gives back unchanged: no dates or times, no inf or nan."""
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int | bool)


def twin_bytes(name: str, data: bytes) -> bytes:
    """The decoded twin of data file ``name`` holding ``data`` (the TOML as
    tomllib reads it). ValueError for TOML whose values JSON would change."""
    raw = msgspec.toml.decode(data)
    if not _plain(raw):
        raise ValueError(f"{name}: holds a date, time, inf or nan, which a JSON twin cannot keep")
    twin = {"source": name, "size": len(data), "crc32": zlib.crc32(data), "data": raw}
    return msgspec.json.format(msgspec.json.encode(twin), indent=1) + b"\n"


def decode(name: str, data: bytes, type_: type[T]) -> T:
    """Decode TOML ``data`` (from file ``name``) into ``type_``, from the
    file's decoded twin when it was made from exactly these bytes.

    Raises DataError naming the file and msgspec's path to the bad entry
    (e.g. ``$.hexes[12].terrain``) for syntax or schema errors.
    """
    fast = from_twin(name, data, type_)
    if fast is not None:
        return fast
    try:
        return msgspec.toml.decode(data, type=type_)
    except msgspec.ValidationError as exc:
        raise DataError(name, "", f"invalid entry: {exc}") from None
    except msgspec.DecodeError as exc:
        raise DataError(name, "", f"not valid TOML: {exc}") from None
