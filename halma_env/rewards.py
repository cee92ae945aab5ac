"""Rewards shared by every environment (AEC, single-agent, batched), so that they agree exactly.

- ``"place"`` (default): +1 for first place to -1 for last, linear in between; seats that share
  a place get the mean of the rewards of the places they span; a game where every seat shares
  one place (a draw) gives 0 to all.  Solitaire: +1 for finishing.
- ``"win_loss"``: +1 for place 1, -1 otherwise; 0 for everyone when every seat shares place 1.
- Progress shaping (optional, for training): on each of its moves a seat gets
  ``coef * (phi_before - phi_after) / phi_start`` where ``phi`` (``shaping_potential``) is the sum
  over its ordinary pieces of the single-step distance from the piece's hole to the nearest hole of
  its goal (``goal_distance``) plus, for a seat with a king (``diamond``), the king's single-step
  distance to its goal tip (``king_distance``): the king must end on the tip, so a king elsewhere
  in the camp still has ground to cover.  ``phi`` is 0 exactly when the seat's pieces fill the
  goal as finishing needs, so a whole crossing earns about ``coef`` in total.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import cast

import numpy as np

from halma_env.layout import layout
from halma_env.rules import WrongTypeError, as_integer, choice_argument, game_name, integer_argument
from halma_env.suggest import shown_value

REWARD_SCHEMES = ("place", "win_loss")
# the largest |progress_shaping|: far above any useful weight (the configs use 0-1), and low enough that the
# batched engine's float32 rewards stay finite (1e308 passed the "finite" check and gave inf rewards)
MAX_SHAPING = 1e9


def check_reward_scheme(scheme: object) -> None:
    """Refuse a ``scheme`` that is none of ``REWARD_SCHEMES``: other text is a ``ValueError``, anything else (1,
    None) a ``WrongTypeError``; the one check of the envs', the batched engine's and ``place_rewards``' reward."""
    choice_argument(scheme, REWARD_SCHEMES,
                    lambda: f"reward must be one of {', '.join(REWARD_SCHEMES)}, got {shown_value(scheme)}")


def check_progress_shaping(value: object) -> float:
    """``progress_shaping`` as a float: a real number (numpy's too; not a bool, text, an array or a tensor:
    ``WrongTypeError``) of magnitude at most ``MAX_SHAPING`` (``ValueError`` otherwise, NaN included).  The
    one check of the envs and the batch."""
    real = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    if not real or not abs(float(cast(float, value))) <= MAX_SHAPING:  # (NaN fails the comparison)
        raise (ValueError if real else WrongTypeError)(
            f"progress_shaping must be a finite number of magnitude at most {MAX_SHAPING:g}, got {shown_value(value)}")
    return float(cast(float, value))


@cache
def _places_of(n: int) -> frozenset[int | None]:
    """What a seat's place may be in a game of ``n`` seats: 1..n, or None (undecided)."""
    return frozenset([None, *range(1, n + 1)])


_PLAIN_PLACES = frozenset([int, type(None)])  # the types of places that need no conversion (not bool's)


def _checked_places(places: Sequence[object]) -> list[int | None]:
    """``places`` as Python ints and None, or ``place_rewards``' error naming the first bad seat and its place:
    ``WrongTypeError`` for a place that is no integer (True, 1.0, "1"), ``ValueError`` for one outside 1..n."""
    n = len(places)
    seats = f"{n} seat{'s' if n > 1 else ''}"
    out: list[int | None] = []
    for seat, p in enumerate(places):
        def message(seat: int = seat, p: object = p) -> str:
            return (f"seat {seat}'s place must be an integer 1..{n} (places of {seats}) or None (undecided), "
                    f"got {shown_value(p)} in places {shown_value(places)}")

        number = None if p is None else integer_argument(p, message)
        if number is not None and not 1 <= number <= n:
            raise ValueError(message())
        out.append(number)
    return out


