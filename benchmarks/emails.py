"""Benchmark: emails per Player-Turn, faithful and expedited (issue 26
point 8, PLAN "Emails").

Plays each game with self-play through the real engine (pbem.table: turn
files between two game directories, automatic entropy and deck answers),
by its demo script where it has one, else by random legal orders, then
counts from that one log what it costs in emails, grouped by the stretch of
play the game calls a turn (its ``turn_label``, e.g. RitD's "Month 1,
Player-Turn 2 (axis)"; an email counts in the turn of its first event).

Each event of the log is classified, from the public replay as the
opponent sees it (PLAN: only what the public view shows is forced):

  automatic  an answer that needs no one: the author's decision was a dice
             roll (entropy, with any sealed openings the request names;
             protocol decision 22) or shared-deck work, or the game was
             over (the closing openings for the audit);
  forced     one action, at a decision whose only legal order in the
             public view was that very action: a step every replay could
             take by itself (issue 21 point 5), with no secret and no choice;
  chosen     everything else: a player's decision.

The counts, all from the same log:

  faithful   (the default: what pbem does today) one email per event:
             every send, every automatic answer ('pbem receive' writes a
             turn file of its own) and the closing openings.
  expedited  what the same play costs with two shortcuts the engine does
             not take yet: (1) forced steps are implied, not sent: each
             side's replay applies the one legal order itself, so they
             cost no event and no email; (2) then one email per run of
             consecutive events by one author: an automatic answer travels
             with the same author's next decision instead of alone (the
             answerer knows the roll at once; the asker, whose next step
             was forced, waits no longer). A run that is all automatic
             still costs an email: a roll's answer must reach the asker
             before its next decision, the fair minimum of protocol
             decision 22.
  by hand    the expedited emails that hold a chosen event: those a
             person writes; the rest 'pbem receive' (and 'pbem watch',
             issue 21) can send alone.

With --forced each game is also played with pbem taking the steps the rules
declare forced in the public view in its automatic answers ('pbem receive'
does; issue 21 point 5), and both reports are printed. With --standing also
with both players' standing orders set (every one the game offers, 'pbem
standing'): the routine choices they settle (RitD: losses placed as 'auto',
Pursuit with all) ride in the automatic answers and count as automatic.

Run from a checkout:  python benchmarks/emails.py [--rules ritd] [--events 60] [--test-games] [--forced] [--standing]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pbem import codec, rulesapi
from pbem.deck import DECK
from pbem.game import Replay
from pbem.rulesapi import DICE
from pbem.table import LocalTable, RandomPolicy, demo_policy, expand_order_templates

AUTOMATIC, FORCED, CHOSEN = "automatic", "forced", "chosen"


def classify(rules: rulesapi.RulesModule, events: list[bytes]) -> list[tuple[str, str, str]]:
    """(turn label, author, kind) of each event, kind one of AUTOMATIC, FORCED, CHOSEN."""
    replay = Replay(rules)
    out = []
    for stored in events:
        author = codec.unwrap(stored).author
        if replay.state is None:
            out.append(("set-up", author, CHOSEN))  # the genesis: the scenario and the first orders
            replay.apply_stored(stored)
            continue
        label = rules.turn_label(replay.state)
        decision = replay.pending()
        actions = codec.decode_body(codec.unwrap(stored).body).actions
        if decision is None or replay.outcome() is not None:
            kind = AUTOMATIC  # the closing openings
        elif decision.role == author and (decision.kind == DECK or (decision.kind == DICE and not actions)):
            kind = AUTOMATIC  # noqa: SIM114 - the same kind for a different reason
        elif decision.role == author and decision.kind in (DICE, DECK) and _answer_with_forced(rules, replay, stored):
            kind = AUTOMATIC  # pbem's automatic answer took the forced (or standing) steps after the dice (issue 21)
        elif decision.role == author and len(actions) == 1 and _forced(rules, replay, author, actions[0]):
            kind = FORCED
        else:
            kind = CHOSEN
        out.append((label, author, kind))
        replay.apply_stored(stored)
    return out


def _answer_with_forced(rules: rulesapi.RulesModule, replay: Replay, stored: bytes) -> bool:
    """Whether an event that answers dice or deck work holds, besides deck messages,
    only actions forced in the public view at their step (what 'pbem receive'
    adds to its automatic answer, issue 21 point 5), judged action by action."""
    body = codec.decode_body(codec.unwrap(stored).body)
    try:
        current = replay.open_event(msgspec.structs.replace(body, actions=[]))
        for raw in body.actions:
            before = current.close()
            now = before.pending()
            if now is None or now.role != body.author:
                return False
            if now.kind != DECK and not _forced(rules, before, body.author, raw) and \
                    not _standing(rules, before, body.author, raw):
                return False
            current = current.add(raw)
    except Exception:  # noqa: BLE001 - a step this public fold cannot take apart is a player's
        return False
    return True


def _standing(rules: rulesapi.RulesModule, replay: Replay, role: str, action: msgspec.Raw) -> bool:
    """Whether ``action`` is the order a standing order of the game gives at
    ``role``'s step (``Rules.standing_order`` with every name the game offers):
    what pbem's automatic answer gives for a player who set them."""
    try:
        names = frozenset(rules.standing_orders())
        order = rules.standing_order(replay.state, role, replay.ctx(role), names) if names else None
        return order is not None and _is_order(rules, replay, role, order, action)
    except Exception:  # noqa: BLE001 - a step this public fold cannot judge is a player's
        return False


