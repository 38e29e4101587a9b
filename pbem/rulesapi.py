"""The contract between the engine and a game's rules (DESIGN 6, issue 18).

A game is an instance of a subclass of ``Rules``, which names every hook
the engine may call: the required ones (``REQUIRED``) and the optional ones
with their documented defaults. It is found through the ``pbem.rules``
entry-point group, so a third-party package can add a game without
touching pbem:

    [project.entry-points."pbem.rules"]
    mygame = "mygame.rules:RULES"

Rules are pure functions over immutable state. They never touch files,
crypto, email or a randomness source: the engine hands them dice and
openings through ``Ctx``. ``check`` returns every problem at once, each with
its rule reference; ``apply`` is total for checked actions (STYLE 1, 2).

Hidden values: a rules module refers to hidden things by commitment label.
``ctx.value(label)`` returns the value bytes when the replaying side knows it
(its own secret, an opening already published, or everything in an audit),
else None; the rules then check what is public and record a deferred check
in the state, discharged in ``on_open`` when the value is opened.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import msgspec

from pbem.commit import decode_leaves as decode_set  # noqa: F401  (for rules: a whole set's opening)
from pbem.errors import NotFound

if TYPE_CHECKING:
    import importlib.metadata

    from pbem.board import Picture
    from pbem.deck import DeckTask

ENTRY_POINT_GROUP = "pbem.rules"

#: Decision kind meaning "waiting for this role's entropy to resolve dice".
DICE = "dice"
#: ``Rules.label_owner``: a label nobody may commit under (outside the game's namespaces).
NOBODY = ""


class OptionGroup(msgspec.Struct, frozen=True):
    """An option of a game that takes a value (issue 26): a choice among
    ``choices`` ("C2 = single-roll | per-hex"), ``required`` when the game
    cannot be played without one, else ``default`` applies; offered only in
    ``scenarios`` when that is not empty. A genesis stores it as
    ``name=value``; options without values (``Spec.options``) as the bare name."""

    name: str
    choices: tuple[str, ...]
    text: str = ""
    required: bool = False
    default: str = ""
    scenarios: tuple[str, ...] = ()


class Spec(msgspec.Struct, frozen=True):
    id: str
    version: str
    title: str
    roles: tuple[str, ...]
    scenarios: tuple[str, ...]
    #: Optional rules without values (on when named).
    options: tuple[str, ...] = ()
    #: Options with values (``--option name=value``).
    option_groups: tuple[OptionGroup, ...] = ()
    #: Package holding the data files (read with importlib.resources).
    data_package: str = ""
    data_files: tuple[str, ...] = ()


def option_problems(spec: Spec, scenario: str, options: Sequence[str]) -> list[str]:
    """Why ``options`` (as a genesis stores them: ``name`` or ``name=value``)
    cannot be a game of ``spec`` in ``scenario``, each naming the choices;
    [] if they can. A game stored before values existed (bare names) still
    passes."""
    groups = {g.name: g for g in spec.option_groups}
    problems, seen = [], set()
    for text in options:
        name, eq, value = text.partition("=")
        if name in seen:
            problems.append(f"option '{name}' is given twice")
        seen.add(name)
        group = groups.get(name)
        if group is None:
            if eq or name not in spec.options:
                offered = [*spec.options, *(f"{g.name}={'|'.join(g.choices)}" for g in spec.option_groups)]
                problems.append(f"unknown option '{text}' (offered: {', '.join(offered) or 'none'})")
            continue
        if group.scenarios and scenario not in group.scenarios:
            problems.append(f"option '{name}' is offered only in the scenarios {', '.join(group.scenarios)}")
        if not eq or value not in group.choices:
            problems.append(f"option '{name}' takes one of: {', '.join(group.choices)} (as {name}=VALUE)")
    for group in spec.option_groups:
        if group.required and group.name not in seen and (not group.scenarios or scenario in group.scenarios):
            problems.append(f"option '{group.name}' is required: --option {group.name}=VALUE with VALUE one of "
                            f"{', '.join(group.choices)}")
    return problems


def option_value(spec: Spec, options: Sequence[str], name: str) -> str | None:
    """The value of option group ``name`` in a game's ``options`` (its
    default when not given), or for an option without values "on"/None."""
    for text in options:
        key, eq, value = text.partition("=")
        if key == name:
            return value if eq else "on"
    group = next((g for g in spec.option_groups if g.name == name), None)
    return (group.default or None) if group is not None else None


class Decision(msgspec.Struct, frozen=True):
    """Who must act next and what kind of input the rules wait for.

    ``kind == DICE``: the rules asked for ``dice`` (one entry per die: its
    number of sides) and wait for ``role``'s entropy to roll them. pbem
    answers it automatically when no human choice is needed.

    ``secret``: for secret dice (a card drawn, a hidden roll), one commitment
    label per die, committed by the asker: its seed replaces the asker's
    entropy, so the asker learns the die at once and the opponent only when
    the seed is opened (``reveal_die``); ``resolve_dice`` then gets None for
    dice the replaying side cannot see.

    ``purposes``: what each die decides, in words, one per die (e.g. "attack
    on 1509, odds 3:1"); reports and ``pbem log`` print it beside the die.

    ``openings``: sealed standing orders the answer must open (labels the
    answering ``role`` committed earlier, e.g. its loss and retreat policy
    for the phase): pbem's automatic answer opens them from the vault, and
    an answer that lacks one is refused before any die is resolved, so the
    rules read the policy (``ctx.value``) when they resolve the dice and
    no further message is needed for the choice it settles.
    A batch may ask more dice than it turns out to need: the rules' words
    for the result (``describe_roll``) say which were used.
    """

    role: str
    kind: str
    prompt: str = ""
    dice: tuple[int, ...] = ()
    secret: tuple[str, ...] = ()
    purposes: tuple[str, ...] = ()
    openings: tuple[str, ...] = ()


class OrderGroup(msgspec.Struct, frozen=True, eq=False):
    """A group of the orders a role may give now, for ``Rules.order_tree``
    (issue 26 point 6): ``pbem options`` lists groups before orders, and
    random self-play chooses a group before an order, level by level.

    ``label``: what the group is, in the player's words ("Move 21 Pz (4 MP,
    at 0906)", "End movement"). ``example``: one order of the group or its
    format ("move 21pz <hex>"); "" means its first order. ``orders``: the
    group's own orders (leaves), in ``parse_order``'s syntax; ``children``:
    its sub-groups. Either may be given as a function that produces it on
    demand, so that a 40-unit movement phase builds no destination until
    one unit's group is opened; each is produced at most once per group
    (``leaf_orders`` and ``groups`` keep what they produced).
    ``ends_step``: an order of this group ends the current step (e.g. "end
    movement"); self-play leans to such groups so that campaigns finish.
    ``note``: a short line about the group (a rule, why it is empty).
    """

    label: str
    example: str = ""
    orders: tuple[str, ...] | Callable[[], Sequence[str]] = ()
    children: tuple[OrderGroup, ...] | Callable[[], Sequence[OrderGroup]] = ()
    ends_step: bool = False
    note: str = ""
    #: What ``leaf_orders``, ``groups`` and ``count`` produced (never given: a memo).
    _made: dict[str, Any] = msgspec.field(default_factory=dict)

    def leaf_orders(self) -> tuple[str, ...]:
        """The group's own orders (not its sub-groups')."""
        if "orders" not in self._made:
            self._made["orders"] = tuple(self.orders() if callable(self.orders) else self.orders)
        return self._made["orders"]  # type: ignore[no-any-return]

    def groups(self) -> tuple[OrderGroup, ...]:
        """The group's sub-groups."""
        if "children" not in self._made:
            self._made["children"] = tuple(self.children() if callable(self.children) else self.children)
        return self._made["children"]  # type: ignore[no-any-return]

    def leaves(self) -> Iterator[str]:
        """Every order of the group and of its sub-groups, depth first."""
        yield from self.leaf_orders()
        for child in self.groups():
            yield from child.leaves()

    def count(self) -> int:
        """How many orders the group holds, sub-groups included."""
        if "count" not in self._made:
            self._made["count"] = len(self.leaf_orders()) + sum(c.count() for c in self.groups())
        return self._made["count"]  # type: ignore[no-any-return]

    def first(self) -> str:
        """``example``, else the first order of the group ("" if it is empty)."""
        return self.example or next(self.leaves(), "")


