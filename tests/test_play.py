"""The terminal play session, driven command by command."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.play import HUMAN, REPLAY_PROMPT, PlaySession, TimeUp
from halma_env import Game, Move, Rules
from halma_env.records import GameRecord, load_record
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


UNSAVED = "(the game left at ply {} was not saved: 'save FILE' keeps a game, 'load FILE' continues it)"


def session(seats, lines=None, **kw):
    out: list[str] = []
    s = PlaySession(Rules("star", len(seats)), seats, color=False, out=out.append, make_player=make_first, **kw)
    return s, out


def answering(*items):
    """A reader for ``PlaySession.run`` that gives ``items`` in turn at any prompt, raising those that are
    exceptions (``TimeUp()``: no command came in time)."""
    queue = iter(items)

    def read(prompt, timeout):
        item = next(queue)
        if isinstance(item, BaseException):
            raise item
        return item

    return read


def scripted(lines):
    """A reader for ``PlaySession.run``: the lines one at a prompt, then the end of input; a look for a
    command between the moves of CPUs playing on (the empty prompt) finds none."""
    lines = iter(lines)

    def read(prompt, timeout):
        if prompt == "":
            raise TimeUp()
        line = next(lines, None)
        if line is None:
            raise EOFError
        return line

    return read


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
    s3.run(scripted(["resign"]))  # the CPUs play the game to its end, a move at a time
    assert s3.game.is_over and sum("game over" in line for line in out3) == 1


class WrongGame:
    """A CPU that passes the check at the start but fails in the game (as a model whose file went away)."""

    name = "wrong"

    def select_move(self, game, time_budget=None):
        if game.ply == 0:
            return game.legal_moves()[0]
        raise ValueError("the model file is gone")


def test_a_cpu_that_cannot_play_hands_the_seat_back():
    out: list[str] = []
    make = lambda name, seed=None: WrongGame() if name == "wrong" else make_first(name, seed)  # noqa: E731
    s = PlaySession(Rules("star", 2), [HUMAN, "wrong"], color=False, out=out.append, make_player=make)
    s.handle("113-104")  # the human's legal move stands; the CPU's failure does not leave the session stuck
    assert s.game.moves == [(113, 104)] and s.is_human(1)
    assert any("seat 1's player wrong cannot play this game (the model file is gone)" in line for line in out)
    s.handle("7-16")
    assert s.game.ply == 2


class FaultyBot:
    """A plugin bot with a bug from its second move on: it raises, answers an illegal move or answers no move."""

    def __init__(self, fault):
        self.name, self.fault = "faulty", fault

    def select_move(self, game, time_budget=None):
        if game.ply <= 1:
            return game.legal_moves()[0]
        if self.fault == "raises":
            return 1 / 0
        return Move(1, 2) if self.fault == "illegal" else None


@pytest.mark.parametrize(("fault", "said"), [
    ("raises", "seat 1's player faulty failed: ZeroDivisionError: division by zero; a human plays seat 1 again"),
    ("illegal", "seat 1's player faulty chose Move(1, 2), which is not a legal move: "),
    ("none", "seat 1's player faulty chose None, which is not a legal move: "),
])
def test_a_cpu_that_fails_or_answers_an_illegal_move_hands_the_seat_back(fault: str, said: str) -> None:
    """A plugin bot that raised, or answered a move that is not legal, ended halma play with a traceback (exit 1,
    the game lost); halma eval forfeits such a seat.  The seat goes back to a human, the game as it was."""
    out: list[str] = []
    make = lambda name, seed=None: FaultyBot(fault) if name == "faulty" else make_first(name, seed)  # noqa: E731
    s = PlaySession(Rules("star", 2), [HUMAN, "faulty"], color=False, out=out.append, make_player=make)
    s.handle("113-104")
    assert s.game.ply == 2 and s.is_human(0) and not s.is_human(1)
    s.handle(str(s.game.legal_moves()[0]))  # its second move fails
    assert s.game.ply == 3 and s.game.to_move == 1 and s.is_human(1)
    assert any(line.startswith(f"error: {said}") for line in out), out
    s.handle(str(s.game.legal_moves()[0]))  # a human plays the seat on
    assert s.game.ply == 4


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


def test_save_writes_over_a_game_record_but_not_over_another_kind_of_file(tmp_path):
    """save replaced whatever was at the path: a checkpoint, a config or a results.json given by a slip of the
    hand was gone. A record (saved before, here or by the arena) is still written over; anything else is refused
    and stays as it was."""
    from halma_env.records import load_record

    s, out = session([HUMAN, HUMAN])
    record = tmp_path / "g.json"
    s.handle(f"save {record}")
    s.handle("113-104")
    s.handle(f"save {record}")  # again, one move on
    assert out[-1] == f"saved to {record}" and len(load_record(record).to_dict()["events"]) == 1
    for name, content in [("last.pt", b"PK\x03\x04 a checkpoint"), ("results.json", b'{"format": "results"}'),
                          ("notes.txt", b"my notes"), ("deep.json", b"[" * 100_000)]:
        other = tmp_path / name
        other.write_bytes(content)
        s.handle(f"save {other}")
        assert out[-1] == (f"error: {str(other)!r} holds a file that is not a game record, which save does not "
                           "write over: give another name, or remove it first")
        assert other.read_bytes() == content
    empty = tmp_path / "touched.json"  # made first with touch: nothing to lose
    empty.touch()
    s.handle(f"save {empty}")
    assert out[-1] == f"saved to {empty}" and load_record(empty)


def test_save_to_a_name_ending_in_a_slash_writes_no_file_and_tilde_is_the_home_folder(tmp_path, monkeypatch):
    """``save x/`` wrote the file ``x`` (``Path`` drops the slash), and ``save ~/g.json`` looked for a folder
    named ``~``: no shell reads the prompt's line."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    s, out = session([HUMAN, HUMAN])
    s.handle("113-104")
    s.handle("save games/")
    assert out[-1] == ("error: game record: the name ends in '/', so it names a directory, not a file: "
                       "'games/'")
    assert list(tmp_path.iterdir()) == [tmp_path / "home"]
    s.handle("save ~/g.json")
    assert out[-1] == f"saved to {tmp_path / 'home' / 'g.json'}"
    s2, out2 = session([HUMAN, HUMAN])
    s2.handle("load ~/g.json")
    assert s2.game.position() == s.game.position()


def test_a_file_name_with_spaces_is_given_in_quotes(tmp_path, monkeypatch):
    """The line was split at every space, so 'save My Games/g.json' could not be written at all, and the error
    only repeated the form; quotes now work as in a shell, and the form says to use them."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "My Games").mkdir()
    s, out = session([HUMAN, HUMAN])
    s.handle("113-104")
    s.handle("save My Games/g.json")
    assert out[-1] == "error: save is written 'save FILE' (quote a name with spaces), got 'save My Games/g.json'"
    s.handle('save "My Games/g.json"')
    assert out[-1] == "saved to My Games/g.json" and (tmp_path / "My Games" / "g.json").is_file()
    s2, out2 = session([HUMAN, HUMAN])
    s2.handle("load 'My Games/g.json'")
    assert s2.game.position() == s.game.position()
    s2.handle('load "My Games/g.json')
    assert out2[-1] == "error: a quote is not closed in 'load \"My Games/g.json'"


def test_a_saved_file_name_with_a_control_character_is_shown_escaped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s, out = session([HUMAN, HUMAN])
    s.handle("save a\x1b[31mb.json")
    assert out[-1] == "saved to 'a\\x1b[31mb.json'" and "\x1b" not in out[-1]
    s.handle("load a\x1b[31mb.json")
    assert "loaded 'a\\x1b[31mb.json': ply 0" in out


def test_a_save_onto_a_full_disk_names_the_file(tmp_path, monkeypatch):
    """A write that fails for want of room raises without a file name: the message said only "No space left on
    device", not which save (the rename stands in for the write here)."""
    import errno

    import halma_env.records

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(halma_env.records.os, "replace", full)
    s, out = session([HUMAN, HUMAN])
    s.handle(f"save {tmp_path / 'g.json'}")
    assert out[-1] == f"error: game record: No space left on device: {str(tmp_path / 'g.json')!r}"
    assert list(tmp_path.iterdir()) == []  # the temporary file went


def test_numbered_moves_belong_to_the_position_they_were_listed_in():
    s, out = session([HUMAN, HUMAN])
    s.handle("#1")
    assert out[-1] == "error: there is no numbered list of this position to pick '#1' from: type 'moves' first"
    s.handle("moves")
    s.handle("#1")
    assert s.game.ply == 1
    assert "seat 0 (human) plays 111-102" in out  # a human's move is echoed like a CPU's
    s.handle("#1")  # the list was for the position before that move
    assert s.game.ply == 1 and out[-1].startswith("error: there is no numbered list of this position to pick '#1'")
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
    assert capsys.readouterr().err == ("halma play: error: game record '/nonexistent/game.json' cannot be read: "
                                       "No such file or directory\n")
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
    s.run(scripted([]))  # no command typed between the moves; then the end of input at the prompt
    assert s.game.is_over and "game over" in out[-4] and out[-2] == ""
    assert out[-3] == "result: the move limit was reached; a draw; type 'new' for another"
    assert out[-1] == UNSAVED.format(40)


def test_cpus_alone_under_rules_without_limits_are_told_they_may_never_end() -> None:
    """Two `easy` seats under the default star rules shuffled a piece back and forth past ply 36,000: as the
    CPUs play on alone, the session says once that no limit ends such a game and which --rule would; a
    game with a limit (above: move_limit=40) says nothing."""
    s, out = session(["first", "first"])
    s.run(answering(TimeUp(), TimeUp(), TimeUp(), "quit"))
    notes = [line for line in out if line.startswith("note:")]
    assert s.game.ply == 3 and notes == [
        "note: these rules set no move, stall or repetition limit, so CPUs that repeat their moves never end the "
        "game (--rule repetition_limit=3 or --rule move_limit=N ends one); 'quit' stops it"]
    limited, limited_out = session(["first", "first"])
    limited.rules = Rules("star", 2, repetition_limit=3)
    limited.game = Game(limited.rules)
    limited.run(answering(TimeUp(), "quit"))
    assert limited.game.ply == 1 and not any(line.startswith("note:") for line in limited_out)


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
    from agents.registry import FALLBACK_LEVELS

    # no solitaire entry: the fallback bot, and it says so
    assert LevelPlayer("easy").describe(Rules("star", 1)) == (
        f"{FALLBACK_LEVELS['easy']} (built-in: the shipped ladder has no star-1 entry)")


# --- the seats not given by --players, players of another game, ladder labels, seat changes in records ---

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def test_cli_gives_the_seats_not_given_by_players_the_level(monkeypatch, capsys):
    import io

    from agents.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO("quit\n"))
    assert main(["play", "--seats", "3", "--players", "human,greedy", "--level", "random"]) == 0
    out = capsys.readouterr().out
    assert "star, 3 seats, ply 0" in out
    assert "seat 1 (" in out and "): greedy" in out and "seat 2 (" in out and "): random" in out
    monkeypatch.setattr("sys.stdin", io.StringIO("quit\n"))
    assert main(["play", "--seats", "3", "--players", "human,greedy"]) == 0  # --level's default, medium
    out = capsys.readouterr().out
    assert "): greedy" in out and "): medium = " in out
    monkeypatch.setattr("sys.stdin", io.StringIO("quit\n"))
    assert main(["play", "--players", "human,greedy"]) == 0  # --seats defaults to one per --players entry
    assert "star, 2 seats, ply 0" in capsys.readouterr().out
    assert main(["play", "--seats", "2", "--players", "human,greedy,greedy"]) == 2  # more players than seats
    assert "2 seats need 2 players, got 3" in capsys.readouterr().err


class StarOnly(FirstMove):
    """A CPU that plays only the star (as a model exported for one game)."""

    name = "staronly"

    def select_move(self, game, time_budget=None):
        if (game.rules.variant, game.rules.num_players) != ("star", 2):
            raise ValueError(f"was exported for star with 2 seats; it cannot play {game.rules.variant} with "
                             f"{game.rules.num_players} seats")
        return super().select_move(game, time_budget)


def make_star_only(name, seed=None):
    return StarOnly() if name == "staronly" else make_first(name, seed)


def test_a_player_of_another_game_is_refused_before_the_first_move():
    with pytest.raises(ValueError, match=r"seat 2's player 'staronly' cannot play star with 3 seats: was exported"):
        PlaySession(Rules("star", 3), [HUMAN, "first", "staronly"], color=False, out=lambda line: None,
                    make_player=make_star_only)


def test_cpu_command_refuses_a_player_of_another_game_at_once():
    out: list[str] = []
    s = PlaySession(Rules("star", 3), [HUMAN, HUMAN, HUMAN], color=False, out=out.append, make_player=make_star_only)
    s.handle("cpu 1 staronly")
    assert out[-1].startswith("error: seat 1's player 'staronly' cannot play star with 3 seats")
    assert s.is_human(1) and s.seats[1] == HUMAN and s.game.ply == 0
    s.handle("cpu 1 first")
    s.handle("cpu 1 staronly")  # a seat the CPU plays keeps its player
    assert out[-1].startswith("error: seat 1's player 'staronly'") and s.seats[1] == "first"


