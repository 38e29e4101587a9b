"""Benchmark: a self-played Rommel in the Desert campaign log (issue 9 point 2).

Plays (or reuses, --log DIR) a game with
    pbem selfplay --rules ritd --scenario 1941-42 --seed N --out DIR --max-events 5000
(a subprocess; the 20-month campaign, or a smaller --scenario for a quick run),
then times, in one run, against one Ed25519 floor measured in the same run:

  verify   `pbem verify` of the whole log, in-process (pbem.cli.main, the same
           function the console script calls), best of --repeat, divided by
           bare Ed25519 verification of the log's signatures (cryptography's
           Ed25519PublicKey.verify on the same stored events, as
           benchmarks/replay.py does). Target <= 3.
  audit    `pbem audit` of the log, in-process likewise, divided by the same
           floor. Target <= 10. The audit must be complete (game over, both
           sides' openings published: selfplay does that at the end).
  deck     the part of verify and audit spent in the shared deck's group
           operations (libsodium's point checks and scalar multiplications,
           timed inside pbem.deck's group of play in the same runs), and the
           two ratios without it: what the rest of pbem costs.
  rss      peak RSS of a `pbem audit` subprocess (/usr/bin/time -f %M, else
           os.wait4's ru_maxrss; `pbem --version` alongside). Target < 200 MB.
  receive  `pbem receive --no-auto` (in-process) of one turn file on the long
           log, median of --repeat, divided by one signature verification
           (median of 200). As benchmarks/receive.py: the receiver's replay
           cache is built first, each receive runs on a fresh copy of the
           receiver's directory and the key is unlocked with cheap scrypt.
           The game is over, so instead of a next move the turn file carries
           the event that ended the game (the last move of the last month),
           re-delivered to a copy of the other player's directory truncated
           just before it. Target <= 200. If the rules module exports no
           ``State`` (pbem/snapshot.py then keeps no cache), it also times the
           receive with ``State`` set in this process only (a what-if).
           That event opens every secret of the game; the median over the
           --typical events before it (each on its own truncated copy) is
           printed as well, as the cost of an ordinary turn file.
  startup  cold `pbem --version` and `pbem show` (subprocesses; the latter in
           the receiver's directory above, from its replay cache) against
           `python -c "import click"`, medians of 7, alternating. Bytecode is
           written by a first run (as pip does at install; PYTHONDONTWRITEBYTECODE
           is dropped for these children). Targets <= 2 and <= 4.
  report   the HTML report with the map (pbem.report.build + render for one
           role on the final log, as `pbem report` does), best of --repeat,
           divided by one supply check: rules.ritd.supply.network(map, final
           position, that role's side) (the Supply Network, RB 12.6), best of
           --repeat x 20. No target.

--profile PHASE runs that phase once more under cProfile and prints its top
functions. Timings are for one run on a shared machine: read the ratios.

Run from a checkout:  python benchmarks/campaign.py [--seed 4] [--scenario 1941-42] [--log DIR]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path
from typing import Self

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pbem.identity
from pbem import codec, session, snapshot
from pbem import report as reportmod
from pbem.cli import main
from pbem.game import Replay
from pbem.identity import load_identity, save_identity
from pbem.store import GameDir
from pbem.table import THROWAWAY_PASSPHRASE

sys.path.insert(0, str(Path(__file__).resolve().parent))
from replay import (
    bare_verify_seconds,  # the same signature floor as benchmarks/replay.py
)

CHEAP_PASSPHRASE = "benchmark passphrase (throwaway keys)"
PHASES = ("verify", "audit", "receive", "report")


# -- the log ------------------------------------------------------------------------

def pbem_cmd() -> list[str]:
    return [sys.executable, "-m", "pbem"]


def child_env() -> dict[str, str]:
    """This checkout first on the path of every pbem subprocess."""
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=str(ROOT) + (os.pathsep + path if path else ""))


def selfplay(out: Path, scenario: str, seed: int, max_events: int) -> tuple[float, dict]:
    cmd = pbem_cmd() + ["selfplay", "--rules", "ritd", "--scenario", scenario, "--seed", str(seed),
                        "--out", str(out), "--max-events", str(max_events), "--json"]
    print("playing: " + " ".join(["pbem"] + cmd[3:]), flush=True)
    start = time.perf_counter()
    done = subprocess.run(cmd, check=False, capture_output=True, text=True, env=child_env())
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"pbem selfplay failed ({done.returncode}):\n{done.stderr}")
    return elapsed, json.loads(done.stdout)


def run_cli(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


# -- the measurements -------------------------------------------------------------------

def forget_memos() -> None:
    """Empty the in-process memos (as in a fresh `pbem` process): the bounded
    supply memo of rules.ritd, the engine's whole-set opening check and the
    shared deck's element checks and card encodings."""
    import pbem.commit
    import pbem.deck

    pbem.commit.set_opens.cache_clear()
    pbem.deck._valid.cache_clear()
    pbem.deck.encode_card.cache_clear()
    supply = sys.modules.get("rules.ritd.supply")
    if supply is not None:
        supply._MEMO.clear()
        supply._KEYS.clear()


