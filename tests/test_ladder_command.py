"""`halma ladder` as a command (agents/ladder_build.py `run`, `print_ladder`, `check_writable`): what it prints,
what it writes and what it refuses, pinned line by line (mutation round on the command's code).
Tournaments are faked (tests/test_ladder.py `_fake_tournament`), so every test here is fast."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.cli import main
from agents.ladder import format_ladder, load_ladder
from tests.test_ladder import _fake_tournament, _ladder_file

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


def test_the_progress_bar_is_shown_unless_quiet(tmp_path: Path, capsys, monkeypatch) -> None:
    calls = _fake_tournament(monkeypatch, TWO)
    argv = ["ladder", "--ladder", str(tmp_path / "ladder.json"), "--dry-run", "--levels", "a,b", "--games", "2",
            "random", "greedy"]
    assert main(argv) == 0
    assert main([*argv, "--quiet"]) == 0
    assert [kwargs["progress"] for *_, kwargs in calls] == [True, False]


def test_one_game_and_one_worker_are_enough(tmp_path: Path, capsys, monkeypatch) -> None:
    calls = _fake_tournament(monkeypatch, TWO)
    ladder = tmp_path / "ladder.json"
    assert main(["ladder", "--ladder", str(ladder), "--quiet", "--levels", "a,b", "--games", "1", "--workers", "1",
                 "random", "greedy"]) == 0
    [(_, _, games, kwargs)] = calls
    assert (games, kwargs["workers"]) == (1, 1)
    assert load_ladder(ladder)["games"]["star-2"]["tournament"]["games"] == 1


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
                  "--quiet no progress bar", "--dry-run print the new entry; write nothing",
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