def tree_leaves(tree: Sequence[OrderGroup]) -> list[str]:
    """Every order of an order tree, depth first."""
    return [order for group in tree for order in group.leaves()]


class Problem(msgspec.Struct, frozen=True):
    """One reason an action is illegal, with the rule it breaks (e.g. "RB 7.1")."""

    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}" if self.rule else self.message


class Die(msgspec.Struct, frozen=True, omit_defaults=True):
    """One die of a happening: what it decides (its label), its value for
    the reader (None: a die this reader cannot see) and whether it was used
    (a batch may ask more dice than it turns out to need)."""

    label: str
    value: int | None = None
    used: bool = True


class Combat(msgspec.Struct, frozen=True, omit_defaults=True):
    """One combat as a table (issue 26 point 7): who attacked whom, the
    modifiers, the odds or differential, the dice with their labels, the
    result, the losses, the retreat and the advance, each in the game's words."""

    where: str
    attackers: tuple[str, ...] = ()
    defenders: tuple[str, ...] = ()
    modifiers: tuple[str, ...] = ()
    #: "3:1" or "+4": a ratio or a differential, as the game's table reads it.
    odds: str = ""
    dice: tuple[Die, ...] = ()
    result: str = ""
    losses: tuple[str, ...] = ()
    retreat: str = ""
    advance: str = ""


