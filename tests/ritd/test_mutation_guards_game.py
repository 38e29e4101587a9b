"""The RitD state machine (rules/ritd/game.py) through its public
functions ``pending``, ``check`` and ``outcome``, on states set up directly
at one step of the Player-Turn (issue 29: mutation score). The engine's
context is replaced by the little that these checks read: the author, and
which labels are opened or committed."""

from __future__ import annotations

import re
from types import SimpleNamespace

import msgspec
import pytest

from rules.ritd import actions, hidden, routs
from rules.ritd import buildup as bu
from rules.ritd import cards as cd
from rules.ritd import fire as fr
from rules.ritd import game as ritd
from rules.ritd import movement as mv
from rules.ritd.actions import (
    Answer,
    EndBuildup,
    ForcedMarches,
    MarchLosses,
    PursuitLosses,
    RevealAll,
    RevealUnits,
    Rout,
    SupplyCheck,
)
from rules.ritd.position import Battle, Block, Position
from rules.ritd.steps import STEP_OWNER
from rules.ritd.turn import PendingRout, Turn
from rules.ritd.victory import VictoryResult
from tests.ritd.movement_support import MAP, at

BUQ, SOLLUM, SIDI = at("Buq Buq"), at("Sollum"), at("Sidi Barrani")


def _ctx(author: str) -> SimpleNamespace:
    return SimpleNamespace(author=author, opened=lambda label: False, committed=lambda label: False)


def _at_step(step: str, **turn: object) -> ritd.State:
    """The 1941 scenario's state, the Axis Player-Turn paused at ``step``,
    with a battle in Buq Buq (Axis attacking from Sollum)."""
    pos = Position(blocks=(Block("a1", "axis", BUQ, unit="Brescia", cv=4),
                           Block("d1", "allied", BUQ, unit="7 SG", cv=3)),
                   battles=(Battle(BUQ, "axis", {SOLLUM: "axis"}),))
    base = ritd.initial_state("1941", ())
    movement = mv.start_movement(pos, "axis")
    t = Turn(number=1, active="axis", step=step, movement=movement, **turn)  # type: ignore[arg-type]
    return msgspec.structs.replace(base, phase="turn", side="axis", position=pos, turn=t)


def test_rb_6_4_forced_marches_are_announced_once() -> None:
    state = _at_step("movement")
    state = msgspec.structs.replace(state, turn=msgspec.structs.replace(
        state.turn, movement=msgspec.structs.replace(state.turn.movement, marches_announced=True)))
    probs = ritd.check(state, ForcedMarches(marches=()), _ctx("axis"))
    assert [(p.rule, p.message) for p in probs] == [("RB 6.4", "Forced Marches are announced once, after all Moves")]


def test_rb_7_3_units_are_revealed_only_after_all_movement() -> None:
    probs = ritd.check(_at_step("movement"), RevealUnits(), _ctx("axis"))
    assert [(p.rule, p.message) for p in probs] == [
        ("RB 7.3", "units in battles are revealed when all Movement is complete")]


def test_rb_10_5_pursuit_fire_only_on_the_group_that_refused() -> None:
    """RB 10.2, 10.5: Pursuit Fire follows the refusing player's announcement,
    on that Group: fire on another hex is refused even at the right step."""
    state = _at_step("refuse-pursuit", refusing=BUQ, refusers=("d1",), slowest=2)
    probs = ritd.check(state, routs.PursuitFire(hex=SIDI, pursuers=()), _ctx("axis"))
    assert [p.rule for p in probs] == ["RB 10.5"] and "follows the refusing player's announcement" in probs[0].message
    assert ritd.check(state, routs.PursuitFire(hex=BUQ, pursuers=()), _ctx("axis")) == []


def test_rb_10_5_pursuit_losses_name_each_pursued_unit_once() -> None:
    state = _at_step("refuse-losses", refusing=BUQ, refusers=("d1",), slowest=2, hits=1)
    probs = ritd.check(state, PursuitLosses(hex=BUQ), _ctx("allied"))
    assert [p.rule for p in probs] == ["RB 10.5"] and "name each pursued unit once" in probs[0].message


