"""Benchmark: cold `pbem show` over `python -c "import click"` (issue 20, target <= 3).

The same measurement as benchmarks/campaign.py's "show" row, without the rest
of the campaign benchmark (which takes minutes): a copy of one player's
directory of a self-played game (--log DIR holding axis/ and allied/, else
played now with `pbem selfplay --rules ritd --scenario SCENARIO`), holding
every event but the last, its identity re-saved with cheap scrypt (the
unlock is campaign.py's "unlock" row) and its replay cache built; then
`python -m pbem show -g COPY` and `python -c "import click"` as subprocesses,
alternating, a first run of each discarded (it writes the bytecode).

--baseline TREE (repeatable; a checkout, e.g. `git archive main | tar -x -C
DIR`) times `pbem show` of TREE too, in the same rounds (PYTHONPATH=TREE;
the entry points are those of the installed pbem), each run's output
compared with this checkout's: the before/after row of RESULTS.md.
--importtime prints the largest cumulative imports of one `pbem show`
(python -X importtime) of this checkout. --instructions counts the
instructions of one run of each command under valgrind's cachegrind
(PYTHONHASHSEED=0): a measure of the work that the other users of a shared
machine do not change, beside the times, which they do.

Run from a checkout:  python benchmarks/coldstart.py [--log DIR] [--baseline DIR] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import campaign  # noqa: I001  (puts this checkout first on sys.path, then imports pbem)
import pbem.identity
from pbem.store import GameDir


def show_env(tree: Path) -> dict[str, str]:
    """``tree`` first on the path; bytecode allowed (a cold start, not a first start)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env["PYTHONPATH"] = str(tree)
    env["PBEM_PASSPHRASE"] = campaign.CHEAP_PASSPHRASE
    return env


def run_seconds(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system, of the reaped child: less
    sensitive to the other users of a shared machine) and standard output.
    ``cwd`` holds no pbem: `python -m` and `-c` put it first on sys.path,
    before PYTHONPATH."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return elapsed, cpu, done.stdout


def import_profile(game: Path, top: int) -> None:
    """The ``top`` largest cumulative imports of one cold `pbem show` of this checkout."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "pbem", "show", "-g", str(game)],
                          capture_output=True, text=True, env=show_env(ROOT), cwd=game, check=True)
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, cumulative, name = line.removeprefix("import time:").split("|")
        rows.append((int(cumulative), int(own), name.rstrip()))
    print(f"--- python -X importtime: {len(rows)} modules, the {top} largest cumulative (us)")
    for cumulative, own, name in sorted(rows, reverse=True)[:top]:
        print(f"{cumulative:>9} {own:>7}  {name}")


def instructions(cmd: list[str], env: dict[str, str], cwd: Path) -> int:
    """Instructions executed by ``cmd`` (valgrind --tool=cachegrind, "I refs")."""
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                           *cmd], env=dict(env, PYTHONHASHSEED="0"), cwd=cwd, capture_output=True, text=True,
                          check=True)
    refs = [line for line in done.stderr.splitlines() if "I   refs:" in line]
    if not refs:
        raise SystemExit(f"valgrind printed no instruction count:\n{done.stderr}")
    return int(refs[-1].rsplit(":", 1)[1].replace(",", ""))


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, default=None, help="selfplay directory (holds axis/ and allied/)")
    parser.add_argument("--scenario", default="1941-42", help="ritd scenario to play when --log is absent")
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--max-events", type=int, default=5000)
    parser.add_argument("--role", default="allied", help="whose directory `pbem show` reads")
    parser.add_argument("--baseline", type=Path, action="append", default=[],
                        help="another checkout to time beside this one (repeatable)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each command (best and median)")
    parser.add_argument("--importtime", type=int, default=0, metavar="N",
                        help="print the N largest cumulative imports of one `pbem show`")
    parser.add_argument("--instructions", action="store_true",
                        help="also count each command's instructions under valgrind (load-independent)")
    args = parser.parse_args()
    loads = [campaign.load()]

    with tempfile.TemporaryDirectory(prefix="pbem-coldstart-") as tmp_:
        tmp = Path(tmp_)
        log = args.log if args.log is not None else tmp / "game"
        if not (log / args.role / "events").is_dir():
            campaign.selfplay(log, args.scenario, args.seed, args.max_events)
        count = GameDir(log / args.role).event_count()
        pbem.identity.SCRYPT_N = 1 << 10  # campaign.py's cheap scrypt: the unlock is not start-up
        game = tmp / "receiver"
        campaign.prepare_receiver(log / args.role, game, count - 1, tmp / "cheap.key")
        if args.importtime:
            import_profile(game, args.importtime)

        trees = {"this checkout": ROOT} | {f"baseline {tree}": tree.resolve() for tree in args.baseline}
        cmds = {name: ([sys.executable, "-m", "pbem", "show", "-g", str(game)], show_env(tree))
                for name, tree in trees.items()}
        cmds["python -c 'import click'"] = ([sys.executable, "-c", "import click"], show_env(ROOT))
        for name, tree in trees.items():  # each tree runs its own pbem, not the one of the cwd or venv
            where = subprocess.run([sys.executable, "-c", "import pbem; print(pbem.__file__)"], env=show_env(tree),
                                   cwd=tmp, capture_output=True, text=True, check=True).stdout.strip()
            if not Path(where).is_relative_to(tree):
                raise SystemExit(f"{name}: `python -m pbem` would run {where}")
        times: dict[str, list[float]] = {name: [] for name in cmds}
        cpus: dict[str, list[float]] = {name: [] for name in cmds}
        outputs: dict[str, str] = {}
        for run in range(args.repeat + 1):
            for name, (cmd, env) in cmds.items():
                elapsed, cpu, out = run_seconds(cmd, env, tmp)
                outputs.setdefault(name, out)
                if out != outputs[name]:
                    raise SystemExit(f"{name}: the output changed between runs")
                if run:  # the first run writes the bytecode
                    times[name].append(elapsed)
                    cpus[name].append(cpu)
        counts = {name: instructions(cmd, env, tmp) for name, (cmd, env) in cmds.items()} if args.instructions else {}
        loads.append(campaign.load())
        mine = outputs["this checkout"]
        for name in trees:
            if outputs[name] != mine:
                raise SystemExit(f"{name} prints something else than this checkout's `pbem show`")

    print(f"machine: {platform.machine()} {platform.system()}, Python {platform.python_version()}, "
          f"{os.cpu_count()} cpus; load average (1, 5, 15 min): {' | '.join(loads)}")
    print(f"game: {log / args.role}, `pbem show` at event {count - 2} of {count}; "
          f"{args.repeat} timed runs of each, alternating")
    click = "python -c 'import click'"
    for what, got in (("wall", times), ("CPU", cpus)):
        click_best, click_med = min(got[click]), statistics.median(got[click])
        print(f"{what}: {click} best {click_best * 1e3:.1f} ms, median {click_med * 1e3:.1f} ms")
        for name in trees:
            best, med = min(got[name]), statistics.median(got[name])
            print(f"{what}: pbem show, {name}: best {best * 1e3:.1f} ms = {best / click_best:.2f} x, "
                  f"median {med * 1e3:.1f} ms = {med / click_med:.2f} x (target <= 3)")
    if counts:
        print(f"instructions (valgrind): {click} {counts[click] / 1e6:.0f} M")
        for name in trees:
            print(f"instructions (valgrind): pbem show, {name}: {counts[name] / 1e6:.0f} M "
                  f"= {counts[name] / counts[click]:.2f} x")


if __name__ == "__main__":
    main_()
