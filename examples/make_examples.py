"""Regenerate everything in examples/ with the project's own tools (see examples/README.md).

    /work/venv/bin/python examples/make_examples.py [--tries N]

1. examples/game/: the rulebook's 19.0 Demo of Rommel in the Desert (Month 1 and
   the Month 2 Buildup and Initiative), played exactly as ``pbem demo --keep``
   plays it (pbem.table.LocalTable with the rules' own demo script): every turn
   file both players sent (``axis-outbox/``, ``allied-outbox/``), both players'
   final reports (HTML and text) and their maps as PNG, the public keys, the
   orders each side gave (``axis-orders.txt``, ``allied-orders.txt``, blocks for
   ``pbem new/join -f`` and ``pbem do -f``), the turn-by-turn transcript and
   ``pbem log``.
2. examples/ritd-report.{html,txt,png} and ritd-map-view.{svg,png}: the Allied
   player's report and map in the middle of the same Demo, when the first Axis
   Player-Turn (a Regroup into Sollum) has come in and the Allies must accept
   or refuse battle (RB 8.4). The README's ``examples/ritd-report.png``.
3. examples/map-own-units.png: the Axis map later in the same Demo, when the
   Allies must answer the battle of Player-Turn 5 (``pbem map -g GAME --overlay supply``).
4. examples/ritd-map.{svg,png}: the empty map (``pbem map ritd``).

Dice come from both players' entropy, so each run plays a different (equally
legal) game. Everything is built in a temporary directory and copied into
examples/ only when the whole run succeeded (examples/game/ is replaced as a
whole). THROWAWAY KEYS: both identities are generated afresh on every run with
pbem.table.THROWAWAY_PASSPHRASE; only the public keys are kept.

PNGs need rsvg-convert (librsvg) for the maps and chromium
for the screenshot of the report page; without them the PNGs are left as they are.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pbem.errors import PbemError
from pbem.table import (
    THROWAWAY_PASSPHRASE,
    LocalTable,
    Policy,
    RandomPolicy,
    Turn,
    demo_policy,
    demo_rules,
)

RULES = "ritd"
GAME_MAP_DPI = 120  # the two maps of game/ (A4 landscape: 1403 x 993 px); the others 150 dpi, to stay small
MAX_EVENTS = 200  # as 'pbem demo' (its default --max-events); the Demo script stops long before
_ANNOUNCE = re.compile(r"^(\d+)(?:-(\d+))? (\S+): ")


# -- the project's CLI ---------------------------------------------------------------

def pbem(*args: str, passphrase: bool = False) -> str:
    """Run ``python -m pbem ARGS`` (the ``pbem`` command of this checkout); its stdout."""
    env = dict(os.environ, PYTHONPATH=str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if passphrase:
        env["PBEM_PASSPHRASE"] = THROWAWAY_PASSPHRASE
    done = subprocess.run([sys.executable, "-m", "pbem", *args], env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"pbem {' '.join(args)} failed (exit {done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


# -- pictures ----------------------------------------------------------------------------

def svg_to_png(svg: Path, png: Path, dpi: int = 150) -> bool:
    """Convert with rsvg-convert (librsvg); False (and a warning) if it is missing."""
    if not shutil.which("rsvg-convert"):
        print(f"warning: no rsvg-convert: {png.name} not written", file=sys.stderr)
        return False
    subprocess.run(["rsvg-convert", "-d", str(dpi), "-p", str(dpi), "-o", str(png), str(svg)], check=True)
    return True


def report_map_svg(html: Path, svg: Path) -> None:
    """The map of an HTML report: its one inline, self-contained <svg> element."""
    text = html.read_text(encoding="utf-8")
    start, end = text.find("<svg"), text.rfind("</svg>")
    if start < 0 or end < start:
        raise SystemExit(f"{html} holds no map (no <svg> element)")
    svg.write_text('<?xml version="1.0" encoding="UTF-8"?>\n' + text[start:end + len("</svg>")] + "\n",
                   encoding="utf-8")


def screenshot(html: Path, png: Path) -> bool:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print(f"warning: no chromium: {png.name} not written", file=sys.stderr)
        return False
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--no-first-run", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={profile}", f"--screenshot={png}", "--window-size=1240,1754",
                        html.as_uri()], check=True, capture_output=True)
    return True


# -- playing -----------------------------------------------------------------------------

class Recorder:
    """Wraps a policy and the table's echo: which orders went into which event.

    The table asks the policy (possibly several times) for a role's orders, signs
    them into one event, sends the turn file and echoes one line
    ``SEQ[-SEQ] ROLE: ...``; at that line the role's orders so far belong to it."""

    def __init__(self, policy: Policy, stop: Callable[[Turn], bool] | None = None) -> None:
        self.policy, self.stop = policy, stop
        self.pending: dict[str, list[str]] = {}
        self.events: list[tuple[str, str, list[str]]] = []  # (span, role, orders)
        self.lines: list[str] = []

    def __call__(self, turn: Turn) -> list[str] | None:
        if self.stop is not None and self.stop(turn):
            orders = None
        else:
            orders = self.policy(turn)
        if orders is None:
            self.pending[turn.role] = []  # the table drops unsent orders
        else:
            self.pending.setdefault(turn.role, []).extend(orders)
        return orders

    def echo(self, line: str) -> None:
        self.lines.append(line)
        m = _ANNOUNCE.match(line)
        if m is None:
            return
        span = m.group(1) if m.group(2) is None else f"{m.group(1)}-{m.group(2)}"
        role = m.group(3)
        self.events.append((span, role, self.pending.pop(role, [])))


