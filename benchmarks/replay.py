"""Benchmark: verifying a long log costs little more than its signatures (DESIGN 8).

Builds a signed log of N events (default 5,000) with the race test game
(tests/race: advances, dashes with dice and automatic entropy replies),
then, in the same run, times
  (a) bare Ed25519 verification of the N signatures, and
  (b) `pbem verify` of the whole log (in-process: reading, parsing,
      signatures, hash chain, entropy, dice and rules),
and prints b/a (target <= 2.0). It also prints the cold start-up of
`pbem --version` divided by `python -c "import click"` (target <= 2.0).

Run from a checkout:  python benchmarks/replay.py [--events N]
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pbem import codec  # noqa: E402
from pbem.cli import main  # noqa: E402
from pbem.game import Replay  # noqa: E402
from pbem.store import GameDir, LocalConfig  # noqa: E402
from tests.race import rules as race  # noqa: E402
from tests.selfplay import SelfPlay  # noqa: E402


def build_log(n_events: int, directory: Path) -> list[bytes]:
    """Sign ``n_events`` events of a long race and store them in ``directory``."""
    game = SelfPlay("marathon", seed=1)
    turn = 0
    while len(game.events) < n_events:
        decision = game.replay.pending()
        if decision.kind in (race.DICE, "setup"):
            game.step()  # the automatic entropy reply, or blue's set-up
        elif decision.kind == "move":
            turn += 1
            game.emit(decision.role, ["dash"] if turn % 3 == 0 else ["advance 1", "pass"])
        else:
            game.emit(decision.role, ["pass"])
    events = game.events[:n_events]
    gd = GameDir(directory)
    gd.create_layout()
    for seq, stored in enumerate(events):
        gd.append(seq, stored)
    gd.write_local(LocalConfig(role="red", identity="-", rules="race"))
    return events


def bare_verify_seconds(events: list[bytes], keys: dict) -> float:
    items = []
    for stored in events:
        u = codec.unwrap(stored)
        items.append((keys[u.author], u.sig, codec.signing_input(u.body)))
    start = time.perf_counter()
    for key, sig, data in items:
        key.verify(sig, data)
    return time.perf_counter() - start


def pbem_verify_seconds(directory: Path) -> float:
    out = io.StringIO()
    start = time.perf_counter()
    with redirect_stdout(out):
        code = main(["verify", str(directory)])
    elapsed = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"pbem verify failed with exit code {code}")
    return elapsed


def startup_ratio(runs: int = 15) -> tuple[float, float, float]:
    exe = Path(sys.executable).with_name("pbem")
    pbem_cmd = [str(exe), "--version"] if exe.exists() else [sys.executable, "-m", "pbem", "--version"]
    click_cmd = [sys.executable, "-c", "import click"]
    t_pbem, t_click = [], []
    for _ in range(runs):  # interleaved, so machine noise hits both alike
        for cmd, sink in ((pbem_cmd, t_pbem), (click_cmd, t_click)):
            start = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            sink.append(time.perf_counter() - start)
    a, b = statistics.median(t_pbem), statistics.median(t_click)
    return a / b, a, b


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3, help="take the best of this many timings")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "game"
        events = build_log(args.events, directory)
        keys = Replay(race.RULES)
        keys.apply_stored(events[0])
        bare = min(bare_verify_seconds(events, keys.keys) for _ in range(args.repeat))
        full = min(pbem_verify_seconds(directory) for _ in range(args.repeat))
    ratio, t_pbem, t_click = startup_ratio()
    print(f"machine: {platform.machine()} {platform.system()}, Python {platform.python_version()}, "
          f"{os.cpu_count()} cpus")
    print(f"events: {len(events)} ({sum(map(len, events)) / 1024:.0f} KiB)")
    print(f"(a) bare Ed25519 verify of {len(events)} signatures: {bare:.3f} s")
    print(f"(b) pbem verify of the whole log:                {full:.3f} s")
    print(f"replay ratio b/a = {full / bare:.2f}  (target <= 2.0)")
    print(f"start-up: pbem --version {t_pbem * 1000:.0f} ms, python -c 'import click' {t_click * 1000:.0f} ms, "
          f"ratio = {ratio:.2f}  (target <= 2.0)")


if __name__ == "__main__":
    main_()
