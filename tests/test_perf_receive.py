"""What a receive spends that does not follow from the turn it receives (issue 20,
"receive ... independent of log length"):

- The replay cache keeps the shared deck as the JSON it was saved as, and a
  restored ledger decodes it only when something first reads it
  (``DeckLedger.from_encoded``): an ordinary turn that works no deck leaves it
  undecoded and saves it back byte for byte. A ledger so restored equals the
  one it was saved from, forks apart from it, and decodes when first read.
- The deck is in a file of its own, written only when the deck was read;
  a deck file that cannot be read gives the deck of a full replay.
- The history's older entries stay the JSON the cache saved them as until one
  of them is read (``pbem.game.History``).
- The main file's JSON holds neither the rules state nor the older history:
  each is a section of its own after it, never scanned by the JSON decoding.
- ``pbem receive --no-auto`` composes no automatic answer it would throw away:
  only dice or deck work is reported then ("the opponent's dice wait ...").
"""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from pbem import codec, session, snapshot
from pbem.cli import cli
from pbem.deck import DECK
from pbem.errors import BadFile
from pbem.game import EventInfo, History, Replay
from pbem.identity import load_identity
from pbem.ledger import DeckData, DeckLedger, KeyData, SourceData, StepData
from pbem.rulesapi import DICE
from pbem.store import GameDir
from pbem.table import THROWAWAY_PASSPHRASE
from pbem.vault import seal_bytes, unseal_bytes


def _data() -> DeckData:
    cards = [f"{i:064x}" for i in range(4)]
    step = StepData("s1", 1, cards, cards, [SourceData(f"card-{i}") for i in range(4)])
    return DeckData(rounds={"s1": [step, StepData("s1", 2, cards, cards)]}, first={"s1": "axis"},
                    keys=[KeyData("s1", 3, 0, "ab" * 32, "cd" * 16)], dealt=[("s1", 0, "allied")],
                    opened=[("s1", 0, "allied")], where=[("s1", 1, 5, "axis"), ("s1", -2, 7, "axis")])


def test_a_ledger_from_its_json_equals_the_one_saved_and_decodes_when_first_read():
    saved = DeckLedger.from_data(_data())
    encoded = saved.encoded()
    lazy = DeckLedger.from_encoded(encoded)
    assert "rounds" not in vars(lazy) and lazy.encoded() is encoded  # untouched: the very bytes back
    assert "rounds" not in vars(lazy.fork())  # a fork of it stays undecoded too
    assert lazy == saved and "rounds" in vars(lazy)  # the first read decodes
    assert lazy.encoded() == encoded and lazy.data() == _data()
    assert lazy.card(None, "s1", 0) is None  # type: ignore[arg-type] # an incomplete round shows no card
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        _ = DeckLedger.from_encoded(encoded).nonesuch  # other names are not decoded for


def test_a_ledger_from_its_json_forks_apart_and_keeps_what_logcheck_set():
    lazy = DeckLedger.from_encoded(DeckLedger.from_data(_data()).encoded())
    twin = lazy.fork()
    twin.dealt[("s1", 1)] = "axis"
    assert ("s1", 1) not in lazy.dealt and ("s1", 1) in twin.dealt
    hints: dict = {}
    other = DeckLedger.from_encoded(lazy.encoded())
    other.exp_hints = hints
    assert other.rounds == lazy.rounds and other.exp_hints is hints  # kept through the decoding


def test_a_ledger_whose_json_is_not_a_deck_is_a_bad_file_naming_the_cache():
    lazy = DeckLedger.from_encoded(b'{"rounds": 5}')
    with pytest.raises(BadFile, match="replay cache's shared deck cannot be read.*cache/"):
        _ = lazy.rounds


# -- a whole receive -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(ritd_demo_selfplay):
    """A RitD Demo played by the random bots: it deals and opens cards of the shared deck."""
    return ritd_demo_selfplay, GameDir(ritd_demo_selfplay / "axis").read_events()


