"""scripts/race_margins.py: the race count and the disengagement test it reads games with."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agents.bots.greedy import GreedyBot
from halma_env import Game, Rules
from halma_env.layout import layout
from tests.engine_helpers import position
from tests.script_helpers import load_script

race_margins = load_script("race_margins")
ROOT = Path(__file__).parents[1]
SCRIPT = ROOT / "scripts" / "race_margins.py"
STAR2 = ROOT / "agents" / "checkpoints" / "star2.pt"


def last_step_position(to_move: int) -> Game:
    """Seat 0 (goal: holes 0-9) one step from finishing, seat 1 in the middle of the board."""
    g = layout("star", 2).geometry
    outside = next(h for h in g.neighbours[9] if h > 9)
    pieces = {h: "0" for h in [*range(9), outside]} | {h: "1" for h in range(56, 66)}
    return Game.from_position(position("star", 2, pieces, to_move, ply=40))


@pytest.mark.parametrize("to_move", [0, 1])
def test_moves_left_counts_the_last_step_whoever_is_to_move(to_move: int) -> None:
    game = last_step_position(to_move)
    before = game.position()
    assert race_margins.moves_left(game, 0, width=10) == 1
    assert game.position() == before  # the game read is not changed


def test_disengaged_only_once_no_piece_can_touch_another() -> None:
    assert race_margins.disengaged(last_step_position(0), 0)
    start = Game(Rules("star", 2))
    assert not race_margins.disengaged(start, 0) and not race_margins.disengaged(start, 1)


def test_summary_reports_margins_race_counts_and_endgames() -> None:
    results = [
        {"winner": "agent", "margin": 3, "race": {"agent": {0: 27, 5: 28}, "search": {0: 27}}, "endgame_agent": 0},
        {"winner": "search", "margin": 5, "race": {"agent": {0: 29}, "search": {0: 27}}, "endgame_search": 1},
    ]
    text = "\n".join(race_margins.summary(results))
    assert "agent won 1 of 2 (0 undecided)" in text
    assert "agent lost: the loser still needed [5] moves (mean 5.00)" in text
    assert "race count of agent (own moves: mean, games): 0: 28.00 (2), 5: 28.00 (1)" in text
    assert "endgame of search: moves beyond the planner's [1] (mean 1.00)" in text


def test_a_game_is_read_to_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """One game with the greedy bot in place of the time-limited search (fast), read as the script does."""
    monkeypatch.setattr(race_margins, "SearchBot", lambda seed=None: GreedyBot(seed=seed))
    result = race_margins.play_game(str(STAR2), 1, width=5)
    assert result["game"] == 1 and result["first_seat"] == 1 and result["agent_seat"] == 0
    assert result["winner"] in ("agent", "search") and result["margin"] >= 0
    assert sorted(result["race"]["agent"]) == list(range(0, max(result["race"]["agent"]) + 1, race_margins.EVERY))
    json.dumps(result)  # --json prints it
    assert race_margins.summary([result])[0] in ("agent won 1 of 1 (0 undecided)", "agent won 0 of 1 (0 undecided)")


@pytest.mark.parametrize("args, named", [
    (["none.pt"], "does not exist"),
    (["bad.pt"], "corrupt"),
    ([str(ROOT / "agents" / "checkpoints" / "star3.pt")], "3 seats"),
    ([str(STAR2), "--games", "0"], "--games"),
    ([str(STAR2), "--width", "-1"], "--width"),
    # the one setting at fault and its value, not the three flags together
    ([str(STAR2), "--workers", "0"], "--workers must be >= 1 (an integer), got 0"),
    ([str(STAR2), "--width", "-1"], "--width must be >= 1 (an integer), got -1"),
])
def test_bad_checkpoints_and_settings_are_refused_before_any_game(tmp_path: Path, args: list[str], named: str) -> None:
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    run = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=tmp_path,
                         timeout=120)
    assert run.returncode == 2 and named in run.stderr and "Traceback" not in run.stderr


@pytest.mark.slow
def test_the_script_plays_against_search_in_a_worker_process() -> None:
    """One game in a worker process against the real `search` (about 40 s). The workers are spawned:
    forked after the parent's checkpoint check (which builds the network), one hung in torch."""
    run = subprocess.run([sys.executable, str(SCRIPT), str(STAR2), "--games", "1", "--workers", "1"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "race count of agent" in run.stdout and "endgame of search" in run.stdout
