"""halma_env: the Halma family of games (Sternhalma, the Diamond game, 16x16 Halma) for RL research.

The engine (``Rules``, ``Game``, ``Move``, ``perft``) is pure Python and imports no ML library.
"""

from typing import TYPE_CHECKING, Any

from halma_env.game import Event, Game, IllegalMoveError, Move, Progress, perft
from halma_env.records import GameRecord, RecordError, load_record
from halma_env.rules import Rules, WrongTypeError

if TYPE_CHECKING:  # type checkers see the lazy names' real types; at run time __getattr__ imports them
    from halma_env.envs import HalmaEnv as HalmaEnv
    from halma_env.envs import env as env
    from halma_env.envs import raw_env as raw_env

__all__ = [
    "Event", "Game", "GameRecord", "IllegalMoveError", "Move", "Progress", "RecordError", "Rules",
    "WrongTypeError", "load_record", "perft",
]
__version__ = "0.1.0"

GYM_ID = "halma_env/Halma-v0"
GYM_ENTRY_POINT = "halma_env.envs.single_agent:HalmaEnv"  # registered here or by halma_env.envs
_LAZY_ENVS = ("env", "raw_env", "HalmaEnv")


def __getattr__(name: str) -> Any:
    """``halma_env.env`` / ``raw_env`` / ``HalmaEnv`` import pettingzoo and gymnasium only when asked for."""
    if name in _LAZY_ENVS:
        from halma_env import envs

        return getattr(envs, name)
    raise AttributeError(f"module 'halma_env' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The lazy names too, so that dir() and tab completion show them."""
    return sorted(set(globals()) | set(_LAZY_ENVS))


def _register_gymnasium() -> None:
    """Register ``halma_env/Halma-v0`` when gymnasium is already loaded, without importing it (or
    pettingzoo) here; ``import halma_env.envs`` always registers it."""
    import sys

    gym = sys.modules.get("gymnasium")
    registry = getattr(gym, "registry", None)
    if gym is not None and registry is not None and GYM_ID not in registry:
        gym.register(id=GYM_ID, entry_point=GYM_ENTRY_POINT)


_register_gymnasium()
