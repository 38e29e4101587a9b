"""benchmarks/campaign.py's RulesClock: the time inside a rules module's hooks,
outermost calls only, with the clock read twice per outermost call and never
in a hook called from another (the clock's own cost inside a window was up to
8% of the rules' time, issue 20); the deck's time inside the hooks apart."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from campaign import RulesClock  # noqa: E402


class _Toy:
    def outer(self) -> str:
        return self.inner() + self.inner()

    def inner(self) -> str:
        return "x"


class _Clock:
    """A clock that moves one second each time it is read, and counts the reads."""

    def __init__(self) -> None:
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return float(self.reads)


class _Deck:
    """A DeckClock stand-in: ``seconds`` moves by 10 each time a hook reads it."""

    def __init__(self) -> None:
        self.reads = 0

    @property
    def seconds(self) -> float:
        self.reads += 1
        return 10.0 * self.reads


def test_only_the_outermost_hook_reads_the_clock() -> None:
    toy, clock, deck = _Toy(), _Clock(), _Deck()
    with RulesClock(toy, clock, deck) as hooks:  # type: ignore[arg-type]
        assert toy.outer() == "xx"
        assert toy.inner() == "x"
    assert clock.reads == 4  # two outermost calls, two reads each; the nested inner() read none
    assert hooks.seconds == 2.0  # each window: one read to the next
    assert deck.reads == 4 and hooks.deck_seconds == 20.0  # read before each window and after it
    assert _Toy.outer is not None and "outer" in vars(_Toy) and toy.outer() == "xx"  # the class is put back
    assert clock.reads == 4
