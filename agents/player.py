"""The one protocol for everything that plays: bots, trained policies, exported opponents, humans.

A player is given a game (never modified: players work on ``game.copy()`` if they search) and
an optional time budget in seconds, and returns one of ``game.legal_moves()``.  Players are
seeded at construction and reproducible: the same seed and the same sequence of positions give
the same moves (a time budget can cut a search short, so exact reproducibility holds for
fixed-depth or fixed-iteration settings).  Every player here also has ``reseed(seed)``, which
makes it play as one new made with that seed (the environments' ``reset(seed=...)`` calls it).
"""

from __future__ import annotations

import math
import numbers
import random
from typing import Any, Protocol, runtime_checkable

import numpy as np

from halma_env import Game, Move, Rules
from halma_env.rules import WrongTypeError, integer_argument, is_bool
from halma_env.suggest import shown_value


@runtime_checkable
class Player(Protocol):
    """Anything with a ``name`` and ``select_move``."""

    name: str

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        """A legal move for ``game.to_move``; must answer within ``time_budget`` seconds."""
        ...


@runtime_checkable
class SeededPlayer(Player, Protocol):
    """A ``Player`` that can start again from a seed, as every player of ``agents`` can (what
    ``make_player`` and ``load_opponent`` return)."""

    seed: int | None

    def reseed(self, seed: int | None) -> None:
        """Play from now on as a player new made with ``seed``."""
        ...


# --- checks shared by the players' constructors and select_move ---------------------------------


def _real(value: Any) -> bool:
    """A real number of any type (numpy's too), not a bool: what a number argument's type must be."""
    return isinstance(value, numbers.Real) and not is_bool(value)


def _finite(value: Any) -> bool:
    return _real(value) and math.isfinite(value)


def check_number(what: str, value: Any, low: float | None = 0.0, *, strict: bool = False,
                 high: float | None = None) -> float:
    """``value`` as a float if it is a finite real number >= ``low`` (> with ``strict``; ``None``: no
    lower bound) and <= ``high``; else a ``ValueError`` naming ``what`` and the value (NaN and inf
    would pass a bare ``< low`` test), a ``WrongTypeError`` (a ``TypeError``) if it is no number (text,
    a bool, None)."""
    ok = _finite(value) and (low is None or (value > low if strict else value >= low))
    if not (ok and (high is None or value <= high)):
        bounds = [f"{'>' if strict else '>='} {low:g}"] if low is not None else []
        bounds += [f"<= {high:g}"] if high is not None else []
        rule = f"{' and '.join(bounds)} (a finite number)" if bounds else "a finite number"
        raise (ValueError if _real(value) else WrongTypeError)(f"{what} must be {rule}, got {value!r}")
    return float(value)


def check_int(what: str, value: Any, low: int = 0) -> int:
    """``value`` as a Python int if it is an integer >= ``low`` (numpy's too); ``WrongTypeError`` (a
    ``TypeError``) if it is no integer (a bool, or a float such as 2.5 or 2.0: refused, not truncated),
    ``ValueError`` if it is below ``low``."""
    def message() -> str:
        return f"{what} must be >= {low} (an integer), got {shown_value(value)}"

    number = integer_argument(value, message)
    if number < low:
        raise ValueError(message())
    return number