def cli_seconds(argv: list[str]) -> float:
    forget_memos()  # each timing starts cold, as a fresh `pbem verify` / `pbem audit` would
    start = time.perf_counter()
    code, text = run_cli(argv)
    elapsed = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"pbem {' '.join(argv)} failed with exit code {code}:\n{text}")
    return elapsed


def peak_rss_kib(cmd: list[str]) -> tuple[int, int, str]:
    """(exit code, peak RSS in KiB, how measured) of one child. With /usr/bin/time
    -f %M; else os.wait4's ru_maxrss, which on Linux also counts the pages the
    child shared with this (large) process before its exec: an upper bound."""
    gnu_time = Path("/usr/bin/time")
    with tempfile.TemporaryDirectory() as tmp:
        if gnu_time.exists():
            out = Path(tmp) / "rss"
            done = subprocess.run([str(gnu_time), "-f", "%M", "-o", str(out)] + cmd, check=False,
                                  capture_output=True, env=child_env())
            return done.returncode, int(out.read_text().split()[-1]), "/usr/bin/time -f %M"
        with open(Path(tmp) / "out", "wb") as sink:
            proc = subprocess.Popen(cmd, stdout=sink, stderr=sink, env=child_env())
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        return proc.returncode, usage.ru_maxrss, "os.wait4 ru_maxrss (upper bound)"


