"""One signed form for every placement of losses (issue 27 point 6; RB 9.5,
9.52, 2.3; rules version 5).

RB 9.5: "For each hit scored by enemy fire, a unit of the targeted Class is
reduced by 1 CV ... Elite Units: ... with 2 CV per step. Two hits are
necessary to reduce them by a step. ... leftover hits at the end of a combat
round are wasted." Hits a unit cannot use (beyond
its remaining steps, one hit on an elite step that needs two, an odd
half-hit) are wasted, so placing them on it would be a second form of the
placement that leaves them unplaced. Version 5 refuses such a placement at
once where the replay knows the unit (units in battle are revealed, RB 8.5;
the owner's own replay), and, for secret Pursuit losses on face-down blocks
(T-10), when the identities open or at the audit; the orders the rules list
('losses <hex> auto', 'pursuit losses auto') are the one valid form.
"""

from __future__ import annotations

import itertools
import re

import pytest

from pbem import session
from pbem.errors import IllegalAction
from rules.ritd import RULES as RITD
from rules.ritd import losses, step_losses
from rules.ritd import losses as ls
from rules.ritd import routs as rt
from rules.ritd.fire import FireResult
from rules.ritd.state import game_map
from tests.ritd.combat_support import HEX, battle_pos, blk, units
from tests.ritd.test_crafted_events import crafted_event, deliver_everywhere
from tests.ritd.test_game_combat import _add
from tests.ritd.test_game_combat import battle as battle  # noqa: F401  (fixture)
from tests.ritd.test_game_refusal import demo as demo  # noqa: F401  (fixture)
from tests.ritd.test_game_refusal import send_orders

pytestmark = pytest.mark.usefixtures("registered_ritd")


def _fire(hits: int, half_hits: int = 0, cls: str = "armor") -> FireResult:
    return FireResult(hex=HEX, side="allied", shots=(), hits={cls: ls.ClassHits(hits, half_hits)})


def _rules(problems) -> list[str]:
    return [p.rule for p in problems]


# ------------------------------------------------------------------ refused at once (units known)


def test_rb_9_5_issue_27_6_hits_beyond_a_units_remaining_steps_are_refused_at_once() -> None:
    """RB 9.5: a unit takes no more hits than its steps: the fifth hit on a
    CV 4 unit is wasted, so it must stay unplaced (issue 27 point 6)."""
    pos = battle_pos(blk("G1", "axis", "Ger Arm 4"), blk("P1", "allied", "Br Arm 4"))
    # 5 hits on an elite CV 4 unit (two steps, two hits each): 4 are used.
    one_form = ls.LossAllocation(HEX, (ls.Loss("G1", 4),))
    assert ls.check_allocation(pos, _fire(5), one_form, units=units) == []
    over = ls.LossAllocation(HEX, (ls.Loss("G1", 5),))
    probs = ls.check_allocation(pos, _fire(5), over, units=units)
    assert _rules(probs) == ["RB 9.5"]
    assert "G1 (Ger Arm 4 at CV 4): 5 hits placed but it can use only 4 hits" in probs[0].message


def test_rb_9_5_issue_27_6_one_hit_on_an_elite_step_that_needs_two_is_refused_at_once() -> None:
    """RB 9.5: "Two hits are necessary to reduce them by a step": a lone third hit
    on an elite unit is wasted and stays unplaced (issue 27 point 6)."""
    pos = battle_pos(blk("G1", "axis", "Ger Arm 4"), blk("P1", "allied", "Br Arm 4"))
    assert ls.check_allocation(pos, _fire(3), ls.LossAllocation(HEX, (ls.Loss("G1", 2),)), units=units) == []
    probs = ls.check_allocation(pos, _fire(3), ls.LossAllocation(HEX, (ls.Loss("G1", 3),)), units=units)
    assert _rules(probs) == ["RB 9.5"] and "3 hits placed but it can use only 2 hits" in probs[0].message
    # RB 9.52: two half-hits make a hit; an odd half-hit cannot be used either.
    pos = battle_pos(blk("B1", "axis", "Br Arm 4"), blk("P1", "allied", "Br Arm 4"))
    assert _rules(ls.check_allocation(pos, _fire(0, 3), ls.LossAllocation(HEX, (ls.Loss("B1", 0, 3),)),
                                      units=units)) == ["RB 9.5"]
    assert ls.check_allocation(pos, _fire(0, 3), ls.LossAllocation(HEX, (ls.Loss("B1", 0, 2),)),
                               units=units) == []


