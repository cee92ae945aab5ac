"""``crossing``: a beam-search planner of the mover's own crossing (the solitaire puzzle's solver).

The solitaire crossing (star, one seat: move the 10 pieces into the opposite point) is a
single-agent shortest-path problem; its optimum is 27 moves (SPEC: Levenspiel 1971, Bell 2009).
``plan_crossing`` searches it breadth-first with a beam: from every state of the beam it generates
all legal moves, scores each resulting state by the seat's potential (the sum over its pieces of
``d + straggle * d^2 / 16``, ``d`` = distance to the goal tip: the goal is filled back to front and a
piece left behind costs more than one ahead), keeps the ``width`` best states not seen before, and
stops at the first state in which the seat has finished.  Every state of one depth is as many
moves from the start, so the first finished state is the shortest line the beam kept.

Measured on the 2-core machine: straggle 1.0 finds the optimal 27-move crossing with width 3000
(``halma eval --solo crossing:width=3000``, 41 s) and 32 moves with width 200 (3 s); timing
``plan_crossing`` itself, width 500 gave 31 moves in 8 s.  Plain depth sums (straggle 0) did worse
in a prototype: 31 moves at width 1000.

With more seats the other seats' pieces stay where they are (the planner hands the turn back to
its own seat), so the bot plans a race, not a game: it replans every move, and in the solitaire it
follows its plan, which it caches by position.  ``time`` (seconds per move, ``None`` = no limit)
stops the beam early; the bot then plays the first move of the best line found so far.
"""

from __future__ import annotations

import heapq
import random
import time as _time
from collections.abc import Callable
from typing import cast

from agents.bots.evaluation import seat_tables
from agents.player import SeededBot, check_int, check_is_game, check_number, check_time
from halma_env import Game, Move

MAX_MOVES = 400  # a plan longer than this is cut off (no crossing needs nearly as many)
# with other seats on the board their pieces may fill the mover's goal, so that no line finishes: the beam then
# stops once its best state has not improved for this many depths (it ran all MAX_MOVES: 75 s a move at
# width 500 in a 2-seat game); the solitaire always has a finish, and its plans are left as they were
STALL_DEPTHS = 16


