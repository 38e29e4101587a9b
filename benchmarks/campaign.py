"""Benchmark: a self-played Rommel in the Desert campaign log against issue 20's targets.

Plays (or reuses, --log DIR) a game with
    pbem selfplay --rules ritd --scenario 1941-42 --seed N --out DIR --max-events 5000
(a subprocess; the 20-month campaign, or a smaller --scenario for a quick run;
through benchmarks/reproducible.py, which draws the players' keys, the deck's
seeds, the dice entropy and the salts from the seed too, so that every run of
the same code measures the same game: --secrets-from-os plays another game
each run, as pbem selfplay itself does),
then measures, in one run, every ratio of issue 20 against floors measured in
the same run, and prints each beside its target with PASS or FAIL and the
margin (PLAN "Numbers": PASS with a 10% margin: a ratio at least 10% under
its target PASSes, one under it by less is MARGINAL, which --strict counts as
a failure). The machine's load average is printed with the
results: on a shared machine compare only ratios of one run.

  verify   `pbem verify` of the whole log, in-process (pbem.cli.main), best of
           --repeat rounds (each round times the floor, verify, audit and the
           rules once, wall then CPU, so that the machine's drift touches a
           ratio's two sides alike), over the bare floor (a): cryptography's Ed25519 verify of
           the log's signatures (benchmarks/replay.py). Target <= 6 (aim 5).
  audit    `pbem audit` likewise (every secret, every deck step; the game must
           be over with every secret opened: selfplay does that). Target <= 10.
  rules    the rules alone: the time inside the rules module's hooks while the
           log replays as the audit replays it (every opening known, no
           signature checks, events not worded), best of --repeat, over (a),
           less the shared deck's group operations the hooks ask the engine
           for (ctx.card unlocks each card the audit sees: pbem.deck's
           multiplications, which a real audit's second process computes
           ahead; printed apart, and the ratio with them beside the verdict).
           Target <= 4 (issue 19's work; printed here so that it is measured).
  receive  `pbem receive --no-auto` (in-process) of one ordinary turn file on a
           copy of the receiver's directory truncated before it, its replay
           cache built, key unlocked with cheap scrypt; the median over --typical
           ordinary turns (``ordinary_turns``: no shuffle step of the deck, which
           is its monthly work, and not the end of game's opening of every
           secret) before the event that ends the game and as many from an
           eighth of the log on, each
           the median of --repeat taken in rounds alternating late and early
           events, over one signature verification (median of
           200), with the garbage collector set as a `pbem` command sets it
           (pbem.entry). fsync: the receive's own fsyncs (os.fsync, counted and timed in
           a column of their own, PLAN "Speed vs durability"); scrypt: the key's
           unlock, at the cheapest cost a key file may ask (N = 2^10), likewise
           in a column of its own, since its cost is the key file's and not the
           log's (at pbem's own cost it is 90 ms, some 600 d, and is measured
           under "unlock"); the target applies to the rest, and the receive with
           the cheap unlock in is printed beside it. Targets: late <= 100 and late / early <= 1.25
           (independent of log length). Printed beside (no target): the part
           inside the rules' hooks (RulesClock), which follows the position
           and the turn, and the rest, pbem's own, late against early.
  show     cold `pbem show` in the receiver's directory (a subprocess, from its
           replay cache, cheap scrypt) over `python -c "import click"`, medians
           of 7 alternating, bytecode written by a first run. Target <= 3.
  unlock   a real command (`pbem receive` of the next turn file with the key
           saved at pbem's own scrypt cost): how many scrypt unlocks it pays
           (target 1) and what one costs.
  rss      peak RSS of a `pbem audit` subprocess (/usr/bin/time -f %M, else
           os.wait4's ru_maxrss). Target <= 200 MB.
  deck     (no target) the part of verify and audit spent in the shared deck's
           group operations in this process (a second process, when pbem
           uses one, is not timed here).

--baseline TREE (a checkout, e.g. `git archive main | tar -x -C DIR`) also
times verify and audit of TREE and of this checkout in subprocesses, rounds
alternating, each over its own floor: the before/after rows of RESULTS.md.
--profile PHASE runs that phase once more under cProfile and prints its top
functions (verify and audit: this process only). --strict: exit 1 if any
target FAILs (the default only reports).

Run from a checkout:  python benchmarks/campaign.py [--seed 4] [--scenario 1941-42] [--log DIR]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import itertools
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
PHASES = ("verify", "audit", "rules", "receive")


# -- the log ------------------------------------------------------------------------

def pbem_cmd() -> list[str]:
    return [sys.executable, "-m", "pbem"]


def child_env() -> dict[str, str]:
    """This checkout first on the path of every pbem subprocess."""
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=str(ROOT) + (os.pathsep + path if path else ""))


def selfplay(out: Path, scenario: str, seed: int, max_events: int, reproducible: bool = True) -> tuple[float, dict]:
    """``pbem selfplay`` in a subprocess; ``reproducible``: through benchmarks/reproducible.py,
    every secret drawn from the seed, so the same seed and code play the same game."""
    args = ["selfplay", "--rules", "ritd", "--scenario", scenario, "--seed", str(seed),
            "--out", str(out), "--max-events", str(max_events), "--json"]
    cmd = ([sys.executable, str(Path(__file__).resolve().parent / "reproducible.py"), f"campaign-{seed}"]
           if reproducible else pbem_cmd()) + args
    print("playing: pbem " + " ".join(args) + (" (secrets from the seed: benchmarks/reproducible.py)"
                                                if reproducible else ""), flush=True)
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
    getattr(pbem.deck, "_DECODERS", []).clear()
    for name in ("rules.ritd.supply", "rules.ritd.checked"):
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "_MEMO"):
            module._MEMO.clear()
            module._KEYS.clear()
        if module is not None and hasattr(module, "forget"):
            module.forget()


def cli_seconds(argv: list[str]) -> float:
    forget_memos()  # each timing starts cold, as a fresh `pbem verify` / `pbem audit` would
    start = time.perf_counter()
    code, text = run_cli(argv)
    elapsed = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"pbem {' '.join(argv)} failed with exit code {code}:\n{text}")
    return elapsed


def cli_cpu(argv: list[str]) -> tuple[float, float]:
    """(CPU seconds of this process, of its reaped children) of one run of ``argv``:
    on a loaded machine the wall time says little, CPU time says what each core did."""
    forget_memos()
    before, children = time.process_time(), os.times()
    code, text = run_cli(argv)
    after = os.times()
    if code != 0:
        raise SystemExit(f"pbem {' '.join(argv)} failed with exit code {code}:\n{text}")
    return (time.process_time() - before,
            after.children_user + after.children_system - children.children_user - children.children_system)


def bare_verify_cpu(events: list[bytes], keys: dict) -> float:
    items = []
    for stored in events:
        u = codec.unwrap(stored)
        items.append((keys[u.author], u.sig, codec.signing_input(u.body)))
    start = time.process_time()
    for key, sig, data in items:
        key.verify(sig, data)
    return time.process_time() - start


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
    """Time spent inside the deck groups' operations (pbem.deck's Ed25519 and
    Ristretto255 groups: a log's genesis picks one): their methods counted on
    the classes while active. The wrapper's own cost is
    outside the clock, so the rest (total - clock) is, if anything, overstated."""

    METHODS = ("exp", "is_element", "from_hash")

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        import pbem.deck

        self.parts = [Counted(cls, name, clock) for cls in (pbem.deck.Ed25519Group, pbem.deck.Ristretto255Group)
                      for name in self.METHODS]

    @property
    def seconds(self) -> float:
        return sum(part.seconds for part in self.parts)

    @property
    def calls(self) -> int:
        return sum(part.count for part in self.parts)

    def __enter__(self) -> Self:
        for part in self.parts:
            part.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        for part in reversed(self.parts):
            part.__exit__()


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


#: Actions that make an event no ordinary turn: a shuffle step of the shared deck
#: (the deck's monthly work: benchmarks/deck.py) and the end of game's opening of
#: every secret.
NOT_ORDINARY = frozenset(("deck-step", "reveal-all"))


def ordinary_turns(events: list[bytes], start: int, step: int, n: int) -> list[int]:
    """The first ``n`` seqs from ``start`` on (``step`` +1 or -1), genesis
    excluded, of ordinary turns: events with none of ``NOT_ORDINARY``."""
    found: list[int] = []
    seq = start
    while len(found) < n and 1 <= seq < len(events):
        body = codec.decode_body(codec.unwrap(events[seq]).body)
        kinds = {msgspec.json.decode(bytes(raw)).get("type") for raw in body.actions}
        if not kinds & NOT_ORDINARY:
            found.append(seq)
        seq += step
    if len(found) < n:
        raise SystemExit(f"fewer than {n} ordinary turns from event {start} on")
    return found


def prepare_receiver(src: Path, dst: Path, target: int, key: Path) -> None:
    """A copy of ``src`` holding events 0..target-1 and the turn files it had sent
    by then (``outbox/<game>-<seq>.pbem``), its identity re-saved with cheap
    scrypt at ``key``, and its replay cache built at event target-1."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("lock"))
    gd = GameDir(dst)
    for seq in range(target, gd.event_count()):
        gd.event_path(seq).unlink()
    for sent in gd.outbox_dir.glob("*-*.pbem"):
        stem = sent.stem.rsplit("-", 1)[-1]
        if stem.isdigit() and int(stem) >= target:
            sent.unlink()  # sent after the receive being measured
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