_NO_PROMPT_CHECK = {"forced-march", "refuse-dice", "retreat-dice", "rout-dice", "defensive-dice", "offensive-dice"}


@pytest.mark.parametrize("step", sorted(set(STEP_OWNER) - _NO_PROMPT_CHECK))
def test_rb_3_4_every_decision_of_the_turn_tells_the_player_the_rule(step: str) -> None:
    """Each step's prompt names what is asked and its rule number (STYLE:
    a player pays an email round trip per misunderstanding)."""
    extra: dict[str, object] = {}
    if step.startswith("rout-"):
        extra["rout_queue"] = (PendingRout(hex=BUQ, side="allied", tokens=("d1",)),)
    elif step.startswith("refuse-"):
        extra.update(refusing=BUQ, refusers=("d1",))
    elif step.startswith("retreat-") or step in ("probe-reveal",):
        extra.update(retreating=BUQ, retreaters=("a1",))
    decision = ritd.pending(_at_step(step, **extra))
    assert decision is not None and decision.kind == step
    assert re.search(r"RB \d+\.\d", decision.prompt), decision.prompt
    assert len(decision.prompt.split(":")[0]) > 10, decision.prompt


def test_rb_17_0_a_drawn_game_says_so_with_its_rule() -> None:
    state = msgspec.structs.replace(ritd.initial_state("1941", ()), phase="over",
                                    result=VictoryResult(None, None, 0, ("RB 17.4: equal unit counts",)))
    out = ritd.outcome(state)
    assert out is not None and out.winner is None
    assert out.summary == "a draw: no level of victory (RB 17.0); RB 17.4: equal unit counts"
    won = msgspec.structs.replace(state, result=VictoryResult("attrition", "allied", 1, ("why",)))
    assert ritd.outcome(won).summary == "Allied Attrition Victory (1 VP, RB 17.4); why"
    assert ritd.outcome(ritd.initial_state("1941", ())) is None


#: The action vocabulary of signed RitD events (rules version 4): each tag is
#: part of the wire form of every stored game, so none may change (STYLE 4).
ACTION_TAGS = {
    "Deploy": "deploy", "EndDeployment": "end-deployment", "KeepHand": "keep-hand", "Redraw": "redraw",
    "Challenge": "challenge", "Answer": "answer", "OpenChallenge": "open-challenge",
    "EarlyArrival": "early-arrival", "Reinforce": "reinforce", "CallMalta": "call-malta", "Rebuild": "rebuild",
    "EndBuildup": "end-buildup", "BuildMinefield": "build-minefield", "OpenMinefields": "open-minefields",
    "RevealAll": "reveal-all", "SupplyCheck": "supply-check", "PlayCards": "play-cards",
    "ForcedMarches": "forced-marches", "EndMovement": "end-movement", "AcceptBattle": "accept-battle",
    "RefuseBattle": "refuse-battle", "PursuitLosses": "pursuit-losses", "Rout": "rout",
    "MarchLosses": "march-losses", "Probe": "probe", "RetreatSpeed": "retreat-speed", "Blitz": "blitz",
    "RevealUnits": "reveal-units", "RevealOption": "reveal-option",
}


@pytest.mark.parametrize("name,tag", sorted(ACTION_TAGS.items()))
def test_the_action_tags_of_signed_events_never_change(name: str, tag: str) -> None:
    cls = getattr(actions, name)
    assert cls.__struct_config__.tag == tag
    assert cls.__struct_config__.tag_field == "type"


def test_rb_3_0_an_action_of_the_wrong_kind_for_the_refusal_procedure_is_not_an_order_now() -> None:
    """A Rout order (RB 11.3) while a Refusal's Pursuit Fire is awaited is no
    order for now (RB 3.0), not a silent acceptance."""
    state = _at_step("refuse-pursuit", refusing=BUQ, refusers=("d1",), slowest=2)
    probs = ritd.check(state, Rout(hex=BUQ), _ctx("axis"))
    assert [(p.rule, p.message) for p in probs] == [("RB 3.0", "not an order for now")]


