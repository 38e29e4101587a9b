"""Secret dice (DESIGN 5; issue 7's draws): the asker sees the die at once,
the opponent when the seed is opened, and nobody could choose it."""

from __future__ import annotations

from click.testing import CliRunner

from pbem import session
from pbem.cli import cli
from pbem.game import AUDIT, Replay
from tests.race import rules as race


def _scouts(side, role="red"):
    return side.seat().replay.state.runners[role].scout_values


def test_the_asker_sees_a_secret_die_at_once_and_the_opponent_only_when_opened(table):
    table.play("red", "scout")  # blue answers the entropy automatically
    red_roll = table.red.seat().replay.history[-1].rolls
    blue_roll = table.blue.seat().replay.history[-1].rolls
    assert red_roll.values[0] in range(1, 7) and blue_roll.values == (None,)
    assert _scouts(table.red) == red_roll.values and _scouts(table.blue) == ()
    assert table.red.seat().replay.head == table.blue.seat().replay.head
    log = CliRunner().invoke(cli, ["log", str(table.blue.gd.path)])
    assert "[dice of event 2: ?]" in log.output
    # Red moves on; later it opens the scout's seed and blue sees the same die.
    table.play("red", "advance 1", "pass")
    table.play("blue", "advance 1", "pass")
    table.play("red", "open scout 0", "advance 1", "pass")
    assert _scouts(table.blue) == red_roll.values


def test_the_audit_sees_every_secret_die_from_the_start(table):
    table.play("red", "scout")
    table.play("red", "advance 1", "pass")
    seed = table.red.seat().vault.known_values()["red.scout0"]
    audit = Replay(race.RULES, role=AUDIT, known={"red.scout0": seed})
    for stored in table.red.gd.read_events():
        audit.apply_stored(stored)
    assert audit.history[3].rolls.values == table.red.seat().replay.history[3].rolls.values


def test_a_secret_die_is_fixed_before_the_opponents_entropy_and_cannot_be_rechosen(table):
    """The seed is committed in the asking event, before the opponent's x is
    revealed: opening another seed fails the commitment check."""
    from pbem import codec
    from pbem.errors import VerifyError
    table.play("red", "scout")
    table.play("red", "advance 1", "pass")
    table.play("blue", "advance 1", "pass")
    seat = table.red.seat()
    forged_vault = session._with_secrets(seat.vault, [])
    forged_vault.secrets["red.scout0"] = session.Secret(value=("00" * 16), salt=forged_vault.secrets["red.scout0"].salt)
    order = race.parse_order(seat.replay.state, "red", "open scout 0", seat.replay.ctx("red"))
    body = session._body(seat.replay, "red", forged_vault,
                         [session.DraftOrder(text="open", action=codec.raw(order.action), reveal=["red.scout0"])],
                         x_next=bytes(32))
    stored = session._sign(seat.identity, body)
    blue = table.blue.seat()
    try:
        blue.replay.clone().apply_stored(stored)
    except VerifyError as exc:
        assert "does not match its commitment" in str(exc)
    else:
        raise AssertionError("a different seed was accepted")
