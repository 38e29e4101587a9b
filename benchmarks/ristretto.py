"""Benchmark: the shared deck's two groups, Ed25519's subgroup and Ristretto255, per operation.

Games of format versions 1-6 play in Ed25519's prime-order subgroup through
PyNaCl (libsodium): each point a player receives costs a subgroup check (a
multiplication by the group order) and the audit recomputes every shuffle
step. Ristretto255 is the same group with a prime-order encoding: decoding a
point is its whole check. PyNaCl does not expose it; rbcl (a wheel that
bundles libsodium with its Ristretto255 functions) does, and is pbem's
dependency for it: every game created since format version 7 plays in
Ristretto255 (docs/protocol.md decision 29, taken on these numbers).

In one run it times, per operation (median of --n): one Ed25519 signature
verification (cryptography, the floor of the issue 9 ratios), a point check
and a scalar multiplication in the group of play, and the same in
Ristretto255; then, for a campaign log with --checks received points and
--mults recomputed multiplications (the 1941-42 log of benchmarks/RESULTS.md:
3,490 and 3,360) and --events signatures, the deck's share of verify and of
the audit in units of that log's signature floor, in both groups.

Run from a checkout:  python benchmarks/ristretto.py [--n 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nacl import bindings as nb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pbem.deck import _rbcl  # noqa: E402


def per_call(fn: Callable[[bytes], object], items: list[bytes]) -> float:
    """Median seconds of one call over ``items`` (timed in batches of 50)."""
    times = []
    for i in range(0, len(items), 50):
        batch = items[i:i + 50]
        start = time.perf_counter()
        for item in batch:
            fn(item)
        times.append((time.perf_counter() - start) / len(batch))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="operations timed of each kind")
    parser.add_argument("--checks", type=int, default=3490, help="points checked by a verify of the log")
    parser.add_argument("--mults", type=int, default=3360, help="multiplications the audit recomputes")
    parser.add_argument("--events", type=int, default=386, help="signatures in the log (the floor)")
    args = parser.parse_args()

    key = Ed25519PrivateKey.generate()
    message = os.urandom(1000)
    sig, public = key.sign(message), key.public_key()
    floor = per_call(lambda _: public.verify(sig, message), [b""] * args.n)

    scalar = nb.crypto_core_ed25519_scalar_reduce(os.urandom(64))
    points = [nb.crypto_core_ed25519_from_uniform(os.urandom(32)) for _ in range(args.n)]
    groups = {"Ed25519 subgroup (PyNaCl, format versions 1-6)": (
        per_call(nb.crypto_core_ed25519_is_valid_point, points),
        per_call(lambda p: nb.crypto_scalarmult_ed25519_noclamp(scalar, p), points))}
    rbcl = _rbcl()  # pbem's own import of rbcl, which removes the library's temporary copy
    rpoints = [rbcl.crypto_core_ristretto255_random() for _ in range(args.n)]
    rscalar = rbcl.crypto_core_ristretto255_scalar_random()
    groups["Ristretto255 (rbcl, play: format versions 7 and 8)"] = (
        per_call(rbcl.crypto_core_ristretto255_is_valid_point, rpoints),
        per_call(lambda p: rbcl.crypto_scalarmult_ristretto255(rscalar, p), rpoints))

    log_floor = args.events * floor
    print(f"one Ed25519 verify: {floor * 1e6:.1f} us; the log's floor ({args.events} signatures): "
          f"{log_floor * 1e3:.1f} ms")
    for name, (check, mult) in groups.items():
        verify_share = args.checks * check / log_floor
        audit_share = (args.checks * check + args.mults * mult) / log_floor
        print(f"{name}: point check {check * 1e6:.1f} us, scalar multiplication {mult * 1e6:.1f} us; "
              f"deck share of verify {verify_share:.1f} x the floor (target for the whole verify 3), "
              f"of the audit {audit_share:.1f} x (target 10)")


if __name__ == "__main__":
    main()
