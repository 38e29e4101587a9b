"""Checks that issue 20 computes elsewhere or once (pbem/logcheck.py, docs/deck.md
"Checks computed once", docs/protocol.md "What verify and audit compute").

- ``pbem verify`` and ``pbem audit`` check signatures and the shuffle points
  of a long log in a second process and read points unchecked in the replay;
  whatever the log, they give the result and the first error of the plain,
  one-core replay (pbem.logcheck._plain): same exception, same message, same
  signer named.
- The deck audit reads points without ``is_valid_point`` and relies on the
  multiplications (libsodium's noclamp refuses a point outside the
  prime-order subgroup; its Ristretto255 multiplication refuses what is not a
  canonical encoding): a bad point in any step of a round still fails it.
- Every case runs in both groups of play: an Ed25519 game (format versions
  1-6) and a Ristretto255 game (versions 7 and 8, every new game: decision 29).
- A bad point is still refused at receipt (``pbem receive``), naming its signer.
- ``pbem verify`` leaves to receive and audit the points of a shuffle step that
  the opponent's next step of the round took as its input (``consented_only``);
  the audit still refuses them, naming the step and its signer.
- The second process's work ahead of the replay (card multiplications,
  whole-set openings) gives the values the replay would compute.
"""

from __future__ import annotations

import hashlib
import os
import shutil

import msgspec
import pytest
from click.testing import CliRunner
from nacl.bindings import crypto_core_ed25519_add, crypto_core_ed25519_from_uniform

from pbem import codec, commit, logcheck, session
from pbem import deck as D
from pbem.cli import cli
from pbem.errors import PbemError
from pbem.game import audit_knowledge
from pbem.identity import load_identity
from pbem.store import GameDir
from pbem.table import THROWAWAY_PASSPHRASE

#: A point of order 8 (canonical, on the curve, not in the prime-order subgroup).
TORSION = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")


def _mixed(seed: bytes = b"\x07" * 32) -> str:
    """A canonical curve point with a small-order component: outside the prime-order subgroup."""
    return crypto_core_ed25519_add(crypto_core_ed25519_from_uniform(seed), TORSION).hex()


def _odd(text: str) -> str:
    """A Ristretto255 encoding made odd ("negative": RFC 9496 refuses it)."""
    raw = bytearray(bytes.fromhex(text))
    raw[0] |= 1
    return raw.hex()


#: The groups of play by name, and in each the points a receiver must refuse.
GROUPS = {"ed25519": D.ED25519, "ristretto255": D.RISTRETTO255}
BAD = {
    "ed25519": {
        "small-order component": _mixed(),
        "order 8": TORSION.hex(),
        "identity": (1).to_bytes(32, "little").hex(),
        "not canonical": (2**255 - 19 + 1).to_bytes(32, "little").hex(),
    },
    "ristretto255": {
        "a negative (odd) encoding": _odd(D.elem_hex(D.RISTRETTO255, D.encode_card(D.RISTRETTO255, bytes(32), "x"))),
        "identity": bytes(32).hex(),
        "not canonical": (2**255 - 19 + 1).to_bytes(32, "little").hex(),
        "no point (no square root)": (2).to_bytes(32, "little").hex(),
    },
}
#: The bad point a cheater would use first.
FIRST_BAD = {"ed25519": "small-order component", "ristretto255": "a negative (odd) encoding"}


@pytest.fixture(scope="module", params=sorted(GROUPS))
def demo(request):
    """A RitD Demo played to its end by the random bots (above
    logcheck.MIN_EVENTS, so verify and audit use the second process), in each
    group of play: (directory, events, rules, group name)."""
    out = request.getfixturevalue("ritd_demo_selfplay" if request.param == "ristretto255"
                                  else "ritd_demo_selfplay_ed25519")
    events = GameDir(out / "axis").read_events()
    assert len(events) >= logcheck.MIN_EVENTS
    r = session.load_public(GameDir(out / "axis"))
    assert r.deck_group is GROUPS[request.param]
    return out, events, session.rules_for(GameDir(out / "axis")), request.param