class Happening(msgspec.Struct, frozen=True, omit_defaults=True):
    """Something that happened, said for one reader (``Rules.happenings``):
    a sentence with the rule it applies (eliminations, losses, routs, supply
    results, cards played), and for a combat its table. ``kind`` is a
    short word a template may style by ("combat", "elimination", "loss",
    "rout", "supply", "card"); free, "" by default."""

    text: str
    rule: str = ""
    kind: str = ""
    combat: Combat | None = None
    #: The game's public identifiers of the pieces concerned (e.g. the tokens of
    #: the blocks lost): for ``--json`` and verbose output, never in ``text``
    #: (issue 21 point 3: no token in anything a person reads).
    tokens: tuple[str, ...] = ()


#: ``Step.kind`` values: what moved the state from ``before`` to ``after``.
ACTION, ROLL, OPENINGS = "action", "roll", "openings"


class Step(msgspec.Struct, frozen=True):
    """What moved the state handed to ``Rules.happenings``: an ``action``
    applied (ACTION), the dice of a request resolved (ROLL: ``values``, None
    for a die this replay cannot see), or an event's openings (OPENINGS:
    the ``labels`` opened, "label[key]" for a set's leaf)."""

    kind: str
    action: Any = None
    values: tuple[int | None, ...] = ()
    labels: tuple[str, ...] = ()


class Outcome(msgspec.Struct, frozen=True):
    winner: str | None
    summary: str


class Order(msgspec.Struct, frozen=True):
    """A parsed order: the public action, the new secrets it commits
    (label -> value bytes) and the labels of my commitments it opens.

    ``sets``: new Merkle set commitments (label -> every key of the domain ->
    value bytes; DESIGN 4 hidden board facts): one root is published, single
    keys are opened later by ``open_leaves`` ((label, key) pairs of my sets),
    the whole set at the audit. The rules see a leaf through ``ctx.leaf`` and
    its opening through the optional ``on_open_leaf`` hook."""

    action: Any
    secrets: dict[str, bytes] = {}
    reveal: tuple[str, ...] = ()
    sets: dict[str, dict[str, bytes]] = {}
    open_leaves: tuple[tuple[str, str], ...] = ()


class Ctx(Protocol):
    """What the engine tells the rules while replaying an event."""

    @property
    def role(self) -> str | None:
        """Replaying side: a role, None for public verification, "*" in an audit."""

    @property
    def seq(self) -> int: ...

    @property
    def author(self) -> str: ...

    def value(self, label: str) -> bytes | None:
        """Value of a commitment if the replaying side knows it, else None."""

    def committed(self, label: str) -> bool: ...

    def opened(self, label: str) -> bool:
        """True once the commitment has been opened in the log."""

    def leaf(self, label: str, key: str) -> bytes | None:
        """Value of ``key`` in the Merkle set ``label`` if the replaying side
        knows it (its own set, a leaf opened in the log, the audit), else None."""

    def leaves(self, label: str, keys: Iterable[str]) -> list[bytes | None]:
        """``leaf(label, key)`` for each of ``keys``, in one call: for a rule
        that reads a whole set (RitD's Minefields: every hex of the map)."""

    def card(self, rnd: str, pos: int) -> str | None:
        """The label of the shared deck's card at ``pos`` of round ``rnd`` if the
        replaying side can see it (its own card, one shown, the audit), else None."""


class ActingAs:
    """``ctx`` seen as if ``role`` were acting now: for a rules module's
    ``legal_actions``, which runs its own ``check`` on candidate actions."""

    def __init__(self, ctx: Ctx, role: str) -> None:
        self._ctx, self.author, self.seq, self.role = ctx, role, ctx.seq, ctx.role

    def value(self, label: str) -> bytes | None:
        return self._ctx.value(label)

    def committed(self, label: str) -> bool:
        return self._ctx.committed(label)

    def opened(self, label: str) -> bool:
        return self._ctx.opened(label)

    def leaf(self, label: str, key: str) -> bytes | None:
        return self._ctx.leaf(label, key)

    def leaves(self, label: str, keys: Iterable[str]) -> list[bytes | None]:
        return self._ctx.leaves(label, keys)

    def card(self, rnd: str, pos: int) -> str | None:
        return self._ctx.card(rnd, pos)


