"""Random legal play of Rommel in the Desert through the engine: every order
that 'pbem options' lists is accepted, both sides' logs stay identical, and
the hidden identities never show in the opponent's view (DESIGN 4)."""

from __future__ import annotations

import random

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbem import session
from rules.ritd import game as ritd
from rules.ritd.state import all_scenarios, game_map
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")


def _play_turns(table, rng: random.Random, player_turns: int) -> None:
    played = 0
    while played < player_turns:
        decision = table.axis.seat().replay.pending()
        role = decision.role
        seat = table.side(role).seat()
        orders = []
        while True:
            legal = session.legal_orders(seat)
            if not legal:
                break
            choice = rng.choice(legal)
            session.add_orders(seat, [choice])  # every listed order is accepted as it stands
            orders.append(choice)
            seat = table.side(role).seat()
            probe, _ = session.draft_replay(seat)
            now = probe.pending()
            if now is None or now.role != role or now.kind == "dice":
                break
        before = len(table.axis.seat().replay.state.turns)
        table.play(role)
        if len(table.axis.seat().replay.state.turns) != before:
            played += 1


@given(st.integers(0, 2**32))
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
def test_random_legal_orders_are_accepted_and_both_sides_agree(tmp_path_factory, seed):
    table = new_game(tmp_path_factory.mktemp("ritd"), "demo", DEMO_AXIS, demo_allied())
    _play_turns(table, random.Random(seed), 3)
    axis, allied = table.axis.seat().replay, table.allied.seat().replay
    assert axis.head == allied.head
    public = session.load_public(table.axis.gd)
    assert public.head == axis.head
    # Public facts agree; hidden ones appear only on the owner's side.
    for a, b in zip(axis.state.position.blocks, allied.state.position.blocks):
        assert (a.token, a.hex, a.disrupted) == (b.token, b.hex, b.disrupted)
    for side, replay in (("axis", allied), ("allied", axis)):
        for blk in replay.state.position.blocks_of(side):
            assert blk.unit == "" or blk.token in replay.state.disclosed


def test_the_view_of_one_side_does_not_depend_on_the_others_hidden_units(tmp_path):
    """RB 18.2 free deployment: the Allies place their six "S" units on the same
    six hexes in two different ways; the Axis view is the same (tokens aside,
    which are random anyway)."""
    sc = all_scenarios()
    s = sc.get("1941")
    axis = [f"deploy {u.name} at El Agheila" for u in sc.starting_units(s, "axis")] + ["end deployment"]
    free = [u.name for u in sc.setup_units(s, "allied", s.allied.setup[0].id)]
    tobruk = [f"deploy {u.name} at Tobruk" for u in sc.setup_units(s, "allied", s.allied.setup[1].id)]
    hexes = ["Mersa Matruh", "Sidi Barrani", "Sollum", "Bardia", "Buq Buq", "El Alamein"][:len(free)]
    views = []
    for order in (free, list(reversed(free))):
        allied = [f"deploy {u} at {h}" for u, h in zip(order, hexes)] + tobruk + ["end deployment"]
        table = new_game(tmp_path / f"v{len(views)}", "1941", axis, allied)
        view = ritd.view(table.axis.seat().replay.state, "axis")
        blocks = sorted(msgspec.json.encode(msgspec.structs.replace(b, token="")) for b in view.blocks)
        board = msgspec.structs.replace(view.board, blocks=tuple(sorted(
            (msgspec.structs.replace(b, token="") for b in view.board.blocks), key=msgspec.json.encode)))
        views.append((msgspec.json.encode(msgspec.structs.replace(view, blocks=[], board=board)), blocks))
    assert views[0] == views[1]


def _disengaging(order: str, battle_hexes: set[str]) -> bool:
    """A Move order out of a battle hex (the units Disengage, RB 7.2)."""
    words = order.split(" -> ")[0].split(None, 1)
    return len(words) == 2 and words[0] in ("group", "regroup", "withdraw") and words[1] in battle_hexes


@given(st.integers(0, 2**32))
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
def test_random_retreats_and_probes_never_stall_and_both_sides_agree(tmp_path_factory, seed):
    """From a standing battle (the Demo's Sollum), random legal play with a
    Move out of the battle whenever one is offered: the active player's
    Retreats (RB 10.3), Probes of Partial Retreats (RB 10.4, 10.41) and their
    Routs always leave a player to act with at least one legal order, and
    both sides' logs stay identical. Even seeds: the Allies Retreat at once;
    odd: they Pass and the Axis Partially Retreats."""
    from tests.ritd.test_game_retreat import FACE, standoff_table

    rng = random.Random(seed)
    with pytest.MonkeyPatch.context() as monkeypatch:
        table = standoff_table(tmp_path_factory.mktemp("ritd"), monkeypatch)
        FACE["die"] = None  # real dice from here on
        retreater = "allied" if seed % 2 == 0 else "axis"
        prefix = {"allied": ["supply check", "basic" if retreater == "allied" else "pass"],
                  "axis": ["supply check", "basic"] if retreater == "axis" else []}
        steps: set[str] = set()
        turns = len(table.axis.seat().replay.state.turns)
        for _ in range(200):
            state = table.axis.seat().replay.state
            if len(state.turns) >= turns + 3 or state.phase != "turn":
                break
            decision = table.axis.seat().replay.pending()
            assert decision is not None and decision.role in ("axis", "allied")
            role = decision.role
            seat = table.side(role).seat()
            while True:
                now, _ = session.draft_replay(seat)
                decision = now.pending()
                if decision is None or decision.role != role or decision.kind == "dice":
                    break
                steps.add(decision.kind)
                legal = session.legal_orders(seat)
                assert legal, f"{role} must act ({decision.kind}) but has no legal order"
                m = game_map()
                battles = {m.name(b.hex) for b in now.state.position.battles}
                out = [o for o in legal if _disengaging(o, battles)]
                if prefix[role] and prefix[role][0] in legal:
                    choice = prefix[role].pop(0)
                elif out and role == retreater and now.state.turn.movement.moves_made == 0:
                    choice = rng.choice(out)
                elif role != retreater and now.state.turn.step == "movement":
                    choice = rng.choice([o for o in legal if o not in out])  # the battle stays
                else:
                    choice = rng.choice(legal)
                session.add_orders(seat, [choice])
                seat = table.side(role).seat()
            table.play(role)
        axis, allied = table.axis.seat().replay, table.allied.seat().replay
        assert axis.head == allied.head
        assert ("retreat-slowest" if seed % 2 == 0 else "retreat-probe") in steps, steps
