"""Mutation testing: which single-point changes to a module does no test notice?

    python scripts/mutants.py halma_env/notation.py --tests tests/test_notation.py tests/test_records.py

Each mutant changes one place of MODULE: a comparison flipped (``<``/``<=``, ``==``/``!=``, ``in``/``not in``,
``is``/``is not``), ``and``/``or`` swapped, a ``not`` dropped, ``+``/``-`` swapped, an integer constant moved by
one, a boolean flipped, a string constant changed, a ``raise``, ``continue`` or ``break`` made ``pass``, a
``return X`` made ``return None`` (error-message text, f-strings and docstrings are left alone). For each
mutant the given tests run (one process, ``-x``) in a private copy of the repository, so the working tree
is never changed, even when the run is interrupted. A mutant the tests pass on SURVIVED: either a
behaviour no test pins (write the test) or an equivalent change (note why). Session 33 used this on the
engine's notation, records and rules and on the training config and checkpoint modules
(docs/measurements.md, "Mutation testing").
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from agents.files import output_problem
from agents.player import check_number
from halma_env.files import write_atomic

ROOT = Path(__file__).resolve().parents[1]

FLIPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}


@dataclass
class Mutant:
    index: int
    line: int
    change: str
    text: str  # the whole mutated module


@dataclass
class Outcome:
    index: int
    line: int
    change: str
    status: str  # "killed", "SURVIVED", "timeout" or "syntax"
    seconds: float


def mutants(source: str) -> list[Mutant]:
    """Every single-point mutant of ``source``, in line order."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    parent = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def offset(lineno: int, col: int) -> int:  # ast columns count utf-8 bytes
        return starts[lineno - 1] + len(lines[lineno - 1].encode()[:col].decode())

    def left_alone(node: ast.AST) -> bool:
        """Inside a raise (its message), an f-string, or a docstring."""
        if isinstance(node, ast.Constant) and isinstance(parent.get(node), ast.Expr):
            return True
        while node in parent:
            node = parent[node]
            if isinstance(node, (ast.Raise, ast.JoinedStr)):
                return True
        return False

    found: list[tuple[int, str, str]] = []

    def replace(node: ast.expr | ast.stmt, text: str, change: str) -> None:
        assert node.end_lineno is not None and node.end_col_offset is not None
        a, b = offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)
        found.append((node.lineno, change, source[:a] + text + source[b:]))

    def replace_expr(node: ast.expr, new: ast.expr, change: str) -> None:
        replace(node, f"({ast.unparse(new)})", change)

    for node in ast.walk(tree):
        if isinstance(node, ast.expr) and left_alone(node):
            continue
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in FLIPPED:
                    new = copy.deepcopy(node)
                    new.ops[i] = FLIPPED[type(op)]()
                    replace_expr(node, new, f"{type(op).__name__} -> {FLIPPED[type(op)].__name__}: {ast.unparse(node)}")
        elif isinstance(node, ast.BoolOp):
            new_bool = copy.deepcopy(node)
            new_bool.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            replace_expr(node, new_bool, f"and/or swapped: {ast.unparse(node)}")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            replace_expr(node, node.operand, f"not dropped: {ast.unparse(node)}")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            new_bin = copy.deepcopy(node)
            new_bin.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            replace_expr(node, new_bin, f"+/- swapped: {ast.unparse(node)}")
        elif isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                replace(node, repr(not value), f"{value} -> {not value}")
            elif isinstance(value, int):
                replace(node, repr(value + 1), f"{value} -> {value + 1}")
                replace(node, repr(value - 1), f"{value} -> {value - 1}")
            elif isinstance(value, str) and value:
                replace(node, repr("X" + value), f"{value!r} -> {'X' + value!r}")
        elif isinstance(node, ast.Raise):
            replace(node, "pass", f"raise -> pass: {ast.unparse(node)[:60]}")
        elif isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            replace(node, "return None", f"return -> None: {ast.unparse(node)[:60]}")
        elif isinstance(node, (ast.Continue, ast.Break)):
            replace(node, "pass", f"{type(node).__name__.lower()} -> pass")
    found.sort(key=lambda m: m[0])
    return [Mutant(i, line, change, text) for i, (line, change, text) in enumerate(found)]


def repository_files() -> list[str]:
    """The files git tracks or would track (no runs/, caches or build output), relative to ROOT."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    return [name for name in listed if name and (ROOT / name).is_file()]


def copy_repository(dest: Path) -> None:
    """The repository's files (``repository_files``) copied to ``dest``."""
    for name in repository_files():
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, dest / name)


class BaselineFails(Exception):
    """The tests fail (or find nothing to run) on the unchanged module: every mutant would count as killed."""