@pytest.mark.parametrize("word", ["armor", "armour", "infantry", "artillery", "antitank", "anti-tank"])
def test_rb_9_3_fire_orders_name_the_target_class_in_words(word: str) -> None:
    state = _at_step("offensive-fire", battles=(BUQ,))
    order = ritd.parse_order(state, "axis", f"fire Buq Buq: a1 at {word}", _ctx("axis"))
    want = {"armour": "armor", "anti-tank": "antitank"}.get(word, word)
    assert order.action == fr.FirePlan(hex=BUQ, side="axis", fires=(fr.UnitFire(token="a1", target=want),))


def test_rb_13_3_and_15_1_supply_check_orders_name_fortress_and_oasis_units() -> None:
    state = _at_step("initial-supply")
    order = ritd.parse_order(state, "axis", "supply check fortress Tobruk: a1", _ctx("axis"))
    assert order.action == SupplyCheck(fortress={at("Tobruk"): ("a1",)})
    order = ritd.parse_order(state, "axis", "supply check oasis Siwa: a1", _ctx("axis"))
    assert order.action == SupplyCheck(oasis={at("Siwa"): "a1"})


def test_rb_10_41_the_passive_player_may_probe_a_partial_retreat_or_not() -> None:
    state = _at_step("retreat-probe", retreating=BUQ, retreaters=("a1",))
    assert ritd.legal_orders(state, "allied", _ctx("allied")) == ["no probe Buq Buq", "probe Buq Buq"]


def test_rb_13_3_the_supply_check_orders_offer_each_choice_of_fortress_supply() -> None:
    """RB 13.3: more units could draw Fortress Supply from Isolated Tobruk
    than its capacity: the owner chooses, and the orders offered name them."""
    from tests.ritd.test_supply import tobruk_position
    pos = tobruk_position({}, inside=6)
    state = msgspec.structs.replace(_at_step("initial-supply"), position=pos, side="allied",
                                    turn=Turn(number=2, active="allied", step="initial-supply",
                                              movement=mv.start_movement(pos, "allied")))
    orders = ritd.legal_orders(state, "allied", _ctx("allied"))
    assert orders and all(o.startswith("supply check fortress Tobruk: ") for o in orders)
    assert len(orders) == 6  # five of the six inside, each way


def test_rb_3_3_declining_the_challenge_plays_no_card() -> None:
    state = msgspec.structs.replace(ritd.initial_state("1941", ()), phase="initiative", stage="answer", side="axis")
    probs = ritd.check(state, Answer(label="", card="s1:0"), _ctx("axis"))
    assert [(p.rule, p.message) for p in probs] == [("RB 3.3", "declining plays no card")]
    assert ritd.check(state, Answer(label="", card=""), _ctx("axis")) == []


def test_rb_17_0_at_the_end_every_block_is_turned_up_at_its_current_identity_version() -> None:
    """RB 17.0: the blocks are turned face up at the end; each opens the
    identity it now has: the first (version 0) if it never lost a step in
    secret, the latest otherwise."""
    state = _at_step("final-supply")
    pos = state.position
    pos = msgspec.structs.replace(pos, blocks=pos.blocks + (Block("a2", "axis", SOLLUM, unit="Pavia", cv=4),))
    state = msgspec.structs.replace(state, position=pos, phase="final", stage="reveal-all", side="axis",
                                    versions={"a1": 2}, turn=None)
    decision = ritd.pending(state)
    assert decision is not None and decision.role == "axis"

    def ctx(opened: set[str]) -> SimpleNamespace:
        return SimpleNamespace(author="axis", opened=lambda label: label in opened, committed=lambda label: False)

    assert ritd.check(state, RevealAll(), ctx({"a1.id2", "a2.id0"})) == []
    probs = ritd.check(state, RevealAll(), ctx({"a1.id2"}))
    assert [p.rule for p in probs] == ["RB 17.0"] and "a2.id0 not opened" in probs[0].message
    probs = ritd.check(state, RevealAll(), ctx({"a2.id0", "a1.id0"}))
    assert [p.rule for p in probs] == ["RB 17.0"] and "a1.id2 not opened" in probs[0].message


