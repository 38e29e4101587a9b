"""The RitD turn report and map with pieces, from one side's view only
(DESIGN 4): golden files of the 19.0 Demo at the first Allied decision,
privacy (the Axis report does not depend on the Allied hidden units), the
map's pieces and `pbem map -g` / `pbem report` through the CLI."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import msgspec
import pytest
from click.testing import CliRunner

from pbem import report
from pbem.board import render_svg
from pbem.cli import cli
from rules.ritd import game as ritd
from rules.ritd.picture import map_picture
from rules.ritd.report import report_sections
from rules.ritd.state import LastMove, all_scenarios, game_map
from rules.ritd.view import BlockView, MineView
from tests.ritd.ritd_table import new_game
from tests.ritd.test_game_setup import DEMO_AXIS, demo_allied
from tests.test_report import SCRIPT_NOTE, assert_golden, check_html, normalise

pytestmark = pytest.mark.usefixtures("registered_ritd")


@pytest.fixture
def attacked(tmp_path):
    """RB 19.0 Demo: the Axis Regroups three blocks into Sollum; the Allies must decide."""
    table = new_game(tmp_path, "demo", DEMO_AXIS, demo_allied())
    seat = table.axis.seat()
    from pbem import session

    session.add_orders(seat, ["supply check", "basic", "regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento",
                              "end movement"])
    sent = session.send(seat, note=SCRIPT_NOTE)
    from pathlib import Path

    table.deliver(table.allied, Path(sent.turn_file).read_bytes())
    return table


def test_golden_allied_report_at_the_battle_of_sollum(attacked):
    replay = attacked.allied.seat().replay
    built = report.build(replay, "allied")
    html, text = report.render(built, "html"), report.render(built, "text")
    assert_golden("ritd-demo-allied.html", normalise(html, replay.game_hex))
    assert_golden("ritd-demo-allied.txt", normalise(text, replay.game_hex))
    check_html(html)
    assert built.my_turn and "refuse" in built.pending
    titles = [t for t, _ in built.sections]
    assert titles == ["Situation", "Your units (Allied)", "Enemy blocks (Axis)", "Battles", "Supply",
                      "Victory standing (RB 17)", "Supply Cards"]
    assert "Sollum: Axis attacking, Allied defending" in text
    assert "Sollum: 3 blocks" in text and "Sollum: 7/7 Tk CV 4" in text


def test_the_report_never_names_hidden_enemy_units(attacked):
    replay = attacked.allied.seat().replay
    html = report.render(report.build(replay, "allied"), "html")
    text = report.render(report.build(replay, "allied"), "text")
    for name in ("Savona", "Brescia", "Trento", "Pavia", "GGFF", "Trieste"):
        assert name not in html and name not in text
    # while the Axis sees its own
    own = report.render(report.build(attacked.axis.seat().replay, "axis"), "text")
    assert "Sollum: Brescia CV 4; Savona CV 4; Trento CV 4. Total CV 12" in own


def test_the_axis_report_is_byte_identical_whatever_the_allied_hidden_units(tmp_path):
    """RB 18.2 free deployment (as in test_game_properties): the Allies put
    their "S" units on the same hexes in two orders; the Axis report, with the
    random game id and tokens normalised, is the same byte for byte."""
    sc = all_scenarios()
    s = sc.get("1941")
    axis = [f"deploy {u.name} at El Agheila" for u in sc.starting_units(s, "axis")] + ["end deployment"]
    free = [u.name for u in sc.setup_units(s, "allied", s.allied.setup[0].id)]
    tobruk = [f"deploy {u.name} at Tobruk" for u in sc.setup_units(s, "allied", s.allied.setup[1].id)]
    hexes = ["Mersa Matruh", "Sidi Barrani", "Sollum", "Bardia", "Buq Buq", "El Alamein"][:len(free)]
    assert len(set(free)) > 1
    outputs = []
    for i, order in enumerate((free, list(reversed(free)))):
        allied = [f"deploy {u} at {h}" for u, h in zip(order, hexes)] + tobruk + ["end deployment"]
        table = new_game(tmp_path / f"v{i}", "1941", axis, allied)
        replay = table.axis.seat().replay
        built = report.build(replay, "axis")
        outputs.append(tuple(normalise(report.render(built, f), replay.game_hex) for f in ("html", "text")))
        # the map alone too, with the Supply Network overlay (computed from the view's public board)
        axis_view = ritd.view(replay.state, "axis")
        outputs[-1] += (render_svg(map_picture(axis_view, overlays=("supply",))),)
        # the Allied reports do differ: the test can tell the two games apart
        mine = report.render(report.build(table.allied.seat().replay, "allied"), "text")
        outputs[-1] += (normalise(mine, replay.game_hex),)
    assert outputs[0][:3] == outputs[1][:3]
    assert outputs[0][3] != outputs[1][3]
    assert 'id="shades"' in outputs[0][2]


def test_map_pieces_one_per_side_per_hex_with_counts_cv_and_battle(attacked):
    v = ritd.view(attacked.allied.seat().replay.state, "allied")
    pic = map_picture(v)
    m = game_map()
    sollum = m.resolve("Sollum")
    here = [p for p in pic.pieces if p.hex == sollum]
    assert [(p.kind, p.text) for p in here] == [("allied", "1"), ("spacer", ""), ("axis", "3")]
    # the own unit by name and CV beside its block; the Axis stack stays blank
    assert [(c.kind, c.lines, c.piece) for c in pic.callouts if c.hex == sollum] == [
        ("units_allied", ("7/7 Tk 4",), 0)]
    assert all(c.kind == "units_allied" for c in pic.callouts)
    assert any(lab.hex == sollum and lab.text == "Axis attacks" for lab in pic.labels)
    assert {f.a for f in pic.hexsides if f.kind == "battle"} == {sollum}
    # RB 8.3: the Attacker is the side that began the battle, for as long as it lasts,
    # also in the other side's Player-Turn
    later = map_picture(msgspec.structs.replace(v, side="allied"))
    assert [lab.text for lab in later.labels if lab.hex == sollum and "attacks" in lab.text] == ["Axis attacks"]
    # no label or piece names a hidden Axis unit; the empty map has no pieces
    assert not any("Savona" in lab.text for lab in pic.labels)
    assert map_picture().pieces == ()
    root = ET.fromstring(render_svg(pic).encode())
    assert root.tag.endswith("svg")


def test_disrupted_stacks_are_drawn_differently():
    def block(token: str, side: str, disrupted: bool):
        return BlockView(token=token, side=side, hex="1405", where="Sollum", unit="X" if side == "allied" else "",
                              cv=2 if side == "allied" else 0, disrupted=disrupted, revealed=False)

    base = {"role": "allied", "scenario": "demo", "month": 1, "phase": "turn", "side": "axis"}
    all_down = ritd.View(blocks=[block("L1", "allied", True), block("A1", "axis", True)], **base)
    mixed = ritd.View(blocks=[block("L1", "allied", True), block("L2", "allied", False)], **base)
    assert [(p.kind, p.text) for p in map_picture(all_down).pieces] == [
        ("allied_disrupted", "1"), ("spacer", ""), ("axis_disrupted", "1")]
    assert [(p.kind, p.text) for p in map_picture(mixed).pieces] == [("allied_mixed", "1+1")]
    lines = dict(report_sections(mixed))["Your units (Allied)"]
    assert "Sollum: X CV 2; X CV 2 (disrupted). Total CV 4" in lines


def test_cli_map_of_a_game_and_report(attacked, tmp_path):
    runner = CliRunner()
    g = str(attacked.allied.gd.path)
    out = tmp_path / "view.svg"
    result = runner.invoke(cli, ["map", "-g", g, "-o", str(out)])
    assert result.exit_code == 0, result.output
    svg = out.read_text(encoding="utf-8")
    ET.fromstring(svg.encode())
    assert "Allied view" in svg and "Axis attacks" in svg
    empty = runner.invoke(cli, ["map", "ritd"])
    assert empty.exit_code == 0 and "Axis attacks" not in empty.output
    rep = runner.invoke(cli, ["report", "-g", g])
    assert rep.exit_code == 0 and "<svg" in rep.output
    check_html(rep.output)


def test_the_supply_section_names_units_at_risk_from_the_public_markers():
    """RB 12.7, 16.2: an own Unsupplied unit is named with what it risks; the
    enemy's Unsupplied markers are counted by place (they are public)."""
    from rules.ritd.report import supply_status
    from rules.ritd.view import BlockView, View

    blocks = [BlockView(token="L00000001", side="allied", hex="1605", where="Sidi Barrani", unit="7/7 Tk", cv=4,
                        disrupted=False, revealed=False, unsupplied=True),
              BlockView(token="L00000002", side="allied", hex="1103", where="Tobruk", unit="9 Aus", cv=4,
                        disrupted=False, revealed=False, supplied_by="Tobruk"),
              BlockView(token="A00000001", side="axis", hex="1505", where="Buq Buq", unit="", cv=0,
                        disrupted=False, revealed=False, unsupplied=True)]
    v = View(role="allied", scenario="demo", month=1, phase="turn", side="axis", blocks=blocks)
    lines = supply_status(v)
    assert lines[0].startswith("Sidi Barrani: 7/7 Tk CV 4 is Unsupplied, at risk") and "RB 16.2" in lines[0]
    assert "Tobruk: 9 Aus supplied by Tobruk (RB 13.3, 15.1)" in lines
    assert lines[-1] == "Enemy Unsupplied blocks: Buq Buq 1"


