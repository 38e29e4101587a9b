"""Mutation testing for one module, on demand (not in CI).

    python tests/mutate.py MODULE_PATH [--tests PATH_OR_NODEID ...] [--sample N]
        [--seed S] [--timeout SECONDS] [--equivalents FILE] [--list] [--jobs J]

Run from the repository root with the venv's python. The module's mutation
points are enumerated from its syntax tree in source order and numbered; each
one changes one small thing (an operator, a constant, a check, a return
value, a slice bound). `--sample N` picks N of them with `--seed` (default
all). Each mutant is written into a private temporary copy of the repository
(never into the working tree, so that several people can run this at once),
and the related tests run there with this interpreter: `pytest -x -q -p
no:cacheprovider`, CI=true (Hypothesis draws the same examples each run),
PYTHONPATH=the copy so that the copy, not the editable install, is what gets
imported. A sanity mutant that makes the module fail to import must be
killed, otherwise the run stops: it would measure nothing.

A mutant is killed when the tests fail, survives when they pass; a timeout
counts as killed and is reported apart. Survivors are printed with their line,
the original and the mutated text, and the key to use in the equivalents
file. The summary line is

    MODULE: killed K, survived S, equivalent E, timeout T, score P%

where P = killed (timeouts included) / (mutants - equivalent). Equivalent
mutants (no test can tell them apart from the original) are listed in
tests/mutation-equivalents.toml by module, line text and mutation, each with a
one-line reason; a listed mutant is not run.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import copy
import fnmatch
import glob
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_EQUIVALENTS = ROOT / "tests" / "mutation-equivalents.toml"

# The tests related to each module: what a mutant of it is run against by default.
# Glob patterns relative to the repository root; the first matching key wins.
RELATED_TESTS: dict[str, list[str]] = {
    # Quick known-answer and boundary tests first: with -x most mutants die in seconds.
    "pbem/commit.py": [
        "tests/test_vectors.py", "tests/test_trust_bounds.py", "tests/test_commit.py",
        "tests/test_merkle_sets.py", "tests/test_secret_dice.py",
    ],
    "pbem/dice.py": [
        "tests/test_vectors.py", "tests/test_trust_bounds.py", "tests/test_dice.py",
        "tests/test_secret_dice.py",
    ],
    "pbem/deck.py": [
        "tests/test_vectors.py", "tests/test_deck_bounds.py", "tests/test_deck_ed25519.py",
        "tests/test_deck.py",
    ],
    "pbem/game.py": [
        "tests/test_vectors.py", "tests/test_game_bounds.py", "tests/test_trust_bounds.py",
        "tests/test_game_flow.py", "tests/test_tamper.py", "tests/test_secret_dice.py",
        "tests/test_merkle_sets.py", "tests/test_dice.py", "tests/test_fuzz_receive.py",
        "tests/ritd/test_deck_cheats.py", "tests/test_game_guards.py", "tests/test_replay_api.py",
        "tests/test_sealed_orders.py", "tests/test_dice_batch.py", "tests/test_foreign_game.py",
        "tests/ritd/test_crafted_events.py",
    ],
    "pbem/identity.py": [
        "tests/test_vectors.py", "tests/test_trust_bounds.py", "tests/test_vault_identity.py",
    ],
    # Not test_crash.py's kill-at-every-write test (46 s): its quick tests only.
    "pbem/session.py": [
        "tests/test_session_bounds.py", "tests/test_game_flow.py", "tests/test_game_bounds.py",
        "tests/test_secret_dice.py", "tests/test_merkle_sets.py", "tests/test_tamper.py",
        "tests/test_store.py", "tests/test_cli.py", "tests/test_mail.py",
        "tests/test_crash.py::test_the_hook_lists_the_writes_of_send_and_receive_in_order",
        "tests/test_crash.py::test_send_killed_after_storing_its_event_is_finished_by_sending_again",
        "tests/test_crash.py::test_receive_killed_before_writing_its_automatic_answer_writes_it_when_retried",
        "tests/test_vectors.py", "tests/ritd/test_deck_cheats.py", "tests/test_replay_api.py",
        "tests/test_foreign_game.py", "tests/test_evidence.py", "tests/test_sealed_orders.py",
        "tests/test_special_files.py", "tests/test_os_errors.py", "tests/test_faults.py",
        "tests/test_composer_undo.py",
    ],
    "pbem/*.py": ["tests/test_*.py"],
    "rules/ritd/*.py": ["tests/ritd/test_*.py"],
}

CMP_SWAP = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
    ast.In: ast.NotIn, ast.NotIn: ast.In,
}
BIN_SWAP = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult,
    ast.LShift: ast.RShift, ast.RShift: ast.LShift,
    ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd, ast.BitXor: ast.BitOr,
}
SYMBOL = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Div: "/",
    ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>",
    ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.And: "and", ast.Or: "or",
}


@dataclass(frozen=True)
class Mutant:
    number: int
    line: int
    end_line: int
    col: int
    end_col: int
    description: str
    replacement: str  # source text that replaces lines[line..end_line][col:end_col]
    line_text: str
    occurrence: int = 0  # among mutants with the same line text and description

    @property
    def key(self) -> str:
        suffix = f" #{self.occurrence + 1}" if self.occurrence else ""
        return f"{self.line_text} :: {self.description}{suffix}"


def _skip_nodes(tree: ast.Module) -> set[int]:
    """Nodes never mutated: docstrings, annotations, f-string parts, `__future__` imports."""
    skip: set[int] = set()

    def mark(node: ast.AST | None) -> None:
        if node is not None:
            for sub in ast.walk(node):
                skip.add(id(sub))

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            mark(body[0])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            mark(node.returns)
            for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
                mark(a.annotation)
            for a in (node.args.vararg, node.args.kwarg):
                if a is not None:
                    mark(a.annotation)
        if isinstance(node, ast.AnnAssign):
            mark(node.annotation)
        if isinstance(node, ast.JoinedStr):
            mark(node)
        if isinstance(node, ast.ImportFrom):
            mark(node)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            mark(node)  # bare string statements (comments in disguise)
    return skip


def _candidates(tree: ast.Module) -> list[tuple[ast.AST, str, ast.AST | str]]:
    """(node, description, replacement node or source) for every mutation, in source order."""
    skip = _skip_nodes(tree)
    out: list[tuple[ast.AST, str, ast.AST | str]] = []
    nodes = [n for n in ast.walk(tree) if hasattr(n, "lineno") and id(n) not in skip]
    nodes.sort(key=lambda n: (n.lineno, n.col_offset, -(n.end_lineno or 0), -(n.end_col_offset or 0),
                              type(n).__name__))
    for node in nodes:
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                new = CMP_SWAP.get(type(op))
                if new:
                    m = copy.deepcopy(node)
                    m.ops[i] = new()
                    out.append((node, f"`{SYMBOL[type(op)]}` -> `{SYMBOL[new]}`", m))
        elif isinstance(node, ast.BoolOp):
            new_op = ast.Or if isinstance(node.op, ast.And) else ast.And
            m = copy.deepcopy(node)
            m.op = new_op()
            out.append((node, f"`{SYMBOL[type(node.op)]}` -> `{SYMBOL[new_op]}`", m))
        elif isinstance(node, (ast.BinOp, ast.AugAssign)):
            new = BIN_SWAP.get(type(node.op))
            if new:
                m = copy.deepcopy(node)
                m.op = new()
                out.append((node, f"`{SYMBOL[type(node.op)]}` -> `{SYMBOL[new]}`", m))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub, ast.Invert)):
            name = {ast.Not: "not", ast.USub: "-", ast.Invert: "~"}[type(node.op)]
            out.append((node, f"`{name}` removed", node.operand))
        elif isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                out.append((node, f"{v} -> {not v}", ast.Constant(not v)))
            elif isinstance(v, int):
                out.append((node, f"{v} -> {v + 1}", ast.Constant(v + 1)))
                if v not in (0, -1):
                    out.append((node, f"{v} -> 0", ast.Constant(0)))
            elif isinstance(v, str) and v:
                out.append((node, "string emptied", ast.Constant("")))
            elif isinstance(v, bytes) and v:
                out.append((node, "bytes emptied", ast.Constant(b"")))
        elif isinstance(node, ast.Slice):
            for part in ("lower", "upper"):
                bound = getattr(node, part)
                if bound is not None and not isinstance(bound, ast.Constant):
                    m = ast.BinOp(copy.deepcopy(bound), ast.Add(), ast.Constant(1))
                    out.append((bound, f"slice {part} bound +1", m))
        elif isinstance(node, ast.Subscript) and not isinstance(node.slice, (ast.Slice, ast.Constant, ast.Tuple)) \
                and isinstance(node.ctx, ast.Load) and isinstance(node.slice, (ast.Name, ast.BinOp)):
            m = ast.BinOp(copy.deepcopy(node.slice), ast.Add(), ast.Constant(1))
            out.append((node.slice, "index +1", m))
        elif isinstance(node, ast.Raise):
            out.append((node, "raise -> pass", "pass"))
        elif isinstance(node, ast.If):
            out.append((node.test, "if condition -> False", ast.Constant(False)))
            if not node.orelse:
                out.append((node.test, "if condition -> True", ast.Constant(True)))
        elif isinstance(node, ast.Return) and node.value is not None \
                and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            out.append((node, "return value -> None", "return None"))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            out.append((node, "call statement removed", "pass"))
        elif isinstance(node, ast.Assert):
            out.append((node, "assert removed", "pass"))
    return out


class Source:
    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.blines = [ln.encode("utf-8") for ln in self.lines]

    def offset(self, line: int, col: int) -> int:
        """Character offset of (1-based line, UTF-8 byte column)."""
        before = sum(len(ln) for ln in self.lines[: line - 1])
        return before + len(self.blines[line - 1][:col].decode("utf-8"))

    def replace(self, m: Mutant) -> str:
        start, end = self.offset(m.line, m.col), self.offset(m.end_line, m.end_col)
        return self.text[:start] + m.replacement + self.text[end:]


def enumerate_mutants(path: Path) -> tuple[Source, list[Mutant]]:
    src = Source(path.read_text(encoding="utf-8"))
    tree = ast.parse(src.text)
    mutants: list[Mutant] = []
    seen: dict[tuple[str, str], int] = {}
    for node, description, repl in _candidates(tree):
        if isinstance(repl, str):
            text = repl
        else:
            text = ast.unparse(repl)
            if not isinstance(node, (ast.stmt,)) and not isinstance(repl, ast.Constant):
                text = f"({text})"
        line_text = src.lines[node.lineno - 1].strip()
        occ = seen.get((line_text, description), 0)
        seen[(line_text, description)] = occ + 1
        m = Mutant(len(mutants) + 1, node.lineno, node.end_lineno, node.col_offset, node.end_col_offset,
                   description, text, line_text, occ)
        try:
            ast.parse(src.replace(m))
        except SyntaxError:
            continue
        mutants.append(m)
    # Number after filtering so that numbers are dense and stable for one source text.
    mutants = [Mutant(i + 1, *(getattr(m, f) for f in
                               ("line", "end_line", "col", "end_col", "description", "replacement",
                                "line_text", "occurrence")))
               for i, m in enumerate(mutants)]
    return src, mutants


def load_equivalents(path: Path, module: str) -> dict[str, str]:
    """key -> reason for the module's equivalent mutants."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = {}
    for entry in data.get("equivalent", []):
        if entry.get("module") != module:
            continue
        reason = entry.get("reason", "").strip()
        if not reason:
            raise SystemExit(f"{path}: equivalent mutant {entry!r} has no reason")
        out[f"{entry['line']} :: {entry['mutation']}"] = reason
    return out


