"""Write the example RitD turn report and map of examples/ from a short game.

The game: the 19.0 Demo set-up (RB 18.0, 19.0) and the first Axis
Player-Turn up to the Allied decision (the Axis Regroups into Sollum and
attacks; the Allies must accept or refuse battle, RB 8.4), played through
pbem.session by two local players in a temporary directory. The report and
map are the Allied player's: what the email with the Axis turn brings.
RitD is not yet offered by `pbem new`, so its rules are registered here.

THROWAWAY KEYS: both identities are generated afresh on every run, saved
in the temporary directory with the passphrase below and deleted with it.
They are test keys, worth nothing; never use them (or this passphrase)
for a real game.

    python examples/make_examples.py            # writes examples/ritd-report.{html,txt} and
                                                # examples/ritd-map-view.svg; with rsvg-convert and
                                                # chromium installed also the two PNGs
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pbem import report, rulesapi, session  # noqa: E402
from pbem.board import render_svg  # noqa: E402
from pbem.identity import Identity, save_identity  # noqa: E402
from pbem.store import GameDir  # noqa: E402
from rules.ritd import game as ritd  # noqa: E402

THROWAWAY_PASSPHRASE = "throwaway example key, not secret"

DEMO_AXIS = ["deploy Savona at Bardia", "deploy Brescia at Ft. Capuzzo", "deploy Pavia at Ft. Capuzzo",
             "deploy Bologna at Ft. Capuzzo", "deploy Sabratha at Ft. Capuzzo", "deploy Trento at Sidi Omar",
             "deploy Trieste at Sidi Omar", "deploy GGFF at Sidi Omar", "end deployment"]


def demo_allied() -> list[str]:
    """The Allied set-up of RB 19.0: each group in the first hex of its zone."""
    s = ritd._scenarios().get("demo")
    orders = []
    for group in s.allied.setup:
        where = group.zones[0].hexes[0]
        orders += [f"deploy {u.name} at {where}" for u in group.select(ritd._scenarios().roster, "allied")]
    return orders + ["end deployment"]


class Player:
    def __init__(self, tmp: Path, role: str) -> None:
        self.role, self.identity, self.gd = role, Identity.generate(), GameDir(tmp / role)
        self.key_path = tmp / f"{role}.key"
        save_identity(self.identity, self.key_path, THROWAWAY_PASSPHRASE)

    def seat(self) -> session.Seat:
        return session.load_seat(self.gd, self.identity)


def play(me: Player, other: Player, *orders: str, note: str = "") -> None:
    """``me`` orders and sends; ``other`` receives (and any automatic dice answer goes back)."""
    seat = me.seat()
    if orders:
        session.add_orders(seat, list(orders))
    sent = session.send(seat, note=note)
    got = session.receive(other.seat(), [("turn", Path(sent.turn_file).read_bytes())])
    if got.auto_reply is not None:
        session.receive(me.seat(), [("auto", Path(got.auto_reply.turn_file).read_bytes())])


def demo_game(tmp: Path) -> tuple[Player, Player]:
    """Both players after the 19.0 Demo set-up and the first Axis Player-Turn's
    Moves, the Allies to accept or refuse the battle at Sollum."""
    axis, allied = Player(tmp, "axis"), Player(tmp, "allied")
    sent = session.new_game(axis.gd.path, "ritd", "demo", "axis", axis.identity, axis.key_path,
                            allied.identity.public_text, orders=DEMO_AXIS, title="Desert demo")
    joined, _ = session.join_game(allied.gd.path, Path(sent.turn_file).read_bytes(), allied.identity,
                                  allied.key_path, orders=demo_allied())
    session.receive(axis.seat(), [("join", Path(joined.turn_file).read_bytes())])
    play(axis, allied, "supply check", "basic", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento",
         "end movement", note="Avanti! <b>Sollum</b> & the wire.")
    return axis, allied


def main(out: Path = HERE) -> None:
    rulesapi.register(ritd)
    with tempfile.TemporaryDirectory() as tmp:
        _, allied = demo_game(Path(tmp))
        replay = allied.seat().replay
        rep = report.build(replay, "allied")
        html = out / "ritd-report.html"
        html.write_text(report.render(rep, "html"), encoding="utf-8")
        (out / "ritd-report.txt").write_text(report.render(rep, "text"), encoding="utf-8")
        svg = out / "ritd-map-view.svg"
        svg.write_text(render_svg(ritd.map_picture(ritd.view(replay.state, "allied"))), encoding="utf-8")
    if shutil.which("rsvg-convert"):
        subprocess.run(["rsvg-convert", "-d", "150", "-p", "150", "-o", str(out / "ritd-map-view.png"), str(svg)],
                       check=True)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser:
        with tempfile.TemporaryDirectory() as profile:
            subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                            "--no-first-run", "--disable-component-update", "--disable-sync",
                            f"--user-data-dir={profile}", f"--screenshot={out / 'ritd-report.png'}",
                            "--window-size=1240,1754", html.as_uri()], check=True, capture_output=True)
    print(f"examples written to {out}")


if __name__ == "__main__":
    main()