#: PLAN "Numbers": PASS with a 10% margin.
MARGIN = 0.10


class Verdicts:
    """Each measured ratio beside its target: PASS (with its margin) or FAIL."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float, str]] = []
        self.estimates: set[str] = set()
        self.counts: set[str] = set()

    def add(self, name: str, value: float, target: float, note: str = "", estimate: bool = False,
            count: bool = False) -> str:
        """``estimate``: printed, never failing --strict (the issue's targets are wall-time
        ratios); ``count``: a count, not a measurement: no margin (PASS if <= target)."""
        self.rows.append((name, value, target, note))
        if estimate:
            self.estimates.add(name)
        if count:
            self.counts.add(name)
        return self.verdict(value, target, count)

    @staticmethod
    def verdict(value: float, target: float, count: bool = False) -> str:
        if count:
            return "PASS" if value <= target else "FAIL"
        margin = (target - value) / target
        if margin >= MARGIN:
            return f"PASS (margin {margin:.0%})"
        return f"MARGINAL ({margin:.0%} under, PLAN asks {MARGIN:.0%})" if value <= target else f"FAIL ({-margin:.0%} over)"

    @property
    def failed(self) -> list[str]:
        return [name for name, value, target, _ in self.rows if name not in self.estimates and (
            value > target if name in self.counts else (target - value) / target < MARGIN)]

    def print(self) -> None:
        width = max(len(name) for name, *_ in self.rows)
        print(f"{'target':<{width}}  {'measured':>9}  {'limit':>6}  verdict")
        for name, value, target, note in self.rows:
            print(f"{name:<{width}}  {value:>9.2f}  {target:>6.2f}  {self.verdict(value, target, name in self.counts)}"
                  + (f"  [{note}]" if note else ""))


class Counted:
    """Calls of ``owner.name`` counted and timed (``clock``) while active: the
    function is wrapped on its owner (a module or a class) and put back after."""

    def __init__(self, owner: object, name: str, clock: Callable[[], float] = time.perf_counter) -> None:
        self.owner, self.name, self.clock = owner, name, clock
        self.count, self.seconds = 0, 0.0

    def __enter__(self) -> Self:
        self.count, self.seconds = 0, 0.0
        self.saved = fn = getattr(self.owner, self.name)

        def counted(*args, **kwargs):
            start = self.clock()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += self.clock() - start
                self.count += 1

        setattr(self.owner, self.name, counted)
        return self

    def __exit__(self, *exc: object) -> None:
        setattr(self.owner, self.name, self.saved)


class CommandGc:
    """The garbage collector's thresholds of a `pbem` command's process
    (pbem.entry.GC_THRESHOLDS) while active: an in-process command is timed
    as the command runs, not with this benchmark's own heap collected at
    Python's default thresholds in the middle of it."""

    def __enter__(self) -> Self:
        from pbem.entry import GC_THRESHOLDS

        self.saved = gc.get_threshold()
        gc.collect()
        gc.set_threshold(*GC_THRESHOLDS)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.set_threshold(*self.saved)


