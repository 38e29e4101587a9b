"""benchmarks/emails.py (issue 26 point 8, PLAN "Emails"): messages per
Player-Turn from one self-play log, faithful (one email per event, the
default) and expedited (forced steps implied, then one email per run of
one author's events), and how many of those a person writes."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pbem import codec, rulesapi
from pbem.rulesapi import DICE
from pbem.table import LocalTable, RandomPolicy, demo_policy
from tests.race import rules as race
from tests.skirmish import rules as skirmish

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "emails.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("emails_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["emails_bench"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_counts_of_a_hand_made_sequence(bench: ModuleType) -> None:
    """Forced steps vanish when expedited and the runs around them merge;
    an all-automatic run still costs an email, not one by hand."""
    a, f, c = bench.AUTOMATIC, bench.FORCED, bench.CHOSEN
    seq = [("T1", "x", c), ("T1", "y", f), ("T1", "x", c),  # x's two decisions: one email expedited
           ("T1", "y", a), ("T1", "x", c),                  # y's roll answer, then x decides on it
           ("T2", "y", c), ("T2", "y", a),                  # one run of y
           ("T2", "x", f), ("T2", "x", a)]                  # x: a forced step and an answer
    rows = bench.count(seq)
    assert [(r.label, r.faithful, r.expedited, r.by_hand) for r in rows] == [("T1", 5, 3, 2), ("T2", 4, 2, 1)]
    assert rows[0].kinds == {c: 3, f: 1, a: 1}


def test_race_every_event_is_a_faithful_email_and_rolls_are_answered_automatically(
        bench: ModuleType, tmp_path: Path) -> None:
    rulesapi.register(race.RULES)
    table = LocalTable.create(tmp_path, "race", "standard")
    table.play(demo_policy(race.RULES), 30)
    events = table.players[0].gd.read_events()
    kinds = bench.classify(race.RULES, events)
    # The race names no turns: the genesis, then one stretch.
    assert {label for label, _, _ in kinds} == {"set-up", ""}
    assert [author for _, author, _ in kinds] == [codec.unwrap(e).author for e in events]
    # An automatic event is exactly one that only answers its author's dice
    # (an answer that also decides, e.g. RACE 4 dodge, is chosen) or the closing openings.
    history = table.replay.history
    seen = set()
    for seq, (_, author, kind) in enumerate(kinds[1:], start=1):
        replay = bench.Replay(race.RULES)
        for stored in events[:seq]:
            replay.apply_stored(stored)
        decision = replay.pending()
        answers = decision is not None and decision.kind == DICE and decision.role == author
        assert (kind == bench.AUTOMATIC) == ((answers and not history[seq].actions) or decision is None), seq
        seen.add((answers, bool(history[seq].actions), kind))
    assert (True, True, bench.CHOSEN) in seen  # the demo's defender decides with each answer
    rows = bench.emails_per_turn(race.RULES, events)
    assert sum(r.faithful for r in rows) == len(events)
    authors = [codec.unwrap(e).author for e in events]
    runs = 1 + sum(1 for x, y in zip(authors, authors[1:], strict=False) if x != y)
    assert sum(r.expedited for r in rows) == runs  # nothing forced in the race's demo
    assert sum(r.by_hand for r in rows) == runs - sum(1 for _, _, k in kinds if k == bench.AUTOMATIC)


def test_a_dice_answer_alone_is_automatic(bench: ModuleType, tmp_path: Path) -> None:
    """Volley: the gunner's barrage (chosen), the target's answer of 200 dice
    (automatic), the closing openings of each (automatic, the target's
    last): 4 emails faithful and expedited alike (the authors alternate),
    1 by hand."""
    from tests.test_dice_batch import Volley

    rulesapi.register(Volley())
    try:
        table = LocalTable.create(tmp_path, "volley", "standard")
        table.play(RandomPolicy(1), 10)
        events = table.players[0].gd.read_events()
        kinds = bench.classify(Volley(), events)
        assert [(a, k) for _, a, k in kinds] == [("gunner", bench.CHOSEN), ("target", bench.AUTOMATIC),
                                                 ("gunner", bench.AUTOMATIC), ("target", bench.AUTOMATIC)]
        rows = bench.emails_per_turn(Volley(), events)
        assert [(r.faithful, r.expedited, r.by_hand) for r in rows] == [(1, 1, 1), (3, 3, 0)]
    finally:
        rulesapi.unregister("volley")


def test_a_forced_step_is_found_in_the_public_view(bench: ModuleType, tmp_path: Path) -> None:
    """A step is forced when the public view offers its author one legal
    order and the event takes it (Ambush has such steps); Skirmish phases
    ended at once while units could still move are chosen."""
    from tests.test_sealed_orders import Ambush

    rulesapi.register(Ambush())
    try:
        table = LocalTable.create(tmp_path / "a", "ambush", "standard")
        table.play(RandomPolicy(1), 20)
        events = table.players[0].gd.read_events()
        kinds = bench.classify(Ambush(), events)
        forced = [seq for seq, (_, _, k) in enumerate(kinds) if k == bench.FORCED]
        assert forced
        for seq in forced:
            replay = bench.Replay(Ambush())
            for stored in events[:seq]:
                replay.apply_stored(stored)
            author = kinds[seq][1]
            legal = Ambush().legal_orders(replay.state, author, replay.ctx(author))
            assert len(legal) == 1 and [Ambush().format_action(x) for x in table.replay.history[seq].actions] == legal
    finally:
        rulesapi.unregister("ambush")
    rulesapi.register(skirmish.RULES)
    table = LocalTable.create(tmp_path / "s", "skirmish", "small")
    table.play(RandomPolicy(1, end_bias=1.0), 40)
    kinds = [k for _, _, k in bench.classify(skirmish.RULES, table.players[0].gd.read_events())]
    assert kinds == [bench.CHOSEN] * 4 + [bench.AUTOMATIC] * 2


def test_the_script_prints_both_counts_and_names_the_default() -> None:
    assert "ritd" in rulesapi.available(), "the ritd rules are part of this package (entry point)"
    out = subprocess.run([sys.executable, str(BENCH), "--rules", "ritd", "--events", "12"],
                         capture_output=True, text=True, check=True, timeout=600).stdout
    assert "faithful (the default)" in out and "expedited" in out and "by hand" in out
    assert "faithful expedited by hand" in out.splitlines()[1].replace("  ", " ").replace("  ", " ")