def default_tests(module: str) -> list[str]:
    for pattern, tests in RELATED_TESTS.items():
        if fnmatch.fnmatch(module, pattern):
            if pattern == "rules/ritd/*.py":
                stem = Path(module).stem
                own = sorted(glob.glob(f"tests/ritd/test_{stem}*.py", root_dir=ROOT))
                if own:
                    return own
            return [t for pat in tests
                    for t in ([pat] if "::" in pat else sorted(glob.glob(pat, root_dir=ROOT)))]
    raise SystemExit(f"no related tests known for {module}: pass --tests")


IGNORE = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.pyc", ".pytest_cache",
                                ".hypothesis", "*.egg-info", "build", "dist", ".mypy_cache")


class Workspace:
    """A private copy of the repository in which one mutant at a time is tried."""

    def __init__(self, base: Path):
        self.root = Path(tempfile.mkdtemp(prefix="pbem-mutate-", dir=base))
        self.tree = self.root / "repo"
        shutil.copytree(ROOT, self.tree, ignore=IGNORE, symlinks=True)

    def run(self, module: str, text: str, tests: list[str], timeout: float) -> str:
        target = self.tree / module
        original = target.read_text(encoding="utf-8")
        target.write_text(text, encoding="utf-8")
        env = dict(os.environ, CI="true", PYTHONPATH=str(self.tree), PYTHONDONTWRITEBYTECODE="1",
                   PYTHONHASHSEED="0")
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
        try:
            proc = subprocess.run(cmd, cwd=self.tree, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=timeout, start_new_session=True)
            result = "survived" if proc.returncode == 0 else "killed"
            if proc.returncode == 5:
                raise SystemExit(f"no tests collected by {' '.join(tests)}")
        except subprocess.TimeoutExpired:
            result = "timeout"
        finally:
            target.write_text(original, encoding="utf-8")
        return result

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _terminate(signum, frame):  # SIGTERM ends the run like Ctrl-C: copies removed
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _terminate)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("module", help="module path relative to the repository root, e.g. pbem/dice.py")
    p.add_argument("--tests", nargs="+", help="test files or node ids (default: the module's related tests)")
    p.add_argument("--sample", type=int, help="run only N mutants, drawn with --seed (default: all)")
    p.add_argument("--seed", type=int, default=29, help="seed for --sample (default 29)")
    p.add_argument("--timeout", type=float,
                   help="seconds per mutant (default: 3 times the unmutated run, plus 10)")
    p.add_argument("--equivalents", type=Path, default=DEFAULT_EQUIVALENTS)
    p.add_argument("--list", action="store_true", help="list the mutants (the sample, if given) and exit")
    p.add_argument("--jobs", type=int, default=1, help="mutants run at once, each in its own copy")
    p.add_argument("--only", type=int, nargs="+", help="run only these mutant numbers")
    args = p.parse_args(argv)

    module = Path(args.module).as_posix()
    path = ROOT / module
    if not path.is_file():
        raise SystemExit(f"{module}: no such file under {ROOT}")
    src, mutants = enumerate_mutants(path)
    chosen = mutants
    if args.only:
        chosen = [m for m in mutants if m.number in set(args.only)]
    elif args.sample is not None and args.sample < len(mutants):
        chosen = sorted(random.Random(args.seed).sample(mutants, args.sample), key=lambda m: m.number)
    equivalents = load_equivalents(args.equivalents, module)
    stale = set(equivalents) - {m.key for m in mutants}
    for key in sorted(stale):  # the line changed: the entry must be judged again
        print(f"warning: {args.equivalents.name} lists a mutant {module} no longer has: {key}", file=sys.stderr)

    if args.list:
        for m in chosen:
            mark = "  [equivalent]" if m.key in equivalents else ""
            print(f"#{m.number} line {m.line}: {m.line_text}  --  {_mutation_key(m)}{mark}")
        print(f"{module}: {len(mutants)} mutants, {len(chosen)} listed")
        return 0

    tests = args.tests or default_tests(module)
    tests = [t for t in tests if "::" in t or (ROOT / t).exists()]
    print(f"{module}: {len(mutants)} mutants, running {len(chosen)}"
          f"{f' (sample seed {args.seed})' if len(chosen) < len(mutants) and not args.only else ''}"
          f" against {' '.join(tests)}", flush=True)

    base = Path(tempfile.gettempdir())
    jobs = max(1, args.jobs)
    spaces = [Workspace(base) for _ in range(jobs)]
    try:
        # The unmutated module must pass its tests in the copy (their time sets the
        # default timeout), and the sanity mutant, a module that cannot be imported,
        # must fail them: otherwise the tests do not import the copy and the run
        # would measure nothing.
        t0 = time.monotonic()
        if spaces[0].run(module, src.text, tests, args.timeout or 3600) != "survived":
            raise SystemExit(f"the unmutated {module} fails its tests: fix that first")
        baseline = time.monotonic() - t0
        if args.timeout is None:
            args.timeout = 3 * baseline + 10
        print(f"  unmutated run {baseline:.1f}s, timeout per mutant {args.timeout:.0f}s", flush=True)
        sanity = "raise ImportError('pbem mutate: sanity mutant')\n" + src.text
        if spaces[0].run(module, sanity, tests, args.timeout) == "survived":
            raise SystemExit("sanity mutant survived: the tests do not import the mutated copy")

        counts = {"killed": 0, "survived": 0, "equivalent": 0, "timeout": 0}
        to_run = []
        for m in chosen:
            if m.key in equivalents:
                counts["equivalent"] += 1
            else:
                to_run.append(m)

        def work(item: tuple[int, Mutant]) -> tuple[Mutant, str, float]:
            i, m = item
            t0 = time.monotonic()
            return m, spaces[i % jobs].run(module, src.replace(m), tests, args.timeout), time.monotonic() - t0

        # With several jobs each workspace must serve one mutant at a time.
        results: list[tuple[Mutant, str, float]] = []
        if jobs == 1:
            it = map(work, enumerate(to_run))
            for r in it:
                results.append(r)
                _report(r)
        else:
            for batch_start in range(0, len(to_run), jobs):
                batch = list(enumerate(to_run))[batch_start: batch_start + jobs]
                with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
                    for r in ex.map(work, batch):
                        results.append(r)
                        _report(r)
        for _, outcome, _ in results:
            counts[outcome] += 1
        survivors = [m for m, outcome, _ in results if outcome == "survived"]
        if survivors:
            print("\nSurvivors (add a test, or list the mutant in the equivalents file with a reason):")
            for m in survivors:
                print(f"  #{m.number} line {m.line}: {src.lines[m.line - 1].rstrip()}")
                print(f"      mutated: {_mutated_line(src, m)}")
                print(f"      key: line = {m.line_text!r}, mutation = {_mutation_key(m)!r}")
        effective = len(chosen) - counts["equivalent"]
        score = 100.0 * (counts["killed"] + counts["timeout"]) / effective if effective else 100.0
        print(f"{module}: killed {counts['killed']}, survived {counts['survived']}, "
              f"equivalent {counts['equivalent']}, timeout {counts['timeout']}, score {score:.0f}%")
        return 0
    finally:
        for s in spaces:
            s.close()


def _mutation_key(m: Mutant) -> str:
    return m.description + (f" #{m.occurrence + 1}" if m.occurrence else "")


def _mutated_line(src: Source, m: Mutant) -> str:
    text = src.replace(m)
    start = src.offset(m.line, 0)
    line_end = text.find("\n", start)
    return text[start: line_end if line_end >= 0 else None].strip()


def _report(r: tuple[Mutant, str, float]) -> None:
    m, outcome, seconds = r
    print(f"  #{m.number} line {m.line} {m.description}: {outcome} ({seconds:.1f}s)", flush=True)


if __name__ == "__main__":
    sys.exit(main())
