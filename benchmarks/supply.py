"""Benchmark: a full Initial Supply Check (RB 12.7) costs a few signature checks.

Deploys every starting unit of the 1942 scenario (RB 18.6) on the real map:
the Axis 14 at El Agheila and 10 at Mersa Brega, the Allies 10 in Tobruk,
8 in Alexandria and the 10 of Free Deployment spread one per hex over Libya
and Egypt (every k-th playable hex in id order, deterministic). It then
times an Initial Supply Check for each side, and, in the same run, one
Ed25519 signature verification (cryptography's Ed25519PublicKey.verify),
and prints the ratio (target < 50 for the check of one side).

Run from a checkout:  python benchmarks/supply.py [--rounds N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import msgspec  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402

from rules.ritd.hexmap import HexMap, load_map  # noqa: E402
from rules.ritd.position import Block, Position  # noqa: E402
from rules.ritd.scenarios import HexZone, load_scenarios  # noqa: E402
from rules.ritd.supply import SupplyChoices  # noqa: E402
from rules.ritd.supply_checks import initial_supply_check  # noqa: E402


def crowded_1942(m: HexMap) -> Position:
    scenarios = load_scenarios()
    s = scenarios.get("1942")
    blocks: list[Block] = []
    for side in ("axis", "allied"):
        for group in s.side(side).setup:
            units = list(group.select(scenarios.roster, side))
            for zone in group.zones:
                if isinstance(zone, HexZone):
                    take = zone.max_units if zone.max_units is not None else len(units)
                    hexes = [m.resolve(h) for h in zone.hexes]
                    placed, units = units[:take], units[take:]
                    blocks += [Block(f"{side}-{u.name}", side, hexes[0], unit=u.name) for u in placed]
                else:
                    area: set[str] = set()
                    for name in zone.areas:  # type: ignore[union-attr]
                        area |= m.area_hexes(name)
                    taken = {b.hex for b in blocks if b.side != side}
                    cells = sorted(area - taken)
                    step = max(1, len(cells) // max(1, len(units)))
                    blocks += [
                        Block(f"{side}-{u.name}", side, cells[(i * step) % len(cells)], unit=u.name)
                        for i, u in enumerate(units)
                    ]
                    units = []
    forts = {p.hex: ("axis" if p.name == "Benghazi" else "allied") for p in m.places if p.is_fortress}
    return Position(blocks=tuple(blocks), fortresses=forts)


def best_of(fn, rounds: int, inner: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    m = load_map()
    pos = crowded_1942(m)
    choices = SupplyChoices()
    initial_supply_check(m, pos, "axis", choices)  # warm the per-map tables

    def both() -> None:
        for side in ("axis", "allied"):
            # a fresh Position each time: rules.ritd.supply keeps results per Position object
            _, report = initial_supply_check(m, msgspec.structs.replace(pos), side, choices)  # type: ignore[arg-type]
            assert report.ok

    key = Ed25519PrivateKey.generate()
    public = key.public_key()
    message = b"x" * 200
    signature = key.sign(message)

    t_check = best_of(both, args.rounds, 20) / 2
    t_verify = best_of(lambda: public.verify(signature, message), args.rounds, 500)
    occupied = len({b.hex for b in pos.blocks})
    print(f"position: {len(pos.blocks)} units in {occupied} hexes (1942 scenario, RB 18.6)")
    print(f"Initial Supply Check, one side: {t_check * 1e3:.3f} ms (both sides {2 * t_check * 1e3:.3f} ms)")
    print(f"Ed25519 verify: {t_verify * 1e6:.1f} us")
    print(f"ratio check/verify: {t_check / t_verify:.1f} (target < 50); both sides: {2 * t_check / t_verify:.1f}")


if __name__ == "__main__":
    main()
