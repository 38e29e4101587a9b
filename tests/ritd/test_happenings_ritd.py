"""What happened in Rommel in the Desert, in words (issue 21 points 2 and 3;
``Rules.happenings``): each battle's fire as a table (RB 9.1-9.5), every step
lost and every elimination with its rule (RB 9.5, 10.5, 11.3, 12.7), Routs
and Withdrawals (RB 8.4, 10.3, 11.3), each said for each reader from what
that reader may know: its own units and the units revealed in battle by
name, the enemy's hidden blocks only counted; never a block token."""

from __future__ import annotations

import re

import msgspec
import pytest

from pbem import codec, rulesapi, session
from pbem.report import said
from pbem.rulesapi import ACTION, Step
from rules.ritd import RULES as RITD
from rules.ritd.actions import SupplyCheck
from rules.ritd.state import game_map
from tests.ritd.test_game_combat import battle  # noqa: F401 (fixture)
from tests.ritd.test_game_overrun import cut_off  # noqa: F401 (fixture)
from tests.ritd.test_game_rout import ex26  # noqa: F401 (fixture)
from tests.test_contract_games import happenings_by_reader

pytestmark = pytest.mark.usefixtures("registered_ritd")

TOKEN = re.compile(r"\b[AL][0-9a-f]{8}\b")
HASH = re.compile(r"\b[0-9a-f]{16,}\b")
READERS = ("axis", "allied", None)


def _said(table, reader):
    """Every happening of ``reader``'s replay (None: the public one) as
    (event, sentence, table rows)."""
    replay = session.load_public(table.axis.gd) if reader is None else table.side(reader).seat().replay
    return [(info.seq, s.sentence, s.rows) for info in replay.history for s in map(said, info.happenings)]


def _sentences(table, reader):
    return [sentence for _, sentence, _ in _said(table, reader)]


def _no_token_and_no_leak(table):
    """Nothing a person reads holds a block token or a hash, each reader's
    happenings equal those the audit's fold (every secret) says for it, and
    they are the same read from the blocks each step changed or from every
    block."""
    for reader in READERS:
        for _, sentence, rows in _said(table, reader):
            for text in (sentence, *(v for _, v in rows)):
                assert not TOKEN.search(text) and not HASH.search(text), (reader, text)
    known = {role: dict(table.side(role).seat().vault.known_values()) for role in ("axis", "allied")}
    events = table.axis.gd.read_events()
    for reader, own, from_audit in happenings_by_reader(RITD, events, known):
        for n, (mine, everything) in enumerate(zip(own, from_audit, strict=True)):
            assert mine == everything, (reader, n, mine, everything)
    changed, every = _said_from_changed_and_every_block(events, {k: v for side in known.values() for k, v in side.items()})
    assert changed == every


def test_rb_9_battle_fire_as_tables_with_losses_and_the_elimination(battle):  # noqa: F811
    battle.play("axis", "battles Sollum")
    battle.play("allied", "fire Sollum: 7/7 Tk at infantry")
    battle.play("axis", "losses Sollum: Brescia 2, Trento 2")
    battle.play("axis", "fire Sollum: Brescia at armor, Savona at armor, Trento at armor")
    battle.play("allied", "losses Sollum auto")
    # Units in battle fight face up (RB 8.5): every reader names them.
    expected = [
        "Defensive Fire by the Allies in Sollum: 4 hits on infantry. (RB 9.2-9.4)",
        "Trento loses 2 steps to Defensive Fire in Sollum, CV 4 to 2. (RB 9.5)",
        "Brescia loses 2 steps to Defensive Fire in Sollum, CV 4 to 2. (RB 9.5)",
        "Offensive Fire by the Axis in Sollum: 6 hits on armor. (RB 9.2-9.4)",
        "7/7 Tk is eliminated by Offensive Fire in Sollum. (RB 9.5)",
    ]
    for reader in READERS:
        assert sorted(_sentences(battle, reader)) == sorted(expected), reader
    fires = [rows for _, sentence, rows in _said(battle, None) if "Fire by" in sentence]
    assert dict(fires[0]) == {
        "Where": "Sollum", "Attackers": "7/7 Tk (armor)",
        "Defenders": "Savona (infantry), Brescia (infantry), Trento (infantry)",
        "Modifiers": "Allied Defensive Fire (RB 9.1)", "Odds": "armor on infantry DF (hits on 5-6)",
        "Dice": "; ".join(["7/7 Tk at infantry (DF) 6"] * 4), "Result": "4 hits on infantry",
        "Losses": "the Axis places the hits (RB 9.5)"}
    # RB 9.3, 9.5: once the armor is wiped out, Trento has no target left: its dice go unused.
    assert dict(fires[1]) == {
        "Where": "Sollum", "Attackers": "Brescia (infantry), Savona (infantry), Trento (infantry)",
        "Defenders": "7/7 Tk (armor)",
        "Modifiers": "Axis Offensive Fire (RB 9.1); a fire plan of 3 units, targets set before rolling (RB 9.2)",
        # The Fire Table line each shot used, once (not the dice labels again).
        "Odds": "infantry on armor SF (hits on 6)",
        "Dice": "; ".join(["Brescia at armor (SF) 6"] * 2 + ["Savona at armor (SF) 6"] * 4
                          + ["Trento (no target left) 6 (unused)"] * 2),
        "Result": "6 hits on armor; armor wiped out (RB 9.5)", "Losses": "the Allies place the hits (RB 9.5)"}
    _no_token_and_no_leak(battle)


