"""The replay cache of a RitD game holding shared-deck rounds (pbem/snapshot.py,
issue 9 'receive'): restored, it equals a full replay field by field, deck
included, and 'pbem receive' appends from it without replaying the log."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem import session, snapshot
from pbem.cli import cli
from pbem.game import Replay
from pbem.identity import load_identity
from pbem.store import GameDir
from pbem.table import THROWAWAY_PASSPHRASE


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("ritd-cache") / "demo"
    result = CliRunner().invoke(cli, ["demo", "--dir", str(d), "--keep"])
    assert result.exit_code == 0, result.output
    return d


def _seat(path):
    gd = GameDir(path)
    return gd, load_identity(Path(gd.read_local().identity), THROWAWAY_PASSPHRASE)


def _fields(r: Replay) -> dict:
    skip = {"rules", "known", "_sets", "_cards"}  # the module; memos rebuilt on demand
    return {f.name: getattr(r, f.name) for f in dataclasses.fields(r) if f.name not in skip}


@pytest.mark.random_cards  # the demo in the fixture was dealt by the real shuffle
@pytest.mark.parametrize("role", ["axis", "allied"])
def test_a_restored_cache_with_deck_rounds_equals_a_full_replay(demo_dir, role):
    gd, identity = _seat(demo_dir / role)
    seat = session.load_seat(gd, identity)
    full = Replay(seat.rules, role=role, known=seat.vault.known_values())
    for stored in gd.read_events():
        full.apply_stored(stored)
    assert full.ledger.rounds and full.ledger.keys  # the demo deals from the shared deck
    snapshot.save(gd, full, identity)
    base = Replay(seat.rules, role=role, known=seat.vault.known_values())
    base.open_genesis(gd.read_event(0))
    restored = snapshot.restore(gd, base, identity, gd.event_count())
    assert restored is not None and restored.seq == full.seq
    assert _fields(restored) == _fields(full)
    # what the deck answers from it: every card this player can see
    for (rnd, pos) in full.ledger.dealt:
        assert restored.card(rnd, pos) == full.card(rnd, pos)


@pytest.mark.random_cards
def test_the_cache_is_written_atomically_without_fsync(demo_dir, monkeypatch):
    """Derived and checked when read, the cache is not worth an fsync (after a
    power loss it may be stale or empty: one full replay)."""
    import os

    gd, identity = _seat(demo_dir / "axis")
    seat = session.load_seat(gd, identity)
    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    snapshot.save(gd, seat.replay, identity)
    assert synced == []
    assert not [p for p in (gd.path / "cache").iterdir() if p.name.startswith(".tmp-")]
    restored = session.load_seat(gd, identity).replay
    assert restored.seq == seat.replay.seq and restored.state == seat.replay.state


def test_the_cached_state_leaves_block_and_obligation_fields_at_their_defaults_out():
    """Issue 20: the replay cache's state holds a Block's or an Obligation's fields
    at their defaults by leaving them out (a late campaign's state was half
    defaults); decoding gives each back."""
    import msgspec

    from rules.ritd.hidden import Obligation
    from rules.ritd.position import Block

    block = Block(token="A1", side="axis", hex="0109")
    assert msgspec.json.encode(block) == b'{"token":"A1","side":"axis","hex":"0109"}'
    marked = msgspec.structs.replace(block, disrupted=True, cv=3)
    assert msgspec.json.decode(msgspec.json.encode(marked), type=Block) == marked
    obligation = Obligation(token="A1", seq=3, kind="speed", rule="RB 6.1", what="moved 3 hexes", needed=3)
    encoded = msgspec.json.encode(obligation)
    assert b'"maximum"' not in encoded and b'"needed":3' in encoded
    assert msgspec.json.decode(encoded, type=Obligation) == obligation