def _svg_texts(svg: str) -> set[str]:
    return {t.text for t in ET.fromstring(svg.encode()).iter("{http://www.w3.org/2000/svg}text") if t.text}


def test_the_map_names_own_units_with_their_cv_and_never_hidden_enemy_units(attacked):
    allied = render_svg(map_picture(ritd.view(attacked.allied.seat().replay.state, "allied")))
    axis = render_svg(map_picture(ritd.view(attacked.axis.seat().replay.state, "axis")))
    assert "7/7 Tk 4" in _svg_texts(allied)
    assert {"Brescia 4", "Savona 4", "Trento 4", "CV 12"} <= _svg_texts(axis)
    for name in ("Savona", "Brescia", "Trento", "Pavia", "GGFF", "Trieste", "Bologna", "Sabratha"):
        assert name not in allied
    for name in ("7/7 Tk", "7/4 Armd", "7 SG", "11H"):
        assert name not in axis


def test_revealed_enemy_units_may_be_named_the_rest_are_counted():
    """RB 8.5: enemy units revealed in a battle are named in their own box, beside the count of the others."""
    blocks = [BlockView(token="A1", side="axis", hex="1405", where="Sollum", unit="Ariete", cv=5,
                             disrupted=False, revealed=True),
              BlockView(token="A2", side="axis", hex="1405", where="Sollum", unit="", cv=0,
                             disrupted=True, revealed=False),
              BlockView(token="L1", side="allied", hex="1405", where="Sollum", unit="7/7 Tk", cv=4,
                             disrupted=False, revealed=True, unsupplied=True)]
    v = ritd.View(role="allied", scenario="demo", month=1, phase="turn", side="axis", blocks=blocks,
                  battles=["Sollum"])
    pic = map_picture(v)
    assert [(c.kind, c.lines, c.piece) for c in pic.callouts] == [
        ("units_allied", ("7/7 Tk 4 (U)",), 0), ("units_axis", ("Ariete 5", "+1 unseen"), 2)]
    assert "Axis units seen (RB 8.5)" in {e.text for e in pic.legend}


