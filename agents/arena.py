"""``halma eval``: matches and tournaments between bots, checkpoints and exported opponents.

Players are named as ``agents.registry.make_player`` understands them (``random``, ``greedy``,
``search``, ``mcts``, levels, checkpoint or exported-model paths).  Every game gets fresh players
seeded from (tournament seed, game index, seat), so a seed gives the same games whether they run
in one process or in many, and in whatever order the workers finish.

Seat schedule (see docs/evaluation.md): with ``k`` players and ``n`` seats the games come in
blocks of ``m = min(k, n)`` games.  A block plays one *group* of ``m`` players in a fixed cyclic
order; game ``s`` of the block puts ``group[(j + s) % m]`` on seat ``j``, so within the block each
player of the group sits on each of the group's seat positions once and (the first seat being
fixed in a block) starts exactly once.  Consecutive blocks rotate ``Rules.first_seat`` through
``0..n-1`` and, for ``k > n``, cycle through all ``n``-player subsets; for 3+ players the cyclic
order also cycles, so who-moves-after-whom is balanced too.  With ``k < n`` players fill the
seats round robin (2 players on 6 seats: ABABAB, then BABABA).

A game a player holds several seats of scores the mean place of those seats; players are ranked
by that (equal means tie).  ``--max-plies`` is the arena's safety cap, separate from the rules:
a game stopped by it keeps the places already decided and shares the rest (``--cap-outcome
draw``) or ranks them by progress, and counts as not finished.

The games of ``workers`` > 1 run in the process pool of ``agents.workers``; ``--out`` folders are saved
whole through ``agents.staging``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import itertools
import json
import math
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from agents.files import (
    bar_size,
    folder_error,
    folders_to_make,
    missing_extra,
    remove_empty_folders,
    say_on_stderr,
    shown_path,
    stderr_is_terminal,
)
from agents.player import Player, check_int, check_time
from agents.ratings import Rating, competition_ranks, mean_interval, rate_games, wilson_interval
from agents.registry import Factory, check_players, trained_game_hint
from agents.staging import save_staged
from agents.workers import one_torch_thread, run_in_processes
from halma_env import Game, IllegalMoveError, Rules
from halma_env.files import write_atomic
from halma_env.records import END_REASONS, game_events
from halma_env.rules import (
    OPTION_NAMES,
    SEAT_COUNTS,
    VARIANTS,
    WrongTypeError,
    choice_argument,
    flag_argument,
    game_name,
    is_sequence,
    parse_rule_options,
)
from halma_env.suggest import did_you_mean, shown_value

# end reasons that mean the game was decided by play (finishing or resigning), not by a limit
DECIDED = ("finished", "first_finish", "resign")
ARENA_LIMIT = "max_plies"  # end reason of a game stopped by the arena's cap
CAP_PER_SEAT = 300  # default --max-plies is this many plies per seat
RATING_SHUFFLES = 20  # ratings are averaged over this many seeded orders of the games
SOLO_OPTIMUM = 27  # Bell 2009: the proven shortest solitaire crossing of the star board
STATUS_EVERY = 60.0  # seconds between halma eval's and halma ladder's progress lines where stderr is no terminal
MAX_GAMES = 10_000_000  # games of one tournament: its results keep every game (~9 kB each) in memory


# --- seeds and the seat schedule -------------------------------------------------------------


def derive_seed(seed: int, *parts: int) -> int:
    """A 63-bit seed from the tournament seed and indices; stable across processes and Python
    versions (unlike ``hash``), so game ``g`` seat ``j`` always gets the same player seed."""
    text = ":".join(str(x) for x in (seed, *parts)).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1


@dataclass(frozen=True)
class Lineup:
    """Who plays one game: ``seats[j]`` is the index of the player on seat ``j``."""

    seats: tuple[int, ...]
    first_seat: int

    @property
    def starter(self) -> int:
        """The player who makes the first move."""
        return self.seats[self.first_seat]


def _cyclic_orders(group: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The distinct cyclic orders of ``group`` (the first element fixed, the rest permuted)."""
    if len(group) <= 2:
        return [group]
    return [(group[0], *rest) for rest in itertools.permutations(group[1:])]


def schedule(num_players: int, num_seats: int, games: int) -> list[Lineup]:
    """The seat assignment and first seat of every game (see the module docstring).

    Balanced exactly (every player on every seat equally often, starting equally often) when
    ``games`` is a multiple of ``cycle_length(num_players, num_seats)``; each block of
    ``min(k, n)`` games is itself balanced among the players it seats.
    """
    if games < 0:
        raise ValueError(f"games must be >= 0, got {games}")
    return list(itertools.islice(iter_schedule(num_players, num_seats), games))


def iter_schedule(num_players: int, num_seats: int) -> Iterator[Lineup]:
    """``schedule``'s games one after another, without end (what looks for the first games with some
    property need not build a whole cycle, which for 6 seats is 36 x C(players, 6) games)."""
    if num_players < 1:
        raise ValueError(f"a match needs at least one player, got {num_players}")
    if num_seats < 1:
        raise ValueError(f"a game needs at least one seat, got {num_seats}")
    return _lineups(num_players, num_seats)  # (checked here, not at the first next())


