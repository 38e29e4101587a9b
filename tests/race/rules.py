"""Race: a two-player test game for the pbem engine. Not shipped.

Each runner has a secret speed (1-3) committed at setup. On a turn a runner
may first reveal its speed, then advances 1..3 steps; the opponent cannot see
the speed, so a long advance leaves a deferred check, discharged when the
speed is opened (RACE 2). Then the runner attacks (one die, 4-6 hits, rolled
from both players' entropy) or passes. A hit makes the defender decide:
"dodge" (lose one step) or "block" (next advance is at most 1 step). First to
the goal wins; the players then open everything for the audit.

Rule numbers for messages: RACE 1 setup, RACE 2 speed, RACE 3 turn
sequence, RACE 4 attacks, RACE 5 victory.
"""

from __future__ import annotations

from typing import Any

import msgspec

from pbem.rulesapi import DICE, ActingAs, ComposeCtx, Ctx, Decision, Demo, Order, Outcome, Problem, Rules, Spec

ROLES = ("red", "blue")
MAX_SPEED = 3
SPEC = Spec(id="race", version="1", title="Race (pbem test game)", roles=ROLES,
            scenarios=("standard", "sprint", "marathon"), options=("short-dodge",))
#: "marathon" never ends in practice: it makes long logs for benchmarks.
GOALS = {"standard": 10, "sprint": 5, "marathon": 10**9}


