"""Players of halma_env games: heuristic bots, trained policies, exported opponents; the arena,
training and the ``halma`` command line.  Depends on ``halma_env``, never the other way round."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what a type checker reads of agents.load_opponent (at run time: __getattr__)
    from agents.opponent import load_opponent as load_opponent


def __getattr__(name: str) -> Any:
    # ``agents.load_opponent`` without importing anything at ``import agents`` (agents.opponent needs no torch)
    if name == "load_opponent":
        from agents.opponent import load_opponent

        return load_opponent
    raise AttributeError(f"module 'agents' has no attribute {name!r}")


def __dir__() -> list[str]:
    """``load_opponent`` too, so that dir() and tab completion show it."""
    return sorted(set(globals()) | {"load_opponent"})