def run(module: str, tests: list[str], timeout: float, only: set[int] | None) -> list[Outcome]:
    """``module`` is relative to ROOT: the mutants are written to the same path inside the copy."""
    path = ROOT / module
    original = path.read_text()
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="mutants-") as scratch:
        copy_repository(Path(scratch))
        target = Path(scratch) / module
        env = {"PYTHONPATH": scratch, "PYTHONDONTWRITEBYTECODE": "1"}

        def pytest() -> subprocess.CompletedProcess[bytes]:
            return subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:xdist",
                                   "-p", "no:cacheprovider", *tests], cwd=scratch, capture_output=True,
                                  timeout=timeout, env={**os.environ, **env})

        # a typo in --tests (no such file, a -k that selects nothing) fails every run: without this first
        # run on the unchanged module every mutant would be reported killed
        try:
            baseline = pytest()
        except subprocess.TimeoutExpired:
            raise BaselineFails(f"the tests take more than --timeout {timeout:g} s without any mutant") from None
        if baseline.returncode:
            # pytest's own reason (no such file, nothing selected) is in its last lines
            said = (baseline.stderr + baseline.stdout).decode(errors="replace")
            tail = "\n".join([line for line in said.splitlines() if line.strip()][-5:])
            raise BaselineFails(f"the tests fail without any mutant (pytest exit status {baseline.returncode}; "
                            f"check --tests):\n{tail}")
        for m in mutants(original):
            if only is not None and m.index not in only:
                continue
            started = time.perf_counter()
            try:
                compile(m.text, str(path), "exec")
            except SyntaxError:
                status = "syntax"
            else:
                target.write_text(m.text)
                try:
                    status = "killed" if pytest().returncode else "SURVIVED"
                except subprocess.TimeoutExpired:
                    status = "timeout"  # counts as killed: the tests noticed something (a hang)
                finally:
                    target.write_text(original)
            outcome = Outcome(m.index, m.line, m.change, status, round(time.perf_counter() - started, 1))
            outcomes.append(outcome)
            if status == "SURVIVED":
                print(f"survived #{m.index} line {m.line}: {m.change}", flush=True)
    return outcomes


def write_json(path: str, outcomes: list[Outcome]) -> None:
    """Written whole or not at all: an interrupted write leaves no truncated file behind."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, json.dumps([asdict(o) for o in outcomes], indent=1))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("module", help="the module to mutate, relative to the repository root (e.g. halma_env/notation.py)")
    p.add_argument("--tests", nargs="+", default=["tests"], metavar="TEST",
                   help="pytest arguments that select the tests to run on each mutant (default: all of tests/); "
                        "a -k selection goes in one quoted word: '-k rating or interval'")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per mutant before it counts as a hang")
    p.add_argument("--only", type=int, nargs="+", metavar="INDEX", help="run only these mutants (see --list)")
    p.add_argument("--lines", nargs="+", metavar="FIRST-LAST",
                   help="run (or list) only the mutants on these line ranges of the module, e.g. 773-851 868-971")
    p.add_argument("--list", action="store_true", help="list the mutants and stop")
    p.add_argument("--json", metavar="FILE", help="write every outcome to FILE")
    args = p.parse_args(argv)
    path = (ROOT / args.module).resolve()
    # relative to the repository, whatever was given: an absolute path would put each mutant into the working
    # tree (ROOT / "/abs" is "/abs") while the tests ran on the unchanged copy, and every mutant would survive
    module = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else None
    if module is None or path.suffix != ".py" or module not in repository_files():
        p.error(f"module {args.module!r} is not a python file of this repository")
    try:
        check_number("--timeout", args.timeout, strict=True)
    except ValueError as exc:
        p.error(str(exc))
    ranges = []
    for text in args.lines or []:
        first, _, last = text.partition("-")
        if not (first.isdigit() and last.isdigit() and 1 <= int(first) <= int(last)):
            p.error(f"--lines takes ranges FIRST-LAST of line numbers (1 <= FIRST <= LAST), got {text!r}")
        ranges.append((int(first), int(last)))
    every = mutants(path.read_text())
    unknown = sorted(set(args.only or []) - {m.index for m in every})
    if unknown:  # not dropped quietly: a typo would leave a mutant unrun
        p.error(f"no mutant of the module matches --only {' '.join(map(str, unknown))}: it has mutants #0 to "
                f"#{len(every) - 1} (see --list)")
    chosen = [m for m in every
              if (not args.only or m.index in args.only) and (not ranges or any(a <= m.line <= b for a, b in ranges))]
    if not chosen:
        p.error("no mutant of the module matches --only/--lines (see --list)")
    if args.list:
        for m in chosen:
            print(f"#{m.index} line {m.line}: {m.change}")
        return 0
    problem = output_problem(args.json, "--json") if args.json else None
    if problem:  # now, not after a run of hours
        p.error(problem)
    try:
        outcomes = run(module, args.tests, args.timeout, {m.index for m in chosen})
    except BaselineFails as exc:
        p.error(str(exc))
    counts = {s: sum(o.status == s for o in outcomes) for s in ("killed", "timeout", "SURVIVED", "syntax")}
    print(f"{module}: {len(outcomes)} mutants, {counts['killed']} killed, {counts['timeout']} timed out, "
          f"{counts['SURVIVED']} survived, {counts['syntax']} not valid python")
    if args.json:
        write_json(args.json, outcomes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
