"""Play the race test game quickly in memory through the real engine path:
orders parsed by the rules, bodies built and signed as 'pbem send' does,
every event verified by a public Replay. Used by property tests and the
replay benchmark."""

from __future__ import annotations

import os
import random
from collections.abc import Callable

from pbem import codec, rulesapi, session
from pbem.game import Replay
from pbem.identity import Identity
from pbem.vault import VaultData
from tests.race import rules as race


class SelfPlay:
    def __init__(self, scenario: str = "standard", seed: int = 0) -> None:
        rulesapi.register(race.RULES)
        self.rng = random.Random(seed)
        self.ids = {"red": Identity.generate(), "blue": Identity.generate()}
        self.vaults = {r: VaultData(game="", role=r) for r in self.ids}
        self.replay = Replay(race.RULES)
        self.events: list[bytes] = []
        genesis = codec.Genesis(rules="race", rules_version=race.SPEC.version,
                                data_hash=rulesapi.data_hash(race.SPEC).hex(), scenario=scenario,
                                nonce=self.rng.randbytes(32).hex(),
                                players=[codec.Player(role=r, key=self.ids[r].public_text) for r in ("blue", "red")])
        self.emit("red", [f"setup speed {self.rng.randint(1, 3)}"], genesis)

    def _state(self):
        if self.replay.genesis is None:
            return race.initial_state("standard", ())
        return self.replay.state

    def emit(self, role: str, texts: list[str], genesis: codec.Genesis | None = None) -> bytes:
        orders = []
        for text in texts:
            order = race.parse_order(self._state(), role, text, self.replay.ctx(role))
            secrets = {k: session.Secret(value=v.hex(), salt=os.urandom(32).hex())
                       for k, v in order.secrets.items()}
            orders.append(session.DraftOrder(text=text, action=codec.raw(order.action), secrets=secrets,
                                             reveal=list(order.reveal)))
        data = session._with_secrets(self.vaults[role], orders)
        x_next = os.urandom(32)
        body = session._body(self.replay, role, data, orders, x_next=x_next, genesis=genesis)
        stored = session._sign(self.ids[role], body)
        self.replay.apply_stored(stored)
        data.entropy[str(body.seq)] = x_next.hex()
        self.vaults[role] = data
        self.events.append(stored)
        return stored

    def owner_view(self, role: str) -> Replay:
        """The log replayed from ``role``'s perspective."""
        r = Replay(race.RULES, role=role, known=self.vaults[role].known_values())
        for stored in self.events:
            r.apply_stored(stored)
        return r

    def step(self, choose: Callable[[list[str]], str] | None = None) -> None:
        """One event by whoever must act: random legal orders until the turn passes."""
        choose = choose or self.rng.choice
        decision = self.replay.pending()
        role = decision.role
        if decision.kind == race.DICE:
            self.emit(role, [])
            return
        if decision.kind == "setup":
            self.emit(role, [f"setup speed {self.rng.randint(1, 3)}"])
            return
        mine = self.owner_view(role)
        orders: list[session.DraftOrder] = []
        probe = mine
        while True:
            d = probe.pending()
            if d is None or d.role != role or d.kind == race.DICE:
                break
            legal = [race.format_action(a) for a in race.legal_actions(probe.state, role, probe.ctx(role))]
            text = choose(legal)
            order = race.parse_order(probe.state, role, text, probe.ctx(role))
            orders.append(session.DraftOrder(text=text, action=codec.raw(order.action), reveal=list(order.reveal)))
            probe = session.simulate_draft(mine, role, self.vaults[role], orders, None)
        self.emit(role, [o.text for o in orders])