class DeckClock:
    """Time spent inside the group of play's operations (pbem.deck.PLAY): wraps
    its methods on the class while active. The wrapper's own cost is outside
    the clock, so the rest (total - clock) is, if anything, overstated."""

    METHODS = ("exp", "is_element", "from_hash")

    def __init__(self) -> None:
        import pbem.deck

        self.cls = type(pbem.deck.PLAY)
        self.seconds = 0.0
        self.calls = 0

    def __enter__(self) -> Self:
        self.saved = {name: getattr(self.cls, name) for name in self.METHODS}
        for name, fn in self.saved.items():
            setattr(self.cls, name, self._timed(fn))
        return self

    def _timed(self, fn: Callable) -> Callable:
        def timed_op(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.calls += 1
        return timed_op

    def __exit__(self, *exc: object) -> None:
        for name, fn in self.saved.items():
            setattr(self.cls, name, fn)


def best_with_deck(argv: list[str], repeat: int) -> tuple[float, float, int]:
    """(total, of which deck group operations, their calls) of the fastest of ``repeat`` runs."""
    runs = []
    for _ in range(repeat):
        with DeckClock() as clock:
            total = cli_seconds(argv)
        runs.append((total, clock.seconds, clock.calls))
    return min(runs)


def write_turn(path: Path, stored: bytes) -> Path:
    """A turn file carrying the one stored event (what the other player would mail)."""
    path.write_bytes(b"pbem-turn v1\n---\n" + stored + b"\n")
    return path


def ending_event(events: list[bytes], rules) -> int:
    """The seq of the event after which the game has an outcome."""
    r = Replay(rules)
    for stored in events:
        info = r.apply_stored(stored)
        if r.outcome() is not None:
            return info.seq
    raise SystemExit("the log has no outcome: play the game to its end (raise --max-events)")


def prepare_receiver(src: Path, dst: Path, target: int, key: Path) -> None:
    """A copy of ``src`` holding events 0..target-1, its identity re-saved with cheap
    scrypt at ``key``, and its replay cache built at event target-1."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("lock"))
    gd = GameDir(dst)
    for seq in range(target, gd.event_count()):
        gd.event_path(seq).unlink()
    shutil.rmtree(dst / "cache", ignore_errors=True)
    for draft in gd.drafts_dir.glob("*"):
        draft.unlink()
    local = gd.read_local()
    identity = load_identity(Path(local.identity), THROWAWAY_PASSPHRASE)
    save_identity(identity, key, CHEAP_PASSPHRASE, force=True)
    gd.write_local(msgspec.structs.replace(local, identity=str(key)))
    seat = session.load_seat(gd, identity)
    snapshot.save(gd, seat.replay, identity)


def profile(fn: Callable[[], object], top: int = 20) -> None:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    print(out.getvalue())


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="1941-42", help="ritd scenario (e.g. crusader for a quick run)")
    parser.add_argument("--seed", type=int, default=4, help="seed of pbem selfplay's random policy")
    parser.add_argument("--max-events", type=int, default=5000)
    parser.add_argument("--log", type=Path, default=None,
                        help="selfplay directory to reuse (holds axis/ and allied/); played into it if absent")
    parser.add_argument("--role", default="axis", help="whose report is rendered")
    parser.add_argument("--repeat", type=int, default=5, help="best (median for receive) of this many timings")
    parser.add_argument("--typical", type=int, default=8,
                        help="also receive each of this many events before the game-ending one (median)")
    parser.add_argument("--profile", choices=PHASES, action="append", default=[],
                        help="profile this phase once more with cProfile (repeatable)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="pbem-campaign-") as tmp_:
        tmp = Path(tmp_)
        log = args.log if args.log is not None else tmp / "game"
        play_s, played = None, None
        if not (log / "axis" / "events").is_dir():
            play_s, played = selfplay(log, args.scenario, args.seed, args.max_events)
        rules = session.rules_for(GameDir(log / "axis"))
        roles = list(rules.SPEC.roles)
        game = log / roles[0]
        events = GameDir(game).read_events()
        for role in roles:  # both players hold the same log
            if GameDir(log / role).read_events() != events:
                raise SystemExit(f"{log / role} and {game} hold different logs")
        genesis = Replay(rules)
        genesis.apply_stored(events[0])
        keys = genesis.keys
        print(f"log: {log} ({'played now' if played else 'reused'}), {len(events)} events, "
              f"{sum(map(len, events)) / 1024:.0f} KiB", flush=True)

        # verify and audit against the bare floor
        code, text = run_cli(["audit", "--json", "-g", str(game)])
        if code != 0:
            raise SystemExit(f"pbem audit failed with exit code {code}:\n{text}")
        audit_doc = json.loads(text)
        bare = min(bare_verify_seconds(events, keys) for _ in range(args.repeat))
        verify_s = min(cli_seconds(["verify", "-g", str(game)]) for _ in range(args.repeat))
        audit_s = min(cli_seconds(["audit", "-g", str(game)]) for _ in range(args.repeat))
        # the split, in runs of their own: the headline ratios above carry no instrumentation
        deck_verify = best_with_deck(["verify", "-g", str(game)], args.repeat)
        deck_audit = best_with_deck(["audit", "-g", str(game)], args.repeat)

        # peak RSS of an audit subprocess, and of pbem --version for scale
        code, rss_audit, rss_how = peak_rss_kib(pbem_cmd() + ["audit", "-g", str(game)])
        if code != 0:
            raise SystemExit(f"pbem audit subprocess failed with exit code {code}")
        _, rss_version, _ = peak_rss_kib(pbem_cmd() + ["--version"])

        # receive of the game-ending event on a truncated copy of the other player's directory
        target = ending_event(events, rules)
        mover = codec.unwrap(events[target]).author
        receiver = next(r for r in roles if r != mover)
        pbem.identity.SCRYPT_N = 1 << 10  # unlocking the key is not what is measured
        os.environ["PBEM_PASSPHRASE"] = CHEAP_PASSPHRASE
        base = tmp / "receiver"
        prepare_receiver(log / receiver, base, target, tmp / f"{receiver}-cheap.key")
        turn = write_turn(tmp / "turn.pbem", events[target])
        copies = iter(range(10_000))

        def receive_once(base: Path = base, turn: Path = turn, seq: int = target) -> float:
            copy = tmp / f"copy{next(copies)}"
            shutil.copytree(base, copy)
            os.sync()  # the copy's dirty pages are not the receive's to flush (its fsyncs would)
            elapsed = cli_seconds(["receive", "--no-auto", "-g", str(copy), str(turn)])
            if GameDir(copy).event_count() != seq + 1:
                raise SystemExit("receive did not append the event")
            return elapsed

        cached = (base / "cache").is_dir() and any((base / "cache").iterdir())
        receive_s = statistics.median(receive_once() for _ in range(args.repeat))
        u = codec.unwrap(events[target])
        data, key = codec.signing_input(u.body), keys[u.author]
        one = []
        for _ in range(200):
            t = time.perf_counter()
            key.verify(u.sig, data)
            one.append(time.perf_counter() - t)
        one_verify = statistics.median(one)

        # ordinary turn files: each of the events before the ending one, on its own truncated copy
        typical = []
        for seq in range(max(2, target - args.typical), target):
            author = codec.unwrap(events[seq]).author
            into = next(r for r in roles if r != author)
            dst = tmp / f"typical{seq}"
            prepare_receiver(log / into, dst, seq, tmp / f"{into}-cheap{seq}.key")
            file = write_turn(tmp / f"turn{seq}.pbem", events[seq])
            typical.append(statistics.median(receive_once(dst, file, seq) for _ in range(args.repeat)))
        typical_s = statistics.median(typical) if typical else None

        # cold start-up against `python -c "import click"`
        env = {k: v for k, v in child_env().items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PBEM_PASSPHRASE"] = CHEAP_PASSPHRASE
        starts = {"version": pbem_cmd() + ["--version"], "show": pbem_cmd() + ["show", "-g", str(base)],
                  "click": [sys.executable, "-c", "import click"]}
        start_s: dict[str, list[float]] = {name: [] for name in starts}
        for run in range(8):
            for name, cmd in starts.items():
                t = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True, env=env)
                if run:  # the first run writes the bytecode
                    start_s[name].append(time.perf_counter() - t)
        start_med = {name: statistics.median(v) for name, v in start_s.items()}

        # report of one role on the full log, against one Supply Network
        role = args.role
        seat_gd = GameDir(log / role)
        identity = load_identity(Path(seat_gd.read_local().identity), THROWAWAY_PASSPHRASE)
        seat = session.load_seat(seat_gd, identity)

        def render_report() -> str:
            return reportmod.render(reportmod.build(seat.replay, role), "html")

        report_cold = timed(render_report)
        report_s = min(timed(render_report) for _ in range(args.repeat))
        html_kib = len(render_report().encode()) / 1024
        from rules.ritd import supply
        from rules.ritd.hexmap import load_map

        m, pos = load_map(), seat.replay.state.position
        supply.network(m, pos, role)  # warm the per-map tables

        def networks() -> None:
            for _ in range(20):  # computed afresh each time: supply memoises results by position content
                supply._MEMO.clear()
                supply.network(m, msgspec.structs.replace(pos), role)

        network_s = min(timed(networks) for _ in range(args.repeat)) / 20

        for phase in args.profile:
            print(f"--- cProfile: {phase}")
            if phase == "verify":
                profile(lambda: run_cli(["verify", "-g", str(game)]))
            elif phase == "audit":
                profile(lambda: run_cli(["audit", "-g", str(game)]))
            elif phase == "receive":
                profile(receive_once)
            else:
                profile(render_report)

    print(f"machine: {platform.machine()} {platform.system()}, Python {platform.python_version()}, "
          f"{os.cpu_count()} cpus")
    if played is not None:
        print(f"selfplay: scenario {args.scenario}, seed {args.seed}, {played['events']} events in "
              f"{play_s:.1f} s; {played['outcome'] or 'no outcome (--max-events)'}")
    unopened = sum(len(v) for v in audit_doc["unopened"].values())
    print(f"events: {len(events)} ({sum(map(len, events)) / 1024:.0f} KiB); audit complete: "
          f"{audit_doc['complete']}" + (f" ({unopened} commitments unopened)" if unopened else ""))
    print(f"(a) bare Ed25519 verify of {len(events)} signatures: {bare * 1e3:.1f} ms "
          f"({bare / len(events) * 1e6:.0f} us each)")
    print(f"(b) pbem verify of the whole log (in-process):  {verify_s * 1e3:.1f} ms")
    print(f"(c) pbem audit of the whole log (in-process):   {audit_s * 1e3:.1f} ms")
    print(f"verify ratio b/a = {verify_s / bare:.1f}  (target <= 3)")
    print(f"audit ratio c/a = {audit_s / bare:.1f}  (target <= 10)")
    for name, (total, deck_s, calls) in (("verify", deck_verify), ("audit", deck_audit)):
        print(f"  {name}: {total * 1e3:.1f} ms, of which the shared deck's group operations "
              f"{deck_s * 1e3:.1f} ms ({calls} calls) = {deck_s / bare:.1f} x a; "
              f"the rest {(total - deck_s) * 1e3:.1f} ms = {(total - deck_s) / bare:.1f} x a")
    print(f"peak RSS of a pbem audit subprocess: {rss_audit / 1024:.1f} MiB  (target < 200 MB); "
          f"pbem --version: {rss_version / 1024:.1f} MiB ({rss_how})")
    print(f"receive: event {target} by {mover} (ends the game) into {receiver}'s copy holding 0..{target - 1}")
    print(f"(d) one Ed25519 verify: {one_verify * 1e6:.0f} us")
    print(f"(e) pbem receive --no-auto of that turn file, median of {args.repeat}: {receive_s * 1e3:.1f} ms "
          "(in-process, cheap scrypt, " + ("from the replay cache)" if cached else
                                           "NO replay cache: it could not be written)"))
    print(f"receive ratio e/d = {receive_s / one_verify:.0f}  (target <= 200)")
    if typical_s is not None:
        print(f"(e2) ordinary turn files: each of the {len(typical)} events before it received on its own "
              f"truncated copy, median {typical_s * 1e3:.1f} ms (min {min(typical) * 1e3:.1f}, max "
              f"{max(typical) * 1e3:.1f}); ratio e2/d = {typical_s / one_verify:.0f}  (target <= 200)")
    click_s = start_med["click"]
    print(f"start-up: pbem --version {start_med['version'] * 1e3:.0f} ms, pbem show (this game, from its cache) "
          f"{start_med['show'] * 1e3:.0f} ms, python -c 'import click' {click_s * 1e3:.0f} ms: ratios "
          f"{start_med['version'] / click_s:.2f} (target <= 2) and {start_med['show'] / click_s:.2f} (target <= 4)")
    print(f"(f) HTML report with the map for {role}: {report_s * 1e3:.1f} ms (first {report_cold * 1e3:.1f} ms; "
          f"{html_kib:.0f} KiB)")
    print(f"(g) one supply.network of {role} on the final position ({len(pos.blocks)} blocks): "
          f"{network_s * 1e3:.3f} ms")
    print(f"report ratio f/g = {report_s / network_s:.1f}  (no target)")


if __name__ == "__main__":
    main_()