def _lineups(k: int, n: int) -> Iterator[Lineup]:
    m = min(k, n)
    groups = list(itertools.combinations(range(k), n)) if k > n else [tuple(range(k))]
    orders: dict[int, list[tuple[int, ...]]] = {}  # built when first used: many players, many subsets
    for g in itertools.count():
        block, s = divmod(g, m)
        gi, v = block % len(groups), block // len(groups)
        first_seat = v % n
        if gi not in orders:
            orders[gi] = _cyclic_orders(groups[gi])
        group = orders[gi][(v // n) % len(orders[gi])]
        yield Lineup(tuple(group[(j + s) % m] for j in range(n)), first_seat)


def cycle_length(num_players: int, num_seats: int) -> int:
    """Games after which seats, starts and subsets are exactly balanced (first seats cycle too)."""
    k, n = num_players, num_seats
    m = min(k, n)
    return m * math.comb(k, n) * n if k > n else m * n


# --- one game ----------------------------------------------------------------------------------


@dataclass
class GameResult:
    """What one game produced, per seat and per player."""

    index: int
    seed: int
    seats: list[int]  # player index on each seat
    first_seat: int
    places: list[int]  # place of each seat (the arena cap fills undecided seats)
    player_places: dict[int, float]  # player index -> mean place of its seats
    end_reason: str  # the engine's end reason, or "max_plies"
    plies: int
    moves: list[str]  # "src-dst" and "resign:<seat>", in order
    move_time: list[float]  # seconds spent in select_move, per seat
    move_count: list[int]
    max_move_time: list[float]
    over_budget: list[int]  # moves that took longer than the time budget, per seat
    forfeits: list[dict[str, Any]] = field(default_factory=list)
    progress: list[tuple[int, int]] = field(default_factory=list)  # (in goal, distance) per seat at the end
    record: dict[str, Any] | None = None

    @property
    def decided(self) -> bool:
        return self.end_reason in DECIDED


def _cap_places(game: Game, outcome: str) -> list[int]:
    """Places when the arena stops a running game: decided seats keep theirs; the others share
    the next free place (``draw``) or are ranked by progress (``progress``)."""
    places = game.places
    undecided = [s for s, p in enumerate(places) if p is None]
    top = 1 + sum(1 for st in game.status if st == "finished")
    if outcome == "draw":
        ranks = [0] * len(undecided)
    else:
        ranks = [r - 1 for r in competition_ranks([game.progress(s).key() for s in undecided])]
    for s, r in zip(undecided, ranks):
        places[s] = top + r
    return cast("list[int]", places)  # every undecided seat got its place above


def _record(game: Game, names: list[str], metadata: dict[str, Any]) -> dict[str, Any]:
    """The game as a replayable ``halma_env.records`` document (unfinished games included)."""
    from halma_env.records import GameRecord

    return GameRecord.from_game(game, players=names, metadata=metadata).to_dict()


def check_rules(rules: Any) -> None:
    """``play_game``'s and ``run_tournament``'s ``rules``: a ``halma_env.Rules`` (as ``BatchedGame`` says), not
    None or its dict form (``Rules.from_dict`` reads that), before any attribute of it is read: a
    ``WrongTypeError``, a ``TypeError`` as ``player_for``'s (and a ``ValueError``, as it was)."""
    if not isinstance(rules, Rules):
        raise WrongTypeError(f"rules must be a halma_env.Rules, got {type(rules).__name__}")


def check_cap_outcome(cap_outcome: Any) -> None:
    """``play_game``'s and ``run_tournament``'s ``cap_outcome``: "draw" or "progress" (``ValueError`` for other
    text, ``WrongTypeError`` for no text, as ``Rules``' ``limit_outcome``)."""
    choice_argument(cap_outcome, ("draw", "progress"),
                    lambda: f"cap_outcome must be 'draw' or 'progress', got {shown_value(cap_outcome)}")


def default_factory(name: str, seed: int | None = None) -> Player:
    """Players by name or path, through the project's registry."""
    from agents.registry import make_player

    return make_player(name, seed=seed)


def check_factory(factory: Any) -> None:
    """``factory``: None (the registry's players) or a callable ``factory(name, seed) -> Player``; anything else
    is a ``WrongTypeError`` before a game starts."""
    if factory is not None and not callable(factory):
        raise WrongTypeError(f"factory must be a callable factory(name, seed) -> Player or None, "
                             f"got {shown_value(factory)}")


def play_game(
    rules: Rules,
    players: Sequence[Player | str],
    seed: int = 0,
    time_budget: float | None = None,
    *,
    max_plies: int | None = None,
    cap_outcome: str = "draw",
    seat_players: Sequence[int] | None = None,
    names: Sequence[str] | None = None,
    index: int = 0,
    factory: Factory | None = None,
    keep_record: bool = False,
    metadata: dict[str, Any] | None = None,
) -> GameResult:
    """Play one game; ``players[j]`` plays seat ``j`` (a Player, or a name made with ``factory``
    seeded from ``seed`` and the seat).

    ``seat_players`` maps seats to player indices when one player holds several seats (default:
    seat ``j`` is player ``j``): integers >= 0 numbering the caller's players, not positions in
    ``players`` (``run_tournament`` passes each game's lineup, indices into its own list of players);
    seats that share an index must be given the same name.  A move that is not legal forfeits the seat
    (it resigns); the forfeit is reported, not hidden.  ``max_plies`` stops the game (end reason
    "max_plies").  ``index``: the game's number (an integer >= 0, as ``run_tournament`` numbers its games),
    kept in the result and the record; ``keep_record``: True or False.  The arguments are checked before the
    first move (``rules`` a ``halma_env.Rules``, each player a name or an object with ``select_move``,
    ``factory`` a callable or None): a wrong type is a ``WrongTypeError``, a value out of range a ``ValueError``.
    """
    check_rules(rules)
    n = rules.num_players
    if not is_sequence(players):  # (a set, a dict, a generator, a numpy array or 5)
        raise WrongTypeError(f"players must be a list or tuple of {n} players, got {type(players).__name__} "
                             f"{players!r}")
    if len(players) != n:
        raise ValueError(f"{game_name(rules.variant, n)} needs a list of {n} players, got {players!r}")
    for j, player in enumerate(players):
        if not isinstance(player, str) and not callable(getattr(player, "select_move", None)):
            raise WrongTypeError(f"players[{j}] must be a name for the factory or a Player (an object with "
                                 f"select_move(game, time_budget)), got {player!r}")
    check_cap_outcome(cap_outcome)
    check_int("seed", seed)
    check_time("time_budget", time_budget)
    if max_plies is not None:
        check_int("max_plies", max_plies, 1)
    index = check_int("index", index)  # (the game's number in its tournament: 1.5 or True went into its record)
    keep_record = flag_argument(keep_record, "keep_record")  # (5 or "no" kept a record)
    check_factory(factory)  # (5 was a raw "'int' object is not callable" at the first name; 0 the default)
    factory = factory or default_factory
    # (a number or text for these was a raw TypeError from list(), metadata's only after the whole game)
    if seat_players is not None and not is_sequence(seat_players):
        raise WrongTypeError(f"seat_players must be a list of player indices, one per seat, "
                             f"got {shown_value(seat_players)}")
    if names is not None and (not is_sequence(names) or not all(isinstance(name, str) for name in names)):
        raise WrongTypeError(f"names must be a list of names (text), one per seat, got {shown_value(names)}")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise WrongTypeError(f"metadata must be a dict or None, got {shown_value(metadata)}")
    seat_players = list(seat_players) if seat_players is not None else list(range(n))
    if len(seat_players) != n:
        raise ValueError(f"seat_players must give a player index for each of the {n} seats, got {seat_players!r}")
    seat_of_player: dict[int, int] = {}
    for seat, index_of_seat in enumerate(seat_players):
        check_int("a seat_players entry", index_of_seat)
        other = seat_of_player.setdefault(index_of_seat, seat)
        a, b = players[other], players[seat]
        if isinstance(a, str) and isinstance(b, str) and a != b:  # (objects may be two of one player's copies)
            raise ValueError(f"seat_players gives seats {other} and {seat} the same player index {index_of_seat}, "
                             f"but different players: {a!r} and {b!r}")
    labels = [str(p) if isinstance(p, str) else getattr(p, "name", type(p).__name__) for p in players]
    names = list(names) if names is not None else labels
    if len(names) != n:
        raise ValueError(f"names must give a name for each of the {n} seats, got {names!r}")
    actors = [factory(p, derive_seed(seed, j)) if isinstance(p, str) else p for j, p in enumerate(players)]

    game = Game(rules)
    move_time = [0.0] * n
    move_count = [0] * n
    max_time = [0.0] * n
    over = [0] * n
    forfeits: list[dict[str, Any]] = []
    while not game.is_over and (max_plies is None or game.ply < max_plies):
        seat = game.to_move
        view = game.copy()  # players must not change the game; a copy makes sure of it
        start = time.perf_counter()
        try:
            move = actors[seat].select_move(view, time_budget)
        except Exception as e:  # not hidden: stop the run, saying which game and player failed
            raise RuntimeError(f"game {index} (seed {seed}), ply {game.ply}: player {names[seat]!r} on seat {seat} "
                               f"raised {type(e).__name__}: {e}") from e
        spent = time.perf_counter() - start
        move_time[seat] += spent
        move_count[seat] += 1
        max_time[seat] = max(max_time[seat], spent)
        if time_budget is not None and spent > time_budget:
            over[seat] += 1
        try:
            game.play(move)
        except (IllegalMoveError, TypeError) as e:
            forfeits.append({"seat": seat, "ply": game.ply, "move": str(move), "error": str(e)})
            game.resign(seat)
    places: list[int]
    if game.end_reason is not None:  # the game is over: every seat has its place
        end_reason, places = game.end_reason, cast("list[int]", game.places)
    else:
        end_reason, places = ARENA_LIMIT, _cap_places(game, cap_outcome)

    by_player: dict[int, list[int]] = {}
    for s, p in enumerate(seat_players):
        by_player.setdefault(p, []).append(places[s])
    player_places = {p: sum(v) / len(v) for p, v in by_player.items()}
    record = None
    if keep_record:
        meta = {
            "arena": {
                "index": index,
                "seed": seed,
                "seat_players": seat_players,
                "first_seat": rules.first_seat,
                "end_reason": end_reason,
                "places": places,
                "time_budget": time_budget,
                "max_plies": max_plies,
                "forfeits": forfeits,
            }
        }
        meta.update(metadata or {})
        record = _record(game, [names[j] for j in range(n)], meta)
    return GameResult(
        index=index,
        seed=seed,
        seats=seat_players,
        first_seat=rules.first_seat,
        places=places,
        player_places=player_places,
        end_reason=end_reason,
        plies=game.ply,
        moves=game_events(game),
        move_time=move_time,
        move_count=move_count,
        max_move_time=max_time,
        over_budget=over,
        forfeits=forfeits,
        progress=[(pr.in_goal, pr.distance) for pr in map(game.progress, range(n))],
        record=record,
    )


# --- tournaments -------------------------------------------------------------------------------


@dataclass
class _Task:
    index: int
    seed: int
    rules: dict[str, Any]
    specs: list[str]  # player spec per seat
    names: list[str]  # label per seat
    seat_players: list[int]
    time_budget: float | None
    max_plies: int | None
    cap_outcome: str
    factory: Factory | None
    keep_record: bool


def _run_task(task: _Task) -> GameResult:
    rules = Rules.from_dict(task.rules)
    return play_game(
        rules,
        task.specs,
        task.seed,
        task.time_budget,
        max_plies=task.max_plies,
        cap_outcome=task.cap_outcome,
        seat_players=task.seat_players,
        names=task.names,
        index=task.index,
        factory=task.factory,
        keep_record=task.keep_record,
    )


def unique_labels(specs: Sequence[str]) -> list[str]:
    """Short, distinct labels: a path becomes its file name; repeats get ``#2``, ``#3``..."""
    base = [os.path.basename(s.rstrip("/")) if (os.sep in s or os.path.exists(s)) else s for s in specs]
    seen: Counter = Counter()
    taken = set(base)
    out: list[str] = []
    for b in base:
        seen[b] += 1
        label = b
        if seen[b] > 1:  # the next free "#i" (a given label such as "x#2" is never reused)
            while (label := f"{b}#{seen[b]}") in taken:
                seen[b] += 1
            taken.add(label)
        out.append(label)
    return out


@dataclass
class TournamentResult:
    """Every game of a match or tournament and the statistics over them."""

    players: list[str]  # labels
    specs: list[str]  # what was asked for (names or paths)
    rules: dict[str, Any]  # the base rules (first_seat rotates per game)
    games: list[GameResult]
    seed: int
    time_budget: float | None
    max_plies: int | None
    cap_outcome: str = "draw"
    elapsed: float = 0.0

    # -- statistics --

    @property
    def num_seats(self) -> int:
        return self.rules["num_players"]

    def ratings(self) -> list[Rating]:
        """openskill Plackett-Luce ratings, averaged over RATING_SHUFFLES seeded orders of the games
        (a tournament's games have no order that should make the last ones count more)."""
        key = (len(self.games), RATING_SHUFFLES)
        if getattr(self, "_ratings_key", None) != key:
            games = [sorted(g.player_places.items()) for g in sorted(self.games, key=lambda g: g.index)]
            self._ratings = rate_games(len(self.players), games, shuffles=RATING_SHUFFLES, seed=self.seed)
            self._ratings_key = key
        return self._ratings

    def pairwise(self) -> list[list[dict[str, Any] | None]]:
        """``[i][j]``: how player i did against player j in the games both played: wins (i's
        place better), draws (equal places, half a win each), games, rate and its 95% Wilson
        interval.  None on the diagonal or when they never met."""
        k = len(self.players)
        wins = [[0] * k for _ in range(k)]
        draws = [[0] * k for _ in range(k)]
        met = [[0] * k for _ in range(k)]
        for g in self.games:
            pp = g.player_places
            for i, j in itertools.permutations(pp, 2):
                met[i][j] += 1
                if pp[i] < pp[j]:
                    wins[i][j] += 1
                elif pp[i] == pp[j]:
                    draws[i][j] += 1
        out: list[list[dict[str, Any] | None]] = []
        for i in range(k):
            row: list[dict[str, Any] | None] = []
            for j in range(k):
                if i == j or not met[i][j]:
                    row.append(None)
                    continue
                score = wins[i][j] + 0.5 * draws[i][j]
                lo, hi = wilson_interval(score, met[i][j])
                row.append({"wins": wins[i][j], "draws": draws[i][j], "games": met[i][j],
                            "rate": score / met[i][j], "low": lo, "high": hi})
            out.append(row)
        return out

    def player_stats(self) -> list[dict[str, Any]]:
        """Per player: games, score against everyone (Wilson), mean place (95% CI), the share
        of its seats in each place, time per move, moves over the budget, forfeits.

        The score pools the pairwise comparisons (``opponent_games`` of them); its interval is
        the Wilson interval of the per-game scores (the share of the game's opponents beaten, a
        tie half) over the ``score_games`` games with an opponent: the comparisons of one game are
        not independent trials.  Every game seats the same number of players, so the pooled score
        equals the mean per-game score."""
        k, n = len(self.players), self.num_seats
        stats = []
        pw = self.pairwise()
        for i in range(k):
            places = [g.player_places[i] for g in self.games if i in g.player_places]
            seat_places: Counter[int] = Counter()
            seats: Counter[int] = Counter()
            starts = 0
            t: float = 0
            c = over = 0
            tmax = 0.0
            forfeits = 0
            for g in self.games:
                for s, p in enumerate(g.seats):
                    if p != i:
                        continue
                    seat_places[g.places[s]] += 1
                    seats[s] += 1
                    t += g.move_time[s]
                    c += g.move_count[s]
                    over += g.over_budget[s]
                    tmax = max(tmax, g.max_move_time[s])
                    forfeits += sum(1 for f in g.forfeits if f["seat"] == s)
                if g.seats[g.first_seat] == i:
                    starts += 1
            wins = sum(cell["wins"] + 0.5 * cell["draws"] for cell in pw[i] if cell)
            met = sum(cell["games"] for cell in pw[i] if cell)
            per_game = [_game_score(g.player_places, i) for g in self.games if i in g.player_places
                        and len(g.player_places) > 1]
            lo, hi = wilson_interval(min(sum(per_game), len(per_game)), len(per_game))
            mean, mlo, mhi = mean_interval(places, bounds=(1, n))
            total_seats = sum(seat_places.values())
            stats.append({
                "player": self.players[i],
                "spec": self.specs[i],
                "games": len(places),
                "score": wins / met if met else math.nan,
                "score_low": lo,
                "score_high": hi,
                "opponent_games": met,
                "score_games": len(per_game),
                "mean_place": mean,
                "mean_place_low": mlo,
                "mean_place_high": mhi,
                "place_share": {str(p): c / total_seats for p, c in sorted(seat_places.items())},
                "seat_counts": [seats[s] for s in range(n)],
                "starts": starts,
                "moves": c,
                "ms_per_move": 1000 * t / c if c else math.nan,
                "max_ms_per_move": 1000 * tmax,
                "over_budget": over,
                "forfeits": forfeits,
            })
        return stats

    def summary(self) -> dict[str, Any]:
        """Game-level figures: finish rate (decided by finishing or resigning, not by a limit,
        with its Wilson interval), end reasons, mean game length."""
        n = len(self.games)
        decided = [g for g in self.games if g.decided]
        lo, hi = wilson_interval(len(decided), n)
        reasons = Counter(g.end_reason for g in self.games)
        return {
            "games": n,
            "decided": len(decided),
            "finish_rate": len(decided) / n if n else math.nan,
            "finish_rate_low": lo,
            "finish_rate_high": hi,
            "end_reasons": dict(sorted(reasons.items())),
            # deterministic players in the same seats play the same game again: those repeats are not
            # independent trials, which every interval here assumes
            "distinct_games": len({(tuple(g.seats), g.first_seat, tuple(g.moves)) for g in self.games}),
            "mean_plies": sum(g.plies for g in self.games) / n if n else math.nan,
            "mean_plies_decided": sum(g.plies for g in decided) / len(decided) if decided else math.nan,
            # what position is worth here (the rotation keeps it from favouring any player)
            "seat_mean_place": [sum(g.places[s] for g in self.games) / n if n else math.nan
                                for s in range(self.num_seats)],
            "starter_mean_place": sum(g.places[g.first_seat] for g in self.games) / n if n else math.nan,
            "balanced": n % cycle_length(len(self.players), self.num_seats) == 0,
            "cycle_length": cycle_length(len(self.players), self.num_seats),
            "elapsed_s": self.elapsed,
        }

    # -- output --

    def to_dict(self) -> dict[str, Any]:
        ratings = self.ratings()
        return {
            "players": self.players,
            "specs": self.specs,
            "rules": self.rules,
            "seed": self.seed,
            "time_budget": self.time_budget,
            "max_plies": self.max_plies,
            "cap_outcome": self.cap_outcome,
            "summary": self.summary(),
            "ratings": {p: r.to_dict() for p, r in zip(self.players, ratings)},
            "players_stats": self.player_stats(),
            "pairwise": self.pairwise(),
            "games": [{k: v for k, v in asdict(g).items() if k != "record"} for g in self.games],
            "versions": _versions(),  # the ratings depend on openskill's; the games on the bots' code
        }

    def markdown(self) -> str:
        """The results as markdown tables (what ``halma eval`` prints)."""
        r = self.rules
        s = self.summary()
        ratings = self.ratings()
        stats = self.player_stats()
        opts = ", ".join(f"{k}={v}" for k, v in r.items() if k not in ("variant", "num_players", "first_seat"))
        budget = "none (bots' own settings)" if self.time_budget is None else f"{self.time_budget:g} s"
        lines = [
            f"### {r['variant']}, {r['num_players']} seats: {' vs '.join(self.players)}",
            "",
            f"{s['games']} games, seed {self.seed}, time per move {budget}, "
            + (f"arena cap {self.max_plies} plies ({self.cap_outcome})" if self.max_plies is not None
               else "no arena cap") + f"; rules: {opts}",
            "",
            "| player | rating (ordinal) | mu ± sigma | score vs field [95% CI] | mean place [95% CI] "
            "| ms/move | max ms |",
            "|---|---|---|---|---|---|---|",
        ]
        order = sorted(range(len(self.players)), key=lambda i: -ratings[i].ordinal)
        for i in order:
            st, rt = stats[i], ratings[i]
            lines.append(
                f"| {st['player']} | {rt.ordinal:.2f} | {rt.mu:.2f} ± {rt.sigma:.2f} | "
                f"{_interval(st['score'], st['score_low'], st['score_high'])} | "
                f"{_place_interval(st['mean_place'], st['mean_place_low'], st['mean_place_high'])} | "
                f"{_num(st['ms_per_move'])} | {st['max_ms_per_move']:.1f} |"
            )
        pw = self.pairwise()
        if len(self.players) > 1:
            lines += ["", "Win rate of the row against the column (a draw is half a win), 95% Wilson interval, games:",
                      "", "| | " + " | ".join(self.players[j] for j in order) + " |",
                      "|---" * (len(order) + 1) + "|"]
            for i in order:
                cells = []
                for j in order:
                    c = pw[i][j]
                    cells.append("-" if c is None else
                                 f"{_pct(c['rate'])} [{_pct(c['low'])}, {_pct(c['high'])}] ({c['games']})")
                lines.append(f"| {self.players[i]} | " + " | ".join(cells) + " |")
        place_keys = sorted({k for st in stats for k in st["place_share"]}, key=float)
        if place_keys:
            seat_names = "/".join(str(seat) for seat in range(len(stats[0]["seat_counts"])))
            lines += ["", "Share of each player's seats in each place:", "",
                      "| player | " + " | ".join(f"place {k}" for k in place_keys)
                      + f" | games in seat {seat_names} | starts |",
                      "|---" * (len(place_keys) + 3) + "|"]
            for i in order:
                st = stats[i]
                cells = [_pct(st["place_share"].get(k, 0.0)) for k in place_keys]
                seats = "/".join(str(c) for c in st["seat_counts"])
                lines.append(f"| {st['player']} | " + " | ".join(cells) + f" | {seats} | {st['starts']} |")
            shared = sum(1 for g in self.games if len(set(g.places)) < len(g.places))
            if shared:  # (each row adds up to 100%; a column need not)
                lines += ["", f"Shared places: {shared} of {len(self.games)} games gave two or more seats one place "
                              "(a game stopped by a limit: its undecided seats share the next place); each row adds "
                              "up to 100%, a column need not."]
        reasons = ", ".join(f"{k} {v}" for k, v in s["end_reasons"].items())
        lines += [
            "",
            f"Finish rate (decided by finishing or resigning, not by a limit): {s['decided']}/{s['games']} = "
            f"{_pct(s['finish_rate'])} [{_pct(s['finish_rate_low'])}, {_pct(s['finish_rate_high'])}]; "
            f"end reasons: {reasons}",
            f"Mean game length: {_num(s['mean_plies'])} plies (decided games: {_num(s['mean_plies_decided'])}); "
            f"wall time {s['elapsed_s']:.1f} s",
            "Mean place by seat: " + ", ".join(f"{x:.2f}" for x in s["seat_mean_place"])
            + f"; of the seat that moved first: {s['starter_mean_place']:.2f}",
        ]
        if s["distinct_games"] < s["games"]:
            lines.append(f"Distinct games: only {s['distinct_games']} of {s['games']} (players that choose alike "
                         "replayed games in the same seats), so the intervals above, which count every game as an "
                         "independent trial, are too narrow; a player with randomness (an exported model's "
                         "`:temperature=`, a bot's `noise=`) plays independent games")
        def by_player(key: str) -> str:  # each player's share of a count, in the table's order, where it is not 0
            counts = [f"{stats[i]['player']} {stats[i][key]}" for i in order if stats[i][key]]
            return f" ({', '.join(counts)})" if counts else ""

        forfeits = sum(st["forfeits"] for st in stats)
        over = sum(st["over_budget"] for st in stats)
        if forfeits:
            lines.append(f"Forfeits (illegal moves answered, seat resigned): {forfeits}{by_player('forfeits')}")
        if self.time_budget is not None:
            lines.append(f"Moves over the time budget: {over}{by_player('over_budget')}")
        if not s["balanced"]:
            lines.append(f"Note: seats are exactly balanced every {s['cycle_length']} games; "
                         f"{s['games']} is not a multiple, so a small seat imbalance remains.")
        return "\n".join(lines)

    def plot(self, path: str) -> None:
        """Ratings with error bars (the dot is mu, the bar mu ± 3 sigma, so its left end is the
        ordinal, also marked) and the pairwise win-rate heatmap, as one PNG (matplotlib, Agg backend),
        written at ``path`` through a new temporary file (a link planted at ``path`` is not followed)."""
        write_atomic(path, self.plot_png())

    def plot_png(self) -> bytes:
        """The figure ``plot`` writes, as PNG bytes (matplotlib, the plots extra: ``save(plot=False)`` without it)."""
        try:
            import matplotlib
        except ModuleNotFoundError as e:
            why = missing_extra(e)
            if why is None:
                raise
            raise ModuleNotFoundError(f"the results plot needs matplotlib: {why}; or save(out_dir, plot=False)",
                                      name=e.name) from None

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        ratings = self.ratings()
        order = sorted(range(len(self.players)), key=lambda i: -ratings[i].ordinal)
        k = len(order)
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2 + 0.15 * k))
        ax = axes[0]
        ys = list(range(k))[::-1]
        ax.errorbar([ratings[i].mu for i in order], ys, xerr=[3 * ratings[i].sigma for i in order],
                    fmt="o", capsize=4)
        ax.scatter([ratings[i].ordinal for i in order], ys, marker="|", s=200, color="C3",
                   label="ordinal (mu - 3 sigma)")
        ax.set_yticks(ys, [self.players[i] for i in order])
        ax.set_xlabel("openskill Plackett-Luce rating (mu ± 3 sigma)")
        ax.set_ylim(-0.8, k - 0.2)
        ax.legend(loc="best", fontsize=8)
        ax.set_title("Ratings")
        ax = axes[1]
        pw = self.pairwise()
        grid = [[math.nan if (cell := pw[i][j]) is None else cell["rate"] for j in order] for i in order]
        im = ax.imshow(grid, vmin=0, vmax=1, cmap="RdYlGn")
        names = [self.players[i] for i in order]
        ax.set_xticks(range(k), names, rotation=30, ha="right")
        ax.set_yticks(range(k), names)
        for a in range(k):
            for b in range(k):
                if not math.isnan(grid[a][b]):
                    ax.text(b, a, f"{grid[a][b]:.2f}", ha="center", va="center", fontsize=9)
        ax.set_title("Win rate, row vs column")
        fig.colorbar(im, ax=ax, fraction=0.046)
        r = self.rules
        fig.suptitle(f"{r['variant']} {r['num_players']} seats, {len(self.games)} games")
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        plt.close(fig)
        return buf.getvalue()

    def save(self, out_dir: str, plot: bool = True) -> list[str]:
        """Write results.json, results.md, results.png (not with ``plot=False``) and games/game_NNNNN.json;
        return the paths.  Saving
        again into the same folder rewrites the files; a folder holding game records this result does not
        have (another tournament's) is refused before anything is written, as they would mix.  The files are
        written into a staging folder first and moved into ``out_dir`` when all are there (``save_staged``):
        a save that fails (a full disk) or is interrupted leaves no part of them behind."""
        ours = {f"game_{g.index:05d}.json" for g in self.games if g.record is not None}
        games_dir = os.path.join(out_dir, "games")
        stale = sorted(name for name in (os.listdir(games_dir) if os.path.isdir(games_dir) else [])
                       if re.fullmatch(r"game_\d{5,}\.json", name) and name not in ours)
        if stale:
            more = f" and {len(stale) - 3} more" if len(stale) > 3 else ""
            if not ours:  # (most likely this very result's folder, which it cannot tell: it has no records to compare)
                raise ValueError(f"{out_dir!r} holds game records ({', '.join(stale[:3])}{more}) and this result has "
                                 "none (a result read back with load_results keeps no records): save it into another "
                                 "directory")
            raise ValueError(f"{out_dir!r} holds game records of another tournament ({', '.join(stale[:3])}{more}); "
                             "save into another directory or remove them")

        def write(folder: str) -> list[str]:
            os.makedirs(os.path.join(folder, "games"), exist_ok=True)
            names = []
            for g in self.games:
                if g.record is not None:
                    name = os.path.join("games", f"game_{g.index:05d}.json")
                    _save_record(os.path.join(folder, name), g.record)
                    names.append(name)
            write_atomic(os.path.join(folder, "results.md"), self.markdown() + "\n")
            if plot:
                self.plot(os.path.join(folder, "results.png"))
            _write_json(os.path.join(folder, "results.json"), self.to_dict())
            return ["results.json", "results.md"] + (["results.png"] if plot else []) + names

        return save_staged(out_dir, write, "results.json")


