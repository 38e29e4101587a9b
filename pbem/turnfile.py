"""Turn files: the ASCII text players send each other (by email or otherwise).

    pbem-turn v1
    game: 6f1c...            (informative header; the events are authoritative)
    rules: ritd 1
    events: 12-13 by axis
    ---
    {"body":{...},"sig":"..."}
    {"body":{...},"sig":"..."}

Every line is plain ASCII, one stored event per line, so the file survives
mail transfer (as an attachment) unchanged. CRLF line ends are accepted.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from pbem import codec
from pbem.errors import BadFile
from pbem.text import shown

MAGIC = "pbem-turn v1"
#: Largest turn file accepted (bytes).
MAX_TURN_FILE_BYTES = 16 << 20


class TurnFile(msgspec.Struct, frozen=True):
    header: dict[str, str]
    events: list[bytes]


def format_turn(game: str, rules: str, events: Sequence[bytes], authors: Sequence[str],
                seqs: Sequence[int]) -> bytes:
    span = f"{seqs[0]}-{seqs[-1]}" if len(seqs) > 1 else (str(seqs[0]) if seqs else "none")
    who = ", ".join(dict.fromkeys(authors))
    lines = [MAGIC, f"game: {game}", f"rules: {rules}", f"events: {span} by {who}", "---"]
    lines += [e.decode("ascii") for e in events]
    return ("\n".join(lines) + "\n").encode("ascii")


def parse_turn(data: bytes, name: str = "turn file") -> TurnFile:
    """Parse a turn file; BadFile naming the problem if it is not one."""
    name = shown(name)  # a path or an email attachment's name: input, shown escaped
    if len(data) > MAX_TURN_FILE_BYTES:
        raise BadFile(f"{name} is {len(data)} bytes, over the limit of {MAX_TURN_FILE_BYTES}")
    if not data.isascii():
        raise BadFile(f"{name} is not plain ASCII text: damaged in transit or not a pbem turn file")
    text = data.decode("ascii").replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].strip() != MAGIC:
        raise BadFile(f"{name} is not a pbem turn file (first line must be '{MAGIC}')")
    header: dict[str, str] = {}
    i = 1
    while i < len(lines) and lines[i].strip() != "---":
        if not lines[i].strip():
            i += 1
            continue
        key, sep, value = lines[i].partition(":")
        if not sep:
            raise BadFile(f"{name}, line {i + 1}: header line without ':'")
        header[key.strip()] = value.strip()
        i += 1
    if i >= len(lines):
        raise BadFile(f"{name} is truncated: no '---' line before the events")
    events = [line.strip().encode("ascii") for line in lines[i + 1:] if line.strip()]
    if not events:
        raise BadFile(f"{name} holds no events (truncated?)")
    for n, event in enumerate(events, 1):
        if len(event) > codec.MAX_EVENT_BYTES:
            raise BadFile(f"{name}, event line {n} is over the size limit of {codec.MAX_EVENT_BYTES} bytes")
    return TurnFile(header=header, events=events)
