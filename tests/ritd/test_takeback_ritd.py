"""An agreed takeback in Rommel in the Desert (docs/protocol.md decision 28):
the Axis takes back its first Movement Phase, whose secret turn option (RB
3.4) was committed under the label ``turn1.option``, and plays it again
with the option committed under the same label. Both sides' replays (with
and without the cache), verify and audit agree, and the game after the
grant is the game before the span."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from pbem import codec, session, takeback
from pbem.game import Replay
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied

pytestmark = pytest.mark.usefixtures("registered_ritd")

FIRST = ("supply check", "basic", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento", "end movement")
SECOND = ("supply check", "basic", "end movement")


def _labels(gd, seq: int) -> dict[str, str]:
    body = codec.decode_body(codec.unwrap(gd.read_event(seq)).body)
    return {c.label: c.digest for c in body.commits}


def test_ritd_a_movement_phase_taken_back_and_played_again_under_the_same_labels(tmp_path):
    demo = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    before = {role: demo.side(role).seat().replay for role in ("axis", "allied")}
    demo.play("axis", *FIRST)
    asked = takeback.ask(demo.axis.seat())
    span = asked.request.first
    granted = takeback.grant(demo.allied.seat(), asked.path.read_bytes(), "ask")
    demo.deliver(demo.axis, Path(granted.turn_file).read_bytes())
    for role in ("axis", "allied"):  # the game is what it was before the span, from each side
        now = demo.side(role).seat().replay
        assert now.state == before[role].state and now.pending() == before[role].pending()
        assert now.commitments == before[role].commitments and now.ledger.data() == before[role].ledger.data()
    demo.play("axis", *SECOND)
    redo = demo.axis.gd.event_count() - 1
    reused = {k for k, v in _labels(demo.axis.gd, span).items() if _labels(demo.axis.gd, redo).get(k, v) != v}
    assert "turn1.option" in reused  # the same label, committed again with a new salt
    # The cache, a whole replay from the Axis side, verify and audit all agree.
    axis = demo.axis.seat().replay
    (demo.axis.gd.path / "cache" / "axis.bin").unlink()
    whole = demo.axis.seat().replay
    assert (whole.state, whole.head, whole.commitments) == (axis.state, axis.head, axis.commitments)
    events = demo.axis.gd.read_events()
    public = session.load_public(demo.axis.gd, describe=False)
    audit = session.audit(events, axis.rules)
    assert public.head == audit.replay.head == axis.head
    assert "turn1.option" not in audit.unopened.get("allied", [])
    fresh = Replay(axis.rules)
    for stored in events:
        fresh.apply_stored(stored)
    assert fresh.state == public.state


def test_ritd_an_event_that_works_the_shared_deck_cannot_be_taken_back(tmp_path):
    """The Axis keeps its hand in the event that deals the Allied cards (shuffle step 4,
    decision 18): a card dealt stays dealt, so asking it back is refused, and a
    request signed by hand is refused by the Allied grant, its directory unchanged."""
    from click.testing import CliRunner

    from pbem.cli import cli
    from pbem.errors import IllegalAction
    from tests.test_foreign_game import tree_hash

    demo = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied(), keep_hands=False)
    if demo.axis.seat().replay.pending().role == "axis":
        demo.play("axis", "keep hand")
    axis = demo.axis.seat()
    last = axis.replay.history[-1]
    assert last.author == "axis" and any(a.startswith("deck: ") for a in last.actions)
    with pytest.raises(IllegalAction, match=rf"events {last.seq}\.\.{last.seq} work the shared deck"):
        takeback.ask(axis)
    request = codec.TakebackRequest(game=axis.replay.game_hex, role="axis", first=last.seq, head_seq=last.seq,
                                    head=axis.replay.head.hex())
    signed = codec.Takeback(request, axis.identity.sign(codec.takeback_signing_input(request)).hex())
    path = tmp_path / "request.json"
    path.write_bytes(msgspec.json.encode(takeback.RequestFile(takeback.REQUEST_TYPE, 1, signed)))
    before = tree_hash(demo.allied.gd.path)
    out = CliRunner().invoke(cli, ["takeback", "grant", str(path), "-g", str(demo.allied.gd.path), "-i",
                                   str(tmp_path / "allied.key")])
    assert out.exit_code == 5, out.output
    assert f"event {last.seq + 1} by allied: grants axis's takeback" in out.output and "shared deck" in out.output
    assert tree_hash(demo.allied.gd.path) == before
