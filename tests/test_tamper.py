"""Tamper detection and hidden-information properties of a whole log (DESIGN 3, 4; STYLE 9)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbem import codec, session
from pbem.errors import ForeignGame, IllegalAction, PbemError, VerifyError
from pbem.game import Replay
from tests.conftest import new_table
from tests.race import rules as race


@pytest.fixture(scope="module")
def sample_log(tmp_path_factory):
    """A short race game with dice, an attack, a reveal and an automatic reply."""
    tmp = tmp_path_factory.mktemp("sample")
    import pbem.identity
    from pbem import rulesapi

    rulesapi.register(race.RULES)
    old = pbem.identity.SCRYPT_N
    pbem.identity.SCRYPT_N = 1 << 10
    try:
        t = new_table(tmp)
        t.play("red", "dash")
        t.play("red", "pass")
        t.play("blue", "reveal", "advance 3", "pass")
        t.play("red", "advance 1", "attack")
        return t.red.gd.read_events()
    finally:
        pbem.identity.SCRYPT_N = old


def _verify(events):
    r = Replay(race.RULES)
    for stored in events:
        r.apply_stored(stored)
    return r


def test_sample_log_verifies(sample_log):
    assert _verify(sample_log).seq == len(sample_log) - 1


@given(st.data())
@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
def test_every_single_byte_change_is_detected(sample_log, data):
    index = data.draw(st.integers(0, len(sample_log) - 1), label="event")
    stored = sample_log[index]
    pos = data.draw(st.integers(0, len(stored) - 1), label="position")
    new = data.draw(st.integers(0, 255).filter(lambda b: b != stored[pos]), label="byte")
    tampered = list(sample_log)
    tampered[index] = stored[:pos] + bytes([new]) + stored[pos + 1:]
    with pytest.raises(PbemError):
        _verify(tampered)


def test_every_byte_of_every_event_exhaustively(sample_log):
    """Issue 9: every position of every event of the game, flipped in its lowest
    and its highest bit (the latter also breaks UTF-8), is refused when that
    event is applied to the verified log before it."""
    prefix = Replay(race.RULES)
    checked = 0
    for stored in sample_log:
        for pos in range(len(stored)):
            for flip in (0x01, 0x80):
                twin = prefix.clone()
                with pytest.raises(PbemError):
                    twin.apply_stored(stored[:pos] + bytes([stored[pos] ^ flip]) + stored[pos + 1:])
                checked += 1
        prefix.apply_stored(stored)
    assert checked == 2 * sum(map(len, sample_log))


def test_dropping_reordering_and_duplicating_events_are_detected(sample_log):
    with pytest.raises(VerifyError, match="out of order"):
        _verify(sample_log[:2] + sample_log[3:])
    swapped = list(sample_log)
    swapped[2], swapped[3] = swapped[3], swapped[2]
    with pytest.raises(VerifyError, match="out of order"):
        _verify(swapped)
    with pytest.raises(VerifyError, match="replayed"):
        _verify(sample_log[:3] + [sample_log[2]] + sample_log[3:])


def test_events_spliced_from_another_game_are_detected(sample_log, tmp_path):
    other = new_table(tmp_path)
    other.play("red", "advance 1", "pass")
    foreign = other.red.gd.read_events()
    with pytest.raises(ForeignGame, match="event 2 belongs to another game"):
        _verify(sample_log[:2] + foreign[2:3])
    with pytest.raises(ForeignGame, match="event 1 belongs to another game"):
        _verify(foreign[:1] + sample_log[1:])


def test_receive_rejects_tampered_turn_files_and_changes_nothing(table):
    seat = table.red.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    sent = session.send(seat)
    data = Path(sent.turn_file).read_bytes()
    before = sorted(p.name for p in table.blue.gd.events_dir.iterdir())
    bad = data.replace(b'"steps":1', b'"steps":2')
    with pytest.raises(VerifyError, match="signature"):
        session.receive(table.blue.seat(), [("bad", bad)])
    assert sorted(p.name for p in table.blue.gd.events_dir.iterdir()) == before


def _cheater(table, role: str) -> session.Seat:
    """``role``'s seat replayed from the opponent's log without its own secrets,
    so pbem's own checks cannot stop it from signing an illegal event."""
    honest = table.side(role).seat()
    other = table.blue if role == "red" else table.red
    blind = Replay(race.RULES)
    for stored in other.gd.read_events():
        blind.apply_stored(stored)
    return session.Seat(honest.gd, honest.rules, honest.identity, role, honest.vault, blind)


