"""scripts/race_margins.py: the race count and the disengagement test it reads games with."""

from __future__ import annotations

import pytest

from halma_env import Game, Rules
from halma_env.layout import layout
from tests.engine_helpers import position
from tests.script_helpers import load_script

race_margins = load_script("race_margins")


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
