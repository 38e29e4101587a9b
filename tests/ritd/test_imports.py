"""Every module of rules/ritd imports on its own, first, in a fresh
interpreter (issue 19: a module that only works when another was imported
before it hides an import circle; `python -c "import rules.ritd.sequence"`
failed that way)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "rules" / "ritd"

PROBE = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "rules.ritd" or m.startswith("rules.ritd.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module("rules.ritd." + name)
    except Exception as exc:  # report every module that fails, not the first
        failed.append(f"{name}: {type(exc).__name__}: {exc}")
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


def test_every_ritd_module_imports_first_on_its_own() -> None:
    names = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")
    assert len(names) > 40
    done = subprocess.run([sys.executable, "-c", PROBE, *names], capture_output=True, text=True,
                          cwd=PACKAGE.parents[1], timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
