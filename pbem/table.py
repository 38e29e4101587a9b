"""Two local players at one table: ``pbem demo`` and ``pbem selfplay``.

A ``LocalTable`` holds two throwaway identities and one game directory per
player. A *policy* chooses each player's orders; the table drives the game
exactly as two people exchanging turn files would, through pbem.session
only: the first role creates the game (``new_game``), the other joins
(``join_game``), then whoever must decide adds orders (``add_orders``),
signs them (``send``) and the turn file is delivered to the other
directory (``receive``), whose automatic entropy answer is delivered back.
Each player's ``Seat`` stays in memory between turns: ``send`` and
``receive`` keep it current, so nothing is replayed twice; within a turn the
Seat keeps the draft's event folded (``session.Composer``), so each order a
policy adds costs O(1) rules steps, not a replay of the draft.

Nothing here knows a game. A game offers a demo with two optional hooks of
the contract (pbem.rulesapi.Rules; see ``offers_demo``):

- ``demo``: the scenario (and options) the demo plays;
- ``demo_orders(state, role, ctx) -> list[str] | None``: the orders
  ``role`` gives now, in the syntax of ``parse_order``, given the state and
  ctx of ``role``'s own replay (its secrets known, its unsent orders
  applied). The table calls it whenever ``role`` has a (non-dice) decision
  and calls it again while the decision is still ``role``'s; ``[]`` sends
  the event as it stands; ``None`` ends the script (the demo stops).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from pbem import rulesapi, session
from pbem.codec import Genesis
from pbem.codec import Player as GenesisPlayer
from pbem.deck import DECK
from pbem.errors import IllegalAction, PbemError, UsageProblem
from pbem.game import Replay
from pbem.identity import Identity, save_identity
from pbem.rulesapi import DICE, Decision, Outcome, RulesModule
from pbem.store import GameDir
from pbem.turnfile import parse_turn
from pbem.vault import VaultData

#: The passphrase of every key the table writes. The keys are throwaway: the
#: passphrase is printed and documented, so they protect nothing.
THROWAWAY_PASSPHRASE = "pbem throwaway demo key"

#: Rules preferred by ``pbem demo`` when they offer one.
PREFERRED_DEMO = "ritd"

_RANGE = re.compile(r"<(\d+)-(\d+)>")


class TableError(PbemError):
    """The game cannot go on at a local table: a rules module (or its demo
    script) offered an order it then rejects, or no order at a decision, or a
    player could not end its turn (``MAX_TURN_ORDERS``)."""

    exit_code = 1


# -- which rules offer a demo ---------------------------------------------------

def offers_demo(rules: rulesapi.RulesModule) -> bool:
    """True if ``rules`` is playable and offers a scripted ``demo``."""
    return not rulesapi.missing_parts(rules) and rules.demo is not None


def demo_rules_ids() -> list[str]:
    """Ids of the installed rules modules that offer a demo (``PREFERRED_DEMO`` first)."""
    found = []
    for rid in rulesapi.available():
        if rulesapi.is_frozen(rid):
            continue
        try:
            if offers_demo(rulesapi.load_any(rid)):
                found.append(rid)
        except (PbemError, ImportError):  # a broken (or half-written) module must not hide the others
            continue
    return sorted(found, key=lambda rid: rid != PREFERRED_DEMO)


def demo_rules(rules_id: str | None = None) -> RulesModule:
    """The rules module ``pbem demo`` plays: ``rules_id`` (UsageProblem if it offers
    no demo, NotFound if absent), else ``PREFERRED_DEMO`` if it offers one, else the
    first installed one that does; UsageProblem if none does."""
    hint = "a demo needs the contract's optional hooks demo and demo_orders"
    if rules_id is not None:
        module = rulesapi.load_any(rules_id)
        if not offers_demo(module):
            others = demo_rules_ids()
            raise UsageProblem(f"rules '{rules_id}' offer no demo ({hint}); "
                               + (f"these do: {', '.join(others)}" if others else "no installed rules do"))
        return module
    ids = demo_rules_ids()
    if not ids:
        installed = ", ".join(rulesapi.available()) or "none"
        raise UsageProblem(f"no installed rules module offers a demo ({hint}; installed: {installed})")
    return rulesapi.load(ids[0])


# -- policies -------------------------------------------------------------------------

@dataclass
class Turn:
    """What a policy sees at one decision of ``role``: its own replay with its
    unsent orders applied (``seat`` is None while the game is being created)."""

    rules: RulesModule
    role: str
    replay: Replay
    seat: session.Seat | None = None

    @property
    def state(self) -> Any:
        return self.replay.state

    @property
    def decision(self) -> Decision | None:
        return self.replay.pending()

    def ctx(self) -> Any:
        return self.replay.ctx(self.role)

    def legal(self) -> list[str]:
        """Every order ``role`` may give now (``session.legal_orders`` once seated)."""
        if self.seat is not None:
            return session.legal_orders(self.seat)
        decision = self.decision
        if decision is None or decision.role != self.role or decision.kind in (DICE, DECK):
            return []
        return list(self.rules.legal_orders(self.state, self.role, self.ctx()))

    def order_tree(self) -> tuple[rulesapi.OrderGroup, ...]:
        """The orders ``role`` may give now as the rules' tree of groups
        (``Rules.order_tree``; its leaves are ``legal``)."""
        decision = self.decision
        if decision is None or decision.role != self.role or decision.kind in (DICE, DECK):
            return ()
        return tuple(self.rules.order_tree(self.state, self.role, self.ctx()))

    def situation(self) -> str:
        return self.rules.render_text(self.rules.view(self.state, self.role))


#: A policy returns the orders to add now: a non-empty list, ``[]`` to send the
#: event as it stands, or None to stop playing.
Policy = Callable[[Turn], list[str] | None]


def demo_policy(rules: Any) -> Policy:
    """The rules' own ``demo_orders`` script."""

    def policy(turn: Turn) -> list[str] | None:
        orders = rules.demo_orders(turn.state, turn.role, turn.ctx())
        return None if orders is None else list(orders)

    return policy


