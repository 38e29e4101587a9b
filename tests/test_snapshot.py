"""The replay cache: restored only when it matches the log, equal to a full
replay, and it spares re-verifying old events (issue 9 'receive')."""

from __future__ import annotations

from pbem import game as game_mod
from pbem.game import Replay
from tests.race import rules as race


def _full(side) -> Replay:
    seat_vault = side.seat().vault
    r = Replay(race.RULES, role=side.role, known=seat_vault.known_values())
    for stored in side.gd.read_events():
        r.apply_stored(stored)
    return r


def _same(a: Replay, b: Replay) -> None:
    assert (a.seq, a.head, a.state, a.commitments, a.opened, a.entropy_commit, a.entropy_seq, a.dice_origin) == \
           (b.seq, b.head, b.state, b.commitments, b.opened, b.entropy_commit, b.entropy_seq, b.dice_origin)
    assert a.history == b.history


def test_the_cache_equals_a_full_replay(table):
    table.play("red", "dash")
    table.play("red", "attack")
    cached = table.red.seat().replay
    assert (table.red.gd.path / "cache" / "red.bin").exists()
    _same(cached, _full(table.red))


def test_only_new_events_are_verified(table, monkeypatch):
    table.play("red", "advance 1", "pass")
    table.play("blue", "advance 1", "pass")
    calls = []
    real = game_mod.verify_signature
    monkeypatch.setattr(game_mod, "verify_signature", lambda *a: calls.append(1) or real(*a))
    table.red.seat()
    assert len(calls) <= 3  # genesis (twice: the key check and the base), nothing else
    calls.clear()
    table.play("red", "advance 1", "pass")  # red: load, sign, check; blue: load, receive
    assert len(calls) <= 8


def test_the_genesis_is_verified_but_not_applied_again_from_the_cache(table, monkeypatch):
    table.play("red", "advance 1", "pass")
    full = _full(table.red)
    calls = []
    real = race.initial_state
    monkeypatch.setattr(race, "initial_state", lambda *a: calls.append(a) or real(*a))
    _same(table.red.seat().replay, full)
    assert calls == []  # the cache holds the genesis' effects
    (table.red.gd.path / "cache" / "red.bin").unlink()
    _same(table.red.seat().replay, full)
    assert len(calls) == 1  # no cache: the genesis is applied, then every event


def test_a_cache_that_does_not_match_the_log_is_ignored(table):
    table.play("red", "advance 1", "pass")
    cache = table.red.gd.path / "cache" / "red.bin"
    good = cache.read_bytes()
    cache.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))  # damaged
    _same(table.red.seat().replay, _full(table.red))
    cache.write_bytes(good)
    other = table.blue.gd.path / "cache" / "blue.bin"
    cache.write_bytes(other.read_bytes())  # someone else's cache
    _same(table.red.seat().replay, _full(table.red))


def test_a_cache_ahead_of_a_rewritten_log_is_ignored(table, tmp_path):
    table.play("red", "advance 1", "pass")
    cache = table.red.gd.path / "cache" / "red.bin"
    saved = cache.read_bytes()
    table.play("blue", "advance 1", "pass")
    table.play("red", "advance 1", "pass")
    # Put back the old cache: it still matches event 2, and the newer events are replayed.
    cache.write_bytes(saved)
    _same(table.red.seat().replay, _full(table.red))


def test_a_cache_from_another_history_is_ignored(tmp_path):
    """Two games with the same keys: the other game's cache never applies."""
    from tests.conftest import new_table
    a = new_table(tmp_path / "a")
    a.play("red", "advance 1", "pass")
    b = new_table(tmp_path / "b")
    b.play("red", "advance 2", "pass")
    foreign = (a.red.gd.path / "cache" / "red.bin").read_bytes()
    (b.red.gd.path / "cache" / "red.bin").write_bytes(foreign)
    _same(b.red.seat().replay, _full(b.red))
