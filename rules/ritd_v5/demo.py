"""The rulebook's 19.0 Demo (1940) as a script for ``pbem demo``.

``demo_orders(state, role, ctx)`` answers each decision of the Demo's Month
1 and Month 2 Buildup and Initiative with the orders the rulebook narrates
(EX-31 in the rules digest), one decision at a time. The dice are real
(both players' entropy), so where the book's luck does not come true (a
Forced March fails, a card is a dummy, a hit falls elsewhere) the script
takes the next order that is legal in the position reached: the nearest
thing to what the book's players did. The script ends (None) when Month 2's
first Player-Turn begins.
"""

from __future__ import annotations

from typing import cast

from pbem.rulesapi import ActingAs
from rules.ritd_v5 import game, reachability
from rules.ritd_v5.buildup_orders import due_count, early_candidates
from rules.ritd_v5.deployment import own_token
from rules.ritd_v5.group_moves import block_speed
from rules.ritd_v5.position import Side
from rules.ritd_v5.scenarios import HexZone
from rules.ritd_v5.state import all_scenarios, current_turn, game_map
from rules.ritd_v5.turn import movement_of

DEMO_SCENARIO = "demo"
DEMO_OPTIONS: tuple[str, ...] = ()

#: RB 19.0: the Axis set-up (8 Italian units) and the Allied one (4 units).
AXIS_SETUP = ("deploy Savona at Bardia", "deploy Brescia at Ft. Capuzzo", "deploy Pavia at Ft. Capuzzo",
              "deploy Bologna at Ft. Capuzzo", "deploy Sabratha at Ft. Capuzzo", "deploy Trento at Sidi Omar",
              "deploy Trieste at Sidi Omar", "deploy GGFF at Sidi Omar")


def _allied_setup() -> tuple[str, ...]:
    s = all_scenarios().get(DEMO_SCENARIO)
    return tuple(f"deploy {u.name} at {cast(HexZone, group.zones[0]).hexes[0]}"
                 for group in s.allied.setup for u in group.select(all_scenarios().roster, "allied"))


def _units_in(state: game.State, role: Side, place: str) -> list[str]:
    h = game_map().resolve(place)
    return sorted(b.unit for b in state.position.blocks_in(h, role) if b.unit and not b.disrupted)


def _moves(state: game.State) -> int:
    turn = state.turn
    return turn.movement.moves_made if turn and turn.movement else 0


def _script(state: game.State, role: Side) -> list[str]:
    """The book's orders for this decision, best first (EX-31, D-1..D-8)."""
    if state.phase == "cards":
        return ["keep hand"]
    if state.phase == "initiative":  # D-8: a dummy challenge, declined
        return {"challenge": ["challenge with dummy", "no challenge"], "answer": ["decline"],
                "open-challenge": ["open challenge"]}.get(state.stage, [])
    if state.phase == "buildup":
        return _buildup(state, role)
    turn = current_turn(state)
    n, step = turn.number, turn.step
    if step in ("initial-supply", "final-supply"):
        return ["supply check"]
    if step == "supply-revealed":
        return ["reveal option"]
    if step in ("reveal-passive", "reveal-active"):
        return ["reveal units"]
    if step in ("defensive-fire", "offensive-fire") and game_map().name(turn.battles[0]) == "Buq Buq":
        if role == "allied":  # D-3: the armour and the mechanized infantry fire at infantry
            return ["fire Buq Buq: 7/4 Armd at infantry, 7 SG at infantry"]
        return [f"fire Buq Buq: {', '.join(u + ' at infantry' for u in _units_in(state, 'axis', 'Buq Buq'))}"]
    if step in ("offensive-losses", "defensive-losses"):
        where = game_map().name(turn.battles[0])
        hits = sum(h.hits for h in turn.fire_result.hits.values()) if turn.fire_result else 0
        if where == "Buq Buq" and role == "axis" and hits == 2:  # D-3: one infantry unit -2 CV
            return [f"losses Buq Buq: {_units_in(state, 'axis', 'Buq Buq')[0]} 2", "losses Buq Buq auto"]
        if where == "Buq Buq" and role == "allied" and hits == 1:  # D-3: the mech infantry -1 CV
            return ["losses Buq Buq: 7 SG 1", "losses Buq Buq auto"]
        return [f"losses {where} auto"]
    if step == "option":
        return {1: ["basic"], 3: ["basic"], 5: ["offensive", "basic"]}.get(n, ["pass"])
    if step == "movement":
        return _movement(state, n)
    if step == "refuse":
        where = game_map().name(turn.refusals[0])
        if where == "Buq Buq":  # D-3: the Allies accept the battle
            return [f"accept-battle {where}"]
        return [f"refuse-battle {where} slowest 3", f"refuse-battle {where} slowest 2",
                f"accept-battle {where}"]
    if step == "refuse-pursuit":
        return [f"pursue {game_map().name(turn.refusing)} with none"]
    if step == "refuse-withdraw":  # D-1: to Sidi Barrani; D-5: to Mersa Matruh
        where = game_map().name(turn.refusing)
        dest = {"Sollum": "Sidi Barrani", "Sidi Barrani": "Mersa Matruh"}.get(where, "")
        return [f"refuse-battle {where} -> {dest}"] if dest else []
    if step == "battles":
        return [f"battles {', '.join(game_map().name(b.hex) for b in state.position.battles)}"]
    return []


