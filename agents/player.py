"""The one protocol for everything that plays: bots, trained policies, exported opponents, humans.

A player is given a game (never modified: players work on ``game.copy()`` if they search) and
an optional time budget in seconds, and returns one of ``game.legal_moves()``.  Players are
seeded at construction and reproducible: the same seed and the same sequence of positions give
the same moves (a time budget can cut a search short, so exact reproducibility holds for
fixed-depth or fixed-iteration settings).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from halma_env import Game, Move


@runtime_checkable
class Player(Protocol):
    """Anything with a ``name`` and ``select_move``."""

    name: str

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        """A legal move for ``game.to_move``; must answer within ``time_budget`` seconds."""
        ...