def test_rb_10_5_11_3_pursuit_fire_and_routs_name_hidden_blocks_only_for_their_owner(ex26):  # noqa: F811
    ex26.play("allied", "refuse-battle Sollum slowest 3")
    ex26.play("axis", "pursue Sollum with Trento")
    ex26.play("allied", "pursuit losses auto", "refuse-battle Sollum -> Sidi Barrani")
    ex26.play("allied", "rout Sollum slowest 3")
    ex26.play("axis", "pursue Sollum with Brescia")
    ex26.play("allied", "pursuit losses auto", "rout Sollum -> Sidi Barrani")
    assert _sentences(ex26, "allied") == [
        "Pursuit Fire in Sollum on the units refusing battle: 2 hits. (RB 10.5)",
        "7/7 Tk loses 2 steps to Pursuit Fire after refusing battle in Sollum, CV 4 to 2. (RB 8.4, 10.5)",
        "Battle refused: 7/7 Tk from Sollum withdraws to Sidi Barrani. (RB 8.4, 10.3)",
        # Rout Attrition is secret from the Axis (a new identity version, RB 11.3)
        "7/4 Armd loses 2 steps to Rout Attrition in Sollum, CV 6 to 4. (RB 11.3)",
        "Pursuit Fire in Sollum on the Routing units: 2 hits. (RB 10.5)",
        "7/4 Armd loses 2 steps to Pursuit Fire in a Rout in Sollum, CV 4 to 2. (RB 11.3, 10.5)",
        "Routed: 7/4 Armd from Sollum withdraws to Sidi Barrani. (RB 11.3)",
    ]
    # The Axis never saw the Allied blocks' identities: counted, not named.
    public = [
        "Pursuit Fire in Sollum on the units refusing battle: 2 hits. (RB 10.5)",
        "Battle refused: 1 Allied block from Sollum withdraws to Sidi Barrani. (RB 8.4, 10.3)",
        "Pursuit Fire in Sollum on the Routing units: 2 hits. (RB 10.5)",
        "Routed: 1 Allied block from Sollum withdraws to Sidi Barrani. (RB 11.3)",
    ]
    assert _sentences(ex26, None) == public
    assert _sentences(ex26, "axis")[-2:] == public[-2:]
    # The pursuers are the Axis player's own: named for it, "an Axis block" for the others.
    rout_fire = {reader: dict(rows) for reader in READERS
                 for _, sentence, rows in _said(ex26, reader) if "Routing units" in sentence}
    assert rout_fire["axis"]["Attackers"] == "Brescia" and rout_fire["axis"]["Defenders"] == "1 Allied block"
    assert rout_fire["allied"]["Attackers"] == "an Axis block" and rout_fire["allied"]["Defenders"] == "7/4 Armd"
    assert rout_fire[None]["Dice"] == "an Axis block pursuing 6; an Axis block pursuing 6"
    assert rout_fire[None]["Result"] == "2 hits (a hit on each 4-6, RB 10.5)"
    _no_token_and_no_leak(ex26)


