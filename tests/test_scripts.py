"""scripts/: every script's help and the commands its docstring and the docs quote, smoke runs of
scripts/train_loop_timing.py and scripts/dagger_search.py on tiny settings, their refusals of bad
input, and scripts/results.sh run against a stand-in ``halma`` that only records its commands."""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from agents.bots.greedy import GreedyBot
from agents.checkpoint import load_checkpoint, model_from_checkpoint
from agents.cli import COMMANDS, build_parser
from agents.registry import make_player
from tests.script_helpers import SCRIPTS, load_script

ROOT = Path(__file__).parents[1]
STAR2 = ROOT / "agents" / "checkpoints" / "star2.pt"
STAR3 = ROOT / "agents" / "checkpoints" / "star3.pt"
PYTHON_SCRIPTS = sorted(p.stem for p in SCRIPTS.glob("*.py"))


def run(script: str, *args: str | Path, cwd: Path = ROOT, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPTS / f"{script}.py"), *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=timeout)


def refused(result: subprocess.CompletedProcess[str], *named: str) -> None:
    """A clear refusal: exit status 2, every ``named`` text in the message, no traceback."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    for text in named:
        assert text in result.stderr, result.stderr


# --- help and the quoted commands -------------------------------------------------------------


@pytest.mark.parametrize("script", PYTHON_SCRIPTS)
def test_help(script: str) -> None:
    result = run(script, "--help")
    assert result.returncode == 0 and "usage:" in result.stdout, result.stderr


def quoted_commands() -> list[tuple[str, str, list[str]]]:
    """(where, script, arguments) of every ``python scripts/X.py ...`` in the docs and the scripts'
    docstrings; a placeholder in capitals (TEACHER, N) stands for 1, an ellipsis for nothing."""
    found = []
    pattern = re.compile(r"(?:python )?scripts/(\w+)\.py ([^`\n]*(?:\n[^`\n]*)?)`")
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for m in pattern.finditer(doc.read_text()):
            found.append((f"{doc.name}: {m.group(0)[:60]}", m.group(1), m.group(2)))
    for path in SCRIPTS.glob("*.py"):
        text = path.read_text().replace("\\\n", " ")
        for m in re.finditer(r"^\s*python scripts/(\w+)\.py (.*?)(?:\s+#.*)?$", text, re.M):
            found.append((f"{path.name} docstring: {m.group(0).strip()[:60]}", m.group(1), m.group(2)))
    out = []
    for where, script, text in found:
        words = [w for w in shlex.split(text.replace("\n", " ")) if w != "..."]
        out.append((where, script, ["1" if re.fullmatch(r"[A-Z][A-Z0-9_]*", w) else w for w in words]))
    return out


class _Parsed(Exception):
    pass


@pytest.mark.parametrize("where, script, argv", quoted_commands(), ids=lambda x: x if isinstance(x, str) else "")
def test_quoted_commands_parse(monkeypatch: pytest.MonkeyPatch, where: str, script: str, argv: list[str]) -> None:
    assert script in PYTHON_SCRIPTS, f"{where}: no scripts/{script}.py"
    module = load_script(script)
    parse = argparse.ArgumentParser.parse_args

    def parse_then_stop(self: argparse.ArgumentParser, *a: Any, **k: Any) -> None:
        parse(self, *a, **k)  # a bad flag or value exits here (status 2)
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    with pytest.raises(_Parsed):
        module.main(argv)


def test_the_docs_quote_the_scripts() -> None:
    quoted = {script for _, script, _ in quoted_commands()}
    assert {"train_loop_timing", "race_margins", "distill_network", "value_lookahead", "dagger_search",
            "mutants"} <= quoted


# --- train_loop_timing.py -----------------------------------------------------------------


@pytest.mark.parametrize("args, printed", [
    (["loop", "--seconds", "0.1"], "steps/s"),
    (["split", "--updates", "1", "--envs", "8"], "legal lists per update"),
    (["update", "--positions", "16", "--moves", "8", "--repeat", "2"], "fwd+bwd+Adam of 16 positions"),
    (["collectives", "--seconds", "0.1"], "two processes:"),
])
def test_train_loop_timing_runs_each_part(args: list[str], printed: str) -> None:
    result = run("train_loop_timing", *args)
    assert result.returncode == 0, result.stderr
    assert printed in result.stdout


@pytest.mark.parametrize("args, named", [
    (["loop", "--seconds", "0"], "--seconds"),
    (["collectives", "--seconds", "-1"], "--seconds"),
    (["split", "--updates", "0"], "--updates"),
    (["split", "--envs", "0"], "--envs"),
    (["update", "--repeat", "0"], "--repeat"),
    (["update", "--positions", "-3"], "--positions"),
    (["update", "--moves", "0"], "--moves"),
    (["loop", "--seconds", "inf"], "--seconds must be > 0 (a finite number), got inf"),  # it timed for ever
    (["lop"], "invalid choice"),
])
def test_train_loop_timing_refuses_bad_values(args: list[str], named: str) -> None:
    refused(run("train_loop_timing", *args), named)


# --- dagger_search.py ---------------------------------------------------------------------


@pytest.fixture
def fast_dagger(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The script with the greedy bot in place of the search (opponent, label and helper alike)."""
    module = load_script("dagger_search")
    monkeypatch.setattr(module, "SearchBot", lambda seed=None, depth=0, time=0.2: GreedyBot(seed=seed))
    return module