def _works_deck(stored: bytes) -> bool:
    """Whether the event carries a deck message (its canonical JSON names the message's type)."""
    return b'"type":"deck-step"' in stored or b'"type":"deck-keys"' in stored


def _receiver(out: Path, events: list[bytes], seq: int, tmp: Path) -> tuple[GameDir, Path]:
    """The receiver of event ``seq`` holding events 0..seq-1 with its replay cache built, and the turn file."""
    receiver = next(r for r in ("axis", "allied") if r != codec.unwrap(events[seq]).author)
    copy = tmp / f"{receiver}{seq}"
    shutil.copytree(out / receiver, copy, ignore=shutil.ignore_patterns("lock", "cache", "drafts"))
    gd = GameDir(copy)
    for later in range(seq, gd.event_count()):
        gd.event_path(later).unlink()
    identity = load_identity(Path(gd.read_local().identity), THROWAWAY_PASSPHRASE)
    snapshot.save(gd, session.load_seat(gd, identity).replay, identity)
    turn = tmp / f"turn{seq}.pbem"
    turn.write_bytes(b"pbem-turn v1\n---\n" + events[seq] + b"\n")
    return gd, turn


def _cached_fold(gd: GameDir) -> Replay:
    identity = load_identity(Path(gd.read_local().identity), THROWAWAY_PASSPHRASE)
    return session.load_seat(gd, identity).replay


def _full_fold(gd: GameDir) -> Replay:
    shutil.rmtree(gd.path / "cache")
    return _cached_fold(gd)


def _receive_counting_decodes(demo, tmp_path, monkeypatch, seq: int) -> tuple[GameDir, list[int]]:
    """Event ``seq`` received by its receiver (``pbem receive --no-auto``); the decodes of a ledger it made."""
    out, events = demo
    gd, turn = _receiver(out, events, seq, tmp_path)
    decoded: list[int] = []
    real = DeckLedger._decode
    monkeypatch.setattr(DeckLedger, "_decode", lambda self: decoded.append(1) or real(self))
    monkeypatch.setenv("PBEM_PASSPHRASE", THROWAWAY_PASSPHRASE)
    result = CliRunner().invoke(cli, ["receive", "--no-auto", "-g", str(gd.path), str(turn)])
    assert result.exit_code == 0, result.output
    return gd, decoded


def test_an_ordinary_turn_received_leaves_the_deck_undecoded_and_saves_it_back_unchanged(demo, tmp_path,
                                                                                        monkeypatch):
    events = demo[1]
    seq = next(s for s in range(len(events) - 3, 2, -1) if not _works_deck(events[s]) and s > 20)
    gd, decoded = _receive_counting_decodes(demo, tmp_path, monkeypatch, seq)
    assert decoded == []
    cached = _cached_fold(gd)
    assert "rounds" not in vars(cached.ledger) and cached.ledger  # the deck is there, still as saved
    full = _full_fold(gd)
    assert cached.snapshot() == full.snapshot() and cached.ledger == full.ledger


def test_a_turn_that_works_the_deck_decodes_it_and_the_cache_equals_a_full_replay(demo, tmp_path, monkeypatch):
    events = demo[1]
    seq = next(s for s in range(len(events) - 1, 2, -1) if _works_deck(events[s]))
    gd, decoded = _receive_counting_decodes(demo, tmp_path, monkeypatch, seq)
    assert decoded  # the deck message needed the ledger
    cached = _cached_fold(gd)
    assert msgspec.json.encode(cached.snapshot()) == msgspec.json.encode(_full_fold(gd).snapshot())


# -- receive --no-auto composes nothing it would throw away -------------------------------------


def _pending_own_step(out: Path, events: list[bytes]) -> int:
    """An event after which its receiver decides a step that is not dice or deck work."""
    rules = session.rules_for(GameDir(out / "axis"))
    r = Replay(rules)
    for seq, stored in enumerate(events[:-1]):
        r.apply_stored(stored)
        decision = r.pending()
        if seq > 5 and decision is not None and decision.kind not in (DICE, DECK) and \
                decision.role != codec.unwrap(stored).author:
            return seq
    raise AssertionError("no such event in the Demo")


