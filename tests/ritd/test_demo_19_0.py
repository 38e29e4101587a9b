"""RB 19.0 Demo (1940), Month 1 and the Month 2 Buildup, as ``pbem demo``
plays it: two local players, real signed turn files, the rulebook's dice
fixed by a test hook (the Supply Cards by tests/ritd/conftest.py: the Axis
hand holds 4 real cards, the Allied one 2 real and a dummy). Each state the
text describes is checked event by event (EX-31, D-0..D-8)."""

from __future__ import annotations

import msgspec
import pytest
from click.testing import CliRunner

import pbem.game
from pbem import session, table
from pbem.cli import cli
from pbem.game import Replay
from rules.ritd import buildup as bu
from rules.ritd.buildup_orders import buildup_ctx
from rules.ritd.state import game_map

#: The rulebook's dice, in the order the Demo asks for them (D-3 Defensive Fire:
#: the armour's six dice at DF score 2 hits, the mechanized infantry's three at
#: SF miss; D-3 Offensive Fire: 1 hit from six dice at SF; D-5: the Forced March
#: succeeds on 4-6; D-8: BP dice, Axis 5 and Allied 4; then the Axis Early
#: Arrival die for Ariete, due in Month 3, which the book does not mention (G-49):
#: a 4, so it does not arrive early).
BOOK_DICE = [(5, 6, 1, 1, 1, 1, 1, 1, 1), (6, 1, 1, 1, 1, 1), (5,), (5, 4), (4,)]


@pytest.fixture
def book_dice(monkeypatch):
    """Each dice request gets the book's next dice, the same for every replay of it."""
    queue, seen = list(BOOK_DICE), {}

    def roll(game, event_hash, x_p, x_q, sides):
        if event_hash not in seen:
            values = queue.pop(0)
            assert len(values) == len(sides), f"the Demo asked for {len(sides)} dice, the book rolls {values}"
            seen[event_hash] = values
        return seen[event_hash]

    monkeypatch.setattr(pbem.game, "roll", roll)
    return queue


@pytest.fixture
def demo(tmp_path, book_dice):
    t = table.LocalTable.create(tmp_path, "ritd", "demo")
    result = t.play(table.demo_policy(t.rules), 200)
    assert result.stopped == "script" and not book_dice  # every book die was used
    return t


def _states(t, role):
    """``role``'s state after each event of the log, its own secrets known."""
    seat = t.player(role).seat
    replay = Replay(t.rules, role=role, known=seat.vault.known_values())
    out = []
    for seq in range(seat.gd.event_count()):
        replay.apply_stored(seat.gd.read_event(seq))
        out.append(replay.state)
    return out


def _log(t) -> list[str]:
    return t.log


def _units(state, role, place):
    h = game_map().resolve(place)
    return {b.unit: (b.cv, b.disrupted) for b in state.position.blocks_in(h, role)}


def _turn_end(states, number):
    """The state as Player-Turn ``number`` begins."""
    return next(s for s in states if s.turn and s.turn.number == number)


def test_rb_19_0_d1_to_d7_month_1(demo):
    axis, allied = _states(demo, "axis"), _states(demo, "allied")
    # D-0: 8 Italian units and 4 Allied; hands of 6 and 3; Month 1: no Buildup, the Axis first.
    start = _turn_end(axis, 1)
    assert start.month == 1 and start.turn.active == "axis"
    assert start.hands["axis"].count == 6 and start.hands["allied"].count == 3
    # D-1: a Regroup into Sollum, one unit each from Bardia, Ft Capuzzo and Sidi Omar; the
    # Allies Refuse, the 7/7 Tk Withdraws to Sidi Barrani and is Disrupted; no Pursuit dice.
    t2 = _turn_end(allied, 2)
    assert len(t2.position.blocks_in(game_map().resolve("Sollum"), "axis")) == 3
    assert _units(t2, "allied", "Sidi Barrani") == {"7/7 Tk": (4, True)}
    assert _units(_turn_end(axis, 2), "axis", "Bardia") == {}
    assert _turn_end(axis, 2).hands["axis"].count == 5
    # D-2: an Allied Pass; the 7/7 Tk does not recover yet.
    assert _units(_turn_end(allied, 3), "allied", "Sidi Barrani") == {"7/7 Tk": (4, True)}
    # D-3: two units Attack Buq Buq, the third joins Sidi Omar; the battle is accepted;
    # 2 hits by the armour on one infantry unit (-2 CV), then 1 hit on the mech infantry.
    t4 = _turn_end(axis, 4)
    buq = _units(t4, "axis", "Buq Buq")
    assert sorted(cv for cv, _ in buq.values()) == [2, 4]
    assert _units(_turn_end(allied, 4), "allied", "Buq Buq")["7 SG"][0] == 2
    assert [b.hex for b in t4.position.battles] == [game_map().resolve("Buq Buq")]
    assert t4.hands["axis"].count == 4
    # D-4: the 7/7 Tk recovers; the Pass's free Withdrawal: a Regroup from Buq Buq (the
    # Sofafi unit joins, G-48) to the hex east of Sidi Barrani; the two that left the
    # battle are Disrupted (RB 7.2), no Pursuit.
    t5 = _turn_end(allied, 5)
    assert _units(t5, "allied", "Sidi Barrani") == {"7/7 Tk": (4, False)}
    east = _units(t5, "allied", "Sidi Barrani E1")
    assert east == {"7/4 Armd": (6, True), "7 SG": (2, True), "11H": (2, False)}
    assert t5.position.battles == ()
    # D-5: an Offensive Turn: Sollum Attacks Sidi Barrani (the 3rd unit to Sidi Omar);
    # Sidi Omar to Sofafi (one by a Forced March of 5) and Bir Habata; the 7/7 Tk Refuses
    # to Mersa Matruh, Disrupted. The Axis has spent 4 cards and keeps 2.
    t6 = _turn_end(axis, 6)
    assert len(_units(t6, "axis", "Sidi Barrani")) == 2 and len(_units(t6, "axis", "Sofafi")) == 2
    assert len(_units(t6, "axis", "Bir Habata")) == 1
    assert _units(_turn_end(allied, 6), "allied", "Mersa Matruh") == {"7/7 Tk": (4, True)}
    assert t6.hands["axis"].count == 2 and t6.hands["axis"].real == 0
    # D-6: the two units west of Mersa Matruh recover, the 7/7 Tk does not.
    t7 = _turn_end(allied, 7)
    assert not any(d for _, d in _units(t7, "allied", "Sidi Barrani E1").values())
    assert _units(t7, "allied", "Mersa Matruh") == {"7/7 Tk": (4, True)}