def _interval(x: float | None, low: float | None, high: float | None) -> str:
    """``x [low, high]`` in percent, or ``n/a`` alone when there is no estimate (a player only meeting itself)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{_pct(x)} [{_pct(low)}, {_pct(high)}]"


def _place_interval(x: float | None, low: float | None, high: float | None) -> str:
    """A mean place ``x [low, high]``, or ``n/a`` for a player that played no game (more players than seats)."""
    if x is None or low is None or high is None or math.isnan(x):
        return "n/a"
    return f"{x:.2f} [{low:.2f}, {high:.2f}]"


def _game_score(player_places: dict[int, float], i: int) -> float:
    """Player ``i``'s score in one game: the share of its opponents it placed ahead of, a tie half."""
    mine = player_places[i]
    others = [p for j, p in player_places.items() if j != i]
    return sum(1.0 if mine < p else 0.5 if mine == p else 0.0 for p in others) / len(others)


def _versions() -> dict[str, str | None]:
    """The versions of the packages a results file depends on (None where one is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {}
    for package in ("halma_env", "openskill", "numpy", "onnxruntime"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = None
    return out


def _num(x: float | None) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1f}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def _write_json(path: str, data: Any) -> None:
    # all at once through a new temporary file: never a half-written file, never through a planted link
    write_atomic(path, json.dumps(_clean(data), indent=1, allow_nan=False))


def _save_record(path: str, record: dict[str, Any]) -> None:
    from halma_env.records import GameRecord

    GameRecord.from_dict(record).save(path)  # checks the document's shape on the way out


def _clean(o: Any) -> Any:
    """JSON-ready data: NaN (an empty statistic) becomes null, tuples lists."""
    if isinstance(o, float):
        return None if math.isnan(o) else o
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    return o


# what a results.json holds: the keys to_dict writes (the statistics are recomputed from the games on
# loading; older files lack cap_outcome and the derived ones), and each game's keys (older: no progress)
RESULT_KEYS = ("players", "specs", "rules", "seed", "time_budget", "max_plies", "summary", "games")
RESULT_OPTIONAL_KEYS = ("cap_outcome", "ratings", "players_stats", "pairwise", "versions")
GAME_KEYS = ("index", "seed", "seats", "first_seat", "places", "player_places", "end_reason", "plies", "moves",
             "move_time", "move_count", "max_move_time", "over_budget")
GAME_OPTIONAL_KEYS = ("forfeits", "progress")
FORFEIT_KEYS = ("seat", "ply", "move", "error")
MAX_COUNT = 2**63 - 1  # counts and game seeds (63-bit): larger ones are no arena's, and overflow a float


# a results.json holds about 2.2 kB a star-2 game of 113 plies (indent 1): 1 GiB is some 450,000 such games, more
# than a tournament's memory holds comfortably (the file is read whole); a bound for a device or a runaway file
MAX_RESULTS_BYTES = 1 << 30


def load_results(path: str) -> TournamentResult:
    """A tournament back from its ``results.json`` (to re-report or re-rate it without replaying).  Every
    field the reports read is checked (types, ranges, one entry per seat): a ValueError names the file, the
    game and the field at fault.  The file is read as untrusted input: a regular file (a FIFO would wait for
    ever, a device be read without end) of at most ``MAX_RESULTS_BYTES``, JSON nested not too deeply, no key
    given twice in one object (the last one would win without a word); a missing or unreadable file is a
    ValueError too."""
    from halma_env.files import (
        DuplicateKey,
        FileTooLarge,
        NotARegularFile,
        NotText,
        no_duplicate_keys,
        read_regular_file,
    )

    what = f"{path}: not a halma eval results.json"
    try:
        text = read_regular_file(path, MAX_RESULTS_BYTES)
    except NotARegularFile as e:
        raise ValueError(f"{what} (it is {e.kind}, not a regular file)") from None
    except FileTooLarge as e:
        raise ValueError(f"{what} (it holds {e.size} bytes, more than the {MAX_RESULTS_BYTES} a results file "
                         "may)") from None
    except OSError as e:  # missing, no permission: a ValueError like the others
        raise ValueError(f"{path}: cannot read it ({e.strerror or e})") from None
    try:
        data = json.loads(text, object_pairs_hook=no_duplicate_keys)
    except (DuplicateKey, NotText) as e:
        raise ValueError(f"{what} ({e})") from None
    except RecursionError:  # the decoder recurses into nested arrays and objects
        raise ValueError(f"{what} (not JSON: nested too deeply)") from None
    except ValueError as e:  # not JSON (UnicodeDecodeError is a ValueError too, and an integer too long)
        raise ValueError(f"{what} (not JSON: {e})") from None
    try:
        return _results_from(data)
    except ValueError as e:
        raise ValueError(f"{path}: not a halma eval results.json ({e})") from None




def _is_count(value: Any, low: int = 0, high: int | None = MAX_COUNT) -> bool:
    """An integer (not a bool) in ``low..high`` (no upper bound with ``high=None``)."""
    return (isinstance(value, int) and not isinstance(value, bool) and value >= low
            and (high is None or value <= high))


def _is_amount(value: Any) -> bool:
    """A finite number >= 0 (a time, a mean place; a huge integer would overflow the float sums)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return _is_count(value)
    return isinstance(value, float) and math.isfinite(value) and value >= 0


