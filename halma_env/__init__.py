"""halma_env: the Halma family of games (Sternhalma, the Diamond game, 16x16 Halma) for RL research.

The engine (``Rules``, ``Game``, ``Move``, ``perft``) is pure Python and imports no ML library.
"""

from halma_env.game import Event, Game, IllegalMoveError, Move, Progress, perft
from halma_env.records import GameRecord, RecordError, load_record
from halma_env.rules import Rules

__all__ = [
    "Event", "Game", "GameRecord", "IllegalMoveError", "Move", "Progress", "RecordError", "Rules",
    "load_record", "perft",
]
__version__ = "0.1.0"
