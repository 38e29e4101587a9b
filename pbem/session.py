"""What the CLI does, without the CLI: create, join, compose, send, receive,
verify and audit games. Every function that changes a game directory holds
its exclusive lock and either completes or leaves the directory unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from pbem import codec, rulesapi, snapshot
from pbem import deck as deckmod
from pbem import vault as vaultmod
from pbem.claims import require_plausible_time, signing_time
from pbem.codec import Body, Clock, Commitment, Entropy, Genesis, LeafOpening, Opening, Player
from pbem.commit import MerkleSet, commit, decode_leaves, encode_leaves, set_from_seed
from pbem.deck import DECK
from pbem.dice import entropy_commitment, new_secret
from pbem.errors import (
    BadFile,
    Busy,
    Equivocation,
    ForeignGame,
    IllegalAction,
    NotFound,
    PbemError,
    StorageProblem,
    UsageProblem,
    VerifyError,
    VersionMismatch,
)
from pbem.fileio import make_dirs, read_regular, remove, write_atomic
from pbem.game import (
    AUDIT,
    EventInfo,
    OpenEvent,
    Replay,
    event_game,
    foreign_game_text,
    takeback_text,
)
from pbem.identity import Identity, fingerprint, parse_public, verify_signature
from pbem.private import PrivateChoices, key_of
from pbem.rulesapi import DICE, ActingAs, Ctx, Decision, Order, RulesModule, data_hash
from pbem.store import GameDir, LocalConfig
from pbem.text import escaped, shown
from pbem.turnfile import format_turn, parse_turn
from pbem.vault import Secret, VaultData

# -- drafts ---------------------------------------------------------------

class DraftOrder(msgspec.Struct, forbid_unknown_fields=True):
    text: str
    action: msgspec.Raw
    secrets: dict[str, Secret] = {}
    reveal: list[str] = []
    #: (set label, key): leaves of my Merkle sets this order opens.
    leaves: list[tuple[str, str]] = []


class Draft(msgspec.Struct, forbid_unknown_fields=True):
    base: int
    orders: list[DraftOrder] = []


def _draft_path(gd: GameDir, role: str) -> Path:
    return gd.drafts_dir / f"{role}.json"


#: Largest draft read (a draft is a few KiB).
MAX_DRAFT_BYTES = 16 << 20


def read_draft(gd: GameDir, role: str, base: int) -> Draft:
    try:
        draft = msgspec.json.decode(read_regular(_draft_path(gd, role), MAX_DRAFT_BYTES, "draft"), type=Draft)
    except NotFound:
        return Draft(base=base)
    except msgspec.DecodeError as exc:
        raise BadFile(f"{_draft_path(gd, role)} is damaged ({exc}); delete it to start the draft "
                      "again") from None
    return draft


def write_draft(gd: GameDir, role: str, draft: Draft) -> None:
    make_dirs(gd.drafts_dir)
    write_atomic(_draft_path(gd, role), msgspec.json.encode(draft), mode=0o600)


def live_draft(seat: Seat) -> Draft:
    """My draft, or an empty one if it is the draft already signed into my event after its
    base (a send killed between storing that event and deleting the draft). That event
    starts with the draft's actions; it may add deck messages (pbem.deck) computed at send."""
    draft = read_draft(seat.gd, seat.role, seat.replay.seq)
    if draft.orders and draft.base < seat.replay.seq:
        body = codec.decode_body(codec.unwrap(seat.gd.read_event(draft.base + 1)).body)
        signed = [bytes(a) for a in body.actions]
        if body.author == seat.role and signed[:len(draft.orders)] == [bytes(o.action) for o in draft.orders]:
            return Draft(base=seat.replay.seq)
    return draft


def clear_draft(gd: GameDir, role: str) -> None:
    remove(_draft_path(gd, role))


# -- loading a game -------------------------------------------------------

def genesis_of(gd: GameDir) -> tuple[Genesis, bytes]:
    gd.require()
    stored = gd.read_event(0)
    try:
        body = codec.decode_body(codec.unwrap(stored).body)
    except codec.UnsupportedVersion as exc:  # a game a newer pbem created: say which version it needs
        raise VersionMismatch(f"{gd.event_path(0)}: {exc}") from None
    except codec.CodecError as exc:
        raise BadFile(f"{gd.event_path(0)}: {exc}") from None
    if body.genesis is None:
        raise BadFile(f"{gd.event_path(0)} is not a genesis event")
    return body.genesis, stored


def rules_for(gd: GameDir) -> RulesModule:
    genesis, _ = genesis_of(gd)
    return rulesapi.load_version(genesis.rules, genesis.rules_version)


class Seat(msgspec.Struct):
    """My side of a game: the unlocked identity, role and vault."""

    gd: GameDir
    rules: RulesModule
    identity: Identity
    role: str
    vault: VaultData
    replay: Replay
    #: My draft's event folded on ``replay`` (``Composer``), kept between
    #: ``draft_replay`` and ``add_orders`` in one process; used only if it fits.
    composer: Composer | None = None

    @property
    def vault_path(self) -> Path:
        return self.gd.vault_dir / f"{self.role}.bin"


def load_public(gd: GameDir, *, describe: bool = True) -> Replay:
    """The whole log replayed from the public perspective. ``describe=False``
    (``pbem verify``): no wording for people, checked on two cores (pbem.logcheck)."""
    rules = rules_for(gd)
    if not describe:
        from pbem import logcheck

        return logcheck.verify(rules, gd.read_events())
    r = Replay(rules)
    for stored in gd.read_events():
        r.apply_stored(stored)
    return r


def load_seat(gd: GameDir, identity: Identity) -> Seat:
    """Replay the log from my perspective (my secrets known), from the verified
    replay cache when it matches the log."""
    genesis, stored0 = genesis_of(gd)
    rules = rulesapi.load_version(genesis.rules, genesis.rules_version)
    local = gd.read_local()
    count = gd.event_count()
    mine = [p.key for p in genesis.players if p.role == local.role]
    if not mine:
        raise BadFile(f"{gd.local_path} names role '{local.role}', which is not in this game")
    if mine[0] != identity.public_text:
        raise UsageProblem(f"this identity ({identity.fingerprint}) is not the {local.role} player "
                           f"of this game ({fingerprint(mine[0])})")
    head = codec.unwrap(stored0)
    host = [p.key for p in genesis.players if p.role == head.author]
    if not host or not verify_signature(parse_public(host[0]), head.sig, codec.signing_input(head.body)):
        raise VerifyError("genesis signature is not valid for the host's key")
    game_id = codec.sha256(codec.signing_input(head.body)).hex()
    data = vaultmod.load(gd.vault_dir / f"{local.role}.bin", identity, game_id, local.role)
    base = Replay(rules, role=local.role, known=data.known_values(), known_salts=data.known_salts(),
                  event_reader=gd.read_event)
    base.open_genesis(stored0)  # verifies genesis in full before anything else is trusted
    r = snapshot.restore(gd, base, identity, count)
    if r is None:  # no cache that matches the log: replay it all
        r = Replay(rules, role=local.role, known=base.known, known_salts=base.known_salts,
                   event_reader=gd.read_event)
        r.apply_stored(stored0)
    for seq in range(r.seq + 1, count):  # ``count`` already checked the sequence has no gap
        r.apply_stored(gd.read_event(seq))
    return Seat(gd, rules, identity, local.role, data, r)


# -- composing events -------------------------------------------------------

def _my_reveal(seat_role: str, replay: Replay, data: VaultData) -> bytes:
    seq = replay.entropy_seq_of(seat_role)
    if seq is None:
        return b""
    x = data.entropy_for(seq)
    if x is None:
        raise NotFound(f"the vault has lost the entropy secret of event {seq}; "
                       "restore the vault from its backup")
    return x