def test_rb_9_5_issue_27_6_the_same_check_judges_pursuit_hits_on_known_units() -> None:
    """RB 10.5 places Pursuit hits "as per 9.5": the one check (losses.unusable)."""
    pos = battle_pos(blk("G1", "axis", "Ger Arm 4"), blk("G2", "axis", "Ger Inf 4"), blk("P1", "allied", "Br Arm 4"))
    over = ls.LossAllocation(HEX, (ls.Loss("G1", 5), ls.Loss("G2", 4)))
    assert _rules(rt.check_pursuit_losses(pos, ("G1", "G2"), 9, over, units=units)) == ["RB 9.5"]
    assert rt.check_pursuit_losses(pos, ("G1", "G2"), 9, ls.LossAllocation(HEX, (ls.Loss("G1", 4), ls.Loss("G2", 4))),
                                   units=units) == []


def test_rb_9_5_issue_27_6_an_over_placement_in_battle_is_refused_by_its_signer_and_the_opponent(battle, tmp_path):
    """The 19.0 Demo battle in Sollum: 8 Axis hits on the 7/7 Tk (elite, CV 4,
    revealed, RB 8.5). It can use 4; 'losses Sollum: 7/7 Tk 5' is refused by
    the Allies' own pbem, and a signed one by the Axis' receive, verify and
    audit (exit 5, naming the event and its signer)."""
    battle.play("axis", "battles Sollum")
    battle.play("allied", "fire Sollum: 7/7 Tk at infantry")
    battle.play("axis", "losses Sollum: Brescia 2, Trento 2",
                "fire Sollum: Brescia at armor, Savona at armor, Trento at armor")
    allied = battle.allied.seat()
    assert session.legal_orders(allied) == ["losses Sollum auto"]
    with pytest.raises(IllegalAction) as err:
        _add(battle, "allied", "losses Sollum: 7/7 Tk 5")
    assert "RB 9.5" in str(err.value) and "5 hits placed but it can use only 4 hits" in str(err.value)
    tk = next(b.token for b in allied.replay.state.position.blocks if b.unit == "7/7 Tk")
    over = ls.LossAllocation(hex=game_map().resolve("Sollum"), losses=(ls.Loss(tk, 5),))
    stored, seq = crafted_event(battle.allied, [], over)
    for out in deliver_everywhere(battle.axis, stored, seq, "allied", tmp_path):
        assert "RB 9.5" in out and "5 hits placed but it can use only 4 hits" in out, out
    # The listed order is the one form: it passes everywhere.
    battle.play("allied", "losses Sollum auto")
    assert session.audit(battle.allied.gd.read_events(), RITD).replay.head == battle.axis.seat().replay.head


# ------------------------------------------------------------------ deferred (face-down Pursuit losses)


def test_rb_9_5_issue_27_6_one_pursuit_hit_taken_as_an_elite_step_is_refused_when_opened(demo, monkeypatch):
    """T-10: the 7/7 Tk (elite, CV 4) refuses battle; Trento's Pursuit Fire
    scores one hit. RB 9.5: one hit cannot take an elite step, so the one form
    keeps CV 4. A client that takes the step anyway (new identity CV 2) is
    not caught by the Axis at once (the block is face-down), but when the
    identities open, and by the audit, naming the Allies' event."""
    monkeypatch.setattr("pbem.game.roll", lambda *args: (6,) + (1,) * (len(args[-1]) - 1))
    demo.play("allied", "refuse-battle Sollum slowest 3")
    demo.play("axis", "pursue Sollum with Trento")
    allied, _ = session.draft_replay(demo.allied.seat())
    assert allied.state.turn.hits == 1
    with monkeypatch.context() as cheat:  # the Allied client takes an elite step for one hit
        cheat.setattr(ls, "used_cv", lambda loss, a: a.cv_per_step if loss is not None and loss.hits else 0)
        cheat.setattr(step_losses, "loss_problems", lambda *args: [])
        forged = send_orders(demo, "allied", "pursuit losses 7/7 Tk 1", "refuse-battle Sollum -> Sidi Barrani")
    demo.deliver(demo.axis, forged)  # the Axis cannot tell yet: an obligation waits
    assert [o.kind for o in demo.axis.seat().replay.state.obligations if o.kind == "losses"] == ["losses"]
    demo.play("axis", "supply check", "reveal option")
    with monkeypatch.context() as cheat:
        cheat.setattr(step_losses, "loss_problems", lambda *args: [])
        data = send_orders(demo, "allied", "supply check", open_all=True)
        events = demo.allied.gd.read_events()
    with pytest.raises(IllegalAction, match=r"Pursuit losses placed in event \d+ \(1 hits\)") as err:
        demo.deliver(demo.axis, data)
    assert "2 hits and 0 half-hits placed, but only 1 hits" in str(err.value)
    with pytest.raises(IllegalAction) as err:
        session.audit(events, RITD)
    text = str(err.value) + " ".join(getattr(err.value, "details", []) or [])
    assert re.search(r"event \d+ by allied", text) and "pursuit losses in Sollum" in text


