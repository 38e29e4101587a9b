"""benchmarks/reproducible.py: a self-play whose every secret comes from the seed
is the same game, byte for byte, on every run (benchmarks/campaign.py measures
one game, not another each run); another seed gives another game."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "reproducible.py"


def _play(out: Path, seed: str) -> dict[str, bytes]:
    subprocess.run([sys.executable, str(SCRIPT), seed, "selfplay", "--rules", "ritd", "--scenario", "demo",
                    "--seed", "7", "--out", str(out), "--max-events", "30"],
                   check=True, capture_output=True)
    events = out / "axis" / "events"
    return {p.name: p.read_bytes() for p in sorted(events.iterdir())}


def test_the_same_seed_plays_the_same_log_and_another_seed_another(tmp_path):
    first = _play(tmp_path / "a", "s1")
    assert len(first) >= 20
    assert _play(tmp_path / "b", "s1") == first
    other = _play(tmp_path / "c", "s2")
    assert other["000000.json"] != first["000000.json"]  # other keys, nonce and entropy from the first event on