def _body(replay: Replay, role: str, data: VaultData, orders: Sequence[DraftOrder], *, x_next: bytes,
          note: str = "", extra_reveals: Iterable[str] = (), genesis: Genesis | None = None,
          end: str = "") -> Body:
    # An answer to dice opens the sealed standing orders the request names (Decision.openings).
    reveal_labels = list(dict.fromkeys([lbl for o in orders for lbl in o.reveal] + list(extra_reveals)
                                       + list(replay.sealed_due(role))))
    reveals = []
    for label in reveal_labels:
        secret = data.secrets.get(label)
        if secret is None:
            raise NotFound(f"cannot open '{label}': it is not in your vault")
        reveals.append(Opening(label=label, salt=secret.salt, value=secret.value))
    domain = bytes.fromhex(genesis.nonce) if genesis is not None else replay.commit_domain
    commits = [c for o in orders for c in _commitments(domain, o)]
    x_prev = b"" if genesis is not None else _my_reveal(role, replay, data)
    version = replay.version if genesis is None else codec.new_game_version(genesis.clock is not None)
    return Body(
        v=version,
        game="" if genesis is not None else replay.game_hex,
        seq=replay.seq + 1,
        prev="" if genesis is not None else replay.head.hex(),
        author=role,
        entropy=Entropy(commit=entropy_commitment(role, x_next).hex(), reveal=x_prev.hex()),
        actions=[o.action for o in orders],
        commits=commits,
        reveals=reveals,
        leaves=_leaf_openings(data, orders),
        note=note,
        genesis=genesis,
        time=signing_time(replay) if codec.is_timed(version) else 0,
        end=end,  # type: ignore[arg-type]  # one of codec's END values, checked by the callers
    )


def _commitments(domain: bytes, order: DraftOrder) -> list[Commitment]:
    """The commitments of ``order``'s secrets, as its event carries them."""
    commits = []
    for label, secret in order.secrets.items():
        if secret.kind == "set":
            commits.append(Commitment(label=label, digest=_merkle_set(secret).root.hex(), kind="set"))
            continue
        digest, _ = commit(domain, label, bytes.fromhex(secret.value), bytes.fromhex(secret.salt))
        commits.append(Commitment(label=label, digest=digest.hex()))
    return commits


def _merkle_set(secret: Secret) -> MerkleSet:
    return set_from_seed(decode_leaves(bytes.fromhex(secret.value)), bytes.fromhex(secret.salt))


def _leaf_openings(data: VaultData, orders: Sequence[DraftOrder]) -> list[LeafOpening]:
    """The proofs of every leaf my orders open, from the sets in my vault."""
    wanted = list(dict.fromkeys((label, key) for o in orders for label, key in o.leaves))
    built: dict[str, MerkleSet] = {}
    openings = []
    for label, key in wanted:
        secret = data.secrets.get(label)
        if secret is None or secret.kind != "set":
            raise NotFound(f"cannot open '{label}' at '{key}': it is not a set in your vault")
        if label not in built:
            built[label] = _merkle_set(secret)
        try:
            proof = built[label].open(key)
        except KeyError:
            raise NotFound(f"cannot open '{label}' at '{key}': the set has no such key") from None
        openings.append(LeafOpening(label=label, key=key, value=proof.value, salt=proof.salt, index=proof.index,
                                    size=proof.size, path=[(h, right) for h, right in proof.path]))
    return openings


def simulate(replay: Replay, body: Body) -> Replay:
    """Apply an unsigned body to a fork of ``replay`` (for checking drafts): ``Replay.simulate``."""
    return replay.simulate(body)


def _sign(identity: Identity, body: Body) -> bytes:
    data = codec.canonical(body)
    return codec.wrap(data, identity.sign(codec.signing_input(data)))


def _secret_map(order: Order) -> dict[str, Secret]:
    secrets = {label: Secret(value=value.hex(), salt=os.urandom(32).hex())
               for label, value in order.secrets.items()}
    for label, leaves in order.sets.items():
        secrets[label] = Secret(value=encode_leaves(leaves).hex(), salt=os.urandom(32).hex(), kind="set")
    return secrets


def parse_orders(rules: RulesModule, replay: Replay, role: str, data: VaultData,
                  base: Sequence[DraftOrder], texts: Sequence[str], *,
                  genesis: Genesis | None = None, private_key: bytes | None = None) -> list[DraftOrder]:
    """Parse and check ``texts`` after ``base``; IllegalAction lists every problem.
    Public for drivers of whole games (pbem.table, self-play) as well as ``add_orders``.
    Each text costs O(1) rules steps once the draft ``base`` is folded (see ``Composer``)."""
    return compose_orders(rules, replay, role, data, base, texts, genesis=genesis, private_key=private_key)[0]


def compose_orders(rules: RulesModule, replay: Replay, role: str, data: VaultData,
                   base: Sequence[DraftOrder], texts: Sequence[str], *, genesis: Genesis | None = None,
                   held: Composer | None = None,
                   private_key: bytes | None = None) -> tuple[list[DraftOrder], Composer | None]:
    """``parse_orders``, continuing from the composer ``held`` when it holds the
    draft ``base`` (``Composer.fits``; otherwise the draft is folded once), and
    the composer of the orders it returns: hand it back with the next texts.
    None when there is none (a genesis is composed whole, and orders given
    when the decision is not mine are refused before any fold).
    ``private_key``: the player's private-choice key (``pbem.private.key_of``);
    None keys each order's private choices with fresh random bytes."""
    orders = list(base)
    comp: Composer | None = None
    problems: list[str] = []
    for text in texts:
        now = replay.pending()
        if genesis is None and (orders or (now is not None and now.role == role)):
            if comp is None:
                comp = held if held is not None and held.fits(replay, role, data, orders) else \
                    Composer.start(replay, role, data, orders)
            comp = comp.with_deck()  # my deck work goes first
            orders = list(comp.orders)
            probe = comp.probe
        else:
            probe = _probe(replay, role, data, orders, genesis)
        decision = probe.pending()
        if decision is None or decision.role != role or decision.kind in (DICE, DECK):
            problems.append(f"'{text}': {_not_your_decision(probe, role, decision)}")
            break
        try:
            choices = PrivateChoices(private_key, genesis.nonce if genesis is not None else replay.game_hex, role,
                                     0 if genesis is not None else replay.seq + 1, len(orders))
            order = rules.parse_order(probe.state, role, text, _ComposeCtx(probe.ctx(role), choices))
        except ValueError as exc:
            # A familiar order of another step: the rules' reason, with its rule (issue 21 point 7).
            reasons = [str(p) for p in rules.not_now(probe.state, role, text)]
            problems.append(f"'{text}': " + ("; ".join(reasons) + f" (read as: {exc})" if reasons else str(exc)))
            continue
        in_use = [label for label in [*order.secrets, *order.sets]
                  if probe.committed(label) or any(label in o.secrets for o in orders)]
        if in_use:
            problems.append(f"'{text}': " + (_rules_reasons(rules, probe, role, order.action) or
                                             f"commitment label '{in_use[0]}' is already in use"))
            continue
        candidate = DraftOrder(text=text, action=codec.raw(order.action), secrets=_secret_map(order),
                               reveal=list(order.reveal), leaves=[(label, key) for label, key in order.open_leaves])
        try:
            if comp is not None:
                comp = comp.add(candidate)
            else:
                simulate_draft(replay, role, _with_secrets(data, orders + [candidate]), orders + [candidate],
                               genesis)
        except (NotFound, VerifyError) as exc:
            # The engine refused first (an opening not in my vault, a label in use): when the
            # rules refuse the action too, their reason names the rule (issue 21 point 7).
            problems.append(f"'{text}': " + (_rules_reasons(rules, probe, role, order.action) or str(exc)))
            continue
        except PbemError as exc:
            problems.append(f"'{text}': {exc}")
            continue
        orders.append(candidate)
    if problems:
        raise IllegalAction("orders rejected; nothing was added to the draft:", details=problems)
    return orders, comp


def _not_your_decision(probe: Replay, role: str, decision: Decision | None) -> str:
    """Why no order of ``role`` is taken now, and what to do."""
    if decision is None:
        outcome = probe.outcome()
        return f"the game is over ({outcome.summary if outcome else 'no decision is left'}); nothing more is played"
    what = f"{decision.role} decides ({decision.prompt or decision.kind})"
    if decision.role != role:
        return (f"it is not your decision now: {what}; wait for their turn file and receive it "
                "('pbem receive', or 'pbem fetch')")
    return f"it is not your decision now: {what}, which pbem answers by itself; send your turn ('pbem send')"


def _rules_reasons(rules: RulesModule, probe: Replay, role: str, action: Any) -> str:
    """The rules' own problems with ``action`` now ("" if they see none, or cannot judge it)."""
    try:
        problems = rules.check(probe.state, action, ActingAs(probe.ctx(role), role))
    except Exception:  # noqa: BLE001 - only a better message is sought; the engine's refusal stands
        return ""
    return "; ".join(str(p) for p in problems)


