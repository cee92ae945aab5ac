"""Integer limits at the edge of what the engines hold: a rule limit too large for the batched
engine's int64 counters is refused by ``Rules`` (naming the option), through every way in."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.config import apply_overrides, default_dict, from_dict
from halma_env import Rules
from halma_env.rules import MAX_LIMIT

LIMITS = ("move_limit", "stall_limit", "repetition_limit")


@pytest.mark.parametrize("name", LIMITS)
def test_the_largest_limit_steps_the_batched_engine(name: str) -> None:
    """MAX_LIMIT fits the int64 counters it is compared with (10**20 raised OverflowError in step)."""
    from halma_env.batched import BatchedGame  # the batched engine needs torch; the other limits here do not

    games = BatchedGame(Rules("star", 2, **{name: MAX_LIMIT}), batch_size=2, seed=0)
    for _ in range(3):
        games.step(games.random_actions())
    assert games.ply.tolist() == [3, 3]


@pytest.mark.parametrize("name", LIMITS)
def test_a_limit_too_large_for_the_batched_engine_is_refused(name: str) -> None:
    """review_fuzz batched_overflow.py: ``BatchedGame(Rules("star", 2, move_limit=10**20), ...)`` was built
    and its first step raised ``OverflowError: int too big to convert``."""
    from halma_env.batched import BatchedGame

    with pytest.raises(ValueError, match=f"^{name} must be at most {MAX_LIMIT} "):
        BatchedGame(Rules("star", 2, **{name: 10**20}), batch_size=2, seed=0)


@pytest.mark.parametrize("name", LIMITS)
def test_a_config_limit_too_large_is_refused(name: str) -> None:
    """``halma train ... --set game.move_limit=1e20 --set env.engine=batched`` crashed with a traceback."""
    with pytest.raises(ValueError, match=f"^game: {name} must be at most {MAX_LIMIT} .*got 100000000000000000000$"):
        from_dict(apply_overrides(default_dict(), [f"game.{name}=1e20", "env.engine=batched"]))


# --- from a review of the session's own changes: siblings of the fixes ------------------------------------


def test_number_flags_take_ascii_digits_only(capsys) -> None:
    """argparse's int and float read '٢' as 2 and '1_0' as 10 (halma perft 1_0 ran until killed)."""
    from agents.cli import main

    for argv, named in [(["perft", "\u0662"], "argument depth: expected an integer in ASCII digits, got '\u0662'"),
                        (["perft", "1_0"], "argument depth: expected an integer in ASCII digits, got '1_0'"),
                        (["eval", "random", "greedy", "--time-per-move", "\u0660.\u0665"],
                         "argument --time-per-move: expected a number in ASCII digits, got")]:
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2 and named in capsys.readouterr().err
    assert main(["perft", "-0", "--json"]) == 0 and '"total": 1' in capsys.readouterr().out


def test_an_integer_flag_of_too_many_digits_is_named_by_its_length(capsys) -> None:
    """Past int()'s 4,300 digits argparse said "invalid ascii_int value" and quoted all of them; now any
    integer flag of more than 30 digits (leading zeros aside) is refused by its length, and a long non-number
    is quoted cut short."""
    from agents.cli import main

    for argv, named in [(["perft", "9" * 5000], "argument depth: an integer of 5000 digits is far too large "
                                                "(at most 30 digits)"),
                        (["eval", "random", "random", "--games", "1" * 31], "argument --games: an integer of 31 "
                                                                           "digits is far too large"),
                        (["eval", "random", "random", "--games", "x" * 100], "got 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'"
                                                                            "... (100 characters)")]:
        with pytest.raises(SystemExit) as info:
            main(argv)
        err = capsys.readouterr().err
        assert info.value.code == 2 and named in err and "ascii_int" not in err and len(err) < 1000
    assert main(["perft", "0" * 40 + "1", "--json"]) == 0 and '"total": 14' in capsys.readouterr().out
    # leading zeros count against int()'s own 4,300 digits: they are stripped first
    assert main(["perft", "0" * 5000 + "1", "--json"]) == 0 and '"total": 14' in capsys.readouterr().out


def test_a_ladder_game_s_seats_take_ascii_digits_only() -> None:
    from agents.ladder import LadderError, ladder_player

    with pytest.raises(LadderError, match="the game is written VARIANT-SEATS"):
        ladder_player("ladder:star-\u0662:easy")


def test_a_config_with_a_string_the_loader_reads_as_a_number_round_trips(tmp_path: Path) -> None:
    """dump_yaml (YAML 1.1) left 1e3 unquoted, which the YAML 1.2 loader reads as 1000: a run named 1e3 could
    not resume from its own config.yaml."""
    from agents.config import apply_overrides, default_dict, dump_yaml, from_dict, load_config

    cfg = from_dict(apply_overrides(default_dict(), ["name='1e3'", "ppo.learning_rate=1e-5"]))
    path = tmp_path / "config.yaml"
    path.write_text(dump_yaml(cfg))
    assert "name: '1e3'" in path.read_text() and load_config(path) == cfg


def test_export_and_eval_out_refuse_a_fifo_before_any_work(tmp_path: Path, capsys) -> None:
    """halma export renamed its model over a FIFO, and halma eval --out met a FIFO results.md after the games."""
    import os
    import stat

    from agents.cli import main

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "exports"
    out.mkdir()
    os.mkfifo(out / "x.onnx")
    assert main(["export", str(root / "agents" / "checkpoints" / "quickstart_star2.pt"), "--name", "x", "--out",
                 str(out)]) == 2
    assert f"cannot write {str(out / 'x.onnx')!r}: it is a FIFO, not a regular file" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.lstat(out / "x.onnx").st_mode) and [p.name for p in out.iterdir()] == ["x.onnx"]
    results = tmp_path / "results"
    results.mkdir()
    os.mkfifo(results / "results.md")
    assert main(["eval", "random", "greedy", "--games", "2", "--max-plies", "10", "--quiet", "--out",
                 str(results)]) == 2
    assert "results.md is a FIFO, not a regular file" in capsys.readouterr().err
    assert [p.name for p in results.iterdir()] == ["results.md"]


def test_a_network_setting_the_game_refuses_is_named_with_the_checkpoint(tmp_path: Path) -> None:
    import torch

    from agents.checkpoint import CheckpointError, load_checkpoint, model_from_checkpoint

    root = Path(__file__).resolve().parents[1]
    data = load_checkpoint(root / "agents" / "checkpoints" / "star3.pt")
    data = {**data, "network": {**data["network"], "reach_features": True}}  # for 2-seat games only
    path = tmp_path / "reach3.pt"
    torch.save(data, path)
    with pytest.raises(CheckpointError, match=r"^checkpoint '.*reach3\.pt': .*reach_features"):
        model_from_checkpoint(load_checkpoint(path), path)


def test_a_gym_reset_the_rules_end_before_the_learner_moves_names_the_rules() -> None:
    from halma_env.envs import HalmaEnv

    with pytest.raises(ValueError, match=r"end reason move_limit\): the rules end the game before it \(a move_limit "
                                         r"or stall_limit too small for the seat\)$"):
        HalmaEnv(num_players=2, seat=1, move_limit=1).reset(seed=0)
