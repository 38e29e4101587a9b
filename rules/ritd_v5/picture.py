"""The Rommel in the Desert map as a generic ``pbem.board.Picture``.

Everything drawn comes from the map data (``data/map.toml``) and, for a
player's map, from that player's ``View`` alone (DESIGN 4); this module only
chooses how each kind looks (terrain key of RB 1.4, roads of RB 1.5,
fortress port capacities of RB 13.3 written as Axis/Allied) and what a view
puts on the map: blocks, the own units' names and CVs, battles, the last
Player-Turn's moves, Minefields and, on request, the Supply Network.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from pbem.board import (
    Arrow,
    Callout,
    HexCell,
    HexsideFeature,
    Label,
    LegendEntry,
    Picture,
    Piece,
    RoadPath,
    Shade,
    Style,
    Symbol,
)
from rules.ritd_v5.hexmap import HexMap, load_map

if TYPE_CHECKING:
    from rules.ritd_v5.position import Side
    from rules.ritd_v5.state import LastMove
    from rules.ritd_v5.view import BlockView, View

STYLES: dict[str, Style] = {
    # Hex fills.
    "sea": Style(fill="#b9d7ea", stroke="#b9d7ea", width=0.15),
    "desert": Style(fill="#f3e6c4", stroke="#cdbb92", width=0.15),
    "mountain": Style(fill="#b9c79a", stroke="#8e9e6c", width=0.15),
    "depression": Style(fill="#d9d3c7", stroke="#bfb6a6", width=0.15),
    "sand": Style(fill="#ead39a", stroke="#d8bf82", width=0.15),
    # Hexside terrain (RB 1.4) and the frontier.
    "ridge": Style(stroke="#7a4a1c", width=0.9, pattern="teeth"),
    "gap": Style(stroke="#7a4a1c", width=0.9, pattern="ends"),
    "marsh": Style(stroke="#3f7fa8", width=0.9, dash="0.6 0.6"),
    "marsh_gap": Style(stroke="#3f7fa8", width=0.9, dash="0.6 0.6", pattern="ends"),
    "mountain_side": Style(stroke="#5d6b3a", width=0.5),
    "frontier": Style(stroke="#8c1d8c", width=0.6, dash="2 0.8 0.4 0.8", opacity=0.9),
    # Roads (RB 1.5).
    "highway": Style(stroke="#c0281e", width=0.9),
    "track": Style(stroke="#5a3a1a", width=0.55, dash="1.6 0.8"),
    "trail": Style(stroke="#5a3a1a", width=0.4, dash="0.4 0.7"),
    # Symbols.
    "town": Style(fill="#222222", stroke="#ffffff", width=0.2, size=0.7),
    "fortress": Style(fill="#1f3b6f", stroke="#ffffff", width=0.3, shape="square", size=2.0, font_size=1.7),
    "oasis": Style(fill="#2e8b3e", stroke="#ffffff", width=0.3, size=1.4),
    "base_axis": Style(fill="#3a3a3a", stroke="#ffffff", width=0.3, shape="star", size=2.2),
    "base_allied": Style(fill="#b5651d", stroke="#ffffff", width=0.3, shape="star", size=2.2),
    # Text.
    "place": Style(fill="#111111", font_size=2.0, bold=True),
    "sea_label": Style(fill="#3d6f92", font_size=4.2, italic=True, halo="none"),
    # Area names get a white halo too: roads and hex edges run through them.
    "region": Style(fill="#6b5a3a", font_size=3.2, italic=True),
    "country": Style(fill="#8c1d8c", font_size=5.0, bold=True, opacity=0.7),
    # Pieces of a player's view: one block per side in each hex, with the
    # number of blocks on it (the halo is the text colour). A disrupted block
    # lies face down (RB 7.2): a stack of them is drawn pale, a mixed stack
    # says "upright+disrupted" in smaller type. "spacer" keeps a hex's two
    # stacks apart, so neither count is covered. pbem.board sets the pieces
    # of a hex side by side after its symbol (town dot, fortress ports), so
    # none is hidden.
    "axis": Style(fill="#3b4a5c", stroke="#111111", width=0.25, font_size=2.3, halo="#ffffff"),
    "allied": Style(fill="#b5651d", stroke="#4a2608", width=0.25, font_size=2.3, halo="#ffffff"),
    "axis_disrupted": Style(fill="#dfe5ee", stroke="#3b4a5c", width=0.45, font_size=2.3, halo="#3b4a5c"),
    "allied_disrupted": Style(fill="#f6e2cc", stroke="#b5651d", width=0.45, font_size=2.3, halo="#b5651d"),
    "axis_mixed": Style(fill="#3b4a5c", stroke="#111111", width=0.25, font_size=1.6, halo="#ffffff"),
    "allied_mixed": Style(fill="#b5651d", stroke="#4a2608", width=0.25, font_size=1.6, halo="#ffffff"),
    "spacer": Style(fill="none", stroke="none", width=0),
    # The units of a stack, in a box beside it: the viewer's own always,
    # the enemy's only those the view discloses (revealed in battle, RB 8.5).
    "units_axis": Style(fill="#111111", stroke="#3b4a5c", width=0.25, font_size=1.7, halo="#ffffff", opacity=0.93),
    "units_allied": Style(fill="#111111", stroke="#b5651d", width=0.25, font_size=1.7, halo="#ffffff",
                          opacity=0.93),
    # The last Player-Turn's routes; Withdrawals (RB 5.3) dashed.
    "move_axis": Style(stroke="#2f5f9f", width=0.55, halo="#ffffff", opacity=0.9, size=2.2),
    "move_allied": Style(stroke="#e06a00", width=0.55, halo="#ffffff", opacity=0.9, size=2.2),
    "withdraw_axis": Style(stroke="#2f5f9f", width=0.55, halo="#ffffff", opacity=0.9, size=2.2, dash="1.2 0.7"),
    "withdraw_allied": Style(stroke="#e06a00", width=0.55, halo="#ffffff", opacity=0.9, size=2.2, dash="1.2 0.7"),
    # The Supply Network overlay (RB 12.6).
    "supply_axis": Style(fill="#2f5f9f", stroke="#2f5f9f", width=0.25, opacity=0.22),
    "supply_allied": Style(fill="#c0392b", stroke="#c0392b", width=0.25, opacity=0.18),
    # Minefields (RB 14): solid once revealed, pale while only the owner knows.
    "mine_axis": Style(fill="#3b4a5c", stroke="#ffffff", width=0.25, shape="diamond", size=1.4, font_size=1.5),
    "mine_allied": Style(fill="#b5651d", stroke="#ffffff", width=0.25, shape="diamond", size=1.4, font_size=1.5),
    "mine_axis_secret": Style(fill="#dfe5ee", stroke="#3b4a5c", width=0.3, shape="diamond", size=1.4,
                              font_size=1.5, halo="#3b4a5c"),
    "mine_allied_secret": Style(fill="#f6e2cc", stroke="#b5651d", width=0.3, shape="diamond", size=1.4,
                                font_size=1.5, halo="#b5651d"),
    "battle": Style(stroke="#e0007a", width=1.1),
    "battle_label": Style(fill="#e0007a", font_size=1.35, bold=True),
}

#: Where a Minefield marker sits in its hex (hex sizes): the upper right
#: corner, clear of the pieces' row, the hex id and most place names.
MINE_DX = 0.52
MINE_DY = -0.36
#: The overlays ``map_picture`` can draw on a view's map.
OVERLAYS: tuple[str, ...] = ("supply",)

#: Place names above or below the symbol, in hex sizes (hex ids are at -0.7).
NAME_ABOVE = -0.4
NAME_BELOW = 0.62
NAME_SHIFT = 0.3

_LABEL_KIND = {"sea": "sea_label", "region": "region", "country": "country"}

LEGEND: tuple[LegendEntry, ...] = (
    LegendEntry("desert", "Clear (hexside limit 2)", "hex"),
    LegendEntry("mountain", "Mountain: roads only, limit 1", "hex"),
    LegendEntry("ridge", "Ridge: impassable", "edge"),
    LegendEntry("gap", "Gap/pass: hexside limit 1", "edge"),
    LegendEntry("marsh", "Salt marsh: impassable", "edge"),
    LegendEntry("highway", "Highway (+4)", "road"),
    LegendEntry("track", "Track (+2; supply range 3)", "road"),
    LegendEntry("trail", "Trail (+1; supply range 2)", "road"),
    LegendEntry("frontier", "Libya / Egypt frontier", "road"),
    LegendEntry("fortress", "Fortress, ports Axis/Allied", "symbol"),
    LegendEntry("oasis", "Oasis (supplies 1 unit)", "symbol"),
    LegendEntry("base_axis", "Axis Base", "symbol"),
    LegendEntry("base_allied", "Allied Base", "symbol"),
    LegendEntry("town", "Town", "symbol"),
    LegendEntry("depression", "Depression: not playable", "hex"),
)


def map_picture(view: View | None = None, hexmap: HexMap | None = None, overlays: Sequence[str] = ()) -> Picture:
    """The map as a Picture, from the map data: empty without a view, else
    with what ``view`` shows (see ``view_pieces``, ``view_extras``) and the
    ``overlays`` asked for (``OVERLAYS``). ValueError for an unknown overlay
    or an overlay without a view."""
    unknown = [o for o in overlays if o not in OVERLAYS]
    if unknown:
        raise ValueError(f"no map overlay {', '.join(unknown)} (known: {', '.join(OVERLAYS)})")
    if overlays and view is None:
        raise ValueError("a map overlay needs a player's view (a game)")
    m = hexmap if hexmap is not None else load_map()
    cells = tuple(HexCell(h.id, h.q, h.r, h.kind, caption=h.id if h.is_playable else "") for h in m.hexes.values())

    sides: list[HexsideFeature] = []
    for a in m.hexes:
        for _, b in m.neighbours(a):
            if a > b:
                continue
            t = m.hexside(a, b)
            if not (m.is_playable(a) or m.is_playable(b)):
                continue
            if t in ("ridge", "gap", "marsh_gap") or (t == "marsh" and m.is_playable(a) and m.is_playable(b)):
                first, second = (a, b) if m.hex(a).r >= m.hex(b).r else (b, a)
                # Ridge teeth point downhill, toward the southern (plateau) hex.
                sides.append(HexsideFeature(first, second, t))
            elif t == "marsh":
                land, other = (a, b) if m.is_playable(a) else (b, a)
                sides.append(HexsideFeature(other, land, "marsh"))
            elif t == "mountain" and m.road(a, b) is None:
                sides.append(HexsideFeature(a, b, "mountain_side"))
            area_a, area_b = m.area(a), m.area(b)
            if m.is_playable(a) and m.is_playable(b) and area_a != area_b:
                sides.append(HexsideFeature(a, b, "frontier"))

    # Highways last, so they are drawn over the tracks and trails they meet.
    roads = tuple(RoadPath(r.kind, r.path) for r in sorted(m.roads, key=lambda r: ("trail", "track", "highway").index(r.kind)))

    symbols: list[Symbol] = []
    labels: list[Label] = []
    battles = frozenset(m.resolve(w) for w in view.battles) if view is not None else frozenset()
    above = _labels_above(m, battles)
    shifts = _name_shifts(m, above, battles)
    for place in m.places:
        if place.is_fortress:
            symbols.append(Symbol(place.hex, "fortress", f"{place.port_axis}/{place.port_allied}"))
        elif place.is_oasis:
            symbols.append(Symbol(place.hex, "oasis"))
        elif place.is_base:
            symbols.append(Symbol(place.hex, f"base_{place.side}"))
        else:
            symbols.append(Symbol(place.hex, "town"))
        labels.append(Label(place.hex, place.name, "place", dx=shifts.get(place.hex, 0.0),
                            dy=NAME_ABOVE if place.hex in above else NAME_BELOW))
    for lab in m.labels:
        labels.append(Label(lab.hex, lab.text, _LABEL_KIND.get(lab.kind, "region")))

    title = f"{m.title}: the map"
    subtitle = (f"{m.hex_km} km (28 miles) per hex. Hex ids CCRR (column, row). "
                "Authored from geography and the rulebook's examples, not the printed map: "
                "see rules/ritd/data/map.toml.")
    pieces: list[Piece] = []
    callouts: list[Callout] = []
    arrows: list[Arrow] = []
    shades: list[Shade] = []
    legend = LEGEND
    if view is not None:
        title, subtitle = _view_titles(m, view)
        pieces, callouts, battle_sides, battle_labels = view_pieces(m, view)
        labels += battle_labels
        sides += battle_sides
        arrows = move_arrows(view)
        symbols += mine_symbols(view)
        if "supply" in overlays:
            shades = [Shade(h, f"supply_{view.role}") for h in sorted(supply_network(view))]
        legend = LEGEND + _view_legend(view, bool(arrows), bool(shades))

    return Picture(
        title=title,
        subtitle=subtitle,
        hexes=cells,
        styles=STYLES,
        # The frontier first, so ridge and gap marks are drawn over it; battle outlines last.
        hexsides=tuple(sorted(sides, key=lambda f: (f.kind != "frontier", f.kind == "battle"))),
        roads=roads,
        symbols=tuple(symbols),
        labels=tuple(labels),
        pieces=tuple(pieces),
        legend=legend,
        shades=tuple(shades),
        arrows=tuple(arrows),
        callouts=tuple(callouts),
    )


def _side_name(side: str) -> str:
    return {"axis": "Axis", "allied": "Allied"}.get(side, side)


def _view_titles(m: HexMap, v: View) -> tuple[str, str]:
    from rules.ritd_v5.state import all_scenarios

    sc = all_scenarios()
    s = sc.get(v.scenario)
    when = f"{sc.month_label(s, v.month)} (Month {v.month})"
    if v.turn:
        when += f", Player-Turn {v.turn} ({_side_name(v.side)})"
    title = f"{m.title}: {_side_name(v.role)} view, {when}"
    subtitle = (f"{s.name}. One block per side and hex, numbered with its blocks (2+1: two upright, one "
                "disrupted). Boxes: your units and CVs ((D) Disrupted, (U) Unsupplied).")
    return title, subtitle


def view_pieces(m: HexMap, v: View) -> tuple[list[Piece], list[Callout], list[HexsideFeature], list[Label]]:
    """Pieces, unit callouts, battle outlines and battle labels for ``v``.

    One piece per side in each hex, with the number of blocks it stands for:
    the hexes are about 12 mm across on the page, too small for a piece per
    block or for unit names. The names go into a callout beside the stack:
    every own unit with its CV, the stack's total CV as its title; of an
    enemy stack only the units the view names (revealed in battle, RB 8.5),
    and how many it does not (their identities and CVs are hidden, RB 2.3).
    Each battle is labelled with its Attacker: the side that began it, for as
    long as it lasts (RB 8.3), which need not be the side now moving.
    """
    stacks: dict[tuple[str, str], list[BlockView]] = {}
    for b in v.blocks:
        stacks.setdefault((b.hex, b.side), []).append(b)
    pieces: list[Piece] = []
    callouts: list[Callout] = []
    by_hex: dict[str, list[str]] = {}
    for hex_, side in stacks:
        by_hex.setdefault(hex_, []).append(side)
    for hex_, sides in sorted(by_hex.items()):
        # Own stack on the left; two stacks sit apart so both counts show.
        for i, side in enumerate(sorted(sides, key=lambda s: s != v.role)):
            if i:
                pieces.append(Piece(hex_, "spacer"))
            bs = stacks[(hex_, side)]
            down = sum(b.disrupted for b in bs)
            if down == 0:
                pieces.append(Piece(hex_, side, str(len(bs))))
            elif down == len(bs):
                pieces.append(Piece(hex_, f"{side}_disrupted", str(len(bs))))
            else:
                pieces.append(Piece(hex_, f"{side}_mixed", f"{len(bs) - down}+{down}"))
            callout = _stack_callout(hex_, side, bs, own=side == v.role, piece=2 * i)
            if callout is not None:
                callouts.append(callout)
    outlines: list[HexsideFeature] = []
    battle_labels: list[Label] = []
    attackers = {b.hex: b.attacker for b in v.board.battles}
    for where in v.battles:
        hex_ = m.resolve(where)
        outlines += [HexsideFeature(hex_, n, "battle") for _, n in m.neighbours(hex_)]
        # At the foot of the hex: its place name is above (see _labels_above).
        attacker = attackers.get(hex_, v.side)
        battle_labels.append(Label(hex_, f"{_side_name(attacker)} attacks", "battle_label", dy=0.66))
    return pieces, callouts, outlines, battle_labels


def unit_line(b: BlockView) -> str:
    """One unit of a callout: name and CV, then (D) Disrupted (RB 11.0), (U) Unsupplied (RB 12.7)."""
    marks = "".join(f" ({mark})" for mark, on in (("D", b.disrupted), ("U", b.unsupplied)) if on)
    return f"{b.unit} {b.cv}{marks}"


def _stack_callout(hex_: str, side: str, bs: list[BlockView], *, own: bool, piece: int) -> Callout | None:
    """The callout naming the units of one side's stack: all of them for the
    viewer's own, only those the view names for the enemy's (None if none)."""
    named = sorted((b for b in bs if b.unit), key=lambda b: (b.unit, b.cv, b.disrupted))
    if not named:
        return None
    lines = [unit_line(b) for b in named]
    title = ""
    if own and len(named) > 1:
        title = f"CV {sum(b.cv for b in named)}"
    if len(named) < len(bs):
        lines.append(f"+{len(bs) - len(named)} unseen")
    return Callout(hex_, f"units_{side}", tuple(lines), title=title, piece=piece)


def move_arrows(v: View) -> list[Arrow]:
    """One arrow per distinct route of the last Player-Turn's movement (a
    Group moving together shares one), Withdrawals dashed. Routes are public
    (the Moves are), so the enemy's are drawn too, without names."""
    seen: dict[tuple[str, tuple[str, ...]], None] = {}
    for mv in v.last_moves:
        seen.setdefault((_arrow_kind(mv), tuple(mv.path)), None)
    return [Arrow(kind, path) for kind, path in seen]