def play_demo(directory: Path, stop: Callable[[Turn], bool] | None = None) -> tuple[LocalTable, Recorder, str]:
    """``pbem demo --keep`` in ``directory``: the table, what was ordered, and the summary line."""
    module = demo_rules(RULES)
    demo = module.demo
    if demo is None:
        raise SystemExit(f"rules {RULES} offer no demo")
    recorder = Recorder(demo_policy(module), stop)
    table = LocalTable.create(directory, RULES, demo.scenario, demo.options, echo=recorder.echo)
    result = table.play(recorder, MAX_EVENTS)
    summary = (f"game over: {result.outcome.summary}" if result.outcome is not None else
               f"the demo script stopped after {result.events} events" if result.stopped == "script" else
               f"stopped at {result.events} events (max {MAX_EVENTS})")
    table.verify()
    table.reports(table.directory)
    return table, recorder, summary


#: The complete game: Gazala (RB 18.7), the one 2-month scenario, played to its
#: level of victory by pbem selfplay's random players.
COMPLETE_SCENARIO, COMPLETE_SEED, COMPLETE_MAX_EVENTS = "gazala", 1, 3000


def play_selfplay(directory: Path) -> tuple[LocalTable, Recorder, str]:
    """``pbem selfplay --scenario gazala --seed 1`` in ``directory``."""
    recorder = Recorder(RandomPolicy(COMPLETE_SEED))
    table = LocalTable.create(directory, RULES, COMPLETE_SCENARIO, echo=recorder.echo)
    result = table.play(recorder, COMPLETE_MAX_EVENTS)
    if result.outcome is None:
        raise SystemExit(f"the self-played {COMPLETE_SCENARIO} game did not end ({result.stopped})")
    table.verify()
    table.reports(table.directory)
    return table, recorder, f"game over: {result.outcome.summary}"


def allied_must_answer_battle(turn: Turn) -> bool:
    """Stop at the Allies' first accept-or-refuse decision (RB 8.4)."""
    return turn.role == "allied" and any(o.startswith("refuse-battle") for o in turn.legal())


# -- writing -----------------------------------------------------------------------------

def orders_file(role: str, game_id: str, recorder: Recorder, host_fingerprint: str,
                what: str = "19.0 Demo game in examples/game/", scenario: str = "demo") -> str:
    other = next(r for _, r, _ in recorder.events if r != role)
    example = next((span for span, who, orders in recorder.events if who == role and orders and span not in ("0", "1")
                    and len(orders) > 1), "6")
    lines = [f"# The {role.capitalize()} orders of the {what} (game {game_id}),",
             "# one order per line; '#' starts a comment. Each block is one event (one turn file",
             "# sent); give one block at a time, with the command in its header. To cut out a block:",
             f"#   awk '/^# event {example}:/{{p=1;next}} /^# event/{{p=0}} p' {role}-orders.txt | pbem do -f -",
             "# The dice were this game's: in another game, blocks after the first dice may not be legal.",
             "# Events with no orders (entropy for the dice) are left out; see transcript.txt.", ""]
    for span, who, orders in recorder.events:
        if who != role or not orders:
            continue
        if span == "0":
            how = (f"pbem new GAME --rules {RULES} --scenario {scenario} --role {role} "
                   f"--opponent {other}.pub -f FILE (the invitation)")
        elif span == "1":
            how = f"pbem join INVITATION GAME --host-fingerprint {host_fingerprint} -f FILE"
        else:
            how = "pbem do -f FILE, then pbem send"
        lines.append(f"# event {span}: {how}")
        lines += orders
        lines.append("")
    return "\n".join(lines)


