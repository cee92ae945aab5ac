"""``halma show`` and ``halma perft``: what they print, and exit code 2 with a message on bad input."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from agents.cli import main
from halma_env import Game, Rules

ROOT = Path(__file__).resolve().parents[1]

START = Game(Rules("star", 2)).position()


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_show_start(capsys) -> None:
    code, out, err = run(capsys, "show", "--no-color")
    lines = out.rstrip("\n").splitlines()
    assert code == 0 and err == ""
    assert len(lines) == 18 and lines[-1] == "star, 2 seats, ply 0, seat 0 to move"
    assert [ln.split() for ln in lines[:4]] == [["1"] * w for w in (1, 2, 3, 4)]
    assert [ln.split() for ln in lines[13:17]] == [["0"] * w for w in (4, 3, 2, 1)]
    assert "\x1b[" not in out, "no colour when asked (and never when stdout is not a terminal)"


def test_show_position_numbers_and_marks(capsys) -> None:
    code, out, _ = run(capsys, "show", "--numbers", "--no-color", START)
    assert code == 0
    cells = [tok.split(":") for ln in out.splitlines()[:17] for tok in ln.split()]
    assert [int(c[-1]) for c in cells] == list(range(121))
    # without colour the pieces stay visible: seat 0 fills 111-120, seat 1 holes 0-9
    owners = {int(c[1]): c[0] for c in cells if len(c) == 2}
    assert owners == {**{h: "1" for h in range(10)}, **{h: "0" for h in range(111, 121)}}
    assert max(len(ln) for ln in out.splitlines()) <= 80
    code, out, _ = run(capsys, "show", "--no-color", "--moves-from", "113", START)
    assert code == 0 and out.count("*") == 2  # 113 steps to 104 and 105
    rows = out.splitlines()[:17]
    assert rows[12].split().index("*") == 6  # hole 104 is the 7th hole of row 12 (98..110)
    code, out, _ = run(capsys, "show", "--no-color", "--variant", "diamond", "--seats", "3")
    assert code == 0 and "A" in out and "B" in out and "C" in out and "diamond, 3 seats" in out
    # the Diamond board's own marks, which nothing explained: the kings' letters, and x for a closed hole
    assert out.splitlines()[-1] == ("A, B, C: the kings of seats 0, 1, 2; x: a hole of another colour's point, "
                                    "closed to the seat to move (none of its pieces may land there)")
    code, out, _ = run(capsys, "show", "--no-color", "--numbers", "--variant", "diamond", "--seats", "2")
    assert code == 0 and out.splitlines()[-1] == ("A, B: the kings of seats 0, 1; the hole numbers do not mark the "
                                                  "closed holes (drawn as x without numbers)")  # (no x with --numbers)
    code, out, _ = run(capsys, "show", "--no-color")
    assert "kings" not in out


def test_show_game_over_status(capsys) -> None:
    game = Game.from_position(
        "star 2 0/00/000/0000/............./............/.........../........../........./........../"
        ".........../............/............1/..../.../../. 0 5"
    )
    assert game.is_over  # all of seat 0's pieces are in its goal: finished at load
    code, out, _ = run(capsys, "show", "--no-color", game.position())
    assert code == 0 and out.splitlines()[-1] == "game over (finished); places: seat 0: 1, seat 1: 2"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["show", "star 2 1/11 0 0"], ["error:", "board field", "17 rows"]),
        (["show", "chess 2 x 0"], ["error:", "variant field"]),
        (["show", "--variant", "diamond", "--seats", "4"], ["error:", "diamond", "not 4"]),
        (["show", "--moves-from", "121"], ["error:", "--moves-from", "0..120", "121"]),
        (["show", "--moves-from", "-3"], ["error:", "--moves-from", "-3"]),
        (["perft", "-1"], ["error:", "depth must be >= 0"]),
        (["perft", "2", "--position", "star 2 .. 0"], ["error:", "board field"]),
        (["perft", "2", "--variant", "halma16", "--seats", "3"], ["error:", "halma16", "not 3"]),
        (["perft", "1", "--position", ""], ["halma perft: error:", "the position is empty"]),
        (["perft", "1", "--position", START, "--variant", "diamond"], ["drop --variant/--seats"]),
        (["show", START, "--seats", "3"], ["halma show: error:", "drop --variant/--seats"]),
        (["show", " "], ["halma show: error:", "the position is empty"]),
    ],
)
def test_bad_input_exits_2_with_a_message(capsys, argv: list[str], words: list[str]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    for word in words:
        assert word in err, (word, err)


@pytest.mark.parametrize(
    "argv",
    [
        ["perft", "two"],
        ["show", "--seats", "x"],
        ["perft"],
        ["show", "--variant", "go"],
        ["perft", "1", "--variant", "go"],
    ],
)
def test_argparse_errors_exit_2(capsys, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "error" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "positional"),
    [("show", []), ("perft", ["2"]), ("bench", ["engine"]), ("eval", ["greedy"]), ("train", ["a.yaml"]),
     ("export", ["a.pt"]), ("ladder", []), ("play", [])],
)
def test_an_unknown_flag_is_named_by_its_command(capsys, command: str, positional: list[str]) -> None:
    """Not "halma: error: ..." with the top-level usage: the command's own usage and name."""
    with pytest.raises(SystemExit) as info:
        main([command, *positional, "--no-such-flag"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"halma {command}: error: unrecognized arguments: --no-such-flag" in err, err
    assert err.startswith(f"usage: halma {command} "), err


def _counts(out: str) -> dict[int, int]:
    return {int(d): int(c) for d, c in re.findall(r"^depth (\d+): (\d+)$", out, re.M)}


def test_perft_prints_each_depth(capsys) -> None:
    code, out, _ = run(capsys, "perft", "3")
    assert code == 0 and _counts(out) == {1: 14, 2: 196, 3: 4760}
    assert re.search(r"^total 4760 in \d+\.\d\d s$", out, re.M)
    code, out, _ = run(capsys, "perft", "2", "--variant", "halma16", "--seats", "4")
    assert _counts(out) == {1: 32, 2: 1024}
    code, out, _ = run(capsys, "perft", "2", "--variant", "diamond", "--seats", "3")
    assert _counts(out) == {1: 20, 2: 400}
    code, out, _ = run(capsys, "perft", "0")
    assert code == 0 and "depth 0: 1" in out


def test_perft_position_and_divide(capsys) -> None:
    game = Game(Rules("star", 3))
    game.play("113-104")
    code, out, _ = run(capsys, "perft", "2", "--position", game.position(), "--divide")
    assert code == 0
    lines = dict(re.findall(r"^(\d+-\d+): (\d+)$", out, re.M))
    assert set(lines) == {str(m) for m in game.legal_moves()}
    total = sum(map(int, lines.values()))
    assert re.search(rf"^total {total} in", out, re.M)
    from halma_env import perft

    assert total == perft(game, 2)


def test_perft_json_is_one_object_with_the_counts_the_lines_give(capsys) -> None:
    code, out, _ = run(capsys, "perft", "3", "--json")
    data = json.loads(out)
    assert code == 0 and out.count("\n") == 1
    assert data["depths"] == {"1": 14, "2": 196, "3": 4760} and data["total"] == 4760 and data["depth"] == 3
    assert data["position"] == Game(Rules("star", 2)).position() and data["seconds"] >= 0
    code, out, _ = run(capsys, "perft", "2", "--divide", "--json", "--variant", "diamond", "--seats", "3")
    data = json.loads(out)
    assert set(data) == {"position", "depth", "moves", "total", "seconds"}
    assert data["moves"] == {str(m): 20 for m in Game(Rules("diamond", 3)).legal_moves()} and data["total"] == 400
    code, out, _ = run(capsys, "perft", "0", "--json", "--divide")  # nothing to divide at depth 0
    assert json.loads(out)["depths"] == {"0": 1} and json.loads(out)["total"] == 1


def test_perft_stops_at_the_first_depth_that_counts_zero(capsys) -> None:
    """A finished position at depth 10**9 printed "depth N: 0" until killed (and --json grew its dict): every
    depth past the first 0 is 0, so the counts stop there."""
    # both armies home in the other's camp: the game is over
    finished = START.replace("1/11/111/1111/", "x/").replace("/0000/000/00/0 ", "/1111/111/11/1 ").replace(
        "x/", "0/00/000/0000/")
    assert Game.from_position(finished).is_over
    code, out, _ = run(capsys, "perft", "1000000000", "--position", finished)
    assert code == 0
    assert out.splitlines()[:2] == ["depth 1: 0", "depths 2-1000000000: 0 (no move sequence reaches depth 1)"]
    assert out.splitlines()[2].startswith("total 0 in ")
    code, out, _ = run(capsys, "perft", "1000000000", "--position", finished, "--json")
    data = json.loads(out)
    assert code == 0 and data["depths"] == {"1": 0} and data["total"] == 0 and data["depth"] == 10**9
    code, out, _ = run(capsys, "perft", "2", "--position", finished)
    assert out.splitlines()[:2] == ["depth 1: 0", "depth 2: 0 (no move sequence reaches depth 1)"]
    code, out, _ = run(capsys, "perft", "1", "--position", finished, "--json")  # the last depth: nothing more to say
    assert json.loads(out)["depths"] == {"1": 0} and json.loads(out)["total"] == 0


def test_console_script_runs() -> None:
    """The installed ``halma`` entry point (through ``python -m agents.cli``)."""
    done = subprocess.run(
        [sys.executable, "-m", "agents.cli", "perft", "1", "--variant", "halma16"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0 and "depth 1: 40" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "agents.cli", "show", "nonsense"], capture_output=True, text=True)
    assert bad.returncode == 2 and "error:" in bad.stderr


def test_a_closed_pipe_ends_quietly() -> None:
    """``halma perft 2 --divide | head -1``: the reader leaves early; no traceback, exit code 1."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agents.cli", "perft", "2", "--divide"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # before the command writes anything
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()


@pytest.mark.parametrize("args", [["show"], ["--version"], ["eval", "greedy", "random", "--games", "1", "--quiet"]])
def test_a_failed_write_to_stdout_is_one_line_and_exit_2(args: list[str]) -> None:
    """``halma show > /dev/full`` (a full disk under a redirect): a traceback and exit 1; now the README's contract
    for output it could not write, exit 2 with one line."""
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "agents.cli", *args], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    command = f" {args[0]}" if not args[0].startswith("-") else ""
    assert (done.returncode, done.stderr) == (
        2, f"halma{command}: error: cannot write the standard output: No space left on device\n")


def test_help_that_cannot_be_written_is_one_line_and_exit_2() -> None:
    """``halma show --help > /dev/full``: argparse's exit left main before its flush, and the interpreter's own
    flush printed 'Exception ignored' and exit 120.  (Unbuffered, argparse drops the failed write itself.)"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "agents.cli", "show", "--help"], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=60, env=env)
    assert (done.returncode, done.stderr) == (
        2, "halma show: error: cannot write the standard output: No space left on device\n")


@pytest.mark.parametrize("setting", [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "PYTHONUTF8": "0"}])
def test_characters_the_output_cannot_encode_are_escaped_not_fatal(setting: dict[str, str]) -> None:
    """Under PYTHONIOENCODING=ascii or a C locale without UTF-8 mode (whose stdout has errors='surrogateescape')
    the help's '§' and the tables' '±' were a UnicodeEncodeError, after every game of a tournament had been
    played."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LANG", "LC_CTYPE")} | setting
    helped = subprocess.run([sys.executable, "-m", "agents.cli", "perft", "--help"], capture_output=True, env=env,
                            timeout=60)
    assert helped.returncode == 0 and rb"(SPEC \xa76)" in helped.stdout
    played = subprocess.run([sys.executable, "-m", "agents.cli", "eval", "random", "random", "--games", "1",
                             "--quiet", "--workers", "1", "--max-plies", "4"], capture_output=True, env=env,
                            timeout=120)
    assert played.returncode == 0 and played.stderr == b""
    assert rb"25.00 \xb1 8.07" in played.stdout


def test_main_called_from_python_puts_the_output_s_error_handler_back(monkeypatch) -> None:
    """main() escapes what the output cannot encode for its own run, and leaves a calling program's stdout
    as it found it."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", out)
    with pytest.raises(SystemExit):
        main(["perft", "--help"])
    assert out.errors == "strict" and rb"(SPEC \xa76)" in out.buffer.getvalue()


