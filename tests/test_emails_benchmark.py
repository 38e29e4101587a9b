"""benchmarks/emails.py counts one email per turn file: a run of
consecutive events by one player (issue 26 point 8)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from pbem import codec
from pbem.table import LocalTable, demo_policy
from tests.race import rules as race

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "emails.py"


def test_emails_are_the_runs_of_one_author(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("emails_bench", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    from pbem import rulesapi

    rulesapi.register(race.RULES)
    table = LocalTable.create(tmp_path, "race", "standard")
    table.play(demo_policy(race.RULES), 30)
    events = table.players[0].gd.read_events()
    authors = [codec.unwrap(e).author for e in events]
    runs = 1 + sum(1 for a, b in zip(authors, authors[1:], strict=False) if a != b)
    rows = bench.emails_per_turn(race.RULES, events)
    # The genesis comes before any state; the race names no turns: one stretch after it.
    assert rows == [("set-up", 1), ("", runs - 1)]