def _forced(rules: rulesapi.RulesModule, replay: Replay, role: str, action: msgspec.Raw) -> bool:
    """Whether ``role``'s only legal order in the public view is ``action``."""
    try:
        legal = expand_order_templates(rules.legal_orders(replay.state, role, replay.ctx(role)))
        return len(legal) == 1 and _is_order(rules, replay, role, legal[0], action)
    except Exception:  # noqa: BLE001 - a game may need its secrets to list or parse: nothing is publicly forced
        return False


def _is_order(rules: rulesapi.RulesModule, replay: Replay, role: str, order: str, action: msgspec.Raw) -> bool:
    """Whether the signed ``action`` is ``order`` as ``role``'s rules parse it now."""
    given = rules.parse_order(replay.state, role, order, _Compose(replay.ctx(role))).action
    return bool(msgspec.json.decode(action, type=rules.action_type) == given)


class _Compose:
    """``ctx`` as a ComposeCtx: a forced order commits nothing, so ``fresh`` is never needed to compare."""

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    def fresh(self) -> bytes:
        return bytes(16)


@dataclass
class TurnCount:
    label: str
    faithful: int = 0
    expedited: int = 0
    by_hand: int = 0
    kinds: dict[str, int] = field(default_factory=dict)


def emails_per_turn(rules: rulesapi.RulesModule, events: list[bytes]) -> list[TurnCount]:
    """The three counts of each turn of a log, in the order the turns were played."""
    return count(classify(rules, events))


def count(classified: list[tuple[str, str, str]]) -> list[TurnCount]:
    """The three counts of each turn from the (turn label, author, kind) of each event."""
    turns: dict[str, TurnCount] = {}
    run_turn: TurnCount | None = None
    last_author: str | None = None
    run_chosen = False
    for label, author, kind in classified:
        turn = turns.setdefault(label, TurnCount(label))
        turn.faithful += 1
        turn.kinds[kind] = turn.kinds.get(kind, 0) + 1
        if kind == FORCED:
            continue  # implied when expedited: no event, and no break between the runs around it
        if author != last_author:  # a new run: one expedited email, counted in the turn it starts in
            if run_turn is not None and run_chosen:
                run_turn.by_hand += 1
            turn.expedited += 1
            run_turn, last_author, run_chosen = turn, author, False
        run_chosen |= kind == CHOSEN
    if run_turn is not None and run_chosen:
        run_turn.by_hand += 1
    return list(turns.values())