class ComposeCtx(Ctx, Protocol):
    """The Ctx handed to ``parse_order`` while a player composes orders."""

    def fresh(self) -> bytes:
        """16 fresh random bytes, e.g. for a public token that must not leak
        which hidden unit it is. Only here: check and apply never see it, so
        replays stay deterministic."""

    def private_sample(self, purpose: str, n: int, k: int) -> tuple[int, ...]:
        """``k`` distinct indices of ``range(n)`` (increasing), each k-subset
        equally likely, drawn from the composing player's private stream
        (pbem.private, docs/protocol.md decision 25): for a choice among the
        player's own hidden items that must say nothing about them (which
        face-down cards are played). ``purpose`` names the choice. The result
        becomes part of the signed action and is checked as any choice the
        player could have named; nobody else can compute it."""


S = TypeVar("S")
A = TypeVar("A")
V = TypeVar("V")


class RulesError(Exception):
    """A rules module broke the contract (a hook called that it does not
    provide, an impossible request): a bug in the rules, not in the log."""


class Demo(msgspec.Struct, frozen=True):
    """A scripted game for ``pbem demo``: its scenario and options."""

    scenario: str
    options: tuple[str, ...] = ()


class Rules(Generic[S, A, V]):
    """The contract between the engine and a game: every hook the engine
    may call (DESIGN 6, issue 18). A game subclasses it, overrides the
    abstract members and the optional hooks it needs, and registers one
    instance under the ``pbem.rules`` entry-point group. Rules are pure: no
    files, crypto, email or randomness source (``ComposeCtx.fresh`` and
    ``ComposeCtx.private_sample`` are the only randomness, and only while
    composing).

    ``S``: the immutable rules state folded over the log; ``A``: the game's
    actions (a tagged msgspec union, integers only: DESIGN 3); ``V``: what
    one side may see of a state. The engine passes them through untouched.

    Engine work that a game only asks for travels outside its ``Action``
    union: the shared deck's messages (pbem.deck) are the engine's own
    actions. A game without secrets, cards or decks overrides none of the
    hooks about them and pays nothing for them.
    """

    # -- required ---------------------------------------------------------------
    # A game under construction may be registered before it provides them all
    # (``missing_parts`` says which; ``load`` refuses it): calling one it does
    # not provide is a RulesError naming the hook, never a silent default.

    def _missing(self, hook: str) -> RulesError:
        return RulesError(f"rules {type(self).__name__} do not provide {hook}, a required hook of "
                          "pbem.rulesapi.Rules (pbem rules show lists what is missing)")

    @property
    def SPEC(self) -> Spec:  # noqa: N802  (the game's constant description)
        """Id, version, title, roles, scenarios, options and data files."""
        raise self._missing("SPEC")

    @property
    def action_type(self) -> Any:
        """The union of the game's action types, as the log stores them."""
        raise self._missing("action_type")

    @property
    def state_type(self) -> type[S]:
        """The state's type, for the replay cache (pbem.snapshot)."""
        raise self._missing("state_type")

    def initial_state(self, scenario: str, options: tuple[str, ...]) -> S:
        raise self._missing("initial_state")

    def pending(self, state: S) -> Decision | None:
        """Who decides next and what kind of input is awaited; None at the end."""
        raise self._missing("pending")

    def legal_actions(self, state: S, role: str, ctx: Ctx) -> list[A]:
        """Actions ``role`` may take now: each passes ``check`` once the
        engine has added the commitments and openings of its order. A game
        whose orders need more than the action (secret values, routes)
        lists them through ``legal_orders``, which is complete."""
        raise self._missing("legal_actions")

    def check(self, state: S, action: A, ctx: Ctx) -> list[Problem]:
        """Every problem with ``action`` now, each naming its rule; [] if legal."""
        raise self._missing("check")

    def apply(self, state: S, action: A, ctx: Ctx) -> S:
        """The state after a checked action; never fails on one."""
        raise self._missing("apply")

    def view(self, state: S, role: str | None) -> V:
        """What ``role`` may see (None: the public); never a hidden value."""
        raise self._missing("view")

    def outcome(self, state: S) -> Outcome | None:
        raise self._missing("outcome")

    def parse_order(self, state: S, role: str, text: str, ctx: ComposeCtx) -> Order:
        """A player's order text as an action with the secrets it commits and
        opens. ValueError (naming the expected syntax or the rule) if unreadable."""
        raise self._missing("parse_order")

    def format_action(self, action: A) -> str:
        """The action as public text (the order syntax where possible)."""
        raise self._missing("format_action")

    def render_text(self, view: V) -> str:
        """The view as plain text (``pbem show``)."""
        raise self._missing("render_text")

    # -- optional, with their defaults -------------------------------------------

    @property
    def map_overlays(self) -> tuple[str, ...]:
        """Map overlays ``map_picture`` draws on request (``pbem map --overlay NAME``); none by default."""
        return ()

    @property
    def explain_topics(self) -> tuple[str, ...]:
        """Topics of ``explain`` (``pbem explain TOPIC SUBJECT``); none by default."""
        return ()

    @property
    def secret_dice(self) -> bool:
        """Whether the rules ask for secret dice (``Decision.secret``); such
        rules override ``reveal_die``. False by default."""
        return False

    @property
    def demo(self) -> Demo | None:
        """A scripted game for ``pbem demo`` (with ``demo_orders``); None by default."""
        return None

    @property
    def report_templates(self) -> str | None:
        """A package of the game's own report templates (``report.html.j2``,
        ``report.txt.j2``), each replacing the engine's of the same name;
        None by default: the engine's templates."""
        return None

    def resolve_dice(self, state: S, values: tuple[int | None, ...], ctx: Ctx) -> S:
        """The dice asked for by a ``DICE`` decision were rolled (None: a
        secret die this replay cannot see). Default: the rules never ask."""
        raise RulesError(f"rules '{self.SPEC.id}' asked for dice but do not resolve them")

    def on_open(self, state: S, label: str, value: bytes, ctx: Ctx) -> tuple[S, list[Problem]]:
        """A commitment was opened: discharge the deferred checks waiting on
        it; problems prove an earlier action illegal. Default: nothing waits."""
        return state, []

    def on_open_leaf(self, state: S, label: str, key: str, value: bytes, ctx: Ctx) -> tuple[S, list[Problem]]:
        """One leaf of the Merkle set ``label`` was opened. Default: these
        rules commit no sets, so any leaf opening is refused."""
        return state, [Problem("", f"rules '{self.SPEC.id}' open no set leaves")]

    def reveal_die(self, state: S, label: str, value: int, ctx: Ctx) -> tuple[S, list[Problem]]:
        """A secret die became known to this replay (its seed ``label`` was
        opened). Needed when ``secret_dice``."""
        raise RulesError(f"rules '{self.SPEC.id}' asked for secret dice but cannot reveal them")

    def legal_orders(self, state: S, role: str, ctx: Ctx) -> list[str]:
        """Every order ``role`` may give now, in ``parse_order``'s syntax
        (``pbem options``; "<1-3>" stands for each number of the range); each
        parses to an action that passes ``check``. Default: ``legal_actions``
        formatted, for games whose every action is secret-free."""
        return [self.format_action(a) for a in self.legal_actions(state, role, ctx)]

    def order_tree(self, state: S, role: str, ctx: Ctx) -> tuple[OrderGroup, ...]:
        """The orders of ``legal_orders`` as a tree of groups (unit, then
        destinations; see ``OrderGroup``), for ``pbem options`` and random
        self-play: its leaves are exactly the orders of ``legal_orders``.
        A game overrides it when a flat list is long (a movement phase):
        groups produced on demand, reachability computed once per unit.
        Default: one group holding ``legal_orders``, and self-play picks
        uniformly among them as before (``provides_order_tree`` is False)."""
        return (OrderGroup(label="Orders", orders=tuple(self.legal_orders(state, role, ctx))),)

    def explain(self, state: S, role: str, topic: str, subject: str, ctx: Ctx) -> list[str]:
        """Lines for ``pbem explain TOPIC SUBJECT`` (ValueError for an unknown
        topic or subject). Default: no topics."""
        raise ValueError(f"rules '{self.SPEC.id}' explain nothing")

    def report_sections(self, view: V) -> list[tuple[str, list[str]]] | None:
        """The rules' own sections of ``pbem report`` (title, lines; "Key:
        value" lines print as table rows), from the view alone. Default:
        None, and the report shows ``render_text``."""
        return None

    def map_picture(self, view: V | None = None, overlays: tuple[str, ...] = ()) -> Picture | None:
        """The map with what ``view`` shows (the empty map without a view)
        and the ``overlays`` asked for (names in ``map_overlays``; ValueError
        for one it cannot draw). Default: None, the game has no map."""
        return None

    def describe_action(self, state: S, action: A, role: str | None) -> str:
        """The action in words for the history of ``role``'s replay (None:
        the public one), naming what that replay knows. Default: ``format_action``."""
        return self.format_action(action)

    def describe_dice(self, sides: tuple[int, ...], values: tuple[int | None, ...]) -> str | None:
        """The rules' own words for a roll (None: the numbers)."""
        return None

    def describe_roll(self, before: S, after: S, values: tuple[int | None, ...]) -> tuple[str, ...]:
        """What a roll did, in words, read from the state before and after
        it was resolved (e.g. "die 4: the defender retreats", "die 3:
        unused"); one line per result. Default: nothing more than the dice."""
        return ()

    def happenings(self, before: S, after: S, step: Step, role: str | None) -> tuple[Happening, ...]:
        """What ``step`` made happen, for the reader ``role`` (None: the
        public; "*": the audit, which knows everything): combats as tables,
        eliminations, losses, routs, supply results, cards played, each with
        its rule. Called by the replay of that reader after every action of
        the game (not the engine's deck steps), every roll and every event's
        openings; the report and ``pbem log`` print them.
        Said only from what ``role`` may know: read ``view(before, role)``
        and ``view(after, role)`` (and the public step), never a hidden
        value of the states (the contract suite checks that the happenings
        of a side folded with every secret equal those folded with its
        own). Default: nothing."""
        return ()

    def turn_label(self, state: S) -> str:
        """The stretch of play a player calls a turn, for counting the emails
        it costs (benchmarks/emails.py), e.g. "Month 1, Player-Turn 2 (axis)";
        "" by default: the game is counted as one stretch."""
        return ""

    def scenario_info(self, scenario: str) -> str:
        """One line about a scenario for ``pbem new``'s list; "" by default."""
        return ""

    def demo_orders(self, state: S, role: str, ctx: Ctx) -> list[str] | None:
        """The scripted orders of ``demo`` for ``role`` now; None when the
        script is over."""
        return None

    def deck_task(self, state: S) -> DeckTask | None:
        """While ``pending`` returns a ``pbem.deck.DECK`` decision: the deck
        work the engine must do for the role (pbem/deck.py). Default: no deck."""
        return None

    def on_deck(self, state: S, ctx: Ctx) -> tuple[S, list[Problem]]:
        """The deck work asked for is done and checked; cards are seen
        through ``ctx.card``. Needed by rules whose ``deck_task`` asks."""
        raise RulesError(f"rules '{self.SPEC.id}' asked for deck work but do not take it")

    def data_check_report(self) -> tuple[list[str], bool] | None:
        """``pbem rules check``: lines checking the data against the
        rulebook's counts, and whether all hold. Default: None (no check)."""
        return None

    def not_now(self, state: S, role: str, text: str = "") -> list[Problem]:
        """Why familiar orders are not legal at this step, each with its rule
        (issue 21 point 7). With ``text`` (an order ``parse_order`` refused):
        the reason that order of another step has, [] if the game has none to
        add. Without: one Problem per familiar kind of order that is not legal
        now, its message starting with an example of the order, for ``pbem
        options``' "not now:" lines. Default: [] (the game says nothing more)."""
        return []

    def waiting(self, state: S, role: str | None) -> list[str]:
        """What is under way and not yet settled, in words with its rule, for
        ``role`` (None: the public), from public facts only: e.g. hits scored
        and not yet placed, the half-hits an elite unit or a Minefield leaves
        pending (issue 21 point 3). ``pbem show``, the report and the map
        print it. Default: [] (nothing said)."""
        return []

    def forced_order(self, state: S, role: str, ctx: Ctx) -> str | None:
        """The order ``role`` must give now when the step is forced *in the
        public view* (issue 21 point 5): the step's kind alone leaves one
        legal order, whatever either player holds hidden (a reveal the rules
        require, a loss the rules place), so giving it at once tells the
        opponent nothing. None (the default) when there is a choice, or when
        only ``role``'s hidden values make the step forced: answering at once
        would then tell the opponent about them (PLAN "Settled"). pbem gives
        the order by itself, in the automatic answer, only when
        ``legal_orders`` is exactly ``[order]`` and it commits no new secret."""
        return None

    def standing_orders(self) -> dict[str, str]:
        """The standing orders a player may set (issue 21 point 5; ``pbem
        standing``): name -> what it orders, in words, with its rule. A
        standing order settles a routine choice the rules leave to the player
        (e.g. "place hits as the listed 'auto' placement does") in advance,
        so that pbem's automatic answer gives it while the player is away.
        {} (the default): the game offers none."""
        return {}

    def standing_order(self, state: S, role: str, ctx: Ctx, names: frozenset[str]) -> str | None:
        """The order the standing orders ``names`` that ``role`` has set give
        at the pending step, or None (the default) when none of them covers
        it. Asked only when the decision is ``role``'s; the order must be one
        of ``legal_orders`` (pbem does not list them again: its draft path
        checks the order), and pbem gives it in its automatic answer only when
        it commits no new secret."""
        return None

    def label_owner(self, state: S, label: str) -> str | None:
        """Who may commit under ``label`` (issue 27 point 2; asked with the
        state after the event that commits it, which may begin the stretch
        of play the label belongs to): a role; ``NOBODY`` for a label outside every
        namespace the game declares (or nobody's yet); None when the game
        does not say (the default: any player may, first come). The engine
        refuses a commitment under another role's label, or NOBODY's, naming
        the signer. It checks its own labels (``deck/<round>/seed/<role>``)
        itself and never asks the game about them."""
        return None


