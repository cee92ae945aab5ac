"""``search``: alpha-beta for 2 seats, best-reply search (BRS) for 3-6, under a time budget.

One minimax from the root seat's point of view serves both: MAX nodes are the root seat's
moves; MIN nodes are *all* other active seats' moves pooled (Schadd & Winands' best-reply
search, which did best among multi-player searches on Chinese Checkers): the single opponent
move that hurts the root seat most answers each root move.  With 2 seats this is exactly
alpha-beta minimax.  The searcher works on a copy of the game and, at MIN nodes, hands the turn
to each opponent in turn by setting ``to_move`` on that copy (the engine's ``play``/``undo``
restore it).

Machinery:
- iterative deepening (depth 1, 2, ...) until the time budget or ``depth`` is reached; the last
  completed iteration's move is played;
- move ordering by the greedy gain (``evaluation``), the transposition-table move first;
  below the root only the ``width`` best-ordered moves are searched (forward pruning: in these
  games the few most progressive moves nearly always contain the best);
- a transposition table keyed by a Zobrist hash of the position and node kind; a decided score
  (a finish, ``WIN``-sized, sooner better) is stored relative to its node's ply and read back
  relative to the ply of the node that finds it, since the same position can be reached at another
  ply (in the solitaire one hop a->c is two hops a->b->c);
- horizon nodes cost one move generation: the value of the mover's best move there is read from
  the gain tables instead of being played out (moves that might finish are played to check);
- evaluation: every seat's potential (progress, stragglers, endgame pull, king), as the mean
  over opponents of (their potential - the root seat's), plus a tempo bonus for the side to move;
  finished games score by place (``halma_env.rewards.place_rewards``), sooner wins preferred;
- at the root, a move back to an arrangement of the seat's pieces seen in its last few moves is
  penalised (as in ``greedy``), and once the seat has made no progress for a few moves, progress
  gets a growing bonus: endgames never cycle, standoffs (each side waiting for the other to open
  a jump) are broken, and halma16's repetition draw is avoided.
"""

from __future__ import annotations

import random
import time
from typing import cast

from agents.bots.evaluation import STRAGGLE, WIN, Tracker, escape_moves, safe_moves
from agents.bots.greedy import REVISIT_PENALTY, recent_configurations, stalled_moves
from agents.player import SeededBot, check_int, check_number, check_time, checked_moves, search_time
from halma_env import Game, Move
from halma_env.rewards import place_rewards

TEMPO = 1.5  # worth of having the move (about the gain of an average move late in the game)
STALL_AFTER = 3  # own moves without progress before the root starts favouring progress
STALL_BONUS = 0.5  # per further stalled move, times the move's gain
_EXACT, _LOWER, _UPPER = 0, 1, 2
# values past this are terminal() scores, which carry their ply (the least is 0.1 WIN - ply: 2nd of 6 by progress);
# a static value stays far below it: about 3,700 at most at the default straggle (halma16, 2 seats), under 10,000 at
# MAX_STRAGGLE
DECIDED = WIN / 25
MAX_STRAGGLE = 10.0  # (the default 0.6; 20 took a halma16 static value to 18,767)


def _to_table(value: float, ply: int) -> float:
    """A value as the table keeps it: a decided score relative to the node's ply (``WIN - leaf ply`` becomes
    ``WIN - plies from this node``)."""
    return value + ply if value > DECIDED else value - ply if value < -DECIDED else value


def _from_table(value: float, ply: int) -> float:
    return value - ply if value > DECIDED else value + ply if value < -DECIDED else value


class _Timeout(Exception):
    pass


def _first(item: tuple) -> float:
    return item[0]