def _check_keys(data: dict[str, Any], required: Sequence[str], optional: Sequence[str]) -> None:
    missing = [k for k in required if k not in data]
    unknown = [k for k in data if k not in required and k not in optional]
    if missing:
        raise ValueError(f"missing key(s) {', '.join(missing)}")
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(map(shown_value, unknown))}")


def _results_from(data: Any) -> TournamentResult:
    """The TournamentResult a results.json document describes (ValueError naming the field at fault)."""
    if not isinstance(data, dict):
        raise ValueError(f"the document must be a JSON object, got {type(data).__name__}")
    _check_keys(data, RESULT_KEYS, RESULT_OPTIONAL_KEYS)
    players, specs = data["players"], data["specs"]
    if not (isinstance(players, list) and players and all(isinstance(p, str) for p in players)):
        raise ValueError(f"players must be a non-empty list of names, got {shown_value(players)}")
    if len(set(players)) != len(players):  # the ratings are keyed by name: a repeat would hide a player
        raise ValueError(f"players must be distinct, got {shown_value(players)}")
    if not (isinstance(specs, list) and len(specs) == len(players) and all(isinstance(s, str) for s in specs)):
        raise ValueError(f"specs must be a list of {len(players)} names (one per player), got {shown_value(specs)}")
    missing = [k for k in OPTION_NAMES if isinstance(data["rules"], dict) and k not in data["rules"]]
    if missing:  # to_dict writes every option: none is filled in with a default that may not be the game's
        raise ValueError(f"rules: missing option(s) {', '.join(missing)}")
    try:
        rules = Rules.from_dict(data["rules"]).to_dict()
    except (ValueError, TypeError) as e:
        raise ValueError(f"rules: {e}") from None
    if not _is_count(data["seed"], high=None):  # any seed run_tournament takes
        raise ValueError(f"seed must be an integer >= 0, got {shown_value(data['seed'])}")
    budget = data["time_budget"]
    if budget is not None and not (_is_amount(budget) and budget > 0):
        raise ValueError(f"time_budget must be null or a number of seconds > 0, got {shown_value(budget)}")
    if data["max_plies"] is not None and not _is_count(data["max_plies"], 1):
        raise ValueError(f"max_plies must be null or an integer >= 1, got {shown_value(data['max_plies'])}")
    cap_outcome = data.get("cap_outcome", "draw")  # a file from before the option: the cap drew
    if cap_outcome not in ("draw", "progress"):
        raise ValueError(f"cap_outcome must be 'draw' or 'progress', got {shown_value(cap_outcome)}")
    summary = data["summary"]
    elapsed = summary.get("elapsed_s") if isinstance(summary, dict) else None
    if not isinstance(summary, dict) or not (elapsed is None or _is_amount(elapsed)):
        raise ValueError("summary must be an object whose elapsed_s is null or seconds >= 0, got "
                         f"{shown_value(summary)}")
    games_data = data["games"]
    if not (isinstance(games_data, list) and games_data):
        raise ValueError(f"games must be a non-empty list of games, got {shown_value(games_data)}")
    games = []
    for i, g in enumerate(games_data):
        try:
            games.append(_game_from(g, rules["num_players"], len(players)))
        except ValueError as e:
            raise ValueError(f"games[{i}]: {e}") from None
    indices = [g.index for g in games]
    if len(set(indices)) != len(indices):
        raise ValueError(f"the games' indices repeat: {shown_value(sorted(indices))}")
    return TournamentResult(players, specs, rules, games, data["seed"], budget, data["max_plies"], cap_outcome,
                            elapsed or 0.0)