def test_rb_9_5_issue_27_6_the_listed_pursuit_losses_keep_the_wasted_hit_unplaced(demo, monkeypatch):
    """The same single hit, placed by the listed 'pursuit losses auto': the
    7/7 Tk keeps CV 4 (the hit is wasted, RB 9.5) and the deferred check
    passes when everything is opened and at the audit."""
    monkeypatch.setattr("pbem.game.roll", lambda *args: (6,) + (1,) * (len(args[-1]) - 1))
    demo.play("allied", "refuse-battle Sollum slowest 3")
    demo.play("axis", "pursue Sollum with Trento")
    assert "pursuit losses auto" in session.legal_orders(demo.allied.seat())
    demo.play("allied", "pursuit losses auto", "refuse-battle Sollum -> Sidi Barrani")
    demo.deliver(demo.allied, send_orders(demo, "axis", "supply check", "reveal option", open_all=True))
    demo.deliver(demo.axis, send_orders(demo, "allied", "supply check", open_all=True))
    axis = demo.axis.seat().replay.state
    assert not [o for o in axis.obligations if o.kind == "losses"]
    tk = next(b for b in axis.position.blocks_of("allied") if b.unit == "7/7 Tk")
    assert tk.cv == 4
    session.audit(demo.allied.gd.read_events(), RITD)


# ------------------------------------------------------------------ the listed forms


@pytest.mark.parametrize("names", [("Ger Arm 4",), ("Br Arm 4",), ("Ger Arm 4", "Br Arm 4"),
                                   ("Ger Arm 6", "Br Mech Inf 3", "Br Arm 1"), ("Ger Inf 4", "Ger Arm 4")])
def test_rb_9_5_issue_27_6_every_default_placement_is_the_one_valid_form(names) -> None:
    """'losses <hex> auto' and 'pursuit losses auto' (greedy_placement) never
    put on a unit hits it cannot use, for any hits and half-hits, and pass
    the checks."""
    blocks = [blk(f"U{i}", "axis", n) for i, n in enumerate(names)]
    pos = battle_pos(*blocks, blk("P1", "allied", "Br Arm 4"))
    tokens = tuple(b.token for b in blocks)
    for hits, half in itertools.product(range(12), range(4)):
        placed = ls.greedy_placement(ls.ClassHits(hits, half), blocks, units)
        # Version 6: full hits before half-hits, in the order listed (RB 9.52).
        assert losses.split_problems(placed, hits) == [], (names, hits, half, placed)
        for loss in placed:
            b = pos.block(loss.token)
            assert losses.unusable(loss, ls.absorber_of(b, units(b.unit))) == "", (names, hits, half, loss)
        if not half:
            alloc = rt.default_pursuit_allocation(pos, tokens, hits, HEX, units=units)
            assert rt.check_pursuit_losses(pos, tokens, hits, alloc, units=units) == [], (names, hits)


# ------------------------------------------------------------------ full hits before half-hits (version 6)


def test_rb_9_52_issue_27_6_one_hit_or_two_half_hits_on_a_unit_has_one_form() -> None:
    """RB 9.52: two half-hits count as one hit. With 1 hit and 2 half-hits
    scored and one step to take (Br Arm 1: CV 1), the unit ends the same
    whether it takes the hit or the two half-hits; rules version 6 keeps one
    signed form: the full hit first (issue 27 point 6)."""
    pos = battle_pos(blk("B1", "axis", "Br Arm 1", 1), blk("P1", "allied", "Br Arm 4"))
    fire = _fire(1, 2)
    assert ls.check_allocation(pos, fire, ls.LossAllocation(HEX, (ls.Loss("B1", 1),)), units=units) == []
    probs = ls.check_allocation(pos, fire, ls.LossAllocation(HEX, (ls.Loss("B1", 0, 2),)), units=units)
    assert _rules(probs) == ["RB 9.52"]
    assert "B1: 1 hit placed as 2 half-hits; the one valid form is 1 hit" in probs[0].message


