"""Rule checks the mutation run of issue 29 found unguarded: each test here
fails when the check it names is taken out (verified by removing it), and
asserts the specific problem, not merely that some problem of that rule
number is reported."""

from __future__ import annotations

import pytest

from pbem import deck as D
from rules.ritd import combat_round as cr
from rules.ritd import fire as fr
from rules.ritd import forced_marches
from rules.ritd import losses as ls
from rules.ritd import movement as mv
from rules.ritd.position import Battle, Block
from tests.ritd.combat_support import HEX, battle_pos, blk, cv, units
from tests.ritd.movement_support import MAP, at, block, group, position, route

OTHER = "1020"


def _plan(side, *fires):
    return fr.FirePlan(HEX, side, tuple(fr.UnitFire(*f) for f in fires))


# ------------------------------------------------------------------ RB 9.5: losses in the battle's hex


def test_rb_9_5_losses_are_placed_in_the_hex_where_the_hits_were_scored() -> None:
    """RB 9.5: the owner places the hits of one fire on its units in that
    battle; an allocation naming another hex is refused, however well it
    would place the hits, and the refusal names both hexes."""
    pos = battle_pos(blk("A1", "allied", "Br Inf 3"), blk("X1", "axis", "It Inf 4"))
    rnd = cr.CombatRound(HEX, active="axis")
    result = fr.score(pos, rnd, _plan("allied", ("A1", "infantry")), (6, 6, 1), units=units)
    assert result.hits == {"infantry": ls.ClassHits(2)}
    right = ls.LossAllocation(HEX, (ls.Loss("X1", 2),))
    assert ls.check_allocation(pos, result, right, units=units) == []
    wrong = ls.LossAllocation(OTHER, (ls.Loss("X1", 2),))
    probs = ls.check_allocation(pos, result, wrong, units=units)
    assert [p.rule for p in probs] == ["RB 9.5"]
    assert HEX in probs[0].message and OTHER in probs[0].message


# ------------------------------------------------------------------ RB 9.3: artillery on supported artillery


@pytest.mark.parametrize("firer", ["armor", "infantry", "antitank", "artillery"])
def test_rb_9_3_only_artillery_may_target_artillery_supported_by_another_class(firer) -> None:
    """RB 9.3: "Only artillery may target artillery, unless no other class
    of target is present"; armor and infantry must still fire at their own
    class when it is present."""
    supported = {"artillery", "antitank"}
    legal = fr.legal_targets(firer, supported)
    assert ("artillery" in legal) == (firer == "artillery")
    assert "antitank" in legal
    alone = fr.legal_targets(firer, {"artillery"})
    assert alone == ("artillery",)
    # With infantry beside it the artillery is supported again.
    mixed = fr.legal_targets(firer, {"artillery", "infantry"})
    assert ("artillery" in mixed) == (firer == "artillery")


def test_rb_9_3_artillery_fires_on_supported_artillery_at_the_table_rate_not_tf() -> None:
    """RB 9.3 and its sidebar: artillery may fire on enemy artillery that
    another class supports; the Triple Fire against unsupported artillery
    applies only once no other Undisrupted class is left, so the hits follow
    the Fire Table's artillery-on-artillery cell."""
    pos = battle_pos(blk("A1", "allied", "Br Art 4"), blk("A2", "allied", "Br Inf 3"),
                     blk("X1", "axis", "It Art 4"), blk("X2", "axis", "It Inf 4"))
    rnd = cr.CombatRound(HEX, active="axis")
    plan = _plan("allied", ("A1", "artillery"), ("A2", "infantry"))
    assert fr.check_fire_plan(pos, rnd, plan, units=units) == []
    result = fr.score(pos, rnd, plan, (6, 5, 4, 1) + (1, 1, 1), units=units)
    assert result.shots[0].target == "artillery"
    fire = fr.unit_firepower("artillery", "artillery", {"artillery", "infantry"})
    assert result.shots[0].fire == fire
    # Infantry may not take the artillery as its target while infantry is present.
    bad = fr.check_fire_plan(pos, rnd, _plan("allied", ("A1", "artillery"), ("A2", "artillery")), units=units)
    assert [p.rule for p in bad] == ["RB 9.3"]
    assert "A2" in bad[0].message and "infantry must fire at enemy infantry" in bad[0].message
    # Losses land on the artillery only (RB 9.5: hits go to the Class fired on).
    out = ls.apply_allocation(pos, result, ls.default_allocation(pos, result, units=units), units=units)
    assert cv(out.position, "X2") == 4