def _game_from(g: Any, n: int, k: int) -> GameResult:
    """One game of a results.json on ``n`` seats among ``k`` players (ValueError naming the field)."""
    if not isinstance(g, dict):
        raise ValueError(f"a game is an object, got {shown_value(g)}")
    _check_keys(g, GAME_KEYS, GAME_OPTIONAL_KEYS)

    def per_seat(key: str, ok: Callable[[Any], bool], what: str) -> list[Any]:
        value = g[key]
        if not (isinstance(value, list) and len(value) == n and all(ok(x) for x in value)):
            raise ValueError(f"{key} must be a list of {n} {what} (one per seat), got {shown_value(value)}")
        return value

    for key in ("index", "seed", "plies"):
        if not _is_count(g[key]):
            raise ValueError(f"{key} must be an integer >= 0, got {shown_value(g[key])}")
    seats = per_seat("seats", lambda p: _is_count(p, high=k - 1), f"player indices 0..{k - 1}")
    if not _is_count(g["first_seat"], high=n - 1):
        raise ValueError(f"first_seat must be a seat 0..{n - 1}, got {shown_value(g['first_seat'])}")
    places = per_seat("places", lambda p: _is_count(p, 1, n), f"places 1..{n}")
    # player_places is the mean place of each player's seats: anything else would rate another game
    mine: dict[int, list[int]] = {}
    for s, p in enumerate(seats):
        mine.setdefault(p, []).append(places[s])
    pp = g["player_places"]
    if not (isinstance(pp, dict) and sorted(pp) == sorted(str(p) for p in mine)
            and all(_is_amount(pp[str(p)]) and math.isclose(pp[str(p)], sum(v) / len(v)) for p, v in mine.items())):
        expected = {str(p): sum(v) / len(v) for p, v in sorted(mine.items())}
        raise ValueError(f"player_places must be each seated player's mean place, {shown_value(expected)}, "
                         f"got {shown_value(pp)}")
    if g["end_reason"] not in (*END_REASONS, ARENA_LIMIT):
        raise ValueError(f"end_reason must be one of {', '.join((*END_REASONS, ARENA_LIMIT))}, "
                         f"got {shown_value(g['end_reason'])}")
    if not (isinstance(g["moves"], list) and all(isinstance(m, str) for m in g["moves"])):
        raise ValueError(f"moves must be a list of strings, got {shown_value(g['moves'])}")
    per_seat("move_time", _is_amount, "times in seconds >= 0")
    per_seat("move_count", _is_count, "integers >= 0")
    per_seat("max_move_time", _is_amount, "times in seconds >= 0")
    per_seat("over_budget", _is_count, "integers >= 0")
    forfeits = g.get("forfeits", [])
    if not isinstance(forfeits, list):
        raise ValueError(f"forfeits must be a list, got {shown_value(forfeits)}")
    for j, f in enumerate(forfeits):
        if not (isinstance(f, dict) and sorted(f) == sorted(FORFEIT_KEYS) and _is_count(f["seat"], high=n - 1)
                and _is_count(f["ply"]) and isinstance(f["move"], str) and isinstance(f["error"], str)):
            raise ValueError(f"forfeits[{j}] must be {{seat: 0..{n - 1}, ply: an integer >= 0, move: a string, "
                             f"error: a string}}, got {shown_value(f)}")
    progress = g.get("progress", [])  # older files have none
    if progress != [] and not (isinstance(progress, list) and len(progress) == n and all(
            isinstance(x, list) and len(x) == 2 and all(map(_is_count, x)) for x in progress)):
        raise ValueError(f"progress must be a list of {n} [in goal, distance] pairs of integers >= 0 (one per "
                         f"seat), or empty, got {shown_value(progress)}")
    return GameResult(**{**g, "player_places": {int(p): pp[p] for p in pp}, "forfeits": forfeits,
                         "progress": [tuple(x) for x in progress]})