class RulesClock:
    """Time inside a rules module's hooks, outermost calls only (a hook that
    calls another counts once), while active: every public method of the
    rules' class, its own or inherited, is wrapped on that class and put back
    after. ``deck``, if given, is a DeckClock whose time inside the hooks is
    kept apart in ``deck_seconds``.

    The clock is read twice per outermost call and the DeckClock outside that
    window; a hook called from another reads neither. (Reading both at every
    call, nested ones too, put 12-13 ms of this clock's own work into the
    campaign's 150 ms of rules: RESULTS.md, round 7.) What stays in is the
    wrappers' calls, and the DeckClock's own around each group operation the
    hooks ask for: the rules' time is, if anything, overstated."""

    def __init__(self, rules, clock: Callable[[], float] = time.perf_counter, deck: DeckClock | None = None) -> None:
        self.cls, self.clock, self.deck = type(rules), clock, deck
        self.seconds = self.deck_seconds = 0.0

    def __enter__(self) -> Self:
        self.seconds = self.deck_seconds = 0.0
        depth = [0]

        def timed(fn: Callable) -> Callable:
            def hook(*args, **kwargs):
                if depth[0]:  # inside another hook: its clock runs, and reads no clock here
                    depth[0] += 1
                    try:
                        return fn(*args, **kwargs)
                    finally:
                        depth[0] -= 1
                in_deck = self.deck.seconds if self.deck else 0.0  # before the clock starts
                depth[0] = 1
                start = self.clock()
                try:
                    return fn(*args, **kwargs)
                finally:
                    self.seconds += self.clock() - start
                    depth[0] = 0
                    if self.deck:
                        self.deck_seconds += self.deck.seconds - in_deck
            return hook

        names = {name for klass in self.cls.__mro__ if klass is not object for name, value in vars(klass).items()
                 if not name.startswith("_") and callable(value) and not isinstance(value, type)}
        self.saved = {name: vars(self.cls).get(name) for name in names}
        for name in names:
            setattr(self.cls, name, timed(getattr(self.cls, name)))
        return self

    def __exit__(self, *exc: object) -> None:
        for name, own in self.saved.items():
            if own is None:
                delattr(self.cls, name)  # inherited: the base's again
            else:
                setattr(self.cls, name, own)


