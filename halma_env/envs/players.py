"""CPU players for the environments: resolve an opponent given by name, callable or object.

The environments never import ``agents``: a name is looked up through the entry point group
``halma_env.players`` (the ``agents`` package registers ``agents.registry:make_player`` there).
``"random"`` also works without that package (a built-in uniform random player).  Bots of other
installed packages are resolved the same way: ``agents`` adds the bots registered in the entry point
group ``halma_env.bots`` (``agents.registry.PLUGIN_GROUP``; name = ``"module:Class"``, see docs/bots.md) to its
own, so a plugin bot is an opponent by name (``opponents={"player_1": "mybot:depth=2"}``).
"""

from __future__ import annotations

import copy
import functools
import random
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from halma_env.game import Game, IllegalMoveError, Move, probe_player
from halma_env.rules import Rules, WrongTypeError, integer_argument
from halma_env.suggest import shown_value

ENTRY_POINT_GROUP = "halma_env.players"


class RandomPlayer:
    """Uniform over ``game.legal_moves()``; seeded and reproducible."""

    def __init__(self, seed: int | None = None) -> None:
        self.name = "random"
        self._rng = random.Random()
        self.reseed(seed)

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        moves = game.legal_moves()
        if not moves:
            raise IllegalMoveError("no legal move: the game is over or the seat cannot move")
        return moves[self._rng.randrange(len(moves))]

    def reseed(self, seed: int | None) -> None:
        """Seed ``None`` (fresh entropy) or an integer >= 0 of any type; anything else is refused, as the
        players of ``agents`` refuse it (``random.Random`` would take 1.5, "abc" and -1, folding -1 onto 1)."""
        def message() -> str:
            return f"seed must be None or an integer >= 0, got {shown_value(seed)}"

        number = None if seed is None else integer_argument(seed, message)  # (a bool, 1.0: WrongTypeError)
        if number is not None and number < 0:
            raise ValueError(message())
        self._rng.seed(number)
        self._seed = number

    def __repr__(self) -> str:
        return f"RandomPlayer(seed={self._seed!r})"

    seed = reseed  # its name before reseed (it is exported: code may call it)


class CallablePlayer:
    """Adapts a plain function ``(game) -> move`` to the Player protocol."""

    def __init__(self, fn: Callable[[Game], Any], name: str | None = None) -> None:
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "callable")

    def select_move(self, game: Game, time_budget: float | None = None) -> Any:
        return self.fn(game)

    def __repr__(self) -> str:
        """``CallablePlayer(my_policy)``: the function by its qualified name (a callable object or a partial by
        its repr), and the name when it is not the function's own."""
        qualname = getattr(self.fn, "__qualname__", None)
        shown = qualname if isinstance(qualname, str) else repr(self.fn)
        named = "" if self.name == getattr(self.fn, "__name__", "callable") else f", name={self.name!r}"
        return f"CallablePlayer({shown}{named})"


@functools.cache  # scanning the installed distributions' entry points takes milliseconds, at every env made
def _registry() -> Callable[..., Any] | None:
    """``make_player`` from the ``halma_env.players`` entry point, or None when unavailable (looked up once
    per process)."""
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == "agents":
            try:
                return ep.load()
            except ImportError:
                return None
    return None


def make_player(spec: Any, seed: int | None = None) -> Any:
    """A player from ``spec``: an object with ``select_move(game, time_budget=None)``, a callable
    ``(game) -> move``, or a name resolved through the ``halma_env.players`` entry point
    (``"random"`` falls back to :class:`RandomPlayer` when that is not installed)."""
    if hasattr(spec, "select_move"):
        return spec
    if isinstance(spec, str):
        factory = _registry()
        if factory is not None:
            try:
                return factory(spec, seed)
            except ValueError:
                if spec != "random":
                    raise
        if spec == "random":
            return RandomPlayer(seed)
        raise ValueError(
            f"unknown player {spec!r}: no '{ENTRY_POINT_GROUP}' entry point could build it "
            "(install the 'agents' package) and only 'random' is built in"
        )
    if callable(spec):
        return CallablePlayer(spec)
    raise WrongTypeError(  # (a TypeError that is also the ValueError it was)
        f"a player is a name, a callable (game) -> move or an object with select_move(game), got {shown_value(spec)}"
    )


def check_player(player: Any, spec: Any, rules: Rules, make: Callable[..., Any] | None = None) -> None:
    """Refuse a player made from the name ``spec`` that cannot play ``rules``' game (a checkpoint or an
    exported model of another variant or seat count, say) with ``probe_player``'s error.  A copy of the
    player is asked, not the player itself (its random stream, its plans and caches stay as made; one that
    cannot be copied is probed as another made from the name by ``make``, ``make_player`` by default).  A
    callable or an object given as the player is not probed: it is the caller's code, which the env calls
    only for the seat's moves."""
    if not isinstance(spec, str):
        return
    try:
        probe = copy.deepcopy(player)
    except Exception:  # a plugin bot that cannot be copied: another one made from the name
        probe = (make or make_player)(spec, 0)
    probe_player(probe, spec, rules)


def reseed(player: Any, spec: Any, seed: int | None) -> Any:
    """The player to use after ``reset(seed=...)``: players with a ``reseed(int)`` method (every
    player of ``agents``) or a ``seed(int)`` method (Python's ``random`` convention) are reseeded,
    other named players are rebuilt with the new seed, other objects are kept as is."""
    if seed is None:
        return player
    for method in ("reseed", "seed"):
        if callable(getattr(player, method, None)):
            getattr(player, method)(seed)
            return player
    if isinstance(spec, str):
        return make_player(spec, seed)
    return player