@pytest.mark.parametrize("auto", [False, True])
def test_receive_without_auto_composes_no_answer_for_a_persons_step(demo, tmp_path, monkeypatch, auto):
    out, events = demo
    seq = _pending_own_step(out, events)
    gd, turn = _receiver(out, events, seq, tmp_path)
    asked: list[str] = []
    real = session.automatic_orders
    monkeypatch.setattr(session, "automatic_orders", lambda replay, role, *a, **k: asked.append(role) or
                        real(replay, role, *a, **k))
    monkeypatch.setenv("PBEM_PASSPHRASE", THROWAWAY_PASSPHRASE)
    args = ["receive", "-g", str(gd.path), str(turn)] if auto else ["receive", "--no-auto", "-g", str(gd.path),
                                                                    str(turn)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert f"received events {seq}-{seq}" in result.output and "dice wait" not in result.output
    assert asked == ([gd.read_local().role] if auto else [])  # with auto, pbem looks for a forced step


def test_receive_without_auto_still_says_when_the_dice_wait_for_my_entropy(demo, tmp_path, monkeypatch):
    """Dice work is still looked at without auto: where the dice answer could go
    alone, the receive says it waits for ``pbem send``."""
    out, events = demo
    rules = session.rules_for(GameDir(out / "axis"))
    r = Replay(rules)
    dice = []
    for s, stored in enumerate(events[:-1]):
        r.apply_stored(stored)
        decision = r.pending()
        if s > 5 and decision is not None and decision.kind == DICE and decision.role != codec.unwrap(stored).author:
            dice.append(s)
    assert dice, "the Demo asks for dice"
    asked: list[str] = []
    real = session.automatic_orders
    monkeypatch.setattr(session, "automatic_orders", lambda replay, role, *a, **k: asked.append(role) or
                        real(replay, role, *a, **k))
    monkeypatch.setenv("PBEM_PASSPHRASE", THROWAWAY_PASSPHRASE)
    said = []
    for seq in dice[:8]:
        gd, turn = _receiver(out, events, seq, tmp_path)
        asked.clear()
        result = CliRunner().invoke(cli, ["receive", "--no-auto", "-g", str(gd.path), str(turn)])
        assert result.exit_code == 0, result.output
        assert asked == [gd.read_local().role]
        said.append("the opponent's dice wait for your entropy: run 'pbem send'" in result.output)
    assert any(said)


# -- the history: older entries kept as their JSON until read ------------------------------------


def _info(seq: int) -> EventInfo:
    return EventInfo(seq, "axis" if seq % 2 else "allied", bytes([seq]) * 32, (f"order {seq}",), 0, (), "", None,
                     turn=f"turn {seq}")


def _restored_history(n: int) -> History:
    older, count, newer = History(_info(i) for i in range(n)).parts()
    assert count == n - 1 and newer == [_info(n - 1)]
    return History.from_parts(older, count, newer)


def test_a_history_from_its_parts_reads_its_newer_entries_without_decoding_the_older():
    h = _restored_history(5)
    assert len(h) == 5 and h[-1] == _info(4) and h[4] == _info(4)
    h.append(_info(5))
    assert h[-1] == _info(5) and h[-2] == _info(4) and len(h) == 6
    assert h._older is not None  # nothing decoded yet
    older, count, newer = h.parts()
    assert count == 5 and newer == [_info(5)] and h._older is not None
    assert msgspec.json.decode(older, type=list[EventInfo]) == [_info(i) for i in range(5)]
    assert h[1] == _info(1) and h._older is None  # an older entry: decoded now
    assert list(h) == [_info(i) for i in range(6)] and h[-6] == _info(0) and h[1:3] == [_info(1), _info(2)]
    with pytest.raises(IndexError):
        _ = h[6]
    with pytest.raises(IndexError):
        _ = h[-7]


def test_a_history_compares_and_copies_as_a_list_would():
    full = History(_info(i) for i in range(4))
    assert _restored_history(4) == full and _restored_history(4) == [_info(i) for i in range(4)]
    assert _restored_history(4) != History(_info(i) for i in range(3))
    h = _restored_history(4)
    twin = h.copy()
    twin.append(_info(4))
    assert len(h) == 4 and len(twin) == 5 and h == full
    assert History().parts() == (b"[]", 0, []) and list(History()) == [] and not History()
    # parts of a history never restored: the same as of one restored
    assert full.parts() == _restored_history(4).parts()


def test_a_history_whose_json_is_not_its_entries_is_a_bad_file_naming_the_cache():
    with pytest.raises(BadFile, match="replay cache's history cannot be read.*cache/"):
        list(History.from_parts(b'[5]', 1, [_info(1)]))
    with pytest.raises(BadFile, match="wrong number of events"):
        list(History.from_parts(msgspec.json.encode([_info(0)]), 2, [_info(2)]))


# -- the deck in a file of its own -----------------------------------------------------------------


def _deck_files(gd: GameDir, role: str) -> list[Path]:
    return sorted((gd.path / "cache").glob(f"{role}.deck-*.bin"))


def _seat_of(gd: GameDir) -> session.Seat:
    return session.load_seat(gd, load_identity(Path(gd.read_local().identity), THROWAWAY_PASSPHRASE))


def test_the_deck_file_is_written_only_when_the_deck_was_read_and_old_ones_go(demo, tmp_path):
    out, events = demo
    seq = next(s for s in range(len(events) - 3, 2, -1) if not _works_deck(events[s]) and s > 20)
    gd, _ = _receiver(out, events, seq, tmp_path)
    role = gd.read_local().role
    [first] = _deck_files(gd, role)
    stamp = first.stat().st_mtime_ns, first.stat().st_ino
    seat = _seat_of(gd)
    snapshot.save(gd, seat.replay, seat.identity)  # nothing read the deck: its file is named again
    assert _deck_files(gd, role) == [first] and (first.stat().st_mtime_ns, first.stat().st_ino) == stamp
    seat = _seat_of(gd)
    assert seat.replay.ledger.rounds  # read: the next save writes a deck file anew
    snapshot.save(gd, seat.replay, seat.identity)
    [second] = _deck_files(gd, role)
    assert second != first and not first.exists()
    cached = _cached_fold(gd).ledger
    assert cached.rounds  # read from the deck file (before the cache goes for the full replay)
    assert cached == _full_fold(gd).ledger


@pytest.mark.parametrize("damage", ["missing", "damaged", "another cache's"])
def test_a_deck_file_that_cannot_be_read_gives_the_deck_of_a_full_replay(demo, tmp_path, monkeypatch, damage):
    out, events = demo
    seq = next(s for s in range(len(events) - 3, 2, -1) if not _works_deck(events[s]) and s > 20)
    gd, _ = _receiver(out, events, seq, tmp_path)
    role = gd.read_local().role
    [deck] = _deck_files(gd, role)
    if damage == "missing":
        deck.unlink()
    elif damage == "damaged":
        blob = bytearray(deck.read_bytes())
        blob[-1] ^= 1
        deck.write_bytes(bytes(blob))
    else:  # a deck file sealed for another token put in its place
        other, _ = _receiver(out, events, seq - 2, tmp_path / "other")
        [theirs] = _deck_files(other, role)
        deck.write_bytes(theirs.read_bytes())
    cached = _cached_fold(gd)  # the main file is sound: restored
    assert cached.seq == seq - 1 and "rounds" not in vars(cached.ledger)
    replayed: list[int] = []
    real = snapshot._replayed_deck
    monkeypatch.setattr(snapshot, "_replayed_deck", lambda *a: replayed.append(1) or real(*a))
    assert cached.ledger.rounds and replayed == [1]  # read now: recomputed from the log
    assert cached.ledger == _full_fold(gd).ledger


def test_a_game_without_a_deck_keeps_no_deck_file(table):
    table.play("red", "advance 1", "pass")
    assert (table.red.gd.path / "cache" / "red.bin").exists()
    assert _deck_files(table.red.gd, "red") == []


def test_a_fork_saved_after_its_deck_file_went_writes_the_deck_again(demo, tmp_path, monkeypatch):
    """Two forks of one restored replay: one reads the deck and is saved (a new
    deck file, the old one removed); the other, never read, is saved after: its
    deck file is gone, so the deck is written again rather than named."""
    out, events = demo
    seq = next(s for s in range(len(events) - 3, 2, -1) if not _works_deck(events[s]) and s > 20)
    gd, _ = _receiver(out, events, seq, tmp_path)
    role = gd.read_local().role
    seat = _seat_of(gd)
    reader, idle = seat.replay.fork(), seat.replay.fork()
    assert reader.ledger.rounds
    snapshot.save(gd, reader, seat.identity)
    replayed: list[int] = []
    real = snapshot._replayed_deck
    monkeypatch.setattr(snapshot, "_replayed_deck", lambda *a: replayed.append(1) or real(*a))
    snapshot.save(gd, idle, seat.identity)
    assert replayed == [1] and "rounds" not in vars(idle.ledger)  # its file gone: recomputed, read once
    assert len(_deck_files(gd, role)) == 1
    monkeypatch.setattr(snapshot, "_replayed_deck", lambda *a: pytest.fail("the deck file named is missing"))
    cached = _cached_fold(gd)
    assert cached.ledger.rounds and cached.ledger == reader.ledger == idle.ledger


# -- the main file's sections ---------------------------------------------------------------


def _main_plain(seat: session.Seat) -> bytes:
    return unseal_bytes((seat.gd.path / "cache" / f"{seat.role}.bin").read_bytes(), seat.identity,
                        seat.replay.game_hex, seat.role, magic=snapshot._MAGIC, purpose=snapshot._PURPOSE)


def test_the_main_file_keeps_the_state_and_the_older_history_out_of_its_json(demo, tmp_path):
    out, events = demo
    seq = next(s for s in range(len(events) - 3, 2, -1) if not _works_deck(events[s]) and s > 20)
    gd, _ = _receiver(out, events, seq, tmp_path)
    head, state, older = snapshot._split(_main_plain(_seat_of(gd)), 3)
    snap = msgspec.json.decode(head, type=snapshot.Snapshot)
    assert bytes(snap.replay.state) == b"null" and bytes(snap.replay.history_older) == b"null"
    full = _full_fold(gd)
    data = full.snapshot(with_deck=False)
    assert bytes(state) == bytes(data.state) and bytes(older) == bytes(data.history_older)
    assert len(msgspec.json.decode(bytes(older))) == seq - 1  # every entry but the last


@pytest.mark.parametrize("framing", ["a section too long", "bytes after the last", "two sections"])
def test_a_main_file_whose_sections_do_not_add_up_is_replaced_by_a_full_replay(table, monkeypatch, framing):
    table.play("red", "advance 1", "pass")
    gd = table.red.gd
    seat = table.red.seat()
    path = gd.path / "cache" / "red.bin"
    head, state, older = (bytes(p) for p in snapshot._split(_main_plain(seat), 3))
    plain = {"a section too long": snapshot._sections(head, state) + snapshot._LENGTH.pack(len(older) + 1) + older,
             "bytes after the last": snapshot._sections(head, state, older) + b"x",
             "two sections": snapshot._sections(head, state)}[framing]
    path.write_bytes(seal_bytes(plain, seat.identity, seat.replay.game_hex, "red", magic=snapshot._MAGIC,
                                purpose=snapshot._PURPOSE))
    with pytest.raises(BadFile, match="replay cache"):
        snapshot._split(plain, 3)
    restored: list[object] = []
    real = snapshot.restore
    monkeypatch.setattr(snapshot, "restore", lambda *a: restored.append(real(*a)) or restored[-1])
    again = table.red.seat().replay
    assert restored == [None]  # not restored: the whole log replayed
    shutil.rmtree(gd.path / "cache")
    assert again.snapshot() == table.red.seat().replay.snapshot()
