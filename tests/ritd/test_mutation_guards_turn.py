"""The Player-Turn record (rules/ritd/turn.py; the RB 3.4x Sequence of Play
chart and the steps the rules add to it), tested through its public types
(issue 29: mutation score)."""

from __future__ import annotations

import msgspec
import pytest

from rules.ritd import game as ritd
from rules.ritd.turn import PendingRout, Turn, option_label

#: Every step of a Player-Turn, each a decision of one player, with the rule
#: it carries out (the table in turn.py's docstring, RB 3.4x chart).
SEQUENCE = {
    "initial-supply": "RB 12.7, 11.2", "option": "RB 3.42, 4.0", "movement": "RB 5, 6, 7",
    "forced-march": "RB 6.4", "refuse": "RB 8.4, 10.2", "refuse-pursuit": "RB 10.2, 10.5",
    "refuse-dice": "RB 10.5", "refuse-losses": "RB 9.5, 10.5", "refuse-withdraw": "RB 10.2",
    "retreat-probe": "RB 10.4, 10.41", "probe-reveal": "RB 8.5", "retreat-slowest": "RB 10.3",
    "retreat-pursuit": "RB 10.3, 10.5", "retreat-dice": "RB 10.5", "retreat-losses": "RB 10.3",
    "march-losses": "RB 6.4", "mines-passive": "RB 14.2", "mines-active": "RB 14.2",
    "reveal-passive": "RB 7.3, 8.5", "reveal-active": "RB 7.3, 8.5", "battles": "RB 8.6",
    "defensive-fire": "RB 9.1-9.3", "defensive-dice": "RB 9.4", "offensive-losses": "RB 9.5",
    "offensive-fire": "RB 9.2, 9.3", "offensive-dice": "RB 9.4", "defensive-losses": "RB 9.5",
    "rout-slowest": "RB 11.3", "rout-pursuit": "RB 11.3", "rout-dice": "RB 11.3", "rout-losses": "RB 11.3",
    "rout-withdraw": "RB 11.3", "blitz": "RB 3.45, 4.4", "final-supply": "RB 12.7",
    "supply-revealed": "RB 3.48",
}


@pytest.mark.parametrize("step", sorted(SEQUENCE))
def test_rb_3_4_every_step_of_the_player_turn_survives_the_replay_cache(step: str) -> None:
    """The replay cache stores the state as JSON and restores it by decoding
    (pbem/snapshot.py): a state paused at any step of the turn (RB 3.4x
    chart, the step's rule in SEQUENCE) must decode to the same state."""
    state = ritd.initial_state("1941", ())
    paused = msgspec.structs.replace(state, turn=Turn(number=3, active="allied", step=step))  # type: ignore[arg-type]
    back = msgspec.json.decode(msgspec.json.encode(paused), type=ritd.State)
    assert back == paused and back.turn is not None and back.turn.step == step


def test_rb_3_4_a_step_outside_the_sequence_does_not_decode() -> None:
    state = msgspec.structs.replace(ritd.initial_state("1941", ()), turn=Turn(number=1, active="axis"))
    text = msgspec.json.encode(state)
    assert text.count(b'"step":"initial-supply"') == 1
    text = text.replace(b'"step":"initial-supply"', b'"step":"lunch"')
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(text, type=ritd.State)


def test_rb_3_4_a_player_turn_begins_at_the_initial_supply_check_with_nothing_played() -> None:
    """RB 3.4x: T1 Initial Supply Check comes first; until T3 no card is
    played (a Pass, RB 4.5, plays none), how many are real is not known, and
    nothing has been fought, pursued or routed yet."""
    turn = Turn(number=1, active="axis")
    assert turn.step == "initial-supply"
    assert (turn.cards, turn.option_label, turn.option, turn.real, turn.fought, turn.blitz) == (0, "", "", -1, False, False)
    assert (turn.slowest, turn.hits, turn.rout_slowest, turn.rout_hits, turn.probing) == (0, 0, 0, 0, False)
    assert turn.movement is None and turn.pursuit is None and turn.rout_pursuit is None
    assert turn.passive == "allied" and Turn(number=2, active="allied").passive == "axis"
    assert PendingRout(hex="1010", side="axis", tokens=("a",)).fired == ()


def test_rb_3_42_the_secret_option_of_each_turn_has_its_own_commitment_label() -> None:
    assert option_label(7) == "turn7.option"
    assert option_label(7) != option_label(8)