class Composer:
    """``role``'s next event (not a genesis) being composed on ``base``, the
    replay at the log's head: the draft's orders, the event folded as far as
    their actions and kept open (``Replay.open_event``), and ``probe``, the
    replay after the event (what ``simulate_draft`` gives for the same orders).

    Immutable: ``add`` returns a new Composer, so a refused order leaves the
    draft's fold as it was. ``start`` folds a whole draft (N rules steps for
    N orders); ``add`` costs one rules step for the new order's action, plus
    what closing the event costs the rules (their ``pending``), however long
    the draft: adding an order to a draft of N orders does not replay the N.
    An order that opens a value or a leaf folds the whole draft again (an
    opening acts before every action of its event: ``OpenEvent``).

    What is incremental where: within one process. A ``pbem do "a" "b" "c"``
    folds the stored draft once and adds each order in O(1); each ``pbem do``
    is a new process, so a later call folds the draft it reads once more (one
    fold instead of the two to three of each order before). pbem.table and
    self-play keep the composer on the Seat between ``draft_replay`` and
    ``add_orders``, so a whole turn composed order by order is folded once.
    Sending folds the signed event whole, as the opponent will."""

    __slots__ = ("_auto", "_open", "base", "data", "orders", "probe", "role")

    def __init__(self, base: Replay, role: str, data: VaultData, orders: tuple[DraftOrder, ...],
                 open_event: OpenEvent, probe: Replay, auto: frozenset[int] = frozenset()) -> None:
        self.base = base
        self.role = role
        self.data = data
        self.orders = orders
        self._open = open_event
        #: The replay after the draft's event (do not apply events to it: fork it).
        self.probe = probe
        self._auto = auto  # indices of deck orders added by ``with_deck``

    @classmethod
    def start(cls, base: Replay, role: str, data: VaultData, orders: Sequence[DraftOrder]) -> Composer:
        """The draft ``orders`` folded whole; raises the PbemError ``simulate_draft`` raises."""
        merged = _with_secrets(data, orders)
        twin = base.with_known(merged.known_values(), merged.known_salts())
        body = _body(twin, role, merged, orders, x_next=bytes(32))
        opened = twin.open_event(body)
        return cls(base, role, data, tuple(orders), opened, opened.close())

    def fits(self, base: Replay, role: str, data: VaultData, orders: Sequence[DraftOrder]) -> bool:
        """Whether this composer holds the draft ``orders`` on ``base`` (followed
        at most by the deck work ``with_deck`` added to them)."""
        n = len(orders)
        return (self.base is base and self.role == role and self.data is data and len(self.orders) >= n
                and all(i in self._auto for i in range(n, len(self.orders)))
                and list(self.orders[:n]) == list(orders))

    def add(self, order: DraftOrder, *, auto: bool = False) -> Composer:
        """This draft and ``order``; raises the PbemError that folding the whole
        longer draft raises for it."""
        orders = (*self.orders, order)
        marks = self._auto | {len(self.orders)} if auto else self._auto
        if not OpenEvent.addable(order.reveal, order.leaves):
            whole = Composer.start(self.base, self.role, self.data, orders)
            return Composer(self.base, self.role, self.data, orders, whole._open, whole.probe, marks)
        known = {label: bytes.fromhex(secret.value) for label, secret in order.secrets.items()}
        opened = self._open.add(order.action, _commitments(self.base.commit_domain, order), known)
        return Composer(self.base, self.role, self.data, orders, opened, opened.close(), marks)

    def with_deck(self) -> Composer:
        """This draft followed by every deck message (pbem.deck) the rules then
        wait for from me (``with_deck``)."""
        comp = self
        for _ in range(64):
            decision = comp.probe.pending()
            if decision is None or decision.role != comp.role or decision.kind != DECK:
                return comp
            comp = comp.add(_deck_order(comp.probe, comp.role, _with_secrets(comp.data, comp.orders)), auto=True)
        raise IllegalAction("the rules keep asking for deck work (a rules module error)")


class _ComposeCtx(ActingAs):
    """The replay's Ctx plus ``fresh()`` randomness and the player's private
    choices (pbem.private; fresh random bytes key them when ``choices`` is
    None), for parse_order only."""

    def __init__(self, ctx: Ctx, choices: PrivateChoices | None = None) -> None:
        super().__init__(ctx, ctx.author)
        self._choices = choices or PrivateChoices(None, "", ctx.author, ctx.seq, 0)

    def fresh(self) -> bytes:
        return os.urandom(16)

    def private_sample(self, purpose: str, n: int, k: int) -> tuple[int, ...]:
        return self._choices.sample(purpose, n, k)


def _probe(replay: Replay, role: str, data: VaultData, orders: Sequence[DraftOrder],
           genesis: Genesis | None) -> Replay:
    """The replay after my draft and the deck work it leads to; the log itself
    when I have nothing to decide."""
    if not orders and genesis is None:
        decision = replay.pending()
        if decision is None or decision.role != role:
            return replay
    if genesis is not None:
        return simulate_draft(replay, role, data, orders, genesis)
    return with_deck(replay, role, data, orders)[1]


def with_deck(replay: Replay, role: str, data: VaultData,
              orders: Sequence[DraftOrder]) -> tuple[list[DraftOrder], Replay]:
    """``orders`` followed by every deck message (pbem.deck) the rules then wait
    for from me, computed without asking (as entropy answers are), and the
    replay after them. A new round's seed is committed by the order that first
    needs it and kept in the vault with the event."""
    comp = Composer.start(replay, role, data, orders).with_deck()
    return list(comp.orders), comp.probe


def _deck_order(replay: Replay, role: str, data: VaultData) -> DraftOrder:
    """My next deck message for ``replay.rules.deck_task``: a shuffle step (with
    the keys it deals) or key openings, from my seeds."""
    task = replay.rules.deck_task(replay.state)
    if task is None:
        raise IllegalAction(f"the rules wait for deck work of {role} but name none (a rules module error)")
    g, game = replay.deck_group, replay.game_id
    secrets: dict[str, Secret] = {}

    def seed_of(rnd: str) -> bytes | None:
        s = data.secrets.get(deckmod.seed_label(rnd, role))
        return None if s is None else bytes.fromhex(s.value)

    def needed(rnd: str) -> bytes:
        seed = seed_of(rnd)
        if seed is None:
            raise NotFound(f"the vault has lost the deck seed of round {rnd!r}; restore the vault from its backup")
        return seed

    if task.kind == "step":
        rnd = task.round
        done = replay.ledger.steps(rnd)
        seed = seed_of(rnd)
        if seed is None:
            seed = deckmod.new_seed()
            secrets[deckmod.seed_label(rnd, role)] = Secret(value=seed.hex(), salt=os.urandom(32).hex())
        old = {src.round: needed(src.round) for src in task.sources if isinstance(src, deckmod.Carry)}
        step = deckmod.make_step(g, game, rnd, task.sources, done, seed,
                                 deckmod.history_resolver(g, replay.ledger.history()), old,
                                 {r: replay.ledger.own_step(r, role) for r in old})
        number = len(done) + 1
        deal = [deckmod.open_key(g, game, rnd, seed, number, pos) for pos in task.deal] if number >= 3 else []
        action: Any = deckmod.DeckStep(step=step, deal=deal)
    else:
        deal = [deckmod.open_key(g, game, task.round, needed(task.round), replay.ledger.own_step(task.round, role), pos)
                for pos in task.deal]
        opens = [deckmod.open_key(g, game, rnd, needed(rnd), replay.ledger.own_step(rnd, role), pos)
                 for rnd, pos in task.open]
        action = deckmod.DeckKeys(deal=deal, open=opens)
    return DraftOrder(text=f"({replay.format_action(action)})", action=codec.raw(action), secrets=secrets)


def _with_secrets(data: VaultData, orders: Sequence[DraftOrder]) -> VaultData:
    merged = dict(data.secrets)
    for o in orders:
        merged.update(o.secrets)
    return VaultData(game=data.game, role=data.role, entropy=dict(data.entropy), secrets=merged)


