"""`halma ladder` as a command (agents/ladder_build.py `run`, `print_ladder`, `check_writable`): what it prints,
what it writes and what it refuses, pinned line by line (mutation round on the command's code).
Tournaments are faked (tests/test_ladder.py `_fake_tournament`), so every test here is fast."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agents.cli import main
from agents.ladder import LadderError, format_ladder, load_ladder
from halma_env import Game, Rules
from tests.file_helpers import TerminalText
from tests.test_ladder import _copy_shipped_model, _fake_tournament, _ladder_file

TWO = [(0.0, 1.0), (10.0, 1.0)]  # two candidates, clearly separated (7.07 combined sigmas)


def _no_tournament(monkeypatch) -> None:
    import agents.arena

    def no_games(*args, **kwargs):
        raise AssertionError("the tournament ran")

    monkeypatch.setattr(agents.arena, "run_tournament", no_games)


def test_printing_the_ladder_prints_a_heading_then_the_table(tmp_path: Path, capsys) -> None:
    ladder = _ladder_file(tmp_path / "ladder.json", {
        "star-2": {"variant": "star", "seats": 2, "levels": [{"level": "easy", "player": "random", "rating": 1.0}]},
        "star-3": {"variant": "star", "seats": 3, "levels": [{"level": "hard", "player": "greedy", "rating": 2.0}]}})
    assert main(["ladder", "--ladder", str(ladder), "--seats", "3"]) == 0
    out, err = capsys.readouterr()
    data = load_ladder(ladder)
    star3 = {**data, "games": {"star-3": data["games"]["star-3"]}}
    assert out == f"ladder {ladder}: ratings are openskill ordinals within each game\n\n{format_ladder(star3)}\n"
    assert err == ""


def test_printing_a_game_the_ladder_lacks_names_the_games_it_has(tmp_path: Path, capsys) -> None:
    """--variant with --seats: a valid game missing from the file is named as VARIANT-SEATS; an empty ladder
    'has none'."""
    ladder = _ladder_file(tmp_path / "ladder.json", {
        "star-2": {"variant": "star", "seats": 2, "levels": [{"level": "easy", "player": "random"}]}})
    assert main(["ladder", "--ladder", str(ladder), "--variant", "star", "--seats", "3"]) == 2
    out, err = capsys.readouterr()
    assert f"halma ladder: error: ladder '{ladder}' has no star-3 entry; it has star-2\n" == err and out == ""
    empty = _ladder_file(tmp_path / "empty.json", {})
    assert main(["ladder", "--ladder", str(empty), "--seats", "2"]) == 2
    out, err = capsys.readouterr()
    assert f"halma ladder: error: ladder '{empty}' has no 2-seat entry; it has none\n" == err and out == ""


def test_a_dry_run_prints_the_table_then_the_entry_as_indented_json(tmp_path: Path, capsys, monkeypatch) -> None:
    _fake_tournament(monkeypatch, TWO)
    ladder = tmp_path / "ladder.json"
    assert main(["ladder", "--ladder", str(ladder), "--quiet", "--dry-run", "--levels", "a,b", "--games", "6",
                 "--seed", "3", "random", "greedy"]) == 0
    out, err = capsys.readouterr()
    head, _, tail = out.partition("\n\n{")
    entry = json.loads("{" + tail)
    assert out == head + "\n\n" + json.dumps(entry, indent=2) + "\n"
    assert head.split("\n") == [
        "### star-2: 6 games, seed 3",
        "",
        "| candidate | rating | mu ± sigma | score | mean place | ms/move | level | separation |",
        "|---|---|---|---|---|---|---|---|",
        "| greedy | 7.00 | 10.00 ± 1.00 | 0.12 | 2.23 | 1.1 | b | 7.07 |",
        "| random | -3.00 | 0.00 ± 1.00 | 0.00 | 1.24 | 0.1 | a |  |",
    ]
    assert err == "" and not ladder.exists()


def test_levels_that_no_candidate_fills_are_reported_on_stderr(tmp_path: Path, capsys, monkeypatch) -> None:
    _fake_tournament(monkeypatch, [(0.0, 1.0), (1.0, 1.0), (2.0, 1.0), (20.0, 1.0)])
    ladder = tmp_path / "ladder.json"
    assert main(["ladder", "--ladder", str(ladder), "--quiet", "--games", "5", "random", "greedy:noise=0.9",
                 "greedy:noise=0.5", "greedy"]) == 0
    err = capsys.readouterr().err
    assert err == ("\nonly 2 of 4 levels are clearly separated (mu 2 combined sigmas apart); missing: hard, expert."
                   "  Add a stronger or weaker candidate, or play more games.\n")
    assert load_ladder(ladder)["games"]["star-2"]["missing"] == ["hard", "expert"]


def test_the_progress_bar_is_shown_on_a_terminal_unless_quiet(tmp_path: Path, capsys, monkeypatch) -> None:
    """And never into a redirected stderr, where its carriage-return frames made one endless line of the log."""
    calls = _fake_tournament(monkeypatch, TWO)
    argv = ["ladder", "--ladder", str(tmp_path / "ladder.json"), "--dry-run", "--levels", "a,b", "--games", "2",
            "random", "greedy"]
    assert main(argv) == 0  # stderr captured: not a terminal
    monkeypatch.setattr(sys, "stderr", TerminalText())
    assert main(argv) == 0
    assert main([*argv, "--quiet"]) == 0
    assert [kwargs["progress"] for *_, kwargs in calls] == [False, True, False]
    # a status line every minute in a log instead (a long ladder run said nothing there until its table)
    assert [kwargs["status_every"] for *_, kwargs in calls] == [60.0, None, None]
    assert {kwargs["label"] for *_, kwargs in calls} == {"halma ladder"}


def test_one_game_and_one_worker_are_enough(tmp_path: Path, capsys, monkeypatch) -> None:
    calls = _fake_tournament(monkeypatch, TWO)
    ladder = tmp_path / "ladder.json"
    assert main(["ladder", "--ladder", str(ladder), "--quiet", "--levels", "a,b", "--games", "1", "--workers", "1",
                 "random", "greedy"]) == 0
    [(_, _, games, kwargs)] = calls
    assert (games, kwargs["workers"]) == (1, 1)
    assert load_ladder(ladder)["games"]["star-2"]["tournament"]["games"] == 1


def test_the_ladder_file_is_written_before_the_table_is_printed(tmp_path: Path, capsys, monkeypatch) -> None:
    """A stdout that fails at the table (a closed pipe, a full disk) lost the tournament: the table was printed
    before the ladder file was written, and the build's files were undone."""
    import builtins

    _fake_tournament(monkeypatch, TWO)
    ladder = tmp_path / "ladder.json"
    real_print = builtins.print

    def full_stdout(*args, file=None, **kwargs):
        if file is None:
            raise OSError(28, "No space left on device")
        real_print(*args, file=file, **kwargs)

    import argparse

    from agents.ladder_build import add_arguments, run

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--ladder", str(ladder), "--quiet", "--levels", "a,b", "--games", "2", "random",
                              "greedy"])
    monkeypatch.setattr(builtins, "print", full_stdout)
    with pytest.raises(OSError, match="No space left"):  # (halma's main makes it one line and status 2)
        run(args)
    assert load_ladder(ladder)["games"]["star-2"]["tournament"]["games"] == 2