def expand_order_templates(orders: Sequence[str]) -> list[str]:
    """Orders with a ``<lo-hi>`` placeholder (how ``format_action`` writes a number the
    player chooses, e.g. 'setup speed <1-3>') expanded into one order per integer."""
    out: list[str] = []
    for order in orders:
        m = _RANGE.search(order)
        if m is None:
            out.append(order)
            continue
        lo, hi = int(m.group(1)), int(m.group(2))
        out += expand_order_templates([order[:m.start()] + str(n) + order[m.end():] for n in range(lo, hi + 1)])
    return out


#: Default chance that self-play, choosing among groups of an order tree
#: some of which end the current step (``OrderGroup.ends_step``), takes
#: one of those: a uniform pick among a movement phase's 40 unit groups and
#: one "end movement" group ends the phase after ~40 orders, and a game
#: whose units may move again need not end at all.
END_BIAS = 0.1

#: A player of the table whose turn reaches this many orders takes it back
#: and plays it again (``LocalTable._take_turn``), at most ``TURN_RETRIES``
#: times. Random play can wander without end where the step cannot end and
#: some orders never run out: a Panzerarmee Afrika movement phase overstacked
#: with no unit left to move (§4) still offers every rail move of every
#: supply installation, as often as wanted (§11.3.1); a self-play of the
#: campaign once added 5,431 of them to one turn. The longest turns of the
#: games' self-plays are some 40 orders.
MAX_TURN_ORDERS = 200
TURN_RETRIES = 20