def test_rb_19_0_d8_month_2_buildup_and_initiative(demo):
    allied, axis = _states(demo, "allied"), _states(demo, "axis")
    check = next(s for s in allied if s.phase == "buildup")
    # D-8: the Month marker to 2; the Buildup Supply Check recovers the 7/7 Tk.
    assert check.month == 2 and check.stage == "bp-dice"
    assert _units(check, "allied", "Mersa Matruh") == {"7/7 Tk": (4, False)}
    buildup = next(s for s in allied if s.phase == "buildup" and s.stage == "buildup")
    # BP: one die each, Allied 4 and Axis 5: both get 9; the Allies are Player 1.
    assert buildup.bp_dice == (5, 4) and buildup.player1 == "allied"
    assert {s: led.total for s, led in buildup.ledgers.items()} == {"axis": 9, "allied": 9}
    # Allied: 2 Reinforcements to the front (2 BP), the mech infantry to Base (1), rebuilt
    # one step (2), back to Mersa Matruh (1): 6 spent, 3 Saved.
    ended = next(s for s in allied if s.saved.get("allied") is not None)
    led = ended.ledgers["allied"]
    assert [e.kind for e in led.entries] == ["redeploy", "redeploy", "redeploy", "replacement", "redeploy"]
    assert led.spent == 6 and ended.saved["allied"] == 3
    assert len(_units(ended, "allied", "Mersa Matruh")) == 4
    # Axis: Bardia (1), sea to Base (1), two steps (2), sea to Tobruk (1: Bardia's Port
    # Capacity of 1 is used), to Sofafi (2): 7 spent, 2 Saved.
    done = next(s for s in axis if s.saved.get("axis") is not None)
    axled = done.ledgers["axis"]
    assert [e.kind for e in axled.entries] == ["redeploy", "sea", "replacement", "sea", "redeploy"]
    assert axled.spent == 7 and done.saved["axis"] == 2
    sofafi = _units(done, "axis", "Sofafi")
    assert len(sofafi) == 3 and sofafi["Bologna"] == (4, False)  # rebuilt to full strength
    # Shipping Bologna back to Bardia from Base was not possible (the book's words):
    m = game_map()
    bologna = next(b for b in done.position.blocks_of("axis") if b.unit == "Bologna")
    in_base = done.position.replace_blocks([msgspec.structs.replace(bologna, hex=m.base("axis"))])
    problems = bu.check_spend(buildup_ctx(done), in_base, axled,
                                   bu.SeaRedeploy(token=bologna.token, to=m.resolve("Bardia")))
    assert [str(p) for p in problems] == [
        "RB 16.53: Bardia's axis Port Capacity (1) is used up this Buildup (1 embarkations/debarkations)"]
    # Resupply: the Axis draws 2, the Allies 3: hands of 4 and 6.
    final = axis[-1]
    assert final.hands["axis"].count == 4 and final.hands["allied"].count == 6 - 1
    # Initiative: the Allies challenge with a dummy, the Axis declines: the Axis goes first,
    # the Allied card is spent (hand 5).
    assert final.phase == "turn" and final.month == 2 and final.turn.active == "axis"
    assert [line.split(": ", 1)[1].split(" - ")[0] for line in _log(demo)[-3:]] == [
        "challenge with dummy", "decline", "open challenge"]


def test_pbem_demo_from_the_command_line(tmp_path):
    """The README's main command: the Demo with real dice, its reports on disk."""
    result = CliRunner().invoke(cli, ["demo", "--dir", str(tmp_path / "d")])
    assert result.exit_code == 0, result.output
    reports = [line.split(": ", 1)[1] for line in result.output.splitlines() if line.startswith("report: ")]
    assert len(reports) == 4
    text = (tmp_path / "d" / "allied-report.txt").read_text()
    assert "Month 2" in text and "SUPPLY CARDS" in text
    audit = CliRunner().invoke(cli, ["verify", "-g", str(tmp_path / "d" / "axis")])
    assert audit.exit_code == 0, audit.output
    assert session.load_public(session.GameDir(tmp_path / "d" / "axis")).state.month == 2