def run_tournament(
    players: Sequence[str],
    rules: Rules,
    games: int,
    *,
    seed: int = 0,
    workers: int | None = 1,
    time_budget: float | None = None,
    max_plies: int | None = None,
    cap_outcome: str = "draw",
    keep_records: bool = False,
    progress: bool = False,
    factory: Factory | None = None,
    status_every: float | None = None,
    label: str = "halma eval",
) -> TournamentResult:
    """Play ``games`` games among ``players`` (names or paths for ``factory``, default the
    registry) under ``rules`` with the balanced seat schedule; ``workers`` processes (None: one
    per core).  The result does not depend on ``workers``.  ``progress``: a tqdm bar on stderr;
    ``status_every``: a line on stderr every that many seconds instead (``halma eval: 40/200 games in 62 s,
    about 248 s left``), for a log, where a bar's carriage-return frames would make one endless line; both
    begin with ``label``."""
    check_rules(rules)
    if not is_sequence(players) or not all(isinstance(p, str) for p in players):
        # names, not Player objects: each game makes its own, seeded, in whichever worker plays it
        raise WrongTypeError(f"players must be a list of names or paths for the factory (play_game takes "
                             f"Player objects), got {players!r}")
    if not players:
        raise ValueError("a tournament needs at least one player")
    check_cap_outcome(cap_outcome)
    check_int("games", games, 1)
    if games > MAX_GAMES:
        raise ValueError(f"games must be 1..{MAX_GAMES:,}, got {games}")
    check_int("seed", seed)
    if time_budget is not None:
        check_time("the time per move", time_budget)
    if workers is not None:
        check_int("workers", workers, 1)
    if max_plies is not None:
        check_int("max_plies", max_plies, 1)
    if status_every is not None:
        check_time("status_every", status_every)
    flag_argument(keep_records, "keep_records")  # (5 kept the records)
    flag_argument(progress, "progress")
    check_factory(factory)
    labels = unique_labels(players)
    n = rules.num_players
    base = rules.to_dict()
    tasks = []
    for g, lineup in enumerate(schedule(len(players), n, games)):
        r = dict(base, first_seat=lineup.first_seat)
        tasks.append(_Task(g, derive_seed(seed, g), r, [players[p] for p in lineup.seats],
                           [labels[p] for p in lineup.seats], list(lineup.seats), time_budget,
                           max_plies, cap_outcome, factory, keep_records))
    workers = (os.cpu_count() or 1) if workers is None else workers
    if sys.platform == "win32":  # Windows waits on at most 63 handles: 61 workers at most (concurrent.futures' docs)
        workers = min(workers, 61)
    workers = max(1, min(workers, games))
    start = time.perf_counter()
    results: list[GameResult] = []
    from tqdm import tqdm

    last_line = start

    def played(result: GameResult) -> None:
        nonlocal last_line
        results.append(result)
        bar.update()
        now = time.perf_counter()
        if status_every is not None and now - last_line >= status_every and len(results) < games:
            last_line, took = now, now - start
            left = took / len(results) * (games - len(results))
            say_on_stderr(f"{label}: {len(results)}/{games} games in {took:.0f} s, about {left:.0f} s left")

    with tqdm(total=games, disable=not progress, unit="game", desc=label, file=sys.stderr,
              **bar_size()) as bar:
        if workers == 1:
            with one_torch_thread(players):
                for t in tasks:
                    played(_run_task(t))
        else:
            for res in run_in_processes(_run_task, tasks, workers):
                played(res)
    results.sort(key=lambda g: g.index)
    return TournamentResult(labels, list(players), base, results, seed, time_budget, max_plies, cap_outcome,
                            time.perf_counter() - start)


