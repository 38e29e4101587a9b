"""The game directory: atomic writes, the lock, idempotent receipt, equivocation (DESIGN 2, 3)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pbem import fileio, session
from pbem.errors import Busy, Equivocation
from pbem.game import Replay


def test_a_crash_between_temp_write_and_rename_leaves_the_log_valid(table, monkeypatch):
    seat = table.red.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    before = table.red.gd.read_events()

    def crash(*_args, **_kwargs):
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(os, "link", crash)  # event files are created by link(temp, final)
    with pytest.raises(KeyboardInterrupt):
        session.send(seat)
    monkeypatch.undo()
    assert table.red.gd.read_events() == before
    assert not any(p.name.startswith(fileio.TMP_PREFIX) for p in table.red.gd.events_dir.iterdir())
    # The draft survived; sending again works and the log verifies.
    session.send(table.red.seat())
    assert session.load_public(table.red.gd).seq == len(before)


def test_a_temp_file_left_by_a_killed_process_is_ignored_and_cleaned(table):
    stray = table.red.gd.events_dir / f"{fileio.TMP_PREFIX}000002.json.123.456"
    stray.write_bytes(b"half an ev")
    assert session.load_public(table.red.gd).seq == 1
    with table.red.gd.lock(exclusive=True):
        pass
    assert not stray.exists()


def test_temp_files_left_in_the_vault_drafts_outbox_and_cache_are_cleaned_by_the_next_writer(table):
    gd = table.red.gd
    dirs = [gd.vault_dir, gd.drafts_dir, gd.outbox_dir, gd.evidence_dir, gd.path / "cache"]
    strays = []
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
        strays.append(d / f"{fileio.TMP_PREFIX}x.bin.123.456")
        strays[-1].write_bytes(b"half")
    keep = [p for d in dirs for p in d.iterdir() if not p.name.startswith(fileio.TMP_PREFIX)]
    with gd.lock(exclusive=False):  # a reader may run beside another reader's writes: it cleans nothing
        pass
    assert all(p.exists() for p in strays)
    with gd.lock(exclusive=True):
        pass
    assert not any(p.exists() for p in strays)
    assert all(p.exists() for p in keep) and session.load_public(gd).seq == 1


def test_a_second_process_waits_then_fails_cleanly(table, tmp_path):
    holder = tmp_path / "hold.py"
    holder.write_text(textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).parents[1])!r})
        from pbem.store import GameDir
        with GameDir({str(table.red.gd.path)!r}).lock(exclusive=True):
            print("locked", flush=True)
            time.sleep(5)
    """))
    proc = subprocess.Popen([sys.executable, str(holder)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        start = time.monotonic()
        with pytest.raises(Busy, match="in use by another pbem process"), table.red.gd.lock(exclusive=True):
            pass
        assert time.monotonic() - start >= 0.25  # it waited PBEM_LOCK_WAIT first
        with pytest.raises(Busy):
            _locked_do(table)
    finally:
        proc.kill()
        proc.wait()
    with table.red.gd.lock(exclusive=True):
        pass


def _locked_do(table):
    seat = table.red.seat()
    with seat.gd.lock(exclusive=True):
        session.add_orders(seat, ["advance 1"])


def test_receiving_the_same_turn_file_twice_is_idempotent(table):
    seat = table.red.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    data = Path(session.send(seat).turn_file).read_bytes()
    first = session.receive(table.blue.seat(), [("t", data)])
    again = session.receive(table.blue.seat(), [("t", data)])
    assert first.appended == [2] and again.appended == [] and again.duplicates == [2]


def test_equivocation_is_detected_kept_as_evidence_and_stops_the_game(table):
    seat = table.red.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    first = Path(session.send(seat).turn_file).read_bytes()
    session.receive(table.blue.seat(), [("t", first)])
    # Red signs a different event for the same seq (e.g. after rolling back its directory).
    seat = table.red.seat()
    rewound = Replay(seat.rules, role="red", known=seat.vault.known_values())
    for stored in table.blue.gd.read_events()[:2]:
        rewound.apply_stored(stored)
    seat.replay = rewound
    orders = session.parse_orders(seat.rules, rewound, "red", seat.vault, [], ["advance 2", "pass"])
    other = session._compose(seat, orders).stored
    with pytest.raises(Equivocation, match="red signed two different events for seq 2"):
        session.receive(table.blue.seat(), [("t2", b"pbem-turn v1\n---\n" + other + b"\n")])
    gd = table.blue.gd
    assert gd.stopped_reason() and len(list(gd.evidence_dir.glob("equivocation-000002-red-*.json"))) == 2
    assert session.check_evidence(gd, session.load_public(gd)) == ["red signed two different events for seq 2"]
    with pytest.raises(Equivocation, match="stopped"):
        session.add_orders(table.blue.seat(), ["advance 1"])


@pytest.mark.parametrize("names, problem", [
    ([], None),
    (["000000.json", "000001.json", "000002.json"], None),
    (["000000.json", "000002.json"], "event 1 is missing"),
    (["000001.json", "000002.json"], "event 0 is missing"),
    (["000000.json", "000001.json", "0000001.json"], "event 2 is missing"),  # two names of one number
    (["000000.json", "notes.txt"], "unexpected file"),
    # names that concatenate to well-formed ones must not pass the fast check
    (["00", "0000.json", "000001.json000002.json", "000003.json"], "unexpected file"),
])
def test_the_event_log_listing_finds_every_gap_and_stray_file(tmp_path, names, problem):
    from pbem.errors import BadFile
    from pbem.store import GameDir

    gd = GameDir(tmp_path)
    gd.events_dir.mkdir()
    for name in names + [fileio.TMP_PREFIX + "000009.json.1.2"]:  # a crash's temp file is ignored
        (gd.events_dir / name).write_bytes(b"")
    if problem is None:
        assert gd.event_count() == len(names)
    else:
        with pytest.raises(BadFile, match=problem):
            gd.event_count()


@pytest.mark.parametrize("names, problem", [
    (["000000.json", "000001.json"], None),
    (["000000.json", "000002.json"], "event 1 is missing"),
    (["000000.json", "notes.txt"], "unexpected file"),
])
def test_the_exclusive_locks_listing_counts_the_log_once_and_no_later_than_an_append(
        tmp_path, monkeypatch, names, problem):
    """Issue 20: under the exclusive lock the event log is listed once, by the lock
    (which removes a crash's temp files); its first count reads that listing, with
    every check of a fresh listing, and any count after an append lists again."""
    from pbem.errors import BadFile
    from pbem.store import GameDir

    gd = GameDir(tmp_path)
    gd.events_dir.mkdir()
    stray = gd.events_dir / (fileio.TMP_PREFIX + "000002.json.1.2")
    for path in [gd.events_dir / n for n in names] + [stray]:
        path.write_bytes(b"")
    listed = []
    real = os.listdir
    monkeypatch.setattr(os, "listdir", lambda d: listed.append(Path(d)) or real(d))
    with gd.lock(exclusive=True):
        assert not stray.exists()
        if problem is not None:
            with pytest.raises(BadFile, match=problem):
                gd.event_count()
            return
        assert gd.event_count() == 2
        assert listed.count(gd.events_dir) == 1  # the lock's listing, and no other
        assert gd.event_count() == 2 and listed.count(gd.events_dir) == 2  # the lock's listing served once
    with gd.lock(exclusive=True):
        gd.append(2, b"{}")  # before any count: the lock's listing no longer holds
        assert gd.event_count() == 3 and listed.count(gd.events_dir) == 4
    assert gd.event_count() == 3 and listed.count(gd.events_dir) == 5  # no lock: its own listing


def test_the_locks_listing_ends_with_the_lock(tmp_path):
    """A count after the exclusive lock is released lists the log again: another
    process may have appended since."""
    from pbem.store import GameDir

    gd = GameDir(tmp_path)
    gd.events_dir.mkdir()
    (gd.events_dir / "000000.json").write_bytes(b"")
    with gd.lock(exclusive=True):
        pass
    (gd.events_dir / "000001.json").write_bytes(b"")  # another process's append after the lock
    assert gd.event_count() == 2