def simulate_draft(replay: Replay, role: str, data: VaultData, orders: Sequence[DraftOrder],
                    genesis: Genesis | None) -> Replay:
    """The replay after ``orders`` were sent by ``role`` (on a clone: nothing is written)."""
    data = _with_secrets(data, orders)
    twin = replay.with_known(data.known_values(), data.known_salts())
    body = _body(twin, role, data, orders, x_next=bytes(32), genesis=genesis)
    return twin.simulate(body)


# -- creating and joining -----------------------------------------------------

class Sent(msgspec.Struct):
    turn_file: Path
    seqs: list[int]
    auto: bool = False
    resent: bool = False  # events signed earlier, turn file written again
    #: For people: the orders an automatic answer gave and why (forced, standing).
    said: list[str] = msgspec.field(default_factory=list)


def new_game(path: Path, rules_id: str, scenario: str, role: str, identity: Identity,
             identity_path: Path, opponent_key: str, *, options: Sequence[str] = (),
             title: str = "", orders: Sequence[str] = (), out: Path | None = None, email: str = "",
             opponent_email: str = "", clock: Clock | None = None) -> Sent:
    rules = rulesapi.load(rules_id)
    spec = rules.SPEC
    if role not in spec.roles:
        raise UsageProblem(f"role must be one of {', '.join(spec.roles)}")
    if scenario not in spec.scenarios:
        raise UsageProblem(f"unknown scenario '{scenario}' (choose from {', '.join(spec.scenarios)})")
    bad = rulesapi.option_problems(spec, scenario, options)
    if bad:
        raise UsageProblem("; ".join(bad))
    opponent = parse_public(opponent_key)
    if fingerprint(opponent) == identity.fingerprint:
        raise UsageProblem("the opponent's key is your own key")
    other = [r for r in spec.roles if r != role][0]
    genesis = Genesis(rules=spec.id, rules_version=spec.version, data_hash=data_hash(spec).hex(),
                      scenario=scenario, nonce=os.urandom(32).hex(), options=list(options), title=title,
                      players=sorted([Player(role=role, key=identity.public_text),
                                      Player(role=other, key=opponent_key.strip())],
                                     key=lambda p: p.role), clock=clock)
    empty = Replay(rules, role=role)
    data = VaultData(game="", role=role)
    draft = parse_orders(rules, empty, role, data, [], list(orders), genesis=genesis,
                         private_key=key_of(identity))
    x_next = new_secret()
    body = _body(empty, role, _with_secrets(data, draft), draft, x_next=x_next, genesis=genesis)
    stored = _sign(identity, body)
    check = Replay(rules, role=role, known=_with_secrets(data, draft).known_values())
    check.apply_stored(stored)
    data = _with_secrets(VaultData(game=check.game_hex, role=role, entropy={"0": x_next.hex()}), draft)

    gd = GameDir(path)
    with gd.lock(exclusive=True):
        if gd.events_dir.is_dir() and any(gd.events_dir.iterdir()):
            return _created_before(gd, genesis, role, out)
        # Write order: the vault and local.json before the genesis, so a directory holding an
        # event always holds its secrets; a crash before the genesis leaves no game at all.
        require_turn_target(gd, out)
        gd.create_layout()
        vaultmod.save(gd.vault_dir / f"{role}.bin", data, identity)
        gd.write_local(LocalConfig(role=role, identity=str(identity_path), rules=spec.id, email=email,
                                   opponent_email=opponent_email))
        gd.write_game_toml(check.game_hex, genesis)
        gd.append(0, stored)
        return _write_turn(gd, check, [0], out)


def _created_before(gd: GameDir, genesis: Genesis, role: str, out: Path | None) -> Sent:
    """'pbem new' again on a directory where it already stored its genesis (killed before
    writing the invitation, or the invitation lost): the same invitation is written again,
    never a second genesis. Any other game there is refused."""
    held = load_public(gd)
    g = held.started
    same = (g.rules, g.scenario, g.options, g.title, g.players, g.clock) == \
        (genesis.rules, genesis.scenario, genesis.options, genesis.title, genesis.players, genesis.clock)
    if not (same and held.history[0].author == role):
        raise BadFile(f"{gd.path} already holds a game; choose an empty directory")
    if held.seq > 0:
        raise BadFile(f"{gd.path} already holds this game, joined by your opponent: nothing to create "
                      "('pbem send --since 0' writes the invitation again)")
    sent = _write_turn(gd, held, [0], out)
    sent.resent = True
    return sent


def join_game(path: Path, turn_file: bytes, identity: Identity, identity_path: Path, *,
              host_fingerprint: str | None = None, orders: Sequence[str] = (),
              out: Path | None = None, email: str = "", opponent_email: str = "") -> tuple[Sent, Replay]:
    tf = parse_turn(turn_file)
    first = tf.events[0]
    try:
        unwrapped = codec.unwrap(first)
        body = codec.decode_body(unwrapped.body)
    except codec.CodecError as exc:
        raise BadFile(f"invitation: {exc}") from None
    if body.genesis is None or body.seq != 0:
        raise BadFile("this turn file does not start with a game's genesis: it is not an invitation")
    rules = rulesapi.load_version(body.genesis.rules, body.genesis.rules_version)
    mine = [p.role for p in body.genesis.players if p.key == identity.public_text]
    if not mine:
        raise UsageProblem(f"your identity ({identity.fingerprint}) is not a player of this game")
    role = mine[0]
    host = Replay(rules, role=role)
    for stored in tf.events:
        host.apply_stored(stored)
    host_key = host.keys[body.author]
    if host_fingerprint is not None and fingerprint(host_key) != host_fingerprint.strip():
        raise VerifyError(f"the host's key has fingerprint {fingerprint(host_key)}, not "
                          f"{host_fingerprint.strip()}: do not join (someone may be impersonating)")
    gd = GameDir(path)
    data = VaultData(game=host.game_hex, role=role)
    draft = parse_orders(rules, host, role, data, [], list(orders), private_key=key_of(identity))
    seat = Seat(gd, rules, identity, role, data, host)
    if draft:
        draft, _ = with_deck(host, role, data, draft)  # e.g. the deck's first shuffle step
    with gd.lock(exclusive=True):
        held = _joined_before(gd, tf.events, role)
        if isinstance(held, Sent):
            return held, host
        require_turn_target(gd, out)
        composed = _compose(seat, draft)
        # Write order: the vault (my entropy and secrets), local.json, then the host's events,
        # then mine: a directory that holds an event of mine holds its secrets, and a crash
        # before my event leaves a join that the same command finishes.
        if not held:
            gd.create_layout()
        vaultmod.save(seat.vault_path, composed.data, identity)
        gd.write_local(LocalConfig(role=role, identity=str(identity_path), rules=rules.SPEC.id, email=email,
                                   opponent_email=opponent_email))
        gd.write_game_toml(host.game_hex, host.started)
        for seq, stored in enumerate(tf.events[held:], start=held):
            gd.append(seq, stored)
        sent = _commit_send(seat, composed, out, vault_saved=True)
    return sent, host


def _joined_before(gd: GameDir, invitation: Sequence[bytes], role: str) -> int | Sent:
    """How many of the invitation's events an earlier 'pbem join' killed in ``gd`` stored
    (0 for a fresh directory), or, when it stored my answer too, that answer's turn file
    written again (the same signed bytes). Any other game there is refused."""
    if not (gd.events_dir.is_dir() and any(n for n in os.listdir(gd.events_dir) if not n.startswith("."))):
        return 0
    held = gd.read_events()
    common = min(len(held), len(invitation))
    if held[:common] != list(invitation[:common]):
        raise BadFile(f"{gd.path} already holds a game; choose an empty directory")
    if len(held) <= len(invitation):
        return len(held)
    replay = load_public(gd)
    unanswered = unanswered_events(replay, role)
    if unanswered and unanswered[0] == len(invitation) and gd.read_local().role == role:
        sent = _write_turn(gd, replay, unanswered, None)
        sent.resent = True
        return sent
    raise BadFile(f"{gd.path} already holds this game, joined and played on: nothing to join "
                  f"('pbem send --since {len(invitation)}' writes your turn file again)")


# -- do / undo / send ---------------------------------------------------------

def add_orders(seat: Seat, texts: Sequence[str]) -> list[DraftOrder]:
    """Parse, check and add orders to the draft; IllegalAction lists every problem."""
    seat.gd.require_not_stopped()
    draft = live_draft(seat)
    _require_fresh(seat, draft)
    orders, comp = compose_orders(seat.rules, seat.replay, seat.role, seat.vault, draft.orders, texts,
                                  held=seat.composer, private_key=key_of(seat.identity))
    write_draft(seat.gd, seat.role, Draft(base=seat.replay.seq, orders=orders))
    seat.composer = comp
    return orders[len(draft.orders):]