def _check_ranking(places: list[int | None]) -> None:
    """Places that seats share must skip the places below them, as ``Game.places`` gives them (standard
    competition ranking: two seats sharing first place are followed by third, ``[1, 1, 3]``): a place ``p``
    shared by ``k`` seats spans the places ``p .. p+k-1``, which no other seat may hold and which must exist.
    Dense ranks (``[1, 1, 2]``) gave rewards that do not sum to 0; a ``ValueError`` names the seat."""
    n = len(places)
    seats_at: dict[int, list[int]] = {}
    for seat, p in enumerate(places):
        if p is not None:
            seats_at.setdefault(p, []).append(seat)
    end, before = 0, 0  # the last place spanned so far, and the place that spans it
    for p in sorted(seats_at):
        sharing = seats_at[p]
        if p <= end:
            shared = seats_at[before]
            raise ValueError(
                f"seat {sharing[0]}'s place {p} is taken: seats {', '.join(map(str, shared))} share place "
                f"{before}, which spans places {before}..{end} (shared places skip the places below them, as in "
                f"[1, 1, 3]), got places {shown_value(places)}")
        end, before = p + len(sharing) - 1, p
        if end > n:
            raise ValueError(
                f"seats {', '.join(map(str, sharing))} share place {p}, which spans places {p}..{end}, but there "
                f"are {n} seats (shared places skip the places below them, as in [1, 1, 3]), got places "
                f"{shown_value(places)}")


def place_rewards(places: Sequence[int | None], scheme: str = "place") -> list[float]:
    """Final reward of every seat from its place (None counts as 0: undecided).  A place is an integer 1..n, n
    the number of seats (``len(places)``); seats sharing a place share its number and the places below it are
    skipped, as ``Game.places`` gives them (standard competition ranking: ``[1, 1, 3]``, never the dense
    ``[1, 1, 2]``).  A place of another type (True, 1.0, "1") is a ``WrongTypeError`` (a ``TypeError``)
    naming the seat; one outside 1..n (5 of 2 seats gave -7.0, 0 gave 3.0) or places that seats could not
    hold together (``[1, 1, 2]``, ``[2, 2]``) a ``ValueError`` naming it.  numpy's integers are places."""
    check_reward_scheme(scheme)
    n = len(places)
    if not n:
        raise ValueError("places must give a place (or None) for at least one seat, got none")
    try:  # a few set lookups, in C: the search scores decided positions with this function
        known = _PLAIN_PLACES.issuperset(map(type, places)) and _places_of(n).issuperset(places)
    except TypeError:
        known = False
    places = places if known else _checked_places(places)
    decided = [p for p in places if p is not None]
    if len(set(decided)) < len(decided):  # a shared place (a few times a game: the check need not be fast)
        _check_ranking(cast("list[int | None]", places))
    if n == 1:
        return [1.0 if places[0] == 1 else 0.0]
    if decided and len(decided) == n and len(set(decided)) == 1:
        return [0.0] * n
    out = []
    for p in places:
        if p is None:
            out.append(0.0)
        elif scheme == "win_loss":
            out.append(1.0 if p == 1 else -1.0)
        else:
            # a place shared by k seats pays the mean of the k places it spans, from their mean rank (as the
            # batched engine computes it): the mean of the rewards themselves left 5.55e-17 for places 2-3 of 4
            k = places.count(p)
            out.append(1.0 - 2.0 * ((p - 1) + (k - 1) / 2) / (n - 1))
    return out


def _check_seat(variant: str, num_players: int, seat: object) -> int:
    """``seat`` as an int if it is a seat 0..n-1 of the game, else a ``ValueError`` naming it (a negative index
    took another seat's table), a ``WrongTypeError`` if it is no integer (1.0, True).  Called by the cached
    tables on a miss only, not at every lookup."""
    n = layout(variant, num_players).num_players  # (the game checked first: layout names a bad one)
    def message() -> str:
        return f"seat must be a seat 0..{n - 1} of {game_name(variant, n)}, got {shown_value(seat)}"

    number = integer_argument(seat, message)
    if not 0 <= number < n:
        raise ValueError(message())
    return number