def test_load_of_another_game_rechecks_the_cpu_seats(tmp_path):
    from halma_env.records import GameRecord

    path = tmp_path / "diamond.json"
    diamond = Game(Rules("diamond", 2))
    diamond.play(diamond.legal_moves()[0])
    GameRecord.from_game(diamond, players=[HUMAN, HUMAN]).save(path)
    out: list[str] = []
    s = PlaySession(Rules("star", 2), [HUMAN, "staronly"], color=False, out=out.append, make_player=make_star_only)
    s.handle(f"load {path}")
    assert out[-1].startswith("error: seat 1's player 'staronly' cannot play diamond with 2 seats")
    assert "human 1" in out[-1]  # what to do about it
    assert s.game.rules.variant == "star" and s.game.ply == 0 and s.seats == [HUMAN, "staronly"]
    s.handle("human 1")
    s.handle(f"load {path}")
    assert s.game.rules.variant == "diamond" and s.game.ply == 1
    s.handle("cpu 1 staronly")  # the loaded game is what the CPU seats are checked against now
    assert out[-1].startswith("error: seat 1's player 'staronly' cannot play diamond with 2 seats")


def test_cli_refuses_a_checkpoint_of_another_game_before_the_first_move(monkeypatch, capsys):
    import io

    from agents.cli import main

    star2 = str(ROOT / "agents" / "checkpoints" / "star2.pt")
    monkeypatch.setattr("sys.stdin", io.StringIO("113-104\nquit\n"))
    assert main(["play", "--players", f"human,{star2},greedy"]) == 2
    captured = capsys.readouterr()
    assert f"halma play: error: seat 1's player {star2!r} cannot play star with 3 seats" in captured.err
    assert "ply 0" not in captured.out  # no board, no move

    star3 = str(ROOT / "agents" / "checkpoints" / "star3.pt")
    out: list[str] = []
    s = PlaySession(Rules("star", 2), [HUMAN, HUMAN], color=False, out=out.append)
    s.handle(f"cpu 1 {star3}")
    assert out[-1].startswith(f"error: seat 1's player {star3!r} cannot play star with 2 seats")
    assert s.is_human(1)


def test_a_pinned_ladder_level_says_what_it_plays_as():
    out: list[str] = []
    s = PlaySession(Rules("star", 2), [HUMAN, "ladder:star-2:hard"], color=False, out=out.append)
    s.run(lambda prompt, timeout: "quit")
    assert "seat 1 (blue): ladder:star-2:hard = search:depth=1,time=none" in out


def test_a_saved_game_records_who_plays_each_seat_now_and_the_seat_changes(tmp_path):
    from halma_env.records import load_record

    s, out = session([HUMAN, HUMAN])
    s.handle("113-104")
    s.handle("cpu 1 first")  # the CPU answers at once
    assert s.game.ply == 2
    s.handle(f"save {tmp_path / 'a.json'}")
    a = load_record(tmp_path / "a.json")
    assert a.players == (HUMAN, "first")
    assert a.metadata["seat_changes"] == [{"ply": 1, "seat": 1, "player": "first", "from": HUMAN}]
    s.handle("human 1")
    s.handle("moves")
    s.handle("#1")  # seat 0 moves; seat 1 is a human's again: no answer
    assert s.game.ply == 3
    s.handle(f"save {tmp_path / 'b.json'}")
    b = load_record(tmp_path / "b.json")
    assert b.players == (HUMAN, HUMAN)
    assert b.metadata["seat_changes"] == [{"ply": 1, "seat": 1, "player": "first", "from": HUMAN},
                                          {"ply": 2, "seat": 1, "player": HUMAN, "from": "first"}]
    # load and replay read such records
    s2, out2 = session([HUMAN, HUMAN])
    s2.handle(f"load {tmp_path / 'b.json'}")
    assert s2.game.position() == s.game.position()
    assert s2.seat_changes == b.metadata["seat_changes"]  # the record's history goes on
    s3, out3 = session([HUMAN, "first"])
    s3.handle(f"load {tmp_path / 'b.json'}")  # this session's CPU takes seat 1 from ply 3: said so
    assert s3.seat_changes[-1] == {"ply": 3, "seat": 1, "player": "first", "from": HUMAN}
    s2.replay(b, step=lambda: "")
    assert out2[-1].startswith("[3/3] ")
    # a game that changed no hands has no seat_changes; a new game starts without the old ones
    s.handle("new")
    s.handle(f"save {tmp_path / 'c.json'}")
    assert "seat_changes" not in load_record(tmp_path / "c.json").metadata


def test_an_exported_model_of_another_game_is_refused_at_once():
    model = str(ROOT / "agents" / "ladder" / "star-2-star2.onnx")
    with pytest.raises(ValueError, match=r"seat 1's player '.*star-2-star2\.onnx' cannot play star with 3 seats: "
                                         r".*was exported for star with 2 seats"):
        PlaySession(Rules("star", 3), [HUMAN, model, HUMAN], color=False, out=lambda line: None)


def test_undo_of_the_time_up_move_itself_drops_it() -> None:
    """The move a CPU made for a human out of time is that human seat's move: undo takes it back alone."""
    s, out = session([HUMAN, HUMAN])
    s.handle("113-104")
    s.move_for_human()
    assert s.time_up_moves == [{"ply": 1, "seat": 1, "player": "medium"}]
    s.handle("undo")
    assert s.game.ply == 1 and s.time_up_moves == []


def test_undo_keeps_a_seat_change_and_drops_a_time_up_move_taken_back(tmp_path):
    from halma_env.records import load_record

    s, out = session([HUMAN, HUMAN])
    s.handle("113-104")
    s.move_for_human()  # seat 1's time ran out: the CPU moved for it
    assert s.time_up_moves == [{"ply": 1, "seat": 1, "player": "medium"}]
    s.handle("cpu 1 first")
    s.handle("moves")
    s.handle("#1")  # seat 0 moves, the CPU answers for seat 1
    assert s.game.ply == 4
    s.handle(f"save {tmp_path / 'a.json'}")
    meta = load_record(tmp_path / "a.json").metadata
    assert meta["time_up_moves"] == [{"ply": 1, "seat": 1, "player": "medium"}]
    assert meta["seat_changes"] == [{"ply": 2, "seat": 1, "player": "first", "from": HUMAN}]
    s.handle("undo")  # seat 0's last move and the CPU's answer
    s.handle("undo")  # seat 0's first move, and the time-up move after it
    assert s.game.ply == 0 and s.time_up_moves == []
    assert s.seat_changes == [{"ply": 0, "seat": 1, "player": "first", "from": HUMAN}]  # the CPU still plays it


CHANGE = {"ply": 1, "seat": 1, "player": "first", "from": HUMAN}  # a well-formed seat change at ply 1


@pytest.mark.parametrize(("metadata", "message"), [
    ({"seat_changes": [CHANGE, "x"]},
     r"metadata seat_changes\[1\] must be \{ply: 0\.\.1, seat: 0\.\.1, player: a name, from: a name\}, got 'x'$"),
    ({"seat_changes": [{"seat": 1}]}, r"metadata seat_changes\[0\] must be .*, got \{'seat': 1\}$"),
    ({"seat_changes": [{**CHANGE, "seat": 2}]}, r"metadata seat_changes\[0\] must be .*'seat': 2"),
    ({"seat_changes": [{**CHANGE, "ply": 5}]}, r"metadata seat_changes\[0\] must be .*'ply': 5"),
    ({"seat_changes": [{**CHANGE, "ply": True}]}, r"metadata seat_changes\[0\] must be .*'ply': True"),
    ({"seat_changes": [{**CHANGE, "player": 3}]}, r"metadata seat_changes\[0\] must be .*'player': 3"),
    ({"seat_changes": [{k: v for k, v in CHANGE.items() if k != "from"}]}, r"metadata seat_changes\[0\] must be"),
    ({"seat_changes": [{**CHANGE, "x": 1}]}, r"metadata seat_changes\[0\] must be .*\.\.\. \(dict\)$"),  # cut short
    ({"seat_changes": "none"}, r"metadata seat_changes must be a list of entries, got 'none'$"),
    ({"time_up_moves": [{"ply": 1, "seat": 0, "player": "medium"}]},
     r"metadata time_up_moves\[0\] must be \{ply: 0\.\.0, seat: 0\.\.1, player: a name\}, got"),
    ({"time_up_moves": None}, r"metadata time_up_moves must be a list of entries, got None$"),
], ids=["not-an-entry", "no-ply", "seat", "ply-past-the-game", "ply-bool", "player", "no-from", "extra-key",
        "not-a-list", "time-up-ply", "time-up-null"])
def test_load_refuses_malformed_seat_changes_naming_the_entry_and_changes_nothing(tmp_path, metadata, message):
    """Malformed seat_changes / time_up_moves entries of a saved game were dropped without a word (and so lost
    from the next save); they are refused as the rest of a bad saved file is, and the session stays as it was."""
    from halma_env.records import GameRecord

    game = Game(Rules("star", 2))
    game.play("113-104")
    path = tmp_path / "other.json"
    GameRecord.from_game(game, players=[HUMAN, HUMAN], metadata=metadata).save(path)
    s, out = session([HUMAN, HUMAN])
    s.handle("113-104")
    s.move_for_human()
    before = (s.game, s.game.position(), list(s.seats), list(s.seat_changes), list(s.time_up_moves))
    s.handle(f"load {path}")
    assert re.match(rf"error: {re.escape(str(path))}: {message}", out[-1]), out[-1]
    assert (s.game, s.game.position(), s.seats, s.seat_changes, s.time_up_moves) == before


def test_load_takes_well_formed_entries_as_they_were_saved(tmp_path):
    from halma_env.records import GameRecord

    game = Game(Rules("star", 2))
    game.play("113-104")
    changes = [{"ply": 0, "seat": 1, "player": "first", "from": HUMAN}, {"ply": 1, "seat": 1, "player": HUMAN,
                                                                          "from": "first"}]
    time_up = [{"ply": 0, "seat": 0, "player": "medium"}]
    path = tmp_path / "ok.json"
    GameRecord.from_game(game, players=[HUMAN, HUMAN], metadata={"seat_changes": changes, "time_up_moves": time_up,
                                                                  "note": "free-form"}).save(path)
    s, out = session([HUMAN, HUMAN])
    s.handle(f"load {path}")
    assert s.game.ply == 1 and s.seat_changes == changes and s.time_up_moves == time_up
    s.handle("7-16")
    s.handle("undo")
    assert s.game.ply == 1 and not out[-1].startswith("error:")


def test_the_start_check_leaves_a_seeded_players_moves_as_they_were() -> None:
    """The check asks a copy for its move, so a seeded player's generator is not advanced by it."""
    from agents.registry import make_player

    rules = Rules("star", 2)
    checked, fresh = (make_player("greedy:noise=0.5", seed=3) for _ in range(2))
    PlaySession.check_player(1, "greedy:noise=0.5", checked, rules)
    game = Game(rules)
    game.play(game.legal_moves()[0])
    moves = []
    for player in (checked, fresh):
        g = game.copy()
        for _ in range(6):
            g.play(player.select_move(g))
        moves.append(g.position())
    assert moves[0] == moves[1]


def test_a_negative_seed_is_folded_into_the_seeds_players_take() -> None:
    """--seed takes any integer; the per-seat seeds derived from it must be ones the players accept."""
    out: list[str] = []
    s = PlaySession(Rules("star", 2), ["greedy:noise=0.5", HUMAN], color=False, out=out.append, seed=-1)
    assert 0 in s.cpu  # seat 0's seed is -1 + 0


def test_a_closed_standard_input_is_the_end_of_input(tmp_path, capsys, monkeypatch):
    """`halma play <&-` (Python's sys.stdin is then None) ended in a traceback, input()'s "lost sys.stdin";
    now it is the end of input, for a session and for --replay alike."""
    from agents.cli import main
    from halma_env.records import GameRecord

    monkeypatch.setattr(sys, "stdin", None)
    assert main(["play", "--players", "human,human", "--no-color"]) == 0
    out, err = capsys.readouterr()
    assert "seat 0 (red, human) to move" in out and err == ""
    game = Game(Rules("star", 2))
    game.play(game.legal_moves()[0])
    GameRecord.from_game(game).save(tmp_path / "g.json")
    assert main(["play", "--replay", str(tmp_path / "g.json"), "--no-color"]) == 0
    out, err = capsys.readouterr()
    assert "[0/1] start" in out and err == ""