def _require_fresh(seat: Seat, draft: Draft) -> None:
    if draft.orders and draft.base != seat.replay.seq:
        raise IllegalAction(f"your draft was composed at event {draft.base} but the log is now at "
                            f"{seat.replay.seq}; review it with 'pbem show' and 'pbem undo --all'")


def undo(seat: Seat, count: int | None) -> list[DraftOrder]:
    draft = read_draft(seat.gd, seat.role, seat.replay.seq)
    keep = 0 if count is None else max(0, len(draft.orders) - count)
    removed = draft.orders[keep:]
    if keep == 0:
        clear_draft(seat.gd, seat.role)
    else:
        write_draft(seat.gd, seat.role, Draft(base=draft.base, orders=draft.orders[:keep]))
    return removed


def draft_replay(seat: Seat) -> tuple[Replay, Draft]:
    """The game as it stands with my unsent draft applied (dice I resolve included)."""
    draft = live_draft(seat)
    if draft.base != seat.replay.seq and draft.orders:
        return seat.replay, draft
    decision = seat.replay.pending()
    if not draft.orders and (decision is None or decision.role != seat.role):
        return seat.replay, draft  # nothing of mine to fold (``_probe``)
    comp = seat.composer
    if comp is None or not comp.fits(seat.replay, seat.role, seat.vault, draft.orders):
        comp = Composer.start(seat.replay, seat.role, seat.vault, draft.orders)
    seat.composer = comp = comp.with_deck()
    return comp.probe, draft


def legal_orders(seat: Seat) -> list[str]:
    probe, _ = draft_replay(seat)
    decision = probe.pending()
    if decision is None or decision.role != seat.role or decision.kind in (DICE, DECK):
        return []
    return list(seat.rules.legal_orders(probe.state, seat.role, probe.ctx(seat.role)))


def send(seat: Seat, *, note: str = "", open_all: bool = False, out: Path | None = None, end: str = "") -> Sent:
    """Sign my draft into the next event (with ``end``: a draw offered or
    declined, decision 26) and write its turn file. ``open_all`` opens every
    commitment of mine; players send it only at the end of the game
    (``require_game_over_for_open_all``, which the command line applies), tests
    also mid-game to check what an opening reveals."""
    seat.gd.require_not_stopped()
    draft = live_draft(seat)
    _require_fresh(seat, draft)
    decision = seat.replay.pending()
    game_over = seat.replay.outcome() is not None
    if end:
        _require_ends(seat.replay, end)
    if not game_over and (decision is None or decision.role != seat.role):
        unanswered = unanswered_events(seat.replay, seat.role)
        if unanswered and not draft.orders:
            # Already signed (by an earlier send that may have been killed before it wrote
            # the turn file): write their turn file again instead of failing.
            clear_draft(seat.gd, seat.role)
            sent = _write_turn(seat.gd, seat.replay, unanswered, out)
            sent.resent = True
            return sent
        who = f"{decision.role}'s ({decision.kind})" if decision else "nobody's"
        raise IllegalAction(f"it is not your turn to send: the next decision is {who}")
    return _send_locked(seat, draft.orders, note=note, open_all=open_all or game_over, out=out, end=end)


def require_game_over_for_open_all(replay: Replay) -> None:
    """IllegalAction while the game goes on: ``--open-all`` is a terminal event
    (PLAN; decision 26), since once every secret of mine is open (my deck
    seeds, my secret dice seeds) the opponent could work out cards and dice
    before answering for them."""
    if replay.outcome() is None:
        raise IllegalAction("--open-all opens every secret of yours, after which your opponent could work out "
                            "your cards and secret dice before answering for them: it is sent only when the game "
                            "is over (PLAN, docs/protocol.md decision 26); to end the game now, 'pbem resign' "
                            "opens them with the resignation, or offer a draw with 'pbem draw offer'")


def _require_ends(replay: Replay, end: str) -> None:
    """VersionMismatch if the game's format has no terminal events; IllegalAction
    if ``end`` cannot be signed now (the checks the replay makes, said for the player)."""
    if not codec.has_ends(replay.version):
        raise VersionMismatch(f"this game is played at event format version {replay.version}, fixed by its genesis, "
                              f"which has no signed resignation or draw (they came with format version "
                              f"{codec.TERMINAL_VERSION}, docs/protocol.md decision 26); tell your opponent in a "
                              "note ('pbem send --note'), and when you both agree the game is over, play it out "
                              "or stop")
    outcome = replay.outcome()
    if outcome is not None:
        raise IllegalAction(f"the game is over ({outcome.summary}): nothing but 'pbem send --open-all' follows")
    decision = replay.pending()
    me = replay.role
    if decision is None or decision.role != me:
        who = f"{decision.role}'s ({decision.kind})" if decision else "nobody's"
        raise IllegalAction(f"the next decision is {who}: a resignation or a draw is signed when the decision is "
                            "yours, so that it never crosses your opponent's event in the mail (decision 26); "
                            "receive their event first")
    offer = replay.standing_offer()
    if end in (codec.DRAW_ACCEPT, codec.DRAW_DECLINE) and (offer is None or offer[0] == me):
        raise IllegalAction("no draw offer of your opponent stands" + (
            f" (the offer of event {offer[1]} is yours)" if offer is not None else ""))
    if end == codec.DRAW_OFFER and offer is not None:
        raise IllegalAction(f"the draw offer of event {offer[1]} by {offer[0]} stands" + (
            "" if offer[0] == me else ": accept or decline it ('pbem draw accept' or 'pbem draw decline')"))


def resign(seat: Seat, *, note: str = "", out: Path | None = None) -> Sent:
    """Sign a resignation (decision 26): the game ends, the opponent wins, and the
    event opens every commitment of mine so that the game can be audited in full.
    The draft is dropped. Accepting a draw (``accept_draw``) is the same with the
    draw agreed."""
    return _terminal(seat, codec.RESIGN, note=note, out=out)


def accept_draw(seat: Seat, *, note: str = "", out: Path | None = None) -> Sent:
    """Accept the opponent's standing draw offer (decision 26): the game ends drawn,
    and the event opens every commitment of mine."""
    return _terminal(seat, codec.DRAW_ACCEPT, note=note, out=out)


def _terminal(seat: Seat, end: str, *, note: str, out: Path | None) -> Sent:
    seat.gd.require_not_stopped()
    last = seat.replay.history[-1]
    if last.author == seat.role and last.end == end and seat.replay.ended is not None:
        # Signed by an earlier run whose delivery failed: its turn file again, nothing new signed.
        sent = _write_turn(seat.gd, seat.replay, unanswered_events(seat.replay, seat.role), out)
        sent.resent = True
        return sent
    _require_ends(seat.replay, end)
    return _commit_send(seat, _compose(seat, [], note=note, open_all=True, end=end), out)


class _Composed(msgspec.Struct):
    body: Body
    stored: bytes
    data: VaultData
    replay: Replay


def _compose(seat: Seat, orders: Sequence[DraftOrder], *, note: str = "",
             open_all: bool = False, end: str = "") -> _Composed:
    """Sign the next event and verify it as the opponent will; writes nothing."""
    replay, role = seat.replay, seat.role
    data = _with_secrets(seat.vault, orders)
    extra = []
    if open_all:
        extra = replay.unopened(role)
    x_next = new_secret()
    body = _body(replay, role, data, orders, x_next=x_next, note=note, extra_reveals=extra, end=end)
    stored = _sign(seat.identity, body)
    check = replay.with_known(data.known_values(), data.known_salts())
    check.apply_stored(stored)
    data.entropy[str(body.seq)] = x_next.hex()
    return _Composed(body, stored, data, check)