# --- the solitaire crossing ------------------------------------------------------------------


@dataclass
class SoloResult:
    """The solitaire crossing benchmark: one seat alone on the star board, moves to finish."""

    agent: str
    games: list[GameResult]
    max_plies: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        done = [g.plies for g in self.games if g.end_reason == "finished"]
        return {
            "agent": self.agent,
            "optimum": SOLO_OPTIMUM,
            "games": len(self.games),
            "finished": len(done),
            "moves": [g.plies for g in self.games],
            "finished_moves": done,
            "best": min(done) if done else None,
            "mean": sum(done) / len(done) if done else None,
            "max_plies": self.max_plies,
            "seed": self.seed,
            "ms_per_move": 1000 * sum(g.move_time[0] for g in self.games)
            / max(1, sum(g.move_count[0] for g in self.games)),
        }

    def markdown(self) -> str:
        d = self.to_dict()
        if d["finished"]:
            mean, best = f"{d['mean']:.1f}", str(d["best"])
            gap = f"+{d['mean'] - SOLO_OPTIMUM:.1f}"
        else:
            mean = best = gap = "n/a"
        return "\n".join([
            "### Solitaire crossing (star, 1 seat): moves to bring all 10 pieces across",
            "",
            "| agent | games | finished | mean moves | best | optimum | mean - optimum | ms/move |",
            "|---|---|---|---|---|---|---|---|",
            f"| {self.agent} | {d['games']} | {d['finished']}/{d['games']} | {mean} | {best} | {SOLO_OPTIMUM} | "
            f"{gap} | {d['ms_per_move']:.1f} |",
            "",
            f"Unfinished games stop at {self.max_plies} moves (seed {self.seed}).",
        ])


def run_solo(
    agent: str,
    games: int = 1,
    *,
    seed: int = 0,
    time_budget: float | None = None,
    max_plies: int = CAP_PER_SEAT,
    keep_records: bool = False,
    factory: Factory | None = None,
) -> SoloResult:
    """Play the solitaire crossing ``games`` times (player seeds from ``seed``)."""
    check_int("games", games, 1)  # (True played one game, 1.5 was a raw TypeError from range())
    rules = Rules("star", 1)
    results = [
        play_game(rules, [agent], derive_seed(seed, g), time_budget, max_plies=max_plies, index=g,
                  names=unique_labels([agent]), factory=factory, keep_record=keep_records)
        for g in range(games)
    ]
    return SoloResult(unique_labels([agent])[0], results, max_plies, seed)


# --- the command -----------------------------------------------------------------------------


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("players", nargs="*", metavar="PLAYER",
                   help="bots (random, greedy, search, mcts, crossing), levels (easy, medium, hard, expert), "
                        "checkpoint or exported-model paths; 1 player plays itself")
    p.add_argument("--solo", metavar="AGENT", help="the solitaire crossing benchmark for AGENT (optimum 27 moves)")
    p.add_argument("--games", type=int, default=None, help="games to play (default 100; --solo: 1)")
    p.add_argument("--variant", default="star", choices=VARIANTS)
    p.add_argument("--seats", type=int, default=None,
                   help="seats per game (default: the number of players when the variant is played by that many, "
                        "2 for one player; other counts need --seats)")
    p.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                   help="a rule option (SPEC §4), e.g. anti_blocking=false, move_limit=300; repeatable")
    p.add_argument("--preset", choices=("qdan", "kawu"), help="a public rule set (star only)")
    p.add_argument("--seed", type=int, default=0, help="seed of the whole match (default 0)")
    p.add_argument("--workers", type=int, default=None, help="parallel processes (default: number of cores)")
    p.add_argument("--time-per-move", type=float, default=None, metavar="SECONDS",
                   help="per-move time budget given to the players (default: none, the bots' own settings)")
    p.add_argument("--max-plies", type=int, default=None,
                   help=f"arena safety cap on plies per game (default {CAP_PER_SEAT} per seat); "
                        "a game stopped by it counts as not finished")
    p.add_argument("--cap-outcome", choices=("draw", "progress"), default=None,  # None: not given (see --solo)
                   help="places of the unfinished seats of a capped game (default draw)")
    p.add_argument("--out", metavar="DIR", help="write results.json, results.md, results.png and every game record")
    p.add_argument("--quiet", action="store_true",
                   help="no progress: no bar on a terminal, no line a minute where stderr is not one")
    p.add_argument("--json", action="store_true",
                   help="print the results as one JSON object (the document --out writes as results.json or "
                        "solo.json) instead of the tables")


def command_rule_options(items: Sequence[str], first_seat: bool = False) -> dict[str, Any]:
    """``["key=value", ...]`` -> options (halma_env.rules.parse_rule_options), minus the ones the
    command sets itself: variant and seats always, and first_seat unless ``first_seat`` (the arena
    rotates it; ``halma play`` lets it be set)."""
    settable = [n for n in OPTION_NAMES if n not in ("variant", "num_players") and (first_seat or n != "first_seat")]
    out = parse_rule_options(list(items))
    for key in out:
        if key == "first_seat" and not first_seat:
            raise ValueError("first_seat is rotated by the arena (every seat starts equally often); it cannot be set")
        if key in ("variant", "num_players"):
            raise ValueError(f"{key} is set with --variant/--seats, not --rule")
        if key not in settable:
            raise ValueError(f"unknown rule option {key!r}{did_you_mean(key, settable)}; known: {', '.join(settable)}")
    return out


def build_rules(variant: str, seats: int, rule_items: Sequence[str] = (), preset: str | None = None,
                first_seat: bool = False) -> Rules:
    """Rules from the command-line options, ``halma eval``'s and ``halma play``'s (ValueError naming the
    problem); ``first_seat``: whether ``--rule first_seat=N`` may be given."""
    options = command_rule_options(rule_items, first_seat)
    if preset is not None:
        if variant != "star":
            raise ValueError(f"the {preset} preset is a star rule set; it cannot be used with --variant {variant}")
        return Rules.preset(preset, seats, **options)
    return Rules(variant, seats, **options)


def _default_seats(variant: str, k: int) -> int:
    allowed = SEAT_COUNTS[variant]
    if k in allowed and k >= 2:
        return k
    if k == 1:
        return 2
    raise ValueError(f"{k} players do not fit one {variant} game ({', '.join(map(str, allowed))} seats); "
                     "pass --seats (players then share games by subsets)")