def test_the_supply_network_overlay_only_when_asked_and_from_the_view_alone(attacked):
    from rules.ritd import supply
    from rules.ritd.picture import supply_network

    state = attacked.allied.seat().replay.state
    v = ritd.view(state, "allied")
    assert map_picture(v).shades == ()
    assert "Your Supply Network (RB 12.6)" not in {e.text for e in map_picture(v).legend}
    pic = map_picture(v, overlays=("supply",))
    network = supply.network(game_map(), state.position, "allied")
    assert network and {s.hex for s in pic.shades} == network == supply_network(v)
    assert {s.kind for s in pic.shades} == {"supply_allied"}
    assert "Your Supply Network (RB 12.6)" in {e.text for e in pic.legend}
    # The view's public board carries no unit and no CV, of either side.
    assert v.board.blocks and all(b.unit == "" and b.cv == 0 for b in v.board.blocks)
    with pytest.raises(ValueError, match="no map overlay fog"):
        map_picture(v, overlays=("fog",))
    with pytest.raises(ValueError, match="needs a player's view"):
        map_picture(None, overlays=("supply",))


def test_last_moves_are_arrows_from_their_start_to_their_end_hex(attacked):
    """The Axis Regroup into Sollum (RB 5.2) as the Allies see it: one arrow per
    distinct route, in the Axis colour, with no name; placed from hex centre to hex centre."""
    m = game_map()
    v = ritd.view(attacked.allied.seat().replay.state, "allied")
    sollum = m.resolve("Sollum")
    pic = map_picture(v)
    routes = {tuple(mv.path) for mv in v.last_moves}
    assert len(v.last_moves) == 3 and {a.hexes for a in pic.arrows} == routes
    assert {a.kind for a in pic.arrows} == {"move_axis"} and all(a.hexes[-1] == sollum for a in pic.arrows)
    assert "Axis moves, Player-Turn 1" in {e.text for e in pic.legend}
    root = ET.fromstring(render_svg(pic).encode())
    ns = "{http://www.w3.org/2000/svg}"
    centres = {}
    for poly in root.find(f".//{ns}g[@id='hexes']").findall(f"{ns}polygon"):
        pts = [tuple(map(float, p.split(","))) for p in poly.get("points").split()]
        centres[poly.find(f"{ns}title").text] = (sum(x for x, _ in pts) / 6, sum(y for _, y in pts) / 6)
    lines = root.find(f".//{ns}g[@id='arrows']").findall(f"{ns}polyline[@class='arrow']")
    size = math.dist(centres[sollum], centres[m.resolve("Buq Buq")]) / math.sqrt(3)
    for arrow, line in zip(pic.arrows, lines):
        pts = [tuple(map(float, p.split(","))) for p in line.get("points").split()]
        assert pts[0] == pytest.approx(centres[arrow.hexes[0]], abs=0.01)
        assert 0.2 * size < math.dist(pts[-1], centres[sollum]) < 0.9 * size  # at the pieces, short of the centre
    # Withdrawals are dashed, in the colour of their side.
    refusal = LastMove(token="L1", side="allied", path=(sollum, m.resolve("Buq Buq")), turn=1,
                            withdrawal="refuse")
    withdrawn = map_picture(msgspec.structs.replace(v, last_moves=[*v.last_moves, refusal]))
    assert ("withdraw_allied", refusal.path) in {(a.kind, a.hexes) for a in withdrawn.arrows}
    assert withdrawn.styles["withdraw_allied"].dash
    assert "Allied Withdrawal (RB 5.3)" in {e.text for e in withdrawn.legend}


