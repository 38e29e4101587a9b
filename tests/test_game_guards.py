"""Guards of the replay that the mutation run on the merged engine found
untested (issue 29): composing after the end, refusals at an event's end
that name no action, secret dice the rules did not declare, game ids shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from pbem import codec, rulesapi, session
from pbem.errors import IllegalAction
from pbem.game import Replay, short_game
from pbem.rulesapi import DICE, Decision
from pbem.table import LocalTable, RandomPolicy, demo_policy
from tests.race import rules as race
from tests.test_dice_batch import Volley


def test_an_open_event_takes_no_action_after_the_game_is_over(tmp_path: Path) -> None:
    rulesapi.register(Volley())
    try:
        table = LocalTable.create(tmp_path, "volley", "standard")
        table.play(RandomPolicy(1), 2)  # the barrage and its answer: the game is over
        replay = table.replay
        assert replay.outcome() is not None
        body = session._body(replay, "gunner", table.player("gunner").seat.vault, [], x_next=bytes(32))
        opened = replay.open_event(body)
        with pytest.raises(IllegalAction, match="the game is over; only openings for the audit may follow"):
            opened.add(codec.raw(msgspec.json.decode(b'{"type":"barrage"}', type=table.rules.action_type)))
    finally:
        rulesapi.unregister("volley")


class _SelfDice(race.RaceRules):
    """Rules that make the attacker roll with its own entropy (an attack is
    the last action of its event): the engine refuses it at the event's
    end, after every action was accepted."""

    def pending(self, state: Any) -> Decision | None:
        decision = race.pending(state)
        if decision is not None and decision.kind == DICE:
            return Decision(role=state.turn, kind=DICE, dice=decision.dice)
        return decision


class _UndeclaredSecretDice(race.RaceRules):
    @property
    def secret_dice(self) -> bool:
        return False


def _race(tmp_path: Path) -> LocalTable:
    rulesapi.register(race.RULES)
    table = LocalTable.create(tmp_path, "race", "standard")
    table.play(demo_policy(race.RULES), 6)  # the demo script attacks on its first move
    return table


def _events(table: LocalTable) -> list[bytes]:
    return table.players[0].gd.read_events()


def test_a_refusal_at_the_end_of_an_event_names_no_action(tmp_path: Path) -> None:
    """The engine refuses rules that make an author wait for its own entropy;
    the refusal comes after every action was judged and names none of them."""
    table = _race(tmp_path)
    events = _events(table)
    replay = Replay(_SelfDice())
    with pytest.raises(IllegalAction) as err:
        for stored in events:
            replay.apply_stored(stored)
    assert "the rules wait for" in str(err.value) and "own entropy" in str(err.value)
    assert ", action " not in str(err.value)


def test_secret_dice_need_rules_that_declare_them() -> None:
    replay = Replay(_UndeclaredSecretDice())
    asked = Decision(role="blue", kind=DICE, dice=(6,), secret=("red.scout0",))
    with pytest.raises(IllegalAction, match="event 3 by red: the rules asked for secret dice but cannot reveal "
                                            "them .a rules module error: secret_dice is not declared."):
        replay._check_secret_request(asked, "red", "event 3 by red")


def test_game_ids_are_shown_as_sixteen_digits_and_other_text_escaped() -> None:
    game = "ab" * 32
    assert short_game(game) == "abababababababab"
    assert short_game("ab" * 31).startswith("'abab")  # 62 digits: no game id, quoted and cut
    assert short_game("AB" * 32).startswith("'")  # upper case is no game id pbem writes
    assert short_game("") == "no game id"
    assert short_game("x\x1b[2Jy") == "'x\\x1b[2Jy'"


class _CrashAtEnd(race.RaceRules):
    """Rules that crash deciding what comes after an attack (a rules bug met
    at the end of the event, after its last action was judged)."""

    def pending(self, state: Any) -> Decision | None:
        decision = race.pending(state)
        if decision is not None and decision.kind == DICE:
            raise RuntimeError("no idea who rolls")
        return decision


def test_a_rules_crash_at_the_end_of_an_event_names_no_action(tmp_path: Path) -> None:
    """The refusal of a rules crash after every action was judged names the
    event, not its last action (which was accepted)."""
    table = _race(tmp_path)
    replay = Replay(_CrashAtEnd())
    with pytest.raises(IllegalAction, match="could not judge it .RuntimeError: no idea who rolls.") as err:
        for stored in _events(table):
            replay.apply_stored(stored)
    assert ", action " not in str(err.value).split(":")[0]