def play(rid: str, events: int, seed: int, forced: bool = False, standing: bool = False,
         scenario: str = "") -> tuple[Any, str, str, int, list[bytes]]:
    """Self-play of ``rid``: (rules, scenario, how, events played, the log); with
    ``forced``, pbem's automatic answers take the publicly forced steps
    (``Rules.forced_order``, issue 21 point 5) as 'pbem receive' does."""
    rules = rulesapi.load(rid)
    demo = rules.demo if not scenario else None
    scenario = scenario or (demo.scenario if demo is not None else rules.SPEC.scenarios[0])
    with tempfile.TemporaryDirectory() as tmp:
        table = LocalTable.create(Path(tmp), rid, scenario, demo.options if demo is not None else ())
        table.forced = forced
        if standing:
            table.standing = tuple(rules.standing_orders())
        policy = demo_policy(rules) if demo is not None else RandomPolicy(seed)
        result = table.play(policy, events)
        log = table.players[0].gd.read_events()
    how = ("its demo script" if demo is not None else f"random legal orders (seed {seed})") + (
        ", forced steps taken by pbem" if forced else "") + (
        f", standing orders {', '.join(rules.standing_orders())}" if standing and forced else "")
    return rules, scenario, how, result.events, log


def report(rules: Any, scenario: str, how: str, played: int, rows: list[TurnCount]) -> list[str]:
    total = TurnCount("total")
    for row in rows:
        total.faithful += row.faithful
        total.expedited += row.expedited
        total.by_hand += row.by_hand
    lines = [f"{rules.SPEC.title} ({rules.SPEC.id} {rules.SPEC.version}), scenario {scenario}, {how}: "
             f"{played} events; emails: {total.faithful} faithful (the default), {total.expedited} expedited, "
             f"{total.by_hand} of them by hand",
             f"  {'turn':<44} {'faithful':>8} {'expedited':>9} {'by hand':>7}  events"]
    for row in rows:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(row.kinds.items()))
        lines.append(f"  {row.label or '(the whole game)':<44} {row.faithful:>8} {row.expedited:>9} "
                     f"{row.by_hand:>7}  {kinds}")
    turns = [r for r in rows if "Player-Turn" in r.label] or rows
    if turns:
        def mean(values: list[int]) -> str:
            return f"mean {sum(values) / len(values):.1f}, most {max(values)}"

        lines.append(f"  per {'Player-Turn' if 'Player-Turn' in turns[0].label else 'turn'}: "
                     f"faithful {mean([r.faithful for r in turns])} (the default); "
                     f"expedited {mean([r.expedited for r in turns])}; "
                     f"by hand {mean([r.by_hand for r in turns])}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", action="append", help="game id (repeatable; default: every game with self-play)")
    ap.add_argument("--events", type=int, default=60, help="events to play per game (default 60)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--test-games", action="store_true",
                    help="also the engine's test games of the contract suite (race, volley, ambush, skirmish)")
    ap.add_argument("--forced", action="store_true",
                    help="also play with pbem taking the publicly forced steps itself (issue 21 point 5), "
                         "and print both")
    ap.add_argument("--scenario", default="",
                    help="play this scenario with random legal orders (--seed) instead of the demo script, "
                         "e.g. --rules ritd --scenario 1941-42 --events 600: the benchmark campaign's opening")
    ap.add_argument("--standing", action="store_true",
                    help="also play with pbem taking the forced steps and both players' standing orders "
                         "(every one the game offers: 'pbem standing'), and print that too")
    args = ap.parse_args()
    if args.test_games:
        from tests.test_contract_games import TOYS

        for toy in TOYS:
            rulesapi.register(toy)
    ids = args.rules or [r for r in rulesapi.available() if not rulesapi.is_frozen(r)]
    for rid in ids:
        runs = [(False, False)] + ([(True, False)] if args.forced else []) + ([(True, True)] if args.standing else [])
        for forced, standing in runs:
            rules, scenario, how, played, log = play(rid, args.events, args.seed, forced, standing, args.scenario)
            print("\n".join(report(rules, scenario, how, played, emails_per_turn(rules, log))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
