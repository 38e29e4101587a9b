"""The Month through the engine (RB 3.1-3.3, 16.0-16.6, 17.0, 18.0): the
initial hands and the one redraw, Supply Cards paying for the turns, the
Pass-Pass Month end, the Buildup (BP dice, Player 1, Reinforcements,
Redeployments, Replacements, Resupply), the Initiative challenge and the end
of the game. Cards: tests/ritd/conftest.py deals every third card a dummy."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

import pbem.game
from pbem import session
from pbem.errors import IllegalAction
from pbem.rulesapi import ActingAs
from rules.ritd import RULES as RITD
from rules.ritd import buildup as bu
from rules.ritd import cards as cd
from rules.ritd import game as ritd
from rules.ritd import hidden, month_phase, sequence, supplycards
from rules.ritd import reinforcements as rf
from rules.ritd.actions import Reinforce
from rules.ritd.buildup_orders import buildup_path, due_count
from rules.ritd.cards import Hand
from rules.ritd.hidden import Obligation
from rules.ritd.initiative import one_card_problems
from rules.ritd.openings import decide_labelled
from rules.ritd.state import all_scenarios, game_map
from rules.ritd.turn_options import option_problems
from rules.ritd.turn_orders import check_turn
from tests.ritd.ritd_table import new_game
from tests.ritd.test_demo_19_0 import book_dice  # noqa: F401  (fixture: the rulebook's Demo dice)
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")


@pytest.fixture
def demo(tmp_path):
    return new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())


def _state(side):
    return side.seat().replay.state


def _now(side):
    """The state as ``side`` sees it now, its own pending dice rolled (its draft)."""
    return session.draft_replay(side.seat())[0].state


def _axis_buildup(demo):
    """The Axis Buildup of Month 2 in the Demo: the Early Arrival die for
    Ariete, due in Month 3 (RB 16.41), then the end of spending."""
    demo.play("axis", "early arrival")
    if due_count(_now(demo.axis), "axis"):
        demo.play("axis", "reinforce", "end buildup")
    else:
        demo.play("axis", "end buildup")


def _hands(side):
    return {s: (h.count, h.real) for s, h in _now(side).hands.items()}


def test_rb_18_0_initial_hands_are_dealt_and_one_redraw_is_allowed(tmp_path):
    table = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied(), keep_hands=False)
    # Demo: the Axis holds 6 cards, the Allies 3; each side sees only its own real count.
    # (The Axis sees its hand in its draft: its last shuffle step rides on its next event.)
    assert _hands(table.axis) == {"axis": (6, 4), "allied": (3, None)}
    assert table.pending().kind == "deck" and table.pending().role == "axis"  # step 4, then the redraw
    assert session.draft_replay(table.axis.seat())[0].pending().kind == "redraw"
    table.play("axis", "redraw")
    # The old hand goes back into the next reshuffle; the new cards are dealt from the
    # rest of the shared deck by the Allied player's keys, in its next event (T-15).
    assert _hands(table.axis)["axis"] == (0, 0)
    assert _hands(table.allied) == {"axis": (6, None), "allied": (3, 2)}  # its draft deals the new hand
    assert _state(table.axis).deck.returned == tuple(f"s1:{p}" for p in range(6))
    assert table.pending().role == "allied" and table.pending().kind == "deck"
    with pytest.raises(IllegalAction, match="not your decision"):  # the Axis redraws once only
        session.add_orders(table.axis.seat(), ["redraw"])
    table.play("allied", "keep hand")
    assert _hands(table.axis)["axis"] == (6, 4)  # a new hand of 6: positions 9-14 of the first round
    assert _state(table.axis).deck.held["axis"] == tuple(f"s1:{p}" for p in range(9, 15))
    assert _state(table.allied).phase == "turn" and table.pending().role == "axis"  # RB 18.0: the Axis first


def test_rb_3_42_the_hand_must_hold_the_real_cards_played(demo):
    demo.play("axis", "supply check", "pass", "end movement", "supply check")
    seat = demo.allied.seat()
    # The Allied hand holds 2 real cards and 1 dummy.
    with pytest.raises(IllegalAction, match="RB 3.42: 2 dummy cards played, but the hand holds 1 dummies"):
        session.add_orders(seat, ["supply check", "basic + 2 dummies"])
    with pytest.raises(IllegalAction, match="RB 3.42: 3 real cards played, but the hand holds 2 real cards"):
        session.add_orders(demo.allied.seat(), ["supply check", "blitz"])
    hand = Hand(count=3, real=2)
    assert [str(p) for p in cd.play_problems(hand, 3, 3, "RB 3.42")] == [
        "RB 3.42: 3 real cards played, but the hand holds 2 real cards"]
    assert cd.play_problems(Hand(count=3, real=None), 3, 3, "RB 3.42") == []  # secret: the audit decides
    assert [p.rule for p in cd.play_problems(hand, 4, 2, "RB 3.42")] == ["RB 3.42"]  # the count is public


def test_rb_3_1_two_passes_end_the_month_and_the_buildup_follows(demo):
    m = game_map()
    demo.play("axis", "supply check", "pass", "end movement", "supply check")
    assert _state(demo.allied).passes == 1 and _state(demo.allied).phase == "turn"
    demo.play("allied", "supply check", "pass", "end movement", "supply check")
    # RB 16.1-16.3: Month 2's Buildup; the BP dice (one each in 1940) are rolled with the
    # Axis entropy (its next event); both players receive the total of all dice.
    axis = _now(demo.axis)
    assert axis.phase == "buildup" and axis.month == 2 and axis.stage == "buildup"
    assert len(axis.bp_dice) == 2 and all(1 <= d <= 6 for d in axis.bp_dice)
    bp = sum(axis.bp_dice)
    assert {s: led.total for s, led in axis.ledgers.items()} == {"axis": bp, "allied": bp}
    first = "axis" if axis.bp_dice[0] < axis.bp_dice[1] else "allied"  # RB 16.3: ties go to the Allies
    assert axis.player1 == first and demo.pending().role == first
    if first == "axis":
        _axis_buildup(demo)
    # RB 16.4: the two Allied Reinforcements of Month 2 arrive in Base first.
    with pytest.raises(IllegalAction, match="RB 16.4: the 2 Reinforcements due now arrive first"):
        session.add_orders(demo.allied.seat(), ["end buildup"])
    base = m.base("allied")
    demo.play("allied", "reinforce", "redeploy 4 Ind/5 -> Sidi Barrani" if bp >= 7 else "end buildup")
    allied = _state(demo.allied)
    assert {b.unit for b in allied.position.blocks_in(base, "allied")} | \
        {b.unit for b in allied.position.blocks_of("allied") if b.hex == m.resolve("Sidi Barrani")} >= \
        {"4 Ind/11"}
    hidden = [b for b in _state(demo.axis).position.blocks_of("allied") if b.token in
              {t for t in _state(demo.allied).versions if t not in _state(demo.axis).disclosed}]
    assert all(b.unit == "" for b in hidden)  # the Axis does not see which units arrived


def test_rb_16_5_buildup_spending_saving_and_resupply(demo):
    m = game_map()
    demo.play("axis", "supply check", "pass", "end movement", "supply check")
    demo.play("allied", "supply check", "pass", "end movement", "supply check")
    state = _now(demo.axis)
    if state.player1 == "axis":
        _axis_buildup(demo)
    bp = state.ledgers["allied"].total
    demo.play("allied", "reinforce", "redeploy 4 Ind/11 -> Sidi Barrani")
    led = _state(demo.allied).ledgers["allied"]
    route = buildup_path(_state(demo.allied), "allied", m.base("allied"), [m.resolve("Sidi Barrani")])
    cost = bu.redeployment_cost(m, route)
    assert led.available == bp - cost and led.entries[-1].kind == "redeploy"
    # The Axis sees the Redeployment and its BP (RB 16.5 sidebar: divulged on request).
    assert _state(demo.axis).ledgers["allied"].available == bp - cost
    # RB 16.5 sidebar: the Axis asks what the Allies spent ('pbem explain bp allied').
    told = ritd.explain(_state(demo.axis), "axis", "bp", "allied", None)
    assert f"  Redeployments: {cost}, {cost} BP" in told and "  steps rebuilt: 0, 0 BP" in told
    demo.play("allied", "end buildup discard 1 dummy")
    if state.player1 == "allied":
        _axis_buildup(demo)
    # RB 16.5: at most 20 BP Saved; RB 16.6: the dummy handed back, then 3 cards of Resupply
    # (dealt with the Axis player's entropy, in its next event).
    allied = _now(demo.allied)
    assert allied.saved["allied"] == min(bp - cost, 20)
    assert allied.hands["allied"].count == 3 - 1 + 3 and allied.hands["allied"].real == 2 + 2
    assert _state(demo.axis).hands["allied"] == Hand(count=5, real=None)
    assert allied.hands["axis"].count == 6 + 2  # Axis Resupply 2 (RB 18.1)
    # the Axis cards of Player 2's Resupply are dealt by the Allied keys in its next event
    assert demo.pending().kind in ("challenge", "deck") and demo.pending().role == "allied"


def _to_initiative(demo):
    demo.play("axis", "supply check", "pass", "end movement", "supply check")
    demo.play("allied", "supply check", "pass", "end movement", "supply check")
    if _now(demo.axis).player1 == "axis":
        _axis_buildup(demo)
        demo.play("allied", "reinforce", "end buildup")
    else:
        demo.play("allied", "reinforce", "end buildup")
        _axis_buildup(demo)


def test_rb_3_3_a_dummy_challenge_leaves_the_initiative_with_the_axis(demo):
    """19.0 Demo, Month 2: the Allies challenge with one card, the Axis
    declines, the Allied card is a dummy: the Axis goes first; the card is spent."""
    _to_initiative(demo)
    before = _state(demo.allied).hands["allied"].count
    demo.play("allied", "challenge with dummy")
    assert demo.pending().kind == "answer" and demo.pending().role == "axis"
    demo.play("axis", "decline")
    demo.play("allied", "open challenge")
    axis = _state(demo.axis)
    assert axis.phase == "turn" and axis.turn.active == "axis" and axis.hands["allied"].count == before - 1


def test_rb_3_3_a_real_challenge_unmatched_gives_the_allies_the_initiative(demo):
    _to_initiative(demo)
    demo.play("allied", "challenge")
    demo.play("axis", "answer with dummy")
    demo.play("allied", "open challenge")
    assert _state(demo.axis).turn.active == "allied"
    assert _state(demo.allied).hands["axis"].count == 8 - 1


def test_rb_3_3_the_axis_matches_a_real_challenge_with_a_real_card(demo):
    _to_initiative(demo)
    demo.play("allied", "challenge")
    demo.play("axis", "answer")
    demo.play("allied", "open challenge")
    assert _state(demo.axis).turn.active == "axis"


def test_rb_3_3_a_challenge_claimed_real_from_a_hand_of_dummies_is_refused(demo):
    _to_initiative(demo)
    state = _state(demo.allied)
    dummies_only = msgspec.structs.replace(state, hands={**state.hands, "allied": Hand(count=2, real=0)})
    problems = one_card_problems(dummies_only, "allied", "month2.initiative.allied",
                                       _Ctx({"month2.initiative.allied": b"1"}), opened=False)
    assert [str(p) for p in problems] == ["RB 3.3: 1 real cards played, but the hand holds 0 real cards"]


class _Ctx:
    seq = 0
    role = None
    author = "axis"

    def __init__(self, values):
        self.values = values

    def committed(self, label):
        return label in self.values

    def opened(self, label):
        return label in self.values

    def value(self, label):
        return self.values.get(label)


def test_rb_17_0_the_last_month_ends_the_game_with_the_blocks_face_up(demo, monkeypatch):
    """Month 6 is the Demo's last: two Passes end it, both sides turn their
    blocks up and the level of victory is judged (RB 17.2-17.4)."""
    state = _state(demo.axis)
    def short(s):
        return msgspec.structs.replace(all_scenarios().get(s.scenario), end_month=1)

    # The end of the last Month (RB 17.0) is judged by the sequence, the level of victory by the month phase.
    monkeypatch.setattr(sequence, "scenario_of", short)
    monkeypatch.setattr(month_phase, "scenario_of", short)
    demo.play("axis", "supply check", "pass", "end movement", "supply check")
    demo.play("allied", "supply check", "pass", "end movement", "supply check")
    assert demo.pending().kind == "reveal-all" and demo.pending().role == "axis"
    demo.play("axis", "reveal all")
    demo.play("allied", "reveal all")
    final = demo.axis.seat().replay
    out = final.outcome()
    assert out is not None and final.pending() is None
    assert all(b.unit for b in final.state.position.blocks)  # every block face up
    # 8 Italian units against 4 Allied: at least twice as many, a Decisive Victory (RB 17.2).
    assert out.winner == "axis" and "Decisive Victory" in out.summary and "RB 17.2" in out.summary
    assert state.month == 1
    with pytest.raises(IllegalAction, match="game is over"):
        session.add_orders(demo.allied.seat(), ["supply check"])


def test_rb_16_41_early_arrival_through_the_engine(demo, monkeypatch):
    """Every die a 1: the Axis slot for Ariete (due in Month 3) rolls 1 in the
    Month 2 Buildup, so Ariete arrives now, its identity hidden from the
    Allies, and is not due again in Month 3 (RB 16.41, BU-06)."""
    monkeypatch.setattr(pbem.game, "roll", lambda game, eh, xp, xq, sides: (1,) * len(sides))
    base = game_map().base("axis")
    demo.play("axis", "supply check", "pass", "end movement", "supply check")
    demo.play("allied", "supply check", "pass", "end movement", "supply check")
    assert _now(demo.axis).player1 == "allied"  # BP dice 1 and 1: a tie goes to the Allies (RB 16.3)
    demo.play("allied", "reinforce", "end buildup")
    demo.play("axis", "early arrival")
    axis = _now(demo.axis)
    assert axis.early_arrived == ("month2.early.axis.0",) and due_count(axis, "axis") == 1
    demo.play("axis", "reinforce", "end buildup")
    assert [b.unit for b in _state(demo.axis).position.blocks_in(base, "axis")] == ["Ariete"]
    assert [b.unit for b in _state(demo.allied).position.blocks_in(base, "axis")] == [""]  # hidden
    # Month 3: Ariete is not due again; the Allied Month 4 units are rolled for and arrive.
    demo.play("allied", "no challenge")
    demo.play("axis", "supply check", "pass", "end movement", "supply check")
    demo.play("allied", "supply check", "pass", "end movement", "supply check")
    axis = _now(demo.axis)
    assert axis.month == 3 and due_count(axis, "axis") == 0 and axis.player1 == "allied"
    demo.play("allied", "early arrival")
    assert due_count(_now(demo.allied), "allied") == 2
    demo.play("allied", "reinforce", "end buildup")
    allied_base = game_map().base("allied")
    assert {b.unit for b in _state(demo.allied).position.blocks_in(allied_base, "allied")} >= {"4 Ind/7 Mot", "32AT/4"}
    demo.play("axis", "end buildup")
    assert _now(demo.allied).phase == "initiative"


def test_rb_16_41_an_early_block_that_is_not_its_slots_unit_is_caught(demo, monkeypatch):
    """A tampered client places Littorio (due in Month 5) for the slot that
    holds Ariete: the Allies cannot see it; opening the identities names it."""
    monkeypatch.setattr(pbem.game, "roll", lambda game, eh, xp, xq, sides: (1,) * len(sides))
    demo.play("axis", "supply check", "pass", "end movement", "supply check")
    demo.play("allied", "supply check", "pass", "end movement", "supply check")
    demo.play("allied", "reinforce", "end buildup")
    demo.play("axis", "early arrival")
    seat = demo.axis.seat()
    state = _now(demo.axis)
    token = "A0000e001"
    label = hidden.identity_label(token)
    problems = ritd.check(state, Reinforce(tokens=(token,), early=state.early_arrived),
                          ActingAs(_Ctx({label: hidden.encode_identity("Littorio", 4),
                                              "month2.early.axis.0": b"Ariete"}), "axis"))
    assert [str(p) for p in problems] == ["RB 16.41: the slot month2.early.axis.0 holds Ariete, not Littorio at CV 4"]
    # The opponent's replay keeps an obligation decided when both are opened.
    ob = Obligation(token=token, seq=9, kind="early", rule="RB 16.41", tokens=(token,),
                         labels=("month2.early.axis.0", label), what="arrived early")
    lied = msgspec.structs.replace(_state(demo.allied), obligations=(ob,))
    _, found = decide_labelled(lied, _Ctx({"month2.early.axis.0": b"Ariete",
                                                 label: hidden.encode_identity("Littorio", 4)}))
    assert [p.rule for p in found] == ["RB 16.41"] and "the slot holds Ariete" in found[0].message
    assert seat is not None


def test_rb_4_4_a_blitz_turn_is_two_basic_turns(demo):
    """RB 3.45, 3.46, 4.4: three real cards; after the first Combat phase the
    Axis takes the Blitz phases: one more Move with units that have not moved,
    hexside limits reset; Supply Revealed finds the three real cards."""
    m = game_map()
    demo.play("axis", "supply check", "blitz", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento",
              "end movement")
    demo.play("allied", "refuse-battle Sollum slowest 3")
    demo.play("axis", "pursue Sollum with none")
    demo.play("allied", "refuse-battle Sollum -> Sidi Barrani")
    assert _state(demo.axis).turn.step == "blitz"
    assert session.legal_orders(demo.axis.seat()) == ["no blitz", "blitz"]
    # A unit that moved may not move again (RB 4.4).
    with pytest.raises(IllegalAction, match="RB"):
        session.add_orders(demo.axis.seat(), ["blitz", "group Sollum -> Sollum E1 Savona"])
    demo.play("axis", "blitz", "group Sidi Omar -> Sidi Omar W1 GGFF", "end movement", "supply check",
              "reveal option")
    allied = _state(demo.allied)
    assert {b.unit for b in _state(demo.axis).position.blocks_in(m.resolve("Sidi Omar W1"), "axis")} == {"GGFF"}
    assert allied.turn.active == "allied" and allied.hands["axis"] == Hand(count=3, real=None)
    assert _state(demo.axis).hands["axis"] == Hand(count=3, real=1)


def test_rb_4_4_blitz_phases_paid_with_two_real_cards_are_named_at_supply_revealed(demo):
    """Two real cards and a dummy: the owner's pbem refuses the Blitz phases;
    the opponent, who sees three cards, would accept them until Supply
    Revealed opens the count and names RB 4.4."""
    demo.play("axis", "supply check", "offensive + 1 dummy", "end movement")
    state = _now(demo.axis)
    assert state.turn.step == "blitz"
    with pytest.raises(IllegalAction, match="RB 4.4: a Blitz Turn needs 3 real cards; 2 of the 3 played are real"):
        session.add_orders(demo.axis.seat(), ["blitz"])
    turn = msgspec.structs.replace(state.turn, real=-1, blitz=True)
    problems = option_problems(state, turn, b"2")
    assert [p.rule for p in problems] == ["RB 4.4"] and "needs 3 real cards" in problems[0].message
    assert option_problems(state, turn, b"3") == []


def test_rb_18_7_gazala_pregame_buildup_30_bp_each_allies_first(tmp_path):
    """RB 18.7 (BU-20): after both deployments and before the first cards, the
    Allies then the Axis spend 30 BP (no dice, no Resupply); Extra Supply
    Cards bought there join the initial hands."""
    sc = all_scenarios()
    s = sc.get("gazala")
    axis_setup = [f"deploy {u.name} at El Agheila" for u in sc.starting_units(s, "axis")] + ["end deployment"]
    allied_setup = [f"deploy {u.name} at Alexandria" for u in sc.starting_units(s, "allied")] + ["end deployment"]
    table = new_game(tmp_path, "gazala", axis_setup, allied_setup, keep_hands=False)
    state = _state(table.axis)
    assert state.phase == "buildup" and state.pregame and table.pending().role == "allied"
    assert {side: led.total for side, led in state.ledgers.items()} == {"axis": 30, "allied": 30}
    table.play("allied", "buy supply 2", "end buildup")
    assert _state(table.axis).saved["allied"] == 10 and table.pending().role == "axis"
    table.play("axis", "end buildup")
    table.keep_hands()
    axis = _state(table.axis)
    assert axis.phase == "turn" and axis.month == 14 and axis.turn.active == "axis"
    assert axis.hands["allied"].count == s.allied.initial_supply + 2
    assert axis.hands["axis"].count == s.axis.initial_supply


def test_rb_18_6_the_malta_group_is_called_once_and_axis_resupply_drops_to_2(tmp_path, monkeypatch):
    """Pursuit to Alamein (RB 18.8): from Month 16 the Axis may call the three
    "M" units into Base, once; from that Buildup on its Resupply is 2 cards."""
    monkeypatch.setattr(pbem.game, "roll", lambda game, eh, xp, xq, sides: (6,) * len(sides))  # nothing early
    sc = all_scenarios()
    s = sc.get("pursuit")
    axis_setup = [f"deploy {u.name} at El Agheila" for u in sc.starting_units(s, "axis")] + ["end deployment"]
    allied_setup = [f"deploy {u.name} at Alexandria" for u in sc.starting_units(s, "allied")] + ["end deployment"]
    table = new_game(tmp_path, "pursuit", axis_setup, allied_setup)
    table.play("axis", "supply check", "pass", "end movement", "supply check")
    table.play("allied", "supply check", "pass", "end movement", "supply check")
    state = _now(table.axis)
    assert state.month == 16 and state.player1 == "allied"  # BP dice all 6: a tie, the Allies first
    table.play("allied", "reinforce", "end buildup")
    hand = _now(table.axis).hands["axis"].count
    table.play("axis", "early arrival")
    assert "call malta group" in session.legal_orders(table.axis.seat())
    table.play("axis", "call malta group", "end buildup")
    axis = _state(table.axis)
    base = game_map().base("axis")
    assert {"Folgore", "Ramcke", "La Spezia"} <= {b.unit for b in axis.position.blocks_in(base, "axis")}
    assert axis.malta == 16
    assert _now(table.allied).hands["axis"].count == hand + 2  # RB 18.8: Resupply 2 from this Buildup
    assert rf.check_malta_group(s, 18, axis.malta)[0].message == "the Malta Group already arrived in Month 16"


def test_rb_3_42_real_cards_the_hand_never_held_are_named_at_supply_revealed(demo, monkeypatch):
    """A tampered Allied client commits three real cards for a Blitz while the
    three cards it plays are two real and a dummy. The Axis cannot see them
    face down; at Supply Revealed they are shown from the shared deck (the
    Allied keys of those positions) and the Axis refuses the event at once,
    naming it and its signer (T-15)."""
    demo.play("axis", "supply check", "pass", "end movement", "supply check")
    with monkeypatch.context() as cheat:  # the Allied client skips its own hand checks
        cheat.setattr(cd, "play_problems", lambda *args: [])
        cheat.setattr(supplycards, "card_checks", lambda *args: [])
        cheat.setattr(supplycards, "pick_cards", lambda state, role, real, dummies, ctx, rule, named=None:
                      state.deck.held[role][:real + dummies])
        honest = ritd.on_deck
        cheat.setattr(ritd, "on_deck", lambda state, ctx: (honest(state, ctx)[0], []))
        seat = demo.allied.seat()
        session.add_orders(seat, ["supply check", "blitz", "end movement", "no blitz", "supply check"])
        session.add_orders(seat, ["reveal option"])
        data = Path(session.send(seat).turn_file).read_bytes()
    with pytest.raises(IllegalAction) as err:
        demo.deliver(demo.axis, data)
    text = str(err.value) + " ".join(getattr(err.value, "details", []) or [])
    assert "by allied" in text and "the cards played hold 2 real card(s), but 3 were committed" in text


def test_opening_a_later_identity_version_leaves_the_set_up_check_to_version_0(demo):
    """A block that lost a step has identity version 1 at a lower CV; turning it
    up at the end (RB 17.0) must not be judged against the set-up rule that
    it began at full CV (RB 18.0): that check waits for version 0 (found by
    random self-play)."""
    state = _state(demo.allied)
    savona = next(b for b in state.position.blocks_of("axis"))
    ob = Obligation(token=savona.token, seq=0, kind="placement", hex=savona.hex, rule="RB 18.0",
                         what="deployed")
    st = msgspec.structs.replace(state, obligations=(ob,), versions={**state.versions, savona.token: 1})
    label = hidden.identity_label(savona.token, 1)
    after, problems = ritd.on_open(st, label, hidden.encode_identity("Savona", 3), _Ctx({}))
    assert problems == [] and after.obligations == (ob,)


def test_rb_15_1_the_supply_check_orders_offer_each_oasis_choice(demo):
    """Two Allied units at Siwa, beyond any Supply Line: the Oasis supplies
    one (RB 15.1) and 'pbem options' lists both choices (found by random
    self-play, where only a bare 'supply check' was offered)."""
    demo.play("axis", "supply check", "pass", "end movement", "supply check")
    state = _state(demo.allied)
    siwa = game_map().resolve("Siwa")
    movers = list(state.position.blocks_of("allied"))[:2]
    pos = state.position.replace_blocks([msgspec.structs.replace(b, hex=siwa) for b in movers])
    st = msgspec.structs.replace(state, position=pos)
    orders = ritd.legal_orders(st, "allied", None)
    names = sorted(b.unit for b in movers)
    assert sorted(orders) == sorted(f"supply check oasis Siwa: {n}" for n in names)
    for order in orders:
        action = ritd.parse_order(st, "allied", order, None).action
        assert check_turn(st, st.turn, action, "allied", _Ctx({})) == []


def test_dice_are_shown_as_numbers_since_cards_come_from_the_shared_deck(tmp_path):
    """Version 4 rolls only six-sided dice (cards are dealt from the shared
    deck, T-15): the rules word no dice, the engine shows the numbers."""
    assert RITD.describe_dice((6, 6), (3, 4)) is None
    assert session.dice_text((3, 4), (6, 6), RITD) == "[3, 4]"


def test_cheat_a_rebuild_beyond_the_bp_spent_is_named_when_the_identities_open(tmp_path, book_dice):  # noqa: F811 (a fixture)
    """Issue 7 cheat (RB 16.54, T-21): in the Demo's Month 2 Buildup the Allies
    pay 2 BP for one step of the 7 SG (CV 2 -> 3), but a modified client
    commits the new identity at CV 4. The Axis cannot see the commitment and
    accepts the event; the audit, with the identities opened, names the
    event, its signer and the rule; so does the Axis's own replay when the
    new version is opened."""
    import rules.ritd
    from pbem import table as tbl
    from pbem.game import AUDIT, Replay
    from rules.ritd import hidden

    t = tbl.LocalTable.create(tmp_path, "ritd", "demo")
    script = tbl.demo_policy(rules.ritd.RULES)  # the Demo's script (rules.ritd.demo)
    wanted: list[str] = []
    drafted: dict[tuple, list[str]] = {}  # the orders of the event being composed, by role and base

    def until_rebuild(turn):
        orders = script(turn)
        mine = drafted.setdefault((turn.role, turn.seat.replay.seq if turn.seat else -1), [])
        if orders and any(o.startswith("rebuild") for o in orders):
            wanted.extend(mine + orders)
            return None  # the draft is dropped: the test sends the event itself
        mine.extend(orders or [])
        return orders

    assert t.play(until_rebuild, 200).stopped == "script" and wanted
    allied = session.load_seat(t.player("allied").gd, t.player("allied").identity)
    n = next(i for i, o in enumerate(wanted) if o.startswith("rebuild"))
    honest = session.parse_orders(ritd, allied.replay, "allied", allied.vault, [], wanted[:n + 1])
    rebuild = honest[-1]
    ((label, secret),) = rebuild.secrets.items()
    unit, cv = hidden.decode_identity(bytes.fromhex(secret.value))
    forged = msgspec.structs.replace(rebuild, secrets={label: msgspec.structs.replace(
        secret, value=hidden.encode_identity(unit, cv + 1).hex())})
    orders = honest[:-1] + [forged]
    data = session._with_secrets(allied.vault, orders)
    body = session._body(allied.replay, "allied", data, orders, x_next=bytes(32))
    stored = session._sign(allied.identity, body)
    axis = session.load_seat(t.player("axis").gd, t.player("axis").identity)
    after = axis.replay.clone()
    after.apply_stored(stored)  # accepted: the Axis sees 2 BP for one step
    assert any(o.kind == "rebuild" for o in after.state.obligations)
    data.entropy[str(body.seq)] = bytes(32).hex()
    opening = session._sign(allied.identity, session._body(after, "allied", data, [], x_next=bytes(32),
                                                           extra_reveals=[label]))
    with pytest.raises(IllegalAction, match="RB 16.54") as err:
        after.clone().apply_stored(opening)
    assert f"event {body.seq} by allied" in str(err.value)
    known = {**data.known_values(), **axis.vault.known_values()}
    with pytest.raises(IllegalAction, match=f"event {body.seq} by allied") as err:
        audit = Replay(RITD, role=AUDIT, known=known)
        for event in [*t.player("allied").gd.read_events(), stored]:
            audit.apply_stored(event)
    assert any("RB 16.54" in d and f"not {unit} at CV {cv + 1}" in d for d in err.value.details)