def test_rb_12_7_the_final_supply_check_eliminates_and_the_shielded_unit_routs(cut_off):  # noqa: F811
    table, _ = cut_off
    table.play("axis", "supply check", "offensive", "group Ft Capuzzo -> Sollum Brescia",
               "group Sidi Omar -> Sollum Trento", "end movement")
    table.play("allied", "accept-battle Sollum", "reveal units")
    table.play("axis", "reveal units", "battles Sollum")
    table.play("allied", session.legal_orders(table.allied.seat())[0])
    table.play("axis", session.legal_orders(table.axis.seat())[0])
    table.play("axis", "supply check")
    table.play("axis", "rout Sollum slowest 2")
    table.play("allied", "pursue Sollum with none")
    table.play("axis", "rout Sollum -> Ft Capuzzo")
    for reader in READERS:
        # RB 12.7: the Unsupplied marker is public; the unit under it only its owner's until revealed.
        marked = "Brescia" if reader == "axis" else "1 Axis block"
        assert _sentences(table, reader) == [
            f"At the Initial Supply Check, {marked} in Ft Capuzzo: marked Unsupplied. (RB 12.7)",
            "Defensive Fire by the Allies in Sollum: no hits. (RB 9.2-9.4)",
            "Offensive Fire by the Axis in Sollum: no hits. (RB 9.2-9.4)",
            "Brescia is eliminated at the Final Supply Check. (RB 12.7)",
            "Trento loses a step to Rout Attrition in Sollum, CV 4 to 3. (RB 11.3)",
            "Routed: Trento from Sollum withdraws to Ft Capuzzo. (RB 11.3)",
        ], reader
    _no_token_and_no_leak(table)


def test_rb_12_7_hidden_blocks_eliminated_are_counted_for_the_enemy_and_named_for_their_owner(battle):  # noqa: F811
    """Blocks never revealed leave the map at a Final Supply Check: the
    Allies read "N Axis blocks"; the Axis reads its units' names."""
    battle.play("axis", "battles Sollum")
    battle.play("allied", "fire Sollum: 7/7 Tk at infantry")
    battle.play("axis", "losses Sollum: Brescia 2, Trento 2")
    battle.play("axis", "fire Sollum: Brescia at armor, Savona at armor, Trento at armor")
    battle.play("allied", "losses Sollum auto")
    before = battle.axis.seat().replay.state
    assert before.turn.step == "final-supply"
    sollum = game_map().resolve("Sollum")
    hidden = [b for b in before.position.blocks_of("axis") if b.hex != sollum and b.token not in before.disclosed][:3]
    assert len(hidden) == 3
    after = msgspec.structs.replace(before, position=msgspec.structs.replace(
        before.position, blocks=tuple(b for b in before.position.blocks if b not in hidden)))
    step = Step(ACTION, action=SupplyCheck())
    names = " and ".join([", ".join(sorted(b.unit for b in hidden)[:2]), sorted(b.unit for b in hidden)[2]])
    assert [h.text for h in RITD.happenings(before, after, step, "axis")] == \
        [f"{names} are eliminated at the Final Supply Check"]
    for reader in ("allied", None):
        said_ = RITD.happenings(before, after, step, reader)
        assert [(h.text, h.rule, h.kind) for h in said_] == \
            [("3 Axis blocks are eliminated at the Final Supply Check", "RB 12.7", "elimination")]


