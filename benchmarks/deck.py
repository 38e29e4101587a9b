"""Benchmark: the exact shared deck (pbem/deck.py) in the RFC 3526 2048-bit group.

Times a full shuffle round of the 42-card RitD deck (all four steps, both
players, with the receiver's checks of every step), a draw of 16 cards (the
opponent's key checked against its commitment, the drawer's key removed) and
the audit of the round, and, in the same run, one Ed25519 verification
(cryptography's Ed25519PublicKey.verify); prints each time and its ratio to
that verification.

Run from a checkout:  python benchmarks/deck.py [--cards 42] [--draws 16]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402

from pbem import deck as D  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=42)
    parser.add_argument("--draws", type=int, default=16)
    args = parser.parse_args()
    g, game = D.MODP2048, D.new_seed()
    n = args.cards
    sources = [D.Card(label=f"real-{i}" if i < 2 * n // 3 else f"dummy-{i}") for i in range(n)]
    sa, sb = D.new_seed(), D.new_seed()
    history: dict[str, D.DeckRound] = {}
    resolve = D.history_resolver(g, history)

    done: list[D.Step] = []
    per_step = []
    t0 = time.perf_counter()
    for i in range(4):
        t = time.perf_counter()
        step = D.make_step(g, game, "b", sources, done, sa if i % 2 == 0 else sb, resolve)
        D.check_step(g, sources, done, step)
        done.append(step)
        per_step.append(time.perf_counter() - t)
    t_shuffle = time.perf_counter() - t0
    history["b"] = D.DeckRound(steps=done)

    t0 = time.perf_counter()
    for pos in range(args.draws):
        D.draw_card(g, game, history, "b", pos, D.FIRST, sa, D.deal_key(g, game, "b", sb, D.FIRST, pos))
    t_draw = time.perf_counter() - t0

    ops = D.open_all(g, game, "b", sa, D.FIRST, n) + D.open_all(g, game, "b", sb, D.SECOND, n)
    t0 = time.perf_counter()
    D.audit_deck(g, game, [history["b"]], ops, [], ("first", "second"))
    t_audit = time.perf_counter() - t0

    key = Ed25519PrivateKey.generate()
    public, message = key.public_key(), b"x" * 200
    signature = key.sign(message)
    best = float("inf")
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(500):
            public.verify(signature, message)
        best = min(best, (time.perf_counter() - t) / 500)
    x = D.encode_card(g, game, "x")
    t = time.perf_counter()
    for k in range(10):
        pow(x, g.q - 1 - k, g.p)
    t_exp = (time.perf_counter() - t) / 10

    print(f"one 2048-bit modexp (full exponent): {t_exp * 1e3:.1f} ms")
    print(f"shuffle of {n} cards, both players: {t_shuffle:.2f} s "
          f"(steps {', '.join(f'{s:.2f}' for s in per_step)} s; "
          f"first {per_step[0] + per_step[2]:.2f} s, second {per_step[1] + per_step[3]:.2f} s)")
    print(f"draw of {args.draws} cards: {t_draw:.2f} s")
    print(f"audit of the round: {t_audit:.2f} s")
    print(f"Ed25519 verify: {best * 1e6:.1f} us")
    print(f"ratios to one verify: shuffle {t_shuffle / best:.0f}, draw {t_draw / best:.0f}, "
          f"audit {t_audit / best:.0f}")


if __name__ == "__main__":
    main()