class RandomPolicy:
    """Random legal orders, one at a time, from ``random.Random(seed)``.
    ``choices`` records every choice made, in order.

    For rules without an order tree of their own (``provides_order_tree``)
    the choice is uniform among every legal order, exactly as before the
    tree existed: the same seed gives the same game. For rules with one, it
    samples level by level: a group (with probability ``end_bias`` one of
    the groups that end the step, where the level has any), then within it
    a sub-group or an order, down to an order; an empty group is dropped
    and another chosen."""

    def __init__(self, seed: int, end_bias: float = END_BIAS) -> None:
        if not 0.0 <= end_bias <= 1.0:
            raise UsageProblem(f"the end bias is a probability, between 0 and 1 (not {end_bias})")
        self.rng = random.Random(seed)
        self.end_bias = end_bias
        self.choices: list[str] = []

    def choose(self, legal: Sequence[str]) -> str:
        choice = self.rng.choice(list(legal))
        self.choices.append(choice)
        return choice

    def choose_in_tree(self, tree: Sequence[rulesapi.OrderGroup]) -> str | None:
        """An order of ``tree`` sampled level by level (None: the tree is empty)."""
        choice = self._pick(list(tree))
        if choice is not None:
            self.choices.append(choice)
        return choice

    def _pick(self, groups: list[rulesapi.OrderGroup]) -> str | None:
        while groups:
            ending = [g for g in groups if g.ends_step]
            pool = ending if ending and self.end_bias and self.rng.random() < self.end_bias else groups
            group = self.rng.choice(pool)
            choice = self._within(group)
            if choice is not None:
                return choice
            groups.remove(group)
        return None

    def _within(self, group: rulesapi.OrderGroup) -> str | None:
        own = expand_order_templates(group.leaf_orders())
        subs = list(group.groups())
        while subs:
            # The group's own orders count as one more branch beside its sub-groups.
            if own and self.rng.randrange(len(subs) + 1) == len(subs):
                return self.rng.choice(own)
            choice = self._pick(subs)
            if choice is not None:
                return choice
            subs = []  # every sub-group was empty
        return self.rng.choice(own) if own else None

    def __call__(self, turn: Turn) -> list[str] | None:
        # (getattr: a policy may be handed a stand-in for a Turn without rules)
        rules = getattr(turn, "rules", None)
        if rules is not None and rulesapi.provides_order_tree(rules):
            choice = self.choose_in_tree(turn.order_tree())
            if choice is None:
                raise self._stuck(turn)
            return [choice]
        legal = expand_order_templates(turn.legal())
        if not legal:
            raise self._stuck(turn)
        return [self.choose(legal)]

    @staticmethod
    def _stuck(turn: Turn) -> TableError:
        return TableError(f"stuck: the rules offer {turn.role} no legal order at its decision "
                          f"({session.pending_text(turn.decision)}) after event {turn.replay.seq}; "
                          f"a rules bug. The situation from {turn.role}'s side:\n{turn.situation()}")


# -- the table ----------------------------------------------------------------------------

@dataclass
class Player:
    role: str
    identity: Identity
    key_path: Path
    gd: GameDir
    seat: session.Seat | None = None


@dataclass
class PlayResult:
    events: int
    outcome: Outcome | None
    #: "outcome" (the game is over), "script" (the policy stopped) or "max-events"
    stopped: str