def _movement(state: game.State, n: int) -> list[str]:
    made = _moves(state)
    done = ["end movement"]
    if n == 1 and made == 0:  # D-1: a Regroup into Sollum, one unit from each hex
        return ["regroup cp Ft Capuzzo -> Sollum Savona, Brescia, Trento", *done]
    if n == 3 and made == 0:  # D-3: two units Attack Buq Buq, the third joins Sidi Omar
        fort = _units_in(state, "axis", "Ft Capuzzo")
        if len(fort) >= 3:
            return [f"group Ft Capuzzo -> Buq Buq {fort[0]}, {fort[1]}; -> Sidi Omar {fort[2]}", *done]
    if n == 4 and made == 0:  # D-4: the Pass Turn's free Withdrawal east of Sidi Barrani
        return ["withdraw regroup cp Buq Buq -> Sidi Barrani E1 7/4 Armd, 7 SG, 11H",
                "withdraw Buq Buq -> Sidi Barrani E1 7/4 Armd, 7 SG", *done]
    if n == 5:  # D-5: Sollum Attacks Sidi Barrani; Sidi Omar moves on Sofafi and Bir Habata
        sollum, omar = _units_in(state, "axis", "Sollum"), _units_in(state, "axis", "Sidi Omar")
        if made == 0 and len(sollum) >= 3:
            return [f"group Sollum -> Sidi Barrani {sollum[0]}, {sollum[1]}; -> Sidi Omar {sollum[2]}",
                    f"group Sollum -> Sidi Barrani {sollum[0]}, {sollum[1]}", *done]
        movement = movement_of(current_turn(state))
        fresh = [u for u in omar if not movement.has_moved(own_token(state, "axis", u))]
        if made == 1 and len(fresh) >= 2 and movement.moves_allowed >= 2:
            orders = []
            for a in fresh:
                for b in fresh:
                    for c in fresh:
                        short = _short_of(state, c, "Sofafi") if len({a, b, c}) == 3 else None
                        if short:
                            orders.append(f"group Sidi Omar -> Sofafi {a}; -> {short} {c}; -> Bir Habata {b}")
            return orders + [f"group Sidi Omar -> Sofafi {a}; -> Bir Habata {b}" for a in fresh for b in fresh
                             if a != b]
        if made == 2 and not movement.marches_announced:
            # D-5: the third unit reaches Sofafi by Forced March (RB 6.4)
            m, sofafi = game_map(), game_map().resolve("Sofafi")
            near = sorted(b.unit for b in state.position.blocks_of("axis") if b.unit and m.is_adjacent(b.hex, sofafi)
                          and movement.has_moved(b.token))
            return [f"forced-march {u} -> Sofafi" for u in near] + done
    return done


def _short_of(state: game.State, unit: str, place: str) -> str | None:
    """A hex next to ``place`` that ``unit`` reaches this Move (from which a
    Forced March takes it one hex further, RB 6.4), if it cannot reach ``place``."""
    m = game_map()
    token = own_token(state, "axis", unit)
    target = m.resolve(place)
    reach = reachability.reachable(m, state.position, movement_of(current_turn(state)), token,
                              block_speed(state, state.position.block(token))).paths
    if target in reach:
        return None
    near = sorted(h for h in reach if m.is_adjacent(h, target) and m.is_passable(h, target))
    return m.name(near[0]) if near else None