def _commit_send(seat: Seat, composed: _Composed, out: Path | None, auto: bool = False,
                 vault_saved: bool = False) -> Sent:
    """Write vault first, then the event: a crash between leaves unused secrets, never
    an event whose secrets are lost. Called under the exclusive lock taken before the
    log was read, so nobody else can have stored this seq meanwhile; the check below
    keeps a lockless caller from overwriting the secret of someone else's event."""
    role = seat.role
    require_turn_target(seat.gd, out)
    if seat.gd.event_path(composed.body.seq).exists():
        raise Busy(f"event {composed.body.seq} was stored by another pbem process while this one composed "
                   "it; nothing was written: run the command again")
    if not vault_saved:
        vaultmod.save(seat.vault_path, composed.data, seat.identity)
    seat.gd.append(composed.body.seq, composed.stored)
    clear_draft(seat.gd, role)
    seat.vault, seat.replay = composed.data, composed.replay
    snapshot.save(seat.gd, composed.replay, seat.identity)
    sent = _write_turn(seat.gd, composed.replay, unanswered_events(composed.replay, role), out)
    sent.auto = auto
    return sent


def unanswered_events(replay: Replay, role: str) -> list[int]:
    """My events since the opponent's latest one: what the opponent needs from me."""
    theirs = [i.seq for i in replay.history if i.author != role]
    start = (max(theirs) + 1) if theirs else 0
    return list(range(start, replay.seq + 1))


def _send_locked(seat: Seat, orders: Sequence[DraftOrder], *, note: str = "", open_all: bool = False,
                 out: Path | None = None, auto: bool = False, end: str = "") -> Sent:
    decision = seat.replay.pending()
    if decision is not None and decision.role == seat.role:
        orders, _ = with_deck(seat.replay, seat.role, seat.vault, orders)
    return _commit_send(seat, _compose(seat, orders, note=note, open_all=open_all, end=end), out, auto)


def _write_turn(gd: GameDir, replay: Replay, seqs: list[int], out: Path | None) -> Sent:
    events = [gd.read_event(s) for s in seqs]
    authors = [replay.history[s].author for s in seqs]
    data = format_turn(replay.game_hex, f"{replay.rules.SPEC.id} {replay.rules.SPEC.version}",
                       events, authors, seqs)
    if out is None:
        make_dirs(gd.outbox_dir)
        out = gd.outbox_dir / _outbox_name(replay, seqs[-1])
    if str(out) != "-":
        write_atomic(out, data)
    return Sent(turn_file=out, seqs=seqs)


def require_turn_target(gd: GameDir, out: Path | None) -> None:
    """StorageProblem, before anything is signed, if the turn file cannot be written
    where it goes (the outbox or OUT's directory is a file, OUT is a directory)."""
    if out is not None and str(out) == "-":
        return
    target = gd.outbox_dir / "x" if out is None else Path(out)
    if target.is_dir():
        raise StorageProblem(f"{target} is a directory where pbem writes the turn file; nothing was signed")
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise StorageProblem(f"{parent} is a file where pbem needs a directory for the turn file; "
                                     "move it away (nothing was signed)")
            break
        if out is not None:
            raise NotFound(f"{parent} does not exist: create it for the turn file (nothing was signed)")


def _outbox_name(replay: Replay, seq: int) -> str:
    return f"{replay.game_hex[:8]}-{seq:06d}.pbem"


def export_turn(gd: GameDir, since: int, out: Path | None) -> Sent:
    """Write a turn file with events ``since``.. (to resend what the opponent missed)."""
    replay = load_public(gd)
    if not 0 <= since <= replay.seq:
        raise UsageProblem(f"--since must be between 0 and {replay.seq}")
    return _write_turn(gd, replay, list(range(since, replay.seq + 1)), out)


# -- receiving ----------------------------------------------------------------

class Received(msgspec.Struct):
    appended: list[int]
    duplicates: list[int]
    auto_reply: Sent | None = None
    waiting_for_dice: bool = False


def receive(seat: Seat, turn_files: Sequence[tuple[str, bytes]], *, auto_reply: bool = True,
            forced: bool = False) -> Received:
    """Verify incoming events and append them; all or nothing per call. With
    ``auto_reply``, answer at once what needs no one (``automatic_orders``):
    dice, deck work and, with ``forced``, the steps the rules declare forced
    in the public view. The command line, ``pbem watch`` and pbem.table take
    forced steps; a driver that scripts every step itself (a rules test)
    leaves ``forced`` off and gives those orders as before."""
    seat.gd.require_not_stopped()
    incoming: list[codec.Unwrapped] = []
    for name, data in turn_files:
        for stored in parse_turn(data, name).events:
            try:
                unwrapped = codec.unwrap(stored)
            except codec.CodecError as exc:
                raise BadFile(f"{shown(name)}: {exc}") from None
            require_this_game(seat.replay, shown(name), unwrapped)
            incoming.append(unwrapped)
    # Several files (a mailbox) may repeat events or arrive out of order.
    incoming = sorted({u.stored: u for u in incoming}.values(), key=lambda u: u.seq)
    held = seat.replay.seq  # load_seat verified events 0..held
    have: dict[int, bytes] = {}
    twin = seat.replay.fork()
    appended, duplicates = [], []
    for unwrapped in incoming:
        stored = unwrapped.stored
        if unwrapped.seq not in have and 0 <= unwrapped.seq <= held:
            have[unwrapped.seq] = seat.gd.read_event(unwrapped.seq)  # only what a duplicate check needs
        existing = have.get(unwrapped.seq)
        if existing is not None:
            if existing != stored:
                _conflict(seat, twin, unwrapped, existing)
            duplicates.append(unwrapped.seq)
            continue
        info = twin.apply_stored(stored)
        require_plausible_time(info.seq, info.author, info.time)
        have[unwrapped.seq] = stored
        appended.append(unwrapped.seq)
    for seq in appended:
        seat.gd.append(seq, have[seq])
    seat.replay = twin
    if appended:
        snapshot.save(seat.gd, twin, seat.identity)
    result = Received(appended=sorted(appended), duplicates=sorted(set(duplicates)))
    decision = twin.pending()
    # Without auto_reply only dice or deck work is reported (waiting_for_dice):
    # the orders of a forced step would be composed only to be thrown away.
    if decision is not None and decision.role == seat.role and (auto_reply or decision.kind in (DICE, DECK)):
        said = ["the entropy for the dice"] if decision.kind == DICE else \
            ["the shared deck's work"] if decision.kind == DECK else []
        automatic = automatic_orders(twin, seat.role, seat.vault, forced=forced,
                                     standing=standing_of(seat.gd) if forced else frozenset(), said=said)
        if automatic is not None:
            if auto_reply:
                result.auto_reply = _send_locked(seat, automatic, auto=True)
                result.auto_reply.said = said
            elif decision.kind in (DICE, DECK):
                result.waiting_for_dice = True
    elif auto_reply and not appended:
        result.auto_reply = _lost_auto_reply(seat)
    return result


#: Most forced steps pbem takes in one automatic answer (a rules module that
#: declares every step forced would otherwise play the game alone).
MAX_FORCED = 32


def automatic_orders(replay: Replay, role: str, data: VaultData, *, forced: bool = True,
                     standing: frozenset[str] = frozenset(), said: list[str] | None = None
                     ) -> list[DraftOrder] | None:
    """What pbem answers by itself when the decision is ``role``'s and nobody
    needs to choose (issue 21 point 5): the dice answer (the event's entropy),
    my deck work, every step the rules declare forced in the public view
    (``Rules.forced_order``) whose legal orders are exactly that order, and,
    where ``role`` set standing orders (``standing``, ``pbem standing``),
    the step they settle (``Rules.standing_order``) when its order is among
    the legal orders; none of them may commit a new secret. For as long as
    the decision stays mine. The orders of the answer ([] for entropy alone)
    when the decision then passes to the opponent or the game ends; None when
    a person must decide. ``said`` collects, for people, why each order was
    given. Without ``forced``: the dice answer and deck work only."""
    rules = replay.rules
    decision = replay.pending()
    if decision is None or decision.role != role:
        return None
    if decision.kind not in (DICE, DECK) and (
            not forced or _step_order(rules, replay.state, role, replay.ctx(role), standing) is None):
        return None  # the common case: a person's step, nothing folded
    comp = Composer.start(replay, role, data, []).with_deck()
    why: list[str] = []
    for _ in range(MAX_FORCED):
        probe = comp.probe
        now = probe.pending()
        if now is None or now.role != role:
            if said is not None:
                said += why
            return list(comp.orders)
        if now.kind in (DICE, DECK):
            return None  # my own dice or deck work still waiting: a rules module's affair, not forced
        ctx = probe.ctx(role)
        step = _step_order(rules, probe.state, role, ctx, standing) if forced else None
        if step is None:
            return None
        order, is_forced = step
        # A forced step must leave exactly that order; a standing order is one of the
        # listed orders by the hook's contract, and compose_orders checks it anyway.
        if is_forced and list(rules.legal_orders(probe.state, role, ctx)) != [order]:
            return None
        try:
            orders, held = compose_orders(rules, replay, role, data, list(comp.orders), [order], held=comp)
        except PbemError:
            return None  # the rules' forced order does not pass their own check: let a person see why
        if held is None or orders[-1].secrets:
            return None
        why.append(f"'{order}' ({'forced: the one legal order' if is_forced else 'your standing order'})")
        comp = held.with_deck()
    return None