@dataclass
class LocalTable:
    """Two players of ``rules`` at one table in ``directory``: game directories
    ``directory/<role>`` and throwaway keys ``directory/<role>.key``."""

    rules: RulesModule
    directory: Path
    scenario: str
    options: tuple[str, ...]
    players: list[Player]
    echo: Callable[[str], None] = lambda line: None
    log: list[str] = field(default_factory=list)  # one line per turn file
    #: The id the rules are registered under ("ritd", or a frozen "ritd@3").
    rules_id: str = ""
    #: Whether pbem takes the steps the rules declare forced in the public view
    #: in its automatic answers, as 'pbem receive' does (issue 21 point 5); off by
    #: default, so that the logs of scripted games stay as they were.
    forced: bool = False
    #: Standing orders both players set ('pbem standing'; issue 21 point 5), given by
    #: pbem's automatic answers when ``forced`` is on.
    standing: tuple[str, ...] = ()

    @classmethod
    def create(cls, directory: Path, rules_id: str, scenario: str, options: Sequence[str] = (), *,
               echo: Callable[[str], None] | None = None) -> LocalTable:
        """Check the scenario and options, and write one throwaway identity per role
        (passphrase ``THROWAWAY_PASSPHRASE``); the game starts with ``play``."""
        rules = rulesapi.load(rules_id)
        spec = rules.SPEC
        if scenario not in spec.scenarios:
            raise UsageProblem(f"unknown scenario '{scenario}' of rules {spec.id} "
                               f"(choose from {', '.join(spec.scenarios)})")
        bad = rulesapi.option_problems(spec, scenario, options)
        if bad:
            raise UsageProblem("; ".join(bad))
        directory = directory.resolve()
        taken = [p for role in spec.roles for p in (directory / role, directory / f"{role}.key")
                 if p.exists()]
        if taken:
            raise UsageProblem(f"{directory} already holds {', '.join(p.name for p in taken)}; "
                               "choose a new or empty directory")
        players = []
        for role in spec.roles:
            ident = Identity.generate(f"{role} (throwaway)")
            key_path = directory / f"{role}.key"
            save_identity(ident, key_path, THROWAWAY_PASSPHRASE)
            players.append(Player(role, ident, key_path, GameDir(directory / role)))
        return cls(rules, directory, scenario, tuple(options), players, echo or (lambda line: None),
                   rules_id=rules_id)

    # -- queries --

    def player(self, role: str) -> Player:
        return next(p for p in self.players if p.role == role)

    def other(self, player: Player) -> Player:
        return next(p for p in self.players if p is not player)

    @property
    def started(self) -> bool:
        return all(p.seat is not None for p in self.players)

    @property
    def replay(self) -> Replay:
        """The first role's replay (both players hold the same log between turns)."""
        seat = self.players[0].seat
        if seat is None:
            raise UsageProblem("the game has not started")
        return seat.replay

    # -- playing --

    def play(self, policy: Policy, max_events: int, *, open_at_end: bool = True) -> PlayResult:
        """Create and join the game if not yet done, then let ``policy`` decide for
        whoever must decide until the game is over, the policy stops, or the log
        holds ``max_events`` events. At the end of a finished game both players
        open all their commitments, so that the audit is complete."""
        if not self.started and not self._start(policy):
            host = self.players[0].seat
            return PlayResult(0 if host is None else host.replay.seq + 1, None, "script")
        stopped = "max-events"
        while self.replay.seq + 1 < max_events:
            if self.replay.outcome() is not None:
                stopped = "outcome"
                break
            decision = self.replay.pending()
            if decision is None or not self._take_turn(self.player(decision.role), policy):
                stopped = "script"
                break
        outcome = self.replay.outcome()
        if outcome is not None:
            stopped = "outcome"
            if open_at_end:
                self._open_all()
        return PlayResult(self.replay.seq + 1, outcome, stopped)

    def _start(self, policy: Policy) -> bool:
        """Genesis by the first role, acceptance by the other; False if the policy stops."""
        host, guest = self.players
        spec = self.rules.SPEC
        genesis = Genesis(rules=spec.id, rules_version=spec.version,
                          data_hash=rulesapi.data_hash(spec).hex(), scenario=self.scenario,
                          nonce="00" * 32, options=list(self.options),
                          players=sorted([GenesisPlayer(role=p.role, key=p.identity.public_text)
                                          for p in self.players], key=lambda p: p.role))
        orders = self._setup_orders(policy, host.role, Replay(self.rules, role=host.role), genesis)
        if orders is None:
            return False
        sent = session.new_game(host.gd.path, self.rules_id or spec.id, self.scenario, host.role, host.identity, host.key_path,
                                guest.identity.public_text, options=self.options, orders=orders)
        self._set_standing(host)
        host.seat = session.load_seat(host.gd, host.identity)
        self._announce(host, sent, orders)
        invitation = Path(sent.turn_file).read_bytes()
        invited = Replay(self.rules, role=guest.role)
        for stored in parse_turn(invitation).events:
            invited.apply_stored(stored)
        decision = invited.pending()
        orders = []
        if decision is not None and decision.role == guest.role and decision.kind not in (DICE, DECK):
            orders = self._setup_orders(policy, guest.role, invited, None)
            if orders is None:
                return False
        joined, _ = session.join_game(guest.gd.path, invitation, guest.identity, guest.key_path, orders=orders)
        self._set_standing(guest)
        guest.seat = session.load_seat(guest.gd, guest.identity)
        self._announce(guest, joined, orders)
        self._deliver(host, joined)
        return True

    def _set_standing(self, player: Player) -> None:
        if self.standing:
            local = player.gd.read_local()
            player.gd.write_local(msgspec.structs.replace(local, standing=self.standing))

    def _setup_orders(self, policy: Policy, role: str, base: Replay, genesis: Genesis | None) -> list[str] | None:
        """The orders of ``role``'s genesis or acceptance event, asked of the policy
        while the decision is ``role``'s (checked as ``new_game``/``join_game`` will)."""
        data = VaultData(game="" if genesis is not None else base.game_hex, role=role)
        drafted: list[session.DraftOrder] = []
        held: session.Composer | None = None  # the acceptance's fold, kept between the policy's answers
        texts: list[str] = []
        retries = 0
        while True:
            probe = held.probe if held is not None else session.simulate_draft(base, role, data, drafted, genesis)
            decision = probe.pending()
            if decision is None or decision.role != role or decision.kind in (DICE, DECK):
                return texts
            if self._too_long(texts, retries, role, base.seq, decision):
                drafted, held, texts, retries = [], None, [], retries + 1  # the turn is played again
                continue
            orders = policy(Turn(self.rules, role, probe))
            if orders is None:
                return None
            if not orders:
                return texts
            try:
                drafted, held = session.compose_orders(self.rules, base, role, data, drafted, orders,
                                                       genesis=genesis, held=held)
            except IllegalAction as exc:
                raise self._rejected(role, orders, base.seq, exc) from None
            texts += orders

    @staticmethod
    def _too_long(texts: list[str], retries: int, role: str, seq: int, decision: Decision) -> bool:
        """Whether the turn ordered so far (``texts``) is to be taken back and
        played again (``MAX_TURN_ORDERS``); TableError if ``TURN_RETRIES`` were."""
        if len(texts) < MAX_TURN_ORDERS:
            return False
        if retries >= TURN_RETRIES:
            raise TableError(f"{role} played event {seq + 1} {retries + 1} times, {MAX_TURN_ORDERS} orders each "
                             f"without ending its turn ({session.pending_text(decision)})")
        return True

    def _take_turn(self, player: Player, policy: Policy) -> bool:
        """``player`` decides (policy), sends, and the turn file is delivered; False
        if the policy stops (its unsent orders are dropped)."""
        seat = player.seat
        assert seat is not None
        texts: list[str] = []
        retries = 0
        with player.gd.lock(exclusive=True):
            while True:
                probe, _ = session.draft_replay(seat)
                decision = probe.pending()
                if decision is None or decision.role != player.role or decision.kind in (DICE, DECK):
                    break
                if self._too_long(texts, retries, player.role, seat.replay.seq, decision):
                    session.undo(seat, None)  # the whole draft back: the turn is played again
                    texts, retries = [], retries + 1
                    continue
                orders = policy(Turn(self.rules, player.role, probe, seat))
                if orders is None:
                    session.undo(seat, None)
                    return False
                if not orders:
                    break
                try:
                    session.add_orders(seat, orders)
                except IllegalAction as exc:
                    raise self._rejected(player.role, orders, seat.replay.seq, exc) from None
                texts += orders
            sent = session.send(seat)
        self._announce(player, sent, texts)
        self._deliver(self.other(player), sent)
        return True

    def _open_all(self) -> None:
        """Both players open every commitment (the game is over): the audit is complete."""
        last = self.replay.history[-1].author
        for player in sorted(self.players, key=lambda p: p.role == last):
            assert player.seat is not None
            with player.gd.lock(exclusive=True):
                sent = session.send(player.seat, open_all=True)
            self._announce(player, sent, [], "opens all its commitments for the audit")
            self._deliver(self.other(player), sent)

    def _deliver(self, to: Player, sent: session.Sent) -> None:
        """Deliver a turn file; pass automatic entropy answers back until none is left."""
        while True:
            assert to.seat is not None
            with to.gd.lock(exclusive=True):
                result = session.receive(to.seat, [(Path(sent.turn_file).name, Path(sent.turn_file).read_bytes())],
                                         forced=self.forced)
            if result.auto_reply is None:
                return
            sent = result.auto_reply
            self._announce(to, sent, [], "automatic: " + ("; ".join(sent.said) or "the shared deck's work"))
            to = self.other(to)

    def _announce(self, player: Player, sent: session.Sent, orders: Sequence[str], what: str = "no orders") -> None:
        seqs = sent.seqs
        span = str(seqs[0]) if len(seqs) == 1 else f"{seqs[0]}-{seqs[-1]}"
        line = f"{span} {player.role}: " + ("; ".join(orders) if orders else f"({what})")
        assert player.seat is not None
        history = player.seat.replay.history
        rolls = [history[s].rolls for s in seqs if s < len(history) and history[s].rolls is not None]
        for r in rolls:
            assert r is not None
            line += f" - dice of event {r.asked_seq}: {session.dice_text(r.values, r.sides, self.rules, r.purposes, r.results)}"
        self.log.append(line)
        self.echo(line)

    def _rejected(self, role: str, orders: Sequence[str], seq: int, exc: PbemError) -> TableError:
        return TableError(f"{role}'s orders {list(orders)} after event {seq} were rejected by the rules "
                          "that offered them (a rules or demo-script bug):", details=exc.details or [exc.message])

    # -- after the game --

    def reports(self, out: Path) -> list[Path]:
        """Each player's report, HTML and text, as ``pbem report`` writes them: ``out/<role>-report.html|.txt``."""
        from pbem import report as reportmod
        from pbem.fileio import write_atomic

        paths = []
        out.mkdir(parents=True, exist_ok=True)
        for player in self.players:
            assert player.seat is not None
            with player.gd.lock(exclusive=False):
                built = reportmod.build(player.seat.replay, player.role)
            for fmt, suffix in (("html", "html"), ("text", "txt")):
                path = out / f"{player.role}-report.{suffix}"
                write_atomic(path, reportmod.render(built, fmt).encode("utf-8"))  # type: ignore[arg-type]
                paths.append(path)
        return paths

    def verify(self) -> list[str]:
        """``pbem verify`` of both players' logs (public keys only); raises on any failure."""
        from pbem.errors import Equivocation, VerifyError

        lines, heads = [], set()
        for player in self.players:
            with player.gd.lock(exclusive=False):
                replay = session.load_public(player.gd)
                evidence = [str(e) for e in session.evidence_records(player.gd, replay) if e.accuses]
            if evidence:
                raise Equivocation(f"equivocation evidence in {player.gd.path}:", details=evidence)
            heads.add(replay.head)
            lines.append(f"verified {player.role}'s log {player.gd.path}: {replay.seq + 1} events, "
                         f"head {replay.head.hex()[:16]}")
        if len(heads) != 1:
            raise VerifyError("the two players' logs end at different events")
        return lines

    def remove_private_keys(self) -> None:
        """Delete the throwaway private key files (their .pub files stay)."""
        for player in self.players:
            player.key_path.unlink(missing_ok=True)

