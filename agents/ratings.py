"""Ratings and the statistics the arena reports: openskill Plackett-Luce, Wilson intervals.

Plackett-Luce rates a whole finishing order at once, so 3-6 seat games with shared places
(draws, equal progress) count as one observation each, not as a set of invented pairwise games.
The arena averages the ratings over seeded random orders of its games (openskill's online
updates would otherwise weigh the last games most), so a tournament with a seed always gives the
same ratings whatever order the worker processes finished in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from _typeshed import SupportsDunderLT

Z95 = 1.959963984540054  # two-sided 95% normal quantile


@dataclass(frozen=True)
class Rating:
    """An openskill rating: ``mu`` (skill estimate), ``sigma`` (its uncertainty) and the
    conservative ``ordinal = mu - 3 sigma`` that leaderboards sort by."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        return self.mu - 3.0 * self.sigma

    def to_dict(self) -> dict[str, float]:
        return {"mu": self.mu, "sigma": self.sigma, "ordinal": self.ordinal}


def competition_ranks(scores: Sequence[SupportsDunderLT[Any]]) -> list[int]:
    """Ranks (1 = best) of ``scores`` where smaller is better and equal scores share a rank
    ("1224" ranking): rank = 1 + how many scores are strictly better."""
    return [1 + sum(1 for o in scores if o < s) for s in scores]


def rate_games(
    num_players: int, games: Sequence[Sequence[tuple[int, float]]], shuffles: int = 0, seed: int = 0
) -> list[Rating]:
    """Plackett-Luce ratings of ``num_players`` players from games given in order.

    Each game is a list of ``(player index, place)`` for the players that took part (a smaller
    place is better, equal places are ties; a player holding several seats enters once with its
    mean place).  Players start at openskill's default (mu 25, sigma 25/3).

    openskill updates online, so the last games weigh more than the first.  For a tournament,
    where the games have no meaningful order, ``shuffles > 0`` rates that many seeded random
    orders of the games and averages mu and sigma (deterministic for a given ``seed``).
    """
    if shuffles > 0:
        import random

        rng = random.Random(seed)
        canonical = sorted(tuple(g) for g in games)  # so the given order cannot matter at all
        runs = []
        for _ in range(shuffles):
            order = list(canonical)
            rng.shuffle(order)
            runs.append(_rate_in_order(num_players, order))
        return [Rating(sum(r[i].mu for r in runs) / shuffles, sum(r[i].sigma for r in runs) / shuffles)
                for i in range(num_players)]
    return _rate_in_order(num_players, games)


def _rate_in_order(num_players: int, games: Sequence[Sequence[tuple[int, float]]]) -> list[Rating]:
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating() for _ in range(num_players)]
    for game in games:
        if len(game) < 2:
            continue  # a game against nobody says nothing about skill
        idx = [p for p, _ in game]
        if len(set(idx)) != len(idx):
            raise ValueError(f"a player appears twice in one rated game: {idx}")
        ranks = competition_ranks([place for _, place in game])
        # openskill annotates ranks as list[float]; it only reads them, so integer ranks are fine
        new = model.rate([[ratings[p]] for p in idx], ranks=cast("list[float]", ranks))
        for p, team in zip(idx, new):
            ratings[p] = team[0]
    return [Rating(r.mu, r.sigma) for r in ratings]


def wilson_interval(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion; ``successes`` may be fractional (a draw counts
    half a win).  ``(nan, nan)`` when there are no trials (written as null, as a missing score is: a
    "[0, 1]" beside a score of null read as a measurement)."""
    if trials <= 0:
        return (math.nan, math.nan)
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be within 0..{trials}, got {successes}")
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    lo = 0.0 if successes == 0 else max(0.0, centre - half)  # exact ends: no rounding past 0 or 1
    hi = 1.0 if successes == trials else min(1.0, centre + half)
    return (lo, hi)


def mean_interval(values: Sequence[float], z: float = Z95,
                  bounds: tuple[float, float] = (-math.inf, math.inf)) -> tuple[float, float, float]:
    """Mean and normal-approximation 95% interval ``(mean, low, high)``, the interval cut to
    ``bounds`` (places lie in 1..seats); a single value has a zero-width interval, none gives NaNs."""
    n = len(values)
    if n == 0:
        return (math.nan, math.nan, math.nan)
    mean = sum(values) / n
    if n == 1:
        return (mean, mean, mean)
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    half = z * math.sqrt(var / n)
    return (mean, max(mean - half, bounds[0]), min(mean + half, bounds[1]))