def test_rb_16_51_a_redeploy_order_follows_the_roads_inside_the_network() -> None:
    """RB 16.51: Redeployment moves a unit inside the friendly Supply Network
    fixed for the Buildup; the order names the destination and the route
    taken is the cheapest one, roads preferred: here the Coast Highway."""
    hw = tuple(at(p) for p in ("El Agheila", "Mersa Brega", "Agedabia SW1", "Agedabia"))
    pos = Position(blocks=(Block("a1", "axis", hw[0], unit="Brescia", cv=4),))
    network = tuple(sorted({h for x in hw for _, h in MAP.neighbours(x)} | set(hw)))
    state = msgspec.structs.replace(ritd.initial_state("1941", ()), phase="buildup", stage="buildup", side="axis",
                                    position=pos, networks={"axis": network})
    order = ritd.parse_order(state, "axis", "redeploy a1 -> Agedabia", _ctx("axis"))
    assert order.action == bu.Redeploy(token="a1", path=hw)


def test_rb_16_6_only_dummies_are_handed_back_at_resupply() -> None:
    """RB 16.6: at Resupply a player may hand back dummy cards only; the
    cards named are shown in the same event, so a real one is caught."""
    deck = cd.Deck(rounds=1, sources={"s1": ("card:real-01", "card:dummy-01")}, held={"axis": ("s1:0", "s1:1")})
    faces = {("s1", 0): "real-01", ("s1", 1): "dummy-01"}
    state = msgspec.structs.replace(ritd.initial_state("1941", ()), phase="buildup", stage="buildup", side="axis",
                                    deck=deck, hands={"axis": cd.Hand(count=2, real=1)},
                                    ledgers={"axis": bu.open_ledger("axis", 0)})
    ctx = SimpleNamespace(author="axis", opened=lambda label: False, committed=lambda label: False,
                          card=lambda rnd, pos: faces.get((rnd, pos)))
    assert ritd.check(state, EndBuildup(discard=1, cards=("s1:1",)), ctx) == []
    probs = ritd.check(state, EndBuildup(discard=1, cards=("s1:0",)), ctx)
    assert [(p.rule, p.message) for p in probs] == [("RB 16.6", "the cards named hold 1 real card(s), not the 0 committed")]


def test_rb_6_4_a_failed_retreat_forced_march_costs_one_step_as_the_next_identity_version() -> None:
    """RB 6.4 sidebar "Retreat Forced Marches" (T-39): the unit loses one
    step in secret, committed as its next identity version (v0 -> v1)."""
    state = _at_step("march-losses", march_losses=("a1",))
    values = {"a1.id1": hidden.encode_identity("Brescia", 3)}
    ctx = SimpleNamespace(author="axis", seq=5, opened=lambda label: label in values,
                          committed=lambda label: label in values, value=values.get, card=lambda rnd, pos: None)
    action = MarchLosses(recommit=("a1",))
    assert ritd.check(state, action, ctx) == []
    after = ritd.apply(state, action, ctx)
    assert after.versions == {"a1": 1} and after.position.block("a1").cv == 3


def test_rb_16_51_the_orders_offered_in_the_buildup_are_legal_redeployments_only() -> None:
    """RB 16.51, 16.5: a Redeployment costs 1 BP and stays inside the friendly
    Network fixed for the Buildup: with no BP none is offered; with BP only
    the neighbouring hexes of the Network are."""
    hw = tuple(at(p) for p in ("El Agheila", "Mersa Brega", "Agedabia SW1"))
    pos = Position(blocks=(Block("a1", "axis", hw[0], unit="Brescia", cv=4),))
    base = msgspec.structs.replace(ritd.initial_state("1941", ()), phase="buildup", stage="buildup", side="axis",
                                   position=pos, networks={"axis": tuple(sorted(hw)), "allied": ()})
    for bp, want in ((0, ["end buildup"]), (5, ["end buildup", "redeploy Brescia -> Mersa Brega"])):
        state = msgspec.structs.replace(base, ledgers={"axis": bu.open_ledger("axis", bp)})
        assert ritd.legal_orders(state, "axis", _ctx("axis")) == want
