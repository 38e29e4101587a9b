"""Rules bugs found while reorganising rules/ritd (issue 19), shown by strict
xfail tests. Issue 19 changes no rule outcome (rules version 4 replays as
before); the fixes belong to rules version 5 (PLAN step 3), where each test
is expected to pass and its xfail mark removed."""

from __future__ import annotations

import msgspec
import pytest

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


@pytest.mark.xfail(strict=True, reason=(
    "rules bug (issue 19): RB 13.2 sidebar / decisions CB-12 (the passer's units still in a Fortress battle "
    "it attacks when its Pass Turn's movement ends are Routed) is implemented as "
    "combat.pass_turn_fortress_routs but never called by the sequence of play: after 'end movement' of a "
    "Pass Turn the attackers stay in the Fortress battle, unrouted. The fix changes games: rules version 5."))
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
    routing = [t for r in (after.turn.rout_queue if after.turn else ()) for t in r.tokens]
    assert "X1" in routing or not after.position.has_block("X1") or after.position.block("X1").hex != tobruk