def _step_order(rules: RulesModule, state: Any, role: str, ctx: Any,
                standing: frozenset[str]) -> tuple[str, bool] | None:
    """The order pbem may give at ``role``'s step: (order, True) when the
    rules declare it forced in the public view, (order, False) when one of
    ``role``'s standing orders settles it; None when a person decides."""
    order = rules.forced_order(state, role, ctx)
    if order is not None:
        return order, True
    if standing:
        order = rules.standing_order(state, role, ctx, standing)
        if order is not None:
            return order, False
    return None


def standing_of(gd: GameDir) -> frozenset[str]:
    """The standing orders this copy's player set (``pbem standing``)."""
    return frozenset(gd.read_local().standing)


def _lost_auto_reply(seat: Seat) -> Sent | None:
    """The turn file of my automatic answer if the receive that signed it was killed before
    writing it: my last event answers the opponent's, has no turn file, and is either
    entropy or deck work only, or exactly the forced orders ``automatic_orders`` composes
    from the log before it (``_is_forced_answer``); never a person's own composed event."""
    history = seat.replay.history
    last = history[-1]
    if last.author != seat.role or len(history) < 2 or history[-2].author == seat.role or last.note:
        return None
    if (seat.gd.outbox_dir / _outbox_name(seat.replay, last.seq)).exists():
        return None
    # automatic: entropy only, or the shared deck's messages (their seed commitments too)
    deck_only = bool(last.actions) and all(a.startswith("deck: ") for a in last.actions)
    if ((last.actions and not deck_only) or (last.commits and not deck_only) or last.reveals) and \
            not _is_forced_answer(seat, last.seq):
        return None
    sent = _write_turn(seat.gd, seat.replay, [last.seq], None)
    sent.auto = True
    return sent


def _is_forced_answer(seat: Seat, seq: int) -> bool:
    """Whether my stored event ``seq`` is the automatic answer carrying forced orders
    (``Rules.forced_order``, issue 21 point 5) that ``automatic_orders`` composes from
    the log before it: the same actions, openings and leaves, no end (the caller refuses
    a note), and no commitment but my deck seeds (a new round's seed, committed by the
    deck step that first needs it: recomputed with the seed now in my vault, that step
    commits nothing). Recomputed from the replay of events 0..seq-1, never read from the
    event's text: a person's event whose step was not forced is never taken for one."""
    before = Replay(seat.rules, role=seat.role, known=seat.vault.known_values(),
                    known_salts=seat.vault.known_salts())
    for n in range(seq):
        before.apply_stored(seat.gd.read_event(n))
    try:
        orders = automatic_orders(before, seat.role, seat.vault, forced=True, standing=standing_of(seat.gd))
        if not orders:
            return False  # a person's step (None), or entropy alone ([]), which the caller judges
        rebuilt = _body(before, seat.role, _with_secrets(seat.vault, orders), orders, x_next=bytes(32))
    except PbemError:
        return False  # pbem could not compose it now (a secret missing from the vault): not recognised
    stored = codec.decode_body(codec.unwrap(seat.gd.read_event(seq)).body)
    return ([bytes(a) for a in stored.actions] == [bytes(a) for a in rebuilt.actions]
            and stored.reveals == rebuilt.reveals and stored.leaves == rebuilt.leaves
            and not stored.end
            and _not_seeds(stored.commits, seat.role) == _not_seeds(rebuilt.commits, seat.role))


def _not_seeds(commits: Sequence[Commitment], role: str) -> list[Commitment]:
    """``commits`` without ``role``'s deck seed commitments (``deck.seed_label``)."""
    def is_seed(label: str) -> bool:
        parts = label.split("/")
        return len(parts) == 4 and label == deckmod.seed_label(parts[1], role)
    return [c for c in commits if not is_seed(c.label)]


def require_this_game(replay: Replay, name: str, unwrapped: codec.Unwrapped) -> None:
    """ForeignGame if ``unwrapped`` is an event of another game (another game
    id, or a genesis other than this game's), whatever its key or seq: such a
    file is refused before anything else is looked at, so it is never stored,
    never evidence of equivocation and never stops the game (issue 27 point 1)."""
    theirs = event_game(unwrapped)
    if theirs != replay.game_hex:
        raise ForeignGame(f"{name}: event {unwrapped.seq} {foreign_game_text(unwrapped.seq, theirs, replay.game_hex)}"
                          ": nothing was stored, and a file of another game is never evidence against anyone")


def _conflict(seat: Seat, replay: Replay, incoming: codec.Unwrapped, existing: bytes) -> None:
    """Two different events for one seq: equivocation only if both are events of
    this game, at that seq, by one author, each validly signed by that author."""
    held = codec.unwrap(existing)
    key = replay.keys.get(incoming.author)
    from pbem import evidence as evidencemod

    if any(r.stands == existing and r.other == incoming.stored and evidencemod.is_cleared(replay, r)
           for r in evidencemod.records(seat.gd)):
        raise VerifyError(f"event {incoming.seq}: the version of event {incoming.seq} that both players agreed "
                          "to set aside (their signed consents are in evidence/); nothing was stored")
    if key is not None and incoming.author == held.author and incoming.seq == held.seq and \
            event_game(incoming) == event_game(held) == replay.game_hex and \
            verify_signature(key, incoming.sig, codec.signing_input(incoming.body)) and \
            _is_event_of(incoming, replay.game_hex):
        seat.gd.record_equivocation(incoming.seq, incoming.author, existing, incoming.stored)
        raise Equivocation(f"{incoming.author} signed two different events for seq {incoming.seq}: "
                           f"both are kept in {seat.gd.evidence_dir} as proof and the game is stopped")
    raise VerifyError(f"event {incoming.seq}: conflicts with the event already held for that seq "
                      "and is not validly signed by its author")


def _is_event_of(unwrapped: codec.Unwrapped, game: str) -> bool:
    """Whether verified bytes decode to a well-formed event of ``game`` at their seq by
    their author (the head peek that found them is lenient)."""
    try:
        body = codec.decode_body(unwrapped.body)
    except codec.CodecError:
        return False
    return body.game == game and body.seq == unwrapped.seq and body.author == unwrapped.author


def email_for(gd: GameDir, sent: Sent, *, sender: str = "", recipient: str = "") -> bytes:
    """The RFC 5322 message carrying the turn file of ``sent``."""
    from pbem.mail import build_message

    local = gd.read_local()
    sender = sender or local.email
    recipient = recipient or local.opponent_email
    if not sender or not recipient:
        raise UsageProblem("email needs --from and --to (or --email and --opponent-email at 'pbem new'/'join')")
    replay = load_public(gd)
    me = replay.history[sent.seqs[-1]].author
    theirs = [i.seq for i in replay.history[: sent.seqs[0]] if i.author != me]
    host_sender = sender if replay.history[0].author == me else recipient
    turn = Path(sent.turn_file).read_bytes()
    title = f"{replay.rules.SPEC.title} {shown(replay.started.title, 120) or replay.started.scenario}".strip()
    return build_message(turn=turn, turn_name=Path(sent.turn_file).name, game=replay.game_hex, title=title,
                         seqs=sent.seqs, author=me, sender=sender, recipient=recipient,
                         summary=turn_summary(replay, sent.seqs), reply_to_seq=max(theirs) if theirs else None,
                         host_seq0_sender=host_sender)