def rules_seconds(rules, events: list[bytes], clock: Callable[[], float] = time.perf_counter
                  ) -> tuple[float, float]:
    """(time inside the rules module's hooks, outermost calls only, while the log
    replays as the audit replays it, without signature checks or wording; of
    which inside the shared deck's group operations the hooks asked the engine
    for: ``ctx.card`` unlocking each card an audit sees, two multiplications a
    card, which a real audit has its second process compute ahead)."""
    from pbem.game import AUDIT, audit_openings

    known = audit_openings(events)
    forget_memos()
    replay = Replay(rules, role=AUDIT, known=known, describe=False)
    with DeckClock(clock) as deck, RulesClock(rules, clock, deck) as hooks:
        for stored in events:
            replay.apply_stored(stored, verify_signature_=False)
    return hooks.seconds, hooks.deck_seconds


BASELINE_CHILD = r"""
import io, sys, time
from contextlib import redirect_stdout
tree, game, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, tree)
import pbem
assert pbem.__file__.startswith(tree), pbem.__file__
from pbem import codec
from pbem.cli import main
from pbem.game import Replay
from pbem.store import GameDir
from pathlib import Path
events = GameDir(Path(game)).read_events()
from pbem import session
genesis = Replay(session.rules_for(GameDir(Path(game))))
genesis.apply_stored(events[0])
items = []
for stored in events:
    u = codec.unwrap(stored)
    items.append((genesis.keys[u.author], u.sig, codec.signing_input(u.body)))
def floor():
    start = time.perf_counter()
    for key, sig, data in items:
        key.verify(sig, data)
    return time.perf_counter() - start
def forget():
    import pbem.commit, pbem.deck
    pbem.commit.set_opens.cache_clear(); pbem.deck._valid.cache_clear(); pbem.deck.encode_card.cache_clear()
    getattr(pbem.deck, "_DECODERS", []).clear()
    for name in ("rules.ritd.supply", "rules.ritd.checked"):
        m = sys.modules.get(name)
        if m is not None and hasattr(m, "_MEMO"):
            m._MEMO.clear(); m._KEYS.clear()
        if m is not None and hasattr(m, "forget"):
            m.forget()
def run(argv):
    forget()
    out = io.StringIO()
    start = time.perf_counter()
    with redirect_stdout(out):
        code = main(argv)
    assert code == 0, out.getvalue()
    return time.perf_counter() - start
best = {"floor": min(floor() for _ in range(repeat))}
best["verify"] = min(run(["verify", "-g", game]) for _ in range(repeat))
best["audit"] = min(run(["audit", "-g", game]) for _ in range(repeat))
print(best["floor"], best["verify"], best["audit"])
"""


