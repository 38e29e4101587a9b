"""Benchmark: the rules alone while a RitD log replays (issue 19 point "check computes once").

Replays a self-played log (``pbem selfplay ... --out DIR``; the Axis player's
directory DIR/axis is read) with every opening known from the start, as the
audit does, without signature checks, and times the CPU spent inside the rules
hooks (check, apply, pending, view, resolve_dice, on_open, deck hooks, ...):
the part of a verify or audit that is the rules' own work. Each tree given
with --tree (a checkout of the repository, e.g. ``git archive COMMIT | tar -x``)
runs in its own subprocess, alternately, best of --repeat within each run and
best of --rounds runs; CPU time (time.process_time), as the machine is shared.

    python benchmarks/rules_replay.py --log DIR --tree OLD_CHECKOUT --tree . [--repeat 5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import sys, time
tree, log, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, tree)
import rules.ritd
assert rules.ritd.__file__.startswith(tree), rules.ritd.__file__
from pathlib import Path
from pbem.game import Replay, audit_openings
from pbem.store import GameDir
from rules.ritd import RitdRules

events = GameDir(Path(log) / "axis").read_events()
known = audit_openings(events)
spent = [0.0]


def timed(name):
    base = getattr(RitdRules, name)

    def hook(self, *args, **kwargs):
        start = time.process_time()
        try:
            return base(self, *args, **kwargs)
        finally:
            spent[0] += time.process_time() - start
    return hook


Timed = type("Timed", (RitdRules,), {name: timed(name) for name in (
    "initial_state", "pending", "legal_actions", "check", "apply", "view", "outcome", "resolve_dice", "on_open",
    "on_open_leaf", "describe_action", "describe_roll", "deck_task", "on_deck", "format_action", "reveal_die")
    if hasattr(RitdRules, name)})
best = float("inf")
for _ in range(repeat):
    for name in ("rules.ritd.supply", "rules.ritd.checked"):
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "_MEMO"):
            module._MEMO.clear()
            module._KEYS.clear()
        if module is not None and hasattr(module, "forget"):
            module.forget()
    spent[0] = 0.0
    replay = Replay(Timed(), role="*", known=known)
    for stored in events:
        replay.apply_stored(stored, verify_signature_=False)
    best = min(best, spent[0])
print(f"{best * 1000:.1f} {len(events)}")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log", type=Path, required=True, help="a self-play output directory (with axis/)")
    ap.add_argument("--tree", type=Path, action="append", required=True, help="a checkout to time (repeatable)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    best: dict[Path, float] = {}
    events = 0
    for _ in range(args.rounds):
        for tree in args.tree:
            out = subprocess.run([sys.executable, "-c", CHILD, str(tree.resolve()), str(args.log), str(args.repeat)],
                                 check=True, capture_output=True, text=True).stdout.split()
            ms, events = float(out[0]), int(out[1])
            best[tree] = min(best.get(tree, float("inf")), ms)
    first = best[args.tree[0]]
    for tree in args.tree:
        print(f"{tree}: rules hooks {best[tree]:.1f} ms CPU for {events} events "
              f"({best[tree] / first:.2f} of the first tree)")


if __name__ == "__main__":
    main()