def write_game(stage: Path, table: LocalTable, recorder: Recorder, summary: str,
               what: str = "19.0 Demo game in examples/game/", title: str = "pbem demo") -> None:
    game_id = table.replay.game_hex
    for player in table.players:
        role = player.role
        outbox = stage / f"{role}-outbox"
        outbox.mkdir(parents=True)
        for f in sorted(player.gd.outbox_dir.glob("*.pbem")):
            shutil.copy2(f, outbox / f.name)
        for suffix in ("html", "txt"):
            shutil.copy2(table.directory / f"{role}-report.{suffix}", stage / f"{role}-report.{suffix}")
        shutil.copy2(player.key_path.with_name(player.key_path.name + ".pub"), stage / f"{role}.pub")
        host = table.players[0].identity.fingerprint  # the host signs event 0
        (stage / f"{role}-orders.txt").write_text(orders_file(role, game_id, recorder, host, what, table.scenario),
                                                  encoding="utf-8")
        with tempfile.TemporaryDirectory() as tmp:
            svg = Path(tmp) / "map.svg"
            report_map_svg(stage / f"{role}-report.html", svg)
            svg_to_png(svg, stage / f"{role}-map.png", dpi=GAME_MAP_DPI)
    verify = pbem("verify", "-g", str(table.player("axis").gd.path))
    pbem("verify", "-g", str(table.player("allied").gd.path))
    (stage / "log.txt").write_text(pbem("log", "-g", str(table.player("axis").gd.path)), encoding="utf-8")
    transcript = [f"# {title} (Rommel in the Desert, scenario {table.scenario}), game {game_id}",
                  "# one line per turn file: event number(s), sender, orders, dice revealed by it",
                  "# ('?' = dice of a hidden roll, e.g. Supply Cards drawn face down)", ""]
    transcript += recorder.lines + ["", summary, "", "# pbem verify -g axis (the allied log verifies the same):",
                                    verify.rstrip()]
    (stage / "transcript.txt").write_text("\n".join(transcript) + "\n", encoding="utf-8")


def make_game(tmp: Path, stage: Path) -> None:
    table, recorder, summary = play_demo(tmp / "game")
    write_game(stage / "game", table, recorder, summary)
    print(summary)


def make_complete_game(tmp: Path, stage: Path) -> None:
    table, recorder, summary = play_selfplay(tmp / "complete-game")
    write_game(stage / "complete-game", table, recorder, summary,
               what=f"self-played {COMPLETE_SCENARIO} game in examples/complete-game/",
               title=f"pbem selfplay --scenario {COMPLETE_SCENARIO} --seed {COMPLETE_SEED}")
    for role in ("axis", "allied"):  # the first page of each report, as printed
        screenshot(stage / "complete-game" / f"{role}-report.html", stage / "complete-game" / f"{role}-report.png")
    print(summary[:200])


def make_first_turn(tmp: Path, stage: Path) -> None:
    table, _, _ = play_demo(tmp / "first-turn", stop=allied_must_answer_battle)
    for suffix in ("html", "txt"):
        shutil.copy2(table.directory / f"allied-report.{suffix}", stage / f"ritd-report.{suffix}")
    allied = table.player("allied")
    pbem("map", "-g", str(allied.gd.path), "-i", str(allied.key_path), "-o", str(stage / "ritd-map-view.svg"),
         passphrase=True)
    svg_to_png(stage / "ritd-map-view.svg", stage / "ritd-map-view.png")
    screenshot(stage / "ritd-report.html", stage / "ritd-report.png")


#: The Demo's third Axis Player-Turn, whose Moves and battle make a busy map.
OWN_UNITS_TURN = 5


def allied_must_answer_a_later_battle(turn: Turn) -> bool:
    """Stop at the Allies' first accept-or-refuse decision from Player-Turn OWN_UNITS_TURN on."""
    current = turn.state.turn
    return current is not None and current.number >= OWN_UNITS_TURN and allied_must_answer_battle(turn)


def make_own_units_map(tmp: Path, stage: Path) -> None:
    """The Axis map there, with the Supply Network overlay: own units named with
    their CVs, the enemy's as counts, the Player-Turn's moves as arrows."""
    table, _, _ = play_demo(tmp / "own-units", stop=allied_must_answer_a_later_battle)
    axis = table.player("axis")
    svg = tmp / "map-own-units.svg"
    pbem("map", "-g", str(axis.gd.path), "-i", str(axis.key_path), "--overlay", "supply", "-o", str(svg), passphrase=True)
    svg_to_png(svg, stage / "map-own-units.png")


def make_empty_map(stage: Path) -> None:
    pbem("map", RULES, "-o", str(stage / "ritd-map.svg"))
    svg_to_png(stage / "ritd-map.svg", stage / "ritd-map.png")


def install(stage: Path, out: Path) -> None:
    """Copy the staged files into ``out``; ``out/game`` is replaced as a whole."""
    for name in ("game", "complete-game"):
        if (out / name).exists():
            shutil.rmtree(out / name)
        shutil.copytree(stage / name, out / name)
    for f in stage.iterdir():
        if f.is_file():
            shutil.copy2(f, out / f.name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="where to write (default: examples/)")
    parser.add_argument("--tries", type=int, default=1,
                        help="play the Demo again (new dice) if a run fails, up to this many times")
    args = parser.parse_args(argv)
    for attempt in range(1, args.tries + 1):
        with tempfile.TemporaryDirectory(prefix="pbem-examples-") as tmp_name:
            tmp = Path(tmp_name)
            stage = tmp / "stage"
            stage.mkdir()
            try:
                make_game(tmp, stage)
                make_complete_game(tmp, stage)
                make_first_turn(tmp, stage)
                make_own_units_map(tmp, stage)
            except PbemError as exc:
                details = "".join(f"\n  - {d}" for d in exc.details)
                print(f"run {attempt} of {args.tries} failed: {exc.message}{details}", file=sys.stderr)
                continue
            make_empty_map(stage)
            install(stage, args.out)
        print(f"examples written to {args.out}")
        return 0
    print("examples/ left unchanged", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
