"""Run a `pbem` command with every secret drawn from a seed: the same command gives the same bytes.

For benchmarks only (benchmarks/campaign.py plays its campaign through it):
`pbem selfplay --seed N` fixes the bots' choices, but the deck's seeds, the
dice entropy, the salts and the players' keys come from the operating
system, so without this every self-play of the 1941-42 campaign is another
game (340 to 357 events in one session) and runs of the benchmark measure
different logs. Here, in this process only, ``os.urandom`` and
``Identity.generate`` draw from SHA-256 of the seed and a counter. Never use
it for a game anyone plays: everything secret in it is known to whoever
knows the seed.

The hash of a Python ``str`` changes from process to process unless
PYTHONHASHSEED is set; this script runs itself again with PYTHONHASHSEED=0 if
it is not, so that no set's order can differ between two runs.

Run from a checkout:  python benchmarks/reproducible.py SEED selfplay --rules ritd ...
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path


class Drbg:
    """SHA-256(seed, counter) blocks, read in order."""

    def __init__(self, seed: bytes) -> None:
        self.seed, self.counter, self.buffer = seed, 0, b""

    def read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            block = hashlib.sha256(b"pbem/benchmark/reproducible\x00" + self.seed
                                   + self.counter.to_bytes(8, "big")).digest()
            self.buffer += block
            self.counter += 1
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__.splitlines()[-1].strip())
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable, *sys.argv], dict(os.environ, PYTHONHASHSEED="0"))
    seed, argv = sys.argv[1], sys.argv[2:]
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    drbg = Drbg(seed.encode("utf-8"))
    os.urandom = drbg.read  # every pbem module reads os.urandom at call time

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from pbem import identity
    from pbem.cli import main as pbem_main

    def generate(cls: type[identity.Identity], name: str = "") -> identity.Identity:
        return cls(Ed25519PrivateKey.from_private_bytes(drbg.read(32)), name)

    identity.Identity.generate = classmethod(generate)  # type: ignore[method-assign, assignment]
    raise SystemExit(pbem_main(argv))


if __name__ == "__main__":
    main()