def _identity(out, role):
    gd = GameDir(out / role)
    return load_identity(__import__("pathlib").Path(gd.read_local().identity), THROWAWAY_PASSPHRASE)


def _deck_actions(body):
    """(action index, deck action) of every deck action of an event's body."""
    found = []
    for k, raw in enumerate(body.actions):
        try:
            found.append((k, msgspec.json.decode(bytes(raw), type=D.DeckAction)))
        except msgspec.DecodeError:
            continue
    return found


def _deck_events(events):
    """(position, body, action index, DeckStep) of every shuffle step in the log."""
    found = []
    for i, stored in enumerate(events):
        body = codec.decode_body(codec.unwrap(stored).body)
        found += [(i, body, k, action) for k, action in _deck_actions(body) if isinstance(action, D.DeckStep)]
    return found


def _with_point(out, events, position, body, index, action, card, text):
    """The log up to event ``position``, which now carries ``text`` as card ``card``
    of its shuffle step, signed again by its author."""
    cards = list(action.step.cards)
    cards[card] = text
    step = msgspec.structs.replace(action.step, cards=cards)
    raw = msgspec.Raw(codec.canonical(msgspec.structs.replace(action, step=step)))
    actions = list(body.actions)
    actions[index] = raw
    forged = session._sign(_identity(out, body.author), msgspec.structs.replace(body, actions=actions))
    return list(events[:position]) + [forged]


def _outcome(fn, *args):
    """(error type, message) or ('ok', a summary of the result)."""
    try:
        result = fn(*args)
    except PbemError as exc:
        return type(exc).__name__, str(exc)
    if isinstance(result, logcheck.Checked):
        return "ok", (result.replay.head, result.unopened, msgspec.to_builtins(result.deck))
    return "ok", (result.head, result.seq, msgspec.to_builtins(result.state))


def _both(monkeypatch, fn, *args):
    """The outcome of the plain replay, then of the two-core path (which must be taken)."""
    monkeypatch.setenv(logcheck.ENV, "0")
    plain = _outcome(fn, *args)
    monkeypatch.setenv(logcheck.ENV, "1")
    monkeypatch.setattr(logcheck, "MIN_EVENTS", 2)
    fast = []
    original = logcheck._fast

    def spy(*a, **k):
        fast.append(1)
        return original(*a, **k)

    monkeypatch.setattr(logcheck, "_fast", spy)
    two = _outcome(fn, *args)
    assert fast, "the two-core path was not taken"
    return plain, two


def test_an_honest_game_verifies_and_audits_the_same_on_two_cores(demo, monkeypatch):
    out, events, rules, name = demo
    plain, two = _both(monkeypatch, logcheck.verify, rules, events)
    assert plain == two and plain[0] == "ok"
    plain, two = _both(monkeypatch, logcheck.audit, rules, events, "*")
    assert plain == two and plain[0] == "ok"
    assert plain[1][2], "the demo's deck was audited"