@pytest.mark.parametrize("workers", ["0", "-1"])
def test_no_workers_is_refused_before_the_tournament(tmp_path: Path, capsys, monkeypatch, workers: str) -> None:
    _no_tournament(monkeypatch)
    ladder = tmp_path / "ladder.json"
    assert main(["ladder", "--ladder", str(ladder), "--quiet", "--levels", "a,b", "--workers", workers,
                 "random", "greedy"]) == 2
    out, err = capsys.readouterr()
    assert err == f"halma ladder: error: --workers must be >= 1, got {workers}\n" and out == ""
    assert not ladder.exists()


def test_a_ladder_path_that_is_a_directory_is_refused_before_the_tournament(tmp_path: Path, capsys,
                                                                           monkeypatch) -> None:
    """Reading it fails first (so check_writable's 'is a directory' is not what the command says)."""
    _no_tournament(monkeypatch)
    folder = tmp_path / "folder"
    folder.mkdir()
    assert main(["ladder", "--ladder", str(folder), "--quiet", "--levels", "a,b", "random", "greedy"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"halma ladder: error: ladder file '{folder}' cannot be read (") and out == ""
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("where", ["flag", "environment"])
def test_a_ladder_path_ending_in_a_slash_is_refused_and_no_file_is_written(tmp_path: Path, capsys, monkeypatch,
                                                                          where: str) -> None:
    """``--ladder out/`` ran the tournament and wrote the file ``out`` (``Path`` drops the slash)."""
    _no_tournament(monkeypatch)
    monkeypatch.chdir(tmp_path)
    flags = ["--ladder", "out/"] if where == "flag" else []
    if where == "environment":
        monkeypatch.setenv("HALMA_LADDER", "out/")
    assert main(["ladder", *flags, "--quiet", "--levels", "a,b", "random", "greedy"]) == 2
    out, err = capsys.readouterr()
    assert err == "halma ladder: error: the ladder file 'out/' ends in '/', so it names a directory, not a file\n"
    assert out == "" and list(tmp_path.iterdir()) == []


def test_a_dry_run_does_not_need_a_writable_ladder(tmp_path: Path, capsys, monkeypatch) -> None:
    """--dry-run writes nothing, so a ladder file that could not be written is no reason to refuse."""
    calls = _fake_tournament(monkeypatch, TWO)
    (tmp_path / "a_file").write_text("not a directory")
    ladder = tmp_path / "a_file" / "ladder.json"
    assert main(["ladder", "--ladder", str(ladder), "--quiet", "--dry-run", "--levels", "a,b", "random",
                 "greedy"]) == 0
    assert len(calls) == 1 and (tmp_path / "a_file").read_text() == "not a directory"


def test_json_prints_the_entry_alone_and_the_ladder_as_its_file_stores_it(tmp_path: Path, capsys,
                                                                            monkeypatch) -> None:
    _fake_tournament(monkeypatch, TWO)
    ladder = tmp_path / "ladder.json"
    argv = ["ladder", "--ladder", str(ladder), "--quiet", "--levels", "a,b", "--games", "6", "random", "greedy"]
    assert main([*argv, "--dry-run", "--json"]) == 0
    out, err = capsys.readouterr()
    entry = json.loads(out)  # the whole of stdout: no table
    assert out == json.dumps(entry, indent=2) + "\n" and err == "" and not ladder.exists()
    assert [(lv["level"], lv["player"]) for lv in entry["levels"]] == [("a", "random"), ("b", "greedy")]
    assert main([*argv, "--json"]) == 0
    out, err = capsys.readouterr()
    written = load_ladder(ladder)["games"]["star-2"]
    assert json.loads(out) == written and err == f"\nwrote the star-2 entry to {ladder}\n"
    assert main(["ladder", "--ladder", str(ladder), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == load_ladder(ladder) and err == ""
    assert main(["ladder", "--ladder", str(ladder), "--json", "--seats", "3"]) == 2  # filtered as without --json
    assert "has no 3-seat entry; it has star-2" in capsys.readouterr().err


def test_a_rebuild_replaces_its_own_entry_and_keeps_the_others(tmp_path: Path, capsys, monkeypatch) -> None:
    _fake_tournament(monkeypatch, TWO)
    star3 = {"variant": "star", "seats": 3, "levels": [{"level": "easy", "player": "random"}]}
    old2 = {"variant": "star", "seats": 2, "levels": [{"level": "easy", "player": "greedy"}]}
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": old2, "star-3": star3})
    assert main(["ladder", "--ladder", str(ladder), "--quiet", "--levels", "a,b", "--games", "2", "random",
                 "greedy"]) == 0
    out = capsys.readouterr().out
    assert out.endswith(f"\n\nwrote the star-2 entry to {ladder}\n")
    games = load_ladder(ladder)["games"]
    assert games["star-3"] == star3
    assert [(lv["level"], lv["player"]) for lv in games["star-2"]["levels"]] == [("a", "random"), ("b", "greedy")]


def test_run_returns_its_exit_status(tmp_path: Path, capsys, monkeypatch) -> None:
    """`run` (what agents.cli calls) returns 0 on each success path, not None, and 2 on a refusal."""
    import argparse

    from agents.ladder_build import add_arguments, run

    def status(*argv: str) -> object:
        parser = argparse.ArgumentParser()
        add_arguments(parser)
        return run(parser.parse_args(list(argv)))

    _fake_tournament(monkeypatch, TWO)
    ladder = tmp_path / "ladder.json"
    flags = ["--ladder", str(ladder), "--quiet", "--levels", "a,b", "--games", "2", "random", "greedy"]
    assert status(*flags, "--dry-run") == 0 and not ladder.exists()
    assert status(*flags) == 0 and ladder.exists()
    assert status("--ladder", str(ladder)) == 0
    assert status("--ladder", str(ladder), "--seats", "3") == 2
    capsys.readouterr()


def test_an_installed_package_s_shipped_ladder_is_not_rebuilt(tmp_path: Path, capsys, monkeypatch) -> None:
    """From a wheel (no pyproject.toml beside the package) `halma ladder CANDIDATES` without --ladder wrote
    into site-packages: the shipped ladder lost its levels until a reinstall. It is refused before the
    tournament, naming --ladder; a dry run and the source tree's own rebuild still work."""
    import agents.files
    import agents.ladder

    _no_tournament(monkeypatch)
    monkeypatch.delenv("HALMA_LADDER", raising=False)
    monkeypatch.setattr(agents.files, "from_source_checkout", lambda: False)
    before = agents.ladder.DEFAULT_LADDER.read_bytes()
    assert main(["ladder", "--quiet", "--levels", "a,b", "random", "greedy"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"halma ladder: error: the shipped ladder '{agents.ladder.DEFAULT_LADDER}' is part of the "
                          "installed package; write a ladder of your own with --ladder FILE") and out == ""
    assert agents.ladder.DEFAULT_LADDER.read_bytes() == before



# --- security review: what halma ladder prints of an untrusted ladder file --------------------------------


def test_printing_a_ladder_escapes_its_control_characters(tmp_path: Path, capsys) -> None:
    """A player holding escape sequences (set the clipboard, clear the screen, fake output) reached the
    terminal raw; it is printed escaped, as Python writes the string, and the rest of the table as before."""
    evil = "greedy\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\x1b[31mFAKE OUTPUT"
    ladder = _ladder_file(tmp_path / "ladder.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "easy", "player": evil, "rating": 1.0},
        {"level": "hard", "player": "search:depth=1,time=none", "rating": 2.0}]}})
    assert main(["ladder", "--ladder", str(ladder)]) == 0
    out, err = capsys.readouterr()
    assert "\x1b" not in out and "\x07" not in out and err == ""
    assert ("| star-2 | 'greedy\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x1b[2J\\x1b[31mFAKE OUTPUT' (1.0) | - | "
            "search:depth=1,time=none (2.0) | - | ? games, ? |") in out


def test_halma_ladder_refuses_an_untrusted_ladder_file_by_name(tmp_path: Path, capsys, monkeypatch) -> None:
    """NaN ratings, a model outside the ladder's folder, a device as $HALMA_LADDER: exit 2 with a message."""
    nan = tmp_path / "nan.json"
    nan.write_text('{"format": "halma_env.ladder", "format_version": 1, "games": {"star-2": {"variant": "star", '
                   '"seats": 2, "levels": [{"level": "easy", "player": "random", "rating": NaN}]}}}')
    assert main(["ladder", "--ladder", str(nan)]) == 2
    assert capsys.readouterr().err == (f"halma ladder: error: ladder file '{nan}' holds the number NaN: its numbers "
                                       "must be finite\n")
    out = _ladder_file(tmp_path / "out.json", {"star-2": {"variant": "star", "seats": 2, "levels": [
        {"level": "hard", "player": "../../../../tmp/m/plain.onnx"}]}})
    assert main(["ladder", "--ladder", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"halma ladder: error: ladder '{out}': entry 'star-2', level 'hard': the model '../../../../tmp/m/plain.onnx' "
        "is outside the ladder's folder; a level's model is a path relative to the ladder file, inside its folder\n")
    monkeypatch.setenv("HALMA_LADDER", "/dev/null")
    assert main(["ladder"]) == 2
    assert capsys.readouterr().err == ("halma ladder: error: ladder file '/dev/null' (from $HALMA_LADDER) cannot be "
                                       "read (it is a device, not a regular file)\n")


# --- mutation round on agents/ladder_build.py (session after the split out of agents/ladder.py) -------------


def test_a_checkpoint_candidate_is_made_a_player_only_as_its_exported_model(tmp_path: Path, monkeypatch) -> None:
    """_prepare_candidates checks a bot spec or model by making its player before any game, and a ``.pt`` only
    once exported ("a .pt's once exported"): the checkpoint itself is never loaded as a player."""
    import agents.ladder_build
    from tests.opponent_helpers import make_checkpoint

    made: list[str] = []
    real = agents.ladder_build.candidate_player

    def spy(name: str, seed: int | None = None) -> object:
        made.append(name)
        return real(name, seed)

    monkeypatch.setattr(agents.ladder_build, "candidate_player", spy)
    ckpt = make_checkpoint(tmp_path / "kept" / "mine.pt")
    out = agents.ladder_build._prepare_candidates(["random", str(ckpt)], "star", 2, tmp_path / "models", 100)
    model = str(tmp_path / "models" / "star-2-mine.onnx")
    assert out == ["random", model] and made == ["random", model]


def test_the_help_names_each_flags_value_and_the_defaults_run_applies(monkeypatch) -> None:
    """`halma ladder --help` (add_arguments): each flag's value placeholder, and the defaults it states are the
    ones `run` fills in (TOURNAMENT_DEFAULTS, SEPARATION) when the flag is not given."""
    import argparse

    from agents.ladder import LEVELS
    from agents.ladder_build import SEPARATION, TOURNAMENT_DEFAULTS, add_arguments

    monkeypatch.setenv("COLUMNS", "200")
    parser = argparse.ArgumentParser(prog="halma ladder")
    add_arguments(parser)
    text = " ".join(parser.format_help().split())
    assert TOURNAMENT_DEFAULTS == {"variant": "star", "seats": 2, "levels": ",".join(LEVELS), "seed": 0, "workers": 1,
                                   "separation": SEPARATION}
    for shown in ["[CANDIDATE ...]", "CANDIDATE bot specs (greedy:noise=0.25, search:depth=2,time=none), checkpoints",
                  "--time-per-move SECONDS per-move budget given to the players (default: their own settings)",
                  "--games GAMES tournament games (default: two full seat/start cycles of the arena schedule)",
                  "--ladder FILE", "--models-dir DIR",
                  "--separation Z", "--seats SEATS", "--games GAMES", "--levels LEVELS",
                  "} the game of the tournament (default star)", "--seats SEATS seats of the tournament (default 2)",
                  f"--levels LEVELS level names, weakest first (default {','.join(LEVELS)})",
                  "--seed SEED tournament seed (default 0)", "--workers WORKERS parallel game processes (default 1)",
                  f"--separation Z adjacent levels' mu must differ by Z combined sigmas (default {SEPARATION:g})",
                  "--models-dir DIR where .pt candidates are exported (default: next to the ladder file)",
                  "--quiet no progress: no bar on a terminal", "--dry-run print the new entry; write nothing",
                  "--json print JSON instead of tables: the new entry (as the ladder file stores it)"]:
        assert shown in text, shown
    args = parser.parse_args([])
    assert (args.candidates, args.dry_run, args.quiet, args.json) == ([], False, False, False)
    assert parser.parse_args(["--dry-run", "--quiet", "--json"]).dry_run is True


def test_an_installed_package_still_rebuilds_a_ladder_of_your_own(tmp_path: Path, capsys, monkeypatch) -> None:
    """check_writable refuses only the shipped ladder outside the source tree: with --ladder FILE (what its
    message advises) an installed package rebuilds, and the source tree may check its own shipped ladder."""
    import agents.files
    import agents.ladder
    from agents.ladder_build import check_writable

    _fake_tournament(monkeypatch, TWO)
    monkeypatch.setattr(agents.files, "from_source_checkout", lambda: False)
    ladder = tmp_path / "ladder.json"
    assert main(["ladder", "--ladder", str(ladder), "--quiet", "--levels", "a,b", "--games", "2", "random",
                 "greedy"]) == 0
    assert [lv["player"] for lv in load_ladder(ladder)["games"]["star-2"]["levels"]] == ["random", "greedy"]
    check_writable(tmp_path / "other.json")  # no error
    monkeypatch.setattr(agents.files, "from_source_checkout", lambda: True)
    check_writable(agents.ladder.DEFAULT_LADDER)  # the source tree's own rebuild
    capsys.readouterr()


def test_games_up_to_the_arenas_maximum_are_played_and_one_more_is_refused(tmp_path: Path, capsys,
                                                                             monkeypatch) -> None:
    """--games takes 1..MAX_GAMES, both ends included (as the message says)."""
    from agents.arena import MAX_GAMES

    calls = _fake_tournament(monkeypatch, TWO)
    argv = ["ladder", "--ladder", str(tmp_path / "ladder.json"), "--quiet", "--dry-run", "--json", "--levels", "a,b",
            "random", "greedy"]
    assert main([*argv, "--games", str(MAX_GAMES)]) == 0
    assert [games for _, _, games, _ in calls] == [MAX_GAMES]
    capsys.readouterr()
    assert main([*argv, "--games", str(MAX_GAMES + 1)]) == 2
    assert capsys.readouterr().err == f"halma ladder: error: --games must be 1..{MAX_GAMES:,}, got {MAX_GAMES + 1}\n"
    assert len(calls) == 1


def test_printing_the_ladder_as_json_is_its_document_indented_by_two(tmp_path: Path, capsys) -> None:
    ladder = _ladder_file(tmp_path / "ladder.json", {
        "star-2": {"variant": "star", "seats": 2, "levels": [{"level": "easy", "player": "random", "rating": 1.0}]}})
    assert main(["ladder", "--ladder", str(ladder), "--json"]) == 0
    out, err = capsys.readouterr()
    assert out == json.dumps(load_ladder(ladder), indent=2) + "\n" and err == ""


# --- audit: what a build writes beside the ladder, and in which order it refuses --------------------------------


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative name -> bytes): what a refused or failed build must leave as it was."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_model_is_never_copied_over_another_model_beside_the_ladder(tmp_path: Path, capsys, monkeypatch) -> None:
    """An .onnx candidate named like an unrelated file in the ladder's folder replaced it without a word (the
    build succeeded).  It is refused before any game, naming both files and the way out; nothing changes."""
    from tests.test_ladder import SHIPPED_EXPERT

    _no_tournament(monkeypatch)
    lad = tmp_path / "lad"
    lad.mkdir()
    (lad / SHIPPED_EXPERT.name).write_bytes(b"someone else's model")
    before = _files(lad)
    assert main(["ladder", "--ladder", str(lad / "ladder.json"), "--quiet", "--levels", "a,b", "random",
                 str(SHIPPED_EXPERT)]) == 2
    out, err = capsys.readouterr()
    assert err == (f"halma ladder: error: candidate '{SHIPPED_EXPERT}' would be copied next to the ladder as "
                   f"'{lad / SHIPPED_EXPERT.name}', but that file holds another model: rename or remove one of them "
                   "(halma export CHECKPOINT --name NAME exports under another name), or build the ladder in another "
                   "folder (--ladder)\n") and out == ""
    assert _files(lad) == before


def test_a_rebuild_with_the_same_model_beside_the_ladder_still_works(tmp_path: Path, capsys, monkeypatch) -> None:
    """The same bytes at the copy's name (a rebuild: its manifest stamped by the last one) are no collision."""
    from agents.opponent import read_manifest
    from tests.test_ladder import SHIPPED_EXPERT

    _fake_tournament(monkeypatch, TWO)
    ladder = tmp_path / "ladder.json"
    argv = ["ladder", "--ladder", str(ladder), "--quiet", "--levels", "a,b", "random", str(SHIPPED_EXPERT)]
    assert main(argv) == 0
    assert main(argv) == 0
    capsys.readouterr()
    assert (tmp_path / SHIPPED_EXPERT.name).read_bytes() == SHIPPED_EXPERT.read_bytes()
    assert read_manifest(tmp_path / SHIPPED_EXPERT.name)["level"] == "b"


def test_two_models_of_one_name_are_not_copied_to_one_file(tmp_path: Path, capsys, monkeypatch) -> None:
    """Two .onnx candidates from two folders with one file name: the second copy would replace the first."""
    from agents.export import export_checkpoint
    from tests.opponent_helpers import make_checkpoint

    _no_tournament(monkeypatch)
    first, second = (str(export_checkpoint(make_checkpoint(tmp_path / f"{d}.pt", seed=seed), "m", tmp_path / d,
                                            check_positions=2)) for d, seed in (("x", 1), ("y", 2)))
    assert main(["ladder", "--ladder", str(tmp_path / "lad" / "ladder.json"), "--quiet", "--levels", "a,b", first,
                 second]) == 2
    assert capsys.readouterr().err == (
        f"halma ladder: error: candidates '{first}' and '{second}' would both be copied next to the ladder as "
        f"'{tmp_path / 'lad' / 'star-2-m.onnx'}': export one under another name first (halma export CHECKPOINT "
        "--name NAME)\n")
    assert not (tmp_path / "lad").exists()


def test_a_checkpoint_is_not_exported_over_another_model(tmp_path: Path, capsys, monkeypatch) -> None:
    """The export into the models folder overwrote a file of the same name before the tournament (and an
    interrupt then left the new file: the old model was gone).  Another model there is refused before any
    export or game; a manifest without its model too."""
    from tests.opponent_helpers import make_checkpoint

    _no_tournament(monkeypatch)
    ckpt = make_checkpoint(tmp_path / "kept" / "mine.pt")
    models = tmp_path / "models"
    models.mkdir()
    (models / "star-2-mine.onnx").write_bytes(b"an earlier, different export")
    before = _files(models)
    argv = ["ladder", "--ladder", str(tmp_path / "ladder.json"), "--quiet", "--levels", "a,b", "--models-dir",
            str(models), "random", str(ckpt)]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"halma ladder: error: candidate '{ckpt}' would be exported as "
                          f"'{models / 'star-2-mine.onnx'}', but that file is not an export this command may replace "
                          "(opponent model ") and out == ""
    assert err.endswith("): rename or remove that file, or export into another folder with --models-dir DIR\n")
    assert _files(models) == before and not (tmp_path / "ladder.json").exists()
    (models / "star-2-mine.onnx").unlink()
    (models / "star-2-mine.manifest.json").write_text("{}")
    assert main(argv) == 2
    assert (f"its manifest '{models / 'star-2-mine.manifest.json'}' is there without it"
            in capsys.readouterr().err)
    assert _files(models) == {"star-2-mine.manifest.json": b"{}"}


