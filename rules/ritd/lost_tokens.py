"""The tokens of the blocks a happening says were lost (issue 21 point 3:
"tokens stay in --json and verbose output"; ``Happening.tokens``).

rules.ritd.happenings says eliminations and step losses in words and never
prints a token. This adds, to each elimination, removal and loss, the public
tokens of the blocks it concerns, read from the same two views (of the
blocks the step changed, ``rules.ritd.view.glances``): a block
gone (eliminated or removed) or with less CV after than before, matched to
the happening by the unit name it prints or, for a block the reader cannot
name, by its side ("2 Axis blocks") and, for a loss, its CV change.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from pbem.rulesapi import Happening
from rules.ritd.state import State
from rules.ritd.view import BlockView, glances

#: Kinds of happening that lose blocks or steps (rules.ritd.happenings).
GONE, LOSS = ("elimination", "removal"), "loss"
SIDE_NAMES = {"axis": "Axis", "allied": "Allied"}


def _named_in(b: BlockView, text: str) -> bool:
    return bool(b.unit) and b.unit in text or not b.unit and f"{SIDE_NAMES.get(b.side, b.side)} block" in text


def with_tokens(before: State, after: State, role: str | None,
                happenings: Sequence[Happening]) -> tuple[Happening, ...]:
    """``happenings`` with the tokens of the blocks each elimination, removal
    or loss concerns (the others unchanged)."""
    if not any(h.kind in GONE or h.kind == LOSS for h in happenings):
        return tuple(happenings)
    was, now = glances(before, after, role, every=False)  # type: ignore[arg-type]
    after_blocks = {b.token: b for b in now.blocks}
    gone = [b for b in was.blocks if b.token not in after_blocks]
    reduced = [(b, after_blocks[b.token]) for b in was.blocks if b.token in after_blocks
               and b.cv and after_blocks[b.token].cv and after_blocks[b.token].cv < b.cv]
    out = []
    for h in happenings:
        tokens: list[str] = []
        if h.kind in GONE:
            tokens = [b.token for b in gone if _named_in(b, h.text)]
        elif h.kind == LOSS:
            tokens = [b.token for b, a in reduced
                      if f"CV {b.cv} to {a.cv}" in h.text and (_named_in(a, h.text) or _named_in(b, h.text)
                                                             or f"{SIDE_NAMES.get(b.side, b.side)} block" in h.text)]
        out.append(msgspec.structs.replace(h, tokens=tuple(sorted(tokens))) if tokens else h)
    return tuple(out)
