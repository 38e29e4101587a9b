"""Panzerarmee Afrika orders: their text (``parse_order``, ``format_action``)
and every order a faction may give now (``legal_orders``, ``order_tree``).

Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0).
Unit ids are written as the text writes them ("DE 5/1/ABN", "BR SG/2/IBDE",
"BR LORRY/1", "DE DEPOT/2"), any case; lists are comma-separated:

    place UNIT HEX            setup done
    move UNIT HEX             overrun UNIT, UNIT HEX
    haul LORRY, DEPOT HEX     rail DEPOT HEX     ship UNIT HEX     dismount UNIT, UNIT HEX
    end movement              remount UNIT[, UNIT] on LORRY      option D UNIT, UNIT
    attack UNIT, UNIT on HEX, HEX     mas DEPOT     scrap DEPOT     end declarations
    resolve N     cancel N    lose UNIT, UNIT | lose nothing
    advance UNIT HEX          end advance                end combat
    malta invade | malta decline
    rebuild UNIT   reinforce UNIT CF   withdraw UNIT   reinstate UNIT   option X   end turn

Every order listed passes ``check``: each is built from the same rule
functions ``check`` runs (destinations from one search per unit, §11.1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pbem.rulesapi import Ctx, Order, OrderGroup
from rules.paa import game as g
from rules.paa import oob
from rules.paa.game import State
from rules.paa.logistics import rail_destinations
from rules.paa.supply import base_hexes, network
from rules.paa.units import enemy_of

SYNTAX = ("place UNIT HEX | setup done | move UNIT HEX | overrun UNIT[, UNIT] HEX | haul LORRY, DEPOT HEX | "
          "rail DEPOT HEX | ship UNIT HEX | dismount UNIT[, UNIT] HEX | remount UNIT[, UNIT] on LORRY | end movement | attack UNIT[, UNIT] on HEX[, HEX] | mas DEPOT | scrap DEPOT | "
          "end declarations | resolve N | cancel N | lose UNIT[, UNIT] | lose nothing | advance UNIT HEX | "
          "end advance | react UNIT HEX | end reaction | end combat | malta invade | malta decline | rebuild UNIT | reinforce UNIT CF | "
          "withdraw UNIT | reinstate UNIT | option X | end turn")


# --- text ----------------------------------------------------------------------------------

def _unit(text: str) -> str:
    t = " ".join(text.split()).upper()
    try:
        return oob.unit(t).id
    except KeyError:
        raise ValueError(f"§2.3: no counter {text.strip()[:40]!r} (ids as the OOB writes them, e.g. 'DE 5/1/ABN', "
                         "'BR LORRY/1', 'DE DEPOT/2')") from None


def _units(text: str) -> tuple[str, ...]:
    parts = [p for p in text.split(",") if p.strip()]
    if not parts:
        raise ValueError("name at least one unit")
    return tuple(_unit(p) for p in parts)


def _hex(text: str) -> str:
    t = text.strip()
    if len(t) != 4 or not t.isdigit():
        raise ValueError(f"§2.1: {t[:20]!r} is not a four-digit hex number (RRCC, e.g. 1925)")
    return t


def _hexes(text: str) -> tuple[str, ...]:
    return tuple(_hex(p) for p in text.split(",") if p.strip())


def _head_tail(rest: str) -> tuple[str, str]:
    """'UNIT WORDS HEX' -> ('UNIT WORDS', 'HEX')."""
    head, _, tail = rest.strip().rpartition(" ")
    if not head:
        raise ValueError(f"expected a unit and a hex, not {rest.strip()[:40]!r}")
    return head, tail


def parse_action(text: str) -> Any:
    words = " ".join(text.split())
    low = words.lower()
    fixed: dict[str, Any] = {
        "setup done": g.SetupDone(), "end movement": g.EndMovement(), "end declarations": g.EndDeclarations(),
        "end advance": g.EndAdvance(), "end reaction": g.EndReaction(), "end combat": g.EndCombat(), "end turn": g.EndTurn(),
        "malta invade": g.Malta(1), "malta decline": g.Malta(0), "lose nothing": g.Lose(()),
    }
    if low in fixed:
        return fixed[low]
    verb, _, rest = words.partition(" ")
    verb = verb.lower()
    try:
        if verb in ("place", "move", "advance", "react"):
            unit, where = _head_tail(rest)
            cls = {"place": g.Place, "move": g.Move, "advance": g.Advance, "react": g.React}[verb]
            return cls(_unit(unit), _hex(where))
        if verb == "overrun":
            units, where = _head_tail(rest)
            return g.Overrun(_units(units), _hex(where))
        if verb == "ship":
            unit, where = _head_tail(rest)
            return g.Ship(_unit(unit), _hex(where))
        if verb == "dismount":
            units, where = _head_tail(rest)
            return g.Dismount(_units(units), _hex(where))
        if verb == "remount":
            units, sep, lorry = rest.rpartition(" on ")
            if not sep:
                raise ValueError("write 'remount UNIT[, UNIT] on LORRY'")
            return g.Remount(_units(units), _unit(lorry))
        if verb == "haul":
            pair, where = _head_tail(rest)
            lorry, _, depot = pair.partition(",")
            return g.Haul(_unit(lorry), _unit(depot), _hex(where))
        if verb == "rail":
            depot, where = _head_tail(rest)
            return g.Rail(_unit(depot), _hex(where))
        if verb == "attack":
            units, sep, hexes = rest.rpartition(" on ")
            if not sep:
                raise ValueError("write 'attack UNIT[, UNIT] on HEX[, HEX]'")
            return g.Attack(_units(units), _hexes(hexes))
        if verb in ("mas", "scrap"):
            return (g.Sacrifice if verb == "mas" else g.Scrap)(_unit(rest))
        if verb in ("resolve", "cancel"):
            if not rest.strip().isdigit():
                raise ValueError(f"write '{verb} N' with the combat's number")
            return (g.Resolve if verb == "resolve" else g.Cancel)(int(rest))
        if verb == "lose":
            return g.Lose(tuple(sorted(_units(rest))))
        if verb in ("rebuild", "withdraw", "reinstate"):
            return {"rebuild": g.Rebuild, "withdraw": g.Withdraw, "reinstate": g.Reinstate}[verb](_unit(rest))
        if verb == "reinforce":
            unit, cf = _head_tail(rest)
            if not cf.isdigit():
                raise ValueError("write 'reinforce UNIT CF' with the new CF")
            return g.Reinforce(_unit(unit), int(cf))
        if verb == "option":
            letter, _, units = rest.strip().partition(" ")
            letter = letter.upper()
            if len(letter) != 1 or not letter.isalpha():
                raise ValueError("write 'option X' with the option's letter (§13.5)")
            return g.Exercise(letter, _units(units) if units.strip() else ())
    except ValueError as e:
        raise ValueError(f"{e} (in {words[:60]!r})") from None
    raise ValueError(f"unknown order {words[:60]!r}; orders: {SYNTAX}")


def parse_order(s: State, role: str, text: str, ctx: Any) -> Order:
    return Order(action=parse_action(text))


def format_action(a: Any) -> str:
    if isinstance(a, g.SetupDone):
        return "setup done"
    if isinstance(a, (g.Place, g.Move, g.Advance, g.React)):
        return f"{type(a).__name__.lower()} {a.unit} {a.hex}"
    if isinstance(a, g.Overrun):
        return f"overrun {', '.join(a.units)} {a.hex}"
    if isinstance(a, g.Haul):
        return f"haul {a.lorry}, {a.depot} {a.hex}"
    if isinstance(a, g.Ship):
        return f"ship {a.unit} {a.hex}"
    if isinstance(a, g.Dismount):
        return f"dismount {', '.join(a.units)} {a.hex}"
    if isinstance(a, g.Remount):
        return f"remount {', '.join(a.units)} on {a.lorry}"
    if isinstance(a, g.Rail):
        return f"rail {a.depot} {a.hex}"
    if isinstance(a, g.Attack):
        return f"attack {', '.join(a.units)} on {', '.join(a.hexes)}"
    if isinstance(a, g.Sacrifice):
        return f"mas {a.depot}"
    if isinstance(a, g.Scrap):
        return f"scrap {a.depot}"
    if isinstance(a, g.Resolve):
        return f"resolve {a.combat}"
    if isinstance(a, g.Cancel):
        return f"cancel {a.combat}"
    if isinstance(a, g.Lose):
        return f"lose {', '.join(a.units)}" if a.units else "lose nothing"
    if isinstance(a, g.Malta):
        return "malta invade" if a.invade else "malta decline"
    if isinstance(a, (g.Rebuild, g.Withdraw, g.Reinstate)):
        return f"{type(a).__name__.lower()} {a.unit}"
    if isinstance(a, g.Reinforce):
        return f"reinforce {a.unit} {a.cf}"
    if isinstance(a, g.Exercise):
        return f"option {a.letter}" + (f" {', '.join(a.withdraw)}" if a.withdraw else "")
    words = {g.EndMovement: "end movement", g.EndDeclarations: "end declarations", g.EndAdvance: "end advance", g.EndReaction: "end reaction",
             g.EndCombat: "end combat", g.EndTurn: "end turn"}
    return words[type(a)]


# --- what may be ordered now -----------------------------------------------------------------

class Author:
    """A Ctx naming only who acts (check reads nothing else; PAA has no secret)."""

    def __init__(self, role: str) -> None:
        self.role = self.author = role
        self.seq = 0

    def value(self, label: str) -> bytes | None:
        return None

    def committed(self, label: str) -> bool:
        return False

    def opened(self, label: str) -> bool:
        return False

    def leaf(self, label: str, key: str) -> bytes | None:
        return None

    def leaves(self, label: str, keys: Iterable[str]) -> list[bytes | None]:
        return [None for _ in keys]

    def card(self, rnd: str, pos: int) -> str | None:
        return None


def _ok(s: State, role: str, texts: Sequence[str]) -> list[str]:
    ctx = Author(role)
    return [t for t in texts if not g.check(s, parse_action(t), ctx)]


def _later(f: Callable[[g.Piece], list[str]], p: g.Piece) -> Callable[[], list[str]]:
    return lambda: f(p)


def _group(label: str, orders: Callable[[], Sequence[str]] | Sequence[str], *, example: str = "",
           ends: bool = False, note: str = "") -> OrderGroup:
    return OrderGroup(label=label, example=example, orders=orders if callable(orders) else tuple(orders),
                      ends_step=ends, note=note)


def order_tree(s: State, role: str, ctx: Ctx | None = None) -> tuple[OrderGroup, ...]:
    d = g.pending(s)
    if d is None or d.role != role or d.kind == "dice":
        return ()
    if s.phase == "setup":
        return _setup_tree(s, role)
    if s.stage in ("losses", "counter-losses"):
        opts = [format_action(g.Lose(tuple(sorted(c)))) for c in g.loss_choices(s)]
        return (_group(f"Lose up to {s.loss_due} CF (§12.4.5)", opts, ends=True),)
    if s.stage == "malta":
        return (_group("Malta (§9, Table 6)", ["malta invade", "malta decline"], ends=True),)
    if s.stage == "advance":
        return _advance_tree(s, role)
    if s.stage == "reaction":
        return (_group(f"Reaction moves into combat {s.current + 1} (§15.1)",
                       lambda: g.reactors(s, s.fights[s.current]), example="react <unit> <hex>"),
                _group("No more reaction moves", ["end reaction"], ends=True))
    if s.stage == "pick":
        return _pick_tree(s, role)
    if s.phase == "movement":
        return _movement_tree(s, role)
    if s.phase == "attack_supply":
        return _declaration_tree(s, role)
    if s.phase == "resolution":
        return _resolution_tree(s, role)
    if s.phase == "reinforcement":
        return _rr_tree(s, role)
    return ()


def legal_orders(s: State, role: str, ctx: Ctx | None = None) -> list[str]:
    return [o for group in order_tree(s, role, ctx) for o in group.leaves()]


def _setup_tree(s: State, role: str) -> tuple[OrderGroup, ...]:
    f = g.as_faction(role)
    names = {"axis": "El Agheila", "allied": "Alexandria"}
    movable = sorted({u.id for u in oob.units() if u.setup == names[role]}
                     | {p.id for p in s.pieces if p.faction == f and p.kind == "transport"
                        and p.hex in g._base_hexes(f)})
    base = g._base_hexes(f)
    def places(u: str) -> Callable[[], list[str]]:
        return lambda: _ok(s, role, [f"place {u} {h}" for h in base])

    groups = [_group(f"Place {u} (in {p.hex})", places(u), example=f"place {u} <hex>")
              for u in movable if (p := g.piece_of(s, u)) is not None]
    return (*groups, _group("Set-up done (§6)", ["setup done"], ends=True))


def _movement_tree(s: State, role: str) -> tuple[OrderGroup, ...]:
    f = g.faction_of(s)
    ground = g.ground(s)
    net = network(g.board(), s.pieces, f, g.control_of(s), icf=g.icf_of(s))
    groups: list[OrderGroup] = []

    def moves(p: g.Piece) -> list[str]:
        out = []
        for h, (path, _) in sorted(g.destinations(s, p, ground).items()):
            if not g.end_problems(s, p, path, ground, net):
                out.append(f"move {p.id} {h}")
        return out

    for p in s.pieces:
        if p.faction != f or p.kind not in ("infantry", "armoured", "transport") or p.id in s.stopped:
            continue
        if p.oos or p.ooc2 or p.dismounted or g.mf_left(s, p) <= 0:
            continue
        groups.append(_group(f"Move {p.id} ({g.mf_left(s, p)} MF left, at {p.hex})", _later(moves, p),
                             example=f"move {p.id} <hex>"))
    groups.append(_group("Overruns (§11.4)", lambda: _overruns(s, role), example="overrun <unit>[, <unit>] <hex>"))
    groups.append(_group("Sea transport (§11.2)", lambda: _ships(s, role), example="ship <unit> <port>"))
    groups.append(_group("Dismount (§13.6)", lambda: _dismounts(s, role), example="dismount <unit>, <unit> <hex>"))
    groups.append(_group("Supply transport (§11.3, §11.3.1)", lambda: _hauls(s, role),
                         example="haul <lorry>, <depot> <hex>"))
    groups.append(_group("End movement (§4 stacking is checked)", lambda: _ok(s, role, ["end movement"]), ends=True))
    return tuple(groups)


def _overruns(s: State, role: str) -> list[str]:
    """§11.4: each stack that started the phase together, against each adjacent enemy hex."""
    f = g.faction_of(s)
    stacks: dict[tuple[str, str], list[str]] = {}
    for p in s.pieces:
        if p.faction == f and p.is_regular and not p.oos and not p.ooc2 and p.id in s.phase_start:
            stacks.setdefault((p.hex, s.phase_start[p.id]), []).append(p.id)
    enemy = {p.hex for p in s.pieces if p.faction == enemy_of(f) and p.kind != "installation"}
    out = []
    for (h, _), units in sorted(stacks.items()):
        for n in g.board().neighbours(h):
            if n in enemy:
                out.append(format_action(g.Overrun(tuple(sorted(units)), n)))
    return _ok(s, role, out)


def _ships(s: State, role: str) -> list[str]:
    """§11.2: every piece standing in a port since the phase began, to each other port."""
    ports = sorted(g.board().ports)
    out = [f"ship {p.id} {to}" for p in s.pieces if p.faction == role and p.hex in ports
           and p.kind in ("infantry", "armoured", "installation") for to in ports if to != p.hex]
    return _ok(s, role, out)


def _dismounts(s: State, role: str) -> list[str]:
    """§13.6: each stack of one hex (R-38 allows adjacent hexes too; type those) onto each neighbour."""
    stacks: dict[str, list[str]] = {}
    for p in s.pieces:
        if p.faction == role and p.is_regular and not p.dismounted:
            stacks.setdefault(p.hex, []).append(p.id)
    cf = {p.id: p.cf for p in s.pieces}
    out = [format_action(g.Dismount(tuple(sorted(units)), n)) for h, units in sorted(stacks.items())
           if sum(cf[u] for u in units) >= 10 for n in g.board().neighbours(h)]
    return _ok(s, role, out)


def _hauls(s: State, role: str) -> list[str]:
    f = g.faction_of(s)
    ground = g.ground(s)
    out = []
    for lorry in s.pieces:
        if lorry.faction != f or lorry.kind != "transport" or lorry.id in s.stopped or lorry.oos or lorry.ooc2:
            continue
        for depot in s.pieces:
            if depot.faction == f and depot.kind == "installation" and depot.hex == lorry.hex and not depot.ooc2:
                for h in sorted(g.destinations(s, lorry, ground)):
                    out.append(format_action(g.Haul(lorry.id, depot.id, h)))
    if f == "allied":
        for depot in s.pieces:
            if depot.faction == f and depot.kind == "installation" and not depot.ooc2:
                for h in sorted(rail_destinations(g.board(), s.pieces, depot.hex, icf=g.icf_of(s)) - {depot.hex}):
                    out.append(format_action(g.Rail(depot.id, h)))
    return _ok(s, role, out)


def _declaration_tree(s: State, role: str) -> tuple[OrderGroup, ...]:
    f = g.faction_of(s)
    b = g.board()
    busy = {u for fight in s.fights for u in fight.attackers}
    attacked = {h for fight in s.fights for h in fight.hexes}
    enemy = sorted({p.hex for p in s.pieces if p.faction == enemy_of(f) and p.kind != "installation"} - attacked)

    def attacks() -> list[str]:
        out = []
        for h in enemy:
            units = sorted(p.id for p in s.pieces if p.faction == f and p.is_regular and p.id not in busy
                           and h in b.neighbours(p.hex))
            if units:
                out.append(format_action(g.Attack(tuple(units), (h,))))
        return _ok(s, role, out)

    depots = [p.id for p in s.pieces if p.faction == f and p.kind == "installation"]
    return (
        _group("Declare a combat (§12.2)", attacks, example="attack <unit>[, <unit>] on <hex>[, <hex>]"),
        _group("Sacrifice an installation for MAS (§12.3)", lambda: _ok(s, role, [f"mas {d}" for d in depots])),
        _group("Eliminate an installation (§12.3)", lambda: _ok(s, role, [f"scrap {d}" for d in depots])),
        _group("End declarations (§12.1.1 fort attacks are checked)", lambda: _ok(s, role, ["end declarations"]),
               ends=True),
    )


def _resolution_tree(s: State, role: str) -> tuple[OrderGroup, ...]:
    n = range(1, len(s.fights) + 1)
    return (
        _group("Resolve a combat (§12.4)", lambda: _ok(s, role, [f"resolve {i}" for i in n]), example="resolve <n>"),
        _group("Cancel a combat (§12.4)", lambda: _ok(s, role, [f"cancel {i}" for i in n])),
        _group("End the combat phase", lambda: _ok(s, role, ["end combat"]), ends=True),
    )


def _advance_tree(s: State, role: str) -> tuple[OrderGroup, ...]:
    fight = s.fights[s.current]
    out = [f"advance {u} {h}" for u in fight.attackers if g.piece_of(s, u) is not None for h in fight.hexes]
    return (_group("Advance (§12.4.7)", lambda: _ok(s, role, out), example="advance <unit> <hex>"),
            _group("No (further) advance", ["end advance"], ends=True))


def _pick_tree(s: State, role: str) -> tuple[OrderGroup, ...]:
    units = [p.id for p in s.pieces if p.faction == "allied" and p.is_regular]
    return (_group("Pick an Allied unit to withdraw (§13.2.3)", lambda: _ok(s, role, [f"withdraw {u}" for u in units])),
            _group("Done picking", lambda: _ok(s, role, ["end turn"]), ends=True))


def _rr_tree(s: State, role: str) -> tuple[OrderGroup, ...]:
    f = g.faction_of(s)
    base = sorted(base_hexes(g.board(), g.board().base_centres[f]))
    mine = [u for u in s.cadre if oob.unit(u).faction == f]
    groups = [
        _group("Place an arrival in the base (§13, R-28)",
               lambda: _ok(s, role, [f"place {u} {h}" for u in s.arrived for h in base])),
        _group("Rebuild from the Cadre (§13.3.2)", lambda: _ok(s, role, [f"rebuild {u}" for u in mine])),
    ]
    if f == "allied":
        def reinforce() -> list[str]:
            out = [f"reinforce {p.id} {cf}" for p in s.pieces if p.faction == f and p.is_regular
                   and g.in_alexandria_base(p) for cf in range(p.cf + 1, 6)]
            return _ok(s, role, out)

        def withdraw() -> list[str]:
            units = [p.id for p in s.pieces if p.faction == f and p.is_regular] + list(mine)
            return _ok(s, role, [f"withdraw {u}" for u in units])

        pool = [*s.withdrawn, *mine]
        groups += [_group("Reinforce in the Alexandria base (§13.4)", reinforce),
                   _group("Withdraw (§13.2.3)", withdraw),
                   _group("Reinstate (§13.2.4)", lambda: _ok(s, role, [f"reinstate {u}" for u in pool]))]
    letters = [o.letter for o in oob.schedule().options.values() if o.faction == role and not o.automatic]

    def options() -> list[str]:
        out = [f"option {x}" for x in letters if x != "D"]
        if "D" in letters:  # §13.5.1: D names the two Indian brigades it withdraws
            base = g._base_hexes("allied")
            indian = sorted(p.id for p in s.pieces if p.nation == "IN" and p.kind == "infantry" and p.hex in base)
            out += [f"option D {a}, {b}" for i, a in enumerate(indian) for b in indian[i + 1:]]
        return _ok(s, role, out)

    def remounts() -> list[str]:
        lorries = [p for p in s.pieces if p.faction == f and p.kind == "transport"]
        return _ok(s, role, [f"remount {p.id} on {lo.id}" for p in s.pieces if p.faction == f and p.dismounted
                             for lo in lorries if lo.hex in g.board().neighbours(p.hex)])

    groups.append(_group("Remount (§13.6)", remounts))
    groups.append(_group("Optional reinforcements (§13.5)", options))
    groups.append(_group("End the turn (§4, §13.2.3 checked)", lambda: _ok(s, role, ["end turn"]), ends=True))
    return tuple(groups)