def run(args: argparse.Namespace, factory: Factory | None = None) -> int:
    """``halma eval``: returns 0, or 2 after a clear message for bad input or for ``--out`` results it could not
    write (nothing of them is left behind)."""
    factory = factory or default_factory
    try:
        if args.games is not None and not 1 <= args.games <= MAX_GAMES:
            raise ValueError(f"--games must be 1..{MAX_GAMES:,}, got {args.games}")
        if args.workers is not None and args.workers < 1:
            raise ValueError(f"--workers must be >= 1, got {args.workers}")
        if args.max_plies is not None and args.max_plies < 1:
            raise ValueError(f"--max-plies must be >= 1, got {args.max_plies}")
        check_time("--time-per-move", args.time_per_move)  # inf and nan too, before any game
        check_int("--seed", args.seed)
        if args.solo is not None:
            if args.players:
                raise ValueError("--solo takes one agent and no other players")
            if args.variant != "star" or args.seats not in (None, 1) or args.rule or args.preset:
                raise ValueError("--solo is the star solitaire (1 seat, default rules); "
                                 "drop --variant/--seats/--rule/--preset")
            match_only = [flag for flag, value in (("--workers", args.workers), ("--cap-outcome", args.cap_outcome))
                          if value is not None]
            if match_only:
                raise ValueError(f"--solo plays its games one after another and has no opponents' places to "
                                 f"settle: drop {'/'.join(match_only)}")
            check_players([args.solo], factory, Rules("star", 1))
        else:
            if not args.players:
                raise ValueError("name at least one player (e.g. 'halma eval greedy random') or use --solo AGENT")
            seats = args.seats if args.seats is not None else _default_seats(args.variant, len(args.players))
            rules = build_rules(args.variant, seats, args.rule, args.preset)
            if rules.num_players < 2:
                raise ValueError("matches need 2+ seats; the 1-seat star is the solitaire: use --solo AGENT")
            try:
                check_players(args.players, factory, rules)
            except ValueError as e:
                raise ValueError(f"{e}{trained_game_hint(args.players, rules)}") from None
        plot, out_made = True, []
        if args.out is not None:
            out_made = _check_out_dir(args.out)  # a refused --out first: the note below is for a run that goes on
            if args.solo is None:  # a match's --out draws results.png: found missing now, not after the games
                try:
                    import matplotlib  # noqa: F401
                except ImportError as e:
                    plot = False  # the rest needs no matplotlib: written, and the missing plot said at once
                    why = missing_extra(e) or f"matplotlib cannot be imported ({e})"
                    print(f"halma eval: --out writes no results.png: {why}", file=sys.stderr)
    except ValueError as e:
        print(f"halma eval: error: {e}", file=sys.stderr)
        return 2

    try:
        return _play(args, factory, rules if args.solo is None else None, plot, out_made)
    except BaseException:  # an error or an interrupt before the results are saved: the --out made here goes
        remove_empty_folders(out_made)  # (only while empty)
        raise


def _play(args: argparse.Namespace, factory: Factory, rules: Rules | None, plot: bool, out_made: list[Path]) -> int:
    """``halma eval``'s games, tables and ``--out`` results, once its input is checked (``run``)."""
    if args.solo is not None:
        res = run_solo(args.solo, args.games or 1, seed=args.seed, time_budget=args.time_per_move,
                       max_plies=args.max_plies or CAP_PER_SEAT, keep_records=bool(args.out), factory=factory)
        if args.out:
            def write(folder: str) -> list[str]:
                os.makedirs(os.path.join(folder, "games"), exist_ok=True)
                names = []
                for g in res.games:
                    record = cast("dict[str, Any]", g.record)  # kept: keep_records=bool(args.out)
                    names.append(os.path.join("games", f"game_{g.index:05d}.json"))
                    _save_record(os.path.join(folder, names[-1]), record)
                write_atomic(os.path.join(folder, "solo.md"), res.markdown() + "\n")
                _write_json(os.path.join(folder, "solo.json"), res.to_dict())
                return ["solo.json", "solo.md", *names]

        # saved before anything is printed: a failing stdout (a closed pipe, a full disk) loses no results
        saved = _saved(args.out, lambda: save_staged(args.out, write, "solo.json"), out_made) if args.out else None
        return _finish(args, res.to_dict(), res.markdown(), saved,
                       lambda paths: f"wrote {shown_path(os.path.join(args.out, 'solo.json'))}, solo.md and "
                                     f"{len(res.games)} game records")

    assert rules is not None  # a match's rules, built by run
    max_plies = args.max_plies or CAP_PER_SEAT * rules.num_players
    result = run_tournament(args.players, rules, args.games or 100, seed=args.seed, workers=args.workers,
                            time_budget=args.time_per_move, max_plies=max_plies, cap_outcome=args.cap_outcome or "draw",
                            keep_records=bool(args.out), progress=not args.quiet and stderr_is_terminal(),
                            factory=factory, status_every=None if args.quiet or stderr_is_terminal() else STATUS_EVERY)
    # saved before anything is printed: a failing stdout (a closed pipe, a full disk) loses no results
    saved = _saved(args.out, lambda: result.save(args.out, plot=plot), out_made) if args.out else None
    return _finish(args, result.to_dict(), result.markdown(), saved,
                   # (shown_path: a folder name holding an escape sequence reached the terminal as it was)
                   lambda paths: f"wrote {len(paths)} files to {shown_path(args.out)} (results.json, results.md, "
                                 f"{'results.png, ' if plot else ''}games/)")


def _finish(args: argparse.Namespace, document: dict[str, Any], tables: str, saved: list[str] | str | None,
            wrote: Callable[[list[str]], str]) -> int:
    """Print the results, then what ``--out`` wrote (``saved``: its paths) or why it wrote nothing (``saved``: the
    reason), after the tables, where a long tournament's output does not scroll it away; -> the exit status."""
    _print_results(document, tables, args.json)
    if isinstance(saved, str):
        print(f"halma eval: error: {saved}", file=sys.stderr)
        return 2
    if saved is not None:
        print(f"\n{wrote(saved)}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _saved(out: str, save: Callable[[], list[str]], made: list[Path]) -> list[str] | str:
    """``save()``'s paths, or the reason it wrote nothing: a full disk, a folder that became unwritable, another
    tournament's records put there meanwhile (``save`` removes what it had written, so that a rerun into the
    same folder is not refused).  ``made``: the folders ``_check_out_dir`` made, ``out`` first, which is removed
    first if still empty, so that the results appear in one rename (``save_staged``); when nothing is written,
    the folders above it that it made go too."""
    if made:
        with contextlib.suppress(OSError):  # (not empty, or gone: save works with what is there)
            os.rmdir(out)
    try:
        return save()
    except OSError as e:
        reason = f"cannot write {out!r}: {e.strerror or e}"
    except ValueError as e:
        reason = str(e)
    remove_empty_folders(made)
    return reason


def _print_results(document: dict[str, Any], tables: str, as_json: bool) -> None:
    """The results on stdout: the tables, or (--json) the document results.json holds, on one line."""
    print(json.dumps(_clean(document), allow_nan=False) if as_json else tables)


def _check_out_dir(out: str) -> list[Path]:
    """Create ``--out`` now: an unwritable place fails before the games, not after them; -> the folders made
    here (``folders_to_make``: none when it was there).  A directory that already holds results is refused:
    writing over them would mix old game records with the new ones."""
    if out == "":  # an empty --out would write nothing and say nothing (a name of spaces is a name)
        raise ValueError(f"--out needs a directory, got {out!r}")
    from agents.files import special_file_kind

    for name in ("results.json", "results.md", "results.png", "solo.json", "solo.md"):
        if kind := special_file_kind(os.path.join(out, name)):  # found after the games, it would be a traceback
            raise ValueError(f"--out {out!r}: {name} is {kind}, not a regular file")
    previous = [name for name in ("results.json", "solo.json", "games") if os.path.exists(os.path.join(out, name))]
    if previous:
        raise ValueError(f"--out {out!r} already holds results ({', '.join(previous)}); choose another directory "
                         "or remove them")
    made = folders_to_make(out)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        remove_empty_folders(made)  # (a parent made before the failure)
        raise ValueError(f"cannot write --out {out!r}: {folder_error(e, out)}") from None
    return made
