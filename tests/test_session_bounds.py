"""Refusals and boundaries of pbem/session.py that no other test pinned (issue
29): creating and joining (roles, scenarios, options, the host's
fingerprint), whose seat a key opens, out-of-turn sends, exporting a turn
range, undo counts, a vault that lost a secret, evidence files, and the
public texts built from the log (summary, history, decisions, dice)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem import session
from pbem.deck import DECK
from pbem.errors import BadFile, IllegalAction, NotFound, UsageProblem, VerifyError
from pbem.game import Roll
from pbem.identity import Identity
from pbem.rulesapi import DICE, Decision
from pbem.store import GameDir
from pbem.vault import VaultData
from tests.conftest import make_side

# --- creating and joining ---------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    ({"role": "green"}, "role must be one of red, blue"),
    ({"scenario": "everest"}, "unknown scenario 'everest'"),
    ({"options": ["short-dodge", "jetpack"]}, r"unknown option 'jetpack' \(offered: short-dodge\)"),
])
def test_a_new_game_refuses_unknown_roles_scenarios_and_options(tmp_path, kwargs, message):
    red, blue = make_side(tmp_path, "red"), make_side(tmp_path, "blue")
    args = {"role": "red", "scenario": "sprint", "options": []} | kwargs
    with pytest.raises(UsageProblem, match=message):
        session.new_game(red.gd.path, "race", args["scenario"], args["role"], red.identity, red.key_path,
                         blue.identity.public_text, options=args["options"])
    assert not red.gd.path.exists()


def test_a_new_game_refuses_the_hosts_own_key_as_the_opponent(tmp_path):
    red = make_side(tmp_path, "red")
    with pytest.raises(UsageProblem, match="the opponent's key is your own key"):
        session.new_game(red.gd.path, "race", "sprint", "red", red.identity, red.key_path,
                         "  " + red.identity.public_text + "\n")


def test_a_new_game_with_an_offered_option_records_it(tmp_path):
    red, blue = make_side(tmp_path, "red"), make_side(tmp_path, "blue")
    sent = session.new_game(red.gd.path, "race", "sprint", "blue", red.identity, red.key_path,
                            blue.identity.public_text, options=["short-dodge"], title="Cup")
    genesis, _ = session.genesis_of(red.gd)
    assert genesis.options == ["short-dodge"] and genesis.title == "Cup" and genesis.scenario == "sprint"
    assert [(p.role, p.key) for p in genesis.players] == [("blue", red.identity.public_text),
                                                          ("red", blue.identity.public_text)]
    assert sent.seqs == [0] and Path(sent.turn_file).exists()


def _invitation(tmp_path):
    red, blue = make_side(tmp_path, "red"), make_side(tmp_path, "blue")
    sent = session.new_game(red.gd.path, "race", "sprint", "red", red.identity, red.key_path,
                            blue.identity.public_text, orders=["setup speed 2"])
    return red, blue, Path(sent.turn_file).read_bytes()


def test_joining_checks_the_hosts_fingerprint_when_given(tmp_path):
    red, blue, invitation = _invitation(tmp_path)
    with pytest.raises(VerifyError, match="someone may be impersonating"):
        session.join_game(blue.gd.path, invitation, blue.identity, blue.key_path,
                          host_fingerprint=Identity.generate().fingerprint)
    assert not blue.gd.path.exists()
    sent, host = session.join_game(blue.gd.path, invitation, blue.identity, blue.key_path,
                                   host_fingerprint=" " + red.identity.fingerprint + "\n",
                                   orders=["setup speed 3"])
    assert host.keys["red"] and sent.seqs == [1]


def test_joining_refuses_a_stranger_and_a_turn_file_without_genesis(tmp_path):
    red, blue, invitation = _invitation(tmp_path)
    stranger = Identity.generate()
    with pytest.raises(UsageProblem, match="is not a player of this game"):
        session.join_game(tmp_path / "x", invitation, stranger, tmp_path / "x.key")
    session.join_game(blue.gd.path, invitation, blue.identity, blue.key_path, orders=["setup speed 3"])
    later = Path(session.export_turn(blue.gd, 1, tmp_path / "later.pbem").turn_file).read_bytes()
    with pytest.raises(BadFile, match="not an invitation"):
        session.join_game(tmp_path / "y", later, blue.identity, blue.key_path)


def test_a_seat_opens_only_with_its_players_key(table):
    with pytest.raises(UsageProblem, match="is not the red player of this game"):
        session.load_seat(table.red.gd, table.blue.identity)
    local = table.red.gd.local_path
    assert '"role": "red"' in local.read_text()
    local.write_text(local.read_text().replace('"role": "red"', '"role": "green"'))
    with pytest.raises(BadFile, match="names role 'green', which is not in this game"):
        session.load_seat(table.red.gd, table.red.identity)


# --- sending ----------------------------------------------------------------------------

def test_sending_out_of_turn_is_refused_naming_the_decision(table):
    from pbem import codec
    from tests.race import rules as race

    blue = table.blue.seat()
    assert session.send(blue).resent  # nothing new: its unanswered join is written again
    # A draft made while it was blue's turn cannot be sent on red's.
    order = session.DraftOrder(text="pass", action=codec.raw(race.Pass()))
    session.write_draft(blue.gd, "blue", session.Draft(base=blue.replay.seq, orders=[order]))
    with pytest.raises(IllegalAction, match=r"not your turn to send: the next decision is red's \(move\)"):
        session.send(table.blue.seat())


def test_orders_composed_before_the_log_moved_on_are_refused(table):
    seat = table.red.seat()
    session.add_orders(seat, ["advance 1"])
    draft = session.read_draft(seat.gd, "red", seat.replay.seq)
    session.write_draft(seat.gd, "red", session.Draft(base=draft.base - 1, orders=draft.orders))
    with pytest.raises(IllegalAction, match="your draft was composed at event 0 but the log is now at 1"):
        session.send(table.red.seat())
    with pytest.raises(IllegalAction, match="composed at event 0"):
        session.add_orders(table.red.seat(), ["pass"])


def test_a_damaged_draft_is_refused_with_how_to_recover(table):
    seat = table.red.seat()
    seat.gd.drafts_dir.mkdir(parents=True, exist_ok=True)
    (seat.gd.drafts_dir / "red.json").write_bytes(b"{not json")
    with pytest.raises(BadFile, match="delete it to start the draft again"):
        session.read_draft(seat.gd, "red", seat.replay.seq)


@pytest.mark.parametrize("count, kept", [(None, 0), (0, 3), (1, 2), (2, 1), (3, 0), (9, 0)])
def test_undo_removes_the_last_orders(table, count, kept):
    seat = table.red.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    draft = session.read_draft(seat.gd, "red", seat.replay.seq)
    three = draft.orders + [draft.orders[-1]]
    session.write_draft(seat.gd, "red", session.Draft(base=draft.base, orders=three))
    removed = session.undo(seat, count)
    left = session.read_draft(seat.gd, "red", seat.replay.seq)
    assert len(left.orders) == kept and len(removed) == 3 - kept
    assert left.orders == three[:kept] and removed == three[kept:]
    assert (seat.gd.drafts_dir / "red.json").exists() == (kept > 0)


def test_export_turn_bounds(table):
    gd = table.red.gd
    last = session.load_public(gd).seq
    for since in (-1, last + 1):
        with pytest.raises(UsageProblem, match=f"--since must be between 0 and {last}"):
            session.export_turn(gd, since, gd.path / "x.pbem")
    assert session.export_turn(gd, 0, gd.path / "all.pbem").seqs == list(range(0, last + 1))
    assert session.export_turn(gd, last, gd.path / "one.pbem").seqs == [last]


def test_a_vault_that_lost_the_entropy_secret_cannot_sign(table):
    seat = table.red.seat()
    seat.vault = VaultData(game=seat.vault.game, role="red", entropy={}, secrets=seat.vault.secrets)
    session.add_orders(table.red.seat(), ["advance 1", "pass"])
    with pytest.raises(NotFound, match="lost the entropy secret of event 0"):
        session._body(seat.replay, "red", seat.vault, [], x_next=bytes(32))


def test_a_reveal_or_leaf_not_in_the_vault_is_refused(table):
    seat = table.red.seat()
    with pytest.raises(NotFound, match="cannot open 'red.nothing': it is not in your vault"):
        session._body(seat.replay, "red", seat.vault, [], x_next=bytes(32), extra_reveals=["red.nothing"])
    order = session.DraftOrder(text="x", action=b"{}", leaves=[("red.speed", "1")])
    with pytest.raises(NotFound, match="it is not a set in your vault"):
        session._body(seat.replay, "red", seat.vault, [order], x_next=bytes(32))


def test_a_leaf_key_outside_the_set_is_refused(tmp_path):
    from tests.conftest import new_table
    table = new_table(tmp_path, scenario="standard")
    table.play("red", "advance 1", "pass")
    table.play("blue", "traps 3 5", "advance 1", "pass")
    seat = table.blue.seat()
    order = session.DraftOrder(text="x", action=b"{}", leaves=[("blue.traps", "99")])
    with pytest.raises(NotFound, match="the set has no such key"):
        session._body(seat.replay, "blue", seat.vault, [order], x_next=bytes(32))
    good = session.DraftOrder(text="x", action=b"{}", leaves=[("blue.traps", "3"), ("blue.traps", "3")])
    body = session._body(seat.replay, "blue", seat.vault, [good], x_next=bytes(32))
    assert [(leaf.key, leaf.value) for leaf in body.leaves] == [("3", "31")]  # once, though asked twice


# --- what the log says, in words ---------------------------------------------------------------

def test_pending_text_for_every_kind_of_decision():
    assert session.pending_text(None) == "nobody (game over)"
    assert session.pending_text(Decision(role="red", kind=DICE, dice=(6, 6))) == "red (entropy for 2 dice)"
    assert session.pending_text(Decision(role="blue", kind=DECK)) == \
        "blue (the shared deck: shuffle or keys, sent automatically)"
    assert session.pending_text(Decision(role="red", kind="act")) == "red (act)"
    assert session.pending_text(Decision(role="red", kind="act", prompt="move")) == "red (act: move)"


def test_dice_text_hides_secret_dice_and_lets_the_rules_word_them():
    assert session.dice_text((3, None, 6)) == "[3, ?, 6]"
    assert session.dice_text(()) == "[]"

    class Worded:
        @staticmethod
        def describe_dice(sides, values):
            return f"{len(sides)} cards" if sides[0] == 42 else ""

    assert session.dice_text((5,), (42,), Worded) == "1 cards"
    assert session.dice_text((5,), (6,), Worded) == "[5]"  # the rules have no words for it
    assert session.dice_text((5,), (), Worded) == "[5]"


def test_the_turn_summary_and_history_tell_the_public_story(table):
    table.play("red", "dash", note="off we go")
    replay = session.load_public(table.red.gd)
    dash, answer = replay.seq - 1, replay.seq
    text = session.turn_summary(replay, [dash, answer])
    assert text.startswith(f"Race (pbem test game): game {replay.game_hex[:16]} (scenario sprint)\n\n")
    assert f"Event {dash} by red: " in text and "  note: off we go\n" in text
    assert f"Event {answer} by blue: no actions\n" in text
    roll = replay.history[answer].rolls
    assert f"  dice asked in event {dash} by red: [{roll.values[0]}]\n" in text
    assert "opens" not in text and "Game over" not in text
    assert "\nNext decision: red (act" in text and text.endswith("or your mailbox).\n")
    items = session.history_json(replay.history)
    assert [i["seq"] for i in items] == list(range(replay.seq + 1))
    assert items[answer]["rolls"] == {"asked_in": dash, "by": "red", "sides": [6], "values": list(roll.values),
                                      "purposes": [], "results": []}
    assert "rolls" not in items[dash] and items[dash]["note"] == "off we go"
    assert items[dash]["hash"] == replay.history[dash].hash.hex() and items[0]["commits"] == 1
    table.play("red", "pass")
    table.play("blue", "advance 1", "pass")
    table.play("red", "reveal", "advance 1", "pass")
    replay = session.load_public(table.red.gd)
    assert "  opens 1 commitment(s)\n" in session.turn_summary(replay, [replay.seq])
    assert session.history_json(replay.history)[-1]["reveals"] == ["red.speed"]


def test_the_summary_of_a_finished_game_says_who_won(table):
    steps = {"red": "advance 2", "blue": "advance 3"}
    role = "red"
    while table.red.seat().replay.outcome() is None:
        pos = table.side(role).seat().replay.state.runners[role].pos
        table.play(role, steps[role], *(["pass"] if pos + int(steps[role][-1]) < 5 else []))
        role = "blue" if role == "red" else "red"
    replay = session.load_public(table.red.gd)
    text = session.turn_summary(replay, [replay.seq])
    assert "Next decision: nobody (game over)\nGame over: " in text
    assert replay.outcome().summary in text
    # After the end every send opens all the sender's commitments, asked or not.
    loser = "red" if replay.outcome().winner == "blue" else "blue"
    assert loser in session.audit(table.red.gd.read_events(), table.red.seat().rules).unopened
    table.play(loser)
    assert loser not in session.audit(table.red.gd.read_events(), table.red.seat().rules).unopened


def test_an_order_out_of_turn_names_whose_decision_it_is(table):
    with pytest.raises(IllegalAction) as err:
        session.add_orders(table.blue.seat(), ["advance 1"])
    # Issue 21 point 7: the advice is to wait for red's turn file (sending was never possible).
    assert "'advance 1': it is not your decision now: red decides (move); wait for their turn file and " \
        "receive it" in str(err.value)


def test_a_stopped_game_receives_nothing(table):
    from pbem.errors import Equivocation
    from tests.test_store import test_equivocation_is_detected_kept_as_evidence_and_stops_the_game as equivocate
    equivocate(table)
    data = Path(session.export_turn(table.red.gd, 0, table.red.gd.path / "all.pbem").turn_file).read_bytes()
    with pytest.raises(Equivocation, match="stopped"):
        session.receive(table.blue.seat(), [("t", data)])


def test_a_lost_automatic_answer_is_written_again_as_automatic(table, monkeypatch):
    """Killed after storing the automatic answer (event 3), before its turn file."""
    seat = table.red.seat()
    session.add_orders(seat, ["dash"])
    red_turn = Path(session.send(seat).turn_file).read_bytes()

    class Killed(BaseException):
        pass

    def killed(*_args):
        raise Killed

    with monkeypatch.context() as m:
        m.setattr(session, "_write_turn", killed)
        with pytest.raises(Killed):
            session.receive(table.blue.seat(), [("red", red_turn)])
    # Asked not to reply, a retry writes nothing, not even the lost answer.
    quiet = session.receive(table.blue.seat(), [("red", red_turn)], auto_reply=False)
    assert quiet.auto_reply is None and not list(table.blue.gd.outbox_dir.glob("*-000003.pbem"))
    result = session.receive(table.blue.seat(), [("red", red_turn)])
    assert result.duplicates == [2] and result.auto_reply is not None and result.auto_reply.auto
    assert result.auto_reply.seqs == [3] and Path(result.auto_reply.turn_file).exists()
    # Written once: a third receive finds the turn file and writes nothing.
    assert session.receive(table.blue.seat(), [("red", red_turn)]).auto_reply is None


def test_email_for_needs_both_addresses_and_names_the_host(table, monkeypatch):
    seat = table.blue.seat()
    session.add_orders(table.red.seat(), ["advance 1", "pass"])
    sent = session.send(table.red.seat())
    with pytest.raises(UsageProblem, match="email needs --from and --to"):
        session.email_for(table.red.gd, sent)
    captured = {}
    import pbem.mail
    monkeypatch.setattr(pbem.mail, "build_message", lambda **kw: captured.update(kw) or b"msg")
    assert session.email_for(table.red.gd, sent, sender="r@x", recipient="b@x") == b"msg"
    assert captured["author"] == "red" and captured["host_seq0_sender"] == "r@x"
    assert captured["reply_to_seq"] == 1 and captured["seqs"] == sent.seqs
    session.receive(seat, [("t", Path(sent.turn_file).read_bytes())])
    session.add_orders(table.blue.seat(), ["advance 1", "pass"])
    sent_b = session.send(table.blue.seat())
    session.email_for(table.blue.gd, sent_b, sender="b@x", recipient="r@x")
    assert captured["author"] == "blue" and captured["host_seq0_sender"] == "r@x"
    assert captured["reply_to_seq"] == sent.seqs[-1]


def test_evidence_that_does_not_verify_is_reported_as_such(table):
    from tests.test_store import test_equivocation_is_detected_kept_as_evidence_and_stops_the_game as equivocate
    equivocate(table)
    gd = table.blue.gd
    replay = session.load_public(gd)
    a = sorted(gd.evidence_dir.glob("equivocation-*-a.json"))[0]
    b = a.with_name(a.name[:-len("-a.json")] + "-b.json")
    assert b.exists()
    b.write_bytes(a.read_bytes())  # both halves the same event: no equivocation
    assert session.check_evidence(gd, replay) == ["red signed two different events for seq 2 "
                                                  "(evidence does NOT verify: not two different events of "
                                                  "one author at one seq)"]
    b.write_bytes(b"damaged")
    assert session.check_evidence(gd, replay) == [f"{a.name[:-len('-a.json')]}: evidence file damaged"]


def test_no_evidence_directory_means_no_evidence(tmp_path):
    gd = GameDir(tmp_path / "g")
    assert session.check_evidence(gd, None) == []


def test_an_unknown_roll_value_is_kept_as_none_in_the_history():
    info = session.EventInfo(3, "blue", bytes(32), (), 0, (), "", Roll(2, 3, "red", (6, 6), (None, 4)))
    [item] = session.history_json([info])
    assert item["rolls"]["values"] == [None, 4] and item["hash"] == "00" * 32


def test_a_seat_whose_genesis_signature_is_forged_does_not_open(table):
    from pbem import codec
    path = table.red.gd.event_path(0)
    u = codec.unwrap(path.read_bytes())
    path.write_bytes(codec.wrap(u.body, bytes(64)))
    with pytest.raises(VerifyError, match="genesis signature is not valid for the host's key"):
        session.load_seat(table.red.gd, table.red.identity)


def test_a_fresh_send_is_not_marked_as_resent_nor_automatic(table):
    seat = table.red.seat()
    session.add_orders(seat, ["advance 1", "pass"])
    sent = session.send(seat)
    assert sent.resent is False and sent.auto is False and sent.seqs == [2]


def test_legal_orders_come_from_the_rules_own_hook_when_they_have_one(table, monkeypatch):
    from tests.race import rules as race
    assert session.legal_orders(table.blue.seat()) == []  # not blue's decision
    listed = session.legal_orders(table.red.seat())
    assert "advance 1" in listed and "dash" in listed
    monkeypatch.setattr(race.RaceRules, "legal_orders", lambda self, state, role, ctx: ["hop", "skip"])
    assert session.legal_orders(table.red.seat()) == ["hop", "skip"]


def test_a_deck_audit_failure_is_an_illegal_action_naming_the_event(table, monkeypatch):
    """The race game deals no cards: a replay with a deck round whose audit fails stands in."""
    from pbem import game
    from pbem.deck import DeckError

    class FailingDeck(game.Replay):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.ledger.rounds["r1"] = []
            self.ledger.where[("r1", 2)] = (7, "blue")

        def deck_audit(self):
            raise DeckError("the round holds one card twice", "r1", 2, "blue")

    from pbem import logcheck

    monkeypatch.setattr(session, "Replay", FailingDeck)
    monkeypatch.setattr(logcheck, "Replay", FailingDeck)  # the audit's replay is built there (issue 20)
    with pytest.raises(IllegalAction, match=r"the shared deck: event 7 by blue: deck round 'r1' step 2 "
                                            r"\(signed by blue\): the round holds one card twice"):
        session.audit(table.red.gd.read_events(), table.red.seat().rules)
