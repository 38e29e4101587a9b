"""The Player-Turn through the engine (RB 3.4x): supply checks, the secret
turn option, Moves with hidden speeds, Refusing Battle, Forced March dice,
revealing battle units, Supply Revealed; the 19.0 Demo's first turns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pbem import codec, session
from pbem.errors import IllegalAction, VerifyError
from pbem.game import Replay
from pbem.private import PrivateChoices
from pbem.turnfile import format_turn
from rules.ritd import RULES as RITD
from rules.ritd import game as ritd
from rules.ritd import group_moves, reachability
from rules.ritd.group_moves import unit_speed
from rules.ritd.state import game_map
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")


@pytest.fixture
def demo(tmp_path):
    return new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())


def _state(side):
    return side.seat().replay.state


def _pending(side):
    return side.seat().replay.pending()


def test_rb_19_0_demo_axis_turn_1_regroup_into_sollum_and_the_allied_refusal(demo):
    m = game_map()
    demo.play("axis", "supply check", "basic", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento",
              "end movement")
    # The Allied player sees three blocks enter Sollum, not which units, and must decide.
    allied = _state(demo.allied)
    assert _pending(demo.allied).kind == "refuse"
    assert [b.unit for b in allied.position.blocks_in(m.resolve("Sollum"), "axis")] == ["", "", ""]
    # One hex each: any unit type is fast enough, so nothing is deferred (RB 6.1).
    assert [o for o in allied.obligations if o.kind == "speed"] == []
    assert "accept-battle Sollum" in session.legal_orders(demo.allied.seat())
    # RB 10.2: the refusal announces the slowest speed; the Axis units in Sollum are all
    # slower than the 7/7 Tk, so none can pursue (RB 10.5) and no dice are rolled.
    assert "refuse-battle Sollum slowest 3" in session.legal_orders(demo.allied.seat())
    demo.play("allied", "refuse-battle Sollum slowest 3")
    assert _pending(demo.axis).kind == "refuse-pursuit"
    assert session.legal_orders(demo.axis.seat()) == ["pursue Sollum with none"]
    demo.play("axis", "pursue Sollum with none")
    assert _pending(demo.allied).kind == "refuse-withdraw"
    demo.play("allied", "refuse-battle Sollum -> Sidi Barrani")
    axis = _state(demo.axis)
    mech = axis.position.blocks_in(m.resolve("Sidi Barrani"), "allied")
    assert len(mech) == 1 and mech[0].disrupted  # a retreat always disrupts (RB 7.2)
    assert axis.position.battles == () and axis.turn.step == "final-supply"
    demo.play("axis", "supply check", "reveal option")
    allied = _state(demo.allied)
    assert allied.turn.active == "allied" and allied.turn.number == 2 and allied.turn.step == "initial-supply"
    # RB 13.1 (T-03): Bardia was deployed in by the Axis; Tobruk and Benghazi lie in the
    # Axis area of the 1940 scenario, which the Demo follows.
    assert allied.position.fortresses == {m.resolve(f): "axis" for f in ("Bardia", "Tobruk", "Benghazi")}


def test_rb_4_0_a_second_move_in_a_basic_turn_is_refused_at_once(demo):
    seat = demo.axis.seat()
    session.add_orders(seat, ["supply check", "basic", "group Sidi Omar -> Sidi Omar NE1 GGFF"])
    with pytest.raises(IllegalAction) as err:
        session.add_orders(demo.axis.seat(), ["group Ft Capuzzo -> Bardia Brescia"])
    assert "RB 4.0" in str(err.value)


def test_rb_3_48_an_option_that_does_not_pay_for_the_moves_is_caught_at_supply_revealed(demo):
    """The Axis plays two cards, one real and one dummy (the Allies cannot
    tell a bluff from an Offensive), and moves twice: its own pbem refuses
    the second Move at once; a cheating client's turn is accepted by the
    Allies until Supply Revealed opens the cards and names the rule (RB 4.2:
    two Moves need two real cards)."""
    seat = demo.axis.seat()
    session.add_orders(seat, ["supply check", "basic + 1 dummy", "group Sidi Omar -> Sidi Omar W1 GGFF"])
    with pytest.raises(IllegalAction, match="RB 4.0"):
        session.add_orders(demo.axis.seat(), ["group Ft Capuzzo -> Bardia W1 Brescia"])
    # The cheater signs the same orders without its own checks.
    seat = demo.axis.seat()
    blind = Replay(RITD, role=None)
    for stored in demo.allied.gd.read_events():
        blind.apply_stored(stored)
    token = {b.unit: b.token for b in seat.replay.state.position.blocks_of("axis")}
    texts = ["supply check", "basic + 1 dummy", f"group Sidi Omar -> Sidi Omar W1 {token['GGFF']}",
             f"group Ft Capuzzo -> Bardia W1 {token['Brescia']}", "end movement", "supply check", "reveal option"]
    orders: list[session.DraftOrder] = []
    for text in texts:
        # Parse against the public replay (where two cards allow two Moves), as a cheater would.
        so_far = session._body(blind, "axis", session._with_secrets(seat.vault, orders), orders, x_next=bytes(32))
        state = session.simulate(blind, so_far).state
        order = ritd.parse_order(state, "axis", text, _Fresh(seat.replay.card))
        secrets = {k: session.Secret(value=v.hex(), salt=(b"s" * 32).hex()) for k, v in order.secrets.items()}
        orders.append(session.DraftOrder(text=text, action=codec.raw(order.action), secrets=secrets,
                                         reveal=list(order.reveal)))
    data = session._with_secrets(seat.vault, orders)
    whole = session._sign(seat.identity, session._body(blind, "axis", data, orders, x_next=bytes(32)))
    # Sent as one event, the option is opened with it: the second Move is caught at once.
    with pytest.raises(IllegalAction, match=r"(?s)action 4 .* RB 4.0: no Move left"):
        blind.clone().apply_stored(whole)
    # Sent as two events, the Allies accept the Moves (two cards may pay for two) ...
    first = session._sign(seat.identity, session._body(blind, "axis", data, orders[:-1], x_next=bytes(32)))
    blind.apply_stored(first)
    data.entropy[str(blind.seq)] = bytes(32).hex()
    # ... and Supply Revealed names the rule when the option is opened.
    last = session._sign(seat.identity, session._body(blind, "axis", data, orders[-1:], x_next=bytes(32)))
    with pytest.raises(IllegalAction) as err:
        blind.clone().apply_stored(last)
    text = str(err.value)
    assert "reveal option" in text and "RB 4.2" in text and "two Moves (an Offensive Turn) needs 2 real cards" in text
    assert "only 1 of the 2 cards played is real" in text


def quiet_route(state, start: str) -> tuple[str, str]:
    """Two steps from ``start`` through empty hexes with no enemy next to them."""
    m, pos = game_map(), state.position
    def quiet(h):
        return pos.control(h, "axis") == "empty" and not any(
            pos.blocks_in(n, "allied") for _, n in m.neighbours(h))
    for _, a in m.neighbours(m.resolve(start)):
        if m.is_passable(m.resolve(start), a) and quiet(a):
            for _, b in m.neighbours(a):
                if b != m.resolve(start) and m.is_passable(a, b) and quiet(b):
                    return m.name(a), m.name(b)
    raise AssertionError("no quiet route")


def test_forced_march_dice_come_from_the_engine_and_both_sides_agree(demo):
    first, second = quiet_route(_state(demo.axis), "Sidi Omar")
    demo.play("axis", "supply check", "basic", f"group Sidi Omar -> {first} GGFF",
              f"forced-march GGFF -> {second}", "end movement")
    axis, allied = demo.axis.seat().replay, demo.allied.seat().replay
    assert axis.head == allied.head
    rolls = axis.history[-1].rolls
    assert rolls is not None and rolls.asker == "axis" and len(rolls.values) == 1
    assert axis.state.last_rolls == allied.state.last_rolls == rolls.values
    ggff = next(b for b in axis.state.position.blocks_of("axis") if b.unit == "GGFF")
    assert ggff.disrupted == (rolls.values[0] <= 3)  # RB 6.4: 1-3 disrupts, 4-6 moves on


def test_explain_supply_and_move_through_the_cli(demo):
    """'pbem explain supply <hex or unit>' and 'pbem explain move <unit>' (issue 4)."""
    from click.testing import CliRunner

    from pbem.cli import cli
    game = str(demo.axis.gd.path)
    supply = CliRunner().invoke(cli, ["explain", "supply", "Sidi Omar", "-g", game])
    assert supply.exit_code == 0, supply.output
    assert "Sidi Omar" in supply.output and "El Agheila" in supply.output or "Base" in supply.output
    by_unit = CliRunner().invoke(cli, ["explain", "supply", "Savona", "-g", game])
    assert by_unit.exit_code == 0 and "Bardia" in by_unit.output
    move = CliRunner().invoke(cli, ["explain", "move", "Brescia", "-g", game])
    assert move.exit_code == 0, move.output
    assert move.output.startswith("Brescia (A") and "Can reach:" in move.output and "Cannot reach:" in move.output
    unknown = CliRunner().invoke(cli, ["explain", "move", "Rommel", "-g", game])
    assert unknown.exit_code == 2 and "RB 2.0" in unknown.output
    other = CliRunner().invoke(cli, ["explain", "weather", "today", "-g", game])
    assert other.exit_code == 2 and "topics: supply, move" in other.output


class _Fresh:
    def __init__(self, card=None) -> None:
        self.card = card  # the player's own view of its cards (ctx.card)

    def fresh(self) -> bytes:
        return bytes(16)

    def private_sample(self, purpose: str, n: int, k: int) -> tuple[int, ...]:
        return PrivateChoices(bytes(32), "test", "axis", 0, 0).sample(purpose, n, k)



def _send(table, role, *orders, open_all=False) -> bytes:
    seat = table.side(role).seat()
    if orders:
        session.add_orders(seat, list(orders))
    return Path(session.send(seat, open_all=open_all).turn_file).read_bytes()


def test_cheat_a_hidden_block_moved_farther_than_its_type_allows_is_caught(demo, monkeypatch):
    """Cheat catalogue (issue 7): a modified Axis client takes its Pavia (Infantry,
    speed 1, RB 6.1) for a Motorized unit (speed 2) and moves it two hexes. The
    Allies see only a hidden block moving two hexes, which some units may, so the
    speed is a deferred check; it fails when Pavia's identity opens, and the audit
    names the event, its signer and the rule."""
    m = game_map()
    axis = _state(demo.axis)
    pavia = next(b for b in axis.position.blocks_of("axis") if b.unit == "Pavia")
    speed = unit_speed
    seat = demo.axis.seat()
    session.add_orders(seat, ["supply check", "basic"])
    movement = session.draft_replay(seat)[0].state.turn.movement
    far = set(reachability.reachable(m, axis.position, movement, pavia.token, 2).paths)
    near = set(reachability.reachable(m, axis.position, movement, pavia.token, 1).paths)
    dest = m.name(min(h for h in far - near if not axis.position.blocks_in(h)))
    with pytest.raises(IllegalAction, match="RB 6.1"):  # an honest client refuses it at once
        session.add_orders(seat, [f"group Ft Capuzzo -> {dest} Pavia"])

    def cheating(unit: str) -> int:
        return 2 if unit == "Pavia" else speed(unit)

    with monkeypatch.context() as cheat:
        cheat.setattr(group_moves, "unit_speed", cheating)
        data = _send(demo, "axis", f"group Ft Capuzzo -> {dest} Pavia", "end movement", "supply check",
                     "reveal option")
    demo.deliver(demo.allied, data)  # accepted: the Allies cannot tell yet
    allied = _state(demo.allied)
    assert [o.needed for o in allied.obligations if o.kind == "speed" and o.token == pavia.token] == [2]
    assert allied.position.block(pavia.token).hex == m.resolve(dest)
    demo.play("allied", "supply check", "pass", "end movement", "supply check")
    with monkeypatch.context() as cheat:  # the Axis opens everything in its next event
        cheat.setattr(group_moves, "unit_speed", cheating)
        data = _send(demo, "axis", "supply check", open_all=True)
        events = demo.axis.gd.read_events()
    with pytest.raises(IllegalAction) as err:
        demo.deliver(demo.allied, data)
    assert "RB 6.1" in str(err.value) + " ".join(getattr(err.value, "details", []) or [])
    with pytest.raises(IllegalAction) as err:
        session.audit(events, RITD)
    text = str(err.value) + " ".join(getattr(err.value, "details", []) or [])
    assert re.search(r"event \d+ by axis", text) and "RB 6.1" in text and "Pavia" in text



def test_cheat_cards_opened_with_a_value_they_were_not_committed_to_are_refused(demo):
    """Cheat catalogue (issue 7): at Supply Revealed (RB 3.48) a modified Axis
    client opens the cards it played face down with another value than the one
    it committed at T3. The Allies' receive refuses the signed event at once and
    nothing is added to their log."""
    demo.play("axis", "supply check", "basic", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento",
              "end movement")
    demo.play("allied", "refuse-battle Sollum slowest 3")
    demo.play("axis", "pursue Sollum with none")
    demo.play("allied", "refuse-battle Sollum -> Sidi Barrani")
    seat = demo.axis.seat()
    label = seat.replay.state.turn.option_label
    orders = session.add_orders(seat, ["supply check", "reveal option"])
    assert orders[-1].reveal == [label]
    forged = session._with_secrets(seat.vault, [])
    honest = forged.secrets[label]
    forged.secrets[label] = session.Secret(value=(bytes.fromhex(honest.value) + b"!").hex(), salt=honest.salt)
    body = session._body(seat.replay, "axis", forged, orders, x_next=bytes(32))
    stored = session._sign(seat.identity, body)
    allied = demo.allied.seat()
    before = allied.replay.head
    with pytest.raises(VerifyError, match="does not match its commitment"):
        allied.replay.clone().apply_stored(stored)
    seq = len(allied.replay.history)
    turn_file = format_turn(allied.replay.game_hex, f"ritd {ritd.SPEC.version}", [stored], ["axis"], [seq])
    with pytest.raises(VerifyError, match=r"event \d+ by axis: the opening of 'turn1.option' does not match"):
        session.receive(allied, [("forged.pbem", turn_file)])
    assert demo.allied.seat().replay.head == before
