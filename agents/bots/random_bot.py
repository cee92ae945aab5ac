"""``random``: a uniformly random legal move (the floor every other player must beat)."""

from __future__ import annotations

from agents.player import SeededBot, checked_moves
from halma_env import Game, Move


class RandomBot(SeededBot):
    """Picks uniformly among ``game.legal_moves()`` with its own seeded generator."""

    def __init__(self, seed: int | None = None, name: str = "random") -> None:
        self.name = name
        self.reseed(seed)

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        moves = checked_moves(game, time_budget)
        return self._rng.choice(moves)

    def __repr__(self) -> str:
        return f"RandomBot(seed={self.seed!r})"
