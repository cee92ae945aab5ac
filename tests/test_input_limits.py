"""Integer limits at the edge of what the engines hold: a rule limit too large for the batched
engine's int64 counters is refused by ``Rules`` (naming the option), through every way in."""

from __future__ import annotations

import pytest

from agents.config import apply_overrides, default_dict, from_dict
from halma_env import Rules
from halma_env.batched import BatchedGame
from halma_env.rules import MAX_LIMIT

LIMITS = ("move_limit", "stall_limit", "repetition_limit")


@pytest.mark.parametrize("name", LIMITS)
def test_the_largest_limit_steps_the_batched_engine(name: str) -> None:
    """MAX_LIMIT fits the int64 counters it is compared with (10**20 raised OverflowError in step)."""
    games = BatchedGame(Rules("star", 2, **{name: MAX_LIMIT}), batch_size=2, seed=0)
    for _ in range(3):
        games.step(games.random_actions())
    assert games.ply.tolist() == [3, 3]


@pytest.mark.parametrize("name", LIMITS)
def test_a_limit_too_large_for_the_batched_engine_is_refused(name: str) -> None:
    """review_fuzz batched_overflow.py: ``BatchedGame(Rules("star", 2, move_limit=10**20), ...)`` was built
    and its first step raised ``OverflowError: int too big to convert``."""
    with pytest.raises(ValueError, match=f"^{name} must be at most {MAX_LIMIT} "):
        BatchedGame(Rules("star", 2, **{name: 10**20}), batch_size=2, seed=0)


@pytest.mark.parametrize("name", LIMITS)
def test_a_config_limit_too_large_is_refused(name: str) -> None:
    """``halma train ... --set game.move_limit=1e20 --set env.engine=batched`` crashed with a traceback."""
    with pytest.raises(ValueError, match=f"^game: {name} must be at most {MAX_LIMIT} .*got 100000000000000000000$"):
        from_dict(apply_overrides(default_dict(), [f"game.{name}=1e20", "env.engine=batched"]))
