"""The rules are a pure function of the log (DESIGN 6; issue 19: made faster,
not different): replaying the version-4 games examples/ published (kept in
tests/data/ritd-v4-examples/, replayed by the frozen rules/ritd_v4) with every opening
known (as the audit does) gives, after every event, the same State, pending
decision and views of each role and of the public as when the digests in
tests/data/ritd-replay-digests.json were taken (before the speed work of
issue 19, on main at c16c90f). A cache that leaked between positions, or an
index that went stale, changes a digest here at the first event it touches.

Regenerate only for a deliberate rules change (with its rules version):
    python tests/ritd/test_replay_digests.py --write
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import msgspec
import pytest

from pbem import codec, rulesapi
from pbem.game import Replay, audit_openings
from pbem.turnfile import parse_turn

ROOT = Path(__file__).resolve().parent.parent.parent
DIGESTS = ROOT / "tests" / "data" / "ritd-replay-digests.json"
GAMES = ("game", "complete-game")
_ENC = msgspec.json.Encoder(order="deterministic")


def _events(game: str) -> list[bytes]:
    by_seq: dict[int, bytes] = {}
    for path in sorted((ROOT / "tests" / "data" / "ritd-v4-examples" / game).glob("*-outbox/*.pbem")):
        for stored in parse_turn(path.read_bytes(), path.name).events:
            by_seq.setdefault(codec.unwrap(stored).seq, stored)
    return [by_seq[s] for s in sorted(by_seq)]


def _digest(value: object) -> str:
    try:
        data = _ENC.encode(value)
    except TypeError:
        data = repr(value).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def digests(game: str) -> list[str]:
    """Per event: State, pending, and the views of each role and the public."""
    events = _events(game)
    genesis = codec.decode_body(codec.unwrap(events[0]).body).genesis
    assert genesis is not None
    rules = rulesapi.load_version(genesis.rules, genesis.rules_version)
    replay = Replay(rules, role="*", known=audit_openings(events))
    out = []
    for stored in events:
        replay.apply_stored(stored, verify_signature_=False)
        state = replay.state
        if state is None:
            out.append("-")
            continue
        parts = [_digest(state), _digest(replay.pending())]
        parts += [_digest(rules.view(state, role)) for role in (*rules.SPEC.roles, None)]
        out.append(" ".join(parts))
    return out


@pytest.mark.random_cards  # the published logs were dealt by the real deck
@pytest.mark.parametrize("game", GAMES)
def test_every_event_of_the_published_games_replays_to_the_stored_digests(game: str) -> None:
    stored = json.loads(DIGESTS.read_text())[game]
    now = digests(game)
    assert len(now) == len(stored), f"examples/{game}: {len(now)} events, digests stored for {len(stored)}"
    for seq, (a, b) in enumerate(zip(now, stored)):
        assert a == b, f"examples/{game}: event {seq} replays differently (State pending views: {a} != {b})"


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    DIGESTS.write_text(json.dumps({g: digests(g) for g in GAMES}, indent=1) + "\n")
    print(f"wrote {DIGESTS}")