def sample_index(logits: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    """The index of a move chosen from its logits, as the network players (checkpoints and exported models)
    choose: the first largest at ``temperature`` 0, else a draw of ``rng`` from softmax(logits / temperature),
    shifted so the largest logit is 0 (no overflow, and the best move's weight is 1 at any temperature, 1e-300
    included, so no weight is NaN); computed in the logits' own dtype (both players pass float64)."""
    if temperature == 0:
        return int(np.argmax(logits))
    with np.errstate(over="ignore"):  # a logit far below the best overflows to -inf: weight 0, as meant
        weights = np.exp((logits - logits.max()) / temperature)
    return int(rng.choice(len(logits), p=weights / weights.sum()))


def check_seed(seed: Any) -> int | None:
    """A player's seed: ``None`` or an integer >= 0 (numpy integers too), as a Python int.  A negative
    seed is refused: numpy's generators (exported opponents) take none, and ``random.Random`` would
    fold -1 onto 1 (``ValueError``); a seed of another type (a bool, 1.0, "1") is a ``WrongTypeError``."""
    if seed is None:
        return None
    def message() -> str:
        return f"seed must be None or an integer >= 0, got {shown_value(seed)}"

    number = integer_argument(seed, message)
    if number < 0:
        raise ValueError(message())
    return number


def check_time(what: str, value: Any) -> float | None:
    """A time limit in seconds: ``None`` (no limit) or a finite number > 0 (``ValueError``; a value that is no
    number, text or a bool, ``WrongTypeError``)."""
    if value is None:
        return None
    if not (_finite(value) and value > 0):
        error = ValueError if _real(value) else WrongTypeError
        raise error(f"{what} must be > 0 seconds (a finite number) or none, got {value!r}")
    return float(value)


def check_is_game(game: Any) -> None:
    """``select_move``'s game: a ``halma_env.Game``; anything else (a position text a server stored, None)
    is a TypeError naming it, before a player reads an attribute of it."""
    if not isinstance(game, Game):
        hint = " (load a position text with Game.from_position)" if isinstance(game, str) else ""
        raise WrongTypeError(f"select_move needs a halma_env.Game, got {type(game).__name__}{hint}")


def check_is_rules(rules: Any, what: str = "player_for") -> None:
    """The rules of a player's ``player_for`` (or ``describe``, named by ``what``): a ``halma_env.Rules``; anything
    else (a variant's name, None, the dict form) is a TypeError naming it, before a player reads an attribute
    of it or makes a game of it (``Game(None)`` is star with 2 seats)."""
    if not isinstance(rules, Rules):
        hint = " (Rules.from_dict reads the dict form)" if isinstance(rules, dict) else ""
        raise WrongTypeError(f"{what} takes a halma_env.Rules, e.g. Rules('star', 2), got {type(rules).__name__}{hint}")


def checked_moves(game: Any, time_budget: Any) -> list[Move]:
    """The start of a bot's ``select_move``: ``time_budget`` checked (``check_time``), ``game`` checked
    (``check_is_game``), then ``game.legal_moves()``; a game that is over is a ValueError, not an empty list."""
    check_time("time_budget", time_budget)
    check_is_game(game)
    moves = game.legal_moves()
    if not moves:
        raise ValueError("no legal move: the game is over")
    return moves


class SeededBot:
    """A base class for a bot whose randomness is one ``random.Random``, ``self._rng``: it gives the
    bot ``reseed`` and ``seed`` (``SeededPlayer``).  The bot's ``__init__`` calls ``self.reseed(seed)``;
    a bot with more state to reset (a plan, a cache) extends ``reseed`` and calls ``super().reseed(seed)``."""

    seed: int | None
    _rng: random.Random

    def reseed(self, seed: int | None) -> None:
        """Start the bot's random stream again from ``seed`` (the environments' ``reset(seed=...)`` calls it)."""
        self.seed = check_seed(seed)
        self._rng = random.Random(self.seed)


def search_time(own: float | None, time_budget: float | None) -> float | None:
    """How long a searching bot may think: its own ``time`` limit, capped by the caller's
    ``time_budget``.  Of the budget it takes 70% less 10 ms (the copy, the last iteration's
    unwinding and the caller), and never less than 40% of it: a budget of a few ms gets a search
    of a few ms (the best-ordered move when not even one ply fits), not a fixed floor past it."""
    if time_budget is None:
        return own
    cap = max(0.7 * time_budget - 0.01, 0.4 * time_budget)
    return cap if own is None else min(own, cap)


def split_options(spec: str, rest: str, what: str = "option", tail: str | None = None) -> list[tuple[str, str]]:
    """``"a=1,b=2"`` (the part of ``spec`` after its colon) -> ``[("a", "1"), ("b", "2")]``; ``tail`` is a
    key whose value runs to the end, commas included (``search=top=6,eval=value``).

    An empty item (``a=1,,b=2``) or a repeated key is an error, not skipped or overridden: either
    is a typo the caller should see.  Nothing after the colon (``search:``) means no options."""
    if not rest.strip():
        return []
    items = [p.strip() for p in rest.split(",")]
    out: list[tuple[str, str]] = []
    for i, item in enumerate(items):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not item:
            raise ValueError(f"empty {what} in {spec!r} (two commas, or a comma at an end)")
        if not eq or not key:
            raise ValueError(f"{what} {item!r} in {spec!r} must be written key=value")
        if any(k == key for k, _ in out):
            raise ValueError(f"{what} {key!r} is given twice in {spec!r}")
        if key == tail:
            out.append((key, ",".join([value.strip(), *items[i + 1:]])))
            break
        out.append((key, value.strip()))
    return out