def test_a_forged_signature_is_named_as_on_one_core(demo, monkeypatch):
    out, events, rules, name = demo
    for position in (1, len(events) // 2, len(events) - 1):
        u = codec.unwrap(events[position])
        bad = bytearray(u.sig)
        bad[5] ^= 1
        forged = list(events)
        forged[position] = codec.wrap(u.body, bytes(bad))
        for fn, args in ((logcheck.verify, (rules, forged)), (logcheck.audit, (rules, forged, "*"))):
            plain, two = _both(monkeypatch, fn, *args)
            assert plain == two
            assert plain[0] == "VerifyError" and f"event {position}: signature is not valid" in plain[1]


def test_a_wrapper_not_in_canonical_form_is_named_as_on_one_core(demo, monkeypatch):
    """The replay reads an event's wrapper unchecked only when the second process
    unwrapped those bytes and found the signature valid; any other is unwrapped
    and refused as on one core."""
    out, events, rules, name = demo
    for position in (1, len(events) // 2, len(events) - 1):
        stored = events[position]
        # A space, or the same signature in capitals: neither is the canonical wrapper.
        for bent_event, problem in ((stored.replace(b',"sig":"', b', "sig":"'), "event wrapper is not in canonical form"),
                                    (stored[:-130] + stored[-130:].upper(), "not a pbem event: Expected `str` matching")):
            bent = list(events)
            bent[position] = bent_event
            for fn, args in ((logcheck.verify, (rules, bent)), (logcheck.audit, (rules, bent, "*"))):
                plain, two = _both(monkeypatch, fn, *args)
                assert plain == two
                assert plain[0] == "BadFile" and f"event {position}: {problem}" in plain[1]


def test_the_replay_unwraps_only_what_the_second_process_did_not(demo, monkeypatch):
    out, events, rules, name = demo
    monkeypatch.setenv(logcheck.ENV, "1")
    monkeypatch.setattr(logcheck, "MIN_EVENTS", 2)
    unwrapped, vouched = [], []
    original, original_vouched = codec.unwrap, codec.unwrap_vouched
    monkeypatch.setattr(codec, "unwrap", lambda stored: unwrapped.append(stored) or original(stored))
    monkeypatch.setattr(codec, "unwrap_vouched", lambda stored: vouched.append(stored) or original_vouched(stored))
    logcheck.verify(rules, events)
    assert unwrapped == [events[0]], "only the genesis, applied before the second process starts"
    assert vouched == list(events[1:])


@pytest.mark.parametrize("which", range(4))
def test_a_bad_point_in_a_shuffle_step_is_refused_by_verify_and_audit_naming_its_signer(demo, monkeypatch, which):
    """The last event is the forged one (the two-core replay then ends without
    an error and its final point check must catch it), and the same event
    inside the log (the replay fails later, on the next event's hash)."""
    out, events, rules, name = demo
    steps = _deck_events(events)
    what = sorted(BAD[name])[which]
    for position, body, index, action in (steps[0], steps[-1]):
        head = _with_point(out, events, position, body, index, action, 3, BAD[name][what])
        for log in (head, head + list(events[position + 1:])):
            for fn, args in ((logcheck.verify, (rules, log)), (logcheck.audit, (rules, log, "*"))):
                plain, two = _both(monkeypatch, fn, *args)
                assert plain == two
                kind, message = plain
                assert kind == "IllegalAction", message
                assert f"event {position} by {body.author}" in message
                assert GROUPS[name].not_element in message, what


def test_a_bad_point_is_refused_by_receive_naming_its_signer(demo, tmp_path, monkeypatch):
    out, events, rules, name = demo
    position, body, index, action = _deck_events(events)[1]
    forged = _with_point(out, events, position, body, index, action, 0, BAD[name][FIRST_BAD[name]])[-1]
    receiver = next(r for r in ("axis", "allied") if r != body.author)
    copy = tmp_path / receiver
    shutil.copytree(out / receiver, copy, ignore=shutil.ignore_patterns("lock", "cache"))
    gd = GameDir(copy)
    for seq in range(position, gd.event_count()):
        gd.event_path(seq).unlink()
    turn = tmp_path / "turn.pbem"
    turn.write_bytes(b"pbem-turn v1\n---\n" + forged + b"\n")
    monkeypatch.setenv("PBEM_PASSPHRASE", THROWAWAY_PASSPHRASE)
    result = CliRunner().invoke(cli, ["receive", "--no-auto", "-g", str(copy), str(turn)])
    assert result.exit_code != 0
    assert f"event {position} by {body.author}" in result.output
    assert GROUPS[name].not_element in result.output
    assert gd.event_count() == position


# -- the deck audit without separate point checks ---------------------------------------------

GAME = bytes(range(32))
AUTHORS = ("axis", "allied")
LABELS = [f"card-{i:02d}" for i in range(12)]


def _round(G=D.PLAY, name="r1"):
    sa, sb = D.hash_parts(b"a", name.encode()), D.hash_parts(b"b", name.encode())
    sources = [D.Card(label=lb) for lb in LABELS]
    done: list[D.Step] = []
    for i in range(4):
        step = D.make_step(G, GAME, name, sources, done, sa if i % 2 == 0 else sb, D.history_resolver(G, {}))
        done.append(step)
    keys = D.open_all(G, GAME, name, sa, D.FIRST, len(LABELS)) + D.open_all(G, GAME, name, sb, D.SECOND, len(LABELS))
    return done, keys


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_libsodium_multiplication_refuses_every_point_the_subgroup_check_refuses(name):
    G = GROUPS[name]
    for what, text in BAD[name].items():
        assert not G.is_element(int(text, 16)), what
        with pytest.raises(D.DeckError) as err:
            G.exp(int(text, 16), 12345)
        assert str(err.value) == f"deck: {G.not_element}", what


@pytest.mark.parametrize("name", sorted(GROUPS))
@pytest.mark.parametrize("step", [1, 2, 3, 4])
@pytest.mark.parametrize("which", range(4))
def test_the_deck_audit_without_point_checks_still_fails_on_a_bad_point_in_any_step(name, step, which):
    G = GROUPS[name]
    what = sorted(BAD[name])[which]
    done, keys = _round(G)
    honest = D.audit_rounds(G, GAME, [D.DeckRound(steps=done)], keys, AUTHORS, set())
    assert honest[0].labels and sorted(honest[0].labels) == sorted(LABELS)
    cards = list(done[step - 1].cards)
    cards[5] = BAD[name][what]
    bad = list(done)
    bad[step - 1] = msgspec.structs.replace(done[step - 1], cards=cards)
    unchecked: set[str] = set()
    with pytest.raises(D.DeckError):
        D.audit_rounds(G, GAME, [D.DeckRound(steps=bad)], keys, AUTHORS, unchecked)
    with pytest.raises(D.DeckError) as err:
        D.audit_rounds(G, GAME, [D.DeckRound(steps=bad)], keys, AUTHORS)
    assert G.not_element in str(err.value), what
    assert err.value.step == step and err.value.author == AUTHORS[(step - 1) % 2]


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_a_point_read_unchecked_is_collected_for_its_later_check(name):
    G = GROUPS[name]
    unchecked: set[str] = set()
    text = BAD[name][FIRST_BAD[name]]
    assert D.parse_elem(G, text, unchecked) == int(text, 16) and unchecked == {text}
    with pytest.raises(D.DeckError, match="hex digits"):
        D.parse_elem(G, text[:-2], unchecked)
    with pytest.raises(D.DeckError, match=G.not_element):
        D.parse_elem(G, text)


def test_no_second_process_without_fork_or_for_a_short_log(monkeypatch):
    assert not logcheck._two_cores([b""] * (logcheck.MIN_EVENTS - 1))
    monkeypatch.setenv(logcheck.ENV, "0")
    assert not logcheck._two_cores([b""] * logcheck.MIN_EVENTS)
    monkeypatch.setenv(logcheck.ENV, "1")
    monkeypatch.delattr(os, "fork", raising=False)
    assert not logcheck._two_cores([b""] * logcheck.MIN_EVENTS)


# -- what verify leaves to receive and audit: points the opponent's next step took --------------


@pytest.mark.parametrize("step", [1, 2, 3])
def test_verify_leaves_a_point_that_the_opponents_next_step_took_to_receive_and_audit(demo, monkeypatch, step):
    """docs/deck.md "Checks computed once": a bad point in shuffle step 1, 2 or 3,
    and the opponent's next step signed over it (which pbem's receive would have refused:
    test_a_bad_point_is_refused_by_receive_naming_its_signer). Verify, on one
    core and on two, accepts the log: only a client that skipped its own check
    could have signed step 2, and the only one a bad point can harm is its user.
    The audit refuses it, naming the step and its signer, as before."""
    out, events, rules, name = demo
    position, body, index, action = _deck_events(events)[step - 1]
    assert action.step.step == step
    head = _with_point(out, events, position, body, index, action, 3, BAD[name][FIRST_BAD[name]])
    follower = codec.decode_body(codec.unwrap(events[position + 1]).body)
    taken = [a for _, a in _deck_actions(follower) if isinstance(a, D.DeckStep)]
    assert taken and taken[0].step.step == step + 1 and follower.author != body.author
    follower = msgspec.structs.replace(follower, prev=codec.sha256(head[-1]).hex())
    log = head + [session._sign(_identity(out, follower.author), follower)]
    plain, two = _both(monkeypatch, logcheck.verify, rules, log)
    assert plain == two and plain[0] == "ok"
    with monkeypatch.context() as m:  # the two-core path fails (a second process that died): the same answer
        m.setattr(logcheck, "MIN_EVENTS", 2)
        m.setattr(logcheck, "_fast", lambda *a: (_ for _ in ()).throw(OSError("the second process died")))
        assert _outcome(logcheck.verify, rules, log) == plain
    plain, two = _both(monkeypatch, logcheck.audit, rules, log, "*")
    assert plain == two and plain[0] == "IllegalAction"
    assert f"event {position} by {body.author}" in plain[1] and f"step {step}" in plain[1]
    assert GROUPS[name].not_element in plain[1]
    # without the opponent's step the same point is verify's to refuse (the log ends there)
    plain, two = _both(monkeypatch, logcheck.verify, rules, head)
    assert plain == two and plain[0] == "IllegalAction" and f"event {position} by {body.author}" in plain[1]


def test_consented_only_is_the_points_of_a_followed_step_and_of_no_other():
    done, _ = _round()
    rounds = {"r1": done[:3]}  # steps 1-3: steps 1 and 2 are followed, step 3 is not (yet)
    skip = logcheck.consented_only(rounds)
    assert skip == set(done[0].cards) | set(done[1].cards)
    reused = msgspec.structs.replace(done[2], cards=[done[0].cards[4]] + list(done[2].cards[1:]))
    assert done[0].cards[4] not in logcheck.consented_only({"r1": [done[0], done[1], reused]})
    assert logcheck.consented_only({"r1": done[:1]}) == set()
    assert logcheck.consented_only({"r1": done, "r2": []}) == set().union(*(s.cards for s in done[:3])) - set(
        done[3].cards)


def test_the_second_process_hints_are_the_values_the_replay_would_compute(demo):
    """What logcheck's second process sends ahead (verify): each card
    multiplication and each whole-set opening, computed by the same functions."""
    out, events, rules, name = demo
    ahead = logcheck._Ahead(GROUPS[name])
    exps = sets = 0
    for stored in events[1:]:
        body = codec.decode_body(codec.unwrap(stored).body)
        payload = ahead.event(body, [action for _, action in _deck_actions(body)])
        if not payload:
            continue
        hints = logcheck._hints.decode(payload)
        for text, product, x in hints.exps:
            group = GROUPS[name]
            e = pow(int.from_bytes(product, "big"), -1, group.q)  # removes both per-card keys
            assert group.exp(int(text, 16), e) == int.from_bytes(x, "big")
            exps += 1
        for root, seed, digest, ok in hints.sets:
            value = next(bytes.fromhex(o.value) for o in body.reveals if bytes.fromhex(o.salt) == seed)
            assert hashlib.sha256(value).digest() == digest
            assert ok is True and ok == commit.set_opens(root, seed, value)
            sets += 1
    assert exps > 10, "cards were dealt and their multiplications sent ahead"


def test_verify_unlocks_every_card_from_the_second_process_hints(demo, monkeypatch):
    """The replay looks a card up by the hint's key (the point and its keys'
    product): a hit saves it the modular inverse and the multiplication."""
    out, events, rules, name = demo
    monkeypatch.setenv(logcheck.ENV, "1")
    monkeypatch.setattr(logcheck, "MIN_EVENTS", 2)
    calls = {"unlock": 0, "inverse": 0, "exp": 0}

    def counted(what, fn):
        def call(*args, **kwargs):
            calls[what] += 1
            return fn(*args, **kwargs)
        return call

    group = GROUPS[name]
    monkeypatch.setattr(D, "unlock", counted("unlock", D.unlock))
    monkeypatch.setattr(D, "unlock_exponent", counted("inverse", D.unlock_exponent))
    monkeypatch.setattr(type(group), "exp", counted("exp", type(group).exp))
    monkeypatch.setattr(logcheck, "_fast", counted("fast", logcheck._fast))
    calls["fast"] = 0
    logcheck.verify(rules, events)
    assert calls["fast"] == 1 and calls["unlock"] > 0, "the two-core path unlocked cards"
    assert calls["inverse"] == calls["exp"] == 0, "every card came from a hint"


def test_the_second_process_answers_are_read_event_by_event_then_its_result():
    """The pipe's records (pbem.logcheck._Helper): per event a signature answer
    and its hints, then verify's result; an event the second process could not
    check (its answer "none") still counts as answered."""
    read, write = os.pipe()
    hints = msgspec.msgpack.encode(logcheck._Hints(sets=[], exps=[("ab" * 32, (5).to_bytes(32, "big"),
                                                                   (7).to_bytes(32, "big"))]))
    result = msgspec.msgpack.encode(logcheck._Result(valid=[b"x" * 32]))
    os.write(write, bytes([logcheck._SIG_OK]) + (0).to_bytes(4, "big")
             + bytes([logcheck._SIG_NONE]) + len(hints).to_bytes(4, "big") + hints
             + bytes([logcheck._RESULT]) + len(result).to_bytes(4, "big") + result)
    os.close(write)
    helper = logcheck._Helper(0, read)  # only its pipe: no process behind it
    try:
        assert helper.signature(1) == logcheck._SIG_OK and helper.exp_hints == {}
        assert helper.signature(2) == logcheck._SIG_NONE and helper.exp_hints == {("ab" * 32, 5): 7}
        got = helper.result(2)
        assert got is not None and got.valid == [b"x" * 32]
    finally:
        os.close(read)
    read, write = os.pipe()
    os.write(write, bytes([logcheck._SIG_OK]) + (3).to_bytes(4, "big") + b"\x90")  # cut short: it died
    os.close(write)
    helper = logcheck._Helper(0, read)
    try:
        assert helper.signature(1) == logcheck._SIG_NONE and helper.result(1) is None
    finally:
        os.close(read)


def _record(kind: int, payload: bytes = b"") -> bytes:
    return bytes([kind]) + len(payload).to_bytes(4, "big") + payload


def test_the_audits_rounds_are_read_as_they_come_without_waiting():
    """Audit: after the answers, the input's digest, then one round at a time;
    the replay's process reads what has come and goes on with its own rounds
    meanwhile (it never waits for a round), and a fault ends the rounds."""
    read, write = os.pipe()
    os.write(write, _record(logcheck._SIG_OK) + _record(logcheck._INPUT, b"d" * 32)
             + _record(logcheck._ROUND, msgspec.msgpack.encode(logcheck._Round("r1", [1, 0], [0, 1]))))
    helper = logcheck._Helper(0, read)
    try:
        assert helper.audit_input(1) == b"d" * 32
        perms: dict = {}
        assert helper.rounds_ahead(perms) == 1 and perms == {"r1": ([1, 0], [0, 1])}
        assert helper.rounds_ahead(perms) == 1  # nothing more yet: it returns at once
        os.write(write, _record(logcheck._ROUND, msgspec.msgpack.encode(logcheck._Round("r2", [0], [0]))))
        assert helper.rounds_ahead(perms) == 2 and perms["r2"] == ([0], [0])
        os.write(write, _record(logcheck._FAULT))
        assert helper.rounds_ahead(perms) is None and helper.rounds_ahead(perms) is None
    finally:
        os.close(write)
        os.close(read)
    read, write = os.pipe()
    os.write(write, _record(logcheck._SIG_OK) + _record(logcheck._ROUND, b"\x90"))  # no digest first
    os.close(write)
    helper = logcheck._Helper(0, read)
    try:
        assert helper.audit_input(1) is None
    finally:
        os.close(read)


def _child_gives(monkeypatch, k):
    """The audit's second process gives the replay's process its first ``k``
    rounds only (waiting for them), as if it had been that far when the replay
    ended; returns the list of rounds whose arithmetic the replay's process did."""
    original = logcheck._Helper.rounds_ahead
    came: dict = {}  # every round the second process sent, in order

    def rounds_ahead(self, perms):
        while True:
            n = original(self, came)
            if n is None or n >= k or (self.eof and self.offset == len(self.buf)):
                break
            __import__("time").sleep(0.001)
        for name in list(came)[:k]:
            perms.setdefault(name, came[name])
        return None if n is None else min(n, k)

    done: list[str] = []
    arith = D.RoundsAudit._arith

    def spy(self, history, rnd, *rest):
        done.append(rnd.steps[0].round)  # in the replay's process only: the second one was forked before
        return arith(self, history, rnd, *rest)

    monkeypatch.setattr(logcheck._Helper, "rounds_ahead", rounds_ahead)
    monkeypatch.setattr(D.RoundsAudit, "_arith", spy)
    return done


@pytest.mark.parametrize("ahead", [0, 1, 2, 10_000])
def test_the_audits_rounds_shared_between_the_processes_give_the_one_core_result(demo, monkeypatch, ahead):
    """The second process audits rounds from the first, the replay's process from
    the last, until they meet (pbem.logcheck): wherever they meet, the result
    and the first error are the one-core audit's, and the replay's process did
    the arithmetic of exactly the rounds it was not given."""
    out, events, rules, name = demo
    rounds = sorted({action.step.round for _, _, _, action in _deck_events(events)})
    done = _child_gives(monkeypatch, ahead)
    plain, two = _both(monkeypatch, logcheck.audit, rules, events, "*")
    assert plain == two and plain[0] == "ok"
    completed = [d["round"] for d in plain[1][2]]
    assert len(completed) >= 3, "a deck of a few rounds"
    done.clear()  # the one-core audit did them all: now the two-core one alone
    assert _outcome(logcheck.audit, rules, events, "*") == two
    assert done == completed[min(ahead, len(completed)):][::-1], (ahead, done)  # from the last
    assert set(done) <= set(rounds)
    steps = _deck_events(events)
    for position, body, index, action in (steps[0], steps[-1]):
        log = _with_point(out, events, position, body, index, action, 3, BAD[name][FIRST_BAD[name]])
        log += list(events[position + 1:])
        plain, two = _both(monkeypatch, logcheck.audit, rules, log, "*")
        assert plain == two and plain[0] == "IllegalAction" and f"event {position} by {body.author}" in plain[1]


def test_the_audit_decodes_each_event_body_once(demo, monkeypatch):
    """``audit_knowledge`` decodes every body to find the openings; the audit's
    replay takes those bodies (``Replay.decoded``) instead of decoding again,
    and its result is the same as without them."""
    out, events, rules, name = demo
    monkeypatch.setenv(logcheck.ENV, "0")
    known, salts = audit_knowledge(events)
    plain = _outcome(logcheck._plain, rules, events, "*", known, True, salts)  # decoding every body again
    calls = []
    decode = codec.decode_body

    def counted(data, *a, **k):
        calls.append(1)
        return decode(data, *a, **k)

    monkeypatch.setattr(codec, "decode_body", counted)
    assert _outcome(logcheck.audit, rules, events, "*") == plain and plain[0] == "ok"
    assert len(calls) == len(events)