def test_issue_21_the_email_body_and_pbem_show_say_what_was_lost(ex26):  # noqa: F811
    """The email body (``turn_summary``, from the public replay) prints the
    public happenings under each event; ``pbem show`` lists "lost this turn"
    from the reader's own replay (its own units named)."""
    from click.testing import CliRunner

    from pbem.cli import cli

    ex26.play("allied", "refuse-battle Sollum slowest 3")
    ex26.play("axis", "pursue Sollum with Trento")
    ex26.play("allied", "pursuit losses auto", "refuse-battle Sollum -> Sidi Barrani")
    ex26.play("allied", "rout Sollum slowest 3")
    ex26.play("axis", "pursue Sollum with Brescia")
    ex26.play("allied", "pursuit losses auto", "rout Sollum -> Sidi Barrani")
    public = session.load_public(ex26.axis.gd)
    body = session.turn_summary(public, [info.seq for info in public.history[1:]])
    said_lines = [line for line in body.splitlines() if line.startswith(("  * ", "      "))]
    assert "  * Routed: 1 Allied block from Sollum withdraws to Sidi Barrani. (RB 11.3)" in said_lines
    assert "      Dice       an Axis block pursuing 6; an Axis block pursuing 6" in said_lines
    assert not any(TOKEN.search(line) for line in said_lines)
    for role, lost in (("allied", ["7/7 Tk loses 2 steps to Pursuit Fire after refusing battle in Sollum, "
                                   "CV 4 to 2. (RB 8.4, 10.5)",
                                   "7/4 Armd loses 2 steps to Rout Attrition in Sollum, CV 6 to 4. (RB 11.3)",
                                   "7/4 Armd loses 2 steps to Pursuit Fire in a Rout in Sollum, CV 4 to 2. "
                                   "(RB 11.3, 10.5)",
                                   "Routed: 7/4 Armd from Sollum withdraws to Sidi Barrani. (RB 11.3)"]),
                       ("axis", ["Routed: 1 Allied block from Sollum withdraws to Sidi Barrani. (RB 11.3)"])):
        shown = CliRunner().invoke(cli, ["show", "-g", str(ex26.side(role).gd.path)], catch_exceptions=False)
        assert shown.exit_code == 0, shown.output
        out = shown.output.splitlines()
        start = out.index("lost this turn:")
        assert [line.strip() for line in out[start + 1:start + 1 + len(lost)]] == lost, role
        if role == "allied":
            continue  # the report summarises what came since the reader's own last orders
        # The Axis report's Player-Turn summary prints the same sentences (pbem.report).
        report = CliRunner().invoke(cli, ["report", "-g", str(ex26.side(role).gd.path), "--format", "text"],
                                    catch_exceptions=False)
        assert report.exit_code == 0, report.output
        assert f"  * {lost[-1]}" in report.output.splitlines()


def _final_supply_state(battle, owner):  # noqa: F811
    """The Demo's first Axis turn at its Final Supply Check (RB 3.47), after
    the battle of Sollum, as ``owner``'s replay knows it (its own units)."""
    battle.play("axis", "battles Sollum")
    battle.play("allied", "fire Sollum: 7/7 Tk at infantry")
    battle.play("axis", "losses Sollum: Brescia 2, Trento 2")
    battle.play("axis", "fire Sollum: Brescia at armor, Savona at armor, Trento at armor")
    battle.play("allied", "losses Sollum auto")
    state = battle.side(owner).seat().replay.state
    assert state.turn.step == "final-supply"
    return state


def _with(state, changed, phase=None):
    pos = state.position.replace_blocks(changed)
    return msgspec.structs.replace(state, position=pos, **({"phase": phase} if phase else {}))


def test_rb_12_7_12_1_supply_markers_and_disruption_said_with_hidden_units_counted(battle):  # noqa: F811
    before = _final_supply_state(battle, "axis")
    savona = next(b for b in before.position.blocks_of("axis") if b.unit == "Savona")
    hidden = sorted((b for b in before.position.blocks_of("axis") if b.token not in before.disclosed and b.unit),
                    key=lambda b: b.token)[:2]
    before = _with(before, [msgspec.structs.replace(b, unsupplied=True) for b in (savona, *hidden)])
    after = _with(before, [msgspec.structs.replace(savona, unsupplied=False)]
                  + [msgspec.structs.replace(b, unsupplied=True, disrupted=True) for b in hidden])
    step = Step(ACTION, action=SupplyCheck())
    wheres = " and ".join(sorted({game_map().name(b.hex) for b in hidden}))
    units = " and ".join(sorted(b.unit for b in hidden))
    assert [(h.text, h.rule) for h in RITD.happenings(before, after, step, "allied")] == [
        ("At the Final Supply Check, Savona in Sollum: Supplied again: Unsupplied marker removed", "RB 12.7"),
        (f"At the Final Supply Check, 2 Axis blocks in {wheres}: Disrupted: still Unsupplied at the Final "
         "Supply Check", "RB 12.1, 12.7")]
    assert RITD.happenings(before, after, step, "axis")[1].text == \
        f"At the Final Supply Check, {units} in {wheres}: Disrupted: still Unsupplied at the Final Supply Check"