class SearchBot(SeededBot):
    """Alpha-beta (2 seats) / best-reply search (3-6 seats) with iterative deepening."""

    def __init__(
        self,
        seed: int | None = None,
        time: float | None = 0.2,
        depth: int = 0,
        width: int = 10,
        root_width: int = 24,
        memory: int = 12,
        straggle: float = STRAGGLE,
        name: str = "search",
    ) -> None:
        self.time = check_time("search time", time)
        self.depth = check_int("search depth", depth)
        if time is None and depth == 0:
            raise ValueError("search needs a time limit or a depth (e.g. search:depth=2,time=none)")
        self.width = check_int("search width", width, 1)
        self.root_width = check_int("search root_width", root_width, 1)
        self.memory = check_int("search memory", memory)
        self.straggle = check_number("search straggle", straggle, high=MAX_STRAGGLE)
        self.name = name
        self.reseed(seed)
        self.last_info: dict = {}

    # --- public ------------------------------------------------------------------------

    def select_move(self, game: Game, time_budget: float | None = None) -> Move:
        moves = checked_moves(game, time_budget)
        start = time.perf_counter()
        limit = search_time(self.time, time_budget)
        if len(moves) == 1:
            self.last_info = {"depth": 0, "nodes": 0, "move": str(moves[0])}  # not the last search's
            return moves[0]
        run = _Run(self, game, start, limit)
        return run.best_move(moves)

    def __repr__(self) -> str:
        return f"SearchBot(seed={self.seed!r}, time={self.time}, depth={self.depth}, width={self.width})"


