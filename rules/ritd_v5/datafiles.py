"""Reading and validating the data files of Rommel in the Desert.

Data files live in ``rules/ritd/data/`` (package ``rules.ritd_v5.data``) and are
read with importlib.resources so that a plain install works. The engine hashes
exactly these bytes into genesis (DESIGN section 3), so both players provably
adjudicate with the same map, roster and tables.

This module reads package data only; it never touches the game directory or
any other file.
"""

from __future__ import annotations

import importlib.resources
from typing import TypeVar

import msgspec

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
    return importlib.resources.files("rules.ritd_v5.data").joinpath(name).read_bytes()


def decode(name: str, data: bytes, type_: type[T]) -> T:
    """Decode TOML ``data`` (from file ``name``) into ``type_``.

    Raises DataError naming the file and msgspec's path to the bad entry
    (e.g. ``$.hexes[12].terrain``) for syntax or schema errors.
    """
    try:
        return msgspec.toml.decode(data, type=type_)
    except msgspec.ValidationError as exc:
        raise DataError(name, "", f"invalid entry: {exc}") from None
    except msgspec.DecodeError as exc:
        raise DataError(name, "", f"not valid TOML: {exc}") from None
