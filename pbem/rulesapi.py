"""The interface between the engine and a game's rules (DESIGN 6).

A rules module is any object (usually a module) with the attributes listed
in ``REQUIRED``. It is found through the ``pbem.rules`` entry-point group, so
a third-party package can add a game without touching pbem:

    [project.entry-points."pbem.rules"]
    mygame = "mygame.rules"

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
import importlib.metadata
import importlib.resources
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import msgspec

from pbem.commit import decode_leaves as decode_set  # noqa: F401  (for rules: a whole set's opening)
from pbem.errors import NotFound

ENTRY_POINT_GROUP = "pbem.rules"

#: Decision kind meaning "waiting for this role's entropy to resolve dice".
DICE = "dice"


class Spec(msgspec.Struct, frozen=True):
    id: str
    version: str
    title: str
    roles: tuple[str, ...]
    scenarios: tuple[str, ...]
    options: tuple[str, ...] = ()
    #: Package holding the data files (read with importlib.resources).
    data_package: str = ""
    data_files: tuple[str, ...] = ()


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
    """

    role: str
    kind: str
    prompt: str = ""
    dice: tuple[int, ...] = ()
    secret: tuple[str, ...] = ()


class Problem(msgspec.Struct, frozen=True):
    """One reason an action is illegal, with the rule it breaks (e.g. "RB 7.1")."""

    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}" if self.rule else self.message


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

    def card(self, rnd: str, pos: int) -> str | None:
        return self._ctx.card(rnd, pos)


class ComposeCtx(Ctx, Protocol):
    """The Ctx handed to ``parse_order`` while a player composes orders."""

    def fresh(self) -> bytes:
        """16 fresh random bytes, e.g. for a public token that must not leak
        which hidden unit it is. Only here: check and apply never see it, so
        replays stay deterministic."""


class RulesModule(Protocol):
    SPEC: Spec
    Action: Any

    def initial_state(self, scenario: str, options: tuple[str, ...]) -> Any: ...
    def pending(self, state: Any) -> Decision | None: ...
    def legal_actions(self, state: Any, role: str, ctx: Ctx) -> list[Any]: ...
    def check(self, state: Any, action: Any, ctx: Ctx) -> list[Problem]: ...
    def apply(self, state: Any, action: Any, ctx: Ctx) -> Any: ...
    def resolve_dice(self, state: Any, values: tuple[int | None, ...], ctx: Ctx) -> Any: ...
    def on_open(self, state: Any, label: str, value: bytes, ctx: Ctx) -> tuple[Any, list[Problem]]: ...
    def view(self, state: Any, role: str | None) -> Any: ...
    def outcome(self, state: Any) -> Outcome | None: ...
    def parse_order(self, state: Any, role: str, text: str, ctx: ComposeCtx) -> Order: ...
    def format_action(self, action: Any) -> str: ...
    def render_text(self, view: Any) -> str: ...


REQUIRED: tuple[str, ...] = (
    "SPEC", "Action", "initial_state", "pending", "legal_actions", "check", "apply",
    "resolve_dice", "on_open", "view", "outcome", "parse_order", "format_action", "render_text",
)

