"""Benchmark: the exact shared deck (pbem/deck.py) in both of its groups.

Issue 10 point 6: a full monthly reshuffle and deal of 6 cards, per player,
divided by one Ed25519 verification, in the RFC 3526 2048-bit MODP group
and in Ed25519's prime-order subgroup (the group of play), through the same
pbem.deck functions (``monthly``). Also:

Times a full shuffle round of the 42-card RitD deck (all four steps, both
players, with the receiver's checks of every step), a draw of 16 cards (the
opponent's key checked against its commitment, the drawer's key removed) and
the audit of the round, and, in the same run, one Ed25519 verification
(cryptography's Ed25519PublicKey.verify); prints each time and its ratio to
that verification.

With PyNaCl installed (`pip install pynacl`; not a dependency of pbem), it
also plays the same four-step round in the prime-order subgroup of Ed25519
through libsodium (points from `crypto_core_ed25519_from_uniform`, keys
scalars mod l inverted with `crypto_core_ed25519_scalar_invert`, every
received point checked with `crypto_core_ed25519_is_valid_point`, which
rejects points outside the prime-order subgroup): the comparison issue 10
asks for before choosing the group.

Run from a checkout:  python benchmarks/deck.py [--cards 42] [--draws 16]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
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
    for group, name in ((D.MODP2048, "MODP 2048"), (D.ED25519, "Ed25519 subgroup (format versions 1-6)"),
                        (D.RISTRETTO255, "Ristretto255 (play, format versions 7 and 8)")):
        first, second, deal = monthly(group, n)
        total = first + second + deal
        print(f"monthly reshuffle + deal of 6, {name}: first {first * 1e3:.1f} ms, second {second * 1e3:.1f} ms "
              f"(each with its checks of the other's steps), deal {deal * 1e3:.1f} ms; total {total * 1e3:.1f} ms "
              f"= {total / best:.0f} Ed25519 verifications")
    ec = ed25519_round(n, args.draws)
    if ec is None:
        print("Ed25519 subgroup: PyNaCl is not installed (pip install pynacl), not measured")
        return
    t_mult, per_ec, t_draw_ec = ec
    print(f"one Ed25519 scalar multiplication (libsodium, noclamp): {t_mult * 1e6:.0f} us "
          f"({t_exp / t_mult:.0f} times faster than the modexp)")
    print(f"Ed25519 subgroup shuffle of {n} cards, both players, received points checked: {sum(per_ec) * 1e3:.1f} ms "
          f"(first {(per_ec[0] + per_ec[2]) * 1e3:.1f} ms, second {(per_ec[1] + per_ec[3]) * 1e3:.1f} ms); "
          f"draw of {args.draws}: {t_draw_ec * 1e3:.1f} ms")
    print(f"ratios to one verify: Ed25519 shuffle {sum(per_ec) / best:.0f}, draw {t_draw_ec / best:.0f}; "
          f"MODP shuffle / Ed25519 shuffle {t_shuffle / sum(per_ec):.0f}")


def monthly(group, n: int) -> tuple[float, float, float]:
    """A month of the shared deck as RitD plays it, through pbem.deck: round 1
    of ``n`` fresh cards (untimed), 10 cards dealt and 4 of them spent; then
    the timed Resupply: a reshuffle of the undealt cards and the 4 returned
    ones (carried, each player stripping its old per-card keys), each step
    checked by its receiver (``check_step``), and a deal of 6 (the opponent's
    keys checked against their commitments, the drawer unlocking its cards).
    Returns seconds for the first player, the second, and the deal."""
    game = D.new_seed()
    history: dict[str, D.DeckRound] = {}
    resolve = D.history_resolver(group, history)
    sa1, sb1, sa2, sb2 = (D.new_seed() for _ in range(4))
    src1 = [D.Card(label=f"real-{i}" if i < 2 * n // 3 else f"dummy-{i}") for i in range(n)]
    done: list[D.Step] = []
    for i in range(4):
        done.append(D.make_step(group, game, "s1", src1, done, sa1 if i % 2 == 0 else sb1, resolve))
    history["s1"] = D.DeckRound(steps=done)
    src2 = [D.Carry(round="s1", pos=p) for p in range(10, n)] + [D.Carry(round="s1", pos=p) for p in range(4)]
    done = []
    spent = [0.0, 0.0]
    for i in range(4):
        t = time.perf_counter()
        seed, old = (sa2, {"s1": sa1}) if i % 2 == 0 else (sb2, {"s1": sb1})
        step = D.make_step(group, game, "s2", src2, done, seed, resolve, old)
        spent[i % 2] += time.perf_counter() - t
        t = time.perf_counter()
        D.check_step(group, src2, done, step)  # the other player receives it
        spent[1 - i % 2] += time.perf_counter() - t
        done.append(step)
    history["s2"] = D.DeckRound(steps=done)
    t = time.perf_counter()
    for pos in range(6):
        D.draw_card(group, game, history, "s2", pos, D.FIRST, sa2, D.deal_key(group, game, "s2", sb2, D.FIRST, pos))
    return spent[0], spent[1], time.perf_counter() - t


def ed25519_round(n: int, draws: int) -> tuple[float, list[float], float] | None:
    """The four steps of pbem/deck.py's round (global key, permute; per-card
    keys, permute) in the prime-order subgroup of Ed25519, with each
    receiver's check that every point is valid and distinct, and ``draws``
    cards unlocked by the drawer. Returns (one multiplication, seconds per
    step, seconds for the draws)."""
    try:
        from nacl import bindings as nb
    except ImportError:
        return None
    mult, valid = nb.crypto_scalarmult_ed25519_noclamp, nb.crypto_core_ed25519_is_valid_point
    inv, smul = nb.crypto_core_ed25519_scalar_invert, nb.crypto_core_ed25519_scalar_mul

    def scalar() -> bytes:
        return nb.crypto_core_ed25519_scalar_reduce(os.urandom(64))

    cards = [nb.crypto_core_ed25519_from_uniform(hashlib.sha256(b"card%d" % i).digest()) for i in range(n)]
    rng = random.Random(1)
    a, b = scalar(), scalar()
    a_k, b_k = [scalar() for _ in range(n)], [scalar() for _ in range(n)]
    per: list[float] = []

    def timed_step(make) -> list[bytes]:
        t = time.perf_counter()
        out = make()
        if not all(valid(x) for x in out) or len(set(out)) != len(out):  # the receiver's check
            raise AssertionError("bad step")
        per.append(time.perf_counter() - t)
        return out

    x1 = timed_step(lambda: [mult(a, c) for c in cards])
    x2 = timed_step(lambda: rng.sample([mult(b, x) for x in x1], n))
    x3 = timed_step(lambda: [mult(smul(a_k[k], inv(a)), x) for k, x in enumerate(rng.sample(x2, n))])
    x4 = timed_step(lambda: [mult(smul(b_k[k], inv(b)), x) for k, x in enumerate(x3)])
    t = time.perf_counter()
    for k in range(draws):  # the dealt key b_k is published; the drawer removes both layers
        card = mult(inv(smul(a_k[k], b_k[k])), x4[k])
        if card not in cards:
            raise AssertionError("a dealt card is no card")
    t_draw = time.perf_counter() - t
    p = cards[0]
    t = time.perf_counter()
    for _ in range(200):
        mult(a, p)
    return (time.perf_counter() - t) / 200, per, t_draw


if __name__ == "__main__":
    main()