def baseline(trees: list[Path], game: Path, repeat: int, rounds: int) -> dict[Path, tuple[float, float, float]]:
    """(floor, verify, audit) seconds of each tree, best over ``rounds`` alternating subprocess runs."""
    best: dict[Path, tuple[float, float, float]] = {}
    for _ in range(rounds):
        for tree in trees:
            out = subprocess.run([sys.executable, "-c", BASELINE_CHILD, str(tree.resolve()), str(game), str(repeat)],
                                 check=True, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=""))
            floor, verify, audit = map(float, out.stdout.split())
            old = best.get(tree)
            best[tree] = (min(floor, old[0]), min(verify, old[1]), min(audit, old[2])) if old else (floor, verify, audit)
    return best


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="1941-42", help="ritd scenario (e.g. crusader for a quick run)")
    parser.add_argument("--seed", type=int, default=4, help="seed of pbem selfplay's random policy")
    parser.add_argument("--max-events", type=int, default=5000)
    parser.add_argument("--secrets-from-os", action="store_true",
                        help="play with the keys, deck seeds and entropy from the operating system (another game "
                             "each run) instead of from --seed (benchmarks/reproducible.py: the same game each run)")
    parser.add_argument("--log", type=Path, default=None,
                        help="selfplay directory to reuse (holds axis/ and allied/); played into it if absent")
    parser.add_argument("--repeat", type=int, default=5, help="best (median for receive) of this many timings")
    parser.add_argument("--typical", type=int, default=6,
                        help="ordinary turn files received near the end of the log, and as many near its start")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a checkout to time verify and audit of, beside this one (before/after)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of --baseline")
    parser.add_argument("--profile", choices=PHASES, action="append", default=[],
                        help="profile this phase once more with cProfile (repeatable)")
    parser.add_argument("--strict", action="store_true", help="exit 1 if any target FAILs")
    args = parser.parse_args()
    loads = [load()]
    verdicts = Verdicts()

    with tempfile.TemporaryDirectory(prefix="pbem-campaign-") as tmp_:
        tmp = Path(tmp_)
        log = args.log if args.log is not None else tmp / "game"
        play_s, played = None, None
        if not (log / "axis" / "events").is_dir():
            play_s, played = selfplay(log, args.scenario, args.seed, args.max_events, not args.secrets_from_os)
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
              f"{sum(map(len, events)) / 1024:.0f} KiB; load average {loads[0]}", flush=True)

        # verify, audit and the rules alone against the bare floor
        code, text = run_cli(["audit", "--json", "-g", str(game)])
        if code != 0:
            raise SystemExit(f"pbem audit failed with exit code {code}:\n{text}")
        audit_doc = json.loads(text)
        # In rounds that take each measurement once, so that the shared machine's
        # drift touches a ratio's floor and its command alike; best of the rounds.
        runs: dict[str, list] = {}
        for _ in range(args.repeat):
            for name, measure in (
                    ("bare", lambda: bare_verify_seconds(events, keys)),
                    ("verify", lambda: cli_seconds(["verify", "-g", str(game)])),
                    ("audit", lambda: cli_seconds(["audit", "-g", str(game)])),
                    ("rules", lambda: rules_seconds(rules, events)),
                    ("bare cpu", lambda: bare_verify_cpu(events, keys)),
                    ("verify cpu", lambda: cli_cpu(["verify", "-g", str(game)])),
                    ("audit cpu", lambda: cli_cpu(["audit", "-g", str(game)])),
                    ("rules cpu", lambda: rules_seconds(rules, events, time.process_time))):
                runs.setdefault(name, []).append(measure())
        bare, verify_s, audit_s, bare_cpu = (min(runs[k]) for k in ("bare", "verify", "audit", "bare cpu"))
        rules_s, rules_deck = min(runs["rules"])
        rules_cpu, rules_deck_cpu = min(runs["rules cpu"])
        cpu = {name: min(runs[f"{name} cpu"], key=max) for name in ("verify", "audit")}
        deck_verify = best_with_deck(["verify", "-g", str(game)], args.repeat)
        deck_audit = best_with_deck(["audit", "-g", str(game)], args.repeat)
        loads.append(load())

        # peak RSS of an audit subprocess, and of pbem --version for scale
        code, rss_audit, rss_how = peak_rss_kib(pbem_cmd() + ["audit", "-g", str(game)])
        if code != 0:
            raise SystemExit(f"pbem audit subprocess failed with exit code {code}")
        _, rss_version, _ = peak_rss_kib(pbem_cmd() + ["--version"])

        # receive of ordinary turn files near the end and near the start of the log
        target = ending_event(events, rules)
        real_n = pbem.identity.SCRYPT_N
        pbem.identity.SCRYPT_N = 1 << 10  # unlocking the key is measured on its own (below)
        os.environ["PBEM_PASSPHRASE"] = CHEAP_PASSPHRASE
        copies = iter(range(100_000))
        fsync_runs: list[tuple[int, float]] = []
        kdf_runs: list[tuple[int, float]] = []
        whole_runs: dict[int, list[float]] = {}
        hook_runs: dict[int, list[float]] = {}

        def receive_once(base: Path, turn: Path, seq: int) -> float:
            copy = tmp / f"copy{next(copies)}"
            shutil.copytree(base, copy)
            os.sync()  # the copy's dirty pages are not the receive's to flush (its fsyncs would)
            # fsync and the scrypt unlock in columns of their own (PLAN "Speed vs durability")
            with Counted(os, "fsync") as fs, Counted(pbem.identity, "_kdf") as kd, RulesClock(rules) as hooks, \
                    CommandGc():
                elapsed = cli_seconds(["receive", "--no-auto", "-g", str(copy), str(turn)])
            fsync_runs.append((fs.count, fs.seconds))
            kdf_runs.append((kd.count, kd.seconds))
            whole_runs.setdefault(seq, []).append(elapsed - fs.seconds)
            hook_runs.setdefault(seq, []).append(hooks.seconds)
            if GameDir(copy).event_count() != seq + 1:
                raise SystemExit("receive did not append the event")
            shutil.rmtree(copy)
            return elapsed - fs.seconds - kd.seconds

        def ordinary(seqs: list[int]) -> dict[int, float]:
            """The median receive of each of ``seqs``, in rounds that take each
            once, so that the machine's drift touches late and early alike."""
            turns = {}
            for seq in seqs:
                author = codec.unwrap(events[seq]).author
                into = next(r for r in roles if r != author)
                dst = tmp / f"receiver{seq}"
                prepare_receiver(log / into, dst, seq, tmp / f"{into}-cheap{seq}.key")
                turns[seq] = dst, write_turn(tmp / f"turn{seq}.pbem", events[seq])
            runs: dict[int, list[float]] = {seq: [] for seq in seqs}
            for _ in range(args.repeat):
                for seq in seqs:
                    runs[seq].append(receive_once(*turns[seq], seq))
            return {seq: statistics.median(v) for seq, v in runs.items()}

        late_seqs = ordinary_turns(events, target - 1, -1, args.typical)[::-1]
        early_seqs = ordinary_turns(events, max(2, len(events) // 8), 1, args.typical)
        each = ordinary(list(dict.fromkeys(s for pair in itertools.zip_longest(late_seqs, early_seqs) for s in pair
                                           if s is not None)))
        late = [each[s] for s in late_seqs]
        early = [each[s] for s in early_seqs]
        u = codec.unwrap(events[target])
        data, key = codec.signing_input(u.body), keys[u.author]
        one = []
        for _ in range(200):
            t = time.perf_counter()
            key.verify(u.sig, data)
            one.append(time.perf_counter() - t)
        one_verify = statistics.median(one)
        late_s, early_s = statistics.median(late), statistics.median(early)
        late_hooks = statistics.median(statistics.median(hook_runs[seq]) for seq in late_seqs)
        early_hooks = statistics.median(statistics.median(hook_runs[seq]) for seq in early_seqs)
        late_whole = statistics.median(statistics.median(whole_runs[seq]) for seq in late_seqs)
        early_whole = statistics.median(statistics.median(whole_runs[seq]) for seq in early_seqs)
        loads.append(load())

        # a real command unlocking a key saved at pbem's own scrypt cost
        pbem.identity.SCRYPT_N = real_n
        seq = late_seqs[-1]
        author = codec.unwrap(events[seq]).author
        into = next(r for r in roles if r != author)
        real = tmp / "real-key"
        prepare_receiver(log / into, real, seq, tmp / "real.key")
        with Counted(pbem.identity, "_kdf") as kdfs:
            unlock_total = cli_seconds(["receive", "--no-auto", "-g", str(real), str(tmp / f"turn{seq}.pbem")])
        with Counted(pbem.identity, "_kdf") as one_kdf:
            load_identity(tmp / "real.key", CHEAP_PASSPHRASE)

        # cold start-up against `python -c "import click"`
        base = tmp / f"receiver{late_seqs[-1]}"
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
        loads.append(load())

        before_after = baseline([args.baseline, ROOT], game, args.repeat, args.rounds) if args.baseline else {}
        if before_after:
            loads.append(load())

        for phase in args.profile:
            print(f"--- cProfile: {phase}")
            if phase == "verify":
                profile(lambda: run_cli(["verify", "-g", str(game)]))
            elif phase == "audit":
                profile(lambda: run_cli(["audit", "-g", str(game)]))
            elif phase == "rules":
                profile(lambda: rules_seconds(rules, events))
            else:
                seq = late_seqs[-1]
                profile(lambda seq=seq: receive_once(tmp / f"receiver{seq}", tmp / f"turn{seq}.pbem", seq))

    print(f"machine: {platform.machine()} {platform.system()}, Python {platform.python_version()}, "
          f"{os.cpu_count()} cpus; load average (1, 5, 15 min) during the run: {' | '.join(loads)}")
    if played is not None:
        print(f"selfplay: scenario {args.scenario}, seed {args.seed}, {played['events']} events in "
              f"{play_s:.1f} s; {played['outcome'] or 'no outcome (--max-events)'}")
    unopened = sum(len(v) for v in audit_doc["unopened"].values())
    print(f"events: {len(events)} ({sum(map(len, events)) / 1024:.0f} KiB); audit complete: "
          f"{audit_doc['complete']}" + (f" ({unopened} commitments unopened)" if unopened else ""))
    print(f"(a) bare Ed25519 verify of {len(events)} signatures: {bare * 1e3:.1f} ms "
          f"({bare / len(events) * 1e6:.0f} us each)")
    print(f"(b) pbem verify (in-process, best of {args.repeat}): {verify_s * 1e3:.1f} ms")
    print(f"(c) pbem audit (in-process, best of {args.repeat}): {audit_s * 1e3:.1f} ms")
    print(f"(r) the rules' hooks while the log replays as the audit does: {rules_s * 1e3:.1f} ms, of which the "
          f"shared deck's group operations they ask the engine for (ctx.card: the cards an audit sees, which "
          f"a real audit's second process computes ahead) {rules_deck * 1e3:.1f} ms: the rules' own work "
          f"{(rules_s - rules_deck) * 1e3:.1f} ms")
    for name, (total, deck_s, calls) in (("verify", deck_verify), ("audit", deck_audit)):
        print(f"    {name}: {total * 1e3:.1f} ms, of which the shared deck's group operations in this process "
              f"{deck_s * 1e3:.1f} ms ({calls} calls) = {deck_s / bare:.1f} x a")
    for name, (own, child) in cpu.items():
        print(f"    {name} in CPU time: this process {own * 1e3:.0f} ms, its second process {child * 1e3:.0f} ms "
              f"(floor {bare_cpu * 1e3:.1f} ms CPU): on two free cores about {max(own, child) / bare_cpu:.2f} x, "
              f"on one {(own + child) / bare_cpu:.2f} x")
    print(f"    rules alone in CPU time: {rules_cpu * 1e3:.0f} ms, of which the deck's group operations "
          f"{rules_deck_cpu * 1e3:.0f} ms: the rules' own {(rules_cpu - rules_deck_cpu) * 1e3:.0f} ms = "
          f"{(rules_cpu - rules_deck_cpu) / bare_cpu:.2f} x (with them {rules_cpu / bare_cpu:.2f} x)")
    print(f"peak RSS of a pbem audit subprocess: {rss_audit / 1024:.1f} MiB; pbem --version: "
          f"{rss_version / 1024:.1f} MiB ({rss_how})")
    fsync_n = statistics.median(n for n, _ in fsync_runs)
    fsync_s = statistics.median(s_ for _, s_ in fsync_runs)
    print(f"(d) one Ed25519 verify: {one_verify * 1e6:.0f} us")
    print(f"(e) pbem receive --no-auto of an ordinary turn file (in-process, cheap scrypt, from the replay cache, "
          f"fsync excluded), median over events {', '.join(map(str, late_seqs))} (near the end): "
          f"{late_s * 1e3:.1f} ms; over events {', '.join(map(str, early_seqs))} (near the start): "
          f"{early_s * 1e3:.1f} ms")
    print(f"    of which inside the rules' hooks (check, apply, openings, view, wording: the work of the "
          f"position, not of the log's length): near the end {late_hooks * 1e3:.1f} ms, near the start "
          f"{early_hooks * 1e3:.1f} ms; the rest, pbem's own, near the end {(late_s - late_hooks) * 1e3:.1f} ms, "
          f"near the start {(early_s - early_hooks) * 1e3:.1f} ms (late / early "
          f"{(late_s - late_hooks) / (early_s - early_hooks):.2f})")
    print(f"    fsync (own column, not in e): {fsync_n:.0f} calls, {fsync_s * 1e3:.1f} ms per receive (median)")
    kdf_n = statistics.median(n for n, _ in kdf_runs)
    kdf_s = statistics.median(s_ for _, s_ in kdf_runs)
    print(f"    scrypt unlock at the cheapest cost a key file may ask (N = 2^10; own column, not in e, as (u) "
          f"measures it at pbem's own cost): {kdf_n:.0f} call(s), {kdf_s * 1e3:.1f} ms per receive (median)")
    print(f"    e with that unlock in: near the end {late_whole * 1e3:.1f} ms = {late_whole / one_verify:.0f} x d, "
          f"near the start {early_whole * 1e3:.1f} ms (late / early {late_whole / early_whole:.2f})")
    print(f"(u) a real receive with a key at pbem's scrypt cost (N = 2^{real_n.bit_length() - 1}): "
          f"{unlock_total * 1e3:.0f} ms, {kdfs.count} scrypt unlock(s) = {kdfs.seconds * 1e3:.0f} ms; "
          f"one unlock alone {one_kdf.seconds * 1e3:.0f} ms")
    click_s = start_med["click"]
    print(f"start-up (medians of 7): pbem --version {start_med['version'] * 1e3:.0f} ms, pbem show {start_med['show'] * 1e3:.0f} ms, "
          f"python -c 'import click' {click_s * 1e3:.0f} ms")
    if before_after:
        print("before/after (subprocesses, alternating, each over its own floor):")
        for tree, (floor, v, a_) in before_after.items():
            print(f"    {tree}: floor {floor * 1e3:.1f} ms, verify {v * 1e3:.1f} ms = {v / floor:.2f} x, "
                  f"audit {a_ * 1e3:.1f} ms = {a_ / floor:.2f} x")
    print()
    verdicts.add("verify / a (aim 5)", verify_s / bare, 6.0)
    verdicts.add("audit / a", audit_s / bare, 10.0)
    verdicts.add("rules alone / a", (rules_s - rules_deck) / bare, 4.0,
                 f"issue 19's; {rules_s / bare:.2f} with the deck's operations ctx.card asks for")
    for name, limit in (("verify", 6.0), ("audit", 10.0)):
        own, child = cpu[name]
        verdicts.add(f"{name} CPU estimate", max(own, child) / bare_cpu, limit,
                     "max of the two processes' CPU over the floor's: the wall ratio on two free cores", True)
    verdicts.add("rules alone CPU", (rules_cpu - rules_deck_cpu) / bare_cpu, 4.0, "issue 19's", True)
    verdicts.add("receive late / d", late_s / one_verify, 100.0,
                 f"fsync {fsync_s * 1e3:.1f} ms and scrypt {kdf_s * 1e3:.1f} ms apart")
    verdicts.add("receive late / early", late_s / early_s, 1.25, "independent of log length")
    verdicts.add("cold show / import click", start_med["show"] / click_s, 3.0, "cheap scrypt; unlock below")
    verdicts.add("scrypt unlocks per command", kdfs.count, 1.0, f"{kdfs.seconds * 1e3:.0f} ms", count=True)
    verdicts.add("audit peak RSS (MB)", rss_audit * 1024 / 1e6, 200.0)
    verdicts.print()
    if args.strict and verdicts.failed:
        raise SystemExit(f"FAIL: {', '.join(verdicts.failed)}")


if __name__ == "__main__":
    main_()
