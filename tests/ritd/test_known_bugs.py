"""Rules bugs found while reorganising rules/ritd (issue 19) or by self-play,
first shown by strict xfail tests while rules version 4 was current (it must
replay as before); fixed in rules version 5 (PLAN step 3), where each test
passes."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from rules.ritd import game as ritd
from rules.ritd import movement as mv
from rules.ritd.actions import EndMovement
from rules.ritd.position import Battle
from rules.ritd.turn import Turn
from tests.ritd.movement_support import at, block, position


class _Ctx:
    """What apply reads of the engine here: the author and the event number."""

    author = "axis"
    seq = 7

    def value(self, label: str) -> bytes | None:
        return None

    def committed(self, label: str) -> bool:
        return False

    def opened(self, label: str) -> bool:
        return False

    def leaf(self, label: str, key: str) -> bytes | None:
        return None

    def leaves(self, label: str, keys: Iterable[str]) -> list[bytes | None]:
        return [None for _ in keys]

    def card(self, rnd: str, pos: int) -> str | None:
        return None

    @property
    def role(self) -> str | None:
        return None


def test_rb_13_2_cb_12_a_pass_turn_ends_with_the_fortress_attackers_routed() -> None:
    tobruk = at("Tobruk")
    pos = position(block("X1", "axis", "Tobruk", unit="Brescia", cv=2, revealed=True),
                   block("A1", "allied", "Tobruk", unit="2/3 Ind", cv=2, revealed=True),
                   fortresses={"Tobruk": "allied"})
    pos = pos.with_battles([Battle(tobruk, "axis", {})])
    movement = mv.start_movement(pos, "axis", moves_allowed=1, withdrawal_only=True)  # a Pass Turn (RB 4.5)
    state = msgspec.structs.replace(
        ritd.initial_state("1941", ()), phase="turn", side="axis", position=pos, turns=("axis",),
        turn=Turn(number=1, active="axis", step="movement", cards=0, option="pass", movement=movement))
    after = ritd.apply(state, EndMovement(), _Ctx())
    # RB 13.2 sidebar: "If unable to Withdraw during a Pass Turn, the Fortress Attackers are Routed (11.3)."
    assert after.turn is not None and after.turn.step == "rout-slowest"
    assert [(r.hex, r.side, r.tokens) for r in after.turn.rout_queue] == [(tobruk, "axis", ("X1",))]
    # Routed units are Disrupted (RB 11.3), so their Withdrawal Group Move is
    # a legal Rout: self-play of 1942 (seed 11) stuck at 'rout-withdraw' with
    # no order listed when the Pass Turn's attackers stayed Undisrupted.
    routed = after.position.block("X1")
    assert routed.disrupted and not routed.revealed
    from rules.ritd.state import game_map

    m = game_map()
    step = next(iter(m.passable_neighbours(tobruk)))
    rout = mv.Move("group", tobruk, (mv.UnitMove("X1", (tobruk, step)),), withdrawal="rout")
    problems = mv.check_move(m, after.position, movement, rout, {"X1": 1}).problems
    assert not any("only Disrupted units Rout" in p.message for p in problems), problems
    undisrupted = msgspec.structs.replace(after, position=after.position.replace_blocks(
        [msgspec.structs.replace(routed, disrupted=False)]))
    assert any("only Disrupted units Rout" in p.message  # what the Pass Turn's Rout ran into before
               for p in mv.check_move(m, undisrupted.position, movement, rout, {"X1": 1}).problems)


def test_t_42_no_bluff_while_attacking_a_fortress_battle() -> None:
    """RB 13.2 sidebar "Fortress Combat in Pass Turns": "The Original Attacker
    must have combat when Engaged in a Fortress"; RB 4.1: a Combat Round needs
    a real card. A turn of dummy cards only (a bluff) allows no Move and no
    combat, so while the Axis attacks the Fortress battle in Tobruk it is
    refused and not listed (T-42); found by self-play of 1942 (seed 11),
    where the bluff forced 'battles Benghazi' and the reveal was then refused
    as an illegal Player-Turn, leaving the game with no legal order."""
    from rules.ritd import turn_options
    from rules.ritd.cards import Hand

    pos = position(block("X1", "axis", "Tobruk", unit="Brescia", cv=2, revealed=True),
                   block("A1", "allied", "Tobruk", unit="2/3 Ind", cv=2, revealed=True),
                   fortresses={"Tobruk": "allied"})
    state = msgspec.structs.replace(
        ritd.initial_state("1941", ()), phase="turn", side="axis", position=pos, turns=("axis",),
        hands={"axis": Hand(count=3, real=1), "allied": Hand(count=2, real=2)},
        turn=Turn(number=1, active="axis", step="option"))
    fought = pos.with_battles([Battle(at("Tobruk"), "axis", {})])
    attacking = msgspec.structs.replace(state, position=fought)
    problems = turn_options.fortress_bluff_problems(attacking, "axis", 2, 0)
    assert [p.rule for p in problems] == ["RB 13.2"] and "Tobruk" in problems[0].message
    assert turn_options.fortress_bluff_problems(attacking, "axis", 2, 1) == []  # a real card pays for combat
    assert turn_options.fortress_bluff_problems(attacking, "axis", 0, 0) == []  # an open Pass: withdraw or Rout
    assert turn_options.fortress_bluff_problems(attacking, "axis", 2, None) == []  # unseen: judged at the reveal
    assert turn_options.fortress_bluff_problems(attacking, "allied", 2, 0) == []  # the Defender need not fight
    listed = turn_options.listed_options(attacking, "axis", attacking.turn, _Ctx())
    assert "pass" in listed and "basic" in listed and not any(o.startswith("bluff") for o in listed)
    assert "bluff 1" in turn_options.listed_options(state, "axis", state.turn, _Ctx())  # no battle: bluff away
