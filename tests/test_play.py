"""The terminal play session, driven command by command."""

from __future__ import annotations

import pytest

from agents.play import HUMAN, PlaySession, TimeUp
from halma_env import Game, Rules
from halma_env.rules import parse_rule_options


class FirstMove:
    """A deterministic CPU stand-in: always the first legal move."""

    name = "first"

    def select_move(self, game, time_budget=None):
        return game.legal_moves()[0]


def make_first(name, seed=None):
    if name not in ("first", "medium"):
        raise ValueError(f"unknown player {name!r}")
    return FirstMove()


def session(seats, lines=None, **kw):
    out: list[str] = []
    s = PlaySession(Rules("star", len(seats)), seats, color=False, out=out.append, make_player=make_first, **kw)
    return s, out


def test_hot_seat_moves_and_bad_input_leaves_game_unchanged():
    s, out = session([HUMAN, HUMAN])
    s.handle("113-104")
    assert s.game.moves == [(113, 104)]
    before = s.game.position()
    for bad in ("113-104", "7-7", "0-200", "500", "frobnicate", "#9", "cpu x first", "save"):
        s.handle(bad)
        assert s.game.position() == before
        assert out[-1].startswith("error:"), (bad, out[-1])
    s.handle("moves")
    assert "#1 " in out[-1]
    s.handle("#1")
    assert s.game.ply == 2


def test_pick_piece_shows_destinations():
    s, out = session([HUMAN, HUMAN])
    s.handle("117")
    assert out[-1] == "117 can go to: 104, 106"
    assert "*" in out[-3]  # the board drawn with the marks


def test_cpu_answers_and_undo_returns_to_the_humans_turn():
    s, out = session([HUMAN, "first"])
    s.handle("113-104")
    assert s.game.ply == 2 and s.game.to_move == 0  # the CPU answered
    s.handle("undo")
    assert s.game.ply == 0 and s.game.to_move == 0


def test_undo_when_the_cpu_moved_first_keeps_its_opening():
    s, out = session(["first", HUMAN])
    s.play_cpu_turns()
    assert s.game.ply == 1 and s.game.to_move == 1
    before = s.game.position()
    s.handle("undo")  # the human has not moved: nothing of theirs to take back
    assert out[-1].startswith("error:") and "no human seat has moved" in out[-1]
    assert s.game.position() == before and s.game.ply == 1
    s.handle("moves")
    s.handle("#1")
    assert s.game.ply == 3 and s.game.to_move == 1  # the CPU answered
    s.handle("undo")  # the human's move and the CPU's answer, not the CPU's opening
    assert s.game.ply == 1 and s.game.to_move == 1 and s.game.position() == before


def test_game_over_is_drawn_once():
    s, out = session([HUMAN, "first"])
    s.handle("resign")
    assert s.game.is_over
    assert sum("game over" in line for line in out) == 1
    assert any(line.startswith("seat 0 (") and line.endswith("resigns") for line in out)
    s3, out3 = session([HUMAN, "first", "first"])
    s3.rules = Rules("star", 3, move_limit=30)
    s3.game = Game(s3.rules)
    s3.handle("resign")  # the CPUs play the game to its end
    assert s3.game.is_over and sum("game over" in line for line in out3) == 1


class WrongGame:
    """A CPU that cannot play this game (as a checkpoint of another variant)."""

    name = "wrong"

    def select_move(self, game, time_budget=None):
        raise ValueError("plays diamond with 2 seats, not star with 2")


def test_a_cpu_that_cannot_play_hands_the_seat_back():
    out: list[str] = []
    make = lambda name, seed=None: WrongGame() if name == "wrong" else make_first(name, seed)  # noqa: E731
    s = PlaySession(Rules("star", 2), [HUMAN, "wrong"], color=False, out=out.append, make_player=make)
    s.handle("113-104")  # the human's legal move stands; the CPU's failure does not leave the session stuck
    assert s.game.moves == [(113, 104)] and s.is_human(1)
    assert any("seat 1's player wrong cannot play this game (plays diamond" in line for line in out)
    s.handle("7-16")
    assert s.game.ply == 2


def test_cpu_time_must_be_positive():
    for bad in (-1.0, 0.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="--cpu-time"):
            session([HUMAN, "first"], cpu_budget=bad)


def test_seat_substitution_and_resign():
    s, out = session([HUMAN, HUMAN, HUMAN])
    s.handle("cpu 1 first")
    s.handle("113-104")
    assert s.game.to_move == 2 and s.game.ply == 2  # seat 1 was played by the CPU
    s.handle("human 1")
    s.handle("resign")
    assert s.game.status[2] == "resigned" and s.game.places[2] == 3


