"""Benchmark: adding one order to a draft of N orders (issue 18 point 3).

`pbem do` checks an order by folding the draft's event: before issue 18 it
replayed the whole draft two or three times per order (``with_deck`` of the
draft, then the draft and the new order); now ``session.Composer`` keeps the
draft's event open and adds the order in one rules step. This prints, for
drafts of N orders, the time to parse, check and add one more order, and
the rules steps (``check`` + ``apply`` calls) it costs, three ways in one run:

  before     the pre-issue-18 path, rebuilt here from the same public pieces
             (``simulate_draft`` of the draft, then of the draft and the order)
  process    a new ``pbem do "x"`` process: the stored draft is folded once
             (``Composer.start``), then the order is added
  composer   the draft already folded in this process (``pbem do "a" "b" "c"``
             after the first order, and pbem.table's loops)

Two games: a benchmark-only "tally" game (any number of ``mark N`` orders in
one event, one O(1) rules step each), at N = 1, 20 and 80; and Rommel in
the Desert, the Allied deployment of the Gazala scenario (36 units: deploy
orders commit a secret each), at N = 1, 20 and 35. Best of --repeat runs.

Run from a checkout:  python benchmarks/compose.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import datetime
import functools
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pbem import codec, rulesapi, session
from pbem.game import Replay
from pbem.identity import Identity
from pbem.rulesapi import Ctx, Decision, Order, Outcome, Problem, Rules, Spec
from pbem.vault import VaultData

# -- a game whose drafts can be long ---------------------------------------------------


class Mark(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="mark", tag_field="type"):
    n: int


class EndTurn(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="end", tag_field="type"):
    pass


class TallyState(msgspec.Struct, frozen=True):
    turn: str = "a"
    count: int = 0
    total: int = 0


TallyAction = Mark | EndTurn


class Tally(Rules[TallyState, TallyAction, TallyState]):
    """Each player marks numbers, any number per turn; nobody ever wins."""

    SPEC = Spec(id="tally", version="1", title="Tally (benchmark game)", roles=("a", "b"),
                scenarios=("standard",), options=())

    @property
    def action_type(self) -> Any:
        return TallyAction

    @property
    def state_type(self) -> type[TallyState]:
        return TallyState

    def initial_state(self, scenario: str, options: tuple[str, ...]) -> TallyState:
        return TallyState()

    def pending(self, state: TallyState) -> Decision | None:
        return Decision(role=state.turn, kind="mark")

    def legal_actions(self, state: TallyState, role: str, ctx: Ctx) -> list[TallyAction]:
        return [Mark(1), EndTurn()]

    def check(self, state: TallyState, action: TallyAction, ctx: Ctx) -> list[Problem]:
        if ctx.author != state.turn:
            return [Problem("TALLY 1", "not your turn")]
        if isinstance(action, Mark) and not 1 <= action.n <= 99:
            return [Problem("TALLY 2", "mark 1 to 99")]
        return []

    def apply(self, state: TallyState, action: TallyAction, ctx: Ctx) -> TallyState:
        if isinstance(action, EndTurn):
            return msgspec.structs.replace(state, turn="b" if state.turn == "a" else "a")
        return msgspec.structs.replace(state, count=state.count + 1, total=state.total + action.n)

    def view(self, state: TallyState, role: str | None) -> TallyState:
        return state

    def outcome(self, state: TallyState) -> Outcome | None:
        return None

    def parse_order(self, state: TallyState, role: str, text: str, ctx: Any) -> Order:
        words = text.split()
        if words == ["end"]:
            return Order(action=EndTurn())
        if len(words) == 2 and words[0] == "mark" and words[1].isdigit():
            return Order(action=Mark(int(words[1])))
        raise ValueError(f"not an order: {text!r}")

    def format_action(self, action: TallyAction) -> str:
        return "end" if isinstance(action, EndTurn) else f"mark {action.n}"

    def render_text(self, view: TallyState) -> str:
        return f"{view.count} marks, {view.total} in all"


class Counted:
    """Counts the rules steps (check + apply) of a rules instance."""

    def __init__(self, rules: Rules[Any, Any, Any]) -> None:
        self.steps = 0
        for name in ("check", "apply"):
            real = getattr(rules, name)

            def counted(*args: Any, _real: Callable[..., Any] = real) -> Any:
                self.steps += 1
                return _real(*args)

            setattr(rules, name, counted)


# -- a game at the decision of the composing player ----------------------------------------


def _genesis(rules: Rules[Any, Any, Any], scenario: str, ids: dict[str, Identity]) -> codec.Genesis:
    spec = rules.SPEC
    return codec.Genesis(rules=spec.id, rules_version=spec.version, data_hash=rulesapi.data_hash(spec).hex(),
                         scenario=scenario, nonce=os.urandom(32).hex(),
                         players=sorted([codec.Player(role=r, key=i.public_text) for r, i in ids.items()],
                                        key=lambda p: p.role))


def _started(rules: Rules[Any, Any, Any], scenario: str, host: str, host_texts: list[str],
             guest: str) -> tuple[Replay, VaultData]:
    """The guest's replay after the host's genesis (with ``host_texts``), and its vault."""
    ids = {r: Identity.generate() for r in rules.SPEC.roles}
    genesis = _genesis(rules, scenario, ids)
    empty = Replay(rules, role=host)
    data = VaultData(game="", role=host)
    draft = session.parse_orders(rules, empty, host, data, [], host_texts, genesis=genesis)
    merged = session._with_secrets(data, draft)
    x_next = os.urandom(32)
    body = session._body(empty, host, merged, draft, x_next=x_next, genesis=genesis)
    stored = session._sign(ids[host], body)
    known = merged.known_values() if guest == host else {}
    replay = Replay(rules, role=guest, known=known)
    replay.apply_stored(stored)
    if guest == host:
        return replay, session._with_secrets(VaultData(game=replay.game_hex, role=host, entropy={"0": x_next.hex()}),
                                             draft)
    return replay, VaultData(game=replay.game_hex, role=guest)


# -- the three ways of adding one order ----------------------------------------------------


def before(rules: Rules[Any, Any, Any], replay: Replay, role: str, data: VaultData,
           orders: list[session.DraftOrder], text: str) -> None:
    """What parse_orders did for one text before issue 18 (a draft without deck work)."""
    probe = session.simulate_draft(replay, role, data, orders, None)  # with_deck: the draft, no deck work
    order = rules.parse_order(probe.state, role, text, session._ComposeCtx(probe.ctx(role)))
    candidate = session.DraftOrder(text=text, action=codec.raw(order.action), secrets=session._secret_map(order),
                                   reveal=list(order.reveal))
    session.simulate_draft(replay, role, session._with_secrets(data, orders + [candidate]), orders + [candidate],
                           None)


def process(rules: Rules[Any, Any, Any], replay: Replay, role: str, data: VaultData,
            orders: list[session.DraftOrder], text: str) -> None:
    session.compose_orders(rules, replay, role, data, orders, [text])


def best(fn: Callable[[], None], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def measure(name: str, rules: Rules[Any, Any, Any], replay: Replay, role: str, data: VaultData,
            texts: list[str], sizes: tuple[int, ...], repeat: int) -> list[str]:
    counter = Counted(rules)
    rows = []
    for n in sizes:
        orders, comp = session.compose_orders(rules, replay, role, data, [], texts[:n])
        assert comp is not None
        text = texts[n]
        runs: list[Callable[[], None]] = [
            functools.partial(before, rules, replay, role, data, orders, text),
            functools.partial(process, rules, replay, role, data, orders, text),
            functools.partial(session.compose_orders, rules, replay, role, data, orders, [text], held=comp),
        ]
        cells = []
        for run in runs:
            counter.steps = 0
            run()
            steps = counter.steps
            cells.append((best(run, repeat), steps))
        (tb, sb), (tp, sp), (tc, sc) = cells
        rows.append(f"| {name} | {n} | {tb * 1e3:.2f} ms ({sb}) | {tp * 1e3:.2f} ms ({sp}) | "
                    f"{tc * 1e3:.2f} ms ({sc}) | {tb / tc:.1f} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()

    tally = Tally()
    replay, data = _started(tally, "standard", "a", [], "a")
    # the host composes its own next event (its genesis had no orders)
    rows = measure("tally", tally, replay, "a", data, [f"mark {1 + i % 99}" for i in range(100)], (1, 20, 80),
                   args.repeat)

    from rules.ritd import RULES as RITD
    from rules.ritd.state import all_scenarios

    sc = all_scenarios()
    scenario = sc.get("gazala")

    def deploy(side: Any, where: str) -> list[str]:  # as tests/ritd/test_crafted_events.py does
        return [f"deploy {u.name} at {where}" for u in sc.starting_units(scenario, side)]

    ritd_replay, ritd_data = _started(RITD, "gazala", "axis", deploy("axis", "El Agheila") + ["end deployment"],
                                       "allied")
    rows += measure("RitD Gazala, Allied deployment", RITD, ritd_replay, "allied", ritd_data, deploy("allied", "Alexandria"),
                    (1, 20, 35), args.repeat)

    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=False).stdout.strip()
    except OSError:
        commit = "?"
    print(f"{datetime.date.today()} commit {commit}, Python {platform.python_version()}, "
          f"{platform.machine()}, best of {args.repeat}; time to add one order to a draft of N orders "
          "(rules steps: check + apply calls)")
    print("| game | N | before | new process | composer held | before / composer |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
