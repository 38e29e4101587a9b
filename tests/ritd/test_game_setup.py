"""Rommel in the Desert through the engine: the scenario set-up (RB 18.0)
with hidden identities, deferred placement checks and the audit."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from pbem import codec, rulesapi, session
from pbem.errors import IllegalAction
from pbem.game import AUDIT, Replay
from pbem.identity import Identity
from rules.ritd import RULES as RITD
from rules.ritd import game as ritd
from rules.ritd import hidden
from rules.ritd.actions import Deploy, EndDeployment
from rules.ritd.state import all_scenarios, game_map

DEMO_AXIS = ["deploy Savona at Bardia", "deploy Brescia at Ft. Capuzzo", "deploy Pavia at Ft. Capuzzo",
             "deploy Bologna at Ft. Capuzzo", "deploy Sabratha at Ft. Capuzzo", "deploy Trento at Sidi Omar",
             "deploy Trieste at Sidi Omar", "deploy GGFF at Sidi Omar", "end deployment"]


pytestmark = pytest.mark.usefixtures("registered_ritd")


def demo_allied() -> list[str]:
    s = all_scenarios().get("demo")
    orders = []
    for group in s.allied.setup:
        where = group.zones[0].hexes[0]
        orders += [f"deploy {u.name} at {where}" for u in group.select(all_scenarios().roster, "allied")]
    return orders + ["end deployment"]


def _game(tmp_path: Path):
    axis, allied = Identity.generate(), Identity.generate()
    sent = session.new_game(tmp_path / "axis", "ritd", "demo", "axis", axis, tmp_path / "axis.key",
                            allied.public_text, orders=DEMO_AXIS)
    invitation = Path(sent.turn_file).read_bytes()
    return axis, allied, invitation


def test_rb_18_0_demo_set_up_axis_first_then_allies_identities_hidden(tmp_path):
    axis, allied, invitation = _game(tmp_path)
    joined, host = session.join_game(tmp_path / "allied", invitation, allied, tmp_path / "allied.key",
                                     orders=demo_allied())
    seat = session.load_seat(session.GameDir(tmp_path / "allied"), allied)
    state = seat.replay.state
    # RB 18.0: the initial hands are dealt next from the shared deck: the Allied end of
    # deployment carried the first shuffle step, the Axis takes the second (T-15).
    assert state.phase == "cards" and ritd.pending(state).role == "axis" and ritd.pending(state).kind == "deck"
    assert state.deck.round == "s1" and state.deck.steps == 1 and state.deck.first == "allied"
    axis_blocks = list(state.position.blocks_of("axis"))
    assert len(axis_blocks) == 8 and all(b.unit == "" for b in axis_blocks)  # hidden from the Allies
    assert all(hidden.is_token_of(b.token, "axis") for b in axis_blocks)
    assert len(state.obligations) == 8 and {o.kind for o in state.obligations} == {"placement"}
    allied_view = ritd.view(state, "allied")
    assert all(b.unit == "" for b in allied_view.blocks if b.side == "axis")
    assert {b.unit for b in allied_view.blocks if b.side == "allied"} >= {"7/7 Tk"}
    # The host sees its own units and not the Allies'.
    session.receive(session.load_seat(session.GameDir(tmp_path / "axis"), axis),
                    [("join", Path(joined.turn_file).read_bytes())])
    mine = session.load_seat(session.GameDir(tmp_path / "axis"), axis).replay.state
    assert {b.unit for b in mine.position.blocks_of("axis")} >= {"Savona", "GGFF"}
    assert all(b.unit == "" for b in mine.position.blocks_of("allied"))


def test_rb_19_0_an_axis_unit_outside_its_set_up_hex_is_refused_at_once(tmp_path):
    axis, allied = Identity.generate(), Identity.generate()
    wrong = ["deploy Savona at Sidi Omar"] + DEMO_AXIS[1:]
    with pytest.raises(IllegalAction) as err:
        session.new_game(tmp_path / "g", "ritd", "demo", "axis", axis, tmp_path / "k", allied.public_text,
                         orders=wrong)
    assert "RB 19.0" in str(err.value) and "Savona may not deploy in Sidi Omar" in str(err.value)
    assert not (tmp_path / "g").exists()


def _forged_axis_setup(placements, cv_of=lambda unit, cv: cv):
    """The Axis set-up of the Demo made by a modified client: ``placements``
    (unit, place) in order, each identity committed with ``cv_of(unit, full
    CV)``; the Allies join honestly. Returns the public replay after both,
    the Axis identity, vault data, genesis event and secrets."""
    axis, allied = Identity.generate(), Identity.generate()
    rules = RITD
    nonce = bytes(range(32))
    genesis = codec.Genesis(rules="ritd", rules_version=rules.SPEC.version, data_hash=rulesapi.data_hash(rules.SPEC).hex(),
                            scenario="demo", nonce=nonce.hex(),
                            players=[codec.Player(role="allied", key=allied.public_text),
                                     codec.Player(role="axis", key=axis.public_text)])
    m = game_map()
    orders, secrets = [], {}
    for i, (unit, where) in enumerate(placements):
        token = f"A{i:08x}"
        cv = cv_of(unit, all_scenarios().roster.get(unit).max_cv)
        label = hidden.identity_label(token)
        secrets[label] = session.Secret(value=hidden.encode_identity(unit, cv).hex(), salt=(bytes([i]) * 32).hex())
        orders.append(session.DraftOrder(text=f"deploy {unit}", action=codec.raw(Deploy(token, m.resolve(where))),
                                         secrets={label: secrets[label]}))
    orders.append(_end_deployment("axis", 6, secrets))
    data = session.VaultData(game="", role="axis", secrets=secrets, entropy={"0": bytes(32).hex()})
    body = session._body(Replay(rules), "axis", data, orders, x_next=bytes(32), genesis=genesis)
    stored = session._sign(axis, body)
    public = Replay(rules)
    public.apply_stored(stored)  # the Allies accept it: nothing public is wrong
    assert len(public.state.obligations) == 8
    allied_orders = []
    allied_secrets = {}
    for i, text in enumerate(demo_allied()[:-1]):
        order = ritd.parse_order(public.state, "allied", text, _Fresh(i))
        ((label, value),) = order.secrets.items()
        allied_secrets[label] = session.Secret(value=value.hex(), salt=(bytes([100 + i]) * 32).hex())
        allied_orders.append(session.DraftOrder(text=text, action=codec.raw(order.action),
                                                secrets={label: allied_secrets[label]}))
    allied_orders.append(_end_deployment("allied", 3, allied_secrets))
    allied_data = session.VaultData(game="", role="allied", secrets=allied_secrets)
    allied_orders, _ = session.with_deck(public, "allied", allied_data, allied_orders)  # the first shuffle step
    joined = session._sign(allied, session._body(public, "allied", allied_data, allied_orders, x_next=bytes(32)))
    public.apply_stored(joined)
    return public, axis, data, stored, secrets


def _demo_placements(first=("Savona", "Bardia"), moved=("Trento", "Sidi Omar")):
    return [first] + [(o.split(" at ")[0][7:], o.split(" at ")[1]) for o in DEMO_AXIS[1:5]] \
        + [moved, ("Trieste", "Sidi Omar"), ("GGFF", "Sidi Omar")]


def test_a_hidden_misplacement_is_caught_when_opened_and_by_the_audit(tmp_path):
    """The Axis swaps Savona (Bardia) and Trento (Sidi Omar) in secret: the
    Allies cannot see it (every hex holds the right number of blocks), but
    opening the identities names the event and the signer."""
    public, axis, data, stored, secrets = _forged_axis_setup(_demo_placements(("Trento", "Bardia"),
                                                                              ("Savona", "Sidi Omar")))
    opening = session._sign(axis, session._body(public, "axis", data, [], x_next=bytes(32),
                                                extra_reveals=[f"A{0:08x}.id0"]))
    with pytest.raises(IllegalAction) as err:
        public.clone().apply_stored(opening)
    assert "event 0 by axis: block A00000000 deployed in Bardia: Trento may not deploy in Bardia" in str(err.value)
    audit = Replay(RITD, role=AUDIT, known={k: bytes.fromhex(v.value) for k, v in secrets.items()})
    assert msgspec.json.encode(ritd.view(public.state, "allied"))  # the view still renders
    with pytest.raises(IllegalAction, match="Trento may not deploy in Bardia"):
        audit.apply_stored(stored)


def test_cheat_a_wrong_cv_claimed_for_a_hidden_block_is_caught_when_it_is_revealed(tmp_path):
    """Issue 7 cheat: the Axis commits Savona at CV 6 (its label's top is 4,
    RB 2.3, 18.0: units set up at full strength). The Allies see only a
    block; revealing it (a battle, RB 8.5) opens the identity, and the
    deployment check names the event, the signer and the rule."""
    public, axis, data, stored, secrets = _forged_axis_setup(
        _demo_placements(), cv_of=lambda unit, cv: 6 if unit == "Savona" else cv)
    opening = session._sign(axis, session._body(public, "axis", data, [], x_next=bytes(32),
                                                extra_reveals=[f"A{0:08x}.id0"]))
    with pytest.raises(IllegalAction) as err:
        public.clone().apply_stored(opening)
    assert ("RB 18.0: event 0 by axis: block A00000000 deployed in Bardia: Savona must begin at its maximum "
            "CV 4, not 6") in str(err.value)
    audit = Replay(RITD, role=AUDIT, known={k: bytes.fromhex(v.value) for k, v in secrets.items()})
    with pytest.raises(IllegalAction, match="Savona must begin at its maximum CV 4, not 6"):
        audit.apply_stored(stored)


def _end_deployment(side: str, n: int, secrets: dict) -> session.DraftOrder:
    """'end deployment' (RB 18.0): the initial hands come from the shared deck (T-15)."""
    return session.DraftOrder(text="end", action=codec.raw(EndDeployment()))


class _Fresh:
    """A compose ctx with deterministic 'fresh' bytes for a reproducible test."""

    def __init__(self, i: int) -> None:
        self.i = i

    def fresh(self) -> bytes:
        return bytes([self.i]) * 16
