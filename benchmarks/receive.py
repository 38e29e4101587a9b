"""Benchmark: receiving one turn file on a long log costs a bounded multiple of
one signature verification, because commands start from the verified replay
cache instead of replaying the log (pbem/snapshot.py).

Builds a race-game log of N events (default 5,000) in two players' game
directories, then, in the same run, times
  (a) one bare Ed25519 verification, and
  (b) `pbem receive` (in-process, with its passphrase, lock, cache check,
      verification of the new event, append and cache update) of the next
      turn file,
and prints b/a (issue 9 target: <= 200 on a 20-month RitD log; this run uses
the race test game until RitD self-play exists). Also prints the cold
start-up of `pbem show` against `python -c "import click"` (target <= 4).

Run from a checkout:  python benchmarks/receive.py [--events N]
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pbem.identity  # noqa: E402
from pbem import codec, session  # noqa: E402
from pbem.cli import main  # noqa: E402
from pbem.identity import save_identity  # noqa: E402
from pbem.store import GameDir, LocalConfig  # noqa: E402
from pbem.vault import save as save_vault  # noqa: E402
from tests.race import rules as race  # noqa: E402
from tests.selfplay import SelfPlay  # noqa: E402

PASSPHRASE = "benchmark passphrase (throwaway keys)"


def build(n_events: int, root: Path) -> tuple[SelfPlay, dict[str, Path]]:
    game = SelfPlay("marathon", seed=2)
    while len(game.events) < n_events:
        decision = game.replay.pending()
        if decision.kind in (race.DICE, "setup"):
            game.step()
        elif decision.kind == "move":
            game.emit(decision.role, ["advance 1", "pass"])
        else:
            game.emit(decision.role, ["pass"])
    dirs = {}
    for role in ("red", "blue"):
        key = root / f"{role}.key"
        save_identity(game.ids[role], key, PASSPHRASE)
        gd = GameDir(root / role)
        gd.create_layout()
        for seq, stored in enumerate(game.events):
            gd.append(seq, stored)
        gd.write_local(LocalConfig(role=role, identity=str(key), rules="race"))
        vault = game.vaults[role]
        vault.game = game.replay.game_hex
        save_vault(gd.vault_dir / f"{role}.bin", vault, game.ids[role])
        dirs[role] = gd.path
    return game, dirs


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5, help="receives timed (median)")
    args = parser.parse_args()
    pbem.identity.SCRYPT_N = 1 << 10  # keygen cost is not what is measured here
    os.environ["PBEM_PASSPHRASE"] = PASSPHRASE
    from pbem import rulesapi
    rulesapi.register(race.RULES)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        game, dirs = build(args.events, root)
        mover = game.replay.pending().role
        receiver = "blue" if mover == "red" else "red"
        out = io.StringIO()
        with redirect_stdout(out):  # the receiver's first command builds its cache (once)
            main(["show", "-g", str(dirs[receiver])])
            seat = session.load_seat(GameDir(dirs[receiver]), game.ids[receiver])
            session.snapshot.save(seat.gd, seat.replay, seat.identity)
        stored = game.emit(mover, ["advance 1", "pass"])
        turn = root / "turn.pbem"
        turn.write_bytes(b"pbem-turn v1\n---\n" + stored + b"\n")
        receive_times = []
        for n in range(args.repeat):  # each on a fresh copy of the receiver's directory
            copy = root / f"copy{n}"
            shutil.copytree(dirs[receiver], copy)
            os.sync()  # the copy's dirty pages are not the receive's to flush (its fsyncs would)
            local = GameDir(copy).read_local()
            start = time.perf_counter()
            with redirect_stdout(out):
                code = main(["receive", "--no-auto", "-g", str(copy), str(turn)])
            receive_times.append(time.perf_counter() - start)
            if code != 0 or local.role != receiver:
                raise SystemExit(f"receive failed with {code}")
        receive_s = statistics.median(receive_times)
        u = codec.unwrap(stored)
        key = game.ids[mover].public
        data = codec.signing_input(u.body)
        times = []
        for _ in range(200):
            t = time.perf_counter()
            key.verify(u.sig, data)
            times.append(time.perf_counter() - t)
        verify_s = statistics.median(times)
        show = [sys.executable, "-m", "pbem", "show", "-g", str(dirs[receiver])]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root / "site"), str(ROOT)]))
        site = root / "site" / "pbem_race_bench-1.0.dist-info"
        site.mkdir(parents=True)
        (site / "METADATA").write_text("Metadata-Version: 2.1\nName: pbem-race-bench\nVersion: 1.0\n")
        (site / "entry_points.txt").write_text("[pbem.rules]\nrace = tests.race.rules\n")
        click_cmd = [sys.executable, "-c", "import click"]
        t_show, t_click = [], []
        for _ in range(7):
            for cmd, sink in ((show, t_show), (click_cmd, t_click)):
                t = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True, env=env)
                sink.append(time.perf_counter() - t)
    print(f"log: {args.events} events (race test game)")
    print(f"(a) one Ed25519 verify: {verify_s * 1e6:.0f} us")
    print(f"(b) pbem receive of one turn file, median of {args.repeat}: {receive_s * 1000:.1f} ms "
          "(includes unlocking a throwaway key with cheap scrypt, fsyncs and the cache update)")
    print(f"receive ratio b/a = {receive_s / verify_s:.0f}  (target <= 200)")
    a, b = statistics.median(t_show), statistics.median(t_click)
    print(f"start-up: pbem show {a * 1000:.0f} ms, python -c 'import click' {b * 1000:.0f} ms, "
          f"ratio = {a / b:.2f}  (target <= 4)")


if __name__ == "__main__":
    main_()
