"""Cold start of `pbem show` (issue 20: <= 3 x `python -c "import click"`,
benchmarks/coldstart.py and campaign.py measure it).

- A real `pbem show` in a fresh interpreter does not import importlib.metadata
  (with email, zipfile and csv: the largest avoidable import), nor
  cryptography's serialization module (SSH, RSA, DSA, EC code): the game's
  rules are found by reading pbem's own entry_points.txt directly.
- That reader finds the file importlib.metadata finds, in the layouts of a
  wheel install, an editable install and a checkout with its egg-info, and
  leaves every case it cannot tell to importlib.metadata (the fallback).
- Its parser reads entry_points.txt exactly as importlib.metadata does, and
  its entry points load what importlib.metadata's load.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from pbem import rulesapi
from pbem.cli import cli
from pbem.errors import NotFound
from pbem.table import THROWAWAY_PASSPHRASE

ROOT = Path(__file__).resolve().parents[1]

#: Modules a cold `pbem show` must not load (issue 20; RESULTS.md, cold show).
AVOIDED = ("importlib.metadata", "email", "csv", "cryptography.hazmat.primitives.serialization",
           "importlib.resources", "secrets", "signal")

#: The rules' modules a cold `pbem show` without a draft does not need: the
#: order rules (rules.ritd.game imports them all), the Supply Lines, and
#: fractions (for the German unit value of RB 17.2).
AVOIDED_RULES = ("fractions", "rules.ritd.game", "rules.ritd.canonical", "rules.ritd.month_phase",
                 "rules.ritd.turn_orders", "rules.ritd.group_moves", "rules.ritd.supply")

#: Runs `pbem show -g GAME` as pbem.__main__ does, then reports on stderr (last
#: line, JSON) its exit code and which of the modules named in argv[2] it loaded.
CHILD = """
import json, sys
from pbem.cli import main
code = main(["show", "-g", sys.argv[1]])
print(json.dumps({"code": code, "loaded": [m for m in sys.argv[2].split(",") if m in sys.modules]}),
      file=sys.stderr)