# ------------------------------------------------------------------ RB 5.3: no Engaging undisrupted enemy


def _withdraw_into_battle(disrupted: bool):
    """An Allied unit at Buq Buq withdrawing east along its Supply Line into
    Sidi Barrani, where an Allied unit holds a battle against an Axis unit;
    the only thing that may be wrong with the Move is the enemy it Engages."""
    pos = position(block("d", "allied", "Buq Buq"), block("f", "allied", "Sidi Barrani"),
                   block("x", "axis", "Sidi Barrani", disrupted=disrupted))
    pos = pos.with_battles([Battle(hex=at("Sidi Barrani"), attacker="axis",
                                   hexsides={at("Buq Buq"): "allied"})])
    turn = mv.start_movement(pos, "allied", withdrawal_only=True)
    move = group("Buq Buq", ("d", route("Buq Buq", "Sidi Barrani")), withdrawal="pass")
    return mv.check_move(MAP, pos, turn, move, {"d": 3})


def test_rb_5_3_withdrawing_units_cannot_engage_undisrupted_enemy_units() -> None:
    """RB 5.3: "Withdrawing units cannot Engage enemy forces (unless the
    latter are Disrupted)". The route is a valid Withdrawal otherwise (the
    same Move against a Disrupted enemy is legal), so the one problem is the
    Engagement."""
    assert _withdraw_into_battle(disrupted=True).problems == ()
    probs = _withdraw_into_battle(disrupted=False).problems
    assert [p.rule for p in probs] == ["RB 5.3"]
    assert "cannot Engage undisrupted enemy units" in probs[0].message


# ------------------------------------------------------------------ RB 5.1 / 6.4: a route needs a destination


def test_rb_5_1_a_move_route_of_one_hex_is_refused_not_a_crash() -> None:
    """RB 5.1: a unit moves from its hex to another; a route naming only the
    unit's own hex is refused with that reason (in a Group Move and in a
    Regroup Move)."""
    pos = position(block("d", "allied", "Buq Buq"), block("e", "allied", "Buq Buq"))
    turn = mv.start_movement(pos, "allied")
    one = group("Buq Buq", ("d", route("Buq Buq")))
    probs = mv.check_move(MAP, pos, turn, one, {"d": 3}).problems
    assert [p.rule for p in probs] == ["RB 5.1"]
    assert "needs a destination other than its own hex" in probs[0].message
    # Beside a good route, only the bad one is refused.
    two = group("Buq Buq", ("d", route("Buq Buq")), ("e", route("Buq Buq", "Sidi Barrani")))
    assert [p.rule for p in mv.check_move(MAP, pos, turn, two, {"d": 3, "e": 3}).problems] == ["RB 5.1"]


def test_rb_6_4_a_forced_march_of_one_hex_route_is_refused() -> None:
    """RB 6.4: a Forced March takes a unit one hex beyond its normal move; a
    route of the unit's own hex alone has no destination and is refused with
    that reason, also for a unit that moved this phase."""
    pos = position(block("d", "allied", "Buq Buq"))
    turn = mv.start_movement(pos, "allied")
    for p0, t0 in ((pos, turn), _moved(pos, turn)):
        here = p0.block("d").hex
        probs = forced_marches.check_forced_marches(MAP, p0, t0, [mv.ForcedMarch("d", (here,))], {"d": 3}).problems
        assert [p.rule for p in probs] == ["RB 6.4"]
        assert "needs a destination" in probs[0].message