def test_minefields_are_drawn_from_the_view_only():
    """RB 14: the viewer's own Minefields (secret until revealed) and revealed
    ones of either side, as a marker in the hex corner; none without View.mines."""
    base = {"role": "axis", "scenario": "demo", "month": 1, "phase": "turn", "side": "axis", "blocks": []}
    assert not [s for s in map_picture(ritd.View(**base)).symbols if s.kind.startswith("mine")]
    mines = [MineView(hex="1405", where="Sollum", side="axis", revealed=False),
             MineView(hex="1605", where="Sidi Barrani", side="allied", revealed=True),
             MineView(hex="1505", where="Buq Buq", side="axis", revealed=True)]
    pic = map_picture(ritd.View(mines=mines, **base))
    marks = sorted((s.hex, s.kind, s.text) for s in pic.symbols if s.kind.startswith("mine"))
    assert marks == [("1405", "mine_axis_secret", "M"), ("1505", "mine_axis", "M"), ("1605", "mine_allied", "M")]
    assert all(s.is_fixed for s in pic.symbols if s.kind.startswith("mine"))
    legend = {e.text for e in pic.legend}
    assert {"Your Minefield (secret)", "Axis Minefield, revealed", "Allied Minefield, revealed"} <= legend
    root = ET.fromstring(render_svg(pic).encode())
    assert sum(1 for t in root.iter("{http://www.w3.org/2000/svg}text") if t.text == "M") == 3
    # A game's view has none until Minefields are played.
    assert ritd.View(**base).mines == []


