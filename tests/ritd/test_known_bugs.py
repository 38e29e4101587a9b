"""Rules bugs found while reorganising rules/ritd (issue 19), shown by strict
xfail tests. Issue 19 changes no rule outcome (rules version 4 replays as
before); the fixes belong to rules version 5 (PLAN step 3), where each test
is expected to pass and its xfail mark removed."""

from __future__ import annotations

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