def _buildup(state: game.State, role: Side) -> list[str]:
    """D-8: the Allies bring their two Reinforcements to the front and send
    the damaged mechanized infantry to Base, rebuild it and bring it back;
    the Axis takes its damaged infantry to Bardia, ships it to Base, rebuilds
    it, ships it to Tobruk (Bardia's Port Capacity is used up) and sends it to
    Sofafi. One order at a time, BPs allowing; then the Buildup ends."""
    if early_candidates(state, role):  # RB 16.41 (the book does not mention it, G-49)
        return ["early arrival"]
    if due_count(state, role):
        return ["reinforce"]
    m = game_map()
    base = m.base(role)
    kinds: dict[str, list[str]] = {}
    for e in state.ledgers[role].entries:
        kinds.setdefault(e.token, []).append(e.kind)
    orders = []
    for b in sorted(state.position.blocks_of(role), key=lambda b: b.unit):
        if not b.unit or b.disrupted:
            continue
        unit = all_scenarios().roster.get(b.unit)
        done, damaged = kinds.get(b.token, []), b.cv < unit.max_cv
        steps = (unit.max_cv - b.cv) // unit.cv_per_step
        where = m.name(b.hex)
        if damaged and b.hex == base:
            orders.append(f"rebuild {b.unit} {steps}")
        elif role == "allied":
            if damaged and not done:
                orders.append(f"redeploy {b.unit} -> {m.name(base)}")
            elif b.hex == base and (not done or "replacement" in done) and "redeploy" not in done[1:]:
                orders.append(f"redeploy {b.unit} -> Mersa Matruh")
        elif damaged and not done and where != "Bardia":
            orders.append(f"redeploy {b.unit} -> Bardia")
        elif damaged and where == "Bardia" and "sea" not in done:
            orders.append(f"sea {b.unit} -> {m.name(base)}")
        elif b.hex == base and done and done[-1] == "replacement":
            orders += [f"sea {b.unit} -> Bardia", f"sea {b.unit} -> Tobruk"]
        elif where == "Tobruk" and done and done[-1] == "sea":
            orders.append(f"redeploy {b.unit} -> Sofafi")
    return [*orders, "end buildup"]


class _Trial:
    """The replay's ctx for a trial parse: ``fresh`` bytes and private choices
    are placeholders (pbem parses the chosen order again with real ones when
    it is added)."""

    def __init__(self, ctx) -> None:
        self._ctx = ctx

    def __getattr__(self, name: str):
        return getattr(self._ctx, name)

    def fresh(self) -> bytes:
        return bytes(32)

    def private_sample(self, purpose: str, n: int, k: int) -> tuple[int, ...]:
        return tuple(range(k))  # a placeholder too: pbem draws the real choice


class _Committing(_Trial):
    """The ctx as it will be once the order's own secrets are committed and
    its openings made (what pbem's event will carry)."""

    def __init__(self, ctx, secrets: dict[str, bytes], reveal: tuple[str, ...]) -> None:
        super().__init__(ctx)
        self._secrets, self._reveal = secrets, reveal

    def committed(self, label: str) -> bool:
        return label in self._secrets or self._ctx.committed(label)

    def opened(self, label: str) -> bool:
        return label in self._reveal or self._ctx.opened(label)

    def value(self, label: str) -> bytes | None:
        return self._secrets.get(label, self._ctx.value(label))


def _works(state: game.State, role: Side, text: str, ctx) -> bool:
    """Whether ``text`` is a legal order now, its secrets and openings included."""
    try:
        order = game.parse_order(state, role, text, _Trial(ctx))
    except (ValueError, KeyError):
        return False
    trial = _Committing(ctx, dict(order.secrets), tuple(order.reveal))
    return not game.check(state, order.action, ActingAs(trial, role))


def demo_orders(state: game.State, role: Side, ctx) -> list[str] | None:
    """The Demo's orders for ``role``'s decision now; None once the Demo is over."""
    if state.phase == "turn" and state.month >= 2 or game.outcome(state) is not None:
        return None
    if state.phase == "deploy":
        return list(AXIS_SETUP if role == "axis" else _allied_setup()) + ["end deployment"]
    for text in _script(state, role):
        if _works(state, role, text, ctx):
            return [text]
    legal = game.legal_orders(state, role, _Trial(ctx))
    for text in legal:  # the book's choice did not fit the dice: the first legal order
        if _works(state, role, text, ctx):
            return [text]
    return legal[:1] or None