def _forge(seat: session.Seat, *orders: str, reveal: tuple[str, ...] = ()) -> bytes:
    drafts = []
    for text in orders:
        order = race.parse_order(seat.replay.state, seat.role, text, seat.replay.ctx(seat.role))
        drafts.append(session.DraftOrder(text=text, action=codec.raw(order.action), reveal=list(order.reveal)))
    body = session._body(seat.replay, seat.role, seat.vault, drafts, x_next=bytes(32), extra_reveals=reveal)
    return session._sign(seat.identity, body)


def _turn(*events: bytes) -> bytes:
    return b"pbem-turn v1\n---\n" + b"\n".join(events) + b"\n"


def test_a_deferred_check_fails_when_the_revealed_value_contradicts_an_earlier_move(table):
    """Red (speed 2) cheats with 'advance 3': blue cannot see red's speed, so it
    accepts the move with a deferred check; the reveal exposes it (RACE 2)."""
    cheat = _forge(_cheater(table, "red"), "advance 3", "pass")
    session.receive(table.blue.seat(), [("cheat", _turn(cheat))])  # accepted for now: speed is hidden
    session.add_orders(table.blue.seat(), ["advance 1", "pass"])
    session.send(table.blue.seat())
    seat = _cheater(table, "red")
    seat.vault.entropy["2"] = bytes(32).hex()  # the cheat committed x_next = 0
    reveal = _forge(seat, "reveal")
    before = table.blue.gd.read_events()
    with pytest.raises(IllegalAction, match=r"RACE 2: red advanced 3 steps in event 2 but its speed is 2"):
        session.receive(table.blue.seat(), [("reveal", _turn(reveal))])
    assert table.blue.gd.read_events() == before


def test_the_audit_names_the_first_illegal_event_and_its_signer(table):
    seat = _cheater(table, "red")
    cheat = _forge(seat, "advance 3", "pass")
    session.receive(table.blue.seat(), [("cheat", _turn(cheat))])
    events = table.blue.gd.read_events()
    seat = _cheater(table, "red")
    seat.vault.entropy["2"] = bytes(32).hex()
    opening = session._body(seat.replay, "red", seat.vault, [], x_next=bytes(32), extra_reveals=["red.speed"])
    with pytest.raises(IllegalAction) as err:
        session.audit(events + [session._sign(seat.identity, opening)], seat.rules)
    assert "event 2 by red" in str(err.value) and "exceeds speed 2" in str(err.value)


@given(st.sampled_from([1, 2, 3]), st.sampled_from([1, 2, 3]))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_players_view_does_not_depend_on_the_opponents_hidden_values(tmp_path_factory, blue_a, blue_b):
    """Red's rendered view is byte-identical whatever blue's secret speed is."""
    views = []
    for speed in (blue_a, blue_b):
        t = new_table(tmp_path_factory.mktemp("leak"), red_speed=2, blue_speed=speed)
        t.play("red", "advance 1", "pass")
        t.play("blue", "advance 1", "pass")
        seat = t.red.seat()
        views.append(msgspec.json.encode(race.view(seat.replay.state, "red")) + race.render_text(
            race.view(seat.replay.state, "red")).encode())
    assert views[0] == views[1]


def test_replay_is_deterministic_and_a_prefix_fold_continues_identically(sample_log):
    whole = _verify(sample_log)
    prefix = _verify(sample_log[:3])
    for stored in sample_log[3:]:
        prefix.apply_stored(stored)
    assert prefix.state == whole.state and prefix.head == whole.head
    assert _verify(sample_log).state == whole.state