#: Optional:
#: ``legal_orders(state, role, ctx) -> list[str]``: every order the role may
#: give now in the syntax of ``parse_order``, used by ``pbem options`` instead
#: of formatting ``legal_actions`` (for orders that carry secrets);
#: ``explain(state, role, topic, subject, ctx) -> list[str]``: lines for
#: ``pbem explain TOPIC SUBJECT`` (ValueError for an unknown topic or subject);
#: ``reveal_die(state, label, value, ctx) -> (state, problems)``: a secret die
#: becomes known to this replay because its seed ``label`` was opened (needed
#: by any rules module that asks for secret dice);
#: ``report_sections(view) -> list[tuple[str, list[str]]]``: the rules' own
#: sections of ``pbem report`` (title, lines; a line "Key: value" prints as a
#: table row), computed from the view alone (without it the report shows
#: ``render_text(view)``);
#: ``map_picture(view=None) -> pbem.board.Picture``: the map with the pieces
#: the view shows (the empty map without a view), for ``pbem report`` and
#: ``pbem map -g``; without it the report has no map. Rules that draw
#: overlays on request (e.g. a supply network) list their names in
#: ``MAP_OVERLAYS`` (tuple of str) and accept them as
#: ``map_picture(view, overlays=(...))``, computed from the view alone
#: (ValueError for one they cannot draw); pbem passes the keyword only when
#: the player asks (``--overlay``, ``--supply``), so a hook without it works;
#: ``MAP_OVERLAYS``: see ``map_picture``.
#: ``describe_action(state, action, role) -> str``: the action in words for
#: the history of a replay of ``role`` (None: the public replay; the audit's
#: role sees everything), e.g. naming the units that replay knows; without it
#: ``format_action``;
#: ``describe_dice(sides, values) -> str | None``: the rules' own words for a
#: roll (e.g. cards drawn as secret dice; None: shown as numbers);
#: ``scenario_info(scenario_id) -> str``: one line describing a scenario, for
#: ``pbem new``'s scenario list;
#: ``DEMO_SCENARIO`` (str), ``DEMO_OPTIONS`` (tuple of str) and
#: ``demo_orders(state, role, ctx) -> list[str] | None``: a scripted game for
#: ``pbem demo`` (pbem/table.py): the orders ``role`` gives at its decision
#: now, None when the script is over;
#: ``deck_task(state) -> pbem.deck.DeckTask | None`` and ``on_deck(state, ctx)
#: -> (state, problems)``: the shared deck (pbem.deck, DESIGN 4): while
#: ``pending`` returns a Decision of kind ``pbem.deck.DECK``, ``deck_task`` says
#: what the role must send (a shuffle step with its deals, or key openings);
#: pbem computes it from the player's seeds without asking, checks it on
#: receipt, then calls ``on_deck``; the rules see a card only through
#: ``ctx.card(round, position)`` (the label, or None where this replay cannot
#: see it), and must list ``pbem.deck.DeckStep | pbem.deck.DeckKeys`` in
#: their ``Action`` union;
#: ``on_open_leaf(state, label, key, value, ctx) -> (state, problems)``: one
#: leaf of the Merkle set ``label`` was opened (needed by any rules module
#: whose orders commit ``sets``); the whole set's opening at the audit comes
#: to ``on_open`` as usual, its value readable with ``decode_set``.
OPTIONAL: tuple[str, ...] = ("legal_orders", "explain", "reveal_die", "report_sections", "map_picture",
                             "MAP_OVERLAYS", "describe_action", "describe_dice", "scenario_info", "DEMO_SCENARIO",
                             "DEMO_OPTIONS", "demo_orders", "on_open_leaf", "deck_task", "on_deck")

_registered: dict[str, Any] = {}


def register(module: Any) -> None:
    """Register a rules module directly (tests; entry points are the normal way)."""
    _registered[module.SPEC.id] = module


def unregister(rules_id: str) -> None:
    _registered.pop(rules_id, None)


def _entry_points() -> Mapping[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def available() -> list[str]:
    """Ids of every rules module this installation can load."""
    return sorted(set(_entry_points()) | set(_registered))


def _own_entry_point(rules_id: str) -> importlib.metadata.EntryPoint | None:
    """``rules_id`` among the games pbem's own distribution registers: reading one
    dist-info instead of every installed one (0.06 ms against 0.6-1.2 ms here,
    more in a large environment) on every command."""
    try:
        own = importlib.metadata.distribution("pbem").entry_points
    except importlib.metadata.PackageNotFoundError:  # a checkout on sys.path, not installed
        return None
    return next(iter(own.select(group=ENTRY_POINT_GROUP, name=rules_id)), None)


def load_any(rules_id: str) -> Any:
    """The object registered as ``rules_id`` (possibly not yet playable): one
    registered in-process, else pbem's own games, else any installed plugin's."""
    if rules_id in _registered:
        return _registered[rules_id]
    ep = _own_entry_point(rules_id) or _entry_points().get(rules_id)
    if ep is None:
        known = ", ".join(available()) or "none"
        raise NotFound(f"no rules module '{rules_id}' is installed (available: {known})")
    return ep.load()


def missing_parts(module: Any) -> list[str]:
    return [name for name in REQUIRED if not hasattr(module, name)]


def load(rules_id: str) -> RulesModule:
    """A playable rules module; NotFound if absent or incomplete."""
    module = load_any(rules_id)
    missing = missing_parts(module)
    if missing:
        raise NotFound(f"rules '{rules_id}' cannot host games yet: it does not provide "
                       f"{', '.join(missing)}")
    return module


def data_hash(spec: Spec, read: Callable[[str], bytes] | None = None) -> bytes:
    """SHA-256 over the rules' data files (name and bytes, length-prefixed), pinned in genesis."""
    if read is None:
        if spec.data_files and not spec.data_package:
            raise NotFound(f"rules '{spec.id}' lists data files but no data package")
        package = spec.data_package

        def read(name: str) -> bytes:
            return importlib.resources.files(package).joinpath(name).read_bytes()

    h = hashlib.sha256(b"pbem/v1/data\x00" + spec.id.encode() + b"\x00" + spec.version.encode())
    for name in spec.data_files:
        data = read(name)
        for part in (name.encode(), data):
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
    return h.digest()