#: Kept for type annotations in the engine: any game.
RulesModule = Rules[Any, Any, Any]


#: The members a playable game overrides (the rest have defaults).
REQUIRED: tuple[str, ...] = (
    "SPEC", "action_type", "state_type", "initial_state", "pending", "legal_actions", "check", "apply",
    "view", "outcome", "parse_order", "format_action", "render_text",
)

_registered: dict[str, Rules[Any, Any, Any]] = {}


def register(rules: Rules[Any, Any, Any]) -> None:
    """Register a game directly (tests; entry points are the normal way)."""
    _registered[rules.SPEC.id] = rules


def unregister(rules_id: str) -> None:
    _registered.pop(rules_id, None)


def _entry_points() -> Mapping[str, importlib.metadata.EntryPoint]:
    """Every installed distribution's games (plugins included), by name: a full
    scan with importlib.metadata, which is imported here only (its import pulls
    email and zipfile, a tenth of a cold ``pbem show``, issue 20)."""
    import importlib.metadata

    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def available() -> list[str]:
    """Ids of every rules module this installation can load."""
    return sorted(set(_entry_points()) | set(_registered))


class _EntryPoint(msgspec.Struct, frozen=True):
    """One entry point of a distribution (``name = value`` under ``[group]``),
    loaded as ``importlib.metadata.EntryPoint.load`` loads it: the module,
    then the attributes after ':' one by one."""

    name: str
    value: str
    group: str

    #: The syntax importlib.metadata accepts: ``module[:attr.attr] [extras]``.
    PATTERN = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")

    def load(self) -> Any:
        """The object the entry point names; NotFound if its value is not
        ``module:attribute`` (an ImportError or AttributeError of the
        named module propagates, as importlib.metadata's does)."""
        match = self.PATTERN.match(self.value)
        if match is None:
            raise NotFound(f"entry point '{self.name}' of group '{self.group}' names no object "
                           f"('{self.value}' is not module:attribute)")
        obj = importlib.import_module(match["module"])
        for attr in filter(None, (match["attr"] or "").split(".")):
            obj = getattr(obj, attr)
        return obj