class _Run:
    """State of one ``select_move`` call."""

    def __init__(self, bot: SearchBot, game: Game, start: float, limit: float | None) -> None:
        self.bot = bot
        tr = Tracker(game, bot.straggle)
        self.tr = tr
        self.g = tr.game
        self.root = game.to_move
        self.n = game.num_players
        self.deadline = None if limit is None else start + limit
        self.views, self.pot, self.king = tr.views, tr.pot, tr.king
        self.gain, self.moves_of = tr.gain, tr.moves_of
        self.near_finish, self.may_finish = tr.near_finish, tr.may_finish
        rng = random.Random(bot._rng.getrandbits(64))
        self.rng = rng
        num_holes = game.geometry.num_holes
        self.zob = [[rng.getrandbits(64) for _ in range(num_holes)] for _ in range(self.n)]
        self.zob_min = rng.getrandbits(64)
        self.zob_king = [rng.getrandbits(64) for _ in range(num_holes)]  # kings are told apart
        self.hash = 0
        for s in range(self.n):
            for h in self.views[s].pieces:
                self.hash ^= self.zob[s][h]
            king = self.king[s]
            if king is not None:
                self.hash ^= self.zob_king[king]
        self.tt: dict[int, tuple] = {}
        self.nodes = 0
        self.opponents = [s for s in range(self.n) if s != self.root]
        places = game.places
        self.rivals = [s for s in self.opponents if places[s] is None] or self.opponents
        self.solo = not self.opponents  # solitaire: every node is the seat's own move

    def play(self, s: int, m, gain: float) -> None:
        src, dst = m
        if src == self.king[s]:
            self.hash ^= self.zob_king[src] ^ self.zob_king[dst]
        self.tr.play(s, m, gain)
        self.hash ^= self.zob[s][src] ^ self.zob[s][dst]

    def undo(self, s: int, m, gain: float) -> None:
        self.tr.undo(s, m, gain)
        src, dst = m
        if src == self.king[s]:  # the king is back on src
            self.hash ^= self.zob_king[src] ^ self.zob_king[dst]
        self.hash ^= self.zob[s][src] ^ self.zob[s][dst]

    # --- evaluation ----------------------------------------------------------------------

    def active(self) -> list[int]:
        status = self.g.status
        return [s for s in self.opponents if status[s] == "active"]

    def static(self, max_to_move: bool) -> float:
        """Root seat's view of a quiet position."""
        # the seats undecided at the root, even once they finish: a rival's finish is its gain
        mean = sum(self.pot[s] for s in self.rivals) / len(self.rivals) if self.rivals else 0.0
        return mean - self.pot[self.root] + (TEMPO if max_to_move else -TEMPO)

    def terminal(self, ply: int) -> float | None:
        """Score if the root seat is decided (or the game over), else None.

        Finishing is always good: it takes the best place still free, whatever places others
        took before (scoring it by ``place_rewards`` alone makes a seat that can only finish
        4th of 6 refuse to finish).  So a finish scores in [WIN/2, WIN] by place, sooner better;
        other decided outcomes (last place, draws by repetition or move limit) by
        ``place_rewards`` on the same scale."""
        g = self.g
        places = g.places
        place = places[self.root]
        if place is None and not g.is_over:
            return None
        if g.status[self.root] == "finished":
            # a finished seat has its place; no check here, terminal() runs at every node
            share = (place - 1) / (self.n - 1) if self.n > 1 else 0.0  # type: ignore[operator]
            return WIN * (1.0 - 0.5 * share) - ply
        reward = place_rewards(places)[self.root]
        if reward > 0:
            return 0.5 * WIN * reward - ply
        if reward < 0:
            return WIN * reward + ply
        return 0.0

    # --- search ----------------------------------------------------------------------------

    def check_time(self) -> None:
        self.nodes += 1
        # every node: late in a 4-6 seat game a horizon node costs up to ~1 ms, so a check every 8 nodes
        # overran 10 ms budgets (perf_counter costs ~0.1 us)
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _Timeout

    def ordered(self, seats: list[int], width: int, tt_move) -> list[tuple[float, int, tuple[int, int]]]:
        """(gain, seat, (src, dst)) for the given seats' moves, best first, cut to ``width``."""
        cand: list[tuple[float, int, tuple[int, int]]] = []
        for s in seats:
            cand.extend((gain, s, (src, dst)) for gain, src, dst in self.tr.scored_moves(s))
        cand.sort(key=_first, reverse=True)
        if tt_move is not None:
            for i, c in enumerate(cand):
                if (c[1], c[2]) == tt_move:
                    if i:
                        cand.insert(0, cand.pop(i))
                    break
        return cand[:width]

    def horizon(self, is_max: bool, ply: int) -> float:
        """Depth-1 node: the mover's best move valued from the tables (finishing moves played); exact, so it
        takes no alpha-beta window."""
        seats = [self.root] if is_max else self.active()
        best_gain = None
        best_val = None
        k = max(1, len(self.rivals))
        tr = self.tr
        for s in seats:
            if not self.near_finish(s):
                gain = tr.best_gain(s)
                if gain is not None and (best_gain is None or gain > best_gain):
                    best_gain = gain
                continue
            for gain, src, dst in tr.scored_moves(s):
                m = (src, dst)
                if self.may_finish(s, m):
                    self.play(s, m, gain)
                    term = self.terminal(ply + 1)
                    self.undo(s, m, gain)
                    if term is not None:
                        if is_max and (best_val is None or term > best_val):
                            best_val = term
                        if not is_max and (best_val is None or term < best_val):
                            best_val = term
                        continue
                if best_gain is None or gain > best_gain:
                    best_gain = gain
        if best_gain is None and best_val is None:
            return self.static(not is_max)  # nobody can move: a pass
        if is_max:
            # (the solitaire's seat moves again after this move: it keeps the tempo)
            quiet = None if best_gain is None else self.static(self.solo) + best_gain
        else:
            quiet = None if best_gain is None else self.static(True) - best_gain / k
        vals = [v for v in (quiet, best_val) if v is not None]
        return max(vals) if is_max else min(vals)

    def minimax(self, is_max: bool, depth: int, alpha: float, beta: float, ply: int) -> float:
        self.check_time()
        term = self.terminal(ply)
        if term is not None:
            return term
        if depth <= 0:
            return self.static(is_max)
        if depth == 1:
            return self.horizon(is_max, ply)
        key = self.hash ^ (0 if is_max else self.zob_min)
        entry = self.tt.get(key)
        tt_move = None
        if entry is not None:
            e_depth, e_val, e_flag, tt_move = entry
            e_val = _from_table(e_val, ply)
            if e_depth >= depth:
                if e_flag == _EXACT:
                    return e_val
                if e_flag == _LOWER and e_val >= beta:
                    return e_val
                if e_flag == _UPPER and e_val <= alpha:
                    return e_val
        seats = [self.root] if is_max else self.active()
        cand = self.ordered(seats, self.bot.width, tt_move)
        if not cand:
            # the mover(s) must pass
            return self.minimax(not is_max or self.solo, depth - 1, alpha, beta, ply)
        a0, b0 = alpha, beta
        best = -float("inf") if is_max else float("inf")
        best_move = None
        for gain, s, m in cand:
            self.play(s, m, gain)
            try:
                val = self.minimax(not is_max or self.solo, depth - 1, alpha, beta, ply + 1)
            finally:
                self.undo(s, m, gain)
            if is_max:
                if val > best:
                    best, best_move = val, (s, m)
                alpha = max(alpha, val)
            else:
                if val < best:
                    best, best_move = val, (s, m)
                beta = min(beta, val)
            if alpha >= beta:
                break
        flag = _EXACT
        if best <= a0:
            flag = _UPPER
        elif best >= b0:
            flag = _LOWER
        self.tt[key] = (depth, _to_table(best, ply), flag, best_move)
        return best

    def best_move(self, moves: list[Move]) -> Move:
        bot = self.bot
        root = self.root
        # never wall one of its own pieces in for good (checked on the private copy)
        moves = safe_moves(self.g, moves)
        # a piece in a camp its owner is filling gets out first: the evaluation's camp penalty
        # says that it should leave, but a deeper search would see it paid later and defer it
        near = self.near_finish(root)
        escape = escape_moves(self.g, moves)
        if escape:
            moves = escape + [m for m in moves if near and self.may_finish(root, m) and m not in escape]
        seen = recent_configurations(self.g, root, bot.memory) if bot.memory else {}
        cfg = 0
        for h in self.views[root].pieces:
            cfg |= 1 << h
        self.rng.shuffle(moves)  # seeded tie-breaks among equal moves
        scored = []
        # standoffs (each side waiting for the other to open a jump, e.g. halma16's last pieces)
        # are broken by a growing bonus for progress once the seat has stalled for a while
        stall = stalled_moves(self.g, root, self.views[root], bot.memory) if bot.memory else 0
        push = STALL_BONUS * max(0, stall - STALL_AFTER)
        for m in moves:
            gain = self.gain(root, m.src, m.dst)
            penalty = REVISIT_PENALTY * seen.get(cfg ^ (1 << m.src) ^ (1 << m.dst), 0) if seen else 0.0
            penalty -= push * max(0.0, gain)
            scored.append((gain - penalty, gain, penalty, m))
        scored.sort(key=lambda x: -x[0])
        # keep every move that might finish, then the best-ordered ones
        near = self.near_finish(root)
        keep = [x for x in scored if near and self.may_finish(root, x[3])]
        rest = [x for x in scored if x not in keep]
        root_moves = keep + rest[: max(1, bot.root_width)]
        best = root_moves[0][3]
        max_depth = bot.depth or 64
        completed = 0
        values: dict = {}
        try:
            for depth in range(1, max_depth + 1):
                alpha = -float("inf")
                iter_best, iter_val = None, -float("inf")
                for _, gain, penalty, m in root_moves:
                    self.play(root, m, gain)
                    try:
                        val = self.minimax(self.solo, depth - 1, alpha + penalty, float("inf"), 1) - penalty
                    finally:
                        self.undo(root, m, gain)
                    values[m] = val
                    if val > iter_val:
                        iter_best, iter_val = m, val
                        alpha = val
                best = cast(Move, iter_best)  # set: every root move got a finite value
                completed = depth
                if iter_val >= WIN / 4:
                    break  # a forced finish found: no need to look deeper
                # next iteration: best first, then by this iteration's values
                root_moves.sort(key=lambda x: -values.get(x[3], -float("inf")))
        except _Timeout:
            pass
        bot.last_info = {"depth": completed, "nodes": self.nodes, "move": str(best)}
        return best