class _A(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type"):
    pass


class Setup(_A, tag="setup"):
    label: str


class Advance(_A, tag="advance"):
    steps: int


class Attack(_A, tag="attack"):
    pass


class Pass(_A, tag="pass"):
    pass


class Dash(_A, tag="dash"):
    pass


class Reveal(_A, tag="reveal"):
    pass


class Scout(_A, tag="scout"):
    label: str


class OpenScout(_A, tag="open-scout"):
    label: str


class Defend(_A, tag="defend"):
    choice: str


class LayTraps(_A, tag="lay-traps"):
    label: str


class OpenTrap(_A, tag="open-trap"):
    square: int


Action = Setup | Advance | Dash | Attack | Pass | Reveal | Defend | Scout | OpenScout | LayTraps | OpenTrap

#: RACE 7: squares a trap set covers (its key domain).
TRAP_SQUARES = 12


class Obligation(msgspec.Struct, frozen=True):
    """Deferred check: ``role`` advanced ``steps`` in event ``seq`` (needs speed >= steps)."""

    role: str
    seq: int
    steps: int


class Runner(msgspec.Struct, frozen=True):
    pos: int = 0
    label: str = ""
    speed: int = 0  # known to this replay: own speed, an opened one, or all in an audit
    revealed: bool = False
    blocked: bool = False
    scouts: tuple[str, ...] = ()  # seed labels of this runner's secret dice
    scout_values: tuple[int, ...] = ()  # the ones this replay can see, in order
    traps: str = ""  # label of this runner's trap set (RACE 7)
    opened: dict[str, str] = {}  # square -> "trap"/"none": leaves of it opened in the log


class State(msgspec.Struct, frozen=True):
    goal: int
    short_dodge: bool
    turn: str = "red"
    phase: str = "setup"  # setup | move | act | dashing | rolling | defend | scouting | trap
    trap_square: int = 0  # RACE 7: the square the trap layer must open
    runners: dict[str, Runner] = {}
    last_roll: int = 0
    obligations: tuple[Obligation, ...] = ()
    winner: str = ""


def _other(role: str) -> str:
    return ROLES[1] if role == ROLES[0] else ROLES[0]


def _speed_label(role: str) -> str:
    return f"{role}.speed"


def _runner(state: State, role: str) -> Runner:
    return state.runners.get(role, Runner())


def _set(state: State, role: str, runner: Runner, **changes: object) -> State:
    return msgspec.structs.replace(state, runners={**state.runners, role: runner}, **changes)


def initial_state(scenario: str, options: tuple[str, ...]) -> State:
    return State(goal=GOALS[scenario], short_dodge="short-dodge" in options)


def pending(state: State) -> Decision | None:
    if state.winner:
        return None
    if state.phase in ("rolling", "dashing"):
        return Decision(role=_other(state.turn), kind=DICE, dice=(6,))
    if state.phase == "scouting":
        return Decision(role=_other(state.turn), kind=DICE, dice=(6,),
                        secret=(_runner(state, state.turn).scouts[-1],))
    if state.phase == "defend":
        return Decision(role=_other(state.turn), kind="defend", prompt="hit: dodge or block")
    if state.phase == "trap":
        return Decision(role=_other(state.turn), kind="trap", prompt=f"open your trap square {state.trap_square}")
    return Decision(role=state.turn, kind=state.phase)


def outcome(state: State) -> Outcome | None:
    if not state.winner:
        return None
    return Outcome(winner=state.winner, summary=f"{state.winner} reached {state.goal} (RACE 5)")


def _speed_value(value: bytes) -> int | None:
    return int(value) if value in (b"1", b"2", b"3") else None


def check(state: State, action: object, ctx) -> list[Problem]:
    decision = pending(state)
    role = ctx.author
    problems: list[Problem] = []
    if decision is None or decision.role != role:
        return [Problem("RACE 3", "not your decision")]
    me = _runner(state, role)
    match action:
        case Setup(label=label):
            if state.phase != "setup":
                problems.append(Problem("RACE 1", "setup is over"))
            if label != _speed_label(role):
                problems.append(Problem("RACE 1", f"your speed must be committed as '{_speed_label(role)}'"))
            elif not ctx.committed(label):
                problems.append(Problem("RACE 1", "the speed must be committed in this event"))
            else:
                value = ctx.value(label)
                if value is not None and _speed_value(value) is None:
                    problems.append(Problem("RACE 1", "speed must be 1, 2 or 3"))
        case Reveal():
            if state.phase != "move":
                problems.append(Problem("RACE 3", "reveal only at the start of your turn"))
            if me.revealed:
                problems.append(Problem("RACE 2", "your speed is already revealed"))
            elif not ctx.opened(me.label):
                problems.append(Problem("RACE 2", "reveal must open your speed commitment"))
        case Advance(steps=steps):
            if state.phase != "move":
                problems.append(Problem("RACE 3", "advance only at the start of your turn"))
            if not 1 <= steps <= MAX_SPEED:
                problems.append(Problem("RACE 2", f"a runner advances 1 to {MAX_SPEED} steps, not {steps}"))
            elif me.blocked and steps > 1:
                problems.append(Problem("RACE 4", "blocked: this advance is at most 1 step"))
            elif me.speed and steps > me.speed:
                problems.append(Problem("RACE 2", f"advance of {steps} exceeds speed {me.speed}"))
        case Dash():
            if state.phase != "move":
                problems.append(Problem("RACE 3", "dash only at the start of your turn"))
        case Scout(label=label):
            if state.phase != "move":
                problems.append(Problem("RACE 6", "scout only at the start of your turn"))
            if label != f"{role}.scout{len(me.scouts)}" or not ctx.committed(label):
                problems.append(Problem("RACE 6", f"the scout's seed must be committed as '{role}.scout{len(me.scouts)}'"))
        case OpenScout(label=label):
            if label not in me.scouts or not ctx.opened(label):
                problems.append(Problem("RACE 6", f"'{label}' is not a scout of yours opened in this event"))
        case Attack() | Pass():
            if state.phase != "act":
                problems.append(Problem("RACE 3", "attack or pass after advancing"))
        case Defend(choice=choice):
            if state.phase != "defend":
                problems.append(Problem("RACE 4", "no hit to defend against"))
            if choice not in ("dodge", "block"):
                problems.append(Problem("RACE 4", f"defend with dodge or block, not '{choice}'"))
        case LayTraps(label=label):
            if state.phase != "move" or me.traps:
                problems.append(Problem("RACE 7", "traps are laid once, at the start of your turn"))
            if label != f"{role}.traps" or not ctx.committed(label):
                problems.append(Problem("RACE 7", f"the traps must be committed as the set '{role}.traps'"))
            else:
                problems += _trap_set_problems(role, label, ctx)
        case OpenTrap(square=square):
            if state.phase != "trap" or square != state.trap_square:
                problems.append(Problem("RACE 7", f"no trap square {square} to open now"))
            elif str(square) not in me.opened:
                problems.append(Problem("RACE 7", f"square {square} of {me.traps} must be opened in this event"))
        case _:
            problems.append(Problem("RACE 3", f"unknown action {action!r}"))
    return problems


def _trap_value(value: bytes | None) -> str | None:
    return {b"1": "trap", b"0": "none"}.get(value) if value is not None else None


def _trap_set_problems(role: str, label: str, ctx) -> list[Problem]:
    """RACE 7: every square 1..TRAP_SQUARES holds 1 or 0 (checked where known)."""
    values = [ctx.leaf(label, str(n)) for n in range(1, TRAP_SQUARES + 1)]
    if any(v is None for v in values):
        return []
    bad = [n for n, v in enumerate(values, 1) if _trap_value(v) is None]
    return [Problem("RACE 7", f"{role}'s traps hold no value 1 or 0 at squares {bad}")] if bad else []


def _after_advance(state: State, role: str, runner: Runner, **changes: object) -> State:
    """RACE 7: an advance onto a square of the other's trap set not yet opened waits for it."""
    other = _runner(state, _other(role))
    if other.traps and 1 <= runner.pos <= TRAP_SQUARES and str(runner.pos) not in other.opened:
        return _set(state, role, runner, **{**changes, "phase": "trap", "trap_square": runner.pos})
    return _set(state, role, runner, **changes)


def on_open_leaf(state: State, label: str, key: str, value: bytes, ctx) -> tuple[State, list[Problem]]:
    role = label.partition(".")[0]
    me = _runner(state, role)
    if label != me.traps:
        return state, [Problem("RACE 7", f"'{label}' is not {role}'s trap set")]
    found = _trap_value(value)
    if found is None:
        return state, [Problem("RACE 7", f"{role}'s trap square {key} holds {value!r}, not 1 or 0")]
    return _set(state, role, msgspec.structs.replace(me, opened={**me.opened, key: found})), []


def apply(state: State, action: object, ctx) -> State:
    role = ctx.author
    me = _runner(state, role)
    match action:
        case Setup(label=label):
            value = ctx.value(label)
            speed = _speed_value(value) if value is not None else 0
            runner = msgspec.structs.replace(me, label=label, speed=speed or 0)
            if role == ROLES[0]:
                return _set(state, role, runner, turn=ROLES[1])
            return _set(state, role, runner, turn=ROLES[0], phase="move")
        case Reveal():
            return _set(state, role, msgspec.structs.replace(me, revealed=True))
        case Advance(steps=steps):
            pos = me.pos + steps
            runner = msgspec.structs.replace(me, pos=pos, blocked=False)
            obligations = state.obligations
            if not me.speed and steps > 1:
                obligations += (Obligation(role, ctx.seq, steps),)
            if pos >= state.goal:
                return _set(state, role, runner, obligations=obligations, winner=role)
            return _after_advance(state, role, runner, obligations=obligations, phase="act")
        case Dash():
            return msgspec.structs.replace(state, phase="dashing")
        case Scout(label=label):
            return _set(state, role, msgspec.structs.replace(me, scouts=me.scouts + (label,)), phase="scouting")
        case OpenScout():
            return state
        case LayTraps(label=label):
            return _set(state, role, msgspec.structs.replace(me, traps=label))
        case OpenTrap(square=square):
            mover = _runner(state, state.turn)
            if me.opened[str(square)] == "trap":  # RACE 7: one step back
                mover = msgspec.structs.replace(mover, pos=mover.pos - 1)
            return _set(state, state.turn, mover, phase="act", trap_square=0)
        case Attack():
            return msgspec.structs.replace(state, phase="rolling")
        case Pass():
            return msgspec.structs.replace(state, phase="move", turn=_other(role))
        case Defend(choice=choice):
            if choice == "dodge":
                loss = 1 if state.short_dodge else 2
                runner = msgspec.structs.replace(me, pos=max(0, me.pos - loss))
            else:
                runner = msgspec.structs.replace(me, blocked=True)
            return _set(state, role, runner, phase="move", turn=role)
    raise ValueError(f"unchecked action {action!r}")


def resolve_dice(state: State, values: tuple[int | None, ...], ctx) -> State:
    roll = values[0]
    if state.phase == "scouting":  # RACE 6: None where this side cannot see the die
        me = _runner(state, state.turn)
        seen = me.scout_values + ((roll,) if roll is not None else ())
        return _set(state, state.turn, msgspec.structs.replace(me, scout_values=seen), phase="move")
    if state.phase == "dashing":  # RACE 2: a dash is 1 step on 1-3, 2 steps on 4-6
        me = _runner(state, state.turn)
        runner = msgspec.structs.replace(me, pos=me.pos + (1 if roll <= 3 else 2), blocked=False)
        if runner.pos >= state.goal:
            return _set(state, state.turn, runner, last_roll=roll, winner=state.turn)
        return _after_advance(state, state.turn, runner, last_roll=roll, phase="act")
    if roll >= 4:  # RACE 4: 4-6 hits
        return msgspec.structs.replace(state, phase="defend", last_roll=roll)
    return msgspec.structs.replace(state, phase="move", turn=_other(state.turn), last_roll=roll)


def on_open(state: State, label: str, value: bytes, ctx) -> tuple[State, list[Problem]]:
    role, _, what = label.partition(".")
    if what != "speed":
        return state, []  # scout seeds: see reveal_die
    speed = _speed_value(value)
    if speed is None:
        return state, [Problem("RACE 1", f"{role} committed an impossible speed {value!r}")]
    problems = [Problem("RACE 2", f"{role} advanced {o.steps} steps in event {o.seq} "
                                  f"but its speed is {speed} (signed by {role})")
                for o in state.obligations if o.role == role and o.steps > speed]
    keep = tuple(o for o in state.obligations if o.role != role)
    runner = msgspec.structs.replace(_runner(state, role), speed=speed)
    return _set(state, role, runner, obligations=keep), problems


def reveal_die(state: State, label: str, value: int, ctx) -> tuple[State, list[Problem]]:
    """A scout's seed was opened: its die becomes visible to everybody (RACE 6)."""
    role = label.split(".")[0]
    me = _runner(state, role)
    index = me.scouts.index(label)
    if index < len(me.scout_values):  # already seen (the owner, or an audit)
        return state, [] if me.scout_values[index] == value else [
            Problem("RACE 6", f"scout {label} was {me.scout_values[index]}, its seed gives {value}")]
    return _set(state, role, msgspec.structs.replace(me, scout_values=me.scout_values + (value,))), []


def legal_actions(state: State, role: str, ctx) -> list[object]:
    decision = pending(state)
    if decision is None or decision.role != role:
        return []
    me = _runner(state, role)
    if state.phase == "setup":
        candidates: list[object] = [Setup(label=_speed_label(role))]
    elif state.phase == "move":
        top = 1 if me.blocked else (me.speed or MAX_SPEED)
        candidates = [Advance(steps=n) for n in range(1, top + 1)] + [Dash()]
        if not me.revealed:
            candidates.append(Reveal())
    elif state.phase == "act":
        candidates = [Attack(), Pass()]
    elif state.phase == "defend":
        candidates = [Defend(choice="dodge"), Defend(choice="block")]
    elif state.phase == "trap":
        candidates = [OpenTrap(square=state.trap_square)]
    else:
        candidates = []
    # Setup and Reveal need this event's commitment/opening, which the engine adds
    # with the order; every other candidate must pass check as it stands.
    return [a for a in candidates
            if isinstance(a, (Setup, Reveal, OpenTrap)) or not check(state, a, ActingAs(ctx, role))]


def parse_order(state: State, role: str, text: str, ctx) -> Order:
    words = text.lower().split()
    match words:
        case ["setup", "speed", n] if n in ("1", "2", "3"):
            label = _speed_label(role)
            return Order(action=Setup(label=label), secrets={label: n.encode()})
        case ["setup", *_]:
            raise ValueError("RACE 1: write 'setup speed N' with N = 1, 2 or 3")
        case ["advance", n] if n.isdigit():
            return Order(action=Advance(steps=int(n)))
        case ["attack"]:
            return Order(action=Attack())
        case ["dash"]:
            return Order(action=Dash())
        case ["scout"]:
            label = f"{role}.scout{len(_runner(state, role).scouts)}"
            return Order(action=Scout(label=label), secrets={label: ctx.fresh()})
        case ["open", "scout", n] if n.isdigit():
            label = f"{role}.scout{n}"
            return Order(action=OpenScout(label=label), reveal=(label,))
        case ["pass"]:
            return Order(action=Pass())
        case ["reveal"]:
            return Order(action=Reveal(), reveal=(_speed_label(role),))
        case ["defend", choice]:
            return Order(action=Defend(choice=choice))
        case ["traps", *squares] if all(q.isdigit() for q in squares):
            label = f"{role}.traps"
            laid = {int(q) for q in squares}
            return Order(action=LayTraps(label=label),
                         sets={label: {str(n): b"1" if n in laid else b"0" for n in range(1, TRAP_SQUARES + 1)}})
        case ["open", "trap", n] if n.isdigit():
            return Order(action=OpenTrap(square=int(n)), open_leaves=((f"{role}.traps", n),))
    raise ValueError(f"not an order of the race game: '{text}' "
                     "(orders: setup speed N, reveal, advance N, dash, attack, pass, defend dodge|block)")


def format_action(action: object) -> str:
    match action:
        case Setup():
            return "setup speed <1-3>"
        case Advance(steps=steps):
            return f"advance {steps}"
        case Defend(choice=choice):
            return f"defend {choice}"
        case _:
            return type(action).__name__.lower()


class RunnerView(msgspec.Struct, frozen=True):
    role: str
    pos: int
    speed: str
    blocked: bool
    scouts: list[int] = []


class View(msgspec.Struct, frozen=True):
    me: str
    goal: int
    turn: str
    phase: str
    last_roll: int
    runners: list[RunnerView]
    winner: str


def view(state: State, role: str | None) -> View:
    runners = []
    for r in ROLES:
        runner = _runner(state, r)
        shown = runner.speed and (r == role or runner.revealed)
        # the audit sees every scout; a side sees its own and the opened ones
        runners.append(RunnerView(role=r, pos=runner.pos, speed=str(runner.speed) if shown else "?",
                                  blocked=runner.blocked, scouts=list(runner.scout_values)))
    return View(me=role or "", goal=state.goal, turn=state.turn, phase=state.phase,
                last_roll=state.last_roll, runners=runners, winner=state.winner)


def render_text(v: View) -> str:
    lines = [f"Race to {v.goal}" + (f" - won by {v.winner}" if v.winner else f" - {v.turn} to play ({v.phase})")]
    for r in v.runners:
        mark = " (you)" if r.role == v.me else ""
        lines.append(f"  {r.role}{mark}: at {r.pos}, speed {r.speed}{', blocked' if r.blocked else ''}")
    if v.last_roll:
        lines.append(f"  last attack roll: {v.last_roll}")
    return "\n".join(lines)


#: ``pbem demo``: the scenario its script plays (see ``demo_orders``).
DEMO_SCENARIO = "standard"


def demo_orders(state: State, role: str, ctx) -> list[str] | None:
    """The demo script: red sets speed 2 and blue 3, each reveals its speed on its
    first move, always advances as far as allowed and attacks; a hit is blocked.
    Every advance gains at least one step, so the race ends whatever the dice.
    None once the race is won."""
    if state.winner:
        return None
    decision = pending(state)
    if decision is None or decision.role != role or decision.kind == DICE:
        return []
    me = _runner(state, role)
    match state.phase:
        case "setup":
            return [f"setup speed {2 if role == ROLES[0] else 3}"]
        case "move":
            steps = 1 if me.blocked else (me.speed or 1)
            return ([] if me.revealed else ["reveal"]) + [f"advance {steps}"]
        case "act":
            return ["attack"]
        case "defend":
            return ["defend block"]
    return []


class RaceRules(Rules[State, Any, View]):
    """The race on pbem's contract: secret speeds, dice, secret dice (scouts)
    and a Merkle set (traps); no map, no deck, no explanations."""

    @property
    def SPEC(self) -> Spec:  # noqa: N802  (read at each call: tests patch the module's SPEC)
        return SPEC

    @property
    def action_type(self) -> Any:
        return Action

    @property
    def state_type(self) -> type[State]:
        return State

    @property
    def secret_dice(self) -> bool:
        return True

    @property
    def demo(self) -> Demo | None:
        return Demo(DEMO_SCENARIO)

    def initial_state(self, scenario: str, options: tuple[str, ...]) -> State:
        return initial_state(scenario, options)

    def pending(self, state: State) -> Decision | None:
        return pending(state)

    def legal_actions(self, state: State, role: str, ctx: Ctx) -> list[Any]:
        return legal_actions(state, role, ctx)

    def check(self, state: State, action: Any, ctx: Ctx) -> list[Problem]:
        return check(state, action, ctx)

    def apply(self, state: State, action: Any, ctx: Ctx) -> State:
        return apply(state, action, ctx)

    def view(self, state: State, role: str | None) -> View:
        return view(state, role)

    def outcome(self, state: State) -> Outcome | None:
        return outcome(state)

    def parse_order(self, state: State, role: str, text: str, ctx: ComposeCtx) -> Order:
        return parse_order(state, role, text, ctx)

    def format_action(self, action: Any) -> str:
        return format_action(action)

    def render_text(self, view: View) -> str:
        return render_text(view)

    def resolve_dice(self, state: State, values: tuple[int | None, ...], ctx: Ctx) -> State:
        return resolve_dice(state, values, ctx)

    def on_open(self, state: State, label: str, value: bytes, ctx: Ctx) -> tuple[State, list[Problem]]:
        return on_open(state, label, value, ctx)

    def on_open_leaf(self, state: State, label: str, key: str, value: bytes,
                     ctx: Ctx) -> tuple[State, list[Problem]]:
        return on_open_leaf(state, label, key, value, ctx)

    def reveal_die(self, state: State, label: str, value: int, ctx: Ctx) -> tuple[State, list[Problem]]:
        return reveal_die(state, label, value, ctx)

    def demo_orders(self, state: State, role: str, ctx: Ctx) -> list[str] | None:
        return demo_orders(state, role, ctx)


RULES = RaceRules()
