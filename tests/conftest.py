"""Shared fixtures: the race test game registered in-process, fast keys,
and a two-player table driven through pbem.session as two people would."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

from pbem import identity as identity_mod
from pbem import logcheck, rulesapi, session
from pbem.identity import Identity, save_identity
from pbem.store import GameDir
from tests.race import rules as race

PASSPHRASE = "test passphrase, not secret"

# In CI (CI is set), property tests draw the same examples every run, so that whether
# a submission lands never depends on the luck of one run's examples; a developer's
# run draws new ones each time (Hypothesis' default) and keeps finding cases.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("PBEM_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow test: set PBEM_SLOW=1 to run it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def race_rules(monkeypatch, tmp_path_factory):
    """The race test game, registered without an entry point; cheap scrypt for test keys;
    a $PBEM_HOME of the test's own (never the user's ~/.pbem: 'new' and 'join' list games there)."""
    rulesapi.register(race.RULES)
    monkeypatch.setattr(identity_mod, "SCRYPT_N", 1 << 10)
    monkeypatch.setenv("PBEM_HOME", str(tmp_path_factory.mktemp("pbem-home")))
    monkeypatch.setenv("PBEM_PASSPHRASE", PASSPHRASE)
    monkeypatch.setenv("PBEM_LOCK_WAIT", "0.3")
    yield race
    rulesapi.unregister("race")


#: Exceptions that are a fast path's own bug, never a log's fault.
_PROGRAMMING_ERRORS = (TypeError, AttributeError, NameError, ImportError)


@pytest.fixture(autouse=True)
def no_hidden_fast_path_bug():
    """pbem.logcheck falls back to a slower path on any exception of a faster one
    (the outcome never depends on it), which would let a programming error in a
    fast path pass every test, only slower: a test fails if one occurred."""
    logcheck.FALLBACKS.clear()
    yield
    bugs = [exc for exc in logcheck.FALLBACKS if isinstance(exc, _PROGRAMMING_ERRORS)]
    assert not bugs, f"a fast path of pbem.logcheck failed with a programming error: {bugs!r}"


@dataclass
class Side:
    role: str
    identity: Identity
    key_path: Path
    gd: GameDir

    def seat(self) -> session.Seat:
        return session.load_seat(self.gd, self.identity)


@dataclass
class Table:
    """Two players, each with their own game directory; turn files pass by hand."""

    red: Side
    blue: Side
    tmp: Path
    last_turn: bytes = b""

    def side(self, role: str) -> Side:
        return self.red if role == "red" else self.blue

    def play(self, role: str, *orders: str, note: str = "", open_all: bool = False) -> bytes:
        """``role`` gives orders and sends; the other side receives. Returns the turn file."""
        me = self.side(role)
        other = self.blue if role == "red" else self.red
        seat = me.seat()
        if orders:
            session.add_orders(seat, list(orders))
        sent = session.send(seat, note=note, open_all=open_all)
        data = Path(sent.turn_file).read_bytes()
        self.deliver(other, data)
        return data

    def deliver(self, to: Side, data: bytes) -> session.Received:
        seat = to.seat()
        result = session.receive(seat, [("turn", data)])
        self.last_turn = data
        if result.auto_reply is not None:  # pass the automatic entropy answer straight back
            back = self.red if to is self.blue else self.blue
            session.receive(back.seat(), [("auto", Path(result.auto_reply.turn_file).read_bytes())])
        return result


def make_side(tmp: Path, role: str) -> Side:
    ident = Identity.generate(role)
    key_path = tmp / f"{role}.key"
    save_identity(ident, key_path, PASSPHRASE)
    return Side(role, ident, key_path, GameDir(tmp / role))


def _ritd_demo_selfplay(out: Path) -> Path:
    """``pbem selfplay`` of the RitD Demo to its end (seed 7) into ``out``."""
    from click.testing import CliRunner

    from pbem.cli import cli

    result = CliRunner().invoke(cli, ["selfplay", "--rules", "ritd", "--scenario", "demo", "--seed", "7",
                                      "--out", str(out), "--max-events", "600"])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="session")
def ritd_demo_selfplay(tmp_path_factory) -> Path:
    """A RitD Demo played to its end by the random bots (``pbem selfplay``, seed 7),
    a directory per role. One for the whole session: read it, or copy it to change it."""
    return _ritd_demo_selfplay(tmp_path_factory.mktemp("ritd-demo-selfplay") / "demo")


@pytest.fixture(scope="session")
def ritd_demo_selfplay_ed25519(tmp_path_factory) -> Path:
    """The same self-play as ``ritd_demo_selfplay``, created at format version 5
    (a game made before decision 29), so its shared deck is Ed25519's."""
    from pbem import codec

    with pytest.MonkeyPatch.context() as m:
        m.setattr(codec, "new_game_version",
                  lambda clock: codec.TAKEBACK_CLOCK_VERSION if clock else codec.TAKEBACK_VERSION)
        return _ritd_demo_selfplay(tmp_path_factory.mktemp("ritd-demo-selfplay-ed25519") / "demo")


@pytest.fixture
def table(tmp_path) -> Table:
    """A race game ('sprint', goal 5): red speed 2, blue speed 3, set up and joined."""
    return new_table(tmp_path)


def new_table(tmp_path: Path, red_speed: int = 2, blue_speed: int = 3, scenario: str = "sprint") -> Table:
    red, blue = make_side(tmp_path, "red"), make_side(tmp_path, "blue")
    sent = session.new_game(red.gd.path, "race", scenario, "red", red.identity, red.key_path,
                            blue.identity.public_text, orders=[f"setup speed {red_speed}"])
    invitation = Path(sent.turn_file).read_bytes()
    joined, _ = session.join_game(blue.gd.path, invitation, blue.identity, blue.key_path,
                                  orders=[f"setup speed {blue_speed}"])
    session.receive(red.seat(), [("join", Path(joined.turn_file).read_bytes())])
    return Table(red, blue, tmp_path)