def turn_summary(replay: Replay, seqs: Sequence[int]) -> str:
    """Plain-text summary of events ``seqs`` from public information (an email body)."""
    from pbem.report import said

    spec = replay.rules.SPEC
    g = replay.started
    lines = [f"{spec.title}: {shown(g.title) or 'game'} {replay.game_hex[:16]} (scenario {g.scenario})", ""]
    for seq in seqs:
        info = replay.history[seq]
        lines.append(f"Event {seq} by {info.author}: " + ("; ".join(map(escaped, info.actions)) or "no actions"))
        if info.rolls is not None:
            lines.append(f"  dice asked in event {info.rolls.asked_seq} by {info.rolls.asker}: "
                         f"{dice_text(info.rolls.values, info.rolls.sides, replay.rules, info.rolls.purposes, info.rolls.results)}")
        if info.end:
            lines.append(f"  {info.author} {END_WORDS.get(info.end, info.end)}")
        if info.takeback is not None:  # decision 28
            lines.append(f"  {takeback_text(info)}")
        if info.reveals:
            lines.append(f"  opens {len(info.reveals)} commitment(s)")
        # What the event made happen, in the rules' words (issue 21 point 2): a
        # public replay's happenings say nothing either player keeps secret.
        for h in map(said, info.happenings):
            lines.append(f"  * {h.sentence}")
            lines += [f"      {key:<10} {value}" for key, value in h.rows]
        if info.note:
            lines.append(f"  note: {escaped(info.note)}")
    outcome = replay.outcome()
    lines += ["", f"Next decision: {pending_text(replay.pending())}"]
    if outcome is not None:
        lines.append(f"Game over: {outcome.summary}")
    if 0 in seqs:  # the invitation: say how to accept it, and whose key to check
        host = replay.history[0].author
        lines += ["", f"This is an invitation. To join as {replay.other(host)}: save this message (or its "
                      "attachment) and run", f"  pbem join MESSAGE.eml GAME_DIRECTORY --host-fingerprint "
                      f"{fingerprint(replay.keys[host])}",
                  "after checking that fingerprint with your opponent by another channel (phone, in person)."]
    else:
        lines += ["", "The attached turn file is verified by 'pbem receive FILE' (or this whole message, "
                      "or your mailbox)."]
    return "\n".join(lines) + "\n"


# -- verification and audit ---------------------------------------------------

class Audit(msgspec.Struct):
    replay: Replay
    unopened: dict[str, list[str]]
    #: The shared deck's audit (pbem.deck): per completed round, every position's
    #: card, holder and the round it went back into; empty without a deck or
    #: while seeds are unopened.
    deck: list[deckmod.Dealt] = msgspec.field(default_factory=list)


def audit(events: list[bytes], rules: RulesModule) -> Audit:
    """Replay with every opening in the log known from the start (DESIGN 4),
    then the shared deck's audit once every seed is open (pbem.logcheck:
    checked on two cores, the same result and first error as one)."""
    from pbem import logcheck

    checked = logcheck.audit(rules, events, AUDIT)
    return Audit(checked.replay, checked.unopened, checked.deck)


class Evidence(msgspec.Struct):
    """One equivocation record in ``evidence/``: the pair of files, what they
    claim, and whether they prove it (both events of this game, same author and
    seq, different, each validly signed by that author)."""

    name: str
    author: str
    seq: int
    valid: bool
    why: str = ""
    #: both players signed that it was a mistake (pbem.evidence): it stops nothing
    cleared: bool = False

    @property
    def accuses(self) -> bool:
        return self.valid and not self.cleared

    def __str__(self) -> str:
        if self.seq < 0:  # the files could not be read: nothing is claimed
            return f"{self.name}: {self.why}"
        text = f"{shown(self.author, 40)} signed two different events for seq {self.seq}"
        if not self.valid:
            return f"{text} (evidence does NOT verify: {self.why})"
        return f"{text} (cleared: both players signed that it was a mistake)" if self.cleared else text


def evidence_records(gd: GameDir, replay: Replay) -> list[Evidence]:
    """Every equivocation record held in the game directory, each re-verified."""
    found: list[Evidence] = []
    if not gd.evidence_dir.is_dir():
        return found
    for a in sorted(gd.evidence_dir.glob("equivocation-*-a.json")):
        base = a.name[:-len("-a.json")]
        b = a.with_name(base + "-b.json")
        try:
            ua, ub = codec.unwrap(a.read_bytes()), codec.unwrap(b.read_bytes())
        except (OSError, codec.CodecError):
            found.append(Evidence(base, "?", -1, False, "evidence file damaged"))
            continue
        key = replay.keys.get(ua.author)
        why = ""
        if event_game(ua) != replay.game_hex or event_game(ub) != replay.game_hex:
            why = "an event of another game"
        elif key is None or ua.author != ub.author or ua.seq != ub.seq or ua.stored == ub.stored:
            why = "not two different events of one author at one seq"
        elif not (verify_signature(key, ua.sig, codec.signing_input(ua.body))
                  and verify_signature(key, ub.sig, codec.signing_input(ub.body))):
            why = "a signature is not valid"
        elif not (_is_event_of(ua, replay.game_hex) and _is_event_of(ub, replay.game_hex)):
            why = "an event is malformed"
        found.append(Evidence(base, ua.author, ua.seq, not why, why))
    if any(e.valid for e in found):
        from pbem import evidence as evidencemod

        cleared = {r.base for r in evidencemod.records(gd) if evidencemod.is_cleared(replay, r)}
        for e in found:
            e.cleared = e.valid and e.name in cleared
    return found


def check_evidence(gd: GameDir, replay: Replay) -> list[str]:
    """Describe equivocation proofs held in the game directory (each re-verified)."""
    return [str(e) for e in evidence_records(gd, replay)]


def dice_text(values: Sequence[int | None], sides: Sequence[int] = (), rules: RulesModule | None = None,
              purposes: Sequence[str] = (), results: Sequence[str] = (), *, brackets: bool = True) -> str:
    """Dice for people: a secret die this side cannot see shows as '?'; the
    rules may word their own dice (the ``describe_dice`` hook, e.g. cards
    drawn as dice). With the request's ``purposes`` each die is shown with
    what it decides; the rules' ``results`` (``describe_roll``) follow.
    ``brackets``: plain numbers in [ ] (a line of their own) or bare."""
    text = None
    if rules is not None and sides:
        text = rules.describe_dice(tuple(sides), tuple(values))
    if not text:
        shown_values = ["?" if v is None else str(v) for v in values]
        if purposes and len(purposes) == len(values):
            text = "; ".join(f"{p}: {v}" for p, v in zip(purposes, shown_values, strict=True))
        else:
            text = ", ".join(shown_values)
            text = f"[{text}]" if brackets else text
    if results:
        text += " -> " + "; ".join(results)
    return text


def pending_text(decision: Decision | None) -> str:
    if decision is None:
        return "nobody (game over)"
    if decision.kind == DICE:
        return f"{decision.role} (entropy for {len(decision.dice)} dice)"
    if decision.kind == DECK:
        return f"{decision.role} (the shared deck: shuffle or keys, sent automatically)"
    return f"{decision.role} ({decision.kind}{': ' + decision.prompt if decision.prompt else ''})"


#: ``Body.end`` in words (decision 26), for the log, the email body and ``pbem show``.
END_WORDS = {codec.RESIGN: "resigns the game", codec.DRAW_OFFER: "offers a draw",
             codec.DRAW_ACCEPT: "accepts the draw", codec.DRAW_DECLINE: "declines the draw"}


def offer_text(replay: Replay) -> str:
    """The draw offer that stands, in words for ``replay``'s reader ("" if none)."""
    offer = replay.standing_offer()
    if offer is None:
        return ""
    if offer[0] == replay.role:
        return f"your draw offer of event {offer[1]} stands until {replay.other(offer[0])} answers it"
    return (f"{offer[0]} offers a draw (event {offer[1]}): 'pbem draw accept' ends the game drawn, "
            "'pbem draw decline' (or playing on) declines it")


def history_json(history: Sequence[EventInfo]) -> list[dict[str, Any]]:
    out = []
    for i in history:
        item: dict[str, Any] = {"seq": i.seq, "author": i.author, "hash": i.hash.hex(),
                                "actions": list(i.actions), "commits": i.commits,
                                "reveals": list(i.reveals), "note": i.note}
        if i.end:
            item["end"] = i.end
        if i.rolls is not None:
            item["rolls"] = {"asked_in": i.rolls.asked_seq, "by": i.rolls.asker,
                             "sides": list(i.rolls.sides), "values": list(i.rolls.values),
                             "purposes": list(i.rolls.purposes), "results": list(i.rolls.results)}
        out.append(item)
    return out
