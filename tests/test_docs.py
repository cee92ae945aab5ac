"""The README's and the docs' examples as a reader would use them.

- every ``>>>`` example (a ``pycon`` block, python-chess's README style) prints what is shown;
- every ``python`` block runs as written, in a fresh namespace and an empty working directory, after
  the few lines of set-up a fragment needs (``SETUP``), with fewer steps where it would train for
  long (``SHORTENED``), unless ``NOT_RUN`` says why it cannot;
- every ``halma ...`` command line, in shell blocks and inline code, parses with today's CLI, so a
  renamed flag or a dropped choice cannot linger in the documentation.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import re
import shlex
from pathlib import Path

import pytest

from agents.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)

# Blocks are named by (file, text found in the block and in no other block of that file).

# Fragments that continue from text around them: the lines run before them.
SETUP = {
    ("docs/environment.md", 'env.set_cpu("player_1", "greedy")'): (
        "import halma_env\nenv = halma_env.env(variant='star', num_players=2)\nenv.reset(seed=0)\n"
    ),
    ("docs/export.md", "from agents.opponent import load_opponent"): (
        "from agents.export import export_checkpoint\n"
        "from halma_env import Game, Rules\n"
        f"export_checkpoint({str(ROOT / 'agents/checkpoints/quickstart_star2.pt')!r}, 'hard', 'exports')\n"
        "game = Game(Rules('star', 2))\n"
    ),
    ("docs/rules.md", "from halma_env import Game, GameRecord, load_record"): (
        "from halma_env import Game, Rules\n"
        "game = Game(Rules('star', 2))\n"
        "for _ in range(24):\n"
        "    game.play(game.legal_moves()[0])\n"
    ),
}

# Blocks that would run for too long as written: run with these replacements.
SHORTENED = {
    ("docs/environment.md", "from sb3_contrib import MaskablePPO"): [  # 100,000 steps take about half an hour
        ("total_timesteps=100_000", "total_timesteps=512"),
        ("n_steps=256, batch_size=256", "n_steps=128, batch_size=128"),
    ],
    ("docs/measurements.md", "# python endless.py SECONDS"): [("float(sys.argv[1])", "0.5")],  # 25 s there
}

# Blocks that are not run, each with its reason.
NOT_RUN = {
    ("docs/batched.md", "# A/B recipe: python ab.py REV"):
        "a benchmark recipe that takes a git revision on its command line and runs for about a minute",
    ("docs/measurements.md", "# budgets.py: wall time of select_move under a budget"):
        "a timing measurement of about half a minute whose figures depend on the machine",
    ("docs/measurements.md", "# late_budgets.py: search's wall time per move under a 10 ms budget"):
        "a timing measurement of about a minute whose figures depend on the machine",
    ("docs/measurements.md", "# python cachebench.py CAP VARIANT SEATS GAMES"):
        "a measurement that takes its settings on its command line and rebinds the bots' table caches of the "
        "process it runs in",
    ("docs/measurements.md", "# python peak.py keep|plain"):
        "a measurement that changes the malloc settings of the process it runs in, for the process's life",
    ("docs/export.md", "test_vectors=make_test_vectors(OnnxPolicy(model))"):
        "a one-off that rewrote the shipped models' manifests (2026-12-07); test_export.py checks what it wrote",
}

# Placeholders the docs use in command lines, and a value of the right kind for each.
PLACEHOLDERS = {"S": "0", "N": "2", "G": "10", "V": "star", "A": "greedy", "B": "random"}


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _blocks(language: str) -> list[tuple[str, int, str]]:
    """(file, line number of the body's first line, body) of every fenced block in ``language``."""
    found = []
    for path in DOC_FILES:
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group(1) == language:
                found.append((_relative(path), text.count("\n", 0, match.start(2)) + 1, match.group(2)))
    return found


def _named(table: dict, file: str, body: str):
    """The entry of ``table`` that names this block, or None."""
    found = [value for (name_file, text), value in table.items() if name_file == file and text in body]
    return found[0] if found else None


PYTHON_BLOCKS = _blocks("python")
RUN_BLOCKS = [block for block in PYTHON_BLOCKS if _named(NOT_RUN, block[0], block[2]) is None]
PYCON_BLOCKS = _blocks("pycon")


@pytest.mark.parametrize(("file", "line", "body"), RUN_BLOCKS, ids=[f"{f}:{n}" for f, n, _ in RUN_BLOCKS])
def test_python_block_runs(file: str, line: int, body: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for old, new in _named(SHORTENED, file, body) or []:
        assert old in body, f"{file}:{line}: SHORTENED expects {old!r} in the block"
        body = body.replace(old, new)
    source = (_named(SETUP, file, body) or "") + body
    namespace: dict = {"__name__": "__main__"}  # as a script runs it: a block's main guard holds
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(source, f"{file}:{line}", "exec"), namespace)


def test_not_run_setup_and_shortened_name_one_block_each() -> None:
    for table in (SETUP, SHORTENED, NOT_RUN):
        for file, text in table:
            blocks = [n for f, n, body in PYTHON_BLOCKS if f == file and text in body]
            assert len(blocks) == 1, f"{file}: {text!r} names {len(blocks)} python blocks, not one"
    assert len(RUN_BLOCKS) >= 8  # the examples are found, so they are really run


@pytest.mark.parametrize(("file", "line", "body"), PYCON_BLOCKS, ids=[f"{f}:{n}" for f, n, _ in PYCON_BLOCKS])
def test_interactive_examples_print_what_is_shown(file: str, line: int, body: str) -> None:
    test = doctest.DocTestParser().get_doctest(body, {}, f"{file}:{line}", file, line)
    report = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test, out=report.write)
    assert runner.failures == 0, report.getvalue()
    assert runner.tries >= 3