def test_save_load_replay(tmp_path):
    s, out = session([HUMAN, HUMAN])
    s.handle("113-104")
    s.handle("7-16")
    path = tmp_path / "g.json"
    s.handle(f"save {path}")
    s2, out2 = session([HUMAN, HUMAN])
    s2.handle(f"load {path}")
    assert s2.game.position() == s.game.position()
    answers = iter(["", "", ""])
    s2.replay(__import__("halma_env.records", fromlist=["load_record"]).load_record(path), step=lambda: next(answers))
    assert out2[-1] == "[2/2] 7-16"
    assert f"loaded {path}: ply 2" in out2
    s2.handle(f"load {tmp_path / 'missing.json'}")
    assert out2[-1].startswith("error:")
    # a file error names the reason and the path, not the errno
    s2.handle(f"save {tmp_path / 'no' / 'g.json'}")
    assert out2[-1] == f"error: game record: no directory to save in: {str(tmp_path / 'no')!r}"


def test_numbered_moves_belong_to_the_position_they_were_listed_in():
    s, out = session([HUMAN, HUMAN])
    s.handle("#1")
    assert out[-1] == "error: there is no numbered list of this position to pick #1 from: type 'moves' first"
    s.handle("moves")
    s.handle("#1")
    assert s.game.ply == 1
    assert "seat 0 (human) plays 111-102" in out  # a human's move is echoed like a CPU's
    s.handle("#1")  # the list was for the position before that move
    assert s.game.ply == 1 and out[-1].startswith("error: there is no numbered list")
    s.handle("moves")
    s.handle("undo")  # back to the start: a list of ply 1 does not hold there
    s.handle("#1")
    assert s.game.ply == 0 and out[-1].startswith("error: there is no numbered list")


def test_new_game_rotates_the_start():
    s, out = session([HUMAN, HUMAN])
    s.handle("new")
    assert s.game.to_move == 1 and s.rules.first_seat == 1


def test_time_limit_lets_the_cpu_move_for_the_human():
    s, out = session([HUMAN, HUMAN], time_limit=30)
    reads = iter([TimeUp(), "quit"])

    def read(prompt, timeout):
        assert timeout == 30
        item = next(reads)
        if isinstance(item, Exception):
            raise item
        return item

    s.run(read)
    assert s.game.ply == 1 and any("time is up" in line for line in out)


def test_rule_options_and_cli_errors(capsys):
    assert parse_rule_options(["move_limit=300", "anti_blocking=off", "stall_limit=none"]) == {
        "move_limit": 300, "anti_blocking": False, "stall_limit": None,
    }
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_rule_options(["oops"])
    from agents.cli import main

    assert main(["play", "--seats", "4", "--variant", "diamond"]) == 2
    assert "diamond is played by 2, 3 seats" in capsys.readouterr().err
    assert main(["play", "--rule", "bogus=1"]) == 2
    assert "unknown rule option" in capsys.readouterr().err
    assert main(["play", "--replay", "/nonexistent/game.json"]) == 2
    assert "cannot read '/nonexistent/game.json': No such file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["play", "--time-limit", "45"])
    assert "invalid choice: 45 (choose from 30, 60)" in capsys.readouterr().err


def test_cli_session_takes_its_seat_count_from_the_players(monkeypatch, capsys):
    import io

    from agents.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO("quit\n"))
    assert main(["play", "--players", "human,human,human"]) == 0
    out = capsys.readouterr().out
    assert "star, 3 seats, ply 0" in out
    assert "\x1b[" not in out  # no colour codes when stdout is not a terminal
    assert main(["play", "--seats", "2", "--players", "human,human,human"]) == 2
    assert "2 seats need 2 players, got 3" in capsys.readouterr().err


def test_whole_game_between_cpus_ends():
    s, out = session(["first", "first"])
    s.rules = Rules("star", 2, move_limit=40)
    s.game = Game(s.rules)
    s.play_cpu_turns()
    assert s.game.is_over and "game over" in out[-1]


def test_a_level_seat_says_what_it_plays_as():
    class Level(FirstMove):
        name = "medium"

        def describe(self, rules):
            return f"model-for-{rules.variant}-{rules.num_players}.onnx"

    out: list[str] = []
    s = PlaySession(Rules("star", 2), [HUMAN, "medium"], color=False, out=out.append,
                    make_player=lambda name, seed=None: Level())
    s.run(lambda prompt, timeout: "quit")
    assert "seat 1 (blue): medium = model-for-star-2.onnx" in out


def test_the_shipped_ladder_describes_its_levels():
    from agents.ladder import LevelPlayer

    assert LevelPlayer("expert").describe(Rules("star", 2)) == "star-2-star2.onnx"
    assert LevelPlayer("hard").describe(Rules("star", 3)) == "greedy"
    from agents.registry import LEVELS

    assert LevelPlayer("easy").describe(Rules("star", 1)) == LEVELS["easy"]  # no solitaire entry: the fallback bot