def test_an_interrupted_rebuild_puts_back_the_export_it_replaced(tmp_path: Path, capsys, monkeypatch) -> None:
    """A rebuild re-exports the same checkpoint over its earlier export (torch may write other bytes); Ctrl-C
    in the tournament then puts the earlier model and manifest back, byte for byte."""
    import agents.arena
    from agents.export import export_checkpoint
    from tests.opponent_helpers import make_checkpoint

    ckpt = make_checkpoint(tmp_path / "kept" / "mine.pt")
    export_checkpoint(ckpt, "mine", tmp_path, name="star-2-mine", check_positions=2)
    manifest = tmp_path / "star-2-mine.manifest.json"
    manifest.write_text(manifest.read_text().replace('"exported_at": "', '"exported_at": "1999-'))  # (an old one)
    before = _files(tmp_path / "kept") | {f"top/{k}": v for k, v in _files(tmp_path).items() if "/" not in k}

    def interrupted(*args: object, **kwargs: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(agents.arena, "run_tournament", interrupted)
    assert main(["ladder", "--ladder", str(tmp_path / "ladder.json"), "--quiet", "--levels", "a,b", "random",
                 str(ckpt)]) == 130
    after = _files(tmp_path / "kept") | {f"top/{k}": v for k, v in _files(tmp_path).items() if "/" not in k}
    assert after == before
    _fake_tournament(monkeypatch, TWO)  # and the rebuild itself goes through
    assert main(["ladder", "--ladder", str(tmp_path / "ladder.json"), "--quiet", "--levels", "a,b", "random",
                 str(ckpt)]) == 0
    capsys.readouterr()
    assert [lv["player"] for lv in load_ladder(tmp_path / "ladder.json")["games"]["star-2"]["levels"]] == [
        "random", "star-2-mine.onnx"]


def _failing_writes(monkeypatch, module: object, fails: str) -> None:
    """``module.write_atomic`` fails for a full disk when it writes a file whose name ends with ``fails``."""
    import errno

    real = module.write_atomic  # type: ignore[attr-defined]

    def write_atomic(path: object, data: object) -> None:
        if str(path).endswith(fails):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(module, "write_atomic", write_atomic)


def test_a_full_disk_while_copying_a_level_s_model_takes_the_copies_back(tmp_path: Path, capsys,
                                                                            monkeypatch) -> None:
    """A write of a model or manifest beside the ladder that failed after the tournament left the copied model
    (and no ladder file) and was a traceback: it is an error naming the file and its folder, and the copy goes."""
    import agents.ladder_build
    from tests.test_ladder import SHIPPED_EXPERT

    _fake_tournament(monkeypatch, TWO)
    _failing_writes(monkeypatch, agents.ladder_build, ".manifest.json")
    tiny = tmp_path / "tiny"
    assert main(["ladder", "--ladder", str(tiny / "ladder.json"), "--quiet", "--levels", "a,b", "random",
                 str(SHIPPED_EXPERT)]) == 2
    out, err = capsys.readouterr()
    manifest = tiny / "star-2-star2.manifest.json"
    assert err == (f"halma ladder: error: cannot write '{manifest}' in the folder '{tiny}': No space left on device "
                   "(no ladder entry was written; the files this build wrote were taken back)\n") and out == ""
    assert not tiny.exists()  # neither the copy nor the folder made for it


def test_a_full_disk_while_stamping_a_manifest_in_place_leaves_it_as_it_was(tmp_path: Path, capsys,
                                                                              monkeypatch) -> None:
    """The stamp of a level's manifest beside the ladder (its model there already) that fails is the same error,
    and the manifest keeps its bytes."""
    import halma_env.files
    from tests.test_ladder import _copy_shipped_model

    _fake_tournament(monkeypatch, TWO)
    name = _copy_shipped_model(tmp_path)
    before = _files(tmp_path)
    _failing_writes(monkeypatch, halma_env.files, ".manifest.json")  # (write_manifest's writer)
    assert main(["ladder", "--ladder", str(tmp_path / "ladder.json"), "--quiet", "--levels", "a,b", "random",
                 str(tmp_path / name)]) == 2
    manifest = tmp_path / "star-2-star2.manifest.json"
    assert capsys.readouterr().err == (f"halma ladder: error: cannot write '{manifest}' in the folder '{tmp_path}': "
                                       "No space left on device (no ladder entry was written; the files this build "
                                       "wrote were taken back)\n")
    assert _files(tmp_path) == before


def test_a_ladder_file_that_cannot_be_written_takes_the_build_s_files_back(tmp_path: Path, capsys,
                                                                             monkeypatch) -> None:
    """The ladder file is the commit point: when it is not written (a full disk), the model copied beside it
    goes, and a manifest stamped in place (a candidate already in the ladder's folder) gets its bytes back."""
    import agents.ladder
    from tests.test_ladder import SHIPPED_EXPERT, _copy_shipped_model

    _fake_tournament(monkeypatch, [(0.0, 1.0), (10.0, 1.0), (20.0, 1.0)])
    lad = tmp_path / "lad"
    name = _copy_shipped_model(lad)  # a candidate in the ladder's folder: its manifest is stamped in place
    before = _files(lad)
    _failing_writes(monkeypatch, agents.ladder, "ladder.json")
    other = SHIPPED_EXPERT.with_name("star-2-quickstart_star2.onnx")  # copied beside the ladder
    assert main(["ladder", "--ladder", str(lad / "ladder.json"), "--quiet", "--levels", "a,b,c", "random",
                 str(lad / name), str(other)]) == 2
    assert capsys.readouterr().err == (f"halma ladder: error: cannot write the ladder file '{lad / 'ladder.json'}': "
                                       "No space left on device\n")
    assert _files(lad) == before


def test_a_ladder_file_garbled_during_the_tournament_is_an_error_and_takes_the_copies_back(
        tmp_path: Path, capsys, monkeypatch) -> None:
    """The ladder is read again after the tournament (another rebuild may have written); a file someone made
    unreadable meanwhile was a traceback.  It is an error naming the file; the copies go and it stays as it is."""
    import agents.arena
    from tests.test_ladder import SHIPPED_EXPERT

    ladder = _ladder_file(tmp_path / "ladder.json", {})
    _fake_tournament(monkeypatch, TWO)
    fake = agents.arena.run_tournament

    def garbling(*args: object, **kwargs: object) -> object:
        ladder.write_text("garbage")
        return fake(*args, **kwargs)

    monkeypatch.setattr(agents.arena, "run_tournament", garbling)
    assert main(["ladder", "--ladder", str(ladder), "--quiet", "--levels", "a,b", "random", str(SHIPPED_EXPERT)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"halma ladder: error: ladder file '{ladder}' ")
    assert err.endswith("; it changed during the tournament, so the star-2 entry was not written\n")
    assert err.count("\n") == 1
    assert _files(tmp_path) == {"ladder.json": b"garbage"}


def test_a_bad_candidate_is_named_before_the_candidate_count(tmp_path: Path, capsys, monkeypatch) -> None:
    """`random gredy` with four levels said '4 levels need at least 4 candidates' and named the misspelt bot
    only once there were four: each candidate's own problem comes first, then the count."""
    from agents.export import export_checkpoint
    from tests.opponent_helpers import make_checkpoint

    _no_tournament(monkeypatch)
    base = ["ladder", "--ladder", str(tmp_path / "x" / "ladder.json"), "--games", "12"]
    assert main([*base, "random", "gredy"]) == 2
    assert capsys.readouterr().err.startswith("halma ladder: error: unknown player 'gredy' (did you mean 'greedy'?)")
    model = export_checkpoint(make_checkpoint(tmp_path / "d2.pt", "diamond", 2), "x", tmp_path / "d",
                              check_positions=2)
    assert main([*base, "random", str(model)]) == 2
    assert capsys.readouterr().err == (f"halma ladder: error: candidate '{model}' plays diamond with 2 seats, not star "
                                       "with 2\n")
    assert main([*base, "random", "greedy"]) == 2  # good candidates, too few: the count
    assert capsys.readouterr().err.startswith("halma ladder: error: 4 levels need at least 4 candidates, got 2")
    assert not (tmp_path / "x").exists()


def test_models_the_written_ladder_names_stay_when_printing_fails_after_it(tmp_path: Path, capsys,
                                                                         monkeypatch) -> None:
    """Once the ladder file is written its models are committed: a full standard output afterwards (the
    'wrote' line) must not take back the model it names."""
    import argparse
    import builtins
    import errno

    import agents.ladder_build
    from tests.test_ladder import SHIPPED_EXPERT

    _fake_tournament(monkeypatch, TWO)

    def print_(*args: object, **kwargs: object) -> None:
        if args and str(args[0]).startswith("\nwrote the"):
            raise OSError(errno.ENOSPC, "No space left on device")
        builtins.print(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(agents.ladder_build, "print", print_, raising=False)
    parser = argparse.ArgumentParser()
    agents.ladder_build.add_arguments(parser)
    with pytest.raises(OSError, match="No space left"):  # (agents.cli says 'cannot write the standard output')
        agents.ladder_build.run(parser.parse_args(["--ladder", str(tmp_path / "ladder.json"), "--quiet", "--levels",
                                                   "a,b", "random", str(SHIPPED_EXPERT)]))
    assert [lv["player"] for lv in load_ladder(tmp_path / "ladder.json")["games"]["star-2"]["levels"]] == [
        "random", SHIPPED_EXPERT.name]
    assert (tmp_path / SHIPPED_EXPERT.name).read_bytes() == SHIPPED_EXPERT.read_bytes()


# --- review: what an undone build puts back, links in the ladder's folder, and dry runs ----------------------


def _links(folder: Path) -> dict[str, str]:
    """Every symbolic link under ``folder`` (relative name -> what it points to)."""
    import os

    return {str(p.relative_to(folder)): os.readlink(p) for p in sorted(folder.rglob("*")) if p.is_symlink()}


def _linked_levels(lad: Path) -> str:
    """A ladder folder whose level model and manifest are links into its own ``store/`` (the loader accepts
    them); returns the model's name."""
    from agents.opponent import manifest_path

    name = _copy_shipped_model(lad / "store")
    for f in (name, manifest_path(name).name):
        (lad / f).symlink_to(f"store/{f}")
    return name


def test_a_failed_rebuild_with_a_relative_models_dir_puts_back_the_stamped_export(tmp_path: Path, capsys,
                                                                                   monkeypatch) -> None:
    """`--models-dir lad` (relative, as docs/export.md shows it) and the ladder's resolved folder named one
    manifest twice; the undo put back both versions and the fresh export's manifest won, so the restored
    model no longer matched its manifest.  Now each file is kept once and comes back byte for byte."""
    import agents.ladder
    from agents.export import export_checkpoint
    from agents.opponent import read_manifest
    from tests.opponent_helpers import make_checkpoint

    monkeypatch.chdir(tmp_path)
    ckpt = make_checkpoint(tmp_path / "kept" / "mine.pt")
    lad = tmp_path / "lad"
    export_checkpoint(ckpt, "mine", lad, name="star-2-mine", check_positions=2)
    manifest = lad / "star-2-mine.manifest.json"
    manifest.write_text(manifest.read_text().replace('"exported_at": "', '"exported_at": "1999-'))  # (an old one)
    before = _files(lad)
    _fake_tournament(monkeypatch, TWO)
    _failing_writes(monkeypatch, agents.ladder, "ladder.json")
    assert main(["ladder", "--ladder", str(lad / "ladder.json"), "--models-dir", "lad", "--quiet", "--levels", "a,b",
                 "random", str(ckpt)]) == 2
    assert "cannot write the ladder file" in capsys.readouterr().err
    assert _files(lad) == before
    read_manifest(lad / "star-2-mine.onnx")  # (its sha256 is the model's)


def test_an_undone_stamp_keeps_the_manifest_s_permissions(tmp_path: Path, capsys, monkeypatch) -> None:
    """The undo wrote the old bytes back as a new file, with the default permissions: a manifest kept private
    (0o640) became world-readable.  Its mode comes back with its bytes."""
    import agents.ladder
    from agents.opponent import manifest_path

    _fake_tournament(monkeypatch, TWO)
    name = _copy_shipped_model(tmp_path)
    manifest = manifest_path(tmp_path / name)
    manifest.chmod(0o640)
    before = _files(tmp_path)
    _failing_writes(monkeypatch, agents.ladder, "ladder.json")
    assert main(["ladder", "--ladder", str(tmp_path / "ladder.json"), "--quiet", "--levels", "a,b", "random",
                 str(tmp_path / name)]) == 2
    capsys.readouterr()
    assert _files(tmp_path) == before and manifest.stat().st_mode & 0o777 == 0o640


def test_a_failed_rebuild_puts_back_the_links_a_ladder_s_levels_are(tmp_path: Path, capsys, monkeypatch) -> None:
    """Levels that are links inside the ladder's folder (the loader accepts them): the stamp replaces the
    manifest's link, and the undo removed it as a file the build had added; the link is put back, as it was."""
    import agents.ladder

    _fake_tournament(monkeypatch, TWO)
    lad = tmp_path / "lad"
    name = _linked_levels(lad)
    before, links = _files(lad), _links(lad)
    _failing_writes(monkeypatch, agents.ladder, "ladder.json")
    assert main(["ladder", "--ladder", str(lad / "ladder.json"), "--quiet", "--levels", "a,b", "random",
                 str(lad / name)]) == 2
    capsys.readouterr()
    assert _links(lad) == links and _files(lad) == before


def test_a_candidate_that_is_a_link_in_the_ladder_s_folder_keeps_its_name(tmp_path: Path, capsys,
                                                                         monkeypatch) -> None:
    """A model linked into the ladder's folder from a folder below it resolved into that folder, was to be
    copied onto its own link and refused ('its manifest ... is there without it').  It is a level as it is."""
    from agents.opponent import manifest_path, read_manifest

    _fake_tournament(monkeypatch, TWO)
    lad = tmp_path / "lad"
    name = _linked_levels(lad)
    (lad / manifest_path(name).name).unlink()  # a manifest of its own beside the link
    (lad / manifest_path(name).name).write_bytes((lad / "store" / manifest_path(name).name).read_bytes())
    assert main(["ladder", "--ladder", str(lad / "ladder.json"), "--quiet", "--levels", "a,b", "random",
                 str(lad / name)]) == 0
    capsys.readouterr()
    assert [lv["player"] for lv in load_ladder(lad / "ladder.json")["games"]["star-2"]["levels"]] == ["random", name]
    assert _links(lad) == {name: f"store/{name}"} and read_manifest(lad / name)["level"] == "b"


def test_a_checkpoint_is_not_exported_over_links_to_another_model(tmp_path: Path, capsys, monkeypatch) -> None:
    """A model and manifest at the export's names that are both links were not checked (neither is a regular
    file) and the export replaced them; what they point to is judged, so another model is refused."""
    from tests.opponent_helpers import make_checkpoint

    _no_tournament(monkeypatch)
    ckpt = make_checkpoint(tmp_path / "kept" / "mine.pt")
    models = tmp_path / "models"
    _copy_shipped_model(tmp_path / "elsewhere")  # another model
    models.mkdir()
    for f in ("star-2-mine.onnx", "star-2-mine.manifest.json"):
        (models / f).symlink_to(tmp_path / "elsewhere" / f.replace("mine", "star2"))
    links = _links(models)
    assert main(["ladder", "--ladder", str(tmp_path / "ladder.json"), "--quiet", "--levels", "a,b", "--models-dir",
                 str(models), "random", str(ckpt)]) == 2
    assert "but that file is not an export this command may replace (manifest " in capsys.readouterr().err
    assert _links(models) == links and not (tmp_path / "ladder.json").exists()


def test_a_copy_of_another_export_of_the_same_checkpoint_is_no_collision(tmp_path: Path, capsys,
                                                                          monkeypatch) -> None:
    """A rebuild with --models-dir outside the ladder's folder re-exports the checkpoint, and its copy beside
    the ladder was compared byte for byte with the last build's: another torch (here another opset) writes
    other bytes, and the rebuild was refused.  The same checkpoint (the manifests say so) is the same model."""
    from agents.export import export_checkpoint
    from agents.opponent import read_manifest
    from tests.opponent_helpers import make_checkpoint

    _fake_tournament(monkeypatch, TWO)
    ckpt = make_checkpoint(tmp_path / "kept" / "mine.pt")
    lad = tmp_path / "lad"
    export_checkpoint(ckpt, "mine", lad, name="star-2-mine", check_positions=2, opset=18)
    assert main(["ladder", "--ladder", str(lad / "ladder.json"), "--quiet", "--levels", "a,b", "--models-dir",
                 str(tmp_path / "models"), "random", str(ckpt)]) == 0
    capsys.readouterr()
    assert (lad / "star-2-mine.onnx").read_bytes() == (tmp_path / "models" / "star-2-mine.onnx").read_bytes()
    assert read_manifest(lad / "star-2-mine.onnx")["level"] == "b"


def test_a_dry_run_is_refused_what_the_run_would_be(tmp_path: Path, capsys, monkeypatch) -> None:
    """--dry-run exported into a temporary folder and copied nothing, so it passed both collision checks that
    the real run then failed: an export over another model, a copy over another model beside the ladder."""
    from tests.opponent_helpers import make_checkpoint
    from tests.test_ladder import SHIPPED_EXPERT

    _no_tournament(monkeypatch)
    ckpt = make_checkpoint(tmp_path / "kept" / "mine.pt")
    lad = tmp_path / "lad"
    lad.mkdir()
    (lad / "star-2-mine.onnx").write_bytes(b"an earlier, different export")
    (lad / SHIPPED_EXPERT.name).write_bytes(b"someone else's model")
    before = _files(lad)
    base = ["ladder", "--ladder", str(lad / "ladder.json"), "--quiet", "--levels", "a,b"]
    for candidate, refusal, why in ((str(ckpt), "would be exported as", "is not an export this command may replace"),
                                    (str(SHIPPED_EXPERT), "would be copied next to", "holds another model")):
        assert main([*base, "random", candidate]) == 2
        err = capsys.readouterr().err
        assert refusal in err and f"that file {why}" in err
        assert main([*base, "--dry-run", "random", candidate]) == 2
        assert capsys.readouterr().err == err
    assert _files(lad) == before


# --- one model twice, a linked ladder file, a signal at the commit point (the second review) --------------------


def test_one_model_named_twice_is_refused_before_anything_is_written(tmp_path: Path, capsys) -> None:
    """A checkpoint beside an export of it took two levels, and after the games the export's copy next to the
    ladder replaced the fresh export that had played; one file spelt two ways played itself.  Both are refused
    before any export; two identical checkpoints (exported apart) and one model with other options still go."""
    from agents.export import export_checkpoint
    from agents.ladder_build import _check_each_model_once
    from tests.opponent_helpers import make_checkpoint

    ckpt = make_checkpoint(tmp_path / "run" / "m.pt")
    model = export_checkpoint(ckpt, "m", tmp_path / "exports", check_positions=2)
    with pytest.raises(LadderError, match=r"are one model \(a checkpoint and an export of it\): name the export"):
        _check_each_model_once(["greedy", str(model), str(ckpt)])
    spelt = str(tmp_path / "exports" / ".." / "exports" / model.name)
    with pytest.raises(LadderError, match=r"are one model file: name it once"):
        _check_each_model_once([str(model), spelt])
    twin = tmp_path / "other" / "m.pt"
    twin.parent.mkdir()
    twin.write_bytes(ckpt.read_bytes())
    _check_each_model_once(["greedy", str(ckpt), str(twin)])
    _check_each_model_once([str(model), f"{model}:search=top=4"])
    before = _files(tmp_path)
    assert main(["ladder", "--ladder", str(tmp_path / "lad" / "ladder.json"), "--quiet", "--levels", "a,b",
                 str(ckpt), str(model)]) == 2
    assert _files(tmp_path) == before and not (tmp_path / "lad").exists()
    # a candidate's own problem first: a missing checkpoint is named as such, not as a file the check cannot read
    capsys.readouterr()
    assert main(["ladder", "--ladder", str(tmp_path / "lad" / "ladder.json"), "--quiet", "--levels", "a,b",
                 str(tmp_path / "gone.pt"), str(model)]) == 2
    assert capsys.readouterr().err == f"halma ladder: error: checkpoint '{tmp_path / 'gone.pt'}' does not exist\n"


def test_a_ladder_file_that_links_into_another_folder_is_refused(tmp_path: Path) -> None:
    """The models went beside the link's target while the rebuilt file replaced the link in its own folder
    (a planted link is never written through): the new file named models that were not beside it."""
    from agents.ladder_build import build_entry

    (tmp_path / "real").mkdir()
    _ladder_file(tmp_path / "real" / "ladder.json", {})
    (tmp_path / "mine").mkdir()
    link = tmp_path / "mine" / "ladder.json"
    link.symlink_to(tmp_path / "real" / "ladder.json")
    with pytest.raises(LadderError, match=r"is a link to '.*real/ladder\.json' in another folder: give that file "
                                          r"itself as --ladder"):
        build_entry(["greedy", "random"], "star", 2, 4, levels=("a", "b"), path=link)
    beside = tmp_path / "real" / "same.json"  # a link within the ladder's folder is no such case
    beside.symlink_to("ladder.json")
    assert build_entry(["greedy:noise=0.9", "greedy"], "star", 2, 4, levels=("a", "b"), path=beside,
                       min_separation=0)["levels"]


def test_a_signal_after_the_ladder_file_is_written_keeps_the_models_it_names(tmp_path: Path, capsys,
                                                                             monkeypatch) -> None:
    """Ctrl-C between the ladder file's rename and the build's commit took back the model copied beside it,
    which the file on disk already named: the undo now asks the file on disk first."""
    import agents.ladder_build
    from agents.ladder import level_player
    from tests.test_ladder import SHIPPED_EXPERT

    _fake_tournament(monkeypatch, TWO)
    real_save = agents.ladder_build.save_ladder

    def saved_then_interrupted(*args: object, **kwargs: object) -> object:
        real_save(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(agents.ladder_build, "save_ladder", saved_then_interrupted)
    ladder = tmp_path / "lad" / "ladder.json"
    assert main(["ladder", "--ladder", str(ladder), "--quiet", "--levels", "a,b", "random", str(SHIPPED_EXPERT)]) == 130
    assert capsys.readouterr().err == "\nhalma ladder: interrupted\n"
    assert (ladder.parent / SHIPPED_EXPERT.name).is_file()
    assert level_player("b", "star", 2, path=ladder).select_move(Game(Rules("star", 2)))