def test_cli_map_and_report_draw_the_supply_overlay_only_when_named(attacked, tmp_path):
    runner = CliRunner()
    g = str(attacked.allied.gd.path)
    plain = runner.invoke(cli, ["map", "-g", g])
    assert plain.exit_code == 0 and 'id="shades"' not in plain.output
    for flags in (["--overlay", "supply"], ["--overlay", "supply", "--overlay", "supply"]):
        shaded = runner.invoke(cli, ["map", "-g", g, *flags])
        assert shaded.exit_code == 0, shaded.output
        assert 'id="shades"' in shaded.output and "Your Supply Network" in shaded.output
        assert shaded.output.replace(plain.output, "") != ""
    rep = runner.invoke(cli, ["report", "-g", g, "--overlay", "supply"])
    assert rep.exit_code == 0 and 'id="shades"' in rep.output
    check_html(rep.output)
    assert 'id="shades"' not in runner.invoke(cli, ["report", "-g", g]).output
    unknown = runner.invoke(cli, ["map", "-g", g, "--overlay", "fog"])
    assert unknown.exit_code == 2 and "no map overlay fog" in unknown.output
    empty = runner.invoke(cli, ["map", "ritd", "--overlay", "supply"])
    assert empty.exit_code == 2 and "-g GAME" in empty.output
    # The game names its overlays; the help lists them, no flag is hard-wired.
    assert "supply (ritd)" in runner.invoke(cli, ["map", "--help"]).output
    assert runner.invoke(cli, ["map", "-g", g, "--supply"]).exit_code == 2


def test_the_last_fire_section_names_units_never_block_tokens():
    """Issue 21 point 3: the report's Last fire lines (the game's own fire lines,
    RB 9.2-9.4) say a named unit by its name and an unseen block by its side, never
    by its token."""
    tokens = {"A1b2c3d4e": "Bologna", "A0f0f0f0f": "", "L12345678": "7/7 Tk"}
    blocks = [BlockView(token=t, side="axis" if t[0] == "A" else "allied", hex="1405", where="Sollum", unit=u,
                        cv=4 if u else 0, disrupted=False, revealed=bool(u)) for t, u in tokens.items()]
    v = ritd.View(role="allied", scenario="demo", month=1, phase="turn", side="axis", blocks=blocks,
                  last_fire=["Sollum: Bologna (A1b2c3d4e) at infantry (SF): 4 3 -> 0 hits",
                             "Sollum: A0f0f0f0f at armor (SF): 6 -> 1 hit",
                             "Sollum: 7/7 Tk (L12345678) at infantry (DF): 6 6 -> 2 hits"])
    [fire] = [lines for title, lines in report_sections(v) if title.startswith("Last fire")]
    assert fire == ["Sollum: Bologna at infantry (SF): 4 3 -> 0 hits",
                    "Sollum: an Axis block at armor (SF): 6 -> 1 hit",
                    "Sollum: 7/7 Tk at infantry (DF): 6 6 -> 2 hits"]