def test_eval_out_is_written_even_when_its_table_cannot_be(tmp_path: Path) -> None:
    """The table was printed before --out was saved: a full disk or a closed pipe under the table lost the
    results of every game played."""
    out = tmp_path / "results"
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "agents.cli", "eval", "random", "random", "--games", "1",
                               "--quiet", "--workers", "1", "--max-plies", "4", "--out", str(out)], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (
        2, "halma eval: error: cannot write the standard output: No space left on device\n")
    assert len(json.loads((out / "results.json").read_text())["games"]) == 1
    solo = tmp_path / "solo"
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "agents.cli", "eval", "--solo", "random", "--games", "1",
                               "--max-plies", "4", "--out", str(solo)], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    assert done.returncode == 2 and (solo / "solo.json").is_file()


def test_a_closed_stderr_does_not_stop_a_command(tmp_path: Path) -> None:
    """``halma eval ... 2>&-``: the progress bar's write failed (EBADF) and the command ended with status 1
    and no word anywhere; descriptor 2 now points at /dev/null.  (The bar is drawn on a terminal only now: what
    goes to stderr here is --json's notice of the files written, which Python, finding no stderr, printed into
    the JSON on stdout.)"""
    out = tmp_path / "out"
    done = subprocess.run(f"{shlex.quote(sys.executable)} -m agents.cli eval random random --games 1 --workers 1 "
                          f"--max-plies 4 --json --out {shlex.quote(str(out))} 2>&-", shell=True,
                          stdout=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 0 and json.loads(done.stdout)["players"] == ["random", "random#2"]
    assert (out / "results.json").is_file()


def test_a_removed_current_directory_is_named(tmp_path: Path) -> None:
    """A worker process (or torch's import) failed on os.getcwd() with a traceback or a oneMKL fatal error."""
    gone = tmp_path / "gone"
    gone.mkdir()
    done = subprocess.run(f"cd {shlex.quote(str(gone))} && rmdir {shlex.quote(str(gone))} && "
                          f"{shlex.quote(sys.executable)} -m agents.cli eval random random --games 1", shell=True,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (done.returncode, done.stdout, done.stderr[-100:]) == (
        2, "", "halma eval: error: the current directory no longer exists (it was removed): cd to another one\n")
    shown = subprocess.run(f"cd {shlex.quote(str(tmp_path))} && mkdir again && cd again && rmdir ../again && "
                           f"{shlex.quote(sys.executable)} -m agents.cli show", shell=True, capture_output=True,
                           text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert shown.returncode == 0 and "star" in shown.stdout  # a command that needs no directory runs there


def test_a_closed_stdout_is_refused_before_the_command_runs() -> None:
    done = subprocess.run(f"{shlex.quote(sys.executable)} -m agents.cli show >&-", shell=True, stderr=subprocess.PIPE,
                          text=True, timeout=60)
    assert (done.returncode, done.stderr) == (2, "halma show: error: the standard output is closed (redirect it "
                                                 "to /dev/null to discard it)\n")


@pytest.mark.parametrize("command", ["show", "perft"])
def test_a_file_given_for_the_position_is_told_to_give_its_text(command: str, tmp_path, monkeypatch, capsys) -> None:
    """'halma show pos.txt' said only that a position has 4 or 5 fields, got 1."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pos.txt").write_text("star 2 ...\n")
    argv = [command, "pos.txt"] if command == "show" else [command, "1", "--position", "pos.txt"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"halma {command}: error: a position has 4 or 5 fields") and err.endswith(
        "got 1; 'pos.txt' is a file: give the position's text (\"$(cat pos.txt)\"); a game record is stepped through "
        "with halma play --replay\n")
    assert main([command, "nosuch.txt"] if command == "show" else [command, "1", "--position", "nosuch.txt"]) == 2
    assert "is a file" not in capsys.readouterr().err  # a name that is no file: the parser's message alone
    (tmp_path / "my pos.txt").write_text("star 2 ...\n")  # a name with a space is a file's name too
    assert main([command, "my pos.txt"] if command == "show" else [command, "1", "--position", "my pos.txt"]) == 2
    assert "got 2; 'my pos.txt' is a file: give the position's text (\"$(cat 'my pos.txt')\")" in \
        capsys.readouterr().err


# --- perft timing and progress, show on a finished game (pinned where mutation testing found them unpinned)

def test_perft_seconds_measure_the_count_itself(capsys) -> None:
    """The "seconds" of --json and the "total N in S s" line are the time the count took (well under a
    minute for depth 2 of the start), not a clock reading."""
    assert main(["perft", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert 0 <= data["seconds"] < 60
    assert main(["perft", "2"]) == 0
    seconds = float(re.search(r"^total 196 in (\d+\.\d\d) s$", capsys.readouterr().out, re.M).group(1))
    assert 0 <= seconds < 60


class Recording(io.StringIO):
    """A stdout that notes what it held each time it was flushed."""

    def __init__(self) -> None:
        super().__init__()
        self.flushed: list[str] = []

    def flush(self) -> None:
        self.flushed.append(self.getvalue())
        super().flush()


def test_perft_lines_are_flushed_as_they_come(monkeypatch) -> None:
    """A long count shows its progress: each depth's line (and each --divide move's) reaches the reader
    when it is printed, not when the command ends (stdout into a pipe is block-buffered)."""
    for argv, first in ([["perft", "2"], r"depth 1: 14\n"], [["perft", "1", "--divide"], r"\d+-\d+: 1\n"]):
        out = Recording()
        monkeypatch.setattr("sys.stdout", out)
        assert main(argv) == 0
        assert any(re.match(first, text) and "total" not in text for text in out.flushed), (argv, out.flushed)


def test_show_moves_from_in_a_finished_game_is_an_error(capsys) -> None:
    """--moves-from asks where a piece can go; once the game is over nothing can, and show says why (as
    ``halma play`` words it) with exit code 2 rather than drawing the board with no marks."""
    from halma_env import Game, Rules

    start = Game(Rules("star", 2)).position()
    finished = start.replace("1/11/111/1111/", "x/").replace("/0000/000/00/0 ", "/1111/111/11/1 ").replace(
        "x/", "0/00/000/0000/")
    game = Game.from_position(finished)
    assert game.is_over and game.piece_at(0)[0] == game.to_move  # seat 0's own piece, seat 0 to move
    assert main(["show", "--no-color", "--moves-from", "0", finished]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"halma show: error: --moves-from 0: the game is over ({game.end_reason})\n"



def test_perft_zero_at_the_last_depth_adds_no_line(capsys) -> None:
    """A count of 0 at the depth asked for is the last line before the total: no "depths N+1-N" line about
    depths that were not asked for."""
    from halma_env import Game, Rules

    start = Game(Rules("star", 2)).position()
    finished = start.replace("1/11/111/1111/", "x/").replace("/0000/000/00/0 ", "/1111/111/11/1 ").replace(
        "x/", "0/00/000/0000/")
    assert main(["perft", "1", "--position", finished]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0] == "depth 1: 0" and re.match(r"total 0 in \d+\.\d\d s$", lines[1]), lines


def test_perft_divide_json_at_depth_one_names_the_moves(capsys) -> None:
    """--divide --json at depth 1: the counts are per first move, so the object's key is "moves" (as the
    --json help says), each move counting 1."""
    from halma_env import Game, Rules

    assert main(["perft", "1", "--divide", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    moves = {str(m): 1 for m in Game(Rules("star", 2)).legal_moves()}
    assert set(data) == {"position", "depth", "moves", "total", "seconds"}
    assert data["moves"] == moves and data["total"] == len(moves) == 14 and data["depth"] == 1