def test_dagger_collect_labels_every_position_and_fit_writes_a_checkpoint(fast_dagger: Any, tmp_path: Path) -> None:
    rec = fast_dagger.collect_games(str(STAR2), [0, 1], 1)
    assert set(rec) == set(fast_dagger.FIELDS) and {len(v) for v in rec.values()} == {len(rec["obs"])}
    assert set(rec["game"]) == {0, 1} and any(rec["agent"]) and not all(rec["agent"])
    assert all(0 <= c < len(legal) for c, legal in zip(rec["choice"], rec["legal"]))
    data = tmp_path / "dagger.pt"
    torch.save(rec, data)
    out = tmp_path / "tuned.pt"
    result = run("dagger_search", "fit", STAR2, data, out, "--epochs", "1", "--kl", "0.3")
    assert result.returncode == 0, result.stderr
    assert "held out" in result.stdout and "epoch 1: match" in result.stdout
    model_from_checkpoint(load_checkpoint(out, variant="star", num_players=2), out)


class _Recorded:
    """A player that logs (its role, its game's index, the seat it moved) for each move it chooses."""

    def __init__(self, player: Any, role: str, index: int, log: list[tuple[str, int, int]]) -> None:
        self.player, self.role, self.index, self.log = player, role, index, log

    def select_move(self, game: Any, *args: Any, **kwargs: Any) -> Any:
        self.log.append((self.role, self.index, game.to_move))
        return self.player.select_move(game, *args, **kwargs)