"""


@pytest.fixture(scope="module")
def ritd_game(tmp_path_factory) -> Path:
    """A RitD Demo game a few events in, as the random bots played it."""
    out = tmp_path_factory.mktemp("coldstart") / "demo"
    result = CliRunner().invoke(cli, ["selfplay", "--rules", "ritd", "--scenario", "demo", "--seed", "3",
                                      "--out", str(out), "--max-events", "6"])
    assert result.exit_code == 0, result.output
    return out / "axis"


def cold_show(game: Path, modules: tuple[str, ...]) -> tuple[int, list[str], str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PBEM_PASSPHRASE=THROWAWAY_PASSPHRASE)
    env.pop("PBEM_TRACEBACK", None)
    done = subprocess.run([sys.executable, "-c", CHILD, str(game), ",".join(modules)], env=env,
                          capture_output=True, text=True, timeout=120)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], report["loaded"], done.stdout


def test_a_cold_show_of_a_real_game_imports_neither_importlib_metadata_nor_serialization(ritd_game):
    code, loaded, out = cold_show(ritd_game, AVOIDED + ("rules.ritd", "cryptography.hazmat.primitives.kdf.scrypt"))
    assert code == 0 and "you are axis" in out and "(Rommel in the Desert)" in out
    # The probe sees what it looks for: the game's rules and the key's scrypt are loaded.
    assert loaded == ["rules.ritd", "cryptography.hazmat.primitives.kdf.scrypt"]


def test_a_cold_show_from_the_replay_cache_imports_no_order_rule(ritd_game):
    """The Allied player owes nothing in this game (the Axis owes deck work,
    which his show composes and applies: that needs the order rules): his
    show restores the cache and renders it with rules.ritd.state and .view."""
    code, loaded, out = cold_show(ritd_game.parent / "allied", AVOIDED_RULES + ("rules.ritd.state", "rules.ritd.view"))
    assert code == 0 and "you are allied" in out and "(Rommel in the Desert)" in out
    assert loaded == ["rules.ritd.state", "rules.ritd.view"]


#: The hooks rules.ritd.RitdRules serves from the module of their rule, not
#: through rules.ritd.game: hook -> (module, name there, name in game).
DIRECT_HOOKS = {"SPEC": ("state", "SPEC", "SPEC"), "state_type": ("state", "State", "State"),
                "pending": ("steps", "pending", "pending"), "view": ("view", "view", "view"),
                "outcome": ("state", "outcome", "outcome"), "render_text": ("view", "render_text", "render_text")}


def test_the_hooks_a_show_calls_are_the_ones_rules_ritd_game_serves():
    """CurrentRitdRules reaches these hooks without importing rules.ritd.game: each is
    the very object game re-exports, so every command gets the same answer."""
    from rules.ritd import RULES, game

    for hook, (module, name, in_game) in DIRECT_HOOKS.items():
        mine = getattr(importlib.import_module(f"rules.ritd.{module}"), name)
        assert mine is getattr(game, in_game), hook
    assert RULES.SPEC is game.SPEC and RULES.state_type is game.State
    state = RULES.initial_state("1941", ())
    assert RULES.pending(state) == game.pending(state) and RULES.outcome(state) == game.outcome(state)
    view = RULES.view(state, "axis")
    assert view == game.view(state, "axis") and RULES.render_text(view) == game.render_text(view)


def test_the_entry_point_reader_finds_the_file_importlib_metadata_finds_here():
    text = rulesapi._own_entry_points_text()
    assert text is not None and text == importlib.metadata.distribution("pbem").read_text("entry_points.txt")
    ep = rulesapi._own_entry_point("ritd")
    assert ep is not None and ep.value == "rules.ritd:RULES" and ep.group == "pbem.rules"
    assert rulesapi._own_entry_point("ritd@5") is not None


# -- layouts: where the dist-info is, as importlib.metadata looks for it -------------------

ENTRY_POINTS = "[console_scripts]\npbem = pbem.entry:run\n\n[pbem.rules]\nritd = rules.ritd:RULES\n"


def dist_info(site: Path, name: str, text: str | None = ENTRY_POINTS) -> Path:
    info = site / name
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pbem\nVersion: 0.1.0\n")
    if text is not None:
        (info / "entry_points.txt").write_text(text)
    return info


def both(monkeypatch, path: list[Path]) -> tuple[str | None, str | None]:
    """(the reader's text, importlib.metadata's) with ``path`` as sys.path."""
    monkeypatch.setattr(sys, "path", [str(p) for p in path])
    importlib.invalidate_caches()
    try:
        theirs = importlib.metadata.distribution("pbem").read_text("entry_points.txt")
    except importlib.metadata.PackageNotFoundError:
        theirs = None
    return rulesapi._own_entry_points_text(), theirs


def test_a_wheel_install_layout(tmp_path, monkeypatch):
    """site-packages/pbem/ beside site-packages/pbem-0.1.0.dist-info/."""
    site = tmp_path / "site-packages"
    (site / "pbem").mkdir(parents=True)
    dist_info(site, "click-8.1.7.dist-info", "[console_scripts]\nclick = click:main\n")
    dist_info(site, "pbem-0.1.0.dist-info")
    mine, theirs = both(monkeypatch, [tmp_path / "absent", site])
    assert mine == theirs == ENTRY_POINTS


def test_an_editable_install_layout_and_a_checkout_with_its_egg_info(tmp_path, monkeypatch):
    """Editable: the dist-info in site-packages, the package in a checkout (which
    holds the pbem.egg-info the build left). The first on sys.path wins, as in
    importlib.metadata; a name that only starts with 'pbem' is another project."""
    site, checkout = tmp_path / "site-packages", tmp_path / "checkout"
    dist_info(site, "pbem_extra-1.0.dist-info", "[pbem.rules]\nritd = elsewhere:RULES\n")
    dist_info(site, "PBEM-0.1.0.dist-info")
    (checkout / "pbem").mkdir(parents=True)
    egg_text = ENTRY_POINTS + "paa = rules.paa:RULES\n"
    dist_info(checkout, "pbem.egg-info", egg_text)
    assert both(monkeypatch, [site]) == (ENTRY_POINTS, ENTRY_POINTS)
    assert both(monkeypatch, [checkout, site]) == (egg_text, egg_text)
    assert both(monkeypatch, [site, checkout]) == (ENTRY_POINTS, ENTRY_POINTS)


def test_what_the_reader_cannot_tell_is_left_to_importlib_metadata(tmp_path, monkeypatch):
    """No pbem distribution, one without entry_points.txt, a zip archive or an
    egg on sys.path: None, and _own_entry_point then asks importlib.metadata
    (same answer as before the reader existed)."""
    site = tmp_path / "site-packages"
    site.mkdir()
    assert both(monkeypatch, [site]) == (None, None)
    dist_info(site, "pbem-0.1.0.dist-info", None)
    assert both(monkeypatch, [site]) == (None, None)
    later = tmp_path / "later"
    dist_info(later, "pbem-0.1.0.dist-info")
    archive = tmp_path / "packed.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("pbem-0.1.0.dist-info/entry_points.txt", "[pbem.rules]\nritd = packed:RULES\n")
    assert both(monkeypatch, [archive, later]) == (None, "[pbem.rules]\nritd = packed:RULES\n")
    monkeypatch.setattr(sys, "path", [str(archive)])
    ep = rulesapi._own_entry_point("ritd")
    assert ep is not None and ep.value == "packed:RULES"  # found through importlib.metadata
    egg = tmp_path / "pbem-0.1.0-py3.11.egg"
    dist_info(egg, "EGG-INFO", "[pbem.rules]\nritd = egg:RULES\n")
    assert both(monkeypatch, [egg, later]) == (None, "[pbem.rules]\nritd = egg:RULES\n")
    monkeypatch.setattr(sys, "path", [tmp_path / "hook", str(later)])  # a Path object, not a string
    assert rulesapi._own_entry_points_text() is None


def test_another_finder_of_distributions_is_left_to_importlib_metadata(tmp_path, monkeypatch):
    """A meta path finder of its own (an import hook that provides metadata)
    comes before sys.path's directories for importlib.metadata: the reader
    does not guess what it would say."""
    elsewhere = dist_info(tmp_path / "hook", "pbem-9.dist-info", "[pbem.rules]\nritd = hooked:RULES\n")

    class Hook:
        @staticmethod
        def find_distributions(context):
            return [importlib.metadata.Distribution.at(elsewhere)] if context.name == "pbem" else []

    monkeypatch.setattr(sys, "meta_path", [Hook, *sys.meta_path])
    later = tmp_path / "later"
    dist_info(later, "pbem-0.1.0.dist-info")
    assert both(monkeypatch, [later]) == (None, "[pbem.rules]\nritd = hooked:RULES\n")


def test_a_malformed_entry_points_file_is_left_to_importlib_metadata(monkeypatch):
    monkeypatch.setattr(rulesapi, "_own_entry_points_text", lambda: "[pbem.rules]\nritd = rules.ritd:RULES\nbroken\n")
    assert rulesapi._parse_entry_points("[pbem.rules]\nritd = rules.ritd:RULES\nbroken\n") is None
    ep = rulesapi._own_entry_point("ritd")  # the installed distribution's, through importlib.metadata
    assert ep is not None and ep.value == "rules.ritd:RULES"


# -- the parser and the loader against importlib.metadata's ------------------------------

TEXTS = [
    ENTRY_POINTS,
    "",
    "ritd = before:ANY_GROUP\n[pbem.rules]\nritd = rules.ritd:RULES\n",
    "  [pbem.rules]  \n# a comment\n\n   ritd=rules.ritd:RULES   \n\"ritd@3\" = rules.ritd_v3:RULES\n",
    "[pbem.rules]\nritd@3 = rules.ritd_v3:RULES\nritd = a.b : c.d [x, y]\nritd = second:WINS_NOT\n",
    "[[pbem.rules]]\nx = a=b\n; y = semicolon:IS_NO_COMMENT\n[other]\nritd = other:GROUP\n",
    "[pbem.rules]\r\nwin = dows:LINES\r\n\r\n[g]\r\n",
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_parser_reads_entry_points_as_importlib_metadata_does(tmp_path, text):
    (tmp_path / "entry_points.txt").write_text(text, newline="")
    theirs = [(ep.group, ep.name, ep.value) for ep in importlib.metadata.Distribution.at(tmp_path).entry_points]
    mine = rulesapi._parse_entry_points(text)
    assert mine is not None and [(ep.group, ep.name, ep.value) for ep in mine] == theirs


@pytest.mark.parametrize("value", ["rules.ritd:RULES", "rules.ritd", "os.path:join", "os : path.join [extra]",
                                   "rules.ritd_v5:RULES"])
def test_an_entry_point_loads_what_importlib_metadata_loads(value):
    theirs = importlib.metadata.EntryPoint(name="x", value=value, group="pbem.rules").load()
    assert rulesapi._EntryPoint("x", value, "pbem.rules").load() is theirs


def test_an_entry_point_naming_no_object_is_a_clear_error():
    with pytest.raises(NotFound, match="'not an object!' is not module:attribute"):
        rulesapi._EntryPoint("bad", "not an object!", "pbem.rules").load()


def test_a_frozen_rules_version_of_pbem_is_found_without_scanning_every_distribution(monkeypatch):
    """load_version of a game started under a frozen version (ritd@5) reads pbem's
    own entry points; the full scan is only for plugins (and the error's list)."""
    def no_scan():
        raise AssertionError("scanned every installed distribution")

    monkeypatch.setattr(rulesapi, "_entry_points", no_scan)
    frozen = rulesapi.load_version("ritd", "5")
    assert frozen.SPEC.id == "ritd" and frozen.SPEC.version == "5"


def test_the_scenario_checks_select_by_label_code_as_the_roster_does():
    """Roster.with_appearance selects by appearance code from an index built once
    per roster (the scenario checks ask ~200 times, at every start): the same
    units in the same (roster) order as a scan of the roster, for every
    side and every set of up to three codes, repeated codes included."""
    import itertools

    from rules.ritd.units import load_units

    def scan(roster, side, codes):
        return tuple(u for u in roster if u.side == side and u.appearance in set(codes))

    packaged = load_units()
    for roster in (packaged, packaged.with_optional_i_tanks()):
        codes = sorted({u.appearance for u in roster}, key=str) + ["no such code", 99]
        for side in ("axis", "allied"):
            for n in (0, 1, 2, 3):
                for chosen in itertools.combinations(codes, n):
                    asked = (*chosen, *chosen[:1])
                    assert roster.with_appearance(side, *asked) == scan(roster, side, asked)
    assert packaged.with_appearance("axis", "S") != ()  # the probe selects something


# -- the decoded twins of the data files read at every start (rules.ritd.datafiles) ------

REGENERATE = os.environ.get("PBEM_REGENERATE_GOLDEN") == "1"


@pytest.mark.parametrize("name", ["map.toml", "scenarios.toml", "units.toml"])
def test_a_data_file_read_at_every_start_has_a_current_decoded_twin(name):
    """The twin is made from the file's exact bytes (PBEM_REGENERATE_GOLDEN=1
    rewrites it after the TOML changed), and decodes to exactly what parsing
    the TOML gives, as the loaders' own types and as plain values."""
    from rules.ritd import datafiles, hexmap, scenarios, units

    assert name in datafiles.TWINNED
    data = datafiles.read_bytes(name)
    path = ROOT / "rules" / "ritd" / "data" / datafiles.twin_name(name)
    if REGENERATE:
        path.write_bytes(datafiles.twin_bytes(name, data))
    assert path.read_bytes() == datafiles.twin_bytes(name, data), (
        f"{path.name} is not {name}'s twin: run PBEM_REGENERATE_GOLDEN=1 pytest tests/test_coldstart.py")
    type_ = {"map.toml": hexmap._MapFile, "scenarios.toml": scenarios._ScenariosFile, "units.toml": units._UnitsFile}[name]
    fast = datafiles.from_twin(name, data, type_)
    assert fast is not None and fast == msgspec.toml.decode(data, type=type_)
    assert datafiles.from_twin(name, data, dict) == msgspec.toml.decode(data)


def test_a_twin_is_used_only_for_the_bytes_it_was_made_from(monkeypatch):
    """Other bytes (an edited file, a test's altered copy), a missing twin or one
    that does not decode: None, and the loaders parse the TOML (their errors
    name the entry as before)."""
    from rules.ritd import datafiles, scenarios
    from rules.ritd.datafiles import DataError

    data = datafiles.read_bytes("scenarios.toml")
    assert datafiles.from_twin("scenarios.toml", data, scenarios._ScenariosFile) is not None
    edited = data.replace(b"hand_limit = 16", b"hand_limit = 17")
    assert edited != data and datafiles.from_twin("scenarios.toml", edited, scenarios._ScenariosFile) is None
    assert scenarios.load_scenarios_bytes(edited).supply_deck.hand_limit == 17
    assert datafiles.from_twin("scenarios.toml", data, int) is None  # does not decode into the type
    assert datafiles.from_twin("fire_table.toml", datafiles.read_bytes("fire_table.toml"), dict) is None  # no twin
    broken = data.replace(b'[[calendar]]\nid = "1941"', b'[[calendar]]\nid = 1941', 1)
    assert broken != data
    with pytest.raises(DataError, match=r"scenarios.toml: invalid entry: Expected `str`, got `int` - at `\$.calendar\[0\].id`"):
        scenarios.load_scenarios_bytes(broken)
    real = datafiles.read_bytes
    monkeypatch.setattr(datafiles, "read_bytes", lambda name: b"{" if name.endswith(".json") else real(name))
    assert datafiles.from_twin("scenarios.toml", data, scenarios._ScenariosFile) is None  # a damaged twin
    with pytest.raises(ValueError, match="a date, time, inf or nan"):
        datafiles.twin_bytes("x.toml", b"when = 1979-05-27T07:32:00Z\n")
    with pytest.raises(ValueError, match="a date, time, inf or nan"):
        datafiles.twin_bytes("x.toml", b"x = [1.5, inf]\n")


# -- package data without importlib.resources (pbem.rulesapi.package_data) ---------------------


def test_package_data_reads_what_importlib_resources_reads():
    """Every data file of every rules package of this checkout, the same bytes;
    a missing file raises as importlib.resources does."""
    import importlib.resources

    from pbem.rulesapi import package_data

    packages = sorted(p.parent.parent.name for p in (ROOT / "rules").glob("*/data/__init__.py"))
    assert {"ritd", "ritd_v5", "paa"} <= set(packages)
    for name in packages:
        package = f"rules.{name}.data"
        files = [f for f in importlib.resources.files(package).iterdir() if f.name.endswith((".toml", ".json"))]
        assert files
        for f in files:
            assert package_data(package, f.name) == f.read_bytes(), (package, f.name)
    with pytest.raises(FileNotFoundError):
        package_data("rules.ritd.data", "no-such-file.toml")
    # a name that is a path: left to importlib.resources, which reads it
    assert package_data("rules.ritd.data", "../data/map.toml") == \
        importlib.resources.files("rules.ritd.data").joinpath("../data/map.toml").read_bytes()