def test_replay_from_the_command_line_shows_the_records_own_game(tmp_path, capsys, monkeypatch):
    """`halma play --replay FILE` plays back a diamond 3-seat record under its own rules; the flags
    that would set up a new game are refused by name instead of being ignored."""
    import io

    from agents.cli import main
    from halma_env.records import GameRecord
    from halma_env.render import render_text

    game = Game(Rules("diamond", 3))
    for _ in range(4):
        game.play(game.legal_moves()[0])
    path = tmp_path / "d3.json"
    record = GameRecord.from_game(game)
    record.save(path)
    monkeypatch.setattr("sys.stdin", io.StringIO("\n" * 10))
    assert main(["play", "--replay", str(path), "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "[0/4] start" in out and f"[4/4] {record.events[-1]}" in out
    assert render_text(game, numbers=False, color=False) in out  # the diamond board after the fourth move
    for flags, named in [
        (["--variant", "star"], "--variant sets up a new game; --replay shows the record's own game (drop it)"),
        (["--seats", "3", "--level", "hard", "--seed", "1"], "--seats, --level, --seed set up a new game"),
        (["--players", "human,human", "--rule", "x=1", "--preset", "kawu", "--time-limit", "30", "--cpu-time", "1"],
         "--players, --preset, --rule, --time-limit, --cpu-time set up"),
    ]:
        assert main(["play", "--replay", str(path), *flags]) == 2
        captured = capsys.readouterr()
        assert named in captured.err and captured.out == "", (flags, captured.err)


# --- the command dispatcher, pinned where mutation testing (scripts/mutants.py) found it unpinned -------


def test_commands_go_on_and_the_quit_words_end_the_session(tmp_path) -> None:
    """Every command but quit/exit/q (any case) keeps the session going, errors included (a bad move, an
    unknown command, a file that cannot be written); help prints the command list."""
    from agents.play import HELP

    s, out = session([HUMAN, HUMAN])
    for line in ("", "   ", "help", "board", "113-104", "113-104", "frobnicate", f"save {tmp_path}/no/such/x.json"):
        assert s.handle(line) is True, line
    assert HELP in out and "error: unknown command 'frobnicate'; type 'help'" in out
    assert out[-1].startswith("error: game record: no directory to save in: ")
    for word in ("quit", "exit", "q", "Q", "EXIT"):
        assert s.handle(word) is False, word


def test_save_names_an_empty_name_and_a_file_it_cannot_read(tmp_path, monkeypatch) -> None:
    """`save ""` said "cannot save over a directory" (Path("") is "."), and a record save could not read (to
    check it is a record before writing over it) was called "a file that is not a game record"."""
    s, out = session([HUMAN, HUMAN])
    s.handle('save ""')
    assert out[-1] == "error: a game record path is empty"
    s.handle("113-104")
    target = tmp_path / "g.json"
    s.handle(f"save {target}")
    assert out[-1] == f"saved to {target}"

    def unreadable(path, limit):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr("halma_env.files.read_regular_file", unreadable)
    before = target.read_bytes()
    s.handle("7-16")
    s.handle(f"save {target}")
    assert out[-1] == f"error: Permission denied: {str(target)!r}" and target.read_bytes() == before


def test_commands_about_the_next_move_say_the_game_is_over() -> None:
    """After the game's end, `moves` said "no legal moves", a hole "the piece on 117 cannot move" and `#1`
    "type 'moves' first": each now says the game is over and to type 'new', as a move does."""
    s, out = session([HUMAN, HUMAN])
    s.handle("moves")
    s.handle("resign")
    over = "error: the game is over (resign); type 'new' for another"
    for line in ("moves", "#1", "117", "113-104", "resign"):
        s.handle(line)
        assert out[-1] == over, line
    s.handle("new")
    s.handle("moves")
    assert out[-1].startswith("#1 ")


def test_a_byte_order_mark_and_a_very_long_file_name_are_taken_in_stride(tmp_path) -> None:
    """A script saved with a UTF-8 byte order mark read its first command as "unknown command '\\ufeffhelp'";
    a file name of thousands of characters came back whole in the error line."""
    from agents.play import HELP

    s, out = session([HUMAN, HUMAN])
    s.handle("\ufeffhelp")
    assert out[-1] == HELP
    s.handle(f"save {tmp_path}/{'a' * 6000}.json")
    assert out[-1].startswith("error: File name too long: '") and out[-1].endswith(" characters)")
    assert len(out[-1]) < 300


def test_numbers_toggle_and_redraw() -> None:
    s, out = session([HUMAN, HUMAN])
    assert not s.numbers
    s.handle("numbers")
    assert s.numbers and "113" in out[-2]  # the board, redrawn with hole numbers
    s.handle("numbers")
    assert not s.numbers and "113" not in out[-2]


def test_the_moves_list_is_numbered_from_1_in_columns() -> None:
    """``moves`` lists ``#N move`` cells, six a line, each as wide as the widest plus two; a finished game
    says it is over."""
    s, out = session([HUMAN, HUMAN])
    s.handle("moves")
    moves = s.game.legal_moves()
    cells = [f"#{i} {m}" for i, m in enumerate(moves, 1)]
    width = max(map(len, cells)) + 2
    rows = out[-1].split("\n")
    assert len(rows) == -(-len(moves) // 6)
    assert rows[0] == "".join(c.ljust(width) for c in cells[:6]).rstrip()
    assert rows[1].startswith(cells[6].ljust(width))
    s.handle("resign")
    s.handle("moves")
    assert out[-1] == "error: the game is over (resign); type 'new' for another"


def test_numbered_picks_are_checked() -> None:
    s, out = session([HUMAN, HUMAN])
    s.handle("moves")
    last = len(s.game.legal_moves())
    for bad in ("#0", f"#{last + 1}", "#x", "#"):
        s.handle(bad)
        assert out[-1] == f"error: pick a move #1..#{last} from the last 'moves' list, got {bad!r}", bad
    assert s.game.ply == 0
    listed = s.game.legal_moves()[-1]
    s.handle(f"#{last}")
    assert s.game.moves == [(listed.src, listed.dst)]


def test_a_hole_must_hold_a_piece_of_the_seat_to_move() -> None:
    s, out = session([HUMAN, HUMAN])
    for line, message in [("121", "hole must be 0..120, got 121"), ("0", "hole 0 holds no piece of seat 0"),
                          ("60", "hole 60 holds no piece of seat 0")]:
        s.handle(line)
        assert out[-1] == f"error: {message}", line
    s.handle("120")
    assert out[-1] == "the piece on 120 cannot move"


@pytest.mark.parametrize(("seats", "rules", "lines", "expected"), [
    ([HUMAN, HUMAN], {}, ["resign"], "result: a resignation decided it; seat 1 (blue, human) wins"),
    ([HUMAN, HUMAN, HUMAN], {}, ["resign", "resign"],
     "result: a resignation decided it; seat 2 (green, human) wins (1st seat 2 (green, human), 2nd seat 1 (blue, "
     "human), 3rd seat 0 (red, human))"),
    ([HUMAN, HUMAN], {"move_limit": 2}, ["113-104", "7-16"], "result: the move limit was reached; a draw"),
])
def test_the_end_of_a_game_is_said_in_words(seats: list[str], rules: dict, lines: list[str], expected: str) -> None:
    """The engine's status line names the end by identifier ("game over (move_limit)"): the session says it in
    words, who won, and (3+ seats) every place."""
    s, out = session(seats)
    s.rules = Rules("star", len(seats), **rules)
    s.game = Game(s.rules)
    for line in lines:
        s.handle(line)
    assert s.game.is_over and out[-1] == expected + "; type 'new' for another"


@pytest.mark.parametrize("line", ["113 104", "113 - 104", "113 to 104", "113\u2014104", "113:104", "113,104"])
def test_a_move_written_another_way_is_told_the_notation(line: str) -> None:
    s, out = session([HUMAN, HUMAN])
    s.handle(line)
    assert out[-1] == (f"error: a move is written 'src-dst' with two hole numbers and a plain '-', e.g. 113-104; "
                       f"got {line!r}") and s.game.ply == 0


def test_the_replay_command_ends_by_showing_this_game_again_and_stops_on_quit(tmp_path: Path) -> None:
    """After ``replay FILE`` the last board on screen was the record's, under this game's prompt; and ``quit``
    at the replay prompt stepped it on instead of stopping."""
    other, _ = session([HUMAN, HUMAN])
    for move in ("113-104", "7-16", "104-92"):
        other.handle(move)
    other.handle("save " + str(tmp_path / "other.json"))
    s, out = session([HUMAN, HUMAN])
    for move in ("116-105", "7-16"):
        s.handle(move)
    answers = iter(["", "quit", "never read"])
    s.replay(load_record(str(tmp_path / "other.json")), step=lambda: next(answers))
    assert next(answers) == "never read"
    del out[:]
    s.read = lambda prompt, timeout: "q"
    s.handle("replay " + str(tmp_path / "other.json"))
    assert "back to this game, ply 2" in out and out[-1] == "seat 0 (red, human) to move"
    assert "ply 2" in out[-2] and s.game.ply == 2


def test_leaving_a_game_with_moves_not_saved_says_so(tmp_path: Path) -> None:
    """quit, the end of input, ``new`` and ``load`` dropped a game without a word; a game saved (or loaded) as
    it stands is left quietly."""
    s, out = session([HUMAN, HUMAN])
    s.run(scripted(["quit"]))  # no move: nothing to lose
    assert not any(line.startswith("(the game left") for line in out)
    s.handle("113-104")
    s.handle("new")
    at = out.index("new game; seat 1 starts")
    assert out[at - 1] == UNSAVED.format(1)
    s.handle("7-16")
    s.handle(f"save {tmp_path / 'g.json'}")
    s.run(scripted(["quit"]))
    assert not any(line.startswith("(the game left") for line in out[-3:])
    s.handle("113-104")  # a move after the save
    s.handle(f"load {tmp_path / 'g.json'}")
    assert UNSAVED.format(2) in out and s.game.ply == 1
    s.run(scripted([]))  # the end of input right after a load: the game is as saved
    assert out[-1] == ""


def test_a_review_s_edge_cases_of_the_session_s_words() -> None:
    """A game ranked by progress at the move limit says so; a full draw of 3 seats lists no places (every
    seat first); ``#1 2`` is refused (the 2 was dropped); full-width digits get the ASCII-digits refusal, not
    the notation hint; a too-long line at a replay prompt is asked again, not taken as "next"."""
    from agents.play import LineTooLong

    s, out = session([HUMAN, HUMAN])
    s.rules = Rules("star", 2, move_limit=2, limit_outcome="progress")
    s.game = Game(s.rules)
    s.handle("113-104")
    s.handle("7-16")
    assert out[-1].startswith("result: the move limit was reached (places by progress); ")
    s3, out3 = session([HUMAN, HUMAN, HUMAN])
    s3.rules = Rules("star", 3, move_limit=3)
    s3.game = Game(s3.rules)
    for _ in range(3):
        s3.handle(str(s3.game.legal_moves()[0]))
    assert s3.game.is_over and out3[-1] == "result: the move limit was reached; a draw; type 'new' for another"
    s.handle("new")
    s.handle("moves")
    s.handle("#1 2")
    assert out[-1] == "error: a pick is written '#N' alone, got '#1 2'" and s.game.ply == 0
    s.handle("\uff11\uff11\uff13 \uff11\uff10\uff14")
    assert out[-1].startswith("error: unknown command")
    answers = iter([LineTooLong(70000), "", "q", "never read"])

    def step() -> str:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    game = Game(Rules("star", 2))
    for move in ("113-104", "7-16", "104-92"):
        game.play(move)
    record = GameRecord.from_game(game)
    del out[:]
    s.replay(record, step=step)
    assert next(answers) == "never read"
    assert [line.split("]")[0] for line in out if line.startswith("[")] == ["[0/3", "[1/3"]
    assert "error: a line of 70000 bytes is too long (commands are at most 65536 bytes); nothing was done" in out


def test_ctrl_c_while_a_cpu_thinks_still_says_the_game_was_not_saved() -> None:
    """Ctrl-C at the prompt is a quit (with the note); while a CPU thinks it stops the command (exit 130)
    and left without the note, the usual way out of a game between CPUs."""
    class Interrupting:
        name = "interrupting"

        def select_move(self, game, time_budget=None):
            if game.ply >= 2:
                raise KeyboardInterrupt
            return game.legal_moves()[0]

    out: list[str] = []
    s = PlaySession(Rules("star", 2), [HUMAN, "x"], color=False, out=out.append,
                    make_player=lambda name, seed=None: Interrupting())
    with pytest.raises(KeyboardInterrupt):
        s.run(scripted(["113-104", "104-92"]))
    assert s.game.ply == 3 and out[-2:] == ["", UNSAVED.format(3)]


def test_a_terminal_that_refuses_the_read_still_says_the_game_was_not_saved() -> None:
    """A job in the background whose terminal refuses the prompt's read stops play with one line (exit 2); the
    game it leaves was lost without the note every other way out of a game gives (before 2026-12-07)."""
    from agents.play import TerminalUnreadable

    out: list[str] = []
    s = PlaySession(Rules("star", 2), [HUMAN, HUMAN], color=False, out=out.append)
    lines = iter(["113-104"])

    def read(prompt: str, timeout: float | None) -> str:
        line = next(lines, None)
        if line is None:
            raise TerminalUnreadable("cannot read the terminal")
        return line

    with pytest.raises(TerminalUnreadable):
        s.run(read)
    assert s.game.ply == 1 and out[-2:] == ["", UNSAVED.format(1)]


def test_a_finished_game_cannot_be_resigned() -> None:
    s, out = session([HUMAN, HUMAN])
    s.handle("resign")
    s.handle("resign")
    assert out[-1] == "error: the game is over (resign); type 'new' for another"
    assert s.game.status == ["resigned", "active"]


@pytest.mark.parametrize(("line", "form"), [
    ("cpu 1", "cpu SEAT NAME"), ("cpu 1 first x", "cpu SEAT NAME"),
    ("human", "human SEAT"), ("human 1 2", "human SEAT"),
    ("load", "load FILE"), ("load a b", "load FILE"), ("replay", "replay FILE"), ("replay a b", "replay FILE"),
    ("save", "save FILE"), ("save a b", "save FILE"),
    # the commands without arguments refuse one rather than ignore it
    ("quit now", "quit"), ("exit now", "exit"), ("Q 1", "q"), ("undo 2", "undo"), ("resign seat", "resign"),
    ("new game", "new"),
    ("moves all", "moves"), ("help me", "help"), ("board 1", "board"), ("numbers off", "numbers"),
])
def test_commands_are_refused_with_other_arguments_and_show_their_form(line: str, form: str) -> None:
    s, out = session([HUMAN, HUMAN])
    before = s.game.position()
    assert s.handle(line) is True  # the session goes on: even "quit now" does not quit
    spaces = " (quote a name with spaces)" if form.endswith("FILE") and len(line.split()) > 1 else ""
    assert out[-1] == f"error: {line.split()[0].lower()} is written {form!r}{spaces}, got {line!r}"
    assert s.game.position() == before and s.game.status == ["active", "active"]


def test_a_misspelt_command_names_the_nearest_one() -> None:
    s, out = session([HUMAN, HUMAN])
    s.handle("udno")
    assert out[-1] == "error: unknown command 'udno' (did you mean 'undo'?); type 'help'"
    s.handle("replya game.json")
    assert out[-1] == "error: unknown command 'replya game.json' (did you mean 'replay'?); type 'help'"


def test_new_games_rotate_the_start_through_every_seat() -> None:
    s, out = session([HUMAN, HUMAN, HUMAN])
    firsts = []
    for _ in range(4):
        s.handle("new")
        firsts.append(s.game.to_move)
    assert firsts == [1, 2, 0, 1] and s.rules.first_seat == 1


def test_the_stand_in_for_a_human_out_of_time_is_seeded_by_seat() -> None:
    """The ``medium`` CPU that moves for a human whose time ran out is seeded from the session's seed, apart
    from the seats' own players (a stream of its own, STAND_IN_STREAM), so a seeded session replays the same."""
    from agents.arena import derive_seed
    from agents.play import STAND_IN_STREAM

    asked: list[tuple[str, int | None]] = []

    def recording(name: str, seed: int | None = None) -> FirstMove:
        asked.append((name, seed))
        return make_first(name, seed)

    s = PlaySession(Rules("star", 2), [HUMAN, HUMAN], seed=5, color=False, out=lambda _: None,
                    make_player=recording)
    s.move_for_human()
    s.move_for_human()
    assert asked == [("medium", derive_seed(5, STAND_IN_STREAM, 0)), ("medium", derive_seed(5, STAND_IN_STREAM, 1))]
    assert len({seed for _, seed in asked} | {derive_seed(5, 0), derive_seed(5, 1)}) == 4  # apart from the seats'
    assert all(0 <= seed < 2**63 for _, seed in asked if seed is not None)  # in the range players take


def test_seats_are_seeded_from_the_session_seed_and_checked() -> None:
    """Seat k's CPU gets seed ``derive_seed(seed, k)`` (default seed 0): ``seed + k`` gave --seed 0's seat 1 the
    stream of --seed 1's seat 0.  A seat outside the game, or not a number, is refused; a CPU seat's label is its
    name."""
    from agents.arena import derive_seed

    asked: list[tuple[str, int | None]] = []

    def recording(name: str, seed: int | None = None) -> FirstMove:
        asked.append((name, seed))
        return make_first(name, seed)

    s = PlaySession(Rules("star", 2), ["first", "first"], out=lambda _: None, make_player=recording)
    assert asked == [("first", derive_seed(0, 0)), ("first", derive_seed(0, 1))] and s.player_label(1) == "first"
    PlaySession(Rules("star", 2), ["first", "first"], seed=1, out=lambda _: None, make_player=recording)
    assert asked[-2:] == [("first", derive_seed(1, 0)), ("first", derive_seed(1, 1))]
    assert len({seed for _, seed in asked}) == 4  # no stream shared with a neighbouring seed
    for seat in (2, -1):
        with pytest.raises(ValueError, match=rf"^seat must be 0\.\.1, got {seat}$"):
            s.set_seat(seat, "first")
    assert s.seats == ["first", "first"]
    out: list[str] = []
    s.out = out.append
    for line, message in [("cpu 2 first", "seat must be 0..1, got 2"),
                          ("cpu one first", "seat must be a number, got 'one'")]:
        s.handle(line)
        assert out[-1] == f"error: {message}", line


def test_session_defaults_and_the_help_text() -> None:
    """Colours on by default, a fractional CPU budget accepted; HELP is the module doc's command list."""
    from agents.play import HELP

    out: list[str] = []
    s = PlaySession(Rules("star", 2), [HUMAN, HUMAN], cpu_budget=0.5, out=out.append, make_player=make_first)
    s.handle("board")
    assert "\x1b[" in out[-2] and out[-1] == "seat 0 (red, human) to move"
    assert HELP.strip().startswith("src-dst") and HELP.rstrip().endswith("quit (or exit, q) ends the session")
    assert "Bad input" not in HELP


def test_a_finished_game_takes_no_move_and_a_time_up_move_is_recorded(tmp_path) -> None:
    """A time-up move is in the record's metadata, and read back by ``load``; a finished game takes no move."""
    s, out = session([HUMAN, HUMAN])
    s.move_for_human()
    assert s.record_metadata() == {"time_up_moves": [{"ply": 0, "seat": 0, "player": "medium"}]}
    s.handle(f"save {tmp_path / 'game.json'}")
    again, _ = session([HUMAN, HUMAN])
    again.handle(f"load {tmp_path / 'game.json'}")
    assert again.game.ply == 1 and again.record_metadata() == s.record_metadata()
    s.handle("resign")
    s.handle("113-104")
    assert out[-1] == "error: the game is over (resign); type 'new' for another"


def test_load_refuses_a_game_of_another_seat_count(tmp_path) -> None:
    three, _ = session([HUMAN, HUMAN, HUMAN])
    path = tmp_path / "three.json"
    three.handle(f"save {path}")
    s, out = session([HUMAN, HUMAN])
    s.handle("113-104")
    s.handle(f"load {path}")
    assert out[-1].startswith(f"error: {path} is a 3-seat game; this session has 2 seats") and s.game.ply == 1


def test_replay_steps_through_every_position_until_q(tmp_path, monkeypatch) -> None:
    """``replay FILE`` shows the start and each move's position, asking after every one (the last asks with a
    prompt of its own, where Enter ends the replay); ``q`` stops it."""
    s, out = session([HUMAN, HUMAN])
    s.handle("113-104")
    reply = s.game.legal_moves()[0]
    s.handle(str(reply))
    path = tmp_path / "game.json"
    s.handle(f"save {path}")
    answers: list[str] = []
    monkeypatch.setattr("builtins.input", lambda prompt: answers.append(prompt) or "")
    s.handle(f"replay {path}")
    assert [line for line in out if line.startswith("[")] == ["[0/2] start", "[1/2] 113-104", f"[2/2] {reply}"]
    from agents.play import REPLAY_END_PROMPT

    assert answers == [REPLAY_PROMPT] * 2 + [REPLAY_END_PROMPT]
    out.clear()
    monkeypatch.setattr("builtins.input", lambda prompt: " Q ")
    s.handle(f"replay {path}")
    assert [line for line in out if line.startswith("[")] == ["[0/2] start"]


# --- `halma play`'s command line: defaults, presets, colour and exit codes --------------------------------


def _cli_sessions(monkeypatch, tty: bool) -> list[PlaySession]:
    """Make ``halma play`` set its session up and stop there, with stdout a terminal or not."""
    sessions: list[PlaySession] = []
    monkeypatch.setattr(PlaySession, "run", lambda self, read: sessions.append(self))
    monkeypatch.setattr(sys.stdout, "isatty", lambda: tty)
    return sessions


def test_players_keep_a_bot_specs_own_commas(monkeypatch, capsys) -> None:
    """--players 'human,search:depth=2,time=none' was split at every comma: "unknown player 'time=none'"."""
    from agents.cli import main
    from agents.play import split_players

    sessions = _cli_sessions(monkeypatch, tty=False)
    assert main(["play", "--players", "human,search:depth=2,time=none"]) == 0
    assert sessions[0].seats == [HUMAN, "search:depth=2,time=none"]
    assert main(["play", "--players", "greedy:noise=0.25,temperature=1.0, human, easy"]) == 0
    assert sessions[1].seats == ["greedy:noise=0.25,temperature=1.0", HUMAN, "easy"]
    assert split_players("search:depth=3,runs/a/last.pt") == ["search:depth=3", "runs/a/last.pt"]
    assert split_players("ladder:star-2:easy,human") == ["ladder:star-2:easy", HUMAN]
    assert split_players("human,search:depth=4, time = none") == [HUMAN, "search:depth=4,time = none"]
    assert split_players("search:depth=3,a=b.pt,c=d.ONNX") == ["search:depth=3", "a=b.pt", "c=d.ONNX"]  # files
    # a parameter with no spec before it is a player of its own, refused by name
    assert main(["play", "--players", "human,time=none"]) == 2
    assert "unknown player 'time=none'" in capsys.readouterr().err


def test_players_name_the_file_their_commas_cut_in_two(tmp_path, monkeypatch, capsys) -> None:
    """A checkpoint whose name holds a comma cannot be one of --players (they split at commas): the error says
    so, where it named a player "unknown" that is only the name's first half."""
    from agents.cli import main

    sessions = _cli_sessions(monkeypatch, tty=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a,b,c.pt").write_bytes(b"")
    for players in ("human,a,b,c.pt", "a,b,c.pt,human"):
        assert main(["play", "--players", players]) == 2
        err = capsys.readouterr().err
        assert "--players splits at its commas, so it cannot name the file 'a,b,c.pt'" in err, err
    (tmp_path / "a").write_bytes(b"")  # the first piece is itself a file: it is that player, as written
    assert main(["play", "--players", "human,a,b,c.pt"]) == 2
    assert "unknown player 'a'" in capsys.readouterr().err
    assert not sessions


def test_cli_defaults_a_human_against_medium_in_colour_on_a_terminal(monkeypatch) -> None:
    """No flags: star, 2 seats, a human against ``medium``, seed 0, colours on a terminal; --no-color wins."""
    from agents.cli import main

    sessions = _cli_sessions(monkeypatch, tty=True)
    assert main(["play"]) == 0
    (s,) = sessions
    assert (s.rules, s.seats, s.seed, s.color, s.numbers, s.time_limit) == (
        Rules("star", 2), [HUMAN, "medium"], 0, True, False, None)
    assert main(["play", "--no-color"]) == 0 and sessions[1].color is False
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    assert main(["play"]) == 0 and sessions[2].color is False


def test_cli_preset_plays_the_public_rule_set_on_the_star_only(monkeypatch, capsys) -> None:
    """``--preset kawu`` sets up the preset's rules; with another variant it is refused, naming the preset."""
    from agents.cli import main

    sessions = _cli_sessions(monkeypatch, tty=False)
    assert main(["play", "--preset", "kawu", "--players", "human,human,human"]) == 0
    assert sessions[0].rules == Rules.preset("kawu", 3) != Rules("star", 3)  # a move limit, decided by progress
    assert main(["play", "--preset", "kawu", "--variant", "diamond"]) == 2
    assert capsys.readouterr().err == ("halma play: error: the kawu preset is a star rule set; it cannot be used with "
                                       "--variant diamond\n")
    assert len(sessions) == 1  # nothing set up for the refused command


def test_cli_replay_refusing_two_setup_flags_says_them(tmp_path, capsys) -> None:
    from agents.cli import main
    from halma_env.records import GameRecord

    path = tmp_path / "g.json"
    GameRecord.from_game(Game(Rules("star", 2))).save(path)
    assert main(["play", "--replay", str(path), "--variant", "star", "--seats", "2"]) == 2
    assert capsys.readouterr().err == ("halma play: error: --variant, --seats set up a new game; --replay shows the "
                                       "record's own game (drop them)\n")


def test_cli_replay_colours_only_on_a_terminal(tmp_path, monkeypatch) -> None:
    import io

    from agents.cli import main
    from halma_env.records import GameRecord

    path = tmp_path / "g.json"
    GameRecord.from_game(Game(Rules("star", 2))).save(path)
    seen: list[bool] = []
    monkeypatch.setattr(PlaySession, "replay", lambda self, record: seen.append(self.color))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["play", "--replay", str(path)]) == 0
    assert main(["play", "--replay", str(path), "--no-color"]) == 0
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    assert main(["play", "--replay", str(path)]) == 0
    assert seen == [True, False, False]


def test_undo_counts_moves_not_the_automatic_passes_after_them() -> None:
    """Seat 1 (a CPU, its one piece boxed in on the top tip) passes after each of seat 0's moves: undo
    takes back the human's last move with its pass, not the move before."""
    from tests.engine_helpers import position

    s, out = session([HUMAN, "first"])
    s.game = Game.from_position(position("star", 2, {0: "1", 1: "0", 2: "0", 3: "0", 5: "0", 60: "0"}))
    s.handle("60-61")
    s.handle("61-60")
    assert [e.kind for e in s.game.history] == ["move", "pass", "move", "pass"]
    s.handle("undo")
    assert s.game.ply == 1 and [(e.kind, e.seat) for e in s.game.history] == [("move", 0), ("pass", 1)]


def test_run_greets_prompts_and_times_only_a_live_humans_turn() -> None:
    """The loop greets, names the CPU seats, then reads "> " with the time limit on a human's turn of a
    live game and without one once the game is over; the end of input ends the session."""
    s, out = session([HUMAN, HUMAN, "first"], time_limit=30)
    reads: list[tuple[str, float | None]] = []
    answers = iter(["113-104", "resign", "resign"])

    def read(prompt: str, timeout: float | None) -> str:
        reads.append((prompt, timeout))
        line = next(answers, None)
        if line is None:
            raise EOFError
        return line

    s.run(read)
    assert out[:2] == ["type 'help' for commands, 'numbers' to show the hole numbers moves are written with",
                       "seat 2 (green): first"]
    assert s.game.is_over and [e.kind for e in s.game.history if e.kind != "move"] == ["resign", "resign"]
    assert reads == [("> ", 30), ("> ", 30), ("> ", 30), ("> ", None)]
    assert out[-2:] == ["", UNSAVED.format(s.game.ply)]  # a newline after the end of input, then the game is not kept


def test_a_cpu_move_given_as_a_pair_or_text_is_shown_as_the_engine_writes_it() -> None:
    """A bot may answer (src, dst) or "src-dst" (the game takes them): the line said "plays (6, 15)"."""
    class Answering:
        def __init__(self, form) -> None:
            self.form = form

        def select_move(self, game, time_budget=None):
            move = game.legal_moves()[0]
            return self.form(move)

    for form in (lambda m: (m.src, m.dst), str, lambda m: m):
        out: list[str] = []
        s = PlaySession(Rules("star", 2), ["cpu", HUMAN], color=False, out=out.append,
                        make_player=lambda name, seed=None, form=form: Answering(form))
        s.run(answering(EOFError()))
        first = Game(Rules("star", 2)).legal_moves()[0]
        assert f"seat 0 (cpu) plays {first}" in out, out


def test_numbers_on_a_diamond_board_says_the_closed_holes_are_not_marked() -> None:
    """The greeting explained x, the closed holes; typing ``numbers`` drew them as plain numbers like every other
    hole, with nothing saying the marks were gone (a player's walk-through, before 2026-12-07)."""
    out: list[str] = []
    s = PlaySession(Rules("diamond", 3), [HUMAN, "first", "first"], color=False, out=out.append,
                    make_player=make_first)
    s.handle("numbers")
    assert out[-1] == ("A, B, C: the kings of seats 0, 1, 2; the hole numbers do not mark the closed holes (drawn as "
                       "x without numbers)")
    s.handle("numbers")
    assert out[-1].startswith("A, B, C: the kings of seats 0, 1, 2; x: a hole of another colour's point")
    star, star_out = session([HUMAN, "first"])
    star.handle("numbers")
    assert not any("kings" in line for line in star_out)


def test_a_diamond_session_says_what_the_board_s_letters_and_x_mean() -> None:
    """The Diamond board draws kings as A, B, C and closed holes as x, which neither the board nor help
    explained (a new-user walkthrough of the README asked); the session's greeting does now, on that board only."""
    out: list[str] = []
    s = PlaySession(Rules("diamond", 3), [HUMAN, "first", "first"], color=False, out=out.append,
                    make_player=make_first)
    s.run(answering(EOFError()))
    assert out[1] == ("A, B, C: the kings of seats 0, 1, 2; x: a hole of another colour's point, closed to the "
                      "seat to move (none of its pieces may land there)")
    numbered: list[str] = []  # the board with hole numbers draws no x: the legend says so
    PlaySession(Rules("diamond", 3), [HUMAN, "first", "first"], color=False, out=numbered.append, numbers=True,
                make_player=make_first).run(answering(EOFError()))
    assert numbered[1] == ("A, B, C: the kings of seats 0, 1, 2; the hole numbers do not mark the closed holes "
                           "(drawn as x without numbers)")
    star, star_out = session([HUMAN, "first"])
    star.run(answering(EOFError()))
    assert not any("kings" in line for line in star_out)


@pytest.fixture(params=[False, True], ids=["select", "thread"])
def piped_stdin(monkeypatch, request) -> Iterator[int]:
    """``sys.stdin`` read from a pipe, as a terminal or a piped script gives it: yields the pipe's write
    end (a test may close it, which is the end of input).  Each test runs with the line reader waiting in
    select() and, as on Windows, on a reading thread."""
    import os

    import agents.play

    monkeypatch.setattr("agents.play.THREADED_STDIN", request.param)
    read_end, write_end = os.pipe()
    with os.fdopen(read_end) as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        yield write_end
        try:
            os.close(write_end)
        except OSError:  # closed by the test
            pass
        # a reading thread ends at the pipe's end: wait for it while its descriptor is still this pipe's (once
        # closed, the number goes to the next test's pipe, whose input the thread would read)
        cached = agents.play._stdin_reader
        if cached is not None and cached[0] is stdin and cached[1].thread is not None:
            cached[1].thread.join(10)
            assert not cached[1].thread.is_alive()


def test_terminal_read_times_out_reads_a_line_and_reports_the_end_of_input(piped_stdin, capsys) -> None:
    """With a time limit, ``terminal_read`` waits on stdin: nothing within it is TimeUp, a line is
    returned as typed, a closed input is EOFError; the prompt shows the seconds."""
    import os

    from agents.play import terminal_read

    write_end = piped_stdin
    with pytest.raises(TimeUp):
        terminal_read("> ", 0.05)
    assert capsys.readouterr().out == "> (0 s) \n"
    os.write(write_end, b"113-104\n")
    assert terminal_read("> ", 30) == "113-104\n"
    assert capsys.readouterr().out == "> (30 s) "
    os.close(write_end)
    with pytest.raises(EOFError):
        terminal_read("> ", 30)


def test_a_level_its_ladder_cannot_describe_is_labelled_by_its_name() -> None:
    """``player_label`` adds what a level plays as; a level missing from the game's ladder entry
    (``describe`` raises ValueError) is shown by its name alone."""

    class Described(FirstMove):
        def __init__(self, known: bool) -> None:
            self.known = known

        def describe(self, rules: Rules) -> str:
            if not self.known:
                raise ValueError("no star-2 entry")
            return "greedy"

    players = {"known": Described(True), "unknown": Described(False)}
    s = PlaySession(Rules("star", 2), ["known", "unknown"], color=False, out=lambda line: None,
                    make_player=lambda name, seed=None: players[name])
    assert [s.player_label(0), s.player_label(1)] == ["known = greedy", "unknown"]


# --- the end of input in a replay, input read ahead with a time limit, flags that would go unused ---------


def _two_move_record(tmp_path):
    """A saved 2-seat record of two moves."""
    s, _ = session([HUMAN, HUMAN])
    s.handle("113-104")
    s.handle(str(s.game.legal_moves()[0]))
    path = tmp_path / "game.json"
    s.handle(f"save {path}")
    return path


def test_a_replay_ends_quietly_at_the_end_of_input(tmp_path, monkeypatch, capsys) -> None:
    """The end of input stops a replay as ``q`` does, with a newline after its prompt: ``halma play
    --replay FILE < /dev/null`` and ``replay FILE`` as the last command exit 0, no EOFError."""
    import io

    from agents.cli import main
    from halma_env.records import load_record

    path = _two_move_record(tmp_path)
    s, out = session([HUMAN, HUMAN])

    def end() -> str:
        raise EOFError

    s.replay(load_record(path), step=end)
    assert [line for line in out if line.startswith("[")] == ["[0/2] start"] and out[-1] == ""
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["play", "--replay", str(path), "--no-color"]) == 0
    assert capsys.readouterr().out.endswith(f"[0/2] start\n{REPLAY_PROMPT}\n")
    monkeypatch.setattr("sys.stdin", io.StringIO(f"replay {path}\n\n"))
    assert main(["play", "--players", "human,human", "--no-color"]) == 0
    out_text = capsys.readouterr().out
    assert "[1/2] 113-104" in out_text and "[2/2]" not in out_text  # one Enter, then the end of input


def test_lines_piped_ahead_are_obeyed_within_the_time_limit(piped_stdin) -> None:
    """Two commands written at once into a pipe that stays open: with a time limit the second is read at
    once from what the first read took in, not left behind select() until the time is up."""
    import os

    from agents.play import terminal_read

    write_end = piped_stdin
    os.write(write_end, b"moves\nquit\n")
    s, out = session([HUMAN, "first"], time_limit=5)
    reads: list[float | None] = []

    def read(prompt: str, timeout: float | None) -> str:
        reads.append(timeout)
        if len(reads) > 3:  # without the fix the session goes on with the CPU moving for the human
            raise EOFError
        return terminal_read(prompt, 1 if timeout else None)  # 1 s: what a failure costs, not 5

    s.run(read)
    # the second read is of the same turn: what is left of its 5 s
    assert reads[0] == 5 and 0 < reads[1] <= 5 and len(reads) == 2
    assert s.game.ply == 0 and not any("time is up" in line for line in out)


@pytest.mark.parametrize("prompt", ["> ", ""])
def test_the_line_reader_keeps_a_partial_line_and_reads_the_last_one(piped_stdin, capsys, prompt: str) -> None:
    """A line typed in part when the time runs out is kept for the next read; a last line without a
    newline is returned as it is, then the end of input is EOFError.  With an empty prompt (run()'s
    look for a command between CPU moves, timeout 0) nothing is written."""
    import os

    import agents.play
    from agents.play import terminal_read

    def read(timeout: float | None) -> str:
        """A read; a look (timeout 0) on the reading thread may see what was just written at a later look."""
        deadline = time.monotonic() + 5
        while True:
            try:
                return terminal_read(prompt, timeout)
            except TimeUp:
                if timeout != 0 or not agents.play.THREADED_STDIN or time.monotonic() > deadline:
                    raise

    write_end = piped_stdin
    os.write(write_end, b"113-")
    with pytest.raises(TimeUp):
        terminal_read(prompt, 0.05 if prompt else 0)
    os.write(write_end, b"104\nundo\nqu")
    assert read(5 if prompt else 0) == "113-104\n"
    assert read(None if prompt else 0) == "undo\n"
    os.close(write_end)
    assert read(None if prompt else 0) == "qu"
    with pytest.raises(EOFError):
        read(5 if prompt else 0)
    if not prompt:
        assert capsys.readouterr().out == ""


def test_cli_obeys_commands_piped_ahead_with_a_time_limit(tmp_path) -> None:
    """``(printf 'moves\\nquit\\n'; sleep 40) | halma play --time-limit 30``: quit is obeyed at once."""
    import subprocess

    with open(tmp_path / "out.txt", "wb") as out:
        p = subprocess.Popen([sys.executable, "-m", "agents.cli", "play", "--no-color", "--time-limit", "30",
                              "--players", "human,random"], cwd=ROOT, stdin=subprocess.PIPE, stdout=out,
                             stderr=subprocess.STDOUT)
        assert p.stdin is not None
        p.stdin.write(b"moves\nquit\n")
        p.stdin.flush()  # and kept open, as a person typing ahead
        try:
            assert p.wait(timeout=15) == 0
        finally:
            p.kill()
            p.stdin.close()
    text = (tmp_path / "out.txt").read_text()
    assert "#1 " in text and "time is up" not in text


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX terminal")
@pytest.mark.parametrize("threaded", [False, True], ids=["select", "thread"])
def test_terminal_read_on_a_terminal_times_out_and_reads_lines(monkeypatch, threaded: bool) -> None:
    """On a terminal (a pty): nothing typed is TimeUp, lines typed ahead are read one by one, Ctrl-D at
    an empty line is EOFError and the terminal can still be read after it."""
    import os
    import pty

    import agents.play
    from agents.play import terminal_read

    monkeypatch.setattr("agents.play.THREADED_STDIN", threaded)

    master, slave = pty.openpty()
    with os.fdopen(slave) as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        with pytest.raises(TimeUp):
            terminal_read("> ", 0.05)
        os.write(master, b"moves\nquit\n")
        assert [terminal_read("> ", 5), terminal_read("> ", 5)] == ["moves\n", "quit\n"]
        os.write(master, b"\x04")
        with pytest.raises(EOFError):
            terminal_read("> ", 5)
        os.write(master, b"new\n")
        assert terminal_read("> ", None) == "new\n"
        os.close(master)  # the terminal hangs up: a reading thread stops, before its descriptor is closed
        reader = agents.play._reader()
        if reader is not None and reader.thread is not None:
            reader.thread.join(10)
            assert not reader.thread.is_alive()


def _hang_up_at_the_prompt(ignore_sighup: bool) -> tuple[int, str]:
    """``halma play`` with a pseudo-terminal as its controlling terminal (stdin and stdout), hung up (its master
    closed) once the human's prompt is shown: -> the exit status and stderr (a pipe)."""
    import fcntl
    import pty
    import select
    import signal
    import termios

    master, terminal = pty.openpty()

    def controlled_by_the_terminal() -> None:  # (after start_new_session's setsid: the new session's terminal)
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        signal.signal(signal.SIGHUP, signal.SIG_IGN if ignore_sighup else signal.SIG_DFL)

    proc = subprocess.Popen([sys.executable, "-m", "agents.cli", "play", "--no-color", "--players", "human,random"],
                            cwd=ROOT, stdin=terminal, stdout=terminal, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=controlled_by_the_terminal)
    os.close(terminal)
    try:
        shown = b""
        deadline = time.monotonic() + 60
        while not shown.endswith(b"> "):
            assert time.monotonic() < deadline and proc.poll() is None, shown.decode(errors="replace")[-500:]
            if select.select([master], [], [], 0.1)[0]:
                shown += os.read(master, 65536)
        time.sleep(0.2)  # (at the prompt's read)
        os.close(master)
        master = -1
        _, err = proc.communicate(timeout=60)
        return proc.returncode, err.decode(errors="replace")
    finally:
        if master >= 0:
            os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX terminal")
@pytest.mark.parametrize("attempt", range(3))
def test_a_terminal_that_hangs_up_at_the_prompt_stops_play_as_its_sighup(attempt: int) -> None:
    """The hung-up terminal fails the prompt's read with EIO, and its SIGHUP races that read: the read's EIO was
    reported as "cannot write the standard output" (exit 2), or the SIGHUP came during that report (a traceback,
    exit 1; three times in three tries).  The failed read now is the hangup: exit 129, one line."""
    status, err = _hang_up_at_the_prompt(ignore_sighup=False)
    assert (status, err) == (129, "\nhalma play: stopped by SIGHUP\n")


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX terminal")
def test_a_terminal_read_that_fails_while_it_is_still_a_terminal_is_no_hangup(monkeypatch, capsys) -> None:
    """A job in the background (SIGTTIN ignored, or an orphaned process group: ``(halma play &)``) reading its
    terminal gets EIO while the terminal is still there (``isatty``): that is one line naming the read and the
    fix, exit 2, not the hangup (which silenced the terminal and said "stopped by SIGHUP", exit 129) nor
    "cannot write the standard output" (before 2026-12-07)."""
    import errno

    import agents.play
    from agents.cli import main
    from agents.play import LineReader, TerminalUnreadable

    def refused(fd, size):
        raise OSError(errno.EIO, "Input/output error")

    hangups: list[int] = []
    monkeypatch.setattr(agents.play.os, "read", refused)
    monkeypatch.setattr(agents.play, "is_terminal_device", lambda fd: True)
    monkeypatch.setattr(agents.play, "terminal_hung_up", lambda: hangups.append(1))
    monkeypatch.setattr(agents.play.os, "isatty", lambda fd: True)
    with pytest.raises(TerminalUnreadable, match="run halma play in the foreground"):
        LineReader(0, threaded=False).readline()
    monkeypatch.setattr(agents.play.os, "isatty", lambda fd: False)  # hung up: no tty any more
    assert LineReader(0, threaded=False).readline() == "" and hangups == [1]
    monkeypatch.setattr(agents.play.os, "isatty", lambda fd: True)
    monkeypatch.setattr(agents.play, "_reader", lambda: LineReader(0, threaded=False))
    monkeypatch.setattr("sys.stdin", io.StringIO())  # (not None: terminal_read asks _reader, patched above)
    assert main(["play", "--no-color", "--players", "human,random"]) == 2
    assert capsys.readouterr().err == ("halma play: error: cannot read the terminal (Input/output error): a job in "
                                       "the background cannot read it; run halma play in the foreground\n")


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX terminal")
def test_a_terminal_that_hangs_up_under_nohup_ends_the_input() -> None:
    """With SIGHUP ignored (``nohup``) the session goes on as without the hangup: the input has ended, the player
    leaves the table, exit 0, and what it would print to the gone terminal goes to /dev/null (it was exit 2,
    "cannot write the standard output: Input/output error")."""
    assert _hang_up_at_the_prompt(ignore_sighup=True) == (0, "")


@pytest.mark.parametrize(("flags", "message"), [
    (["--seed", "-1"], "--seed must be >= 0 (an integer), got -1"),
    # folded modulo 2**63 it would seed the CPUs as --seed 0 does
    (["--seed", str(2**63)], f"--seed must be at most {2**63 - 1} (2**63 - 1), got {2**63}"),
    (["--seed", "9" * 30], f"--seed must be at most {2**63 - 1} (2**63 - 1), got {'9' * 30}"),
    (["--players", ""], "--players '' leaves a seat's player empty: name one per seat, comma separated"),
    (["--players", "human,,easy"], "--players 'human,,easy' leaves a seat's player empty"),
])
def test_cli_refuses_a_negative_seed_and_an_empty_player(monkeypatch, capsys, flags: list[str], message: str) -> None:
    """A negative seed wrapped round to other seeds and an empty --players fell back to the default game,
    where halma eval and halma ladder refuse both."""
    from agents.cli import main

    sessions = _cli_sessions(monkeypatch, tty=False)
    assert main(["play", *flags]) == 2 and not sessions
    assert capsys.readouterr().err.startswith(f"halma play: error: {message}")


def test_cli_refuses_a_level_no_seat_gets_and_keeps_the_cpu_time_for_later_cpu_seats(monkeypatch, capsys) -> None:
    """--level gives only the seats --players leaves out: with none left it is refused (``cpu SEAT NAME``
    names its own player).  --cpu-time with no CPU seat is kept: a seat handed to a CPU later uses it."""
    from agents.cli import main

    sessions = _cli_sessions(monkeypatch, tty=False)
    assert main(["play", "--players", "human,random", "--level", "hard"]) == 2
    assert capsys.readouterr().err == ("halma play: error: --level is for the seats --players leaves out, and it "
                                       "names every seat of star with 2 seats (drop --level)\n")
    assert main(["play", "--seats", "1", "--level", "hard"]) == 2
    assert capsys.readouterr().err == ("halma play: error: --level is for the CPU seats, and star with 1 seat has "
                                       "only the human's (drop --level)\n")
    assert sessions == []
    assert main(["play", "--players", "human,human", "--cpu-time", "1"]) == 0
    assert sessions[0].cpu_budget == 1
    assert main(["play", "--seats", "3", "--players", "human,random", "--level", "greedy"]) == 0
    assert sessions[1].seats == [HUMAN, "random", "greedy"]

    from halma_env.game import PROBE_TIME_BUDGET

    budgets: list[float | None] = []

    class Timed(FirstMove):
        def select_move(self, game, time_budget=None):
            budgets.append(time_budget)
            return super().select_move(game, time_budget)

    s = PlaySession(Rules("star", 2), [HUMAN, HUMAN], cpu_budget=1, color=False, out=lambda line: None,
                    make_player=lambda name, seed=None: Timed())
    s.handle("cpu 0 first")
    assert budgets == [PROBE_TIME_BUDGET, 1] and s.game.ply == 1  # the check before the seat changes, then its move


def test_an_unknown_rule_option_lists_only_what_rule_accepts(capsys) -> None:
    """variant and num_players are refused as --rule options, so the known list leaves them out."""
    from agents.cli import main

    assert main(["play", "--rule", "bogus=1"]) == 2
    assert capsys.readouterr().err == (
        "halma play: error: unknown rule option 'bogus'; known: anti_blocking, play_to_end, move_limit, "
        "limit_outcome, stall_limit, repetition_limit, first_seat\n")
    assert main(["play", "--rule", "move_limimt=3"]) == 2
    assert "'move_limimt' (did you mean 'move_limit'?); known: anti_blocking," in capsys.readouterr().err


def test_ctrl_c_stops_a_replay_and_ends_a_session_while_a_cpu_thinks(tmp_path, monkeypatch, capsys) -> None:
    """Ctrl-C at a replay's prompt stops the replay as at the main prompt; during a CPU's move (here the
    check that it can play the game) it ends ``halma play`` with exit status 130 (the shell's for SIGINT),
    a line saying so and no traceback (agents/cli.py, for every command)."""
    from agents.cli import main
    from halma_env.records import load_record

    s, out = session([HUMAN, HUMAN])

    def interrupt() -> str:
        raise KeyboardInterrupt

    s.replay(load_record(_two_move_record(tmp_path)), step=interrupt)
    assert [line for line in out if line.startswith("[")] == ["[0/2] start"] and out[-1] == ""

    def thinking(self, game, time_budget=None):
        raise KeyboardInterrupt

    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    monkeypatch.setattr("agents.bots.random_bot.RandomBot.select_move", thinking)
    assert main(["play", "--players", "random,human", "--no-color"]) == 130
    assert capsys.readouterr().err == "\nhalma play: interrupted\n"


def test_sigterm_at_a_prompt_stops_halma_play_with_its_status_not_as_a_quit(tmp_path, monkeypatch, capsys) -> None:
    """SIGTERM is raised as ``Terminated`` (a KeyboardInterrupt, for the clean-up paths); at the prompt or a
    replay's it was taken for the player's Ctrl-C, so ``kill`` of a session ended it with status 0."""
    from agents.cli import main
    from agents.interrupts import Terminated
    from halma_env.records import load_record

    s, _ = session([HUMAN, HUMAN])

    def killed() -> str:
        raise Terminated

    with pytest.raises(Terminated):
        s.replay(load_record(_two_move_record(tmp_path)), step=killed)

    def read_killed(prompt, timeout=None):
        raise Terminated

    monkeypatch.setattr("agents.play.terminal_read", read_killed)
    assert main(["play", "--players", "human,random", "--no-color"]) == 143
    assert capsys.readouterr().err.endswith("\nhalma play: stopped by SIGTERM\n")


# --- CPUs playing on with no human seat, the time of a whole turn, numbers and long input, replay checks ---


class Bounded(FirstMove):
    """The first legal move, but only so many of them: a session that never stops for input fails here
    instead of running on."""

    def __init__(self, moves: int = 40) -> None:
        self.left = moves

    def select_move(self, game, time_budget=None):
        self.left -= 1
        if self.left < 0:
            raise RuntimeError("the CPUs played on without reading a command")
        return super().select_move(game, time_budget)


def _bounded_session(seats: list[str], **kw) -> tuple[PlaySession, list[str]]:
    out: list[str] = []
    make = lambda name, seed=None: Bounded() if name == "bounded" else make_first(name, seed)  # noqa: E731
    return PlaySession(Rules("star", len(seats)), seats, color=False, out=out.append, make_player=make, **kw), out


def test_cpus_playing_on_read_commands_between_their_moves() -> None:
    """``cpu 0 NAME`` in a human-vs-CPU game leaves no human seat: the CPUs play on a move at a time and
    the session looks for a command (``read("", 0)``) before each move, so ``board``, ``save`` and
    ``human 0`` are obeyed meanwhile; ``human 0`` gets the prompt back on seat 0's turn."""
    s, out = _bounded_session([HUMAN, "bounded"])
    reads: list[tuple[str, float | None]] = []
    polls = iter([TimeUp(), TimeUp(), "board", TimeUp(), "human 0"])
    prompts = iter(["cpu 0 bounded", "quit"])

    def read(prompt: str, timeout: float | None) -> str:
        reads.append((prompt, timeout))
        item = next(polls) if prompt == "" else next(prompts)
        if isinstance(item, Exception):
            raise item
        return item

    s.run(read)
    assert reads == [("> ", None)] + [("", 0)] * 5 + [("> ", None)]
    # 3 CPU moves between the looks, then seat 1's move up to seat 0's turn
    assert s.game.ply == 4 and s.game.to_move == 0 and s.is_human(0)
    assert "seat 0 is played by a human again" in out and out[-2:] == ["seat 0 (red, human) to move",
                                                                       UNSAVED.format(4)]


def test_a_move_or_resignation_typed_while_the_cpus_play_on_is_refused() -> None:
    """Commands are read between the CPUs' moves, but a move, a pick from the list or a resignation
    typed then is the CPU seat's turn: refused (naming how to take the seat back), the game unchanged."""
    s, out = _bounded_session(["bounded", "bounded"])
    polls = iter(["moves", "#1", "113-104", "resign", "quit"])

    def read(prompt: str, timeout: float | None) -> str:
        assert prompt == ""  # no human seat: every read is a look between CPU moves
        return next(polls)

    s.run(read)
    assert s.game.ply == 0 and s.game.status == ["active", "active"]
    refusals = [line for line in out if line.startswith("error: seat 0 is to")]
    assert refusals == ["error: seat 0 is to move and bounded plays it, so a move typed for it is not played; "
                        "type 'human 0' to take the seat back"] * 2 + [
        "error: seat 0 is to move and bounded plays it, so it is not resigned from here; type 'human 0' to take the "
        "seat back"]


def test_cpus_playing_on_advance_when_stdin_cannot_be_polled(monkeypatch) -> None:
    """A stdin without a descriptor (a notebook's, a StringIO) cannot be looked at without waiting: the
    look between CPU moves finds nothing there, so the CPUs play (they never moved before)."""
    import io

    from agents.play import terminal_read

    monkeypatch.setattr("sys.stdin", io.StringIO("board\n"))
    with pytest.raises(TimeUp):
        terminal_read("", 0)
    s = PlaySession(Rules("star", 2, move_limit=6), ["first", "first"], color=False, out=lambda line: None,
                    make_player=make_first)
    s.run(terminal_read)
    assert s.game.is_over and s.game.end_reason == "move_limit" and s.game.ply == 6


def test_cpus_playing_on_stop_at_the_end_of_input() -> None:
    """With every seat a CPU and no limit on the game, the end of input ends the session (as at a
    human's prompt) instead of a game that nobody can stop; so does quit typed meanwhile."""
    def end(prompt: str, timeout: float | None) -> str:
        raise EOFError

    s, out = _bounded_session(["bounded", "bounded"])
    s.run(end)
    assert s.game.ply == 0 and out[-1] == ""
    s, out = _bounded_session(["bounded", "bounded"])
    s.run(answering(TimeUp(), TimeUp(), "quit"))
    assert s.game.ply == 2


def test_a_resigned_humans_cpus_play_on_a_move_at_a_time() -> None:
    """A human who resigns in a 3-seat game leaves the game to the CPUs: ``resign`` returns at once and
    the session reads commands between their moves (here the end of input ends it)."""
    s, out = _bounded_session([HUMAN, "bounded", "bounded"])
    s.handle("resign")
    assert s.game.ply == 0 and not s.game.is_over and s.cpu_to_move() and not s.humans_in_play()
    answers = iter([TimeUp(), EOFError()])

    def read(prompt: str, timeout: float | None) -> str:
        raise next(answers)

    s.run(read)
    assert s.game.ply == 1 and out[-2:] == ["", UNSAVED.format(1)]


@pytest.mark.parametrize(("players", "script"), [("human,random", "cpu 0 random\nsave {path}\nquit\n"),
                                                 ("random,random", "")])
def test_cli_session_of_cpus_ends_with_its_input(players: str, script: str, tmp_path) -> None:
    """``printf 'cpu 0 random\\nsave g.json\\nquit\\n' | halma play --players human,random`` and ``halma play
    --players random,random < /dev/null`` (star, no move limit) end at once."""
    import subprocess

    path = tmp_path / "g.json"
    result = subprocess.run([sys.executable, "-m", "agents.cli", "play", "--no-color", "--players", players],
                            cwd=ROOT, input=script.format(path=path).encode(), capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert path.exists() == bool(script)  # save was obeyed while the CPUs played on


def test_the_time_limit_is_for_the_whole_turn() -> None:
    """--time-limit 30: commands that do not change the game (board, help, a bad command) spend the
    turn's time instead of starting it again; the next turn, after a move, has the full time."""
    s, out = session([HUMAN, HUMAN], time_limit=30)
    now = [100.0]
    s.clock = lambda: now[0]
    timeouts: list[float | None] = []
    script = iter([("board", 10), ("help", 10), ("frobnicate", 5), (TimeUp(), 5), ("moves", 12), ("#1", 1),
                   ("quit", 0)])

    def read(prompt: str, timeout: float | None) -> str:
        timeouts.append(timeout)
        item, spent = next(script)
        now[0] += spent
        if isinstance(item, Exception):
            raise item
        return item

    s.run(read)
    assert timeouts == [30, 20, 10, 5, 30, 18, 30]
    assert s.game.ply == 2 and sum("time is up" in line for line in out) == 1


def test_undo_or_a_new_game_starts_a_turns_clock_again() -> None:
    """The clock belongs to a turn: after undo, new or load the seat to move has the full time."""
    s, _ = session([HUMAN, HUMAN], time_limit=60)
    now = [0.0]
    s.clock = lambda: now[0]
    assert s.time_left() == 60
    now[0] = 50.0
    assert s.time_left() == 10
    s.handle("113-104")
    assert s.time_left() == 60
    now[0] = 70.0
    s.handle("undo")
    assert s.time_left() == 60
    now[0] = 200.0
    assert s.time_left() == 0  # and no less
    s.handle("new")
    assert s.time_left() == 60


@pytest.mark.parametrize(("line", "message"), [
    ("²", "hole must be a number, got '²'"),
    ("１１３", "hole must be a number, got '１１３'"),  # full-width digits are not hole 113
    ("9" * 5000, f"hole '{'9' * 30}'... (5000 characters) is far too large"),
    ("0" * 5000 + "113", None),  # leading zeros: hole 113 (int() would count them against its limit)
    ("9" * 1000 + "-1", f"hole '{'9' * 30}'... (1000 characters) is far too large"),
    ("１１３-１０４", "a move is written 'src-dst' with two hole numbers, got '１１３-１０４'"),
    ("cpu ² first", "seat must be a number, got '²'"),
    ("cpu １ first", "seat must be a number, got '１'"),
    ("human ²", "seat must be a number, got '²'"),
    ("cpu 99999999999 first", "seat '99999999999' is far too large"),
], ids=["superscript", "full-width", "5000 digits", "leading zeros", "1000-digit move", "full-width move",
        "cpu superscript", "cpu full-width", "human superscript", "cpu 11 digits"])
def test_numbers_in_commands_are_ascii_digits(line: str, message: str | None) -> None:
    s, out = session([HUMAN, HUMAN])
    before = (s.game.position(), list(s.seats))
    s.handle(line)
    assert (s.game.position(), s.seats) == before
    if message is None:
        assert out[-1] == "113 can go to: 104, 105"
    else:
        assert out[-1] == f"error: {message}"


def test_numbered_picks_take_ascii_digits_only() -> None:
    s, out = session([HUMAN, HUMAN])
    s.handle("moves")
    last = len(s.game.legal_moves())
    for bad in ("#²", "#１", "#" + "9" * 5000):
        s.handle(bad)
        assert out[-1].startswith(f"error: pick a move #1..#{last} from the last 'moves' list, got '#"), bad
        assert len(out[-1]) < 120 and s.game.ply == 0, bad


def test_a_long_line_is_cut_short_in_the_error() -> None:
    s, out = session([HUMAN, HUMAN])
    for line in ("x" * 100_000, "save " + "a " * 50_000, "#" + "x" * 100_000, "a" * 100_000 + "-1"):
        s.handle(line)
        assert out[-1].startswith("error: ") and "characters)" in out[-1] and len(out[-1]) < 150, out[-1][:200]
    assert s.game.ply == 0


def _tampered_record(tmp_path, change) -> str:
    """A saved finished game (seat 0 moved, seat 1 resigned) with ``change`` made to its JSON document."""
    import json

    s, _ = session([HUMAN, HUMAN])
    s.handle("113-104")
    s.handle("resign")
    path = tmp_path / "tampered.json"
    s.handle(f"save {path}")
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize(("change", "named"), [
    (lambda d: d.update(places=[2, 1]), "stored outcome places=[2, 1] end_reason='resign', but the replay gives "
                                        "places=[1, 2] end_reason='resign'"),
    (lambda d: d.update(final_position=d["final_position"].rsplit(" ", 1)[0] + " 7"), "stored final position"),
    (lambda d: d["events"].insert(1, "7-7"), "event 1 ('7-7') is an illegal move"),
], ids=["places", "final position", "illegal event"])
def test_replay_refuses_a_record_that_does_not_replay_as_stored(tmp_path, capsys, monkeypatch, change, named) -> None:
    """``halma play --replay FILE`` and ``replay FILE`` check the record as ``load`` does: a stored
    outcome or final position that differs from the replay's, or an illegal event, is refused before
    any position is shown (exit status 2 for the command line)."""
    import io

    from agents.cli import main

    path = _tampered_record(tmp_path, change)
    monkeypatch.setattr("sys.stdin", io.StringIO("\n" * 10))
    assert main(["play", "--replay", path, "--no-color"]) == 2
    captured = capsys.readouterr()
    # named by its file, as a record that cannot be read is (the replay's own errors named none)
    assert captured.out == "" and captured.err.startswith(f"halma play: error: game record {path!r}: ")
    assert named in captured.err
    s, out = session([HUMAN, HUMAN])
    s.handle(f"replay {path}")
    assert out[-1].startswith(f"error: game record {path!r}: ") and named in out[-1]
    assert not any(line.startswith("[") for line in out)
    s.handle(f"load {path}")
    assert out[-1].startswith(f"error: game record {path!r}: ") and named in out[-1]


@pytest.mark.parametrize("threaded", [False, True], ids=["select", "thread"])
def test_a_huge_input_line_is_read_once_and_refused_whole(threaded: bool) -> None:
    """LineReader copied its whole buffer for every 4 KiB chunk (a 20 MB line took 35 s and 900 MB); then a
    line past MAX_LINE kept its head, so a move followed by 64 KiB of spaces and a stray word was played.
    Now such a line is LineTooLong with its size, and the lines after it read as sent; a line of exactly
    MAX_LINE bytes is still a line, and a too-long last line without a newline is refused too."""
    import threading

    from agents.play import MAX_LINE, LineReader, LineTooLong

    read_end, write_end = os.pipe()
    huge = b"113-104" + b" " * (3 * 1024 * 1024) + "é".encode() + b"\n"
    exact = b"y" * MAX_LINE + b"\n"

    def send() -> None:
        with os.fdopen(write_end, "wb") as w:
            w.write(huge + b"113-104\r\nquit\n" + "né\n".encode() + exact + b"z" * (MAX_LINE + 1))

    sender = threading.Thread(target=send)
    sender.start()
    reader = LineReader(read_end, threaded=threaded)
    with pytest.raises(LineTooLong, match=f"a line of {len(huge) - 1} bytes is too long"):
        reader.readline()
    assert [reader.readline() for _ in range(4)] == ["113-104\r\n", "quit\n", "né\n", exact.decode()]
    with pytest.raises(LineTooLong, match=f"a line of {MAX_LINE + 1} bytes"):
        reader.readline()
    assert reader.readline() == ""
    sender.join()
    os.close(read_end)


def test_a_too_long_line_at_the_prompt_is_an_error_and_plays_nothing(tmp_path: Path) -> None:
    """Through the command: the move at the head of a too-long line is not played, and the session goes on."""
    from agents.play import MAX_LINE

    stdin = tmp_path / "in.txt"
    stdin.write_bytes(b"111-102" + b" " * MAX_LINE + b"x\nquit\n")
    with open(stdin, "rb") as f:
        done = subprocess.run([sys.executable, "-m", "agents.cli", "play", "--players", "human,random",
                               "--no-color"], stdin=f, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"error: a line of {MAX_LINE + 8} bytes is too long" in done.stdout
    assert "plays 111-102" not in done.stdout


# --- the replay's header and its navigation: back, a ply number, start, end, help ---------------------------


def _record_of(moves: int, seats: int = 2, **kw) -> GameRecord:
    """A record of ``moves`` first legal moves in a fresh star game (``kw`` to ``GameRecord.from_game``)."""
    game = Game(Rules("star", seats))
    for _ in range(moves):
        game.play(game.legal_moves()[0])
    return GameRecord.from_game(game, **kw)


def _replay(s: PlaySession, record: GameRecord, *answers: str) -> list[str]:
    """Replay ``record`` in ``s`` with ``answers`` at its prompts, then ``q`` (one more answer is never read):
    the position labels shown, ``[N/LAST] MOVE``, in order."""
    given = iter([*answers, "q", "never read"])
    out: list[str] = []
    s.out = out.append
    s.replay(record, step=lambda: next(given))
    assert next(given) == "never read"
    return [line for line in out if line.startswith("[")]


def test_a_replay_starts_with_a_line_naming_the_game_the_players_and_the_result(tmp_path, monkeypatch, capsys):
    """The replay said neither who played nor how the game ended: its first line now names the game and its
    length, the record's players by seat (if it has them) and the stored result, or that there is none (the
    arena's places for a game it stopped at its ply cap)."""
    import io

    from agents.cli import main

    s, out = session([HUMAN, HUMAN])
    s.handle("113-104")
    s.handle("resign")  # seat 1 resigns: seat 0 wins
    s.handle(f"save {tmp_path / 'won.json'}")
    del out[:]
    s.replay(load_record(tmp_path / "won.json"), step=lambda: "q")
    assert out[0] == ("replay: star with 2 seats, 1 move and 1 resignation; seat 0 (red) human, seat 1 (blue) human; "
                      "result: a resignation decided it; seat 0 (red, human) wins")
    first = "replay: star with 2 seats, 1 move; players not recorded; result: "
    del out[:]
    s.replay(_record_of(1), step=lambda: "q")  # no players, not finished
    assert out[0] == first + "none stored: the game was not finished"
    for arena, result in [
        ({"end_reason": "max_plies", "places": [2, 1]},
         "not finished; the arena stopped it at its ply cap: 1st seat 1 (blue), 2nd seat 0 (red)"),
        ({"end_reason": "max_plies", "places": [1, 1]}, "not finished; the arena stopped it at its ply cap: a draw"),
        ({"places": [1, 2]}, "not finished; the arena's places: 1st seat 0 (red), 2nd seat 1 (blue)"),
        ({"end_reason": "max_plies", "places": [1, 3]}, "none stored: the game was not finished"),  # malformed
        ({"places": "1, 2"}, "none stored: the game was not finished"),
        ("arena", "none stored: the game was not finished"),
    ]:
        del out[:]
        s.replay(_record_of(1, metadata={"arena": arena}), step=lambda: "q")
        assert out[0] == first + result, arena
    # three seats: the places in order; the command line's first line is the header too
    three = Game(Rules("star", 3, move_limit=3, limit_outcome="progress"))
    for _ in range(3):
        three.play(three.legal_moves()[0])
    path = tmp_path / "three.json"
    GameRecord.from_game(three, players=["a", "b", "c"]).save(path)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["play", "--replay", str(path), "--no-color"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "replay: star with 3 seats, 3 moves; seat 0 (red) a, seat 1 (blue) b, seat 2 (green) c; result: the move "
        "limit was reached (places by progress); seat 1 (blue, b) wins (1st seat 1 (blue, b), 2nd seat 0 (red, a), "
        "2nd seat 2 (green, c))")


def test_a_replay_shows_the_records_player_names_escaped_where_they_hold_control_characters() -> None:
    """A record's player names are the file's word: one holding an escape sequence or a line break (a hand-edited
    record) reached the terminal as it was, clearing the screen, setting the window title or printing a line of its
    own.  They are shown escaped, as file names are (shown_path); plain names as they are."""
    s, out = session([HUMAN, HUMAN])
    names = ["evil\x1b]0;title\x07\x1b[2J", "b\nseat 1 (blue) wins\rX"]
    s.replay(_record_of(1, players=names), step=lambda: "q")
    header = out[0]
    assert "\x1b" not in header and "\n" not in header and "\r" not in header and "\x07" not in header
    assert f"seat 0 (red) {names[0]!r}, seat 1 (blue) {names[1]!r};" in header
    del out[:]
    s.replay(_record_of(1, players=["ann", "bo b"]), step=lambda: "q")
    assert "seat 0 (red) ann, seat 1 (blue) bo b;" in out[0]


def test_replay_goes_back_jumps_to_a_ply_to_the_start_and_to_the_end() -> None:
    """``b``/``back`` goes one ply back, a number N to ply N, ``start`` and ``end`` to the first and last
    position, ``n``/``next``/Enter on; each shows that position's board (as a replay from the start gives it)."""
    from halma_env.render import render_text

    record = _record_of(4, players=["a", "b"])
    games = list(record.games())
    s, _ = session([HUMAN, HUMAN])
    events = ["start", *record.events]
    answers = ["3", "b", "back", "n", "next", "", "start", "end", "0", " 2 ", "B", "END", "4", "1"]
    plies = [0, 3, 2, 1, 2, 3, 4, 0, 4, 0, 2, 1, 4, 4, 1]
    assert _replay(s, record, *answers) == [f"[{i}/4] {events[i]}" for i in plies]
    out: list[str] = []
    s.out = out.append
    given = iter(["2", "b", "end", "start", "q"])
    s.replay(record, step=lambda: next(given))
    shown = [out[i - 1] for i, line in enumerate(out) if line.startswith("[")]
    assert shown == [render_text(games[i], numbers=False, color=False) for i in (0, 2, 1, 4, 0)]


def test_replay_navigation_across_resignations_and_passes_gives_the_records_positions() -> None:
    """Going back takes back an event at a time (a resignation with the automatic passes after it) and a jump
    plays or takes back several: every ply reached from any other shows the board a replay from the start
    gives."""
    from halma_env.render import render_text

    game = Game(Rules("star", 3))
    for _ in range(4):
        game.play(game.legal_moves()[0])
    game.resign(game.to_move)
    for _ in range(3):
        game.play(game.legal_moves()[0])
    game.resign(game.to_move)  # two seats out: the game is over
    record = GameRecord.from_game(game)
    boards = [render_text(g, numbers=False, color=False) for g in record.games()]
    last = len(record.events)
    order = [last, 0, 5, 4, 8, 3, 9, 1, 7, 2, 6, last]
    out: list[str] = []
    s, _ = session([HUMAN, HUMAN])
    s.out = out.append
    given = iter([*map(str, order), *["b"] * last, "q"])
    s.replay(record, step=lambda: next(given))
    shown = [(line, out[i - 1]) for i, line in enumerate(out) if line.startswith("[")]
    plies = [0, *order, *range(last - 1, -1, -1)]
    assert [int(line[1:].split("/")[0]) for line, _ in shown] == plies
    assert [board for _, board in shown] == [boards[i] for i in plies]


def test_enter_at_the_last_position_ends_the_replay_and_b_still_goes_back() -> None:
    """The last position is asked at too, with a prompt of its own: Enter, ``n`` or ``next`` there end the
    replay (as reaching it did before), ``b`` goes back, ``q`` stops."""
    record = _record_of(2)
    for word in ("", "n", "next", "q"):
        s, out = session([HUMAN, HUMAN])
        given = iter(["end", "b", "", word, "never read"])
        s.replay(record, step=given.__next__)
        assert next(given) == "never read", word
        assert [line.split("]")[0] for line in out if line.startswith("[")] == ["[0/2", "[2/2", "[1/2", "[2/2"]
    from agents.play import REPLAY_END_PROMPT

    prompts: list[str] = []
    s, out = session([HUMAN, HUMAN])
    s.read = lambda prompt, timeout: prompts.append(prompt) or ("end" if len(prompts) == 1 else "")
    s.replay(record)
    assert prompts == [REPLAY_PROMPT, REPLAY_END_PROMPT] and out[-1].startswith("[2/2] ")
    empty = GameRecord.from_game(Game(Rules("star", 2)))
    s, out = session([HUMAN, HUMAN])
    assert _replay(s, empty, "b", "1", "start", "end") == ["[0/0] start"] * 3  # no move: the start is the end


def test_a_ply_out_of_range_an_unknown_word_and_back_at_the_start_are_errors_and_the_position_stays() -> None:
    """A ply past the record, a negative, fractional or full-width number, ``b`` at the start and a word the
    replay does not know are each an error line (the range, or what the replay understands) and the replay
    stays where it was; ``help`` and ``?`` list the keys."""
    from agents.play import REPLAY_HELP

    record = _record_of(3)
    s, out = session([HUMAN, HUMAN])
    given = iter(["b", "1", "4", "-1", "1.5", "\uff12", "9" * 40, "bakc", "board", "113-104", "help", "?", "2", "q"])
    del out[:]
    s.replay(record, step=lambda: next(given))
    plies = "0 (the start) to 3"
    understood = (f"; the replay understands Enter or n (next), b (back), a step number {plies}, start, end, "
                  "help or ?, q (stop)")
    assert [line for line in out if line.startswith(("[", "error:"))] == [
        "[0/3] start",
        "error: this is the start (step 0): there is no step before it",
        f"[1/3] {record.events[0]}",
        f"error: there is no step 4: the steps are {plies}",
        f"error: a step is a whole number {plies}, got '-1'",
        f"error: a step is a whole number {plies}, got '1.5'",
        f"error: a step is a whole number {plies}, got '\uff12'",
        f"error: there is no step of 40 digits: the steps are {plies}",
        "error: unknown replay command 'bakc' (did you mean 'back'?)" + understood,
        "error: unknown replay command 'board'" + understood,
        f"error: a step is a whole number {plies}, got '113-104'",
        f"[2/3] {record.events[1]}",
    ]
    listed = [line.format(range="0 is the start, 3 the last position") for line in REPLAY_HELP]
    at = out.index(listed[0])
    assert out[at:at + len(listed)] == listed and out[at + len(listed):].count(listed[0]) == 1  # help, then ?
    assert "go to step N, the number in [N/LAST] (0 is the start, 3 the last position)" in "\n".join(listed)


def test_the_replay_command_and_replay_flag_navigate_with_the_sessions_reader(tmp_path, monkeypatch, capsys):
    """``replay FILE`` at the session's prompt and ``halma play --replay FILE`` read the navigation from the
    same input as the commands: a jump, back and the end, then the session goes on with its own game."""
    import io

    from agents.cli import main

    path = _two_move_record(tmp_path)
    s, out = session([HUMAN, HUMAN])
    s.run(scripted([f"replay {path}", "2", "b", "x", "q", "113-104"]))
    labels = [line.split("]")[0] for line in out if line.startswith("[")]
    assert labels == ["[0/2", "[2/2", "[1/2"] and s.game.ply == 1
    assert any(line.startswith("error: unknown replay command 'x'") for line in out)
    monkeypatch.setattr("sys.stdin", io.StringIO("end\nstart\n?\nend\n\n"))
    assert main(["play", "--replay", str(path), "--no-color"]) == 0
    text = capsys.readouterr().out
    assert [line.split("]")[0] for line in text.splitlines() if line.startswith("[")] == ["[0/2", "[2/2", "[0/2",
                                                                                            "[2/2"]
    assert text.startswith("replay: star with 2 seats, 2 moves; seat 0 (red) human, seat 1 (blue) human; ")
    assert "replay keys:" in text and text.endswith("the end; Enter or q: stop, b: back, N: step N, ?: help > ")


def test_the_help_lists_the_replay_keys() -> None:
    """The session's ``help`` (the module doc's command list) names the replay's keys, not only Enter and q."""
    from agents.play import HELP

    at = HELP.index("replay FILE")
    assert "Enter (or n) next, b back, a number goes to that step" in HELP[at:]
    assert "start, end, ? lists them; q, quit or end of input: stop" in HELP[at:]


# --- what a step did besides itself: places taken during play, automatic passes -------------------------------

NEAR_FINISH = {16: "0", 54: "1", 64: "2"}  # 3-seat star: seat 0 finishes with 16-7, then seat 1 with 54-74


def _lines(out: list[str]) -> list[str]:
    """The session's one-line messages (the boards left out)."""
    return [line for line in out if "\n" not in line]


def test_a_seat_that_finishes_part_way_says_its_place_and_that_the_others_play_on() -> None:
    """In a game of 3+ seats a seat that finishes while the others play on took its place without a word: the
    human's prompt just stopped, or the CPU's move was all there was to see (before 2026-12-07).  The last
    places, that the game's end gives, are the result line's."""
    from tests.engine_helpers import position

    s, out = session([HUMAN, HUMAN, "first"])
    s.game = Game.from_position(position("star", 3, NEAR_FINISH))
    s.handle("16-7")
    assert _lines(out) == ["seat 0 (human) plays 16-7",
                           "seat 0 (red, human) finishes: 1st place; the others play on",
                           "seat 1 (blue, human) to move"]
    out.clear()
    s.handle("54-74")  # seat 1 finishes 2nd and the game is over: the result line gives the places
    assert s.game.is_over and not any("finishes" in line for line in out)
    assert _lines(out)[-1].startswith("result: the race is decided; seat 0 (red, human) wins (1st seat 0")
    s, out = session(["first", HUMAN, HUMAN])  # a CPU seat that finishes
    s.game = Game.from_position(position("star", 3, NEAR_FINISH))
    s.play_cpu_turns()
    assert _lines(out) == ["seat 0 (first) plays 16-7",
                           "seat 0 (red, first) finishes: 1st place; the others play on",
                           "seat 1 (blue, human) to move"]


def test_a_resignation_in_a_game_that_goes_on_says_its_place() -> None:
    """``resign`` in a 3-seat game printed ``seat 0 (red) resigns`` with no place and no word that the others play
    on (before 2026-12-07); a resignation that ends the game keeps its line, the result line below it."""
    s, out = session([HUMAN, HUMAN, HUMAN])
    s.handle("resign")
    assert _lines(out) == ["seat 0 (red, human) resigns: 3rd place; the others play on",
                           "seat 1 (blue, human) to move"]
    out.clear()
    s.handle("resign")
    assert _lines(out)[0] == "seat 1 (blue) resigns" and _lines(out)[1].startswith("result: a resignation")


def test_an_automatic_pass_is_said() -> None:
    """A seat that cannot move is skipped (an automatic pass): the player saw their own turn again without a word
    (before 2026-12-07)."""
    from tests.engine_helpers import position

    s, out = session([HUMAN, "first"])
    s.game = Game.from_position(position("star", 2, {0: "1", 1: "0", 2: "0", 3: "0", 5: "0", 60: "0"}))
    s.handle("60-61")
    assert _lines(out) == ["seat 0 (human) plays 60-61", "seat 1 (blue, first) cannot move: its turn passes",
                           "seat 0 (red, human) to move"]


def test_a_replay_says_the_places_taken_during_play_and_the_passes() -> None:
    """A replay's step line was all it said of a step: a seat that finished part-way or an automatic pass went by
    unsaid (before 2026-12-07).  The step that ends the game says nothing more: the header gives the result."""
    from tests.engine_helpers import position

    game = Game.from_position(position("star", 3, NEAR_FINISH))
    game.play("16-7")
    game.resign(game.to_move)  # seat 1: two seats decided, the game is over
    record = GameRecord.from_game(game, players=["ann", "bob", "cat"])
    s, out = session([HUMAN, HUMAN])
    s.replay(record, step=iter(["", "", "q"]).__next__)
    assert _lines(out)[1:] == ["[0/2] start",
                               "[1/2] 16-7", "seat 0 (red, ann) finishes: 1st place; the others play on",
                               "[2/2] resign:1"]
    game = Game(Rules("star", 3))
    game.resign(0)
    s, out = session([HUMAN, HUMAN])
    s.replay(GameRecord.from_game(game), step=iter(["", "q"]).__next__)
    assert _lines(out)[-1] == "seat 0 (red) resigns: 3rd place; the others play on"
    game = Game.from_position(position("star", 2, {0: "1", 1: "0", 2: "0", 3: "0", 5: "0", 60: "0"}))
    game.play("60-61")
    s, out = session([HUMAN, HUMAN])
    s.replay(GameRecord.from_game(game), step=iter(["", "b", "1", "q"]).__next__)
    assert _lines(out)[1:] == ["[0/1] start", "[1/1] 60-61", "seat 1 (blue) cannot move: its turn passes",
                               "[0/1] start", "[1/1] 60-61", "seat 1 (blue) cannot move: its turn passes"]


def test_human_on_a_seat_a_human_plays_says_so_and_changes_nothing() -> None:
    """``human 1`` on a seat a human already played said ``seat 1 is played by a human again`` (before
    2026-12-07)."""
    s, out = session([HUMAN, HUMAN])
    s.handle("human 1")
    assert out == ["seat 1 is already played by a human"] and s.seat_changes == []


def test_a_negative_seat_is_refused_with_the_seat_range() -> None:
    """``human -1`` said ``seat must be a number, got '-1'`` where ``cpu 5 first`` names the range (before
    2026-12-07)."""
    s, out = session([HUMAN, HUMAN, HUMAN])
    for line in ("human -1", "cpu -1 first", "cpu 5 first"):
        s.handle(line)
    assert out == ["error: seat must be 0..2, got -1", "error: seat must be 0..2, got -1",
                   "error: seat must be 0..2, got 5"]


def test_an_unknown_player_lists_human_among_the_valid_ones(capsys) -> None:
    """``halma play --players humn,greedy`` listed the valid players without ``human`` (the registry's list is
    the CPU players') and suggested nothing (before 2026-12-07)."""
    from agents.cli import main

    assert main(["play", "--players", "humn,greedy"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("halma play: error: unknown player 'humn' (did you mean 'human'?); valid: human, random, ")


@pytest.mark.parametrize("line", ["113->104", "113-->104", "113 -> 104", "113=>104", "113\u2192104"])
def test_a_move_written_with_an_arrow_gets_the_notation(line: str) -> None:
    """``113->104`` got the generic 'src-dst' message where ``113 104`` gets an example of the notation (before
    2026-12-07)."""
    s, out = session([HUMAN, HUMAN])
    s.handle(line)
    assert out == ["error: a move is written 'src-dst' with two hole numbers and a plain '-', e.g. 113-104; "
                   f"got {line!r}"] and s.game.ply == 0


def test_undo_says_what_it_took_back() -> None:
    """``undo`` drew the board alone: what it took back (the human's move or resignation, and the CPU moves after
    it) went unsaid (before 2026-12-07)."""
    s, out = session([HUMAN, "first", "first"])
    s.handle("113-104")
    cpu_moves = [str(m) for m in s.game.moves[1:]]
    out.clear()
    s.handle("undo")
    assert _lines(out) == [f"took back 113-104 (seat 0), {cpu_moves[0]} (seat 1), {cpu_moves[1]} (seat 2)",
                           "seat 0 (red, human) to move"]
    s, out = session([HUMAN, HUMAN, "first"])
    s.handle("113-104")
    s.handle("resign")
    out.clear()
    s.handle("undo")
    assert _lines(out)[0].startswith("took back the resignation of seat 1, ") and s.game.ply == 1