@pytest.mark.parametrize(("search_moves", "first_three", "then"), [(3, "helper", "agent"), (-3, "agent", "helper")])
def test_dagger_hybrid_plays_its_games(fast_dagger: Any, search_moves: int, first_three: str, then: str,
                                       monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # the search helper makes the agent seat's first N moves (N >= 0), or every one from the |N|+1st on (N < 0);
    # the network makes the others, the opponent every move of seat 1.  (The helper is built with seed
    # 1000 + game, the opponent with the game's own.)
    log: list[tuple[str, int, int]] = []
    search_bot, load_policy_player = fast_dagger.SearchBot, fast_dagger.load_policy_player

    def searcher(seed: int, **kwargs: Any) -> _Recorded:
        role, index = ("helper", seed - 1000) if seed >= 1000 else ("opponent", seed)
        return _Recorded(search_bot(seed=seed, **kwargs), role, index, log)

    def agent(checkpoint: str, seed: int) -> _Recorded:
        return _Recorded(load_policy_player(checkpoint, seed=seed), "agent", seed, log)

    monkeypatch.setattr(fast_dagger, "SearchBot", searcher)
    monkeypatch.setattr(fast_dagger, "load_policy_player", agent)
    wins = fast_dagger.hybrid_games(str(STAR2), search_moves, [0, 1])
    for index in (0, 1):
        assert {seat for role, i, seat in log if i == index and role == "opponent"} == {1}
        own = [role for role, i, seat in log if i == index and role != "opponent"]
        assert {seat for role, i, seat in log if i == index and role != "opponent"} == {0}
        assert len(own) > 3, own
        assert own == [first_three] * 3 + [then] * (len(own) - 3), own
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and [line.split(":")[0] for line in out] == ["game 0", "game 1"]
    assert wins == sum(line == f"game {i}: won" for i, line in enumerate(out))


@pytest.mark.slow
def test_dagger_collect_and_hybrid_commands(tmp_path: Path) -> None:
    data = tmp_path / "dagger.pt"
    result = run("dagger_search", "collect", STAR2, data, "--games", "1", "--workers", "1", "--label-depth", "1",
                 timeout=300)
    assert result.returncode == 0 and data.exists(), result.stderr
    assert "positions from 1 games" in result.stdout
    refused(run("dagger_search", "fit", STAR2, data, tmp_path / "tuned.pt"), "held-out games only")
    result = run("dagger_search", "hybrid", STAR2, "--games", "1", "--workers", "1", "--search-moves", "2",
                 timeout=300)
    assert result.returncode == 0 and "won " in result.stdout and "/1 against search" in result.stdout, result.stderr


@pytest.mark.parametrize("command", ["collect", "hybrid", "fit"])
def test_dagger_names_a_bad_checkpoint_before_any_game(tmp_path: Path, command: str) -> None:
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    outputs = {"collect": [tmp_path / "out.pt"], "hybrid": [], "fit": [tmp_path / "data.pt", tmp_path / "out.pt"]}
    for checkpoint, named in ((bad, "corrupt"), (tmp_path / "none.pt", "does not exist"), (STAR3, "3 seats")):
        refused(run("dagger_search", command, checkpoint, *outputs[command], "--games" if command != "fit" else "--kl",
                    "1"), str(checkpoint.name), named)
    assert not (tmp_path / "out.pt").exists()


@pytest.mark.parametrize("case, args, named", [
    ("output under a file", ["collect", STAR2, "a_file/out.pt"], ["cannot write"]),
    ("output is a folder", ["collect", STAR2, ".", "--games", "1"], ["is a directory"]),
    ("label depth 0", ["collect", STAR2, "o.pt", "--label-depth", "0"], ["--label-depth"]),
    ("no workers", ["hybrid", STAR2, "--workers", "0"], ["--workers"]),
    ("corrupt data", ["fit", STAR2, "junk.pt", "o.pt"], ["junk.pt", "not written by collect"]),
    ("missing data", ["fit", STAR2, "none.pt", "o.pt"], ["none.pt", "does not exist"]),
    ("no epochs", ["fit", STAR2, "junk.pt", "o.pt", "--epochs", "0"], ["--epochs"]),
    # infinite rates and weights were taken (the tuned weights would be NaN)
    ("infinite lr", ["fit", STAR2, "junk.pt", "o.pt", "--lr", "inf"], ["--lr must be > 0 (a finite number)"]),
    ("infinite kl", ["fit", STAR2, "junk.pt", "o.pt", "--kl", "inf"], ["--kl must be >= 0 (a finite number)"]),
    ("data is a folder", ["fit", STAR2, ".", "o.pt"], ["'.' is a directory"]),  # was "does not exist"
    ("no workers, named", ["hybrid", STAR2, "--workers", "0"], ["--workers must be >= 1 (an integer), got 0"]),
])
def test_dagger_refuses_bad_settings_data_and_outputs(tmp_path: Path, case: str, args: list[str | Path],
                                                      named: list[str]) -> None:
    (tmp_path / "a_file").write_text("")
    (tmp_path / "junk.pt").write_bytes(b"junk")
    refused(run("dagger_search", *args, cwd=tmp_path), *named)
    assert not (tmp_path / "o.pt").exists()


def test_dagger_does_not_write_over_its_inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """collect's data or fit's checkpoint written over the checkpoint or the data it read is refused before
    any game (it replaced the file at the end)."""
    module = load_script("dagger_search")
    ran: list[str] = []
    monkeypatch.setattr(module, "collect", lambda args: ran.append("collect"))
    monkeypatch.setattr(module, "fit", lambda args, rec: ran.append("fit"))
    checkpoint, data = tmp_path / "star2.pt", tmp_path / "data.pt"
    checkpoint.write_bytes(STAR2.read_bytes())
    torch.save({"obs": [torch.zeros(3)], "legal": [[0]], "choice": [0], "ret": [0.0], "game": [1], "agent": [True]},
               data)
    for argv in (["collect", checkpoint, tmp_path / "." / "star2.pt"], ["fit", checkpoint, data, checkpoint],
                 ["fit", checkpoint, data, data]):
        with pytest.raises(SystemExit) as stop:
            module.main([str(a) for a in argv])
        assert stop.value.code == 2 and "is the input" in capsys.readouterr().err
    assert not ran and checkpoint.read_bytes() == STAR2.read_bytes()


# --- results.sh ---------------------------------------------------------------------------

STAND_IN = """#!{python}
import json, os, sys
with open(os.environ["HALMA_COMMANDS"], "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
"""


def test_results_sh_commands_exist_with_their_flags(tmp_path: Path) -> None:
    """Run the script with a ``halma`` that only records its arguments (from another folder), then
    parse every recorded command with today's CLI and make every bot spec it names."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    halma = bin_dir / "halma"
    halma.write_text(STAND_IN.format(python=sys.executable))
    halma.chmod(halma.stat().st_mode | stat.S_IEXEC)
    log, out = tmp_path / "commands.jsonl", tmp_path / "out"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HALMA_COMMANDS": str(log)}
    result = subprocess.run(["bash", str(SCRIPTS / "results.sh"), "out"], capture_output=True, text=True,
                            cwd=tmp_path, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert (out / "ladder.json").exists() and f"everything is in {out}" in result.stdout
    commands = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(commands) > 30
    for argv in commands:
        name = argv[0]
        assert name in COMMANDS, argv
        args = build_parser(load=name).parse_args(argv)  # an unknown flag or choice exits here
        for spec in (getattr(args, "players", None) or []) + (getattr(args, "candidates", None) or []):
            if spec.endswith(".pt") and not spec.startswith(str(out)):
                assert (ROOT / spec).is_file(), argv
            elif not spec.endswith(".pt"):
                make_player(spec, seed=0)
        if name == "train":
            assert (ROOT / args.config).is_file(), argv
        if name == "eval" and args.solo and not args.solo.endswith(".pt"):
            make_player(args.solo, seed=0)
        if name == "eval":
            assert args.out and args.out.startswith(str(out)), f"{argv}: its results are not kept in OUT"
    # a second run into the same folder stops at once (halma eval would refuse its first --out)
    again = subprocess.run(["bash", str(SCRIPTS / "results.sh"), "out"], capture_output=True, text=True,
                           cwd=tmp_path, env=env, timeout=60)
    assert again.returncode == 2 and "not empty" in again.stderr
    assert len(log.read_text().splitlines()) == len(commands)


@pytest.mark.parametrize("args, status, named", [
    (["--help"], 0, "usage: scripts/results.sh [OUT]"),
    (["-h"], 0, "usage: scripts/results.sh [OUT]"),  # was handed to mkdir as an option
    (["out", "more"], 2, "one OUT folder at most, got 2"),  # the second word was dropped
    ([""], 2, "OUT must be a folder name, got ''"),  # an empty OUT became ./results
    (["--out"], 2, "OUT must be a folder name, got '--out'"),
    (["a_file"], 2, "a_file is not a folder"),  # was "is not empty"
    (["a_file/out"], 2, "cannot make or write the folder a_file/out"),  # was mkdir's message, status 1
])
def test_results_sh_refuses_bad_arguments_before_any_command(tmp_path: Path, args: list[str], status: int,
                                                             named: str) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    halma = bin_dir / "halma"
    halma.write_text(STAND_IN.format(python=sys.executable))
    halma.chmod(halma.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "a_file").write_text("")
    log = tmp_path / "commands.jsonl"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HALMA_COMMANDS": str(log)}
    result = subprocess.run(["bash", str(SCRIPTS / "results.sh"), *args], capture_output=True, text=True,
                            cwd=tmp_path, env=env, timeout=60)
    assert result.returncode == status and named in (result.stdout if status == 0 else result.stderr), result
    assert not log.exists()  # no halma command ran
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "bin"]  # no folder made


def test_dagger_fit_refuses_a_data_file_whose_pickle_would_run_code(tmp_path: Path) -> None:
    """load_data read its file with torch.load(weights_only=False): a data file whose pickle calls a function
    ran it (a security review created a marker file this way). It reads with weights_only=True now."""
    import pickle

    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (Path.touch, (marker,))

    data = tmp_path / "evil.pt"
    torch.save({"obs": Payload()}, data, pickle_module=pickle)
    refused(run("dagger_search", "fit", STAR2, data, tmp_path / "out.pt"), "is corrupt or not written by collect")
    assert not marker.exists()