def test_rb_9_52_issue_27_6_full_hits_go_to_the_units_in_the_order_listed() -> None:
    """Two one-step units, 1 hit and 2 half-hits scored: both are used; the
    unit listed first takes the full hit, so the swapped split is refused,
    and a unit that takes a hit and two half-hits (CV 2) has one form too."""
    pos = battle_pos(blk("B1", "axis", "Br Arm 1", 1), blk("B2", "axis", "Br Arm 1", 1), blk("P1", "allied", "Br Arm 4"))
    fire = _fire(1, 2)
    ok = ls.LossAllocation(HEX, (ls.Loss("B2", 1), ls.Loss("B1", 0, 2)))
    assert ls.check_allocation(pos, fire, ok, units=units) == []
    swapped = ls.LossAllocation(HEX, (ls.Loss("B2", 0, 2), ls.Loss("B1", 1)))
    assert _rules(ls.check_allocation(pos, fire, swapped, units=units)) == ["RB 9.52", "RB 9.52"]
    pos = battle_pos(blk("B1", "axis", "Br Arm 4", 2), blk("P1", "allied", "Br Arm 4"))
    assert ls.check_allocation(pos, fire, ls.LossAllocation(HEX, (ls.Loss("B1", 1, 2),)), units=units) == []
    assert _rules(ls.check_allocation(pos, _fire(2, 2), ls.LossAllocation(HEX, (ls.Loss("B1", 1, 2),)),
                                      units=units)) == ["RB 9.52"]


def test_rb_9_52_issue_27_6_the_frozen_version_5_still_accepts_both_forms() -> None:
    """A game started under version 5 may hold the other form: the frozen
    package keeps accepting it (docs/protocol.md decision 21)."""
    from rules.ritd_v5 import combat as cb5

    pos = battle_pos(blk("B1", "axis", "Br Arm 1", 1), blk("P1", "allied", "Br Arm 4"))
    fire5 = cb5.FireResult(hex=HEX, side="allied", shots=(), hits={"armor": cb5.ClassHits(1, 2)})
    alloc = cb5.LossAllocation(HEX, (cb5.Loss("B1", 0, 2),))
    assert cb5.check_allocation(pos, fire5, alloc, units=units) == []


def test_t_10_t_34_a_later_open_hit_on_the_new_version_is_not_counted_as_a_pursuit_loss() -> None:
    """Found by random self-play (1942, seed 11): the Allied 4 Ind/7 Mot (CV 4)
    refused battle and took the one Pursuit hit in secret (new identity
    version CV 3, T-10); later, revealed in a battle, it took a hit in the
    open, recorded on its new version (CV 2, T-34). When the old version was
    opened, the check read the new version's CV as it stands now (2) and
    accused the honest player of placing 2 hits for 1. The step judged is the
    one of its own event: the new version counts as committed (CV 3)."""
    from rules.ritd import hidden
    from rules.ritd.openings import decide_labelled
    from rules.ritd.state import initial_state

    token, old, new = "Leffbd9f9", "Leffbd9f9.id0", "Leffbd9f9.id1"
    ob = hidden.Obligation(token=token, seq=21, kind="losses", rule="RB 10.5",
                           what="Pursuit losses placed in event 21 (1 hits)", hex="1010", tokens=(token,),
                           labels=(old, new), hits=1)
    values = {old: hidden.encode_identity("4 Ind/7 Mot", 4), new: hidden.encode_identity("4 Ind/7 Mot", 3)}

    class Ctx:
        def value(self, label: str) -> bytes | None:
            return values.get(label)

    state = initial_state("1942", ())
    state = state.__class__(**{**{f: getattr(state, f) for f in state.__struct_fields__},
                               "obligations": (ob,), "public_cv": {new: 2}})
    after, problems = decide_labelled(state, Ctx())
    assert problems == [] and after.obligations == ()
    # The same placement with a step too many (CV 2 committed) is still refused.
    values[new] = hidden.encode_identity("4 Ind/7 Mot", 2)
    _, problems = decide_labelled(state, Ctx())
    assert _rules(problems) == ["RB 10.5"] and "2 hits and 0 half-hits placed, but only 1 hits" in problems[0].message
