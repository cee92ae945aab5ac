"""``random``: a uniformly random legal move (the floor every other player must beat)."""

from __future__ import annotations

import random

from agents.player import check_is_game, check_seed, check_time
from halma_env import Game, Move


class RandomBot:
    """Picks uniformly among ``game.legal_moves()`` with its own seeded generator."""

    def __init__(self, seed: int | None = None, name: str = "random") -> None:
        self.name = name
        self.reseed(seed)

    def reseed(self, seed: int | None) -> None:
        """Start the bot's random stream again from ``seed`` (the environments' ``reset(seed=...)`` calls it)."""
        self.seed = check_seed(seed)
        self._rng = random.Random(self.seed)

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        check_time("time_budget", time_budget)
        check_is_game(game)
        moves = game.legal_moves()
        if not moves:
            raise ValueError("no legal move: the game is over")
        return self._rng.choice(moves)

    def __repr__(self) -> str:
        return f"RandomBot(seed={self.seed!r})"
