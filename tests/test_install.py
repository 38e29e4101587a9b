"""Packaging: a plain (non-editable) install into a fresh venv works, with its package data."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pbem

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.install
def test_plain_install_into_a_fresh_venv_runs_and_finds_its_data(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info",
                                                               "__pycache__", ".pytest_cache", ".hypothesis"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(src)], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr
    shutil.rmtree(src)  # the installed copy must not depend on the source tree
    version = subprocess.run([str(venv / "bin" / "pbem"), "--version"], capture_output=True, text=True,
                             cwd=tmp_path)
    assert version.returncode == 0 and pbem.__version__ in version.stdout
    probe = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import importlib.resources as r, rules.ritd.datafiles as d;"
         "print(sorted(p.name for p in r.files('pbem.templates').iterdir() if p.name.endswith('.j2')));"
         "print([len(d.read_bytes(n)) > 0 for n in d.DATA_FILES])"],
        capture_output=True, text=True, cwd=tmp_path)
    assert probe.returncode == 0, probe.stderr
    assert "False" not in probe.stdout.splitlines()[1]
    listed = subprocess.run([str(venv / "bin" / "pbem"), "rules", "list"], capture_output=True, text=True,
                            cwd=tmp_path)
    assert listed.returncode == 0 and "ritd" in listed.stdout