def _arrow_kind(mv: LastMove) -> str:
    return f"{'withdraw' if mv.withdrawal else 'move'}_{mv.side}"


def mine_symbols(v: View) -> list[Symbol]:
    """A marker in the corner of each Minefield hex the view shows (RB 14):
    the viewer's own (pale while still secret) and revealed ones of either side."""
    return [Symbol(mine.hex, f"mine_{mine.side}" + ("" if mine.revealed else "_secret"), "M",
                   dx=MINE_DX, dy=MINE_DY)
            for mine in sorted(v.mines, key=lambda x: (x.hex, x.side))]


def _view_legend(v: View, arrows: bool, supply: bool) -> tuple[LegendEntry, ...]:
    own, other = v.role, "allied" if v.role == "axis" else "axis"
    entries = [
        LegendEntry(own, f"{_side_name(own)} (yours): blocks", "piece"),
        LegendEntry(f"{own}_disrupted", f"{_side_name(own)}: disrupted", "piece"),
        LegendEntry(other, f"{_side_name(other)}: blocks", "piece"),
        LegendEntry(f"{other}_disrupted", f"{_side_name(other)}: disrupted", "piece"),
        LegendEntry("battle", "Battle: its Attacker named (RB 8.3)", "edge"),
        LegendEntry(f"units_{own}", "Your units: name and CV", "callout"),
    ]
    if any(b.unit for b in v.blocks if b.side == other):
        entries.append(LegendEntry(f"units_{other}", f"{_side_name(other)} units seen (RB 8.5)", "callout"))
    if arrows:
        turns = sorted({mv.turn for mv in v.last_moves})
        which = f"Player-Turn {turns[-1]}" if len(turns) == 1 else "the last Player-Turn"
        sides = sorted({mv.side for mv in v.last_moves}, key=lambda s: s != own)
        entries += [LegendEntry(f"move_{side}", f"{_side_name(side)} moves, {which}", "arrow") for side in sides]
        for side in sorted({mv.side for mv in v.last_moves if mv.withdrawal}, key=lambda s: s != own):
            entries.append(LegendEntry(f"withdraw_{side}", f"{_side_name(side)} Withdrawal (RB 5.3)", "arrow"))
    if v.mines:
        if any(m.side == own and not m.revealed for m in v.mines):
            entries.append(LegendEntry(f"mine_{own}_secret", "Your Minefield (secret)", "symbol"))
        for side in sorted({m.side for m in v.mines if m.revealed}, key=lambda s: s != own):
            entries.append(LegendEntry(f"mine_{side}", f"{_side_name(side)} Minefield, revealed", "symbol"))
    if supply:
        entries.append(LegendEntry(f"supply_{own}", "Your Supply Network (RB 12.6)", "hex"))
    return tuple(entries)


