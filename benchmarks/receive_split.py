"""Benchmark: where a receive's time goes, early and late in a campaign log (issue 20).

For each event given, a copy of the receiver's directory holding the events
before it (its replay cache built, its key re-saved with cheap scrypt, as
benchmarks/campaign.py prepares it) receives that event's turn file with
`pbem receive --no-auto`, in-process, with the garbage collector set as a
`pbem` command sets it (pbem.entry.GC_THRESHOLDS). The events are taken in
rounds, each round receiving every event once, so that the machine's drift
touches them alike; each part is the median over the rounds, in CPU time
(process_time) by default:

  kdf      the scrypt unlock (cheap: a cost of the key file, not of the log)
  restore  pbem.snapshot.restore: read the replay cache and restore it
  load     pbem.session.load_seat (restore included; the rest is the genesis
           check and the vault)
  apply    Replay.apply_stored of the event (rules' check and apply, openings)
  words    the rules' wording of what the event made happen
  append   the store's durable append of the event
  save     pbem.snapshot.save: the replay cache written again
  rules    inside the rules module's hooks (check, apply, openings, the
           view and the wording of what happened; campaign.RulesClock): the
           work that follows the position (how many blocks, what the turn
           does), not the log's length
  total    the whole receive less kdf
  engine   total less rules: what pbem itself spends (the cache, the files,
           the signature, the bookkeeping), where a log's length could show

Run from a checkout:
    python benchmarks/receive_split.py --log DIR 44,45,46,47 345,346,347,348
(DIR: a campaign log as benchmarks/campaign.py plays it, e.g. its --log; the
first list is the early events, the second the late ones.)
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from campaign import CHEAP_PASSPHRASE, Counted, RulesClock, prepare_receiver, run_cli, write_turn  # noqa: E402

import pbem.identity  # noqa: E402
from pbem import codec, game, session, snapshot, store  # noqa: E402
from pbem.entry import GC_THRESHOLDS  # noqa: E402
from pbem.store import GameDir  # noqa: E402

PARTS = ("kdf", "restore", "load", "apply", "words", "append", "save", "rules")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", type=Path, required=True, help="a campaign log directory (one per role)")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--wall", action="store_true", help="wall time instead of CPU time")
    parser.add_argument("early", help="early events, comma-separated")
    parser.add_argument("late", help="late events, comma-separated")
    args = parser.parse_args()
    early = [int(x) for x in args.early.split(",")]
    late = [int(x) for x in args.late.split(",")]
    clock: Callable[[], float] = time.perf_counter if args.wall else time.process_time
    pbem.identity.SCRYPT_N = 1 << 10
    os.environ["PBEM_PASSPHRASE"] = CHEAP_PASSPHRASE
    gc.set_threshold(*GC_THRESHOLDS)

    parts = {part: Counted(owner, name, clock) for owner, name, part in (
        (pbem.identity, "_kdf", "kdf"), (snapshot, "restore", "restore"), (session, "load_seat", "load"),
        (game.Replay, "apply_stored", "apply"), (game.Replay, "_happenings", "words"),
        (store.GameDir, "append", "append"), (snapshot, "save", "save"))}

    roles = ("axis", "allied")
    events = GameDir(args.log / roles[0]).read_events()
    parts["rules"] = RulesClock(session.rules_for(GameDir(args.log / roles[0])), clock)
    with tempfile.TemporaryDirectory(prefix="pbem-split-") as tmp_:
        tmp = Path(tmp_)
        order = [s for pair in zip(early, late) for s in pair] + early[len(late):] + late[len(early):]
        turns = {}
        for seq in order:
            into = next(r for r in roles if r != codec.unwrap(events[seq]).author)
            dst = tmp / f"r{seq}"
            prepare_receiver(args.log / into, dst, seq, tmp / f"k{seq}.key")
            turns[seq] = dst, write_turn(tmp / f"t{seq}.pbem", events[seq])
        rows: dict[int, list[dict[str, float]]] = {seq: [] for seq in order}
        for i in range(args.rounds):
            for seq in order:
                dst, turn = turns[seq]
                copy = tmp / f"c{seq}-{i}"
                shutil.copytree(dst, copy)
                with contextlib.ExitStack() as stack:
                    for counted in parts.values():
                        stack.enter_context(counted)
                    start = clock()
                    code, out = run_cli(["receive", "--no-auto", "-g", str(copy), str(turn)])
                    whole = clock() - start
                if code != 0:
                    raise SystemExit(f"receive of event {seq} failed:\n{out}")
                spent = {part: counted.seconds for part, counted in parts.items()}
                rows[seq].append({**spent, "total": whole - spent["kdf"], "engine": whole - spent["kdf"] - spent["rules"]})
                shutil.rmtree(copy)
    unit = "wall" if args.wall else "CPU"
    print(f"ms of {unit} time, median of {args.rounds} rounds")
    columns = PARTS + ("total", "engine")
    print(f"{'event':>6} " + " ".join(f"{p:>8}" for p in columns))
    medians = {}
    for seq in early + late:
        med = medians[seq] = {p: statistics.median(r.get(p, 0.0) for r in rows[seq]) for p in columns}
        print(f"{seq:>6} " + " ".join(f"{med[p] * 1e3:8.2f}" for p in columns))
    for part in ("total", "rules", "engine"):
        e = statistics.median(medians[s][part] for s in early)
        lt = statistics.median(medians[s][part] for s in late)
        print(f"median {part}: early {e * 1e3:.2f} ms, late {lt * 1e3:.2f} ms, late / early {lt / e:.2f}")


if __name__ == "__main__":
    main()