def test_rb_16_2_the_buildup_supply_check_eliminates_unsupplied_units(battle):  # noqa: F811
    """The step that begins the Buildup makes its Supply Check (RB 16.2):
    blocks gone then are eliminated by it, said for the whole map."""
    before = _final_supply_state(battle, "allied")
    gone = sorted((b for b in before.position.blocks_of("allied") if b.token not in before.disclosed and b.unit),
                  key=lambda b: b.token)[:2]
    after = msgspec.structs.replace(_with(before, [], phase="buildup"), position=msgspec.structs.replace(
        before.position, blocks=tuple(b for b in before.position.blocks if b not in gone)))
    step = Step(ACTION, action=SupplyCheck())
    assert [(h.text, h.rule, h.kind) for h in RITD.happenings(before, after, step, "axis")] == [
        ("2 Allied blocks are eliminated at the Buildup Supply Check", "RB 16.2, 12.7", "elimination")]
    names = " and ".join(sorted(b.unit for b in gone))
    assert RITD.happenings(before, after, step, "allied")[0].text == \
        f"{names} are eliminated at the Buildup Supply Check"


def _retreat_with_pursuit_and_failed_march(tmp_path, monkeypatch):
    from tests.ritd.test_game_march import FACE, RETREAT, standoff_table

    table = standoff_table(tmp_path, monkeypatch)
    table.play("allied", *RETREAT)
    FACE["die"] = 6  # Trento's two dice hit twice: one elite step
    table.play("axis", "pursue Sollum with Trento")
    session.draft_replay(table.allied.seat())  # the Pursuit dice are rolled now
    FACE["die"] = 1  # then the Forced March fails
    table.play("allied", "pursuit losses auto")
    table.play("allied", "march losses auto")
    return table


def test_rb_6_4_10_5_a_retreat_with_pursuit_and_a_failed_forced_march(tmp_path, monkeypatch):
    """The 7/7 Tk Retreats from Sollum with a Forced March (RB 10.3); Trento's
    Pursuit Fire hits twice (RB 10.5), in secret (T-10); the Forced March
    fails and the unit at its last step is eliminated (RB 6.4)."""
    table = _retreat_with_pursuit_and_failed_march(tmp_path, monkeypatch)
    fights = ["Defensive Fire by the Allies in Sollum: no hits. (RB 9.2-9.4)",
              "Offensive Fire by the Axis in Sollum: no hits. (RB 9.2-9.4)",
              "Pursuit Fire in Sollum on the Retreating units: 2 hits. (RB 10.5)"]
    assert _sentences(table, "allied") == fights + [
        "Retreat: 7/7 Tk from Sollum withdraws to Sidi Barrani. (RB 10.3)",
        "7/7 Tk loses 2 steps to Pursuit Fire in a Retreat in Sollum, CV 4 to 2. (RB 10.5)",
        "7/7 Tk is eliminated by a failed Forced March. (RB 6.4)"]
    for reader in ("axis", None):  # the losses were secret: the Tk's new version is not disclosed
        assert _sentences(table, reader) == fights + [
            "Retreat: 1 Allied block from Sollum withdraws to Sidi Barrani. (RB 10.3)",
            "1 Allied block is eliminated by a failed Forced March. (RB 6.4)"], reader
    for reader in READERS:
        assert not any(TOKEN.search(sentence) for sentence in _sentences(table, reader))


def test_rb_8_5_t_10_a_secret_step_loss_stays_hidden_in_every_fold(tmp_path, monkeypatch):
    """RB 8.5, T-10 (issue 21): a block disclosed in battle that then loses
    steps in secret (a new identity version) is no longer disclosed in any
    fold: view(state, 'axis') folded with every secret (the audit's) names
    neither its unit nor its new CV, as the Axis replay's own view does not."""
    table = _retreat_with_pursuit_and_failed_march(tmp_path, monkeypatch)
    _no_token_and_no_leak(table)