def _parse_entry_points(text: str) -> list[_EntryPoint] | None:
    """The entry points of an ``entry_points.txt``, in file order, read exactly as
    importlib.metadata reads them (``Sectioned`` of Python 3.11-3.13): each line
    stripped; blank lines and lines starting with '#' skipped; ``[group]``
    starts a group (every '[' and ']' stripped from its ends); lines before the
    first group ignored; ``name = value`` split at the first '=', both sides
    stripped. None for a line without '=' (importlib.metadata fails on it: the
    caller falls back to it, so that pbem does exactly what it did)."""
    out: list[_EntryPoint] = []
    group: str | None = None
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line.strip("[]")
            continue
        if group is None:
            continue
        name, eq, value = line.partition("=")
        if not eq:
            return None
        out.append(_EntryPoint(name.strip(), value.strip(), group))
    return out


def _own_entry_points_text() -> str | None:
    """The ``entry_points.txt`` of the installed pbem, found where
    ``importlib.metadata.distribution("pbem")`` finds it (the first directory
    of sys.path holding a ``pbem[-version].dist-info`` or ``.egg-info``, any
    case, in directory order: importlib.metadata's normalised name of such a
    directory is "pbem" exactly when the part before its first '-' is), without
    importing importlib.metadata. None when this quick search cannot tell:
    no such directory, no entry_points.txt in it, a zip, an egg or an entry
    other than a string on sys.path, or another finder of distributions on
    sys.meta_path (the caller then asks importlib.metadata itself)."""
    from importlib.machinery import PathFinder

    if any(getattr(f, "find_distributions", None) is not None for f in sys.meta_path if f is not PathFinder):
        return None
    for entry in sys.path:
        if not isinstance(entry, str) or entry.lower().endswith(".egg"):  # (a Path object, bytes)
            return None
        root = entry or "."
        try:
            children = os.listdir(root)
        except NotADirectoryError:  # a zip archive on sys.path
            return None
        except OSError:  # importlib.metadata skips what it cannot list
            continue
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")) and low.rpartition(".")[0].partition("-")[0] == "pbem":
                try:
                    with open(os.path.join(root, child, "entry_points.txt"), encoding="utf-8") as f:
                        return f.read()
                except OSError:
                    return None
    return None


