"""scripts/value_lookahead.py: the policy's moves re-ranked by the value head one ply ahead."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agents.checkpoint import load_checkpoint, model_from_checkpoint
from agents.policy import PolicyPlayer
from halma_env import Game, Rules
from tests.script_helpers import load_script

ROOT = Path(__file__).parents[1]
SCRIPT = ROOT / "scripts" / "value_lookahead.py"
lookahead = load_script("value_lookahead")
STAR2 = ROOT / "agents" / "checkpoints" / "quickstart_star2.pt"


def net(path: Path = STAR2):
    return model_from_checkpoint(load_checkpoint(path), path)


def positions(count: int = 6) -> list[Game]:
    game, out = Game(Rules("star", 2)), []
    policy = PolicyPlayer(net())
    while len(out) < count:
        game.play(policy.select_move(game))
        out.append(game.copy())
    return out


def test_beta_zero_plays_the_policys_own_move() -> None:
    player, policy = lookahead.ValueLookaheadPlayer(net(), beta=0.0, top_k=3), PolicyPlayer(net())
    for game in positions():
        assert player.select_move(game) == policy.select_move(game)


def test_the_value_alone_picks_the_move_that_leaves_the_opponent_the_lowest_value() -> None:
    player = lookahead.ValueLookaheadPlayer(net(), beta=1e6, top_k=0)
    for game in positions(3):
        moves = game.legal_moves()
        children = []
        for m in moves:
            child = game.copy()
            child.play(m)
            children.append(child)
        _, values = player._evaluate(children)
        assert player.select_move(game) == moves[int(values.argmin())]


def test_bad_settings_and_seat_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="beta must be >= 0"):
        lookahead.ValueLookaheadPlayer(net(), beta=-1.0)
    with pytest.raises(ValueError, match="top_k must be >= 0"):
        lookahead.ValueLookaheadPlayer(net(), beta=1.0, top_k=-2)
    with pytest.raises(ValueError, match="2-seat network, got one for 6 seats"):
        lookahead.ValueLookaheadPlayer(net(ROOT / "agents" / "checkpoints" / "star6.pt"), beta=1.0)
    with pytest.raises(ValueError, match="plays star with 2 seats, not star with 3"):
        lookahead.ValueLookaheadPlayer(net(), beta=1.0).select_move(Game(Rules("star", 3)))


def test_the_command_names_a_missing_checkpoint_without_a_traceback(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "none.pt")], capture_output=True, text=True)
    assert run.returncode == 2
    assert "none.pt" in run.stderr and "does not exist" in run.stderr and "Traceback" not in run.stderr


def test_the_command_plays_a_short_match(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, str(SCRIPT), str(STAR2), "--opponent", "greedy", "--games", "1",
                          "--workers", "1"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "lookahead(beta=3.0,top_k=4) against greedy:" in run.stdout and "/1 wins" in run.stdout


@pytest.mark.parametrize("args, named", [
    (["--games", "0"], "--games"),
    (["--workers", "0"], "--workers"),
    (["--opponent", "nosuchbot"], "unknown player 'nosuchbot'"),
    (["--opponent", str(ROOT / "agents" / "checkpoints" / "star3.pt")], "cannot play star with 2 seats"),
    (["--seed", "-1"], "--seed must be >= 0"),  # was a traceback from the tournament
    (["--beta", "inf"], "--beta must be >= 0 (a finite number), got inf"),  # inf x a draw's 0 is NaN
    (["--opponent", "lookahead:1"], "lookahead:BETA:TOP_K:CHECKPOINT"),
])
def test_bad_settings_and_opponents_are_refused_before_any_game(args: list[str], named: str) -> None:
    run = subprocess.run([sys.executable, str(SCRIPT), str(STAR2), *args], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 2 and named in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize("checkpoint, named", [("diamond2.pt", "variant 'diamond', not 'star'"),
                                               ("halma16_2.pt", "variant 'halma16', not 'star'")])
def test_a_two_seat_checkpoint_of_another_game_is_refused(checkpoint: str, named: str) -> None:
    """The help asks for a 2-seat star checkpoint; one of another game was played at its own game."""
    run = subprocess.run([sys.executable, str(SCRIPT), str(ROOT / "agents" / "checkpoints" / checkpoint),
                          "--games", "1", "--workers", "1", "--opponent", "random"], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 2 and named in run.stderr and "Traceback" not in run.stderr
    assert "wins" not in run.stdout


def test_an_infinite_beta_is_refused_by_the_player() -> None:
    with pytest.raises(ValueError, match="beta must be >= 0 \\(a finite number\\), got inf"):
        lookahead.ValueLookaheadPlayer(net(), beta=float("inf"))