def _moved(pos, turn):
    move = group("Buq Buq", ("d", route("Buq Buq", "Sidi Barrani")))
    out = mv.apply_move(MAP, pos, turn, move)
    return out.position, out.turn


# ------------------------------------------------------------------ RB 16.6: carried cards


SMALL = D.Group(0x100000020000000000000000000001D93)  # TEST ONLY (as in tests/test_deck.py)
GAME = bytes(range(32))


def _seed(tag: str, who: bytes) -> bytes:
    return D.hash_parts(b"ritd-test-seed", who, tag.encode())


def _first_round(n: int = 6):
    """Round s1 of a small deck, its four steps made and checked."""
    history: dict[str, D.DeckRound] = {}
    sources = [D.Card(label=f"real-{i:02d}") for i in range(1, n + 1)]
    done: list[D.Step] = []
    for i in range(4):
        seed = _seed("s1", b"a" if i % 2 == 0 else b"b")
        step = D.make_step(SMALL, GAME, "s1", sources, done, seed, D.history_resolver(SMALL, history))
        D.check_step(SMALL, sources, done, step)
        done.append(step)
    return history, D.DeckRound(steps=done)


def test_rb_16_6_a_reshuffle_carries_cards_only_from_a_completed_earlier_round() -> None:
    """RB 16.6: at a reshuffle the undealt cards of the round go into the
    next one (carried encrypted, decisions/turn.md T-15). A card carried from
    a round that does not exist, or whose shuffle is unfinished, is refused
    with that reason (DeckError), never a crash."""
    history, s1 = _first_round()
    resolve = D.history_resolver(SMALL, {"s1": s1})
    assert resolve("s1", 0) == D.parse_elem(SMALL, s1.steps[-1].cards[0])
    with pytest.raises(D.DeckError, match="not a completed round"):
        resolve("s7", 0)
    unfinished = D.history_resolver(SMALL, {"s1": D.DeckRound(steps=s1.steps[:3])})
    with pytest.raises(D.DeckError, match="not a completed round"):
        unfinished("s1", 0)
    # The same refusal where a player makes or checks the next round's first step.
    carried = [D.Carry(round="s7", pos=0)]
    with pytest.raises(D.DeckError, match="not a completed round"):
        D.input_elements(SMALL, GAME, carried, D.history_resolver(SMALL, {"s1": s1}))


# ------------------------------------------------------------------ combat checks the sampled mutants reached


def test_rb_4_3_assault_battles_are_refused_unless_the_caller_says_it_is_an_assault_turn() -> None:
    """RB 4.3: Assault Battles need an Assault Turn; a caller that does not
    say the turn is one (the default) gets the refusal. None (the option still
    secret, RB 3.48) accepts them for now."""
    pos = battle_pos(blk("A1", "allied", "Br Inf 3"), blk("X1", "axis", "It Inf 4"))
    sel = cr.BattleSelection(active=(HEX,), assault=(HEX,))
    probs = cr.check_battle_selection(pos, "axis", sel, new_battles=(), fortress_hexes=())
    assert [p.rule for p in probs] == ["RB 4.3"]
    assert cr.check_battle_selection(pos, "axis", sel, new_battles=(), fortress_hexes=(), assault_turn=None) == []


def test_rb_8_5_a_unit_must_be_revealed_to_fire() -> None:
    """RB 8.5: units in a battle are revealed before they fire; a block whose
    unit and CV this replay does not know cannot be named in a fire plan."""
    hidden = Block(token="A1", side="allied", hex=HEX)  # unit and CV unknown here
    pos = battle_pos(hidden, blk("X1", "axis", "It Inf 4"))
    probs = fr.check_fire_plan(pos, cr.CombatRound(HEX, active="axis"), _plan("allied", ("A1", "infantry")),
                               units=units)
    assert [p.rule for p in probs] == ["RB 8.5"] and "A1 is not revealed" in probs[0].message