def test_readme_has_interactive_examples() -> None:
    assert any(file == "README.md" for file, _, _ in PYCON_BLOCKS)


def _command_lines(text: str) -> list[str]:
    """The arguments after ``halma`` of every command line in shell blocks and inline code."""
    lines = []
    for match in FENCE.finditer(text):
        if match.group(1) not in ("", "bash", "sh", "console"):
            continue
        block = re.sub(r"\\\n\s*", " ", match.group(2))
        variables = dict(re.findall(r'^(\w+)="([^"]*)"$', block, re.M))
        for name, value in variables.items():
            block = block.replace(f"${name}", value)
        lines += block.splitlines()
    prose = FENCE.sub("", text)
    lines += [re.sub(r"\s*\n\s*", " ", code) for code in re.findall(r"`([^`]+)`", prose)]
    commands = []
    for line in lines:
        for part in re.split(r"&&|;|\|", line):
            found = re.match(r"^(?:\w+=\S+\s+)*halma\s+(.*)$", part.strip())
            if found:
                commands.append(re.sub(r"\s#\s.*$", "", found.group(1)).strip())
    return commands


def _is_reference(argv: list[str]) -> bool:
    """``halma train``, ``halma ladder --separation`` or ``halma bench ... --json`` in prose name a
    command or one of its options rather than run it."""
    return len(argv) == 1 or (len(argv) == 2 and argv[1].startswith("--")) or "..." in argv


@pytest.mark.parametrize("path", DOC_FILES, ids=[_relative(p) for p in DOC_FILES])
def test_command_lines_parse(path: Path) -> None:
    failures, parsed = [], 0
    for command in _command_lines(path.read_text(encoding="utf-8")):
        argv = [PLACEHOLDERS.get(arg, arg) for arg in shlex.split(command)]
        if argv[0] not in COMMANDS or _is_reference(argv):
            continue
        errors = io.StringIO()
        try:
            with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
                build_parser(load=argv[0]).parse_args(argv)
        except SystemExit as exit_:
            if exit_.code:
                failures.append(f"halma {command}\n    {errors.getvalue().strip().splitlines()[-1]}")
        parsed += 1
    assert not failures, f"{_relative(path)}: command lines today's CLI refuses:\n" + "\n".join(failures)
    if path.name in ("README.md", "training.md", "evaluation.md", "export.md"):
        assert parsed >= 5, f"only {parsed} command lines found in {_relative(path)}"


def test_the_bot_parameter_table_is_every_parameter_with_its_default() -> None:
    """docs/bots.md's table of parameters: every one a bot takes, no other, with the default it has."""
    from agents.registry import BOTS, bot_parameters

    text = (ROOT / "docs/bots.md").read_text()
    section = text.split("### Every parameter and its default", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \| ([^|]+?) \|", section, re.M)
    documented: dict[str, dict[str, object]] = {bot: {} for bot in BOTS}
    for bot, key, default in rows:
        assert key not in documented[bot], f"{bot} {key} listed twice"
        documented[bot][key] = None if default == "none" else float(default)
    assert documented == {bot: bot_parameters(bot) for bot in BOTS}