def _own_entry_point(rules_id: str) -> _EntryPoint | None:
    """``rules_id`` among the games pbem's own distribution registers: its
    entry_points.txt read directly (above), else through importlib.metadata
    (one dist-info instead of every installed one). None if pbem's
    distribution does not register it (or pbem is a checkout on sys.path,
    not installed): the caller then scans every distribution."""
    text = _own_entry_points_text()
    parsed = _parse_entry_points(text) if text is not None else None
    if parsed is not None:
        return next((ep for ep in parsed if ep.group == ENTRY_POINT_GROUP and ep.name == rules_id), None)
    import importlib.metadata

    try:
        own = importlib.metadata.distribution("pbem").entry_points
    except importlib.metadata.PackageNotFoundError:
        return None
    found = next(iter(own.select(group=ENTRY_POINT_GROUP, name=rules_id)), None)
    return None if found is None else _EntryPoint(found.name, found.value, found.group)


def load_any(rules_id: str) -> Rules[Any, Any, Any]:
    """The game registered as ``rules_id`` (possibly not yet playable): one
    registered in-process, else pbem's own games, else any installed
    plugin's. NotFound if there is none or the entry point does not name
    an instance of ``Rules``."""
    if rules_id in _registered:
        return _registered[rules_id]
    ep: _EntryPoint | importlib.metadata.EntryPoint | None = _own_entry_point(rules_id) or _entry_points().get(rules_id)
    if ep is None:
        known = ", ".join(available()) or "none"
        raise NotFound(f"no rules module '{rules_id}' is installed (available: {known})")
    rules = ep.load()
    if not isinstance(rules, Rules):
        raise NotFound(f"rules '{rules_id}' ({ep.value}) is not a pbem.rulesapi.Rules instance")
    return rules


