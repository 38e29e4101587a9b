"""Benchmark: emails per Player-Turn (issue 26 point 8, PLAN "Emails").

Plays each game with self-play through the real engine (pbem.table: turn
files between two game directories, automatic entropy and deck answers),
by its demo script where it has one, else by random legal orders, then
counts the emails the log costs: one per turn file, that is one per run of
consecutive events by one player (a send, or an automatic answer), grouped
by the stretch of play the game calls a turn (its ``turn_label``, e.g. RitD's
"Month 1, Player-Turn 2 (axis)").

Two counts per turn, as PLAN asks:
  faithful   the rules as the rulebook words them (the default);
  expedited  with every shortcut a game offers (fire plans, standing orders,
             automatic forced steps).
No game offers a shortcut yet (issues 21 and 25 bring them), so the two
columns are equal today; the script says so rather than invent a number.

Run from a checkout:  python benchmarks/emails.py [--rules ritd] [--events 60]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pbem import codec, rulesapi
from pbem.game import Replay
from pbem.table import LocalTable, RandomPolicy, demo_policy


def emails_per_turn(rules: rulesapi.RulesModule, events: list[bytes]) -> list[tuple[str, int]]:
    """(turn label, emails) in the order the turns were played."""
    replay = Replay(rules)
    counts: Counter[str] = Counter()
    order: list[str] = []
    last_author = None
    for stored in events:
        author = codec.unwrap(stored).author
        label = rules.turn_label(replay.state) if replay.state is not None else "set-up"
        if author != last_author:  # a new turn file: one email
            if label not in counts:
                order.append(label)
            counts[label] += 1
            last_author = author
        replay.apply_stored(stored)
    return [(label, counts[label]) for label in order]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", action="append", help="game id (repeatable; default: every game with self-play)")
    ap.add_argument("--events", type=int, default=60, help="events to play per game (default 60)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    ids = args.rules or [r for r in rulesapi.available() if not rulesapi.is_frozen(r)]
    for rid in ids:
        rules = rulesapi.load(rid)
        demo = rules.demo
        scenario = demo.scenario if demo is not None else rules.SPEC.scenarios[0]
        with tempfile.TemporaryDirectory() as tmp:
            table = LocalTable.create(Path(tmp), rid, scenario, demo.options if demo is not None else ())
            policy = demo_policy(rules) if demo is not None else RandomPolicy(args.seed)
            result = table.play(policy, args.events)
            events = table.players[0].gd.read_events()
        rows = emails_per_turn(rules, events)
        how = "its demo script" if demo is not None else f"random legal orders (seed {args.seed})"
        print(f"{rules.SPEC.title} ({rid} {rules.SPEC.version}), scenario {scenario}, {how}: "
              f"{result.events} events, {sum(n for _, n in rows)} emails")
        print(f"  {'turn':<44} {'faithful':>8} {'expedited':>9}")
        for label, n in rows:
            print(f"  {label or '(the whole game)':<44} {n:>8} {n:>9}")
        turns = [n for label, n in rows if "Player-Turn" in label] or [n for _, n in rows]
        if turns:
            mean = sum(turns) / len(turns)
            print(f"  per Player-Turn: mean {mean:.1f}, most {max(turns)} (faithful = expedited: "
                  "no expedited play is offered yet; the default is faithful)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