def _labels_above(m: HexMap, battles: frozenset[str] = frozenset()) -> frozenset[str]:
    """Place hexes whose name goes above the symbol: every second one of a
    run of named hexes side by side in a row, so names do not collide; and
    the battle hexes of a view (the battle label goes at their foot)."""
    named = {p.hex for p in m.places}
    above: set[str] = set()
    for h in sorted(named, key=lambda x: (m.hex(x).r, m.hex(x).q)):
        west = m.neighbour(h, "W")
        if west in named and west not in above:
            above.add(h)
    return frozenset(above | (battles & named))


def _name_shifts(m: HexMap, above: frozenset[str], battles: frozenset[str]) -> dict[str, float]:
    """Sideways shifts (hex sizes) that keep place names off battle outlines:
    a name above the symbol in a hex south-east or south-west of a battle,
    or below it north-east or north-west of one, moves away from the battle."""
    named = {p.hex for p in m.places}
    shifts: dict[str, float] = {}
    for b in sorted(battles):
        for d, n in m.neighbours(b):
            if n not in named or n in battles:
                continue
            if (d in ("SE", "SW") and n in above) or (d in ("NE", "NW") and n not in above):
                shifts[n] = NAME_SHIFT if d in ("SE", "NE") else -NAME_SHIFT
    return shifts


def supply_network(v: View) -> frozenset[str]:
    """The viewer's Supply Network (RB 12.6: every hex of its current Supply
    Lines, those along the Supplied Highway and to Oases included), computed from
    the view's public board only when a map asks for it: about 10 ms, too
    much to spend on every view."""
    from rules.ritd_v5 import supply
    from rules.ritd_v5.state import game_map

    if v.role not in ("axis", "allied"):
        return frozenset()
    return supply.network(game_map(), v.board, cast("Side", v.role))
