"""Dice from both players' entropy (DESIGN 5)."""

from __future__ import annotations

import pytest

from pbem import dice
from pbem.errors import VerifyError
from pbem.game import Replay


def test_rolls_are_deterministic_in_their_inputs():
    args = (b"g" * 32, b"e" * 32, b"p" * 32, b"q" * 32)
    assert dice.roll(*args, (6, 6, 6)) == dice.roll(*args, (6, 6, 6))
    assert dice.roll(*args, (6,) * 20) != dice.roll(b"g" * 32, b"e" * 32, b"p" * 32, b"Q" * 32, (6,) * 20)


def test_chi_square_of_10000_d6_is_plausible():
    values = []
    for event in range(10):  # ten events asking for 1,000 dice each
        values += dice.roll(b"g" * 32, event.to_bytes(32, "big"), b"p" * 32, b"q" * 32, (6,) * 1000)
    counts = [values.count(face) for face in range(1, 7)]
    expected = 10_000 / 6
    chi2 = sum((c - expected) ** 2 / expected for c in counts)
    # 5 degrees of freedom: P(chi2 > 20.52) = 0.001
    assert chi2 < 20.52, counts


def test_rejection_sampling_stays_in_range_for_awkward_sides():
    values = dice.roll(b"a", b"b", b"c", b"d", (3, 7, 1000, 65536) * 50)
    for sides, value in zip((3, 7, 1000, 65536) * 50, values):
        assert 1 <= value <= sides


def test_rolls_are_reproducible_from_the_log(table):
    table.play("red", "dash")
    events = table.red.gd.read_events()
    fresh = Replay(table.red.seat().rules)
    for stored in events:
        fresh.apply_stored(stored)
    roll = fresh.history[-1].rolls
    assert roll is not None and roll.values == table.blue.seat().replay.history[-1].rolls.values


def test_a_player_cannot_change_its_entropy_after_committing(table):
    """An event that reveals any x other than the committed one is rejected, so
    nobody can choose a roll after seeing the other side's value."""
    from pbem import codec, session

    table.play("red", "dash")  # blue answered automatically; red now continues
    seat = table.red.seat()
    session.add_orders(seat, ["pass"])
    body = session._body(seat.replay, "red", seat.vault,
                         session.read_draft(seat.gd, "red", seat.replay.seq).orders, x_next=dice.new_secret())
    forged = body.__class__(**{**{f: getattr(body, f) for f in body.__struct_fields__},
                               "entropy": codec.Entropy(commit=body.entropy.commit, reveal="ab" * 32)})
    stored = session._sign(seat.identity, forged)
    blue = table.blue.seat()
    with pytest.raises(VerifyError, match="entropy reveal does not match"):
        blue.replay.clone().apply_stored(stored)