@lru_cache(maxsize=None, typed=True)  # (a seat is checked once; typed, so that 1.0 or True is no cached seat 1)
def goal_distance(variant: str, num_players: int, seat: int) -> tuple[int, ...]:
    """hole -> single steps to the nearest hole of ``seat``'s goal on an empty board (``ValueError`` for a game
    the engine does not play or a seat it has not)."""
    seat = _check_seat(variant, num_players, seat)
    lay = layout(variant, num_players)
    g = lay.geometry
    goal = lay.goals[seat]
    return tuple(min(g.distance(h, x) for x in goal) for h in range(g.num_holes))


@lru_cache(maxsize=None, typed=True)
def king_distance(variant: str, num_players: int, seat: int) -> tuple[int, ...]:
    """hole -> single steps to ``seat``'s goal tip, where its king must end (variants with kings only)."""
    seat = _check_seat(variant, num_players, seat)
    lay = layout(variant, num_players)
    tip = lay.goal_tip[seat]
    if tip is None:
        raise ValueError(f"{variant} has no kings, so seat {seat} has no goal tip")
    g = lay.geometry
    return tuple(g.distance(h, tip) for h in range(g.num_holes))


def piece_distance(variant: str, num_players: int, seat: int, is_king: bool = False) -> tuple[int, ...]:
    """hole -> the piece's share of ``phi``: ``king_distance`` for the king, else ``goal_distance``.

    A move from ``src`` to ``dst`` changes ``phi`` by ``table[dst] - table[src]`` of its piece's table."""
    if is_king:
        return king_distance(variant, num_players, seat)
    return goal_distance(variant, num_players, seat)


def shaping_potential(variant: str, num_players: int, seat: int, holes: list[int], king: int | None = None) -> int:
    """``phi``: ``goal_distance`` summed over ``holes`` (the seat's pieces, as ``Game.pieces`` gives
    them), except that the king on hole ``king`` (one of ``holes``; None = no king among them)
    counts its ``king_distance`` to the goal tip instead.  A seat the game has not, or a hole off the board
    (an index past it, or a negative one, which took a hole from the end), is a ``ValueError`` naming it."""
    table = goal_distance(variant, num_players, seat)
    size = len(table)
    for h in holes:  # (a Python int on the board passes at one type test and comparison)
        if type(h) is not int or not 0 <= h < size:
            number = as_integer(h)
            if number is None or not 0 <= number < size:
                raise ValueError(f"holes must be holes 0..{size - 1} of the {variant} board, got {shown_value(h)} "
                                 f"in {shown_value(holes)}")
    return _potential(variant, num_players, seat, holes, king)


def _potential(variant: str, num_players: int, seat: int, holes: list[int], king: int | None) -> int:
    """``shaping_potential`` without the check of the holes (``seat_potential``'s come from the game)."""
    table = goal_distance(variant, num_players, seat)
    if king is None:
        return sum(table[h] for h in holes)
    if king not in holes:
        raise ValueError(f"king hole {king} is not one of the seat's piece holes {sorted(holes)}")
    return sum(table[h] for h in holes if h != king) + king_distance(variant, num_players, seat)[king]


def seat_potential(game, seat: int) -> int:
    """``shaping_potential`` of ``seat`` in a ``Game`` (its king, if it has one, found on the board)."""
    holes = game.pieces(seat)
    king = next((h for h in holes if game.piece_at(h)[1]), None)
    return _potential(game.rules.variant, game.rules.num_players, seat, holes, king)


def seat_rewards(game, scheme: str = "place") -> list[float | None]:
    """Final reward of every seat of a ``Game`` whose place is decided (None while undecided).

    Solitaire: a move-limit end gives the lone seat place 1 without finishing it, so its +1 counts
    only once it has finished (0 at the limit)."""
    places = game.places
    if game.num_players == 1:
        # fresh lists of floats, nobody else holds them: safe to widen (list is invariant)
        if game.status[0] == "finished":
            return cast("list[float | None]", place_rewards([1], scheme))
        return cast("list[float | None]", place_rewards([None], scheme)) if game.is_over else [None]
    values = place_rewards(places, scheme)
    return [v if p is not None else None for v, p in zip(values, places)]