def missing_parts(rules: Rules[Any, Any, Any]) -> list[str]:
    """The required members ``rules`` leaves to the contract's base class."""
    own = [vars(c) for c in type(rules).__mro__ if c is not Rules and issubclass(c, Rules)]
    return [name for name in REQUIRED if not any(name in d for d in own)]


def provides_order_tree(rules: Rules[Any, Any, Any]) -> bool:
    """Whether ``rules`` lists its orders as a tree of its own
    (``Rules.order_tree`` overridden) rather than the default flat group."""
    return type(rules).order_tree is not Rules.order_tree


def load(rules_id: str) -> Rules[Any, Any, Any]:
    """A playable game; NotFound if absent or incomplete."""
    rules = load_any(rules_id)
    missing = missing_parts(rules)
    if missing:
        raise NotFound(f"rules '{rules_id}' cannot host games yet: it does not provide "
                       f"{', '.join(missing)}")
    return rules


def is_frozen(rules_id: str) -> bool:
    """Whether ``rules_id`` names a frozen older version (``ritd@3``): kept
    for the games started under it, never offered for a new game."""
    return "@" in rules_id


def load_version(rules_id: str, version: str) -> Rules[Any, Any, Any]:
    """The rules a game started under ``rules_id`` version ``version`` plays
    with: the current game if it is that version, else the frozen package
    of that released version (entry point ``<id>@<version>``, e.g.
    ``ritd@3``). VersionMismatch naming what this pbem has otherwise."""
    from pbem.errors import VersionMismatch

    current = load(rules_id)
    if current.SPEC.version == version:
        return current
    frozen_id = f"{rules_id}@{version}"
    if _own_entry_point(frozen_id) is not None or frozen_id in available():
        frozen = load(frozen_id)
        if frozen.SPEC.id == rules_id and frozen.SPEC.version == version:
            return frozen
    kept = sorted(r.split("@", 1)[1] for r in available() if r.startswith(f"{rules_id}@"))
    raise VersionMismatch(f"this game needs rules {rules_id} version {version}; this pbem has version "
                          f"{current.SPEC.version}" + (f" and the frozen versions {', '.join(kept)}" if kept else ""))


def package_data(package: str, name: str) -> bytes:
    """The bytes of data file ``name`` in ``package``, as
    ``importlib.resources.files(package).joinpath(name).read_bytes()`` gives
    them: read through the package's own loader (a directory, a zip archive),
    and through importlib.resources where the loader cannot tell (a namespace
    package, a loader without ``get_data``). importlib.resources costs a few
    milliseconds to import, at every start of every command (issue 20)."""
    spec = importlib.import_module(package).__spec__
    loader = getattr(spec, "loader", None)
    places = list(getattr(spec, "submodule_search_locations", None) or ())
    if len(places) == 1 and hasattr(loader, "get_data") and name and "/" not in name and name not in (".", ".."):
        try:
            return bytes(loader.get_data(os.path.join(places[0], name)))  # type: ignore[union-attr]
        except OSError:
            pass  # importlib.resources then says what is wrong, as before
    from importlib import resources

    return resources.files(package).joinpath(name).read_bytes()


def data_hash(spec: Spec, read: Callable[[str], bytes] | None = None) -> bytes:
    """SHA-256 over the rules' data files (name and bytes, length-prefixed), pinned in genesis."""
    if read is None:
        if spec.data_files and not spec.data_package:
            raise NotFound(f"rules '{spec.id}' lists data files but no data package")
        package = spec.data_package

        def read(name: str) -> bytes:
            return package_data(package, name)

    h = hashlib.sha256(b"pbem/v1/data\x00" + spec.id.encode() + b"\x00" + spec.version.encode())
    for name in spec.data_files:
        data = read(name)
        for part in (name.encode(), data):
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
    return h.digest()
