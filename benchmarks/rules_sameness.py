"""Check that two trees' RitD rules replay logs identically (issue 19: faster, not different).

Replays each log (a self-play output directory, whose DIR/axis is read, or a
game directory) with every opening known, as the audit does, in each tree
given with --tree (a checkout, e.g. ``git archive main | tar -x -C /tmp/old``),
each in its own subprocess, and after every event digests: the State
(msgspec-encoded), ``pending()``, the view of each role and of the public
(None), and the legal actions of the role to move. Prints the first event
where two trees differ and exits 1; exits 0 when every digest agrees.

    python benchmarks/rules_sameness.py --log DIR [--log DIR2 ...] --tree OLD --tree .
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import hashlib, json, sys
tree, log = sys.argv[1], sys.argv[2]
sys.path.insert(0, tree)
import rules.ritd
assert rules.ritd.__file__.startswith(tree), rules.ritd.__file__
import msgspec
from pathlib import Path
from pbem.game import Replay, audit_openings
from pbem.store import GameDir
from rules.ritd import RitdRules

root = Path(log)
events = GameDir(root / "axis" if (root / "axis").is_dir() else root).read_events()
known = audit_openings(events)
rules = RitdRules()
replay = Replay(rules, role="*", known=known)
enc = msgspec.json.Encoder(order="deterministic")


def digest(value):
    try:
        data = enc.encode(value)
    except TypeError:
        data = repr(value).encode()
    return hashlib.sha256(data).hexdigest()[:16]


out = []
for stored in events:
    replay.apply_stored(stored, verify_signature_=False)
    state = replay.state
    if state is None:
        out.append(["-"])
        continue
    row = [digest(state), digest(replay.pending())]
    for role in (*rules.SPEC.roles, None):
        row.append(digest(rules.view(state, role)))
    decision = replay.pending()
    role = getattr(decision, "role", None)
    if role is not None:
        try:
            legal = rules.legal_actions(state, role, replay.ctx(role))
        except ValueError as e:  # no order listing at this step: the same refusal counts as the same
            legal = f"{type(e).__name__}: {e}"
        row.append(digest(legal))
    out.append(row)
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log", type=Path, action="append", required=True, help="a self-play output or game directory")
    ap.add_argument("--tree", type=Path, action="append", required=True, help="a checkout to compare (two or more)")
    args = ap.parse_args()
    bad = False
    for log in args.log:
        rows: dict[Path, list[list[str]]] = {}
        for tree in args.tree:
            done = subprocess.run([sys.executable, "-c", CHILD, str(tree.resolve()), str(log)],
                                  capture_output=True, text=True, check=False)
            if done.returncode != 0:
                sys.exit(f"{tree}: replay of {log} failed:\n{done.stderr}")
            rows[tree] = json.loads(done.stdout)
        first, *others = args.tree
        for tree in others:
            a, b = rows[first], rows[tree]
            diff = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
            if len(a) != len(b) or diff is not None:
                bad = True
                print(f"{log}: {tree} differs from {first} at event {diff if diff is not None else min(len(a), len(b))}")
            else:
                print(f"{log}: {tree} same as {first} over {len(a)} events")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