def _public_blocks(state):
    """What both players see of every block: where it is, face up or not,
    Disrupted or not (RB 7.3, 8.5, 11.11)."""
    return {b.token: (b.hex, b.revealed, b.disrupted) for b in state.position.blocks}


def test_t_10_t_40_after_secret_pursuit_losses_both_replays_agree_which_blocks_are_face_up(tmp_path, monkeypatch):
    """RB 10.5, T-10, T-40: a Retreating block that survives secret Pursuit
    losses stands up again (its new CV is secret) in EVERY replay. Version 4
    turned it face down only in the opponent's replay, which forgets its face,
    while its owner's replay kept it face up: the two replays then disagreed
    on which units a later battle must reveal (RB 7.3)."""
    from tests.ritd.test_game_march import FACE, RETREAT, standoff_table
    from tests.test_contract_games import _fold

    table = standoff_table(tmp_path, monkeypatch)
    table.play("allied", *RETREAT)
    FACE["die"] = 6  # Trento's two dice hit twice: the 7/7 Tk loses 2 of its 4 steps
    table.play("axis", "pursue Sollum with Trento")
    session.draft_replay(table.allied.seat())
    FACE["die"] = 6  # and the Forced March succeeds: the Tk survives
    table.play("allied", "pursuit losses auto")
    events = table.axis.gd.read_events()
    known = {role: dict(table.side(role).seat().vault.known_values()) for role in ("axis", "allied")}
    public = _fold(RITD, events)
    folds = {role: _fold(RITD, events, role, known[role]) for role in known}
    survivors = [b for b in folds["allied"].state.position.blocks if b.unit == "7/7 Tk"]
    assert survivors and survivors[0].cv == 2
    for role, fold in folds.items():
        assert _public_blocks(fold.state) == _public_blocks(public.state), role
        assert RITD.pending(fold.state) == RITD.pending(public.state), role
    assert not next(b for b in public.state.position.blocks if b.token == survivors[0].token).revealed


def _said_from_changed_and_every_block(events, known):
    """``rules.ritd.view.glances`` (issue 20): for every step of the log and
    every reader, what the rules say happened (with the tokens of what was
    lost) when they read the blocks the step changed, and when they read
    every block; from the audit's fold (every secret: each reader's view
    shows its own units in full)."""
    from pbem import game
    from rules.ritd import checked, happenings, lost_tokens, view

    rules = rulesapi.load_version("ritd", codec.decode_body(codec.unwrap(events[0]).body).genesis.rules_version)
    steps = []
    hook = rules.happenings

    def record(before, after, step, role):
        steps.append((before, after, step))
        return hook(before, after, step, role)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(rules, "happenings", record)
        replay = game.Replay(rules, role=game.AUDIT, known=known)
        for stored in events:
            replay.apply_stored(stored)

    def said(every_block):
        checked.forget()
        with pytest.MonkeyPatch.context() as m:
            if every_block:
                glance = view.glances
                for module in (happenings, lost_tokens):
                    m.setattr(module, "glances", lambda b, a, r, every: glance(b, a, r, every=True))
            return [hook(before, after, step, reader) for before, after, step in steps for reader in READERS]
    return said(False), said(True)


@pytest.mark.random_cards  # the self-play was dealt by the real deck
def test_the_words_of_a_step_need_only_the_blocks_it_changed(ritd_demo_selfplay):
    """A whole game played by the bots (its deal, so what it says, differs
    from run to run); the scripted battles, Routs and Withdrawals above check
    the same through ``_no_token_and_no_leak``."""
    from pbem.identity import load_identity
    from pbem.store import GameDir
    from pbem.table import THROWAWAY_PASSPHRASE

    everything = {}
    for role in ("axis", "allied"):
        seat = session.load_seat(GameDir(ritd_demo_selfplay / role),
                                 load_identity(ritd_demo_selfplay / f"{role}.key", THROWAWAY_PASSPHRASE))
        everything.update(seat.vault.known_values())
    changed, every = _said_from_changed_and_every_block(GameDir(ritd_demo_selfplay / "axis").read_events(),
                                                        everything)
    assert sum(map(len, every)) >= 3  # the game said something (an elimination, a removal, a supply marker)
    assert changed == every