def plan_crossing(
    game: Game, width: int = 500, straggle: float = 1.0, *, depth: int = 0, deadline: float | None = None,
    rng: random.Random | None = None,
) -> list[Move]:
    """The shortest line the beam finds that finishes the mover's crossing, the other seats' pieces
    held still; ``[]`` if the game is over.  If no line finishes (blocked, the horizon ``depth`` moves
    reached (0: ``MAX_MOVES``), with 2+ seats ``STALL_DEPTHS`` depths without a better state, or
    ``deadline``, a ``time.perf_counter()`` value, passed), the line to the best
    state reached is returned.  States of equal potential are kept in the order they were generated,
    or in a random order drawn from ``rng``."""
    check_int("crossing width", width, 1)
    check_number("crossing straggle", straggle)
    check_int("crossing depth", depth)
    if game.is_over:
        return []
    seat = game.to_move
    rules = game.rules
    tables = seat_tables(rules.variant, rules.num_players, seat, straggle)
    piece, king_table = tables.piece, tables.king

    def king_hole(g: Game) -> int | None:
        if king_table is None:
            return None
        piece_at = cast("Callable[[int], tuple[int, bool]]", g.piece_at)  # the seat's own holes are never empty
        return next((h for h in g.pieces(seat) if piece_at(h)[1]), None)

    def value(hole: int, is_king: bool) -> float:
        # is_king only at king_hole(), which is None without a king table; no check in the beam's loop
        return king_table[hole] if is_king else piece[hole]  # type: ignore[index]

    start = game.copy()
    start_king = king_hole(start)
    root_potential = sum(value(h, h == start_king) for h in start.pieces(seat))
    # beam entries: (potential, game at that state, line of moves from the root)
    beam: list[tuple[float, Game, list[Move]]] = [(root_potential, start, [])]
    best = beam[0]
    # states already reached (at this depth or fewer moves): the seat's pieces and its king's hole
    seen = {(frozenset(start.pieces(seat)), start_king)}
    stalled = 0  # depths since the best state last improved
    for _ in range(depth or MAX_MOVES):
        children: list[tuple[float, float, Move, Game, list[Move]]] = []
        for potential, g, line in beam:
            if best[2] and deadline is not None and _time.perf_counter() > deadline:
                return best[2]  # out of time: the best line of the depths completed
            g.to_move = seat  # the other seats are held still
            pieces = frozenset(g.pieces(seat))
            king = king_hole(g)
            for m in g.legal_moves():
                key = (pieces - {m.src} | {m.dst}, m.dst if m.src == king else king)
                if key in seen:
                    continue
                seen.add(key)
                # the second entry breaks ties (so the sort never compares moves)
                gain = value(m.src, m.src == king) - value(m.dst, m.src == king)
                children.append((potential - gain, rng.random() if rng else len(children), m, g, line))
        if not children:
            break
        if best[2] and deadline is not None and _time.perf_counter() > deadline:
            return best[2]  # out of time while the children were made: not worth their selection
        # the width best children, as sorted(children)[:width] gives them (a full sort of up to width x moves
        # entries was the one step not covered by a deadline check)
        beam = []
        for potential, _, m, g, line in heapq.nsmallest(width, children, key=lambda c: (c[0], c[1])):
            if beam and deadline is not None and _time.perf_counter() > deadline:
                break  # out of time: a narrower beam at this depth
            child = g.copy()
            child.to_move = seat
            child.play(m)
            if child.status[seat] == "finished":
                return line + [m]
            if child.is_over:  # e.g. a repetition draw: a dead end
                continue
            beam.append((potential, child, line + [m]))
        if beam and (beam[0][0] < best[0] or not best[2]):
            best = beam[0]
            stalled = 0
        else:
            stalled += 1
        if not beam or (stalled >= STALL_DEPTHS and rules.num_players > 1):
            break
    return best[2]


class CrossingBot(SeededBot):
    """Plays the first move of ``plan_crossing``'s line; in the solitaire it follows the line."""

    def __init__(
        self,
        seed: int | None = None,
        width: int = 500,
        straggle: float = 1.0,
        depth: int = 0,
        time: float | None = None,
        name: str = "crossing",
    ) -> None:
        self.width = check_int("crossing width", width, 1)
        self.straggle = check_number("crossing straggle", straggle)
        self.depth = check_int("crossing depth", depth)
        self.time = check_time("crossing time", time)
        self.name = name
        self.reseed(seed)

    def reseed(self, seed: int | None) -> None:
        """Start the bot's random stream again from ``seed`` (the environments' ``reset(seed=...)`` calls it),
        with no plan kept: its moves are then those of a bot new made with ``seed``."""
        super().reseed(seed)  # self._rng breaks ties between lines of equal potential
        self._plan: dict[str, Move] = {}  # position -> planned move, along the last plan

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        check_time("time_budget", time_budget)
        check_is_game(game)
        if game.is_over:
            raise ValueError("no legal move: the game is over")
        position = game.position()
        planned = self._plan.get(position)
        if planned is not None:
            return planned
        limits = [t for t in (self.time, time_budget) if t is not None]
        deadline = _time.perf_counter() + 0.7 * min(limits) - 0.01 if limits else None
        line = plan_crossing(game, self.width, self.straggle, depth=self.depth, deadline=deadline, rng=self._rng)
        if not line:  # nothing improves on the current state: any legal move keeps the game going
            return game.legal_moves()[0]
        self._plan = {}
        if game.num_players == 1 and not self.depth:  # nobody else moves: the rest of the line stays valid
            g = game.copy()
            for m in line:
                self._plan[g.position()] = m
                g.play(m)
        return line[0]

    def __repr__(self) -> str:
        return f"CrossingBot(width={self.width}, straggle={self.straggle}, depth={self.depth}, time={self.time})"
