"""Standing orders in the engine (issue 21 point 5; 'pbem standing',
``Rules.standing_orders``/``standing_order``, pbem.session.automatic_orders):
a game that offers none says so; names are checked against the game; the
setting is local (GAME/local.json) and a local.json written before the field
existed still reads."""

from __future__ import annotations

import json

from click.testing import CliRunner

from pbem import session
from pbem.cli import cli
from pbem.store import LocalConfig
from tests.conftest import new_table


def test_a_game_without_standing_orders_says_so_and_refuses_a_name(tmp_path):
    t = new_table(tmp_path)
    game = str(t.red.gd.path)
    before = t.red.gd.local_path.read_bytes()
    out = CliRunner().invoke(cli, ["standing", "--game", game])
    assert out.exit_code == 0 and "this game offers no standing orders" in out.output
    out = CliRunner().invoke(cli, ["standing", "losses-auto", "--game", game])
    assert out.exit_code == 2
    assert "no standing order 'losses-auto' in this game (it offers: none" in out.output
    assert t.red.gd.local_path.read_bytes() == before


def test_the_hook_defaults_give_nothing_and_receive_answers_as_before(tmp_path):
    t = new_table(tmp_path)
    assert t.red.seat().rules.standing_orders() == {}
    seat = t.red.seat()
    assert seat.rules.standing_order(seat.replay.state, "red", seat.replay.ctx("red"), frozenset({"x"})) is None
    assert session.standing_of(t.red.gd) == frozenset()


def test_local_json_without_the_field_still_reads_and_is_written_without_empty_fields(tmp_path):
    t = new_table(tmp_path)
    gd = t.red.gd
    old = {"role": "red", "identity": "/k", "rules": "race", "email": "", "opponent_email": ""}
    gd.local_path.write_text(json.dumps(old))
    assert gd.read_local() == LocalConfig(role="red", identity="/k", rules="race")
    gd.write_local(LocalConfig(role="red", identity="/k", rules="race", standing=("a",)))
    assert json.loads(gd.local_path.read_text()) == {"role": "red", "identity": "/k", "rules": "race",
                                                      "standing": ["a"]}
