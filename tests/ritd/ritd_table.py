"""Two Rommel in the Desert players through pbem.session, with the rules
module registered in-process (it is not yet offered as a playable game)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pbem import session
from pbem.identity import Identity
from pbem.store import GameDir


@dataclass
class Side:
    role: str
    identity: Identity
    gd: GameDir

    def seat(self) -> session.Seat:
        return session.load_seat(self.gd, self.identity)


@dataclass
class RitdTable:
    axis: Side
    allied: Side

    def side(self, role: str) -> Side:
        return self.axis if role == "axis" else self.allied

    def other(self, role: str) -> Side:
        return self.allied if role == "axis" else self.axis

    def play(self, role: str, *orders: str) -> None:
        """``role`` gives its orders and sends; the other side receives (and
        its automatic dice answer is passed back)."""
        seat = self.side(role).seat()
        if orders:
            session.add_orders(seat, list(orders))
        sent = session.send(seat)
        self.deliver(self.other(role), Path(sent.turn_file).read_bytes())

    def deliver(self, to: Side, data: bytes) -> None:
        """``to`` receives ``data``; automatic dice answers go back and forth
        until one side has a decision to make."""
        while True:
            result = session.receive(to.seat(), [("turn", data)])
            if result.auto_reply is None:
                return
            data = Path(result.auto_reply.turn_file).read_bytes()
            to = self.other(to.role)

    def keep_hands(self) -> None:
        """RB 18.0: both players keep their initial hands, the Axis first."""
        self.play("axis", "keep hand")
        self.play("allied", "keep hand")

    def pending(self):
        return self.axis.seat().replay.pending()


def new_game(tmp: Path, scenario: str, axis_setup: list[str], allied_setup: list[str], *,
             keep_hands: bool = True, options: tuple[str, ...] = ()) -> RitdTable:
    """A game after both set-ups and the initial deal (RB 18.0; both hands
    kept unless ``keep_hands`` is False), with the optional rules ``options``
    (RB 17.0); key files (passphrase tests.conftest.PASSPHRASE) in ``tmp``."""
    from pbem.identity import save_identity
    from tests.conftest import PASSPHRASE

    axis = Side("axis", Identity.generate(), GameDir(tmp / "axis"))
    allied = Side("allied", Identity.generate(), GameDir(tmp / "allied"))
    for side in (axis, allied):
        save_identity(side.identity, tmp / f"{side.role}.key", PASSPHRASE)
    sent = session.new_game(axis.gd.path, "ritd", scenario, "axis", axis.identity, tmp / "axis.key",
                            allied.identity.public_text, orders=axis_setup, options=options)
    joined, _ = session.join_game(allied.gd.path, Path(sent.turn_file).read_bytes(), allied.identity,
                                  tmp / "allied.key", orders=allied_setup)
    table = RitdTable(axis, allied)
    table.deliver(axis, Path(joined.turn_file).read_bytes())
    if keep_hands:
        table.keep_hands()
    return table
